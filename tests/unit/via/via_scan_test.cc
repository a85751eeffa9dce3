/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

namespace {

/*
 * One database for most cases:
 *   0 self  nrf-a.seg1.example.com:8080
 *   1 self  10.10.1.2:8080            (alias)
 *   2 peer0 nrf-e.seg2.example.com:8080
 *   3 peer0 10.10.2.2:8080
 *   4 peer1 [2001:db8::2]:8443
 *   5 peer1023 nrf-z.seg2.example.com:9090
 *   6 peer2 nrf-a.seg1.example.com:9090  (same host as self, other port)
 */
class ViaScan : public ::testing::Test {
protected:
	void SetUp() override
	{
		db_ = MakeDb({Self("nrf-a.seg1.example.com", 8080), Self("10.10.1.2", 8080),
			Peer("nrf-e.seg2.example.com", 8080, 0), Peer("10.10.2.2", 8080, 0),
			Peer("2001:db8::2", 8443, 1), Peer("nrf-z.seg2.example.com", 9090, 1023),
			Peer("nrf-a.seg1.example.com", 9090, 2)});
		s_ = MakeScratch(db_.get());
	}

	Scan scan(const std::vector<std::string> &lines)
	{
		Scan r = DoScan(db_.get(), s_.get(), lines);
		Each e = DoScanEach(db_.get(), s_.get(), lines);

		/* Both entry points agree on every input. */
		EXPECT_EQ(r.rc, e.rc);
		EXPECT_TRUE(SameResult(r.res, e.res));
		EXPECT_EQ(e.hits.size(), r.rc == 0 ? r.res.hits : e.hits.size());
		return r;
	}

	std::vector<Hit> hits(const std::vector<std::string> &lines)
	{
		Each e = DoScanEach(db_.get(), s_.get(), lines);

		EXPECT_EQ(e.rc, 0);
		return e.hits;
	}

	bool self(const std::string &line)
	{
		Scan r = scan({line});

		EXPECT_EQ(r.rc, 0) << line;
		return r.res.self;
	}

	DbPtr db_;
	ScratchPtr s_;
};

} /* namespace */

TEST_F(ViaScan, FindsOwnIdentity)
{
	Scan r = scan({"2.0 nrf-a.seg1.example.com:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 1u);
	EXPECT_EQ(r.res.hits, 1u);
	EXPECT_TRUE(r.res.self);
	EXPECT_TRUE(NoPeers(r.res));
}

TEST_F(ViaScan, SetsThePeerBitOfAPeerAndNotSelf)
{
	Scan r = scan({"2.0 nrf-e.seg2.example.com:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_FALSE(r.res.self);
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 0));
	EXPECT_FALSE(nrf_via_result_has_peer(&r.res, 1));
	EXPECT_EQ(r.res.peers[0], 1u);
}

TEST_F(ViaScan, SetsPeerBit1023)
{
	Scan r = scan({"2.0 nrf-z.seg2.example.com:9090"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 1023));
	EXPECT_EQ(r.res.peers[15], UINT64_C(1) << 63);
	EXPECT_FALSE(nrf_via_result_has_peer(&r.res, 1024));
}

TEST_F(ViaScan, TellsIdentitiesOfTheSameHostByPort)
{
	EXPECT_EQ(hits({"2.0 nrf-a.seg1.example.com:9090"}), (std::vector<Hit>{{6, 0}}));
	EXPECT_EQ(hits({"2.0 nrf-a.seg1.example.com:8080"}), (std::vector<Hit>{{0, 0}}));
}

TEST_F(ViaScan, FindsSelfAndPeersTogether)
{
	Scan r = scan({"2.0 10.10.2.2:8080, 2.0 [2001:db8::2]:8443, 2.0 10.10.1.2:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 3u);
	EXPECT_EQ(r.res.hits, 3u);
	EXPECT_TRUE(r.res.self);
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 0));
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 1));
}

TEST_F(ViaScan, MatchesWithAndWithoutProtocolName)
{
	EXPECT_TRUE(self("HTTP/2.0 nrf-a.seg1.example.com:8080"));
	EXPECT_TRUE(self("2.0 nrf-a.seg1.example.com:8080"));
	EXPECT_TRUE(self("1.1 nrf-a.seg1.example.com:8080"));
}

