/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_VIA_INTERNAL_H
#define NRF_VIA_INTERNAL_H

/*
 * Private to lib/via, not for other modules: the layout of the database and
 * the scratch (built in nrf_via_db.c, read by the scan), and the byte
 * classes and comment walker that the parser and the scan share, so both
 * agree byte for byte on what a comment, a separator and a member are.
 * The unit tests' deleters look at the Hyperscan objects inside.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hs/hs.h>

#include "nrf_err.h"
#include "nrf_via.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest identity host after normalisation (a DNS name is at most 253). */
#define VIA_HOST_MAX 255

/*
 * Shortest literal when the host is that long: shorter ones fire on too
 * many unrelated bytes. A literal may still be shorter than the host and
 * than this when it has to stop inside a run of equal bytes
 * (VIA_LIT_RUN_MAX); confirm() compares such a short key byte by byte.
 */
#define VIA_LIT_MIN 8

/*
 * Longest run of one byte a literal may end in: Hyperscan turns a longer
 * one into a suffix engine and leaves its pure-literal runtime
 * (nrf_via_db.c, avoid_flood_tail()).
 */
#define VIA_LIT_RUN_MAX 2

/* via_key.tag of an NRF_VIA_SELF identity; peers store their index. */
#define VIA_TAG_SELF UINT16_MAX

/*
 * What the match callback needs to confirm one identity at a literal hit,
 * packed so one hit touches one cache line.
 */
struct via_key {
	const char *s;     /* "host:port", host in lower case ("[v6]:port"),
	                    * port in decimal without leading zero */
	uint16_t len;      /* bytes of host in s */
	uint16_t lit_len;  /* bytes of s given to Hyperscan as the literal */
	uint16_t tag;      /* VIA_TAG_SELF or the peer index */
	uint8_t v6;        /* no optional trailing dot */
	uint8_t port_len;  /* s[len] is ':', then port_len digits */
};

/* Bytes of "host:port" in k->s. */
static inline size_t
via_key_full(const struct via_key *k)
{
	return (size_t)k->len + 1 + k->port_len;
}

/*
 * The case mask that follows k->s and its NUL: 0x20 where s holds a
 * letter, 0 elsewhere, so that (text | mask) == s compares a letter in
 * either case and every other byte exactly.
 */
static inline const char *
via_key_case(const struct via_key *k)
{
	return k->s + via_key_full(k) + 1;
}

struct nrf_via_db {
	hs_database_t *hs;
	size_t n;
	struct via_key *key;           /* per id */
	struct nrf_via_identity *ids;  /* as stored; host points into hosts */
	char *hosts;
};

/*
 * Hyperscan 5.4's AVX-512 VBMI literal matcher reads up to 32 bytes past
 * the end of the data it scans (VectorCamp/vectorscan#322, same code in
 * intel/hyperscan). Data that ends this close to a page end is scanned
 * from a copy in the scratch, which has this much zeroed slack after it.
 */
#define VIA_HS_OVERREAD 64

struct nrf_via_scratch {
	hs_scratch_t *hs;
	/* Lines with comments are copied here with the comments blanked;
	 * lines near a page end are copied here as they are. */
	char buf[NRF_VIA_MAX_BYTES + VIA_HS_OVERREAD];
};

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The scan's fast byte pass runs its AVX2 variant: set at load time when
 * the CPU has AVX2 and popcnt. Tests clear it to run the SSE2 variant.
 */
extern bool nrf_via_fast_avx2;
#endif

/* Byte classes of a Via field value outside a comment. */
enum {
	VIA_C_PLAIN = 0, /* part of a token, a received-by, or obs-text */
	VIA_C_BSLASH,    /* '\\': quoted-pair inside a comment, plain outside */
	VIA_C_WS,        /* SP, HTAB */
	VIA_C_COMMA,
	VIA_C_OPEN,      /* '(' */
	VIA_C_CLOSE,     /* ')' */
	VIA_C_CTL,       /* NUL, other controls except HTAB, DEL */
};

extern const uint8_t nrf_via_cls[256];

/*
 * p[i] is '('. Returns the index just past the matching ')', or 0 when the
 * comment is unbalanced or holds a control byte (also after a backslash).
 */
size_t nrf_via_comment_end(const unsigned char *p, size_t len, size_t i);

/*
 * Check the size limits shared by parse and scan (inline: it is on every
 * request).
 * @return 0, NRF_EINVAL (NULL line with a length) or NRF_ETOOBIG.
 */
static inline int
nrf_via_check_lines(const struct nrf_slice *lines, size_t n_lines)
{
	size_t total = 0;

	if (n_lines > 0 && lines == NULL)
		return NRF_EINVAL;
	/* nrf_via_member.line is 16 bits; that many lines is abuse anyway. */
	if (n_lines > (size_t)UINT16_MAX + 1)
		return NRF_ETOOBIG;
	for (size_t i = 0; i < n_lines; i++) {
		if (lines[i].p == NULL && lines[i].len > 0)
			return NRF_EINVAL;
		/* Compared this way round so a huge len cannot wrap the sum. */
		if (lines[i].len > NRF_VIA_MAX_BYTES - total)
			return NRF_ETOOBIG;
		total += lines[i].len;
	}
	return 0;
}

/*
 * True when @p c may appear in an identity host (not IPv6). Also used for
 * the member nrfwd appends, so what we write is what our database finds.
 */
int nrf_via_host_char(unsigned char c);

/*
 * Normalise an identity host: strip brackets or one trailing dot, lower
 * case, check every character (docs/via.md, "Identities"); no empty DNS
 * label. @p dst holds VIA_HOST_MAX + 1 bytes.
 * @return the length written (NUL-terminated), or -1 when @p host cannot
 *   appear in a received-by. *v6 tells whether it is an IPv6 literal.
 */
int nrf_via_host_normalise(const char *host, char *dst, int *v6);

#ifdef __cplusplus
}
#endif
#endif /* NRF_VIA_INTERNAL_H */
