/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The management listener on libmicrohttpd (one internal thread, so
 * requests, and in particular configuration changes, are handled one at a
 * time; the lock below only guards against a future thread pool).
 *
 * Order of checks for a request: path (404), method (405 + Allow), then for
 * PUT/PATCH the bearer token (401), the media type (415), the size (413
 * after the body was read and dropped, or at once when Content-Length is
 * over 16 MiB), the JSON (400), the
 * change itself (400 with invalidParams, nothing changed), persistence
 * (500, nothing changed), publication (200 with the stored group).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <netdb.h>

#include "api_int.h"
#include "nrf_addr.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define CT_JSON "application/json"
#define CT_PROBLEM "application/problem+json"
#define CT_MERGE "application/merge-patch+json"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define MAX_TOKEN 4096
#define DISCARD_MAX (16u * 1024 * 1024)

struct nrf_api {
	struct MHD_Daemon *d;
	struct nrf_rt *rt;
	char *token;
	char *config_path;
	size_t max_body;
	uint32_t settle_ms;
	struct nrf_tp_addr addr;
	pthread_mutex_t lock;
	_Atomic uint64_t n_requests;
	_Atomic uint64_t n_reloads;
	_Atomic uint64_t n_failures;
	/* busy share over a trailing window (API_BUSY_WINDOW_NS): a ring of
	 * samples taken at scrapes, at most one a second */
	struct api_busy_sample busy_ring[API_BUSY_SAMPLES];
	unsigned int busy_n;      /* samples kept (<= API_BUSY_SAMPLES) */
	unsigned int busy_head;   /* index of the newest */
	double busy[NRF_RT_MAX_WORKERS];
	double last_apply[3];
	atomic_bool draining;     /* nrf_api_drain(): the process is stopping */
	const struct nrf_api_source *src; /* etcd (api_source.c); NULL: the file */
	struct api_file_mark mark; /* the file as last loaded or written (api_persist.c) */
};

/* One request (MHD's per-request context). */
struct api_req {
	enum api_res res;
	bool merge;
	bool too_big;
	bool answered;
	char *body;
	size_t len;
	size_t cap;
};

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */

static enum MHD_Result
reply(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq,
	unsigned int status, const char *ctype, const char *body, const char *const *hdrs)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len = body != NULL ? strlen(body) : 0;

	rq->answered = true;
	atomic_fetch_add(&api->n_requests, 1);
	r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)(body != NULL ? body : ""),
		MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	if (ctype != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	for (; hdrs != NULL && hdrs[0] != NULL; hdrs += 2)
		MHD_add_response_header(r, hdrs[0], hdrs[1]);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
reply_problem(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq,
	unsigned int status, const char *title, const char *cause, const char *detail,
	const struct nrf_cfg_problems *invalid, const char *const *hdrs)
{
	char *text = api_problem_json((int)status, title, cause, detail, invalid);
	char *body;
	enum MHD_Result ret;

	if (text == NULL)
		return MHD_NO;
	body = malloc(strlen(text) + 2);
	if (body == NULL) {
		free(text);
		return MHD_NO;
	}
	sprintf(body, "%s\n", text);
	ret = reply(api, c, rq, status, CT_PROBLEM, body, hdrs);
	free(text);
	free(body);
	return ret;
}

/* Text from nrf_rt_emit() plus a newline, then free it. */
static enum MHD_Result
reply_json_owned(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq,
	unsigned int status, char *text)
{
	enum MHD_Result ret;
	size_t n = strlen(text);
	char *body = realloc(text, n + 2);

	if (body == NULL) {
		free(text);
		return MHD_NO;
	}
	body[n] = '\n';
	body[n + 1] = '\0';
	ret = reply(api, c, rq, status, CT_JSON, body, NULL);
	free(body);
	return ret;
}

/* A document read from the runtime (@p text, NULL when it could not be
 * made: out of memory): 200 with it, else 500. */
static enum MHD_Result
reply_doc(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq, char *text)
{
	if (text == NULL)
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory", NULL, NULL);
	return reply_json_owned(api, c, rq, 200, text);
}

/* ------------------------------------------------------------------------ */
/* GET                                                                       */

static enum MHD_Result
serve_config(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq)
{
	const struct api_group *g = api_group_of(rq->res);
	int err = 0;
	char *text = nrf_rt_emit(api->rt, g != NULL ? g->cfg : NRF_CFG_ALL, 2, NULL, &err);

	if (text == NULL)
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			nrf_strerror(err), NULL, NULL);
	return reply_json_owned(api, c, rq, 200, text);
}

/* Busy share of every worker over the trailing window: against the newest
 * kept sample at least API_BUSY_WINDOW_NS old (else the oldest kept, if at
 * least 100 ms old; else the previous figure stands). The window does not
 * depend on who scrapes how often, so scrapers do not disturb each other
 * (before, it was "since the previous scrape", which a second scraper
 * shortened). Caller holds api->lock. */
