// SPDX-License-Identifier: BSD-3-Clause
// Emit and compare: defaults written out, stable key order, round trips,
// nrf_cfg_equal(), the configuration reference, and allocation failures.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

struct Text {
	char *s = nullptr;
	~Text() { free(s); }
};

std::string
Emit(const nrf_cfg *c, nrf_cfg_group g, int indent = 0)
{
	int err = 1;
	Text t;
	t.s = nrf_cfg_emit(c, g, indent, &err);
	EXPECT_NE(t.s, nullptr);
	EXPECT_EQ(err, 0);
	return t.s != nullptr ? std::string(t.s) : std::string();
}

// Every configuration feature in one document.
const char *kRich = R"({
  "generalOptions": {
    "ocnrfHost": "2001:db8::a", "ocnrfPort": 8443, "nrfSetId": "set1",
    "aliases": ["nrf-a.example.com:8443", "[2001:db8::b]:8443", "10.0.0.1:80"],
    "viaOnResponses": false
  },
  "forwardingOptions": {
    "featureStatus": "ENABLED", "discoveryStatus": "DISABLED",
    "profileRetrievalStatus": "ENABLED", "subscriptionStatus": "DISABLED",
    "accessTokenStatus": "DISABLED",
    "forwardingTriggers": {"statusCodes": {"pattern": "^(404|410)$"}, "emptyDiscoveryResult": false},
    "nrfRerouteOnResponseHttpStatusCodes": {"pattern": "^50[234]$"},
    "maxForwardAttempts": 5, "maxViaMembers": 32,
    "nrfHostConfig": [
      {"scheme": "https", "fqdn": "nrf-e.example.com", "ipv6Address": "2001:db8::e", "apiPrefix": "/p/", "priority": 3},
      {"apiVersion": "v2", "ipv4Address": "10.0.2.2", "port": 8080, "priority": 0, "rewriteLinks": true}
    ],
    "errorResponses": [
      {"errorCondition": "NRF_Forwarding_Overload", "errorCode": 429, "retryAfter": "10"},
      {"errorCondition": "NRF_Not_Reachable", "errorCode": 307, "redirectUrl": "http://other/", "errorDetail": ""}
    ]
  },
  "nrfGrowth": {"nrfForwardingOptions": {
    "featureStatus": "ENABLED", "loopPreventionScope": "SET",
    "nrfHostConfig": {"staticNrfConfigList": [
      {"nrfSetId": "set2", "nrfHostConfigList": [{"fqdn": "g1.example.com"}, {"fqdn": "g2.example.com", "port": 81, "rewriteLinks": true}]},
      {"nrfSetId": "set3", "nrfHostConfigList": [{"ipv6Address": "2001:db8::3", "scheme": "https"}]}
    ]},
    "errorResponses": [{"errorCondition": "NRF_Forwarding_Loop_Prevention", "errorCode": 508, "errorTitle": "Looped"}]
  }},
  "runtime": {
    "listen": [{"address": "::", "port": 8443, "tls": true}, {"port": 8080}],
    "localNrf": {"scheme": "https", "address": "local-nrf.example.com", "rewriteLinks": true},
    "management": {"address": "::1", "port": 0},
    "timeouts": {"connectMs": 10, "perTryMs": 20, "requestMs": 30, "handshakeMs": 40,
                 "requestHeaderMs": 50, "requestBodyMs": 60, "idleMs": 70,
                 "stalledReaderMs": 80, "upstreamIdleMs": 0},
    "limits": {"maxConnections": 1, "maxConcurrentStreams": 2, "maxHeaderBytes": 2048,
               "maxBodyBytes": 0, "peerQueueDepth": 4}
  }
})";

