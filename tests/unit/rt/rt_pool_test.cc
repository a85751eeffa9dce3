/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/rt/rt_pool.c: health of an upstream (held down,
 * probed back in the background by connect + PING, never brought back by a
 * server that accepts and stays silent), the local NRF's pool kept
 * connected, and forced tries on a held-down pool.
 *
 * One real worker (its thread not started) is driven from the test thread
 * the way rt_worker_main() drives it (rt_pool_glue.c). The upstream is real
 * too: an HTTP/2 server of lib/h2 on its own loop, pumped by the same
 * thread, or a plain listener that accepts and never answers.
 */
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_tp.h"
#include "rt_pool_glue.h"

#include "unit/test_net.h"

namespace {

/* One peer (snapshot peer 0) and, when @p local_port is not 0, a local NRF. */
std::string
Doc(uint16_t peer_port, uint16_t local_port, uint32_t interval_ms, uint32_t interval_max_ms,
	uint32_t probe_timeout_ms)
{
	uint16_t port = FreePort();

	return std::string("{\"generalOptions\":{\"ocnrfHost\":\"nrf-a.test\",\"ocnrfPort\":") +
		std::to_string(port) +
		"},\"forwardingOptions\":{\"featureStatus\":\"ENABLED\",\"nrfHostConfig\":["
		"{\"scheme\":\"http\",\"fqdn\":\"nrf-e.test\",\"ipv4Address\":\"127.0.0.1\","
		"\"port\":" + std::to_string(peer_port) + "}]},"
		"\"runtime\":{\"listen\":[{\"address\":\"127.0.0.1\",\"port\":" +
		std::to_string(port) + "}],\"management\":{\"port\":0}," +
		(local_port != 0 ? "\"localNrf\":{\"address\":\"127.0.0.1\",\"port\":" +
				std::to_string(local_port) + "},"
				 : std::string()) +
		"\"timeouts\":{\"connectMs\":500,\"perTryMs\":2000,\"requestMs\":5000},"
		"\"health\":{\"probeIntervalMs\":" + std::to_string(interval_ms) +
		",\"probeIntervalMaxMs\":" + std::to_string(interval_max_ms) +
		",\"probeTimeoutMs\":" + std::to_string(probe_timeout_ms) + "}}}";
}

/* The upstream: an HTTP/2 server that records requests and never answers
 * them (an answer would be relayed to a front stream this test does not
 * have), or a listener that accepts and stays silent. */
struct Upstream {
	const nrf_tp_ops *tp = nrf_tp_kern_ops();
	nrf_tp_loop *loop = nullptr;
	nrf_h2_ctx *ctx = nullptr;
	nrf_tp_listener *lst = nullptr;
	bool silent = false;
	int accepted = 0;
	int requests = 0;
	std::string path;
	nrf_tp_conn *held[64] = {};
};

void
up_on_request(nrf_h2_stream *st, int)
{
	Upstream *u = static_cast<Upstream *>(nrf_h2_conn_user(st->conn));

	u->requests++;
	u->path.assign(st->msg.path.p, st->msg.path.len);
}

const nrf_h2_cbs up_cbs = {
	up_on_request, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
	nullptr, nullptr, nullptr,
};

void
up_on_listen(void *arg, unsigned)
{
	Upstream *u = static_cast<Upstream *>(arg);
	int err;

	for (;;) {
		nrf_tp_conn *tc = u->tp->accept(u->lst, &err);

		if (tc == nullptr)
			return;
		if (u->silent && u->accepted < 64)
			u->held[u->accepted] = tc; /* accepted, never read, never answered */
		else if (u->silent)
			u->tp->close(tc);
		else
			nrf_h2_conn_server(u->ctx, tc, &up_cbs, u, &err);
		u->accepted++;
	}
}

class RtPool : public ::testing::Test {
protected:
	void Make(uint32_t interval_ms, uint32_t interval_max_ms, uint32_t probe_timeout_ms,
		bool with_local = false)
	{
		std::string doc = Doc(up_port_, with_local ? local_port_ : 0, interval_ms,
			interval_max_ms, probe_timeout_ms);

		r_ = rtp_create(doc.data(), doc.size());
		ASSERT_NE(r_, nullptr) << doc;
	}

	void TearDown() override
	{
		rtp_free(r_); /* closes the worker's connections, fails queued tries */
		StopUpstream();
	}

