#include <gtest/gtest.h>

#include <jansson.h>

#include <cstring>
#include <string>

#include "fwd_test_util.h"

namespace {

const char *kBase = R"({"generalOptions": {"ocnrfHost": "nrf-a", "ocnrfPort": 8080},
  "forwardingOptions": {"featureStatus": "ENABLED", %s
    "nrfHostConfig": [{"fqdn": "nrf-e", "port": 8080}]}})";

std::string
Doc(const std::string &extra)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), kBase, extra.c_str());
	return buf;
}

bool
Empty(const std::string &s)
{
	return nrf_fwd_discovery_empty(s.data(), s.size());
}

json_t *
Parse(const nrf_fwd_problem *p)
{
	json_error_t e;
	json_t *j = json_loadb(p->body, p->body_len, 0, &e);
	EXPECT_NE(j, nullptr) << e.text << ": " << std::string(p->body, p->body_len);
	return j;
}

} // namespace

TEST(FwdAnswer, DefaultTriggerForwardsA404)
{
	CfgPtr c = LoadCfg(Doc(""));
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 404, nullptr, 0), NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_PROFILE_RETRIEVAL, 404, nullptr, 0),
		NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 500, nullptr, 0), NRF_FWD_RELAY);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_PROFILE_RETRIEVAL, 200, "{}", 2),
		NRF_FWD_RELAY);
}

TEST(FwdAnswer, AnEmptyDiscoveryResultIsForwarded)
{
	CfgPtr c = LoadCfg(Doc(""));
	std::string empty = R"({"validityPeriod": 3600, "nfInstances": [ ]})";
	std::string full = R"({"validityPeriod": 3600, "nfInstances": [{"nfInstanceId": "x"}]})";
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 200, empty.data(), empty.size()),
		NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 200, full.data(), full.size()),
		NRF_FWD_RELAY);
	/* Only NFDiscover answers are looked at. */
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_PROFILE_RETRIEVAL, 200, empty.data(),
			  empty.size()),
		NRF_FWD_RELAY);
}

TEST(FwdAnswer, EmptyDiscoveryTriggerCanBeTurnedOff)
{
	CfgPtr c = LoadCfg(Doc(R"("forwardingTriggers": {"emptyDiscoveryResult": false},)"));
	std::string empty = R"({"nfInstances":[]})";
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 200, empty.data(), empty.size()),
		NRF_FWD_RELAY);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 404, nullptr, 0), NRF_FWD_NEXT);
}

TEST(FwdAnswer, TriggerPatternIsConfigurable)
{
	CfgPtr c = LoadCfg(Doc(R"("forwardingTriggers": {"statusCodes": {"pattern": "^(404|410)$"}},)"));
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 410, nullptr, 0), NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 404, nullptr, 0), NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 400, nullptr, 0), NRF_FWD_RELAY);
}

TEST(FwdAnswer, NothingIsForwardedWhenTheSwitchIsOff)
{
	CfgPtr c = LoadCfg(Doc(R"("discoveryStatus": "DISABLED",)"));
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_NF_DISCOVER, 404, nullptr, 0), NRF_FWD_RELAY);
	EXPECT_EQ(nrf_fwd_local_action(c.get(), NRF_OP_OTHER, 404, nullptr, 0), NRF_FWD_RELAY);
}

TEST(FwdAnswer, PeerAnswersMatchingTheReroutePatternTryTheNextPeer)
{
	CfgPtr c = LoadCfg(Doc(""));
	EXPECT_EQ(nrf_fwd_peer_action(c.get(), 503), NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_peer_action(c.get(), 500), NRF_FWD_NEXT);
	EXPECT_EQ(nrf_fwd_peer_action(c.get(), 200), NRF_FWD_RELAY);
	EXPECT_EQ(nrf_fwd_peer_action(c.get(), 404), NRF_FWD_RELAY);
}

TEST(FwdAnswer, APeer508IsRelayedNotRerouted)
{
	CfgPtr c = LoadCfg(Doc(""));
	EXPECT_EQ(nrf_fwd_peer_action(c.get(), 508), NRF_FWD_RELAY);
}

