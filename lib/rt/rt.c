/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control side of the runtime: snapshots, workers, stop, counters.
 *
 * Snapshot reclamation (live reconfiguration): a worker only ever takes
 * references on the snapshot it currently uses, and reports the generation
 * it uses in seen_gen. Once every worker reports a newer generation than
 * snapshot S, nobody can take a new reference on S, so when all of S's
 * per-worker reference counts are zero as well, S is unreachable. Each
 * worker also keeps a view of S (its pools for S's peer indices) until it
 * has seen S's count drop to zero; S is freed only once every view is gone,
 * so a worker never looks at a freed snapshot.
 *
 * The control functions (publish, reclaim, emit, ...) take ctl_lock: the
 * REST API runs on its own thread next to the main thread's reclaim tick.
 * Workers never take it.
 *
 * How the workers run (threads, one lcore, other processes) is the worker
 * group's business (rt_group.h): this file only forwards to rt->grp.
 */
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_dns.h"
#include "rt_group.h"

static void
ep_fill(struct rt_ep *ep, enum nrf_cfg_scheme scheme, const char *authority,
	const char *prefix)
{
	snprintf(ep->scheme, sizeof(ep->scheme), "%s", scheme == NRF_SCHEME_HTTPS ? "https" : "http");
	snprintf(ep->authority, sizeof(ep->authority), "%s", authority);
	snprintf(ep->name, sizeof(ep->name), "%s", authority);
	snprintf(ep->api_root, sizeof(ep->api_root), "%s://%s%s", ep->scheme, authority, prefix);
	snprintf(ep->prefix, sizeof(ep->prefix), "%s", prefix);
	ep->authority_len = (uint16_t)strlen(ep->authority);
	ep->scheme_len = (uint16_t)strlen(ep->scheme);
	ep->api_root_len = (uint16_t)strlen(ep->api_root);
	ep->prefix_len = (uint16_t)strlen(ep->prefix);
	ep->tls = scheme == NRF_SCHEME_HTTPS;
}

/* Look @p name up now? Not when the resolver has it (rt_dns_sync() puts
 * its address on the snapshot at publish), nor when !@p resolve. */
static bool
look_up(struct nrf_rt *rt, bool resolve, const char *name)
{
	return resolve && (rt == NULL || !rt_dns_known(rt, name));
}

static void
resolve_peer(struct rt_ep *ep, const struct nrf_cfg_peer *p, struct nrf_rt *rt, bool resolve)
{
	int rc = NRF_ENOENT;

	ep_fill(ep, p->scheme, p->name, p->api_prefix);
	if (strlen(p->api_prefix) >= sizeof(ep->prefix)) {
		NRF_LOG(WARN, MOD, "peer %s (%s): apiPrefix longer than %zu bytes; every try "
			"to it fails", p->name, p->pointer, sizeof(ep->prefix) - 1);
		ep->ok = false;
		return;
	}
	if (p->ipv4[0] != '\0')
		rc = nrf_tp_addr_parse(p->ipv4, p->port, &ep->addr);
	if (rc != 0 && p->ipv6[0] != '\0')
		rc = nrf_tp_addr_parse(p->ipv6, p->port, &ep->addr);
	if (rc != 0 && p->fqdn[0] != '\0') {
		if (!look_up(rt, resolve, p->fqdn)) { /* the resolver's (rt_dns_sync()) */
			memset(&ep->addr, 0, sizeof(ep->addr));
			ep->addr.port = p->port;
			ep->ok = false;
			goto names;
		}
		rc = nrf_tp_addr_resolve(p->fqdn, p->port, &ep->addr);
	}
	ep->ok = rc == 0;
	if (!ep->ok)
		ep->addr.port = p->port; /* for rt_dns_sync(): the last good address */
	if (!ep->ok)
		NRF_LOG(WARN, MOD, "peer %s (%s): no address (%s); every try to it fails", p->name,
			p->pointer, nrf_strerror(rc));
names:
	/* https: SNI and certificate name (rt_tls.c) */
	snprintf(ep->tls_name, sizeof(ep->tls_name), "%s",
		p->fqdn[0] != '\0' ? p->fqdn : p->ipv4[0] != '\0' ? p->ipv4 : p->ipv6);
}

struct nrf_rt_snap *
nrf_rt_snap_create(struct nrf_cfg *cfg, int *err)
{
	return rt_snap_build(cfg, NULL, true, err);
}

struct nrf_rt_snap *
nrf_rt_snap_create_for(struct nrf_rt *rt, struct nrf_cfg *cfg, int *err)
{
	return rt_snap_build(cfg, rt, true, err);
}

struct nrf_rt_snap *
rt_snap_build(struct nrf_cfg *cfg, struct nrf_rt *rt, bool resolve, int *err)
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
	for (i = 0; i < cfg->n_peers; i++) {
		resolve_peer(&s->peers[i], &cfg->peers[i], rt, resolve);
		s->links |= cfg->peers[i].rewrite_links;
	}
	s->links |= cfg->rt.local_nrf.present && cfg->rt.local_nrf.rewrite_links;
	if (cfg->rt.local_nrf.present) {
		const struct nrf_cfg_endpoint *l = &cfg->rt.local_nrf;
		char auth[280];
		int rc;

		if (strchr(l->address, ':') != NULL)
			snprintf(auth, sizeof(auth), "[%s]:%u", l->address, l->port);
		else
			snprintf(auth, sizeof(auth), "%s:%u", l->address, l->port);
		ep_fill(&s->local, l->scheme, auth, "");
		bool look = look_up(rt, resolve, l->address);

		rc = look || nrf_tp_addr_parse(l->address, l->port, &s->local.addr) == 0
			? nrf_tp_addr_resolve(l->address, l->port, &s->local.addr) : NRF_ENOENT;
		if (rc != 0)
			s->local.addr.port = l->port; /* rt_dns_sync() may set the rest */
		s->local.ok = rc == 0;
		if (!s->local.ok && look)
			NRF_LOG(WARN, MOD, "runtime.localNrf: no address for \"%s\" (%s)", l->address,
				nrf_strerror(rc));
		snprintf(s->local.tls_name, sizeof(s->local.tls_name), "%s", l->address);
	}
	*err = rt_tls_snap_init(s);
	if (*err != 0)
		goto fail;
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
	rt_tls_snap_fini(s);
	free(s->peers);
	free((void *)s->refs);
	free(s->views);
	free((void *)s->view_live);
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
	size_t n = rt->p.workers > 0 ? rt->p.workers : 1; /* remote: none of ours */

	s->refs = calloc(n, sizeof(*s->refs));
	s->views = calloc(n, sizeof(*s->views));
	s->view_live = calloc(n, sizeof(*s->view_live));
	if (s->refs == NULL || s->views == NULL || s->view_live == NULL)
		return NRF_ENOMEM;
	s->n_refs = rt->p.workers;
	return 0;
}

