#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nrf_fwd.h"

static nrf_fwd_op
Classify(const char *m, const char *p, const char *prefix = "")
{
	return nrf_fwd_classify(nrf_slice_str(m), nrf_slice_str(p), nrf_slice_str(prefix));
}

TEST(FwdClassify, RecognisesEveryForwardableOperation)
{
	EXPECT_EQ(Classify("GET", "/nnrf-disc/v1/nf-instances?target-nf-type=AMF"),
		NRF_OP_NF_DISCOVER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances/4947a69a-f61b-4bc1-b9da-47c9c5d14b64"),
		NRF_OP_NF_PROFILE_RETRIEVAL);
	EXPECT_EQ(Classify("POST", "/nnrf-nfm/v1/subscriptions"), NRF_OP_NF_STATUS_SUBSCRIBE);
	EXPECT_EQ(Classify("PATCH", "/nnrf-nfm/v1/subscriptions/s1"),
		NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE);
	EXPECT_EQ(Classify("DELETE", "/nnrf-nfm/v1/subscriptions/s1"),
		NRF_OP_NF_STATUS_UNSUBSCRIBE);
	EXPECT_EQ(Classify("POST", "/oauth2/token"), NRF_OP_ACCESS_TOKEN);
}

TEST(FwdClassify, LeavesManagementOperationsLocal)
{
	EXPECT_EQ(Classify("PUT", "/nnrf-nfm/v1/nf-instances/x"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("PATCH", "/nnrf-nfm/v1/nf-instances/x"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/subscriptions"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("POST", "/nnrf-disc/v1/nf-instances"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/oauth2/token"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", ""), NRF_OP_OTHER);
}

TEST(FwdClassify, MatchesWholeSegmentsOnly)
{
	EXPECT_EQ(Classify("GET", "/nnrf-disc/v1/nf-instancesX"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-disc/v1/nf-instances/"), NRF_OP_NF_DISCOVER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances/"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances//"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances/a/b"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances/a/"), NRF_OP_NF_PROFILE_RETRIEVAL);
	EXPECT_EQ(Classify("DELETE", "/nnrf-nfm/v1/subscriptions"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("POST", "/oauth2/tokens"), NRF_OP_OTHER);
}

TEST(FwdClassify, IgnoresTheQuery)
{
	EXPECT_EQ(Classify("POST", "/oauth2/token?x=/y"), NRF_OP_ACCESS_TOKEN);
	EXPECT_EQ(Classify("GET", "/nnrf-nfm/v1/nf-instances/abc?requester-features=1"),
		NRF_OP_NF_PROFILE_RETRIEVAL);
}

TEST(FwdClassify, MethodIsCaseSensitive)
{
	EXPECT_EQ(Classify("get", "/nnrf-disc/v1/nf-instances"), NRF_OP_OTHER);
}

TEST(FwdClassify, StripsTheApiPrefixAtASegmentBoundary)
{
	EXPECT_EQ(Classify("GET", "/nrf1/nnrf-disc/v1/nf-instances", "/nrf1"), NRF_OP_NF_DISCOVER);
	EXPECT_EQ(Classify("GET", "/nrf1x/nnrf-disc/v1/nf-instances", "/nrf1"), NRF_OP_OTHER);
	EXPECT_EQ(Classify("GET", "/nnrf-disc/v1/nf-instances", "/nrf1"), NRF_OP_NF_DISCOVER);
}

TEST(FwdClassify, NamesEveryOperation)
{
	EXPECT_STREQ(nrf_fwd_op_name(NRF_OP_NF_DISCOVER), "NFDiscover");
	EXPECT_STREQ(nrf_fwd_op_name(NRF_OP_ACCESS_TOKEN), "AccessToken");
	EXPECT_STREQ(nrf_fwd_op_name(NRF_OP_OTHER), "other");
	EXPECT_STREQ(nrf_fwd_op_name((nrf_fwd_op)99), "other");
}

TEST(FwdClassify, NullSlicesAreOther)
{
	nrf_slice none = {nullptr, 0};
	EXPECT_EQ(nrf_fwd_classify(none, nrf_slice_str("/oauth2/token"), none), NRF_OP_OTHER);
	EXPECT_EQ(nrf_fwd_classify(nrf_slice_str("POST"), none, none), NRF_OP_OTHER);
}

/* The query cut only after the literal classifies as cutting it
 * from the whole path first did: the earlier implementation, kept here as
 * the reference, against every literal with every rest and a '?' (or
 * none) at every position, with and without an apiPrefix. */
namespace {

nrf_fwd_op
Reference(const std::string &m, std::string p, const std::string &prefix)
{
	size_t q = p.find('?');

	if (q != std::string::npos)
		p.resize(q);
	if (!prefix.empty() && p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
		p[prefix.size()] == '/')
		p = p.substr(prefix.size());
	auto eat = [&p](const char *lit) {
		size_t n = strlen(lit);
		if (p.compare(0, n, lit) != 0 || p.size() < n)
			return false;
		p = p.substr(n);
		return true;
	};
	auto at_end = [&p]() { return p.empty() || p == "/"; };
	auto one_segment = [&p]() {
		if (p.size() < 2 || p[0] != '/')
			return false;
		for (size_t i = 1; i < p.size(); i++)
			if (p[i] == '/')
				return i > 1 && i == p.size() - 1;
		return true;
	};
	if (eat("/nnrf-disc/v1/nf-instances"))
		return m == "GET" && at_end() ? NRF_OP_NF_DISCOVER : NRF_OP_OTHER;
	if (eat("/nnrf-nfm/v1/nf-instances"))
		return m == "GET" && one_segment() ? NRF_OP_NF_PROFILE_RETRIEVAL : NRF_OP_OTHER;
	if (eat("/nnrf-nfm/v1/subscriptions")) {
		if (at_end())
			return m == "POST" ? NRF_OP_NF_STATUS_SUBSCRIBE : NRF_OP_OTHER;
		if (!one_segment())
			return NRF_OP_OTHER;
		if (m == "PATCH")
			return NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE;
		if (m == "DELETE")
			return NRF_OP_NF_STATUS_UNSUBSCRIBE;
		return NRF_OP_OTHER;
	}
	if (eat("/oauth2/token"))
		return m == "POST" && at_end() ? NRF_OP_ACCESS_TOKEN : NRF_OP_OTHER;
	return NRF_OP_OTHER;
}

} // namespace

TEST(FwdClassify, QueryCutAfterTheLiteralAgreesWithCuttingItFirst)
{
	const char *lits[] = {"/nnrf-disc/v1/nf-instances", "/nnrf-nfm/v1/nf-instances",
		"/nnrf-nfm/v1/subscriptions", "/oauth2/token", "/nnrf-disc/v1/nf-inst", "/", ""};
	const char *rests[] = {"", "/", "//", "/a", "/a/", "/a/b", "/abc-1", "X", "?", "/?",
		"?a=b", "/a?x=/y/z", "/a/?q"};
	const char *methods[] = {"GET", "POST", "PATCH", "DELETE", "PUT"};
	const char *prefixes[] = {"", "/nrf1"};
	size_t n = 0;

	for (const char *pre : prefixes)
		for (const char *lit : lits)
			for (const char *rest : rests) {
				std::string base = std::string(lit) + rest;

				for (size_t at = 0; at <= base.size() + 1; at++) {
					std::string path = base;

					if (at <= base.size())
						path.insert(at, "?k=v");
					for (int with_pre = 0; with_pre < 2; with_pre++) {
						std::string full = (with_pre ? std::string(pre) : "") + path;

						for (const char *m : methods) {
							ASSERT_EQ(Classify(m, full.c_str(), pre),
								Reference(m, full, pre))
								<< m << " " << full << " prefix " << pre;
							n++;
						}
					}
				}
			}
	EXPECT_GT(n, 10000u);
}