TEST(FwdDiscoveryEmpty, FindsTheTopLevelMemberOnly)
{
	EXPECT_TRUE(Empty(R"({"nfInstances":[]})"));
	EXPECT_TRUE(Empty(" {\n\t\"validityPeriod\" : 10 ,\"x\":{\"nfInstances\":[1]},\"nfInstances\" :\n[ ] }"));
	EXPECT_TRUE(Empty(R"({"a":"q\"nfInstances\":[]","b":[{"c":"]"}],"nfInstances":[]})"));
	EXPECT_FALSE(Empty(R"({"x":{"nfInstances":[]}})"));
	EXPECT_FALSE(Empty(R"({"nfInstances":[{}]})"));
	EXPECT_FALSE(Empty(R"({"nfInstances":null})"));
	EXPECT_FALSE(Empty(R"({"validityPeriod":1})"));
	EXPECT_FALSE(Empty(R"([])"));
	EXPECT_FALSE(Empty(""));
	EXPECT_FALSE(Empty(R"({"nfInstances":[)"));
	EXPECT_FALSE(Empty(R"({"nfInstances")"));
	EXPECT_FALSE(nrf_fwd_discovery_empty(nullptr, 0));
	/* Bounded by len: the terminating "]}" lies beyond it. */
	EXPECT_FALSE(nrf_fwd_discovery_empty("{\"nfInstances\":[]}", 16));
}

TEST(FwdProblem, DefaultsFollowTheSpecTable)
{
	CfgPtr c = LoadCfg(Doc(""));
	TablePtr t = MakeTable(c.get());
	struct {
		nrf_cfg_cond cond;
		int status;
		const char *cause;
	} want[] = {
		{NRF_COND_LOOP_DETECTION, 508, "LOOP_DETECTED"},
		{NRF_COND_LOOP_PREVENTION, 508, "LOOP_PREVENTED"},
		{NRF_COND_HOP_LIMIT, 508, "MAX_HOPS_REACHED"},
		{NRF_COND_NOT_REACHABLE, 504, "TARGET_NF_NOT_REACHABLE"},
		{NRF_COND_OVERLOAD, 503, "NF_CONGESTION"},
		{NRF_COND_LOCAL_UNAVAILABLE, 503, "NF_SERVICE_FAILURE"},
		{NRF_COND_CLIENT_LIMIT, 429, "NF_CONGESTION_RISK"},
	};
	for (int m = 0; m < NRF_MODE_COUNT; m++) {
		for (auto &w : want) {
			const nrf_fwd_problem *p =
				nrf_fwd_table_problem(t.get(), (nrf_cfg_mode)m, w.cond);
			EXPECT_EQ(p->status, w.status);
			json_t *j = Parse(p);
			ASSERT_NE(j, nullptr);
			EXPECT_EQ(json_integer_value(json_object_get(j, "status")), w.status);
			EXPECT_STREQ(json_string_value(json_object_get(j, "cause")), w.cause);
			EXPECT_NE(json_string_value(json_object_get(j, "title")), nullptr);
			/* Local_Unavailable: health probes bring the NRF back
			 * within about a second; Overload: a shed request may
			 * come back in a second. */
			EXPECT_STREQ(p->retry_after,
				w.cond == NRF_COND_LOCAL_UNAVAILABLE || w.cond == NRF_COND_OVERLOAD
					? "1" : "");
			EXPECT_STREQ(p->location, "");
			json_decref(j);
		}
	}
}

TEST(FwdProblem, ConfiguredResponsesWinWithRetryAfterAndLocation)
{
	CfgPtr c = LoadCfg(Doc(R"("errorResponses": [
	  {"errorCondition": "NRF_Forwarding_Loop_Detection", "errorCode": 508,
	   "errorCause": "MY_LOOP", "errorTitle": "Loop \"here\"", "errorDetail": "seen",
	   "retryAfter": "30", "redirectUrl": "http://ignored.example.com/"},
	  {"errorCondition": "NRF_Not_Reachable", "errorCode": 307,
	   "errorCause": "REDIRECT", "errorTitle": "Elsewhere",
	   "redirectUrl": "http://nrf-z.example.com:8080/"}],)"));
	TablePtr t = MakeTable(c.get());
	const nrf_fwd_problem *p =
		nrf_fwd_table_problem(t.get(), NRF_MODE_FORWARDING, NRF_COND_LOOP_DETECTION);
	json_t *j = Parse(p);
	ASSERT_NE(j, nullptr);
	EXPECT_STREQ(json_string_value(json_object_get(j, "cause")), "MY_LOOP");
	EXPECT_STREQ(json_string_value(json_object_get(j, "title")), "Loop \"here\"");
	EXPECT_STREQ(json_string_value(json_object_get(j, "detail")), "seen");
	EXPECT_STREQ(p->retry_after, "30");
	EXPECT_STREQ(p->location, ""); /* not a 3xx */
	json_decref(j);

	p = nrf_fwd_table_problem(t.get(), NRF_MODE_FORWARDING, NRF_COND_NOT_REACHABLE);
	EXPECT_EQ(p->status, 307);
	EXPECT_STREQ(p->location, "http://nrf-z.example.com:8080/");
	/* The growth group keeps its defaults. */
	p = nrf_fwd_table_problem(t.get(), NRF_MODE_GROWTH, NRF_COND_NOT_REACHABLE);
	EXPECT_EQ(p->status, 504);
}

