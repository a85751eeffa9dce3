// SPDX-License-Identifier: BSD-3-Clause
// nrfwd's own lwIP build (decision 0010): the port functions of
// subprojects/packagefiles/lwip/nrf/nrf_sys_arch.c. Built only when the
// DPDK transport uses the own build (meson -Dlwip=auto|subproject).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

extern "C" {
#include "lwip/debug.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "nrf_lwip_hooks.h"
}

namespace {

// RFC 1071 in its plainest form: 16-bit words in memory order, the odd
// last byte padded with zero, end-around carries.
uint16_t
ref_sum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		uint16_t w;

		std::memcpy(&w, p + i, 2);
		s += w;
	}
	if (i < n) {
		uint16_t w = 0;

		std::memcpy(&w, p + i, 1);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(s);
}

unsigned int
ihl_of(const std::vector<uint8_t> &pk)
{
	return (pk[0] & 0x0fu) * 4u;
}

} // namespace

extern "C" unsigned long nrf_lwip_assert_count;

#ifdef LWIP_NOASSERT
TEST(LwipOwn, AssertionsCompiledOutUnlessAskedFor)
{
	// meson -Dlwip_asserts=false, or auto outside buildtype=debug
	// (decision 0044): LWIP_ASSERT is empty, nothing logged or counted.
	unsigned long before = nrf_lwip_assert_count;

	LWIP_ASSERT("test assertion", 0);
	EXPECT_EQ(nrf_lwip_assert_count, before);
}
#elif defined(NDEBUG)
TEST(LwipOwn, AssertionLogsAndCountsInReleaseBuilds)
{
	unsigned long before = nrf_lwip_assert_count;

	LWIP_ASSERT("test assertion", 0); // logged, counted, no abort
	EXPECT_EQ(nrf_lwip_assert_count, before + 1);
}
#else
TEST(LwipOwnDeathTest, AssertionAbortsInDebugBuilds)
{
	EXPECT_DEATH(LWIP_ASSERT("test assertion", 0), "lwip: assertion \"test assertion\" failed");
}
#endif

TEST(LwipOwn, ChecksumMatchesReferenceForEveryLengthAndAlignment)
{
	std::mt19937 rng(42);
	std::vector<uint8_t> buf(1600 + 16);

	for (auto &b : buf)
		b = static_cast<uint8_t>(rng());
	// Both paths: AVX2 for long runs where the CPU has it, and the scalar
	// one every CPU takes (decision 0042).
	for (int scalar = 0; scalar <= 1; scalar++) {
		nrf_lwip_chksum_scalar_only = scalar;
		for (size_t off = 0; off < 8; off++) {
			for (size_t len = 0; len <= 1600; len++) {
				ASSERT_EQ(nrf_lwip_chksum(buf.data() + off, static_cast<int>(len)),
					ref_sum(buf.data() + off, len))
					<< "offset " << off << " length " << len << " scalar " << scalar;
			}
		}
	}
	nrf_lwip_chksum_scalar_only = 0;
}

TEST(LwipOwn, ChecksumOfAllOnesAndCarries)
{
	std::vector<uint8_t> ff(1500, 0xff);

	// Every word 0xffff: the one's complement sum stays 0xffff.
	EXPECT_EQ(nrf_lwip_chksum(ff.data(), 1500), 0xffff);
	EXPECT_EQ(nrf_lwip_chksum(ff.data(), 0), 0);
	EXPECT_EQ(nrf_lwip_chksum(ff.data(), 1501 - 1), ref_sum(ff.data(), 1500));
	// Every short length through the scalar path: a carry out of nearly
	// every 64-bit add.
	for (size_t len = 0; len <= 200; len++)
		ASSERT_EQ(nrf_lwip_chksum(ff.data() + (len & 7), static_cast<int>(len)),
			ref_sum(ff.data(), len))
			<< "length " << len;
}

