/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker, per-peer connection pools (the local NRF has one too).
 *
 * A pool keeps up to NRF_RT_POOL_CONNS HTTP/2 connections and honours each
 * one's SETTINGS_MAX_CONCURRENT_STREAMS; tries beyond that wait in a bounded
 * FIFO (runtime.limits.peerQueueDepth), and a full FIFO is the overload
 * signal. Connections are opened on demand; a connect failure or timeout
 * marks the peer down for a hold-down that doubles with each consecutive
 * failure (reconnect backoff), during which nrf_fwd_decide() skips it
 * (health bitset) and tries to it fail at once. At the end of a hold-down
 * a background connect probes the peer; only its success brings the peer
 * back (and resets the backoff), so requests never pay for probing a peer
 * that is still down.
 */
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

#define HOLD_MIN_MS 250
#define HOLD_MAX_MS 8000

static int pconn_open(struct rt_pool *p);

/* End of a hold-down: probe with a background connect; the peer is up
 * again (health bit cleared) only once it connects. */
static void
pool_hold_end(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;
	struct rt_pool *p = RT_CONTAINER(t, struct rt_pool, hold);

	if (w->exiting || p->n_conns > 0)
		return;
	pconn_open(p); /* failure at once: mark_down() re-arms the hold-down */
}

void
rt_pool_init(struct rt_worker *w, struct rt_pool *p, int peer, const struct rt_ep *ep)
{
	memset(p, 0, sizeof(*p));
	p->w = w;
	p->peer = peer;
	p->ep = *ep;
	rt_timer_init(&p->hold, pool_hold_end);
}

static void
mark_down(struct rt_pool *p, int err)
{
	struct rt_worker *w = p->w;

	p->backoff_ms = p->backoff_ms == 0 ? HOLD_MIN_MS : NRF_MIN(p->backoff_ms * 2, HOLD_MAX_MS);
	if (!p->down) {
		NRF_LOG(WARN, MOD, "worker %u: %s %s down (%s), hold-down %u ms", w->id,
			p->peer < 0 ? "local NRF" : "peer", p->ep.name, nrf_strerror(err),
			p->backoff_ms);
	}
	p->down = true;
	rt_worker_set_down(w, p->peer, true);
	rt_timer_arm(&w->timers, &p->hold, p->backoff_ms);
}

static bool
conn_has_room(const struct rt_pconn *pc)
{
	return pc->ready && nrf_h2_conn_usable(pc->h2) &&
		nrf_h2_conn_streams(pc->h2) < nrf_h2_conn_remote_max_streams(pc->h2);
}

static struct rt_pconn *
pick(struct rt_pool *p)
{
	struct rt_pconn *pc;

	for (pc = p->conns; pc != NULL; pc = pc->next)
		if (conn_has_room(pc))
			return pc;
	return NULL;
}

static void
enqueue(struct rt_pool *p, struct rt_try *t)
{
	t->qnext = NULL;
	t->qprev = p->qtail;
	if (p->qtail != NULL)
		p->qtail->qnext = t;
	else
		p->qhead = t;
	p->qtail = t;
	p->qlen++;
	t->state = T_QUEUED;
}

void
rt_pool_dequeue(struct rt_try *t)
{
	struct rt_pool *p = t->pool;

	if (t->state != T_QUEUED)
		return;
	if (t->qprev != NULL)
		t->qprev->qnext = t->qnext;
	else
		p->qhead = t->qnext;
	if (t->qnext != NULL)
		t->qnext->qprev = t->qprev;
	else
		p->qtail = t->qprev;
	t->qprev = t->qnext = NULL;
	p->qlen--;
	t->state = T_IDLE;
}

/* Fail every queued try (the pool cannot serve them). */
static void
fail_queue(struct rt_pool *p, const char *why)
{
	while (p->qhead != NULL) {
		struct rt_try *t = p->qhead;

		rt_pool_dequeue(t);
		rt_try_failed(t, why);
	}
}

static void
dispatch(struct rt_pool *p)
{
	struct rt_pconn *pc;

	while (p->qhead != NULL && (pc = pick(p)) != NULL) {
		struct rt_try *t = p->qhead;

		rt_pool_dequeue(t);
		if (rt_try_send(t, pc->h2) != 0)
			rt_try_failed(t, "submit failed");
	}
}

static void
connect_timeout(struct rt_timer *t, void *arg)
{
	struct rt_pconn *pc = RT_CONTAINER(t, struct rt_pconn, ctimer);

	(void)arg;
	nrf_h2_conn_close(pc->h2, NRF_ETIMEDOUT);
}

