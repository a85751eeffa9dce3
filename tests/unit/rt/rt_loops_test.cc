/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the workers' loop tables (lib/rt/rt_loops.c): paths
 * normalised as identities compare, one entry per path and kind, spellings
 * and workers merged when read, long paths keeping their last members, and
 * the bound: 100 000 distinct paths keep a table at its size, the least
 * recently seen giving way, every drop counted, the index still finding
 * every entry it holds; a reader on another thread never sees an entry
 * half written. The request path is covered by
 * tests/integration/test_loops.py.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nrf_rt.h"
#include "rt_loops_glue.h"

namespace {

struct Read {
	std::vector<nrf_rt_loop> v;
	uint64_t drops = 0;
};

Read
ReadAll(std::vector<const rt_worker *> ws)
{
	nrf_rt_loop *v = nullptr;
	size_t n = 0;
	Read r;

	EXPECT_EQ(rtl_read(ws.data(), ws.size(), &v, &n, &r.drops), 0);
	r.v.assign(v, v + n);
	free(v);
	return r;
}

const nrf_rt_loop *
Find(const Read &r, int kind, const std::string &path, const std::string &skipped = "")
{
	for (const auto &e : r.v)
		if (e.kind == kind && path == e.path && skipped == e.skipped)
			return &e;
	return nullptr;
}

class LoopTable : public ::testing::Test {
protected:
	void SetUp() override { w_ = rtl_worker(); ASSERT_NE(w_, nullptr); }
	void TearDown() override { rtl_free(w_); }

	void
	Note(int kind, std::vector<std::string> lines, int peer = -1)
	{
		std::vector<const char *> p;

		for (const auto &l : lines)
			p.push_back(l.c_str());
		rtl_note(w_, kind, p.data(), p.size(), peer);
	}

