// SPDX-License-Identifier: BSD-3-Clause
/* Unit tests of the pure parts of lib/rt/rt_dns.c: which address a name is
 * used at after a fresh answer, when it is resolved next, and the TTL of a
 * DNS response. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <string.h>

#include <vector>

#include "rt_dns.h"

static nrf_tp_addr
v4(const char *s, uint16_t port = 0)
{
	nrf_tp_addr a;

	memset(&a, 0, sizeof(a));
	a.family = 4;
	a.port = port;
	EXPECT_EQ(inet_pton(AF_INET, s, a.ip), 1);
	return a;
}

static nrf_tp_addr
v6(const char *s)
{
	nrf_tp_addr a;

	memset(&a, 0, sizeof(a));
	a.family = 6;
	EXPECT_EQ(inet_pton(AF_INET6, s, a.ip), 1);
	return a;
}

TEST(RtDnsPick, KeepsTheCurrentAddressWhenTheAnswerStillHasIt)
{
	nrf_tp_addr cur = v4("192.0.2.2", 8080);
	nrf_tp_addr ans[] = {v4("192.0.2.1"), v4("192.0.2.3"), v4("192.0.2.2")};

	EXPECT_EQ(rt_dns_pick(&cur, true, ans, 3), 2);
}

TEST(RtDnsPick, TakesTheFirstAddressWhenTheCurrentOneIsGone)
{
	nrf_tp_addr cur = v4("192.0.2.9");
	nrf_tp_addr ans[] = {v4("192.0.2.1"), v4("192.0.2.3")};

	EXPECT_EQ(rt_dns_pick(&cur, true, ans, 2), 0);
}

TEST(RtDnsPick, TakesTheFirstAddressWhenNoneWasKnown)
{
	nrf_tp_addr cur = v4("192.0.2.3");
	nrf_tp_addr ans[] = {v4("192.0.2.1"), v4("192.0.2.3")};

	EXPECT_EQ(rt_dns_pick(&cur, false, ans, 2), 0);
	EXPECT_EQ(rt_dns_pick(nullptr, false, ans, 2), 0);
}

TEST(RtDnsPick, AnEmptyAnswerPicksNothing)
{
	nrf_tp_addr cur = v4("192.0.2.3");

	EXPECT_EQ(rt_dns_pick(&cur, true, nullptr, 0), -1);
}

TEST(RtDnsPick, ComparesFamilyAndAddressNotPort)
{
	nrf_tp_addr a = v4("192.0.2.1", 80), b = v4("192.0.2.1", 8080);
	nrf_tp_addr c = v6("::ffff:192.0.2.1"), d = v6("2001:db8::1"), e = v6("2001:db8::1");

	EXPECT_TRUE(rt_dns_addr_same(&a, &b));
	EXPECT_FALSE(rt_dns_addr_same(&a, &c));
	EXPECT_TRUE(rt_dns_addr_same(&d, &e));
	EXPECT_FALSE(rt_dns_addr_same(&c, &d));
}

TEST(RtDnsInterval, ATtlInsideTheBoundsIsUsedAsIs)
{
	EXPECT_EQ(rt_dns_interval_ms(true, 60, 30000, 1000, 300000), 60000u);
}

TEST(RtDnsInterval, ATtlIsClampedToMinAndMax)
{
	EXPECT_EQ(rt_dns_interval_ms(true, 0, 30000, 1000, 300000), 1000u);
	EXPECT_EQ(rt_dns_interval_ms(true, 86400, 30000, 1000, 300000), 300000u);
	/* a TTL of 2^32-1 s does not overflow */
	EXPECT_EQ(rt_dns_interval_ms(true, 4294967295u, 30000, 1000, 300000), 300000u);
}