static void
busy_window(struct nrf_api *api, uint64_t now, const struct nrf_rt_worker_info *wi,
	unsigned int n)
{
	const struct api_busy_sample *ref = NULL;
	struct api_busy_sample *s;
	unsigned int k, i;

	for (k = 0; k < api->busy_n; k++) {
		s = &api->busy_ring[(api->busy_head + API_BUSY_SAMPLES - k) % API_BUSY_SAMPLES];
		ref = s;
		if (now - s->wall_ns >= API_BUSY_WINDOW_NS)
			break;
	}
	if (ref != NULL && now - ref->wall_ns >= 100000000ull) {
		for (i = 0; i < n; i++) {
			uint64_t d = wi[i].cpu_ns >= ref->busy_ns[i] ? wi[i].cpu_ns - ref->busy_ns[i] : 0;

			api->busy[i] = NRF_MIN(1.0, (double)d / (double)(now - ref->wall_ns));
		}
	}
	/* keep a sample when the newest is at least a second old */
	if (api->busy_n == 0 ||
		now - api->busy_ring[api->busy_head].wall_ns >= 1000000000ull) {
		if (api->busy_n > 0)
			api->busy_head = (api->busy_head + 1) % API_BUSY_SAMPLES;
		if (api->busy_n < API_BUSY_SAMPLES)
			api->busy_n++;
		s = &api->busy_ring[api->busy_head];
		s->wall_ns = now;
		for (i = 0; i < n; i++)
			s->busy_ns[i] = wi[i].cpu_ns;
	}
}

static enum MHD_Result
serve_metrics(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq)
{
	struct nrf_rt_worker_info wi[NRF_RT_MAX_WORKERS];
	struct nrf_rt_stats *st = calloc(1, sizeof(*st));
	struct nrf_rt_peer_stats *peers = NULL;
	struct api_metrics_in in;
	struct nrf_rt_dp_stats dp[NRF_RT_MAX_WORKERS];
	struct nrf_tp_dpdk_xstat *xs = NULL;
	bool any_dp = false;
	struct api_buf b = {0};
	unsigned int n = NRF_MIN(nrf_rt_workers(api->rt), (unsigned int)NRF_RT_MAX_WORKERS), i;
	size_t n_peers = 0;
	enum MHD_Result ret;
	uint64_t now;

	if (st == NULL || nrf_rt_peer_stats_get(api->rt, &peers, &n_peers) != 0) {
		free(st);
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory", NULL, NULL);
	}
	nrf_rt_stats_get(api->rt, st);
	pthread_mutex_lock(&api->lock);
	now = nrf_now_ns();
	for (i = 0; i < n; i++)
		nrf_rt_worker_get(api->rt, i, &wi[i]);
	busy_window(api, now, wi, n);
	memset(&in, 0, sizeof(in));
	in.st = st;
	in.peers = peers;
	in.n_peers = n_peers;
	in.workers = wi;
	in.busy = api->busy;
	in.n_workers = n;
	in.generation = nrf_rt_generation(api->rt);
	nrf_rt_tls_expiry(api->rt, &in.tls_not_after[0], &in.tls_not_after[1]);
	nrf_rt_dns_stats_get(api->rt, &in.dns);
	nrf_api_stats_get(api, &in.api);
	memcpy(in.last_apply, api->last_apply, sizeof(in.last_apply));
	for (i = 0; i < n && i < NRF_RT_MAX_WORKERS; i++) {
		if (nrf_rt_dp_stats_worker(api->rt, i, &dp[i]) == 0 && dp[i].polled)
			any_dp = true;
	}
	if (any_dp) {
		int nx;

		in.dp = dp;
		xs = calloc(API_XSTATS_MAX, sizeof(*xs));
		nx = xs != NULL ? nrf_tp_dpdk_port_xstats(xs, API_XSTATS_MAX) : 0;
		in.xstats = xs;
		in.n_xstats = nx > 0 ? (unsigned int)nx : 0;
	}
	{
		struct nrf_rt_loop *lv = NULL;
		size_t ln = 0;

		if (nrf_rt_loops_get(api->rt, &lv, &ln, NULL) == 0)
			in.loop_paths = ln;
		free(lv);
	}
	api_metrics_render(&b, &in);
	api_metrics_process(&b);
	api_source_metrics(api->src, &b);
	pthread_mutex_unlock(&api->lock);
	free(xs);
	free(peers);
	free(st);
	if (b.oom || b.p == NULL) {
		api_buf_fini(&b);
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory", NULL, NULL);
	}
	ret = reply(api, c, rq, 200, CT_METRICS, b.p, NULL);
	api_buf_fini(&b);
	return ret;
}

static void
sockaddr_of(const struct nrf_tp_addr *a, struct sockaddr_storage *ss, socklen_t *len)
{
	*len = nrf_addr_to_sockaddr(a->family, a->ip, a->port, ss);
}

/* RFC 3339 UTC text of the moment @p mono_ns (CLOCK_MONOTONIC, in the
 * past): the wall clock now minus the time since then. */
static void
since_text(uint64_t mono_ns, uint64_t now_ns, char *buf, size_t cap)
{
	struct timespec rt;
	struct tm tm;
	uint64_t ago = now_ns > mono_ns ? now_ns - mono_ns : 0, real;
	time_t t;

	clock_gettime(CLOCK_REALTIME, &rt);
	real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	real = real > ago ? real - ago : 0;
	t = (time_t)(real / 1000000000ull);
	gmtime_r(&t, &tm);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		(unsigned int)(real / 1000000ull % 1000));
}

/*
 * Readiness is what the data path will do, read from the workers' own
 * health state (no probe of our own: a TCP connect from here proved less
 * than the workers' PINGs, and could say "ready" while every request
 * failed). Not ready: draining, workers not running, configuration not in
 * use everywhere, or the local NRF held down in every worker (the data
 * path then answers NRF_Local_Unavailable at once).
 */