void
ExpectRoundTrip(const std::string &doc)
{
	Loaded a = Load(doc, 1);
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	for (int indent : {0, 2, 8}) {
		std::string text = Emit(a.cfg.get(), NRF_CFG_ALL, indent);
		Loaded b = Load(text, 2);
		ASSERT_NE(b.cfg, nullptr) << text << "\n" << b.Dump();
		EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), b.cfg.get())) << text;
		EXPECT_EQ(Emit(b.cfg.get(), NRF_CFG_ALL, indent), text);
	}
}

json_t *
Parse(const std::string &s)
{
	json_error_t e;
	json_t *j = json_loads(s.c_str(), JSON_DECODE_ANY, &e);
	EXPECT_NE(j, nullptr) << e.text << ": " << s;
	return j;
}

// "a.b.c" style paths of every key of @p j (array items share one path).
void
KeyPaths(const json_t *j, const std::string &prefix, std::set<std::string> *out)
{
	if (json_is_object(j)) {
		const char *k;
		json_t *v;
		json_object_foreach(const_cast<json_t *>(j), k, v) {
			out->insert(k);
			KeyPaths(v, prefix + "/" + k, out);
		}
	} else if (json_is_array(j)) {
		for (size_t i = 0; i < json_array_size(j); i++)
			KeyPaths(json_array_get(j, i), prefix, out);
	}
}

} // namespace

TEST(CfgEmit, RoundTripGivesAnEqualSnapshot)
{
	ExpectRoundTrip(kMinimal);
	ExpectRoundTrip(kSpec);
	ExpectRoundTrip(kPeers);
	ExpectRoundTrip(kRich);
}

TEST(CfgEmit, FillsEveryDefault)
{
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr);
	const char *want = R"({"generalOptions":{"ocnrfHost":"nrf-a.seg1.example.com","ocnrfPort":8080,)"
		R"("nrfSetId":"","aliases":[],"viaOnResponses":true},)"
		R"("forwardingOptions":{"featureStatus":"DISABLED","discoveryStatus":"ENABLED",)"
		R"("profileRetrievalStatus":"ENABLED","subscriptionStatus":"ENABLED","accessTokenStatus":"ENABLED",)"
		R"("forwardingTriggers":{"statusCodes":{"pattern":"^404$"},"emptyDiscoveryResult":true},)"
		R"("nrfRerouteOnResponseHttpStatusCodes":{"pattern":"^5[0-9]{2}$"},)"
		R"("maxForwardAttempts":2,"maxViaMembers":16,"nrfHostConfig":[],"errorResponses":[]},)"
		R"("nrfGrowth":{"nrfForwardingOptions":{"featureStatus":"DISABLED","loopPreventionScope":"HOST",)"
		R"("nrfHostConfig":{"staticNrfConfigList":[]},"errorResponses":[]}},)"
		R"("runtime":{"listen":[{"address":"0.0.0.0","port":8080,"tls":false}],"localNrf":null,)"
		R"("management":{"address":"127.0.0.1","port":9090},)"
		R"("timeouts":{"connectMs":1000,"perTryMs":2000,"requestMs":5000,)"
		R"("handshakeMs":5000,"requestHeaderMs":5000,"requestBodyMs":10000,)"
		R"("idleMs":60000,"stalledReaderMs":10000,"upstreamIdleMs":60000,"drainMs":5000,"unreadyMs":0,"goawayDelayMs":0},)"
		R"("limits":{"maxConnections":10000,"maxConcurrentStreams":128,"maxHeaderBytes":16384,)"
		R"("maxBodyBytes":1048576,"peerQueueDepth":65536,"queueTargetMs":100,)"
		R"("queueIntervalMs":100,"maxBufferedBytes":1073741824,)"
		R"("perClient":{"maxStreams":0,"ratePerSecond":0,"burst":0,"keyBy":"address"}},)"
		R"("health":{"probeIntervalMs":250,"probeIntervalMaxMs":500,"probeTimeoutMs":500,)"
		R"("consecutiveFailures":5},)"
		R"("dns":{"refreshMs":30000,"minTtlMs":1000,"maxTtlMs":300000,"timeoutMs":2000},)"
		R"("accessLog":{"path":"","format":"text","sample":1,"maxLinesPerSecond":0,)"
		R"("flushMs":200},"requestId":{"generate":true},)"
		R"("transport":"kernel",)"
		R"("dpdk":{"ipv4Address":"","prefixLength":24,"gateway":"","ipv6Address":"",)"
		R"("ipv6PrefixLength":64,"ipv6Gateway":"","portId":null,)"
		R"("rxDescriptors":1024,"txDescriptors":1024,"mbufs":8191,"mbufCache":256,"mtu":0,"vlan":0,)"
		R"("burst":32,)"
		R"("idleSpin":512,"idleSleepUs":100,"idleSleepMaxUs":1000,"arpProbeMs":300,)"
		R"("linkWaitMs":2000,"arpRequestsPerSecond":200,"arpStrangerRequestsPerSecond":20,)"
		R"("strayResetsPerSecond":200,"challengeAcksPerSecond":1000,"synCookieThreshold":128,)"
		R"("synRcvdTimeoutMs":20000,"synAckRetries":5},)"
		R"("tls":{"certFile":"","keyFile":"","caFile":"","verifyClient":false,)"
		R"("cipherSuites":"","ciphers":"","groups":""},)"
		R"("tlsClient":{"caFile":"","certFile":"","keyFile":"","cipherSuites":"",)"
		R"("ciphers":"","groups":""}}})";
	EXPECT_EQ(Emit(l.cfg.get(), NRF_CFG_ALL), want);
}

