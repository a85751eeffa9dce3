/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A context's pools (body chunks, header blocks, stream objects, output
 * buffers) and the accounting of its memory (docs/architecture-datapath.md,
 * "Memory"; decision 0018).
 *
 * Why the free lists shrink: a burst (non-reading clients, a load peak)
 * fills them up to their caps, and memory kept on them for ever is memory
 * the process never gives back (RSS stays at the peak). Each list notes
 * its lowest length since the last trim: the objects below that mark were
 * not used at all meanwhile. nrf_h2_ctx_trim() (about once a second) frees
 * half of them, above a small floor, so after a burst the lists are back
 * at their floors within seconds, while a steady load, which keeps taking
 * its objects, loses nothing. Cost on the request path: one compare per
 * object taken.
 *
 * Accounting: every object taken or given back adds to one of the
 * per-kind byte counters (enum nrf_h2_mem_kind) with a relaxed atomic
 * store: single writer (the worker), readable by the control thread
 * without a lock.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_int.h"

/* p->n is read by other threads (nrf_h2_ctx_mem_get()). */
static inline void
n_set(struct h2_pool *p, uint32_t v)
{
	__atomic_store_n(&p->n, v, __ATOMIC_RELAXED);
}

static void
pool_init(struct h2_pool *p, size_t size, size_t link, uint32_t keep, uint32_t floor)
{
	memset(p, 0, sizeof(*p));
	p->size = size;
	p->link = link;
	p->keep = keep;
	p->floor = floor;
}

/* The free list's link inside a free object. */
static inline void **
link_of(const struct h2_pool *p, void *o)
{
	return (void **)(void *)((char *)o + p->link);
}

static inline __attribute__((always_inline)) void *
pool_pop(struct h2_pool *p)
{
	void *o = p->head;

	if (o == NULL) {
		p->low = 0;
		return malloc(p->size);
	}
	p->head = *link_of(p, o);
	n_set(p, p->n - 1);
	if (p->n < p->low)
		p->low = p->n;
	return o;
}

static inline __attribute__((always_inline)) void
pool_push(struct h2_pool *p, void *o)
{
	if (p->n >= p->keep) {
		free(o);
		return;
	}
	*link_of(p, o) = p->head;
	p->head = o;
	n_set(p, p->n + 1);
}

/* Free half of what stayed unused since the last trim, above the floor. */
static size_t
pool_trim(struct h2_pool *p)
{
	uint32_t k = p->low > p->floor ? (p->low - p->floor + 1) / 2 : 0;
	uint32_t i;

	for (i = 0; i < k && p->head != NULL; i++) {
		void *o = p->head;

		p->head = *link_of(p, o);
		n_set(p, p->n - 1);
		free(o);
	}
	p->low = p->n;
	return i * p->size;
}

static void
pool_fini(struct h2_pool *p)
{
	while (p->head != NULL) {
		void *o = p->head;

		p->head = *link_of(p, o);
		free(o);
	}
	n_set(p, 0);
	p->low = 0;
}

static uint64_t
pool_bytes(const struct h2_pool *p)
{
	return (uint64_t)__atomic_load_n(&p->n, __ATOMIC_RELAXED) * p->size;
}

void
h2_pools_init(struct nrf_h2_ctx *ctx)
{
	size_t bs = ctx->lim.max_header_bytes;
	/* Blocks of a big maxHeaderBytes: keep at most 32 MiB of them. */
	uint32_t keep_blocks = (uint32_t)NRF_MIN((size_t)KEEP_BLOCKS, NRF_MAX((size_t)16,
		(size_t)(32u << 20) / bs));

	pool_init(&ctx->chunks, sizeof(struct nrf_h2_chunk), 0, KEEP_CHUNKS, FLOOR_CHUNKS);
	pool_init(&ctx->blocks, bs, 0, keep_blocks, NRF_MIN((uint32_t)FLOOR_BLOCKS, keep_blocks));
	/* A free stream keeps its conn and flags: a stale pointer to it still
	 * reads as a stream that is gone (nrf_h2_respond(): NRF_EINVAL). */
	pool_init(&ctx->streams, sizeof(struct nrf_h2_stream),
		offsetof(struct nrf_h2_stream, link), KEEP_STREAMS, FLOOR_STREAMS);
	pool_init(&ctx->obufs, OBUF_CAP, 0, KEEP_OBUFS, FLOOR_OBUFS);
}

void
h2_pools_fini(struct nrf_h2_ctx *ctx)
{
	pool_fini(&ctx->chunks);
	pool_fini(&ctx->blocks);
	pool_fini(&ctx->streams);
	pool_fini(&ctx->obufs);
}

