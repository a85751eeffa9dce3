/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker, per-peer connection pools (the local NRF has one too).
 *
 * A pool keeps up to NRF_RT_POOL_CONNS HTTP/2 connections and honours each
 * one's SETTINGS_MAX_CONCURRENT_STREAMS; tries beyond that wait in a FIFO.
 * A try is shed (rt_waiter_failed(.., NRF_RT_FAIL_OVERLOAD, ..)) by its
 * waiting time, CoDel-like: once the oldest waiter has waited longer than
 * runtime.limits.queueTargetMs without a break for queueIntervalMs (a
 * standing queue, not a burst that drains), every waiter past the target
 * goes; runtime.limits.peerQueueDepth is only a memory bound (decision
 * 0053). Connections are opened on demand.
 *
 * Isolation (decision 0052): streams lost with their connection come back
 * (the owner sets struct rt_waiter.isolate) into a queue of their own and
 * go out again each on a connection that carries no other such stream, so
 * a request whose answer kills connections takes down at most the one it
 * is on, and a stream on two dead connections is not sent again (the
 * owner's rule).
 *
 * Health: a connection proves its upstream up only when its first PING is
 * answered (a TCP connect alone does not: a server may accept and never
 * speak HTTP/2). A connection that fails to connect (or its TLS handshake),
 * or whose PING goes unanswered (timeout or close) while it carries no
 * stream, when it was the pool's last, holds the upstream down; so do
 * runtime.health.consecutiveFailures failed tries in a row (a connection
 * that died serving counts once, an answer starts the count again). One
 * connection that closes while serving streams never does (health bitset:
 * nrf_fwd_decide() puts it last; tries fail at once unless
 * forced). A held-down upstream is probed in the background on its own
 * timer, with or without traffic: connect + PING within
 * runtime.health.probeTimeoutMs, first after probeIntervalMs, the interval
 * doubling per failed probe up to probeIntervalMaxMs. Only the probe's PING
 * ACK brings the upstream back (and resets the interval); the probe's
 * connection then stays in the pool. Forced tries (last resorts) wait on
 * the probe instead of failing at once. The local NRF's pool is also kept
 * connected (rt_pool_warm(), and a reconnect when its last connection is
 * lost), so its health is known without traffic: that is what /readyz
 * reports. Each pool's state is published in its counters entry
 * (struct rt_pstats) for the control thread.
 *
 * Live peer changes: a pool belongs to the worker, not to a snapshot. For
 * each snapshot it uses, a worker keeps a view (snapshot peer index -> pool);
 * a request finds its pools through the view of the snapshot it started on.
 * A new snapshot's view shares the pools whose upstream is unchanged (same
 * address, scheme, authority and apiPrefix: the pool's endpoint is its key
 * and never changes), so connections, health and queues carry over; other
 * upstreams get new pools. Once no request holds an old snapshot, its view
 * is freed, and a pool no view uses any more is retired: its connections
 * are closed (none of its streams can belong to a request) and it is freed
 * when the last one is gone.
 *
 * Counters per upstream name live in a per-worker append-only table
 * (rt_stats.c, rt_pstats_get()), so they outlive pools and keep counting
 * when a peer comes back under the same name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

/* Opaque data of the PING every new connection sends ("nrfhealt"). */
#define HEALTH_PING 0x6e72666865616c74ull

static int pconn_open(struct rt_pool *p, bool probe);
static void pool_free(struct rt_pool *p);

static const char *
pool_kind(const struct rt_pool *p)
{
	return p->local ? "local NRF" : "peer";
}

/* Publish a pool's held-down state in its counters entry: the control
 * thread reads pools and down_since (relaxed) for /readyz and metrics. */
static void
state_publish(struct rt_pool *p, bool down)
{
	struct rt_pstats *e = p->stats;

	if (down) {
		if (e->n_down++ == 0)
			__atomic_store_n(&e->down_since, nrf_now_ns(), __ATOMIC_RELAXED);
	} else if (e->n_down > 0 && --e->n_down == 0) {
		__atomic_store_n(&e->down_since, 0, __ATOMIC_RELAXED);
	}
}

static void
pools_count(struct rt_pool *p, int d)
{
	struct rt_pstats *e = p->stats;

	__atomic_store_n(&e->pools, e->pools + (uint32_t)d, __ATOMIC_RELAXED);
}

/* A gauge of GET /peers in @p p's counters entry (single writer: one
 * plain add, stored relaxed for the control thread, like the counters). */
