/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the client table of runtime.limits.perClient
 * (lib/rt/rt_limit.c, decision 0055): the token bucket (refill, burst,
 * Retry-After), the table (lookups, the least recently seen entry reused
 * when full, tags that stop naming a reused entry, maxStreams counts) and
 * the keys (IP address, the NF instance id of a User-Agent, malformed
 * User-Agents). The worker side is covered by rt_proxy_test.cc and
 * tests/integration/test_client_limits.py.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nrf_rt.h"
#include "rt_limit.h"

namespace {

constexpr uint64_t kSec = 1000000000ull;
constexpr uint64_t kT0 = 1000 * kSec; /* an arbitrary "now" */

nrf_cfg_client_limits
Limits(uint32_t rate, uint32_t burst = 0, uint32_t streams = 0,
	nrf_cfg_key_by by = NRF_KEY_BY_ADDRESS)
{
	nrf_cfg_client_limits c = {};

	c.rate_per_second = rate;
	c.burst = burst;
	c.max_streams = streams;
	c.key_by = by;
	return c;
}

class ClientTable : public ::testing::Test {
protected:
	void
	Make(uint32_t slots, const nrf_cfg_client_limits &c)
	{
		ASSERT_EQ(rt_limit_init(&l_, slots, 42), 0);
		l_.st = &st_;
		rt_limit_set(&l_, &c);
	}
	void TearDown() override { rt_limit_fini(&l_); }

	static rt_limit_key
	Addr(const char *peer)
	{
		rt_limit_key k;

		EXPECT_TRUE(rt_limit_key_addr(peer, &k)) << peer;
		return k;
	}

	rt_limit_ent *
	Find(const char *peer, uint64_t *tag = nullptr)
	{
		rt_limit_key k = Addr(peer);

		return rt_limit_find(&l_, &k, tag);
	}

	/* Requests at @p now until one is refused: how many were taken. */
	int
	Drain(rt_limit_ent *e, uint64_t now, uint32_t *retry = nullptr)
	{
		for (int n = 0; n < 100000; n++) {
			uint32_t r = rt_limit_take(&l_, e, now);

			if (r != 0) {
				if (retry != nullptr)
					*retry = r;
				return n;
			}
		}
		return -1;
	}

	rt_limit l_ = {};
	nrf_rt_stats st_ = {};
};

} // namespace

TEST_F(ClientTable, ANewClientHasAFullBucketOfBurstTokensThenIsRefused)
{
	Make(8, Limits(10, 25));
	rt_limit_ent *e = Find("192.0.2.1:4000");
	uint32_t retry = 0;

	EXPECT_EQ(Drain(e, kT0, &retry), 25);
	EXPECT_EQ(retry, 1u); /* a token comes within the second */
}

TEST_F(ClientTable, BurstDefaultsToTheRate)
{
	Make(8, Limits(7));
	rt_limit_ent *e = Find("192.0.2.1:4000");

	EXPECT_EQ(Drain(e, kT0), 7);
}

TEST_F(ClientTable, TheBucketRefillsAtTheRateAndNeverBeyondTheBurst)
{
	Make(8, Limits(10, 5));
	rt_limit_ent *e = Find("192.0.2.1:4000");

	EXPECT_EQ(Drain(e, kT0), 5);
	/* 100 ms later: one token (10 per second) */
	EXPECT_EQ(Drain(e, kT0 + kSec / 10), 1);
	/* 350 ms after that: three more, the half token waits */
	EXPECT_EQ(Drain(e, kT0 + kSec / 10 + 350 * kSec / 1000), 3);
	/* a minute idle: full again, but no more than the burst */
	EXPECT_EQ(Drain(e, kT0 + 60 * kSec), 5);
}

TEST_F(ClientTable, ASteadyClientAtTheRateIsNeverRefused)
{
	Make(8, Limits(100, 1));
	rt_limit_ent *e = Find("192.0.2.1:4000");

	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(rt_limit_take(&l_, e, kT0 + (uint64_t)i * kSec / 100), 0u) << i;
	/* and one in between is one too many with a bucket of one */
	EXPECT_NE(rt_limit_take(&l_, e, kT0 + 999 * kSec / 100 + kSec / 1000), 0u);
}