	void StartUpstream(bool silent, uint16_t port = 0)
	{
		int err;
		nrf_h2_limits lim = {};
		nrf_tp_addr a;

		up_.silent = silent;
		up_.loop = up_.tp->loop_create(&err);
		ASSERT_NE(up_.loop, nullptr);
		lim.max_header_bytes = 16384;
		lim.max_body_bytes = 1 << 20;
		lim.max_concurrent_streams = 16;
		up_.ctx = nrf_h2_ctx_create(up_.tp, up_.loop, &lim, &err);
		ASSERT_NE(up_.ctx, nullptr);
		nrf_tp_addr_parse("127.0.0.1", port != 0 ? port : up_port_, &a);
		up_.lst = up_.tp->listen(up_.loop, &a, 16, up_on_listen, &up_, &err);
		ASSERT_NE(up_.lst, nullptr) << nrf_strerror(err);
	}

	void StopUpstream()
	{
		if (up_.loop == nullptr)
			return;
		up_.tp->listener_close(up_.lst);
		for (int i = 0; i < up_.accepted && i < 64; i++)
			if (up_.held[i] != nullptr)
				up_.tp->close(up_.held[i]);
		nrf_h2_ctx_close_all(up_.ctx);
		nrf_h2_ctx_run(up_.ctx);
		nrf_h2_ctx_free(up_.ctx);
		up_.tp->loop_free(up_.loop);
		up_ = Upstream();
	}

	/* One iteration of the worker loop, then one of the upstream's. */
	void Turn()
	{
		rtp_turn(r_, 2);
		if (up_.loop != nullptr) {
			up_.tp->poll(up_.loop, 0);
			nrf_h2_ctx_run(up_.ctx);
		}
	}

	template <typename F>
	bool Until(F done, uint32_t ms)
	{
		uint64_t end = nrf_now_ns() + (uint64_t)ms * 1000000ull;

		while (!done()) {
			if (nrf_now_ns() > end)
				return false;
			Turn();
		}
		return true;
	}

	void Wait(uint32_t ms)
	{
		Until([] { return false; }, ms);
	}

	rtp_pool_info Pool(bool local = false)
	{
		rtp_pool_info i = {};

		rtp_pool_get(r_, local, &i);
		return i;
	}

	/* The upstream as the control thread sees it. */
	nrf_rt_peer_stats Seen(bool local = false)
	{
		nrf_rt_peer_stats *v = nullptr, out = {};
		std::string name = local ? "127.0.0.1:" + std::to_string(local_port_)
					 : "nrf-e.test:" + std::to_string(up_port_);
		size_t n = 0;

		EXPECT_EQ(nrf_rt_peer_stats_get(rtp_rt(r_), &v, &n), 0);
		for (size_t i = 0; i < n; i++)
			if (v[i].local == local && name == v[i].name)
				out = v[i];
		free(v);
		return out;
	}

	/* Hold the peer down: a try meets a closed port. */
	void HoldDown()
	{
		rtp_try *t = rtp_try_new(r_, false);

		ASSERT_EQ(rtp_submit(r_, t, false), 0); /* queued behind the connect */
		ASSERT_EQ(rtp_try_state(t), RTP_QUEUED);
		ASSERT_TRUE(Until([&] { return Pool().down; }, 2000));
		EXPECT_EQ(rtp_try_state(t), RTP_IDLE); /* failed through rt_try_failed() */
		EXPECT_EQ(Pool().connect_failures, 1u);
	}

	uint16_t up_port_ = FreePort();
	uint16_t local_port_ = FreePort();
	Upstream up_;
	rtp *r_ = nullptr;
};

} // namespace

TEST_F(RtPool, AFailedConnectHoldsTheUpstreamDownAndRefusesTries)
{
	Make(5000, 5000, 500);
	HoldDown();
	EXPECT_TRUE(Pool().down_bit);
	EXPECT_EQ(Pool().backoff_ms, 5000u);
	nrf_rt_peer_stats s = Seen();
	EXPECT_EQ(s.workers, 1u);
	EXPECT_EQ(s.workers_down, 1u);
	EXPECT_NE(s.down_since_ns, 0u);
	EXPECT_EQ(rtp_submit(r_, rtp_try_new(r_, false), false), NRF_EAGAIN);
}

