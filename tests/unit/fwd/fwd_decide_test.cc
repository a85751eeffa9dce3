#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fwd_test_util.h"

namespace {

/* Self nrf-a:8080. Forwarding: e (1), f (1), h (2). Growth: set2 {g1 (1),
 * g2 (2)}, set3 {k1 (1)}. Peer indices: e=0 f=1 h=2 g1=3 g2=4 k1=5. */
std::string
Doc(const std::string &fwd_extra = "", const std::string &growth_extra = "",
	const char *fwd_status = "ENABLED", const char *growth_status = "ENABLED",
	int attempts = 16)
{
	return std::string(R"({
  "generalOptions": {"ocnrfHost": "nrf-a.seg1.example.com", "ocnrfPort": 8080,
                     "aliases": ["10.0.0.1:8080"]},
  "forwardingOptions": {
    "featureStatus": ")") + fwd_status + R"(", )" + fwd_extra + R"(
    "maxForwardAttempts": )" + std::to_string(attempts) + R"(, "maxViaMembers": 4,
    "nrfHostConfig": [
      {"fqdn": "nrf-e.seg2.example.com", "ipv4Address": "10.0.2.2", "port": 8080, "priority": 1},
      {"fqdn": "nrf-f.seg2.example.com", "port": 8080, "priority": 1},
      {"fqdn": "nrf-h.seg3.example.com", "port": 8080, "priority": 2}
    ]
  },
  "nrfGrowth": {"nrfForwardingOptions": {
    "featureStatus": ")" + growth_status + R"(", )" + growth_extra + R"(
    "nrfHostConfig": {"staticNrfConfigList": [
      {"nrfSetId": "set2", "nrfHostConfigList": [
        {"fqdn": "nrf-g2.set2.example.com", "port": 8080, "priority": 2},
        {"fqdn": "nrf-g1.set2.example.com", "port": 8080, "priority": 1}]},
      {"nrfSetId": "set3", "nrfHostConfigList": [
        {"fqdn": "nrf-k1.set3.example.com", "port": 8080, "priority": 1}]}
    ]}
  }}
})";
}

std::vector<std::string>
CandNames(const nrf_cfg *c, const nrf_fwd_plan &p)
{
	std::vector<std::string> v;
	for (uint16_t i = 0; i < p.n_cand; i++)
		v.push_back(c->peers[p.cand[i]].fqdn);
	return v;
}

int
PeerIndex(const nrf_cfg *c, const char *fqdn)
{
	for (uint16_t i = 0; i < c->n_peers; i++)
		if (std::string(c->peers[i].fqdn) == fqdn)
			return i;
	ADD_FAILURE() << "no peer " << fqdn;
	return 0;
}

class FwdDecide : public ::testing::Test {
protected:
	void Load(const std::string &doc)
	{
		cfg = LoadCfg(doc);
		ASSERT_NE(cfg, nullptr);
		table = MakeTable(cfg.get());
		ASSERT_NE(table, nullptr);
	}
	nrf_fwd_plan Decide(const nrf_via_result &via, nrf_fwd_op op = NRF_OP_NF_DISCOVER,
		uint32_t rotation = 0, const uint64_t *down = nullptr)
	{
		nrf_fwd_plan p;
		memset(&p, 0xa5, sizeof(p));
		EXPECT_EQ(nrf_fwd_decide(table.get(), &via, op, rotation, down, &p), 0);
		return p;
	}
	int Idx(const char *fqdn) { return PeerIndex(cfg.get(), fqdn); }
	CfgPtr cfg;
	TablePtr table;
};

} // namespace

TEST_F(FwdDecide, OwnIdentityInViaIsALoop)
{
	Load(Doc());
	nrf_fwd_plan p = Decide(ViaWith({}, 1, true));
	EXPECT_EQ(p.verdict, NRF_FWD_LOOP_DETECTED);
	EXPECT_EQ(p.error, NRF_COND_LOOP_DETECTION);
	EXPECT_EQ(p.n_cand, 0);
}

