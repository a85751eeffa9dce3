/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nghttp2's memory, per worker. nghttp2 allocates and frees small objects
 * for every stream (stream state, header fields, frames, outbound items);
 * with glibc's malloc that was ~10 % of a forwarded request's CPU. Every
 * session of a worker runs on the worker's thread, so one lock-free pool of
 * size classes per context serves them all. Blocks carry a 16-byte header
 * with their class (kept 16-byte aligned, as malloc's results are).
 */
#include <stdlib.h>
#include <string.h>

#include "h2_int.h"

/*
 * The bytes this allocator holds from the system (in use by nghttp2 or kept
 * on its free lists), into the context's counters (h2_acct_add()): counted
 * when a block is malloc'd or freed, never on the free-list paths that serve
 * almost every request.
 */
static inline void
mem_add(struct h2_mem *m, int64_t delta)
{
	__atomic_store_n(m->used, *m->used + (uint64_t)delta, __ATOMIC_RELAXED);
	__atomic_store_n(m->total, *m->total + (uint64_t)delta, __ATOMIC_RELAXED);
}

static inline void
n_free_set(struct h2_mem *m, uint32_t c, uint32_t v)
{
	m->cls[c].n = v;
}

_Static_assert(H2_MEM_MIN == 32, "size_class() assumes 32-byte smallest class");

#define MEM_HDR 16u
/* The class of malloc'd blocks above H2_MEM_MAX: cls[MEM_LARGE].n is
 * UINT32_MAX, so h2_mem_free() gives them back to malloc with the test of
 * a full list. */
#define MEM_LARGE H2_MEM_CLASSES

struct mem_hdr {
	uint32_t cls;
	uint32_t pad;
	size_t size; /* usable size (class size, or the malloc'd size) */
};

static inline uint32_t
size_class(size_t n)
{
	/* smallest c with (H2_MEM_MIN << c) >= n, H2_MEM_MIN = 32 = 1 << 5 */
	if (n <= H2_MEM_MIN)
		return 0;
	return (uint32_t)(64 - __builtin_clzll((unsigned long long)(n - 1))) - 5u;
}

/*
 * What the free-list path of h2_mem_malloc() leaves: an empty class (a new
 * block from malloc) and blocks above H2_MEM_MAX (or of 0 bytes). Out of
 * line, so that the path taken for nearly every allocation saves and
 * restores no registers (measured: nearly half the work of a call).
 */
static __attribute__((noinline)) void *
mem_malloc_slow(size_t size, struct h2_mem *m)
{
	struct mem_hdr *h;
	uint32_t c;

	if (size > H2_MEM_MAX) {
		h = malloc(MEM_HDR + size);
		if (h == NULL)
			return NULL;
		h->cls = MEM_LARGE;
		h->size = size;
		mem_add(m, (int64_t)size);
		return (char *)h + MEM_HDR;
	}
	c = size_class(size);
	m->cls[c].low = 0;
	h = malloc(MEM_HDR + ((size_t)H2_MEM_MIN << c));
	if (h == NULL)
		return NULL;
	h->cls = c;
	h->size = (size_t)H2_MEM_MIN << c;
	mem_add(m, (int64_t)h->size);
	return (char *)h + MEM_HDR;
}

static void *
h2_mem_malloc(size_t size, void *user)
{
	struct h2_mem *m = user;
	struct h2_mem_cls *k;
	size_t c;
	uint32_t n;
	void *p;

	/* 1 .. H2_MEM_MAX bytes (0 wraps around: the slow path). The class is
	 * that of size_class(): (size - 1) | 31 makes 1..32 bytes class 0. */
	if (NRF_UNLIKELY(size - 1 >= (size_t)H2_MEM_MAX))
		return mem_malloc_slow(size, m);
	c = (size_t)(59 - __builtin_clzll((unsigned long long)((size - 1) | (H2_MEM_MIN - 1))));
	k = &m->cls[c];
	p = k->free;
	if (NRF_UNLIKELY(p == NULL))
		return mem_malloc_slow(size, m);
	k->free = *(void **)p;
	n = k->n - 1;
	k->n = n;
	if (n < k->low)
		k->low = n;
	return p;
}

static void
h2_mem_free(void *ptr, void *user)
{
	struct h2_mem *m = user;
	struct h2_mem_cls *k;
	struct mem_hdr *h;

	if (ptr == NULL)
		return;
	h = (struct mem_hdr *)(void *)((char *)ptr - MEM_HDR);
	k = &m->cls[h->cls];
	if (k->n >= H2_MEM_KEEP) { /* MEM_LARGE too */
		mem_add(m, -(int64_t)h->size);
		free(h);
		return;
	}
	*(void **)ptr = k->free;
	k->free = ptr;
	k->n++;
}

static void *
h2_mem_calloc(size_t nmemb, size_t size, void *user)
{
	size_t n;
	void *p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		return NULL;
	n = nmemb * size;
	p = h2_mem_malloc(n, user);
	if (p != NULL)
		memset(p, 0, n);
	return p;
}

static void *
h2_mem_realloc(void *ptr, size_t size, void *user)
{
	struct mem_hdr *h;
	void *p;

	if (ptr == NULL)
		return h2_mem_malloc(size, user);
	h = (struct mem_hdr *)(void *)((char *)ptr - MEM_HDR);
	if (size <= h->size && h->cls != MEM_LARGE)
		return ptr;
	p = h2_mem_malloc(size, user);
	if (p == NULL)
		return NULL;
	memcpy(p, ptr, NRF_MIN(h->size, size));
	h2_mem_free(ptr, user);
	return p;
}

void
h2_mem_init(struct h2_mem *m, uint64_t *used, uint64_t *total)
{
	memset(m, 0, sizeof(*m));
	m->used = used;
	m->total = total;
	m->mem.mem_user_data = m;
	m->mem.malloc = h2_mem_malloc;
	m->mem.free = h2_mem_free;
	m->mem.calloc = h2_mem_calloc;
	m->mem.realloc = h2_mem_realloc;
	m->cls[MEM_LARGE].n = UINT32_MAX;
}

size_t
h2_mem_trim(struct h2_mem *m)
{
	size_t n = 0;

	for (unsigned int c = 0; c < H2_MEM_CLASSES; c++) {
		uint32_t k = m->cls[c].low > FLOOR_MEM ? (m->cls[c].low - FLOOR_MEM + 1) / 2 : 0;
		size_t sz = (size_t)H2_MEM_MIN << c;

		for (; k > 0 && m->cls[c].free != NULL; k--) {
			void *p = m->cls[c].free;

			m->cls[c].free = *(void **)p;
			n_free_set(m, c, m->cls[c].n - 1);
			free((char *)p - MEM_HDR);
			mem_add(m, -(int64_t)sz);
			n += sz;
		}
		m->cls[c].low = m->cls[c].n;
	}
	return n;
}

void
h2_mem_fini(struct h2_mem *m)
{
	for (unsigned int c = 0; c < H2_MEM_CLASSES; c++) {
		while (m->cls[c].free != NULL) {
			void *p = m->cls[c].free;

			m->cls[c].free = *(void **)p;
			free((char *)p - MEM_HDR);
			mem_add(m, -((int64_t)H2_MEM_MIN << c));
		}
		n_free_set(m, c, 0);
		m->cls[c].low = 0;
	}
}