struct nrf_rt *
nrf_rt_create(const struct nrf_rt_params *p, struct nrf_rt_snap *snap, int *err)
{
	uint16_t ports[NRF_CFG_MAX_LISTEN];
	const struct rt_group_ops *grp;
	struct nrf_rt *rt;
	unsigned int i;

	grp = p == NULL ? NULL : p->remote != NULL ? &rt_group_procs :
		rt_group_lcore_transport(p->tp) ? &rt_group_lcore : &rt_group_threads;
	if (p == NULL || snap == NULL || grp->check(p) != 0) {
		nrf_rt_snap_free(snap);
		*err = NRF_EINVAL;
		return NULL;
	}
	rt = calloc(1, sizeof(*rt));
	if (rt == NULL || (rt->p = *p, snap_attach(rt, snap)) != 0) {
		free(rt);
		nrf_rt_snap_free(snap);
		*err = NRF_ENOMEM;
		return NULL;
	}
	rt->grp = grp;
	rt->tp = p->tp != NULL ? p->tp : nrf_tp_kern_ops();
	pthread_mutex_init(&rt->ctl_lock, NULL);
	atomic_init(&rt->running, false);
	rt->cur = snap;
	atomic_init(&rt->cur_gen, snap->gen);
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
	int rc = rt->grp->start(rt);

	if (rc == 0)
		atomic_store(&rt->running, true);
	return rc;
}

