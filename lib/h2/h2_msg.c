/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages (their pools are in h2_pool.c).
 *
 * A header block is sized to the header-list limit. Each stored field costs
 * name + value + 32 bytes of the list size (RFC 9113 §6.5.2), and a field
 * entry is exactly 32 bytes, so entries (growing up) and bytes (growing down)
 * can never collide while the list size stays within the limit: no second
 * allocation, no bounds arithmetic per field.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h2_int.h"
#include "nrf_err.h"

_Static_assert(sizeof(struct nrf_h2_hdr) <= 32, "field entry must fit the 32 bytes RFC 9113 charges");

/* ------------------------------------------------------------------------ */
/* Bodies                                                                    */

int
nrf_h2_body_append(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b, const void *data,
	size_t len)
{
	const char *p = data;
	struct nrf_h2_chunk *c, *last = b->tail;
	size_t left = len;

	/* Fill the tail chunk first, then new chunks; undo on failure. */
	size_t tail_room = last != NULL ? NRF_H2_CHUNK_SIZE - last->len : 0;
	size_t in_tail = NRF_MIN(tail_room, left);
	struct nrf_h2_chunk *head_new = NULL, *tail_new = NULL;

	left -= in_tail;
	while (left > 0) {
		size_t k = NRF_MIN(left, (size_t)NRF_H2_CHUNK_SIZE);

		c = h2_chunk_get(ctx);

		if (c == NULL) {
			while (head_new != NULL) {
				struct nrf_h2_chunk *n = head_new->next;

				h2_chunk_put(ctx, head_new);
				head_new = n;
			}
			return NRF_ENOMEM;
		}
		c->len = (uint32_t)k;
		if (head_new == NULL)
			head_new = c;
		else
			tail_new->next = c;
		tail_new = c;
		left -= k;
	}
	if (in_tail > 0) {
		memcpy(last->data + last->len, p, in_tail);
		last->len += (uint32_t)in_tail;
		p += in_tail;
	}
	for (c = head_new; c != NULL; c = c->next) {
		memcpy(c->data, p, c->len);
		p += c->len;
	}
	if (head_new != NULL) {
		if (b->tail != NULL)
			b->tail->next = head_new;
		else
			b->head = head_new;
		b->tail = tail_new;
	}
	b->len += len;
	return 0;
}

void
nrf_h2_body_splice(struct nrf_h2_body *dst, struct nrf_h2_body *src)
{
	if (src->head == NULL)
		return;
	if (dst->tail != NULL)
		dst->tail->next = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	dst->len += src->len;
	src->head = src->tail = NULL;
	src->len = 0;
}

void
nrf_h2_body_release(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b)
{
	while (b->head != NULL) {
		struct nrf_h2_chunk *c = b->head;

		b->head = c->next;
		h2_chunk_put(ctx, c);
	}
	b->tail = NULL;
	b->len = 0;
}

void
h2_body_join(struct nrf_h2_ctx *ctx, struct nrf_h2_body *dst, struct nrf_h2_body *src)
{
	while (src->head != NULL && dst->tail != NULL) {
		struct nrf_h2_chunk *s = src->head, *t = dst->tail;
		uint32_t k = s->len - s->off;

		if (k > NRF_H2_CHUNK_SIZE - t->len)
			break;
		memcpy(t->data + t->len, s->data + s->off, k);
		t->len += k;
		dst->len += k;
		src->len -= k;
		src->head = s->next;
		if (src->head == NULL)
			src->tail = NULL;
		h2_chunk_put(ctx, s);
	}
	nrf_h2_body_splice(dst, src);
}

size_t
h2_body_take(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b, uint8_t *dst, size_t cap)
{
	size_t done = 0;

	while (done < cap && b->head != NULL) {
		struct nrf_h2_chunk *c = b->head;
		size_t k = NRF_MIN(cap - done, (size_t)(c->len - c->off));

		memcpy(dst + done, c->data + c->off, k);
		c->off += (uint32_t)k;
		done += k;
		if (c->off == c->len) {
			b->head = c->next;
			if (b->head == NULL)
				b->tail = NULL;
			h2_chunk_put(ctx, c);
		}
	}
	b->len -= done;
	return done;
}