static enum MHD_Result
serve_ready(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq)
{
	bool draining = atomic_load(&api->draining);
	bool listeners = nrf_rt_running(api->rt);
	bool config = nrf_rt_generation_seen(api->rt, nrf_rt_generation(api->rt));
	struct nrf_rt_peer_stats *peers = NULL;
	const char *local = "up", *reason = NULL;
	bool local_ok = true, ready;
	uint64_t now = nrf_now_ns();
	char name[280], since[80];
	json_t *doc, *checks, *held;
	size_t n = 0, i;
	char *text;
	int rc = nrf_rt_local_name(api->rt, name, sizeof(name));

	if (nrf_rt_peer_stats_get(api->rt, &peers, &n) != 0)
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory", NULL, NULL);
	if (rc == NRF_ENOENT) {
		local = "not configured";
	} else if (rc != 0) {
		local = "no address";
		local_ok = false;
	} else {
		for (i = 0; i < n; i++) {
			const struct nrf_rt_peer_stats *p = &peers[i];

			if (p->local && strcmp(p->name, name) == 0 && p->workers > 0 &&
				p->workers_down == p->workers) {
				local = "held down";
				local_ok = false;
			}
		}
	}
	ready = !draining && listeners && config && local_ok;
	if (draining)
		reason = "draining: the process is stopping";
	else if (!listeners)
		reason = "the workers are not running";
	else if (!config)
		reason = "the configuration is not yet in use by every worker";
	else if (rc != 0 && rc != NRF_ENOENT)
		reason = "the local NRF has no address";
	else if (!local_ok)
		reason = "the local NRF is held down in every worker";

	doc = json_object();
	checks = json_object();
	held = json_array();
	json_object_set_new(doc, "status",
		json_string(draining ? "draining" : ready ? "ready" : "not ready"));
	if (reason != NULL)
		json_object_set_new(doc, "reason", json_string(reason));
	json_object_set_new(checks, "listeners", json_boolean(listeners));
	json_object_set_new(checks, "configuration", json_boolean(config));
	json_object_set_new(checks, "localNrf", json_string(local));
	json_object_set_new(doc, "checks", checks);
	for (i = 0; i < n; i++) {
		const struct nrf_rt_peer_stats *p = &peers[i];
		json_t *e;

		if (p->workers_down == 0)
			continue;
		since_text(p->down_since_ns, now, since, sizeof(since));
		e = json_pack("{s:s, s:s, s:I, s:I, s:s, s:I}", "upstream", p->name,
			"role", p->local ? "local" : "peer",
			"workers", (json_int_t)p->workers_down, "of", (json_int_t)p->workers,
			"since", since,
			"forMs", (json_int_t)((now - NRF_MIN(now, p->down_since_ns)) / 1000000ull));
		json_array_append_new(held, e);
	}
	json_object_set_new(doc, "heldDown", held);
	json_object_set_new(doc, "generation",
		json_integer((json_int_t)nrf_rt_generation(api->rt)));
	api_source_ready(api->src, doc);
	free(peers);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (text == NULL)
		return reply_problem(api, c, rq, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory", NULL, NULL);
	return reply_json_owned(api, c, rq, ready ? 200 : 503, text);
}

/* ------------------------------------------------------------------------ */
/* PUT / PATCH                                                               */

static double
secs(uint64_t from, uint64_t to)
{
	return (double)(to - from) / 1e9;
}

/* The client of @p c as "ADDR:PORT" ("[V6]:PORT") into @p buf, for the log
 * lines of configuration changes (who changed or tried to change what). */
static const char *
client_of(struct MHD_Connection *c, char *buf, size_t cap)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;
	char host[64], serv[16];
	socklen_t len;

	if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
		snprintf(buf, cap, "unknown client");
		return buf;
	}
	len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, cap, "unknown client");
		return buf;
	}
	snprintf(buf, cap, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
	return buf;
}

static enum MHD_Result
refuse(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq,
	const struct api_group *g, unsigned int status, const char *title, const char *cause,
	const char *detail, const struct nrf_cfg_problems *probs)
{
	char who[80];

	atomic_fetch_add(&api->n_failures, 1);
	NRF_LOG(WARN, API_MOD, "configuration change refused (%s %s from %s): %u %s%s%s%s%s",
		rq->merge ? "PATCH" : "PUT", g->name, client_of(c, who, sizeof(who)), status, title,
		detail != NULL ? ": " : "", detail != NULL ? detail : "",
		probs != NULL && probs->n > 0 ? "; first problem " : "",
		probs != NULL && probs->n > 0 ? probs->v[0].pointer : "");
	return reply_problem(api, c, rq, status, title, cause, detail, probs, NULL);
}

