/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

namespace {

struct Parsed {
	int rc;
	size_t n;
	std::vector<nrf_via_member> m;
	/* The members point into these: kept alive with them. */
	std::shared_ptr<const std::vector<std::string>> lines;
};

Parsed
Parse(const std::vector<std::string> &lines, size_t cap = 64)
{
	Parsed p;

	p.lines = std::make_shared<const std::vector<std::string>>(lines);
	auto sl = Slices(*p.lines);

	p.m.resize(cap);
	p.n = 12345;
	p.rc = nrf_via_parse(sl.data(), sl.size(), p.m.data(), cap, &p.n);
	p.m.resize(std::min(p.n, cap));
	return p;
}

int
ParseRc(const std::string &line)
{
	return Parse({line}).rc;
}

} /* namespace */

TEST(ViaParse, ParsesProtocolNameVersionHostAndPort)
{
	Parsed p = Parse({"HTTP/2.0 nrf-a.example.com:8080"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 1u);
	EXPECT_EQ(Str(p.m[0].proto_name), "HTTP");
	EXPECT_EQ(Str(p.m[0].proto_version), "2.0");
	EXPECT_EQ(Str(p.m[0].received_by), "nrf-a.example.com:8080");
	EXPECT_EQ(Str(p.m[0].host), "nrf-a.example.com");
	EXPECT_EQ(p.m[0].port, 8080);
	EXPECT_EQ(p.m[0].comment.len, 0u);
	EXPECT_EQ(p.m[0].line, 0);
}

TEST(ViaParse, LeavesProtocolNameEmptyWhenAbsent)
{
	Parsed p = Parse({"2.0 nrf-a.example.com:8080"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(p.m[0].proto_name.len, 0u);
	EXPECT_EQ(Str(p.m[0].proto_version), "2.0");
}

TEST(ViaParse, AcceptsHostWithoutPort)
{
	Parsed p = Parse({"1.1 nrf-a.example.com"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(Str(p.m[0].host), "nrf-a.example.com");
	EXPECT_EQ(p.m[0].port, -1);
}

TEST(ViaParse, AcceptsPseudonym)
{
	Parsed p = Parse({"1.0 fred, 1.1 p.example.net"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(Str(p.m[0].received_by), "fred");
	EXPECT_EQ(Str(p.m[0].host), "fred");
	EXPECT_EQ(p.m[0].port, -1);
}

TEST(ViaParse, AcceptsIpv4WithPort)
{
	Parsed p = Parse({"2.0 10.10.2.2:8080"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(Str(p.m[0].host), "10.10.2.2");
	EXPECT_EQ(p.m[0].port, 8080);
}

TEST(ViaParse, StripsBracketsOfIpv6Host)
{
	Parsed p = Parse({"2.0 [2001:db8::1]:8443, 2.0 [::1]"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(Str(p.m[0].received_by), "[2001:db8::1]:8443");
	EXPECT_EQ(Str(p.m[0].host), "2001:db8::1");
	EXPECT_EQ(p.m[0].port, 8443);
	EXPECT_EQ(Str(p.m[1].host), "::1");
	EXPECT_EQ(p.m[1].port, -1);
}

TEST(ViaParse, RejectsBadIpv6Brackets)
{
	EXPECT_EQ(ParseRc("2.0 [2001:db8::1"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 []:80"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 [::1]x"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 [::1]:"), NRF_EPARSE);
}

TEST(ViaParse, RejectsUnbracketedIpv6AsBadPort)
{
	EXPECT_EQ(ParseRc("2.0 2001:db8::1"), NRF_EPARSE);
}

TEST(ViaParse, SplitsMembersOnCommas)
{
	Parsed p = Parse({"1.0 a:1,1.1 b:2 , 2.0 c:3"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 3u);
	EXPECT_EQ(Str(p.m[0].host), "a");
	EXPECT_EQ(Str(p.m[1].host), "b");
	EXPECT_EQ(Str(p.m[2].host), "c");
}

TEST(ViaParse, JoinsSeveralFieldLinesAndKeepsTheLineIndex)
{
	Parsed p = Parse({"1.0 a:1, 1.1 b:2", "", "2.0 c:3"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 3u);
	EXPECT_EQ(p.m[0].line, 0);
	EXPECT_EQ(p.m[1].line, 0);
	EXPECT_EQ(p.m[2].line, 2);
}

TEST(ViaParse, SkipsEmptyListElementsWithoutCountingThem)
{
	Parsed p = Parse({", , 1.0 a ,, 1.1 b ,", ",", " \t,"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(p.n, 2u);
}

TEST(ViaParse, GivesNoMembersForEmptyValues)
{
	EXPECT_EQ(Parse({""}).n, 0u);
	EXPECT_EQ(Parse({",,,"}).n, 0u);
	EXPECT_EQ(Parse({" ", "\t"}).n, 0u);
	EXPECT_EQ(Parse({}).n, 0u);
	EXPECT_EQ(Parse({""}).rc, 0);
}

TEST(ViaParse, AcceptsOptionalWhitespaceAndTabs)
{
	Parsed p = Parse({"\t 1.0\t a:1 \t,\t1.1  b:2\t "});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(Str(p.m[0].received_by), "a:1");
	EXPECT_EQ(Str(p.m[1].received_by), "b:2");
}

TEST(ViaParse, KeepsTheCommentWithItsParentheses)
{
	Parsed p = Parse({"1.1 a:1 (Apache/1.1)"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(Str(p.m[0].comment), "(Apache/1.1)");
}

TEST(ViaParse, KeepsNestedCommentWithCommasInOneMember)
{
	Parsed p = Parse({"1.1 a:1 (x (y, z) w), 2.0 b:2"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(Str(p.m[0].comment), "(x (y, z) w)");
	EXPECT_EQ(Str(p.m[1].host), "b");
}

TEST(ViaParse, HonoursQuotedPairsInComments)
{
	Parsed p = Parse({"1.1 a:1 (x \\) y, \\( z), 2.0 b:2"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(Str(p.m[0].comment), "(x \\) y, \\( z)");
}

TEST(ViaParse, AcceptsCommentRightAfterReceivedBy)
{
	Parsed p = Parse({"1.1 a:1(c), 1.1 b(c)"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 2u);
	EXPECT_EQ(p.m[0].port, 1);
	EXPECT_EQ(Str(p.m[0].comment), "(c)");
	EXPECT_EQ(Str(p.m[1].host), "b");
}

TEST(ViaParse, AcceptsPortsWithLeadingZerosUpTo65535)
{
	Parsed p = Parse({"2.0 a:0008080, 2.0 b:0, 2.0 c:65535, 2.0 d:000000000000001"});

	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 4u);
	EXPECT_EQ(p.m[0].port, 8080);
	EXPECT_EQ(p.m[1].port, 0);
	EXPECT_EQ(p.m[2].port, 65535);
	EXPECT_EQ(p.m[3].port, 1);
}

TEST(ViaParse, RejectsBadPorts)
{
	EXPECT_EQ(ParseRc("2.0 a:"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 a:65536"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 a:99999x"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 a:8o80"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 a:-1"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 a:80:80"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("2.0 :80"), NRF_EPARSE);
}

TEST(ViaParse, RejectsMemberWithoutReceivedBy)
{
	EXPECT_EQ(ParseRc("1.1"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 "), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 , 1.1 a"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 (comment)"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("(comment)"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("HTTP/ a"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("/1.1 a"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1(c) a"), NRF_EPARSE);
}

TEST(ViaParse, RejectsTextAfterReceivedBy)
{
	EXPECT_EQ(ParseRc("1.1 a b"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (c) d"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (c)(d)"), NRF_EPARSE);
}

TEST(ViaParse, RejectsProtocolThatIsNotAToken)
{
	EXPECT_EQ(ParseRc("nrf-a:8080 b"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("[::1] b"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("HTTP/2.0/x b"), NRF_EPARSE);
}

TEST(ViaParse, RejectsUnbalancedComments)
{
	EXPECT_EQ(ParseRc("1.1 a (x"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x (y)"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a x)"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x))"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x\\"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x\\)"), NRF_EPARSE);
}

TEST(ViaParse, RejectsNulAndControlBytesButNotTab)
{
	using namespace std::string_literals;

	EXPECT_EQ(ParseRc("1.1 a\0b"s), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1\0 a"s), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x\0)"s), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a (x\\\0)"s), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a\r\n"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a\x7f"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1 a, \x01"), NRF_EPARSE);
	EXPECT_EQ(ParseRc("1.1\ta\t(\tx\t)"), 0);
	EXPECT_EQ(ParseRc("1.1 a (x\\\ty)"), 0);
}

TEST(ViaParse, AcceptsNonAsciiInReceivedByAndCommentsOnly)
{
	Parsed p = Parse({"1.1 h\xc3\xa9:1 (caf\xc3\xa9 \\\xff)"});

	ASSERT_EQ(p.rc, 0);
	EXPECT_EQ(Str(p.m[0].host), "h\xc3\xa9");
	EXPECT_EQ(ParseRc("1.\xc3\xa9 a"), NRF_EPARSE);
}

TEST(ViaParse, CountsMembersBeyondTheOutputArray)
{
	std::vector<nrf_via_member> out(2);
	auto lines = std::vector<std::string>{"1.0 a:1, 1.1 b:2, 2.0 c:3"};
	auto sl = Slices(lines);
	size_t n = 0;

	out[1].port = 4242;
	ASSERT_EQ(nrf_via_parse(sl.data(), sl.size(), out.data(), 1, &n), 0);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(Str(out[0].host), "a");
	EXPECT_EQ(out[1].port, 4242);
}

TEST(ViaParse, CountsWithoutAnOutputArray)
{
	auto lines = std::vector<std::string>{"1.0 a:1, 1.1 b:2"};
	auto sl = Slices(lines);
	size_t n = 0;

	ASSERT_EQ(nrf_via_parse(sl.data(), sl.size(), nullptr, 0, &n), 0);
	EXPECT_EQ(n, 2u);
}

TEST(ViaParse, ReportsTheMembersParsedBeforeAnError)
{
	Parsed p = Parse({"1.0 a:1, 1.1 b:2", "1.1"});

	EXPECT_EQ(p.rc, NRF_EPARSE);
	EXPECT_EQ(p.n, 2u);
}

TEST(ViaParse, AcceptsExactlyTheByteLimitAndRejectsOneMore)
{
	std::string half = "1.1 " + std::string(NRF_VIA_MAX_BYTES / 2 - 6, 'a') + ":1";

	ASSERT_EQ(half.size() * 2, (size_t)NRF_VIA_MAX_BYTES);
	Parsed ok = Parse({half, half});
	EXPECT_EQ(ok.rc, 0);
	EXPECT_EQ(ok.n, 2u);
	Parsed big = Parse({half, half + " "});
	EXPECT_EQ(big.rc, NRF_ETOOBIG);
	EXPECT_EQ(big.n, 0u);
}

TEST(ViaParse, RejectsMoreLinesThanALineIndexHolds)
{
	std::vector<nrf_slice> lines(UINT16_MAX + 2, nrf_slice{"", 0});
	size_t n = 1;

	EXPECT_EQ(nrf_via_parse(lines.data(), lines.size(), nullptr, 0, &n), NRF_ETOOBIG);
	EXPECT_EQ(nrf_via_parse(lines.data(), lines.size() - 1, nullptr, 0, &n), 0);
	EXPECT_EQ(n, 0u);
}

TEST(ViaParse, RejectsNullArguments)
{
	nrf_slice line{"1.1 a", 5};
	nrf_slice null_line{nullptr, 3};
	nrf_slice empty_null{nullptr, 0};
	size_t n = 7;

	EXPECT_EQ(nrf_via_parse(nullptr, 1, nullptr, 0, &n), NRF_EINVAL);
	EXPECT_EQ(nrf_via_parse(&line, 1, nullptr, 0, nullptr), NRF_EINVAL);
	EXPECT_EQ(nrf_via_parse(&null_line, 1, nullptr, 0, &n), NRF_EINVAL);
	EXPECT_EQ(nrf_via_parse(&empty_null, 1, nullptr, 0, &n), 0);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(nrf_via_parse(nullptr, 0, nullptr, 0, &n), 0);
}

TEST(ViaParse, ParsesAThousandMembers)
{
	std::string v;

	for (int i = 0; i < 1000; i++)
		v += (i ? ", " : "") + std::string("2.0 nrf-") + std::to_string(i) + ".example.com:8080";
	Parsed p = Parse({v}, 1000);
	ASSERT_EQ(p.rc, 0);
	ASSERT_EQ(p.n, 1000u);
	EXPECT_EQ(Str(p.m[999].host), "nrf-999.example.com");
}

TEST(ViaParse, NeverReadsPastTheLine)
{
	/* Each value ends on the last byte before an inaccessible page. */
	const std::vector<std::string> values = {
		"", "1", "1.1 a", "1.1 a:", "1.1 a:80", "1.1 a (x", "1.1 a (x\\",
		"1.1 [::1", "1.1 [::1]:8", "1.1 a,", "HTTP/", "1.1 a (b) ",
	};

	for (const auto &v : values) {
		GuardedBytes g(v);
		nrf_slice s = g.slice();
		size_t n;

		(void)nrf_via_parse(&s, 1, nullptr, 0, &n);
	}
}

TEST(ViaParse, SlicesPointIntoTheCallersLines)
{
	std::string line = "HTTP/2.0 nrf-a:8080 (c)";
	auto sl = std::vector<nrf_slice>{{line.data(), line.size()}};
	nrf_via_member m;
	size_t n;

	ASSERT_EQ(nrf_via_parse(sl.data(), 1, &m, 1, &n), 0);
	EXPECT_EQ(m.proto_name.p, line.data());
	EXPECT_EQ(m.received_by.p, line.data() + 9);
	EXPECT_EQ(m.host.p, line.data() + 9);
	EXPECT_EQ(m.comment.p, line.data() + 20);
}
