/*
 * Trace: the seed's four figures hop by hop on the demo configurations, and
 * the answer rule of docs/failures.md across NRFs (local absence and a failed
 * peer, a failed local NRF, held-down peers, the hop limit, the state that
 * carries from one request to the next).
 */
#include <gtest/gtest.h>

#include "topo_test_util.h"

namespace {

const char *kForwarding[] = {"conf/demo/forwarding/nrf-a.json",
	"conf/demo/forwarding/nrf-e.json"};

Nrf
Make(const std::string &host, int port, const std::string &set = "")
{
	Nrf n;
	n.host = host;
	n.port = port;
	n.set_id = set;
	return n;
}

std::string
Name(const nrf_topo *t, int32_t i)
{
	return i >= 0 ? nrf_topo_at(t, (size_t)i)->name : "(none)";
}

} // namespace

/* Figure I-1: A -> E -> back to A (E's entry for A carries a wrong name). */
TEST(TopoTrace, FigureI1LoopDetectionInNrfForwarding)
{
	auto t = TopoFiles(
		{"conf/demo/forwarding/nrf-a.json", "conf/demo/forwarding/nrf-e-misrouted.json"});
	ASSERT_NE(t, nullptr);
	Trace tr(t.get(), 0, Disc("NEF"));
	ASSERT_EQ(tr.rc, 0);
	ASSERT_EQ(tr.tr.n_hops, 3u);
	EXPECT_EQ(tr.tr.hops[2].nrf, 0);
	EXPECT_EQ(tr.tr.hops[2].plan.verdict, NRF_FWD_LOOP_DETECTED);
	EXPECT_EQ(tr.tr.hops[2].n_via, 2u);
	const nrf_topo_answer &a = tr.Answer();
	EXPECT_EQ(a.kind, NRF_TOPO_ANS_ERROR);
	EXPECT_EQ(a.status, 508);
	EXPECT_STREQ(a.cause, "LOOP_DETECTED");
	EXPECT_EQ(a.origin, 0);
	/* 508 is relayed by E then A, each appending its member. */
	EXPECT_EQ(tr.ViaBack(t.get()), (std::vector<std::string>{"nrf-e.seg2.example.com:18081",
					       "nrf-a.seg1.example.com:18080"}));
}

/* Figure I-3: E skips A (in Via) and answers with its own local answer. */
TEST(TopoTrace, FigureI3LoopPreventionInNrfForwarding)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	Trace tr(t.get(), 0, Disc("NEF"));
	ASSERT_EQ(tr.rc, 0);
	ASSERT_EQ(tr.tr.n_hops, 2u);
	const nrf_topo_hop &e = tr.tr.hops[1];
	EXPECT_EQ(e.plan.n_cand, 0);
	ASSERT_EQ(e.plan.n_skip, 1);
	EXPECT_EQ(e.plan.skip[0].reason, NRF_FWD_SKIP_VIA_HOST);
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_LOCAL);
	EXPECT_EQ(tr.Answer().status, 200);
	EXPECT_EQ(Name(t.get(), tr.Answer().origin), "nrf-e.seg2.example.com:18081");
}

/* Figure I-2: growth, A (set 1) -> E (set 2) -> back to A under a wrong name. */
TEST(TopoTrace, FigureI2LoopDetectionInNrfGrowthForwarding)
{
	auto t = TopoFiles({"conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e-misrouted.json",
		"conf/demo/growth/nrf-g.json"});
	Trace tr(t.get(), 0, Disc("NEF"));
	ASSERT_EQ(tr.rc, 0);
	EXPECT_EQ(tr.Answer().status, 508);
	EXPECT_STREQ(tr.Answer().cause, "LOOP_DETECTED");
	EXPECT_EQ(tr.Answer().origin, 0);
}

/* Figure I-4: E skips A, tries B of the same set (outside the topology:
 * the try fails), and relays its own answer: B's set has answered. */
TEST(TopoTrace, FigureI4LoopPreventionInNrfGrowthForwarding)
{
	auto t = TopoFiles({"conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e.json",
		"conf/demo/growth/nrf-g.json"});
	Trace tr(t.get(), 0, Disc("NEF"));
	ASSERT_EQ(tr.rc, 0);
	const nrf_topo_hop &e = tr.tr.hops[1];
	EXPECT_EQ(Name(t.get(), e.nrf), "nrf-e.seg2.example.com:18081");
	ASSERT_EQ(e.n_tries, 1);
	EXPECT_EQ(e.tries[0].end, NRF_TOPO_TRY_FAILED);
	EXPECT_EQ(e.tries[0].to, -1);
	EXPECT_TRUE((e.plan.cand_covered & 1) != 0);
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_LOCAL);
	EXPECT_EQ(Name(t.get(), tr.Answer().origin), "nrf-e.seg2.example.com:18081");
}

