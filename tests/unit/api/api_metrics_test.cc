/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/api/api_metrics.c: the Prometheus text exposition is
 * well formed (every family has HELP and TYPE, every sample parses,
 * histograms are cumulative) and shows the counters it is given.
 */
#include <gtest/gtest.h>

#include <map>
#include <cctype>
#include <cstring>
#include <set>
#include <sstream>
#include <string>

#include "api_int.h"
#include "nrf_fwd.h"

namespace {

struct Exposition {
	std::map<std::string, double> samples; /* "name{labels}" -> value */
	std::set<std::string> help, type;
	std::string text;
};

/* One sample line "name{labels} value": false when malformed. Labels are
 * checked to be name="value" pairs (value escapes \\ \" \n), comma separated. */
bool
ParseSample(const std::string &line, std::string *name, std::string *labels, double *value)
{
	size_t i = 0, n = line.size();

	while (i < n && (isalnum((unsigned char)line[i]) || line[i] == '_' || line[i] == ':'))
		i++;
	if (i == 0 || isdigit((unsigned char)line[0]))
		return false;
	*name = line.substr(0, i);
	labels->clear();
	if (i < n && line[i] == '{') {
		size_t start = i++;
		for (;;) {
			size_t k = i;
			while (i < n && (isalnum((unsigned char)line[i]) || line[i] == '_'))
				i++;
			if (i == k || i + 1 >= n || line[i] != '=' || line[i + 1] != '"')
				return false;
			i += 2;
			while (i < n && line[i] != '"') {
				if (line[i] == '\\') {
					if (i + 1 >= n || (line[i + 1] != '\\' && line[i + 1] != '"' &&
						line[i + 1] != 'n'))
						return false;
					i++;
				}
				i++;
			}
			if (i >= n)
				return false;
			i++;
			if (i < n && line[i] == ',') {
				i++;
				continue;
			}
			if (i < n && line[i] == '}') {
				i++;
				break;
			}
			return false;
		}
		*labels = line.substr(start, i - start);
	}
	if (i >= n || line[i] != ' ')
		return false;
	std::string v = line.substr(i + 1);
	if (v.empty() || v.find(' ') != std::string::npos)
		return false;
	if (v == "+Inf" || v == "-Inf" || v == "NaN") {
		*value = 0;
		return true;
	}
	char *end = nullptr;
	*value = strtod(v.c_str(), &end);
	return end != nullptr && *end == '\0';
}

Exposition
Render(const api_metrics_in &in)
{
	api_buf b = {};
	api_metrics_render(&b, &in);
	EXPECT_FALSE(b.oom);
	Exposition e;
	e.text.assign(b.p, b.len);
	api_buf_fini(&b);

	std::istringstream ss(e.text);
	std::string line;
	while (std::getline(ss, line)) {
		if (line.rfind("# HELP ", 0) == 0) {
			e.help.insert(line.substr(7, line.find(' ', 7) - 7));
			continue;
		}
		if (line.rfind("# TYPE ", 0) == 0) {
			e.type.insert(line.substr(7, line.find(' ', 7) - 7));
			continue;
		}
		std::string name, labels;
		double value = 0;
		EXPECT_TRUE(ParseSample(line, &name, &labels, &value)) << line;
		/* A sample belongs to a family with HELP and TYPE. */
		std::string fam = name;
		for (const char *suf : {"_bucket", "_sum", "_count"})
			if (e.type.count(fam) == 0 && fam.size() > strlen(suf) &&
				fam.compare(fam.size() - strlen(suf), strlen(suf), suf) == 0)
				fam = fam.substr(0, fam.size() - strlen(suf));
		EXPECT_EQ(e.type.count(fam), 1u) << "no TYPE for " << line;
		EXPECT_EQ(e.help.count(fam), 1u) << "no HELP for " << line;
		EXPECT_EQ(e.samples.count(name + labels), 0u) << "duplicate " << line;
		e.samples[name + labels] = value;
	}
	return e;
}

} // namespace

