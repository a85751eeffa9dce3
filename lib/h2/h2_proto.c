/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/2 protocol layer under nrfwd's own server (h2_srv.c) and client
 * (h2_cli.c): h2_proto.h says what it holds and what each side keeps
 * (decision 0067). This is the file to change how SETTINGS, PING, GOAWAY,
 * WINDOW_UPDATE, CONTINUATION or the frame loop behave on both legs.
 *
 * Connection-error texts are nghttp2's (the front sends them as GOAWAY
 * debug data, as nghttp2's server session did; the client only logs them).
 */
#include <stdlib.h>
#include <string.h>

#include "h2_frame.h"
#include "h2_int.h"
#include "h2_proto.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

static inline int
conn_error(struct nrf_h2_conn *c, uint32_t code, const char *why)
{
	return c->pr->side->conn_error(c, code, why);
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                    */

void *
h2_proto_new(struct nrf_h2_conn *c, const struct h2_side *side)
{
	struct h2_proto *pr = calloc(1, side->size);

	if (pr == NULL)
		return NULL;
	h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, (int64_t)side->size);
	pr->side = side;
	nrf_list_init(&pr->sq);
	nrf_list_init(&pr->cq);
	pr->r_init_win = WIN_DEFAULT;
	pr->r_max_frame = 16384;
	pr->swin = WIN_DEFAULT;
	h2_hpack_init(&pr->hp, &c->ctx->mem.mem, H2_HPACK_TABLE_MAX);
	c->pr = pr;
	return pr;
}

void
h2_proto_free(struct nrf_h2_conn *c)
{
	struct h2_proto *pr = c->pr;

	if (pr == NULL)
		return;
	h2_hpack_fini(&pr->hp);
	h2_oq_fini(c);
	if (pr->ib != NULL)
		h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)(9 + H2_FRAME_MAX));
	free(pr->ib);
	h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)pr->side->size);
	free(pr);
	c->pr = NULL;
}

uint8_t *
h2_proto_setting(uint8_t *p, uint16_t id, uint32_t v)
{
	p[0] = (uint8_t)(id >> 8);
	p[1] = (uint8_t)id;
	put32(p + 2, v);
	return p + 6;
}

void
h2_proto_window(struct nrf_h2_conn *c, uint32_t win)
{
	struct h2_proto *pr = c->pr;
	uint8_t *p;

	pr->win = NRF_MAX(win, WIN_DEFAULT);
	if (pr->win > WIN_DEFAULT) {
		p = c->oq.buf + c->oq.len;
		frame_hd(p, 4, FT_WINDOW_UPDATE, 0, 0);
		put32(p + 9, pr->win - WIN_DEFAULT);
		c->oq.len += 13;
	}
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

size_t
h2_proto_fill_data(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *dst, size_t cap)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	size_t out = 0;

	while (cap - out > 9) {
		int64_t w = NRF_MIN(pr->swin, st->swin);
		size_t room = NRF_MIN(cap - out - 9, (size_t)NRF_MIN(pr->r_max_frame, side->lim.data_max));
		bool eof = false;
		long n = side->body(c, st, dst + out + 9, room, w, &eof);

		if (n < 0)
			break;
		frame_hd(dst + out, (uint32_t)n, FT_DATA, eof ? FL_END_STREAM : 0, (uint32_t)st->id);
		out += 9 + (size_t)n;
		pr->swin -= n;
		st->swin -= n;
		side->sent(c, st, (size_t)n, eof);
		if (eof)
			break;
	}
	return out;
}

size_t
h2_proto_fill_streams(struct nrf_h2_conn *c, uint8_t *dst, size_t cap, size_t out)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	struct nrf_list *l, *nx;

	NRF_LIST_FOREACH_SAFE(l, nx, &pr->sq) {
		struct nrf_h2_stream *st = nrf_container_of(l, struct nrf_h2_stream, sq);

		if (side->head != NULL) {
			int r = side->head(c, st, dst, cap, &out);

			if (r < 0)
				break;
			if (r > 0)
				continue;
		}
		if (cap - out <= 9 || pr->swin <= 0) {
			if (side->flags & H2_SIDE_WINDOW_STOP)
				break;
			continue;
		}
		out += h2_proto_fill_data(c, st, dst + out, cap - out);
	}
	return out;
}

bool
h2_proto_goaway(struct nrf_h2_conn *c, uint32_t last, uint32_t code, const char *why)
{
	size_t wl = why != NULL ? strlen(why) : 0;
	uint8_t *p = h2_oq_put(c, FT_GOAWAY, 0, 0, 8 + wl);

	if (p == NULL)
		return false;
	put32(p, last & WIN_MAX);
	put32(p + 4, code);
	if (wl > 0)
		memcpy(p + 8, why, wl);
	return true;
}

