/*
 * Building a topology: every peer entry resolved to the NRF its address
 * reaches, whether loop prevention recognises that NRF (the real scan of
 * the member it appends), what else its identities name; finding NRFs by
 * what an operator types.
 */
#include <gtest/gtest.h>

#include "topo_test_util.h"

namespace {

Nrf
Make(const std::string &host, int port)
{
	Nrf n;
	n.host = host;
	n.port = port;
	return n;
}

} // namespace

TEST(TopoResolve, ResolvesAPeerByItsFqdnAndAddressAndRecognisesIt)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	a.fwd = {Peer("e.test", "127.0.0.1", 1002)};
	auto t = Topo({a, e});
	ASSERT_NE(t, nullptr);
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	ASSERT_NE(ed, nullptr);
	EXPECT_EQ(ed->to, 1);
	EXPECT_EQ(ed->named, -1);
	EXPECT_TRUE(ed->recognised);
	EXPECT_TRUE(ed->active);
}

TEST(TopoResolve, AWrongNameWithTheRightAddressReachesTheNrfButIsNotRecognised)
{
	/* The seed's misrouted NRF-E: its entry names nrf-x, the address is A's. */
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	e.fwd = {Peer("x.test", "127.0.0.1", 1001)};
	auto t = Topo({a, e});
	ASSERT_NE(t, nullptr);
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 1, 0);
	EXPECT_EQ(ed->to, 0);
	EXPECT_FALSE(ed->recognised);
	EXPECT_EQ(ed->named, -1);
}

TEST(TopoResolve, AnEntryWhoseAddressReachesNothingIsDangling)
{
	Nrf a = Make("a.test", 1001);
	a.fwd = {Peer("gone.test", "127.0.0.1", 1999)};
	auto t = Topo({a});
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, -1);
	EXPECT_EQ(ed->named, -1);
	EXPECT_FALSE(ed->recognised);
}

TEST(TopoResolve, AnEntryWhoseNameAndAddressBelongToTwoNrfsNamesTheSecond)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002), g = Make("g.test", 1003);
	a.fwd = {Peer("e.test", "127.0.0.1", 1003)}; /* e's name, g's address */
	e.port = 1003;                                /* e.test:1003 names e */
	e.listen = "127.0.0.2";
	g.listen = "127.0.0.1";
	auto t = Topo({a, e, g});
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, 2);
	EXPECT_EQ(ed->named, 1);
	EXPECT_FALSE(ed->recognised);
}

TEST(TopoResolve, AnNrfThatCallsItselfByItsAddressIsRecognisedByIt)
{
	Nrf a = Make("a.test", 1001), e = Make("127.0.0.1", 1002);
	a.fwd = {Peer("", "127.0.0.1", 1002)};
	auto t = Topo({a, e});
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, 1);
	EXPECT_TRUE(ed->recognised);
}

TEST(TopoResolve, AnAliasReachesTheNrfButIsNotWhatItPutsInVia)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	e.aliases = {"alias-e.test:1002"};
	e.listen = "0.0.0.0";
	a.fwd = {Peer("alias-e.test", "", 1002)};
	auto t = Topo({a, e});
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, 1);
	EXPECT_FALSE(ed->recognised);
}

TEST(TopoResolve, NamesCompareAsIdentitiesDo)
{
	Nrf a = Make("a.test", 1001), e = Make("E.Test.", 1002);
	e.listen = "0.0.0.0";
	a.fwd = {Peer("e.test", "", 1002)};
	auto t = Topo({a, e});
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, 1);
	EXPECT_TRUE(ed->recognised);
}

TEST(TopoResolve, AnEntryOfADisabledModeIsInactive)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	a.sets = {{"set2", {Peer("e.test", "127.0.0.1", 1002)}}};
	std::string j = a.Json();
	/* growth off, the set kept */
	j.replace(j.find("\"featureStatus\":\"ENABLED\",\"loopPreventionScope\""), 26,
		"\"featureStatus\":\"DISABLED\",");
	int err = 0;
	TopoPtr t(nrf_topo_create(&err));
	ASSERT_GE(nrf_topo_add(t.get(), LoadNrf(j), "a.json"), 0);
	ASSERT_GE(nrf_topo_add(t.get(), LoadNrf(e.Json()), "e.json"), 0);
	ASSERT_EQ(nrf_topo_resolve(t.get()), 0);
	const nrf_topo_edge *ed = nrf_topo_peer_edge(t.get(), 0, 0);
	EXPECT_EQ(ed->to, 1);
	EXPECT_FALSE(ed->active);
}

TEST(TopoResolve, FindsAnNrfByHostByHostPortByAddressAndByFile)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002), e2 = Make("e.test", 1003);
	auto t = Topo({a, e, e2});
	EXPECT_EQ(nrf_topo_find(t.get(), "a.test"), 0);
	EXPECT_EQ(nrf_topo_find(t.get(), "A.TEST:1001"), 0);
	EXPECT_EQ(nrf_topo_find(t.get(), "127.0.0.1:1002"), 1);
	EXPECT_EQ(nrf_topo_find(t.get(), "nrf-2.json"), 2);
	EXPECT_EQ(nrf_topo_find(t.get(), "nrf-2"), 2);
	EXPECT_EQ(nrf_topo_find(t.get(), "e.test"), NRF_EEXIST);
	EXPECT_EQ(nrf_topo_find(t.get(), "x.test"), NRF_ENOENT);
}

TEST(TopoResolve, RefusesNrfsAfterItIsResolvedAndFreesTheConfiguration)
{
	auto t = Topo({Make("a.test", 1001)});
	nrf_cfg *c = LoadNrf(Make("e.test", 1002).Json());
	EXPECT_EQ(nrf_topo_add(t.get(), c, "e.json"), NRF_EINVAL);
	EXPECT_EQ(nrf_topo_resolve(t.get()), NRF_EINVAL);
	EXPECT_EQ(nrf_topo_count(t.get()), 1u);
}