TEST_F(FwdDecide, LoopDetectionComesBeforeTheHopLimitAndTheOperation)
{
	Load(Doc());
	EXPECT_EQ(Decide(ViaWith({}, 100, true)).verdict, NRF_FWD_LOOP_DETECTED);
	EXPECT_EQ(Decide(ViaWith({}, 1, true), NRF_OP_OTHER).verdict, NRF_FWD_LOOP_DETECTED);
}

TEST_F(FwdDecide, MoreMembersThanMaxViaMembersHitsTheHopLimit)
{
	Load(Doc());
	EXPECT_EQ(Decide(ViaWith({}, 4)).verdict, NRF_FWD_FORWARD);
	nrf_fwd_plan p = Decide(ViaWith({}, 5));
	EXPECT_EQ(p.verdict, NRF_FWD_HOP_LIMIT);
	EXPECT_EQ(p.error, NRF_COND_HOP_LIMIT);
}

TEST_F(FwdDecide, NonForwardableOperationsStayLocal)
{
	Load(Doc());
	EXPECT_EQ(Decide(ViaWith({}), NRF_OP_OTHER).verdict, NRF_FWD_LOCAL_ONLY);
}

TEST_F(FwdDecide, ADisabledStatusSwitchKeepsTheOperationLocal)
{
	Load(Doc(R"("accessTokenStatus": "DISABLED",)"));
	EXPECT_EQ(Decide(ViaWith({}), NRF_OP_ACCESS_TOKEN).verdict, NRF_FWD_LOCAL_ONLY);
	EXPECT_EQ(Decide(ViaWith({}), NRF_OP_NF_DISCOVER).verdict, NRF_FWD_FORWARD);
	EXPECT_FALSE(nrf_fwd_op_enabled(cfg.get(), NRF_OP_ACCESS_TOKEN));
	EXPECT_TRUE(nrf_fwd_op_enabled(cfg.get(), NRF_OP_NF_STATUS_UNSUBSCRIBE));
}

TEST_F(FwdDecide, BothModesDisabledMeansLocalOnly)
{
	Load(Doc("", "", "DISABLED", "DISABLED"));
	EXPECT_EQ(Decide(ViaWith({})).verdict, NRF_FWD_LOCAL_ONLY);
}

TEST_F(FwdDecide, GrowthSetsComeFirstThenForwardingPeersByPriority)
{
	Load(Doc());
	nrf_fwd_plan p = Decide(ViaWith({}));
	ASSERT_EQ(p.verdict, NRF_FWD_FORWARD);
	std::vector<std::string> want = {"nrf-g1.set2.example.com", "nrf-g2.set2.example.com",
		"nrf-k1.set3.example.com", "nrf-e.seg2.example.com", "nrf-f.seg2.example.com",
		"nrf-h.seg3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	EXPECT_EQ(p.n_skip, 0);
}

TEST_F(FwdDecide, OnlyEnabledModesGiveCandidates)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	nrf_fwd_plan p = Decide(ViaWith({}));
	std::vector<std::string> want = {"nrf-e.seg2.example.com", "nrf-f.seg2.example.com",
		"nrf-h.seg3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);

	Load(Doc("", "", "DISABLED", "ENABLED"));
	p = Decide(ViaWith({}));
	want = {"nrf-g1.set2.example.com", "nrf-g2.set2.example.com", "nrf-k1.set3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	EXPECT_EQ(p.error_mode, NRF_MODE_GROWTH);
}

TEST_F(FwdDecide, EqualPrioritiesAreRotatedPerRequest)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	std::vector<std::string> r0 = {"nrf-e.seg2.example.com", "nrf-f.seg2.example.com",
		"nrf-h.seg3.example.com"};
	std::vector<std::string> r1 = {"nrf-f.seg2.example.com", "nrf-e.seg2.example.com",
		"nrf-h.seg3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 0)), r0);
	EXPECT_EQ(CandNames(cfg.get(), Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 1)), r1);
	EXPECT_EQ(CandNames(cfg.get(), Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 2)), r0);
	EXPECT_EQ(CandNames(cfg.get(), Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 0xffffffffu)), r1);
}