static enum MHD_Result
apply(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq)
{
	const struct api_group *g = api_group_of(rq->res);
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_change ch = {0};
	char *running = NULL, *next = NULL, *persist = NULL, *answer = NULL;
	char *disk = NULL, *doc = NULL, who[80];
	size_t disk_len = 0, doc_len = 0;
	struct nrf_cfg *cfg;
	json_error_t je;
	json_t *body;
	uint64_t gen = 0, t0 = nrf_now_ns(), t1, t2;
	unsigned int i;
	enum MHD_Result ret;
	char why[512];
	int rc, err = 0;
	bool src_locked = false, seen = false;

	if (atomic_load(&api->draining))
		return refuse(api, c, rq, g, 503, "Service Unavailable", "NF_SERVICE_FAILURE",
			"nrfwd is stopping: no configuration change while draining", NULL);
	body = json_loadb(rq->body != NULL ? rq->body : "", rq->len,
		JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (body == NULL) {
		api_problem_add(&probs, g->pointer, "invalid JSON at line %d, column %d: %s",
			je.line, je.column, je.text);
		ret = refuse(api, c, rq, g, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"the body is not JSON", &probs);
		nrf_cfg_problems_fini(&probs);
		return ret;
	}
	pthread_mutex_lock(&api->lock);
	src_locked = api_source_lock(api->src);
	running = nrf_rt_emit(api->rt, NRF_CFG_ALL, 0, &gen, &err);
	if (running == NULL) {
		ret = refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
			nrf_strerror(err), NULL);
		goto out;
	}
	rc = api_doc_apply(running, g, rq->merge, body, &next, &probs);
	if (rc != 0) {
		ret = rc == NRF_EINVAL
			? refuse(api, c, rq, g, 400, "Bad Request", "MANDATORY_IE_INCORRECT",
				"the configuration is invalid; nothing was changed", &probs)
			: refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
				nrf_strerror(rc), NULL);
		goto out;
	}
	/* The same loader as the configuration file: every problem listed. */
	cfg = nrf_cfg_load(next, strlen(next), gen + 1, &probs, &err);
	if (cfg == NULL) {
		ret = err == NRF_ENOMEM
			? refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
				nrf_strerror(err), NULL)
			: refuse(api, c, rq, g, 400, "Bad Request", "MANDATORY_IE_INCORRECT",
				"the configuration is invalid; nothing was changed", &probs);
		goto out;
	}
	persist = nrf_cfg_emit(cfg, NRF_CFG_ALL, 2, &err);
	answer = nrf_cfg_emit(cfg, g->cfg, 2, &err);
	if (persist == NULL || answer == NULL) {
		nrf_cfg_free(cfg);
		ret = refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
			nrf_strerror(NRF_ENOMEM), NULL);
		goto out;
	}
	/* Restart-only settings; Via database, forwarding table, peer
	 * addresses: before anything is written or published. */
	switch (nrf_rt_prepare(api->rt, cfg, &ch)) {
	case NRF_RT_APPLY_OK:
		break;
	case NRF_RT_APPLY_RESTART_ONLY:
		for (i = 0; i < ch.n_restart && i < NRF_ARRAY_SIZE(ch.restart); i++)
			api_problem_add(&probs, ch.restart[i], "%s", NRF_CFG_RESTART_REASON);
		ret = refuse(api, c, rq, g, 400, "Bad Request", "MODIFICATION_NOT_ALLOWED",
			"restart-only settings cannot be changed live; nothing was changed", &probs);
		goto out;
	case NRF_RT_APPLY_NOMEM:
		ret = refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
			nrf_strerror(ch.err), NULL);
		goto out;
	case NRF_RT_APPLY_UNUSABLE:
		api_problem_add(&probs, g->pointer, "identities cannot be compiled: %s",
			nrf_strerror(ch.err));
		ret = refuse(api, c, rq, g, 400, "Bad Request", "MANDATORY_IE_INCORRECT",
			"the configuration cannot be used; nothing was changed", &probs);
		goto out;
	}
	t1 = nrf_now_ns();
	if (api->src != NULL && g->cfg != NRF_CFG_RUNTIME) {
		/* shared group: to the source, applied from its watch */
		struct api_src_out so = {0};
		char *stored = NULL;
		int64_t base = 0;

		/* Applied to the document as stored, like a change to the file
		 * (decision 0037); the running one whole when that cannot be. */
		if (api->src->stored != NULL &&
			(stored = api->src->stored(api->src->arg, &base)) != NULL)
			doc = api_persist_shared_doc(stored, g, rq->merge, body, running, gen + 1,
				&doc_len);
		free(stored);
		api_source_change(api->src, ch.snap, doc, doc_len, base, api->settle_ms, &src_locked,
			&so);
		ch.snap = NULL; /* taken */
		if (so.status != 200 && so.status != 202) {
			ret = refuse(api, c, rq, g, so.status, so.title, so.cause, so.detail,
				&so.probs);
		} else {
			atomic_fetch_add(&api->n_reloads, 1);
			NRF_LOG(INFO, API_MOD, "%s %s from %s: %s", rq->merge ? "PATCH" : "PUT",
				g->name, client_of(c, who, sizeof(who)), so.detail);
			ret = reply_json_owned(api, c, rq, so.status, answer);
			answer = NULL;
		}
		nrf_cfg_problems_fini(&so.probs);
		goto out;
	}
	if (api->config_path != NULL) {
		/* A hand edit not reloaded yet is not overwritten (api_persist.c).
		 * With a configuration source only runtime changes get here, and
		 * the file holds runtime only: the same rule (decision 0037). */
		int rerr = 0;

		disk = api_file_read(api->config_path, &disk_len, &rerr);
		if (disk == NULL || !api_file_mark_same(&api->mark, disk, disk_len)) {
			char detail[768];

			if (disk == NULL)
				snprintf(detail, sizeof(detail), "the configuration file %s cannot be "
					"read (%s); nothing was changed", api->config_path,
					strerror(rerr));
			else
				snprintf(detail, sizeof(detail), "the configuration file %s changed on "
					"disk since nrfwd last loaded or wrote it; reload it (SIGHUP, "
					"systemctl reload nrfwd) or undo the edit; nothing was changed",
					api->config_path);
			nrf_rt_change_drop(&ch);
			ret = refuse(api, c, rq, g, 409, "Conflict", "CONFIGURATION_CONFLICT",
				detail, NULL);
			goto out;
		}
		doc = api->src != NULL
			? api_persist_runtime_doc(disk, g, rq->merge, body, running, gen + 1,
				&doc_len)
			: api_persist_doc(disk, g, rq->merge, body, gen + 1, &doc_len);
		if (doc == NULL)
			NRF_LOG(WARN, API_MOD, "configuration file %s: the change cannot be applied "
				"to the file as written; writing the running configuration whole",
				api->config_path);
	}
	if (api->src != NULL || api->config_path != NULL) {
		size_t plen = strlen(persist);

		persist[plen] = '\n'; /* nrf_cfg_emit's NUL becomes the final newline */
		rc = doc != NULL
			? api_file_write_atomic(api->config_path, doc, doc_len, why, sizeof(why))
			: api->src != NULL
			? api_source_persist(api->src, ch.snap, why, sizeof(why))
			: api_file_write_atomic(api->config_path, persist, plen + 1, why,
				sizeof(why));
		if (rc == 0 && api->config_path != NULL) {
			if (doc != NULL)
				api_file_mark_text(&api->mark, doc, doc_len);
			else if (api->src != NULL) /* runtime written whole by the source */
				(void)api_file_mark_path(&api->mark, api->config_path);
			else
				api_file_mark_text(&api->mark, persist, plen + 1);
		}
		persist[plen] = '\0';
		if (rc != 0) {
			nrf_rt_change_drop(&ch);
			ret = refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
				why, NULL);
			goto out;
		}
	}
	t2 = nrf_now_ns();
	rc = nrf_rt_commit(api->rt, &ch, api->settle_ms, &gen, &seen);
	if (rc != 0) {
		/* Put the file back as it was: the change was not applied. */
		if (api->config_path != NULL && disk != NULL) {
			if (api_file_write_atomic(api->config_path, disk, disk_len, why,
					sizeof(why)) != 0)
				NRF_LOG(ERR, API_MOD, "configuration file %s holds a change that was "
					"not applied", api->config_path);
			else
				api_file_mark_text(&api->mark, disk, disk_len);
		}
		ret = refuse(api, c, rq, g, 500, "Internal Server Error", "SYSTEM_FAILURE",
			nrf_strerror(rc), NULL);
		goto out;
	}
	api->last_apply[0] = secs(t0, t1);
	api->last_apply[1] = secs(t1, t2);
	api->last_apply[2] = secs(t2, nrf_now_ns());
	atomic_fetch_add(&api->n_reloads, 1);
	NRF_LOG(INFO, API_MOD, "configuration generation %llu applied (%s %s from %s)%s: %sin use "
		"by every worker after %.2f ms", (unsigned long long)gen, rq->merge ? "PATCH" : "PUT",
		g->name, client_of(c, who, sizeof(who)), api->config_path != NULL ? ", persisted" : "",
		seen ? "" : "not yet ", api->last_apply[2] * 1e3);
	ret = reply_json_owned(api, c, rq, 200, answer);
	answer = NULL;