TEST_F(ViaScan, IgnoresTheCaseOfTheHost)
{
	EXPECT_TRUE(self("2.0 NRF-A.Seg1.EXAMPLE.com:8080"));
	Scan r = scan({"2.0 [2001:DB8::2]:8443"});
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 1));
}

TEST_F(ViaScan, IgnoresOneTrailingDot)
{
	EXPECT_TRUE(self("2.0 nrf-a.seg1.example.com.:8080"));
	EXPECT_TRUE(self("2.0 10.10.1.2.:8080"));
	EXPECT_FALSE(self("2.0 nrf-a.seg1.example.com..:8080"));
}

TEST_F(ViaScan, ComparesPortsNumerically)
{
	EXPECT_TRUE(self("2.0 nrf-a.seg1.example.com:08080"));
	EXPECT_TRUE(self("2.0 nrf-a.seg1.example.com:000000008080"));
	EXPECT_FALSE(self("2.0 nrf-a.seg1.example.com:808"));
	EXPECT_FALSE(self("2.0 nrf-a.seg1.example.com:80800"));
	EXPECT_FALSE(self("2.0 nrf-a.seg1.example.com:80801"));
	EXPECT_FALSE(self("2.0 nrf-a.seg1.example.com:0"));
}

TEST_F(ViaScan, MatchesWholeMembersOnly)
{
	const char *misses[] = {
		"2.0 xnrf-a.seg1.example.com:8080",
		"2.0 x.nrf-a.seg1.example.com:8080",
		"2.0 nrf-a.seg1.example.comx:8080",
		"2.0 nrf-a.seg1.example.com.evil:8080",
		"2.0 nrf-a.seg1.example.co:8080",
		"2.0 nrf-a.seg1.example.com",
		"2.0 nrf-a.seg1.example.com:",
		"2.0 nrf-a.seg1.example.com:8080x",
		"2.0 nrf-a.seg1.example.com:8080/x",
		"2.0 nrf-a.seg1.example.com:8080:8080",
		"2.0 nrf-a.seg1.example.com8080",
		"2.0 nrf-a.seg1.example.com 8080",
		"2.0 [nrf-a.seg1.example.com]:8080",
		"2.0 110.10.1.2:8080",
		"2.0 10.10.1.20:8080",
		"2.0 10.10.1.2:80",
		"2.0 \\nrf-a.seg1.example.com:8080",
	};

	for (const char *m : misses)
		EXPECT_FALSE(self(m)) << m;
}

