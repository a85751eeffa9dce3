/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timeouts of everything a client or peer can hold open: one sweep per
 * context every few hundred milliseconds over the connections and their
 * open streams, instead of a timer per connection or per stream.
 *
 * Why a sweep: 10 000 connections with a heap timer each would mean a heap
 * operation on every request (re-arming an idle or body timer) for deadlines
 * measured in seconds, where a few hundred milliseconds of precision are
 * plenty. The sweep costs one pass over the context's connections and open
 * streams per period (a few flag tests each), nothing on the request path.
 *
 * Why no clock on the event paths: a state's start is noted by the first
 * sweep that sees it (conn->tmo_*, stream->tmo_*), and the event paths only
 * clear a note when the state moves on (h2_tmo_progress(),
 * h2_tmo_writable(), a new stream id). A note is never earlier than the
 * state's real start, so nothing ends before its timeout; a state that
 * ended and began again between two sweeps is caught by the clear (or by
 * the stream id mark of the idle check), so a busy connection is never
 * taken for an idle one.
 */
#include <string.h>

#include "h2_int.h"
#include "h2_proto.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

#define SWEEP_MIN_MS 10u
#define SWEEP_MAX_MS 250u

void
nrf_h2_ctx_set_timeouts(struct nrf_h2_ctx *ctx, const struct nrf_h2_timeouts *t)
{
	ctx->tmo = *t;
}

uint32_t
nrf_h2_ctx_sweep_period_ms(const struct nrf_h2_ctx *ctx)
{
	const uint32_t v[] = {ctx->tmo.handshake_ms, ctx->tmo.header_ms, ctx->tmo.body_ms,
		ctx->tmo.idle_ms, ctx->tmo.stalled_ms, ctx->tmo.upstream_idle_ms};
	uint32_t low = UINT32_MAX;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] != 0 && v[i] < low)
			low = v[i];
	if (low == UINT32_MAX)
		return SWEEP_MAX_MS;
	return NRF_MAX(SWEEP_MIN_MS, NRF_MIN(SWEEP_MAX_MS, low / 4));
}

/*
 * The waiting state noted in @p *since goes on at @p now: true when it has
 * lasted @p ms (0: this check is off). Notes the start when it is new.
 */
static bool
over(uint64_t *since, uint64_t now, uint32_t ms)
{
	if (*since == 0) {
		*since = now != 0 ? now : 1; /* 0 means "not seen" */
		return false;
	}
	return ms != 0 && now - *since >= (uint64_t)ms * 1000000ull;
}

/* Front: the highest stream id processed. */
static int32_t
last_proc(struct nrf_h2_conn *c)
{
	return (int32_t)h2_srv_last_proc(c);
}

/* Front: GOAWAY (a last attempt to write it is made at teardown), then
 * close. */
static void
close_with_goaway(struct nrf_h2_conn *c, int32_t last, uint32_t code, const char *why)
{
	h2_srv_goaway(c, (uint32_t)last, code, why, true);
	nrf_h2_conn_close(c, NRF_ETIMEDOUT);
}

/* GOAWAY(NO_ERROR) with the last stream processed; the connection closes
 * by itself once it is written (no stream left: the engine is done). */
static void
goaway_idle(struct nrf_h2_conn *c)
{
	static const char why[] = "idle timeout";

	c->fl |= CF_SHUTDOWN;
	h2_ev_busy(c); /* leaving: not to be evicted */
	c->tmo_idle = 0; /* from now: how long it lingers (linger()) */
	if (!c->server) {
		h2_cli_goaway(c, NRF_H2_NO_ERROR, why);
		return;
	}
	h2_srv_goaway(c, h2_srv_last_proc(c), NRF_H2_NO_ERROR, why, false);
	h2_mark_dirty(c);
}

/* on_request(st, NRF_ETIMEDOUT): the owner answers 408. */
static void
deliver_timeout(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	st->flags |= NRF_H2_SF_DELIVERED | NRF_H2_SF_REJECTED | NRF_H2_SF_TIMEDOUT;
	if (c->cbs->on_request != NULL)
		c->cbs->on_request(st, NRF_ETIMEDOUT);
}