#define PS_GAUGE(p, field, d)                                                  \
	__atomic_store_n(&(p)->stats->field, (p)->stats->field + (uint32_t)(d), \
		__ATOMIC_RELAXED)

/* A connection of @p p whose PING is not answered yet, opened while the
 * pool was held down: the probe (a pool held down by consecutive failures
 * may keep other, live connections that finish their streams). */
static bool
probe_underway(const struct rt_pool *p)
{
	const struct nrf_list *l;

	NRF_LIST_FOREACH(l, &p->conns) {
		const struct rt_pconn *pc = nrf_container_of(l, struct rt_pconn, link);

		if (pc->probe && !pc->alive)
			return true;
	}
	return false;
}

/* "probing" (GET /peers): held down with a probe connection under way.
 * Re-evaluated where either changes (connection open/close, down/up). */
static void
probe_sync(struct rt_pool *p)
{
	bool now = !p->retired && p->down && probe_underway(p);

	if (now != p->probing) {
		p->probing = now;
		PS_GAUGE(p, probing, now ? 1 : -1);
	}
}

/* Probe timer of a held-down pool: connect + PING in the background. A
 * connection under way (a forced try's) is the probe already. Also the
 * delayed reconnect of a local NRF pool that is up (peer_conn_close()). */
static void
pool_hold_end(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;
	struct rt_pool *p = nrf_container_of(t, struct rt_pool, hold);

	if (w->exiting || p->retired || probe_underway(p))
		return;
	if (!p->down && p->n_conns > 0)
		return; /* the local NRF's delayed reconnect: connected meanwhile */
	pconn_open(p, true); /* failure at once: mark_down() re-arms the timer */
}

static void
mark_down(struct rt_pool *p, int err)
{
	struct rt_worker *w = p->w;
	const struct nrf_cfg_runtime *rc = &w->snap->cfg->rt;

	/* Read at every failure: runtime.health changes live. */
	p->backoff_ms = p->backoff_ms == 0 ? rc->probe_interval_ms
		: NRF_MIN(NRF_MAX(p->backoff_ms * 2, rc->probe_interval_ms),
			rc->probe_interval_max_ms);
	if (!p->down) {
		NRF_LOG(WARN, MOD, "worker %u: %s %s down (%s), probing in %u ms", w->id,
			pool_kind(p), p->ep.name, nrf_strerror(err), p->backoff_ms);
		p->down = true;
		state_publish(p, true);
	}
	rt_worker_set_down(w, p->peer, true);
	rt_timer_arm(&w->timers, &p->hold, p->backoff_ms);
	__atomic_store_n(&p->stats->probe_at, nrf_now_ns() + p->backoff_ms * 1000000ull,
		__ATOMIC_RELAXED);
	probe_sync(p);
}

/* A PING was answered: the upstream is up (again). */
static void
mark_up(struct rt_pool *p)
{
	struct rt_worker *w = p->w;

	if (!p->ever_up || p->down)
		NRF_LOG(INFO, MOD, "worker %u: %s %s up", w->id, pool_kind(p), p->ep.name);
	p->ever_up = true;
	p->backoff_ms = 0;
	if (p->down) {
		rt_timer_cancel(&w->timers, &p->hold);
		p->down = false;
		state_publish(p, false);
		rt_worker_set_down(w, p->peer, false);
		probe_sync(p);
	}
}

static bool
conn_has_room(const struct rt_pconn *pc)
{
	return pc->ready && nrf_h2_conn_usable(pc->h2) &&
		nrf_h2_conn_streams(pc->h2) < nrf_h2_conn_remote_max_streams(pc->h2);
}

/* A connection with room for @p t: for a lost stream sent again
 * (t->isolate), one that carries no other such stream. */
static struct rt_pconn *
pick(struct rt_pool *p, const struct rt_waiter *t)
{
	struct rt_pconn *pc;
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &p->conns) {
		pc = nrf_container_of(l, struct rt_pconn, link);
		if (conn_has_room(pc) && (!t->isolate || pc->isolated == 0))
			return pc;
	}
	return NULL;
}

/* Send @p t on @p pc (rt_waiter_send()), counting the stream in flight
 * until its connection reports it gone (peer_stream_gone()) or closes. */
