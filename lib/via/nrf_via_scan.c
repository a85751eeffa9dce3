/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scan on the request path. Per field line: one byte pass that counts
 * members, rejects control bytes and unbalanced comments and notices '(';
 * then one hs_scan() of the line, in place when it has no comment, or of a
 * copy in the scratch with every comment byte (parentheses included)
 * turned into a space. Blanking keeps offsets and turns a comment into the
 * separator the match rule already expects, so identities inside comments
 * cannot match and those next to them still do.
 *
 * Lines are scanned one by one rather than joined: a line end is a member
 * end, which confirm() treats like a comma, so the common comment-free line
 * needs no copy.
 *
 * The byte pass has a vector fast path for the common line (no control
 * byte, HTAB, parenthesis or non-ASCII byte): bit masks of commas and
 * spaces, 64 bytes to a word, and the member starts of a word found with
 * one addition (AVX2 when the CPU has it, else SSE2). Any other line goes
 * through the exact scalar pass, which alone decides what is an error.
 * Costs and the choices behind them: docs/decisions/0008-via-scan-cost.md.
 */
#include <stdbool.h>
#include <string.h>

#include <hs/hs.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "nrf_err.h"
#include "nrf_via.h"
#include "nrf_via_internal.h"

struct scan_ctx {
	const struct via_key *key;
	struct nrf_via_result *res;
	const unsigned char *data; /* what hs_scan() is scanning */
	size_t len;
	/* nrf_via_scan_each() only */
	nrf_via_match_fn fn;
	void *fn_ctx;
	uint32_t member;
	bool stopped;
};

