/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for nrfwd's HPACK decoder (lib/h2/h2_hpack.c), checked
 * against nghttp2's inflater (nghttp2_hd_inflate_hd2(), what the own front
 * and client used before decision 0047) on the same bytes.
 *
 * Input: byte 0 = how blocks are cut into frames (piece size 1 + byte 0,
 * 0 for whole blocks when byte 0 is 255); then blocks, each a 2-byte
 * big-endian length (cut to what is left) and its bytes, decoded in order
 * on one connection. Every invariant below that fails calls abort():
 *
 *   - both decoders accept a block or both refuse it (ours may refuse an
 *     integer of over 5 continuation bytes that nghttp2 half-reads: the
 *     input then stops counting);
 *   - an accepted block gives the same fields, in order, from both;
 *   - then both tables hold the same number of entries and bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_hpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS 4096

struct out {
	size_t n;
	size_t bytes;
	uint64_t hash[MAX_FIELDS];
	bool over;
};

static uint64_t
fnv(const uint8_t *p, size_t n, uint64_t h)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void
add(struct out *o, const uint8_t *n, size_t nl, const uint8_t *v, size_t vl)
{
	uint64_t h = fnv(n, nl, 0xcbf29ce484222325ull);

	h = fnv((const uint8_t *)"\0", 1, h);
	h = fnv(v, vl, h);
	if (o->n == MAX_FIELDS) {
		o->over = true;
		return;
	}
	o->hash[o->n++] = h ^ (nl << 20) ^ vl;
	o->bytes += nl + vl;
}

static int
on_field(void *arg, const struct h2_hpack_field *f)
{
	add(arg, f->name, f->namelen, f->value, f->valuelen);
	return 0;
}

static void *
m_malloc(size_t n, void *u)
{
	(void)u;
	return malloc(n);
}

static void
m_free(void *p, void *u)
{
	(void)u;
	free(p);
}

/* nghttp2 on the pieces of one block: 0 or its error. */
static int
ng_block(nghttp2_hd_inflater *in, const uint8_t *b, size_t len, size_t piece, struct out *o)
{
	size_t off = 0;

	do {
		size_t n = piece == 0 || len - off < piece ? len - off : piece;
		const uint8_t *p = b + off;
		int fin = off + n == len;

		off += n;
		for (;;) {
			nghttp2_nv nv;
			int fl = 0;
			ssize_t rv = nghttp2_hd_inflate_hd2(in, &nv, &fl, p, n, fin);

			if (rv < 0)
				return (int)rv;
			p += rv;
			n -= (size_t)rv;
			if (fl & NGHTTP2_HD_INFLATE_EMIT)
				add(o, nv.name, nv.namelen, nv.value, nv.valuelen);
			if (fl & NGHTTP2_HD_INFLATE_FINAL) {
				nghttp2_hd_inflate_end_headers(in);
				break;
			}
			if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && n == 0)
				break;
		}
	} while (off < len);
	return 0;
}

static int
my_block(struct h2_hpack *d, const uint8_t *b, size_t len, size_t piece, struct out *o)
{
	size_t off = 0;

	do {
		size_t n = piece == 0 || len - off < piece ? len - off : piece;
		int rc = h2_hpack_decode(d, b + off, n, off + n == len, on_field, o);

		off += n;
		if (rc != 0)
			return rc;
	} while (off < len);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct out a, b;
	nghttp2_mem mem = { NULL, m_malloc, m_free, NULL, NULL };
	nghttp2_hd_inflater *in;
	struct h2_hpack d;
	size_t piece, off = 1;

	if (size < 1)
		return 0;
	piece = data[0] == 255 ? 0 : (size_t)data[0] + 1;
	if (nghttp2_hd_inflate_new(&in) != 0)
		abort();
	h2_hpack_init(&d, &mem, H2_HPACK_TABLE_MAX);
	while (off + 2 <= size) {
		size_t len = (size_t)data[off] << 8 | data[off + 1];
		int ng, my;

		off += 2;
		if (len > size - off)
			len = size - off;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ng = ng_block(in, data + off, len, piece, &a);
		my = my_block(&d, data + off, len, piece, &b);
		off += len;
		if (my == H2_HPACK_EINT)
			break; /* the one difference on purpose */
		if ((ng != 0) != (my != 0)) {
			fprintf(stderr, "nghttp2 %d, h2_hpack %d (%s)\n", ng, my,
				my < 0 ? h2_hpack_strerror(my) : "ok");
			abort();
		}
		if (my != 0)
			break;
		if (a.n != b.n || a.bytes != b.bytes || a.over != b.over ||
			memcmp(a.hash, b.hash, a.n * sizeof(a.hash[0])) != 0) {
			fprintf(stderr, "fields differ: nghttp2 %zu, h2_hpack %zu\n", a.n, b.n);
			abort();
		}
		if (nghttp2_hd_inflate_get_num_table_entries(in) != 61 + d.n ||
			nghttp2_hd_inflate_get_dynamic_table_size(in) != d.size) {
			fprintf(stderr, "tables differ\n");
			abort();
		}
	}
	h2_hpack_fini(&d);
	nghttp2_hd_inflate_del(in);
	return 0;
}
