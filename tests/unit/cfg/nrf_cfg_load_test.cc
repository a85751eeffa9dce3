// SPDX-License-Identifier: BSD-3-Clause
// Loading: defaults, derived fields, the peer table, status sets and the
// resolved error responses of lib/cfg/nrf_cfg.c.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

bool
InSet(const nrf_cfg_status_set &s, int code)
{
	return nrf_cfg_status_match(&s, code);
}

} // namespace

TEST(CfgLoad, AcceptsTheSpecExample)
{
	Loaded l = Load(kSpec);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg *c = l.cfg.get();
	EXPECT_EQ(l.err, 0);
	EXPECT_STREQ(c->general.host, "nrf-a.seg1.example.com");
	EXPECT_EQ(c->general.port, 8080);
	EXPECT_STREQ(c->general.nrf_set_id, "set1.nrfset.5gc.mnc001.mcc001");
	ASSERT_EQ(c->general.n_aliases, 1);
	EXPECT_STREQ(c->general.aliases[0].host, "10.10.1.2");
	EXPECT_EQ(c->general.aliases[0].port, 8080);
	EXPECT_STREQ(c->general.self_name, "nrf-a.seg1.example.com:8080");
	EXPECT_TRUE(c->fwd.enabled);
	EXPECT_TRUE(c->growth.enabled);
	EXPECT_EQ(c->growth.scope, NRF_SCOPE_HOST);
	ASSERT_EQ(c->n_peers, 2);
	EXPECT_STREQ(c->peers[0].name, "nrf-e.seg2.example.com:8080");
	EXPECT_STREQ(c->peers[1].name, "nrf-g.set2.example.com:8080");
	ASSERT_EQ(c->n_sets, 1);
	EXPECT_STREQ(c->sets[0].nrf_set_id, "set2.nrfset.5gc.mnc001.mcc001");
	ASSERT_EQ(c->rt.n_listen, 1);
	EXPECT_STREQ(c->rt.listen[0].address, "10.10.1.2");
	EXPECT_TRUE(c->rt.local_nrf.present);
	EXPECT_STREQ(c->rt.local_nrf.address, "10.10.1.3");
	EXPECT_EQ(c->rt.local_nrf.port, 8080);
	EXPECT_TRUE(c->errors[NRF_MODE_FORWARDING][NRF_COND_LOOP_DETECTION].configured);
	EXPECT_STREQ(c->errors[NRF_MODE_FORWARDING][NRF_COND_LOOP_DETECTION].detail,
		"request already passed through this NRF");
}