TEST(ApiMetrics, CountersAppearWithTheirLabels)
{
	nrf_rt_stats st = {};
	st.req[NRF_OP_NF_DISCOVER][NRF_RT_OUT_PEER] = 5;
	st.req[NRF_OP_NF_DISCOVER][NRF_RT_OUT_LOOP_DETECTED] = 2;
	st.loop_detected = 2;
	st.conns_accepted = 10;
	st.conns_closed = 7;
	st.lat_bucket[NRF_OP_NF_DISCOVER][0] = 1;
	st.lat_bucket[NRF_OP_NF_DISCOVER][3] = 4;
	st.lat_bucket[NRF_OP_NF_DISCOVER][NRF_RT_LAT_BUCKETS] = 2;
	st.lat_sum_ns[NRF_OP_NF_DISCOVER] = 1500000000ull;
	st.timeouts[NRF_RT_TMO_IDLE] = 9;
	st.req[NRF_OP_ACCESS_TOKEN][NRF_RT_OUT_REQUEST_TIMEOUT] = 1;

	nrf_rt_peer_stats peers[3] = {};
	snprintf(peers[0].name, sizeof(peers[0].name), "nrf-e.test:8080");
	peers[0].tries = 6;
	peers[0].loop_prevented = 3;
	peers[0].fail[NRF_RT_FAIL_TIMEOUT] = 1;
	peers[0].codes[0] = 200;
	peers[0].code_n[0] = 5;
	peers[0].n_codes = 1;
	snprintf(peers[1].name, sizeof(peers[1].name), "127.0.0.1:9000");
	peers[1].local = true;
	peers[1].tries = 7;
	peers[1].codes[0] = 404;
	peers[1].code_n[0] = 7;
	peers[1].n_codes = 1;
	snprintf(peers[2].name, sizeof(peers[2].name), "we\"ird\\name");

	nrf_rt_worker_info wi[2] = {{true, 4, 2500000000ull, 10, 2, 0, 0, 0}, {true, 3, 0, 0, 0, 0, 0, 0}};
	double busy[2] = {0.25, 0.0};
	api_metrics_in in = {};
	in.st = &st;
	in.peers = peers;
	in.n_peers = 3;
	in.workers = wi;
	in.busy = busy;
	in.n_workers = 2;
	in.generation = 4;
	in.api.reloads = 3;
	in.api.reload_failures = 1;

	Exposition e = Render(in);
	auto &s = e.samples;
	EXPECT_EQ(s["nrfwd_requests_total{operation=\"NFDiscover\",outcome=\"peer\"}"], 5);
	EXPECT_EQ(s["nrfwd_requests_total{operation=\"NFDiscover\",outcome=\"loop_detected\"}"],
		2);
	EXPECT_EQ(s.count("nrfwd_requests_total{operation=\"other\",outcome=\"client_reset\"}"),
		1u);
	EXPECT_EQ(s["nrfwd_loop_detections_total"], 2);
	EXPECT_EQ(s["nrfwd_timeouts_total{reason=\"idle\"}"], 9);
	for (const char *r : {"handshake", "header", "body", "stalled_reader", "upstream_idle",
		     "upstream_stalled"})
		EXPECT_EQ(s.count(std::string("nrfwd_timeouts_total{reason=\"") + r + "\"}"), 1u) << r;
	EXPECT_EQ(s["nrfwd_requests_total{operation=\"AccessToken\",outcome=\"request_timeout\"}"],
		1);
	EXPECT_EQ(s["nrfwd_connections_open"], 3);
	EXPECT_EQ(s["nrfwd_loop_preventions_total{peer=\"nrf-e.test:8080\"}"], 3);
	EXPECT_EQ(s["nrfwd_forwards_total{peer=\"nrf-e.test:8080\",status=\"200\"}"], 5);
	EXPECT_EQ(s["nrfwd_local_nrf_answers_total{local_nrf=\"127.0.0.1:9000\",status=\"404\"}"],
		7);
	EXPECT_EQ(s["nrfwd_tries_total{peer=\"nrf-e.test:8080\",role=\"peer\"}"], 6);
	EXPECT_EQ(s["nrfwd_tries_total{peer=\"127.0.0.1:9000\",role=\"local\"}"], 7);
	EXPECT_EQ(s["nrfwd_try_failures_total{peer=\"nrf-e.test:8080\",role=\"peer\","
		    "reason=\"timeout\"}"], 1);
	EXPECT_EQ(s.count("nrfwd_loop_preventions_total{peer=\"127.0.0.1:9000\"}"), 0u);
	EXPECT_EQ(s.count("nrfwd_tries_total{peer=\"we\\\"ird\\\\name\",role=\"peer\"}"), 1u);
	EXPECT_EQ(s["nrfwd_worker_busy_ratio{worker=\"0\"}"], 0.25);
	EXPECT_EQ(s["nrfwd_worker_cpu_seconds_total{worker=\"0\"}"], 2.5);
	EXPECT_EQ(s["nrfwd_worker_config_generation{worker=\"1\"}"], 3);
	EXPECT_EQ(s["nrfwd_config_generation"], 4);
	EXPECT_EQ(s["nrfwd_config_reloads_total"], 3);
	EXPECT_EQ(s["nrfwd_config_reload_failures_total"], 1);

	/* Histogram: cumulative buckets, +Inf equals _count, _sum in seconds. */
	EXPECT_EQ(s["nrfwd_request_duration_seconds_bucket{operation=\"NFDiscover\",le=\"0.0005\"}"],
		1);
	EXPECT_EQ(s["nrfwd_request_duration_seconds_bucket{operation=\"NFDiscover\",le=\"0.005\"}"],
		5);
	EXPECT_EQ(s["nrfwd_request_duration_seconds_bucket{operation=\"NFDiscover\",le=\"10\"}"], 5);
	EXPECT_EQ(s["nrfwd_request_duration_seconds_bucket{operation=\"NFDiscover\",le=\"+Inf\"}"],
		7);
	EXPECT_EQ(s["nrfwd_request_duration_seconds_count{operation=\"NFDiscover\"}"], 7);
	EXPECT_DOUBLE_EQ(s["nrfwd_request_duration_seconds_sum{operation=\"NFDiscover\"}"], 1.5);
	EXPECT_EQ(e.type.count("nrfwd_request_duration_seconds"), 1u);
	EXPECT_NE(e.text.find("# TYPE nrfwd_request_duration_seconds histogram\n"),
		std::string::npos);
	EXPECT_NE(e.text.find("# TYPE nrfwd_requests_total counter\n"), std::string::npos);
}

