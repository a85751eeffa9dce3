// SPDX-License-Identifier: BSD-3-Clause
// Validation: every rule reports a problem at the exact JSON pointer, every
// problem of a document is reported at once, and nothing is half-applied.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

// Load @p doc, expect NRF_ECONFIG and a problem at @p ptr mentioning @p needle.
void
ExpectProblem(const std::string &doc, const std::string &ptr, const std::string &needle)
{
	Loaded l = Load(doc);
	EXPECT_EQ(l.cfg, nullptr) << doc;
	EXPECT_EQ(l.err, NRF_ECONFIG) << doc;
	EXPECT_TRUE(l.Has(ptr, needle)) << "want " << ptr << ": ..." << needle << "...\nin "
					<< doc << "\ngot:\n"
					<< l.Dump();
}

void
ExpectValid(const std::string &doc)
{
	Loaded l = Load(doc);
	EXPECT_NE(l.cfg, nullptr) << doc << "\n" << l.Dump();
	EXPECT_EQ(l.err, 0);
	EXPECT_TRUE(l.problems.empty());
}

std::string
WithPeer(const char *peer_json)
{
	return With(kMinimal, "/forwardingOptions/nrfHostConfig",
		(std::string("[") + peer_json + "]").c_str());
}

const std::string kPeer0 = "/forwardingOptions/nrfHostConfig/0";
const std::string kGrowthList = "/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList";

} // namespace

TEST(CfgParse, RejectsTextThatIsNotJson)
{
	Loaded l = Load("{\n  \"generalOptions\": {\n    \"ocnrfHost\": nrf-a\n  }\n}");
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_EPARSE);
	ASSERT_EQ(l.problems.size(), 1u);
	EXPECT_EQ(l.problems[0].first, "");
	EXPECT_NE(l.problems[0].second.find("line 3"), std::string::npos) << l.Dump();
	EXPECT_NE(l.problems[0].second.find("column"), std::string::npos) << l.Dump();
}

TEST(CfgParse, RejectsEmptyAndTruncatedText)
{
	for (const char *t : {"", "   ", "{", "{\"generalOptions\": {\"ocnrfHost\": \"a\"", "[1,"}) {
		Loaded l = Load(t);
		EXPECT_EQ(l.cfg, nullptr) << t;
		EXPECT_EQ(l.err, NRF_EPARSE) << t;
		EXPECT_EQ(l.problems.size(), 1u) << t;
	}
}

TEST(CfgParse, RejectsANulByteInsideText)
{
	std::string doc(kMinimal);
	doc.insert(doc.find("nrf-a"), 1, '\0');
	Loaded l = Load(doc);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_EPARSE);
	ASSERT_EQ(l.problems.size(), 1u);
	EXPECT_EQ(l.problems[0].first, "");
	EXPECT_NE(l.problems[0].second.find("NUL"), std::string::npos) << l.Dump();
	EXPECT_NE(l.problems[0].second.find("line 1"), std::string::npos) << l.Dump();

	std::string trailing = std::string(kMinimal) + std::string(1, '\0');
	Loaded t = Load(trailing);
	EXPECT_EQ(t.err, NRF_EPARSE);
}

TEST(CfgParse, RejectsAnEscapedNulInsideAString)
{
	Loaded l = Load(R"({"generalOptions": {"ocnrfHost": "nrf\u0000a", "ocnrfPort": 8080}})");
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_EPARSE);
	EXPECT_EQ(l.problems.size(), 1u);
}

TEST(CfgParse, RejectsDuplicateKeys)
{
	Loaded l = Load(R"({"generalOptions": {"ocnrfHost": "a", "ocnrfHost": "b", "ocnrfPort": 1}})");
	EXPECT_EQ(l.err, NRF_EPARSE);
	ASSERT_EQ(l.problems.size(), 1u);
	EXPECT_NE(l.problems[0].second.find("duplicate"), std::string::npos) << l.Dump();
}

TEST(CfgParse, RejectsADocumentThatIsNotAnObject)
{
	for (const char *t : {"[]", "1", "\"x\"", "null", "true"}) {
		Loaded l = Load(t);
		EXPECT_EQ(l.err, NRF_ECONFIG) << t;
		ASSERT_EQ(l.problems.size(), 1u) << t << l.Dump();
		EXPECT_EQ(l.problems[0].first, "");
		EXPECT_NE(l.problems[0].second.find("object"), std::string::npos);
	}
}

