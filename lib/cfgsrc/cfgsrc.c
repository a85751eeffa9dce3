/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd configuration source: start-up read, the watcher, the reporter,
 * and the REST API's hooks (decision 0030).
 *
 * Why two threads and three client handles: the watch is one blocking
 * streaming request, so the lease keep-alive and the status puts need a
 * thread of their own; and the REST write runs on the API thread. A
 * libcurl easy handle belongs to one thread at a time, hence one handle
 * each. None of them touches the data path: they publish snapshots like
 * the REST API does, and workers pick them up at the top of a loop.
 *
 * Why the CAS base is the revision seen last rather than the one applied
 * last: a document every instance refused stays in the store until
 * somebody replaces it; with the applied revision as the base, every REST
 * write would conflict with it forever, and the fix would have to bypass
 * nrfwd. The change is still based on what this instance has seen: a
 * write that raced another instance's (not yet seen here) gets 409.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nrf_cfgsrc.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "cfgsrc"
#define BACKOFF_MIN_MS 100u
#define BACKOFF_MAX_MS 2000u

struct nrf_cfgsrc {
	/* parameters (owned copies) */
	char *endpoints, *cacert, *cert, *keyfile, *user, *password;
	uint32_t timeout_ms;
	char *key, *id, *config_path, *cache_path, *version, *status_key;
	uint32_t ttl_s;
	bool read_only;            /* nrfwd-ctl check: no cached copy written */

	struct nrf_rt *rt;
	struct nrf_etcd *w_etcd;   /* watcher (and start-up read) */
	struct nrf_etcd *r_etcd;   /* reporter */
	struct nrf_etcd *x_etcd;   /* REST writes (under lock) */

	pthread_mutex_t lock;      /* configuration changes (REST and watch) */
	pthread_mutex_t st;        /* everything below */
	pthread_cond_t cond;       /* seen revision moved, status dirty, stop */
	pthread_t watcher, reporter;
	bool started;
	atomic_bool stop;
	atomic_bool wake;          /* stop, or: the watch should reconnect */

	bool watch_live;
	bool reporter_ok;
	bool from_cache;
	bool dirty;
	uint64_t contact_ns;       /* 0: never */
	int64_t applied_rev;
	int64_t seen_rev;          /* revision of the last event or read */
	int64_t seen_mod;          /* the key's mod_revision then (0: absent) */
	char *seen_text;           /* the key's value at seen_mod (NULL: absent or
				    * unknown): what a REST change is merged into */
	int64_t start_rev;         /* where the watch resumes */
	uint64_t generation;
	uint64_t n_applied, n_refused, n_reconnects;
	int64_t err_rev;           /* revision the last error is about (0: none) */
	char err_detail[320];
	struct nrf_cfg_problems err_probs;
	/* loop summary (nrf_cfgsrc_params.loops_json): reporter only, but
	 * loops_text is read under st */
	char *(*loops_json)(struct nrf_rt *rt, uint64_t *sig);
	char *loops_text;
	uint64_t loops_sig, loops_at;
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

/* The key's value at the revision seen last (st held): kept so a REST change
 * applies to the document as stored (decision 0037). NULL @p text: absent. */
static void
seen_text_set_locked(struct nrf_cfgsrc *s, const char *text, size_t len)
{
	free(s->seen_text);
	s->seen_text = text != NULL ? strndup(text, len) : NULL;
}

static char *
dup_opt(const char *s, bool *oom)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	if (d == NULL)
		*oom = true;
	return d;
}

static void
now_rfc3339(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000);
}

static void
problems_copy(struct nrf_cfg_problems *dst, const struct nrf_cfg_problems *src)
{
	nrf_cfg_problems_fini(dst);
	if (src->n == 0)
		return;
	dst->v = malloc(src->n * sizeof(*dst->v));
	if (dst->v == NULL)
		return;
	memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	dst->n = dst->cap = src->n;
}

static void
problem_add(struct nrf_cfg_problems *probs, const char *pointer, const char *reason)
{
	struct nrf_cfg_problem *v;

	if (probs->n == probs->cap) {
		size_t nc = probs->cap == 0 ? 4 : probs->cap * 2;

		v = realloc(probs->v, nc * sizeof(*v));
		if (v == NULL)
			return;
		probs->v = v;
		probs->cap = nc;
	}
	v = &probs->v[probs->n++];
	snprintf(v->pointer, sizeof(v->pointer), "%s", pointer);
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
}

static char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf != NULL) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* temp file, fsync, rename, fsync of the directory */
static int
write_atomic(const char *path, const char *data, size_t len, char *why, size_t cap)
{
	char tmp[4200], dir[4096];
	const char *slash = strrchr(path, '/');
	size_t off = 0;
	int fd, dfd;

	if (strlen(path) >= sizeof(dir)) {
		snprintf(why, cap, "%s: name too long", path);
		return NRF_EIO;
	}
	snprintf(tmp, sizeof(tmp), "%s.nrfwd-tmp", path);
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)NRF_MAX(slash - path, 1), path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			goto fail;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0)
		goto fail;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
fail:
	snprintf(why, cap, "cannot write %s: %s", path, strerror(errno));
	unlink(tmp);
	return NRF_EIO;
}

