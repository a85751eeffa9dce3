/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP semantics of front (request) streams, checked here instead of by
 * nghttp2 (front sessions run with nghttp2_option_set_no_http_messaging()).
 *
 * Why: with nghttp2's own checks the request path of a 508 spent about one
 * instruction in six validating field bytes one at a time through
 * table lookups (a 4-member Via alone is ~180 bytes), on every front
 * request, before nrfwd could look at it.
 *
 * The rules below are what nghttp2 1.52 (lib/nghttp2_http.c) does on a
 * server session, with the same outcome for every input: a request with a
 * bad field name or value (per nghttp2_check_header_name(),
 * nghttp2_check_header_value_rfc9113(), nghttp2_check_method(),
 * nghttp2_check_path(), nghttp2_check_authority() and the :scheme syntax),
 * a bad, missing, empty or repeated pseudo-header, a pseudo-header after a
 * regular field or in trailers, a connection-specific field, te other than
 * "trailers", a bad or repeated content-length, a body longer or shorter
 * than content-length, or trailers without END_STREAM, is malformed: reset
 * with RST_STREAM(PROTOCOL_ERROR) and never delivered.
 * The per-byte tables are taken from nghttp2's exported checks once, so
 * they agree with the library by construction; field values, the bulk of
 * the bytes, are checked 16 at a time with SSE2. tests/unit/h2/
 * h2_check_test.cc compares every byte check with nghttp2's, and sends the
 * same random requests (fields, order, bodies, trailers) to a plain
 * nghttp2 server session and to one checked here: both must reset the same
 * streams and deliver the same fields, bodies and ends.
 * Not reproduced: the RFC 9218 `priority` field (nghttp2 would use it to
 * order our responses; every response now has the default urgency).
 *
 * Answers on peer (client) streams are checked here too (the second part
 * of this file), for the same reason: nghttp2's messaging on the upstream
 * sessions was a large share of a forwarded request's cost (measured,
 * docs/benchmarks.md), mostly the per-byte name and value checks of the
 * relayed answer's fields. The rules
 * are nghttp2 1.52's http_response_on_header(),
 * nghttp2_http_on_response_headers(), nghttp2_http_on_trailer_headers(),
 * nghttp2_http_on_data_chunk() and nghttp2_http_on_remote_end_stream();
 * tests/unit/h2/h2_check_answer_test.cc feeds the same answers to a plain
 * nghttp2 client session and to one checked here.
 */
#include <pthread.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "h2_int.h"

static uint8_t name_ok[256];  /* nghttp2_check_header_name */
static uint8_t value_ok[256]; /* nghttp2_check_header_value */
static uint8_t path_ok[256];  /* nghttp2_check_path */
static uint8_t auth_ok[256];  /* nghttp2_check_authority */
static uint8_t meth_ok[256];  /* nghttp2_check_method */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
/* The 16-byte checks below encode nghttp2's value and path tables as
 * ranges; they are used only if the tables are what they encode. */
static bool simd_value, simd_path;
/* Names and authorities are checked 16 bytes at a time against the bytes
 * they nearly always hold (below), the table deciding when one is not:
 * used only if the table accepts all of those. */
static bool simd_name, simd_auth;

static void
tables_build(void)
{
	unsigned int c;

	for (c = 0; c < 256; c++) {
		uint8_t b = (uint8_t)c;
		uint8_t nb[2] = {'a', b};

		/* A name char is checked after an optional leading ':'. */
		name_ok[c] = (uint8_t)(nghttp2_check_header_name(nb, 2) && b != ':');
		value_ok[c] = (uint8_t)nghttp2_check_header_value(&b, 1);
		path_ok[c] = (uint8_t)nghttp2_check_path(&b, 1);
		auth_ok[c] = (uint8_t)nghttp2_check_authority(&b, 1);
		meth_ok[c] = (uint8_t)nghttp2_check_method(&b, 1);
	}
	simd_value = simd_path = true;
	for (c = 0; c < 256; c++) {
		bool ctl = c < 0x20 || c == 0x7f;

		if (value_ok[c] != (uint8_t)!(ctl && c != 0x09))
			simd_value = false;
		if (path_ok[c] != (uint8_t)!(ctl || c == 0x20))
			simd_path = false;
	}
	simd_name = simd_auth = true;
	for (c = 0; c < 256; c++) {
		bool common = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';

		if (common && !name_ok[c])
			simd_name = false;
		if ((common || c == '.' || c == ':') && !auth_ok[c])
			simd_auth = false;
	}
}

