/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of nrf_rt_peer_stats_merge() (lib/rt/rt.c): how the upstream
 * counters of several runtimes (DPDK worker processes) are summed.
 */
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "nrf_err.h"
#include "nrf_rt.h"

namespace {

nrf_rt_peer_stats
Peer(const char *name, bool local, uint64_t tries)
{
	nrf_rt_peer_stats p = {};

	snprintf(p.name, sizeof(p.name), "%s", name);
	p.local = local;
	p.tries = tries;
	return p;
}

} // namespace

TEST(RtPeerStats, MergeSumsTheSameUpstreamAndKeepsRolesApart)
{
	nrf_rt_peer_stats *v = nullptr;
	size_t n = 0, cap = 0;
	nrf_rt_peer_stats a = Peer("nrf-e.test:8080", false, 3);
	nrf_rt_peer_stats b = Peer("nrf-e.test:8080", false, 4);
	nrf_rt_peer_stats l = Peer("nrf-e.test:8080", true, 5);

	a.loop_prevented = 1;
	a.fail[NRF_RT_FAIL_RESET] = 2;
	a.codes[0] = 200;
	a.code_n[0] = 3;
	a.n_codes = 1;
	b.loop_prevented = 2;
	b.fail[NRF_RT_FAIL_RESET] = 1;
	b.codes[0] = 404;
	b.code_n[0] = 1;
	b.codes[1] = 200;
	b.code_n[1] = 3;
	b.n_codes = 2;
	b.code_other = 7;
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &a), 0);
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &l), 0);
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &b), 0);
	ASSERT_EQ(n, 2u);
	EXPECT_FALSE(v[0].local);
	EXPECT_EQ(v[0].tries, 7u);
	EXPECT_EQ(v[0].loop_prevented, 3u);
	EXPECT_EQ(v[0].fail[NRF_RT_FAIL_RESET], 3u);
	EXPECT_EQ(v[0].code_other, 7u);
	ASSERT_EQ(v[0].n_codes, 2u);
	EXPECT_EQ(v[0].codes[0], 200);
	EXPECT_EQ(v[0].code_n[0], 6u);
	EXPECT_EQ(v[0].codes[1], 404);
	EXPECT_EQ(v[0].code_n[1], 1u);
	EXPECT_TRUE(v[1].local);
	EXPECT_EQ(v[1].tries, 5u);
	free(v);
}

TEST(RtPeerStats, MergeCountsCodesBeyondTheTableAsOther)
{
	nrf_rt_peer_stats *v = nullptr;
	size_t n = 0, cap = 0;
	nrf_rt_peer_stats a = Peer("p:1", false, 0), b = Peer("p:1", false, 0);

	for (unsigned int k = 0; k < NRF_RT_PEER_CODES; k++) {
		a.codes[k] = (uint16_t)(200 + k);
		a.code_n[k] = 1;
		b.codes[k] = (uint16_t)(400 + k);
		b.code_n[k] = 2;
	}
	a.n_codes = b.n_codes = NRF_RT_PEER_CODES;
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &a), 0);
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &b), 0);
	ASSERT_EQ(n, 1u);
	EXPECT_EQ(v[0].n_codes, (unsigned int)NRF_RT_PEER_CODES);
	EXPECT_EQ(v[0].code_other, 2u * NRF_RT_PEER_CODES);
	free(v);
}

TEST(RtPeerStats, MergeOfManyUpstreamsGrowsTheArray)
{
	nrf_rt_peer_stats *v = nullptr;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 100; i++) {
		char name[32];

		snprintf(name, sizeof(name), "nrf-%d.test:8080", i);
		nrf_rt_peer_stats p = Peer(name, false, (uint64_t)i);
		ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &p), 0);
	}
	ASSERT_EQ(n, 100u);
	EXPECT_GE(cap, 100u);
	EXPECT_EQ(v[99].tries, 99u);
	EXPECT_STREQ(v[42].name, "nrf-42.test:8080");
	free(v);
}

