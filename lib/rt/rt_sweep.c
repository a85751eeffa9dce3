/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runtime.timeouts on a worker: one timer that sweeps the worker's h2
 * context (nrf_h2_ctx_sweep(): handshakes, header blocks, request bodies,
 * idle and stalled connections and streams) every period, and counts what
 * it ended. One heap timer per worker instead of one per connection: the
 * h2 context explains why (lib/h2/h2_tmo.c).
 */
#include "nrf_log.h"
#include "rt_int.h"

_Static_assert((int)NRF_RT_TMO_COUNT == (int)NRF_H2_TMO_COUNT,
	"enum nrf_rt_tmo mirrors enum nrf_h2_tmo");
_Static_assert((int)NRF_RT_TMO_UPSTREAM_STALLED == (int)NRF_H2_TMO_UPSTREAM_STALLED,
	"enum nrf_rt_tmo mirrors enum nrf_h2_tmo");

static void
sweep_tick(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;
	uint64_t counts[NRF_H2_TMO_COUNT] = {0};
	unsigned int i;

	nrf_h2_ctx_sweep(w->h2, nrf_now_ns(), counts);
	for (i = 0; i < NRF_H2_TMO_COUNT; i++)
		if (counts[i] != 0)
			RT_STAT(w, timeouts[i], counts[i]);
	rt_timer_arm(&w->timers, t, w->sweep_ms);
}

void
rt_sweep_conf(struct rt_worker *w)
{
	const struct nrf_cfg_runtime *rc = &w->snap->cfg->rt;
	struct nrf_h2_timeouts t = {
		.handshake_ms = rc->handshake_ms,
		.header_ms = rc->request_header_ms,
		.body_ms = rc->request_body_ms,
		.idle_ms = rc->idle_ms,
		.stalled_ms = rc->stalled_reader_ms,
		.upstream_idle_ms = rc->upstream_idle_ms,
	};
	uint32_t ms;

	nrf_h2_ctx_set_timeouts(w->h2, &t);
	ms = nrf_h2_ctx_sweep_period_ms(w->h2);
	if (ms == w->sweep_ms && w->sweep_timer.idx != 0)
		return;
	if (w->sweep_timer.fn == NULL)
		rt_timer_init(&w->sweep_timer, sweep_tick);
	w->sweep_ms = ms;
	rt_timer_arm(&w->timers, &w->sweep_timer, ms);
}

/*
 * The local NRF's last connection stays: every request goes there first,
 * and it is what tells whether the local NRF is up (health keeps it
 * connected anyway: closing it would only make it reconnect). A connection
 * whose PING is not answered yet, or of a held-down pool, is health's
 * business (its own timeouts). Peers' connections and the local NRF's
 * extra ones go after upstreamIdleMs without a stream.
 */
bool
rt_pconn_idle(struct nrf_h2_conn *c)
{
	const struct rt_pconn *pc = nrf_h2_conn_user(c);
	const struct rt_pool *p = pc->pool;

	if (!pc->alive || p->down)
		return false;
	return !(p->local && !p->retired && p->n_conns <= 1);
}