void
h2_check_init(void)
{
	pthread_once(&tables_once, tables_build);
}

static bool
all_in(const uint8_t *tab, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!tab[p[i]])
			return false;
	return true;
}


#if defined(__SSE2__)
/*
 * Bytes of @p x (as 0xff in the result) that may be refused by
 * nghttp2_check_header_value(): every byte up to 0x1f, and DEL. HT (0x09)
 * is allowed but flagged too, so a value holding one is decided by the
 * table (value_check()): the common case costs 4 operations a vector, not
 * the 7 an exact test needs.
 */
static inline __m128i
value_sus(__m128i x)
{
	__m128i ctl = _mm_cmpeq_epi8(_mm_subs_epu8(x, _mm_set1_epi8(0x1f)), _mm_setzero_si128());

	return _mm_or_si128(ctl, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)));
}

/* nghttp2_check_path()'s refusals exactly: CTL, SP (up to 0x20) and DEL;
 * 0x80-0xff allowed. */
static inline __m128i
path_bad(__m128i x)
{
	__m128i low = _mm_cmpeq_epi8(_mm_subs_epu8(x, _mm_set1_epi8(0x20)), _mm_setzero_si128());

	return _mm_or_si128(low, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)));
}

static inline __m128i
load16(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* Bytes [0, 8) and [len - 8, len) of a value of 8 to 15 bytes, overlapping:
 * every byte is in one of the halves. */
static inline __m128i
load8x2(const uint8_t *p, size_t len)
{
	uint64_t a, b;

	memcpy(&a, p, sizeof(a));
	memcpy(&b, p + len - 8, sizeof(b));
	return _mm_set_epi64x((long long)b, (long long)a);
}

/* Bytes [0, 4) and [len - 4, len) of a value of 4 to 7 bytes, the rest of
 * the vector 'a' (a byte no check flags). */
static inline __m128i
load4x2(const uint8_t *p, size_t len)
{
	uint32_t a, b;

	memcpy(&a, p, sizeof(a));
	memcpy(&b, p + len - 4, sizeof(b));
	return _mm_set_epi32(0x61616161, 0x61616161, (int)b, (int)a);
}

/*
 * No byte of p[0, len), 4 <= len, is flagged by @p flag: 16 at a time (the
 * last vector ends with the value and may overlap the one before; 4 to 15
 * bytes in two overlapping halves), the flags of all vectors OR-ed and
 * tested once (measured: one branch per value, not per vector).
 * Inlined, so each caller gets its own copy with @p flag known.
 */
static inline __attribute__((always_inline)) bool
none16(__m128i (*flag)(__m128i), const uint8_t *p, size_t len)
{
	__m128i acc;
	size_t i;

	if (len < 8)
		return _mm_movemask_epi8(flag(load4x2(p, len))) == 0;
	if (len < 16)
		return _mm_movemask_epi8(flag(load8x2(p, len))) == 0;
	acc = flag(load16(p + len - 16));
	for (i = 0; i + 16 < len; i += 16)
		acc = _mm_or_si128(acc, flag(load16(p + i)));
	return _mm_movemask_epi8(acc) == 0;
}
#endif

#if defined(__SSE2__)
/* Bytes of @p x that are not a-z, 0-9 or '-' (as signed bytes, 0x80-0xff
 * are negative and outside every range: left to the table). */
static inline int
name_odd16(__m128i x)
{
	__m128i ok = _mm_or_si128(
		_mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('a' - 1)),
			_mm_cmplt_epi8(x, _mm_set1_epi8('z' + 1))),
		_mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
				     _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1))),
			_mm_cmpeq_epi8(x, _mm_set1_epi8('-'))));

	return _mm_movemask_epi8(ok) ^ 0xffff;
}

/* The same for authorities, which also hold '.' and ':'. */
static inline int
auth_odd16(__m128i x)
{
	return name_odd16(x) & (_mm_movemask_epi8(_mm_or_si128(
		_mm_cmpeq_epi8(x, _mm_set1_epi8('.')), _mm_cmpeq_epi8(x, _mm_set1_epi8(':')))) ^ 0xffff);
}

/*
 * Every byte of p[0, len) is in @p tab: 8 bytes or more are first tried
 * 16 at a time against the common bytes (@p odd16); only a range with
 * another byte is looked up byte by byte, so the outcome is the table's.
 */