TEST(LwipOwn, ChecksumOfLongRunsMatchesReference)
{
	// The vector path (decision 0042) takes runs of 128 bytes and more in
	// 64-byte steps, its words offset by 0x8000: up to lwIP's longest
	// length, all ones (the most carries), all zeros (the most negative
	// lanes) and random bytes at every offset of a 64-byte step; and the
	// scalar path over the same runs, as a CPU without AVX2 takes them.
	std::vector<uint8_t> ff(65535 + 64, 0xff);
	std::vector<uint8_t> zero(65535 + 64, 0);
	std::mt19937 rng(7);
	std::vector<uint8_t> buf(65535 + 64);

	for (auto &b : buf)
		b = static_cast<uint8_t>(rng());
	for (int scalar = 0; scalar <= 1; scalar++) {
		nrf_lwip_chksum_scalar_only = scalar;
		for (size_t len : {65535u, 65534u, 65472u, 9000u, 4096u, 191u, 128u, 127u}) {
			for (size_t off = 0; off < 64; off += 7) {
				ASSERT_EQ(nrf_lwip_chksum(ff.data() + off, static_cast<int>(len)),
					ref_sum(ff.data() + off, len))
					<< "all ones, offset " << off << " length " << len;
				ASSERT_EQ(nrf_lwip_chksum(zero.data() + off, static_cast<int>(len)), 0)
					<< "all zeros, offset " << off << " length " << len;
				ASSERT_EQ(nrf_lwip_chksum(buf.data() + off, static_cast<int>(len)),
					ref_sum(buf.data() + off, len))
					<< "offset " << off << " length " << len << " scalar " << scalar;
			}
		}
	}
	nrf_lwip_chksum_scalar_only = 0;
}

TEST(LwipOwn, InetChecksumOfARealIpv4Header)
{
	// An IPv4 header with its checksum (0xb861) in place: inet_chksum()
	// (lwIP's caller of LWIP_CHKSUM) over it gives 0.
	const uint8_t hdr[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

	EXPECT_EQ(inet_chksum(hdr, sizeof(hdr)), 0);
	uint8_t z[20];
	std::memcpy(z, hdr, sizeof(z));
	z[10] = z[11] = 0;
	uint16_t stored; // as the header carries it (network byte order)
	std::memcpy(&stored, hdr + 10, 2);
	EXPECT_EQ(inet_chksum(z, sizeof(z)), stored);
}

namespace {

// An IPv4/TCP packet: 20-byte IPv4 header (+ @opt_words of options),
// 20-byte TCP header, @payload random bytes; both checksums as lwIP
// computes them (inet_chksum(), ip_chksum_pseudo() over a pbuf).
std::vector<uint8_t>
tcp_packet(std::mt19937 &rng, size_t payload, unsigned int opt_words = 0)
{
	unsigned int ihl = 20 + 4 * opt_words;
	std::vector<uint8_t> pk(ihl + 20 + payload);

	for (auto &b : pk)
		b = static_cast<uint8_t>(rng());
	pk[0] = static_cast<uint8_t>(0x40 | (ihl / 4));
	pk[2] = static_cast<uint8_t>(pk.size() >> 8);
	pk[3] = static_cast<uint8_t>(pk.size());
	pk[6] = 0x40; // DF, offset 0
	pk[7] = 0;
	pk[9] = 6;
	pk[10] = pk[11] = 0;
	uint16_t c = inet_chksum(pk.data(), static_cast<u16_t>(ihl));
	std::memcpy(&pk[10], &c, 2);
	pk[ihl + 12] = 0x50;
	pk[ihl + 16] = pk[ihl + 17] = 0;
	// A pbuf over the segment in place (no lwip_init(), no pools needed).
	struct pbuf_custom pc = {};
	auto seg = static_cast<u16_t>(pk.size() - ihl);
	struct pbuf *p = pbuf_alloced_custom(PBUF_RAW, seg, PBUF_REF, &pc, pk.data() + ihl, seg);
	EXPECT_NE(p, nullptr);
	ip4_addr_t src, dst;
	std::memcpy(&src.addr, &pk[12], 4);
	std::memcpy(&dst.addr, &pk[16], 4);
	ip_addr_t s, d;
	ip_addr_copy_from_ip4(s, src);
	ip_addr_copy_from_ip4(d, dst);
	c = ip_chksum_pseudo(p, 6, p->tot_len, &s, &d);
	std::memcpy(&pk[ihl + 16], &c, 2);
	return pk;
}

} // namespace

TEST(LwipOwn, FrameChecksumsAgreeWithLwip)
{
	// The transport's whole-packet checksums (decision 0044) against
	// lwIP's own, over every payload length of a segment (odd lengths, the
	// vector path from 128 bytes on) and with IPv4 options.
	std::mt19937 rng(11);

	for (size_t len = 0; len <= 1460; len++) {
		auto pk = tcp_packet(rng, len, len % 3 == 0 ? 2 : 0);
		unsigned int ihl = (pk[0] & 0x0f) * 4u;
		uint16_t want;

		std::memcpy(&want, &pk[ihl + 16], 2);
		ASSERT_EQ(nrf_lwip_ip4_rx_csum_ok(pk.data(), static_cast<u16_t>(pk.size()), 1, 1), 1)
			<< "payload " << len;
		// Filled from scratch: lwIP's value.
		pk[ihl + 16] = 0x12;
		pk[ihl + 17] = 0x34;
		nrf_lwip_ip4_tcp_csum_fill(pk.data(), static_cast<u16_t>(pk.size()));
		uint16_t got;
		std::memcpy(&got, &pk[ihl + 16], 2);
		ASSERT_EQ(got, want) << "payload " << len;
	}
}

TEST(LwipOwn, FrameChecksumsFindEveryBadOne)
{
	std::mt19937 rng(12);
	auto pk = tcp_packet(rng, 999);
	auto len = static_cast<u16_t>(pk.size());

	// One flipped bit anywhere: the IPv4 header's checksum or the TCP one
	// catches it (addresses are in both).
	for (size_t i = 0; i < pk.size(); i++) {
		if (i == 0 || (i >= 2 && i < 4) || i == 6 || i == 7 || i == 9)
			continue; // version/length/fragment/protocol: not checked, see below
		auto bad = pk;
		bad[i] ^= 0x10;
		ASSERT_EQ(nrf_lwip_ip4_rx_csum_ok(bad.data(), len, 1, 1), 0) << "byte " << i;
	}
	// Only what was asked for is checked: a bad TCP checksum passes
	// without check_tcp, a bad header one without check_ip.
	auto bad = pk;
	bad[40] ^= 1;
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(bad.data(), len, 1, 0), 1);
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(bad.data(), len, 0, 1), 0);
	bad = pk;
	bad[10] ^= 1;
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(bad.data(), len, 0, 1), 1);
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(bad.data(), len, 1, 0), 0);
	// Ethernet padding after the packet is not part of the segment.
	auto padded = pk;
	padded.resize(pk.size() + 6, 0xee);
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(padded.data(), static_cast<u16_t>(padded.size()), 1, 1), 1);
}