static void
contact(struct nrf_cfgsrc *s)
{
	pthread_mutex_lock(&s->st);
	s->contact_ns = nrf_now_ns();
	pthread_mutex_unlock(&s->st);
}

/* ------------------------------------------------------------------------ */
/* Create / free                                                             */

struct nrf_cfgsrc *
nrf_cfgsrc_create(const struct nrf_cfgsrc_params *p, int *err)
{
	struct nrf_cfgsrc *s;
	struct nrf_etcd_params ep;
	bool oom = false;
	size_t kl;

	if (p == NULL || p->key == NULL || (kl = strlen(p->key)) == 0 || p->key[kl - 1] == '/' ||
		p->instance_id == NULL || p->instance_id[0] == '\0' ||
		strchr(p->instance_id, '/') != NULL || p->config_path == NULL) {
		*err = NRF_EINVAL;
		return NULL;
	}
	if (nrf_etcd_global_init() != 0) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->st, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->endpoints = dup_opt(p->etcd.endpoints, &oom);
	s->cacert = dup_opt(p->etcd.cacert, &oom);
	s->cert = dup_opt(p->etcd.cert, &oom);
	s->keyfile = dup_opt(p->etcd.key, &oom);
	s->user = dup_opt(p->etcd.user, &oom);
	s->password = dup_opt(p->etcd.password, &oom);
	s->timeout_ms = p->etcd.timeout_ms;
	s->key = dup_opt(p->key, &oom);
	s->id = dup_opt(p->instance_id, &oom);
	s->config_path = dup_opt(p->config_path, &oom);
	s->cache_path = dup_opt(p->cache_path, &oom);
	s->version = dup_opt(p->version != NULL ? p->version : "nrfwd", &oom);
	s->ttl_s = p->lease_ttl_s != 0 ? p->lease_ttl_s : 10;
	s->loops_json = p->loops_json;
	s->read_only = p->read_only;
	{
		char *prefix = nrf_cfgsrc_instances_prefix(p->key);

		if (prefix == NULL || asprintf(&s->status_key, "%s%s", prefix, p->instance_id) < 0) {
			free(prefix);
			nrf_cfgsrc_free(s);
			*err = prefix == NULL ? NRF_EINVAL : NRF_ENOMEM;
			return NULL;
		}
		free(prefix);
	}
	if (oom) {
		nrf_cfgsrc_free(s);
		*err = NRF_ENOMEM;
		return NULL;
	}
	ep = p->etcd;
	s->w_etcd = nrf_etcd_create(&ep, err);
	if (s->w_etcd != NULL)
		s->r_etcd = nrf_etcd_create(&ep, err);
	if (s->r_etcd != NULL)
		s->x_etcd = nrf_etcd_create(&ep, err);
	if (s->x_etcd == NULL) {
		nrf_cfgsrc_free(s);
		return NULL;
	}
	*err = 0;
	return s;
}

void
nrf_cfgsrc_free(struct nrf_cfgsrc *s)
{
	if (s == NULL)
		return;
	nrf_cfgsrc_stop(s);
	nrf_etcd_free(s->w_etcd);
	nrf_etcd_free(s->r_etcd);
	nrf_etcd_free(s->x_etcd);
	free(s->endpoints);
	free(s->cacert);
	free(s->cert);
	free(s->keyfile);
	free(s->user);
	if (s->password != NULL)
		memset(s->password, 0, strlen(s->password));
	free(s->password);
	free(s->seen_text);
	free(s->loops_text);
	free(s->key);
	free(s->id);
	free(s->config_path);
	free(s->cache_path);
	free(s->version);
	free(s->status_key);
	nrf_cfg_problems_fini(&s->err_probs);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->st);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */

/* A document at @p rev was refused: remember why (st held). */
static void
refused_locked(struct nrf_cfgsrc *s, int64_t rev, const char *detail,
	const struct nrf_cfg_problems *probs)
{
	s->err_rev = rev;
	snprintf(s->err_detail, sizeof(s->err_detail), "%s", detail);
	if (probs != NULL)
		problems_copy(&s->err_probs, probs);
	else
		nrf_cfg_problems_fini(&s->err_probs);
	s->n_refused++;
	s->dirty = true;
	pthread_cond_broadcast(&s->cond);
}

static void
write_cache(struct nrf_cfgsrc *s, const char *shared, size_t len, int64_t rev)
{
	json_t *doc, *o;
	char *text, why[512];

	if (s->cache_path == NULL || s->read_only)
		return;
	doc = json_loadb(shared, len, 0, NULL);
	o = doc != NULL ? json_pack("{s:s, s:I, s:o}", "key", s->key, "revision",
		(json_int_t)rev, "document", doc) : NULL;
	text = o != NULL ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (text == NULL || write_atomic(s->cache_path, text, strlen(text), why,
			sizeof(why)) != 0)
		NRF_LOG(WARN, MOD, "cached copy not written: %s", text == NULL ? "out of memory" : why);
	free(text);
}

/*
 * Apply the shared document @p text (revision @p rev) through the path of
 * the REST API: compose with the running runtime group, load (validate),
 * restart-only check, compile, publish. Lock held.
 */
