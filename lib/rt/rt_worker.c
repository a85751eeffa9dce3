/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One worker: a thread with its own transport loop, listeners (one
 * SO_REUSEPORT socket per worker and listen address, so the kernel spreads
 * connections), HTTP/2 context, Via scratch, pools, timers and counters.
 *
 * Loop iteration: pick up a newer snapshot, report the generation seen,
 * poll the transport (timeout = next timer), run due timers, run the h2
 * context (writes, continued reads, teardowns). Nothing blocks except the
 * poll itself.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

void
rt_worker_set_down(struct rt_worker *w, int peer, bool down)
{
	if (peer < 0 || peer >= NRF_CFG_MAX_PEERS)
		return;
	if (down)
		w->down[peer >> 6] |= 1ull << (peer & 63);
	else
		w->down[peer >> 6] &= ~(1ull << (peer & 63));
}

/*
 * Over maxConnections with every connection at work (an open stream; else
 * one without gives way, make_room() below): RFC 9113 has no way to refuse a
 * connection before it starts, so the connection gets the server preface and
 * GOAWAY(0, NO_ERROR) at once (nrf_h2_conn_refuse()): the client knows no
 * request was processed and may retry elsewhere or later, instead of seeing
 * a TCP connection closed under it. Such a connection lives until that is
 * written (a TLS one through its handshake) and is not counted as open.
 */
static void
refuse(struct rt_worker *w, struct rt_listener *rl, struct nrf_tp_conn *tc)
{
	struct nrf_h2_conn *c;
	int err;

	RT_STAT(w, conns_refused, 1);
	NRF_LOG_RL(WARN, MOD, "worker %u: connection refused with GOAWAY: %u connections open "
		"(runtime.limits.maxConnections)", w->id, w->n_front);
	tc = nrf_tp_tls_server(w->tls_loop, tc,
		w->snap->cfg->rt.listen[rl - w->lst].tls ? w->snap->tls_srv : NULL, &err);
	if (tc == NULL)
		return;
	c = nrf_h2_conn_server(w->h2, tc, &rt_refused_cbs, w, &err);
	if (c != NULL)
		nrf_h2_conn_refuse(c, NRF_H2_NO_ERROR, "connection limit reached");
}

/* No stream is ever delivered on a refused connection. */
const struct nrf_h2_cbs rt_refused_cbs = {0};

/* An evicted connection: no longer counted in n_front (its place went to a
 * newcomer when it was evicted), still open until its GOAWAY is out. */
static void
evicted_close(struct nrf_h2_conn *c, int err)
{
	struct rt_worker *w = nrf_h2_conn_user(c);

	(void)err;
	RT_STAT(w, conns_closed, 1);
}

const struct nrf_h2_cbs rt_evicted_cbs = {
	.on_conn_close = evicted_close,
};

/*
 * At maxConnections (decision 0054): the oldest connection without work
 * gives way to the newcomer (nrf_h2_ctx_evict(): first one whose handshake
 * is not done, then the one idle longest; never one with an open stream).
 * It stops counting at once: the newcomer takes its place while it writes
 * its GOAWAY. False: every connection has work (the newcomer is refused).
 */
static bool
make_room(struct rt_worker *w)
{
	enum nrf_h2_evict ev = nrf_h2_ctx_evict(w->h2, &rt_evicted_cbs, "connection limit reached");
	enum nrf_rt_evict why;

	if (ev == NRF_H2_EVICT_NONE)
		return false;
	why = (enum nrf_rt_evict)(ev - 1);
	w->n_front--;
	RT_STAT(w, conns_evicted[why], 1);
	NRF_LOG_RL(INFO, MOD, "worker %u: %u connections open (runtime.limits.maxConnections): "
		"closed one %s to take a new one", w->id, w->n_front + 1,
		why == NRF_RT_EVICT_IDLE ? "idle the longest" : "whose handshake was not done");
	return true;
}

