/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The output queue of nrfwd's own HTTP/2 client (h2_cli.c) and server
 * (h2_srv.c): control frames and HEADERS are encoded straight into it, in
 * the order the protocol needs them written; the fill functions copy it
 * out ahead of any DATA. One buffer per connection, grown by doubling,
 * counted in the context's HTTP/2 memory and given back when it grew past
 * 64 KiB and emptied.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_frame.h"
#include "h2_int.h"
#include "nrf_err.h"

/* A queue this large is freed once it empties (a burst of answers'
 * HEADERS): the next frames start a small one again. */
#define OQ_KEEP (64u * 1024)

uint8_t *
h2_oq_reserve(struct nrf_h2_conn *c, size_t n)
{
	struct h2_oq *q = &c->oq;
	size_t cap;
	uint8_t *b;

	if (q->len + n <= q->cap)
		return q->buf + q->len;
	if (q->off > 0) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
		if (q->len + n <= q->cap)
			return q->buf + q->len;
	}
	cap = q->cap != 0 ? q->cap : 4096;
	while (cap < q->len + n)
		cap *= 2;
	if (cap > UINT32_MAX / 2)
		return NULL;
	b = realloc(q->buf, cap);
	if (b == NULL)
		return NULL;
	h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, (int64_t)cap - (int64_t)q->cap);
	q->buf = b;
	q->cap = (uint32_t)cap;
	return q->buf + q->len;
}

uint8_t *
h2_oq_put(struct nrf_h2_conn *c, uint8_t type, uint8_t flags, uint32_t sid, size_t len)
{
	uint8_t *p = h2_oq_reserve(c, 9 + len);

	if (p == NULL) {
		h2_conn_fail(c, NRF_ENOMEM);
		return NULL;
	}
	frame_hd(p, (uint32_t)len, type, flags, sid);
	c->oq.len += (uint32_t)(9 + len);
	h2_mark_dirty(c);
	return p + 9;
}

bool
h2_oq_frame(struct nrf_h2_conn *c, uint8_t type, uint8_t flags, uint32_t sid,
	const void *payload, size_t len)
{
	uint8_t *p = h2_oq_put(c, type, flags, sid, len);

	if (p == NULL)
		return false;
	if (len > 0)
		memcpy(p, payload, len);
	return true;
}

void
h2_oq_window_update(struct nrf_h2_conn *c, uint32_t sid, uint32_t inc)
{
	uint8_t b[4];

	put32(b, inc & WIN_MAX);
	h2_oq_frame(c, FT_WINDOW_UPDATE, 0, sid, b, 4);
}

void
h2_oq_rst(struct nrf_h2_conn *c, uint32_t sid, uint32_t code)
{
	uint8_t b[4];

	put32(b, code);
	h2_oq_frame(c, FT_RST_STREAM, 0, sid, b, 4);
}

size_t
h2_oq_take(struct nrf_h2_conn *c, uint8_t *dst, size_t cap)
{
	struct h2_oq *q = &c->oq;
	size_t n = NRF_MIN(cap, (size_t)(q->len - q->off));

	memcpy(dst, q->buf + q->off, n);
	q->off += (uint32_t)n;
	if (q->off < q->len)
		return n;
	q->off = q->len = 0;
	if (q->cap > OQ_KEEP) {
		h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)q->cap);
		free(q->buf);
		q->buf = NULL;
		q->cap = 0;
	}
	return n;
}

void
h2_oq_fini(struct nrf_h2_conn *c)
{
	struct h2_oq *q = &c->oq;

	if (q->buf != NULL)
		h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)q->cap);
	free(q->buf);
	memset(q, 0, sizeof(*q));
}