static bool
answer_waits(const struct nrf_h2_stream *st)
{
	if (!(st->flags & NRF_H2_SF_RESPONDED) ||
		(st->flags & (NRF_H2_SF_OUT_DONE | NRF_H2_SF_RESET)))
		return false;
	if (st->flags & NRF_H2_SF_INLINE)
		return st->inl_off < st->inl_len;
	return st->out.len > 0;
}

/*
 * The request side of front stream @p st. @return false when the whole
 * connection was closed (a header block that never ends).
 */
static bool
sweep_request(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint64_t now,
	uint64_t *counts)
{
	const struct nrf_h2_timeouts *t = &c->ctx->tmo;

	if (st->flags & (NRF_H2_SF_END | NRF_H2_SF_RESET)) {
		st->tmo_req = 0;
		return true;
	}
	if (st->hdr_phase == 0) {
		/* Its header block is under way, and no other frame can come
		 * before it ends (RFC 9113 §6.10): nothing on this connection
		 * moves, and the stream cannot take an answer yet. */
		if (!over(&st->tmo_req, now, t->header_ms))
			return true;
		counts[NRF_H2_TMO_HEADER]++;
		NRF_LOG_RL(INFO, MOD, "header block of stream %d not finished in %u ms: "
			"closing the connection", st->id, t->header_ms);
		close_with_goaway(c, st->id > 2 ? st->id - 2 : 0, NGHTTP2_NO_ERROR,
			"header timeout");
		return false;
	}
	if (st->flags & NRF_H2_SF_TIMEDOUT) {
		/* 408 given: end the upload once it is out (RFC 9113 §8.1); a
		 * reader that does not take it is the stall check's. */
		if (st->flags & NRF_H2_SF_OUT_DONE)
			nrf_h2_reset(st, NRF_H2_NO_ERROR);
		else if (!(st->flags & NRF_H2_SF_RESPONDED))
			nrf_h2_reset(st, NRF_H2_CANCEL);
		return true;
	}
	if (!over(&st->tmo_req, now, t->body_ms))
		return true;
	counts[NRF_H2_TMO_BODY]++;
	NRF_LOG_RL(INFO, MOD, "request on stream %d not complete in %u ms", st->id,
		t->body_ms);
	if (!(st->flags & NRF_H2_SF_DELIVERED)) {
		deliver_timeout(c, st);
		return true;
	}
	/* Answered early (413, 400) while the upload goes on. */
	st->flags |= NRF_H2_SF_TIMEDOUT;
	nrf_h2_reset(st, (st->flags & NRF_H2_SF_OUT_DONE) ? NRF_H2_NO_ERROR : NRF_H2_CANCEL);
	return true;
}

/* The answer side of front stream @p st: a reader that takes nothing. */
static void
sweep_answer(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint64_t now,
	uint64_t *counts)
{
	uint32_t ms = c->ctx->tmo.stalled_ms;

	if (!answer_waits(st)) {
		st->tmo_out = 0;
		return;
	}
	if (!over(&st->tmo_out, now, ms))
		return;
	counts[NRF_H2_TMO_STALLED_READER]++;
	NRF_LOG_RL(INFO, MOD, "answer on stream %d not taken for %u ms (window %d/%d): "
		"reset", st->id, ms, (int)st->swin, (int)c->pr->swin);
	nrf_h2_reset(st, NRF_H2_CANCEL);
}

/*
 * A connection that sent its GOAWAY (idle timeout, graceful stop) and has
 * no stream left closes as soon as the GOAWAY is written. One still there
 * another @p ms later is closed outright.
 */
static void
linger(struct nrf_h2_conn *c, uint64_t now, uint32_t ms)
{
	if (over(&c->tmo_idle, now, ms))
		nrf_h2_conn_close(c, NRF_ETIMEDOUT);
}