TEST(CfgEmit, FillsPeerAndErrorResponseDefaults)
{
	std::string doc = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		R"([{"fqdn": "a.example.com", "scheme": "https"}])");
	doc = With(doc, "/forwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 504}])");
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	std::string fwd = Emit(l.cfg.get(), NRF_CFG_FORWARDING);
	EXPECT_NE(fwd.find(R"("nrfHostConfig":[{"apiVersion":"v1","scheme":"https","fqdn":"a.example.com",)"
			   R"("ipv4Address":"","ipv6Address":"","port":443,"apiPrefix":"","priority":1,)"
			   R"("rewriteLinks":false}])"),
		std::string::npos)
		<< fwd;
	EXPECT_NE(fwd.find(R"("errorResponses":[{"errorCondition":"NRF_Not_Reachable","errorCode":504,)"
			   R"("errorCause":"TARGET_NF_NOT_REACHABLE","errorTitle":"Gateway Timeout","errorDetail":")"),
		std::string::npos)
		<< fwd;
	EXPECT_NE(fwd.find(R"("retryAfter":"","redirectUrl":""}])"), std::string::npos) << fwd;
}

TEST(CfgEmit, KeyOrderDoesNotDependOnTheInputOrder)
{
	const char *a = R"({"runtime": {"timeouts": {"requestMs": 6000, "connectMs": 5}},
		"generalOptions": {"ocnrfPort": 1, "aliases": ["x.example.com:2"], "ocnrfHost": "h.example.com"}})";
	const char *b = R"({"generalOptions": {"ocnrfHost": "h.example.com", "aliases": ["x.example.com:2"], "ocnrfPort": 1},
		"runtime": {"timeouts": {"connectMs": 5, "requestMs": 6000}}})";
	Loaded la = Load(a), lb = Load(b);
	ASSERT_NE(la.cfg, nullptr) << la.Dump();
	ASSERT_NE(lb.cfg, nullptr) << lb.Dump();
	EXPECT_EQ(Emit(la.cfg.get(), NRF_CFG_ALL, 2), Emit(lb.cfg.get(), NRF_CFG_ALL, 2));
	EXPECT_TRUE(nrf_cfg_equal(la.cfg.get(), lb.cfg.get()));
}