/* Restart-only settings (baked into listeners, the management listener,
 * the workers' HTTP/2 contexts and buffers, the DPDK port) are marked in
 * the configuration table (lib/cfg/cfg_table.c). */
static unsigned int
restart_diff(const struct nrf_cfg *a, const struct nrf_cfg *b, const char **ptrs,
	unsigned int max)
{
	return nrf_cfg_restart_diff(a, b, ptrs, max);
}

unsigned int
nrf_rt_restart_only(struct nrf_rt *rt, const struct nrf_cfg *next, const char **ptrs,
	unsigned int max)
{
	unsigned int n;

	pthread_mutex_lock(&rt->ctl_lock);
	n = restart_diff(rt->cur->cfg, next, ptrs, max);
	pthread_mutex_unlock(&rt->ctl_lock);
	return n;
}

int
rt_publish_locked(struct nrf_rt *rt, struct nrf_rt_snap *snap)
{
	struct nrf_rt_snap *old = rt->cur;

	if (restart_diff(old->cfg, snap->cfg, NULL, 0) != 0) {
		nrf_rt_snap_free(snap);
		return NRF_EINVAL;
	}
	if (snap_attach(rt, snap) != 0) {
		nrf_rt_snap_free(snap);
		return NRF_ENOMEM;
	}
	/* peer names at the resolver's addresses (rt_dns.c) */
	rt_dns_sync(rt, snap);
	if (snap->gen <= old->gen)
		snap->gen = old->gen + 1;
	rt->cur = snap;
	atomic_store_explicit(&rt->cur_gen, snap->gen, memory_order_release);
	atomic_store_explicit(&rt->snap, snap, memory_order_release);
	old->retired_next = rt->retired;
	rt->retired = old;
	rt->grp->publish(rt, snap);
	return 0;
}

int
nrf_rt_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap)
{
	int rc;

	pthread_mutex_lock(&rt->ctl_lock);
	rc = rt_publish_locked(rt, snap);
	pthread_mutex_unlock(&rt->ctl_lock);
	return rc;
}

uint64_t
nrf_rt_generation(const struct nrf_rt *rt)
{
	return atomic_load_explicit(&rt->cur_gen, memory_order_acquire);
}

bool
nrf_rt_generation_seen(const struct nrf_rt *rt, uint64_t gen)
{
	return rt->grp->stats.generation_seen(rt, gen);
}

char *
nrf_rt_emit(struct nrf_rt *rt, enum nrf_cfg_group group, int indent, uint64_t *gen,
	int *err)
{
	char *out;

	pthread_mutex_lock(&rt->ctl_lock);
	out = nrf_cfg_emit(rt->cur->cfg, group, indent, err);
	if (gen != NULL)
		*gen = rt->cur->gen;
	pthread_mutex_unlock(&rt->ctl_lock);
	return out;
}

int
nrf_rt_local_name(struct nrf_rt *rt, char *name, size_t cap)
{
	int rc = NRF_ENOENT;

	pthread_mutex_lock(&rt->ctl_lock);
	if (cap > 0)
		name[0] = '\0';
	if (rt->cur->cfg->rt.local_nrf.present) {
		rc = rt->cur->local.ok ? 0 : NRF_EINVAL;
		if (cap > 0)
			snprintf(name, cap, "%s", rt->cur->local.name);
	}
	pthread_mutex_unlock(&rt->ctl_lock);
	return rc;
}

void
nrf_rt_self_name(struct nrf_rt *rt, char *name, size_t cap)
{
	pthread_mutex_lock(&rt->ctl_lock);
	if (cap > 0)
		snprintf(name, cap, "%s", rt->cur->cfg->general.self_name != NULL
			? rt->cur->cfg->general.self_name : "");
	pthread_mutex_unlock(&rt->ctl_lock);
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
		if (atomic_load_explicit(&s->view_live[i], memory_order_acquire) != 0)
			return false;
	}
	return true;
}

unsigned int
nrf_rt_reclaim(struct nrf_rt *rt)
{
	struct nrf_rt_snap **pp;
	unsigned int left = 0;

	pthread_mutex_lock(&rt->ctl_lock);
	pp = &rt->retired;
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
	pthread_mutex_unlock(&rt->ctl_lock);
	return left;
}