	rt_worker *w_ = nullptr;
};

TEST_F(LoopTable, OnePathCountedOnceNormalised)
{
	for (int i = 0; i < 3; i++)
		Note(NRF_RT_LOOP_DETECTED, {"2.0 NRF-A.Example.:08080", "HTTP/2.0 nrf-e:8080 (x y)",
			"2.0 nrf-a.example:8080"});
	Read r = ReadAll({w_});
	ASSERT_EQ(r.v.size(), 1u);
	EXPECT_STREQ(r.v[0].path, "nrf-a.example:8080 nrf-e:8080 nrf-a.example:8080");
	EXPECT_EQ(r.v[0].hops, 3);
	EXPECT_EQ(r.v[0].count, 3u);
	EXPECT_FALSE(r.v[0].truncated);
	EXPECT_LE(r.v[0].first_ns, r.v[0].last_ns);
	EXPECT_EQ(r.drops, 0u);
}

TEST_F(LoopTable, SpellingsMergeKindsDoNot)
{
	/* the same members on one line and on two: two keys, one path */
	Note(NRF_RT_LOOP_DETECTED, {"2.0 a:1, 2.0 b:2"});
	Note(NRF_RT_LOOP_DETECTED, {"2.0 a:1", "2.0 B.:002"});
	Note(NRF_RT_LOOP_HOP_LIMIT, {"2.0 a:1", "2.0 b:2"});
	Read r = ReadAll({w_});
	ASSERT_EQ(r.v.size(), 2u);
	const nrf_rt_loop *d = Find(r, NRF_RT_LOOP_DETECTED, "a:1 b:2");
	ASSERT_NE(d, nullptr);
	EXPECT_EQ(d->count, 2u);
	const nrf_rt_loop *h = Find(r, NRF_RT_LOOP_HOP_LIMIT, "a:1 b:2");
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(h->count, 1u);
}

TEST_F(LoopTable, PreventedKeyedByPeer)
{
	/* no snapshot in this worker: the skipped peer's name stays "", but
	 * two peers are two keys, merged by path when read */
	Note(NRF_RT_LOOP_PREVENTED, {"2.0 e:1"}, 0);
	Note(NRF_RT_LOOP_PREVENTED, {"2.0 e:1"}, 0);
	Note(NRF_RT_LOOP_PREVENTED, {"2.0 e:1"}, 3);
	Read r = ReadAll({w_});
	ASSERT_EQ(r.v.size(), 1u);
	EXPECT_EQ(r.v[0].count, 3u);
	EXPECT_EQ(r.v[0].kind, NRF_RT_LOOP_PREVENTED);
}

TEST_F(LoopTable, WorkersMerged)
{
	rt_worker *w2 = rtl_worker();
	ASSERT_NE(w2, nullptr);
	const char *l[] = {"2.0 x:9", "2.0 y:9"};

	Note(NRF_RT_LOOP_DETECTED, {"2.0 x:9", "2.0 y:9"});
	rtl_note(w2, NRF_RT_LOOP_DETECTED, l, 2, -1);
	rtl_note(w2, NRF_RT_LOOP_DETECTED, l, 2, -1);
	Read r = ReadAll({w_, w2});
	ASSERT_EQ(r.v.size(), 1u);
	EXPECT_EQ(r.v[0].count, 3u);
	rtl_free(w2);
}

TEST_F(LoopTable, LongPathKeepsItsLastMembers)
{
	std::vector<std::string> lines;

	for (int i = 0; i < 60; i++)
		lines.push_back("2.0 nrf-" + std::to_string(i) + ".segment.example.com:8080");
	Note(NRF_RT_LOOP_HOP_LIMIT, lines);
	Read r = ReadAll({w_});
	ASSERT_EQ(r.v.size(), 1u);
	std::string p = r.v[0].path;
	EXPECT_TRUE(r.v[0].truncated);
	EXPECT_LT(p.size(), (size_t)NRF_RT_LOOP_PATH_MAX);
	EXPECT_EQ(p.substr(p.size() - 31), "nrf-59.segment.example.com:8080");
	EXPECT_EQ(p.find("nrf-0."), std::string::npos);
	EXPECT_NE(p[0], ' ');
	EXPECT_GT(r.v[0].hops, 5);
	EXPECT_LT(r.v[0].hops, 60);
}

TEST_F(LoopTable, MalformedLineIsOneUnknownMember)
{
	Note(NRF_RT_LOOP_DETECTED, {"2.0 a:1", "2.0 host:", "2.0 a:1"});
	Read r = ReadAll({w_});
	ASSERT_EQ(r.v.size(), 1u);
	EXPECT_STREQ(r.v[0].path, "a:1 ? a:1");
}

TEST_F(LoopTable, HundredThousandPathsStayWithinTheBound)
{
	const int n = 100000;
	const std::vector<std::string> hot = {"2.0 hot-a:8080", "2.0 hot-e:8080"};

	for (int i = 0; i < n; i++) {
		Note(NRF_RT_LOOP_DETECTED, {"2.0 fake-" + std::to_string(i) + ":8080"});
		if (i % 50 == 0)
			Note(NRF_RT_LOOP_DETECTED, hot); /* seen often: never the least recent */
	}
	Read r = ReadAll({w_});
	EXPECT_EQ(r.v.size(), (size_t)NRF_RT_LOOP_ENTRIES);
	/* every new path past the first 127 (the hot one holds a place) */
	EXPECT_EQ(r.drops, (uint64_t)(n + 1 - NRF_RT_LOOP_ENTRIES));
	const nrf_rt_loop *h = Find(r, NRF_RT_LOOP_DETECTED, "hot-a:8080 hot-e:8080");
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(h->count, (uint64_t)(n / 50));
	/* the most recent ones are kept, the oldest are gone */
	EXPECT_NE(Find(r, NRF_RT_LOOP_DETECTED, "fake-" + std::to_string(n - 1) + ":8080"),
		nullptr);
	EXPECT_EQ(Find(r, NRF_RT_LOOP_DETECTED, "fake-0:8080"), nullptr);
	/* the index finds every entry it holds: seen again, nothing drops */
	for (const auto &e : r.v) {
		if (std::string(e.path).rfind("fake-", 0) == 0)
			Note(NRF_RT_LOOP_DETECTED, {std::string("2.0 ") + e.path});
	}
	Read r2 = ReadAll({w_});
	EXPECT_EQ(r2.drops, r.drops);
	EXPECT_EQ(r2.v.size(), (size_t)NRF_RT_LOOP_ENTRIES);
	for (const auto &e : r2.v) {
		if (std::string(e.path).rfind("fake-", 0) == 0) {
			EXPECT_EQ(e.count, 2u) << e.path;
		}
	}
	/* memory: fixed, allocated with the worker */
	EXPECT_LE(rtl_table_bytes(), 160u * 1024u);
}

TEST_F(LoopTable, ReadWhileTheWorkerReplacesEntries)
{
	/* The reader never sees an entry half written: the kind always
	 * matches the path it was stored with (the path names its kind). */
	std::atomic<bool> done{false};
	std::atomic<long> seen{0}, torn{0};
	std::thread reader([&] {
		while (!done.load()) {
			Read r = ReadAll({w_});
			for (const auto &e : r.v) {
				std::string p = e.path;
				if (p.size() < 3 || p[0] != 'k' || p[1] - '0' != e.kind || e.count == 0)
					torn++;
				seen++;
			}
		}
	});
	for (int i = 0; i < 60000; i++) {
		int kind = i % 3;
		Note(kind, {"2.0 k" + std::to_string(kind) + "-" + std::to_string(i) +
			".a-rather-long-name-to-copy.example.com:8080"});
	}
	done = true;
	reader.join();
	EXPECT_EQ(torn.load(), 0);
	EXPECT_GT(seen.load(), 0);
}

TEST(LoopMerge, EarliestKeepsItsClientAndId)
{
	nrf_rt_loop a = {}, b = {};
	nrf_rt_loop *v = nullptr;
	size_t n = 0, cap = 0;

	a.kind = b.kind = NRF_RT_LOOP_DETECTED;
	strcpy(a.path, "p:1 q:2");
	strcpy(b.path, "p:1 q:2");
	a.count = 2, a.first_ns = 50, a.last_ns = 60;
	b.count = 5, b.first_ns = 10, b.last_ns = 40;
	strcpy(a.client, "10.0.0.1:1");
	strcpy(b.client, "10.0.0.2:2");
	strcpy(b.rid, "r-b");
	ASSERT_EQ(nrf_rt_loops_merge(&v, &n, &cap, &a), 0);
	ASSERT_EQ(nrf_rt_loops_merge(&v, &n, &cap, &b), 0);
	ASSERT_EQ(n, 1u);
	EXPECT_EQ(v[0].count, 7u);
	EXPECT_EQ(v[0].first_ns, 10u);
	EXPECT_EQ(v[0].last_ns, 60u);
	EXPECT_STREQ(v[0].client, "10.0.0.2:2");
	EXPECT_STREQ(v[0].rid, "r-b");
	EXPECT_STREQ(nrf_rt_loop_kind_name(NRF_RT_LOOP_HOP_LIMIT), "hop-limit");
	free(v);
}

} /* namespace */