TEST_F(ViaScan, ANearMissDoesNotHideALaterMatch)
{
	Scan r = scan({"2.0 nrf-a.seg1.example.com:80801, 2.0 xnrf-a.seg1.example.com:8080, "
		"2.0 nrf-a.seg1.example.com:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_TRUE(r.res.self);
	EXPECT_EQ(r.res.hits, 1u);
	EXPECT_EQ(hits({"2.0 nrf-a.seg1.example.com:80801, 2.0 nrf-a.seg1.example.com:8080"}),
		(std::vector<Hit>{{0, 1}}));
}

TEST_F(ViaScan, FindsIdentityAtStartMiddleAndEndOfALine)
{
	EXPECT_EQ(hits({"2.0 nrf-a.seg1.example.com:8080, 1.1 x, 1.1 y"}), (std::vector<Hit>{{0, 0}}));
	EXPECT_EQ(hits({"1.1 x, 2.0 nrf-a.seg1.example.com:8080, 1.1 y"}), (std::vector<Hit>{{0, 1}}));
	EXPECT_EQ(hits({"1.1 x, 1.1 y, 2.0 nrf-a.seg1.example.com:8080"}), (std::vector<Hit>{{0, 2}}));
	/* Separators right against the identity. */
	EXPECT_EQ(hits({"1.1 x,2.0 nrf-a.seg1.example.com:8080,1.1 y"}), (std::vector<Hit>{{0, 1}}));
}

TEST_F(ViaScan, FindsIdentitiesAcrossSeveralLines)
{
	Scan r = scan({"1.1 x", "2.0 nrf-e.seg2.example.com:8080", "", "1.1 y, 2.0 nrf-a.seg1.example.com:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 4u);
	EXPECT_TRUE(r.res.self);
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 0));
	EXPECT_EQ(hits({"1.1 x", "2.0 nrf-e.seg2.example.com:8080", "", "1.1 y, 2.0 nrf-a.seg1.example.com:8080"}),
		(std::vector<Hit>{{2, 1}, {0, 3}}));
}

TEST_F(ViaScan, CountsEveryOccurrenceAsAHit)
{
	Scan r = scan({"2.0 nrf-a.seg1.example.com:8080, 2.0 NRF-A.seg1.example.com:08080",
		"2.0 nrf-a.seg1.example.com.:8080"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.hits, 3u);
	EXPECT_EQ(r.res.members, 3u);
}

TEST_F(ViaScan, IgnoresIdentityInsideComment)
{
	Scan r = scan({"1.1 x (nrf-a.seg1.example.com:8080)"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_FALSE(r.res.self);
	EXPECT_EQ(r.res.hits, 0u);
	EXPECT_EQ(r.res.members, 1u);
}

TEST_F(ViaScan, IgnoresIdentityInsideNestedCommentWithCommas)
{
	Scan r = scan({"1.1 x (a, (b, 2.0 nrf-a.seg1.example.com:8080), c, 10.10.2.2:8080), 1.1 y"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 2u);
	EXPECT_EQ(r.res.hits, 0u);
}

TEST_F(ViaScan, HonoursQuotedPairsInComments)
{
	/* "\)" does not close the comment, so the identity stays inside it. */
	Scan r = scan({"1.1 x (a \\) nrf-a.seg1.example.com:8080 \\( b), 1.1 y"});

	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 2u);
	EXPECT_FALSE(r.res.self);
}

TEST_F(ViaScan, FindsIdentityNextToAComment)
{
	EXPECT_EQ(hits({"2.0 nrf-a.seg1.example.com:8080(c), 1.1 y"}), (std::vector<Hit>{{0, 0}}));
	EXPECT_EQ(hits({"1.1 x (c),2.0 nrf-a.seg1.example.com:8080 (nrf-e.seg2.example.com:8080)"}),
		(std::vector<Hit>{{0, 1}}));
	EXPECT_EQ(hits({"1.1 x (c)", "2.0 nrf-a.seg1.example.com:8080"}), (std::vector<Hit>{{0, 1}}));
}

TEST_F(ViaScan, MatchesIpv6OnlyInTheConfiguredSpellingAndInBrackets)
{
	EXPECT_EQ(hits({"2.0 [2001:db8::2]:8443"}), (std::vector<Hit>{{4, 0}}));
	EXPECT_EQ(hits({"2.0 [2001:db8::2]:08443"}), (std::vector<Hit>{{4, 0}}));
	EXPECT_EQ(hits({"2.0 [2001:DB8::2]:8443"}), (std::vector<Hit>{{4, 0}}));
	EXPECT_TRUE(hits({"2.0 [2001:db8::2].:8443"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:db8:0:0::2]:8443"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:0db8::2]:8443"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:db8::2.]:8443"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:db8::2]"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:db8::2]:443"}).empty());
	EXPECT_TRUE(hits({"2.0 [2001:db8::22]:8443"}).empty());
}

TEST_F(ViaScan, CountsMembersAsTheParserDoes)
{
	const std::vector<std::vector<std::string>> cases = {
		{""}, {","}, {" , ,\t, "}, {"1.1 a"}, {"1.1 a,"}, {",1.1 a"}, {"1.1 a,,1.1 b"},
		{"1.1 a (x, y), 1.1 b (z)"}, {"1.1 a", "", "1.1 b, 1.1 c"},
		{"1.1\ta\t,\t1.1 b"}, {"1.1 a (\\,), 1.1 b"},
	};

	for (const auto &c : cases) {
		auto sl = Slices(c);
		size_t n = 99;
		Scan r = scan(c);

		ASSERT_EQ(nrf_via_parse(sl.data(), sl.size(), nullptr, 0, &n), 0) << c[0];
		EXPECT_EQ(r.rc, 0) << c[0];
		EXPECT_EQ(r.res.members, n) << c[0];
	}
}

TEST_F(ViaScan, GivesNoMembersForEmptyValues)
{
	for (const auto &v : std::vector<std::vector<std::string>>{{}, {""}, {",,,"}, {" \t ", ","}}) {
		Scan r = scan(v);

		EXPECT_EQ(r.rc, 0);
		EXPECT_EQ(r.res.members, 0u);
		EXPECT_EQ(r.res.hits, 0u);
	}
}

TEST_F(ViaScan, CountsAThousandMembersAndFindsMember999)
{
	std::string v;

	for (int i = 0; i < 999; i++)
		v += "2.0 nrf-" + std::to_string(i) + ".seg9.example.org:8080, ";
	v += "2.0 nrf-a.seg1.example.com:8080";
	Scan r = scan({v});
	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 1000u);
	EXPECT_TRUE(r.res.self);
	EXPECT_EQ(hits({v}), (std::vector<Hit>{{0, 999}}));
}

TEST_F(ViaScan, RejectsMoreThanTheByteLimit)
{
	std::string half = "1.1 " + std::string(NRF_VIA_MAX_BYTES / 2 - 6, 'a') + ":1";
	std::string self = "2.0 nrf-a.seg1.example.com:8080";

	Scan ok = scan({half.substr(self.size() + 2), self + ", ", half});
	EXPECT_EQ(ok.rc, 0);
	EXPECT_TRUE(ok.res.self);
	Scan big = scan({self, half, half});
	EXPECT_EQ(big.rc, NRF_ETOOBIG);
	EXPECT_EQ(big.res.members, 0u);
	EXPECT_FALSE(big.res.self);
}

TEST_F(ViaScan, RejectsUnbalancedComments)
{
	for (const char *v : {"1.1 a (x", "1.1 a x)", "1.1 a (x))", "1.1 a (x (y)", "1.1 a (x\\"})
		EXPECT_EQ(scan({v}).rc, NRF_EPARSE) << v;
}

TEST_F(ViaScan, RejectsNulAndControlBytes)
{
	using namespace std::string_literals;

	for (const std::string &v : {"2.0 nrf-a.seg1.example.com:8080\0"s, "1.1 a\r\n"s, "1.1 a\x7f"s,
			"1.1 a (b\x01)"s, "\x1b"s, "1.1 a (\\\0)"s}) {
		Scan r = scan({v});

		EXPECT_EQ(r.rc, NRF_EPARSE);
	}
}

TEST_F(ViaScan, AcceptsNonAsciiButNeverMatchesIt)
{
	Scan r = scan({"2.0 nrf-a.seg1.example.com\xc3\xa9:8080 (\xff), 2.0 \xe9nrf-a.seg1.example.com:8080"});

	EXPECT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 2u);
	EXPECT_FALSE(r.res.self);
	/* A byte that folds to 'a' in Latin-1 is not an ASCII letter. */
	EXPECT_FALSE(self("2.0 nrf-\xc1.seg1.example.com:8080"));
}

TEST_F(ViaScan, AcceptsTabsAsWhitespace)
{
	EXPECT_TRUE(self("2.0\tnrf-a.seg1.example.com:8080\t"));
	EXPECT_EQ(hits({"1.1 x\t,\t2.0\tnrf-a.seg1.example.com:8080"}), (std::vector<Hit>{{0, 1}}));
}

TEST_F(ViaScan, KeepsWhatWasFoundBeforeAnError)
{
	Scan r = scan({"2.0 nrf-a.seg1.example.com:8080, 1.1 b", "1.1 x, 1.1 y (unclosed"});

	EXPECT_EQ(r.rc, NRF_EPARSE);
	EXPECT_TRUE(r.res.self);
	EXPECT_EQ(r.res.members, 3u);
}

TEST_F(ViaScan, ZeroesTheResultFirst)
{
	Scan r = scan({});

	EXPECT_EQ(r.rc, 0);
	EXPECT_EQ(r.res.members, 0u);
	EXPECT_EQ(r.res.hits, 0u);
	EXPECT_FALSE(r.res.self);
	EXPECT_TRUE(NoPeers(r.res));
}

TEST_F(ViaScan, RejectsNullArguments)
{
	nrf_via_result res;
	nrf_slice line{"1.1 a", 5}, null_line{nullptr, 2}, empty_null{nullptr, 0};

	memset(&res, 0xff, sizeof(res));
	EXPECT_EQ(nrf_via_scan(nullptr, s_.get(), &line, 1, &res), NRF_EINVAL);
	EXPECT_EQ(res.members, 0u);
	EXPECT_TRUE(NoPeers(res));
	EXPECT_EQ(nrf_via_scan(db_.get(), nullptr, &line, 1, &res), NRF_EINVAL);
	EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), &line, 1, nullptr), NRF_EINVAL);
	EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), nullptr, 1, &res), NRF_EINVAL);
	EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), &null_line, 1, &res), NRF_EINVAL);
	EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), &empty_null, 1, &res), 0);
	EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), nullptr, 0, &res), 0);
	EXPECT_EQ(nrf_via_scan_each(db_.get(), s_.get(), &line, 1, nullptr, nullptr, nullptr), NRF_EINVAL);
}