TEST(CfgParse, RejectsNullTextWithALength)
{
	int err = 0;
	EXPECT_EQ(nrf_cfg_load(nullptr, 5, 1, nullptr, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	EXPECT_EQ(nrf_cfg_load(nullptr, 0, 1, nullptr, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
}

TEST(CfgValidate, ReportsUnknownFieldsAtEveryObjectLevel)
{
	std::string rich = With(kSpec, "/runtime/localNrf", R"({"address": "10.0.0.3"})");
	rich = With(rich, "/nrfGrowth/nrfForwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 504}])");
	const char *objects[] = {
		"",
		"/generalOptions",
		"/forwardingOptions",
		"/forwardingOptions/forwardingTriggers",
		"/forwardingOptions/forwardingTriggers/statusCodes",
		"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes",
		"/forwardingOptions/nrfHostConfig/0",
		"/forwardingOptions/errorResponses/0",
		"/nrfGrowth",
		"/nrfGrowth/nrfForwardingOptions",
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig",
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0",
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/0",
		"/nrfGrowth/nrfForwardingOptions/errorResponses/0",
		"/runtime",
		"/runtime/listen/0",
		"/runtime/localNrf",
		"/runtime/management",
		"/runtime/timeouts",
		"/runtime/limits",
	};
	for (const char *o : objects) {
		std::string ptr = std::string(o) + "/bogusField";
		Loaded l = Load(With(rich, ptr, "1"));
		EXPECT_EQ(l.err, NRF_ECONFIG) << ptr;
		EXPECT_TRUE(l.Has(ptr, "unknown field")) << ptr << "\n" << l.Dump();
		EXPECT_EQ(l.problems.size(), 1u) << ptr << "\n" << l.Dump();
	}
}

TEST(CfgValidate, FieldNamesAreCaseSensitive)
{
	ExpectProblem(With(kMinimal, "/generalOptions/OcnrfHost", R"("x")"),
		"/generalOptions/OcnrfHost", "unknown field");
}

TEST(CfgValidate, EscapesTildeAndSlashInPointers)
{
	ExpectProblem(With(kMinimal, "/generalOptions/a~1b~0c", "1"), "/generalOptions/a~1b~0c",
		"unknown field");
}

TEST(CfgValidate, RejectsWrongTypes)
{
	struct {
		const char *ptr;
		const char *value;
		const char *needle;
	} cases[] = {
		{"/generalOptions", "[]", "must be an object"},
		{"/generalOptions/ocnrfHost", "5", "must be a string"},
		{"/generalOptions/ocnrfPort", R"("8080")", "must be an integer"},
		{"/generalOptions/ocnrfPort", "8080.0", "must be an integer"},
		{"/generalOptions/nrfSetId", "null", "must be a string"},
		{"/generalOptions/aliases", R"("a:1")", "must be an array"},
		{"/generalOptions/aliases", R"([1])", "must be a string"},
		{"/generalOptions/viaOnResponses", R"("true")", "must be true or false"},
		{"/generalOptions/viaOnResponses", R"("ENABLED")", "must be true or false"},
		{"/generalOptions/viaOnResponses", "1", "must be true or false"},
		{"/forwardingOptions/featureStatus", "true", "must be a string"},
		{"/forwardingOptions/forwardingTriggers", "1", "must be an object"},
		{"/forwardingOptions/forwardingTriggers/emptyDiscoveryResult", R"("true")",
			"must be true or false"},
		{"/forwardingOptions/forwardingTriggers/statusCodes/pattern", "404", "must be a string"},
		{"/forwardingOptions/maxViaMembers", "false", "must be an integer"},
		{"/forwardingOptions/nrfHostConfig", "{}", "must be an array"},
		{"/forwardingOptions/nrfHostConfig", "[1]", "must be an object"},
		{"/forwardingOptions/errorResponses", "{}", "must be an array"},
		{"/forwardingOptions/errorResponses", R"(["x"])", "must be an object"},
		{"/nrfGrowth", "1", "must be an object"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig", "[]", "must be an object"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList", "{}",
			"must be an array"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList", "[[]]",
			"must be an object"},
		{"/runtime", R"("x")", "must be an object"},
		{"/runtime/listen", "{}", "must be an array"},
		{"/runtime/listen", "[true]", "must be an object"},
		{"/runtime/localNrf", "[]", "must be an object"},
		{"/runtime/management/port", R"("9090")", "must be an integer"},
		{"/runtime/limits/maxBodyBytes", "1.5", "must be an integer"},
	};
	for (const auto &c : cases) {
		std::string doc = With(kMinimal, c.ptr, c.value);
		std::string ptr = c.ptr;
		if (std::string(c.value) == "[1]" || std::string(c.value) == "[\"x\"]" ||
			std::string(c.value) == "[[]]" || std::string(c.value) == "[true]")
			ptr += "/0";
		ExpectProblem(doc, ptr, c.needle);
		ExpectProblem(doc, ptr, "wrong type");
	}
}

TEST(CfgValidate, WrongTypeObjectIsReportedOnceWithoutNoiseFromInside)
{
	Loaded l = Load(With(kMinimal, "/generalOptions", "5"));
	EXPECT_EQ(l.err, NRF_ECONFIG);
	ASSERT_EQ(l.problems.size(), 1u) << l.Dump();
	EXPECT_EQ(l.problems[0].first, "/generalOptions");
}

TEST(CfgValidate, RejectsPortOutsideRange)
{
	const char *ports[] = {
		"/generalOptions/ocnrfPort",
		"/runtime/listen/0/port",
		"/runtime/localNrf/port",
	};
	for (const char *p : ports) {
		std::string base = With(kSpec, p, "1");
		ExpectValid(base);
		ExpectValid(With(kSpec, p, "65535"));
		for (const char *v : {"0", "65536", "-1", "100000000000"})
			ExpectProblem(With(kSpec, p, v), p, "out of range");
	}
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "port": 0})"), kPeer0 + "/port",
		"out of range");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "port": 65536})"), kPeer0 + "/port",
		"1..65535");
	ExpectProblem(With(kMinimal, "/runtime/management/port", "65536"),
		"/runtime/management/port", "out of range");
}