TEST(LwipOwn, FrameChecksumsLeaveWhatLwipDropsToLwip)
{
	// What lwIP refuses anyway (it drops fragments, truncated packets and
	// bad lengths itself) is "not wrong" here, and never read past @len.
	std::mt19937 rng(13);
	auto pk = tcp_packet(rng, 100);
	auto len = static_cast<u16_t>(pk.size());

	auto frag = pk;
	frag[7] = 1; // fragment offset 8
	frag[ihl_of(frag) + 30] ^= 1; // and a wrong segment checksum
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(frag.data(), len, 0, 1), 1);
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(pk.data(), static_cast<u16_t>(len - 1), 1, 1), 1);
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(pk.data(), 19, 1, 1), 1);
	auto v6 = pk;
	v6[0] = 0x65;
	EXPECT_EQ(nrf_lwip_ip4_rx_csum_ok(v6.data(), len, 1, 1), 1);
	// Fill: not TCP or truncated, nothing written.
	auto udp = pk;
	udp[9] = 17;
	auto before = udp;
	nrf_lwip_ip4_tcp_csum_fill(udp.data(), len);
	EXPECT_EQ(udp, before);
	before = pk;
	nrf_lwip_ip4_tcp_csum_fill(pk.data(), static_cast<u16_t>(len - 1));
	EXPECT_EQ(pk, before);
}

TEST(LwipOwn, IsnDependsOnTheConnectionAndGrowsWithTime)
{
	ip_addr_t a, b;

	ip_addr_set_ip4_u32_val(a, PP_HTONL(0x0a000001u));
	ip_addr_set_ip4_u32_val(b, PP_HTONL(0x0a000002u));
	std::set<uint32_t> seen;
	for (u16_t port = 1000; port < 1100; port++)
		seen.insert(nrf_lwip_tcp_isn(&a, port, &b, 8080));
	// A keyed hash per 4-tuple: no two of 100 neighbours alike, none a
	// simple step of the one before (lwIP's own ISN is a counter).
	EXPECT_EQ(seen.size(), 100u);
	uint32_t x = nrf_lwip_tcp_isn(&a, 1000, &b, 8080);
	uint32_t y = nrf_lwip_tcp_isn(&a, 1001, &b, 8080);
	EXPECT_GT(static_cast<uint32_t>(y - x), 1000000u);
	EXPECT_LT(static_cast<uint32_t>(y - x), 0xffffffffu - 1000000u);
	// The same 4-tuple again later: the 4 µs clock moved it forward a little.
	uint32_t t0 = sys_now();
	while (sys_now() - t0 < 3)
		;
	uint32_t x2 = nrf_lwip_tcp_isn(&a, 1000, &b, 8080);
	EXPECT_GE(static_cast<uint32_t>(x2 - x), 500u);
	EXPECT_LT(static_cast<uint32_t>(x2 - x), 250000u);
}