static inline bool
sep_before(unsigned char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

static inline bool
sep_after(unsigned char c)
{
	return c == ' ' || c == '\t' || c == ',' || c == '(';
}

/* Eight bytes of text against eight of a key, letters in either case:
 * the key is in lower case and @p cm is its case mask (via_key_case()). */
static inline bool
same8(const unsigned char *t, const char *key, const char *cm)
{
	return (nrf_load64(t) | nrf_load64(cm)) == nrf_load64(key);
}

/*
 * The whole rule after the separator before the literal, for every member
 * that is not exactly "host:port" as the key holds it: a trailing dot,
 * leading zeros in the port, a near miss, a key of fewer than 8 bytes.
 * Out of line, so the common case stays small.
 */
static __attribute__((noinline, cold)) bool
confirm_full(const struct via_key *k, const unsigned char *d, size_t len,
	size_t start)
{
	const unsigned char *h = d + start;
	const char *cm = via_key_case(k);
	size_t i;

	if (len - start < (size_t)k->len + 2)
		return false;
	/* The rest of the host: eight bytes at a time when the key has them,
	 * else byte by byte (a short key whose literal stops in a run of equal
	 * bytes, avoid_flood_tail()). */
	if (k->len > k->lit_len) {
		if (k->len < 8) {
			for (i = k->lit_len; i < k->len; i++)
				if ((h[i] | (unsigned char)cm[i]) != (unsigned char)k->s[i])
					return false;
		} else {
			for (i = k->lit_len; i + 8 < k->len; i += 8)
				if (!same8(h + i, k->s + i, cm + i))
					return false;
			if (!same8(h + k->len - 8, k->s + k->len - 8, cm + k->len - 8))
				return false;
		}
	}
	i = start + k->len;
	if (!k->v6 && d[i] == '.')
		i++;
	if (i == len || d[i] != ':')
		return false;
	i++;
	while (i < len && d[i] == '0')
		i++;
	if (len - i < k->port_len)
		return false;
	if (memcmp(d + i, k->s + k->len + 1, k->port_len) != 0)
		return false;
	i += k->port_len;
	return i == len || sep_after(d[i]);
}

/*
 * Hyperscan found the literal of @p k ending at @p end. True when the whole
 * rule holds there: (^|[ \t,]) host \.? : 0* port ($|[ \t,(]), host
 * compared ignoring ASCII case, no optional dot after an IPv6 literal.
 *
 * Hyperscan matched the first lit_len bytes already. The common member is
 * exactly "host:port" as s holds it: that is compared here, eight bytes at
 * a time, the last eight overlapping; anything else goes to
 * confirm_full().
 */
static inline __attribute__((always_inline)) bool
confirm(const struct via_key *k, const unsigned char *d, size_t len, size_t end)
{
	size_t start = end - k->lit_len;
	size_t full = via_key_full(k);
	const unsigned char *h = d + start;
	const char *cm = via_key_case(k);
	size_t i;

	if (start > 0 && !sep_before(d[start - 1]))
		return false;
	if (NRF_UNLIKELY(full < 8 || len - start < full))
		return confirm_full(k, d, len, start);
	for (i = k->lit_len; i + 8 < full; i += 8)
		if (!same8(h + i, k->s + i, cm + i))
			return confirm_full(k, d, len, start);
	if (!same8(h + full - 8, k->s + full - 8, cm + full - 8))
		return confirm_full(k, d, len, start);
	i = start + full;
	return i == len || sep_after(d[i]);
}

static inline __attribute__((always_inline)) bool
record(struct scan_ctx *c, unsigned int id, unsigned long long to)
{
	const struct via_key *k = &c->key[id];

	if (!confirm(k, c->data, c->len, (size_t)to))
		return false;
	c->res->hits++;
	if (k->tag == VIA_TAG_SELF)
		c->res->self = true;
	else
		c->res->peers[k->tag >> 6] |= UINT64_C(1) << (k->tag & 63);
	return true;
}

static int
on_match(unsigned int id, unsigned long long from, unsigned long long to,
	unsigned int flags, void *arg)
{
	(void)from;
	(void)flags;
	record(arg, id, to);
	return 0;
}

static int
on_match_each(unsigned int id, unsigned long long from, unsigned long long to,
	unsigned int flags, void *arg)
{
	struct scan_ctx *c = arg;

	(void)from;
	(void)flags;
	if (!record(c, id, to))
		return 0;
	/* A callback that says stop stops the reports, not the scan: res
	 * comes out the same as nrf_via_scan()'s either way. */
	if (c->fn != NULL && !c->stopped && c->fn(c->fn_ctx, id, c->member) != 0)
		c->stopped = true;
	return 0;
}

/*
 * Count the members of one line and validate it. Members counted before an
 * error are added too, so the result shows how far the scan got.
 */
static int
count_line(const unsigned char *p, size_t len, uint32_t *members,
	bool *comments)
{
	uint32_t n = 0;
	bool content = false;
	size_t end;

	for (size_t i = 0; i < len; i++) {
		unsigned int c = nrf_via_cls[p[i]];

		if (NRF_LIKELY(c <= VIA_C_BSLASH)) {
			content = true;
			continue;
		}
		switch (c) {
		case VIA_C_WS:
			break;
		case VIA_C_COMMA:
			n += content;
			content = false;
			break;
		case VIA_C_OPEN:
			end = nrf_via_comment_end(p, len, i);
			if (end == 0)
				goto bad;
			*comments = true;
			content = true;
			i = end - 1;
			break;
		default: /* ')' outside a comment, or a control byte */
			goto bad;
		}
	}
	*members += n + content;
	return 0;
bad:
	*members += n;
	return NRF_EPARSE;
}

#if defined(__SSE2__)
/*
 * The fast pass, for a line of at least 16 bytes with no control byte,
 * HTAB, DEL, parenthesis or byte >= 0x80 (any of those sends the line to
 * the exact pass, count_line(), which alone decides errors). It reads the
 * line in vectors and turns it into bit masks, 64 bytes to a word: c has
 * the commas, sp the spaces. A member starts where the first byte that is
 * not a space after a comma (or after the line start) is not a comma
 * either; word_members() finds those bytes for a whole word at once with
 * one addition, so the cost does not depend on how many members there are
 * and nothing branches on the bytes.
 */

/* Bytes that send a line to the exact pass: below 0x20 (HTAB and other
 * controls), DEL, '(' and ')', and bytes >= 0x80. One signed compare
 * takes the first three ranges: x + 1 wraps DEL and bytes >= 0x80 below
 * 0x21, where the controls already are. */
static inline __m128i
odd16(__m128i v)
{
	const __m128i v_21 = _mm_set1_epi8(0x21);
	const __m128i v_one = _mm_set1_epi8(1);
	const __m128i v_paren = _mm_set1_epi8(')'); /* '(' | 1 == ')' */

	return _mm_or_si128(_mm_cmpgt_epi8(v_21, _mm_add_epi8(v, v_one)),
		_mm_cmpeq_epi8(_mm_or_si128(v, v_one), v_paren));
}

static inline uint32_t
eq16(__m128i v, char c)
{
	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}

static inline uint32_t
popcount64(uint64_t x)
{
	uint32_t n = 0;

	/* Members are sparse: a few bits per 64 bytes. */
	for (; x != 0; x &= x - 1)
		n++;
	return n;
}

/*
 * Members that start in one word of the line: @p c commas, @p sp spaces,
 * @p valid the bytes of the line. *carry: the word's first byte follows a
 * comma, or a run of spaces that follows one (1 for the line start);
 * updated for the next word.
 *
 * a marks the bytes right after a comma. Where such a byte is a space,
 * adding it to sp carries through the run of spaces and sets the byte
 * after the run; elsewhere the byte itself is the one after the comma.
 */
static inline uint32_t
word_members(uint64_t c, uint64_t sp, uint64_t valid, uint64_t *carry,
	uint32_t (*pop)(uint64_t))
{
	uint64_t a = (c << 1) | *carry;
	uint64_t sum = sp + (a & sp);
	uint64_t first = ((sum & ~sp) | (a & ~sp)) & valid & ~c & ~sp;

	*carry = (c >> 63) | (sum < sp);
	return pop(first);
}

static int
count_fast_sse2(const unsigned char *p, size_t len, uint32_t *members)
{
	__m128i odd = _mm_setzero_si128(), v[4];
	uint64_t carry = 1, c, sp;
	uint32_t n = 0;
	size_t i, rem;

	if (len < 16)
		return -1; /* the exact pass is as quick on so few bytes */
	for (i = 0; i + 64 <= len; i += 64) {
		c = sp = 0;
		for (int k = 0; k < 4; k++) {
			v[k] = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16 * k));
			odd = _mm_or_si128(odd, odd16(v[k]));
			c |= (uint64_t)eq16(v[k], ',') << (16 * k);
			sp |= (uint64_t)eq16(v[k], ' ') << (16 * k);
		}
		n += word_members(c, sp, ~UINT64_C(0), &carry, popcount64);
	}
	rem = len - i;
	if (rem > 0 && rem < 16) {
		/* The rest of the line, in the 16 bytes that end it. */
		v[0] = _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16));
		odd = _mm_or_si128(odd, odd16(v[0]));
		c = eq16(v[0], ',') >> (16 - rem);
		sp = eq16(v[0], ' ') >> (16 - rem);
		n += word_members(c, sp, (UINT64_C(1) << rem) - 1, &carry, popcount64);
	} else if (rem > 0) {
		/* The rest of the line in steps of 16, the last one ending with
		 * the line and overlapping the one before. */
		c = sp = 0;
		for (size_t at = 0; at < rem; at += 16) {
			size_t from = at + 16 <= rem ? at : rem - 16;
			__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + i + from));

			odd = _mm_or_si128(odd, odd16(w));
			c |= (uint64_t)eq16(w, ',') << from;
			sp |= (uint64_t)eq16(w, ' ') << from;
		}
		n += word_members(c, sp, (UINT64_C(1) << rem) - 1, &carry, popcount64);
	}
	if (_mm_movemask_epi8(odd) != 0)
		return -1;
	*members += n;
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define VIA_HAVE_AVX2_PATH 1
/*
 * The same pass 32 bytes to a vector, for CPUs with AVX2 (chosen at run
 * time, count_fast()): half the steps, and popcnt.
 */