TEST(CfgEmit, EachGroupIsItsObjectOfTheWholeDocument)
{
	Loaded l = Load(kRich);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	json_t *all = Parse(Emit(l.cfg.get(), NRF_CFG_ALL));
	ASSERT_NE(all, nullptr);
	struct {
		nrf_cfg_group g;
		json_t *want;
	} groups[] = {
		{NRF_CFG_GENERAL, json_object_get(all, "generalOptions")},
		{NRF_CFG_FORWARDING, json_object_get(all, "forwardingOptions")},
		{NRF_CFG_GROWTH,
			json_object_get(json_object_get(all, "nrfGrowth"), "nrfForwardingOptions")},
		{NRF_CFG_RUNTIME, json_object_get(all, "runtime")},
	};
	for (const auto &g : groups) {
		ASSERT_NE(g.want, nullptr);
		json_t *got = Parse(Emit(l.cfg.get(), g.g));
		EXPECT_TRUE(json_equal(got, g.want)) << g.g;
		char *w = json_dumps(g.want, JSON_COMPACT);
		EXPECT_EQ(Emit(l.cfg.get(), g.g), std::string(w)) << g.g;
		free(w);
		json_decref(got);
	}
	json_decref(all);
}

TEST(CfgEmit, WritesDerivedAndNormalisedValues)
{
	Loaded l = Load(kRich);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	std::string general = Emit(l.cfg.get(), NRF_CFG_GENERAL);
	EXPECT_NE(general.find(R"("aliases":["nrf-a.example.com:8443","[2001:db8::b]:8443","10.0.0.1:80"])"),
		std::string::npos)
		<< general;
	std::string fwd = Emit(l.cfg.get(), NRF_CFG_FORWARDING);
	EXPECT_NE(fwd.find(R"("apiPrefix":"/p")"), std::string::npos) << fwd;
	EXPECT_NE(fwd.find(R"("port":443)"), std::string::npos) << fwd;
	std::string rt = Emit(l.cfg.get(), NRF_CFG_RUNTIME);
	EXPECT_NE(rt.find(R"("localNrf":{"scheme":"https","address":"local-nrf.example.com","port":443,)"
			  R"("rewriteLinks":true})"),
		std::string::npos)
		<< rt;
	EXPECT_NE(rt.find(R"({"address":"0.0.0.0","port":8080,"tls":false})"), std::string::npos) << rt;
}

TEST(CfgEmit, WritesOnlyConfiguredErrorResponsesInConditionOrder)
{
	Loaded l = Load(kRich);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	json_t *fwd = Parse(Emit(l.cfg.get(), NRF_CFG_FORWARDING));
	json_t *list = json_object_get(fwd, "errorResponses");
	ASSERT_EQ(json_array_size(list), 2u);
	EXPECT_STREQ(json_string_value(json_object_get(json_array_get(list, 0), "errorCondition")),
		"NRF_Not_Reachable");
	EXPECT_STREQ(json_string_value(json_object_get(json_array_get(list, 1), "errorCondition")),
		"NRF_Forwarding_Overload");
	EXPECT_STREQ(json_string_value(json_object_get(json_array_get(list, 1), "errorTitle")),
		"Too Many Requests");
	json_decref(fwd);
	json_t *growth = Parse(Emit(l.cfg.get(), NRF_CFG_GROWTH));
	EXPECT_EQ(json_array_size(json_object_get(growth, "errorResponses")), 1u);
	json_decref(growth);
}

TEST(CfgEmit, IndentZeroIsCompactAndIndentAddsLines)
{
	Loaded l = Load(kSpec);
	ASSERT_NE(l.cfg, nullptr);
	std::string compact = Emit(l.cfg.get(), NRF_CFG_ALL, 0);
	EXPECT_EQ(compact.find('\n'), std::string::npos);
	EXPECT_EQ(compact.find(": "), std::string::npos);
	std::string pretty = Emit(l.cfg.get(), NRF_CFG_ALL, 4);
	EXPECT_NE(pretty.find("\n    \"generalOptions\""), std::string::npos) << pretty;
	EXPECT_EQ(Emit(l.cfg.get(), NRF_CFG_ALL, -3), compact);
	EXPECT_FALSE(Emit(l.cfg.get(), NRF_CFG_ALL, 1000).empty());
}

