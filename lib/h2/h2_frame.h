/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_FRAME_H
#define NRF_H2_FRAME_H

/*
 * HTTP/2 frame and HPACK bytes shared by nrfwd's own client (h2_cli.c) and
 * server (h2_srv.c): frame types and flags (RFC 9113 §6), big-endian
 * fields, the 9-byte frame header, HPACK integers and raw strings
 * (RFC 7541 §5.1, §5.2 with H = 0). Internal to lib/h2.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	FT_DATA = 0x0,
	FT_HEADERS = 0x1,
	FT_PRIORITY = 0x2,
	FT_RST_STREAM = 0x3,
	FT_SETTINGS = 0x4,
	FT_PUSH_PROMISE = 0x5,
	FT_PING = 0x6,
	FT_GOAWAY = 0x7,
	FT_WINDOW_UPDATE = 0x8,
	FT_CONTINUATION = 0x9,
};

#define FL_END_STREAM 0x01u
#define FL_ACK 0x01u
#define FL_END_HEADERS 0x04u
#define FL_PADDED 0x08u
#define FL_PRIORITY 0x20u

/* The client connection preface (RFC 9113 §3.4), without a NUL. */
#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24u

#define WIN_MAX 0x7fffffffu
#define WIN_DEFAULT 65535u

static inline void
put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t
frame_len(const uint8_t *f)
{
	return (uint32_t)f[0] << 16 | (uint32_t)f[1] << 8 | f[2];
}

static inline void
frame_hd(uint8_t *p, uint32_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
	put24(p, len);
	p[3] = type;
	p[4] = flags;
	put32(p + 5, sid);
}

/* An HPACK integer with @p prefix bits, the byte's other bits @p first. */
static inline uint8_t *
hp_int(uint8_t *p, uint8_t first, unsigned int prefix, size_t v)
{
	size_t max = ((size_t)1 << prefix) - 1;

	if (v < max) {
		*p++ = (uint8_t)(first | v);
		return p;
	}
	*p++ = (uint8_t)(first | max);
	v -= max;
	while (v >= 128) {
		*p++ = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* An HPACK string literal, raw octets (H = 0). */
static inline uint8_t *
hp_str(uint8_t *p, const char *s, size_t len)
{
	p = hp_int(p, 0, 7, len);
	memcpy(p, s, len);
	return p + len;
}

#endif /* NRF_H2_FRAME_H */
