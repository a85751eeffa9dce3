/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_TIMER_H
#define NRF_RT_TIMER_H

/*
 * Per-worker timers (internal to lib/rt): a binary min-heap of intrusive
 * timers. One owner thread; no locks. Deadlines are CLOCK_MONOTONIC ns.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rt_timer;

/* Called from rt_timers_run() with the heap's arg; @t is disarmed. */
typedef void (*rt_timer_fn)(struct rt_timer *t, void *arg);

struct rt_timer {
	uint64_t at;   /* deadline, ns */
	uint32_t idx;  /* 1-based heap slot; 0: not armed */
	rt_timer_fn fn;
};

/* Heap slot: the deadline is kept next to the pointer so that sifting
 * compares within the array and never dereferences a timer. */
struct rt_timer_slot {
	uint64_t at;
	struct rt_timer *t;
};

struct rt_timers {
	struct rt_timer_slot *heap;
	uint32_t n;
	uint32_t cap;
	void *arg;     /* passed to every callback */
	/*
	 * The owner's clock, when the owner keeps one (kept: rt_worker_main()):
	 * nrf_now_ns() read at most once per loop iteration, at the first
	 * rt_timers_now() after the loop cleared it (now = 0) before waiting,
	 * so never a time from before the wait. Not kept: every call reads
	 * the clock.
	 */
	uint64_t now;
	bool kept;
};

/* The clock timers count from (struct rt_timers.now). */
static inline uint64_t
rt_timers_now(struct rt_timers *ts)
{
	if (!ts->kept)
		return nrf_now_ns();
	if (ts->now == 0)
		ts->now = nrf_now_ns();
	return ts->now;
}

void rt_timer_init(struct rt_timer *t, rt_timer_fn fn);
/* (Re)arm @p t to fire @p ms milliseconds from rt_timers_now(). 0 or
 * NRF_ENOMEM. */
int rt_timer_arm(struct rt_timers *ts, struct rt_timer *t, uint32_t ms);
/* Arm at an absolute deadline (ns). */
int rt_timer_arm_at(struct rt_timers *ts, struct rt_timer *t, uint64_t at_ns);
/* Disarm; no-op when not armed. */
void rt_timer_cancel(struct rt_timers *ts, struct rt_timer *t);
/* Milliseconds to the next deadline from @p now_ns (rounded up), at most
 * @p cap_ms; 0 when one is due. */
int rt_timer_next_ms(const struct rt_timers *ts, uint64_t now_ns, int cap_ms);
/* Run every timer due at @p now_ns, earliest first. */
void rt_timers_run(struct rt_timers *ts, uint64_t now_ns);
void rt_timers_fini(struct rt_timers *ts);

#ifdef __cplusplus
}
#endif
#endif /* NRF_RT_TIMER_H */