void
nrf_rt_stop(struct nrf_rt *rt, uint32_t drain_ms)
{
	atomic_store(&rt->running, false);
	rt->grp->stop(rt, drain_ms);
}

void
nrf_rt_join(struct nrf_rt *rt)
{
	rt->grp->join(rt);
}

void
nrf_rt_free(struct nrf_rt *rt)
{
	unsigned int i;

	if (rt == NULL)
		return;
	rt_dns_free(rt); /* no publish from its thread past this point */
	nrf_rt_join(rt);
	for (i = 0; i < rt->n; i++)
		rt_worker_free(rt->w[i]);
	while (rt->retired != NULL) {
		struct nrf_rt_snap *s = rt->retired;

		rt->retired = s->retired_next;
		nrf_rt_snap_free(s);
	}
	nrf_rt_snap_free(rt->cur);
	pthread_mutex_destroy(&rt->ctl_lock);
	free(rt);
}

void
nrf_rt_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out)
{
	rt->grp->stats.get(rt, out);
}

/* Counters of the workers of this process (threads and lcore groups). */
void
rt_local_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out)
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
	/* Gauges: read from each worker's h2 context (single-writer
	 * counters, relaxed loads). */
	for (i = 0; i < rt->n; i++) {
		struct nrf_h2_mem_stats m;

		if (rt->w[i]->h2 == NULL)
			continue;
		nrf_h2_ctx_mem_get(rt->w[i]->h2, &m);
		for (k = 0; k < NRF_RT_BUF_COUNT; k++)
			out->buffered[k] += m.bytes[k];
		out->pooled_bytes += m.pooled;
		out->budget_bytes += __atomic_load_n(&rt->w[i]->budget, __ATOMIC_RELAXED);
	}
}

int
nrf_rt_listen_addr(const struct nrf_rt *rt, unsigned int i, struct nrf_tp_addr *out)
{
	if (rt->n == 0 || i >= rt->w[0]->n_lst || rt->w[0]->lst[i].l == NULL)
		return NRF_ENOENT;
	return rt->tp->listener_addr(rt->w[0]->lst[i].l, out);
}

/* ------------------------------------------------------------------------ */
/* Counters seen from the control thread                                     */

static const char *const outcome_names[NRF_RT_OUT_COUNT] = {
	[NRF_RT_OUT_LOCAL] = "local",
	[NRF_RT_OUT_PEER] = "peer",
	[NRF_RT_OUT_LOOP_DETECTED] = "loop_detected",
	[NRF_RT_OUT_HOP_LIMIT] = "hop_limit",
	[NRF_RT_OUT_LOOP_PREVENTED] = "loop_prevented",
	[NRF_RT_OUT_NOT_REACHABLE] = "not_reachable",
	[NRF_RT_OUT_OVERLOAD] = "overload",
	[NRF_RT_OUT_LOCAL_UNAVAILABLE] = "local_unavailable",
	[NRF_RT_OUT_BAD_REQUEST] = "bad_request",
	[NRF_RT_OUT_NOT_IMPLEMENTED] = "not_implemented",
	[NRF_RT_OUT_INTERNAL] = "internal_error",
	[NRF_RT_OUT_CLIENT_RESET] = "client_reset",
	[NRF_RT_OUT_REQUEST_TIMEOUT] = "request_timeout",
	[NRF_RT_OUT_CLIENT_LIMITED] = "client_limited",
};

const char *
nrf_rt_outcome_name(enum nrf_rt_outcome o)
{
	return (unsigned int)o < NRF_RT_OUT_COUNT ? outcome_names[o] : "unknown";
}

static const char *const tmo_names[NRF_RT_TMO_COUNT] = {
	[NRF_RT_TMO_HANDSHAKE] = "handshake",
	[NRF_RT_TMO_HEADER] = "header",
	[NRF_RT_TMO_BODY] = "body",
	[NRF_RT_TMO_IDLE] = "idle",
	[NRF_RT_TMO_STALLED_READER] = "stalled_reader",
	[NRF_RT_TMO_UPSTREAM_IDLE] = "upstream_idle",
	[NRF_RT_TMO_UPSTREAM_STALLED] = "upstream_stalled",
};