static int
apply_shared(struct nrf_cfgsrc *s, const char *text, size_t len, int64_t rev)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_change ch = {0};
	char *runtime = NULL, *doc = NULL, detail[320];
	struct nrf_cfg *cfg = NULL;
	unsigned int i;
	uint64_t gen = 0;
	int rc, err = 0;

	runtime = nrf_rt_emit(s->rt, NRF_CFG_RUNTIME, 0, &gen, &err);
	if (runtime == NULL) {
		snprintf(detail, sizeof(detail), "running configuration: %s", nrf_strerror(err));
		rc = err;
		goto refuse;
	}
	doc = nrf_cfgsrc_compose(text, len, runtime, &probs, &err);
	if (doc == NULL) {
		snprintf(detail, sizeof(detail), "the document is invalid; nothing was changed");
		rc = err;
		goto refuse;
	}
	cfg = nrf_cfg_load(doc, strlen(doc), gen + 1, &probs, &err);
	if (cfg == NULL) {
		snprintf(detail, sizeof(detail), "the document is invalid; nothing was changed");
		rc = err;
		goto refuse;
	}
	switch (nrf_rt_prepare(s->rt, cfg, &ch)) {
	case NRF_RT_APPLY_OK:
		break;
	case NRF_RT_APPLY_RESTART_ONLY:
		for (i = 0; i < ch.n_restart && i < NRF_ARRAY_SIZE(ch.restart); i++)
			problem_add(&probs, ch.restart[i], "takes effect only after a restart");
		snprintf(detail, sizeof(detail), "restart-only settings differ; nothing was changed");
		rc = NRF_ECONFIG;
		goto refuse;
	case NRF_RT_APPLY_NOMEM:
	case NRF_RT_APPLY_UNUSABLE:
		problem_add(&probs, "", ch.err == NRF_ENOMEM ? "out of memory"
			: "the identities or TLS files cannot be compiled");
		snprintf(detail, sizeof(detail), "the document cannot be used: %s",
			nrf_strerror(ch.err));
		rc = ch.err;
		goto refuse;
	}
	rc = nrf_rt_commit(s->rt, &ch, 0, &gen, NULL);
	if (rc != 0) {
		snprintf(detail, sizeof(detail), "cannot publish: %s", nrf_strerror(rc));
		goto refuse;
	}
	pthread_mutex_lock(&s->st);
	s->applied_rev = rev;
	s->generation = gen;
	s->from_cache = false;
	s->err_rev = 0;
	s->err_detail[0] = '\0';
	nrf_cfg_problems_fini(&s->err_probs);
	s->n_applied++;
	s->dirty = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->st);
	write_cache(s, text, len, rev);
	NRF_LOG(INFO, MOD, "configuration revision %lld from etcd applied: generation %llu",
		(long long)rev, (unsigned long long)gen);
	free(runtime);
	free(doc);
	return 0;
refuse:
	NRF_LOG(WARN, MOD, "configuration revision %lld from etcd refused: %s%s%s%s%s",
		(long long)rev, detail, probs.n > 0 ? "; " : "",
		probs.n > 0 ? probs.v[0].pointer : "", probs.n > 0 ? ": " : "",
		probs.n > 0 ? probs.v[0].reason : "");
	pthread_mutex_lock(&s->st);
	refused_locked(s, rev, detail, &probs);
	pthread_mutex_unlock(&s->st);
	nrf_cfg_problems_fini(&probs);
	free(runtime);
	free(doc);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Start-up                                                                  */

static struct nrf_cfg *
load_composed(const char *shared, size_t len, const char *runtime,
	struct nrf_cfg_problems *problems, int *err)
{
	char *doc = nrf_cfgsrc_compose(shared, len, runtime, problems, err);
	struct nrf_cfg *cfg;

	if (doc == NULL)
		return NULL;
	cfg = nrf_cfg_load(doc, strlen(doc), 1, problems, err);
	free(doc);
	return cfg;
}

/* The cached copy, when there is one and it loads. */
static struct nrf_cfg *
load_cache(struct nrf_cfgsrc *s, const char *runtime, struct nrf_cfg_problems *problems,
	int *err)
{
	struct nrf_cfg_problems cp = {0};
	struct nrf_cfg *cfg = NULL;
	json_t *c, *d;
	char *text, *shared = NULL;
	size_t len = 0, k;
	int64_t rev;

	if (s->cache_path == NULL)
		return NULL;
	text = read_file(s->cache_path, &len);
	if (text == NULL)
		return NULL;
	c = json_loadb(text, len, 0, NULL);
	free(text);
	d = json_object_get(c, "document");
	rev = (int64_t)json_integer_value(json_object_get(c, "revision"));
	if (!json_is_object(d) || rev <= 0 ||
		!json_is_string(json_object_get(c, "key")) ||
		strcmp(json_string_value(json_object_get(c, "key")), s->key) != 0) {
		NRF_LOG(WARN, MOD, "cached copy %s is unusable (not a cache of key %s)",
			s->cache_path, s->key);
		json_decref(c);
		return NULL;
	}
	shared = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(c);
	if (shared != NULL)
		cfg = load_composed(shared, strlen(shared), runtime, &cp, err);
	free(shared);
	if (cfg == NULL) {
		for (k = 0; k < cp.n; k++)
			problem_add(problems, cp.v[k].pointer, cp.v[k].reason);
		nrf_cfg_problems_fini(&cp);
		return NULL;
	}
	nrf_cfg_problems_fini(&cp);
	s->applied_rev = rev;
	if (s->seen_rev < rev) {
		s->seen_rev = rev;
		s->seen_mod = rev;
	}
	s->start_rev = rev + 1;
	s->from_cache = true;
	NRF_LOG(WARN, MOD, "running on the cached copy %s (revision %lld of %s) until etcd "
		"answers", s->cache_path, (long long)rev, s->key);
	return cfg;
}