TEST_F(RtPool, AHeldDownUpstreamIsProbedBackWithoutTraffic)
{
	Make(50, 100, 300);
	HoldDown();
	Wait(300); /* probes meet the closed port: the interval grows to its cap */
	EXPECT_TRUE(Pool().down);
	EXPECT_EQ(Pool().backoff_ms, 100u);
	StartUpstream(false);
	uint64_t t0 = nrf_now_ns();
	ASSERT_TRUE(Until([&] { return !Pool().down; }, 1000));
	EXPECT_LT(nrf_now_ns() - t0, 400000000ull); /* cap 100 ms + one round trip */
	EXPECT_FALSE(Pool().down_bit);
	EXPECT_EQ(Pool().backoff_ms, 0u);
	EXPECT_EQ(up_.requests, 0); /* a probe is a connect and a PING, no request */
	nrf_rt_peer_stats s = Seen();
	EXPECT_EQ(s.workers_down, 0u);
	EXPECT_EQ(s.down_since_ns, 0u);
	/* the probe's connection stays as a normal one: the next try uses it */
	ASSERT_EQ(Pool().n_conns, 1u);
	EXPECT_TRUE(Pool().first_alive);
	rtp_try *t = rtp_try_new(r_, false);
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	EXPECT_EQ(rtp_try_state(t), RTP_SENT);
	ASSERT_TRUE(Until([&] { return up_.requests == 1; }, 1000));
	EXPECT_EQ(up_.accepted, 1);
	rtp_try_cancel(t);
}

TEST_F(RtPool, AServerThatAcceptsButNeverSpeaksHttp2IsNotUp)
{
	Make(50, 100, 150);
	StartUpstream(true);
	/* The pool is up (it never failed): each try is sent as soon as TCP
	 * connects, but the PING is never answered. A connection that dies
	 * with a stream on it is one failed try, not a verdict on the
	 * upstream (the stream may have been what killed it): the upstream is
	 * held down by consecutiveFailures (5) of them in a row. */
	for (int i = 1; i <= 5; i++) {
		rtp_try *t = rtp_try_new(r_, false);
		ASSERT_EQ(rtp_submit(r_, t, false), 0) << i;
		ASSERT_TRUE(Until([&] { return rtp_try_state(t) == RTP_IDLE; }, 2000)) << i;
		if (i < 5) {
			EXPECT_FALSE(Pool().down) << i;
		}
		EXPECT_EQ(Pool().consec, (unsigned)(i < 5 ? i : 5)) << i;
	}
	ASSERT_TRUE(Until([&] { return Pool().down; }, 1000));
	/* Probes connect, get no PING answer within probeTimeoutMs, and the
	 * upstream stays down. */
	int accepted = up_.accepted;
	Wait(800);
	EXPECT_TRUE(Pool().down);
	EXPECT_TRUE(Pool().down_bit);
	EXPECT_GE(up_.accepted, accepted + 2);
	EXPECT_EQ(Seen().workers_down, 1u);
}

TEST_F(RtPool, TheLocalNrfIsConnectedAtStartAndHeldDownWithoutTraffic)
{
	Make(50, 100, 300, true);
	rtp_warm(r_); /* what the worker does before its first iteration */
	EXPECT_EQ(Pool(true).n_conns, 1u);
	ASSERT_TRUE(Until([&] { return Pool(true).down; }, 2000)); /* refused */
	nrf_rt_peer_stats s = Seen(true);
	EXPECT_EQ(s.workers, 1u);
	EXPECT_EQ(s.workers_down, 1u);
	EXPECT_FALSE(Pool().down); /* peers are not connected without traffic */
	EXPECT_EQ(Pool().n_conns, 0u);
	StartUpstream(false, local_port_);
	ASSERT_TRUE(Until([&] { return !Pool(true).down; }, 1000));
	EXPECT_EQ(Seen(true).workers_down, 0u);
	EXPECT_EQ(up_.requests, 0);
	/* The local NRF goes away: its last connection is replaced at once,
	 * the reconnect is refused, and it is held down again. */
	StopUpstream();
	ASSERT_TRUE(Until([&] { return Pool(true).down; }, 1000));
}

TEST_F(RtPool, AForcedTryReachesAHeldDownUpstreamThatIsBack)
{
	Make(60000, 60000, 500); /* no background probe during the test */
	HoldDown();
	StartUpstream(false);
	EXPECT_EQ(rtp_submit(r_, rtp_try_new(r_, false), false), NRF_EAGAIN);
	rtp_try *t = rtp_try_new(r_, true);
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	EXPECT_EQ(rtp_try_state(t), RTP_QUEUED); /* waits for the probe it started */
	EXPECT_EQ(Pool().n_conns, 1u);
	/* A second forced try rides on the same probe. */
	rtp_try *t2 = rtp_try_new(r_, true);
	ASSERT_EQ(rtp_submit(r_, t2, false), 0);
	EXPECT_EQ(Pool().n_conns, 1u);
	EXPECT_EQ(Pool().qlen, 2u);
	ASSERT_TRUE(Until([&] { return up_.requests == 2; }, 2000));
	EXPECT_FALSE(Pool().down); /* the probe's PING answer brought it back */
	EXPECT_EQ(rtp_try_state(t), RTP_SENT);
	EXPECT_EQ(rtp_try_state(t2), RTP_SENT);
	EXPECT_EQ(up_.path, "/nnrf-disc/v1/nf-instances?target-nf-type=UDM");
	EXPECT_EQ(Pool().connect_failures, 1u);
	rtp_try_cancel(t);
	rtp_try_cancel(t2);
}

