/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef H2_FRAMES_H
#define H2_FRAMES_H

/*
 * A byte-stream splitter for HTTP/2 frames (RFC 9113 §4.1), for the fuzz
 * targets to watch what goes over a connection without a session of their
 * own: bytes in any pieces, one callback per complete frame.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H2F_DATA 0x0
#define H2F_HEADERS 0x1
#define H2F_RST_STREAM 0x3
#define H2F_PUSH_PROMISE 0x5
#define H2F_GOAWAY 0x7
#define H2F_CONTINUATION 0x9
#define H2F_END_STREAM 0x1

typedef void (*h2f_frame_fn)(void *arg, uint8_t type, uint8_t flags, int32_t id,
	const uint8_t *payload, size_t len);

struct h2f {
	size_t skip;       /* bytes to drop first (a client preface) */
	uint8_t hd[9];
	size_t hd_len;
	uint8_t *pl;
	size_t pl_len;
	size_t pl_need;
	size_t pl_cap;
	h2f_frame_fn fn;
	void *arg;
};

static inline void
h2f_init(struct h2f *f, size_t skip, h2f_frame_fn fn, void *arg)
{
	memset(f, 0, sizeof(*f));
	f->skip = skip;
	f->fn = fn;
	f->arg = arg;
}

static inline void
h2f_fini(struct h2f *f)
{
	free(f->pl);
	f->pl = NULL;
}

/* Payloads are kept up to 16 KiB (a frame of the default maximum size). */
#define H2F_KEEP 16384

static inline void
h2f_feed(struct h2f *f, const uint8_t *p, size_t n)
{
	while (n > 0) {
		if (f->skip > 0) {
			size_t k = n < f->skip ? n : f->skip;

			f->skip -= k;
			p += k;
			n -= k;
			continue;
		}
		if (f->hd_len < 9) {
			f->hd[f->hd_len++] = *p++;
			n--;
			if (f->hd_len == 9) {
				f->pl_need = (size_t)f->hd[0] << 16 | (size_t)f->hd[1] << 8 | f->hd[2];
				f->pl_len = 0;
			}
		} else {
			size_t k = n < f->pl_need - f->pl_len ? n : f->pl_need - f->pl_len;
			size_t keep = f->pl_len < H2F_KEEP ? H2F_KEEP - f->pl_len : 0;

			if (keep > k)
				keep = k;
			if (keep > 0) {
				if (f->pl == NULL) {
					f->pl = malloc(H2F_KEEP);
					if (f->pl == NULL)
						abort();
				}
				memcpy(f->pl + f->pl_len, p, keep);
			}
			f->pl_len += k;
			p += k;
			n -= k;
		}
		if (f->hd_len == 9 && f->pl_len == f->pl_need) {
			int32_t id = (int32_t)(((uint32_t)f->hd[5] << 24 | (uint32_t)f->hd[6] << 16 |
				(uint32_t)f->hd[7] << 8 | f->hd[8]) & 0x7fffffffu);

			f->fn(f->arg, f->hd[3], f->hd[4], id, f->pl,
				f->pl_len < H2F_KEEP ? f->pl_len : H2F_KEEP);
			f->hd_len = 0;
		}
	}
}

static inline uint32_t
h2f_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif /* H2_FRAMES_H */