TEST(CfgValidate, RejectsNumbersOutsideTheirBounds)
{
	struct {
		const char *ptr;
		std::vector<long long> good, bad;
	} cases[] = {
		{"/forwardingOptions/maxForwardAttempts", {1, NRF_CFG_MAX_ATTEMPTS},
			{0, NRF_CFG_MAX_ATTEMPTS + 1}},
		{"/forwardingOptions/maxViaMembers", {1, NRF_CFG_MAX_VIA_MEMBERS},
			{0, NRF_CFG_MAX_VIA_MEMBERS + 1}},
		{"/runtime/timeouts/connectMs", {1, 5000}, {0, 600001}},
		{"/runtime/timeouts/perTryMs", {1, 5000}, {0, 600001}},
		{"/runtime/timeouts/requestMs", {2000, 600000}, {0, 600001}},
		{"/runtime/timeouts/handshakeMs", {1, 600000}, {0, 600001}},
		{"/runtime/timeouts/requestHeaderMs", {1, 600000}, {0, 600001}},
		{"/runtime/timeouts/requestBodyMs", {1, 600000}, {0, 600001}},
		{"/runtime/timeouts/idleMs", {1, 3600000}, {0, 3600001}},
		{"/runtime/timeouts/stalledReaderMs", {1, 600000}, {0, 600001}},
		{"/runtime/timeouts/upstreamIdleMs", {0, 3600000}, {-1, 3600001}},
		{"/runtime/timeouts/drainMs", {0, 600000}, {-1, 600001}},
		{"/runtime/limits/maxConnections", {1, 1000000}, {0, 1000001}},
		{"/runtime/limits/maxConcurrentStreams", {1, 65535}, {0, 65536}},
		{"/runtime/limits/maxHeaderBytes", {1024, 1048576}, {1023, 1048577}},
		{"/runtime/limits/maxBodyBytes", {0, 1073741824}, {-1, 1073741825}},
		{"/runtime/limits/peerQueueDepth", {1, 1048576}, {0, 1048577}},
		{"/runtime/limits/maxBufferedBytes", {4194304, 4294967295LL}, {4194303, 4294967296LL}},
		{"/runtime/health/probeIntervalMs", {10, 500}, {9, 60001}},
		{"/runtime/health/probeIntervalMaxMs", {500, 600000}, {9, 600001}},
		{"/runtime/health/probeTimeoutMs", {10, 60000}, {9, 60001}},
		{"/runtime/dns/refreshMs", {0, 86400000}, {-1, 86400001}},
		{"/runtime/dns/minTtlMs", {100, 300000}, {99, 86400001}},
		{"/runtime/dns/maxTtlMs", {1000, 86400000}, {99, 86400001}},
		{"/runtime/dns/timeoutMs", {10, 60000}, {9, 60001}},
		{"/runtime/limits/perClient/maxStreams", {0, 1000000}, {-1, 1000001}},
		{"/runtime/limits/perClient/ratePerSecond", {0, 10000000}, {-1, 10000001}},
	};
	for (const auto &c : cases) {
		for (long long v : c.good)
			ExpectValid(With(kMinimal, c.ptr, std::to_string(v).c_str()));
		for (long long v : c.bad)
			ExpectProblem(With(kMinimal, c.ptr, std::to_string(v).c_str()), c.ptr,
				"out of range");
	}
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "priority": 65536})"),
		kPeer0 + "/priority", "out of range");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "priority": -1})"),
		kPeer0 + "/priority", "out of range");
}

TEST(CfgValidate, RejectsTimeoutsLongerThanTheRequestTimeout)
{
	ExpectProblem(With(kMinimal, "/runtime/timeouts", R"({"perTryMs": 6000, "requestMs": 5000})"),
		"/runtime/timeouts/perTryMs", "requestMs");
	ExpectProblem(With(kMinimal, "/runtime/timeouts", R"({"connectMs": 6000, "perTryMs": 10})"),
		"/runtime/timeouts/connectMs", "requestMs");
	ExpectValid(With(kMinimal, "/runtime/timeouts",
		R"({"connectMs": 5000, "perTryMs": 5000, "requestMs": 5000})"));
}

TEST(CfgValidate, RejectsAProbeIntervalCapBelowTheFirstInterval)
{
	ExpectProblem(With(kMinimal, "/runtime/health",
			      R"({"probeIntervalMs": 1000, "probeIntervalMaxMs": 999})"),
		"/runtime/health/probeIntervalMaxMs", "below probeIntervalMs 1000");
	// the default cap (500) is below a first interval of 600 as well
	ExpectProblem(With(kMinimal, "/runtime/health/probeIntervalMs", "600"),
		"/runtime/health/probeIntervalMaxMs", "below probeIntervalMs 600");
	ExpectValid(With(kMinimal, "/runtime/health",
		R"({"probeIntervalMs": 700, "probeIntervalMaxMs": 700, "probeTimeoutMs": 10})"));
}

TEST(CfgValidate, RejectsAMaximumTtlBelowTheMinimum)
{
	ExpectProblem(With(kMinimal, "/runtime/dns", R"({"minTtlMs": 5000, "maxTtlMs": 4999})"),
		"/runtime/dns/maxTtlMs", "below minTtlMs 5000");
	ExpectValid(With(kMinimal, "/runtime/dns", R"({"minTtlMs": 5000, "maxTtlMs": 5000})"));
}