#define VIA_AVX2 __attribute__((target("avx2,popcnt")))

/* The constants of the AVX2 pass: 0x21 (one past ' '), 1, ')' and ','. */
static const uint8_t avx2_k[4][32] __attribute__((aligned(32))) = {
	[0] = {[0 ... 31] = 0x21},
	[1] = {[0 ... 31] = 1},
	[2] = {[0 ... 31] = ')'},
	[3] = {[0 ... 31] = ','},
};

static inline VIA_AVX2 __m256i
avx2_const(int i)
{
	return _mm256_load_si256((const __m256i *)(const void *)avx2_k[i]);
}

static inline VIA_AVX2 __m256i
odd32(__m256i v)
{
	return _mm256_or_si256(
		_mm256_cmpgt_epi8(avx2_const(0), _mm256_add_epi8(v, avx2_const(1))),
		_mm256_cmpeq_epi8(_mm256_or_si256(v, avx2_const(1)), avx2_const(2)));
}

static inline VIA_AVX2 uint64_t
commas32(__m256i v)
{
	return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, avx2_const(3)));
}

/* ' ' is 0x21 - 1. */
static inline VIA_AVX2 uint64_t
spaces32(__m256i v)
{
	return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
		_mm256_add_epi8(v, avx2_const(1)), avx2_const(0)));
}