TEST_F(ViaScan, NeverReadsOutsideTheLine)
{
	/*
	 * Every length around the 64-byte blocks of the fast path, with and
	 * without the identity right at the end, against a page that faults
	 * after the line and one that faults before it. (Hyperscan itself
	 * reads past the end on AVX-512 VBMI machines; the scan keeps it from
	 * faulting, see VIA_HS_OVERREAD.)
	 */
	for (Guard where : {Guard::After, Guard::Before}) {
		for (size_t len = 0; len < 200; len++) {
			for (const std::string tail : {"", "2.0 nrf-a.seg1.example.com:8080", "1.1 x (c)"}) {
				std::string v;

				while (v.size() + tail.size() + 8 < len)
					v += "1.1 y, ";
				v += tail;
				v.resize(std::max(v.size(), len), ' ');
				GuardedBytes g(v, where);
				nrf_slice s = g.slice();
				nrf_via_result res;

				EXPECT_EQ(nrf_via_scan(db_.get(), s_.get(), &s, 1, &res), 0) << v;
				EXPECT_EQ(res.self, tail.rfind("2.0", 0) == 0) << v;
				EXPECT_EQ(nrf_via_scan_each(db_.get(), s_.get(), &s, 1, &res, nullptr, nullptr), 0);
				EXPECT_EQ(res.self, tail.rfind("2.0", 0) == 0) << v;
			}
		}
	}
}