static int
send_on(struct rt_pconn *pc, struct rt_waiter *t)
{
	struct rt_pool *p = pc->pool;
	int rc;

	t->pc = pc;
	rc = rt_waiter_send(t, pc->h2);
	if (rc == 0) {
		pc->streams++;
		PS_GAUGE(p, inflight, 1);
		if (NRF_UNLIKELY(t->isolate)) {
			pc->isolated++;
			t->isolated = true;
		}
	}
	return rc;
}

void
rt_pool_sent_done(struct rt_waiter *t)
{
	if (!t->isolated)
		return;
	t->isolated = false;
	t->pc->isolated--;
}

static struct rt_waiter *
queue_first(struct nrf_list *q)
{
	return nrf_list_empty(q) ? NULL : nrf_container_of(q->next, struct rt_waiter, qlink);
}

/* The waiter that has waited longest, of both queues (NULL: none). */
static struct rt_waiter *
oldest(struct rt_pool *p)
{
	struct rt_waiter *a = queue_first(&p->queue), *b = queue_first(&p->rqueue);

	if (a == NULL || (b != NULL && b->enq_ns < a->enq_ns))
		return b;
	return a;
}

/* A connection of @p p can take streams now (connected, usable). */
static bool
serving(const struct rt_pool *p)
{
	const struct nrf_list *l;

	NRF_LIST_FOREACH(l, &p->conns) {
		const struct rt_pconn *pc = nrf_container_of(l, struct rt_pconn, link);

		if (pc->ready && nrf_h2_conn_usable(pc->h2))
			return true;
	}
	return false;
}

static uint64_t
target_ns(const struct rt_pool *p)
{
	const struct nrf_cfg_runtime *rc = &p->w->snap->cfg->rt;

	/* never past a request's own requestMs: its timer answers first */
	return (uint64_t)NRF_MIN(rc->queue_target_ms, rc->request_ms) * 1000000ull;
}

static void shed_arm(struct rt_pool *p);

static void
enqueue(struct rt_pool *p, struct rt_waiter *t)
{
	nrf_list_add_tail(t->isolate ? &p->rqueue : &p->queue, &t->qlink);
	p->qlen++;
	PS_GAUGE(p, queued, 1);
	t->queued = true;
	t->enq_ns = rt_now(p->w);
	if (p->shed.idx == 0)
		shed_arm(p);
}

void
rt_pool_dequeue(struct rt_waiter *t)
{
	struct rt_pool *p = t->pool;

	if (!t->queued)
		return;
	nrf_list_del(&t->qlink);
	p->qlen--;
	PS_GAUGE(p, queued, -1);
	t->queued = false;
	if (p->qlen == 0) {
		p->above_since = 0;
		if (p->shed.idx != 0)
			rt_timer_cancel(&p->w->timers, &p->shed);
	}
}

/* Fail every queued try (the pool cannot serve them). */
static void
fail_queue(struct rt_pool *p, enum nrf_rt_fail reason, const char *why)
{
	struct rt_waiter *t;

	while ((t = oldest(p)) != NULL) {
		rt_pool_dequeue(t);
		rt_waiter_failed(t, reason, why);
	}
}

/*
 * Admission by waiting time (decision 0053), CoDel's rule with a target of
 * queueTargetMs: a queue whose oldest waiter stays past the target for
 * queueIntervalMs is a standing queue (the upstream serves less than is
 * offered), and then every waiter past the target is shed; a burst that
 * drains within the interval is served whole. The clock is the loop's
 * (rt_now()). Shed waiters are failed with NRF_RT_FAIL_OVERLOAD, their
 * owner answers NRF_Forwarding_Overload. Called on the shed timer and
 * before a queue is served.
 */
static void
shed(struct rt_pool *p)
{
	uint64_t now = rt_now(p->w), target = target_ns(p);
	uint64_t interval = (uint64_t)p->w->snap->cfg->rt.queue_interval_ms * 1000000ull;
	struct rt_waiter *t;

	/* Waiting for a connect, a probe or a reconnect is not congestion:
	 * connectMs and the probe fail such tries, and the request moves on
	 * to the next candidate. dispatch() arms the timer again once a
	 * connection serves. */
	if (p->down || !serving(p)) {
		p->above_since = 0;
		return;
	}

	while ((t = oldest(p)) != NULL) {
		if (now - t->enq_ns < target) {
			p->above_since = 0;
			break;
		}
		if (p->above_since == 0)
			p->above_since = t->enq_ns + target;
		if (now - p->above_since < interval)
			break;
		rt_pool_dequeue(t);
		RT_STAT(p->w, queue_shed, 1);
		rt_waiter_failed(t, NRF_RT_FAIL_OVERLOAD, "waited past runtime.limits.queueTargetMs");
	}
}