const char *
nrf_rt_timeout_name(enum nrf_rt_tmo r)
{
	return (unsigned int)r < NRF_RT_TMO_COUNT ? tmo_names[r] : "unknown";
}

static const char *const evict_names[NRF_RT_EVICT_COUNT] = {
	[NRF_RT_EVICT_HANDSHAKE] = "handshake",
	[NRF_RT_EVICT_IDLE] = "idle",
};

const char *
nrf_rt_evict_name(enum nrf_rt_evict r)
{
	return (unsigned int)r < NRF_RT_EVICT_COUNT ? evict_names[r] : "unknown";
}

_Static_assert((int)NRF_RT_EVICT_HANDSHAKE == (int)NRF_H2_EVICT_HANDSHAKE - 1 &&
	(int)NRF_RT_EVICT_IDLE == (int)NRF_H2_EVICT_IDLE - 1,
	"enum nrf_rt_evict mirrors enum nrf_h2_evict (less NONE)");

_Static_assert((int)NRF_RT_BUF_COUNT == (int)NRF_H2_MEM_COUNT &&
	(int)NRF_RT_BUF_WINDOW == (int)NRF_H2_MEM_WINDOW &&
	(int)NRF_RT_BUF_HTTP2 == (int)NRF_H2_MEM_HTTP2,
	"enum nrf_rt_buf mirrors enum nrf_h2_mem_kind");

static const char *const limit_names[NRF_RT_LIMIT_COUNT] = {
	[NRF_RT_LIMIT_RATE] = "rate",
	[NRF_RT_LIMIT_STREAMS] = "streams",
};

const char *
nrf_rt_limit_name(enum nrf_rt_limit r)
{
	return (unsigned int)r < NRF_RT_LIMIT_COUNT ? limit_names[r] : "unknown";
}

static const char *const buf_names[NRF_RT_BUF_COUNT] = {
	[NRF_RT_BUF_BODIES] = "bodies",
	[NRF_RT_BUF_HEADERS] = "headers",
	[NRF_RT_BUF_OUTPUT] = "output",
	[NRF_RT_BUF_HTTP2] = "http2",
	[NRF_RT_BUF_WINDOW] = "upstream_window",
};

const char *
nrf_rt_buf_name(enum nrf_rt_buf k)
{
	return (unsigned int)k < NRF_RT_BUF_COUNT ? buf_names[k] : "unknown";
}

static const char *const fail_names[NRF_RT_FAIL_COUNT] = {
	[NRF_RT_FAIL_CONNECT] = "connect",
	[NRF_RT_FAIL_RESET] = "reset",
	[NRF_RT_FAIL_REFUSED] = "refused",
	[NRF_RT_FAIL_CONN_LOST] = "connection_lost",
	[NRF_RT_FAIL_TIMEOUT] = "timeout",
	[NRF_RT_FAIL_REROUTE] = "reroute_status",
	[NRF_RT_FAIL_UNAVAILABLE] = "unavailable",
	[NRF_RT_FAIL_OVERLOAD] = "overload",
	[NRF_RT_FAIL_OTHER] = "other",
};

const char *
nrf_rt_fail_name(enum nrf_rt_fail f)
{
	return (unsigned int)f < NRF_RT_FAIL_COUNT ? fail_names[f] : "unknown";
}

