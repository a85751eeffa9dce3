// SPDX-License-Identifier: BSD-3-Clause
// GET /dpdk: api_dpdk_render() of given figures.
#include <gtest/gtest.h>

#include <jansson.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "api_int.h"

namespace {

struct Doc {
	json_t *j = nullptr;
	explicit Doc(char *text)
	{
		if (text != nullptr)
			j = json_loads(text, 0, nullptr);
		free(text);
	}
	~Doc() { json_decref(j); }
};

json_int_t
At(json_t *o, const char *a, const char *b = nullptr)
{
	json_t *v = json_object_get(o, a);
	if (b != nullptr)
		v = json_object_get(v, b);
	return json_integer_value(v);
}

TEST(ApiDpdk, KernelTransportHasNoWorkersAndNoPort)
{
	Doc d(api_dpdk_render(nullptr, 0, nullptr, 0));
	ASSERT_NE(d.j, nullptr);
	EXPECT_STREQ(json_string_value(json_object_get(d.j, "transport")), "kernel");
	EXPECT_EQ(json_array_size(json_object_get(d.j, "workers")), 0u);
	EXPECT_TRUE(json_is_null(json_object_get(d.j, "port")));
}

TEST(ApiDpdk, PolledWorkersPortAndExtendedCounters)
{
	nrf_rt_dp_stats dp[2];
	memset(dp, 0, sizeof(dp));
	dp[1].polled = true;
	dp[1].lcore = 3;
	dp[1].lc.cycles = 1000;
	dp[1].lc.busy_cycles = 250;
	dp[1].lc.rx_frames = 7;
	dp[1].lc.syn_cookies_sent = 99892;
	dp[1].lc.syn_cookies_ok = 20;
	dp[1].lc.challenge_limited = 5;
	dp[1].lc.orphans_reset = 2304;
	dp[1].lc.pcb_syn_rcvd = 128;
	dp[1].port.imissed = 11;
	nrf_tp_dpdk_xstat xs[2];
	memset(xs, 0, sizeof(xs));
	strcpy(xs[0].name, "rx_good_packets");
	xs[0].value = 42;
	strcpy(xs[1].name, "rx_missed_errors");
	xs[1].value = 11;
	Doc d(api_dpdk_render(dp, 2, xs, 2));
	ASSERT_NE(d.j, nullptr);
	EXPECT_STREQ(json_string_value(json_object_get(d.j, "transport")), "dpdk");
	json_t *ws = json_object_get(d.j, "workers");
	ASSERT_EQ(json_array_size(ws), 1u); // the unpolled one is left out
	json_t *w = json_array_get(ws, 0);
	EXPECT_EQ(At(w, "worker"), 1);
	EXPECT_EQ(At(w, "lcore"), 3);
	EXPECT_DOUBLE_EQ(json_real_value(json_object_get(w, "busyShare")), 0.25);
	EXPECT_EQ(At(w, "frames", "rx"), 7);
	EXPECT_EQ(At(w, "synCookies", "sent"), 99892);
	EXPECT_EQ(At(w, "synCookies", "valid"), 20);
	EXPECT_EQ(At(w, "challengeAcks", "limited"), 5);
	EXPECT_EQ(At(w, "pcbsDropped", "orphan"), 2304);
	EXPECT_EQ(At(w, "pcbs", "synRcvd"), 128);
	json_t *port = json_object_get(d.j, "port");
	EXPECT_EQ(At(port, "rxMissed"), 11);
	EXPECT_EQ(At(port, "xstats", "rx_good_packets"), 42);
	EXPECT_EQ(At(port, "xstats", "rx_missed_errors"), 11);
}

} // namespace