static void
shed_tick(struct rt_timer *tm, void *arg)
{
	struct rt_pool *p = nrf_container_of(tm, struct rt_pool, shed);

	(void)arg;
	shed(p);
	if (p->qlen > 0 && !p->down && serving(p))
		shed_arm(p);
}

/* The shed timer at the next moment shed() may act on the oldest waiter. */
static void
shed_arm(struct rt_pool *p)
{
	const struct rt_waiter *t = oldest(p);
	uint64_t now = rt_now(p->w), at;

	if (t == NULL)
		return;
	at = t->enq_ns + target_ns(p);
	if (p->above_since != 0)
		at = NRF_MAX(at, p->above_since +
			(uint64_t)p->w->snap->cfg->rt.queue_interval_ms * 1000000ull);
	rt_timer_arm(&p->w->timers, &p->shed,
		at > now ? (uint32_t)((at - now + 999999ull) / 1000000ull) : 0);
}

static void
dispatch(struct rt_pool *p)
{
	struct rt_pconn *pc;
	struct rt_waiter *t;

	if (p->down)
		return; /* forced tries wait for the probe's PING ACK */
	if (p->qlen > 0 && p->above_since != 0)
		shed(p);
	/* lost streams first: they have waited longest for their answer */
	while ((t = queue_first(&p->rqueue)) != NULL && (pc = pick(p, t)) != NULL) {
		rt_pool_dequeue(t);
		if (send_on(pc, t) != 0)
			rt_waiter_failed(t, NRF_RT_FAIL_OTHER, "submit failed");
	}
	while ((t = queue_first(&p->queue)) != NULL && (pc = pick(p, t)) != NULL) {
		rt_pool_dequeue(t);
		if (send_on(pc, t) != 0)
			rt_waiter_failed(t, NRF_RT_FAIL_OTHER, "submit failed");
	}
	if (NRF_UNLIKELY(p->qlen > 0) && p->shed.idx == 0)
		shed_arm(p); /* stopped while no connection served */
}

static void
connect_timeout(struct rt_timer *t, void *arg)
{
	struct rt_pconn *pc = nrf_container_of(t, struct rt_pconn, ctimer);

	(void)arg;
	if (!pc->alive)
		nrf_h2_conn_close(pc->h2, NRF_ETIMEDOUT);
}

/* @p probe: opened while the pool is held down (one timer for connect and
 * PING ACK: probeTimeoutMs); else connectMs for the connect, then
 * probeTimeoutMs for the ACK (peer_conn_ready()). */
static int
pconn_open(struct rt_pool *p, bool probe)
{
	struct rt_worker *w = p->w;
	struct rt_pconn *pc = calloc(1, sizeof(*pc));
	int err;

	if (pc == NULL)
		return NRF_ENOMEM;
	pc->pool = p;
	pc->probe = probe;
	pc->opened = nrf_now_ns();
	rt_timer_init(&pc->ctimer, connect_timeout);
	RT_STAT(w, peer_connects, 1);
	/* https: the next connect is a TLS one (SNI, name check, resumption) */
	err = p->ep.tls ? nrf_tp_tls_connect_next(w->tls_loop, p->ep.tlsc, p->ep.tls_name) : 0;
	pc->h2 = err != 0 ? NULL
			  : nrf_h2_conn_client(w->h2, &p->ep.addr, &rt_peer_cbs, pc, &err);
	if (pc->h2 == NULL) {
		free(pc);
		RT_STAT(w, peer_connect_failures, 1);
		if (p->n_conns == 0 || probe)
			mark_down(p, err);
		return err;
	}
	nrf_list_add_head(&p->conns, &pc->link);
	p->n_conns++;
	probe_sync(p);
	/* Sent behind the preface; its ACK is the proof of health. Out of
	 * memory here: the connection fails like any other. */
	if (nrf_h2_conn_ping(pc->h2, HEALTH_PING) != 0)
		nrf_h2_conn_close(pc->h2, NRF_ENOMEM);
	rt_timer_arm(&w->timers, &pc->ctimer,
		probe ? w->snap->cfg->rt.probe_timeout_ms : w->snap->cfg->rt.connect_ms);
	return 0;
}

/* Streams a connection under way is counted on to take: RFC 9113 §5.1.2
 * asks a server to allow at least 100 (until its SETTINGS say). */
#define CONNECT_TAKES 100

