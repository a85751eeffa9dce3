/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker timers: a binary min-heap of intrusive timers, deadlines kept
 * in the heap array. Every request
 * arms one or two timers and nearly always cancels them before they fire,
 * so arm and cancel must be cheap (O(log n), no allocation: the heap array
 * only grows, to the high-water mark of timers armed at once).
 */
#include <stdlib.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "rt_timer.h"

void
rt_timer_init(struct rt_timer *t, rt_timer_fn fn)
{
	t->at = 0;
	t->idx = 0;
	t->fn = fn;
}

static inline void
heap_set(struct rt_timers *ts, uint32_t i, struct rt_timer_slot v)
{
	ts->heap[i] = v;
	v.t->idx = i + 1;
}

static void
sift_up(struct rt_timers *ts, uint32_t i)
{
	struct rt_timer_slot v = ts->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (ts->heap[parent].at <= v.at)
			break;
		heap_set(ts, i, ts->heap[parent]);
		i = parent;
	}
	heap_set(ts, i, v);
}

static void
sift_down(struct rt_timers *ts, uint32_t i)
{
	struct rt_timer_slot v = ts->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		uint64_t at = v.at;

		if (l < ts->n && ts->heap[l].at < at) {
			m = l;
			at = ts->heap[l].at;
		}
		if (r < ts->n && ts->heap[r].at < at)
			m = r;
		if (m == i)
			break;
		heap_set(ts, i, ts->heap[m]);
		i = m;
	}
	heap_set(ts, i, v);
}

void
rt_timer_cancel(struct rt_timers *ts, struct rt_timer *t)
{
	struct rt_timer_slot last;
	uint32_t i;

	if (t->idx == 0)
		return;
	i = t->idx - 1;
	t->idx = 0;
	last = ts->heap[--ts->n];
	if (last.t == t)
		return;
	ts->heap[i] = last;
	last.t->idx = i + 1;
	if (i > 0 && ts->heap[(i - 1) / 2].at > last.at)
		sift_up(ts, i);
	else
		sift_down(ts, i);
}

int
rt_timer_arm_at(struct rt_timers *ts, struct rt_timer *t, uint64_t at_ns)
{
	rt_timer_cancel(ts, t);
	if (ts->n == ts->cap) {
		uint32_t cap = ts->cap ? ts->cap * 2 : 1024;
		struct rt_timer_slot *h = realloc(ts->heap, cap * sizeof(*h));

		if (h == NULL)
			return NRF_ENOMEM;
		ts->heap = h;
		ts->cap = cap;
	}
	t->at = at_ns;
	ts->heap[ts->n].at = at_ns;
	ts->heap[ts->n].t = t;
	t->idx = ts->n + 1;
	ts->n++;
	sift_up(ts, ts->n - 1);
	return 0;
}

int
rt_timer_arm(struct rt_timers *ts, struct rt_timer *t, uint32_t ms)
{
	return rt_timer_arm_at(ts, t, rt_timers_now(ts) + (uint64_t)ms * 1000000ull);
}

int
rt_timer_next_ms(const struct rt_timers *ts, uint64_t now, int cap_ms)
{
	uint64_t at, ms;

	if (ts->n == 0)
		return cap_ms;
	at = ts->heap[0].at;
	if (at <= now)
		return 0;
	ms = (at - now + 999999ull) / 1000000ull; /* round up: never wake early */
	return ms < (uint64_t)cap_ms ? (int)ms : cap_ms;
}

void
rt_timers_run(struct rt_timers *ts, uint64_t now)
{
	while (ts->n > 0 && ts->heap[0].at <= now) {
		struct rt_timer *t = ts->heap[0].t;

		rt_timer_cancel(ts, t);
		t->fn(t, ts->arg);
	}
}

void
rt_timers_fini(struct rt_timers *ts)
{
	free(ts->heap);
	ts->heap = NULL;
	ts->n = ts->cap = 0;
}
