/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --config-etcd: the fleet's shared configuration (lib/cfgsrc). This file
 * only turns options into parameters and hooks; what the source does is
 * in lib/cfgsrc/nrf_cfgsrc.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "nrf_api.h"
#include "nrf_cfgsrc.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrfwd_src.h"

#define MOD "nrfwd"

static struct {
	struct nrf_cfgsrc_params p;
	const char *user_file;
	char *user, *password;
	char *id, *cache;
	struct nrf_cfgsrc *src;
	struct nrf_api_source api;
} g;

int
nrfwd_src_opt(int code, const char *arg)
{
	char *end;
	long v;

	switch (code) {
	case 1100:
		g.p.etcd.endpoints = arg;
		return 0;
	case 1101:
		g.p.key = arg;
		return 0;
	case 1102:
		g.p.instance_id = arg;
		return 0;
	case 1103:
		g.p.cache_path = arg;
		return 0;
	case 1104:
		g.p.etcd.cacert = arg;
		return 0;
	case 1105:
		g.p.etcd.cert = arg;
		return 0;
	case 1106:
		g.p.etcd.key = arg;
		return 0;
	case 1107:
		g.user_file = arg;
		return 0;
	case 1108:
		v = strtol(arg, &end, 10);
		if (*end != '\0' || v < 2 || v > 3600) {
			fprintf(stderr, "nrfwd: --etcd-lease-ttl: expected 2..3600 seconds, got "
				"\"%s\"\n", arg);
			return 2;
		}
		g.p.lease_ttl_s = (uint32_t)v;
		return 0;
	default:
		return 2;
	}
}

void
nrfwd_src_usage(FILE *f)
{
	fprintf(f,
		"configuration shared by a fleet (docs/fleet.md):\n"
		"      --config-etcd URLS  etcd endpoints (http[s]://host:port,...): the\n"
		"                         shared groups come from etcd, --config FILE\n"
		"                         holds runtime only\n"
		"      --config-key KEY   the shared document's key, e.g.\n"
		"                         /nrfwd/<cluster>/config (required with etcd)\n"
		"      --instance-id ID   name in <prefix>/instances/ (default\n"
		"                         <hostname>-<first listen port>)\n"
		"      --config-cache F   cached copy of the last applied document, used\n"
		"                         at start when etcd is unreachable (default\n"
		"                         FILE.etcd-cache; \"none\": no cache)\n"
		"      --etcd-cacert F, --etcd-cert F, --etcd-key F  TLS to etcd\n"
		"      --etcd-user-file F  \"user:password\" for etcd authentication\n"
		"      --etcd-lease-ttl S  status key lease, seconds (default 10)\n");
}

void
nrfwd_src_check_only(void)
{
	g.p.read_only = true;
}

bool
nrfwd_src_active(void)
{
	return g.p.etcd.endpoints != NULL;
}

/* "user:password" from a file (trailing white space cut). */
static int
read_user(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], *colon;
	size_t n;

	if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
		if (f != NULL)
			fclose(f);
		NRF_LOG(ERR, MOD, "--etcd-user-file %s: cannot read it", path);
		return -1;
	}
	fclose(f);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
		line[--n] = '\0';
	colon = strchr(line, ':');
	if (colon == NULL || colon == line) {
		NRF_LOG(ERR, MOD, "--etcd-user-file %s: expected user:password", path);
		memset(line, 0, sizeof(line));
		return -1;
	}
	*colon = '\0';
	g.user = strdup(line);
	g.password = strdup(colon + 1);
	memset(line, 0, sizeof(line));
	if (g.user == NULL || g.password == NULL)
		return -1;
	g.p.etcd.user = g.user;
	g.p.etcd.password = g.password;
	return 0;
}

/* <hostname>-<runtime.listen[0].port of the file> */
static char *
default_id(const char *config)
{
	json_t *doc = json_load_file(config, 0, NULL);
	json_t *l0 = json_array_get(json_object_get(json_object_get(doc, "runtime"), "listen"), 0);
	long port = (long)json_integer_value(json_object_get(l0, "port"));
	char host[256], *out = NULL;

	json_decref(doc);
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "nrfwd");
	host[sizeof(host) - 1] = '\0';
	if (asprintf(&out, "%s-%ld", host, port) < 0)
		return NULL;
	return out;
}

/* The loop paths published with the status: the most frequent few, so the
 * status key stays small (docs/fleet.md). */