static uint64_t
ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
pstats_add(struct nrf_rt_peer_stats *o, const struct rt_pstats *e)
{
	uint32_t pools = __atomic_load_n(&e->pools, __ATOMIC_RELAXED);
	uint64_t since = ld(&e->down_since);
	unsigned int k, j;

	if (pools > 0) { /* configured in this worker */
		o->workers++;
		if (since != 0) {
			o->workers_down++;
			if (o->down_since_ns == 0 || since < o->down_since_ns)
				o->down_since_ns = since;
		}
	}
	if (pools > 0 && since != 0) {
		uint64_t at = ld(&e->probe_at);

		if (at != 0 && (o->next_probe_ns == 0 || at < o->next_probe_ns))
			o->next_probe_ns = at;
		if (__atomic_load_n(&e->probing, __ATOMIC_RELAXED) > 0)
			o->workers_probing++;
	}
	o->conns += __atomic_load_n(&e->conns, __ATOMIC_RELAXED);
	o->inflight += __atomic_load_n(&e->inflight, __ATOMIC_RELAXED);
	o->queued += __atomic_load_n(&e->queued, __ATOMIC_RELAXED);
	o->tries += ld(&e->tries);
	o->loop_prevented += ld(&e->loop_prevented);
	for (k = 0; k <= NRF_RT_LAT_BUCKETS; k++)
		o->lat_bucket[k] += ld(&e->lat_bucket[k]);
	o->lat_sum_ns += ld(&e->lat_sum_ns);
	if (ld(&e->last_fail_ns) > o->last_fail_ns) {
		o->last_fail_ns = ld(&e->last_fail_ns);
		o->last_fail = (enum nrf_rt_fail)__atomic_load_n(&e->last_fail, __ATOMIC_RELAXED);
	}
	for (k = 0; k < NRF_RT_FAIL_COUNT; k++)
		o->fail[k] += ld(&e->fail[k]);
	o->code_other += ld(&e->code_other);
	for (k = 0; k < NRF_RT_PEER_CODES; k++) {
		uint16_t code = atomic_load_explicit(&e->codes[k], memory_order_acquire);
		uint64_t n;

		if (code == 0)
			break;
		n = ld(&e->code_n[k]);
		for (j = 0; j < o->n_codes && o->codes[j] != code; j++)
			;
		if (j == o->n_codes) {
			if (j == NRF_RT_PEER_CODES) {
				o->code_other += n;
				continue;
			}
			o->codes[j] = code;
			o->code_n[j] = 0;
			o->n_codes++;
		}
		o->code_n[j] += n;
	}
}

/* The entry of (@p name, @p local) in @p *v, appended zeroed when new.
 * @return its index, or -1 (no memory; @p *v is kept). */
