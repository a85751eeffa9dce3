/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Front (server) connections: nrfwd's own HTTP/2 server framing (decision
 * 0046), the engine h2_srv_engine (h2_int.h). nghttp2's server session,
 * which it replaced and which stayed as a fallback for a while, is gone
 * (decision 0063). It sits on the protocol layer both engines share
 * (h2_proto.c, decision 0067: frame loop, SETTINGS, PING, GOAWAY,
 * WINDOW_UPDATE, CONTINUATION, DATA framing); this file keeps what only a
 * server does, and srv_side, its table of what differs by side.
 *
 * Why: after the upstream leg left nghttp2 (decision 0039), nghttp2's
 * server session was half of a forwarded request's user-space work
 * (docs/benchmarks.md): stream objects, the outbound item queue and its
 * scheduler, an HPACK encoder that hashes every answer field. What a front
 * needs is smaller: requests come in through nrfwd's own HPACK decoder
 * (h2_hpack.c, decision 0047; nghttp2's public inflater until then), the
 * HTTP rules are h2_check.c's (as with nghttp2, which ran
 * without its own: no_http_messaging), answers go out as one HEADERS frame
 * encoded straight into the output queue (HPACK without a dynamic table:
 * :status fully indexed where the static table has it, literal names, raw
 * values) and DATA framed from the stream's body under the client's
 * windows, straight into the connection's output buffer.
 *
 * The behaviour the owner and the client see is that of the nghttp2 server
 * session it replaced, as test_h2_conformance.py, test_hostile.py,
 * test_limits.py and test_timeouts.py pin it (they ran against both):
 * h2_guard.c's frame-header rules on every frame before it is handled
 * (guard(), frame headers read once), header floods answered 431 then
 * GOAWAY(ENHANCE_YOUR_CALM), stream resets limited as Debian's nghttp2
 * limits them (CVE-2023-44487), at most 1 000 unwritten PING/SETTINGS
 * acknowledgements.
 *
 * The rules, as nghttp2 1.52 applies them on a server session with
 * no_closed_streams, no_http_messaging, no_auto_window_update and
 * SETTINGS_NO_RFC7540_PRIORITIES (decision 0009):
 * - a stream id is new when odd and above every id the client used
 *   (last_recv); an even id, or HEADERS on an id at or below last_recv that
 *   is not open, is handled as nghttp2 does (PROTOCOL_ERROR for even ids, the
 *   block decoded and dropped for closed ones, STREAM_CLOSED as a connection
 *   error for a stream the client ended);
 * - over our SETTINGS_MAX_CONCURRENT_STREAMS: REFUSED_STREAM while the
 *   client has not acknowledged it, PROTOCOL_ERROR (connection) after;
 * - frames on a stream this side reset (RST_STREAM queued: CLOSING) are
 *   ignored; DATA is still counted against the connection window and
 *   credited at once;
 * - the first frame must be SETTINGS: otherwise GOAWAY(PROTOCOL_ERROR)
 *   and the rest of the input is ignored (h2_proto.c).
 */
#include <stdlib.h>
#include <string.h>

#include "h2_frame.h"
#include "h2_int.h"
#include "h2_proto.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

/* PING and SETTINGS ACKs queued unwritten before the client counts as
 * flooding (nghttp2's max_outbound_ack). */
#define MAX_ACKS 1000u

struct h2_srv {
	struct h2_proto pr; /* the protocol layer's state (h2_proto.h) */
	uint32_t last_recv; /* highest stream id the client used */
	uint32_t last_proc; /* highest stream id processed (GOAWAY) */
	uint32_t n_in;      /* open streams */
	uint32_t max_streams; /* our SETTINGS_MAX_CONCURRENT_STREAMS */
	uint32_t rx_recv;   /* DATA received, not consumed */
	uint32_t rx_done;   /* consumed, not yet announced */
	uint32_t goaway_last;
	uint8_t hb_flags;   /* the header block's HEADERS frame's flags */
	uint8_t pre;        /* preface bytes matched */
	uint8_t goaway;     /* GA_* */
	uint32_t rst_tokens;   /* reset rate limit (h2_srv.c) */
	uint64_t rst_tokens_at; /* s */
	struct h2_guard guard;  /* the frame-header rules (h2_guard.c) */
};

#define GA_NOTICE 0x01u   /* shutdown notice (last 2^31-1) sent */
#define GA_SENT 0x02u     /* a GOAWAY that stops new streams */
#define GA_TERM 0x04u     /* ... and ends the connection once written */
#define GA_TERM_SENT 0x08u
#define GA_RECV 0x10u