out:
	if (src_locked)
		api_source_unlock(api->src);
	pthread_mutex_unlock(&api->lock);
	json_decref(body);
	nrf_cfg_problems_fini(&probs);
	free(running);
	free(next);
	free(persist);
	free(answer);
	free(disk);
	free(doc);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */

static enum MHD_Result
first_call(struct nrf_api *api, struct MHD_Connection *c, struct api_req *rq,
	const char *url, const char *method)
{
	char mt[128];
	const char *ct, *cl;
	const char *want;

	rq->res = api_route(url);
	if (rq->res == API_RES_NONE)
		return reply_problem(api, c, rq, 404, "Not Found", "RESOURCE_URI_STRUCTURE_NOT_FOUND",
			"no such resource", NULL, NULL);
	if (!api_method_allowed(rq->res, method)) {
		const char *h[] = {MHD_HTTP_HEADER_ALLOW, api_allow(rq->res), NULL};

		return reply_problem(api, c, rq, 405, "Method Not Allowed", "METHOD_NOT_ALLOWED",
			"see the Allow header", NULL, h);
	}
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
		switch (rq->res) {
		case API_RES_METRICS:
			return serve_metrics(api, c, rq);
		case API_RES_HEALTHZ:
			return reply(api, c, rq, 200, CT_JSON, "{\"status\":\"alive\"}\n", NULL);
		case API_RES_READYZ:
			return serve_ready(api, c, rq);
		case API_RES_DPDK:
			return reply_doc(api, c, rq, api_dpdk_get(api->rt));
		case API_RES_PEERS:
			return reply_doc(api, c, rq, api_peers_get(api->rt));
		case API_RES_LOOPS: {
			const char *ls = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
				"limit");
			char *end = NULL;
			unsigned long lim = ls != NULL ? strtoul(ls, &end, 10) : 0;

			if (ls != NULL && (end == ls || *end != '\0' || lim == 0))
				return reply_problem(api, c, rq, 400, "Bad Request",
					"MANDATORY_QUERY_PARAM_INCORRECT",
					"limit: expected a positive integer", NULL, NULL);
			return reply_doc(api, c, rq,
				api_loops_get(api->rt, ls != NULL ? (size_t)lim : SIZE_MAX));
		}
		default:
			return serve_config(api, c, rq);
		}
	}
	/* PUT or PATCH on a group */
	rq->merge = strcmp(method, "PATCH") == 0;
	if (api->token != NULL && !api_auth_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
			MHD_HTTP_HEADER_AUTHORIZATION), api->token)) {
		const char *h[] = {MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"nrfwd\"", NULL};
		char who[80];

		NRF_LOG(WARN, API_MOD, "configuration change refused (%s %s from %s): 401 "
			"Unauthorized: %s bearer token", method, url, client_of(c, who, sizeof(who)),
			MHD_lookup_connection_value(c, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_AUTHORIZATION) != NULL ? "wrong" : "no");

		return reply_problem(api, c, rq, 401, "Unauthorized", "UNAUTHORIZED",
			"a valid bearer token is required to change the configuration", NULL, h);
	}
	ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	api_media_type(ct, mt, sizeof(mt));
	want = rq->merge ? CT_MERGE : CT_JSON;
	if (strcmp(mt, want) != 0) {
		const char *h[] = {"Accept-Patch", CT_MERGE, NULL};
		char detail[256];

		snprintf(detail, sizeof(detail), "%s takes %s", method, want);
		return reply_problem(api, c, rq, 415, "Unsupported Media Type",
			"UNSUPPORTED_MEDIA_TYPE", detail, NULL, rq->merge ? h : NULL);
	}
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > api->max_body) {
		char detail[128];

		/* Read a moderately oversized body and drop it, so that a client
		 * that writes it all before reading sees the answer rather than a
		 * reset; answer a huge one at once (then the connection closes). */
		if (strtoull(cl, NULL, 10) <= DISCARD_MAX) {
			rq->too_big = true;
			return MHD_YES;
		}
		snprintf(detail, sizeof(detail), "the body is limited to %zu bytes", api->max_body);
		return reply_problem(api, c, rq, 413, "Payload Too Large", "PAYLOAD_TOO_LARGE",
			detail, NULL, NULL);
	}
	return MHD_YES; /* the body follows */
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct nrf_api *api = cls;
	struct api_req *rq = *con_cls;

	(void)version;
	if (rq == NULL) {
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO;
		*con_cls = rq;
		return first_call(api, c, rq, url, method);
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (rq->answered || rq->too_big)
			return MHD_YES;
		if (rq->len + n > api->max_body) {
			rq->too_big = true;
			free(rq->body);
			rq->body = NULL;
			rq->len = rq->cap = 0;
			return MHD_YES;
		}
		if (rq->len + n + 1 > rq->cap) {
			size_t nc = NRF_MAX(rq->cap * 2, rq->len + n + 1);
			char *nb = realloc(rq->body, nc);

			if (nb == NULL)
				return MHD_NO;
			rq->body = nb;
			rq->cap = nc;
		}
		memcpy(rq->body + rq->len, upload_data, n);
		rq->len += n;
		return MHD_YES;
	}
	if (rq->answered)
		return MHD_YES;
	if (rq->too_big) {
		char detail[128];

		snprintf(detail, sizeof(detail), "the body is limited to %zu bytes", api->max_body);
		return reply_problem(api, c, rq, 413, "Payload Too Large", "PAYLOAD_TOO_LARGE",
			detail, NULL, NULL);
	}
	return apply(api, c, rq);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
	enum MHD_RequestTerminationCode toe)
{
	struct api_req *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (rq != NULL) {
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	NRF_LOG(WARN, API_MOD, "libmicrohttpd: %s", line);
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                                */

struct nrf_api *
nrf_api_create(const struct nrf_api_params *p, struct nrf_rt *rt, int *err)
{
	struct sockaddr_storage ss;
	struct nrf_api *api;
	/* epoll (MHD_USE_AUTO): nrfwd raises its descriptor limit for its
	 * clients, so management sockets may be numbered beyond FD_SETSIZE. */
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	socklen_t len;
	unsigned int i;
	int lfd = -1, one = 1;

	if (p == NULL || rt == NULL) {
		*err = NRF_EINVAL;
		return NULL;
	}
	api = calloc(1, sizeof(*api));
	if (api == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	api->rt = rt;
	api->max_body = p->max_body != 0 ? p->max_body : NRF_API_MAX_BODY;
	api->settle_ms = p->settle_ms != 0 ? p->settle_ms : 1000;
	api->src = p->source;
	pthread_mutex_init(&api->lock, NULL);
	if (nrf_tp_addr_parse(p->address != NULL ? p->address : "127.0.0.1", p->port,
		    &api->addr) != 0) {
		NRF_LOG(ERR, API_MOD, "management address \"%s\" is not a numeric address",
			p->address);
		*err = NRF_EINVAL;
		goto fail;
	}
	if (p->token != NULL && p->token[0] != '\0') {
		api->token = strdup(p->token);
		if (api->token == NULL) {
			*err = NRF_ENOMEM;
			goto fail;
		}
	}
	if (p->config_path != NULL) {
		/* Rewrite the file itself, not a symbolic link to it. */
		api->config_path = realpath(p->config_path, NULL);
		if (api->config_path == NULL)
			api->config_path = strdup(p->config_path);
		if (api->config_path == NULL) {
			*err = NRF_ENOMEM;
			goto fail;
		}
		/* As loaded a moment ago (api_persist.c). */
		(void)api_file_mark_path(&api->mark, api->config_path);
	}
	/* The first busy sample: the start. */
	api->busy_n = 1;
	api->busy_ring[0].wall_ns = nrf_now_ns();
	for (i = 0; i < nrf_rt_workers(rt) && i < NRF_RT_MAX_WORKERS; i++) {
		struct nrf_rt_worker_info wi;

		nrf_rt_worker_get(rt, i, &wi);
		api->busy_ring[0].busy_ns[i] = wi.cpu_ns;
	}
	sockaddr_of(&api->addr, &ss, &len);
	if (api->addr.family == 6)
		flags |= MHD_USE_IPv6;
	/* The socket is bound here, not by libmicrohttpd, so that a failure
	 * names the address and the reason ("Address already in use"), not
	 * "Failed to bind to port 0". */
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		(api->addr.family == 6 &&
			setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
		bind(lfd, (struct sockaddr *)&ss, len) < 0 || listen(lfd, 64) < 0) {
		char buf[80];
		int e = errno;

		nrf_tp_addr_format(&api->addr, buf, sizeof(buf));
		NRF_LOG(ERR, API_MOD, "management listener: cannot listen on %s: %s", buf,
			strerror(e));
		nrf_err_why_set("%s: %s", buf, strerror(e));
		if (lfd >= 0)
			close(lfd);
		*err = e == EADDRINUSE ? NRF_EADDRINUSE : e == EACCES ? NRF_EACCES
			: e == EADDRNOTAVAIL ? NRF_EADDRNOTAVAIL : NRF_EIO;
		goto fail;
	}
	{
		struct sockaddr_storage b;
		socklen_t bl = sizeof(b);

		if (getsockname(lfd, (struct sockaddr *)&b, &bl) == 0)
			api->addr.port = ntohs(b.ss_family == AF_INET6
				? ((struct sockaddr_in6 *)&b)->sin6_port
				: ((struct sockaddr_in *)&b)->sin_port);
	}
	api->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, api,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, api,
		MHD_OPTION_LISTEN_SOCKET, lfd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, api,
		MHD_OPTION_END);
	if (api->d == NULL) {
		char buf[80];

		NRF_LOG(ERR, API_MOD, "management listener on %s: libmicrohttpd did not start",
			nrf_tp_addr_format(&api->addr, buf, sizeof(buf)));
		close(lfd);
		*err = NRF_EIO;
		goto fail;
	}
	if (api->token == NULL) {
		char buf[80];

		/* Said once at start, so an open listener is not a surprise. */
		NRF_LOG(WARN, API_MOD, "management listener on %s: configuration changes "
			"(PUT/PATCH) need no token: anyone who reaches it can change the "
			"configuration (--api-token-file sets one)",
			nrf_tp_addr_format(&api->addr, buf, sizeof(buf)));
	}
	*err = 0;
	return api;
fail:
	nrf_api_free(api);
	return NULL;
}

int
nrf_api_addr(const struct nrf_api *api, struct nrf_tp_addr *out)
{
	if (api == NULL)
		return NRF_EINVAL;
	*out = api->addr;
	return 0;
}

void
nrf_api_drain(struct nrf_api *api)
{
	if (api != NULL)
		atomic_store(&api->draining, true);
}

void
nrf_api_free(struct nrf_api *api)
{
	if (api == NULL)
		return;
	if (api->d != NULL)
		MHD_stop_daemon(api->d);
	pthread_mutex_destroy(&api->lock);
	if (api->token != NULL)
		memset(api->token, 0, strlen(api->token));
	free(api->token);
	free(api->config_path);
	free(api);
}

void
nrf_api_stats_get(const struct nrf_api *api, struct nrf_api_stats *out)
{
	out->requests = atomic_load(&api->n_requests);
	out->reloads = atomic_load(&api->n_reloads);
	out->reload_failures = atomic_load(&api->n_failures);
}

char *
nrf_api_token_read(const char *path, int *err)
{
	char buf[MAX_TOKEN + 2];
	size_t n = 0, i;
	ssize_t r;
	char *tok;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		*err = NRF_EIO;
		return NULL;
	}
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			errno = e; /* the reason, for the caller's message */
			*err = NRF_EIO;
			return NULL;
		}
		n += (size_t)r;
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
		buf[n - 1] == '\t'))
		n--;
	if (n > MAX_TOKEN) {
		*err = NRF_ETOOBIG;
		return NULL;
	}
	if (n == 0) {
		*err = NRF_EINVAL;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch <= 0x20 || ch >= 0x7f) {
			*err = NRF_EINVAL;
			return NULL;
		}
	}
	tok = strndup(buf, n);
	memset(buf, 0, sizeof(buf));
	*err = tok != NULL ? 0 : NRF_ENOMEM;
	return tok;
}