static inline VIA_AVX2 uint32_t
popcnt64(uint64_t x)
{
	return (uint32_t)__builtin_popcountll(x);
}

static inline VIA_AVX2 __m256i
load32(const unsigned char *p)
{
	return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

static VIA_AVX2 int
count_fast_avx2(const unsigned char *p, size_t len, uint32_t *members)
{
	__m256i odd = _mm256_setzero_si256(), v0, v1;
	uint64_t carry = 1, c, sp;
	uint32_t n = 0;
	size_t i, rem;

	if (len < 32)
		return count_fast_sse2(p, len, members);
	for (i = 0; i + 64 <= len; i += 64) {
		v0 = load32(p + i);
		v1 = load32(p + i + 32);
		odd = _mm256_or_si256(odd, _mm256_or_si256(odd32(v0), odd32(v1)));
		c = commas32(v0) | commas32(v1) << 32;
		sp = spaces32(v0) | spaces32(v1) << 32;
		n += word_members(c, sp, ~UINT64_C(0), &carry, popcnt64);
	}
	rem = len - i;
	if (rem > 32) {
		/* The rest of the line: the 32 bytes that start it and the 32
		 * that end the line, overlapping. */
		v0 = load32(p + i);
		v1 = load32(p + len - 32);
		odd = _mm256_or_si256(odd, _mm256_or_si256(odd32(v0), odd32(v1)));
		c = commas32(v0) | commas32(v1) << (rem - 32);
		sp = spaces32(v0) | spaces32(v1) << (rem - 32);
		n += word_members(c, sp, (UINT64_C(1) << rem) - 1, &carry, popcnt64);
	} else if (rem > 0) {
		/* The rest of the line in the 32 bytes that end it. */
		v1 = load32(p + len - 32);
		odd = _mm256_or_si256(odd, odd32(v1));
		c = commas32(v1) >> (32 - rem);
		sp = spaces32(v1) >> (32 - rem);
		n += word_members(c, sp, (UINT64_C(1) << rem) - 1, &carry, popcnt64);
	}
	if (_mm256_movemask_epi8(odd) != 0)
		return -1;
	*members += n;
	return 0;
}

bool nrf_via_fast_avx2;

__attribute__((constructor)) static void
pick_count_fast(void)
{
	__builtin_cpu_init();
	nrf_via_fast_avx2 = __builtin_cpu_supports("avx2") &&
		__builtin_cpu_supports("popcnt");
}
#endif

/* Member count of a plain line (see above), or -1 for the exact pass. */
static inline int
count_fast(const unsigned char *p, size_t len, uint32_t *members)
{
#if defined(VIA_HAVE_AVX2_PATH)
	if (NRF_LIKELY(nrf_via_fast_avx2))
		return count_fast_avx2(p, len, members);
#endif
	return count_fast_sse2(p, len, members);
}
#else
static int
count_fast(const unsigned char *p, size_t len, uint32_t *members)
{
	(void)p;
	(void)len;
	(void)members;
	return -1;
}
#endif
/* Copy a validated line into @p buf with its comments blanked. */
static const unsigned char *
blank_comments(const unsigned char *p, size_t len, char *buf)
{
	memcpy(buf, p, len);
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '(') {
			size_t end = nrf_via_comment_end(p, len, i);

			memset(buf + i, ' ', end - i);
			i = end - 1;
		}
	}
	return (const unsigned char *)buf;
}

/* 144 bytes on every request: vector stores, not a rep-string setup. */
static inline void
zero_result(struct nrf_via_result *res)
{
#if defined(__SSE2__)
	__m128i *w = (__m128i *)(void *)res;
	const __m128i z = _mm_setzero_si128();

	/* Spelt out: gcc turns a loop of these back into "rep stos". */
	_Static_assert(sizeof(*res) == 9 * sizeof(__m128i), "result size");
	_mm_storeu_si128(w + 0, z);
	_mm_storeu_si128(w + 1, z);
	_mm_storeu_si128(w + 2, z);
	_mm_storeu_si128(w + 3, z);
	_mm_storeu_si128(w + 4, z);
	_mm_storeu_si128(w + 5, z);
	_mm_storeu_si128(w + 6, z);
	_mm_storeu_si128(w + 7, z);
	_mm_storeu_si128(w + 8, z);
#else
	memset(res, 0, sizeof(*res));
#endif
}

/* The checks and set-up of both scans: @p res zeroed, @p c's key and
 * result set when the arguments and lines are valid. */
static int
scan_begin(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res,
	struct scan_ctx *c)
{
	int rc;