TEST(CfgValidate, PerClientLimitsAreOffByDefaultAndTakeWhatIsGiven)
{
	Loaded off = Load(kMinimal);
	ASSERT_NE(off.cfg, nullptr);
	const nrf_cfg_client_limits &d = off.cfg->rt.per_client;
	EXPECT_EQ(d.max_streams, 0u);
	EXPECT_EQ(d.rate_per_second, 0u);
	EXPECT_EQ(d.burst, 0u);
	EXPECT_EQ(d.key_by, NRF_KEY_BY_ADDRESS);
	Loaded on = Load(With(kMinimal, "/runtime/limits/perClient",
		R"({"maxStreams": 64, "ratePerSecond": 500, "burst": 1000, "keyBy": "nfInstance"})"));
	ASSERT_NE(on.cfg, nullptr) << on.Dump();
	const nrf_cfg_client_limits &c = on.cfg->rt.per_client;
	EXPECT_EQ(c.max_streams, 64u);
	EXPECT_EQ(c.rate_per_second, 500u);
	EXPECT_EQ(c.burst, 1000u);
	EXPECT_EQ(c.key_by, NRF_KEY_BY_NF_INSTANCE);
	ExpectValid(With(kMinimal, "/runtime/limits/perClient", R"({"maxStreams": 8})"));
}

TEST(CfgValidate, RejectsABurstWithoutARateToFillIt)
{
	ExpectProblem(With(kMinimal, "/runtime/limits/perClient", R"({"burst": 50})"),
		"/runtime/limits/perClient/burst", "burst 50 without ratePerSecond");
	ExpectProblem(With(kMinimal, "/runtime/limits/perClient",
			      R"({"ratePerSecond": 10, "burst": 10000001})"),
		"/runtime/limits/perClient/burst", "out of range");
	ExpectValid(With(kMinimal, "/runtime/limits/perClient", R"({"ratePerSecond": 10, "burst": 1})"));
	ExpectValid(With(kMinimal, "/runtime/limits/perClient", R"({"ratePerSecond": 10, "burst": 0})"));
}

TEST(CfgValidate, RejectsAnUnknownKeyBy)
{
	ExpectProblem(With(kMinimal, "/runtime/limits/perClient/keyBy", R"("ip")"),
		"/runtime/limits/perClient/keyBy", "unknown");
	ExpectProblem(With(kMinimal, "/runtime/limits/perClient/keyBy", R"("NFINSTANCE")"),
		"/runtime/limits/perClient/keyBy", "unknown");
	ExpectProblem(With(kMinimal, "/runtime/limits/perClient", R"({"rate": 5})"),
		"/runtime/limits/perClient/rate", "unknown");
}

TEST(CfgValidate, RejectsUnknownEnumStrings)
{
	struct {
		const char *ptr;
		const char *value;
	} cases[] = {
		{"/forwardingOptions/featureStatus", R"("enabled")"},
		{"/forwardingOptions/discoveryStatus", R"("ON")"},
		{"/forwardingOptions/profileRetrievalStatus", R"("")"},
		{"/forwardingOptions/subscriptionStatus", R"("Disabled")"},
		{"/forwardingOptions/accessTokenStatus", R"("TRUE")"},
		{"/nrfGrowth/nrfForwardingOptions/featureStatus", R"("yes")"},
		{"/nrfGrowth/nrfForwardingOptions/loopPreventionScope", R"("host")"},
		{"/runtime/localNrf/scheme", R"("HTTP")"},
	};
	for (const auto &c : cases)
		ExpectProblem(With(kSpec, c.ptr, c.value), c.ptr, "unknown");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "scheme": "ftp"})"), kPeer0 + "/scheme",
		"unknown scheme \"ftp\"");
	ExpectProblem(With(kSpec, "/forwardingOptions/featureStatus", R"("on")"),
		"/forwardingOptions/featureStatus", "ENABLED");
}

TEST(CfgValidate, AcceptsEveryEnumValue)
{
	ExpectValid(With(kSpec, "/nrfGrowth/nrfForwardingOptions/loopPreventionScope", R"("SET")"));
	ExpectValid(With(kSpec, "/forwardingOptions/featureStatus", R"("DISABLED")"));
	ExpectValid(WithPeer(R"({"fqdn": "a.example.com", "scheme": "https"})"));
	Loaded l = Load(With(kSpec, "/nrfGrowth/nrfForwardingOptions/loopPreventionScope", R"("SET")"));
	ASSERT_NE(l.cfg, nullptr);
	EXPECT_EQ(l.cfg->growth.scope, NRF_SCOPE_SET);
}

TEST(CfgValidate, RejectsAnUnknownErrorCondition)
{
	ExpectProblem(With(kMinimal, "/forwardingOptions/errorResponses",
			      R"([{"errorCondition": "NRF_Loop", "errorCode": 508}])"),
		"/forwardingOptions/errorResponses/0/errorCondition", "unknown errorCondition");
	ExpectProblem(With(kMinimal, "/nrfGrowth/nrfForwardingOptions/errorResponses",
			      R"([{"errorCondition": "nrf_not_reachable", "errorCode": 504}])"),
		"/nrfGrowth/nrfForwardingOptions/errorResponses/0/errorCondition",
		"unknown errorCondition");
}

TEST(CfgValidate, RequiresErrorConditionAndErrorCode)
{
	std::string doc = With(kMinimal, "/forwardingOptions/errorResponses",
		R"([{"errorCause": "X"}])");
	ExpectProblem(doc, "/forwardingOptions/errorResponses/0/errorCondition", "missing");
	ExpectProblem(doc, "/forwardingOptions/errorResponses/0/errorCode", "missing");
}

TEST(CfgValidate, RejectsErrorCodesOutside100To599)
{
	for (const char *code : {"99", "600", "0"})
		ExpectProblem(With(kMinimal, "/forwardingOptions/errorResponses",
				      (std::string(R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": )") +
					      code + "}]")
					      .c_str()),
			"/forwardingOptions/errorResponses/0/errorCode", "out of range");
	ExpectValid(With(kMinimal, "/forwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 100},
		    {"errorCondition": "NRF_Forwarding_Overload", "errorCode": 599}])"));
}