static void
sweep_server(struct nrf_h2_conn *c, uint64_t now, uint64_t *counts)
{
	const struct nrf_h2_timeouts *t = &c->ctx->tmo;
	struct nrf_h2_stream *st;
	struct nrf_list *l, *nx;

	if ((c->fl & (CF_PREFACE | CF_ACKED)) != (CF_PREFACE | CF_ACKED)) {
		if (over(&c->tmo_hs, now, t->handshake_ms)) {
			counts[NRF_H2_TMO_HANDSHAKE]++;
			NRF_LOG_RL(INFO, MOD, "connection handshake not done in %u ms (%s): closing",
				t->handshake_ms, !(c->fl & CF_PREFACE) ? "no client preface"
					: "SETTINGS not acknowledged");
			close_with_goaway(c, last_proc(c),
				(c->fl & CF_PREFACE) ? NGHTTP2_SETTINGS_TIMEOUT : NGHTTP2_NO_ERROR,
				"handshake timeout");
			return;
		}
		/* Streams opened before the ACK are checked below; a TLS
		 * handshake under way blocks writes: not a stalled reader. */
	} else if (c->fl & CF_WBLOCK) {
		if (over(&c->tmo_wr, now, t->stalled_ms)) {
			counts[NRF_H2_TMO_STALLED_READER]++;
			NRF_LOG_RL(INFO, MOD, "client took no byte for %u ms: closing",
				t->stalled_ms);
			nrf_h2_conn_close(c, NRF_ETIMEDOUT);
			return;
		}
	} else {
		c->tmo_wr = 0;
	}
	if (c->n_streams == 0) {
		int32_t mark = last_proc(c);

		if (c->fl & CF_SHUTDOWN) {
			linger(c, now, t->idle_ms);
			return;
		}
		if ((c->fl & (CF_PREFACE | CF_ACKED)) != (CF_PREFACE | CF_ACKED) ||
			(c->fl & CF_NOTICE)) {
			c->tmo_idle = 0; /* a drain's notice: its own timer */
			return;
		}
		if (c->tmo_idle != 0 && mark != c->tmo_idle_id)
			c->tmo_idle = 0; /* streams came and went since */
		c->tmo_idle_id = mark;
		if (over(&c->tmo_idle, now, t->idle_ms)) {
			counts[NRF_H2_TMO_IDLE]++;
			goaway_idle(c);
		}
		return;
	}
	c->tmo_idle = 0;
	NRF_LIST_FOREACH_SAFE(l, nx, &c->streams) {
		st = nrf_container_of(l, struct nrf_h2_stream, link);
		if (!sweep_request(c, st, now, counts))
			return;
		if (c->fl & CF_DEAD)
			return; /* the owner closed it */
		sweep_answer(c, st, now, counts);
	}
}

static void
sweep_client(struct nrf_h2_conn *c, uint64_t now, uint64_t *counts)
{
	const struct nrf_h2_timeouts *t = &c->ctx->tmo;
	int32_t mark;

	if (c->state != CONN_OPEN)
		return; /* connecting: the owner's connect timeout */
	if (c->fl & CF_WBLOCK) {
		if (over(&c->tmo_wr, now, t->stalled_ms)) {
			counts[NRF_H2_TMO_UPSTREAM_STALLED]++;
			NRF_LOG_RL(WARN, MOD, "upstream took no byte for %u ms: closing",
				t->stalled_ms);
			nrf_h2_conn_close(c, NRF_ETIMEDOUT);
			return;
		}
	} else {
		c->tmo_wr = 0;
	}
	mark = h2_cli_next_id(c) > INT32_MAX ? INT32_MAX : (int32_t)h2_cli_next_id(c);
	if (c->n_streams == 0 && (c->fl & CF_SHUTDOWN)) {
		linger(c, now, t->upstream_idle_ms);
		return;
	}
	if (c->n_streams != 0 || !nrf_h2_conn_usable(c) || t->upstream_idle_ms == 0) {
		c->tmo_idle = 0;
		return;
	}
	if (c->tmo_idle != 0 && mark != c->tmo_idle_id)
		c->tmo_idle = 0;
	c->tmo_idle_id = mark;
	if (!over(&c->tmo_idle, now, t->upstream_idle_ms))
		return;
	if (c->cbs->on_conn_idle != NULL && !c->cbs->on_conn_idle(c)) {
		c->tmo_idle = 0;
		return;
	}
	counts[NRF_H2_TMO_UPSTREAM_IDLE]++;
	goaway_idle(c);
}

void
nrf_h2_ctx_sweep(struct nrf_h2_ctx *ctx, uint64_t now, uint64_t counts[NRF_H2_TMO_COUNT])
{
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &ctx->conns) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, all);

		if (c->fl & (CF_DEAD | CF_FINAL))
			continue;
		if (c->server)
			sweep_server(c, now, counts);
		else
			sweep_client(c, now, counts);
	}
}