int
h2_proto_ping(struct nrf_h2_conn *c, const uint8_t data[8])
{
	return h2_oq_frame(c, FT_PING, 0, 0, data, 8) ? 0 : NRF_ENOMEM;
}

size_t
h2_proto_frame_split(uint8_t *base, size_t blen, size_t maxf, uint32_t sid, bool end)
{
	size_t nframes, f;

	/* Rare: split, from the last fragment back (each moves up by 9 per
	 * frame before it). */
	nframes = (blen + maxf - 1) / maxf;
	for (f = nframes - 1; f > 0; f--) {
		size_t off = f * maxf, len = NRF_MIN(maxf, blen - off);
		uint8_t *dst = base + f * (9 + maxf);

		memmove(dst + 9, base + 9 + off, len);
		frame_hd(dst, (uint32_t)len, FT_CONTINUATION,
			f == nframes - 1 ? FL_END_HEADERS : 0, sid);
	}
	frame_hd(base, (uint32_t)maxf, FT_HEADERS, end ? FL_END_STREAM : 0, sid);
	return blen + 9 * nframes;
}

/* ------------------------------------------------------------------------ */
/* Input: header blocks                                                      */

uint32_t
h2_proto_max_frames(const struct nrf_h2_ctx *ctx)
{
	return 1 + NRF_MAX(8u, 2 * ((ctx->lim.max_header_bytes + 16383u) / 16384u));
}

static int
on_continuation(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p,
	size_t len)
{
	struct h2_proto *pr = c->pr;

	if (pr->hb_sid == 0 || sid != pr->hb_sid)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "unexpected CONTINUATION");
	if (++pr->hb_frames > h2_proto_max_frames(c->ctx))
		return conn_error(c, NRF_H2_ENHANCE_YOUR_CALM, "too many CONTINUATION frames");
	return h2_proto_fragment(c, flags, p, len);
}

/* ------------------------------------------------------------------------ */
/* Input: connection frames                                                  */

static int
on_settings(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	size_t i;

	if (sid != 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "SETTINGS: stream_id != 0");
	if (flags & FL_ACK) {
		if (len != 0)
			return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "SETTINGS: ACK and payload != 0");
		pr->settings_acked = true;
		if (side->settings != NULL)
			side->settings(c, flags);
		return 0;
	}
	if (len % 6 != 0)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "SETTINGS: invalid payload length");
	if (!pr->settings_seen) {
		/* MAX_CONCURRENT_STREAMS starts unlimited; the client's 100
		 * held only until now. */
		pr->settings_seen = true;
		pr->r_max_streams = UINT32_MAX;
	}
	for (i = 0; i < len; i += 6) {
		uint16_t id = (uint16_t)(p[i] << 8 | p[i + 1]);
		uint32_t v = get32(p + i + 2);

		switch (id) {
		case 0x2: /* ENABLE_PUSH */
			if (v > side->lim.push_max)
				return conn_error(c, NRF_H2_PROTOCOL_ERROR,
					"SETTINGS: invalid SETTINGS_ENBLE_PUSH");
			break;
		case 0x3:
			pr->r_max_streams = v;
			break;
		case 0x4: { /* INITIAL_WINDOW_SIZE: open streams too */
			struct nrf_list *l;
			int64_t delta = (int64_t)v - (int64_t)pr->r_init_win;

			if (v > WIN_MAX)
				return conn_error(c, NRF_H2_FLOW_CONTROL_ERROR,
					"SETTINGS: invalid SETTINGS_INITIAL_WINDOW_SIZE");
			NRF_LIST_FOREACH(l, &c->streams) {
				struct nrf_h2_stream *st =
					nrf_container_of(l, struct nrf_h2_stream, link);

				st->swin += delta;
				if (st->swin > WIN_MAX)
					return conn_error(c, NRF_H2_FLOW_CONTROL_ERROR,
						"SETTINGS: stream window over 2^31-1");
			}
			pr->r_init_win = v;
			if (delta > 0 && !nrf_list_empty(&pr->sq))
				h2_mark_dirty(c);
			break;
		}
		case 0x5:
			if (v < 16384 || v > 16777215)
				return conn_error(c, NRF_H2_PROTOCOL_ERROR,
					"SETTINGS: invalid SETTINGS_MAX_FRAME_SIZE");
			pr->r_max_frame = v;
			break;
		case 0x8: /* ENABLE_CONNECT_PROTOCOL (RFC 8441 §3) */
			if ((side->flags & H2_SIDE_EXT_SETTINGS) && v > 1)
				return conn_error(c, NRF_H2_PROTOCOL_ERROR,
					"SETTINGS: invalid SETTINGS_ENABLE_CONNECT_PROTOCOL");
			break;
		case 0x9: /* NO_RFC7540_PRIORITIES */
			if (!(side->flags & H2_SIDE_EXT_SETTINGS))
				break;
			if (v > 1)
				return conn_error(c, NRF_H2_PROTOCOL_ERROR,
					"SETTINGS: invalid SETTINGS_NO_RFC7540_PRIORITIES");
			pr->r_no_rfc7540 = v == 1;
			break;
		default:
			break; /* table size (no dynamic table here), list size, others */
		}
	}
	if (++pr->oq_acks > side->lim.max_acks)
		return conn_error(c, NRF_H2_ENHANCE_YOUR_CALM, "too many ACKs queued");
	if (side->settings != NULL)
		side->settings(c, flags);
	h2_oq_frame(c, FT_SETTINGS, FL_ACK, 0, NULL, 0);
	return 0;
}

