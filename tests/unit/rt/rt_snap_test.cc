/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/rt/rt.c: snapshots, publish and reclaim (the hook for
 * live reconfiguration), start and graceful stop of the workers.
 */
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_rt.h"

#include "unit/test_net.h"

namespace {

std::string
Doc(uint16_t port, uint16_t peer_port, const char *detail)
{
	return std::string("{\"generalOptions\":{\"ocnrfHost\":\"nrf-a.test\",\"ocnrfPort\":") +
		std::to_string(port) +
		"},\"forwardingOptions\":{\"featureStatus\":\"ENABLED\",\"nrfHostConfig\":["
		"{\"scheme\":\"http\",\"fqdn\":\"nrf-e.test\",\"ipv4Address\":\"127.0.0.1\","
		"\"port\":" + std::to_string(peer_port) + "}],\"errorResponses\":[{"
		"\"errorCondition\":\"NRF_Forwarding_Loop_Detection\",\"errorCode\":508,"
		"\"errorCause\":\"LOOP_DETECTED\",\"errorTitle\":\"Loop\",\"errorDetail\":\"" +
		detail + "\"}]},\"runtime\":{\"listen\":[{\"address\":\"127.0.0.1\",\"port\":" +
		std::to_string(port) + "}],\"management\":{\"port\":0}}}";
}

nrf_rt_snap *
Snap(const std::string &doc, uint64_t gen)
{
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *cfg = nrf_cfg_load(doc.data(), doc.size(), gen, &probs, &err);
	std::string all;
	for (size_t i = 0; i < probs.n; i++)
		all += std::string(probs.v[i].pointer) + ": " + probs.v[i].reason + "\n";
	nrf_cfg_problems_fini(&probs);
	EXPECT_NE(cfg, nullptr) << all;
	if (cfg == nullptr)
		return nullptr;
	nrf_rt_snap *s = nrf_rt_snap_create(cfg, &err);
	EXPECT_NE(s, nullptr) << nrf_strerror(err);
	return s;
}

} // namespace

TEST(RtSnap, PublishedSnapshotIsPickedUpAndTheOldOneReclaimed)
{
	uint16_t port = FreePort(), peer = FreePort();
	nrf_rt_params p = {2, nullptr, nullptr, nullptr};
	int err = 0;
	nrf_rt *rt = nrf_rt_create(&p, Snap(Doc(port, peer, "one"), 1), &err);

	ASSERT_NE(rt, nullptr) << nrf_strerror(err);
	nrf_tp_addr a;
	ASSERT_EQ(nrf_rt_listen_addr(rt, 0, &a), 0);
	EXPECT_EQ(a.port, port);
	ASSERT_EQ(nrf_rt_start(rt), 0);

	ASSERT_EQ(nrf_rt_publish(rt, Snap(Doc(port, peer, "two"), 2)), 0);
	EXPECT_EQ(nrf_rt_generation(rt), 2u);
	uint64_t end = nrf_now_ns() + 3000000000ull;
	unsigned left;
	while ((left = nrf_rt_reclaim(rt)) != 0 && nrf_now_ns() < end)
		usleep(10000);
	EXPECT_EQ(left, 0u);

	/* A generation that does not grow is bumped past the current one. */
	ASSERT_EQ(nrf_rt_publish(rt, Snap(Doc(port, peer, "three"), 1)), 0);
	EXPECT_EQ(nrf_rt_generation(rt), 3u);

	/* Another peer list is published live: the readdressed peer gets a
	 * new pool, the old one is closed once unused. */
	ASSERT_EQ(nrf_rt_publish(rt, Snap(Doc(port, FreePort(), "four"), 4)), 0);
	EXPECT_EQ(nrf_rt_generation(rt), 4u);
	end = nrf_now_ns() + 3000000000ull;
	while (!nrf_rt_generation_seen(rt, 4) && nrf_now_ns() < end)
		usleep(1000);
	EXPECT_TRUE(nrf_rt_generation_seen(rt, 4));

	/* Another listen port needs a restart: refused, nothing changed. */
	uint16_t other = FreePort();
	nrf_rt_snap *s5 = Snap(Doc(other, peer, "five"), 5);
	const char *ptrs[4];
	EXPECT_EQ(nrf_rt_restart_only(rt, nrf_rt_snap_cfg(s5), ptrs, 4), 1u);
	EXPECT_STREQ(ptrs[0], "/runtime/listen");
	EXPECT_EQ(nrf_rt_publish(rt, s5), NRF_EINVAL);
	EXPECT_EQ(nrf_rt_generation(rt), 4u);

	/* The running configuration is what was published last. */
	uint64_t gen = 0;
	char *text = nrf_rt_emit(rt, NRF_CFG_FORWARDING, 0, &gen, &err);
	ASSERT_NE(text, nullptr);
	EXPECT_EQ(gen, 4u);
	EXPECT_NE(std::string(text).find("four"), std::string::npos);
	free(text);

	nrf_rt_worker_info wi;
	ASSERT_EQ(nrf_rt_worker_get(rt, 1, &wi), 0);
	EXPECT_TRUE(wi.running);
	EXPECT_EQ(wi.generation, 4u);
	EXPECT_EQ(nrf_rt_worker_get(rt, 2, &wi), NRF_ENOENT);
	EXPECT_TRUE(nrf_rt_running(rt));

	nrf_rt_stop(rt, 100);
	nrf_rt_join(rt);
	EXPECT_FALSE(nrf_rt_running(rt));
	nrf_rt_stats st;
	nrf_rt_stats_get(rt, &st);
	EXPECT_EQ(st.requests, 0u);
	EXPECT_GE(st.snapshot_switches, 2u);
	nrf_rt_free(rt);
}