TEST(CfgEmit, RejectsANullSnapshotAndAnUnknownGroup)
{
	int err = 0;
	EXPECT_EQ(nrf_cfg_emit(nullptr, NRF_CFG_ALL, 0, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr);
	err = 0;
	EXPECT_EQ(nrf_cfg_emit(l.cfg.get(), static_cast<nrf_cfg_group>(99), 0, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	char *t = nrf_cfg_emit(l.cfg.get(), NRF_CFG_ALL, 0, nullptr);
	EXPECT_NE(t, nullptr);
	free(t);
}

TEST(CfgEqual, IgnoresTheGeneration)
{
	Loaded a = Load(kRich, 1), b = Load(kRich, 99);
	ASSERT_NE(a.cfg, nullptr);
	ASSERT_NE(b.cfg, nullptr);
	EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), b.cfg.get()));
	EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), a.cfg.get()));
}

TEST(CfgEqual, HandlesNull)
{
	Loaded a = Load(kMinimal);
	ASSERT_NE(a.cfg, nullptr);
	EXPECT_TRUE(nrf_cfg_equal(nullptr, nullptr));
	EXPECT_FALSE(nrf_cfg_equal(a.cfg.get(), nullptr));
	EXPECT_FALSE(nrf_cfg_equal(nullptr, a.cfg.get()));
}