TEST(CfgValidate, RejectsADuplicateErrorConditionInOneList)
{
	ExpectProblem(With(kMinimal, "/forwardingOptions/errorResponses",
			      R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 504},
			          {"errorCondition": "NRF_Forwarding_Overload", "errorCode": 503},
			          {"errorCondition": "NRF_Not_Reachable", "errorCode": 502}])"),
		"/forwardingOptions/errorResponses/2/errorCondition", "duplicate errorCondition");
}

TEST(CfgValidate, RejectsHeaderValuesThatCouldInjectFields)
{
	const std::string list = "/forwardingOptions/errorResponses";
	ExpectProblem(With(kMinimal, list.c_str(),
			      R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 307,
			           "redirectUrl": "http://x/\r\nSet-Cookie: a"}])"),
		list + "/0/redirectUrl", "invalid");
	ExpectProblem(With(kMinimal, list.c_str(),
			      R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 503,
			           "retryAfter": "5\r\nX: y"}])"),
		list + "/0/retryAfter", "invalid retryAfter");
	ExpectProblem(With(kMinimal, list.c_str(),
			      R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 503,
			           "retryAfter": "soon"}])"),
		list + "/0/retryAfter", "invalid retryAfter");
}

TEST(CfgValidate, RejectsAnInvalidPattern)
{
	const char *ptrs[] = {
		"/forwardingOptions/forwardingTriggers/statusCodes/pattern",
		"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
	};
	for (const char *p : ptrs) {
		for (const char *v : {R"("^(5")", R"("[0-9")", R"("*404")", R"("")", R"("a{2,1}")"})
			ExpectProblem(With(kMinimal, p, v), p, "invalid pattern");
	}
}

TEST(CfgValidate, RejectsPatternsThatWouldExplodeInRegcomp)
{
	const char *p = "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern";
	std::string pluses = "\"^4" + std::string(40, '+') + "04$\"";
	std::string longest = "\"" + std::string(257, '5') + "\"";
	for (const std::string &v : {std::string(R"x("((((a{9}){9}){9}){9})")x"),
		     std::string(R"("a{5000}")"), std::string(R"("(a{100}){100}")"),
		     std::string(R"("[0-9]{0,32767}")"), std::string(R"x("((((){9}){9}){9})+")x"),
		     std::string(R"x("((a{0}){9}){9}++++")x"), std::string(R"("[0-9]{0,300}")"),
		     pluses, longest})
		ExpectProblem(With(kMinimal, p, v.c_str()), p, "invalid pattern");
	std::string alternation = "\"^(";
	for (int code = 500; code < 550; code++)
		alternation += std::to_string(code) + "|";
	alternation += "599)$\"";
	ExpectValid(With(kMinimal, p, alternation.c_str()));
	for (const char *v : {R"("^5[0-9]{2}$")", R"("^(4[0-9]{2}|5[0-9]{2})$")",
		     R"("^[[:digit:]]{3}$")", R"("^5[0-9]+$")", R"("^5[0-9]?0{1,2}$")"})
		ExpectValid(With(kMinimal, p, v));
}

TEST(CfgValidate, RejectsAnEmptyHost)
{
	ExpectProblem(With(kMinimal, "/generalOptions/ocnrfHost", R"("")"),
		"/generalOptions/ocnrfHost", "empty host");
	ExpectProblem(WithPeer(R"({"port": 8080})"), kPeer0, "empty host");
	ExpectProblem(WithPeer(R"({"fqdn": "", "ipv4Address": "", "ipv6Address": ""})"), kPeer0,
		"empty host");
	ExpectProblem(With(kMinimal, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig",
			      R"({"staticNrfConfigList": [{"nrfSetId": "s2", "nrfHostConfigList": [{"port": 1}]}]})"),
		kGrowthList + "/0/nrfHostConfigList/0", "empty host");
	ExpectProblem(With(kMinimal, "/runtime/localNrf", R"({"address": ""})"),
		"/runtime/localNrf/address", "empty host");
	ExpectProblem(With(kMinimal, "/runtime/localNrf", R"({"port": 80})"),
		"/runtime/localNrf/address", "missing");
}

TEST(CfgValidate, AcceptsAPeerWithOnlyOneKindOfAddress)
{
	ExpectValid(WithPeer(R"({"fqdn": "a.example.com"})"));
	ExpectValid(WithPeer(R"({"ipv4Address": "10.0.0.9"})"));
	ExpectValid(WithPeer(R"({"ipv6Address": "fe80::1"})"));
}

TEST(CfgValidate, RejectsInvalidIpAddressText)
{
	for (const char *v : {"1.2.3", "1.2.3.256", "01.2.3.4", "10.0.0.1:80", "a.b.c.d", " 10.0.0.1"})
		ExpectProblem(WithPeer((std::string(R"({"ipv4Address": ")") + v + "\"}").c_str()),
			kPeer0 + "/ipv4Address", "invalid IPv4 address");
	for (const char *v : {"[::1]", "::g", "1:2:3:4:5:6:7:8:9", "10.0.0.1", "fe80::1%eth0"})
		ExpectProblem(WithPeer((std::string(R"({"ipv6Address": ")") + v + "\"}").c_str()),
			kPeer0 + "/ipv6Address", "invalid IPv6 address");
	ExpectProblem(With(kMinimal, "/runtime/listen", R"([{"address": "localhost", "port": 1}])"),
		"/runtime/listen/0/address", "invalid IP address");
	ExpectProblem(With(kMinimal, "/runtime/management/address", R"("")"),
		"/runtime/management/address", "invalid IP address");
	ExpectValid(With(kMinimal, "/runtime/management/address", R"("::1")"));
}

TEST(CfgValidate, RejectsInvalidHostNames)
{
	for (const char *v : {"bad host", "a..b", "-", ".", "a:b", "nrf_a/x", "999.1.1.1", "1.2.3",
		     "caf\u00e9.example.com"})
		ExpectProblem(WithPeer((std::string(R"({"fqdn": ")") + v + "\"}").c_str()),
			kPeer0 + "/fqdn", "invalid host name");
	std::string long_label(64, 'a');
	ExpectProblem(WithPeer((R"({"fqdn": ")" + long_label + ".com\"}").c_str()), kPeer0 + "/fqdn",
		"invalid host name");
	for (const char *v : {"bad host", "::zz", "a..b"})
		ExpectProblem(With(kMinimal, "/generalOptions/ocnrfHost",
				      (std::string("\"") + v + "\"").c_str()),
			"/generalOptions/ocnrfHost", "invalid host");
	ExpectValid(WithPeer(R"({"fqdn": "nrf_1.svc.cluster.local."})"));
	ExpectValid(WithPeer(R"({"fqdn": "10.1.2.3"})"));
}

TEST(CfgValidate, RejectsABadApiPrefixOrVersion)
{
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "apiPrefix": "nrf"})"),
		kPeer0 + "/apiPrefix", "must be empty or start with \"/\"");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "apiPrefix": "/a b"})"),
		kPeer0 + "/apiPrefix", "invalid apiPrefix");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "apiPrefix": "/a?b"})"),
		kPeer0 + "/apiPrefix", "invalid apiPrefix");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "apiVersion": ""})"),
		kPeer0 + "/apiVersion", "apiVersion");
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "apiVersion": "v1/x"})"),
		kPeer0 + "/apiVersion", "apiVersion");
}