TEST_F(FwdDecide, CandidatesStopAtMaxForwardAttempts)
{
	Load(Doc("", "", "ENABLED", "ENABLED", 2));
	nrf_fwd_plan p = Decide(ViaWith({}));
	std::vector<std::string> want = {"nrf-g1.set2.example.com", "nrf-g2.set2.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
}

TEST_F(FwdDecide, APeerFoundInViaIsSkippedWithTheReason)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	int e = Idx("nrf-e.seg2.example.com");
	nrf_fwd_plan p = Decide(ViaWith({e}));
	std::vector<std::string> want = {"nrf-f.seg2.example.com", "nrf-h.seg3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	ASSERT_EQ(p.n_skip, 1);
	EXPECT_EQ(p.skip[0].peer, e);
	EXPECT_EQ(p.skip[0].reason, NRF_FWD_SKIP_VIA_HOST);
	EXPECT_EQ(p.n_skip_via, 1u);
	EXPECT_EQ(p.error, NRF_COND_NOT_REACHABLE);
}

TEST_F(FwdDecide, HostScopeSkipsOnlyTheHostOfTheSet)
{
	Load(Doc("", R"("loopPreventionScope": "HOST",)", "DISABLED", "ENABLED"));
	nrf_fwd_plan p = Decide(ViaWith({Idx("nrf-g1.set2.example.com")}));
	std::vector<std::string> want = {"nrf-g2.set2.example.com", "nrf-k1.set3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
}

TEST_F(FwdDecide, SetScopeSkipsTheWholeSet)
{
	Load(Doc("", R"("loopPreventionScope": "SET",)", "DISABLED", "ENABLED"));
	int g1 = Idx("nrf-g1.set2.example.com"), g2 = Idx("nrf-g2.set2.example.com");
	nrf_fwd_plan p = Decide(ViaWith({g1}));
	std::vector<std::string> want = {"nrf-k1.set3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	ASSERT_EQ(p.n_skip, 2);
	EXPECT_EQ(p.skip[0].peer, g1);
	EXPECT_EQ(p.skip[0].reason, NRF_FWD_SKIP_VIA_HOST);
	EXPECT_EQ(p.skip[1].peer, g2);
	EXPECT_EQ(p.skip[1].reason, NRF_FWD_SKIP_VIA_SET);
}

TEST_F(FwdDecide, HeldDownPeersComeLastAsALastResortAfterLoopPrevention)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	uint64_t down[NRF_CFG_MAX_PEERS / 64] = {};
	int e = Idx("nrf-e.seg2.example.com"), f = Idx("nrf-f.seg2.example.com");
	down[e >> 6] |= 1ull << (e & 63);
	down[f >> 6] |= 1ull << (f & 63);
	nrf_fwd_plan p = Decide(ViaWith({e}), NRF_OP_NF_DISCOVER, 0, down);
	std::vector<std::string> want = {"nrf-h.seg3.example.com", "nrf-f.seg2.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	EXPECT_EQ(p.cand_down, 0x2); /* f is held down: tried anyway, after h */
	ASSERT_EQ(p.n_skip, 1);
	EXPECT_EQ(p.skip[0].reason, NRF_FWD_SKIP_VIA_HOST); /* in Via and down: Via wins */
	EXPECT_EQ(p.n_skip_down, 0u);
}

TEST_F(FwdDecide, HeldDownPeersBeyondTheAttemptLimitAreSkipped)
{
	Load(Doc("", "", "ENABLED", "DISABLED", 2));
	uint64_t down[NRF_CFG_MAX_PEERS / 64] = {};
	int e = Idx("nrf-e.seg2.example.com");
	down[e >> 6] |= 1ull << (e & 63);
	nrf_fwd_plan p = Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 0, down);
	std::vector<std::string> want = {"nrf-f.seg2.example.com", "nrf-h.seg3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	EXPECT_EQ(p.cand_down, 0);
	ASSERT_EQ(p.n_skip, 1);
	EXPECT_EQ(p.skip[0].peer, e);
	EXPECT_EQ(p.skip[0].reason, NRF_FWD_SKIP_DOWN);
	EXPECT_EQ(p.n_skip_down, 1u);
}

TEST_F(FwdDecide, TheOnlyCandidateHeldDownIsStillACandidate)
{
	Load(R"({"generalOptions": {"ocnrfHost": "a", "ocnrfPort": 1},
		"forwardingOptions": {"featureStatus": "ENABLED",
		  "nrfHostConfig": [{"fqdn": "nrf-e", "port": 8080}]}})");
	uint64_t down[NRF_CFG_MAX_PEERS / 64] = {1};
	nrf_fwd_plan p = Decide(ViaWith({}), NRF_OP_NF_DISCOVER, 0, down);
	ASSERT_EQ(p.n_cand, 1);
	EXPECT_EQ(p.cand[0], 0);
	EXPECT_EQ(p.cand_down, 1);
	EXPECT_EQ(p.n_skip, 0);
}

TEST_F(FwdDecide, EveryCandidateInViaMeansLoopPrevention)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	nrf_fwd_plan p = Decide(ViaWith({Idx("nrf-e.seg2.example.com"),
		Idx("nrf-f.seg2.example.com"), Idx("nrf-h.seg3.example.com")}, 3));
	EXPECT_EQ(p.verdict, NRF_FWD_FORWARD);
	EXPECT_EQ(p.n_cand, 0);
	EXPECT_EQ(p.n_skip, 3);
	EXPECT_EQ(p.error, NRF_COND_LOOP_PREVENTION);
	EXPECT_EQ(p.error_mode, NRF_MODE_FORWARDING);
}

TEST_F(FwdDecide, HostsOfASetAlreadyInViaAreMarkedCoveredWithScopeHost)
{
	Load(Doc("", "", "DISABLED", "ENABLED"));
	int g1 = Idx("nrf-g1.set2.example.com");
	nrf_fwd_plan p = Decide(ViaWith({g1}));
	std::vector<std::string> want = {"nrf-g2.set2.example.com", "nrf-k1.set3.example.com"};
	EXPECT_EQ(CandNames(cfg.get(), p), want);
	EXPECT_EQ(p.cand_covered, 0x1); /* g2: set2 answered through g1 */
	EXPECT_EQ(Decide(ViaWith({})).cand_covered, 0);
}

TEST_F(FwdDecide, SkippedByViaWithAHeldDownPeerLeftTriesThatPeer)
{
	Load(Doc("", "", "ENABLED", "DISABLED"));
	uint64_t down[NRF_CFG_MAX_PEERS / 64] = {};
	int h = Idx("nrf-h.seg3.example.com");
	down[0] |= 1ull << h;
	nrf_fwd_plan p = Decide(ViaWith({Idx("nrf-e.seg2.example.com"),
		Idx("nrf-f.seg2.example.com")}, 2), NRF_OP_NF_DISCOVER, 0, down);
	ASSERT_EQ(p.n_cand, 1);
	EXPECT_EQ(p.cand[0], h);
	EXPECT_EQ(p.cand_down, 1);
}

TEST_F(FwdDecide, NoPeersAtAllIsNotReachable)
{
	Load(R"({"generalOptions": {"ocnrfHost": "a", "ocnrfPort": 1},
		"forwardingOptions": {"featureStatus": "ENABLED"}})");
	nrf_fwd_plan p = Decide(ViaWith({}));
	EXPECT_EQ(p.verdict, NRF_FWD_FORWARD);
	EXPECT_EQ(p.n_cand, 0);
	EXPECT_EQ(p.error, NRF_COND_NOT_REACHABLE);
}