/* ------------------------------------------------------------------------ */
/* Reload from the file (SIGHUP)                                             */

/* The first problem of @p probs (or @p dflt) as one line in @p why. */
static void
reload_why(char *why, size_t cap, const char *what, const struct nrf_cfg_problems *probs,
	const char *dflt)
{
	if (why == NULL || cap == 0)
		return;
	if (probs != NULL && probs->n > 0)
		snprintf(why, cap, "%s: %s: %s%s", what,
			probs->v[0].pointer[0] != '\0' ? probs->v[0].pointer : "/",
			probs->v[0].reason, probs->n > 1 ? " (and more)" : "");
	else
		snprintf(why, cap, "%s: %s", what, dflt);
}

static int
reload_locked(struct nrf_api *api, struct nrf_rt *rt, const char *path, uint64_t *gen_out,
	bool *applied, char *why, size_t cap)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_change ch = {0};
	char *running = NULL, *next = NULL;
	struct nrf_cfg *cfg;
	uint64_t gen = 0, t0 = nrf_now_ns(), t1;
	unsigned int i;
	int rc, err = 0;

	running = nrf_rt_emit(rt, NRF_CFG_ALL, 0, &gen, &err);
	if (running == NULL) {
		reload_why(why, cap, "running configuration", NULL, nrf_strerror(err));
		return err != 0 ? err : NRF_ENOMEM;
	}
	if (gen_out != NULL)
		*gen_out = gen;
	if (api != NULL && api->src != NULL) {
		/* The file holds runtime only; the configuration source the rest
		 * (decision 0037): the running shared groups with the file's
		 * runtime, as the source puts them together. */
		size_t len = 0;
		char *text = api_file_read(path, &len, &err), *whole;

		if (text == NULL) {
			err = NRF_EIO;
			cfg = NULL;
		} else {
			whole = api_compose_runtime(running, text, len, &probs);
			free(text);
			err = whole == NULL ? NRF_ECONFIG : 0;
			cfg = whole == NULL ? NULL
					    : nrf_cfg_load(whole, strlen(whole), gen + 1, &probs, &err);
			free(whole);
		}
	} else {
		cfg = nrf_cfg_load_file(path, gen + 1, &probs, &err);
	}
	if (cfg == NULL) {
		reload_why(why, cap, err == NRF_EIO ? "cannot read" : "invalid", &probs,
			nrf_strerror(err));
		rc = err;
		goto out;
	}
	next = nrf_cfg_emit(cfg, NRF_CFG_ALL, 0, &err);
	if (next == NULL) {
		nrf_cfg_free(cfg);
		reload_why(why, cap, "internal", NULL, nrf_strerror(err));
		rc = NRF_ENOMEM;
		goto out;
	}
	if (strcmp(next, running) == 0) {
		if (!nrf_rt_tls_files_changed(rt)) {
			nrf_cfg_free(cfg);
			rc = 0;
			NRF_LOG(INFO, API_MOD, "configuration reload from %s: unchanged "
				"(generation %llu)", path, (unsigned long long)gen);
			goto out;
		}
		/* The same document, but a certificate, key or CA file was
		 * renewed at its path: a new snapshot loads it. */
		NRF_LOG(INFO, API_MOD, "configuration reload from %s: TLS files changed on disk, "
			"loading them", path);
	}
	switch (nrf_rt_prepare(rt, cfg, &ch)) {
	case NRF_RT_APPLY_OK:
		break;
	case NRF_RT_APPLY_RESTART_ONLY:
		for (i = 0; i < ch.n_restart && i < NRF_ARRAY_SIZE(ch.restart); i++)
			api_problem_add(&probs, ch.restart[i], "takes effect only after a restart "
				"(systemctl restart, not reload)");
		reload_why(why, cap, "restart-only setting changed", &probs, "");
		rc = NRF_ECONFIG;
		goto out;
	case NRF_RT_APPLY_NOMEM:
	case NRF_RT_APPLY_UNUSABLE:
		reload_why(why, cap, "cannot be used", NULL, nrf_strerror(ch.err));
		rc = ch.err == NRF_ENOMEM ? NRF_ENOMEM : NRF_ECONFIG;
		goto out;
	}
	t1 = nrf_now_ns();
	rc = nrf_rt_commit(rt, &ch, api != NULL ? api->settle_ms : 0, &gen, NULL);
	if (rc != 0) {
		reload_why(why, cap, "not published", NULL, nrf_strerror(rc));
		rc = rc == NRF_ENOMEM ? NRF_ENOMEM : NRF_ECONFIG;
		goto out;
	}
	if (gen_out != NULL)
		*gen_out = gen;
	if (api != NULL) {
		api->last_apply[0] = secs(t0, t1);
		api->last_apply[1] = 0.0;
		api->last_apply[2] = secs(t1, nrf_now_ns());
	}
	*applied = true;
	NRF_LOG(INFO, API_MOD, "configuration generation %llu applied (reload of %s)",
		(unsigned long long)gen, path);