TEST(CfgLoad, FillsEveryDefaultOfAMinimalDocument)
{
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg *c = l.cfg.get();

	EXPECT_STREQ(c->general.nrf_set_id, "");
	EXPECT_EQ(c->general.n_aliases, 0);
	EXPECT_TRUE(c->general.via_on_responses);

	EXPECT_FALSE(c->fwd.enabled);
	EXPECT_TRUE(c->fwd.discovery);
	EXPECT_TRUE(c->fwd.profile_retrieval);
	EXPECT_TRUE(c->fwd.subscription);
	EXPECT_TRUE(c->fwd.access_token);
	EXPECT_STREQ(c->fwd.trigger_pattern, "^404$");
	EXPECT_TRUE(c->fwd.empty_discovery_result);
	EXPECT_STREQ(c->fwd.reroute_pattern, "^5[0-9]{2}$");
	EXPECT_EQ(c->fwd.max_forward_attempts, 2u);
	EXPECT_EQ(c->fwd.max_via_members, 16u);
	EXPECT_EQ(c->fwd.n_peers, 0);

	EXPECT_FALSE(c->growth.enabled);
	EXPECT_EQ(c->growth.scope, NRF_SCOPE_HOST);
	EXPECT_EQ(c->growth.n_peers, 0);
	EXPECT_EQ(c->n_peers, 0);
	EXPECT_EQ(c->n_sets, 0);

	ASSERT_EQ(c->rt.n_listen, 1);
	EXPECT_STREQ(c->rt.listen[0].address, "0.0.0.0");
	EXPECT_EQ(c->rt.listen[0].port, 8080);
	EXPECT_FALSE(c->rt.listen[0].tls);
	EXPECT_FALSE(c->rt.local_nrf.present);
	EXPECT_STREQ(c->rt.local_nrf.address, "");
	EXPECT_STREQ(c->rt.mgmt_address, "127.0.0.1");
	EXPECT_EQ(c->rt.mgmt_port, 9090);
	EXPECT_EQ(c->rt.connect_ms, 1000u);
	EXPECT_EQ(c->rt.per_try_ms, 2000u);
	EXPECT_EQ(c->rt.request_ms, 5000u);
	EXPECT_EQ(c->rt.handshake_ms, 5000u);
	EXPECT_EQ(c->rt.request_header_ms, 5000u);
	EXPECT_EQ(c->rt.request_body_ms, 10000u);
	EXPECT_EQ(c->rt.idle_ms, 60000u);
	EXPECT_EQ(c->rt.stalled_reader_ms, 10000u);
	EXPECT_EQ(c->rt.upstream_idle_ms, 60000u);
	EXPECT_EQ(c->rt.max_connections, 10000u);
	EXPECT_EQ(c->rt.max_concurrent_streams, 128u);
	EXPECT_EQ(c->rt.max_header_bytes, 16384u);
	EXPECT_EQ(c->rt.max_body_bytes, 1048576u);
	EXPECT_EQ(c->rt.peer_queue_depth, 65536u);
	EXPECT_EQ(c->rt.queue_target_ms, 100u);
	EXPECT_EQ(c->rt.queue_interval_ms, 100u);
	EXPECT_EQ(c->rt.consecutive_failures, 5u);
	EXPECT_EQ(c->rt.max_buffered_bytes, 1073741824u);
}

TEST(CfgLoad, KeepsTheGeneration)
{
	Loaded l = Load(kMinimal, 42);
	ASSERT_NE(l.cfg, nullptr);
	EXPECT_EQ(l.cfg->generation, 42u);
}

TEST(CfgLoad, ReportsMissingHostAndPortForAnEmptyObject)
{
	Loaded l = Load("{}");
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_ECONFIG);
	ASSERT_EQ(l.problems.size(), 2u) << l.Dump();
	EXPECT_EQ(l.problems[0].first, "/generalOptions/ocnrfHost");
	EXPECT_NE(l.problems[0].second.find("missing"), std::string::npos);
	EXPECT_EQ(l.problems[1].first, "/generalOptions/ocnrfPort");
}