TEST_F(ClientTable, RetryAfterIsTheWholeSecondsUntilATokenIsThereAtLeastOne)
{
	Make(8, Limits(1, 1));
	rt_limit_ent *e = Find("192.0.2.1:4000");

	EXPECT_EQ(rt_limit_take(&l_, e, kT0), 0u);
	EXPECT_EQ(rt_limit_take(&l_, e, kT0), 1u);           /* 1 s away */
	EXPECT_EQ(rt_limit_take(&l_, e, kT0 + kSec - 1), 1u); /* 1 ns away: still 1 */
	EXPECT_EQ(rt_limit_take(&l_, e, kT0 + kSec), 0u);
}

TEST_F(ClientTable, ClientsHaveBucketsOfTheirOwn)
{
	Make(8, Limits(10, 2));
	rt_limit_ent *a = Find("192.0.2.1:4000");
	rt_limit_ent *b = Find("192.0.2.2:4000");

	EXPECT_NE(a, b);
	EXPECT_EQ(Drain(a, kT0), 2);
	EXPECT_EQ(Drain(b, kT0), 2);
}

TEST_F(ClientTable, TheSameAddressOnAnotherPortIsTheSameClient)
{
	Make(8, Limits(10));
	rt_limit_ent *a = Find("192.0.2.1:4000");

	EXPECT_EQ(Find("192.0.2.1:4001"), a);
	EXPECT_EQ(Find("[::ffff:192.0.2.1]:4002"), a)
		<< "an IPv4-mapped IPv6 address is its IPv4 address";
	EXPECT_EQ(l_.used, 1u);
	EXPECT_EQ(st_.clients_tracked, 1u);
}

TEST_F(ClientTable, IPv6AddressesAreKeyedWholeNotByTheirSlash64)
{
	Make(8, Limits(10));
	rt_limit_ent *a = Find("[2001:db8:1:2::10]:4000");
	rt_limit_ent *b = Find("[2001:db8:1:2::11]:4000");

	EXPECT_NE(a, b);
	EXPECT_EQ(Find("[2001:db8:1:2:0:0:0:10]:9"), a);
}

TEST_F(ClientTable, AnAddressTheTransportCouldNotTellIsNoKey)
{
	rt_limit_key k;

	EXPECT_FALSE(rt_limit_key_addr("-", &k));
	EXPECT_FALSE(rt_limit_key_addr("", &k));
	EXPECT_FALSE(rt_limit_key_addr(nullptr, &k));
	EXPECT_FALSE(rt_limit_key_addr("fake:3", &k));
	EXPECT_FALSE(rt_limit_key_addr("[2001:db8::1", &k));
}

TEST_F(ClientTable, WhenFullTheLeastRecentlySeenEntryIsReusedAndCounted)
{
	Make(3, Limits(10, 1));
	rt_limit_ent *a = Find("192.0.2.1:1");
	rt_limit_ent *b = Find("192.0.2.2:1");
	rt_limit_ent *c = Find("192.0.2.3:1");

	EXPECT_EQ(Drain(a, kT0), 1);
	EXPECT_EQ(Drain(b, kT0), 1);
	/* a is seen again: b is now the least recently seen */
	EXPECT_EQ(Find("192.0.2.1:2"), a);
	rt_limit_ent *d = Find("192.0.2.4:1");

	EXPECT_EQ(d, b) << "the entry of the client seen least recently";
	EXPECT_EQ(l_.evictions, 1u);
	EXPECT_EQ(st_.client_evictions, 1u);
	EXPECT_EQ(st_.clients_tracked, 3u);
	EXPECT_EQ(Drain(d, kT0), 1) << "the new client starts with a full bucket";
	/* a and c kept theirs */
	EXPECT_EQ(Find("192.0.2.1:3"), a);
	EXPECT_EQ(Drain(a, kT0), 0);
	EXPECT_EQ(Find("192.0.2.3:3"), c);
	/* b comes back: it takes the oldest (d, seen before a and c) afresh */
	rt_limit_ent *b2 = Find("192.0.2.2:9");
	EXPECT_EQ(b2, d);
	EXPECT_EQ(Drain(b2, kT0), 1) << "an evicted client fails open";
	EXPECT_EQ(l_.evictions, 2u);
}