	if (res == NULL)
		return NRF_EINVAL;
	zero_result(res);
	if (db == NULL || s == NULL)
		return NRF_EINVAL;
	rc = nrf_via_check_lines(lines, n_lines);
	if (rc != 0)
		return rc;
	c->key = db->key;
	c->res = res;
	return 0;
}

/* True when reading VIA_HS_OVERREAD bytes past p[len - 1] could fault.
 * 4096 is the smallest page size, so the test is safe for larger ones. */
static inline bool
near_page_end(const unsigned char *p, size_t len)
{
	return (((uintptr_t)(p + len) - 1) & 4095) >= 4096 - VIA_HS_OVERREAD;
}

static inline __attribute__((always_inline)) int
hs_run(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const unsigned char *p, size_t len, match_event_handler fn,
	struct scan_ctx *c)
{
	hs_error_t e;

	if (NRF_UNLIKELY(near_page_end(p, len)) &&
			(p < (const unsigned char *)s->buf ||
			 p >= (const unsigned char *)s->buf + sizeof(s->buf))) {
		memcpy(s->buf, p, len);
		p = (const unsigned char *)s->buf;
	}
	c->data = p;
	c->len = len;
	e = hs_scan(db->hs, (const char *)p, (unsigned int)len, 0, s->hs, fn, c);
	return e == HS_SUCCESS ? 0 : NRF_EMATCHER;
}

/* Count and validate one line; *comments tells whether it needs blanking. */
static inline int
check_line(const unsigned char *p, size_t len, uint32_t *members,
	bool *comments)
{
	*comments = false;
	if (NRF_LIKELY(count_fast(p, len, members) == 0))
		return 0;
	return count_line(p, len, members, comments);
}

int
nrf_via_scan(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res)
{
	struct scan_ctx c;
	int rc;

	rc = scan_begin(db, s, lines, n_lines, res, &c);
	if (rc != 0)
		return rc;
	for (size_t l = 0; l < n_lines; l++) {
		const unsigned char *p = (const unsigned char *)lines[l].p;
		size_t len = lines[l].len;
		uint32_t before = res->members;
		bool comments;

		rc = check_line(p, len, &res->members, &comments);
		if (rc != 0)
			return rc;
		if (res->members == before)
			continue; /* only OWS and commas */
		if (comments)
			p = blank_comments(p, len, s->buf);
		rc = hs_run(db, s, p, len, on_match, &c);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * nrf_via_scan_each() scans member by member: every match of one hs_scan()
 * then belongs to one member, whatever order Hyperscan reports in. A
 * member's bytes without its commas are still a whole member to confirm(),
 * the slice ends standing in for the commas. Slower than nrf_via_scan(),
 * which is why the request path does not use it.
 */
static int
scan_members(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const unsigned char *p, size_t len, struct scan_ctx *c)
{
	size_t i = 0;
	int rc;

	while (i < len) {
		size_t start = i;
		bool content = false, comments = false;

		while (i < len && p[i] != ',') {
			unsigned int cls = nrf_via_cls[p[i]];

			if (cls == VIA_C_OPEN) {
				/* The line was validated: the comment is closed. */
				i = nrf_via_comment_end(p, len, i);
				content = comments = true;
				continue;
			}
			if (cls != VIA_C_WS)
				content = true;
			i++;
		}
		if (content) {
			const unsigned char *m = p + start;

			if (comments)
				m = blank_comments(m, i - start, s->buf);
			rc = hs_run(db, s, m, i - start, on_match_each, c);
			if (rc != 0)
				return rc;
			c->member++;
		}
		i++; /* the comma */
	}
	return 0;
}

int
nrf_via_scan_each(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res,
	nrf_via_match_fn fn, void *ctx)
{
	struct scan_ctx c;
	int rc;

	rc = scan_begin(db, s, lines, n_lines, res, &c);
	if (rc != 0)
		return rc;
	c.fn = fn;
	c.fn_ctx = ctx;
	c.member = 0;
	c.stopped = false;
	for (size_t l = 0; l < n_lines; l++) {
		const unsigned char *p = (const unsigned char *)lines[l].p;
		size_t len = lines[l].len;
		bool comments;

		/* Same validation and count as nrf_via_scan(), line by line,
		 * so both leave the same result on the same error. */
		rc = check_line(p, len, &res->members, &comments);
		if (rc != 0)
			return rc;
		rc = scan_members(db, s, p, len, &c);
		if (rc != 0)
			return rc;
	}
	return 0;
}