static void
on_listener(void *arg, unsigned int events)
{
	struct rt_listener *rl = arg;
	struct rt_worker *w = rl->w;
	int i;

	(void)events;
	for (i = 0; i < 64 && rl->l != NULL; i++) {
		int err;
		struct nrf_tp_conn *tc = w->tp->accept(rl->l, &err);

		if (tc == NULL) {
			if (err == NRF_ENOMEM)
				NRF_LOG_RL(WARN, MOD, "worker %u: out of descriptors or memory: "
					"connection refused", w->id);
			else if (err != NRF_EAGAIN)
				NRF_LOG_RL(WARN, MOD, "worker %u: accept: %s", w->id, nrf_strerror(err));
			return;
		}
		if (w->draining) {
			RT_STAT(w, conns_refused, 1);
			w->tp->close(tc);
			continue;
		}
		if (w->n_front >= w->max_front && !make_room(w)) {
			refuse(w, rl, tc);
			continue;
		}
		/* TLS listener: the handshake runs under the h2 connection
		 * (rt_tls.c); cleartext: a pass-through. */
		tc = nrf_tp_tls_server(w->tls_loop, tc,
			w->snap->cfg->rt.listen[rl - w->lst].tls ? w->snap->tls_srv : NULL, &err);
		if (tc == NULL) {
			NRF_LOG_RL(WARN, MOD, "worker %u: connection dropped: %s", w->id,
				nrf_strerror(err));
			continue;
		}
		if (nrf_h2_conn_server(w->h2, tc, &rt_front_cbs, w, &err) == NULL) {
			NRF_LOG_RL(WARN, MOD, "worker %u: connection dropped: %s", w->id,
				nrf_strerror(err));
			continue;
		}
		w->n_front++;
		RT_STAT(w, conns_accepted, 1);
	}
}

static void
on_wake(void *arg)
{
	(void)arg; /* poll() returned: the loop looks at the stop flag */
}

/* Drain: the shutdown notice, then (h2 does it when the client answers the
 * notice's PING, or here after DRAIN_NOTICE_MS at most) the real GOAWAY; at
 * the end of the drain time, whatever is left is closed. */
#define DRAIN_NOTICE_MS 1000

static void
drain_notice(struct rt_worker *w)
{
	nrf_h2_ctx_shutdown(w->h2, false);
	rt_timer_arm(&w->timers, &w->drain_timer, NRF_MIN(w->drain_ms / 2, (uint32_t)DRAIN_NOTICE_MS));
}

static void
drain_tick(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;

	if (w->drain_quiet) {
		/* runtime.timeouts.goawayDelayMs is over: now tell them */
		w->drain_quiet = false;
		drain_notice(w);
		return;
	}
	if (!w->drain_final) {
		w->drain_final = true;
		nrf_h2_ctx_shutdown(w->h2, true);
		rt_timer_arm(&w->timers, t, w->drain_ms - NRF_MIN(w->drain_ms / 2, (uint32_t)DRAIN_NOTICE_MS));
		return;
	}
	w->drain_expired = true;
}

static void
own_member(struct rt_worker *w)
{
	const struct nrf_cfg *cfg = w->snap->cfg;

	if (nrf_via_member_format(w->via_member, sizeof(w->via_member), cfg->general.host,
		    cfg->general.port) < 0)
		w->via_member[0] = '\0';
	w->via_member_len = strlen(w->via_member);
}

static uint32_t
max_front(const struct nrf_rt *rt, const struct nrf_cfg *cfg)
{
	return NRF_MAX(1u, cfg->rt.max_connections / rt->p.workers);
}

/* Move to snapshot @p s: scratch for its Via database, a view of pools for
 * its peers (the previous view stays for the requests still on it). On
 * failure the worker stays on its snapshot and tries again next time. */
static void
worker_switch(struct rt_worker *w, struct nrf_rt_snap *s)
{
	int rc = nrf_via_scratch_update(w->scratch, s->db);

	if (rc == 0)
		rc = rt_view_create(w, s);
	if (rc != 0) {
		NRF_LOG_RL(ERR, MOD, "worker %u: cannot use snapshot %llu: %s", w->id,
			(unsigned long long)s->gen, nrf_strerror(rc));
		return;
	}
	w->snap = s;
	w->max_front = max_front(w->rt, s->cfg);
	rt_sweep_conf(w);
	rt_mem_conf(w);
	rt_limit_conf(w);
	(void)rt_alog_conf(w); /* the file is open: only live fields change */
	own_member(w);
	rt_pool_warm(w); /* a new local NRF: learn its health now */
	RT_STAT(w, snapshot_switches, 1);
	NRF_LOG(DEBUG, MOD, "worker %u: snapshot %llu", w->id, (unsigned long long)s->gen);
}

/* Listeners close first: a last accept pass takes the connections the
 * kernel completed meanwhile (served as any other), so a handover to a
 * process on the same port (SO_REUSEPORT) loses none of them. Then, after
 * runtime.timeouts.goawayDelayMs in which clients are served as before
 * (one that finishes and leaves meets no GOAWAY), the shutdown notice. */
static void
drain_begin(struct rt_worker *w)
{
	uint32_t quiet = w->snap->cfg->rt.goaway_delay_ms;
	unsigned int i;

	for (i = 0; i < w->n_lst; i++) {
		if (w->lst[i].l != NULL) {
			on_listener(&w->lst[i], 0);
			w->tp->listener_close(w->lst[i].l);
			w->lst[i].l = NULL;
		}
	}
	w->draining = true;
	if (quiet > 0) {
		w->drain_quiet = true;
		rt_timer_arm(&w->timers, &w->drain_timer, quiet);
		return;
	}
	drain_notice(w);
}

