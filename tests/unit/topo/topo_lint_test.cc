/*
 * Lint findings, one code at a time, on small hand-written topologies and
 * on the seed's demo configurations (conf/demo).
 */
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "topo_test_util.h"

namespace {

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
PathNames(const nrf_topo *t, const nrf_topo_finding *f)
{
	std::string s;
	for (size_t i = 0; i < f->n_path; i++)
		s += std::string(i ? " " : "") + nrf_topo_at(t, f->path[i])->cfg->general.host;
	return s;
}

} // namespace

TEST(TopoLint, TheSeedTopologyHasOnlyACycleThatLoopPreventionBreaks)
{
	auto t = TopoFiles({"conf/demo/forwarding/nrf-a.json", "conf/demo/forwarding/nrf-e.json"});
	ASSERT_NE(t, nullptr);
	Lint l(t.get());
	ASSERT_EQ(l.rc, 0);
	EXPECT_EQ(l.l.count[NRF_TOPO_ERROR], 0u) << l.All();
	ASSERT_EQ(l.Code("cycle-prevented").size(), 1u) << l.All();
	EXPECT_EQ(l.l.count[NRF_TOPO_WARNING], 1u) << l.All();
	EXPECT_EQ(l.Code("longest-path").size(), 1u);
}

TEST(TopoLint, TheMisroutedSeedTopologyEndsIn508AtTheOrigin)
{
	auto t = TopoFiles(
		{"conf/demo/forwarding/nrf-a.json", "conf/demo/forwarding/nrf-e-misrouted.json"});
	ASSERT_NE(t, nullptr);
	Lint l(t.get());
	auto un = l.Code("peer-unrecognisable");
	ASSERT_EQ(un.size(), 1u) << l.All();
	EXPECT_STREQ(un[0]->refs[0].source, "conf/demo/forwarding/nrf-e-misrouted.json");
	EXPECT_STREQ(un[0]->refs[0].pointer, "/forwardingOptions/nrfHostConfig/0");
	auto cy = l.Code("cycle-loop-detected");
	ASSERT_EQ(cy.size(), 1u) << l.All();
	EXPECT_EQ(PathNames(t.get(), cy[0]),
		"nrf-a.seg1.example.com nrf-e.seg2.example.com nrf-a.seg1.example.com");
	EXPECT_EQ(cy[0]->severity, NRF_TOPO_ERROR);
	EXPECT_EQ(l.Code("cycle-prevented").size(), 0u);
}

TEST(TopoLint, TheGrowthSeedTopologyWarnsOfTheHostOutsideIt)
{
	auto t = TopoFiles({"conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e.json",
		"conf/demo/growth/nrf-g.json"});
	ASSERT_NE(t, nullptr);
	Lint l(t.get());
	EXPECT_EQ(l.l.count[NRF_TOPO_ERROR], 0u) << l.All();
	EXPECT_EQ(l.Code("peer-dangling").size(), 2u) << l.All(); /* nrf-b, listed by E and G */
	EXPECT_EQ(l.Code("cycle-prevented").size(), 1u) << l.All();
}

TEST(TopoLint, AnInvalidConfigurationIsAnErrorWithEveryProblem)
{
	int err = 0;
	TopoPtr t(nrf_topo_create(&err));
	nrf_cfg_problems probs = {};
	const char *bad = "{\"generalOptions\":{\"ocnrfPort\":70000}}";
	EXPECT_EQ(nrf_cfg_load(bad, strlen(bad), 1, &probs, &err), nullptr);
	ASSERT_GT(probs.n, 0u);
	ASSERT_EQ(nrf_topo_add_invalid(t.get(), "bad.json", err, &probs), 0);
	ASSERT_GE(nrf_topo_add(t.get(), LoadNrf(Make("a.test", 1001).Json()), "a.json"), 0);
	ASSERT_EQ(nrf_topo_resolve(t.get()), 0);
	Lint l(t.get());
	auto f = l.Code("config-invalid");
	ASSERT_EQ(f.size(), 1u);
	EXPECT_EQ(f[0]->n_refs, probs.n);
	EXPECT_EQ(f[0]->refs[0].nrf, -1);
	EXPECT_STREQ(f[0]->refs[0].source, "bad.json");
	nrf_cfg_problems_fini(&probs);
}

TEST(TopoLint, TheSameIdentityOnTwoNrfsIsAnError)
{
	Nrf a = Make("a.test", 1001), b = Make("a.test", 1001);
	b.listen = "127.0.0.2";
	auto t = Topo({a, b});
	Lint l(t.get());
	auto f = l.Code("identity-shared");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_EQ(f[0]->n_refs, 2u);
	EXPECT_STREQ(f[0]->refs[0].pointer, "/generalOptions/ocnrfHost");
}

