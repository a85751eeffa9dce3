#include <gtest/gtest.h>

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