struct nrf_cfg *
nrf_cfgsrc_load(struct nrf_cfgsrc *s, struct nrf_cfg_problems *problems, int *err)
{
	struct nrf_etcd_kvs kvs = {0};
	struct nrf_cfg_problems sp = {0};
	struct nrf_cfg *cfg = NULL;
	char *text, *runtime, why[400];
	size_t len = 0;
	int rc;

	text = read_file(s->config_path, &len);
	if (text == NULL) {
		snprintf(why, sizeof(why), "cannot read %s: %s", s->config_path, strerror(errno));
		problem_add(problems, "", why);
		*err = NRF_EIO;
		return NULL;
	}
	runtime = nrf_cfgsrc_local_runtime(text, len, problems, err);
	free(text);
	if (runtime == NULL)
		return NULL;
	rc = nrf_etcd_get(s->w_etcd, s->key, false, &kvs);
	if (rc == 0) {
		contact(s);
		s->start_rev = kvs.revision + 1;
		if (kvs.n == 0) {
			snprintf(why, sizeof(why), "key %s does not exist in etcd (%s): write the "
				"shared document first (nrfwd-ctl put --etcd)", s->key,
				nrf_etcd_endpoint(s->w_etcd));
			problem_add(problems, "", why);
			*err = NRF_ENOENT;
			goto out;
		}
		s->seen_rev = s->seen_mod = kvs.v[0].mod_revision;
		seen_text_set_locked(s, kvs.v[0].value, kvs.v[0].value_len);
		cfg = load_composed(kvs.v[0].value, kvs.v[0].value_len, runtime, &sp, err);
		if (cfg != NULL) {
			s->applied_rev = kvs.v[0].mod_revision;
			s->generation = 1;
			s->n_applied++;
			write_cache(s, kvs.v[0].value, kvs.v[0].value_len, s->applied_rev);
			NRF_LOG(INFO, MOD, "configuration revision %lld of %s read from etcd (%s)",
				(long long)s->applied_rev, s->key, nrf_etcd_endpoint(s->w_etcd));
			goto out;
		}
		/* Refused: said in the status once it is published; the cache,
		 * if any, keeps the instance serving what it ran before. */
		refused_locked(s, s->seen_rev, "the document is invalid; nothing was changed", &sp);
		NRF_LOG(ERR, MOD, "configuration revision %lld of %s is invalid (%zu problem(s))",
			(long long)s->seen_rev, s->key, sp.n);
		cfg = load_cache(s, runtime, problems, err);
		if (cfg == NULL) {
			size_t k;

			for (k = 0; k < sp.n; k++)
				problem_add(problems, sp.v[k].pointer, sp.v[k].reason);
			*err = NRF_ECONFIG;
		}
		goto out;
	}
	NRF_LOG(WARN, MOD, "etcd unreachable at start: %s", nrf_etcd_last_error(s->w_etcd));
	cfg = load_cache(s, runtime, problems, err);
	if (cfg == NULL) {
		snprintf(why, sizeof(why), "etcd unreachable (%s) and no usable cached copy%s%s",
			nrf_etcd_last_error(s->w_etcd), s->cache_path != NULL ? " at " : "",
			s->cache_path != NULL ? s->cache_path : "");
		problem_add(problems, "", why);
		*err = NRF_EIO;
	}
out:
	nrf_cfg_problems_fini(&sp);
	nrf_etcd_kvs_fini(&kvs);
	free(runtime);
	if (cfg != NULL)
		*err = 0;
	return cfg;
}

/* ------------------------------------------------------------------------ */
/* Watcher                                                                   */