/* Open one more connection when tries wait, up to NRF_RT_POOL_CONNS
 * usable or connecting ones, and for lost streams waiting to go again, one
 * more while none of them is free of such a stream (NRF_RT_POOL_CONNS more
 * at most). Another connect starts while one is under way only when more
 * tries wait than the connects under way will take: a burst gets its
 * connections in one round trip, not one after another. */
static int
maybe_open(struct rt_pool *p)
{
	struct rt_pconn *pc;
	struct nrf_list *l;
	uint32_t usable = 0, free_iso = 0, connecting = 0, open;

	if (p->down)
		return 0; /* the probe under way is the only connection */
	NRF_LIST_FOREACH(l, &p->conns) {
		pc = nrf_container_of(l, struct rt_pconn, link);
		if (!pc->ready) {
			connecting++;
		} else if (nrf_h2_conn_usable(pc->h2)) {
			usable++;
			free_iso += pc->isolated == 0;
		}
	}
	if (p->n_conns >= 3 * NRF_RT_POOL_CONNS)
		return 0;
	if (connecting > 0 && p->qlen <= connecting * CONNECT_TAKES)
		return 0;
	open = usable + connecting;
	if (open >= NRF_RT_POOL_CONNS &&
		(nrf_list_empty(&p->rqueue) || free_iso + connecting > 0 ||
			open >= 2 * NRF_RT_POOL_CONNS))
		return 0;
	return pconn_open(p, false);
}

/* Held down by failed tries in a row while tries wait: probe now, not at
 * the end of the interval, so that they are sent or failed by its PING. */
static void
probe_for_queue(struct rt_pool *p)
{
	if (p->qlen > 0 && !probe_underway(p))
		pconn_open(p, true);
}

void
rt_pool_try_failed(struct rt_pool *p)
{
	const struct nrf_cfg_runtime *rc = &p->w->snap->cfg->rt;

	if (++p->consec < rc->consecutive_failures || p->down || p->retired)
		return;
	NRF_LOG_RL(WARN, MOD, "worker %u: %s %s: %u failed tries in a row "
		"(runtime.health.consecutiveFailures)", p->w->id, pool_kind(p), p->ep.name,
		p->consec);
	mark_down(p, NRF_EIO);
	probe_for_queue(p);
}

int
rt_pool_submit(struct rt_pool *p, struct rt_waiter *t)
{
	struct rt_worker *w = p->w;
	struct rt_pconn *pc;
	int rc;

	t->pool = p;
	if (!p->ep.ok)
		return NRF_ENOENT;
	if (p->ep.tls && p->ep.tlsc == NULL)
		return NRF_EINVAL;
	if (w->exiting || (p->down && !t->force && !t->isolate))
		return NRF_EAGAIN;
	if (p->down) {
		/* A last resort (or a lost stream): wait on the probe under
		 * way, or start one now rather than at the end of the
		 * interval. */
		if (p->qlen >= w->snap->cfg->rt.peer_queue_depth)
			return NRF_EFULL;
		if (!probe_underway(p)) {
			rc = pconn_open(p, true);
			if (rc != 0)
				return rc;
		}
		enqueue(p, t);
		return 0;
	}
	if (nrf_list_empty(t->isolate ? &p->rqueue : &p->queue)) {
		pc = pick(p, t);
		if (pc != NULL)
			return send_on(pc, t);
	}
	if (p->qlen >= w->snap->cfg->rt.peer_queue_depth)
		return NRF_EFULL;
	rc = maybe_open(p);
	if (rc != 0 && p->n_conns == 0)
		return rc;
	enqueue(p, t);
	return 0;
}

static void
pconn_unlink(struct rt_pool *p, struct rt_pconn *pc)
{
	nrf_list_del(&pc->link);
	p->n_conns--;
	if (pc->ready)
		PS_GAUGE(p, conns, -1);
	if (pc->streams > 0) /* streams that ended with it, not one by one */
		PS_GAUGE(p, inflight, -(int32_t)pc->streams);
	probe_sync(p);
}

static void
peer_conn_ready(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);
	struct rt_pool *p = pc->pool;
	struct rt_worker *w = p->w;

	pc->ready = true;
	PS_GAUGE(p, conns, 1);
	if (!pc->probe) {
		rt_timer_cancel(&w->timers, &pc->ctimer);
		if (!pc->alive)
			rt_timer_arm(&w->timers, &pc->ctimer, w->snap->cfg->rt.probe_timeout_ms);
	}
	/* Up pool: send at once, the PING's answer follows (a connection
	 * that never answers it fails and takes its streams along). Held
	 * down: forced tries wait for that answer. */
	dispatch(p);
	if (p->qlen > 0)
		maybe_open(p);
}