TEST_F(RtPool, AForcedTryFailsAsAConnectFailureWhenTheUpstreamIsStillDown)
{
	Make(60000, 60000, 500);
	HoldDown();
	rtp_try *t = rtp_try_new(r_, true);
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	EXPECT_EQ(rtp_try_state(t), RTP_QUEUED);
	ASSERT_TRUE(Until([&] { return rtp_try_state(t) == RTP_IDLE; }, 2000));
	EXPECT_EQ(Pool().connect_failures, 2u); /* rt_try_failed(t, NRF_RT_FAIL_CONNECT, ...) */
	EXPECT_TRUE(Pool().down);
	EXPECT_EQ(Pool().n_conns, 0u);
}

TEST_F(RtPool, AForcedTryOnAServerThatNeverSpeaksHttp2FailsAfterTheProbeTimeout)
{
	Make(60000, 60000, 150);
	HoldDown();
	StartUpstream(true);
	rtp_try *t = rtp_try_new(r_, true);
	uint64_t t0 = nrf_now_ns();
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	ASSERT_TRUE(Until([&] { return rtp_try_state(t) == RTP_IDLE; }, 2000));
	EXPECT_GE(nrf_now_ns() - t0, 140000000ull);
	EXPECT_EQ(Pool().connect_failures, 2u);
	EXPECT_EQ(up_.accepted, 1);
	EXPECT_TRUE(Pool().down);
}

TEST_F(RtPool, GaugesCountConnectionsStreamsAndQueuedTries)
{
	Make(60000, 60000, 500);
	StartUpstream(false);
	rtp_try *t = rtp_try_new(r_, false);
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	EXPECT_EQ(rtp_try_state(t), RTP_QUEUED); /* behind the connect */
	nrf_rt_peer_stats s = Seen();
	EXPECT_EQ(s.queued, 1u);
	EXPECT_EQ(s.conns, 0u); /* connecting is not connected */
	EXPECT_EQ(s.inflight, 0u);
	ASSERT_TRUE(Until([&] { return up_.requests == 1; }, 2000));
	s = Seen();
	EXPECT_EQ(s.queued, 0u);
	EXPECT_EQ(s.conns, 1u);
	EXPECT_EQ(s.inflight, 1u);
	rtp_try *t2 = rtp_try_new(r_, false);
	ASSERT_EQ(rtp_submit(r_, t2, false), 0);
	EXPECT_EQ(rtp_try_state(t2), RTP_SENT); /* on the same connection */
	EXPECT_EQ(Seen().inflight, 2u);
	EXPECT_EQ(Seen().conns, 1u);
	/* A stream the owner forgot ends one by one ... */
	rtp_try_cancel(t);
	ASSERT_TRUE(Until([&] { return Seen().inflight == 1; }, 1000));
	/* ... the rest with its connection. */
	StopUpstream();
	ASSERT_TRUE(Until([&] { return Seen().conns == 0; }, 2000));
	s = Seen();
	EXPECT_EQ(s.inflight, 0u);
	EXPECT_EQ(s.queued, 0u);
	EXPECT_EQ(rtp_try_state(t2), RTP_IDLE);
}

TEST_F(RtPool, AProbeUnderWayIsShownAndTheNextProbeIsKnown)
{
	Make(60000, 60000, 200);
	uint64_t t0 = nrf_now_ns();
	HoldDown();
	nrf_rt_peer_stats s = Seen();
	EXPECT_EQ(s.workers_probing, 0u); /* the refused connect is over */
	EXPECT_GE(s.next_probe_ns, t0 + 59000000000ull);
	EXPECT_LE(s.next_probe_ns, nrf_now_ns() + 60000000000ull);
	/* A forced try starts a probe now: connected, its PING unanswered. */
	StartUpstream(true);
	rtp_try *t = rtp_try_new(r_, true);
	ASSERT_EQ(rtp_submit(r_, t, false), 0);
	EXPECT_EQ(Seen().workers_probing, 1u);
	EXPECT_EQ(Seen().queued, 1u);
	ASSERT_TRUE(Until([&] { return rtp_try_state(t) == RTP_IDLE; }, 2000));
	s = Seen();
	EXPECT_EQ(s.workers_probing, 0u);
	EXPECT_EQ(s.workers_down, 1u);
	EXPECT_EQ(s.conns, 0u);
	EXPECT_EQ(s.queued, 0u);
}
