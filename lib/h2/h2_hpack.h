/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_HPACK_H
#define NRF_H2_HPACK_H

/*
 * nrfwd's HPACK decoder (RFC 7541), used by the own server (h2_srv.c) and
 * client (h2_cli.c) to decode the header blocks they receive. Internal to
 * lib/h2 (decision 0047).
 *
 * One decoder per connection: its dynamic table, and what a header block
 * cut at a frame boundary left undecoded. A block is fed frame by frame
 * (HEADERS, then each CONTINUATION) to h2_hpack_decode(), @p final set
 * with the last one (END_HEADERS); each field is handed to the caller's
 * callback as soon as its bytes are all there, in order.
 *
 * Limits, those of the nghttp2 inflater it replaces (nghttp2 1.52,
 * nghttp2_hd_inflate_new2()): the dynamic table is at most
 * H2_HPACK_TABLE_MAX (4 096) bytes, what nrfwd leaves
 * SETTINGS_HEADER_TABLE_SIZE at (it never sends it); a string literal's
 * encoded length at most H2_HPACK_STR_MAX (65 536) bytes. How much a whole
 * block may decode to is the caller's to count (header-list limits, HPACK
 * bombs): every field reaches the callback.
 *
 * Thread: a decoder belongs to its connection's worker; no locks, no
 * globals written after h2_hpack_init()'s one-time table set-up (which is
 * thread safe).
 *
 * Memory: through the nghttp2_mem given at init (the worker's h2_mem pool,
 * so it is accounted as HTTP/2 memory). No allocation per field: the
 * dynamic table's bytes are allocated at the first insertion (512 bytes,
 * doubled when entries no longer fit, at most 2 x H2_HPACK_TABLE_MAX); Huffman-coded strings decode into a per-decoder scratch buffer
 * and a field cut at a frame boundary is kept in a per-decoder tail buffer,
 * both grown on demand (bounded by H2_HPACK_STR_MAX) and given back at the
 * end of a block when they grew past H2_HPACK_KEEP bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#define H2_HPACK_TABLE_MAX 4096u
#define H2_HPACK_STR_MAX 65536u
#define H2_HPACK_KEEP 4096u
/* Entries of at least 32 bytes each (RFC 7541 §4.1) in H2_HPACK_TABLE_MAX. */
#define H2_HPACK_ENTS (H2_HPACK_TABLE_MAX / 32u)

/* Errors of h2_hpack_decode(), all negative; every one but H2_HPACK_ENOMEM
 * is the peer's COMPRESSION_ERROR (RFC 7541 §2.3.3, §4.2, §5.1, §5.2). */
enum {
	H2_HPACK_EINDEX = -1,   /* index 0, or past the static + dynamic table */
	H2_HPACK_EINT = -2,     /* integer of over 5 continuation bytes */
	H2_HPACK_ESTRLEN = -3,  /* string literal longer than H2_HPACK_STR_MAX */
	H2_HPACK_EHUFF = -4,    /* EOS in a string, bad or over-long padding */
	H2_HPACK_ESIZE = -5,    /* table size update over the limit, or not at
				 * the start of a block */
	H2_HPACK_ETRUNC = -6,   /* the block ends inside a field */
	H2_HPACK_EBAD = -7,     /* an earlier call failed or was stopped */
	H2_HPACK_ENOMEM = -8,   /* scratch or table memory could not be had */
};

/* h2_hpack_field.known: bytes of the static table (RFC 7541 Appendix A),
 * constant data that stays valid for the life of the process; its names
 * are valid field names, its values valid for their names. (The same bits
 * as h2_int.h's H2_KNOWN_*, what nghttp2_rcbuf_is_static() told.) */
#define H2_HPACK_STATIC_NAME 0x1u
#define H2_HPACK_STATIC_VALUE 0x2u

/* A decoded field; its bytes stay valid until the callback returns (for
 * ever when @p known says they are the static table's). */
struct h2_hpack_field {
	const uint8_t *name;
	const uint8_t *value;
	size_t namelen;
	size_t valuelen;
	uint8_t known; /* H2_HPACK_STATIC_*: the name, or both, static */
	bool never;    /* literal never indexed (RFC 7541 §6.2.3) */
};

/*
 * Called with each decoded field, in order. Return 0 to go on; any other
 * value stops decoding: h2_hpack_decode() returns it and the decoder is
 * unusable from then on (H2_HPACK_EBAD).
 */
typedef int h2_hpack_field_fn(void *arg, const struct h2_hpack_field *f);

struct h2_hpack_ent {
	uint16_t off;  /* of its name in tb; its value follows */
	uint16_t nl;
	uint16_t vl;
	uint8_t sname; /* its name is static entry sname's (0: not static) */
};

struct h2_hpack {
	const nghttp2_mem *mem;
	/* Dynamic table: entries in a ring (newest at ent[head]), their
	 * names and values back to back in tb from the oldest's, wrapping to
	 * tb[0] (at wend) when the next one does not fit at the end. */
	struct h2_hpack_ent ent[H2_HPACK_ENTS];
	uint32_t head, n;
	uint32_t size;     /* RFC 7541 §4.1 size of the entries */
	uint32_t max;      /* current maximum (size updates) */
	uint32_t limit;    /* SETTINGS_HEADER_TABLE_SIZE: at most this */
	uint8_t *tb;       /* NULL until the first insertion */
	uint32_t tb_cap;   /* its bytes: 512, doubled as needed up to 2 x limit */
	uint32_t hi;       /* end of the newest entry's bytes */
	uint32_t wend;     /* 0, or where the bytes above the wrap end */
	/* Huffman-decoded strings of the field at hand. */
	uint8_t *sb;
	size_t sb_cap;
	/* The start of a field cut at the end of the last input. */
	uint8_t *tl;
	size_t tl_len, tl_cap;
	bool fields;       /* a field of this block was decoded: no more size
			    * updates until its end */
	bool bad;
};

/*
 * Set up @p d with an empty dynamic table of at most @p limit bytes
 * (at most H2_HPACK_TABLE_MAX; larger is clamped), memory from @p mem
 * (kept, must outlive @p d). The first call also builds the process's
 * Huffman decoding table. Never fails; allocates nothing.
 */
void h2_hpack_init(struct h2_hpack *d, const nghttp2_mem *mem, uint32_t limit);

/* Give back what @p d holds. @p d may be zeroed memory never initialised. */
void h2_hpack_fini(struct h2_hpack *d);

/*
 * Decode @p len bytes of a header block: the fields they complete go to
 * @p fn; the bytes of a field cut at the end of @p in are kept for the
 * next call, unless @p final (the block's last bytes): then a cut field
 * is H2_HPACK_ETRUNC and the block ends (table size updates allowed
 * again).
 *
 * @return 0; a callback's non-zero value; or a negative H2_HPACK_E*. After
 * anything but 0 the decoder is unusable (every later call returns
 * H2_HPACK_EBAD): its table no longer follows the peer's.
 */
int h2_hpack_decode(struct h2_hpack *d, const uint8_t *in, size_t len, bool final,
	h2_hpack_field_fn *fn, void *arg);

/* A short English description of a negative H2_HPACK_E* code. */
const char *h2_hpack_strerror(int rc);

#endif /* NRF_H2_HPACK_H */