static const struct h2_side srv_side;
_Static_assert(offsetof(struct h2_srv, pr) == 0, "h2_proto_new() gives the state");
static bool srv_idle(const struct nrf_h2_conn *c, uint32_t sid, const struct nrf_h2_stream *st);

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

static inline void calm_check(struct nrf_h2_conn *c, const struct nrf_h2_stream *st);

static inline struct nrf_h2_stream *
lookup(struct nrf_h2_conn *c, uint32_t sid)
{
	return h2_slot_find(c, c->srv->pr.slot, sid);
}

struct nrf_h2_stream *
h2_srv_stream(struct nrf_h2_conn *c, uint32_t sid)
{
	return lookup(c, sid);
}

static void
stream_close(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	struct h2_srv *s = c->srv;

	h2_proto_unlink(&s->pr, st);
	if (--c->n_streams == 0)
		h2_ev_idle(c);
	s->n_in--;
	if (st->rx_held > 0) {
		/* its body goes with it: the client may send more */
		s->rx_done += st->rx_held;
		st->rx_held = 0;
		if (s->rx_done >= s->pr.win / 2) {
			h2_oq_window_update(c, 0, s->rx_done);
			s->rx_done = 0;
		}
	}
	calm_check(c, st); /* the flood's stream ended before its answer */
	if (st->user != NULL && c->cbs->on_close != NULL)
		c->cbs->on_close(st, st->rst_code, 0);
	h2_stream_put(c->ctx, st);
}

/* RST_STREAM(@p code) on @p st, closed once queued (nghttp2 closes it when
 * the frame is written; frames of the client on it meanwhile are
 * ignored either way). */
void
h2_srv_reset(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code)
{
	st->flags |= NRF_H2_SF_RESET;
	if (st->cs & HS_CLOSING)
		return;
	st->cs |= HS_CLOSING;
	h2_oq_rst(c, (uint32_t)st->id, code);
	h2_proto_close_due(c, st, code);
}

/* ------------------------------------------------------------------------ */
/* Connection errors                                                         */

/* GOAWAY(@p code) with the last stream processed, the rest of the input
 * ignored, the connection closed once it is written (nghttp2's
 * terminate_session). */