static void
peer_conn_ping_ack(struct nrf_h2_conn *c, uint64_t token)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);
	struct rt_pool *p = pc->pool;
	struct rt_worker *w = p->w;

	if (token != HEALTH_PING || pc->alive)
		return;
	pc->alive = true;
	rt_timer_cancel(&w->timers, &pc->ctimer);
	if (w->exiting || p->retired)
		return;
	mark_up(p);
	dispatch(p);
	if (p->qlen > 0)
		maybe_open(p);
}

static void
peer_conn_goaway(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);

	if (pc->pool->qlen > 0)
		maybe_open(pc->pool);
}

static void
peer_stream_gone(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);

	if (pc->streams > 0) {
		pc->streams--;
		PS_GAUGE(pc->pool, inflight, -1);
	}
	dispatch(pc->pool);
}

static const char *
fail_why(bool ready, int err, char *buf, size_t cap)
{
	if (!ready && err == NRF_ETIMEDOUT)
		return "connect timeout";
	if (!ready) {
		/* keep the transport's reason: "connect failed: connection refused" */
		snprintf(buf, cap, "connect failed: %s", nrf_strerror(err));
		return buf;
	}
	return err == NRF_ETIMEDOUT ? "no answer to PING" : "closed before answering PING";
}

static void
peer_conn_close(struct nrf_h2_conn *c, int err)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);
	struct rt_pool *p = pc->pool;
	struct rt_worker *w = p->w;
	bool was_ready = pc->ready;
	bool was_alive = pc->alive;
	bool was_probe = pc->probe;
	uint32_t streams = pc->streams; /* in flight when it went */
	uint64_t lived_ns = nrf_now_ns() - pc->opened;
	char why[96];

	rt_timer_cancel(&w->timers, &pc->ctimer);
	pconn_unlink(p, pc);
	free(pc);
	if (w->exiting)
		return;
	if (p->retired) {
		if (p->n_conns == 0)
			pool_free(p);
		return;
	}
	if (!was_alive && (!was_ready || streams == 0)) {
		/* Failed to connect, or its PING went unanswered with nothing
		 * else in flight: the upstream is not there. A probe that fails
		 * re-arms the next one (other, live connections of a pool held
		 * down by failed tries in a row may still finish streams). */
		RT_STAT(w, peer_connect_failures, 1);
		if (p->n_conns == 0 || was_probe) {
			mark_down(p, err != 0 ? err : NRF_ECLOSED);
			fail_queue(p, NRF_RT_FAIL_CONNECT,
				fail_why(was_ready, err, why, sizeof(why)));
		}
		return;
	}
	/* Died while serving streams (before or after its PING's answer):
	 * the streams are the owner's to send again apart (decision 0052);
	 * the upstream is held down only by failed tries in a row, of which
	 * this connection is one. */
	if (err != 0 && err != NRF_ECLOSED)
		NRF_LOG_RL(WARN, MOD, "worker %u: connection to %s lost: %s", w->id, p->ep.name,
			nrf_strerror(err));
	if (streams > 0) {
		RT_STAT(w, peer_conns_lost, 1);
		rt_pool_try_failed(p);
		if (p->down)
			return;
	}
	if (p->qlen > 0) {
		if (maybe_open(p) != 0 && p->n_conns == 0)
			fail_queue(p, NRF_RT_FAIL_CONNECT, "reconnect failed");
		return;
	}
	/* The local NRF's last connection: reconnect at once, so a local NRF
	 * that went away is held down (and /readyz says so) without waiting
	 * for a request to find out. One that closes connections as soon as
	 * they are up is reconnected once per probe interval, not in a loop
	 * (pool_hold_end() opens that connection). */
	if (p->n_conns == 0 && w->view != NULL && p == w->view->local && !w->draining) {
		uint32_t iv = w->snap->cfg->rt.probe_interval_ms;

		if (lived_ns >= (uint64_t)iv * 1000000ull)
			pconn_open(p, false);
		else
			rt_timer_arm(&w->timers, &p->hold, iv);
	}
}

void
rt_pool_warm(struct rt_worker *w)
{
	struct rt_pool *p = w->view != NULL ? w->view->local : NULL;

	if (p == NULL || !p->ep.ok || (p->ep.tls && p->ep.tlsc == NULL) || p->n_conns > 0 ||
		p->down || p->retired || w->draining || w->exiting)
		return;
	pconn_open(p, false);
}