static inline __attribute__((always_inline)) bool
tab16(int (*odd16)(__m128i), const uint8_t *tab, const uint8_t *p, size_t len)
{
	size_t i;

	if (len >= 16) {
		for (i = 0; i + 16 <= len; i += 16)
			if (odd16(load16(p + i)) != 0)
				return all_in(tab, p, len);
		return i == len || odd16(load16(p + len - 16)) == 0 || all_in(tab, p, len);
	}
	if (len >= 8)
		return odd16(load8x2(p, len)) == 0 || all_in(tab, p, len);
	return all_in(tab, p, len);
}
#endif

/* nghttp2_check_authority() */
static bool
auth_check(const uint8_t *p, size_t len)
{
#if defined(__SSE2__)
	if (simd_auth)
		return tab16(auth_odd16, auth_ok, p, len);
#endif
	return all_in(auth_ok, p, len);
}

bool
h2_check_name(const uint8_t *p, size_t len)
{
	if (len == 0)
		return false;
	if (p[0] == ':') {
		if (len == 1)
			return false;
		p++;
		len--;
	}
#if defined(__SSE2__)
	if (simd_name)
		return tab16(name_odd16, name_ok, p, len);
#endif
	return all_in(name_ok, p, len);
}

/*
 * nghttp2_check_header_value(): every byte but CTL (0x00-0x1f except HT)
 * and DEL. As signed bytes, 0x80-0xff are negative and allowed.
 */
static inline __attribute__((always_inline)) bool
value_check(const uint8_t *p, size_t len)
{
#if defined(__SSE2__)
	if (simd_value && len >= 4)
		return none16(value_sus, p, len) || all_in(value_ok, p, len);
#endif
	return all_in(value_ok, p, len);
}

bool
h2_check_value(const uint8_t *p, size_t len)
{
	return value_check(p, len);
}

/* nghttp2_check_path(): no CTL, SP or DEL (0x80-0xff allowed). */
static bool
path_check(const uint8_t *p, size_t len)
{
#if defined(__SSE2__)
	if (simd_path && len >= 4)
		return none16(path_bad, p, len);
#endif
	return all_in(path_ok, p, len);
}

/*
 * nghttp2_check_header_value_rfc9113(): also no leading/trailing SP/HT.
 * One compare per end: a first or last byte up to 0x20 is SP, HT or a
 * control byte, and nghttp2 refuses the value for any of them. Inlined
 * into each field rule (~5 values a forwarded request; a call cost ~10
 * instructions each, measured).
 */
static inline __attribute__((always_inline)) bool
value_rfc9113(const uint8_t *p, size_t len)
{
	if (len == 0)
		return true;
	if (p[0] <= 0x20 || p[len - 1] <= 0x20)
		return false;
	return value_check(p, len);
}

static bool
scheme_ok(const uint8_t *p, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		uint8_t c = p[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');

		if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')))
			return false;
	}
	return true;
}

/* @p n is a constant at every call: the compiler compares in words. */
static inline bool
eqn(const uint8_t *p, const char *s, size_t n)
{
	return memcmp(p, s, n) == 0;
}

static bool
lit(const uint8_t *p, size_t len, const char *s, size_t n)
{
	return len == n && memcmp(p, s, n) == 0;
}

static bool
lit_ci(const uint8_t *p, size_t len, const char *s, size_t n)
{
	size_t i;

	if (len != n)
		return false;
	for (i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c + 32);
		if (c != (uint8_t)s[i])
			return false;
	}
	return true;
}

/*
 * lit_ci() for a literal @p s of 4 to 8 lower-case letters ("http",
 * "https", "trailers"): c | 0x20 equals a lower-case letter only for that
 * letter and its upper case, so two overlapping words OR-ed with 0x20 in
 * every byte decide, with no loop (measured).
 */
static inline __attribute__((always_inline)) bool
lit_ci_letters(const uint8_t *p, size_t len, const char *s, size_t n)
{
	uint32_t a, b, x, y;

	if (len != n)
		return false;
	memcpy(&a, p, 4);
	memcpy(&b, p + n - 4, 4);
	memcpy(&x, s, 4);
	memcpy(&y, s + n - 4, 4);
	return (((a | 0x20202020u) ^ x) | ((b | 0x20202020u) ^ y)) == 0;
}