TEST(TopoTrace, AHeldTypeIsAnsweredLocallyAndNotForwarded)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	ASSERT_EQ(nrf_topo_hold(t.get(), 0, NRF_TOPO_NF_TYPE, "amf"), 0);
	Trace tr(t.get(), 0, Disc("AMF"));
	EXPECT_EQ(tr.tr.n_hops, 1u);
	EXPECT_EQ(tr.tr.hops[0].local, NRF_TOPO_LOCAL_ANSWERS);
	EXPECT_EQ(tr.Answer().origin, 0);
	EXPECT_EQ(tr.ViaBack(t.get()), std::vector<std::string>{"nrf-a.seg1.example.com:18080"});
}

TEST(TopoTrace, APeerWithTheTypeAnswersForTheOrigin)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	ASSERT_EQ(nrf_topo_hold(t.get(), 1, NRF_TOPO_NF_TYPE, "UDM"), 0);
	Trace tr(t.get(), 0, Disc("UDM"));
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_LOCAL);
	EXPECT_EQ(tr.Answer().origin, 1);
	EXPECT_EQ(tr.tr.hops[0].tries[0].end, NRF_TOPO_TRY_RELAYED);
}

TEST(TopoTrace, LocalAbsenceAndAPeerThatIsDownGive504)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	nrf_topo_set_down(t.get(), 1, true);
	Trace tr(t.get(), 0, Disc("UDM"));
	const nrf_topo_hop &a = tr.tr.hops[0];
	ASSERT_EQ(a.n_tries, 1);
	EXPECT_TRUE(a.tries[0].held_down); /* a last resort, tried anyway */
	EXPECT_EQ(a.tries[0].end, NRF_TOPO_TRY_FAILED);
	EXPECT_EQ(tr.Answer().status, 504);
	EXPECT_STREQ(tr.Answer().cause, "TARGET_NF_NOT_REACHABLE");
}

TEST(TopoTrace, ALocalNrfThatIsDownAndAPeerThatClaimsAbsenceGive503)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	nrf_topo_set_local_down(t.get(), 0, true);
	Trace tr(t.get(), 0, Disc("UDM"));
	EXPECT_EQ(tr.tr.hops[0].local, NRF_TOPO_LOCAL_FAILED);
	EXPECT_EQ(tr.tr.hops[0].tries[0].end, NRF_TOPO_TRY_REFUSED);
	EXPECT_EQ(tr.Answer().status, 503);
	EXPECT_STREQ(tr.Answer().cause, "NF_SERVICE_FAILURE");
	EXPECT_EQ(tr.Answer().cond, NRF_COND_LOCAL_UNAVAILABLE);
}

TEST(TopoTrace, APeersPositiveAnswerIsRelayedWhenTheLocalNrfIsDown)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	nrf_topo_set_local_down(t.get(), 0, true);
	ASSERT_EQ(nrf_topo_hold(t.get(), 1, NRF_TOPO_NF_TYPE, "UDM"), 0);
	Trace tr(t.get(), 0, Disc("UDM"));
	EXPECT_EQ(tr.Answer().status, 200);
	EXPECT_EQ(tr.Answer().origin, 1);
}

TEST(TopoTrace, APureForwarderWhoseOnlyPeerIsInViaAnswersLoopPrevented)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	a.fwd = {Peer("e.test", "127.0.0.1", 1002)};
	e.fwd = {Peer("a.test", "127.0.0.1", 1001)};
	e.local = false;
	auto t = Topo({a, e});
	Trace tr(t.get(), 0, Disc("NEF"));
	EXPECT_EQ(tr.Answer().status, 508);
	EXPECT_STREQ(tr.Answer().cause, "LOOP_PREVENTED");
	EXPECT_EQ(tr.Answer().origin, 1);
}

TEST(TopoTrace, ADanglingPeerIsHeldDownAfterItsFirstFailureAndThenTriedLast)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	a.fwd = {Peer("gone.test", "127.0.0.1", 1999, 1), Peer("e.test", "127.0.0.1", 1002, 2)};
	auto t = Topo({a, e});
	{
		Trace tr(t.get(), 0, Disc("NEF"));
		ASSERT_EQ(tr.tr.hops[0].n_tries, 2);
		EXPECT_EQ(tr.tr.hops[0].tries[0].end, NRF_TOPO_TRY_FAILED);
		/* E claimed absence after a failed candidate: relayed (rule 2). */
		EXPECT_EQ(tr.Answer().origin, 1);
	}
	EXPECT_TRUE(nrf_topo_held_down(t.get(), 0, 0));
	EXPECT_EQ(nrf_topo_rotation(t.get(), 0), 1u);
	{
		Trace tr(t.get(), 0, Disc("NEF"));
		const nrf_topo_hop &h = tr.tr.hops[0];
		ASSERT_EQ(h.plan.n_cand, 2);
		EXPECT_EQ(h.plan.cand[0], 1); /* e first now */
		EXPECT_EQ(h.plan.cand_down, 2);
		EXPECT_EQ(h.n_tries, 1);
		EXPECT_EQ(h.rotation, 1u);
	}
}