TEST_F(ViaScan, FastAndExactPassesCountAlike)
{
	/* Lines across block edges, once plain (fast pass) and once with a
	 * tab (exact pass): the counts must agree with the parser's. */
	for (size_t pad = 0; pad < 140; pad += 3) {
		std::string plain = std::string(pad, ' ') + "1.1 a, ,  1.1 b" + std::string(pad % 7, ' ') +
			",,1.1 c ," + std::string(pad % 64, ' ') + "1.1 d";
		std::string tabbed = plain + "\t";
		Scan a = scan({plain}), b = scan({tabbed});
		std::vector<std::string> lines = {plain};
		auto sl = Slices(lines);
		size_t n = 0;

		ASSERT_EQ(nrf_via_parse(sl.data(), 1, nullptr, 0, &n), 0);
		EXPECT_EQ(a.res.members, 4u) << pad;
		EXPECT_EQ(b.res.members, 4u) << pad;
		EXPECT_EQ(n, 4u);
	}
}

/*
 * The fast byte pass (bit masks, 64 bytes to a word; AVX2 and SSE2
 * variants) against a plain count, on lines of every length up to 300 made
 * of spaces, commas and text in random runs: runs of spaces and commas
 * across 16-, 32- and 64-byte edges, leading and trailing commas, lines of
 * only separators. The same line with a tab appended takes the exact pass.
 */
namespace {

uint32_t
PlainCount(const std::string &v)
{
	uint32_t n = 0;
	bool content = false;

	for (char c : v) {
		if (c == ',') {
			n += content;
			content = false;
		} else if (c != ' ' && c != '\t') {
			content = true;
		}
	}
	return n + content;
}

struct FastPath {
	explicit FastPath(bool avx2)
	{
#if defined(__x86_64__) && defined(__GNUC__)
		saved = nrf_via_fast_avx2;
		nrf_via_fast_avx2 = avx2 && saved;
#else
		(void)avx2;
#endif
	}
	~FastPath()
	{
#if defined(__x86_64__) && defined(__GNUC__)
		nrf_via_fast_avx2 = saved;
#endif
	}
	bool saved = false;
};

} /* namespace */