static int
pconn_open(struct rt_pool *p)
{
	struct rt_worker *w = p->w;
	struct rt_pconn *pc = calloc(1, sizeof(*pc));
	int err;

	if (pc == NULL)
		return NRF_ENOMEM;
	pc->pool = p;
	rt_timer_init(&pc->ctimer, connect_timeout);
	RT_STAT(w, peer_connects, 1);
	pc->h2 = nrf_h2_conn_client(w->h2, &p->ep.addr, &rt_peer_cbs, pc, &err);
	if (pc->h2 == NULL) {
		free(pc);
		RT_STAT(w, peer_connect_failures, 1);
		if (p->n_conns == 0)
			mark_down(p, err);
		return err;
	}
	pc->next = p->conns;
	if (p->conns != NULL)
		p->conns->prev = pc;
	p->conns = pc;
	p->n_conns++;
	rt_timer_arm(&w->timers, &pc->ctimer, w->snap->cfg->rt.connect_ms);
	return 0;
}

/* Open one more connection when tries wait and no connect is under way. */
static int
maybe_open(struct rt_pool *p)
{
	struct rt_pconn *pc;
	uint32_t usable = 0;

	for (pc = p->conns; pc != NULL; pc = pc->next) {
		if (!pc->ready)
			return 0; /* one connect at a time */
		if (nrf_h2_conn_usable(pc->h2))
			usable++;
	}
	if (usable >= NRF_RT_POOL_CONNS || p->n_conns >= 2 * NRF_RT_POOL_CONNS)
		return 0;
	return pconn_open(p);
}

int
rt_pool_submit(struct rt_pool *p, struct rt_try *t)
{
	struct rt_worker *w = p->w;
	struct rt_pconn *pc;
	int rc;

	t->pool = p;
	if (!p->ep.ok)
		return NRF_ENOENT;
	if (p->ep.tls)
		return NRF_EINVAL;
	if (p->down || w->exiting)
		return NRF_EAGAIN;
	if (p->qhead == NULL) {
		pc = pick(p);
		if (pc != NULL)
			return rt_try_send(t, pc->h2);
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
	if (pc->prev != NULL)
		pc->prev->next = pc->next;
	else
		p->conns = pc->next;
	if (pc->next != NULL)
		pc->next->prev = pc->prev;
	p->n_conns--;
}

static void
peer_conn_ready(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);
	struct rt_pool *p = pc->pool;
	struct rt_worker *w = p->w;

	pc->ready = true;
	rt_timer_cancel(&w->timers, &pc->ctimer);
	if (!p->ever_up || p->backoff_ms != 0)
		NRF_LOG(INFO, MOD, "worker %u: %s %s up", w->id,
			p->peer < 0 ? "local NRF" : "peer", p->ep.name);
	p->ever_up = true;
	p->backoff_ms = 0;
	if (p->down) {
		rt_timer_cancel(&w->timers, &p->hold);
		p->down = false;
		rt_worker_set_down(w, p->peer, false);
	}
	dispatch(p);
	if (p->qhead != NULL)
		maybe_open(p);
}

static void
peer_conn_goaway(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);

	if (pc->pool->qhead != NULL)
		maybe_open(pc->pool);
}

static void
peer_stream_gone(struct nrf_h2_conn *c)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);

	dispatch(pc->pool);
}

static void
peer_conn_close(struct nrf_h2_conn *c, int err)
{
	struct rt_pconn *pc = nrf_h2_conn_user(c);
	struct rt_pool *p = pc->pool;
	struct rt_worker *w = p->w;
	bool was_ready = pc->ready;

	rt_timer_cancel(&w->timers, &pc->ctimer);
	pconn_unlink(p, pc);
	free(pc);
	if (w->exiting)
		return;
	if (!was_ready) {
		RT_STAT(w, peer_connect_failures, 1);
		if (p->n_conns == 0) {
			mark_down(p, err);
			fail_queue(p, err == NRF_ETIMEDOUT ? "connect timeout" : "connect failed");
		}
		return;
	}
	if (err != 0 && err != NRF_ECLOSED)
		NRF_LOG_RL(WARN, MOD, "worker %u: connection to %s lost: %s", w->id, p->ep.name,
			nrf_strerror(err));
	if (p->qhead != NULL && !w->exiting && maybe_open(p) != 0 && p->n_conns == 0)
		fail_queue(p, "reconnect failed");
}

void
rt_pool_fini(struct rt_pool *p)
{
	struct rt_pconn *pc;

	rt_timer_cancel(&p->w->timers, &p->hold);
	fail_queue(p, "shutting down");
	for (pc = p->conns; pc != NULL; pc = pc->next)
		nrf_h2_conn_close(pc->h2, NRF_ECLOSED);
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
};
