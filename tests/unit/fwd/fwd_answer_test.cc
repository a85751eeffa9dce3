#include <gtest/gtest.h>

#include <jansson.h>

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
			EXPECT_STREQ(p->retry_after, "");
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