static int
on_ping(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_proto *pr = c->pr;

	if (len != 8 && (pr->side->flags & H2_SIDE_PING_LEN_FIRST))
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "PING: invalid payload length");
	if (sid != 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "PING: stream_id != 0");
	if (len != 8)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "PING: invalid payload length");
	if (!(flags & FL_ACK)) {
		if (++pr->oq_acks > pr->side->lim.max_acks)
			return conn_error(c, NRF_H2_ENHANCE_YOUR_CALM, "too many ACKs queued");
		h2_oq_frame(c, FT_PING, FL_ACK, 0, p, 8);
		return 0;
	}
	h2_conn_ping_ack(c, p);
	return 0;
}

static int
on_goaway(struct nrf_h2_conn *c, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_proto *pr = c->pr;
	uint32_t last, code;

	if (sid != 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "GOAWAY: stream_id != 0");
	if (len < 8)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "GOAWAY: invalid payload length");
	last = get32(p) & WIN_MAX;
	code = get32(p + 4);
	if (code != NRF_H2_NO_ERROR)
		NRF_LOG_RL(INFO, MOD, "%s sent GOAWAY(%s), last stream %u: \"%.*s\"",
			pr->side->who, nghttp2_http2_strerror(code), last,
			(int)NRF_MIN(len - 8, (size_t)80), (const char *)p + 8);
	if (!(c->fl & CF_GOAWAY_RECV) || last < pr->r_goaway_last)
		pr->r_goaway_last = last;
	c->fl |= CF_GOAWAY_RECV;
	pr->side->goaway_recv(c);
	return 0;
}

static int
on_window_update(struct nrf_h2_conn *c, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	struct nrf_h2_stream *st;
	uint32_t inc;

	if (len != 4)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "WINDOW_UPDATE: invalid length");
	inc = get32(p) & WIN_MAX;
	if (sid == 0) {
		if (inc == 0)
			return conn_error(c, NRF_H2_PROTOCOL_ERROR,
				"WINDOW_UPDATE: window_size_increment == 0");
		pr->swin += inc;
		if (pr->swin > WIN_MAX)
			return conn_error(c, NRF_H2_FLOW_CONTROL_ERROR,
				"WINDOW_UPDATE: window over 2^31-1");
		if (!nrf_list_empty(&pr->sq))
			h2_mark_dirty(c);
		return 0;
	}
	st = h2_slot_find(c, pr->slot, sid);
	if (side->idle(c, sid, st))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "WINDOW_UPDATE to idle stream");
	if (st == NULL || (st->cs & side->cs.ignored))
		return 0;
	if (inc == 0) {
		if (side->flags & H2_SIDE_WU0_CONN)
			return conn_error(c, NRF_H2_PROTOCOL_ERROR,
				"WINDOW_UPDATE: window_size_increment == 0");
		side->reset(c, st, NRF_H2_PROTOCOL_ERROR);
		return 0;
	}
	st->swin += inc;
	if (st->swin > WIN_MAX) {
		side->reset(c, st, NRF_H2_FLOW_CONTROL_ERROR);
		return 0;
	}
	if (st->cs & H2_CS_SQ)
		h2_mark_dirty(c);
	return 0;
}

static int
on_priority(struct nrf_h2_conn *c, uint32_t sid, size_t len)
{
	if (sid == 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "PRIORITY: stream_id == 0");
	/* RFC 7540 priorities are off here; nghttp2 still checks the length
	 * while the peer has not said it does without them either. */
	if (len != 5 && !c->pr->r_no_rfc7540)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "PRIORITY: invalid length");
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The frame loop                                                            */