TEST(CfgValidate, RejectsMalformedAliases)
{
	const char *bad[] = {"nrf-a.example.com", "nrf-a.example.com:", ":8080", "a:0", "a:65536",
		"a:80x", "::1:8080", "[::1]8080", "[::1]", "[zz]:80", "[]:80", "bad host:80",
		"a:+80", "a:123456"};
	for (const char *a : bad)
		ExpectProblem(With(kMinimal, "/generalOptions/aliases",
				      (std::string(R"(["ok.example.com:1", ")") + a + "\"]").c_str()),
			"/generalOptions/aliases/1", "invalid alias");
}

TEST(CfgIdentity, RejectsTheSameIdentityAcrossModes)
{
	std::string doc = With(kSpec,
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/-",
		R"({"fqdn": "nrf-e.seg2.example.com", "port": 8080})");
	ExpectProblem(doc, kGrowthList + "/0/nrfHostConfigList/1/fqdn", "duplicate identity");
	ExpectProblem(doc, kGrowthList + "/0/nrfHostConfigList/1/fqdn",
		"/forwardingOptions/nrfHostConfig/0/fqdn");
}

TEST(CfgIdentity, ComparesHostsIgnoringCaseAndOneTrailingDot)
{
	std::string doc = WithPeer(R"({"fqdn": "nrf-x.example.com", "port": 80},
		{"fqdn": "NRF-X.Example.COM.", "port": 80})");
	ExpectProblem(doc, "/forwardingOptions/nrfHostConfig/1/fqdn", "duplicate identity");
}

TEST(CfgIdentity, DifferentPortsAreDifferentIdentities)
{
	ExpectValid(WithPeer(R"({"fqdn": "nrf-x.example.com", "port": 80},
		{"fqdn": "nrf-x.example.com", "port": 81})"));
}

TEST(CfgIdentity, ComparesIpv6AsAddresses)
{
	ExpectProblem(WithPeer(R"({"ipv6Address": "2001:db8::1", "port": 80},
		{"ipv6Address": "2001:DB8:0:0::1", "port": 80})"),
		"/forwardingOptions/nrfHostConfig/1/ipv6Address", "duplicate identity");
}

TEST(CfgIdentity, RejectsAnIpv4SharedByTwoPeers)
{
	ExpectProblem(WithPeer(R"({"fqdn": "a.example.com", "ipv4Address": "10.0.0.1", "port": 80},
		{"fqdn": "b.example.com", "ipv4Address": "10.0.0.1", "port": 80})"),
		"/forwardingOptions/nrfHostConfig/1/ipv4Address", "duplicate identity");
}

TEST(CfgIdentity, RejectsOwnIdentityListedAsAPeer)
{
	ExpectProblem(WithPeer(R"({"fqdn": "nrf-a.seg1.example.com", "port": 8080})"),
		kPeer0 + "/fqdn", "own identity");
	std::string doc = With(kMinimal, "/generalOptions/aliases", R"(["10.9.9.9:8080"])");
	doc = With(doc, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig",
		R"({"staticNrfConfigList": [{"nrfSetId": "s2", "nrfHostConfigList": [
		   {"fqdn": "g.example.com", "ipv4Address": "10.9.9.9", "port": 8080}]}]})");
	ExpectProblem(doc, kGrowthList + "/0/nrfHostConfigList/0/ipv4Address", "own identity");
	// same host on another port is someone else
	ExpectValid(WithPeer(R"({"fqdn": "nrf-a.seg1.example.com", "port": 8081})"));
}