TEST(FwdProblem, RenderEscapesAndOmitsEmptyDetail)
{
	char buf[256];
	int n = nrf_fwd_problem_render(buf, sizeof(buf), 400, "Bad\nRequest", "INVALID_MSG_FORMAT",
		"");
	ASSERT_GT(n, 0);
	EXPECT_EQ((size_t)n, strlen(buf));
	json_t *j = json_loads(buf, 0, nullptr);
	ASSERT_NE(j, nullptr);
	EXPECT_STREQ(json_string_value(json_object_get(j, "title")), "Bad\nRequest");
	EXPECT_EQ(json_object_get(j, "detail"), nullptr);
	EXPECT_EQ(json_integer_value(json_object_get(j, "status")), 400);
	json_decref(j);
}

TEST(FwdProblem, RenderRefusesATooSmallBuffer)
{
	char buf[16];
	EXPECT_EQ(nrf_fwd_problem_render(buf, sizeof(buf), 400, "Bad Request", "X", "d"),
		NRF_ETOOBIG);
	EXPECT_STREQ(buf, "");
	EXPECT_EQ(nrf_fwd_problem_render(nullptr, 0, 400, "", "", ""), NRF_ETOOBIG);
}

/* ------------------------------------------------------------------------ */
/* The answer rule (docs/failures.md): failures are never absence.          */

namespace {

const char *kEmpty = R"({"validityPeriod":10,"nfInstances":[]})";
const char *kFull = R"({"nfInstances":[{"nfInstanceId":"x","nfType":"AMF"}]})";

nrf_fwd_plan
Plan(nrf_fwd_op op = NRF_OP_NF_DISCOVER)
{
	nrf_fwd_plan p;
	memset(&p, 0, sizeof(p));
	p.verdict = NRF_FWD_FORWARD;
	p.op = op;
	p.error = NRF_COND_NOT_REACHABLE;
	return p;
}

nrf_fwd_ledger
Ledger(nrf_fwd_local local, uint16_t tried = 0, uint16_t failed = 0)
{
	nrf_fwd_ledger l{};
	l.local = (uint8_t)local;
	l.tried = tried;
	l.failed = failed;
	l.uncovered = failed;
	return l;
}

nrf_fwd_next
Peer(const nrf_cfg *c, const nrf_fwd_plan &p, const nrf_fwd_ledger &l, int status,
	const char *body, nrf_cfg_cond *cond)
{
	return nrf_fwd_peer_answer(c, &p, &l, status, body, body ? strlen(body) : 0, cond);
}

nrf_fwd_next
Final(const nrf_fwd_plan &p, const nrf_fwd_ledger &l, nrf_cfg_cond *cond)
{
	return nrf_fwd_final(&p, &l, cond);
}

} // namespace

TEST(FwdRule, APeersAbsenceIsRelayedWhenTheLocalNrfSaidTheSame)
{
	CfgPtr c = LoadCfg(Doc(""));
	nrf_cfg_cond cond = NRF_COND_COUNT;
	nrf_fwd_plan p = Plan();
	for (nrf_fwd_local l : {NRF_FWD_LOCAL_ABSENT, NRF_FWD_LOCAL_NONE}) {
		EXPECT_EQ(Peer(c.get(), p, Ledger(l, 1), 404, nullptr, &cond), NRF_FWD_DO_RELAY);
		EXPECT_EQ(Peer(c.get(), p, Ledger(l, 1), 200, kEmpty, &cond), NRF_FWD_DO_RELAY);
		nrf_fwd_ledger lg = Ledger(l, 1);
		EXPECT_FALSE(nrf_fwd_peer_needs_body(c.get(), &p, &lg, 200));
	}
	EXPECT_EQ(cond, NRF_COND_COUNT); /* written for ERROR only */
}