TEST(TopoLint, AnNrfListedAsItsOwnPeerByItsListenAddressIsAnError)
{
	/* nrf_cfg refuses ocnrfHost and aliases as peers; a listen address
	 * gets through. */
	Nrf a = Make("a.test", 1001);
	a.fwd = {Peer("me.test", "127.0.0.1", 1001)};
	auto t = Topo({a});
	Lint l(t.get());
	auto f = l.Code("peer-is-self");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_STREQ(f[0]->refs[0].pointer, "/forwardingOptions/nrfHostConfig/0");
	EXPECT_STREQ(f[0]->refs[1].pointer, "/runtime/listen/0");
	EXPECT_EQ(l.Code("peer-unrecognisable").size(), 0u);
}

TEST(TopoLint, AnEntryThatNamesAnotherNrfThanItReachesIsAnError)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1003), g = Make("g.test", 1003);
	e.listen = "127.0.0.2";
	a.fwd = {Peer("e.test", "127.0.0.1", 1003)};
	auto t = Topo({a, e, g});
	Lint l(t.get());
	EXPECT_EQ(l.Code("peer-names-two-nrfs").size(), 1u) << l.All();
	EXPECT_EQ(l.Code("peer-unrecognisable").size(), 1u) << l.All();
}

TEST(TopoLint, AnEntryThatNamesNothingIsAWarning)
{
	Nrf a = Make("a.test", 1001);
	a.fwd = {Peer("gone.test", "127.0.0.1", 1999)};
	auto t = Topo({a});
	Lint l(t.get());
	auto f = l.Code("peer-dangling");
	ASSERT_EQ(f.size(), 1u);
	EXPECT_EQ(f[0]->severity, NRF_TOPO_WARNING);
	ASSERT_EQ(f[0]->n_entries, 1u);
	EXPECT_EQ(f[0]->entries[0].from, 0);
	EXPECT_EQ(l.l.count[NRF_TOPO_ERROR], 0u);
}

TEST(TopoLint, ACycleLongerThanMaxViaMembersEndsAtTheHopLimit)
{
	/* a -> b -> c -> a, c does not recognise a; b takes 1 member at most:
	 * entering at a, b sees 1 member (fine), c sees 2 > its 1. */
	Nrf a = Make("a.test", 1001), b = Make("b.test", 1002), c = Make("c.test", 1003);
	a.fwd = {Peer("b.test", "127.0.0.1", 1002)};
	b.fwd = {Peer("c.test", "127.0.0.1", 1003)};
	c.fwd = {Peer("x.test", "127.0.0.1", 1001)};
	c.max_via = 1;
	auto t = Topo({a, b, c});
	Lint l(t.get());
	auto f = l.Code("cycle-hop-limit");
	ASSERT_GE(f.size(), 1u) << l.All();
	EXPECT_EQ(f[0]->severity, NRF_TOPO_ERROR);
	bool names_limit = false;
	for (size_t i = 0; i < f[0]->n_refs; i++)
		names_limit |= std::string(f[0]->refs[i].pointer) == "/forwardingOptions/maxViaMembers";
	EXPECT_TRUE(names_limit);
}

TEST(TopoLint, ScopeSetSkipsTheWholeSetAndBreaksTheCycle)
{
	/* b -> d (same set, forwarding) -> c -> back to b. c names b wrongly,
	 * but applies scope SET: d, a host of b's set, is in Via, so c skips
	 * the whole set, b included. */
	Nrf b = Make("b.test", 1002, "set2"), c = Make("c.test", 1003, "set1");
	Nrf d = Make("d.test", 1004, "set2");
	b.fwd = {Peer("d.test", "127.0.0.1", 1004)};
	d.sets = {{"set1", {Peer("c.test", "127.0.0.1", 1003)}}};
	c.sets = {{"set2", {Peer("x.test", "127.0.0.1", 1002, 1),
				   Peer("d.test", "127.0.0.1", 1004, 2)}}};
	c.scope = "SET";
	auto t = Topo({b, c, d});
	Lint l(t.get());
	EXPECT_EQ(l.Code("peer-unrecognisable").size(), 1u) << l.All();
	EXPECT_EQ(l.Code("cycle-loop-detected").size(), 0u) << l.All();
	auto f = l.Code("cycle-prevented");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_NE(std::string(f[0]->message).find("skips the NRF set of b.test:1002"),
		std::string::npos)
		<< f[0]->message;
}

