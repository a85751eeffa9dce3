// SPDX-License-Identifier: BSD-3-Clause
// rewriteLinks (decision 0013): on the local NRF and on peers of both
// modes; off by default, validated, emitted, reloaded equal.
#include <gtest/gtest.h>

#include <string>

#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

const char *kPeerSet = "/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList";

std::string
Doc(const char *fwd_peer, const char *growth_peer, const char *local)
{
	std::string d = With(kMinimal, "/forwardingOptions/nrfHostConfig",
		(std::string("[") + fwd_peer + "]").c_str());
	std::string set = std::string(R"([{"nrfSetId": "set2", "nrfHostConfigList": [)") +
		growth_peer + "]}]";
	d = With(d, kPeerSet, set.c_str());
	return With(d, "/runtime/localNrf", local);
}

std::string
Emit(const nrf_cfg *c, nrf_cfg_group g)
{
	int err = 1;
	char *t = nrf_cfg_emit(c, g, 0, &err);
	EXPECT_NE(t, nullptr);
	std::string s = t != nullptr ? t : "";
	free(t);
	return s;
}

} // namespace

TEST(CfgLinks, RewriteLinksIsOffByDefaultEverywhere)
{
	Loaded l = Load(Doc(R"({"fqdn": "nrf-e.example.com"})", R"({"fqdn": "nrf-g.example.com"})",
		R"({"address": "10.0.0.3", "port": 8080})"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	ASSERT_EQ(l.cfg->n_peers, 2);
	EXPECT_FALSE(l.cfg->peers[0].rewrite_links);
	EXPECT_FALSE(l.cfg->peers[1].rewrite_links);
	EXPECT_FALSE(l.cfg->rt.local_nrf.rewrite_links);
}

TEST(CfgLinks, LoadsRewriteLinksOnTheLocalNrfAndOnPeersOfBothModes)
{
	Loaded l = Load(Doc(R"({"fqdn": "nrf-e.example.com", "rewriteLinks": true},
			       {"fqdn": "nrf-f.example.com", "rewriteLinks": false})",
		R"({"fqdn": "nrf-g.example.com", "rewriteLinks": true})",
		R"({"address": "10.0.0.3", "port": 8080, "rewriteLinks": true})"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	ASSERT_EQ(l.cfg->n_peers, 3);
	EXPECT_TRUE(l.cfg->peers[0].rewrite_links);
	EXPECT_FALSE(l.cfg->peers[1].rewrite_links);
	EXPECT_EQ(l.cfg->peers[2].mode, NRF_MODE_GROWTH);
	EXPECT_TRUE(l.cfg->peers[2].rewrite_links);
	EXPECT_TRUE(l.cfg->rt.local_nrf.rewrite_links);
}

TEST(CfgLinks, RejectsANonBooleanRewriteLinksAtEachPointer)
{
	Loaded l = Load(Doc(R"({"fqdn": "nrf-e.example.com", "rewriteLinks": "yes"})",
		R"({"fqdn": "nrf-g.example.com", "rewriteLinks": 1})",
		R"({"address": "10.0.0.3", "rewriteLinks": null})"));
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_ECONFIG);
	EXPECT_TRUE(l.Has("/forwardingOptions/nrfHostConfig/0/rewriteLinks", "true or false"))
		<< l.Dump();
	EXPECT_TRUE(l.Has(std::string(kPeerSet) + "/0/nrfHostConfigList/0/rewriteLinks",
		"true or false"))
		<< l.Dump();
	EXPECT_TRUE(l.Has("/runtime/localNrf/rewriteLinks", "true or false")) << l.Dump();
	EXPECT_EQ(l.problems.size(), 3u) << l.Dump();
}

TEST(CfgLinks, EmitsRewriteLinksAndReloadsToAnEqualSnapshot)
{
	Loaded a = Load(Doc(R"({"fqdn": "nrf-e.example.com", "rewriteLinks": true})",
		R"({"fqdn": "nrf-g.example.com"})",
		R"({"address": "10.0.0.3", "port": 8080, "rewriteLinks": true})"));
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	std::string fwd = Emit(a.cfg.get(), NRF_CFG_FORWARDING);
	EXPECT_NE(fwd.find(R"("priority":1,"rewriteLinks":true})"), std::string::npos) << fwd;
	std::string growth = Emit(a.cfg.get(), NRF_CFG_GROWTH);
	EXPECT_NE(growth.find(R"("priority":1,"rewriteLinks":false})"), std::string::npos) << growth;
	std::string rt = Emit(a.cfg.get(), NRF_CFG_RUNTIME);
	EXPECT_NE(rt.find(R"("localNrf":{"scheme":"http","address":"10.0.0.3","port":8080,)"
			  R"("rewriteLinks":true})"),
		std::string::npos)
		<< rt;

	Loaded b = Load(Emit(a.cfg.get(), NRF_CFG_ALL));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), b.cfg.get()));
	EXPECT_TRUE(b.cfg->peers[0].rewrite_links);
	EXPECT_FALSE(b.cfg->peers[1].rewrite_links);
	EXPECT_TRUE(b.cfg->rt.local_nrf.rewrite_links);
}

TEST(CfgLinks, EqualSeesRewriteLinksOfEachUpstream)
{
	std::string base = Doc(R"({"fqdn": "nrf-e.example.com"})", R"({"fqdn": "nrf-g.example.com"})",
		R"({"address": "10.0.0.3"})");
	Loaded a = Load(base);
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	for (std::string ptr : {std::string("/forwardingOptions/nrfHostConfig/0/rewriteLinks"),
		     std::string(kPeerSet) + "/0/nrfHostConfigList/0/rewriteLinks",
		     std::string("/runtime/localNrf/rewriteLinks")}) {
		Loaded b = Load(With(base, ptr, "true"));
		ASSERT_NE(b.cfg, nullptr) << ptr << "\n" << b.Dump();
		EXPECT_FALSE(nrf_cfg_equal(a.cfg.get(), b.cfg.get())) << ptr;
		Loaded c = Load(With(base, ptr, "false"));
		ASSERT_NE(c.cfg, nullptr) << ptr << "\n" << c.Dump();
		EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), c.cfg.get())) << ptr;
	}
}
