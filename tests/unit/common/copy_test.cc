// SPDX-License-Identifier: BSD-3-Clause
// nrf_copy(), nrf_zero() and nrf_hex16() (lib/common/nrf_common.h):
// copies of every length from 0 to 300 at every source and destination
// alignment, against a reference, with guard bytes on both sides of the
// destination; hex digits against snprintf().
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "nrf_common.h"

namespace {

constexpr size_t kGuard = 32;

TEST(Copy, CopiesEveryLengthAtEveryAlignmentAndNothingAround)
{
	std::vector<unsigned char> src(300 + 64), dst(300 + 2 * kGuard + 64);

	for (size_t i = 0; i < src.size(); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t n = 0; n <= 300; n++) {
		for (size_t so = 0; so < 16; so++) {
			for (size_t d_o = 0; d_o < 16; d_o += 3) {
				std::fill(dst.begin(), dst.end(), 0xa5);
				unsigned char *d = dst.data() + kGuard + d_o;

				nrf_copy(d, src.data() + so, n);
				ASSERT_EQ(0, std::memcmp(d, src.data() + so, n))
					<< "n=" << n << " so=" << so << " do=" << d_o;
				for (size_t k = 0; k < kGuard + d_o; k++)
					ASSERT_EQ(0xa5, dst[k]) << "before, n=" << n;
				for (size_t k = kGuard + d_o + n; k < dst.size(); k++)
					ASSERT_EQ(0xa5, dst[k]) << "after, n=" << n;
			}
		}
	}
}

TEST(Copy, ReadsNoByteOutsideTheSource)
{
	// The source ends at the end of a vector: a read past it would be
	// caught by ASan builds; here the bytes around it differ, so a copy
	// that took them would not compare equal.
	for (size_t n = 0; n <= 70; n++) {
		std::vector<char> src(n), dst(n + 1, 'x');

		for (size_t i = 0; i < n; i++)
			src[i] = (char)('a' + i % 26);
		nrf_copy(dst.data(), src.data(), n);
		// An empty vector's data() may be NULL: memcmp() must not see it.
		if (n > 0) {
			ASSERT_EQ(0, std::memcmp(dst.data(), src.data(), n));
		}
		ASSERT_EQ('x', dst[n]);
	}
}

struct Odd {
	char b[75];
};

TEST(Zero, ClearsExactlyTheObject)
{
	unsigned char buf[sizeof(Odd) + 2];

	std::memset(buf, 0xff, sizeof(buf));
	nrf_zero(buf + 1, sizeof(Odd));
	EXPECT_EQ(0xff, buf[0]);
	EXPECT_EQ(0xff, buf[sizeof(buf) - 1]);
	for (size_t i = 1; i <= sizeof(Odd); i++)
		EXPECT_EQ(0, buf[i]) << i;
}

TEST(Hex16, WritesWhatSnprintfWritesAndNothingMore)
{
	std::mt19937_64 rng(19);
	std::vector<uint64_t> vs = {0, 1, 9, 10, 15, 16, 0xff, 0x0123456789abcdefull,
		0xfedcba9876543210ull, 0xa0a0a0a0a0a0a0a0ull, 0x9999999999999999ull, ~0ull};

	for (int i = 0; i < 100000; i++)
		vs.push_back(rng());
	for (int b = 0; b < 64; b++)
		vs.push_back(1ull << b);
	for (uint64_t v : vs) {
		char want[17], got[18];

		std::snprintf(want, sizeof(want), "%016llx", (unsigned long long)v);
		std::memset(got, '#', sizeof(got));
		nrf_hex16(v, got);
		ASSERT_EQ(0, std::memcmp(want, got, 16)) << want;
		ASSERT_EQ('#', got[16]);
	}
}

} // namespace

TEST(NrfHexval, EveryByte)
{
	for (int b = 0; b < 256; b++) {
		char c = static_cast<char>(b);
		int want = (c >= '0' && c <= '9') ? c - '0'
			: (c >= 'a' && c <= 'f') ? c - 'a' + 10
			: (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;

		EXPECT_EQ(nrf_hexval(c), want) << b;
	}
}