TEST_F(ViaScan, FastPassCountsLikeAPlainCountOnEveryShape)
{
	uint32_t seed = 12345;
	auto rnd = [&seed](uint32_t n) {
		seed = seed * 1103515245u + 12345u;
		return (seed >> 16) % n;
	};

	for (bool avx2 : {true, false}) {
		FastPath fp(avx2);

		for (size_t len = 0; len <= 300; len++) {
			for (int rep = 0; rep < 12; rep++) {
				std::string v;

				while (v.size() < len) {
					static const char *const runs[] = {" ", ",", "a", "1.1 b:1", ", ", " , "};
					size_t k = rnd(6), times = 1 + rnd(rep < 6 ? 3 : 40);

					for (size_t t = 0; t < times && v.size() < len; t++)
						v += runs[k];
				}
				v.resize(len);
				Scan a = scan({v}), b = scan({v + "\t"});

				ASSERT_EQ(a.rc, 0) << v;
				ASSERT_EQ(b.rc, 0) << v;
				EXPECT_EQ(a.res.members, PlainCount(v)) << avx2 << " '" << v << "'";
				EXPECT_EQ(b.res.members, PlainCount(v)) << avx2 << " '" << v << "'";
			}
		}
	}
}

TEST_F(ViaScan, FastPassSeesAnOddByteAtEveryPosition)
{
	/* A control byte, DEL or an unbalanced parenthesis anywhere is an
	 * error; a byte >= 0x80 is accepted; wherever they are, in a full word,
	 * in the tail, in the overlap of the last two reads. */
	for (bool avx2 : {true, false}) {
		FastPath fp(avx2);

		for (size_t len : {16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 127, 128, 129, 200}) {
			std::string base;

			while (base.size() < len)
				base += "1.1 x:1, ";
			base.resize(len);
			for (size_t at = 0; at < len; at++) {
				for (int odd : {0x01, 0x7f, 0x28, 0x29, 0x80, 0xff}) {
					std::string v = base;

					v[at] = (char)odd;
					Scan r = scan({v});

					if (odd >= 0x80) {
						EXPECT_EQ(r.rc, 0) << avx2 << " " << len << " " << at;
						EXPECT_EQ(r.res.members, PlainCount(v)) << len << " " << at;
					} else {
						EXPECT_EQ(r.rc, NRF_EPARSE) << avx2 << " " << len << " " << at << " " << (int)odd;
					}
				}
			}
		}
	}
}

TEST(ViaScanEach, ReportsMatchesInMemberOrder)
{
	DbPtr db = MakeDb({Self("nrf-a", 1), Peer("nrf-b", 2, 5), Peer("nrf-c", 3, 6)});
	ScratchPtr s = MakeScratch(db.get());

	Each e = DoScanEach(db.get(), s.get(),
		{"2.0 nrf-c:3, 1.1 x, 2.0 nrf-a:1", "2.0 nrf-b:2 (nrf-a:1), 2.0 nrf-a:1"});
	ASSERT_EQ(e.rc, 0);
	EXPECT_EQ(e.hits, (std::vector<Hit>{{2, 0}, {0, 2}, {1, 3}, {0, 4}}));
	EXPECT_EQ(e.res.hits, 4u);
	EXPECT_EQ(e.res.members, 5u);
}

namespace {

int
StopAfterFirst(void *ctx, uint32_t id, uint32_t member)
{
	static_cast<std::vector<Hit> *>(ctx)->emplace_back(id, member);
	return 1;
}

} /* namespace */

TEST(ViaScanEach, StopsReportingWhenTheCallbackSaysSoButFinishesTheResult)
{
	DbPtr db = MakeDb({Self("nrf-a", 1), Peer("nrf-b", 2, 5)});
	ScratchPtr s = MakeScratch(db.get());
	std::vector<std::string> lines = {"2.0 nrf-a:1, 2.0 nrf-b:2, 1.1 z"};
	auto sl = Slices(lines);
	std::vector<Hit> got;
	nrf_via_result res;

	ASSERT_EQ(nrf_via_scan_each(db.get(), s.get(), sl.data(), 1, &res, StopAfterFirst, &got), 0);
	EXPECT_EQ(got, (std::vector<Hit>{{0, 0}}));
	EXPECT_EQ(res.members, 3u);
	EXPECT_EQ(res.hits, 2u);
	EXPECT_TRUE(res.self);
	EXPECT_TRUE(nrf_via_result_has_peer(&res, 5));
}

