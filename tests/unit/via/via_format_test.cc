/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

TEST(ViaMemberFormat, WritesProtocolVersionHostAndPort)
{
	char buf[64];

	ASSERT_EQ(nrf_via_member_format(buf, sizeof(buf), "nrf-a.seg1.example.com", 8080), 31);
	EXPECT_STREQ(buf, "2.0 nrf-a.seg1.example.com:8080");
}

TEST(ViaMemberFormat, PutsIpv6InBrackets)
{
	char buf[64];

	ASSERT_EQ(nrf_via_member_format(buf, sizeof(buf), "2001:db8::1", 8443), 22);
	EXPECT_STREQ(buf, "2.0 [2001:db8::1]:8443");
	/* Already bracketed: not twice. */
	ASSERT_GT(nrf_via_member_format(buf, sizeof(buf), "[2001:db8::1]", 8443), 0);
	EXPECT_STREQ(buf, "2.0 [2001:db8::1]:8443");
}

TEST(ViaMemberFormat, WritesIpv4AsIs)
{
	char buf[32];

	ASSERT_GT(nrf_via_member_format(buf, sizeof(buf), "10.10.1.2", 65535), 0);
	EXPECT_STREQ(buf, "2.0 10.10.1.2:65535");
}

TEST(ViaMemberFormat, NeedsRoomForTheTerminatingNul)
{
	const std::string want = "2.0 nrf-a:1";
	std::vector<char> buf(want.size() + 1, 'x');

	EXPECT_EQ(nrf_via_member_format(buf.data(), want.size(), "nrf-a", 1), NRF_ETOOBIG);
	EXPECT_EQ(buf[0], '\0');
	EXPECT_EQ(nrf_via_member_format(buf.data(), 1, "nrf-a", 1), NRF_ETOOBIG);
	EXPECT_EQ(nrf_via_member_format(nullptr, 0, "nrf-a", 1), NRF_ETOOBIG);
	ASSERT_EQ(nrf_via_member_format(buf.data(), buf.size(), "nrf-a", 1), (int)want.size());
	EXPECT_EQ(std::string(buf.data()), want);
}

TEST(ViaMemberFormat, RejectsEmptyHostPortZeroAndNoBuffer)
{
	char buf[32];

	EXPECT_EQ(nrf_via_member_format(buf, sizeof(buf), "", 1), NRF_EINVAL);
	EXPECT_EQ(nrf_via_member_format(buf, sizeof(buf), nullptr, 1), NRF_EINVAL);
	EXPECT_EQ(nrf_via_member_format(buf, sizeof(buf), "nrf-a", 0), NRF_EINVAL);
	EXPECT_EQ(nrf_via_member_format(nullptr, 8, "nrf-a", 1), NRF_EINVAL);
}

TEST(ViaMemberFormat, RejectsHostsThatWouldBreakTheViaValue)
{
	char buf[64];

	for (const char *h : {"nrf a", "nrf,a", "nrf(a)", "a\r\nX-Evil: 1", "nrf-a:8080", "h\xc3\xa9"})
		EXPECT_EQ(nrf_via_member_format(buf, sizeof(buf), h, 1), NRF_EINVAL) << h;
}

TEST(ViaMemberFormat, WritesWhatParseAndScanRecognise)
{
	const char *hosts[] = {"nrf-a.seg1.example.com", "NRF-B.example.com.", "10.0.0.1", "2001:db8::7"};

	for (const char *h : hosts) {
		char buf[96];
		int n = nrf_via_member_format(buf, sizeof(buf), h, 8080);
		ASSERT_GT(n, 0) << h;

		std::vector<std::string> lines = {std::string("1.1 x, ") + buf};
		auto sl = Slices(lines);
		nrf_via_member m[2];
		size_t count = 0;
		ASSERT_EQ(nrf_via_parse(sl.data(), 1, m, 2, &count), 0) << buf;
		ASSERT_EQ(count, 2u);
		EXPECT_EQ(Str(m[1].proto_version), "2.0");
		EXPECT_EQ(m[1].port, 8080);

		DbPtr db = MakeDb({Self(h, 8080)});
		ScratchPtr s = MakeScratch(db.get());
		EXPECT_EQ(DoScanEach(db.get(), s.get(), lines).hits, (std::vector<Hit>{{0, 1}})) << buf;
	}
}

/* The identity of a parsed member as the matching rule compares it (the
 * loop table's paths, lib/rt/rt_loops.c). */
static std::string
Identity(const std::string &line)
{
	std::vector<std::string> lines = {line};
	auto sl = Slices(lines);
	nrf_via_member m[1];
	size_t count = 0;
	char buf[300];

	EXPECT_EQ(nrf_via_parse(sl.data(), 1, m, 1, &count), 0) << line;
	EXPECT_EQ(count, 1u);
	int n = nrf_via_member_identity(&m[0], buf, sizeof(buf));
	EXPECT_GE(n, 0) << line;
	return n >= 0 ? std::string(buf, (size_t)n) : "";
}

TEST(ViaMemberIdentity, NormalisedAsIdentitiesCompare)
{
	EXPECT_EQ(Identity("2.0 NRF-A.Seg1.Example.COM.:08080"), "nrf-a.seg1.example.com:8080");
	EXPECT_EQ(Identity("HTTP/2.0 nrf-a.seg1.example.com:8080 (comment)"),
		"nrf-a.seg1.example.com:8080");
	EXPECT_EQ(Identity("2.0 [2001:DB8::1]:0443"), "[2001:db8::1]:443");
	EXPECT_EQ(Identity("2.0 10.0.0.1:80"), "10.0.0.1:80");
	/* no port: the host alone; a pseudonym nrfwd would not accept as an
	 * identity: as received, in lower case */
	EXPECT_EQ(Identity("1.1 Proxy-One"), "proxy-one");
	EXPECT_EQ(Identity("1.1 we_ird:1"), "we_ird:1");
}

TEST(ViaMemberIdentity, TooSmallABuffer)
{
	std::vector<std::string> lines = {"2.0 nrf-a.example.com:8080"};
	auto sl = Slices(lines);
	nrf_via_member m[1];
	size_t count = 0;
	char buf[8];

	ASSERT_EQ(nrf_via_parse(sl.data(), 1, m, 1, &count), 0);
	EXPECT_EQ(nrf_via_member_identity(&m[0], buf, sizeof(buf)), NRF_ETOOBIG);
	EXPECT_STREQ(buf, "");
	EXPECT_EQ(nrf_via_member_identity(nullptr, buf, sizeof(buf)), NRF_EINVAL);
}