static int
conn_error(struct nrf_h2_conn *c, uint32_t code, const char *why)
{
	NRF_LOG_RL(INFO, MOD, "client connection: %s: GOAWAY(%s)", why,
		nghttp2_http2_strerror(code));
	h2_srv_goaway(c, c->srv->last_proc, code, why, true);
	c->srv->pr.stop = true;
	return NRF_EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Input: header blocks                                                      */

static void
malformed(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	st->flags |= NRF_H2_SF_MALFORMED;
	if (!(st->flags & NRF_H2_SF_RESET))
		h2_srv_reset(c, st, NRF_H2_PROTOCOL_ERROR);
}

/* GOAWAY(ENHANCE_YOUR_CALM) after a header flood, once the flood's
 * answer is out (h2_conn.c's calm_goaway()). */
static void
calm_now(struct nrf_h2_conn *c)
{
	c->calm_id = 0;
	h2_srv_goaway(c, c->srv->last_proc, NRF_H2_ENHANCE_YOUR_CALM, NULL, true);
}

static inline void
calm_check(struct nrf_h2_conn *c, const struct nrf_h2_stream *st)
{
	if ((c->fl & CF_CALM) && c->calm_id == st->id)
		calm_now(c);
}

/*
 * A header block decoded far beyond max_header_bytes (an HPACK bomb, or a
 * client that ignores SETTINGS_MAX_HEADER_LIST_SIZE): decoding stops and
 * the connection's input is never read again; a fresh request is
 * delivered with its header list over the limit (the owner answers 431),
 * and the connection ends with GOAWAY(ENHANCE_YOUR_CALM) once that answer
 * is out, at once otherwise (as header_flood() in h2_conn.c does).
 * Returns 1: stop the input, no connection error of its own.
 */
static int
flood(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	c->srv->pr.stop = true;
	c->fl |= CF_RSTOP | CF_CALM;
	NRF_LOG_RL(WARN, MOD, "client header block decodes to over %llu bytes "
		"(maxHeaderBytes %u): GOAWAY(ENHANCE_YOUR_CALM)",
		(unsigned long long)c->ctx->bomb_bytes, c->ctx->lim.max_header_bytes);
	if (st != NULL && st->hdr_phase == 0 &&
		!(st->flags & (NRF_H2_SF_MALFORMED | NRF_H2_SF_RESET))) {
		st->flags |= NRF_H2_SF_HDR_OVER;
		c->calm_id = st->id;
		st->hdr_phase = 1;
		h2_conn_deliver(c, st, NRF_ETOOBIG);
	}
	if (st == NULL || c->calm_id != st->id || (st->flags & NRF_H2_SF_OUT_DONE) ||
		(c->fl & CF_WBLOCK))
		calm_now(c);
	return 1;
}

static int
field(struct nrf_h2_conn *c, const struct h2_hpack_field *nv)
{
	struct h2_srv *s = c->srv;
	struct nrf_h2_stream *st = s->pr.hb_st;
	int rc;

	if (st == NULL || st->hdr_phase != 0 ||
		(st->flags & (NRF_H2_SF_HDR_OVER | NRF_H2_SF_BUSY | NRF_H2_SF_MALFORMED))) {
		/* Not kept: what it decodes to counts (HPACK bombs). */
		c->hdr_bytes += nv->namelen + nv->valuelen + 32;
		if (c->hdr_bytes + c->ctx->lim.max_header_bytes > c->ctx->bomb_bytes)
			return flood(c, st);
	}
	if (st == NULL || (st->flags & NRF_H2_SF_MALFORMED))
		return 0;
	rc = h2_check_field(&st->chk, nv->name, nv->namelen, nv->value, nv->valuelen,
		st->hdr_phase != 0, nv->known);
	if (rc != H2_CHK_OK) {
		st->flags |= NRF_H2_SF_MALFORMED;
		return 0;
	}
	if (st->hdr_phase != 0 || (st->flags & (NRF_H2_SF_HDR_OVER | NRF_H2_SF_BUSY)))
		return 0;
	if (h2_msg_store(c->ctx, &st->msg, nv->name, nv->namelen, nv->value, nv->valuelen,
		    nv->known) != 0)
		st->flags |= NRF_H2_SF_HDR_OVER; /* answered 431 */
	return 0;
}

/* Static-table bytes (the decoder's known) are what h2_check_field() and
 * h2_msg_store() take as known: checked already, constant, not copied. */
_Static_assert(H2_HPACK_STATIC_NAME == H2_KNOWN_NAME && H2_HPACK_STATIC_VALUE == H2_KNOWN_VALUE,
	"h2_hpack.h's static bits are h2_int.h's known bits");

static int
on_field(void *arg, const struct h2_hpack_field *f)
{
	struct h2_fld_arg *a = arg;

	a->rc = field(a->c, f);
	return a->rc != 0;
}

static void
block_end(struct nrf_h2_conn *c)
{
	struct h2_srv *s = c->srv;
	struct nrf_h2_stream *st = s->pr.hb_st;
	bool end = (s->hb_flags & FL_END_STREAM) != 0;

	s->pr.hb_sid = 0;
	s->pr.hb_st = NULL;
	if (st == NULL || (st->cs & HS_CLOSING))
		return;
	if (h2_req_malformed(st, true, end)) {
		malformed(c, st);
		return;
	}
	if (st->hdr_phase == 0) {
		int err = h2_conn_check_head(c, st);

		st->hdr_phase = 1;
		if (st->msg.method.len == 4 && memcmp(st->msg.method.p, "HEAD", 4) == 0)
			st->flags |= NRF_H2_SF_HEAD;
		if (err != 0) {
			h2_conn_deliver(c, st, err);
			if (end)
				h2_proto_end_recv(c, st);
			return;
		}
	}
	if (end) {
		st->flags |= NRF_H2_SF_END;
		h2_conn_deliver(c, st, 0);
		h2_proto_end_recv(c, st);
	}
}

/* A new stream the client opens with HEADERS on @p sid (> last_recv, odd);
 * NULL: its block is decoded and dropped (a connection error returns
 * through @p rc). */
static struct nrf_h2_stream *
open_stream(struct nrf_h2_conn *c, uint32_t sid, uint32_t dep, int *rc)
{
	struct h2_srv *s = c->srv;
	struct nrf_h2_stream *st;

	*rc = 0;
	s->last_recv = sid;
	if (s->goaway & (GA_SENT | GA_TERM))
		return NULL; /* not processed after our GOAWAY */
	if (s->pr.settings_acked && s->n_in >= s->max_streams) {
		*rc = conn_error(c, NRF_H2_PROTOCOL_ERROR,
			"request HEADERS: max concurrent streams exceeded");
		return NULL;
	}
	if (dep == sid) {
		*rc = conn_error(c, NRF_H2_PROTOCOL_ERROR, "request HEADERS: depend on itself");
		return NULL;
	}
	if (s->n_in >= s->max_streams) {
		h2_oq_rst(c, sid, NRF_H2_REFUSED_STREAM);
		return NULL;
	}
	st = h2_stream_get(c->ctx, false);
	if (st == NULL) {
		/* Not processed at all: the client may send it again. */
		h2_oq_rst(c, sid, NRF_H2_REFUSED_STREAM);
		return NULL;
	}
	if (h2_over_budget(c->ctx))
		st->flags |= NRF_H2_SF_BUSY; /* answered 503 */
	st->conn = c;
	st->id = (int32_t)sid;
	st->swin = s->pr.r_init_win;
	h2_reqchk_init(&st->chk);
	nrf_list_add_head(&c->streams, &st->link);
	if (c->n_streams++ == 0)
		h2_ev_busy(c);
	s->n_in++;
	s->pr.slot[(sid >> 1) % H2C_SLOTS] = st;
	s->last_proc = sid;
	return st;
}

static int
on_headers(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_srv *s = c->srv;
	struct nrf_h2_stream *st;
	uint32_t dep = 0;
	int rc = 0;

	if (sid == 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "HEADERS: stream_id == 0");
	rc = h2_proto_headers_payload(c, flags, &p, &len, &dep);
	if (rc != 0)
		return rc;
	st = lookup(c, sid);
	if (st == NULL) {
		if ((sid & 1) == 0)
			return conn_error(c, NRF_H2_PROTOCOL_ERROR,
				"request HEADERS: invalid stream_id");
		if (sid > s->last_recv) {
			st = open_stream(c, sid, dep, &rc);
			if (rc != 0)
				return rc;
		}
		/* else: a stream closed (or forgotten): decoded and dropped */
	} else if (st->cs & HS_RD) {
		return conn_error(c, NRF_H2_STREAM_CLOSED, "HEADERS: stream closed");
	} else if (st->cs & HS_CLOSING) {
		st = NULL;
	}
	h2_proto_block_begin(&s->pr, sid, st);
	s->hb_flags = flags;
	c->hdr_bytes = 0;
	return h2_proto_fragment(c, flags, p, len);
}

/* ------------------------------------------------------------------------ */
/* Input: DATA and flow control                                              */

/* @p n bytes of the connection window consumed: WINDOW_UPDATE once half
 * of it waits (nghttp2's rule). */
static void
conn_consumed(struct nrf_h2_conn *c, uint32_t n)
{
	struct h2_srv *s = c->srv;

	s->rx_recv -= NRF_MIN(s->rx_recv, n);
	s->rx_done += n;
	if (s->rx_done >= s->pr.win / 2) {
		h2_oq_window_update(c, 0, s->rx_done);
		s->rx_done = 0;
	}
}

/* @p n bytes of a stream's window consumed (front streams: at once). */
static void
stream_consumed(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t n)
{
	st->rx_open -= NRF_MIN(st->rx_open, n);
	st->rx_due += n;
	if (!(st->cs & (HS_RD | HS_CLOSING)) && st->rx_due >= c->ctx->lim.stream_window / 2) {
		h2_oq_window_update(c, (uint32_t)st->id, st->rx_due);
		st->rx_due = 0;
	}
}

#define DISCARD_MAX (1024u * 1024u)

static int
on_data(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_srv *s = c->srv;
	struct nrf_h2_stream *st;
	struct h2_bytes d;
	bool end = (flags & FL_END_STREAM) != 0;
	int rc;

	if (sid == 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA: stream_id == 0");
	if (srv_idle(c, sid, NULL))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA: stream in idle");
	st = lookup(c, sid);
	if (st != NULL && (st->cs & HS_RD))
		return conn_error(c, NRF_H2_STREAM_CLOSED, "DATA: stream in half-closed(remote)");
	if ((uint64_t)s->rx_recv + len > s->pr.win)
		return conn_error(c, NRF_H2_FLOW_CONTROL_ERROR, "DATA: beyond the connection window");
	s->rx_recv += (uint32_t)len;
	rc = h2_proto_data_payload(c, flags, p, len, &d);
	if (rc != 0)
		return rc;
	if (st == NULL || (st->cs & HS_CLOSING)) {
		conn_consumed(c, (uint32_t)len); /* ignored: consumed at once */
		return 0;
	}
	if ((uint64_t)st->rx_open + len > c->ctx->lim.stream_window) {
		conn_consumed(c, (uint32_t)len);
		h2_srv_reset(c, st, NRF_H2_FLOW_CONTROL_ERROR);
		return 0;
	}
	st->rx_open += (uint32_t)len;
	/* The stream window is credited at once (a body up to max_body_bytes
	 * never waits on it); the connection's when the body is freed. */
	stream_consumed(c, st, (uint32_t)len);
	if (len > d.len)
		conn_consumed(c, (uint32_t)(len - d.len)); /* padding */
	if (st->flags & NRF_H2_SF_MALFORMED) {
		conn_consumed(c, (uint32_t)d.len);
	} else if (h2_check_data(&st->chk, d.len) != H2_CHK_OK ||
		(end && h2_check_end(&st->chk) != H2_CHK_OK)) {
		conn_consumed(c, (uint32_t)d.len);
		malformed(c, st); /* more body than content-length, or less */
		return 0;
	} else if (!(st->flags & (NRF_H2_SF_REJECTED | NRF_H2_SF_RESPONDED))) {
		if (st->msg.body.len + d.len > c->ctx->lim.max_body_bytes) {
			conn_consumed(c, (uint32_t)d.len);
			h2_conn_deliver(c, st, NRF_ETOOBIG);
		} else if (h2_over_budget(c->ctx)) {
			conn_consumed(c, (uint32_t)d.len);
			st->flags |= NRF_H2_SF_BUSY;
			h2_conn_deliver(c, st, NRF_EFULL);
		} else if (d.len > 0 && nrf_h2_body_append(c->ctx, &st->msg.body, d.p, d.len) != 0) {
			conn_consumed(c, (uint32_t)d.len);
			h2_srv_reset(c, st, NRF_H2_INTERNAL_ERROR);
			return 0;
		} else {
			st->rx_held += (uint32_t)d.len;
		}
	} else {
		/* Answered already: the rest is dropped; a client that goes
		 * on sending long after the answer is reset (NO_ERROR). */
		conn_consumed(c, (uint32_t)d.len);
		if (st->unconsumed <= DISCARD_MAX)
			st->unconsumed += (uint32_t)NRF_MIN(d.len, (size_t)DISCARD_MAX + 1);
		if ((st->flags & NRF_H2_SF_OUT_DONE) && !end && st->unconsumed > DISCARD_MAX) {
			h2_srv_reset(c, st, NRF_H2_NO_ERROR);
			return 0;
		}
	}
	if (end) {
		st->flags |= NRF_H2_SF_END;
		if (!(st->flags & NRF_H2_SF_MALFORMED))
			h2_conn_deliver(c, st, 0);
		h2_proto_end_recv(c, st);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Input: the other frames                                                   */

/*
 * Stream resets from the client, a token bucket (nghttp2 1.52.0-1+deb12u1's
 * fix of CVE-2023-44487, rapid reset): a burst of RST_BURST, then RST_RATE
 * a second; beyond it GOAWAY(INTERNAL_ERROR) with the last stream the
 * client used, and no new stream is processed.
 */
#define RST_BURST 1000u
#define RST_RATE 33u

static int
reset_ratelim(struct nrf_h2_conn *c)
{
	struct h2_srv *s = c->srv;
	uint64_t now = nrf_now_ns() / 1000000000ull;

	if (s->goaway & (GA_SENT | GA_TERM))
		return 0;
	if (s->rst_tokens_at == 0) {
		s->rst_tokens = RST_BURST;
		s->rst_tokens_at = now;
	} else if (now > s->rst_tokens_at) {
		uint64_t add = (now - s->rst_tokens_at) * RST_RATE;

		s->rst_tokens = (uint32_t)NRF_MIN((uint64_t)RST_BURST, s->rst_tokens + add);
		s->rst_tokens_at = now;
	}
	if (s->rst_tokens > 0) {
		s->rst_tokens--;
		return 0;
	}
	NRF_LOG_RL(WARN, MOD, "client resets streams faster than %u a second: "
		"GOAWAY(INTERNAL_ERROR)", RST_RATE);
	h2_srv_goaway(c, s->last_recv, NRF_H2_INTERNAL_ERROR, NULL, false);
	return 0;
}

static int
on_rst_stream(struct nrf_h2_conn *c, uint32_t sid, const uint8_t *p, size_t len)
{
	struct nrf_h2_stream *st;

	if (sid == 0)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "RST_STREAM: stream_id == 0");
	if (len != 4)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "RST_STREAM: invalid length");
	if (srv_idle(c, sid, NULL))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "RST_STREAM: stream in idle");
	st = lookup(c, sid);
	if (st != NULL && !(st->cs & HS_CLOSED)) {
		st->cs |= HS_CLOSING;
		h2_proto_close_due(c, st, get32(p));
	}
	return reset_ratelim(c);
}

/*
 * The frame-header rules (h2_guard.c) on frame @p f before it is handled:
 * a connection error ends the connection here; a stream error resets the
 * stream (or answers RST_STREAM on an id this side no longer tracks) and the
 * frame is still handled, as every frame on a stream this side reset is:
 * ignored.
 */
static int
guard(struct nrf_h2_conn *c, const uint8_t *f)
{
	struct h2_srv *s = c->srv;
	struct h2_guard_verdict v;
	struct nrf_h2_stream *st;

	if (s->guard.state != H2_GUARD_ON || !h2_guard_frame(&s->guard, f, &v))
		return 0;
	if (v.kind == H2_GV_GOAWAY) {
		NRF_LOG_RL(DEBUG, MOD, "connection error %s (frame type %u)",
			nghttp2_http2_strerror(v.code), v.type);
		s->guard.state = H2_GUARD_DONE;
		h2_srv_goaway(c, s->last_proc, v.code, NULL, true);
		s->pr.stop = true;
		return NRF_EPROTO;
	}
	st = h2_srv_stream(c, v.sid);
	if (st != NULL) {
		st->flags |= NRF_H2_SF_MALFORMED;
		h2_srv_reset(c, st, v.code);
	} else {
		h2_srv_rst(c, v.sid, v.code);
	}
	return 0;
}

int
h2_srv_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len)
{
	struct h2_srv *s = c->srv;

	if (s->pr.stop)
		return 0;
	if (s->pre < H2_PREFACE_LEN) {
		size_t k = NRF_MIN(len, H2_PREFACE_LEN - s->pre);

		if (memcmp(in, &H2_PREFACE[s->pre], k) != 0)
			return NRF_EPARSE; /* not HTTP/2: closed without GOAWAY */
		s->pre += (uint8_t)k;
		in += k;
		len -= k;
		if (s->pre < H2_PREFACE_LEN)
			return 0;
	}
	return h2_proto_recv(c, in, len);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* The answer body of @p st (side->body): from its inline bytes or its
 * body chunks; none yet and not ended: deferred until more comes. */
static long
srv_body(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *d, size_t room, int64_t w,
	bool *eof)
{
	bool inl = (st->flags & NRF_H2_SF_INLINE) != 0;
	size_t avail = inl ? (size_t)(st->inl_len - st->inl_off) : st->out.len, n;

	if (w <= 0 && avail > 0)
		return -1;
	room = NRF_MIN(room, (size_t)NRF_MAX(w, (int64_t)0));
	n = NRF_MIN(room, avail);
	*eof = n == avail && (inl || (st->flags & NRF_H2_SF_OUT_EOF));
	if (n == 0 && !*eof) {
		st->flags |= NRF_H2_SF_DEFERRED; /* nrf_h2_append()/_end() */
		st->cs &= ~HS_SQ;
		nrf_list_del(&st->sq);
		return -1;
	}
	if (inl) {
		memcpy(d, st->inl + st->inl_off, n);
		st->inl_off += (uint16_t)n;
	} else {
		h2_body_take(c->ctx, &st->out, d, n);
	}
	return (long)n;
}

static void
srv_sent(struct nrf_h2_conn *c, struct nrf_h2_stream *st, size_t n, bool eof)
{
	if (n > 0) {
		h2_tmo_progress(st);
		if (st->user != NULL && c->cbs->on_sent != NULL)
			c->cbs->on_sent(st, n);
	}
	if (eof) {
		st->flags |= NRF_H2_SF_OUT_DONE;
		calm_check(c, st);
		h2_proto_end_sent(c, st, 0);
	}
}

size_t
h2_srv_fill(struct nrf_h2_conn *c, uint8_t *dst, size_t cap)
{
	struct h2_srv *s = c->srv;
	size_t out;
	int q = h2_proto_fill_queued(c, dst, cap, &out);

	if (q < 0)
		return out;
	if (q > 0 && (s->goaway & GA_TERM)) {
		s->goaway |= GA_TERM_SENT;
		return out; /* nothing after a terminating GOAWAY */
	}
	if (s->goaway & GA_TERM)
		return out;
	return h2_proto_fill_streams(c, dst, cap, out);
}

bool
h2_srv_want_write(const struct nrf_h2_conn *c)
{
	const struct h2_srv *s = c->srv;

	if (s->goaway & GA_TERM_SENT)
		return false;
	return h2_oq_pending(c) || !nrf_list_empty(&s->pr.cq) ||
		(!nrf_list_empty(&s->pr.sq) && s->pr.swin > 0);
}

bool
h2_srv_want_read(const struct nrf_h2_conn *c)
{
	const struct h2_srv *s = c->srv;

	if (s->goaway & GA_TERM_SENT)
		return false;
	if (s->n_in > 0)
		return true;
	return !(s->goaway & (GA_SENT | GA_RECV));
}

/* ------------------------------------------------------------------------ */
/* Responses: HPACK without a dynamic table                                  */

/* :status fully indexed where the static table has it (RFC 7541 App. A). */
static uint8_t *
hp_status(uint8_t *p, int status)
{
	char code[3];

	switch (status) {
	case 200:
		*p++ = 0x80 | 8;
		return p;
	case 204:
		*p++ = 0x80 | 9;
		return p;
	case 206:
		*p++ = 0x80 | 10;
		return p;
	case 304:
		*p++ = 0x80 | 11;
		return p;
	case 400:
		*p++ = 0x80 | 12;
		return p;
	case 404:
		*p++ = 0x80 | 13;
		return p;
	case 500:
		*p++ = 0x80 | 14;
		return p;
	default:
		break;
	}
	code[0] = (char)('0' + status / 100);
	code[1] = (char)('0' + status / 10 % 10);
	code[2] = (char)('0' + status % 10);
	p = hp_int(p, 0, 4, 8); /* literal without indexing, name :status */
	return hp_str(p, code, 3);
}

/*
 * The HEADERS frame (and CONTINUATION frames beyond the client's frame
 * size) of an answer, appended to the output queue. Field names are
 * literal (h2_cli.c's name index could be shared here), values raw, "never
 * indexed" for what h2_cli.c sends so.
 */
int
h2_srv_headers(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int status,
	const struct nrf_h2_hdr *hdrs, size_t n_hdrs, bool end)
{
	struct h2_srv *s = c->srv;
	size_t i, bound = 16, blen, maxf = NRF_MIN(s->pr.r_max_frame, H2_FRAME_MAX), nframes;
	uint8_t *base, *p;

	for (i = 0; i < n_hdrs; i++)
		bound += hdrs[i].name.len + hdrs[i].value.len + 16;
	nframes = bound / maxf + 1;
	base = h2_oq_reserve(c, bound + 9 * nframes);
	if (base == NULL)
		return NRF_ENOMEM;
	p = base + 9;
	*p++ = 0x20; /* table size update to 0: no dynamic table here */
	p = hp_status(p, status);
	for (i = 0; i < n_hdrs; i++) {
		if (nrf_h2_hop_by_hop(hdrs[i].name, hdrs[i].value))
			continue;
		*p++ = 0x00;
		p = hp_str(p, hdrs[i].name.p, hdrs[i].name.len);
		p = hp_str(p, hdrs[i].value.p, hdrs[i].value.len);
	}
	blen = (size_t)(p - base) - 9;
	c->oq.len += (uint32_t)h2_proto_frame_block(base, blen, maxf, (uint32_t)st->id, end);
	st->cs |= HS_HDRS;
	if (end) {
		st->cs |= HS_WR;
		st->flags |= NRF_H2_SF_OUT_DONE;
		calm_check(c, st);
		if (st->cs & HS_RD)
			h2_proto_close_due(c, st, NRF_H2_NO_ERROR);
	} else if (!(st->cs & HS_SQ)) {
		st->cs |= HS_SQ;
		nrf_list_add_tail(&s->pr.sq, &st->sq);
	}
	h2_mark_dirty(c);
	return 0;
}

/* Body bytes arrived for a deferred answer (nrf_h2_append()/_end()). */
void
h2_srv_resume(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	st->flags &= ~NRF_H2_SF_DEFERRED;
	if (!(st->cs & (HS_SQ | HS_WR | HS_CLOSING)) && (st->cs & HS_HDRS)) {
		st->cs |= HS_SQ;
		nrf_list_add_tail(&c->srv->pr.sq, &st->sq);
	}
	h2_mark_dirty(c);
}

/* ------------------------------------------------------------------------ */
/* Connection                                                                */

int
h2_srv_start(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	struct h2_srv *s = h2_proto_new(c, &srv_side);
	uint8_t *p;
	uint32_t win;

	if (s == NULL)
		return NRF_ENOMEM;
	s->max_streams = ctx->lim.max_concurrent_streams;
	/* SETTINGS: MAX_CONCURRENT_STREAMS, NO_RFC7540_PRIORITIES,
	 * MAX_HEADER_LIST_SIZE, INITIAL_WINDOW_SIZE; then the connection
	 * window (front_data()'s rule: it holds a whole body and more). */
	p = h2_oq_reserve(c, 9 + 24 + 13);
	if (p == NULL)
		return NRF_ENOMEM;
	frame_hd(p, 24, FT_SETTINGS, 0, 0);
	p = h2_proto_setting(p + 9, 0x3, ctx->lim.max_concurrent_streams);
	p = h2_proto_setting(p, 0x9, 1);
	p = h2_proto_setting(p, 0x6, ctx->lim.max_header_bytes);
	h2_proto_setting(p, 0x4, ctx->lim.stream_window);
	c->oq.len = 9 + 24;
	win = (uint32_t)NRF_MIN(NRF_MAX((uint64_t)ctx->lim.conn_window,
					(uint64_t)ctx->lim.max_body_bytes + ctx->lim.stream_window),
		(uint64_t)WIN_MAX);
	h2_proto_window(c, win);
	return 0;
}

/*
 * GOAWAY(@p last, @p code, @p why). @p term: the connection ends once it
 * is written (nghttp2's terminate_session); otherwise streams up to @p
 * last go on and no new one is processed (a final graceful GOAWAY; the
 * shutdown notice, last 2^31-1, is sent with term false and does not stop
 * new streams: GA_NOTICE).
 */
void
h2_srv_goaway(struct nrf_h2_conn *c, uint32_t last, uint32_t code, const char *why, bool term)
{
	struct h2_srv *s = c->srv;

	if ((s->goaway & GA_TERM) || !h2_proto_goaway(c, last, code, why))
		return;
	if (last == WIN_MAX && !term) {
		s->goaway |= GA_NOTICE;
	} else {
		s->goaway |= GA_SENT | (term ? GA_TERM : 0);
		s->goaway_last = last;
	}
}

uint32_t
h2_srv_last_proc(const struct nrf_h2_conn *c)
{
	return c->srv->last_proc;
}

/* RST_STREAM(@p code) on a stream this side no longer tracks (a verdict of
 * the frame-header rules, guard()). */
void
h2_srv_rst(struct nrf_h2_conn *c, uint32_t sid, uint32_t code)
{
	h2_oq_rst(c, sid, code);
}

/* A frame on @p sid (other than HEADERS) is a connection error: an even
 * id, or one above every id the client used. */
static bool
srv_idle(const struct nrf_h2_conn *c, uint32_t sid, const struct nrf_h2_stream *st)
{
	(void)st;
	return (sid & 1) == 0 || sid > c->srv->last_recv;
}

static void
srv_goaway_recv(struct nrf_h2_conn *c)
{
	c->srv->goaway |= GA_RECV;
}

/* What the server side of the protocol layer (h2_proto.h) does its way:
 * nghttp2's server session's rules and texts. */
static const struct h2_side srv_side = {
	.who = "client",
	.push_why = "PUSH_PROMISE: received by a server",
	.lim = { .push_max = 1, .max_acks = MAX_ACKS, .data_max = H2_FRAME_MAX },
	.size = sizeof(struct h2_srv),
	.cs = { .ignored = HS_CLOSING, .queued = HS_CLOSED, .closing = HS_CLOSED | HS_CLOSING,
		.end_recv = HS_RD, .end_sent = HS_WR },
	.flags = H2_SIDE_EXT_SETTINGS | H2_SIDE_WU0_CONN | H2_SIDE_RST_ON_HPACK | H2_SIDE_WINDOW_STOP,
	.conn_error = conn_error,
	.pre = guard,
	.data = on_data,
	.headers = on_headers,
	.rst_stream = on_rst_stream,
	.on_field = on_field,
	.block_end = block_end,
	.idle = srv_idle,
	.reset = h2_srv_reset,
	.goaway_recv = srv_goaway_recv,
	.stream_close = stream_close,
	.settings = h2_tmo_settings,
	.body = srv_body,
	.sent = srv_sent,
};

/* Both sides done: nothing more to read (a GOAWAY either way, no stream
 * left) and nothing left to write. */
static bool
h2_srv_done(const struct nrf_h2_conn *c)
{
	return !h2_srv_want_read(c) && !h2_srv_want_write(c);
}

const struct h2_engine_ops h2_srv_engine = H2_ENGINE_OPS(srv, "server");