TEST(CfgEqual, SeesEveryKindOfDifference)
{
	struct {
		const char *ptr;
		const char *value;
	} changes[] = {
		{"/generalOptions/ocnrfHost", R"("2001:db8::c")"},
		{"/generalOptions/ocnrfPort", "8444"},
		{"/generalOptions/nrfSetId", R"("set9")"},
		{"/generalOptions/aliases/2", R"("10.0.0.1:81")"},
		{"/generalOptions/aliases", R"(["nrf-a.example.com:8443"])"},
		{"/generalOptions/viaOnResponses", "true"},
		{"/forwardingOptions/featureStatus", R"("DISABLED")"},
		{"/forwardingOptions/discoveryStatus", R"("ENABLED")"},
		{"/forwardingOptions/profileRetrievalStatus", R"("DISABLED")"},
		{"/forwardingOptions/subscriptionStatus", R"("ENABLED")"},
		{"/forwardingOptions/accessTokenStatus", R"("ENABLED")"},
		{"/forwardingOptions/forwardingTriggers/statusCodes/pattern", R"("^(404|411)$")"},
		{"/forwardingOptions/forwardingTriggers/statusCodes/pattern", R"("^(410|404)$")"},
		{"/forwardingOptions/forwardingTriggers/emptyDiscoveryResult", "true"},
		{"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern", R"("^50[23]$")"},
		{"/forwardingOptions/maxForwardAttempts", "4"},
		{"/forwardingOptions/maxViaMembers", "31"},
		{"/forwardingOptions/nrfHostConfig/0/scheme", R"("http")"},
		{"/forwardingOptions/nrfHostConfig/0/fqdn", R"("nrf-f.example.com")"},
		{"/forwardingOptions/nrfHostConfig/0/ipv6Address", R"("2001:db8::f")"},
		{"/forwardingOptions/nrfHostConfig/1/ipv4Address", R"("10.0.2.3")"},
		{"/forwardingOptions/nrfHostConfig/1/port", "8081"},
		{"/forwardingOptions/nrfHostConfig/1/apiVersion", R"("v1")"},
		{"/forwardingOptions/nrfHostConfig/0/apiPrefix", R"("/q")"},
		{"/forwardingOptions/nrfHostConfig/0/priority", "4"},
		{"/forwardingOptions/nrfHostConfig/0/rewriteLinks", "true"},
		{"/forwardingOptions/nrfHostConfig/1/rewriteLinks", "false"},
		{"/forwardingOptions/nrfHostConfig/-", R"({"fqdn": "new.example.com"})"},
		{"/forwardingOptions/errorResponses/0/errorCode", "430"},
		{"/forwardingOptions/errorResponses/0/retryAfter", R"("11")"},
		{"/forwardingOptions/errorResponses/0/errorCause", R"("X")"},
		{"/forwardingOptions/errorResponses/1/redirectUrl", R"("http://else/")"},
		{"/forwardingOptions/errorResponses/1/errorDetail", R"("d")"},
		{"/forwardingOptions/errorResponses/-",
			R"({"errorCondition": "NRF_Forwarding_Hop_Limit", "errorCode": 508})"},
		{"/nrfGrowth/nrfForwardingOptions/featureStatus", R"("DISABLED")"},
		{"/nrfGrowth/nrfForwardingOptions/loopPreventionScope", R"("HOST")"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfSetId", R"("set4")"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/1/port",
			"82"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/1/rewriteLinks",
			"false"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/1/nrfHostConfigList/0/rewriteLinks",
			"true"},
		{"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/-",
			R"({"fqdn": "g3.example.com"})"},
		{"/nrfGrowth/nrfForwardingOptions/errorResponses/0/errorTitle", R"("Other")"},
		{"/runtime/listen/0/tls", "false"},
		{"/runtime/listen/1/address", R"("127.0.0.1")"},
		{"/runtime/listen/-", R"({"port": 1})"},
		{"/runtime/localNrf", "null"},
		{"/runtime/localNrf/port", "444"},
		{"/runtime/localNrf/scheme", R"("http")"},
		{"/runtime/localNrf/rewriteLinks", "false"},
		{"/runtime/management/address", R"("127.0.0.1")"},
		{"/runtime/management/port", "1"},
		{"/runtime/timeouts/connectMs", "11"},
		{"/runtime/timeouts/perTryMs", "21"},
		{"/runtime/timeouts/requestMs", "31"},
		{"/runtime/timeouts/handshakeMs", "41"},
		{"/runtime/timeouts/requestHeaderMs", "51"},
		{"/runtime/timeouts/requestBodyMs", "61"},
		{"/runtime/timeouts/idleMs", "71"},
		{"/runtime/timeouts/stalledReaderMs", "81"},
		{"/runtime/timeouts/upstreamIdleMs", "1"},
		{"/runtime/timeouts/drainMs", "7"},
		{"/runtime/limits/maxConnections", "2"},
		{"/runtime/limits/maxConcurrentStreams", "3"},
		{"/runtime/limits/maxHeaderBytes", "2049"},
		{"/runtime/limits/maxBodyBytes", "1"},
		{"/runtime/limits/peerQueueDepth", "5"},
		{"/runtime/limits/maxBufferedBytes", "8388608"},
		{"/runtime/health/probeIntervalMs", "100"},
		{"/runtime/health/probeIntervalMaxMs", "2000"},
		{"/runtime/health/probeTimeoutMs", "300"},
		{"/runtime/dns/refreshMs", "0"},
		{"/runtime/dns/minTtlMs", "200"},
		{"/runtime/dns/maxTtlMs", "2000"},
		{"/runtime/dns/timeoutMs", "500"},
	};
	Loaded base = Load(kRich);
	ASSERT_NE(base.cfg, nullptr) << base.Dump();
	for (const auto &c : changes) {
		Loaded l = Load(With(kRich, c.ptr, c.value));
		ASSERT_NE(l.cfg, nullptr) << c.ptr << "\n" << l.Dump();
		EXPECT_FALSE(nrf_cfg_equal(base.cfg.get(), l.cfg.get())) << c.ptr << " = " << c.value;
		EXPECT_FALSE(nrf_cfg_equal(l.cfg.get(), base.cfg.get())) << c.ptr << " = " << c.value;
	}
}

TEST(CfgEqual, WrittenDefaultsEqualOmittedOnes)
{
	Loaded a = Load(kMinimal);
	Loaded b = Load(With(With(kMinimal, "/forwardingOptions/maxViaMembers", "16"),
		"/runtime/listen", R"([{"address": "0.0.0.0", "port": 8080}])"));
	ASSERT_NE(a.cfg, nullptr);
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), b.cfg.get()));
}

