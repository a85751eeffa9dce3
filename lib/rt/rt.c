/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control side of the runtime: snapshots, workers, stop, counters.
 *
 * Snapshot reclamation (the hook for live reconfiguration): a worker only
 * ever takes references on the snapshot it currently uses, and reports the
 * generation it uses in seen_gen. Once every worker reports a newer
 * generation than snapshot S, nobody can take a new reference on S, so when
 * all of S's per-worker reference counts are zero as well, S is unreachable
 * and freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

static void
ep_fill(struct rt_ep *ep, enum nrf_cfg_scheme scheme, const char *authority,
	const char *prefix)
{
	snprintf(ep->scheme, sizeof(ep->scheme), "%s", scheme == NRF_SCHEME_HTTPS ? "https" : "http");
	snprintf(ep->authority, sizeof(ep->authority), "%s", authority);
	snprintf(ep->name, sizeof(ep->name), "%s", authority);
	snprintf(ep->api_root, sizeof(ep->api_root), "%s://%s%s", ep->scheme, authority, prefix);
	ep->prefix = prefix;
	ep->tls = scheme == NRF_SCHEME_HTTPS;
}

static void
resolve_peer(struct rt_ep *ep, const struct nrf_cfg_peer *p)
{
	int rc = NRF_ENOENT;

	ep_fill(ep, p->scheme, p->name, p->api_prefix);
	if (p->ipv4[0] != '\0')
		rc = nrf_tp_addr_parse(p->ipv4, p->port, &ep->addr);
	if (rc != 0 && p->ipv6[0] != '\0')
		rc = nrf_tp_addr_parse(p->ipv6, p->port, &ep->addr);
	if (rc != 0 && p->fqdn[0] != '\0')
		rc = nrf_tp_addr_resolve(p->fqdn, p->port, &ep->addr);
	ep->ok = rc == 0;
	if (!ep->ok)
		NRF_LOG(WARN, MOD, "peer %s (%s): no address (%s); every try to it fails", p->name,
			p->pointer, nrf_strerror(rc));
	else if (ep->tls)
		NRF_LOG(WARN, MOD, "peer %s (%s): https is not supported by this transport yet; "
			"every try to it fails", p->name, p->pointer);
}

struct nrf_rt_snap *
nrf_rt_snap_create(struct nrf_cfg *cfg, int *err)
{
	struct nrf_rt_snap *s;
	uint16_t i;

	if (cfg == NULL) {
		*err = NRF_EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		nrf_cfg_free(cfg);
		*err = NRF_ENOMEM;
		return NULL;
	}
	s->cfg = cfg;
	s->gen = cfg->generation;
	s->db = nrf_fwd_via_db_create(cfg, err);
	if (s->db == NULL)
		goto fail;
	s->table = nrf_fwd_table_create(cfg, err);
	if (s->table == NULL)
		goto fail;
	s->peers = calloc(cfg->n_peers > 0 ? cfg->n_peers : 1, sizeof(*s->peers));
	if (s->peers == NULL) {
		*err = NRF_ENOMEM;
		goto fail;
	}
	for (i = 0; i < cfg->n_peers; i++)
		resolve_peer(&s->peers[i], &cfg->peers[i]);
	if (cfg->rt.local_nrf.present) {
		const struct nrf_cfg_endpoint *l = &cfg->rt.local_nrf;
		char auth[280];
		int rc;

		if (strchr(l->address, ':') != NULL)
			snprintf(auth, sizeof(auth), "[%s]:%u", l->address, l->port);
		else
			snprintf(auth, sizeof(auth), "%s:%u", l->address, l->port);
		ep_fill(&s->local, l->scheme, auth, "");
		rc = nrf_tp_addr_resolve(l->address, l->port, &s->local.addr);
		s->local.ok = rc == 0;
		if (!s->local.ok)
			NRF_LOG(WARN, MOD, "runtime.localNrf: no address for \"%s\" (%s)", l->address,
				nrf_strerror(rc));
		if (s->local.tls)
			NRF_LOG(WARN, MOD, "runtime.localNrf: https is not supported by this "
				"transport yet");
	}
	*err = 0;
	return s;
fail:
	nrf_rt_snap_free(s);
	return NULL;
}

void
nrf_rt_snap_free(struct nrf_rt_snap *s)
{
	if (s == NULL)
		return;
	nrf_fwd_table_free(s->table);
	nrf_via_db_free(s->db);
	nrf_cfg_free(s->cfg);
	free(s->peers);
	free((void *)s->refs);
	free(s);
}

const struct nrf_cfg *
nrf_rt_snap_cfg(const struct nrf_rt_snap *s)
{
	return s->cfg;
}

static int
snap_attach(struct nrf_rt *rt, struct nrf_rt_snap *s)
{
	s->refs = calloc(rt->p.workers, sizeof(*s->refs));
	if (s->refs == NULL)
		return NRF_ENOMEM;
	s->n_refs = rt->p.workers;
	return 0;
}

