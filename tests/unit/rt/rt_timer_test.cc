/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/rt/rt_timer.c: the per-worker timer heap. */
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "rt_timer.h"

namespace {

struct Tm {
	rt_timer t;
	int id;
};

struct Fired {
	std::vector<int> ids;
};

void
record(rt_timer *t, void *arg)
{
	Tm *tm = reinterpret_cast<Tm *>(t); /* t is the first member */
	static_cast<Fired *>(arg)->ids.push_back(tm->id);
}

struct Heap {
	rt_timers ts = {};
	Fired fired;
	Heap() { ts.arg = &fired; }
	~Heap() { rt_timers_fini(&ts); }
};

} // namespace

TEST(RtTimer, FiresDueTimersInDeadlineOrder)
{
	Heap h;
	Tm a{{}, 1}, b{{}, 2}, c{{}, 3};

	for (Tm *t : {&a, &b, &c})
		rt_timer_init(&t->t, record);
	ASSERT_EQ(rt_timer_arm_at(&h.ts, &a.t, 30), 0);
	ASSERT_EQ(rt_timer_arm_at(&h.ts, &b.t, 10), 0);
	ASSERT_EQ(rt_timer_arm_at(&h.ts, &c.t, 20), 0);
	rt_timers_run(&h.ts, 25);
	EXPECT_EQ(h.fired.ids, (std::vector<int>{2, 3}));
	EXPECT_EQ(b.t.idx, 0u);
	rt_timers_run(&h.ts, 35);
	EXPECT_EQ(h.fired.ids, (std::vector<int>{2, 3, 1}));
	EXPECT_EQ(h.ts.n, 0u);
}

TEST(RtTimer, CancelFromAnywhereKeepsTheHeapOrdered)
{
	Heap h;
	std::vector<Tm> tms(500);
	std::mt19937 rng(42);
	std::vector<int> expect;

	for (size_t i = 0; i < tms.size(); i++) {
		tms[i].id = (int)i;
		rt_timer_init(&tms[i].t, record);
		ASSERT_EQ(rt_timer_arm_at(&h.ts, &tms[i].t, 1000 + rng() % 100000), 0);
	}
	for (size_t i = 0; i < tms.size(); i += 3)
		rt_timer_cancel(&h.ts, &tms[i].t);
	rt_timer_cancel(&h.ts, &tms[0].t); /* twice: no-op */
	for (size_t i = 0; i < tms.size(); i++)
		if (i % 3 != 0)
			expect.push_back((int)i);
	std::stable_sort(expect.begin(), expect.end(),
		[&](int x, int y) { return tms[x].t.at < tms[y].t.at; });
	rt_timers_run(&h.ts, UINT64_MAX);
	ASSERT_EQ(h.fired.ids.size(), expect.size());
	for (size_t i = 1; i < h.fired.ids.size(); i++)
		EXPECT_LE(tms[h.fired.ids[i - 1]].t.at, tms[h.fired.ids[i]].t.at);
}

TEST(RtTimer, RearmMovesTheDeadline)
{
	Heap h;
	Tm a{{}, 1}, b{{}, 2};

	rt_timer_init(&a.t, record);
	rt_timer_init(&b.t, record);
	rt_timer_arm_at(&h.ts, &a.t, 10);
	rt_timer_arm_at(&h.ts, &b.t, 20);
	rt_timer_arm_at(&h.ts, &a.t, 30);
	EXPECT_EQ(h.ts.n, 2u);
	rt_timers_run(&h.ts, 25);
	EXPECT_EQ(h.fired.ids, (std::vector<int>{2}));
}

TEST(RtTimer, NextTimeoutRoundsUpAndIsCapped)
{
	Heap h;
	Tm a{{}, 1};

	EXPECT_EQ(rt_timer_next_ms(&h.ts, 0, 1000), 1000);
	rt_timer_init(&a.t, record);
	rt_timer_arm_at(&h.ts, &a.t, 5000001); /* 5 ms + 1 ns */
	EXPECT_EQ(rt_timer_next_ms(&h.ts, 0, 1000), 6);
	EXPECT_EQ(rt_timer_next_ms(&h.ts, 0, 3), 3);
	EXPECT_EQ(rt_timer_next_ms(&h.ts, 5000001, 1000), 0);
}

