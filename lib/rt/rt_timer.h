/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_TIMER_H
#define NRF_RT_TIMER_H

/*
 * Per-worker timers (internal to lib/rt): a binary min-heap of intrusive
 * timers, plus a few lanes: FIFO lists of the timers armed with the same
 * relative duration (rt_timer_arm_lane()), which are in deadline order already
 * because the clock never goes back, so arming and cancelling them is
 * O(1). One owner thread; no locks. Deadlines are CLOCK_MONOTONIC ns.
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
	/* 1-based heap slot; RT_TIMER_IN_LANE: in lane @lane; 0: not armed
	 * (callers may test idx != 0 for "armed") */
	uint32_t idx;
	uint8_t lane;  /* 0-based lane index when idx == RT_TIMER_IN_LANE */
	rt_timer_fn fn;
	struct rt_timer *prev, *next; /* lane list */
};

#define RT_TIMER_IN_LANE UINT32_MAX
/* Distinct durations of rt_timer_arm_lane() that get a lane at once (a
 * lane is free again, for another duration, when it empties); the rest go
 * to the heap. */
#define RT_TIMER_LANES 4

/* Timers armed with the same duration, earliest (head) first. */
struct rt_timer_lane {
	struct rt_timer *head, *tail;
	uint32_t n;
	uint32_t ms;
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
	struct rt_timer_lane lanes[RT_TIMER_LANES];
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
/* (Re)arm @p t to fire @p ms milliseconds from rt_timers_now(), in the
 * heap: O(log n). 0 or NRF_ENOMEM. */
int rt_timer_arm(struct rt_timers *ts, struct rt_timer *t, uint32_t ms);
/* The same, for timers armed very often with the same few durations
 * (per try, per request): in the lane of @p ms, O(1) to arm and to
 * cancel; in the heap when no lane holds @p ms and none is free. Same
 * firing order and return values as rt_timer_arm(). */
int rt_timer_arm_lane(struct rt_timers *ts, struct rt_timer *t, uint32_t ms);
/* Arm at an absolute deadline (ns); always in the heap. */
int rt_timer_arm_at(struct rt_timers *ts, struct rt_timer *t, uint64_t at_ns);
/* rt_timer_cancel() of an armed timer (t->idx != 0). */
void rt_timer_cancel_armed(struct rt_timers *ts, struct rt_timer *t);
/* Disarm; no-op when not armed. Inline: of the ~6 cancels of a forwarded
 * request most find the timer disarmed already (measured). */
static inline void
rt_timer_cancel(struct rt_timers *ts, struct rt_timer *t)
{
	if (t->idx != 0)
		rt_timer_cancel_armed(ts, t);
}
/* Milliseconds to the next deadline from @p now_ns (rounded up), at most
 * @p cap_ms; 0 when one is due. */
int rt_timer_next_ms(const struct rt_timers *ts, uint64_t now_ns, int cap_ms);
/* Run every timer due at @p now_ns, earliest first. */
void rt_timers_run(struct rt_timers *ts, uint64_t now_ns);
void rt_timers_fini(struct rt_timers *ts);
/* The earliest armed timer (heap or lane), NULL when none is armed. */
struct rt_timer *rt_timers_first(const struct rt_timers *ts);
/* Every armed deadline @p d ns earlier (no deadline may be below @p d);
 * the order stays. For tests that make virtual time pass. */
void rt_timers_shift(struct rt_timers *ts, uint64_t d);

#ifdef __cplusplus
}
#endif
#endif /* NRF_RT_TIMER_H */