out:
	nrf_cfg_problems_fini(&probs);
	free(running);
	free(next);
	return rc;
}

int
nrf_api_reload_file(struct nrf_api *api, struct nrf_rt *rt, const char *path, uint64_t *gen,
	char *why, size_t why_cap)
{
	bool applied = false, src_locked;
	char line[512];
	int rc;

	if (why == NULL) {
		why = line;
		why_cap = sizeof(line);
	}
	why[0] = '\0';
	if (rt == NULL || path == NULL) {
		snprintf(why, why_cap, "no runtime or no file");
		return NRF_EINVAL;
	}
	if (api != NULL && atomic_load(&api->draining)) {
		snprintf(why, why_cap, "nrfwd is stopping");
		atomic_fetch_add(&api->n_failures, 1);
		return NRF_ECONFIG;
	}
	if (api != NULL)
		pthread_mutex_lock(&api->lock);
	src_locked = api != NULL && api_source_lock(api->src); /* not over a watch apply */
	rc = reload_locked(api, rt, path, gen, &applied, why, why_cap);
	if (src_locked)
		api_source_unlock(api->src);
	if (api != NULL && rc == 0) /* the file is what runs again */
		(void)api_file_mark_path(&api->mark, path);
	if (api != NULL) {
		pthread_mutex_unlock(&api->lock);
		if (rc != 0)
			atomic_fetch_add(&api->n_failures, 1);
		else if (applied)
			atomic_fetch_add(&api->n_reloads, 1);
	}
	if (rc != 0)
		NRF_LOG(WARN, API_MOD, "configuration reload from %s refused, the running "
			"configuration stays: %s", path, why);
	return rc;
}