TEST(CfgIdentity, RejectsAnAliasThatRepeatsOwnIdentity)
{
	ExpectProblem(With(kMinimal, "/generalOptions/aliases", R"(["NRF-A.seg1.example.com.:8080"])"),
		"/generalOptions/aliases/0", "duplicate identity");
	ExpectProblem(With(kMinimal, "/generalOptions/aliases", R"(["10.0.0.1:1", "10.0.0.1:1"])"),
		"/generalOptions/aliases/1", "duplicate identity");
}

TEST(CfgIdentity, OnePeerMayRepeatItsOwnIdentity)
{
	ExpectValid(WithPeer(R"({"fqdn": "10.0.0.1", "ipv4Address": "10.0.0.1"})"));
}

TEST(CfgSets, RejectsAnEmptyOrAnonymousSet)
{
	const char *base = "/nrfGrowth/nrfForwardingOptions/nrfHostConfig";
	ExpectProblem(With(kMinimal, base,
			      R"({"staticNrfConfigList": [{"nrfSetId": "s2", "nrfHostConfigList": []}]})"),
		kGrowthList + "/0/nrfHostConfigList", "empty NRF set");
	ExpectProblem(With(kMinimal, base, R"({"staticNrfConfigList": [{"nrfSetId": "s2"}]})"),
		kGrowthList + "/0/nrfHostConfigList", "missing");
	ExpectProblem(With(kMinimal, base,
			      R"({"staticNrfConfigList": [{"nrfHostConfigList": [{"fqdn": "g.example.com"}]}]})"),
		kGrowthList + "/0/nrfSetId", "missing");
	ExpectProblem(With(kMinimal, base,
			      R"({"staticNrfConfigList": [{"nrfSetId": "", "nrfHostConfigList": [{"fqdn": "g.example.com"}]}]})"),
		kGrowthList + "/0/nrfSetId", "empty nrfSetId");
}

TEST(CfgSets, RejectsADuplicateSetId)
{
	ExpectProblem(With(kMinimal, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig",
			      R"({"staticNrfConfigList": [
			           {"nrfSetId": "set2", "nrfHostConfigList": [{"fqdn": "g.example.com"}]},
			           {"nrfSetId": "SET2", "nrfHostConfigList": [{"fqdn": "h.example.com"}]}]})"),
		kGrowthList + "/1/nrfSetId", "duplicate nrfSetId");
}

TEST(CfgValidate, RejectsAnEmptyOrDuplicateListenList)
{
	ExpectProblem(With(kMinimal, "/runtime/listen", "[]"), "/runtime/listen", "empty listen");
	ExpectProblem(With(kMinimal, "/runtime/listen", R"([{"port": 80}, {"address": "0.0.0.0", "port": 80}])"),
		"/runtime/listen/1", "duplicate listen");
	ExpectProblem(With(kMinimal, "/runtime/listen", R"([{"address": "10.0.0.1"}])"),
		"/runtime/listen/0/port", "missing");
	ExpectValid(With(kMinimal, "/runtime/listen", R"([{"port": 80}, {"address": "::", "port": 80}])"));
}

namespace {

std::string
Array(size_t n, const std::function<std::string(size_t)> &item)
{
	std::string s = "[";
	for (size_t i = 0; i < n; i++)
		s += (i ? "," : "") + item(i);
	return s + "]";
}

std::string
Aliases(size_t n)
{
	return Array(n, [](size_t i) { return "\"alias" + std::to_string(i) + ".example.com:1\""; });
}

std::string
Listens(size_t n)
{
	return Array(n, [](size_t i) { return "{\"port\": " + std::to_string(1000 + i) + "}"; });
}

std::string
Peers(size_t n, const std::string &tag)
{
	return Array(n, [&](size_t i) {
		return "{\"fqdn\": \"" + tag + std::to_string(i) + ".example.com\"}";
	});
}

std::string
Sets(size_t n, size_t hosts_each)
{
	std::string s = "{\"staticNrfConfigList\": ";
	s += Array(n, [&](size_t i) {
		return "{\"nrfSetId\": \"set" + std::to_string(i) + "\", \"nrfHostConfigList\": " +
			Peers(hosts_each, "s" + std::to_string(i) + "h") + "}";
	});
	return s + "}";
}

} // namespace

