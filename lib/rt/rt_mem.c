/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path's memory budget (runtime.limits.maxBufferedBytes), and
 * giving memory back once a burst is over (decision 0018).
 *
 * The budget is split evenly between the workers, as maxConnections is:
 * each worker checks only its own h2 context, so no counter is shared and
 * nothing is locked. Over its share, a worker refuses new requests with
 * NRF_Forwarding_Overload (rt_proxy.c); what is already running finishes,
 * bounded by flow control.
 *
 * Giving back: once a second the worker frees the pooled objects that
 * stayed unused since the last tick (nrf_h2_ctx_trim(): half of them,
 * above small floors), and when that added up to MEM_TRIM_BYTES or more it
 * asks glibc to return the freed heap pages to the system (malloc_trim()):
 * freed memory in the middle of an arena is otherwise kept by the process
 * for ever, which is how RSS stayed at its peak after an attack. The trim
 * walks the arenas under their locks for a millisecond or so; it runs on
 * the worker itself, at most once a second, only after a burst.
 */
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "nrf_log.h"
#include "rt_int.h"

#define MEM_TICK_MS 1000
#define MEM_TRIM_BYTES (1u << 20)

static void
mem_tick(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;

	w->mem_freed += nrf_h2_ctx_trim(w->h2) + rt_xact_trim(w);
	if (w->mem_freed >= MEM_TRIM_BYTES) {
#ifdef __GLIBC__
		malloc_trim(0);
#endif
		NRF_LOG(DEBUG, MOD, "worker %u: %zu bytes of pooled memory given back", w->id,
			w->mem_freed);
		w->mem_freed = 0;
	}
	rt_timer_arm(&w->timers, t, MEM_TICK_MS);
}

void
rt_mem_conf(struct rt_worker *w)
{
	const struct nrf_cfg *cfg = w->snap->cfg;
	unsigned int n = w->rt->p.workers > 0 ? w->rt->p.workers : 1;

	uint64_t b = NRF_MAX((uint64_t)cfg->rt.max_buffered_bytes / n, (uint64_t)1);

	__atomic_store_n(&w->budget, b, __ATOMIC_RELAXED); /* read by nrf_rt_stats_get() */
	nrf_h2_ctx_set_budget(w->h2, b);
	if (w->mem_timer.fn == NULL)
		rt_timer_init(&w->mem_timer, mem_tick);
	if (w->mem_timer.idx == 0)
		rt_timer_arm(&w->timers, &w->mem_timer, MEM_TICK_MS);
}