/* Buckets (us): 500 1000 2500 5000 10000 25000 50000 100000 ... +Inf */
TEST(RtLatQuantile, EmptyHistogramHasNoQuantile)
{
	uint64_t b[NRF_RT_LAT_BUCKETS + 1] = {};

	EXPECT_LT(nrf_rt_lat_quantile(b, 0.5), 0.0);
}

TEST(RtLatQuantile, InterpolatesInsideTheBucketThatHoldsTheRank)
{
	uint64_t b[NRF_RT_LAT_BUCKETS + 1] = {};

	b[5] = 100; /* 10..25 ms */
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.5), 0.0175, 1e-9);
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.9), 0.0235, 1e-9);
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.99), 0.02485, 1e-9);
	b[0] = 100; /* 0..0.5 ms: the median is now the top of that bucket */
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.5), 0.0005, 1e-9);
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.25), 0.00025, 1e-9);
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.75), 0.0175, 1e-9);
}

TEST(RtLatQuantile, SkipsEmptyBucketsAndCapsInfAtTheLargestBound)
{
	uint64_t b[NRF_RT_LAT_BUCKETS + 1] = {};

	b[1] = 1;                  /* 0.5..1 ms */
	b[NRF_RT_LAT_BUCKETS] = 9; /* above 10 s */
	EXPECT_NEAR(nrf_rt_lat_quantile(b, 0.05), 0.00075, 1e-9);
	EXPECT_DOUBLE_EQ(nrf_rt_lat_quantile(b, 0.5), 10.0);
	EXPECT_DOUBLE_EQ(nrf_rt_lat_quantile(b, 0.99), 10.0);
}

TEST(RtPeerStats, MergeSumsTheGaugesAndKeepsTheEarliestProbe)
{
	nrf_rt_peer_stats *v = nullptr;
	size_t n = 0, cap = 0;
	nrf_rt_peer_stats a = Peer("nrf-e.test:8080", false, 0);
	nrf_rt_peer_stats b = Peer("nrf-e.test:8080", false, 0);

	a.conns = 2;
	a.inflight = 5;
	a.queued = 1;
	a.next_probe_ns = 900;
	b.conns = 1;
	b.inflight = 3;
	b.workers_probing = 1;
	b.next_probe_ns = 700;
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &a), 0);
	ASSERT_EQ(nrf_rt_peer_stats_merge(&v, &n, &cap, &b), 0);
	ASSERT_EQ(n, 1u);
	EXPECT_EQ(v[0].conns, 3u);
	EXPECT_EQ(v[0].inflight, 8u);
	EXPECT_EQ(v[0].queued, 1u);
	EXPECT_EQ(v[0].workers_probing, 1u);
	EXPECT_EQ(v[0].next_probe_ns, 700u);
	free(v);
}

TEST(RtLatBucket, AgreesWithALinearSearchOfTheBoundsAtAndAroundEveryBound)
{
	static const uint64_t us[NRF_RT_LAT_BUCKETS] = NRF_RT_LAT_BOUNDS_US;
	std::vector<uint64_t> ns = {0, 1, UINT64_MAX - 1, UINT64_MAX};

	for (unsigned int i = 0; i < NRF_RT_LAT_BUCKETS; i++)
		for (int64_t d = -2; d <= 2; d++)
			ns.push_back((uint64_t)((int64_t)(us[i] * 1000u) + d));
	for (uint64_t v = 1; v < 30000000000ull; v = v * 3 / 2 + 1)
		ns.push_back(v);
	for (uint64_t v : ns) {
		unsigned int b = 0;

		while (b < NRF_RT_LAT_BUCKETS && v > us[b] * 1000u)
			b++;
		EXPECT_EQ(nrf_rt_lat_bucket(v), b) << v << " ns";
	}
}
