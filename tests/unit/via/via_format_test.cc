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