namespace {
struct Chain {
	rt_timer t;
	rt_timer *other;
	rt_timers *ts;
	int fired;
};

void
cancel_other(rt_timer *t, void *)
{
	Chain *c = reinterpret_cast<Chain *>(t);
	c->fired++;
	rt_timer_cancel(c->ts, c->other);
}
} // namespace

TEST(RtTimer, CallbackMayCancelAnotherDueTimer)
{
	rt_timers ts = {};
	Chain a{}, b{};

	a.ts = b.ts = &ts;
	a.other = &b.t;
	b.other = &a.t;
	rt_timer_init(&a.t, cancel_other);
	rt_timer_init(&b.t, cancel_other);
	rt_timer_arm_at(&ts, &a.t, 10);
	rt_timer_arm_at(&ts, &b.t, 11);
	rt_timers_run(&ts, 100);
	EXPECT_EQ(a.fired, 1);
	EXPECT_EQ(b.fired, 0);
	rt_timers_fini(&ts);
}

/* Lanes (rt_timer_arm_lane()): timers of the same duration in FIFO order,
 * mixed with heap timers, fire in deadline order all the same. The clock is
 * the owner's kept one (ts.now), set by hand. */
TEST(RtTimer, LaneTimersFireInDeadlineOrderWithHeapTimers)
{
	Heap h;
	std::vector<Tm> tms(300);
	std::mt19937 rng(7);

	h.ts.kept = true;
	for (size_t i = 0; i < tms.size(); i++) {
		tms[i].id = (int)i;
		rt_timer_init(&tms[i].t, record);
		h.ts.now = 1000000 + i * 1000; /* the clock moves on */
		switch (rng() % 3) {
		case 0:
			ASSERT_EQ(rt_timer_arm_lane(&h.ts, &tms[i].t, 5), 0);
			break;
		case 1:
			ASSERT_EQ(rt_timer_arm_lane(&h.ts, &tms[i].t, 2), 0);
			break;
		default:
			ASSERT_EQ(rt_timer_arm_at(&h.ts, &tms[i].t, 1000000 + rng() % 8000000), 0);
			break;
		}
		EXPECT_NE(tms[i].t.idx, 0u); /* armed, wherever it is */
	}
	/* cancel from anywhere: lane heads, tails, middles, heap */
	for (size_t i = 0; i < tms.size(); i += 4)
		rt_timer_cancel(&h.ts, &tms[i].t);
	rt_timer_cancel(&h.ts, &tms[0].t); /* twice: no-op */
	/* re-arm some lane timers: they move to their lane's tail */
	h.ts.now = 1000000 + tms.size() * 1000;
	for (size_t i = 1; i < tms.size(); i += 10)
		ASSERT_EQ(rt_timer_arm_lane(&h.ts, &tms[i].t, 2), 0);
	/* the first due deadline is what rt_timer_next_ms() sees */
	uint64_t first = UINT64_MAX;
	size_t left = 0;
	for (size_t i = 0; i < tms.size(); i++)
		if (tms[i].t.idx != 0) {
			first = std::min(first, tms[i].t.at);
			left++;
		}
	EXPECT_EQ(rt_timer_next_ms(&h.ts, first - 1000000, 1000), 1);
	EXPECT_EQ(rt_timer_next_ms(&h.ts, first, 1000), 0);
	rt_timers_run(&h.ts, 1000000 + 3000 * 1000);
	size_t early = h.fired.ids.size();
	for (int id : h.fired.ids)
		EXPECT_LE(tms[id].t.at, 1000000u + 3000 * 1000);
	rt_timers_run(&h.ts, UINT64_MAX);
	ASSERT_EQ(h.fired.ids.size(), left);
	EXPECT_GT(early, 0u);
	EXPECT_LT(early, left);
	for (size_t i = 1; i < h.fired.ids.size(); i++)
		EXPECT_LE(tms[h.fired.ids[i - 1]].t.at, tms[h.fired.ids[i]].t.at);
	for (size_t i = 0; i < tms.size(); i++)
		EXPECT_EQ(tms[i].t.idx, 0u);
	EXPECT_EQ(rt_timer_next_ms(&h.ts, 0, 1000), 1000);
}

