/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The front connection's frame-header pass (h2_guard.h, decision 0015).
 *
 * A pass of its own, in front of the server's frame handling (h2_srv.c):
 * every rule here is about what the client itself said on a stream (opened
 * it, ended it, reset it), which the client's own frames tell in order, so
 * the pass never needs the server's view of a stream nor waits for it to
 * process anything. What it has not seen the client do, and what it has
 * forgotten, it leaves to the server (a client may send DATA after our
 * RST_STREAM, which it had not seen yet: RFC 9113 §5.1 says to ignore
 * them). It was written for nghttp2's server session, which kept no closed
 * streams (decision 0009), and stays in front of nrfwd's own server.
 *
 * Cost: a frame header is 9 bytes read once; payloads are skipped except
 * the 4 or 5 leading bytes of a PRIORITY frame and of a trailer HEADERS
 * with priority; a new stream writes one byte of the window. The input is
 * cut for the server only where a rule is broken.
 */
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_int.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

#define FRAME_HDR 9u
#define PRIORITY_LEN 5u

/* Big-endian 32 bits from any address (one load and a byte swap). */
static inline uint32_t
be32(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return __builtin_bswap32(w);
}

static inline uint8_t *
win_at(struct h2_guard *g, uint32_t sid)
{
	return &g->win[(sid >> 1) & (H2_GUARD_WIN - 1)];
}

/* The state of client stream @p sid (odd, <= hi), NULL when forgotten. */
static inline uint8_t *
remembered(struct h2_guard *g, uint32_t sid)
{
	if (g->hi - sid >= 2 * H2_GUARD_WIN)
		return NULL;
	return win_at(g, sid);
}

/* The client opened @p sid > hi: ids skipped on the way are closed unused. */
static void
open_stream(struct h2_guard *g, uint32_t sid, bool ended)
{
	uint32_t id = g->hi != 0 ? g->hi + 2 : 1; /* the first id skipped, if any */

	if (sid - id >= 2 * H2_GUARD_WIN)
		memset(g->win, 0, sizeof(g->win));
	else
		for (; id < sid; id += 2)
			*win_at(g, id) = 0; /* its slot held an id 2 * WIN lower */
	g->hi = sid;
	*win_at(g, sid) = H2_GS_OPENED | (ended ? H2_GS_ENDED : 0);
}

static inline bool
verdict(struct h2_guard_verdict *v, uint8_t kind, uint32_t sid, uint32_t code)
{
	v->kind = kind;
	v->sid = sid;
	v->code = code;
	return true;
}

/* A stream error the pass sends at most once per remembered stream. */
static bool
reset_once(uint8_t *st, struct h2_guard_verdict *v, uint32_t sid, uint32_t code)
{
	if (*st & H2_GS_ANSWERED)
		return false;
	*st |= H2_GS_ANSWERED;
	return verdict(v, H2_GV_RST, sid, code);
}

/* The current frame, as its header says. */
struct frame {
	uint32_t len;
	uint32_t sid;
	uint8_t type;
	uint8_t flags;
};

/* DATA or HEADERS on a stream the client already opened (sid <= hi). */
static bool
check_used(struct h2_guard *g, const struct frame *f, struct h2_guard_verdict *v)
{
	uint8_t *st = remembered(g, f->sid);

	if (st == NULL)
		return false;
	if (!(*st & H2_GS_OPENED))
		return verdict(v, H2_GV_GOAWAY, 0,
			f->type == NGHTTP2_HEADERS ? NGHTTP2_PROTOCOL_ERROR
						   : NGHTTP2_STREAM_CLOSED);
	if (*st & H2_GS_ENDED)
		return verdict(v, H2_GV_GOAWAY, 0, NGHTTP2_STREAM_CLOSED);
	if (*st & H2_GS_RESET)
		return reset_once(st, v, f->sid, NGHTTP2_STREAM_CLOSED);
	if (f->flags & NGHTTP2_FLAG_END_STREAM)
		*st |= H2_GS_ENDED;
	if (f->type == NGHTTP2_HEADERS && (f->flags & NGHTTP2_FLAG_PRIORITY)) {
		/* trailers with a dependency: read it (after the pad length);
		 * too short a frame is nghttp2's error */
		uint8_t want = (f->flags & NGHTTP2_FLAG_PADDED) ? 5 : 4;

		if (f->len >= want)
			g->want = want;
	}
	return false;
}