TEST(ViaScanEach, WorksWithoutACallback)
{
	DbPtr db = MakeDb({Self("nrf-a", 1)});
	ScratchPtr s = MakeScratch(db.get());
	std::vector<std::string> lines = {"2.0 nrf-a:1"};
	auto sl = Slices(lines);
	nrf_via_result res;

	ASSERT_EQ(nrf_via_scan_each(db.get(), s.get(), sl.data(), 1, &res, nullptr, nullptr), 0);
	EXPECT_TRUE(res.self);
}

TEST(ViaScanPrefix, TellsApartIdentitiesThatArePrefixesOfOthers)
{
	DbPtr db = MakeDb({Self("nrf", 1), Peer("nrf-a", 1, 1), Peer("nrf-a.example.com", 1, 2),
		Peer("10.0.0.1", 1, 3), Peer("10.0.0.12", 1, 4), Peer("10.0.0.123", 1, 5), Peer("n", 1, 6)});
	ScratchPtr s = MakeScratch(db.get());

	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 nrf:1"}).hits, (std::vector<Hit>{{0, 0}}));
	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 nrf-a:1"}).hits, (std::vector<Hit>{{1, 0}}));
	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 nrf-a.example.com:1"}).hits, (std::vector<Hit>{{2, 0}}));
	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 10.0.0.12:1"}).hits, (std::vector<Hit>{{4, 0}}));
	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 10.0.0.123:01"}).hits, (std::vector<Hit>{{5, 0}}));
	EXPECT_EQ(DoScanEach(db.get(), s.get(), {"2.0 n:1, 2.0 nn:1, 2.0 N.:1"}).hits,
		(std::vector<Hit>{{6, 0}, {6, 2}}));
	EXPECT_TRUE(DoScanEach(db.get(), s.get(), {"2.0 10.0.0.1234:1"}).hits.empty());
}

TEST(ViaScanPrefix, FlatForManyIdentitiesWithACommonTail)
{
	/* Hosts that differ only in the middle, the shape that defeats
	 * Hyperscan's literal hashing when whole hosts are the literals. */
	std::vector<std::string> hosts;
	std::vector<nrf_via_identity> ids;

	for (int i = 0; i < 1024; i++)
		hosts.push_back("nrf" + std::to_string(i) + ".5gc.mnc001.mcc001.3gppnetwork.org");
	for (int i = 0; i < 1024; i++)
		ids.push_back(Peer(hosts[i].c_str(), 8080, (uint16_t)i));
	DbPtr db = MakeDb(ids);
	ScratchPtr s = MakeScratch(db.get());

	Each e = DoScanEach(db.get(), s.get(),
		{"2.0 nrf1.5gc.mnc001.mcc001.3gppnetwork.org:8080, 2.0 nrf10.5gc.mnc001.mcc001.3gppnetwork.org:8080, "
		 "2.0 nrf1000.5gc.mnc001.mcc001.3gppnetwork.org:8080, 2.0 nrf1024.5gc.mnc001.mcc001.3gppnetwork.org:8080"});
	ASSERT_EQ(e.rc, 0);
	EXPECT_EQ(e.hits, (std::vector<Hit>{{1, 0}, {10, 1}, {1000, 2}}));
}

/*
 * Hosts whose unique prefix ends in a run of equal bytes: the literal is
 * moved off the run (decision 0008), longer when the host goes on, shorter
 * when the host ends in the run. Matching must not notice.
 */
