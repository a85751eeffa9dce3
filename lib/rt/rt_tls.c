/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS contexts of a snapshot (docs/tls.md): one server context for every
 * listener with tls: true (runtime.tls), one client context for every
 * https upstream (runtime.tlsClient). Built on the control thread with the
 * snapshot, so a certificate rotated on disk is picked up by the next
 * snapshot; connections keep the context they started with (OpenSSL
 * reference counts), pools keep theirs while the settings and files are the
 * same (nrf_tp_tls_ctx_same()).
 */
#include <stdio.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

static bool
any_tls_listener(const struct nrf_cfg *cfg)
{
	for (uint16_t i = 0; i < cfg->rt.n_listen; i++) {
		if (cfg->rt.listen[i].tls)
			return true;
	}
	return false;
}

static bool
any_https(const struct nrf_cfg *cfg)
{
	for (uint16_t i = 0; i < cfg->n_peers; i++) {
		if (cfg->peers[i].scheme == NRF_SCHEME_HTTPS)
			return true;
	}
	return cfg->rt.local_nrf.present && cfg->rt.local_nrf.scheme == NRF_SCHEME_HTTPS;
}

static void
server_conf(const struct nrf_cfg *cfg, struct nrf_tp_tls_conf *tc)
{
	const struct nrf_cfg_tls *t = &cfg->rt.tls;

	memset(tc, 0, sizeof(*tc));
	tc->server = true;
	tc->cert_file = t->cert_file;
	tc->key_file = t->key_file;
	tc->ca_file = t->ca_file;
	tc->verify_client = t->verify_client;
	tc->cipher_suites = t->cipher_suites;
	tc->ciphers = t->ciphers;
	tc->groups = t->groups;
}

static void
client_conf(const struct nrf_cfg *cfg, struct nrf_tp_tls_conf *tc)
{
	const struct nrf_cfg_tls_client *t = &cfg->rt.tls_client;

	memset(tc, 0, sizeof(*tc));
	tc->cert_file = t->cert_file;
	tc->key_file = t->key_file;
	tc->ca_file = t->ca_file;
	tc->cipher_suites = t->cipher_suites;
	tc->ciphers = t->ciphers;
	tc->groups = t->groups;
}

/* "/runtime/tls/certFile" from a reason that starts with the field name. */
static void
pointer_of(const char *group, const char *why, char *out, size_t cap)
{
	size_t n = strcspn(why, " :");

	snprintf(out, cap, "/runtime/%s/%.*s", group, (int)n, why);
}

static struct nrf_tp_tls_ctx *
build(const struct nrf_tp_tls_conf *tc, const char *group, struct nrf_cfg_problem *pr, int *err)
{
	char why[sizeof(pr->reason)];
	struct nrf_tp_tls_ctx *c = nrf_tp_tls_ctx_create(tc, why, sizeof(why), err);

	if (c == NULL) {
		pointer_of(group, why, pr->pointer, sizeof(pr->pointer));
		snprintf(pr->reason, sizeof(pr->reason), "%s", why);
	}
	return c;
}

size_t
nrf_rt_tls_check(const struct nrf_cfg *cfg, struct nrf_cfg_problem *out, size_t max)
{
	struct nrf_tp_tls_conf tc;
	struct nrf_cfg_problem pr;
	struct nrf_tp_tls_ctx *c;
	size_t n = 0;
	int err;

	if (any_tls_listener(cfg) || *cfg->rt.tls.cert_file != '\0') {
		server_conf(cfg, &tc);
		c = build(&tc, "tls", &pr, &err);
		if (c == NULL && n < max)
			out[n] = pr;
		n += c == NULL;
		nrf_tp_tls_ctx_free(c);
	}
	if (any_https(cfg) || *cfg->rt.tls_client.cert_file != '\0' ||
		*cfg->rt.tls_client.ca_file != '\0') {
		client_conf(cfg, &tc);
		c = build(&tc, "tlsClient", &pr, &err);
		if (c == NULL && n < max)
			out[n] = pr;
		n += c == NULL;
		nrf_tp_tls_ctx_free(c);
	}
	return n;
}

int
rt_tls_snap_init(struct nrf_rt_snap *s)
{
	const struct nrf_cfg *cfg = s->cfg;
	struct nrf_tp_tls_conf tc;
	struct nrf_cfg_problem pr;
	int err = 0;

	if (any_tls_listener(cfg)) {
		server_conf(cfg, &tc);
		s->tls_srv = build(&tc, "tls", &pr, &err);
		if (s->tls_srv == NULL) {
			NRF_LOG(ERR, MOD, "%s: %s", pr.pointer, pr.reason);
			nrf_err_why_set("%s: %s", pr.pointer, pr.reason);
			return err;
		}
	}
	if (any_https(cfg)) {
		client_conf(cfg, &tc);
		s->tls_cli = build(&tc, "tlsClient", &pr, &err);
		if (s->tls_cli == NULL) {
			NRF_LOG(ERR, MOD, "%s: %s", pr.pointer, pr.reason);
			nrf_err_why_set("%s: %s", pr.pointer, pr.reason);
			return err;
		}
		for (uint16_t i = 0; i < cfg->n_peers; i++) {
			if (s->peers[i].tls)
				s->peers[i].tlsc = s->tls_cli;
		}
		if (s->local.tls)
			s->local.tlsc = s->tls_cli;
	}
	return 0;
}

void
rt_tls_snap_fini(struct nrf_rt_snap *s)
{
	nrf_tp_tls_ctx_free(s->tls_srv);
	nrf_tp_tls_ctx_free(s->tls_cli);
	s->tls_srv = s->tls_cli = NULL;
}

bool
nrf_rt_tls_files_changed(struct nrf_rt *rt)
{
	bool changed;

	pthread_mutex_lock(&rt->ctl_lock);
	changed = nrf_tp_tls_ctx_files_changed(rt->cur->tls_srv) ||
		nrf_tp_tls_ctx_files_changed(rt->cur->tls_cli);
	pthread_mutex_unlock(&rt->ctl_lock);
	return changed;
}

void
nrf_rt_tls_expiry(struct nrf_rt *rt, int64_t *server, int64_t *client)
{
	pthread_mutex_lock(&rt->ctl_lock);
	*server = nrf_tp_tls_ctx_not_after(rt->cur->tls_srv);
	*client = nrf_tp_tls_ctx_not_after(rt->cur->tls_cli);
	pthread_mutex_unlock(&rt->ctl_lock);
}