static int
on_events(void *arg, const struct nrf_etcd_event *ev, size_t n)
{
	struct nrf_cfgsrc *s = arg;
	const struct nrf_etcd_event *last = NULL;
	size_t i;

	pthread_mutex_lock(&s->st);
	s->contact_ns = nrf_now_ns();
	if (n == 0) {
		/* the watch is confirmed: etcd is there */
		s->watch_live = true;
		s->from_cache = false;
		s->dirty = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->st);
		return 0;
	}
	for (i = 0; i < n; i++)
		last = &ev[i];
	s->start_rev = last->kv.mod_revision + 1;
	pthread_mutex_unlock(&s->st);
	/* Only the newest document of a batch matters: each one replaces the
	 * whole document, so an older one would be superseded at once. */
	if (last->deleted) {
		pthread_mutex_lock(&s->st);
		s->seen_rev = last->kv.mod_revision;
		s->seen_mod = 0;
		seen_text_set_locked(s, NULL, 0);
		refused_locked(s, s->seen_rev, "the key was deleted; keeping the configuration "
			"in use", NULL);
		pthread_mutex_unlock(&s->st);
		NRF_LOG(WARN, MOD, "key %s deleted (revision %lld): keeping revision %lld",
			s->key, (long long)last->kv.mod_revision, (long long)s->applied_rev);
		return 0;
	}
	nrf_cfgsrc_lock(s);
	(void)apply_shared(s, last->kv.value, last->kv.value_len, last->kv.mod_revision);
	pthread_mutex_lock(&s->st);
	/* seen after applied: a waiter woken by it reads the outcome */
	s->seen_rev = last->kv.mod_revision;
	s->seen_mod = last->kv.mod_revision;
	seen_text_set_locked(s, last->kv.value, last->kv.value_len);
	s->dirty = true;  /* the status shows the seen revision too */
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->st);
	nrf_cfgsrc_unlock(s);
	return 0;
}

static bool
woken(void *arg)
{
	struct nrf_cfgsrc *s = arg;

	return atomic_load(&s->wake);
}

/* Read the key again (start, or after compaction). */
static int
reread(struct nrf_cfgsrc *s)
{
	struct nrf_etcd_kvs kvs = {0};
	int rc = nrf_etcd_get(s->w_etcd, s->key, false, &kvs);

	if (rc != 0)
		return rc;
	if (kvs.n == 1) {
		struct nrf_etcd_event ev = {.deleted = false, .kv = kvs.v[0]};

		if (kvs.v[0].mod_revision != s->seen_rev)
			(void)on_events(s, &ev, 1);
	} else {
		struct nrf_etcd_event ev = {.deleted = true};

		ev.kv.mod_revision = kvs.revision;
		if (s->seen_mod != 0)
			(void)on_events(s, &ev, 1);
	}
	pthread_mutex_lock(&s->st);
	s->start_rev = kvs.revision + 1;
	s->contact_ns = nrf_now_ns();
	pthread_mutex_unlock(&s->st);
	nrf_etcd_kvs_fini(&kvs);
	return 0;
}

/* Sleep @p ms unless stopping (then at once). */
static void
nap(struct nrf_cfgsrc *s, uint32_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->st);
	while (!atomic_load(&s->stop) &&
		pthread_cond_timedwait(&s->cond, &s->st, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&s->st);
}

static uint32_t
jitter(uint32_t ms, unsigned int *seed)
{
	return ms / 2 + (uint32_t)(rand_r(seed) % (ms / 2 + 1));
}