/* Strictly decimal, no sign, fits int64 (nghttp2's parse_uint). */
static int64_t
parse_uint(const uint8_t *p, size_t len)
{
	int64_t n = 0;
	size_t i;

	if (len == 0)
		return -1;
	if (len <= 18) {
		/* at most 10^18 - 1: no overflow (:status, content-length) */
		for (i = 0; i < len; i++) {
			if (p[i] < '0' || p[i] > '9')
				return -1;
			n = n * 10 + (p[i] - '0');
		}
		return n;
	}
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		if (n > INT64_MAX / 10)
			return -1;
		n *= 10;
		if (n > INT64_MAX - (p[i] - '0'))
			return -1;
		n += p[i] - '0';
	}
	return n;
}

/* Pseudo-header (or host) seen once only, not empty (check_pseudo_header). */
static int
once(struct nrf_h2_reqchk *rc, uint32_t flag, size_t vlen)
{
	if ((rc->fl & flag) || vlen == 0)
		return H2_CHK_BAD;
	rc->fl |= flag;
	return H2_CHK_OK;
}

/* What a field name is to the rules below. */
enum field_kind {
	FK_OTHER,      /* any other regular field */
	FK_METHOD,
	FK_PATH,
	FK_SCHEME,
	FK_AUTHORITY,
	FK_PSEUDO_BAD, /* any other pseudo-header, or a bad one */
	FK_HOST,
	FK_TE,
	FK_CLEN,       /* content-length */
	FK_CONN,       /* connection-specific: never in HTTP/2 */
};

/* By length first, then one comparison: names are short and most fields
 * are none of these. Always inlined: with two callers (requests and
 * answers) GCC would make it a call, measurably slower on a 508. */
static inline __attribute__((always_inline)) enum field_kind
field_kind(const uint8_t *name, size_t nlen)
{
	if (name[0] == ':') {
		switch (nlen) {
		case 5:
			return eqn(name, ":path", 5) ? FK_PATH : FK_PSEUDO_BAD;
		case 7:
			if (eqn(name, ":method", 7))
				return FK_METHOD;
			return eqn(name, ":scheme", 7) ? FK_SCHEME : FK_PSEUDO_BAD;
		case 10:
			return eqn(name, ":authority", 10) ? FK_AUTHORITY : FK_PSEUDO_BAD;
		default:
			/* :protocol too: extended CONNECT is not enabled */
			return FK_PSEUDO_BAD;
		}
	}
	switch (nlen) {
	case 2:
		return eqn(name, "te", 2) ? FK_TE : FK_OTHER;
	case 4:
		return eqn(name, "host", 4) ? FK_HOST : FK_OTHER;
	case 7:
		return eqn(name, "upgrade", 7) ? FK_CONN : FK_OTHER;
	case 10:
		return eqn(name, "connection", 10) || eqn(name, "keep-alive", 10) ? FK_CONN : FK_OTHER;
	case 14:
		return eqn(name, "content-length", 14) ? FK_CLEN : FK_OTHER;
	case 16:
		return eqn(name, "proxy-connection", 16) ? FK_CONN : FK_OTHER;
	case 17:
		return eqn(name, "transfer-encoding", 17) ? FK_CONN : FK_OTHER;
	default:
		return FK_OTHER;
	}
}

/*
 * The outcome is nghttp2's (nghttp2_http_on_header, server side): any bad
 * name or value byte, and every rule of http_request_on_header, is
 * H2_CHK_BAD, and regular fields follow the same rules in trailers. Only
 * the order of the tests differs, which changes nothing: a request is
 * malformed by its first bad field, whatever made it bad.
 * A name one of the kinds above matched exactly is a valid name already.
 */
