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
 * The byte pass has an SSE2 fast path for the common line (no control
 * byte, HTAB, parenthesis or non-ASCII byte): it checks 16 bytes at a time
 * and looks only at the commas one by one. Any other line goes through
 * the exact scalar pass, which alone decides what is an error.
 */
#include <stdbool.h>
#include <string.h>

#include <hs/hs.h>

#if defined(__SSE2__)
#include <emmintrin.h>
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

/* Eight bytes as one word, at any alignment. */
static inline uint64_t
load8(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ASCII upper case to lower case in eight bytes at once; bytes >= 0x80
 * are left alone (obs-text never equals an identity byte). */
static inline uint64_t
lower8(uint64_t x)
{
	const uint64_t ones = UINT64_C(0x0101010101010101);
	uint64_t h = x & (0x7f * ones);
	uint64_t ge_a = h + (0x80 - 'A') * ones;
	uint64_t gt_z = h + (0x80 - 'Z' - 1) * ones;

	return x | ((ge_a & ~gt_z & ~x & (0x80 * ones)) >> 2);
}

/*
 * Hyperscan found the literal of @p k ending at @p end. True when the whole
 * rule holds there: (^|[ \t,]) host \.? : 0* port ($|[ \t,(]), host
 * compared ignoring ASCII case, no optional dot after an IPv6 literal.
 */
static inline bool
confirm(const struct via_key *k, const unsigned char *d, size_t len, size_t end)
{
	size_t start = end - k->lit_len;
	const unsigned char *h = d + start;
	size_t i;

	if (start > 0 && !sep_before(d[start - 1]))
		return false;
	if (len - start < (size_t)k->len + 2)
		return false;
	/*
	 * Hyperscan matched the first lit_len bytes already; compare the rest
	 * eight at a time, the last eight overlapping if need be. A key of
	 * fewer than 8 bytes longer than its literal (one ending in a run of
	 * equal bytes, avoid_flood_tail()) is compared byte by byte.
	 */
	if (k->len > k->lit_len) {
		if (NRF_UNLIKELY(k->len < 8)) {
			for (i = k->lit_len; i < k->len; i++)
				if ((h[i] | ((h[i] >= 'A' && h[i] <= 'Z') ? 0x20 : 0)) !=
						(unsigned char)k->s[i])
					return false;
		} else {
			for (i = k->lit_len; i + 8 < k->len; i += 8)
				if (lower8(load8(h + i)) != load8(k->s + i))
					return false;
			if (lower8(load8(h + k->len - 8)) != load8(k->s + k->len - 8))
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
	for (size_t j = 0; j < k->port_len; j++)
		if (d[i + j] != (unsigned char)k->port[j])
			return false;
	i += k->port_len;
	return i == len || sep_after(d[i]);
}

static inline bool
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
 * True when the list element that starts at p[i] is a member: its first
 * byte that is not a space exists and is not a comma. Each space is looked
 * at for one comma only, so all calls for a line are O(line).
 */
static inline uint32_t
member_at(const unsigned char *p, size_t len, size_t i)
{
	while (i < len && p[i] == ' ')
		i++;
	return i < len && p[i] != ',';
}

/*
 * Member count of a line of at least 16 bytes with no control byte, HTAB,
 * DEL, parenthesis or byte >= 0x80, or -1 when the line has one of those
 * (then the exact pass decides). 16 bytes per step: the bytes that need
 * the exact pass are or-ed into one vector tested at the end, and only
 * the commas are looked at one by one.
 */
static int
count_fast(const unsigned char *p, size_t len, uint32_t *members)
{
	const __m128i v_comma = _mm_set1_epi8(',');
	const __m128i v_20 = _mm_set1_epi8(0x20);
	const __m128i v_del = _mm_set1_epi8(0x7f);
	const __m128i v_one = _mm_set1_epi8(1);
	const __m128i v_paren = _mm_set1_epi8(')'); /* '(' | 1 == ')' */
	__m128i odd = _mm_setzero_si128();
	uint32_t n;
	size_t i;

	if (len < 16)
		return -1; /* the exact pass is as quick on so few bytes */
	n = member_at(p, len, 0);
	for (i = 0; i < len; i += 16) {
		/* The last step reads the 16 bytes that end the line and
		 * skips the commas of the bytes already seen. */
		size_t at = i + 16 <= len ? i : len - 16;
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + at));
		unsigned int commas = (unsigned int)_mm_movemask_epi8(
			_mm_cmpeq_epi8(v, v_comma)) & (0xffffu << (i - at));

		/* signed: < 0x20 also catches bytes >= 0x80 */
		odd = _mm_or_si128(odd, _mm_or_si128(_mm_cmplt_epi8(v, v_20),
			_mm_or_si128(_mm_cmpeq_epi8(v, v_del),
				_mm_cmpeq_epi8(_mm_or_si128(v, v_one), v_paren))));
		for (; commas != 0; commas &= commas - 1)
			n += member_at(p, len, at + (size_t)__builtin_ctz(commas) + 1);
	}
	if (_mm_movemask_epi8(odd) != 0)
		return -1;
	*members += n;
	return 0;
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

static int
scan_begin(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res)
{
	if (res == NULL)
		return NRF_EINVAL;
	zero_result(res);
	if (db == NULL || s == NULL)
		return NRF_EINVAL;
	return nrf_via_check_lines(lines, n_lines);
}

/* True when reading VIA_HS_OVERREAD bytes past p[len - 1] could fault.
 * 4096 is the smallest page size, so the test is safe for larger ones. */
static inline bool
near_page_end(const unsigned char *p, size_t len)
{
	return (((uintptr_t)(p + len) - 1) & 4095) >= 4096 - VIA_HS_OVERREAD;
}

static int
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

	rc = scan_begin(db, s, lines, n_lines, res);
	if (rc != 0)
		return rc;
	c.key = db->key;
	c.res = res;
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

	rc = scan_begin(db, s, lines, n_lines, res);
	if (rc != 0)
		return rc;
	c.key = db->key;
	c.res = res;
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