TEST(ViaScanLiteral, RunsOfEqualBytesAtTheEndOfALiteral)
{
	DbPtr db = MakeDb({Self("nrf-000", 1), Peer("nrf-001", 1, 1), Peer("abcddd", 1, 2),
		Peer("aaaaaa", 1, 3), Peer("nrf-0000.seg1.example.com", 8080, 4),
		Peer("nrf-0001.seg1.example.com", 8080, 5), Peer("x1111", 1, 6),
		Peer("abcdddxddd", 1, 7), Peer("nrf-1000", 8080, 8)});
	ScratchPtr s = MakeScratch(db.get());
	auto hits = [&](const char *v) { return DoScanEach(db.get(), s.get(), {v}).hits; };
	using H = std::vector<Hit>;

	EXPECT_EQ(hits("2.0 nrf-000:1"), (H{{0, 0}}));
	EXPECT_EQ(hits("2.0 NRF-000.:01"), (H{{0, 0}}));
	EXPECT_EQ(hits("2.0 nrf-001:1"), (H{{1, 0}}));
	EXPECT_TRUE(hits("2.0 nrf-00:1, 2.0 nrf-0000:1, 2.0 nrf-000:2, 2.0 nrf-00.:1").empty());
	EXPECT_EQ(hits("2.0 abcddd:1, 2.0 ABCDDD.:1"), (H{{2, 0}, {2, 1}}));
	EXPECT_TRUE(hits("2.0 abcdd:1, 2.0 abcdddd:1, 2.0 abcddx:1, 2.0 xabcddd:1").empty());
	EXPECT_EQ(hits("2.0 aaaaaa:1"), (H{{3, 0}}));
	EXPECT_TRUE(hits("2.0 aaaaa:1, 2.0 aaaaaaa:1").empty());
	EXPECT_EQ(hits("2.0 nrf-0000.seg1.example.com:8080, 2.0 nrf-0001.seg1.example.com:8080"),
		(H{{4, 0}, {5, 1}}));
	EXPECT_TRUE(hits("2.0 nrf-0000.seg1.example.co:8080, 2.0 nrf-00000.seg1.example.com:8080").empty());
	EXPECT_EQ(hits("2.0 x1111:1, 2.0 x111:1, 2.0 x11111:1"), (H{{6, 0}}));
	EXPECT_EQ(hits("2.0 abcdddxddd:1, 2.0 abcdddxdd:1"), (H{{7, 0}}));
	EXPECT_EQ(hits("2.0 nrf-1000:8080, 2.0 nrf-10000:8080"), (H{{8, 0}}));

	/* What Hyperscan would split (more than 5 bytes, a run of 3 or more
	 * that is not all of it, 5 bytes left with the run cut to 2) never
	 * reaches it. */
	for (size_t i = 0; i < nrf_via_db_count(db.get()); i++) {
		const via_key &k = db->key[i];
		size_t n = k.lit_len, run = 1;

		ASSERT_GT(n, 0u);
		ASSERT_LE(n, k.len);
		while (run < n && k.s[n - 1 - run] == k.s[n - 1])
			run++;
		EXPECT_FALSE(n > 5 && run >= 3 && run < n && n - (run - 2) >= 5)
			<< k.s << " literal of " << n;
	}
}

TEST(ViaScanGuard, NeverReadsPastTheLineWhateverTheDatabaseSize)
{
	/* Hyperscan picks different literal matchers by literal count. */
	for (size_t n : {2, 9, 17, 33, 64, 200, 1024}) {
		std::vector<std::string> hosts;
		std::vector<nrf_via_identity> ids;

		for (size_t i = 0; i < n; i++)
			hosts.push_back("nrf-" + std::to_string(i) + ".seg1.example.com");
		for (size_t i = 0; i < n; i++)
			ids.push_back(Peer(hosts[i].c_str(), 8080, (uint16_t)i));
		DbPtr db = MakeDb(ids);
		ScratchPtr s = MakeScratch(db.get());

		for (size_t len = 1; len < 150; len++) {
			std::string v = "2.0 " + hosts[n - 1] + ":8080";

			while (v.size() < len)
				v = "1.1 nrf-" + std::to_string(v.size()) + ".seg1.example.com:8080, " + v;
			GuardedBytes g(v);
			nrf_slice sl = g.slice();
			nrf_via_result res;

			ASSERT_EQ(nrf_via_scan(db.get(), s.get(), &sl, 1, &res), 0);
			EXPECT_TRUE(nrf_via_result_has_peer(&res, (uint16_t)(n - 1))) << n << " " << v;
		}
	}
}