int
h2_check_field(struct nrf_h2_reqchk *rc, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, bool trailer, unsigned int known)
{
	bool vk = (known & H2_KNOWN_VALUE) != 0;
	enum field_kind k;

	if (nlen == 0)
		return H2_CHK_BAD;
	k = field_kind(name, nlen);
	switch (k) {
	case FK_OTHER:
		if (!(known & H2_KNOWN_NAME) && !h2_check_name(name, nlen))
			return H2_CHK_BAD;
		rc->fl |= H2_HF_NO_PSEUDO;
		return vk || value_rfc9113(value, vlen) ? H2_CHK_OK : H2_CHK_BAD;
	case FK_PSEUDO_BAD:
	case FK_CONN:
		return H2_CHK_BAD;
	case FK_HOST:
		if (!vk && !auth_check(value, vlen))
			return H2_CHK_BAD;
		rc->fl |= H2_HF_NO_PSEUDO;
		return once(rc, H2_HF_HOST, vlen);
	case FK_TE:
		if (!vk && !value_rfc9113(value, vlen))
			return H2_CHK_BAD;
		rc->fl |= H2_HF_NO_PSEUDO;
		return lit_ci_letters(value, vlen, "trailers", 8) ? H2_CHK_OK : H2_CHK_BAD;
	case FK_CLEN:
		if (!vk && !value_rfc9113(value, vlen))
			return H2_CHK_BAD;
		rc->fl |= H2_HF_NO_PSEUDO;
		if (rc->clen != -1)
			return H2_CHK_BAD;
		rc->clen = parse_uint(value, vlen);
		return rc->clen == -1 ? H2_CHK_BAD : H2_CHK_OK;
	default:
		break;
	}
	/* The four pseudo-headers a request may have. */
	if (trailer || (rc->fl & H2_HF_NO_PSEUDO))
		return H2_CHK_BAD;
	switch (k) {
	case FK_PATH:
		if ((!vk && !path_check(value, vlen)) || once(rc, H2_HF_PATH, vlen) != 0)
			return H2_CHK_BAD;
		if (value[0] == '/')
			rc->fl |= H2_HF_PATH_REGULAR;
		else if (vlen == 1 && value[0] == '*')
			rc->fl |= H2_HF_PATH_ASTERISK;
		return H2_CHK_OK;
	case FK_METHOD:
		if ((!vk && !all_in(meth_ok, value, vlen)) || once(rc, H2_HF_METHOD, vlen) != 0)
			return H2_CHK_BAD;
		if (lit(value, vlen, "CONNECT", 7))
			rc->fl |= H2_HF_CONNECT;
		else if (lit(value, vlen, "OPTIONS", 7))
			rc->fl |= H2_HF_OPTIONS;
		return H2_CHK_OK;
	case FK_SCHEME:
		if ((!vk && !scheme_ok(value, vlen)) || once(rc, H2_HF_SCHEME, vlen) != 0)
			return H2_CHK_BAD;
		if (lit_ci_letters(value, vlen, "http", 4) || lit_ci_letters(value, vlen, "https", 5))
			rc->fl |= H2_HF_SCHEME_HTTP;
		return H2_CHK_OK;
	case FK_AUTHORITY:
		if (!vk && !auth_check(value, vlen))
			return H2_CHK_BAD;
		return once(rc, H2_HF_AUTHORITY, vlen);
	default:
		return H2_CHK_BAD;
	}
}

int
h2_check_head(const struct nrf_h2_reqchk *rc)
{
	uint32_t req = H2_HF_METHOD | H2_HF_PATH | H2_HF_SCHEME;

	if (rc->fl & H2_HF_CONNECT) {
		/* CONNECT: :authority, no :scheme, no :path */
		if ((rc->fl & (H2_HF_SCHEME | H2_HF_PATH)) || !(rc->fl & H2_HF_AUTHORITY))
			return H2_CHK_BAD;
		return H2_CHK_OK;
	}
	if ((rc->fl & req) != req || !(rc->fl & (H2_HF_AUTHORITY | H2_HF_HOST)))
		return H2_CHK_BAD;
	/* http(s): :path is "/..." (or "*" for OPTIONS) */
	if ((rc->fl & H2_HF_SCHEME_HTTP) && !(rc->fl & H2_HF_PATH_REGULAR) &&
		!((rc->fl & H2_HF_OPTIONS) && (rc->fl & H2_HF_PATH_ASTERISK)))
		return H2_CHK_BAD;
	return H2_CHK_OK;
}

void
h2_reqchk_init(struct nrf_h2_reqchk *rc)
{
	rc->fl = 0;
	rc->status = -1;
	rc->clen = -1;
	rc->rlen = 0;
}

int
h2_check_data(struct nrf_h2_reqchk *rc, size_t n)
{
	rc->rlen += (int64_t)n;
	if (rc->clen != -1 && !(rc->fl & H2_HF_CONNECT) && rc->rlen > rc->clen)
		return H2_CHK_BAD;
	return H2_CHK_OK;
}

