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

#define PREFACE_LEN 24u /* "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", checked by nghttp2 */
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

/* The leading payload bytes of the current frame were read (a dependency). */
static bool
check_payload(struct h2_guard *g, struct h2_guard_verdict *v)
{
	uint32_t dep = be32(g->pay + (g->want == 5 ? 1 : 0)) & 0x7fffffffu;
	uint8_t *st;

	if (dep != g->sid)
		return false;
	/* A stream that depends on itself: a stream error (RFC 9113 §5.3.1),
	 * unless the stream is idle (a RST_STREAM there is a connection
	 * error for the client, §5.1) or forgotten (the pass could not send
	 * it only once). */
	if (!(g->sid & 1) || g->sid > g->hi || (st = remembered(g, g->sid)) == NULL)
		return verdict(v, H2_GV_GOAWAY, 0, NGHTTP2_PROTOCOL_ERROR);
	return reset_once(st, v, g->sid, NGHTTP2_PROTOCOL_ERROR);
}

bool
h2_guard_scan(
	struct h2_guard *g, const uint8_t *in, size_t len, size_t *pos, struct h2_guard_verdict *v)
{
	size_t i = *pos;

	if (g->state != H2_GUARD_ON) {
		*pos = len;
		return false;
	}
	if (g->pre < PREFACE_LEN) {
		size_t k = NRF_MIN((size_t)(PREFACE_LEN - g->pre), len - i);

		g->pre += (uint8_t)k;
		i += k;
	}
	while (i < len) {
		struct frame f;
		const uint8_t *h;
		size_t at;

		if (g->skip > 0) {
			/* a payload that began in an earlier read, or one the
			 * check reads */
			size_t k = NRF_MIN((size_t)g->skip, len - i);

			if (g->got < g->want) {
				size_t n = NRF_MIN(k, (size_t)(g->want - g->got));

				memcpy(g->pay + g->got, in + i, n);
				g->got += (uint8_t)n;
				if (g->got == g->want && check_payload(g, v)) {
					v->type = g->type;
					v->at = i;
					g->skip -= (uint32_t)k;
					if (g->skip == 0)
						g->want = 0;
					*pos = i + k;
					return true;
				}
			}
			g->skip -= (uint32_t)k;
			i += k;
			if (g->skip == 0)
				g->want = 0;
			continue;
		}
		if (g->hlen == 0 && len - i >= FRAME_HDR) {
			h = in + i; /* the usual case: a whole header in this read */
			at = i;
			i += FRAME_HDR;
		} else {
			size_t n = NRF_MIN((size_t)(FRAME_HDR - g->hlen), len - i);

			/* a header cut by a read began in an earlier input */
			at = g->hlen == 0 ? i : *pos;
			memcpy(g->hdr + g->hlen, in + i, n);
			g->hlen += (uint8_t)n;
			i += n;
			if (g->hlen < FRAME_HDR)
				break;
			g->hlen = 0;
			h = g->hdr;
		}
		f.len = be32(h) >> 8;
		f.type = h[3];
		f.flags = h[4];
		f.sid = be32(h + 5) & 0x7fffffffu;
		if (check_header(g, &f, v)) {
			v->type = f.type;
			v->at = at;
			g->skip = f.len; /* the next call goes on after it */
			*pos = i;
			return true;
		}
		if (g->want > 0) {
			/* the check reads the first payload bytes */
			g->sid = f.sid;
			g->type = f.type;
			g->got = 0;
			g->skip = f.len;
			continue;
		}
		if (g->state != H2_GUARD_ON)
			break;
		if (f.len <= len - i) {
			i += f.len; /* the usual case: the whole payload is here */
			continue;
		}
		g->skip = f.len - (uint32_t)(len - i);
		break;
	}
	*pos = len;
	return false;
}

/*
 * A front connection's input (h2_srv_engine's recv): the guard's verdicts
 * applied through the server (h2_srv.c), the bytes between them fed to
 * it. Returns 0, or h2_srv_recv()'s NRF_EPARSE / NRF_EPROTO.
 */
int
h2_guard_recv_srv(struct nrf_h2_conn *c, const uint8_t *in, size_t len)
{
	struct h2_guard *g = &c->guard;
	struct h2_guard_verdict v;
	size_t pos = 0, fed = 0;
	int rc;

	if (g->state == H2_GUARD_DONE)
		return 0;
	while (h2_guard_scan(g, in, len, &pos, &v)) {
		if (v.at > fed) {
			rc = h2_srv_recv(c, in + fed, v.at - fed);
			if (rc != 0)
				return rc;
			fed = v.at;
		}
		if (v.kind == H2_GV_GOAWAY) {
			NRF_LOG_RL(DEBUG, MOD, "connection error %s (frame type %u)",
				nghttp2_http2_strerror(v.code), v.type);
			g->state = H2_GUARD_DONE;
			h2_srv_goaway(c, h2_srv_last_proc(c), v.code, NULL, true);
			c->srv->phase = SP_IGNORE;
			return NRF_EPROTO;
		} else {
			struct nrf_h2_stream *st = h2_srv_stream(c, v.sid);

			if (st != NULL) {
				st->flags |= NRF_H2_SF_MALFORMED;
				h2_srv_reset(c, st, v.code);
			} else {
				h2_srv_rst(c, v.sid, v.code);
			}
		}
	}
	if (fed < len)
		return h2_srv_recv(c, in + fed, len - fed);
	return 0;
}