#define LOOPS_PUBLISHED 16

static char *
loops_summary(struct nrf_rt *rt, uint64_t *sig)
{
	return nrf_api_loops_json(rt, LOOPS_PUBLISHED, sig);
}

struct nrf_cfg *
nrfwd_src_load(const char *config, struct nrf_cfg_problems *problems, int *err)
{
	if (g.p.key == NULL) {
		NRF_LOG(ERR, MOD, "--config-etcd needs --config-key (e.g. /nrfwd/<cluster>/config)");
		*err = NRF_EINVAL;
		return NULL;
	}
	if (g.user_file != NULL && read_user(g.user_file) != 0) {
		*err = NRF_EINVAL;
		return NULL;
	}
	if (g.p.instance_id == NULL) {
		g.id = default_id(config);
		g.p.instance_id = g.id;
	}
	if (g.p.cache_path == NULL) {
		if (asprintf(&g.cache, "%s.etcd-cache", config) < 0) {
			*err = NRF_ENOMEM;
			return NULL;
		}
		g.p.cache_path = g.cache;
	} else if (strcmp(g.p.cache_path, "none") == 0) {
		g.p.cache_path = NULL;
	}
	g.p.config_path = config;
	g.p.version = "nrfwd " NRF_VERSION;
	g.p.loops_json = loops_summary;
	g.src = nrf_cfgsrc_create(&g.p, err);
	if (g.src == NULL) {
		NRF_LOG(ERR, MOD, "--config-etcd %s --config-key %s: %s", g.p.etcd.endpoints,
			g.p.key, nrf_strerror(*err));
		return NULL;
	}
	return nrf_cfgsrc_load(g.src, problems, err);
}

static void
h_lock(void *arg)
{
	nrf_cfgsrc_lock(arg);
}

static void
h_unlock(void *arg)
{
	nrf_cfgsrc_unlock(arg);
}

static int
h_write(void *arg, const struct nrf_cfg *next, int64_t *ticket, char *why, size_t cap)
{
	return nrf_cfgsrc_write(arg, next, ticket, why, cap);
}

static int
h_wait(void *arg, int64_t ticket, uint32_t ms, struct nrf_cfg_problems *problems)
{
	return nrf_cfgsrc_wait(arg, ticket, ms, problems);
}

static int
h_persist(void *arg, const struct nrf_cfg *next, char *why, size_t cap)
{
	return nrf_cfgsrc_persist_runtime(arg, next, why, cap);
}

static char *
h_stored(void *arg, int64_t *mod)
{
	return nrf_cfgsrc_stored(arg, mod);
}

static int
h_write_text(void *arg, const char *text, size_t len, int64_t base, int64_t *ticket, char *why,
	size_t cap)
{
	return nrf_cfgsrc_write_text(arg, text, len, base, ticket, why, cap);
}

static char *
h_status(void *arg)
{
	return nrf_cfgsrc_status_json(arg);
}

static char *
h_metrics(void *arg)
{
	return nrf_cfgsrc_metrics(arg);
}

void
nrfwd_src_api(struct nrf_api_params *ap)
{
	if (g.src == NULL)
		return;
	g.api = (struct nrf_api_source){
		.lock = h_lock,
		.unlock = h_unlock,
		.write = h_write,
		.wait = h_wait,
		.persist = h_persist,
		.status_json = h_status,
		.metrics = h_metrics,
		.stored = h_stored,
		.write_text = h_write_text,
		.arg = g.src,
	};
	ap->source = &g.api;
	/* ap->config_path stays: the file of the runtime group, kept by the
	 * API's rules (409 over a hand edit, only what was written plus the
	 * change; decision 0037). */
}

int
nrfwd_src_start(struct nrf_rt *rt)
{
	if (g.src == NULL)
		return 0;
	if (nrf_cfgsrc_start(g.src, rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start the etcd watcher");
		return -1;
	}
	return 0;
}

void
nrfwd_src_stop(void)
{
	if (g.src != NULL)
		nrf_cfgsrc_stop(g.src);
}

void
nrfwd_src_free(void)
{
	nrf_cfgsrc_free(g.src);
	g.src = NULL;
	free(g.id);
	free(g.cache);
	if (g.password != NULL)
		memset(g.password, 0, strlen(g.password));
	free(g.user);
	free(g.password);
}