TEST(FwdRule, APeersAbsenceAfterALocalFailureIsLocalUnavailable)
{
	CfgPtr c = LoadCfg(Doc(""));
	nrf_cfg_cond cond = NRF_COND_COUNT;
	nrf_fwd_plan p = Plan();
	nrf_fwd_ledger l = Ledger(NRF_FWD_LOCAL_FAILED, 1);
	EXPECT_EQ(Peer(c.get(), p, l, 404, nullptr, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_LOCAL_UNAVAILABLE);
	cond = NRF_COND_COUNT;
	EXPECT_TRUE(nrf_fwd_peer_needs_body(c.get(), &p, &l, 200));
	EXPECT_EQ(Peer(c.get(), p, l, 200, kEmpty, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_LOCAL_UNAVAILABLE);
}

TEST(FwdRule, APeersPositiveAnswerAfterALocalFailureIsRelayed)
{
	CfgPtr c = LoadCfg(Doc(""));
	nrf_cfg_cond cond = NRF_COND_COUNT;
	nrf_fwd_ledger l = Ledger(NRF_FWD_LOCAL_FAILED, 1);
	EXPECT_EQ(Peer(c.get(), Plan(), l, 200, kFull, &cond), NRF_FWD_DO_RELAY);
	EXPECT_EQ(Peer(c.get(), Plan(NRF_OP_NF_PROFILE_RETRIEVAL), l, 200, "{}", &cond),
		NRF_FWD_DO_RELAY);
	EXPECT_EQ(Peer(c.get(), Plan(NRF_OP_NF_STATUS_SUBSCRIBE), l, 201, "{}", &cond),
		NRF_FWD_DO_RELAY);
	EXPECT_EQ(Peer(c.get(), Plan(NRF_OP_ACCESS_TOKEN), l, 400, "{}", &cond),
		NRF_FWD_DO_RELAY); /* not absence: the client's own error */
	/* An empty body only matters to discovery. */
	nrf_fwd_plan prof = Plan(NRF_OP_NF_PROFILE_RETRIEVAL);
	EXPECT_FALSE(nrf_fwd_peer_needs_body(c.get(), &prof, &l, 200));
	EXPECT_EQ(cond, NRF_COND_COUNT);
}

TEST(FwdRule, PeerReroutesAndLoopsKeepTheirMeaning)
{
	CfgPtr c = LoadCfg(Doc(""));
	nrf_cfg_cond cond = NRF_COND_COUNT;
	for (nrf_fwd_local l : {NRF_FWD_LOCAL_NONE, NRF_FWD_LOCAL_ABSENT, NRF_FWD_LOCAL_FAILED}) {
		EXPECT_EQ(Peer(c.get(), Plan(), Ledger(l, 1), 503, nullptr, &cond), NRF_FWD_DO_NEXT);
		EXPECT_EQ(Peer(c.get(), Plan(), Ledger(l, 1), 508, nullptr, &cond), NRF_FWD_DO_RELAY);
	}
}

TEST(FwdRule, ConfiguredTriggersDefineAbsence)
{
	CfgPtr c = LoadCfg(Doc(R"("forwardingTriggers": {"statusCodes": {"pattern": "^(404|410)$"},
		"emptyDiscoveryResult": false},)"));
	nrf_cfg_cond cond = NRF_COND_COUNT;
	nrf_fwd_ledger l = Ledger(NRF_FWD_LOCAL_FAILED, 1);
	EXPECT_EQ(Peer(c.get(), Plan(), l, 410, nullptr, &cond), NRF_FWD_DO_ERROR);
	nrf_fwd_plan disc = Plan();
	EXPECT_FALSE(nrf_fwd_peer_needs_body(c.get(), &disc, &l, 200));
	EXPECT_EQ(Peer(c.get(), Plan(), l, 200, kEmpty, &cond), NRF_FWD_DO_RELAY);
	EXPECT_TRUE(nrf_fwd_claims_absence(c.get(), NRF_OP_OTHER, 404, nullptr, 0));
	EXPECT_FALSE(nrf_fwd_claims_absence(c.get(), NRF_OP_NF_DISCOVER, 200, kEmpty,
		strlen(kEmpty)));
}

TEST(FwdRule, FinalAnswersFollowTheTable)
{
	nrf_fwd_plan p = Plan();
	nrf_fwd_plan via = Plan(); /* every candidate skipped by Via */
	via.n_skip_via = 2;
	via.error = NRF_COND_LOOP_PREVENTION;
	struct {
		const char *what;
		const nrf_fwd_plan *plan;
		nrf_fwd_ledger lg;
		nrf_fwd_next next;
		nrf_cfg_cond cond;
	} rows[] = {
		{"local absent, no candidates", &p, Ledger(NRF_FWD_LOCAL_ABSENT), NRF_FWD_DO_LOCAL,
			NRF_COND_COUNT},
		{"local absent, all in Via", &via, Ledger(NRF_FWD_LOCAL_ABSENT), NRF_FWD_DO_LOCAL,
			NRF_COND_COUNT},
		{"local absent, a try failed", &p, Ledger(NRF_FWD_LOCAL_ABSENT, 1, 1),
			NRF_FWD_DO_ERROR, NRF_COND_NOT_REACHABLE},
		{"local failed, no candidates", &p, Ledger(NRF_FWD_LOCAL_FAILED), NRF_FWD_DO_ERROR,
			NRF_COND_LOCAL_UNAVAILABLE},
		{"local failed, all in Via", &via, Ledger(NRF_FWD_LOCAL_FAILED), NRF_FWD_DO_ERROR,
			NRF_COND_LOCAL_UNAVAILABLE},
		{"local failed, peers failed", &p, Ledger(NRF_FWD_LOCAL_FAILED, 2, 2),
			NRF_FWD_DO_ERROR, NRF_COND_LOCAL_UNAVAILABLE},
		{"local cut short by the request timeout", &p, Ledger(NRF_FWD_LOCAL_PENDING),
			NRF_FWD_DO_ERROR, NRF_COND_LOCAL_UNAVAILABLE},
		{"no local, all in Via", &via, Ledger(NRF_FWD_LOCAL_NONE), NRF_FWD_DO_ERROR,
			NRF_COND_LOOP_PREVENTION},
		{"no local, Via skips and a failure", &via, Ledger(NRF_FWD_LOCAL_NONE, 1, 1),
			NRF_FWD_DO_ERROR, NRF_COND_NOT_REACHABLE},
		{"no local, all failed", &p, Ledger(NRF_FWD_LOCAL_NONE, 2, 2), NRF_FWD_DO_ERROR,
			NRF_COND_NOT_REACHABLE},
		{"no local, no candidates", &p, Ledger(NRF_FWD_LOCAL_NONE), NRF_FWD_DO_ERROR,
			NRF_COND_NOT_REACHABLE},
	};
	for (auto &r : rows) {
		nrf_cfg_cond cond = NRF_COND_COUNT;
		EXPECT_EQ(Final(*r.plan, r.lg, &cond), r.next) << r.what;
		EXPECT_EQ(cond, r.cond) << r.what;
	}
}

TEST(FwdRule, TheHopLimitEndsForwardingUnlessTheLocalNrfFailed)
{
	nrf_fwd_plan p = Plan();
	nrf_cfg_cond cond = NRF_COND_COUNT;
	nrf_fwd_ledger l = Ledger(NRF_FWD_LOCAL_ABSENT);
	l.hop_limit = true;
	EXPECT_EQ(Final(p, l, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_HOP_LIMIT);
	l.local = NRF_FWD_LOCAL_NONE;
	EXPECT_EQ(Final(p, l, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_HOP_LIMIT);
	l.local = NRF_FWD_LOCAL_FAILED;
	EXPECT_EQ(Final(p, l, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_LOCAL_UNAVAILABLE);
}

TEST(FwdRule, HeldDownPeersLeftUntriedAreNotAbsence)
{
	nrf_fwd_plan p = Plan();
	p.n_skip_down = 1;
	nrf_cfg_cond cond = NRF_COND_COUNT;
	EXPECT_EQ(Final(p, Ledger(NRF_FWD_LOCAL_ABSENT), &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_NOT_REACHABLE);
}

TEST(FwdRule, AFailedHostOfASetThatAlreadyAnsweredLeavesNoHole)
{
	nrf_fwd_plan p = Plan();
	p.n_cand = 2;
	p.cand_covered = 0x1; /* cand[0]: its set is in Via (scope HOST) */
	nrf_fwd_ledger l = Ledger(NRF_FWD_LOCAL_ABSENT, 2);
	nrf_fwd_ledger_fail(&p, &l, 0);
	EXPECT_EQ(l.failed, 1);
	EXPECT_EQ(l.uncovered, 0);
	nrf_cfg_cond cond = NRF_COND_COUNT;
	EXPECT_EQ(Final(p, l, &cond), NRF_FWD_DO_LOCAL);
	nrf_fwd_ledger_fail(&p, &l, 1);
	EXPECT_EQ(l.uncovered, 1);
	EXPECT_EQ(Final(p, l, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_NOT_REACHABLE);
	/* Without a local answer a covered failure is still a failure. */
	nrf_fwd_ledger n = Ledger(NRF_FWD_LOCAL_NONE, 1);
	nrf_fwd_ledger_fail(&p, &n, 0);
	EXPECT_EQ(Final(p, n, &cond), NRF_FWD_DO_ERROR);
	EXPECT_EQ(cond, NRF_COND_NOT_REACHABLE);
	nrf_fwd_ledger_fail(&p, &n, -1);
	EXPECT_EQ(n.local, NRF_FWD_LOCAL_FAILED);
}