TEST(TopoLint, APathLongerThanAHopsMaxViaMembersIsAWarning)
{
	Nrf a = Make("a.test", 1001), b = Make("b.test", 1002), c = Make("c.test", 1003);
	Nrf d = Make("d.test", 1004);
	a.fwd = {Peer("b.test", "127.0.0.1", 1002)};
	b.fwd = {Peer("c.test", "127.0.0.1", 1003)};
	c.fwd = {Peer("d.test", "127.0.0.1", 1004)};
	d.max_via = 2;
	auto t = Topo({a, b, c, d});
	Lint l(t.get());
	auto f = l.Code("path-over-max-via");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_EQ(PathNames(t.get(), f[0]), "a.test b.test c.test d.test");
	EXPECT_EQ(l.l.longest_path, 3u); /* a -> b -> c; d answers 508 */
	EXPECT_TRUE(l.l.path_search_complete);
}

TEST(TopoLint, AGrowthSetListingAnNrfOfAnotherSetIsAWarning)
{
	Nrf a = Make("a.test", 1001, "set1"), e = Make("e.test", 1002, "set3");
	a.sets = {{"set2", {Peer("e.test", "127.0.0.1", 1002)}}};
	auto t = Topo({a, e});
	Lint l(t.get());
	auto f = l.Code("set-id-mismatch");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_STREQ(f[0]->refs[1].pointer, "/generalOptions/nrfSetId");
}

TEST(TopoLint, ScopeSetOnASetListedWithoutAllItsMembersIsAWarning)
{
	Nrf a = Make("a.test", 1001, "set1"), e = Make("e.test", 1002, "set2");
	Nrf g = Make("g.test", 1003, "set2");
	a.sets = {{"set2", {Peer("e.test", "127.0.0.1", 1002)}}}; /* g missing */
	a.scope = "SET";
	auto t = Topo({a, e, g});
	Lint l(t.get());
	auto f = l.Code("set-listed-partially");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_NE(std::string(f[0]->message).find("g.test:1003"), std::string::npos);
}

TEST(TopoLint, APatternThatSelectsNoStatusIsAWarning)
{
	Nrf a = Make("a.test", 1001);
	a.reroute = "^999$";
	auto t = Topo({a});
	Lint l(t.get());
	auto f = l.Code("pattern-matches-nothing");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_STREQ(f[0]->refs[0].pointer,
		"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern");
}

TEST(TopoLint, AnNrfNoOneForwardsToIsInfo)
{
	Nrf a = Make("a.test", 1001), e = Make("e.test", 1002);
	a.fwd = {Peer("e.test", "127.0.0.1", 1002)};
	auto t = Topo({a, e});
	Lint l(t.get());
	auto f = l.Code("nrf-unreachable");
	ASSERT_EQ(f.size(), 1u) << l.All();
	EXPECT_EQ(f[0]->refs[0].nrf, 0);
	EXPECT_EQ(l.l.count[NRF_TOPO_WARNING] + l.l.count[NRF_TOPO_ERROR], 0u) << l.All();
}

TEST(TopoLint, FindingsComeInCodeOrderAndTheSameEveryTime)
{
	auto t = TopoFiles({"conf/demo/growth/nrf-a.json", "conf/demo/growth/nrf-e-misrouted.json",
		"conf/demo/growth/nrf-g.json"});
	ASSERT_NE(t, nullptr);
	Lint l1(t.get()), l2(t.get());
	size_t n;
	const nrf_topo_code *codes = nrf_topo_codes(&n);
	ASSERT_EQ(l1.l.n, l2.l.n);
	size_t last = 0;
	for (size_t i = 0; i < l1.l.n; i++) {
		EXPECT_STREQ(l1.l.v[i].message, l2.l.v[i].message);
		size_t c = 0;
		while (c < n && std::string(codes[c].code) != l1.l.v[i].code)
			c++;
		ASSERT_LT(c, n);
		EXPECT_GE(c, last);
		last = c;
	}
	EXPECT_GE(l1.l.count[NRF_TOPO_ERROR], 2u) << l1.All();
}

TEST(TopoLint, EveryCodeIsDocumented)
{
	std::ifstream f("docs/nrfwd-ctl.md");
	std::stringstream ss;
	ss << f.rdbuf();
	std::string doc = ss.str();
	size_t n;
	const nrf_topo_code *codes = nrf_topo_codes(&n);
	std::set<std::string> seen;
	for (size_t i = 0; i < n; i++) {
		EXPECT_TRUE(seen.insert(codes[i].code).second) << codes[i].code;
		EXPECT_NE(doc.find(std::string("`") + codes[i].code + "`"), std::string::npos)
			<< codes[i].code << " is not in docs/nrfwd-ctl.md";
	}
}