struct nrf_rt *
nrf_rt_create(const struct nrf_rt_params *p, struct nrf_rt_snap *snap, int *err)
{
	uint16_t ports[NRF_CFG_MAX_LISTEN];
	struct nrf_rt *rt;
	unsigned int i;

	if (p == NULL || snap == NULL || p->workers == 0 || p->workers > NRF_RT_MAX_WORKERS) {
		nrf_rt_snap_free(snap);
		*err = NRF_EINVAL;
		return NULL;
	}
	for (i = 0; i < snap->cfg->rt.n_listen; i++) {
		if (snap->cfg->rt.listen[i].tls) {
			NRF_LOG(ERR, MOD, "runtime.listen[%u]: tls is not supported by this transport "
				"yet", i);
			nrf_rt_snap_free(snap);
			*err = NRF_EINVAL;
			return NULL;
		}
	}
	rt = calloc(1, sizeof(*rt));
	if (rt == NULL || (rt->p = *p, snap_attach(rt, snap)) != 0) {
		free(rt);
		nrf_rt_snap_free(snap);
		*err = NRF_ENOMEM;
		return NULL;
	}
	rt->tp = p->tp != NULL ? p->tp : nrf_tp_kern_ops();
	rt->cur = snap;
	atomic_init(&rt->snap, snap);
	memset(ports, 0, sizeof(ports));
	for (i = 0; i < p->workers; i++) {
		rt->w[i] = rt_worker_create(rt, i, snap, ports, err);
		if (rt->w[i] == NULL) {
			nrf_rt_free(rt);
			return NULL;
		}
		rt->n++;
	}
	*err = 0;
	return rt;
}

int
nrf_rt_start(struct nrf_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		if (pthread_create(&rt->w[i]->th, NULL, rt_worker_main, rt->w[i]) != 0) {
			nrf_rt_stop(rt, 0);
			nrf_rt_join(rt);
			return NRF_ENOMEM;
		}
		rt->w[i]->started = true;
	}
	return 0;
}

static bool
same_shape(const struct nrf_rt_snap *a, const struct nrf_rt_snap *b)
{
	uint16_t i;

	if (a->cfg->n_peers != b->cfg->n_peers || a->cfg->rt.n_listen != b->cfg->rt.n_listen)
		return false;
	for (i = 0; i < a->cfg->rt.n_listen; i++) {
		if (a->cfg->rt.listen[i].port != b->cfg->rt.listen[i].port ||
			strcmp(a->cfg->rt.listen[i].address, b->cfg->rt.listen[i].address) != 0)
			return false;
	}
	for (i = 0; i < a->cfg->n_peers; i++) {
		if (memcmp(&a->peers[i].addr, &b->peers[i].addr, sizeof(a->peers[i].addr)) != 0 ||
			strcmp(a->peers[i].api_root, b->peers[i].api_root) != 0)
			return false;
	}
	return memcmp(&a->local.addr, &b->local.addr, sizeof(a->local.addr)) == 0;
}

int
nrf_rt_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap)
{
	struct nrf_rt_snap *old = rt->cur;

	if (!same_shape(old, snap)) {
		nrf_rt_snap_free(snap);
		return NRF_EINVAL;
	}
	if (snap_attach(rt, snap) != 0) {
		nrf_rt_snap_free(snap);
		return NRF_ENOMEM;
	}
	if (snap->gen <= old->gen)
		snap->gen = old->gen + 1;
	rt->cur = snap;
	atomic_store_explicit(&rt->snap, snap, memory_order_release);
	for (unsigned int i = 0; i < rt->n; i++)
		rt->tp->loop_wake(rt->w[i]->loop);
	old->retired_next = rt->retired;
	rt->retired = old;
	return 0;
}

uint64_t
nrf_rt_generation(const struct nrf_rt *rt)
{
	return rt->cur->gen;
}

static bool
snap_unused(const struct nrf_rt *rt, const struct nrf_rt_snap *s)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		const struct rt_worker *w = rt->w[i];

		if (w->started &&
			atomic_load_explicit(&w->seen_gen, memory_order_acquire) <= s->gen)
			return false;
		if (atomic_load_explicit(&s->refs[i], memory_order_acquire) != 0)
			return false;
	}
	return true;
}

unsigned int
nrf_rt_reclaim(struct nrf_rt *rt)
{
	struct nrf_rt_snap **pp = &rt->retired;
	unsigned int left = 0;

	while (*pp != NULL) {
		struct nrf_rt_snap *s = *pp;

		if (snap_unused(rt, s)) {
			*pp = s->retired_next;
			nrf_rt_snap_free(s);
		} else {
			pp = &s->retired_next;
			left++;
		}
	}
	return left;
}

void
nrf_rt_stop(struct nrf_rt *rt, uint32_t drain_ms)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		struct rt_worker *w = rt->w[i];

		w->drain_ms = drain_ms;
		atomic_store_explicit(&w->stop, 1, memory_order_release);
		rt->tp->loop_wake(w->loop);
	}
}

void
nrf_rt_join(struct nrf_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		if (rt->w[i]->started) {
			pthread_join(rt->w[i]->th, NULL);
			rt->w[i]->started = false;
		}
	}
}

void
nrf_rt_free(struct nrf_rt *rt)
{
	unsigned int i;

	if (rt == NULL)
		return;
	nrf_rt_join(rt);
	for (i = 0; i < rt->n; i++)
		rt_worker_free(rt->w[i]);
	while (rt->retired != NULL) {
		struct nrf_rt_snap *s = rt->retired;

		rt->retired = s->retired_next;
		nrf_rt_snap_free(s);
	}
	nrf_rt_snap_free(rt->cur);
	free(rt);
}

void
nrf_rt_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out)
{
	unsigned int i;
	size_t k, n = sizeof(*out) / sizeof(uint64_t);

	memset(out, 0, sizeof(*out));
	for (i = 0; i < rt->n; i++) {
		const uint64_t *src = (const uint64_t *)(const void *)&rt->w[i]->st;
		uint64_t *dst = (uint64_t *)(void *)out;

		for (k = 0; k < n; k++)
			dst[k] += __atomic_load_n(&src[k], __ATOMIC_RELAXED);
	}
}

int
nrf_rt_listen_addr(const struct nrf_rt *rt, unsigned int i, struct nrf_tp_addr *out)
{
	if (rt->n == 0 || i >= rt->w[0]->n_lst || rt->w[0]->lst[i].l == NULL)
		return NRF_ENOENT;
	return rt->tp->listener_addr(rt->w[0]->lst[i].l, out);
}