TEST_F(FwdDecide, SkipsBeyondTheRecordLimitAreStillCounted)
{
	std::string peers;
	for (int i = 0; i < 40; i++)
		peers += std::string(i ? "," : "") + R"({"fqdn": "p)" + std::to_string(i) +
			R"(.example.com", "port": 80})";
	Load(R"({"generalOptions": {"ocnrfHost": "a", "ocnrfPort": 1},
		"forwardingOptions": {"featureStatus": "ENABLED", "maxViaMembers": 64,
		"nrfHostConfig": [)" + peers + "]}}");
	nrf_via_result via = {};
	via.members = 40;
	for (int i = 0; i < 40; i++)
		via.peers[0] |= 1ull << i;
	nrf_fwd_plan p = Decide(via);
	EXPECT_EQ(p.n_skip, NRF_FWD_MAX_SKIPS);
	EXPECT_EQ(p.n_skip_via, 40u);
	EXPECT_EQ(p.error, NRF_COND_LOOP_PREVENTION);
}

TEST_F(FwdDecide, RejectsNullArguments)
{
	Load(Doc());
	nrf_via_result via = ViaWith({});
	nrf_fwd_plan p;
	EXPECT_EQ(nrf_fwd_decide(nullptr, &via, NRF_OP_NF_DISCOVER, 0, nullptr, &p), NRF_EINVAL);
	EXPECT_EQ(nrf_fwd_decide(table.get(), nullptr, NRF_OP_NF_DISCOVER, 0, nullptr, &p),
		NRF_EINVAL);
	EXPECT_EQ(nrf_fwd_decide(table.get(), &via, NRF_OP_NF_DISCOVER, 0, nullptr, nullptr),
		NRF_EINVAL);
}