/* More durations than lanes: the rest go to the heap, and a lane that
 * empties takes another duration. */
TEST(RtTimer, DurationsBeyondTheLanesUseTheHeap)
{
	Heap h;
	std::vector<Tm> tms(RT_TIMER_LANES + 2);

	h.ts.kept = true;
	h.ts.now = 1000;
	for (size_t i = 0; i < tms.size(); i++) {
		tms[i].id = (int)i;
		rt_timer_init(&tms[i].t, record);
		ASSERT_EQ(rt_timer_arm_lane(&h.ts, &tms[i].t, (uint32_t)(10 + i)), 0);
	}
	for (size_t i = 0; i < tms.size(); i++)
		EXPECT_EQ(tms[i].t.idx == RT_TIMER_IN_LANE, i < RT_TIMER_LANES) << i;
	EXPECT_EQ(h.ts.n, 2u);
	rt_timer_cancel(&h.ts, &tms[0].t); /* its lane is free again */
	Tm x{{}, 99};
	rt_timer_init(&x.t, record);
	ASSERT_EQ(rt_timer_arm_lane(&h.ts, &x.t, 1), 0);
	EXPECT_EQ(x.t.idx, RT_TIMER_IN_LANE);
	rt_timers_run(&h.ts, UINT64_MAX);
	EXPECT_EQ(h.fired.ids, (std::vector<int>{99, 1, 2, 3, 4, 5}));
}

/* A callback may re-arm its own timer in its lane (periodic use). */
namespace {
struct Again {
	rt_timer t;
	rt_timers *ts;
	int fired;
};

void
again(rt_timer *t, void *)
{
	Again *a = reinterpret_cast<Again *>(t);
	if (++a->fired < 3)
		rt_timer_arm_lane(a->ts, &a->t, 0);
}
} // namespace

TEST(RtTimer, LaneTimerRearmedFromItsCallback)
{
	rt_timers ts = {};
	Again a{};

	ts.kept = true;
	ts.now = 5;
	a.ts = &ts;
	rt_timer_init(&a.t, again);
	ASSERT_EQ(rt_timer_arm_lane(&ts, &a.t, 0), 0);
	rt_timers_run(&ts, 5);
	EXPECT_EQ(a.fired, 3);
	EXPECT_EQ(a.t.idx, 0u);
	rt_timers_fini(&ts);
}

/* A clock that went back (the kept time of an earlier iteration set by
 * hand): a deadline before the lane's latest goes to the heap, so the lane
 * stays sorted, and both fire in deadline order. rt_timer_arm_lane()'s
 * fast path and its slow path decide alike. */
TEST(RtTimer, DeadlineBeforeTheLanesLatestGoesToTheHeap)
{
	Heap h;
	Tm a{{}, 1}, b{{}, 2}, c{{}, 3};

	h.ts.kept = true;
	rt_timer_init(&a.t, record);
	rt_timer_init(&b.t, record);
	rt_timer_init(&c.t, record);
	h.ts.now = 50000000;
	ASSERT_EQ(rt_timer_arm_lane(&h.ts, &a.t, 5), 0);
	EXPECT_EQ(a.t.idx, RT_TIMER_IN_LANE);
	h.ts.now = 1000; /* back */
	ASSERT_EQ(rt_timer_arm_lane(&h.ts, &b.t, 5), 0);
	EXPECT_NE(b.t.idx, 0u);
	EXPECT_NE(b.t.idx, RT_TIMER_IN_LANE);
	h.ts.now = 60000000; /* on again: the lane takes it */
	ASSERT_EQ(rt_timer_arm_lane(&h.ts, &c.t, 5), 0);
	EXPECT_EQ(c.t.idx, RT_TIMER_IN_LANE);
	/* armed again while armed: cancelled first (slow path) */
	ASSERT_EQ(rt_timer_arm_lane(&h.ts, &a.t, 5), 0);
	EXPECT_EQ(a.t.idx, RT_TIMER_IN_LANE);
	rt_timers_run(&h.ts, UINT64_MAX);
	EXPECT_EQ(h.fired.ids, (std::vector<int>{2, 3, 1}));
}