int
h2_check_end(const struct nrf_h2_reqchk *rc)
{
	if (rc->clen != -1 && !(rc->fl & H2_HF_CONNECT) && rc->clen != rc->rlen)
		return H2_CHK_BAD;
	return H2_CHK_OK;
}

/* ------------------------------------------------------------------------ */
/* Answers (peer streams)                                                    */

void
h2_anschk_init(struct nrf_h2_reqchk *rc, bool head)
{
	rc->fl = head ? H2_AF_HEAD : 0;
	rc->status = -1;
	rc->clen = -1;
	rc->rlen = 0;
}

/*
 * nghttp2_http_on_header() on a client session: a bad name (which covers
 * upper case) or a bad value (nghttp2_check_header_value_rfc9113() for
 * every name a response may carry) makes the stream malformed, like the
 * rules of http_response_on_header(); all of them end in the same reset,
 * so the order of the tests does not matter. The one field nghttp2 removes
 * without failing is a 204's "content-length: 0" (H2_CHK_DROP).
 */
int
h2_check_answer_field(struct nrf_h2_reqchk *rc, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, bool trailer, unsigned int known)
{
	int64_t n;

	if (nlen == 0)
		return H2_CHK_BAD;
	if (!(known & H2_KNOWN_NAME) && !h2_check_name(name, nlen))
		return H2_CHK_BAD;
	if (!(known & H2_KNOWN_VALUE) && !value_rfc9113(value, vlen))
		return H2_CHK_BAD;
	if (name[0] == ':') {
		/* Only :status, once, first, in a header block (not trailers). */
		if (trailer || (rc->fl & (H2_AF_NO_PSEUDO | H2_AF_STATUS)) ||
			!lit(name, nlen, ":status", 7) || vlen != 3)
			return H2_CHK_BAD;
		rc->fl |= H2_AF_STATUS;
		n = parse_uint(value, vlen);
		if (n == -1 || n == 101)
			return H2_CHK_BAD;
		rc->status = (int32_t)n;
		return H2_CHK_OK;
	}
	switch (field_kind(name, nlen)) {
	case FK_CONN:
		return H2_CHK_BAD;
	case FK_TE:
		if (!lit_ci_letters(value, vlen, "trailers", 8))
			return H2_CHK_BAD;
		break;
	case FK_CLEN:
		if (rc->status == 204) {
			/* Tolerated by nghttp2 when "0", and removed. */
			if (rc->clen != -1 || !lit_ci(value, vlen, "0", 1))
				return H2_CHK_BAD;
			rc->clen = 0;
			return H2_CHK_DROP;
		}
		/* -1 / 100 is 0: no :status yet is not a 1xx. The 2xx answer
		 * to CONNECT (content-length removed) does not occur: nrfwd
		 * never sends CONNECT upstream. */
		if (rc->status / 100 == 1 || rc->clen != -1)
			return H2_CHK_BAD;
		rc->clen = parse_uint(value, vlen);
		if (rc->clen == -1)
			return H2_CHK_BAD;
		break;
	default:
		break;
	}
	rc->fl |= H2_AF_NO_PSEUDO;
	return H2_CHK_OK;
}

int
h2_check_answer_head(struct nrf_h2_reqchk *rc)
{
	if (!(rc->fl & H2_AF_STATUS))
		return H2_CHK_BAD;
	if (rc->status / 100 == 1) {
		/* Interim: the next header block is an answer again. */
		rc->fl = (rc->fl & H2_AF_HEAD) | H2_AF_EXPECT_FINAL;
		rc->clen = -1;
		rc->status = -1;
		return H2_CHK_INTERIM;
	}
	rc->fl &= ~H2_AF_EXPECT_FINAL;
	if ((rc->fl & H2_AF_HEAD) || rc->status == 204 || rc->status == 304)
		rc->clen = 0; /* no body, whatever content-length said */
	return H2_CHK_OK;
}

int
h2_check_answer_data(struct nrf_h2_reqchk *rc, size_t n)
{
	rc->rlen += (int64_t)n;
	if ((rc->fl & H2_AF_EXPECT_FINAL) || (rc->clen != -1 && rc->rlen > rc->clen))
		return H2_CHK_BAD;
	return H2_CHK_OK;
}

int
h2_check_answer_end(const struct nrf_h2_reqchk *rc)
{
	if ((rc->fl & H2_AF_EXPECT_FINAL) || (rc->clen != -1 && rc->clen != rc->rlen))
		return H2_CHK_BAD;
	return H2_CHK_OK;
}