static int
frame(struct nrf_h2_conn *c, const uint8_t *f, size_t len)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	uint8_t type = f[3], flags = f[4];
	uint32_t sid = get32(f + 5) & WIN_MAX;
	const uint8_t *p = f + 9;

	if (side->pre != NULL) {
		int rc = side->pre(c, f);

		if (rc != 0)
			return rc;
	}
	if (!pr->settings_seen && (type != FT_SETTINGS || (flags & FL_ACK)))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "SETTINGS expected");
	if (pr->hb_sid != 0 && type != FT_CONTINUATION)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "unexpected non-CONTINUATION frame");
	switch (type) {
	case FT_DATA:
		return side->data(c, flags, sid, p, len);
	case FT_HEADERS:
		return side->headers(c, flags, sid, p, len);
	case FT_CONTINUATION:
		return on_continuation(c, flags, sid, p, len);
	case FT_PRIORITY:
		return on_priority(c, sid, len);
	case FT_RST_STREAM:
		return side->rst_stream(c, sid, p, len);
	case FT_SETTINGS:
		return on_settings(c, flags, sid, p, len);
	case FT_PUSH_PROMISE:
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, side->push_why);
	case FT_PING:
		return on_ping(c, flags, sid, p, len);
	case FT_GOAWAY:
		return on_goaway(c, sid, p, len);
	case FT_WINDOW_UPDATE:
		return on_window_update(c, sid, p, len);
	default:
		return 0; /* unknown types are ignored (RFC 9113 §4.1) */
	}
}

/* One whole frame; streams it ended closed after it. Nonzero (or a dead
 * or stopped connection): the input stops. */
static inline int
frame_done(struct nrf_h2_conn *c, const uint8_t *f, size_t len)
{
	int rc = frame(c, f, len);

	if (!nrf_list_empty(&c->pr->cq))
		h2_proto_close_pending(c);
	return rc;
}

static inline bool
stopped(const struct nrf_h2_conn *c, int rc)
{
	return rc != 0 || (c->fl & CF_DEAD) || c->pr->stop;
}

int
h2_proto_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	int rc;

	if (pr->ib_len > 0) {
		/* Complete the frame an earlier read began. */
		size_t take, need;

		if (pr->ib_len < 9) {
			take = NRF_MIN(len, (size_t)(9 - pr->ib_len));
			memcpy(pr->ib + pr->ib_len, in, take);
			pr->ib_len += (uint32_t)take;
			in += take;
			len -= take;
			if (pr->ib_len < 9)
				return 0;
		}
		if (frame_len(pr->ib) > H2_FRAME_MAX)
			return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "too large frame size");
		need = 9 + frame_len(pr->ib) - pr->ib_len;
		take = NRF_MIN(len, need);
		memcpy(pr->ib + pr->ib_len, in, take);
		pr->ib_len += (uint32_t)take;
		in += take;
		len -= take;
		if (take < need) {
			if (!pr->ib_seen && side->early != NULL) {
				pr->ib_seen = true;
				side->early(c, pr->ib);
			}
			return 0;
		}
		pr->ib_len = 0;
		rc = frame_done(c, pr->ib, frame_len(pr->ib));
		if (stopped(c, rc))
			return rc > 0 ? 0 : rc;
	}
	while (len >= 9) {
		uint32_t flen = frame_len(in);

		if (flen > H2_FRAME_MAX)
			return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "too large frame size");
		if (len < 9 + (size_t)flen)
			break;
		rc = frame_done(c, in, flen);
		if (stopped(c, rc))
			return rc > 0 ? 0 : rc;
		in += 9 + flen;
		len -= 9 + flen;
	}
	if (len > 0) {
		if (len >= 9 && frame_len(in) > H2_FRAME_MAX)
			return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "too large frame size");
		if (len >= 9 && side->data_begin != NULL && side->data_begin(c, in, len - 9, &rc))
			return rc;
		if (pr->ib == NULL) {
			pr->ib = malloc(9 + H2_FRAME_MAX);
			if (pr->ib == NULL) {
				h2_conn_fail(c, NRF_ENOMEM);
				return NRF_ENOMEM;
			}
			h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, 9 + H2_FRAME_MAX);
		}
		memcpy(pr->ib, in, len);
		pr->ib_len = (uint32_t)len;
		pr->ib_seen = len >= 9;
		if (pr->ib_seen && side->early != NULL)
			side->early(c, pr->ib);
	}
	return 0;
}