void
rt_pool_fini(struct rt_pool *p)
{
	struct nrf_list *l, *nx;

	rt_timer_cancel(&p->w->timers, &p->hold);
	rt_timer_cancel(&p->w->timers, &p->shed);
	fail_queue(p, NRF_RT_FAIL_OTHER, "shutting down");
	NRF_LIST_FOREACH_SAFE(l, nx, &p->conns)
		nrf_h2_conn_close(nrf_container_of(l, struct rt_pconn, link)->h2, NRF_ECLOSED);
}

/* ------------------------------------------------------------------------ */
/* Pools and views (live peer changes)                                       */

static struct rt_pool *
pool_new(struct rt_worker *w, const struct rt_ep *ep, bool local)
{
	struct rt_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->stats = rt_pstats_get(w, ep->name, local);
	if (p->stats == NULL) {
		free(p);
		return NULL;
	}
	pools_count(p, 1);
	p->w = w;
	p->peer = -1;
	p->local = local;
	p->ep = *ep;
	if (p->ep.tlsc != NULL)
		nrf_tp_tls_ctx_ref(p->ep.tlsc); /* the pool may outlive the snapshot */
	rt_timer_init(&p->hold, pool_hold_end);
	rt_timer_init(&p->shed, shed_tick);
	nrf_list_init(&p->conns);
	nrf_list_init(&p->queue);
	nrf_list_init(&p->rqueue);
	nrf_list_add_head(&w->all_pools, &p->all);
	return p;
}

static void
pool_free(struct rt_pool *p)
{
	struct rt_worker *w = p->w;

	rt_timer_cancel(&w->timers, &p->hold);
	rt_timer_cancel(&w->timers, &p->shed);
	if (!p->retired) { /* pool_retire() did this already */
		if (p->down)
			state_publish(p, false);
		pools_count(p, -1);
	}
	nrf_list_del(&p->all);
	nrf_tp_tls_ctx_free(p->ep.tlsc);
	free(p);
}

/* No view uses @p p: no request can have a try on it. Close and free. */
static void
pool_retire(struct rt_pool *p)
{
	struct nrf_list *l, *nx;

	p->retired = true;
	p->peer = -1;
	probe_sync(p);
	rt_timer_cancel(&p->w->timers, &p->hold);
	/* No longer configured: out of readiness and metrics now. */
	if (p->down)
		state_publish(p, false);
	pools_count(p, -1);
	fail_queue(p, NRF_RT_FAIL_OTHER, "upstream removed"); /* empty: no requests */
	if (p->n_conns == 0) {
		pool_free(p);
		return;
	}
	NRF_LOG(INFO, MOD, "worker %u: %s %s no longer configured: closing %u connection(s)",
		p->w->id, pool_kind(p), p->ep.name, p->n_conns);
	NRF_LIST_FOREACH_SAFE(l, nx, &p->conns)
		nrf_h2_conn_close(nrf_container_of(l, struct rt_pconn, link)->h2, NRF_ECLOSED);
}

static bool
ep_same(const struct rt_ep *a, const struct rt_ep *b)
{
	return a->ok == b->ok && a->tls == b->tls && a->addr.family == b->addr.family &&
		a->addr.port == b->addr.port &&
		memcmp(a->addr.ip, b->addr.ip, sizeof(a->addr.ip)) == 0 &&
		strcmp(a->name, b->name) == 0 && strcmp(a->authority, b->authority) == 0 &&
		strcmp(a->scheme, b->scheme) == 0 && strcmp(a->api_root, b->api_root) == 0 &&
		strcmp(a->prefix, b->prefix) == 0 && strcmp(a->tls_name, b->tls_name) == 0 &&
		nrf_tp_tls_ctx_same(a->tlsc, b->tlsc);
}

/* A live pool for @p ep not yet taken by the view being built (@p seq). */
static struct rt_pool *
pool_claim(struct rt_worker *w, const struct rt_ep *ep, bool local, uint64_t seq)
{
	struct rt_pool *p = NULL;
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &w->all_pools) {
		struct rt_pool *q = nrf_container_of(l, struct rt_pool, all);

		if (!q->retired && q->local == local && q->claimed != seq && ep_same(&q->ep, ep)) {
			p = q;
			break;
		}
	}
	if (p == NULL)
		p = pool_new(w, ep, local);
	if (p != NULL)
		p->claimed = seq;
	return p;
}