static void
worker_exit(struct rt_worker *w)
{
	struct nrf_h2_ctx_stats hs;
	struct nrf_list *l;
	int guard;

	w->exiting = true;
	/* Front first: their transactions cancel what runs upstream. */
	nrf_h2_ctx_close_all(w->h2);
	NRF_LIST_FOREACH(l, &w->all_pools)
		rt_pool_fini(nrf_container_of(l, struct rt_pool, all));
	for (guard = 0; guard < 100; guard++) {
		nrf_h2_ctx_run(w->h2);
		nrf_h2_ctx_stats_get(w->h2, &hs);
		if (hs.conns_server + hs.conns_client == 0)
			break;
		nrf_h2_ctx_close_all(w->h2);
	}
	rt_alog_flush(w);
}

void *
rt_worker_main(void *arg)
{
	struct rt_worker *w = arg;
	struct nrf_rt *rt = w->rt;
	bool busy = false;
	sigset_t all;

	/* Signals belong to the control thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	w->timers.kept = true;
	w->timers.now = 0;
	rt_pool_warm(w);
	for (;;) {
		struct nrf_rt_snap *s = atomic_load_explicit(&rt->snap, memory_order_acquire);
		uint64_t now;
		int timeout;

		if (s != w->snap) {
			worker_switch(w, s);
			/* The old view goes now if no request holds it (its
			 * removed peers' connections close, "no longer
			 * configured"), not after the next wait, which may last
			 * until the next timer. */
			rt_views_gc(w);
		}
		atomic_store_explicit(&w->seen_gen, w->snap->gen, memory_order_release);
		if (!w->draining && atomic_load_explicit(&w->stop, memory_order_acquire))
			drain_begin(w);
		if (w->draining && ((w->n_front == 0 && w->n_xact == 0) || w->drain_expired))
			break;
		/* From the clock of this iteration (read by what it handled,
		 * else now): at worst late by the time the iteration took;
		 * timeouts are rounded up to milliseconds anyway. */
		timeout = busy ? 0 : rt_timer_next_ms(&w->timers, rt_now(w), 1000);
		/* Nothing poll() dispatches may use a time from before the wait. */
		w->timers.now = 0;
		if (w->tp->poll(w->loop, timeout) < 0) {
			NRF_LOG_RL(ERR, MOD, "worker %u: poll failed", w->id);
		}
		now = rt_now(w); /* the iteration's one clock read, if no event made it */
		rt_timers_run(&w->timers, now);
		/* Liveness for the service manager's watchdog (nrf_rt_worker_get):
		 * the clock read the timers need anyway. */
		atomic_store_explicit(&w->loop_ns, now, memory_order_relaxed);
		busy = nrf_h2_ctx_run(w->h2);
		if (w->old_views != NULL)
			rt_views_gc(w);
	}
	if (w->drain_expired)
		NRF_LOG(WARN, MOD, "worker %u: drain time over, closing %u connections", w->id,
			w->n_front);
	worker_exit(w);
	atomic_store_explicit(&w->exited, true, memory_order_release);
	return NULL;
}