static long
peer_slot(struct nrf_rt_peer_stats **v, size_t *n, size_t *cap, const char *name, bool local)
{
	size_t j;

	for (j = 0; j < *n; j++)
		if ((*v)[j].local == local && strcmp((*v)[j].name, name) == 0)
			return (long)j;
	if (*n == *cap) {
		size_t nc = *cap == 0 ? 16 : *cap * 2;
		struct nrf_rt_peer_stats *nv = realloc(*v, nc * sizeof(**v));

		if (nv == NULL)
			return -1;
		*v = nv;
		*cap = nc;
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	snprintf((*v)[*n].name, sizeof((*v)[*n].name), "%s", name);
	(*v)[*n].local = local;
	return (long)(*n)++;
}

int
nrf_rt_peer_stats_get(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out, size_t *n)
{
	return rt->grp->stats.peers(rt, out, n);
}

int
nrf_rt_loops_get(const struct nrf_rt *rt, struct nrf_rt_loop **out, size_t *n, uint64_t *drops)
{
	struct nrf_rt_loop *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (drops != NULL)
		*drops = 0;
	if (rt->p.remote != NULL) {
		if (rt->p.remote->loops_get == NULL)
			return 0;
		return rt->p.remote->loops_get(rt->p.remote_arg, out, n, drops);
	}
	for (unsigned int i = 0; i < rt->n && rc == 0; i++) {
		if (rt->w[i] == NULL)
			continue;
		rc = rt_loops_read(rt->w[i], &v, &cnt, &cap);
		if (drops != NULL)
			*drops += __atomic_load_n(&rt->w[i]->st.loop_drops, __ATOMIC_RELAXED);
	}
	if (rc != 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int
rt_local_peer_stats_get(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out, size_t *n)
{
	struct nrf_rt_peer_stats *v = NULL;
	size_t cnt = 0, cap = 0;
	unsigned int i;
	uint32_t k;

	for (i = 0; i < rt->n; i++) {
		struct rt_worker *w = rt->w[i];
		uint32_t m = atomic_load_explicit(&w->n_pstats, memory_order_acquire);

		for (k = 0; k < m; k++) {
			struct rt_pstats *chunk = atomic_load_explicit(
				&w->pstats[k / RT_PSTATS_CHUNK], memory_order_acquire);
			const struct rt_pstats *e = &chunk[k % RT_PSTATS_CHUNK];
			long j = peer_slot(&v, &cnt, &cap, e->name, e->local);

			if (j < 0) {
				free(v);
				return NRF_ENOMEM;
			}
			pstats_add(&v[j], e);
		}
	}
	*out = v;
	*n = cnt;
	return 0;
}

int
nrf_rt_peer_stats_merge(struct nrf_rt_peer_stats **v, size_t *n, size_t *cap,
	const struct nrf_rt_peer_stats *e)
{
	long j = peer_slot(v, n, cap, e->name, e->local);
	struct nrf_rt_peer_stats *o;
	unsigned int k, c;

	if (j < 0)
		return NRF_ENOMEM;
	o = &(*v)[j];
	o->tries += e->tries;
	o->loop_prevented += e->loop_prevented;
	for (k = 0; k <= NRF_RT_LAT_BUCKETS; k++)
		o->lat_bucket[k] += e->lat_bucket[k];
	o->lat_sum_ns += e->lat_sum_ns;
	if (e->last_fail_ns > o->last_fail_ns) {
		o->last_fail_ns = e->last_fail_ns;
		o->last_fail = e->last_fail;
	}
	for (k = 0; k < NRF_RT_FAIL_COUNT; k++)
		o->fail[k] += e->fail[k];
	o->code_other += e->code_other;
	o->workers += e->workers;
	o->workers_down += e->workers_down;
	o->workers_probing += e->workers_probing;
	o->conns += e->conns;
	o->inflight += e->inflight;
	o->queued += e->queued;
	if (e->next_probe_ns != 0 && (o->next_probe_ns == 0 || e->next_probe_ns < o->next_probe_ns))
		o->next_probe_ns = e->next_probe_ns;
	if (e->down_since_ns != 0 && (o->down_since_ns == 0 || e->down_since_ns < o->down_since_ns))
		o->down_since_ns = e->down_since_ns;
	for (k = 0; k < e->n_codes && k < NRF_RT_PEER_CODES; k++) {
		for (c = 0; c < o->n_codes && o->codes[c] != e->codes[k]; c++)
			;
		if (c == o->n_codes) {
			if (c == NRF_RT_PEER_CODES) {
				o->code_other += e->code_n[k];
				continue;
			}
			o->codes[c] = e->codes[k];
			o->code_n[c] = 0;
			o->n_codes++;
		}
		o->code_n[c] += e->code_n[k];
	}
	return 0;
}

unsigned int
nrf_rt_workers(const struct nrf_rt *rt)
{
	return rt->grp->stats.workers(rt);
}

int
nrf_rt_worker_get(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_worker_info *out)
{
	memset(out, 0, sizeof(*out));
	return rt->grp->stats.worker_get(rt, i, out);
}

int
rt_local_worker_get(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_worker_info *out)
{
	const struct rt_worker *w;
	clockid_t cid;
	struct timespec ts;

	if (i >= rt->n)
		return NRF_ENOENT;
	w = rt->w[i];
	out->generation = atomic_load_explicit(&w->seen_gen, memory_order_acquire);
	out->requests = __atomic_load_n(&w->st.requests, __ATOMIC_RELAXED);
	out->conns_open = __atomic_load_n(&w->st.conns_accepted, __ATOMIC_RELAXED) -
		__atomic_load_n(&w->st.conns_closed, __ATOMIC_RELAXED);
	out->running = w->started && !atomic_load_explicit(&w->exited, memory_order_acquire);
	out->loop_ns = atomic_load_explicit(&w->loop_ns, memory_order_relaxed);
	if (out->running && pthread_getcpuclockid(w->th, &cid) == 0 &&
		clock_gettime(cid, &ts) == 0)
		out->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

bool
nrf_rt_running(const struct nrf_rt *rt)
{
	return atomic_load(&rt->running) && rt->grp->stats.serving(rt);
}

int
nrf_rt_dp_stats_worker(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_dp_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->lcore = -1;
	return rt->grp->stats.dp(rt, i, out);
}

int
nrf_rt_dp_stats_get(const struct nrf_rt *rt, struct nrf_rt_dp_stats *out)
{
	return nrf_rt_dp_stats_worker(rt, 0, out);
}