TEST(CfgLimits, AcceptsExactlyTheLimits)
{
	std::string doc = With(kMinimal, "/generalOptions/aliases",
		Aliases(NRF_CFG_MAX_ALIASES).c_str());
	doc = With(doc, "/runtime/listen", Listens(NRF_CFG_MAX_LISTEN).c_str());
	doc = With(doc, "/forwardingOptions/nrfHostConfig", Peers(NRF_CFG_MAX_PEERS - NRF_CFG_MAX_SETS * 2, "f").c_str());
	doc = With(doc, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig", Sets(NRF_CFG_MAX_SETS, 2).c_str());
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump().substr(0, 2000);
	EXPECT_EQ(l.cfg->general.n_aliases, NRF_CFG_MAX_ALIASES);
	EXPECT_EQ(l.cfg->rt.n_listen, NRF_CFG_MAX_LISTEN);
	EXPECT_EQ(l.cfg->n_peers, NRF_CFG_MAX_PEERS);
	EXPECT_EQ(l.cfg->n_sets, NRF_CFG_MAX_SETS);
	EXPECT_EQ(l.cfg->sets[NRF_CFG_MAX_SETS - 1].first_peer, NRF_CFG_MAX_PEERS - 2);
	EXPECT_EQ(l.cfg->peers[NRF_CFG_MAX_PEERS - 1].index, NRF_CFG_MAX_PEERS - 1);
}

TEST(CfgLimits, RejectsOneMoreThanEachLimit)
{
	ExpectProblem(With(kMinimal, "/generalOptions/aliases", Aliases(NRF_CFG_MAX_ALIASES + 1).c_str()),
		"/generalOptions/aliases", "too many aliases");
	ExpectProblem(With(kMinimal, "/runtime/listen", Listens(NRF_CFG_MAX_LISTEN + 1).c_str()),
		"/runtime/listen", "too many listen");
	ExpectProblem(With(kMinimal, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig",
			      Sets(NRF_CFG_MAX_SETS + 1, 1).c_str()),
		kGrowthList, "too many NRF sets");
	// the limit counts both modes together: the 1025th peer is a growth one
	std::string doc = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		Peers(NRF_CFG_MAX_PEERS, "f").c_str());
	doc = With(doc, "/nrfGrowth/nrfForwardingOptions/nrfHostConfig", Sets(1, 1).c_str());
	ExpectProblem(doc, kGrowthList + "/0/nrfHostConfigList/0", "too many peers");
}

TEST(CfgValidate, ReportsEveryProblemOfADocumentAtOnce)
{
	std::string doc = kSpec;
	doc = With(doc, "/generalOptions/ocnrfPort", "0");
	doc = With(doc, "/generalOptions/colour", R"("blue")");
	doc = With(doc, "/forwardingOptions/nrfHostConfig/0/port", "70000");
	doc = With(doc, "/forwardingOptions/nrfHostConfig/0/ipv4Address", R"("10.10.2")");
	doc = With(doc, "/forwardingOptions/maxForwardAttempts", "0");
	doc = With(doc, "/forwardingOptions/errorResponses/0/errorCondition", R"("Nope")");
	doc = With(doc, "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern", R"("(")");
	doc = With(doc, "/nrfGrowth/nrfForwardingOptions/loopPreventionScope", R"("ALL")");
	doc = With(doc, kGrowthList + "/0/nrfHostConfigList/0/scheme", R"("gopher")");
	doc = With(doc, "/runtime/limits/maxHeaderBytes", "10");
	Loaded l = Load(doc);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_ECONFIG);
	const char *want[] = {
		"/generalOptions/ocnrfPort",
		"/generalOptions/colour",
		"/forwardingOptions/nrfHostConfig/0/port",
		"/forwardingOptions/nrfHostConfig/0/ipv4Address",
		"/forwardingOptions/maxForwardAttempts",
		"/forwardingOptions/errorResponses/0/errorCondition",
		"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
		"/nrfGrowth/nrfForwardingOptions/loopPreventionScope",
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/0/scheme",
		"/runtime/limits/maxHeaderBytes",
	};
	EXPECT_EQ(l.problems.size(), sizeof(want) / sizeof(want[0])) << l.Dump();
	for (const char *w : want)
		EXPECT_TRUE(l.Has(w, "")) << w << "\n" << l.Dump();
}

TEST(CfgValidate, FailsWithoutAProblemList)
{
	int err = 0;
	std::string doc = With(kMinimal, "/generalOptions/ocnrfPort", "0");
	EXPECT_EQ(nrf_cfg_load(doc.data(), doc.size(), 1, nullptr, &err), nullptr);
	EXPECT_EQ(err, NRF_ECONFIG);
}

TEST(CfgValidate, AppendsToAnExistingProblemList)
{
	nrf_cfg_problems p{};
	int err = 0;
	EXPECT_EQ(nrf_cfg_load("{}", 2, 1, &p, &err), nullptr);
	EXPECT_EQ(nrf_cfg_load("{}", 2, 1, &p, &err), nullptr);
	EXPECT_EQ(p.n, 4u);
	EXPECT_GE(p.cap, p.n);
	nrf_cfg_problems_fini(&p);
	EXPECT_EQ(p.n, 0u);
	EXPECT_EQ(p.cap, 0u);
}

TEST(CfgValidate, TruncatesLongPointersOnACharacterBoundary)
{
	std::string key;
	for (int i = 0; i < 150; i++)
		key += "\u00e9"; // two bytes each
	Loaded l = Load(With(kMinimal, "/generalOptions/" + key, "1"));
	ASSERT_EQ(l.problems.size(), 1u);
	const std::string &p = l.problems[0].first;
	EXPECT_LT(p.size(), sizeof(nrf_cfg_problem::pointer));
	EXPECT_EQ(p.rfind("/generalOptions/", 0), 0u);
	// valid UTF-8: the key part is whole two-byte characters
	EXPECT_EQ((p.size() - strlen("/generalOptions/")) % 2, 0u);
	json_t *j = json_string(p.c_str());
	EXPECT_NE(j, nullptr);
	json_decref(j);
}

TEST(CfgValidate, NeverHalfAppliesAnything)
{
	// one bad field deep inside a otherwise complete document: no snapshot
	std::string doc = With(kSpec, "/runtime/limits/peerQueueDepth", "0");
	Loaded l = Load(doc);
	EXPECT_EQ(l.cfg, nullptr);
	ASSERT_EQ(l.problems.size(), 1u);
	EXPECT_EQ(l.problems[0].first, "/runtime/limits/peerQueueDepth");
}