struct rt_worker *
rt_worker_create(struct nrf_rt *rt, unsigned int id, struct nrf_rt_snap *snap,
	uint16_t *bound_ports, int *err)
{
	const struct nrf_cfg *cfg = snap->cfg;
	struct nrf_h2_limits lim;
	struct rt_worker *w;
	uint16_t i;

	w = aligned_alloc(NRF_CACHE_LINE, (sizeof(*w) + NRF_CACHE_LINE - 1) & ~(size_t)(NRF_CACHE_LINE - 1));
	if (w == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	nrf_list_init(&w->all_pools);
	w->rt = rt;
	w->id = id;
	w->tp = rt->tp;
	w->snap = snap;
	w->timers.arg = w;
	atomic_init(&w->stop, 0);
	atomic_init(&w->exited, false);
	atomic_init(&w->seen_gen, snap->gen);
	atomic_init(&w->loop_ns, nrf_now_ns());
	atomic_init(&w->n_pstats, 0);
	rt_timer_init(&w->drain_timer, drain_tick);
	w->max_front = max_front(rt, cfg);

	w->loop = w->tp->loop_create(err);
	if (w->loop == NULL)
		goto fail;
	w->tp->set_wake(w->loop, on_wake, w);
	memset(&lim, 0, sizeof(lim));
	lim.max_header_bytes = cfg->rt.max_header_bytes;
	lim.max_body_bytes = cfg->rt.max_body_bytes;
	lim.max_concurrent_streams = cfg->rt.max_concurrent_streams;
	/* An upstream sends at most what an answer may hold before it is
	 * relayed (docs/failures.md, "Held answers"). */
	lim.peer_stream_window = RT_HOLD_MAX_BYTES;
	w->tls_loop = nrf_tp_tls_loop_create(w->tp, w->loop, err);
	if (w->tls_loop == NULL)
		goto fail;
	w->h2 = nrf_h2_ctx_create(nrf_tp_tls_ops(), w->tls_loop, &lim, err);
	if (w->h2 == NULL)
		goto fail;
	rt_sweep_conf(w);
	rt_mem_conf(w);
	rt_limit_conf(w);
	*err = rt_alog_conf(w);
	if (*err != 0)
		goto fail;
	w->scratch = nrf_via_scratch_create(snap->db, err);
	if (w->scratch == NULL)
		goto fail;
	*err = rt_loops_create(w);
	if (*err != 0)
		goto fail;

	w->via_cap = cfg->rt.max_header_bytes / 32 + 1;
	w->hdrs_cap = cfg->rt.max_header_bytes / 32 + 16;
	w->path_cap = cfg->rt.max_header_bytes + 1024;
	w->flat_cap = cfg->rt.max_body_bytes;
	w->via = calloc(w->via_cap, sizeof(*w->via));
	w->hdrs = calloc(w->hdrs_cap, sizeof(*w->hdrs));
	w->path = malloc(w->path_cap);
	w->flat = malloc(w->flat_cap > 0 ? w->flat_cap : 1);
	/* Rewritten links may lengthen a held answer; pages are touched only
	 * when an upstream has rewriteLinks (decision 0013). */
	w->links_cap = w->flat_cap + w->flat_cap / 2 + 4096;
	w->links = malloc(w->links_cap);
	if (w->via == NULL || w->hdrs == NULL || w->path == NULL || w->flat == NULL ||
		w->links == NULL) {
		*err = NRF_ENOMEM;
		goto fail;
	}

	*err = rt_view_create(w, snap);
	if (*err != 0)
		goto fail;
	own_member(w);

	for (i = 0; i < cfg->rt.n_listen; i++) {
		const struct nrf_cfg_listen *ls = &cfg->rt.listen[i];
		struct nrf_tp_addr a;
		uint16_t port = bound_ports[i] != 0 ? bound_ports[i] : ls->port;

		*err = nrf_tp_addr_resolve(ls->address, port, &a);
		if (*err != 0) {
			NRF_LOG(ERR, MOD, "runtime.listen[%u]: cannot resolve address \"%s\"", i,
				ls->address);
			*err = NRF_EINVAL;
			goto fail;
		}
		w->lst[i].w = w;
		w->lst[i].l = w->tp->listen(w->loop, &a, 1024, on_listener, &w->lst[i], err);
		if (w->lst[i].l == NULL) {
			const char *t = nrf_err_why_take();
			char buf[80], why[256];

			/* the transport's errno text when it gave one */
			snprintf(why, sizeof(why), "%s", t != NULL ? t : nrf_strerror(*err));
			nrf_tp_addr_format(&a, buf, sizeof(buf));
			NRF_LOG(ERR, MOD, "runtime.listen[%u]: cannot listen on %s: %s", i, buf,
				why);
			nrf_err_why_set("runtime.listen[%u] %s: %s", i, buf, why);
			goto fail;
		}
		w->n_lst = i + 1u;
		if (bound_ports[i] == 0) {
			struct nrf_tp_addr b;

			if (w->tp->listener_addr(w->lst[i].l, &b) == 0)
				bound_ports[i] = b.port;
		}
	}
	*err = 0;
	return w;
fail:
	rt_worker_free(w);
	return NULL;
}

void
rt_worker_free(struct rt_worker *w)
{
	unsigned int i;

	if (w == NULL)
		return;
	for (i = 0; i < w->n_lst; i++) {
		if (w->lst[i].l != NULL)
			w->tp->listener_close(w->lst[i].l);
	}
	if (w->h2 != NULL) {
		struct nrf_h2_ctx_stats hs;

		nrf_h2_ctx_stats_get(w->h2, &hs);
		if (hs.conns_server + hs.conns_client > 0)
			worker_exit(w);
	}
	rt_alog_fini(w);
	rt_limit_free(w);
	rt_xact_pool_fini(w);
	rt_views_free(w);
	nrf_h2_ctx_free(w->h2);
	nrf_via_scratch_free(w->scratch);
	rt_loops_free(w);
	rt_timers_fini(&w->timers);
	for (i = 0; i < RT_PSTATS_CHUNKS; i++)
		free(atomic_load_explicit(&w->pstats[i], memory_order_relaxed));
	free(w->via);
	free(w->hdrs);
	free(w->path);
	free(w->flat);
	free(w->links);
	nrf_tp_tls_loop_free(w->tls_loop);
	if (w->loop != NULL)
		w->tp->loop_free(w->loop);
	free(w);
}