TEST_F(ClientTable, ManyClientsThroughASmallTableKeepEveryChainConsistent)
{
	Make(16, Limits(10));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 200; i++) {
			std::string peer = "10.0." + std::to_string(i / 250) + "." +
				std::to_string(i % 250) + ":5";
			rt_limit_ent *e = Find(peer.c_str());

			/* found again at once: the same entry, nothing evicted */
			uint64_t ev = l_.evictions;
			ASSERT_EQ(Find(peer.c_str()), e);
			ASSERT_EQ(l_.evictions, ev);
		}
	}
	EXPECT_EQ(l_.used, 16u);
	EXPECT_EQ(l_.evictions, 3u * 200u - 16u);
}

TEST_F(ClientTable, ATagNamesItsEntryUntilTheEntryGoesToAnotherClient)
{
	Make(1, Limits(0, 0, 2));
	uint64_t tag = 0;
	rt_limit_ent *a = Find("192.0.2.1:1", &tag);

	EXPECT_NE(tag, 0u);
	EXPECT_EQ(rt_limit_tagged(&l_, tag), a);
	EXPECT_EQ(rt_limit_tagged(&l_, 0), nullptr);
	a->streams = 1;
	Find("192.0.2.2:1"); /* takes the one slot */
	EXPECT_EQ(rt_limit_tagged(&l_, tag), nullptr);
	EXPECT_EQ(a->streams, 0u) << "the new client has no stream counted";
	rt_limit_release(&l_, tag); /* a's request ends: not the new client's */
	EXPECT_EQ(a->streams, 0u);
}

TEST_F(ClientTable, StreamsAreReleasedThroughTheirTag)
{
	Make(8, Limits(0, 0, 2));
	uint64_t tag = 0;
	rt_limit_ent *a = Find("192.0.2.1:1", &tag);

	a->streams = 2;
	rt_limit_release(&l_, tag);
	EXPECT_EQ(a->streams, 1u);
	rt_limit_release(&l_, tag);
	rt_limit_release(&l_, tag); /* never below 0 */
	EXPECT_EQ(a->streams, 0u);
}

TEST_F(ClientTable, ChangingKeyByForgetsEveryClientAndItsTags)
{
	Make(8, Limits(10));
	uint64_t tag = 0;
	Find("192.0.2.1:1", &tag);
	nrf_cfg_client_limits c = Limits(10, 0, 0, NRF_KEY_BY_NF_INSTANCE);

	rt_limit_set(&l_, &c);
	EXPECT_EQ(l_.used, 0u);
	EXPECT_EQ(st_.clients_tracked, 0u);
	EXPECT_EQ(rt_limit_tagged(&l_, tag), nullptr);
	/* a change of the figures alone keeps them */
	Find("192.0.2.1:1", &tag);
	c.rate_per_second = 20;
	rt_limit_set(&l_, &c);
	EXPECT_NE(rt_limit_tagged(&l_, tag), nullptr);
}

