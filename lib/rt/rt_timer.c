/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-worker timers: a binary min-heap of intrusive timers, deadlines kept
 * in the heap array, and lanes. Every request arms one or two timers and
 * nearly always cancels them before they fire, so arm and cancel must be
 * cheap. In the heap they are O(log n) with no allocation (the array only
 * grows, to the high-water mark of timers armed at once), but with a few
 * hundred requests in flight a cancel sifts the heap's last timer down
 * from the middle, twice per forwarded request (measured: a visible part
 * of the request's cost, docs/benchmarks.md). Those timers are armed with one of two durations (per-try,
 * per-request timeouts; rt_timer_arm_lane()); timers armed with the same
 * duration from a clock that never goes back are in deadline order when
 * appended, so a list per duration (a lane) is already sorted: append and
 * unlink are O(1), and the earliest is the head. The heap keeps the rest
 * (absolute deadlines, durations with no free lane).
 */
#include <stdlib.h>
#include <string.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "rt_timer.h"

void
rt_timer_init(struct rt_timer *t, rt_timer_fn fn)
{
	t->at = 0;
	t->idx = 0;
	t->lane = 0;
	t->fn = fn;
	t->prev = t->next = NULL;
}

static void
lane_unlink(struct rt_timers *ts, struct rt_timer *t)
{
	struct rt_timer_lane *l = &ts->lanes[t->lane];

	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		l->head = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	else
		l->tail = t->prev;
	t->prev = t->next = NULL;
	l->n--;
}

/* Append @p t (deadline set) to the lane of @p ms: false when no lane
 * holds that duration and none is free, or (a clock that went back) the
 * deadline would not be the lane's latest. */
static bool
lane_append(struct rt_timers *ts, struct rt_timer *t, uint32_t ms)
{
	struct rt_timer_lane *l = NULL;
	unsigned int i;

	for (i = 0; i < RT_TIMER_LANES; i++) {
		struct rt_timer_lane *c = &ts->lanes[i];

		if (c->n != 0 && c->ms == ms) {
			l = c;
			break;
		}
		if (c->n == 0 && l == NULL)
			l = c;
	}
	if (l == NULL)
		return false;
	if (l->n == 0) {
		l->ms = ms;
		l->head = t;
	} else {
		if (l->tail->at > t->at)
			return false;
		l->tail->next = t;
	}
	t->prev = l->tail;
	t->next = NULL;
	l->tail = t;
	l->n++;
	t->lane = (uint8_t)(l - ts->lanes);
	t->idx = RT_TIMER_IN_LANE;
	return true;
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
rt_timer_cancel_armed(struct rt_timers *ts, struct rt_timer *t)
{
	struct rt_timer_slot last;
	uint32_t i;

	if (t->idx == RT_TIMER_IN_LANE) {
		t->idx = 0;
		lane_unlink(ts, t);
		return;
	}
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

static __attribute__((noinline)) int
arm_lane_slow(struct rt_timers *ts, struct rt_timer *t, uint32_t ms)
{
	uint64_t at = rt_timers_now(ts) + (uint64_t)ms * 1000000ull;

	rt_timer_cancel(ts, t);
	t->at = at;
	if (lane_append(ts, t, ms))
		return 0;
	return rt_timer_arm_at(ts, t, at);
}

/*
 * The usual case first, calling nothing (so saving no registers): a
 * disarmed timer, the loop's clock already read this iteration, a lane of
 * that duration in use whose latest deadline is not after this one. The
 * rest (clock to read, timer to cancel, a lane to open, a clock that went
 * back) takes arm_lane_slow(), which decides as lane_append() always did
 * (two arms per forwarded request: the fast path is what they take).
 */
int
rt_timer_arm_lane(struct rt_timers *ts, struct rt_timer *t, uint32_t ms)
{
	uint64_t at;
	unsigned int i;

	if (NRF_UNLIKELY(t->idx != 0 || !ts->kept || ts->now == 0))
		return arm_lane_slow(ts, t, ms);
	at = ts->now + (uint64_t)ms * 1000000ull;
	for (i = 0; i < RT_TIMER_LANES; i++) {
		struct rt_timer_lane *l = &ts->lanes[i];

		if (l->n != 0 && l->ms == ms) {
			if (NRF_UNLIKELY(l->tail->at > at))
				break;
			t->at = at;
			t->prev = l->tail;
			t->next = NULL;
			l->tail->next = t;
			l->tail = t;
			l->n++;
			t->lane = (uint8_t)i;
			t->idx = RT_TIMER_IN_LANE;
			return 0;
		}
	}
	return arm_lane_slow(ts, t, ms);
}

/* The earliest armed timer (NULL: none), its deadline in @p at. */
static struct rt_timer *
earliest(const struct rt_timers *ts, uint64_t *at)
{
	struct rt_timer *e = NULL;
	unsigned int i;

	if (ts->n != 0) {
		e = ts->heap[0].t;
		*at = ts->heap[0].at;
	}
	for (i = 0; i < RT_TIMER_LANES; i++) {
		struct rt_timer *h = ts->lanes[i].head;

		if (ts->lanes[i].n != 0 && (e == NULL || h->at < *at)) {
			e = h;
			*at = h->at;
		}
	}
	return e;
}

struct rt_timer *
rt_timers_first(const struct rt_timers *ts)
{
	uint64_t at = 0;

	return earliest(ts, &at);
}

void
rt_timers_shift(struct rt_timers *ts, uint64_t d)
{
	unsigned int i;
	uint32_t k;

	for (k = 0; k < ts->n; k++) {
		ts->heap[k].at -= d;
		ts->heap[k].t->at -= d;
	}
	for (i = 0; i < RT_TIMER_LANES; i++)
		for (struct rt_timer *t = ts->lanes[i].head; t != NULL; t = t->next)
			t->at -= d;
}

int
rt_timer_next_ms(const struct rt_timers *ts, uint64_t now, int cap_ms)
{
	uint64_t at = 0, ms;

	if (earliest(ts, &at) == NULL)
		return cap_ms;
	if (at <= now)
		return 0;
	ms = (at - now + 999999ull) / 1000000ull; /* round up: never wake early */
	return ms < (uint64_t)cap_ms ? (int)ms : cap_ms;
}

void
rt_timers_run(struct rt_timers *ts, uint64_t now)
{
	struct rt_timer *t;
	uint64_t at = 0;

	while ((t = earliest(ts, &at)) != NULL && at <= now) {
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
	/* timers left in lanes belong to their owners, as in the heap */
	memset(ts->lanes, 0, sizeof(ts->lanes));
}