TEST(CfgDocs, ConfigReferenceDescribesEveryField)
{
	std::ifstream f("docs/config.md");
	ASSERT_TRUE(f.good()) << "run from the project root";
	std::stringstream ss;
	ss << f.rdbuf();
	std::string doc = ss.str();
	Loaded l = Load(kRich);
	ASSERT_NE(l.cfg, nullptr);
	json_t *all = Parse(Emit(l.cfg.get(), NRF_CFG_ALL));
	std::set<std::string> keys;
	KeyPaths(all, "", &keys);
	json_decref(all);
	EXPECT_GT(keys.size(), 50u);
	// a field is named as `key` or as a part of a path `a.key[].b`
	auto part = [&](size_t at, size_t len) {
		char before = at > 0 ? doc[at - 1] : ' ';
		char after = at + len < doc.size() ? doc[at + len] : ' ';
		return (before == '`' || before == '.') &&
			(after == '`' || after == '.' || after == '[');
	};
	for (const std::string &k : keys) {
		bool found = false;
		for (size_t at = doc.find(k); at != std::string::npos && !found; at = doc.find(k, at + 1))
			found = part(at, k.size());
		EXPECT_TRUE(found) << k << " is not in docs/config.md";
	}
}

namespace {

// jansson's allocator, failing once the countdown reaches zero.
long g_fail_after = -1;

void *
FailingMalloc(size_t n)
{
	if (g_fail_after == 0)
		return nullptr;
	if (g_fail_after > 0)
		g_fail_after--;
	return malloc(n);
}

struct JanssonAllocGuard {
	JanssonAllocGuard() { json_set_alloc_funcs(FailingMalloc, free); }
	~JanssonAllocGuard()
	{
		g_fail_after = -1;
		json_set_alloc_funcs(malloc, free);
	}
};

} // namespace

TEST(CfgOom, JsonAllocationFailuresDuringLoadGiveNoMemory)
{
	JanssonAllocGuard guard;
	long n = 0;
	for (;; n++) {
		int err = 1;
		nrf_cfg_problems p{};
		g_fail_after = n;
		CfgPtr c(nrf_cfg_load(kRich, strlen(kRich), 1, &p, &err));
		g_fail_after = -1;
		nrf_cfg_problems_fini(&p);
		if (c != nullptr) {
			EXPECT_EQ(err, 0);
			break;
		}
		// jansson 2.14 reports most allocation failures inside its lexer as
		// syntax errors, so a parse problem is an honest answer too.
		ASSERT_TRUE(err == NRF_ENOMEM || err == NRF_EPARSE)
			<< nrf_errname(err) << " after " << n << " allocations";
		ASSERT_LT(n, 100000);
	}
	EXPECT_GT(n, 10);
}

TEST(CfgOom, JsonAllocationFailuresDuringEmitGiveNoMemory)
{
	Loaded l = Load(kRich);
	ASSERT_NE(l.cfg, nullptr);
	JanssonAllocGuard guard;
	long n = 0;
	for (;; n++) {
		int err = 1;
		g_fail_after = n;
		char *t = nrf_cfg_emit(l.cfg.get(), NRF_CFG_ALL, 2, &err);
		g_fail_after = -1;
		if (t != nullptr) {
			EXPECT_EQ(err, 0);
			free(t);
			break;
		}
		ASSERT_EQ(err, NRF_ENOMEM) << "after " << n << " allocations";
		ASSERT_LT(n, 100000);
	}
	EXPECT_GT(n, 10);
}