TEST(ApiMetrics, BufferGrowsForLongOutput)
{
	api_buf b = {};
	for (int i = 0; i < 10000; i++)
		api_buf_printf(&b, "line %d with some text to make it longer\n", i);
	ASSERT_FALSE(b.oom);
	EXPECT_GT(b.len, 300000u);
	EXPECT_EQ(std::string(b.p, 9), "line 0 wi");
	api_buf_fini(&b);
}

TEST(ApiMetrics, DpdkLoopCountersAppearOnlyOnTheDpdkTransport)
{
	nrf_rt_stats st = {};
	nrf_rt_worker_info wi[1] = {{true, 1, 0, 0, 0, 0, 0, 0}};
	double busy[1] = {1.0};
	api_metrics_in in = {};
	in.st = &st;
	in.workers = wi;
	in.busy = busy;
	in.n_workers = 1;
	EXPECT_EQ(Render(in).text.find("nrfwd_dpdk_"), std::string::npos);

	nrf_rt_dp_stats dp = {};
	dp.polled = true;
	dp.lcore = 1;
	dp.tsc_hz = 2000000000ull;
	dp.lc.iterations = 1000;
	dp.lc.busy_iterations = 10;
	dp.lc.cycles = 4000000;
	dp.lc.busy_cycles = 1000000;
	dp.lc.poll_busy_cycles = 600000;
	dp.lc.tx_cycles = 400000;
	dp.lc.rx_cycles = 50000;
	dp.lc.idle_sleeps = 5;
	dp.lc.rx_frames = 30;
	dp.lc.tx_frames = 40;
	dp.lc.rx_dropped = 2;
	dp.lc.tx_nombuf = 1;
	dp.port.imissed = 3;
	in.dp = &dp;
	Exposition e = Render(in);
	auto &s = e.samples;
	EXPECT_EQ(s["nrfwd_dpdk_cycles_total{lcore=\"1\",kind=\"all\"}"], 4000000);
	EXPECT_EQ(s["nrfwd_dpdk_cycles_total{lcore=\"1\",kind=\"busy\"}"], 1000000);
	EXPECT_EQ(s["nrfwd_dpdk_cycles_total{lcore=\"1\",kind=\"poll_busy\"}"], 600000);
	EXPECT_EQ(s["nrfwd_dpdk_cycles_total{lcore=\"1\",kind=\"tx\"}"], 400000);
	EXPECT_EQ(s["nrfwd_dpdk_cycles_total{lcore=\"1\",kind=\"rx\"}"], 50000);
	EXPECT_EQ(s["nrfwd_dpdk_iterations_total{lcore=\"1\",kind=\"busy\"}"], 10);
	EXPECT_EQ(s["nrfwd_dpdk_idle_sleeps_total{lcore=\"1\"}"], 5);
	EXPECT_EQ(s["nrfwd_dpdk_frames_total{lcore=\"1\",dir=\"tx\"}"], 40);
	EXPECT_EQ(s["nrfwd_dpdk_frames_dropped_total{lcore=\"1\",dir=\"rx\",reason=\"stack\"}"], 2);
	EXPECT_EQ(s["nrfwd_dpdk_frames_dropped_total{lcore=\"1\",dir=\"tx\",reason=\"no_mbuf\"}"], 1);
	EXPECT_EQ(s["nrfwd_dpdk_port_missed_total"], 3);
	EXPECT_EQ(s["nrfwd_dpdk_tsc_hz"], 2e9);
}