int
rt_view_create(struct rt_worker *w, struct nrf_rt_snap *s)
{
	uint16_t n = s->cfg->n_peers, i;
	uint64_t seq = ++w->view_seq;
	struct rt_view *v = calloc(1, sizeof(*v));
	struct rt_pool *p;
	struct nrf_list *l, *nx;

	if (v == NULL)
		return NRF_ENOMEM;
	v->snap = s;
	v->n_pools = n;
	v->pools = calloc(n > 0 ? n : 1, sizeof(*v->pools));
	if (v->pools == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		v->pools[i] = pool_claim(w, &s->peers[i], false, seq);
		if (v->pools[i] == NULL)
			goto fail;
	}
	v->local = pool_claim(w, &s->local, true, seq);
	if (v->local == NULL)
		goto fail;

	/* Commit: nothing below fails. */
	NRF_LIST_FOREACH(l, &w->all_pools) {
		p = nrf_container_of(l, struct rt_pool, all);
		if (!p->local)
			p->peer = -1;
	}
	memset(w->down, 0, sizeof(w->down));
	for (i = 0; i < n; i++) {
		p = v->pools[i];
		p->n_views++;
		p->peer = i;
		if (p->down)
			rt_worker_set_down(w, i, true);
	}
	v->local->n_views++;
	if (w->view != NULL) {
		w->view->next = w->old_views;
		w->old_views = w->view;
	}
	w->view = v;
	s->views[w->id] = v;
	atomic_store_explicit(&s->view_live[w->id], 1, memory_order_release);
	return 0;
fail:
	/* Pools made for this view and used by no other: not needed. */
	NRF_LIST_FOREACH_SAFE(l, nx, &w->all_pools) {
		p = nrf_container_of(l, struct rt_pool, all);
		if (p->n_views == 0 && !p->retired && p->n_conns == 0)
			pool_free(p);
	}
	if (v != NULL)
		free(v->pools);
	free(v);
	return NRF_ENOMEM;
}

static void
view_release(struct rt_worker *w, struct rt_view *v)
{
	struct nrf_rt_snap *s = v->snap;
	uint16_t i;

	for (i = 0; i < v->n_pools; i++)
		if (--v->pools[i]->n_views == 0)
			pool_retire(v->pools[i]);
	if (--v->local->n_views == 0)
		pool_retire(v->local);
	s->views[w->id] = NULL;
	free(v->pools);
	free(v);
	/* Last touch of the snapshot: from here on the control thread may free it. */
	atomic_store_explicit(&s->view_live[w->id], 0, memory_order_release);
}

void
rt_views_gc(struct rt_worker *w)
{
	struct rt_view **pp = &w->old_views;

	while (*pp != NULL) {
		struct rt_view *v = *pp;

		if (atomic_load_explicit(&v->snap->refs[w->id], memory_order_relaxed) == 0) {
			*pp = v->next;
			view_release(w, v);
		} else {
			pp = &v->next;
		}
	}
}

void
rt_views_free(struct rt_worker *w)
{
	struct rt_view *v;

	while ((v = w->old_views) != NULL) {
		w->old_views = v->next;
		free(v->pools);
		free(v);
	}
	if (w->view != NULL) {
		free(w->view->pools);
		free(w->view);
		w->view = NULL;
	}
	while (!nrf_list_empty(&w->all_pools))
		pool_free(nrf_container_of(w->all_pools.next, struct rt_pool, all));
}

struct rt_pool *
rt_xact_pool(struct rt_xact *x, uint16_t peer)
{
	const struct rt_view *v = x->snap->views[x->w->id];

	return peer < v->n_pools ? v->pools[peer] : NULL;
}

struct rt_pool *
rt_xact_local(struct rt_xact *x)
{
	return x->snap->views[x->w->id]->local;
}

/* Peer stream callbacks live in rt_proxy.c; connection ones here. */
const struct nrf_h2_cbs rt_peer_cbs = {
	.on_response = rt_peer_on_response,
	.on_data = rt_peer_on_data,
	.on_close = rt_peer_on_close,
	.on_conn_ready = peer_conn_ready,
	.on_conn_stream_gone = peer_stream_gone,
	.on_conn_goaway = peer_conn_goaway,
	.on_conn_close = peer_conn_close,
	.on_conn_ping_ack = peer_conn_ping_ack,
	.on_conn_idle = rt_pconn_idle,
};