TEST(FwdTable, RejectsANullSnapshot)
{
	int err = 0;
	EXPECT_EQ(nrf_fwd_table_create(nullptr, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	nrf_fwd_table_free(nullptr);
}

TEST(FwdIdentities, ListsSelfAliasesAndEveryPeerAddress)
{
	CfgPtr c = LoadCfg(Doc());
	ASSERT_NE(c, nullptr);
	nrf_via_identity ids[64];
	int n = nrf_fwd_identities(c.get(), ids, 64);
	/* self, alias, e (fqdn+ipv4), f, h, g2, g1, k1 */
	ASSERT_EQ(n, 9);
	EXPECT_EQ(ids[0].kind, NRF_VIA_SELF);
	EXPECT_STREQ(ids[0].host, "nrf-a.seg1.example.com");
	EXPECT_EQ(ids[1].kind, NRF_VIA_SELF);
	EXPECT_STREQ(ids[1].host, "10.0.0.1");
	EXPECT_EQ(ids[2].kind, NRF_VIA_PEER);
	EXPECT_EQ(ids[3].kind, NRF_VIA_PEER);
	EXPECT_EQ(ids[2].peer, ids[3].peer);
	EXPECT_EQ(nrf_fwd_identities(c.get(), ids, 3), NRF_ETOOBIG);
}

TEST(FwdNames, VerdictsAndSkipReasonsHaveTheNamesTheToolsPrint)
{
	EXPECT_STREQ(nrf_fwd_verdict_name(NRF_FWD_LOOP_DETECTED), "loop-detected");
	EXPECT_STREQ(nrf_fwd_verdict_name(NRF_FWD_HOP_LIMIT), "hop-limit");
	EXPECT_STREQ(nrf_fwd_verdict_name(NRF_FWD_LOCAL_ONLY), "local-only");
	EXPECT_STREQ(nrf_fwd_verdict_name(NRF_FWD_FORWARD), "forward");
	EXPECT_STREQ(nrf_fwd_verdict_name(static_cast<nrf_fwd_verdict>(99)), "unknown");
	EXPECT_STREQ(nrf_fwd_skip_reason_name(NRF_FWD_SKIP_VIA_HOST), "via-host");
	EXPECT_STREQ(nrf_fwd_skip_reason_name(NRF_FWD_SKIP_DOWN), "down");
}