TEST(ApiMetrics, EveryWorkerHasItsRequestsConnectionsAndCostPerRequest)
{
	nrf_rt_stats st = {};
	/* worker 0 on DPDK (busy cycles count), worker 1 without poll stats
	 * (thread CPU time counts), worker 1 restarted twice and down. */
	nrf_rt_worker_info wi[2] = {{true, 7, 9000000000ull, 1000, 12, 4242, 0, 0},
		{false, 6, 3000000000ull, 500, 0, 0, 2, 0}};
	double busy[2] = {0.5, 0.0};
	nrf_rt_dp_stats dp[2] = {};
	dp[0].polled = true;
	dp[0].lcore = 3;
	dp[0].tsc_hz = 1000000000ull;
	dp[0].lc.busy_cycles = 20000000; /* 20 ms busy */
	dp[0].lc.arp_shared = 4;
	dp[0].lc.steered = 6;
	dp[0].lc.from_workers = 5;
	api_metrics_in in = {};
	in.st = &st;
	in.workers = wi;
	in.busy = busy;
	in.n_workers = 2;
	in.dp = dp;
	Exposition e = Render(in);
	auto &s = e.samples;
	EXPECT_EQ(s["nrfwd_worker_requests_total{worker=\"0\"}"], 1000);
	EXPECT_EQ(s["nrfwd_worker_requests_total{worker=\"1\"}"], 500);
	EXPECT_EQ(s["nrfwd_worker_connections_open{worker=\"0\"}"], 12);
	EXPECT_EQ(s["nrfwd_worker_up{worker=\"0\"}"], 1);
	EXPECT_EQ(s["nrfwd_worker_up{worker=\"1\"}"], 0);
	EXPECT_EQ(s["nrfwd_worker_restarts_total{worker=\"1\"}"], 2);
	EXPECT_DOUBLE_EQ(s["nrfwd_worker_busy_seconds_total{worker=\"0\"}"], 0.02);
	EXPECT_DOUBLE_EQ(s["nrfwd_worker_busy_seconds_total{worker=\"1\"}"], 3.0);
	EXPECT_DOUBLE_EQ(s["nrfwd_worker_busy_seconds_per_request{worker=\"0\"}"], 20e-6);
	EXPECT_DOUBLE_EQ(s["nrfwd_worker_busy_seconds_per_request{worker=\"1\"}"], 6000e-6);
	EXPECT_EQ(s["nrfwd_dpdk_worker_frames_total{lcore=\"3\",kind=\"arp_out\"}"], 4);
	EXPECT_EQ(s["nrfwd_dpdk_worker_frames_total{lcore=\"3\",kind=\"steered_out\"}"], 6);
	EXPECT_EQ(s["nrfwd_dpdk_worker_frames_total{lcore=\"3\",kind=\"in\"}"], 5);
	/* worker 1 has no poll loop: no DPDK series for it */
	EXPECT_EQ(e.text.find("lcore=\"0\""), std::string::npos);
}