TEST(RtSnap, ABusyListenAddressIsReportedAtCreate)
{
	uint16_t port = FreePort(), peer = FreePort();
	nrf_rt_params p = {1, nullptr, nullptr, nullptr};
	int err = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a = {};

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	ASSERT_EQ(bind(fd, (sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(listen(fd, 1), 0); /* no SO_REUSEPORT: nobody may share it */
	nrf_rt *rt = nrf_rt_create(&p, Snap(Doc(port, peer, "x"), 1), &err);
	EXPECT_EQ(rt, nullptr);
	EXPECT_EQ(err, NRF_EADDRINUSE); /* the reason, not "input/output error" */
	close(fd);
}

TEST(RtSnap, BadParametersAreRefused)
{
	nrf_rt_params p = {0, nullptr, nullptr, nullptr};
	int err = 0;

	EXPECT_EQ(nrf_rt_create(&p, Snap(Doc(FreePort(), FreePort(), "x"), 1), &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	p.workers = NRF_RT_MAX_WORKERS + 1;
	EXPECT_EQ(nrf_rt_create(&p, Snap(Doc(FreePort(), FreePort(), "x"), 1), &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
}

namespace {

nrf_cfg *
Cfg(const std::string &doc, uint64_t gen)
{
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *cfg = nrf_cfg_load(doc.data(), doc.size(), gen, &probs, &err);

	nrf_cfg_problems_fini(&probs);
	EXPECT_NE(cfg, nullptr);
	return cfg;
}

} // namespace

/* The one path of a live change (rt_apply.c): a typed refusal, nothing
 * changed by it; a prepared change dropped changes nothing either; a
 * committed one is in use by every worker when commit returns. */
TEST(RtApply, PrepareRefusesWithAReasonAndCommitPublishesAndWaits)
{
	uint16_t port = FreePort(), peer = FreePort();
	nrf_rt_params p = {2, nullptr, nullptr, nullptr};
	int err = 0;
	nrf_rt *rt = nrf_rt_create(&p, Snap(Doc(port, peer, "one"), 1), &err);

	ASSERT_NE(rt, nullptr) << nrf_strerror(err);
	ASSERT_EQ(nrf_rt_start(rt), 0);

	nrf_rt_change ch = {};
	EXPECT_EQ(nrf_rt_prepare(rt, Cfg(Doc(FreePort(), peer, "x"), 2), &ch),
		NRF_RT_APPLY_RESTART_ONLY);
	EXPECT_EQ(ch.n_restart, 1u);
	EXPECT_STREQ(ch.restart[0], "/runtime/listen");
	EXPECT_EQ(ch.snap, nullptr);

	ASSERT_EQ(nrf_rt_prepare(rt, Cfg(Doc(port, peer, "dropped"), 2), &ch), NRF_RT_APPLY_OK);
	ASSERT_NE(ch.snap, nullptr);
	nrf_rt_change_drop(&ch);
	EXPECT_EQ(ch.snap, nullptr);
	EXPECT_EQ(nrf_rt_generation(rt), 1u);

	ASSERT_EQ(nrf_rt_prepare(rt, Cfg(Doc(port, peer, "two"), 2), &ch), NRF_RT_APPLY_OK);
	uint64_t gen = 0;
	bool seen = false;
	ASSERT_EQ(nrf_rt_commit(rt, &ch, 3000, &gen, &seen), 0);
	EXPECT_EQ(ch.snap, nullptr);
	EXPECT_EQ(gen, 2u);
	EXPECT_TRUE(seen);
	EXPECT_TRUE(nrf_rt_generation_seen(rt, 2));

	nrf_rt_stop(rt, 100);
	nrf_rt_join(rt);
	nrf_rt_free(rt);
}