TEST(CfgLoad, ListenDefaultsToAnyAddressOnTheSbiPort)
{
	Loaded l = Load(With(kMinimal, "/generalOptions/ocnrfPort", "9443"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	ASSERT_EQ(l.cfg->rt.n_listen, 1);
	EXPECT_STREQ(l.cfg->rt.listen[0].address, "0.0.0.0");
	EXPECT_EQ(l.cfg->rt.listen[0].port, 9443);
}

TEST(CfgLoad, ListenEntriesTakeAddressAndTlsDefaults)
{
	Loaded l = Load(With(kMinimal, "/runtime/listen",
		R"([{"port": 1}, {"address": "::", "port": 2, "tls": true}])"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	ASSERT_EQ(l.cfg->rt.n_listen, 2);
	EXPECT_STREQ(l.cfg->rt.listen[0].address, "0.0.0.0");
	EXPECT_EQ(l.cfg->rt.listen[0].port, 1);
	EXPECT_FALSE(l.cfg->rt.listen[0].tls);
	EXPECT_STREQ(l.cfg->rt.listen[1].address, "::");
	EXPECT_TRUE(l.cfg->rt.listen[1].tls);
}

TEST(CfgLoad, AbsentOrNullLocalNrfMeansPureForwarder)
{
	Loaded a = Load(With(kMinimal, "/runtime/management/port", "9091"));
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	EXPECT_FALSE(a.cfg->rt.local_nrf.present);
	Loaded b = Load(With(kMinimal, "/runtime/localNrf", "null"));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_FALSE(b.cfg->rt.local_nrf.present);
}

TEST(CfgLoad, LocalNrfPortDefaultsByScheme)
{
	Loaded a = Load(With(kMinimal, "/runtime/localNrf", R"({"address": "nrf.local"})"));
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	EXPECT_TRUE(a.cfg->rt.local_nrf.present);
	EXPECT_EQ(a.cfg->rt.local_nrf.scheme, NRF_SCHEME_HTTP);
	EXPECT_EQ(a.cfg->rt.local_nrf.port, 80);
	Loaded b = Load(With(kMinimal, "/runtime/localNrf",
		R"({"scheme": "https", "address": "10.0.0.3"})"));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_EQ(b.cfg->rt.local_nrf.scheme, NRF_SCHEME_HTTPS);
	EXPECT_EQ(b.cfg->rt.local_nrf.port, 443);
}

TEST(CfgLoad, ManagementPortZeroDisablesTheListener)
{
	Loaded l = Load(With(kMinimal, "/runtime/management/port", "0"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_EQ(l.cfg->rt.mgmt_port, 0);
}

TEST(CfgLoad, SelfNameBracketsAnIpv6Host)
{
	Loaded a = Load(With(kMinimal, "/generalOptions/ocnrfHost", R"("2001:db8::1")"));
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	EXPECT_STREQ(a.cfg->general.self_name, "[2001:db8::1]:8080");
	Loaded b = Load(With(kMinimal, "/generalOptions/ocnrfHost", R"("10.1.2.3")"));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_STREQ(b.cfg->general.self_name, "10.1.2.3:8080");
}

TEST(CfgLoad, ParsesAliasesIncludingBracketedIpv6)
{
	Loaded l = Load(With(kMinimal, "/generalOptions/aliases",
		R"(["10.10.1.2:8080", "[2001:db8::7]:443", "Nrf-A.Example.COM.:08081"])"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_general &g = l.cfg->general;
	ASSERT_EQ(g.n_aliases, 3);
	EXPECT_STREQ(g.aliases[0].host, "10.10.1.2");
	EXPECT_EQ(g.aliases[0].port, 8080);
	EXPECT_STREQ(g.aliases[1].host, "2001:db8::7");
	EXPECT_EQ(g.aliases[1].port, 443);
	EXPECT_STREQ(g.aliases[2].host, "Nrf-A.Example.COM.");
	EXPECT_EQ(g.aliases[2].port, 8081);
}

TEST(CfgLoad, ViaOnResponsesCanBeSwitchedOff)
{
	Loaded on = Load(With(kMinimal, "/generalOptions/viaOnResponses", "true"));
	ASSERT_NE(on.cfg, nullptr) << on.Dump();
	EXPECT_TRUE(on.cfg->general.via_on_responses);
	Loaded off = Load(With(kMinimal, "/generalOptions/viaOnResponses", "false"));
	ASSERT_NE(off.cfg, nullptr) << off.Dump();
	EXPECT_FALSE(off.cfg->general.via_on_responses);
	/* the member it appends is the one forwarded requests get */
	EXPECT_STREQ(off.cfg->general.self_name, "nrf-a.seg1.example.com:8080");
}

TEST(CfgLoad, PeerTableListsForwardingPeersFirstThenGrowthSetBySet)
{
	Loaded l = Load(kPeers);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg *c = l.cfg.get();

	ASSERT_EQ(c->n_peers, 5);
	EXPECT_EQ(c->fwd.first_peer, 0);
	EXPECT_EQ(c->fwd.n_peers, 2);
	EXPECT_EQ(c->growth.first_peer, 2);
	EXPECT_EQ(c->growth.n_peers, 3);
	ASSERT_EQ(c->n_sets, 2);
	EXPECT_STREQ(c->sets[0].nrf_set_id, "set2");
	EXPECT_EQ(c->sets[0].first_peer, 2);
	EXPECT_EQ(c->sets[0].n_peers, 2);
	EXPECT_STREQ(c->sets[1].nrf_set_id, "set3");
	EXPECT_EQ(c->sets[1].first_peer, 4);
	EXPECT_EQ(c->sets[1].n_peers, 1);

	for (uint16_t i = 0; i < c->n_peers; i++)
		EXPECT_EQ(c->peers[i].index, i);
	EXPECT_EQ(c->peers[0].mode, NRF_MODE_FORWARDING);
	EXPECT_EQ(c->peers[1].mode, NRF_MODE_FORWARDING);
	EXPECT_EQ(c->peers[0].set, NRF_CFG_NO_SET);
	EXPECT_EQ(c->peers[1].set, NRF_CFG_NO_SET);
	EXPECT_EQ(c->peers[2].mode, NRF_MODE_GROWTH);
	EXPECT_EQ(c->peers[2].set, 0);
	EXPECT_EQ(c->peers[3].set, 0);
	EXPECT_EQ(c->peers[4].set, 1);

	EXPECT_STREQ(c->peers[0].pointer, "/forwardingOptions/nrfHostConfig/0");
	EXPECT_STREQ(c->peers[1].pointer, "/forwardingOptions/nrfHostConfig/1");
	EXPECT_STREQ(c->peers[3].pointer,
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/0/nrfHostConfigList/1");
	EXPECT_STREQ(c->peers[4].pointer,
		"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/1/nrfHostConfigList/0");
}

TEST(CfgLoad, PeerNameIsTheFirstConfiguredIdentity)
{
	Loaded l = Load(kPeers);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg *c = l.cfg.get();
	EXPECT_STREQ(c->peers[0].name, "f0.example.com:8080");
	EXPECT_STREQ(c->peers[1].name, "[2001:db8::5]:443");
	EXPECT_STREQ(c->peers[2].name, "g0.set2.example.com:8081");
	EXPECT_STREQ(c->peers[3].name, "10.0.2.2:8082");
}

TEST(CfgLoad, PeerIdsListEveryConfiguredIdentityInOrder)
{
	Loaded l = Load(kPeers);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg *c = l.cfg.get();

	ASSERT_EQ(c->peers[0].n_ids, 1);
	EXPECT_STREQ(c->peers[0].ids[0].host, "f0.example.com");
	EXPECT_EQ(c->peers[0].ids[0].port, 8080);
	ASSERT_EQ(c->peers[1].n_ids, 1);
	EXPECT_STREQ(c->peers[1].ids[0].host, "2001:db8::5");
	ASSERT_EQ(c->peers[2].n_ids, 2);
	EXPECT_STREQ(c->peers[2].ids[0].host, "g0.set2.example.com");
	EXPECT_STREQ(c->peers[2].ids[1].host, "10.0.2.1");
	EXPECT_EQ(c->peers[2].ids[1].port, 8081);
	ASSERT_EQ(c->peers[3].n_ids, 2);
	EXPECT_STREQ(c->peers[3].ids[0].host, "10.0.2.2");
	EXPECT_STREQ(c->peers[3].ids[1].host, "2001:db8::22");
	EXPECT_STREQ(c->peers[3].fqdn, "");
}

TEST(CfgLoad, PeerFieldsTakeTheirDefaults)
{
	Loaded l = Load(kPeers);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_peer &p0 = l.cfg->peers[0];
	const nrf_cfg_peer &p1 = l.cfg->peers[1];
	EXPECT_STREQ(p0.api_version, "v1");
	EXPECT_EQ(p0.scheme, NRF_SCHEME_HTTP);
	EXPECT_STREQ(p0.ipv4, "");
	EXPECT_STREQ(p0.ipv6, "");
	EXPECT_STREQ(p0.api_prefix, "");
	EXPECT_EQ(p0.priority, 2u);
	EXPECT_EQ(p1.priority, 1u);
	EXPECT_EQ(p1.scheme, NRF_SCHEME_HTTPS);
}

TEST(CfgLoad, PeerPortDefaultsToTheSchemePort)
{
	std::string doc = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		R"([{"fqdn": "a.example.com"}, {"fqdn": "b.example.com", "scheme": "https"}])");
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_EQ(l.cfg->peers[0].port, 80);
	EXPECT_EQ(l.cfg->peers[1].port, 443);
	EXPECT_STREQ(l.cfg->peers[1].name, "b.example.com:443");
}

TEST(CfgLoad, ApiPrefixLosesItsTrailingSlash)
{
	std::string doc = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		R"([{"fqdn": "a.example.com", "apiPrefix": "/nrf/"},
		    {"fqdn": "b.example.com", "apiPrefix": "/"},
		    {"fqdn": "c.example.com", "apiPrefix": "/x/y"}])");
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_STREQ(l.cfg->peers[0].api_prefix, "/nrf");
	EXPECT_STREQ(l.cfg->peers[1].api_prefix, "");
	EXPECT_STREQ(l.cfg->peers[2].api_prefix, "/x/y");
	Loaded g = Load(kPeers);
	ASSERT_NE(g.cfg, nullptr);
	EXPECT_STREQ(g.cfg->peers[4].api_prefix, "/pfx");
}

TEST(CfgLoad, PriorityAcceptsZeroAndTheUpperBound)
{
	std::string doc = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		R"([{"fqdn": "a.example.com", "priority": 0}, {"fqdn": "b.example.com", "priority": 65535}])");
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_EQ(l.cfg->peers[0].priority, 0u);
	EXPECT_EQ(l.cfg->peers[1].priority, 65535u);
}

TEST(CfgStatusSet, DefaultsSelect404AndEvery5xx)
{
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr);
	for (int code = 0; code < 700; code++) {
		EXPECT_EQ(InSet(l.cfg->fwd.triggers, code), code == 404) << code;
		EXPECT_EQ(InSet(l.cfg->fwd.reroute, code), code >= 500 && code <= 599) << code;
	}
}

TEST(CfgStatusSet, FiveHundredsPatternMatches500To599Only)
{
	Loaded l = Load(With(kMinimal, "/forwardingOptions/forwardingTriggers/statusCodes/pattern",
		R"("^5[0-9]{2}$")"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	for (int code = 100; code <= 599; code++)
		EXPECT_EQ(InSet(l.cfg->fwd.triggers, code), code >= 500) << code;
}

TEST(CfgStatusSet, ExactPatternMatchesOneCode)
{
	Loaded l = Load(With(kMinimal, "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
		R"("^404$")"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	for (int code = 100; code <= 599; code++)
		EXPECT_EQ(InSet(l.cfg->fwd.reroute, code), code == 404) << code;
	EXPECT_STREQ(l.cfg->fwd.reroute_pattern, "^404$");
}

TEST(CfgStatusSet, AlternationAndUnanchoredPatternsWork)
{
	Loaded a = Load(With(kMinimal, "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
		R"("^(502|503|504)$")"));
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	for (int code = 100; code <= 599; code++)
		EXPECT_EQ(InSet(a.cfg->fwd.reroute, code), code >= 502 && code <= 504) << code;
	// unanchored: any code containing "04"
	Loaded b = Load(With(kMinimal, "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
		R"("04")"));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_TRUE(InSet(b.cfg->fwd.reroute, 404));
	EXPECT_TRUE(InSet(b.cfg->fwd.reroute, 504));
	EXPECT_TRUE(InSet(b.cfg->fwd.reroute, 204));
	EXPECT_FALSE(InSet(b.cfg->fwd.reroute, 500));
}

TEST(CfgStatusSet, CodesOutsideTheHttpRangeAreNeverIn)
{
	Loaded l = Load(With(kMinimal, "/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
		R"("[0-9]")"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_status_set &s = l.cfg->fwd.reroute;
	for (int code = 100; code <= 599; code++)
		EXPECT_TRUE(InSet(s, code)) << code;
	EXPECT_FALSE(InSet(s, 99));
	EXPECT_FALSE(InSet(s, 600));
	EXPECT_FALSE(InSet(s, -1));
	EXPECT_FALSE(InSet(s, 1000));
	for (int code = 0; code < 640; code++) {
		if (code < 100 || code > 599) {
			EXPECT_EQ((s.bits[code >> 6] >> (code & 63)) & 1, 0u) << code;
		}
	}
}

TEST(CfgErrors, UnconfiguredConditionsGetSpecDefaults)
{
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr);
	struct {
		nrf_cfg_cond cond;
		uint16_t status;
		const char *cause;
		const char *title;
	} want[] = {
		{NRF_COND_LOOP_DETECTION, 508, "LOOP_DETECTED", "Loop Detected"},
		{NRF_COND_LOOP_PREVENTION, 508, "LOOP_PREVENTED", "Loop Detected"},
		{NRF_COND_HOP_LIMIT, 508, "MAX_HOPS_REACHED", "Loop Detected"},
		{NRF_COND_NOT_REACHABLE, 504, "TARGET_NF_NOT_REACHABLE", "Gateway Timeout"},
		{NRF_COND_OVERLOAD, 503, "NF_CONGESTION", "Service Unavailable"},
		/* TS 29.500 Table 5.2.7.2-1: the 429 cause */
		{NRF_COND_CLIENT_LIMIT, 429, "NF_CONGESTION_RISK", "Too Many Requests"},
	};
	for (int m = 0; m < NRF_MODE_COUNT; m++) {
		for (const auto &w : want) {
			const nrf_cfg_error_response &r = l.cfg->errors[m][w.cond];
			EXPECT_FALSE(r.configured);
			EXPECT_EQ(r.status, w.status) << w.cause;
			EXPECT_STREQ(r.cause, w.cause);
			EXPECT_STREQ(r.title, w.title);
			EXPECT_GT(strlen(r.detail), 10u) << w.cause;
			/* a shed or refused request may come back in a second */
			EXPECT_STREQ(r.retry_after, w.cond == NRF_COND_OVERLOAD ? "1" : "");
			EXPECT_STREQ(r.redirect_url, "");
		}
	}
}

TEST(CfgErrors, ConfiguredResponsesFillOnlyTheirOwnMode)
{
	std::string doc = With(kMinimal, "/forwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Not_Reachable", "errorCode": 502, "errorCause": "C1",
		     "errorTitle": "T1", "errorDetail": "D1", "retryAfter": "5", "redirectUrl": "http://x/"}])");
	doc = With(doc, "/nrfGrowth/nrfForwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Forwarding_Overload", "errorCode": 429}])");
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_error_response &f = l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_NOT_REACHABLE];
	EXPECT_TRUE(f.configured);
	EXPECT_EQ(f.status, 502);
	EXPECT_STREQ(f.cause, "C1");
	EXPECT_STREQ(f.title, "T1");
	EXPECT_STREQ(f.detail, "D1");
	EXPECT_STREQ(f.retry_after, "5");
	EXPECT_STREQ(f.redirect_url, "http://x/");
	EXPECT_FALSE(l.cfg->errors[NRF_MODE_GROWTH][NRF_COND_NOT_REACHABLE].configured);
	EXPECT_EQ(l.cfg->errors[NRF_MODE_GROWTH][NRF_COND_NOT_REACHABLE].status, 504);

	const nrf_cfg_error_response &g = l.cfg->errors[NRF_MODE_GROWTH][NRF_COND_OVERLOAD];
	EXPECT_TRUE(g.configured);
	EXPECT_EQ(g.status, 429);
	EXPECT_FALSE(l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_OVERLOAD].configured);
	EXPECT_EQ(l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_OVERLOAD].status, 503);
}

TEST(CfgErrors, OmittedTextsOfAConfiguredResponseFallBackToDefaults)
{
	Loaded l = Load(With(kMinimal, "/forwardingOptions/errorResponses",
		R"([{"errorCondition": "NRF_Forwarding_Overload", "errorCode": 429},
		    {"errorCondition": "NRF_Forwarding_Hop_Limit", "errorCode": 508, "errorCause": ""}])"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_error_response &o = l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_OVERLOAD];
	EXPECT_STREQ(o.cause, "NF_CONGESTION");
	EXPECT_STREQ(o.title, "Too Many Requests");
	EXPECT_STREQ(o.detail, l.cfg->errors[NRF_MODE_GROWTH][NRF_COND_OVERLOAD].detail);
	EXPECT_STREQ(o.retry_after, "");
	const nrf_cfg_error_response &h = l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_HOP_LIMIT];
	EXPECT_STREQ(h.cause, ""); // written empty stays empty
	EXPECT_STREQ(h.title, "Loop Detected");
}

TEST(CfgErrors, SameConditionMayBeConfiguredInBothModes)
{
	const char *e = R"([{"errorCondition": "NRF_Forwarding_Loop_Detection", "errorCode": 508}])";
	std::string doc = With(With(kMinimal, "/forwardingOptions/errorResponses", e),
		"/nrfGrowth/nrfForwardingOptions/errorResponses", e);
	Loaded l = Load(doc);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_TRUE(l.cfg->errors[NRF_MODE_FORWARDING][NRF_COND_LOOP_DETECTION].configured);
	EXPECT_TRUE(l.cfg->errors[NRF_MODE_GROWTH][NRF_COND_LOOP_DETECTION].configured);
}

TEST(CfgErrors, RetryAfterAcceptsSecondsAndAnHttpDate)
{
	for (const char *v : {R"("0")", R"("120")", R"("Sun, 06 Nov 1994 08:49:37 GMT")"}) {
		Loaded l = Load(With(kMinimal, "/forwardingOptions/errorResponses",
			(std::string(R"([{"errorCondition": "NRF_Forwarding_Overload", "errorCode": 503, "retryAfter": )") +
				v + "}]").c_str()));
		EXPECT_NE(l.cfg, nullptr) << v << "\n" << l.Dump();
	}
}

TEST(CfgNames, NamesConditionsAndModes)
{
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_LOOP_DETECTION), "NRF_Forwarding_Loop_Detection");
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_LOOP_PREVENTION), "NRF_Forwarding_Loop_Prevention");
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_HOP_LIMIT), "NRF_Forwarding_Hop_Limit");
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_NOT_REACHABLE), "NRF_Not_Reachable");
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_OVERLOAD), "NRF_Forwarding_Overload");
	EXPECT_STREQ(nrf_cfg_cond_name(NRF_COND_CLIENT_LIMIT), "NRF_Client_Limit");
	EXPECT_EQ(nrf_cfg_cond_name(NRF_COND_COUNT), nullptr);
	EXPECT_EQ(nrf_cfg_cond_name(static_cast<nrf_cfg_cond>(-1)), nullptr);
	EXPECT_STREQ(nrf_cfg_mode_name(NRF_MODE_FORWARDING), "forwarding");
	EXPECT_STREQ(nrf_cfg_mode_name(NRF_MODE_GROWTH), "growth");
}