/* A frame header was read; @return true with @p v for a broken rule. */
static bool
check_header(struct h2_guard *g, const struct frame *f, struct h2_guard_verdict *v)
{
	bool client_sid = (f->sid & 1) != 0;

	if (g->blk != 0) {
		/* Inside a header block only its CONTINUATION frames may come;
		 * anything else is nghttp2's connection error. */
		if (f->type != NGHTTP2_CONTINUATION || f->sid != g->blk) {
			g->state = H2_GUARD_OFF;
			return false;
		}
		if (f->flags & NGHTTP2_FLAG_END_HEADERS)
			g->blk = 0;
		return false;
	}
	switch (f->type) {
	case NGHTTP2_HEADERS:
		if (!(f->flags & NGHTTP2_FLAG_END_HEADERS))
			g->blk = f->sid;
		if (!client_sid)
			return false; /* stream 0 or even: nghttp2's error */
		if (f->sid > g->hi) {
			/* A new stream (a dependency on itself is nghttp2's
			 * connection error). */
			open_stream(g, f->sid, (f->flags & NGHTTP2_FLAG_END_STREAM) != 0);
			return false;
		}
		return check_used(g, f, v);
	case NGHTTP2_DATA:
		if (!client_sid || f->sid > g->hi)
			return false; /* stream 0 or idle: nghttp2's error */
		return check_used(g, f, v);
	case NGHTTP2_RST_STREAM:
		if (client_sid && f->sid <= g->hi) {
			uint8_t *st = remembered(g, f->sid);

			if (st != NULL)
				*st |= H2_GS_RESET;
		}
		return false;
	case NGHTTP2_PRIORITY:
		if (f->sid == 0)
			return verdict(v, H2_GV_GOAWAY, 0, NGHTTP2_PROTOCOL_ERROR);
		if (f->len == PRIORITY_LEN)
			g->want = 4; /* other lengths: nghttp2's FRAME_SIZE_ERROR */
		return false;
	default:
		return false;
	}
}

/* The leading payload bytes @p pay of a frame on @p sid that carries a
 * dependency (@p want: 5 after a pad length, else 4). */
static bool
check_payload(struct h2_guard *g, const uint8_t *pay, uint8_t want, uint32_t sid,
	struct h2_guard_verdict *v)
{
	uint32_t dep = be32(pay + (want == 5 ? 1 : 0)) & 0x7fffffffu;
	uint8_t *st;

	if (dep != sid)
		return false;
	/* A stream that depends on itself: a stream error (RFC 9113 §5.3.1),
	 * unless the stream is idle (a RST_STREAM there is a connection
	 * error for the client, §5.1) or forgotten (the pass could not send
	 * it only once). */
	if (!(sid & 1) || sid > g->hi || (st = remembered(g, sid)) == NULL)
		return verdict(v, H2_GV_GOAWAY, 0, NGHTTP2_PROTOCOL_ERROR);
	return reset_once(st, v, sid, NGHTTP2_PROTOCOL_ERROR);
}

bool
h2_guard_frame(struct h2_guard *g, const uint8_t *f, struct h2_guard_verdict *v)
{
	struct frame fr;

	if (g->state != H2_GUARD_ON)
		return false;
	fr.len = be32(f) >> 8;
	fr.type = f[3];
	fr.flags = f[4];
	fr.sid = be32(f + 5) & 0x7fffffffu;
	g->want = 0;
	if (!check_header(g, &fr, v)) {
		uint8_t want = g->want;

		/* the dependency check reads the first payload bytes (check_header()
		 * asks for them only when the frame holds them) */
		g->want = 0;
		if (want == 0 || !check_payload(g, f + FRAME_HDR, want, fr.sid, v))
			return false;
	}
	v->type = fr.type;
	v->at = 0;
	return true;
}
