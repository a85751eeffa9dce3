/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The OS layer of nrfwd's own lwIP build (NO_SYS=1, decision 0010): the
 * millisecond clock, assertions that do not abort production builds, and
 * RFC 6528 initial sequence numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lwip/opt.h"
#include "lwip/arch.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include <stddef.h>
#include "nrf_lwip_hooks.h"

#if BYTE_ORDER != LITTLE_ENDIAN
#error "nrf_lwip_chksum() pads the last bytes little-endian"
#endif

u32_t
sys_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* Read by tp_lwip.c (nrf_tp_lw_asserts()). One thread runs lwIP. */
unsigned long nrf_lwip_assert_count;

void
nrf_lwip_assert(const char *msg, const char *file, int line)
{
	static time_t last;
	time_t now = time(NULL);

	nrf_lwip_assert_count++;
	if (now != last) {
		last = now;
		fprintf(stderr, "lwip: assertion \"%s\" failed at %s:%d (%lu so far)\n", msg,
			file, line, nrf_lwip_assert_count);
		fflush(stderr);
	}
#ifndef NDEBUG
	abort();
#endif
}

/*
 * The Internet checksum for lwIP (LWIP_CHKSUM): the non-inverted one's
 * complement sum of the 16-bit words from @p dataptr, in memory order like
 * lwip_standard_chksum(). It was the largest single cost of the DPDK
 * path's transport on devices without checksum offload (net_af_packet:
 * every byte sent and received is summed once; decision 0042), so:
 *  - long runs, where the CPU has AVX2: 128 bytes per step, word pairs
 *    summed into 32-bit lanes by vpmaddwd (xor, multiply-add, add per 32
 *    bytes: about 0.16 instructions per byte);
 *  - the rest (and CPUs without AVX2): eight bytes per load into a 64-bit
 *    sum with its carries counted apart (about 0.6 per byte, but no
 *    registers to save: most calls are IP headers and segment tails).
 * Both are the same sum modulo 0xffff, so the folded results are equal.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NRF_CSUM_AVX2 1
#define NRF_CSUM_AVX2_MIN 128

__attribute__((target("avx2"))) static inline __m256i
lanes_add(__m256i acc, const uint8_t *p)
{
	/* vpmaddwd sums word pairs as signed: flipping each word's top bit
	 * makes that w - 0x8000, so one xor and one multiply-add per 32
	 * bytes (the caller adds the 0x8000s back). */
	const __m256i flip = _mm256_set1_epi16((short)0x8000);
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);

	return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_xor_si256(v, flip), ones));
}

/* Sum of the 16-bit words of @p n bytes (a multiple of 64), as a 64-bit
 * integer. Sixteen signed 32-bit lanes (a and b), each taking one word
 * pair (|pair| <= 0x10000) per 64 bytes: no overflow below 2 MiB; lwIP's
 * lengths are 16-bit. */
__attribute__((target("avx2"))) static uint64_t
sum_avx2(const uint8_t *p, size_t n)
{
	__m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
	__m128i h;
	int64_t s;
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		a = lanes_add(a, p + i);
		b = lanes_add(b, p + i + 32);
		a = lanes_add(a, p + i + 64);
		b = lanes_add(b, p + i + 96);
	}
	if (i < n) {
		a = lanes_add(a, p + i);
		b = lanes_add(b, p + i + 32);
	}
	/* Signed lanes to 64 bits, then one sum. */
	a = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(a)),
		_mm256_cvtepi32_epi64(_mm256_extracti128_si256(a, 1)));
	b = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(b)),
		_mm256_cvtepi32_epi64(_mm256_extracti128_si256(b, 1)));
	a = _mm256_add_epi64(a, b);
	h = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
	s = _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
	return (uint64_t)(s + (int64_t)(n / 2) * 0x8000);
}
#endif

/* Eight bytes per load into a 64-bit sum with its carries counted apart
 * (add/adc: few registers, so the short calls save none), then the last
 * 0..7 bytes, folded to 16 bits. */
static inline u16_t
sum_scalar(const uint8_t *p, int len, uint64_t s)
{
	uint64_t c = 0, w;

	for (; len >= 16; len -= 16, p += 16) {
		uint64_t x, y;

		memcpy(&x, p, 8);
		memcpy(&y, p + 8, 8);
		s += x;
		c += s < x;
		s += y;
		c += s < y;
	}
	if (len & 8) {
		memcpy(&w, p, 8);
		s += w;
		c += s < w;
		p += 8;
	}
	/* The last 0..7 bytes, little-endian as lwIP pads; fixed-size loads
	 * (a variable-length memcpy() into w costs a stack slot and a copy
	 * loop on every call, and most calls end here: IP headers, ACKs). */
	w = 0;
	if (len & 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		w = v;
		p += 4;
	}
	if (len & 2) {
		uint16_t v;

		memcpy(&v, p, 2);
		w |= (uint64_t)v << ((len & 4) * 8);
		p += 2;
	}
	if (len & 1)
		w |= (uint64_t)*p << ((len & 6) * 8);
	s += w;
	c += s < w;
	/* 2^64 = 1 (mod 0xffff): the carries add in; then 64 -> 16 bits with
	 * end-around carries. */
	s += c;
	s += s < c;
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (u16_t)s;
}