TEST_F(ClientTable, ANfInstanceIdOfTheUserAgentIsTheKey)
{
	Make(8, Limits(10, 1, 0, NRF_KEY_BY_NF_INSTANCE));
	rt_limit_key k1, k2, k3;

	ASSERT_TRUE(rt_limit_key_ua(nrf_slice_str("AMF-54804518-4191-46b3-955c-ac631f953ed8"),
		&k1));
	ASSERT_TRUE(rt_limit_key_ua(nrf_slice_str(
		"SMF-54804518-4191-46B3-955C-AC631F953ED8 smf1.5gc.mnc001.mcc001.3gppnetwork.org"),
		&k2));
	ASSERT_TRUE(rt_limit_key_ua(nrf_slice_str("AMF-9f2c1c3e-0001-4a6b-8d2e-000000000001"),
		&k3));
	EXPECT_EQ(k1.kind, RT_LK_NF);
	const uint8_t want[16] = {0x54, 0x80, 0x45, 0x18, 0x41, 0x91, 0x46, 0xb3, 0x95, 0x5c,
		0xac, 0x63, 0x1f, 0x95, 0x3e, 0xd8};
	EXPECT_EQ(memcmp(k1.b, want, 16), 0);
	rt_limit_ent *a = rt_limit_find(&l_, &k1, nullptr);
	/* the id is the key: the same instance with an FQDN, in upper case */
	EXPECT_EQ(rt_limit_find(&l_, &k2, nullptr), a);
	rt_limit_ent *b = rt_limit_find(&l_, &k3, nullptr);
	EXPECT_NE(a, b);
	/* and never the same client as an address */
	rt_limit_key ka = Addr("84.128.69.24:1");
	EXPECT_NE(rt_limit_find(&l_, &ka, nullptr), a);
}

TEST_F(ClientTable, NfTypesWithDigitsAndUnderscoresAreWellFormed)
{
	rt_limit_key k;

	for (const char *ua : {"5G_EIR-54804518-4191-46b3-955c-ac631f953ed8",
		     "NSSAAF-54804518-4191-46b3-955c-ac631f953ed8",
		     "  AMF-54804518-4191-46b3-955c-ac631f953ed8   ",
		     "AMF-54804518-4191-46b3-955c-ac631f953ed8\tamf.example.org"})
		EXPECT_TRUE(rt_limit_key_ua(nrf_slice_str(ua), &k)) << "'" << ua << "'";
}

TEST_F(ClientTable, AMalformedUserAgentIsNoKey)
{
	rt_limit_key k;

	k.kind = RT_LK_V4;
	for (const char *ua : {"", "curl/8.5.0", "nghttp2/1.59.0", "h2load nghttp2/1.59.0",
		     "AMF", "AMF-", "-54804518-4191-46b3-955c-ac631f953ed8",
		     "54804518-4191-46b3-955c-ac631f953ed8",
		     "AMF-54804518-4191-46b3-955c-ac631f953ed",    /* 11 digits at the end */
		     "AMF-54804518-4191-46b3-955c-ac631f953ed8x",  /* 13 */
		     "AMF-54804518-4191-46b3-955cac631f953ed8",    /* a dash missing */
		     "AMF-54804518_4191-46b3-955c-ac631f953ed8",
		     "AMF-5480451g-4191-46b3-955c-ac631f953ed8",   /* not hex */
		     "AMF_54804518-4191-46b3-955c-ac631f953ed8",   /* no dash before the id */
		     "AM F-54804518-4191-46b3-955c-ac631f953ed8",
		     "AMF/1.0-54804518-4191-46b3-955c-ac631f953ed8",
		     "AMF-54804518-4191-46b3-955c-ac631f953ed8/2"})
		EXPECT_FALSE(rt_limit_key_ua(nrf_slice_str(ua), &k)) << "'" << ua << "'";
	EXPECT_FALSE(rt_limit_key_ua(nrf_slice{nullptr, 0}, &k));
	EXPECT_EQ(k.kind, RT_LK_V4) << "the key is not written";
}

TEST_F(ClientTable, RateOffLeavesOnlyTheStreamFigure)
{
	Make(8, Limits(0, 0, 3));
	EXPECT_EQ(l_.interval_ns, 0u);
	EXPECT_EQ(l_.max_streams, 3u);
	nrf_cfg_client_limits c = Limits(1000000, 0);
	rt_limit_set(&l_, &c);
	EXPECT_EQ(l_.interval_ns, 1000u);
	EXPECT_EQ(l_.tolerance_ns, 999999u * 1000u);
}