TEST(TopoTrace, EqualPrioritiesRotateWithTheWorkersCounter)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002), g = Make("g.test", 1003);
	a.fwd = {Peer("e.test", "127.0.0.1", 1002), Peer("g.test", "127.0.0.1", 1003)};
	auto t = Topo({a, e, g});
	nrf_topo_set_rotation(t.get(), 0, 1);
	Trace tr(t.get(), 0, Disc("NEF"));
	EXPECT_EQ(tr.tr.hops[0].rotation, 1u);
	EXPECT_EQ(tr.tr.hops[0].tries[0].to, 2);
}

TEST(TopoTrace, MaxForwardHopsZeroStopsForwardingAfterLocalAbsence)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	Trace tr(t.get(), 0, Disc("UDM"), {}, 0);
	EXPECT_EQ(tr.tr.n_hops, 1u);
	EXPECT_TRUE(tr.tr.hops[0].lg.hop_limit);
	EXPECT_EQ(tr.Answer().status, 508);
	EXPECT_STREQ(tr.Answer().cause, "MAX_HOPS_REACHED");
}

TEST(TopoTrace, MaxForwardHopsIsDecrementedOnEveryForward)
{
	Nrf a = Make("a.test", 1001), b = Make("b.test", 1002), c = Make("c.test", 1003);
	a.fwd = {Peer("b.test", "127.0.0.1", 1002)};
	b.fwd = {Peer("c.test", "127.0.0.1", 1003)};
	auto t = Topo({a, b, c});
	Trace tr(t.get(), 0, Disc("NEF"), {}, 1);
	ASSERT_EQ(tr.tr.n_hops, 2u);
	EXPECT_EQ(tr.tr.hops[1].max_forward_hops, 0);
	EXPECT_STREQ(tr.Answer().cause, "MAX_HOPS_REACHED");
	EXPECT_EQ(tr.Answer().origin, 1);
}

TEST(TopoTrace, AClientViaWithAPeerSkipsIt)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	Trace tr(t.get(), 0, Disc("UDM"), {"2.0 nrf-e.seg2.example.com:18081"});
	EXPECT_EQ(tr.tr.n_hops, 1u);
	EXPECT_EQ(tr.tr.hops[0].plan.n_skip_via, 1u);
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_LOCAL); /* A's own empty answer */
}

TEST(TopoTrace, AMalformedClientViaIsA400)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	Trace tr(t.get(), 0, Disc("UDM"), {"2.0 a (unbalanced"});
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_REJECT);
	EXPECT_EQ(tr.Answer().status, 400);
	EXPECT_EQ(nrf_topo_rotation(t.get(), 0), 0u); /* nothing decided */
}

TEST(TopoTrace, AProfileTheLocalNrfHoldsIsFoundElseForwardedAnd404)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	ASSERT_EQ(nrf_topo_hold(t.get(), 1, NRF_TOPO_NF_INSTANCE, "id-1"), 0);
	{
		Trace tr(t.get(), 0, "/nnrf-nfm/v1/nf-instances/id-1");
		EXPECT_EQ(tr.Answer().status, 200);
		EXPECT_EQ(tr.Answer().origin, 1);
	}
	{
		Trace tr(t.get(), 0, "/nnrf-nfm/v1/nf-instances/id-2");
		EXPECT_EQ(tr.Answer().status, 404);
		EXPECT_STREQ(tr.Answer().cause, "DATA_NOT_FOUND");
		EXPECT_EQ(tr.Answer().origin, 1); /* E's 404 relayed: E was asked */
	}
}

TEST(TopoTrace, ALocalOnlyOperationWithoutALocalNrfIs501)
{
	Nrf a = Make("a.test", 1001);
	a.local = false;
	auto t = Topo({a});
	Trace tr(t.get(), 0, "/nnrf-nfm/v1/nf-instances/x", {}, -1, "PUT");
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_REJECT);
	EXPECT_EQ(tr.Answer().status, 501);
}

TEST(TopoTrace, AClientOfAnNrfThatIsDownGetsNoAnswer)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	nrf_topo_set_down(t.get(), 0, true);
	Trace tr(t.get(), 0, Disc("UDM"));
	ASSERT_EQ(tr.rc, 0);
	EXPECT_EQ(tr.tr.n_hops, 1u);
	EXPECT_EQ(tr.Answer().kind, NRF_TOPO_ANS_NONE);
	EXPECT_EQ(tr.Answer().origin, -1);
	EXPECT_EQ(nrf_topo_rotation(t.get(), 0), 0u);
}

TEST(TopoTrace, RefusesABadRequest)
{
	auto t = TopoFiles({kForwarding[0], kForwarding[1]});
	struct nrf_topo_hops tr;
	nrf_topo_request r = {};
	r.at = 7;
	r.method = "GET";
	r.path = "/";
	EXPECT_EQ(nrf_topo_trace(t.get(), &r, &tr), NRF_EINVAL);
	nrf_topo_hops_fini(&tr);
	EXPECT_EQ(nrf_topo_trace(t.get(), nullptr, &tr), NRF_EINVAL);
	nrf_topo_hops_fini(&tr);
}