static void *
watcher_main(void *arg)
{
	struct nrf_cfgsrc *s = arg;
	unsigned int seed = (unsigned int)nrf_now_ns() ^ (unsigned int)getpid();
	uint32_t backoff = BACKOFF_MIN_MS;
	bool need_read = false, was_live = true;

	while (!atomic_load(&s->stop)) {
		int64_t compact = 0, start;
		int rc;

		if (need_read) {
			rc = reread(s);
			if (rc != 0) {
				pthread_mutex_lock(&s->st);
				s->watch_live = false;
				s->dirty = true;
				pthread_mutex_unlock(&s->st);
				nap(s, jitter(backoff, &seed));
				backoff = NRF_MIN(backoff * 2, BACKOFF_MAX_MS);
				continue;
			}
			need_read = false;
		}
		pthread_mutex_lock(&s->st);
		start = s->start_rev;
		pthread_mutex_unlock(&s->st);
		atomic_store(&s->wake, false);
		if (atomic_load(&s->stop))
			break;
		rc = nrf_etcd_watch(s->w_etcd, s->key, start, on_events, woken, s, &compact, 0);
		pthread_mutex_lock(&s->st);
		if (s->watch_live)
			backoff = BACKOFF_MIN_MS;  /* it worked for a while */
		was_live = s->watch_live;
		s->watch_live = false;
		s->dirty = true;
		s->n_reconnects++;
		pthread_mutex_unlock(&s->st);
		if (atomic_load(&s->stop))
			break;
		if (rc == NRF_EAGAIN) {
			NRF_LOG(INFO, MOD, "revision %lld compacted (at %lld): reading %s again",
				(long long)start, (long long)compact, s->key);
			need_read = true;
			continue;
		}
		if (rc == 0)
			continue; /* woken to reconnect */
		if (was_live) {
			/* at once on the next member: the others are likely fine */
			NRF_LOG(WARN, MOD, "watch of %s lost: %s; resuming from revision %lld",
				s->key, nrf_etcd_last_error(s->w_etcd), (long long)s->start_rev);
			continue;
		}
		nap(s, jitter(backoff, &seed));
		backoff = NRF_MIN(backoff * 2, BACKOFF_MAX_MS);
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Reporter                                                                  */

/* The status document (st held). */
static char *
status_text_locked(struct nrf_cfgsrc *s, bool with_id)
{
	json_t *o = json_object(), *le;
	char now[64];
	char *text;
	size_t i;
	bool refused = s->err_rev != 0 && s->err_rev >= s->seen_rev;

	now_rfc3339(now, sizeof(now));
	if (with_id) {
		json_object_set_new(o, "id", json_string(s->id));
		json_object_set_new(o, "version", json_string(s->version));
	}
	json_object_set_new(o, "state", json_string(refused ? "refused" :
		s->from_cache ? "cached" : "applied"));
	json_object_set_new(o, "appliedRevision", json_integer(s->applied_rev));
	json_object_set_new(o, "seenRevision", json_integer(s->seen_rev));
	json_object_set_new(o, "generation", json_integer((json_int_t)s->generation));
	json_object_set_new(o, "sourceUp", json_boolean(s->watch_live && s->reporter_ok));
	json_object_set_new(o, "fromCache", json_boolean(s->from_cache));
	if (s->err_rev != 0) {
		json_t *inv = json_array();

		for (i = 0; i < s->err_probs.n; i++)
			json_array_append_new(inv, json_pack("{s:s, s:s}", "param",
				s->err_probs.v[i].pointer, "reason", s->err_probs.v[i].reason));
		le = json_pack("{s:I, s:s, s:o}", "revision", (json_int_t)s->err_rev,
			"detail", s->err_detail, "invalidParams", inv);
		json_object_set_new(o, "lastError", le);
	} else {
		json_object_set_new(o, "lastError", json_null());
	}
	json_object_set_new(o, "updatedAt", json_string(now));
	if (with_id && s->loops_text != NULL) {
		json_t *lp = json_loads(s->loops_text, 0, NULL);

		if (lp != NULL)
			json_object_set_new(o, "loops", lp);
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

/* Every 2 s: the loop summary, and the status marked for a put when it
 * changed (reporter thread). */
#define LOOPS_EVERY_NS 2000000000ull

static void
loops_poll(struct nrf_cfgsrc *s)
{
	uint64_t now = nrf_now_ns(), sig = 0;
	char *text;

	if (s->loops_json == NULL || s->rt == NULL || now - s->loops_at < LOOPS_EVERY_NS)
		return;
	s->loops_at = now;
	text = s->loops_json(s->rt, &sig);
	if (text == NULL)
		return;
	pthread_mutex_lock(&s->st);
	if (sig != s->loops_sig || s->loops_text == NULL) {
		free(s->loops_text);
		s->loops_text = text;
		s->loops_sig = sig;
		s->dirty = true;
		text = NULL;
	}
	pthread_mutex_unlock(&s->st);
	free(text);
}

static void *
reporter_main(void *arg)
{
	struct nrf_cfgsrc *s = arg;
	unsigned int seed = (unsigned int)nrf_now_ns() ^ 0x5bd1e995u;
	uint64_t next_keepalive = 0, ka_every = (uint64_t)s->ttl_s * 1000000000ull / 3;
	uint32_t backoff = BACKOFF_MIN_MS;
	unsigned int fails = 0;
	int64_t lease = 0;

	while (!atomic_load(&s->stop)) {
		bool dirty = false, put = false;
		char *status = NULL;
		int rc = 0;

		if (fails == 0) {
			/* wait for a change, at most a second */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_mutex_lock(&s->st);
			while (!s->dirty && !atomic_load(&s->stop) &&
				pthread_cond_timedwait(&s->cond, &s->st, &ts) != ETIMEDOUT)
				;
			pthread_mutex_unlock(&s->st);
		} else {
			nap(s, jitter(backoff, &seed));
			backoff = NRF_MIN(backoff * 2, BACKOFF_MAX_MS);
		}
		if (atomic_load(&s->stop))
			break;
		loops_poll(s);
		if (lease == 0) {
			rc = nrf_etcd_lease_grant(s->r_etcd, s->ttl_s, &lease);
			if (rc != 0)
				goto failed;
			put = true;
			next_keepalive = nrf_now_ns() + ka_every;
		}
		pthread_mutex_lock(&s->st);
		dirty = s->dirty;
		s->dirty = false;
		s->reporter_ok = true; /* as it will be reported if the put works */
		if (dirty || put)
			status = status_text_locked(s, true);
		pthread_mutex_unlock(&s->st);
		if (status != NULL) {
			rc = nrf_etcd_put(s->r_etcd, s->status_key, status, strlen(status), lease, NULL);
			free(status);
			if (rc == NRF_EINVAL) {
				/* lease gone (expired while we were away) */
				lease = 0;
				pthread_mutex_lock(&s->st);
				s->dirty = true;
				pthread_mutex_unlock(&s->st);
				continue;
			}
			if (rc != 0)
				goto failed;
		}
		if (nrf_now_ns() >= next_keepalive) {
			rc = nrf_etcd_lease_keepalive(s->r_etcd, lease);
			if (rc == NRF_ENOENT) {
				lease = 0;
				continue;
			}
			if (rc != 0)
				goto failed;
			next_keepalive = nrf_now_ns() + ka_every;
		}
		contact(s);
		if (fails > 0)
			NRF_LOG(INFO, MOD, "etcd answers again (%s)", nrf_etcd_endpoint(s->r_etcd));
		fails = 0;
		backoff = BACKOFF_MIN_MS;
		continue;
failed:
		pthread_mutex_lock(&s->st);
		if (rc != 0 && (dirty || put))
			s->dirty = true;   /* put it again once etcd answers */
		s->reporter_ok = false;
		pthread_mutex_unlock(&s->st);
		if (fails++ == 0)
			NRF_LOG(WARN, MOD, "etcd not answering: %s; serving the configuration in use "
				"(revision %lld)", nrf_etcd_last_error(s->r_etcd),
				(long long)s->applied_rev);
		/* The watch may sit on a member that hangs: have it reconnect. */
		if (fails == 2)
			atomic_store(&s->wake, true);
	}
	if (lease != 0)
		(void)nrf_etcd_lease_revoke(s->r_etcd, lease);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Start / stop                                                              */

int
nrf_cfgsrc_start(struct nrf_cfgsrc *s, struct nrf_rt *rt)
{
	if (s->started)
		return 0;
	s->rt = rt;
	pthread_mutex_lock(&s->st);
	s->generation = nrf_rt_generation(rt);
	s->dirty = true;
	s->reporter_ok = true;
	pthread_mutex_unlock(&s->st);
	if (pthread_create(&s->watcher, NULL, watcher_main, s) != 0)
		return NRF_ENOMEM;
	if (pthread_create(&s->reporter, NULL, reporter_main, s) != 0) {
		atomic_store(&s->stop, true);
		atomic_store(&s->wake, true);
		pthread_join(s->watcher, NULL);
		return NRF_ENOMEM;
	}
	s->started = true;
	NRF_LOG(INFO, MOD, "watching %s from revision %lld; status under %s", s->key,
		(long long)s->start_rev, s->status_key);
	return 0;
}

void
nrf_cfgsrc_stop(struct nrf_cfgsrc *s)
{
	if (s == NULL || !s->started)
		return;
	atomic_store(&s->stop, true);
	atomic_store(&s->wake, true);
	pthread_mutex_lock(&s->st);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->st);
	pthread_join(s->watcher, NULL);
	pthread_join(s->reporter, NULL);
	s->started = false;
}

void
nrf_cfgsrc_state_get(struct nrf_cfgsrc *s, struct nrf_cfgsrc_state *out)
{
	uint64_t now = nrf_now_ns();

	pthread_mutex_lock(&s->st);
	out->up = s->watch_live && s->reporter_ok;
	out->from_cache = s->from_cache;
	out->applied_revision = s->applied_rev;
	out->seen_revision = s->seen_rev;
	out->generation = s->generation;
	out->contact_age_s = s->contact_ns == 0 ? -1.0 : (double)(now - s->contact_ns) / 1e9;
	out->applied = s->n_applied;
	out->refused = s->n_refused;
	out->reconnects = s->n_reconnects;
	pthread_mutex_unlock(&s->st);
}

/* ------------------------------------------------------------------------ */
/* REST API hooks                                                            */

void
nrf_cfgsrc_lock(struct nrf_cfgsrc *s)
{
	pthread_mutex_lock(&s->lock);
}

void
nrf_cfgsrc_unlock(struct nrf_cfgsrc *s)
{
	pthread_mutex_unlock(&s->lock);
}

/* One compare-and-swap write of @p text based on revision @p base, for
 * both writers below; @p how says in the log what was written. */
static int
put_if(struct nrf_cfgsrc *s, const char *text, size_t len, int64_t base, int64_t *ticket,
	char *why, size_t why_cap, const char *how)
{
	int rc;

	*ticket = 0;
	why[0] = '\0';
	rc = nrf_etcd_put_if(s->x_etcd, s->key, text, len, base, ticket);
	if (rc == 0 || rc == NRF_EAGAIN)
		contact(s);
	if (rc == NRF_EAGAIN)
		snprintf(why, why_cap, "the configuration in etcd changed since revision %lld "
			"this change was based on: read it again and retry", (long long)base);
	else if (rc != 0)
		snprintf(why, why_cap, "etcd: %s", nrf_etcd_last_error(s->x_etcd));
	else
		NRF_LOG(INFO, MOD, "REST change written to %s at revision %lld (based on %lld%s)",
			s->key, (long long)*ticket, (long long)base, how);
	return rc;
}

int
nrf_cfgsrc_write(struct nrf_cfgsrc *s, const struct nrf_cfg *next, int64_t *ticket,
	char *why, size_t why_cap)
{
	char *shared;
	int64_t base;
	int rc, err = 0;

	*ticket = 0;
	why[0] = '\0';
	shared = nrf_cfgsrc_shared_of(next, &err);
	if (shared == NULL)
		return err;
	pthread_mutex_lock(&s->st);
	base = s->seen_mod;
	pthread_mutex_unlock(&s->st);
	rc = put_if(s, shared, strlen(shared), base, ticket, why, why_cap, "");
	free(shared);
	return rc;
}

char *
nrf_cfgsrc_stored(struct nrf_cfgsrc *s, int64_t *mod)
{
	char *t;

	pthread_mutex_lock(&s->st);
	t = s->seen_text != NULL && s->seen_mod != 0 ? strdup(s->seen_text) : NULL;
	*mod = s->seen_mod;
	pthread_mutex_unlock(&s->st);
	return t;
}

int
nrf_cfgsrc_write_text(struct nrf_cfgsrc *s, const char *text, size_t len, int64_t base,
	int64_t *ticket, char *why, size_t why_cap)
{
	return put_if(s, text, len, base, ticket, why, why_cap,
		", applied to the stored document");
}

int
nrf_cfgsrc_wait(struct nrf_cfgsrc *s, int64_t ticket, uint32_t ms,
	struct nrf_cfg_problems *problems)
{
	uint64_t deadline = nrf_now_ns() + (uint64_t)ms * 1000000ull, gen;
	struct timespec ts;
	int rc;

	pthread_mutex_lock(&s->st);
	while (s->seen_rev < ticket && nrf_now_ns() < deadline) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->st, &ts);
	}
	if (s->seen_rev < ticket) {
		rc = NRF_ETIMEDOUT;
	} else if (s->applied_rev >= ticket) {
		rc = 0;
	} else {
		rc = NRF_ECONFIG;
		if (problems != NULL)
			problems_copy(problems, &s->err_probs);
	}
	gen = s->generation;
	pthread_mutex_unlock(&s->st);
	/* "200" means in effect, as for a change of the file (decision 0007) */
	while (rc == 0 && s->rt != NULL && !nrf_rt_generation_seen(s->rt, gen) &&
		nrf_now_ns() < deadline)
		usleep(200);
	return rc;
}

int
nrf_cfgsrc_persist_runtime(struct nrf_cfgsrc *s, const struct nrf_cfg *next, char *why,
	size_t why_cap)
{
	char *rt = nrf_cfg_emit(next, NRF_CFG_RUNTIME, 2, NULL), *text;
	int rc;

	if (rt == NULL)
		return NRF_ENOMEM;
	rc = asprintf(&text, "{\n\"runtime\": %s\n}\n", rt);
	free(rt);
	if (rc < 0)
		return NRF_ENOMEM;
	rc = write_atomic(s->config_path, text, strlen(text), why, why_cap);
	free(text);
	return rc;
}

char *
nrf_cfgsrc_status_json(struct nrf_cfgsrc *s)
{
	char *base, *out = NULL;
	json_t *o;
	double age;

	pthread_mutex_lock(&s->st);
	base = status_text_locked(s, false);
	age = s->contact_ns == 0 ? -1.0 : (double)(nrf_now_ns() - s->contact_ns) / 1e9;
	pthread_mutex_unlock(&s->st);
	o = base != NULL ? json_loads(base, 0, NULL) : NULL;
	free(base);
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "source", json_string("etcd"));
	json_object_set_new(o, "key", json_string(s->key));
	json_object_set_new(o, "instance", json_string(s->id));
	json_object_set_new(o, "secondsSinceContact", age < 0 ? json_null() : json_real(age));
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return out;
}

char *
nrf_cfgsrc_metrics(struct nrf_cfgsrc *s)
{
	struct nrf_cfgsrc_state st;
	char *out;

	nrf_cfgsrc_state_get(s, &st);
	if (asprintf(&out,
		"# HELP nrfwd_config_source_up 1 while the configuration source answers and "
		"its watch is established\n"
		"# TYPE nrfwd_config_source_up gauge\n"
		"nrfwd_config_source_up{source=\"etcd\"} %d\n"
		"# HELP nrfwd_config_source_revision etcd revision of the configuration in use\n"
		"# TYPE nrfwd_config_source_revision gauge\n"
		"nrfwd_config_source_revision{source=\"etcd\"} %lld\n"
		"# HELP nrfwd_config_source_seen_revision etcd revision of the document seen last "
		"(applied or refused)\n"
		"# TYPE nrfwd_config_source_seen_revision gauge\n"
		"nrfwd_config_source_seen_revision{source=\"etcd\"} %lld\n"
		"# HELP nrfwd_config_source_contact_age_seconds seconds since etcd last answered "
		"(-1: never)\n"
		"# TYPE nrfwd_config_source_contact_age_seconds gauge\n"
		"nrfwd_config_source_contact_age_seconds{source=\"etcd\"} %.3f\n"
		"# HELP nrfwd_config_source_from_cache 1 while running on the cached copy\n"
		"# TYPE nrfwd_config_source_from_cache gauge\n"
		"nrfwd_config_source_from_cache{source=\"etcd\"} %d\n"
		"# HELP nrfwd_config_source_applied_total documents from the source applied\n"
		"# TYPE nrfwd_config_source_applied_total counter\n"
		"nrfwd_config_source_applied_total{source=\"etcd\"} %llu\n"
		"# HELP nrfwd_config_source_refused_total documents from the source refused\n"
		"# TYPE nrfwd_config_source_refused_total counter\n"
		"nrfwd_config_source_refused_total{source=\"etcd\"} %llu\n"
		"# HELP nrfwd_config_source_reconnects_total watch streams started again\n"
		"# TYPE nrfwd_config_source_reconnects_total counter\n"
		"nrfwd_config_source_reconnects_total{source=\"etcd\"} %llu\n",
		st.up ? 1 : 0, (long long)st.applied_revision, (long long)st.seen_revision,
		st.contact_age_s, st.from_cache ? 1 : 0, (unsigned long long)st.applied,
		(unsigned long long)st.refused, (unsigned long long)st.reconnects) < 0)
		return NULL;
	return out;
}