TEST(CfgLoad, SnapshotStringsAreNeverNull)
{
	for (const char *doc : {kMinimal, kSpec, kPeers}) {
		Loaded l = Load(doc);
		ASSERT_NE(l.cfg, nullptr) << l.Dump();
		const nrf_cfg *c = l.cfg.get();
		EXPECT_NE(c->general.host, nullptr);
		EXPECT_NE(c->general.nrf_set_id, nullptr);
		EXPECT_NE(c->general.self_name, nullptr);
		EXPECT_NE(c->rt.local_nrf.address, nullptr);
		EXPECT_NE(c->rt.mgmt_address, nullptr);
		for (int m = 0; m < NRF_MODE_COUNT; m++) {
			for (int k = 0; k < NRF_COND_COUNT; k++) {
				const nrf_cfg_error_response &r = l.cfg->errors[m][k];
				EXPECT_TRUE(r.cause && r.title && r.detail && r.retry_after && r.redirect_url);
			}
		}
		for (uint16_t i = 0; i < c->n_peers; i++) {
			const nrf_cfg_peer &p = c->peers[i];
			EXPECT_TRUE(p.api_version && p.fqdn && p.ipv4 && p.ipv6 && p.api_prefix &&
				p.name && p.pointer);
		}
	}
}

TEST(CfgLoad, AcceptsTextWithoutATerminatingNul)
{
	std::string doc = std::string(kMinimal) + "garbage";
	Loaded l;
	l.cfg.reset(nrf_cfg_load(doc.data(), strlen(kMinimal), 1, nullptr, &l.err));
	EXPECT_NE(l.cfg, nullptr);
	EXPECT_EQ(l.err, 0);
}