struct nrf_slice
nrf_h2_body_flat(const struct nrf_h2_body *b, char *scratch, size_t cap)
{
	struct nrf_slice s = {NULL, 0};
	const struct nrf_h2_chunk *c;

	if (b->head == NULL)
		return s;
	if (b->head == b->tail) {
		s.p = b->head->data + b->head->off;
		s.len = b->head->len - b->head->off;
		return s;
	}
	for (c = b->head; c != NULL && s.len < cap; c = c->next) {
		size_t k = NRF_MIN(cap - s.len, (size_t)(c->len - c->off));

		memcpy(scratch + s.len, c->data + c->off, k);
		s.len += k;
	}
	s.p = scratch;
	return s;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

void
nrf_h2_msg_release(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m)
{
	/* Half the releases of a forwarded request find the message empty
	 * (moved out, or released before: the stream's own after its answer
	 * was relayed). With no block there are no fields (h2_msg_store()
	 * takes the block first, and nothing else sets them), and with no
	 * chunk no body: all zero already (measured). */
	if (m->block == NULL && m->body.head == NULL)
		return;
	h2_block_put(ctx, m->block);
	nrf_h2_body_release(ctx, &m->body);
	nrf_zero(m, sizeof(*m));
}

void
h2_msg_reset_fields(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m)
{
	(void)ctx;
	m->status = 0;
	m->n_hdrs = 0;
	m->n_via = 0;
	m->list_size = 0;
	if (m->block != NULL)
		m->block_top = ctx->lim.max_header_bytes;
}

/*
 * @p name is the literal @p lit (3 to 16 bytes, a constant at every call).
 * Compared as two overlapping words, which the compiler turns into
 * immediates: libc's memcmp() was called 8 times per forwarded request
 * from here, each with its size dispatch (measured).
 */
static inline __attribute__((always_inline)) bool
name_is(const uint8_t *name, size_t nlen, const char *lit)
{
	size_t n = __builtin_strlen(lit);

	if (nlen != n)
		return false;
	if (n >= 8) {
		uint64_t a, b, x, y;

		memcpy(&a, name, 8);
		memcpy(&b, name + n - 8, 8);
		memcpy(&x, lit, 8);
		memcpy(&y, lit + n - 8, 8);
		return ((a ^ x) | (b ^ y)) == 0;
	} else if (n >= 4) {
		uint32_t a, b, x, y;

		memcpy(&a, name, 4);
		memcpy(&b, name + n - 4, 4);
		memcpy(&x, lit, 4);
		memcpy(&y, lit + n - 4, 4);
		return ((a ^ x) | (b ^ y)) == 0;
	}
	for (size_t i = 0; i < n; i++)
		if (name[i] != (uint8_t)lit[i])
			return false;
	return true;
}

/*
 * h2_msg_store() of a message's first field: takes its header block. Out
 * of line (and tail-called), so that h2_msg_store() itself calls nothing
 * and saves no registers on the ~10 fields of a forwarded request that
 * find the block there (measured).
 */
static __attribute__((noinline)) int
store_first(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m, const uint8_t *name,
	size_t nlen, const uint8_t *value, size_t vlen, unsigned int known)
{
	m->block = h2_block_get(ctx);
	if (m->block == NULL)
		return NRF_ENOMEM;
	m->block_top = ctx->lim.max_header_bytes;
	m->hdrs = (struct nrf_h2_hdr *)(void *)m->block;
	return h2_msg_store(ctx, m, name, nlen, value, vlen, known);
}

int
h2_msg_store(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m, const uint8_t *name,
	size_t nlen, const uint8_t *value, size_t vlen, unsigned int known)
{
	size_t cost = nlen + vlen + 32;
	const char *np = (const char *)name, *vp = (const char *)value;
	char *blk;
	uint32_t top;

	/* list_size never exceeds the limit: one compare, no overflow */
	if (NRF_UNLIKELY(cost > ctx->lim.max_header_bytes - m->list_size))
		return NRF_ETOOBIG;
	if (NRF_UNLIKELY(m->block == NULL))
		return store_first(ctx, m, name, nlen, value, vlen, known);
	m->list_size += (uint32_t)cost;
	/* Bytes of HPACK's static table are nghttp2's constant data: kept
	 * where they are, the rest is copied into the block (down from
	 * block_top; the order of a field's name and value there is free). */
	blk = m->block; /* a local: the copies may alias *m for the compiler */
	top = m->block_top;
	if (!(known & H2_KNOWN_VALUE)) {
		top -= (uint32_t)vlen;
		vp = blk + top;
		nrf_copy(blk + top, value, vlen);
	}
	if (!(known & H2_KNOWN_NAME)) {
		top -= (uint32_t)nlen;
		np = blk + top;
		nrf_copy(blk + top, name, nlen);
	}
	m->block_top = top;
	if (nlen > 0 && name[0] == ':') {
		struct nrf_slice v = {vp, vlen};

		/* By length, then the second byte: one full compare per field */
		if (nlen == 5) {
			if (name_is(name, nlen, ":path"))
				m->path = v;
		} else if (nlen == 10) {
			if (name_is(name, nlen, ":authority"))
				m->authority = v;
		} else if (nlen == 7 && name[1] == 'm') {
			if (name_is(name, nlen, ":method"))
				m->method = v;
		} else if (nlen == 7 && name[2] == 'c') {
			if (name_is(name, nlen, ":scheme"))
				m->scheme = v;
		} else if (nlen == 7 && name_is(name, nlen, ":status")) {
			int st = 0;
			size_t i;

			if (vlen == 3) /* always, once checked (h2_check.c) */
				st = (value[0] - '0') * 100 + (value[1] - '0') * 10 +
					(value[2] - '0');
			else
				for (i = 0; i < vlen && i < 3; i++)
					st = st * 10 + (value[i] - '0');
			m->status = st;
		}
		return 0;
	}
	m->hdrs[m->n_hdrs].name.p = np;
	m->hdrs[m->n_hdrs].name.len = nlen;
	m->hdrs[m->n_hdrs].value.p = vp;
	m->hdrs[m->n_hdrs].value.len = vlen;
	m->n_hdrs++;
	if (name_is(name, nlen, "via"))
		m->n_via++;
	return 0;
}

size_t
nrf_h2_msg_via(const struct nrf_h2_msg *m, struct nrf_slice *out, size_t max)
{
	size_t n = 0;
	uint32_t i;

	if (m->n_via == 0)
		return 0;
	for (i = 0; i < m->n_hdrs; i++) {
		const struct nrf_h2_hdr *h = &m->hdrs[i];

		if (h->name.len == 3 && memcmp(h->name.p, "via", 3) == 0) {
			if (n < max)
				out[n] = h->value;
			n++;
		}
	}
	return n;
}

struct nrf_slice
nrf_h2_msg_get(const struct nrf_h2_msg *m, const char *name)
{
	struct nrf_slice none = {NULL, 0};
	size_t nlen = strlen(name);
	uint32_t i;

	for (i = 0; i < m->n_hdrs; i++) {
		const struct nrf_h2_hdr *h = &m->hdrs[i];

		if (h->name.len == nlen && memcmp(h->name.p, name, nlen) == 0)
			return h->value;
	}
	return none;
}

/* nrf_h2_hop_by_hop() for a name of one of NRF_H2_HOP_LENS. */
bool
nrf_h2_hop_by_hop_named(struct nrf_slice name, struct nrf_slice value)
{
	switch (name.len) {
	case 2:
		return memcmp(name.p, "te", 2) == 0 &&
			!(value.len == 8 && strncasecmp(value.p, "trailers", 8) == 0);
	case 7:
		return memcmp(name.p, "upgrade", 7) == 0;
	case 10:
		return memcmp(name.p, "connection", 10) == 0 ||
			memcmp(name.p, "keep-alive", 10) == 0;
	case 14:
		return memcmp(name.p, "http2-settings", 14) == 0;
	case 16:
		return memcmp(name.p, "proxy-connection", 16) == 0;
	case 17:
		return memcmp(name.p, "transfer-encoding", 17) == 0;
	default:
		return false;
	}
}