TEST(RtDnsInterval, NoTtlUsesRefreshClampedTheSameWay)
{
	EXPECT_EQ(rt_dns_interval_ms(false, 999, 30000, 1000, 300000), 30000u);
	EXPECT_EQ(rt_dns_interval_ms(false, 0, 500, 1000, 300000), 1000u);
	EXPECT_EQ(rt_dns_interval_ms(false, 0, 600000, 1000, 300000), 300000u);
}

TEST(RtDnsInterval, RefreshZeroMeansNoPeriodicResolution)
{
	EXPECT_EQ(rt_dns_interval_ms(true, 60, 0, 1000, 300000), 0u);
	EXPECT_EQ(rt_dns_interval_ms(false, 0, 0, 1000, 300000), 0u);
}

/* A DNS response with the given answer records (name compressed to the
 * question's name). */
struct Rr {
	uint16_t type;
	uint32_t ttl;
	std::vector<uint8_t> rdata;
};

static std::vector<uint8_t>
response(const std::vector<Rr> &rrs)
{
	std::vector<uint8_t> m = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, (uint8_t)rrs.size(), 0, 0, 0, 0};
	const uint8_t q[] = {4, 'p', 'e', 'e', 'r', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};

	m.insert(m.end(), q, q + sizeof(q));
	for (const Rr &r : rrs) {
		const uint8_t h[] = {0xc0, 12, (uint8_t)(r.type >> 8), (uint8_t)r.type, 0, 1,
			(uint8_t)(r.ttl >> 24), (uint8_t)(r.ttl >> 16), (uint8_t)(r.ttl >> 8),
			(uint8_t)r.ttl, (uint8_t)(r.rdata.size() >> 8), (uint8_t)r.rdata.size()};

		m.insert(m.end(), h, h + sizeof(h));
		m.insert(m.end(), r.rdata.begin(), r.rdata.end());
	}
	return m;
}

TEST(RtDnsAnswerTtl, TakesTheSmallestTtlOfTheAddressRecords)
{
	auto m = response({{ns_t_a, 300, {192, 0, 2, 1}}, {ns_t_a, 20, {192, 0, 2, 2}}});
	uint32_t ttl = 0;

	ASSERT_EQ(rt_dns_answer_ttl(m.data(), m.size(), ns_t_a, &ttl), 0);
	EXPECT_EQ(ttl, 20u);
}

TEST(RtDnsAnswerTtl, ACnameInTheChainCounts)
{
	auto m = response({{ns_t_cname, 5, {0xc0, 12}}, {ns_t_a, 300, {192, 0, 2, 1}}});
	uint32_t ttl = 0;

	ASSERT_EQ(rt_dns_answer_ttl(m.data(), m.size(), ns_t_a, &ttl), 0);
	EXPECT_EQ(ttl, 5u);
}

TEST(RtDnsAnswerTtl, RecordsOfAnotherTypeAreIgnored)
{
	auto m = response({{ns_t_txt, 1, {1, 'x'}}, {ns_t_a, 60, {192, 0, 2, 1}}});
	uint32_t ttl = 0;

	ASSERT_EQ(rt_dns_answer_ttl(m.data(), m.size(), ns_t_a, &ttl), 0);
	EXPECT_EQ(ttl, 60u);
	EXPECT_EQ(rt_dns_answer_ttl(m.data(), m.size(), ns_t_aaaa, &ttl), -1)
		<< "no AAAA and no CNAME: no TTL for AAAA";
}

TEST(RtDnsAnswerTtl, NoAnswerOrGarbageHasNoTtl)
{
	auto empty = response({});
	const uint8_t junk[] = {1, 2, 3};
	uint32_t ttl = 7;

	EXPECT_EQ(rt_dns_answer_ttl(empty.data(), empty.size(), ns_t_a, &ttl), -1);
	EXPECT_EQ(rt_dns_answer_ttl(junk, sizeof(junk), ns_t_a, &ttl), -1);
	EXPECT_EQ(rt_dns_answer_ttl(nullptr, 0, ns_t_a, &ttl), -1);
	EXPECT_EQ(ttl, 7u);
}