TEST(CfgLoad, WorksWithoutProblemListOrErrorPointer)
{
	CfgPtr c(nrf_cfg_load(kMinimal, strlen(kMinimal), 1, nullptr, nullptr));
	EXPECT_NE(c, nullptr);
	CfgPtr bad(nrf_cfg_load("{}", 2, 1, nullptr, nullptr));
	EXPECT_EQ(bad, nullptr);
}

TEST(CfgLoad, FreeAcceptsNull)
{
	nrf_cfg_free(nullptr);
	nrf_cfg_problems_fini(nullptr);
	nrf_cfg_problems p{};
	nrf_cfg_problems_fini(&p);
	EXPECT_EQ(p.v, nullptr);
}

TEST(CfgLoadFile, ReadsAFile)
{
	char path[] = "/tmp/nrf_cfg_test_XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, kSpec, strlen(kSpec)), static_cast<ssize_t>(strlen(kSpec)));
	close(fd);
	int err = 1;
	nrf_cfg_problems p{};
	CfgPtr c(nrf_cfg_load_file(path, 3, &p, &err));
	unlink(path);
	ASSERT_NE(c, nullptr);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(p.n, 0u);
	EXPECT_EQ(c->generation, 3u);
	EXPECT_EQ(c->n_peers, 2);
	nrf_cfg_problems_fini(&p);
}

