/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_COMMON_H
#define NRF_COMMON_H

/**
 * @file
 * Compiler helpers, byte slices and the monotonic clock shared by every
 * module. Header-only; every function here is safe from any thread.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NRF_LIKELY(x) __builtin_expect(!!(x), 1)
#define NRF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NRF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NRF_CACHE_LINE 64
#define NRF_CACHE_ALIGNED __attribute__((aligned(NRF_CACHE_LINE)))
#define NRF_UNUSED __attribute__((unused))
#define NRF_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NRF_MAX(a, b) ((a) > (b) ? (a) : (b))

/**
 * The object of type @p type whose member @p member is at @p ptr (an
 * intrusive list link, a timer, an embedded contract struct). @p ptr must
 * point into such an object: nothing is checked.
 */
#define nrf_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/**
 * Zero the @p n bytes at @p p, @p n a compile-time constant below ~1 KiB:
 * as 16-byte stores written out, where memset() of a struct becomes `rep
 * stosq` (one step per 8 bytes, plus its start-up cost) or a libc call.
 * For the small per-request objects (messages, transactions, streams) of
 * the forwarding path (measured).
 */
static inline __attribute__((always_inline)) void
nrf_zero(void *p, size_t n)
{
	typedef char nrf_v16 __attribute__((vector_size(16)));
	const nrf_v16 z = {0};
	const uint64_t z8 = 0;
	size_t i = 0;

#pragma GCC unroll 64
	for (; i + 16 <= n; i += 16)
		__builtin_memcpy((char *)p + i, &z, 16);
	if (i + 8 <= n) {
		__builtin_memcpy((char *)p + i, &z8, 8);
		i += 8;
	}
	if (i < n)
		__builtin_memset((char *)p + i, 0, n - i); /* < 8 bytes */
}

/**
 * Copy @p n bytes from @p src to @p dst (not overlapping), @p n known only
 * at run time and usually short: a header field's name or value. Inline,
 * with no call: two overlapping loads and stores for 2 to 16 bytes, a
 * 16-byte loop and an overlapping last 16 bytes above. Every load and store
 * stays inside [src, src + n) and [dst, dst + n). For libc's memcpy() a
 * field of 10 to 70 bytes costs its size dispatch plus the call, which
 * makes its caller save and restore registers, and h2_msg_store() alone
 * made a dozen such calls per forwarded request (measured). Long
 * copies (bodies) belong to memcpy(): this one moves 16 bytes a step.
 */
static inline __attribute__((always_inline)) void
nrf_copy(void *dst, const void *src, size_t n)
{
	typedef char nrf_v16u __attribute__((vector_size(16), aligned(1), __may_alias__));
	char *d = (char *)dst;
	const char *s = (const char *)src;

	if (n >= 16) {
		size_t i = 0;

		do {
			*(nrf_v16u *)(void *)(d + i) = *(const nrf_v16u *)(const void *)(s + i);
			i += 16;
		} while (i + 16 < n);
		*(nrf_v16u *)(void *)(d + n - 16) = *(const nrf_v16u *)(const void *)(s + n - 16);
	} else if (n >= 8) {
		uint64_t a, b;

		__builtin_memcpy(&a, s, 8);
		__builtin_memcpy(&b, s + n - 8, 8);
		__builtin_memcpy(d, &a, 8);
		__builtin_memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;

		__builtin_memcpy(&a, s, 4);
		__builtin_memcpy(&b, s + n - 4, 4);
		__builtin_memcpy(d, &a, 4);
		__builtin_memcpy(d + n - 4, &b, 4);
	} else if (n >= 2) {
		uint16_t a, b;

		__builtin_memcpy(&a, s, 2);
		__builtin_memcpy(&b, s + n - 2, 2);
		__builtin_memcpy(d, &a, 2);
		__builtin_memcpy(d + n - 2, &b, 2);
	} else if (n == 1) {
		d[0] = s[0];
	}
}

/** Eight bytes at any alignment as one word (host byte order): one load. */
static inline uint64_t
nrf_load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/** The value of hex digit @p c (either case), or -1 when it is none. */
static inline int
nrf_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * The 16 lower-case hex digits of @p z, most significant first, into
 * @p out (no NUL added): what `snprintf(out, 17, "%016llx", z)` writes.
 * Eight digits at a time: nibbles spread to bytes by shifts and masks,
 * byte order reversed, then '0' + n plus 39 ('a' - '0' - 10) where n > 9
 * (n + 6 carries into bit 4), in every byte at once: less than half the
 * work of a digit at a time.
 */
static inline void
nrf_hex16(uint64_t z, char *out)
{
	for (int h = 0; h < 2; h++) {
		uint64_t x = (uint32_t)(z >> (32 - 32 * h));

		x = (x | x << 16) & 0x0000ffff0000ffffull;
		x = (x | x << 8) & 0x00ff00ff00ff00ffull;
		x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full; /* byte k: nibble k */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		x = __builtin_bswap64(x); /* memory byte k: nibble 7 - k */
#endif
		x += 0x3030303030303030ull +
			(((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * 39;
		__builtin_memcpy(out + 8 * h, &x, 8);
	}
}

/**
 * The JSON string escape (RFC 8259) of byte @p c into @p esc: `\"` and
 * `\\` for a quote and a backslash, `\u00XX` (lower-case hex) for a control
 * character, or, when @p short_forms, `\n`, `\r` and `\t` for those three.
 * @return the escape's length (2 or 6), 0 when @p c stands as it is (bytes
 *   >= 0x80 included: UTF-8 passes through).
 */
static inline size_t
nrf_json_escape(unsigned char c, char esc[6], int short_forms)
{
	static const char hex[] = "0123456789abcdef";

	if (c >= 0x20 && c != '"' && c != '\\')
		return 0;
	esc[0] = '\\';
	if (c == '"' || c == '\\') {
		esc[1] = (char)c;
		return 2;
	}
	if (short_forms && (c == '\n' || c == '\r' || c == '\t')) {
		esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		return 2;
	}
	esc[1] = 'u';
	esc[2] = '0';
	esc[3] = '0';
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 15];
	return 6;
}

/**
 * A borrowed, not NUL-terminated byte range. The owner of the bytes
 * decides how long the slice is valid; a slice never owns memory.
 */
struct nrf_slice {
	const char *p;
	size_t len;
};

/** Slice of a NUL-terminated string (NULL gives the empty slice). */
static inline struct nrf_slice
nrf_slice_str(const char *s)
{
	struct nrf_slice sl = {s, s != NULL ? strlen(s) : 0};
	return sl;
}

/** True when the slice holds exactly the bytes of @p s. */
static inline int
nrf_slice_eq(struct nrf_slice a, const char *s)
{
	size_t n = strlen(s);
	return a.len == n && (n == 0 || memcmp(a.p, s, n) == 0);
}

/** Monotonic clock in nanoseconds. */
static inline uint64_t
nrf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifdef __cplusplus
}
#endif
#endif /* NRF_COMMON_H */