struct nrf_h2_chunk *
h2_chunk_get(struct nrf_h2_ctx *ctx)
{
	struct nrf_h2_chunk *c = pool_pop(&ctx->chunks);

	if (c == NULL)
		return NULL;
	h2_acct_add(ctx, NRF_H2_MEM_BODIES, (int64_t)sizeof(*c));
	c->next = NULL;
	c->off = 0;
	c->len = 0;
	return c;
}

void
h2_chunk_put(struct nrf_h2_ctx *ctx, struct nrf_h2_chunk *c)
{
	h2_acct_add(ctx, NRF_H2_MEM_BODIES, -(int64_t)sizeof(*c));
	pool_push(&ctx->chunks, c);
}

char *
h2_block_get(struct nrf_h2_ctx *ctx)
{
	char *b = pool_pop(&ctx->blocks);

	if (b != NULL)
		h2_acct_add(ctx, NRF_H2_MEM_HEADERS, (int64_t)ctx->blocks.size);
	return b;
}

void
h2_block_put(struct nrf_h2_ctx *ctx, char *b)
{
	if (b == NULL)
		return;
	h2_acct_add(ctx, NRF_H2_MEM_HEADERS, -(int64_t)ctx->blocks.size);
	pool_push(&ctx->blocks, b);
}

struct nrf_h2_stream *
h2_stream_get(struct nrf_h2_ctx *ctx, bool peer)
{
	struct nrf_h2_stream *st = pool_pop(&ctx->streams);

	if (st == NULL)
		return NULL;
	/* The inline response area is not cleared: only what a response
	 * wrote into it (inl_len bytes) is ever read. */
	nrf_zero(st, offsetof(struct nrf_h2_stream, inl));
	ctx->n_streams++;
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, (int64_t)sizeof(*st));
	if (peer) {
		/* What the upstream may send on it unasked (decision 0018). */
		st->flags |= H2_SF_WINDOW;
		h2_acct_add(ctx, NRF_H2_MEM_WINDOW, (int64_t)ctx->lim.peer_stream_window);
	}
	return st;
}

void
h2_stream_put(struct nrf_h2_ctx *ctx, struct nrf_h2_stream *st)
{
	nrf_h2_msg_release(ctx, &st->msg);
	nrf_h2_body_release(ctx, &st->out);
	if (st->flags & H2_SF_WINDOW)
		h2_acct_add(ctx, NRF_H2_MEM_WINDOW,
			-((int64_t)ctx->lim.peer_stream_window - (int64_t)st->unconsumed));
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, -(int64_t)sizeof(*st));
	ctx->n_streams--;
	pool_push(&ctx->streams, st);
}

uint8_t *
h2_obuf_get(struct nrf_h2_ctx *ctx)
{
	uint8_t *b = pool_pop(&ctx->obufs);

	if (b != NULL)
		h2_acct_add(ctx, NRF_H2_MEM_OUTPUT, OBUF_CAP);
	return b;
}

void
h2_obuf_put(struct nrf_h2_ctx *ctx, uint8_t *b)
{
	if (b == NULL)
		return;
	h2_acct_add(ctx, NRF_H2_MEM_OUTPUT, -(int64_t)OBUF_CAP);
	pool_push(&ctx->obufs, b);
}

bool
nrf_h2_ctx_over_budget(const struct nrf_h2_ctx *ctx)
{
	return h2_over_budget(ctx);
}

void
nrf_h2_ctx_set_budget(struct nrf_h2_ctx *ctx, uint64_t bytes)
{
	ctx->budget = bytes;
}

void
nrf_h2_ctx_mem_get(const struct nrf_h2_ctx *ctx, struct nrf_h2_mem_stats *out)
{
	unsigned int k;

	out->total = 0;
	for (k = 0; k < NRF_H2_MEM_COUNT; k++) {
		out->bytes[k] = __atomic_load_n(&ctx->acct[k], __ATOMIC_RELAXED);
		out->total += out->bytes[k];
	}
	out->pooled = pool_bytes(&ctx->chunks) + pool_bytes(&ctx->blocks) +
		pool_bytes(&ctx->streams) + pool_bytes(&ctx->obufs);
}

size_t
nrf_h2_ctx_trim(struct nrf_h2_ctx *ctx)
{
	size_t n = 0;

	n += pool_trim(&ctx->chunks);
	n += pool_trim(&ctx->blocks);
	n += pool_trim(&ctx->streams);
	n += pool_trim(&ctx->obufs);
	n += h2_mem_trim(&ctx->mem);
	return n;
}