TEST(CfgLoadFile, ReportsAMissingFileAsAnIoError)
{
	int err = 0;
	nrf_cfg_problems p{};
	CfgPtr c(nrf_cfg_load_file("/nonexistent/nrfwd.json", 1, &p, &err));
	EXPECT_EQ(c, nullptr);
	EXPECT_EQ(err, NRF_EIO);
	ASSERT_EQ(p.n, 1u);
	EXPECT_STREQ(p.v[0].pointer, "");
	EXPECT_NE(strstr(p.v[0].reason, "/nonexistent/nrfwd.json"), nullptr) << p.v[0].reason;
	EXPECT_NE(strstr(p.v[0].reason, "No such file"), nullptr) << p.v[0].reason;
	nrf_cfg_problems_fini(&p);
}

TEST(CfgLoadFile, ReportsADirectoryAsAnIoError)
{
	int err = 0;
	nrf_cfg_problems p{};
	CfgPtr c(nrf_cfg_load_file("/tmp", 1, &p, &err));
	EXPECT_EQ(c, nullptr);
	EXPECT_EQ(err, NRF_EIO);
	EXPECT_EQ(p.n, 1u);
	nrf_cfg_problems_fini(&p);
}

TEST(CfgLoadFile, PassesParseProblemsThrough)
{
	char path[] = "/tmp/nrf_cfg_test_XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "{\n  \"a\": ", 9), 9);
	close(fd);
	int err = 0;
	nrf_cfg_problems p{};
	CfgPtr c(nrf_cfg_load_file(path, 1, &p, &err));
	unlink(path);
	EXPECT_EQ(c, nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
	ASSERT_EQ(p.n, 1u);
	EXPECT_NE(strstr(p.v[0].reason, "line 2"), nullptr) << p.v[0].reason;
	nrf_cfg_problems_fini(&p);
}

TEST(CfgLoadFile, RejectsANullPath)
{
	int err = 0;
	CfgPtr c(nrf_cfg_load_file(nullptr, 1, nullptr, &err));
	EXPECT_EQ(c, nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
}