#ifdef NRF_CSUM_AVX2
/* Apart from nrf_lwip_chksum() so that the short calls (most of them)
 * stay a leaf function without registers to save. */
static __attribute__((noinline)) u16_t
chksum_long(const uint8_t *p, int len)
{
	size_t k = (size_t)len & ~(size_t)63;

	return sum_scalar(p + k, len - (int)k, sum_avx2(p, k));
}
#endif

/* Non-zero: the scalar path only, as on a CPU without AVX2 (unit tests). */
int nrf_lwip_chksum_scalar_only;

u16_t
nrf_lwip_chksum(const void *dataptr, int len)
{
#ifdef NRF_CSUM_AVX2
	if (len >= NRF_CSUM_AVX2_MIN && !nrf_lwip_chksum_scalar_only &&
		__builtin_cpu_supports("avx2"))
		return chksum_long(dataptr, len);
#endif
	return sum_scalar(dataptr, len, 0);
}

/* ---- SipHash-2-4 (Aumasson, Bernstein), 64-bit output ----------------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                        \
	do {                                                            \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

uint64_t
nrf_lwip_siphash24(const uint8_t *in, size_t len, const uint64_t k[2])
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k[0];
	uint64_t v1 = 0x646f72616e646f6dULL ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ k[0];
	uint64_t v3 = 0x7465646279746573ULL ^ k[1];
	uint64_t b = (uint64_t)len << 56, m;
	size_t i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, in + i, 8);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; j < left; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

u32_t nrf_lwip_isn_next;
int nrf_lwip_isn_next_set;
void (*nrf_lwip_pcb_new)(struct tcp_pcb *pcb);
s8_t (*nrf_lwip_tcp_in_fn)(struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
	const struct pbuf *p);

s8_t
nrf_lwip_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len,
	u8_t *opt2, struct pbuf *p)
{
	(void)optlen;
	(void)opt1len;
	(void)opt2;
	return nrf_lwip_tcp_in_fn != NULL ? nrf_lwip_tcp_in_fn(pcb, hdr, p) : ERR_OK;
}

u32_t
nrf_lwip_tcp_isn(const ip_addr_t *local_ip, u16_t local_port, const ip_addr_t *remote_ip,
	u16_t remote_port)
{
	static uint64_t key[2];
	static int keyed;
	uint8_t in[12];
	uint32_t a;
	struct timespec ts;
	uint64_t t;

	/* lwIP calls this hook as tcp_next_iss(pcb) does, with the pcb's
	 * own fields: the pcb is the one holding @p local_ip. */
	if (nrf_lwip_pcb_new != NULL)
		nrf_lwip_pcb_new((struct tcp_pcb *)(void *)((char *)(uintptr_t)local_ip -
			offsetof(struct tcp_pcb, local_ip)));
	if (nrf_lwip_isn_next_set) {
		/* A connection a SYN cookie stands for (tp_lwip.c). */
		nrf_lwip_isn_next_set = 0;
		return nrf_lwip_isn_next;
	}
	if (!keyed) {
		if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			key[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
				(uint64_t)(uintptr_t)&key;
			key[1] = key[0] * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
		}
		keyed = 1;
	}
	/* M: a timer ticking every 4 µs (RFC 6528 section 3). */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = ((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u) / 4u;
#if LWIP_IPV6
	if (IP_IS_V6(remote_ip)) {
		uint8_t in6[36];

		memcpy(in6, ip_2_ip6(local_ip)->addr, 16);
		memcpy(in6 + 16, ip_2_ip6(remote_ip)->addr, 16);
		memcpy(in6 + 32, &local_port, 2);
		memcpy(in6 + 34, &remote_port, 2);
		return (u32_t)(t + nrf_lwip_siphash24(in6, sizeof(in6), key));
	}
#endif
	a = ip4_addr_get_u32(ip_2_ip4(local_ip));
	memcpy(in, &a, 4);
	a = ip4_addr_get_u32(ip_2_ip4(remote_ip));
	memcpy(in + 4, &a, 4);
	memcpy(in + 8, &local_port, 2);
	memcpy(in + 10, &remote_port, 2);
	return (u32_t)(t + nrf_lwip_siphash24(in, sizeof(in), key));
}
