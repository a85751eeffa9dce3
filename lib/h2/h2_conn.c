/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nghttp2 sessions glued to the transport.
 *
 * Why the work is split between event handlers and nrf_h2_ctx_run():
 * nghttp2 forbids deleting a session (and re-entering mem_recv/mem_send)
 * from its own callbacks, and the owner reacts to one stream's events by
 * acting on other connections. So callbacks only mark connections: "dirty"
 * (output pending), "rq" (read budget used up, continue later), "dead"
 * (tear down). nrf_h2_ctx_run() then writes, reads and tears down outside of
 * any nghttp2 call, one connection at a time, and loops until nothing is
 * marked. Writes are batched that way too: one write per connection per
 * loop iteration, however many streams produced output.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_int.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

static void conn_event(void *arg, unsigned int events);
static void malformed(struct nrf_h2_conn *c, struct nrf_h2_stream *st);

/* Opaque data of the PING that measures the round trip after a shutdown
 * notice (nrf_h2_conn_shutdown()). */
static const uint8_t drain_ping[8] = {'n', 'r', 'f', 'd', 'r', 'a', 'i', 'n'};

/* ------------------------------------------------------------------------ */
/* Marking                                                                   */

static void
mark_dirty(struct nrf_h2_conn *c)
{
	if (!(c->fl & CF_DEAD) && !nrf_list_linked(&c->dirty))
		nrf_list_add_tail(&c->ctx->dirty, &c->dirty);
}

static void
mark_read(struct nrf_h2_conn *c)
{
	if (!(c->fl & CF_DEAD) && !nrf_list_linked(&c->rq))
		nrf_list_add_tail(&c->ctx->rq, &c->rq);
}

static void
conn_fail(struct nrf_h2_conn *c, int err)
{
	if (c->fl & (CF_DEAD | CF_FINAL))
		return;
	c->fl |= CF_DEAD;
	c->err = err;
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
	nrf_list_del(&c->lng);
	h2_ev_busy(c);
	nrf_list_add_tail(&c->ctx->dead, &c->dead);
}

void
h2_conn_fail(struct nrf_h2_conn *c, int err)
{
	conn_fail(c, err);
}

static struct nrf_h2_stream *
stream_of(nghttp2_session *sess, int32_t id)
{
	return nghttp2_session_get_stream_user_data(sess, id);
}

/*
 * The stream of a frame just received: most often the one whose header
 * block was just decoded (c->hdr_st, cleared when that stream closes), else
 * nghttp2's map.
 */
static inline struct nrf_h2_stream *
frame_stream(struct nrf_h2_conn *c, int32_t id)
{
	if (c->hdr_st != NULL && c->hdr_id == id)
		return c->hdr_st;
	return stream_of(c->sess, id);
}

/* nghttp2's front: a stream opens (and its connection is busy). */
static void
stream_link(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	nrf_list_add_head(&c->streams, &st->link);
	if (c->n_streams++ == 0)
		h2_ev_busy(c);
}

/* nghttp2's front, and every stream at teardown: a stream is gone. */
static void
stream_unlink(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	nrf_list_del(&st->link);
	if (--c->n_streams == 0)
		h2_ev_idle(c);
}

/* ------------------------------------------------------------------------ */
/* nghttp2 callbacks                                                         */

static inline bool
is_head(struct nrf_slice method)
{
	return method.len == 4 && memcmp(method.p, "HEAD", 4) == 0;
}

void
h2_conn_deliver(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int err)
{
	if (st->flags & NRF_H2_SF_DELIVERED)
		return;
	st->flags |= NRF_H2_SF_DELIVERED;
	if (err != 0)
		st->flags |= NRF_H2_SF_REJECTED;
	if (c->cbs->on_request != NULL)
		c->cbs->on_request(st, err);
}

/* Front: once headers are in, check what this proxy can handle. */
int
h2_conn_check_head(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	const struct nrf_h2_msg *m = &st->msg;

	if (st->flags & NRF_H2_SF_BUSY)
		return NRF_EFULL;
	if (st->flags & NRF_H2_SF_HDR_OVER)
		return NRF_ETOOBIG; /* 431 */
	if (m->path.len == 0 || m->method.len == 0 || nrf_slice_eq(m->method, "CONNECT"))
		return NRF_EPARSE;
	/* content-length as h2_check_field() parsed it (-1: none) */
	if (st->chk.clen > 0 && (uint64_t)st->chk.clen > c->ctx->lim.max_body_bytes)
		return NRF_ETOOBIG;
	return 0;
}

static int
on_begin_headers(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
	struct nrf_h2_conn *c = ud;
	struct nrf_h2_stream *st;

	c->hdr_st = NULL; /* a new header block */
	c->hdr_bytes = 0;
	if (!c->server || frame->hd.type != NGHTTP2_HEADERS ||
		frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = h2_stream_get(c->ctx, false);
	if (st == NULL) {
		/* Not processed at all: the client may send it again. */
		nghttp2_submit_rst_stream(sess, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
			NGHTTP2_REFUSED_STREAM);
		mark_dirty(c);
		return 0;
	}
	/* Over the memory budget: nothing of it is kept, it is answered 503. */
	if (h2_over_budget(c->ctx))
		st->flags |= NRF_H2_SF_BUSY;
	st->conn = c;
	st->id = frame->hd.stream_id;
	h2_reqchk_init(&st->chk);
	stream_link(c, st);
	nghttp2_session_set_stream_user_data(sess, st->id, st);
	c->hdr_st = st;
	c->hdr_id = st->id;
	return 0;
}

/*
 * A header flood ends the connection: GOAWAY(ENHANCE_YOUR_CALM), with the
 * last stream nghttp2 processed, and a close once it is written. Queued
 * now, or by on_frame_send()/on_stream_close() once the stream of the
 * flood (c->calm_id) has its answer out.
 */
static void
calm_goaway(struct nrf_h2_conn *c)
{
	c->calm_id = 0;
	nghttp2_session_terminate_session(c->sess, NGHTTP2_ENHANCE_YOUR_CALM);
	if (c->fl & CF_WBLOCK)
		conn_fail(c, NRF_EPROTO); /* it does not read: one last attempt */
	else
		mark_dirty(c);
}

/*
 * A front header block decoded far beyond max_header_bytes (c->hdr_bytes
 * over ctx->bomb_bytes): an HPACK bomb (a few bytes of references to a big
 * dynamic-table entry decode to megabytes) or simply a client that ignores
 * SETTINGS_MAX_HEADER_LIST_SIZE. RFC 9113 §10.5.1 lets a server answer 431
 * and requires the rest of the block to be decoded only if the connection
 * stays open: it does not. Decoding stops here (NGHTTP2_ERR_PAUSE; the
 * connection's input is never fed again, CF_RSTOP), the request is
 * delivered now with the header list over the limit (the owner answers
 * 431), and the connection ends with GOAWAY(ENHANCE_YOUR_CALM) once that
 * answer is out. A flood in trailers, or on a stream this side forgot, gets
 * the GOAWAY at once. The work a client can cause per connection is then
 * bounded by bomb_bytes of decoding, not by what its block expands to.
 */
static int
header_flood(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	if (c->fl & CF_RSTOP)
		return NGHTTP2_ERR_PAUSE;
	c->fl |= CF_RSTOP | CF_CALM;
	NRF_LOG_RL(WARN, MOD, "client header block decodes to over %llu bytes "
		"(maxHeaderBytes %u): GOAWAY(ENHANCE_YOUR_CALM)",
		(unsigned long long)c->ctx->bomb_bytes, c->ctx->lim.max_header_bytes);
	if (st != NULL && st->hdr_phase == 0 && !(st->flags & (NRF_H2_SF_MALFORMED |
							   NRF_H2_SF_RESET))) {
		st->flags |= NRF_H2_SF_HDR_OVER;
		c->calm_id = st->id;
		h2_conn_deliver(c, st, NRF_ETOOBIG);
	}
	if (st == NULL || st->hdr_phase != 0 || !(st->flags & NRF_H2_SF_RESPONDED) ||
		(st->flags & NRF_H2_SF_OUT_DONE) || (c->fl & CF_WBLOCK))
		calm_goaway(c);
	return NGHTTP2_ERR_PAUSE;
}

/*
 * One received field. nghttp2 hands it over as rcbufs, which tell whether
 * the bytes come from HPACK's static table: those need no byte check
 * (h2_check_field()) and no copy (the table is nghttp2's constant
 * data; h2_msg_store()).
 */
static int
on_header2(nghttp2_session *sess, const nghttp2_frame *frame, nghttp2_rcbuf *name_rc,
	nghttp2_rcbuf *value_rc, uint8_t flags, void *ud)
{
	struct nrf_h2_conn *c = ud;
	struct nrf_h2_stream *st;
	nghttp2_vec n, v;
	unsigned int known = 0;
	int rc;

	(void)flags;
	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (c->hdr_st != NULL && c->hdr_id == frame->hd.stream_id) {
		st = c->hdr_st;
	} else {
		st = stream_of(sess, frame->hd.stream_id);
		c->hdr_st = st;
		c->hdr_id = frame->hd.stream_id;
	}
	n = nghttp2_rcbuf_get_buf(name_rc);
	v = nghttp2_rcbuf_get_buf(value_rc);
	if ((st == NULL || st->hdr_phase != 0 ||
				 (st->flags & (NRF_H2_SF_HDR_OVER | NRF_H2_SF_BUSY |
						      NRF_H2_SF_MALFORMED)))) {
		/* Fields that are not kept: what they decode to counts here
		 * (HPACK bombs), beyond what a kept list holds (at most
		 * max_header_bytes, h2_msg_store()). */
		c->hdr_bytes += n.len + v.len + 32;
		if (c->hdr_bytes + c->ctx->lim.max_header_bytes > c->ctx->bomb_bytes)
			return header_flood(c, st);
	}
	if (st == NULL)
		return 0; /* a forgotten stream */
	if (nghttp2_rcbuf_is_static(name_rc)) {
		known |= H2_KNOWN_NAME;
		if (nghttp2_rcbuf_is_static(value_rc))
			known |= H2_KNOWN_VALUE;
	}
	/* HTTP rules (nghttp2's are off on front sessions) */
	if (st->flags & NRF_H2_SF_MALFORMED)
		return 0;
	rc = h2_check_field(&st->chk, n.base, n.len, v.base, v.len, st->hdr_phase != 0, known);
	if (rc != H2_CHK_OK) {
		st->flags |= NRF_H2_SF_MALFORMED;
		return 0;
	}
	if (st->hdr_phase != 0 || (st->flags & (NRF_H2_SF_HDR_OVER | NRF_H2_SF_BUSY)))
		return 0; /* trailers, already over, or refused for memory */
	rc = h2_msg_store(c->ctx, &st->msg, n.base, n.len, v.base, v.len, known);
	if (rc == 0)
		return 0;
	/* Front: keep decoding (HPACK state must stay in sync), answer 431. */
	st->flags |= NRF_H2_SF_HDR_OVER;
	return 0;
}

/* A malformed request or answer (RFC 9113 §8.1.1): reset once, never
 * delivered (an answer: its owner sees the stream close with
 * PROTOCOL_ERROR, as when nghttp2 reset it itself). */
static void
malformed(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	st->flags |= NRF_H2_SF_MALFORMED;
	if (st->flags & NRF_H2_SF_RESET)
		return;
	st->flags |= NRF_H2_SF_RESET | H2_SF_MAL_RST;
	nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
	mark_dirty(c);
}

static void
server_frame_recv(struct nrf_h2_conn *c, const nghttp2_frame *frame)
{
	struct nrf_h2_stream *st;
	bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
		return;
	st = frame_stream(c, frame->hd.stream_id);
	if (st == NULL)
		return;
	if (h2_req_malformed(st, frame->hd.type == NGHTTP2_HEADERS, end)) {
		malformed(c, st);
		return;
	}
	if (frame->hd.type == NGHTTP2_HEADERS && st->hdr_phase == 0) {
		int err = h2_conn_check_head(c, st);

		st->hdr_phase = 1;
		if (is_head(st->msg.method))
			st->flags |= NRF_H2_SF_HEAD;
		if (err != 0) {
			h2_conn_deliver(c, st, err);
			return;
		}
	}
	if (end) {
		st->flags |= NRF_H2_SF_END;
		h2_conn_deliver(c, st, 0);
	}
}

void
h2_conn_ping_ack(struct nrf_h2_conn *c, const uint8_t d[8])
{
	uint64_t token = 0;
	unsigned int i;

	if ((c->fl & CF_NOTICE) && memcmp(d, drain_ping, sizeof(drain_ping)) == 0) {
		nrf_h2_conn_shutdown(c, true);
		return;
	}
	for (i = 0; i < 8; i++)
		token = token << 8 | d[i];
	if (c->cbs->on_conn_ping_ack != NULL)
		c->cbs->on_conn_ping_ack(c, token);
}

static int
on_frame_recv(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
	struct nrf_h2_conn *c = ud;

	(void)sess;
	if (frame->hd.type == NGHTTP2_SETTINGS && c->server)
		h2_tmo_settings(c, frame->hd.flags);
	if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK)) {
		const uint8_t *d = frame->ping.opaque_data;
		uint64_t token = 0;
		unsigned int i;

		if ((c->fl & CF_NOTICE) && memcmp(d, drain_ping, sizeof(drain_ping)) == 0) {
			nrf_h2_conn_shutdown(c, true);
			return 0;
		}
		for (i = 0; i < 8; i++)
			token = token << 8 | d[i];
		if (c->cbs->on_conn_ping_ack != NULL)
			c->cbs->on_conn_ping_ack(c, token);
		return 0;
	}
	server_frame_recv(c, frame);
	return 0;
}

/*
 * A front stream answered before its request ended (413 on a body being
 * uploaded, 400 on a bad header list): RFC 9113 §8.1 allows RST_STREAM
 * (NO_ERROR) once the answer is out, but clients such as curl 7.88 then
 * report an error instead of the answer. So the rest of the body is read and
 * dropped, and the stream is reset only when the client goes on sending more
 * than DISCARD_MAX bytes after the answer was complete.
 */
#define DISCARD_MAX (1024u * 1024u)

static void
maybe_stop_upload(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	if ((st->flags & NRF_H2_SF_OUT_DONE) && !(st->flags & (NRF_H2_SF_END | NRF_H2_SF_RESET)) &&
		st->unconsumed > DISCARD_MAX) {
		st->flags |= NRF_H2_SF_RESET;
		nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
		mark_dirty(c);
	}
}

static int
on_frame_send(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
	struct nrf_h2_conn *c = ud;
	struct nrf_h2_stream *st;

	if (c->server && frame->hd.type == NGHTTP2_HEADERS) {
		st = stream_of(sess, frame->hd.stream_id);
		if (st != NULL) {
			st->flags |= H2_SF_HDRS_OUT;
			if (st->flags & H2_SF_RST_DUE) {
				/* The answer broke off before its HEADERS left. */
				st->flags &= ~H2_SF_RST_DUE;
				nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id,
					st->rst_code);
				mark_dirty(c);
				return 0;
			}
		}
	}
	if (!c->server || !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	if (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if ((c->fl & CF_CALM) && frame->hd.stream_id == c->calm_id)
		calm_goaway(c); /* the flood's answer is out */
	st = stream_of(sess, frame->hd.stream_id);
	if (st == NULL)
		return 0;
	st->flags |= NRF_H2_SF_OUT_DONE;
	maybe_stop_upload(c, st);
	return 0;
}

/*
 * Front request body bytes. Front sessions manage their receive windows
 * too (no automatic WINDOW_UPDATE): the stream window is credited at once
 * (a body up to max_body_bytes never waits on it), the connection window
 * only when the stream closes and its body is freed (st->rx_held). So the
 * body bytes one connection holds are bounded by its connection window.
 * Bytes that are not kept are credited at once.
 */
static int
front_data(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int32_t id, const uint8_t *data,
	size_t len)
{
	nghttp2_session *sess = c->sess;

	mark_dirty(c); /* window updates */
	if (st == NULL || (st->flags & NRF_H2_SF_MALFORMED)) {
		nghttp2_session_consume(sess, id, len);
		return 0;
	}
	if (h2_check_data(&st->chk, len) != H2_CHK_OK) {
		nghttp2_session_consume(sess, id, len);
		malformed(c, st); /* more body than content-length */
		return 0;
	}
	if (!(st->flags & (NRF_H2_SF_REJECTED | NRF_H2_SF_RESPONDED))) {
		if (st->msg.body.len + len > c->ctx->lim.max_body_bytes) {
			h2_conn_deliver(c, st, NRF_ETOOBIG);
		} else if (h2_over_budget(c->ctx)) {
			st->flags |= NRF_H2_SF_BUSY;
			h2_conn_deliver(c, st, NRF_EFULL);
		} else {
			if (nrf_h2_body_append(c->ctx, &st->msg.body, data, len) != 0) {
				nghttp2_session_consume(sess, id, len);
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
			}
			nghttp2_session_consume_stream(sess, id, len);
			st->rx_held += (uint32_t)len;
			return 0;
		}
	}
	/* Answered already: the rest is dropped (counted in unconsumed,
	 * which front streams do not use otherwise). */
	nghttp2_session_consume(sess, id, len);
	if (st->unconsumed <= DISCARD_MAX)
		st->unconsumed += (uint32_t)NRF_MIN(len, (size_t)DISCARD_MAX + 1);
	maybe_stop_upload(c, st);
	return 0;
}

static int
on_data_chunk(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *data,
	size_t len, void *ud)
{
	(void)flags;
	return front_data(ud, stream_of(sess, id), id, data, len);
}

static int
on_stream_close(nghttp2_session *sess, int32_t id, uint32_t code, void *ud)
{
	struct nrf_h2_conn *c = ud;
	struct nrf_h2_stream *st = stream_of(sess, id);

	if (c->hdr_st != NULL && c->hdr_id == id)
		c->hdr_st = NULL;
	if (st == NULL)
		return 0;
	nghttp2_session_set_stream_user_data(sess, id, NULL);
	stream_unlink(c, st);
	if (st->rx_held > 0) {
		/* its body is freed with it: the client may send more */
		nghttp2_session_consume_connection(sess, st->rx_held);
		st->rx_held = 0;
	}
	if ((c->fl & CF_CALM) && id == c->calm_id)
		calm_goaway(c); /* the flood's stream ended before its answer */
	if (st->user != NULL && c->cbs->on_close != NULL)
		c->cbs->on_close(st, code, 0);
	h2_stream_put(c->ctx, st);
	mark_dirty(c);
	return 0;
}

/*
 * Front response bodies are framed without a copy inside nghttp2
 * (NGHTTP2_DATA_FLAG_NO_COPY): the read callbacks only say how many bytes
 * the next DATA frame carries, and send_data() writes its frame header and
 * those bytes from the stream straight into the connection's output buffer
 * (conn_flush() calls mem_send only with every byte nghttp2 returned
 * before already there, so the order holds). The bytes of a relayed answer
 * were copied twice in user space on their way out before this — into
 * nghttp2's frame buffer, then into the output buffer — and now once
 * (measured: for a 2.5 KB discovery answer that is most of the CPU a
 * larger answer costs).
 */

/* Front response body: out chunks, deferred while empty and not ended. */
static ssize_t
front_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t length,
	uint32_t *data_flags, nghttp2_data_source *source, void *ud)
{
	struct nrf_h2_stream *st = source->ptr;
	size_t n;

	(void)sess;
	(void)id;
	(void)buf;
	(void)ud;
	if (NRF_UNLIKELY(st->flags & NRF_H2_SF_RESET)) {
		/* Reset while its HEADERS were queued: never an end of stream. */
		st->flags |= NRF_H2_SF_DEFERRED;
		return NGHTTP2_ERR_DEFERRED;
	}
	n = NRF_MIN(length, st->out.len);
	if (n == st->out.len && (st->flags & NRF_H2_SF_OUT_EOF)) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	} else if (n == 0) {
		st->flags |= NRF_H2_SF_DEFERRED;
		return NGHTTP2_ERR_DEFERRED;
	}
	*data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	return (ssize_t)n;
}

/* Front response held in the stream (nrf_h2_respond_inline()). */
static ssize_t
inline_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t length,
	uint32_t *data_flags, nghttp2_data_source *source, void *ud)
{
	struct nrf_h2_stream *st = source->ptr;
	size_t n = NRF_MIN(length, (size_t)(st->inl_len - st->inl_off));

	(void)sess;
	(void)id;
	(void)buf;
	(void)ud;
	if (n == (size_t)(st->inl_len - st->inl_off))
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	*data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	return (ssize_t)n;
}

/*
 * One DATA frame of a front stream: its header and @p length bytes of the
 * stream's body into the output buffer. No room (several frames in one
 * mem_send call): NGHTTP2_ERR_WOULDBLOCK, and nghttp2 asks again with the
 * same frame once conn_flush() has written the buffer out.
 */
static int
send_data(nghttp2_session *sess, nghttp2_frame *frame, const uint8_t *framehd, size_t length,
	nghttp2_data_source *source, void *ud)
{
	struct nrf_h2_conn *c = ud;
	struct nrf_h2_stream *st = source->ptr;
	uint8_t *p;
	size_t pad = frame->data.padlen;

	(void)sess;
	if (c->obuf == NULL || (size_t)(OBUF_CAP - c->olen) < 9 + pad + length)
		return NGHTTP2_ERR_WOULDBLOCK;
	p = c->obuf + c->olen;
	memcpy(p, framehd, 9);
	p += 9;
	if (pad > 0)
		*p++ = (uint8_t)(pad - 1);
	if (st->flags & NRF_H2_SF_INLINE) {
		memcpy(p, st->inl + st->inl_off, length);
		st->inl_off += (uint16_t)length;
	} else if (h2_body_take(c->ctx, &st->out, p, length) != length) {
		/* The body went away under a frame nghttp2 had begun (it
		 * cannot: released only with the stream). */
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	p += length;
	if (pad > 1) {
		memset(p, 0, pad - 1);
		p += pad - 1;
	}
	c->olen = (uint32_t)(p - c->obuf);
	if (length > 0) {
		h2_tmo_progress(st);
		if (st->user != NULL && c->cbs->on_sent != NULL)
			c->cbs->on_sent(st, length);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

static nghttp2_session_callbacks *
make_callbacks(void)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback2(cb, on_header2);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
	return cb;
}

struct nrf_h2_ctx *
nrf_h2_ctx_create(const struct nrf_tp_ops *tp, struct nrf_tp_loop *loop,
	const struct nrf_h2_limits *lim, int *err)
{
	struct nrf_h2_ctx *ctx;

	if (tp == NULL || loop == NULL || lim == NULL || lim->max_header_bytes < 512 ||
		lim->max_concurrent_streams == 0) {
		*err = NRF_EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	ctx->tp = tp;
	ctx->loop = loop;
	ctx->lim = *lim;
	ctx->lim.max_header_bytes = (ctx->lim.max_header_bytes + 15u) & ~15u;
	if (ctx->lim.stream_window == 0)
		ctx->lim.stream_window = 256 * 1024;
	if (ctx->lim.conn_window == 0)
		ctx->lim.conn_window = 16 * 1024 * 1024;
	if (ctx->lim.peer_stream_window == 0)
		ctx->lim.peer_stream_window = 64 * 1024;
	/* A header list far beyond the limit ends the connection (header_flood()). */
	ctx->bomb_bytes = NRF_MAX((uint64_t)ctx->lim.max_header_bytes * H2_BOMB_FACTOR,
		(uint64_t)ctx->lim.max_header_bytes + H2_BOMB_MIN);
	h2_mem_init(&ctx->mem, &ctx->acct[NRF_H2_MEM_HTTP2], &ctx->total);
	h2_pools_init(ctx);
	nrf_list_init(&ctx->conns);
	nrf_list_init(&ctx->dirty);
	nrf_list_init(&ctx->rq);
	nrf_list_init(&ctx->dead);
	nrf_list_init(&ctx->lingering);
	nrf_list_init(&ctx->ev_hs);
	nrf_list_init(&ctx->ev_idle);
	ctx->own_front = !lim->nghttp2_front;
	ctx->cb_server = make_callbacks();
	if (ctx->cb_server == NULL || nghttp2_option_new(&ctx->opt_server) != 0)
		goto nomem;
	nghttp2_option_set_no_closed_streams(ctx->opt_server, 1);
	/* Front requests and peer answers are checked by h2_check.c (same
	 * rules, cheaper). */
	nghttp2_option_set_no_http_messaging(ctx->opt_server, 1);
	h2_check_init();
	/* Peer streams are window-updated as the front takes their data,
	 * front connections as request bodies are freed (front_data()). */
	nghttp2_option_set_no_auto_window_update(ctx->opt_server, 1);
	/* A header list of max_header_bytes needs about max_header_bytes of
	 * HPACK, which clients cut into frames of 16 KiB: twice the frames
	 * that takes (nghttp2's default of 8 covers 64 KiB). */
	nghttp2_option_set_max_continuations(ctx->opt_server,
		NRF_MAX((size_t)8, 2 * (((size_t)ctx->lim.max_header_bytes + 16383) / 16384)));
	ctx->nv_cap = 64;
	ctx->nv = malloc(ctx->nv_cap * sizeof(*ctx->nv));
	if (ctx->nv == NULL)
		goto nomem;
	*err = 0;
	return ctx;
nomem:
	nrf_h2_ctx_free(ctx);
	*err = NRF_ENOMEM;
	return NULL;
}

void
nrf_h2_ctx_free(struct nrf_h2_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (!nrf_list_empty(&ctx->conns))
		NRF_LOG(ERR, MOD, "context freed with open connections");
	if (ctx->cb_server != NULL)
		nghttp2_session_callbacks_del(ctx->cb_server);
	if (ctx->opt_server != NULL)
		nghttp2_option_del(ctx->opt_server);
	free(ctx->nv);
	h2_pools_fini(ctx);
	h2_mem_fini(&ctx->mem);
	free(ctx);
}

void
nrf_h2_ctx_stats_get(const struct nrf_h2_ctx *ctx, struct nrf_h2_ctx_stats *out)
{
	out->conns_server = ctx->n_server;
	out->conns_client = ctx->n_client;
	out->streams = ctx->n_streams;
	out->chunks_free = ctx->chunks.n;
	out->blocks_free = ctx->blocks.n;
}

static int
nv_reserve(struct nrf_h2_ctx *ctx, size_t n)
{
	nghttp2_nv *nv;

	if (n <= ctx->nv_cap)
		return 0;
	nv = realloc(ctx->nv, n * sizeof(*nv));
	if (nv == NULL)
		return NRF_ENOMEM;
	ctx->nv = nv;
	ctx->nv_cap = n;
	return 0;
}

/*
 * Fields whose value is new in every message (request ids, trace context)
 * are not HPACK-indexed: indexed, each one evicts older entries, and
 * nghttp2's encoder compares every later value of that name with all the
 * entries of the same name it holds (hd_map_find() hashes names only). An
 * x-request-id on every 508 cost ~5 500 of its 19 600 instructions that way
 * (measured). "Never indexed" is the only such choice nghttp2 offers.
 */
static inline uint8_t
nv_index_flags(const char *name, size_t nlen)
{
	if ((nlen == 12 && memcmp(name, "x-request-id", 12) == 0) ||
		(nlen == 11 && memcmp(name, "traceparent", 11) == 0))
		return NGHTTP2_NV_FLAG_NO_INDEX;
	return NGHTTP2_NV_FLAG_NONE;
}

static void
nv_set(nghttp2_nv *nv, const char *name, size_t nlen, const char *value, size_t vlen)
{
	nv->name = (uint8_t *)(uintptr_t)name;
	nv->namelen = nlen;
	nv->value = (uint8_t *)(uintptr_t)value;
	nv->valuelen = vlen;
	nv->flags = nv_index_flags(name, nlen);
}

/*
 * The names and values of a header list copied once into the stream's own
 * buffer (st->inl: unused on peer streams and on front streams answered by
 * nrf_h2_respond()) and given to nghttp2 with the NO_COPY flags. Without
 * them nghttp2 copies the list itself: one allocation, and every name
 * lower-cased byte by byte (measured). The stream outlives its HEADERS
 * frame (it is put back only when nghttp2 closes it or the connection is
 * torn down), and every name here is lower case already: front requests
 * passed h2_check.c, and so did the peer answers relayed, the rest are
 * literals. A list that does not fit is left to nghttp2 to copy.
 */
static void
nv_pin(struct nrf_h2_stream *st, nghttp2_nv *nv, size_t n)
{
	size_t i, need = 0;
	char *p = st->inl;

	for (i = 0; i < n; i++)
		need += nv[i].namelen + nv[i].valuelen;
	if (need > sizeof(st->inl))
		return;
	for (i = 0; i < n; i++) {
		memcpy(p, nv[i].name, nv[i].namelen);
		nv[i].name = (uint8_t *)p;
		p += nv[i].namelen;
		memcpy(p, nv[i].value, nv[i].valuelen);
		nv[i].value = (uint8_t *)p;
		p += nv[i].valuelen;
		nv[i].flags |= NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
	}
}

/* ------------------------------------------------------------------------ */
/* Pumps                                                                     */

/*
 * Both sides are done (a GOAWAY is written, no stream is left): the
 * connection closes. One this side ended while its client was still
 * sending (CF_RSTOP: refused over maxConnections, a header flood, a fatal
 * input error) lingers first: its input is read and dropped until the
 * client closes it or LINGER_NS pass. Closing a socket with unread input
 * makes the kernel send RST instead of FIN, and the client could lose the
 * GOAWAY and see a bare reset.
 */
static void
conn_done(struct nrf_h2_conn *c)
{
	if (c->fl & (CF_LINGER | CF_FINAL))
		return; /* lingering already, or being torn down */
	if (!c->server || !(c->fl & CF_RSTOP)) {
		conn_fail(c, 0);
		return;
	}
	/* Nothing is written after the GOAWAY: streams still open (a
	 * connection error ends them with it) end for their owners now, as
	 * at teardown, not when the lingering does. */
	for (struct nrf_list *l = c->streams.next; l != &c->streams; l = l->next) {
		struct nrf_h2_stream *st = nrf_container_of(l, struct nrf_h2_stream, link);

		if (st->user != NULL && c->cbs->on_close != NULL)
			c->cbs->on_close(st, NRF_H2_INTERNAL_ERROR, NRF_ECLOSED);
		st->user = NULL;
	}
	c->fl |= CF_LINGER | CF_RSTOP;
	c->linger_until = nrf_now_ns() + LINGER_NS;
	nrf_list_add_tail(&c->ctx->lingering, &c->lng);
	/* The client sees the end right after the GOAWAY; its close ends
	 * the lingering at once (conn_read()). */
	if (c->ctx->tp->shutdown_write != NULL)
		c->ctx->tp->shutdown_write(c->tc);
	mark_read(c);
}

/* Lingering connections whose time is up close (nrf_h2_ctx_run()). */
static void
linger_expire(struct nrf_h2_ctx *ctx)
{
	uint64_t now = nrf_now_ns();

	while (!nrf_list_empty(&ctx->lingering)) {
		struct nrf_h2_conn *c = nrf_container_of(ctx->lingering.next, struct nrf_h2_conn, lng);

		if (c->linger_until > now)
			break;
		conn_fail(c, 0);
	}
}

static void
conn_flush(struct nrf_h2_conn *c)
{
	const struct nrf_tp_ops *tp = c->ctx->tp;

	if ((c->fl & (CF_DEAD | CF_WBLOCK)) || c->state != CONN_OPEN)
		return;
	for (;;) {
		struct iovec iov;
		ssize_t w;

		/* The output buffer is taken only while there is output and
		 * kept only while the transport refuses some of it. */
		if (c->obuf == NULL) {
			if (c->srv != NULL ? !h2_srv_want_write(c)
			    : c->server ? c->pend_len == 0 && !nghttp2_session_want_write(c->sess)
				      : !h2_cli_want_write(c))
				break;
			c->obuf = h2_obuf_get(c->ctx);
			if (c->obuf == NULL) {
				conn_fail(c, NRF_ENOMEM);
				return;
			}
		}
		if (c->ooff > 0 && c->olen < OBUF_CAP) {
			memmove(c->obuf, c->obuf + c->ooff, c->olen - c->ooff);
			c->olen -= c->ooff;
			c->ooff = 0;
		}
		if (!c->server || c->srv != NULL) {
			/* Peer, own front: frames written straight into the buffer. */
			if (c->olen < OBUF_CAP)
				c->olen += (uint32_t)(c->srv != NULL
					? h2_srv_fill(c, c->obuf + c->olen, OBUF_CAP - c->olen)
					: h2_cli_fill(c, c->obuf + c->olen, OBUF_CAP - c->olen));
			if (c->fl & CF_DEAD)
				return; /* an owner's callback closed it */
		}
		while (c->server && c->srv == NULL && c->olen < OBUF_CAP) {
			size_t k;

			if (c->pend_len == 0) {
				ssize_t n;

				if (OBUF_CAP - c->olen < OBUF_RESERVE && c->olen > 0)
					break;
				n = nghttp2_session_mem_send(c->sess, &c->pend);
				if (n < 0) {
					conn_fail(c, NRF_EPROTO);
					return;
				}
				if (n == 0)
					break;
				c->pend_len = (size_t)n;
			}
			k = NRF_MIN(c->pend_len, (size_t)(OBUF_CAP - c->olen));
			memcpy(c->obuf + c->olen, c->pend, k);
			c->olen += (uint32_t)k;
			c->pend += k;
			c->pend_len -= k;
		}
		if (c->olen == c->ooff) {
			c->olen = c->ooff = 0;
			break;
		}
		iov.iov_base = c->obuf + c->ooff;
		iov.iov_len = c->olen - c->ooff;
		w = tp->writev(c->tc, &iov, 1);
		if (w == NRF_EAGAIN) {
			c->fl |= CF_WBLOCK;
			return;
		}
		if (w < 0) {
			conn_fail(c, NRF_EIO);
			return;
		}
		c->ooff += (uint32_t)w;
		if (c->ooff == c->olen)
			c->olen = c->ooff = 0;
	}
	if (c->obuf != NULL && c->olen == 0 && c->pend_len == 0) {
		h2_obuf_put(c->ctx, c->obuf);
		c->obuf = NULL;
	}
	if (c->srv != NULL ? !h2_srv_want_read(c) && !h2_srv_want_write(c)
	    : c->server ? !nghttp2_session_want_read(c->sess) && !nghttp2_session_want_write(c->sess)
		      : h2_cli_done(c)) {
		conn_done(c); /* both sides done (GOAWAY, no streams) */
		return;
	}
	if (c->fl & CF_RPAUSED) {
		c->fl &= ~CF_RPAUSED;
		mark_read(c);
	}
}

/*
 * nghttp2 gave up on the input with a fatal error. For protocol errors it
 * queues a GOAWAY itself and goes on; a fatal return leaves the connection
 * without one, which the other end sees as a bare TCP close: a header
 * block over the CONTINUATION limit (struct nrf_h2_limits), a flood of
 * frames that need an answer, a callback failure, memory. So a GOAWAY is
 * queued here (teardown makes one last attempt to write it), and the
 * reason logged.
 */
static void
recv_failed(struct nrf_h2_conn *c, ssize_t rv)
{
	const char *who = c->server ? "client" : "upstream";
	uint32_t code;

	switch (rv) {
	case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS:
	case NGHTTP2_ERR_FLOODED:
		code = NGHTTP2_ENHANCE_YOUR_CALM;
		break;
	case NGHTTP2_ERR_HEADER_COMP:
		code = NGHTTP2_COMPRESSION_ERROR;
		break;
	default:
		code = NGHTTP2_INTERNAL_ERROR;
		break;
	}
	if (rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
		/* Not HTTP/2 at all: closed without a GOAWAY, which RFC 9113
		 * §3.4 lets a server omit for a peer that does not speak it. */
		NRF_LOG_RL(INFO, MOD, "client connection: %s: closed", nghttp2_strerror((int)rv));
		c->fl |= CF_RSTOP;
		conn_fail(c, NRF_EPROTO);
		return;
	}
	NRF_LOG_RL(WARN, MOD, "%s connection: %s: GOAWAY(%s)", who, nghttp2_strerror((int)rv),
		nghttp2_http2_strerror(code));
	nghttp2_session_terminate_session(c->sess, code);
	c->fl |= CF_RSTOP;
	if (c->server && !(c->fl & CF_WBLOCK))
		mark_dirty(c); /* written, then conn_done() */
	else
		conn_fail(c, NRF_EPROTO); /* one last attempt to write it */
}

static void
conn_read(struct nrf_h2_conn *c)
{
	const struct nrf_tp_ops *tp = c->ctx->tp;
	/* Bytes per transport event before the connection yields to others:
	 * READ_BUDGET full reads, counted in bytes where the transport hands
	 * out one received segment at a time (read_ref()). */
	size_t budget = (size_t)READ_BUDGET * RBUF_SIZE;

	while (budget > 0) {
		const uint8_t *in = c->ctx->rbuf;
		ssize_t n, rv;

		if (c->fl & CF_DEAD)
			return;
		if (c->fl & CF_WBLOCK) {
			/* The other end does not read: stop taking requests
			 * from it until it does. */
			c->fl |= CF_RPAUSED;
			return;
		}
		n = tp->read_ref != NULL ? tp->read_ref(c->tc, (const void **)&in) : 0;
		if (n == 0) {
			in = c->ctx->rbuf;
			n = tp->read(c->tc, c->ctx->rbuf, sizeof(c->ctx->rbuf));
			if (n > 0)
				budget -= NRF_MIN(budget, (size_t)RBUF_SIZE);
		} else if (n > 0) {
			budget -= NRF_MIN(budget, (size_t)n);
		}
		if (n == NRF_EAGAIN)
			return;
		if (n < 0) {
			conn_fail(c, (c->fl & CF_LINGER) ? 0 : n == NRF_ECLOSED ? NRF_ECLOSED : NRF_EIO);
			return;
		}
		if (c->fl & CF_RSTOP)
			continue; /* dropped: the connection ends once written */
		if (!c->server) {
			int rc = h2_cli_recv(c, in, (size_t)n);

			mark_dirty(c);
			if (rc != 0) {
				/* A connection error: the GOAWAY queued is
				 * written by the teardown's last flush. */
				c->fl |= CF_RSTOP;
				conn_fail(c, NRF_EPROTO);
				return;
			}
			continue;
		}
		if (c->srv != NULL) {
			int rc = h2_guard_recv_srv(c, in, (size_t)n);

			mark_dirty(c);
			if (rc == NRF_EPARSE) {
				c->fl |= CF_RSTOP; /* not HTTP/2: closed, no GOAWAY */
				conn_fail(c, NRF_EPROTO);
				return;
			}
			if (rc != 0) {
				/* GOAWAY queued: written, then closed. The rest of
				 * the input is read and dropped until then, and
				 * while the connection lingers (conn_done()): left
				 * unread, it would turn the close into a reset the
				 * client may see before the GOAWAY. */
				c->fl |= CF_RSTOP;
				if (c->fl & CF_WBLOCK)
					conn_fail(c, NRF_EPROTO);
				return;
			}
			continue;
		}
		rv = h2_guard_recv(c, in, (size_t)n);
		mark_dirty(c);
		if (rv < 0) {
			recv_failed(c, rv);
			return;
		}
	}
	mark_read(c); /* budget used up: continue next iteration */
}

static void
conn_event(void *arg, unsigned int events)
{
	struct nrf_h2_conn *c = arg;

	if (c->fl & CF_DEAD)
		return;
	if (c->state == CONN_CONNECTING) {
		int rc = c->ctx->tp->connect_result(c->tc);

		if (rc != 0) {
			/* The transport's reason (connection refused, unreachable…)
			 * goes to on_conn_close and from there into the logs. */
			conn_fail(c, rc);
			return;
		}
		c->state = CONN_OPEN;
		mark_dirty(c);
		if (c->cbs->on_conn_ready != NULL)
			c->cbs->on_conn_ready(c);
		if (c->fl & CF_DEAD)
			return;
	}
	if (events & NRF_TP_EV_OUT) {
		c->fl &= ~CF_WBLOCK;
		h2_tmo_writable(c);
		mark_dirty(c);
	}
	if (events & (NRF_TP_EV_IN | NRF_TP_EV_ERR))
		conn_read(c);
}

/* Last chance to get a GOAWAY out before the socket closes; never blocks. */
static void
final_flush(struct nrf_h2_conn *c)
{
	int guard;

	if (c->state != CONN_OPEN || (c->fl & CF_WBLOCK) ||
		(c->sess == NULL && c->cli == NULL && c->srv == NULL))
		return;
	/* conn_flush() skips dead connections; CF_FINAL keeps it from
	 * queueing this one for teardown a second time. */
	c->fl = (c->fl & ~CF_DEAD) | CF_FINAL;
	for (guard = 0; guard < 4 && !(c->fl & CF_WBLOCK); guard++) {
		if (!(c->srv != NULL ? h2_srv_want_write(c)
			    : c->server ? nghttp2_session_want_write(c->sess) : h2_cli_want_write(c)) &&
			c->olen == c->ooff)
			break;
		conn_flush(c);
	}
	c->fl |= CF_DEAD;
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
}

static void
conn_teardown(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	int err = c->err;

	nrf_list_del(&c->dead);
	nrf_list_del(&c->lng);
	h2_ev_busy(c);
	/* A GOAWAY may be queued (protocol error, timeout): one last try. */
	if (err == 0 || err == NRF_EPROTO || err == NRF_ETIMEDOUT) {
		int saved = c->err;

		final_flush(c);
		c->err = saved;
	}
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
	nrf_list_del(&c->lng);
	while (!nrf_list_empty(&c->streams)) {
		struct nrf_h2_stream *st = nrf_container_of(c->streams.next, struct nrf_h2_stream,
			link);

		stream_unlink(c, st);
		if (st->user != NULL && c->cbs->on_close != NULL)
			c->cbs->on_close(st, NRF_H2_INTERNAL_ERROR, NRF_ECLOSED);
		if (!c->server)
			h2_cli_hb_free(st);
		h2_stream_put(ctx, st);
	}
	if (c->cbs->on_conn_close != NULL)
		c->cbs->on_conn_close(c, err);
	nrf_list_del(&c->all);
	if (c->server)
		ctx->n_server--;
	else
		ctx->n_client--;
	nghttp2_session_del(c->sess);
	h2_cli_free(c);
	h2_srv_free(c);
	ctx->tp->close(c->tc);
	h2_obuf_put(ctx, c->obuf);
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, -(int64_t)sizeof(*c));
	free(c->peer);
	free(c);
}

bool
nrf_h2_ctx_run(struct nrf_h2_ctx *ctx)
{
	struct nrf_list todo;

	if (!nrf_list_empty(&ctx->lingering))
		linger_expire(ctx);
	/* Reads that used up their budget last time: one more budget each. */
	nrf_list_init(&todo);
	if (!nrf_list_empty(&ctx->rq)) {
		todo.next = ctx->rq.next;
		todo.prev = ctx->rq.prev;
		todo.next->prev = &todo;
		todo.prev->next = &todo;
		nrf_list_init(&ctx->rq);
		while (!nrf_list_empty(&todo)) {
			struct nrf_h2_conn *c = nrf_container_of(todo.next, struct nrf_h2_conn, rq);

			nrf_list_del(&c->rq);
			conn_read(c);
		}
	}
	for (;;) {
		while (!nrf_list_empty(&ctx->dirty)) {
			struct nrf_h2_conn *c = nrf_container_of(ctx->dirty.next, struct nrf_h2_conn, dirty);

			nrf_list_del(&c->dirty);
			conn_flush(c);
		}
		if (nrf_list_empty(&ctx->dead))
			break;
		conn_teardown(nrf_container_of(ctx->dead.next, struct nrf_h2_conn, dead));
	}
	return !nrf_list_empty(&ctx->rq);
}

/* ------------------------------------------------------------------------ */
/* Connections                                                               */

static struct nrf_h2_conn *
conn_new(struct nrf_h2_ctx *ctx, const struct nrf_h2_cbs *cbs, void *user, bool server)
{
	struct nrf_h2_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	nrf_list_init(&c->streams);
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, (int64_t)sizeof(*c));
	c->ctx = ctx;
	c->cbs = cbs;
	c->user = user;
	c->server = server;
	nrf_list_init(&c->all);
	nrf_list_init(&c->dirty);
	nrf_list_init(&c->rq);
	nrf_list_init(&c->dead);
	nrf_list_init(&c->lng);
	nrf_list_init(&c->evl);
	return c;
}

/* Front: request bodies are credited to the connection window only when
 * their stream closes, so it must hold one whole body and more. */
static uint32_t
conn_window(const struct nrf_h2_ctx *ctx, bool server)
{
	uint64_t w = ctx->lim.conn_window;

	if (server)
		w = NRF_MAX(w, (uint64_t)ctx->lim.max_body_bytes + ctx->lim.stream_window);
	return (uint32_t)NRF_MIN(w, (uint64_t)NGHTTP2_MAX_WINDOW_SIZE);
}

static int
conn_start(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	nghttp2_settings_entry iv[5];
	size_t n = 0;
	int rv;

	if (c->server && ctx->own_front) {
		rv = h2_srv_start(c);
		if (rv != 0)
			return rv;
		goto started;
	}
	if (c->server) {
		rv = nghttp2_session_server_new3(&c->sess, ctx->cb_server, c, ctx->opt_server,
			&ctx->mem.mem);
		if (rv != 0)
			return NRF_ENOMEM;
		iv[n].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
		iv[n++].value = ctx->lim.max_concurrent_streams;
		iv[n].settings_id = NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES;
		iv[n++].value = 1;
	} else {
		rv = h2_cli_start(c);
		if (rv != 0)
			return rv;
		goto started;
	}
	iv[n].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
	iv[n++].value = ctx->lim.max_header_bytes;
	iv[n].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
	iv[n++].value = c->server ? ctx->lim.stream_window : ctx->lim.peer_stream_window;
	if (nghttp2_submit_settings(c->sess, NGHTTP2_FLAG_NONE, iv, n) != 0 ||
		nghttp2_session_set_local_window_size(c->sess, NGHTTP2_FLAG_NONE, 0,
			(int32_t)conn_window(ctx, c->server)) != 0)
		return NRF_ENOMEM;
started:
	ctx->tp->set_handler(c->tc, conn_event, c);
	nrf_list_add_tail(&ctx->conns, &c->all);
	if (c->server) {
		ctx->n_server++;
		h2_ev_idle(c); /* handshake under way, no stream yet */
	} else {
		ctx->n_client++;
	}
	mark_dirty(c);
	return 0;
}

static void
conn_destroy_unstarted(struct nrf_h2_conn *c)
{
	if (c->sess != NULL)
		nghttp2_session_del(c->sess);
	h2_cli_free(c);
	h2_srv_free(c);
	if (c->tc != NULL)
		c->ctx->tp->close(c->tc);
	h2_obuf_put(c->ctx, c->obuf);
	h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)sizeof(*c));
	free(c->peer);
	free(c);
}

struct nrf_h2_conn *
nrf_h2_conn_server(struct nrf_h2_ctx *ctx, struct nrf_tp_conn *tc,
	const struct nrf_h2_cbs *cbs, void *user, int *err)
{
	struct nrf_h2_conn *c = conn_new(ctx, cbs, user, true);

	if (c == NULL) {
		ctx->tp->close(tc);
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->tc = tc;
	c->state = CONN_OPEN;
	*err = conn_start(c);
	if (*err != 0) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	return c;
}

struct nrf_h2_conn *
nrf_h2_conn_client(struct nrf_h2_ctx *ctx, const struct nrf_tp_addr *addr,
	const struct nrf_h2_cbs *cbs, void *user, int *err)
{
	struct nrf_h2_conn *c = conn_new(ctx, cbs, user, false);

	if (c == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->tc = ctx->tp->connect(ctx->loop, addr, err);
	if (c->tc == NULL) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	c->state = CONN_CONNECTING;
	*err = conn_start(c);
	if (*err != 0) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	return c;
}

void *
nrf_h2_conn_user(const struct nrf_h2_conn *c)
{
	return c->user;
}

const char *
nrf_h2_conn_peer(struct nrf_h2_conn *c)
{
	char buf[64];

	if (c->peer != NULL)
		return c->peer;
	buf[0] = '\0';
	if (c->tc != NULL && c->ctx->tp->peer_name != NULL)
		c->ctx->tp->peer_name(c->tc, buf, sizeof(buf));
	c->peer = strdup(buf[0] != '\0' ? buf : "-");
	return c->peer != NULL ? c->peer : "-";
}

uint64_t *
nrf_h2_conn_word(struct nrf_h2_conn *c)
{
	return &c->word;
}

bool
nrf_h2_conn_usable(const struct nrf_h2_conn *c)
{
	return !c->server && c->state == CONN_OPEN &&
		!(c->fl & (CF_DEAD | CF_GOAWAY_RECV | CF_SHUTDOWN | CF_NOIDS));
}

uint32_t
nrf_h2_conn_streams(const struct nrf_h2_conn *c)
{
	return c->n_streams;
}

int
nrf_h2_conn_ping(struct nrf_h2_conn *c, uint64_t token)
{
	uint8_t d[8];
	unsigned int i;

	if (c == NULL || (c->fl & CF_DEAD))
		return NRF_EINVAL;
	for (i = 0; i < 8; i++)
		d[i] = (uint8_t)(token >> (56 - 8 * i));
	if (!c->server)
		return h2_cli_ping(c, d);
	if (c->srv != NULL)
		return h2_srv_ping(c, d);
	if (nghttp2_submit_ping(c->sess, NGHTTP2_FLAG_NONE, d) != 0)
		return NRF_ENOMEM;
	/* A connecting client writes nothing yet (conn_flush waits for
	 * CONN_OPEN); the PING follows the preface and SETTINGS then. */
	mark_dirty(c);
	return 0;
}

void
nrf_h2_conn_shutdown(struct nrf_h2_conn *c, bool final)
{
	if ((c->fl & (CF_DEAD | CF_SHUTDOWN | CF_LINGER)) || !c->server)
		return;
	if (!final) {
		if (!(c->fl & CF_NOTICE) && c->srv != NULL) {
			c->fl |= CF_NOTICE;
			h2_srv_goaway(c, 0x7fffffffu, NRF_H2_NO_ERROR, NULL, false);
			h2_srv_ping(c, drain_ping);
		} else if (!(c->fl & CF_NOTICE)) {
			c->fl |= CF_NOTICE;
			nghttp2_submit_shutdown_notice(c->sess);
			/* Its ACK proves the client saw the notice: then the
			 * final GOAWAY cannot refuse a stream already sent. */
			nghttp2_submit_ping(c->sess, NGHTTP2_FLAG_NONE, drain_ping);
			mark_dirty(c);
		}
		return;
	}
	c->fl |= CF_SHUTDOWN;
	h2_ev_busy(c);
	if (c->srv != NULL)
		h2_srv_goaway(c, h2_srv_last_proc(c), NRF_H2_NO_ERROR, NULL, false);
	else
		nghttp2_submit_goaway(c->sess, NGHTTP2_FLAG_NONE,
			nghttp2_session_get_last_proc_stream_id(c->sess), NGHTTP2_NO_ERROR, NULL, 0);
	mark_dirty(c);
}

void
nrf_h2_conn_refuse(struct nrf_h2_conn *c, uint32_t h2_code, const char *why)
{
	if (!c->server || (c->fl & CF_DEAD))
		return;
	/* Its input is never fed to nghttp2: no stream can open, and with the
	 * GOAWAY written and no stream, nghttp2 wants neither to read nor to
	 * write, so conn_flush() closes it. */
	c->fl |= CF_RSTOP | CF_SHUTDOWN;
	h2_ev_busy(c);
	if (c->srv != NULL)
		h2_srv_goaway(c, 0, h2_code, why, false);
	else
		nghttp2_submit_goaway(c->sess, NGHTTP2_FLAG_NONE, 0, h2_code, (const uint8_t *)why,
			why != NULL ? strlen(why) : 0);
	mark_dirty(c);
}

/* nrf_h2_ctx_evict() of @p c (off its list, h2_ev_ok()). */
static void
evict(struct nrf_h2_conn *c, const struct nrf_h2_cbs *cbs, const char *why)
{
	c->cbs = cbs;
	c->fl |= CF_RSTOP;
	if (!(c->fl & CF_PREFACE)) {
		/* Nothing of HTTP/2 from the client yet (TLS under way, the
		 * preface incomplete): nothing to tell it. */
		conn_fail(c, NRF_ECLOSED);
		return;
	}
	/* As nrf_h2_conn_refuse(), with the last stream processed: its input
	 * is never fed again, so no stream can open, and with the GOAWAY
	 * written and no stream, conn_flush() closes it. */
	c->fl |= CF_SHUTDOWN;
	if (c->srv != NULL)
		h2_srv_goaway(c, h2_srv_last_proc(c), NRF_H2_NO_ERROR, why, false);
	else
		nghttp2_submit_goaway(c->sess, NGHTTP2_FLAG_NONE,
			nghttp2_session_get_last_proc_stream_id(c->sess), NGHTTP2_NO_ERROR,
			(const uint8_t *)why, why != NULL ? strlen(why) : 0);
	mark_dirty(c);
}

enum nrf_h2_evict
nrf_h2_ctx_evict(struct nrf_h2_ctx *ctx, const struct nrf_h2_cbs *cbs, const char *why)
{
	struct nrf_list *l;

	while ((l = nrf_list_first(&ctx->ev_hs)) != NULL) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, evl);

		nrf_list_del(l);
		if (h2_ev_ok(c)) {
			evict(c, cbs, why);
			return NRF_H2_EVICT_HANDSHAKE;
		}
	}
	while ((l = nrf_list_first(&ctx->ev_idle)) != NULL) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, evl);

		nrf_list_del(l);
		if (h2_ev_ok(c)) {
			evict(c, cbs, why);
			return NRF_H2_EVICT_IDLE;
		}
	}
	return NRF_H2_EVICT_NONE;
}

void
nrf_h2_conn_close(struct nrf_h2_conn *c, int err)
{
	conn_fail(c, err);
}

uint32_t
nrf_h2_ctx_shutdown(struct nrf_h2_ctx *ctx, bool final)
{
	struct nrf_list *l;
	uint32_t n = 0;

	NRF_LIST_FOREACH(l, &ctx->conns) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, all);

		if (!c->server)
			continue;
		nrf_h2_conn_shutdown(c, final);
		n++;
	}
	return n;
}

void
nrf_h2_ctx_close_all(struct nrf_h2_ctx *ctx)
{
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &ctx->conns)
		conn_fail(nrf_container_of(l, struct nrf_h2_conn, all), NRF_ECLOSED);
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

int
nrf_h2_respond(struct nrf_h2_stream *st, int status, const struct nrf_h2_hdr *hdrs,
	size_t n_hdrs, const void *body, size_t len, bool more)
{
	struct nrf_h2_conn *c = st->conn;
	struct nrf_h2_ctx *ctx = c->ctx;
	nghttp2_data_provider prd;
	char code[4];
	size_t i, n = 0;
	int rv;

	if (!c->server || (c->fl & CF_DEAD) || (st->flags & (NRF_H2_SF_RESPONDED | NRF_H2_SF_RESET)) ||
		status < 100 || status > 999)
		return NRF_EINVAL;
	if (nv_reserve(ctx, n_hdrs + 1) != 0)
		return NRF_ENOMEM;
	code[0] = (char)('0' + status / 100);
	code[1] = (char)('0' + status / 10 % 10);
	code[2] = (char)('0' + status % 10);
	code[3] = '\0';
	nv_set(&ctx->nv[n++], ":status", 7, code, 3);
	for (i = 0; i < n_hdrs; i++) {
		if (nrf_h2_hop_by_hop(hdrs[i].name, hdrs[i].value))
			continue;
		nv_set(&ctx->nv[n++], hdrs[i].name.p, hdrs[i].name.len, hdrs[i].value.p,
			hdrs[i].value.len);
	}
	if (st->flags & NRF_H2_SF_HEAD) {
		len = 0; /* no content (RFC 9110 §9.3.2): END_STREAM on HEADERS */
		more = false;
	}
	if (len > 0 && nrf_h2_body_append(ctx, &st->out, body, len) != 0)
		return NRF_ENOMEM;
	if (!more)
		st->flags |= NRF_H2_SF_OUT_EOF;
	st->resp_status = (uint16_t)status;
	st->resp_bytes = len;
	if (c->srv != NULL) {
		rv = h2_srv_headers(c, st, status, hdrs, n_hdrs, !more && len == 0);
		if (rv != 0) {
			nrf_h2_body_release(ctx, &st->out);
			return rv;
		}
		st->flags |= NRF_H2_SF_RESPONDED;
		return 0;
	}
	nv_pin(st, ctx->nv, n);
	prd.source.ptr = st;
	prd.read_callback = front_read;
	rv = nghttp2_submit_response(c->sess, st->id, ctx->nv, n,
		(more || len > 0) ? &prd : NULL);
	if (rv != 0) {
		nrf_h2_body_release(ctx, &st->out);
		return rv == NGHTTP2_ERR_NOMEM ? NRF_ENOMEM : NRF_EPROTO;
	}
	st->flags |= NRF_H2_SF_RESPONDED;
	mark_dirty(c);
	return 0;
}

int
nrf_h2_respond_inline(struct nrf_h2_stream *st, int status, const struct nrf_h2_hdr *hdrs,
	size_t n_hdrs, const void *body, size_t len)
{
	struct nrf_h2_conn *c = st->conn;
	struct nrf_h2_ctx *ctx = c->ctx;
	nghttp2_data_provider prd;
	size_t i, need = 3 + len;
	char *p;
	int rv;

	if (!c->server || (c->fl & CF_DEAD) || (st->flags & (NRF_H2_SF_RESPONDED | NRF_H2_SF_RESET)) ||
		status < 100 || status > 999)
		return NRF_EINVAL;
	if (st->flags & NRF_H2_SF_HEAD) {
		need -= len; /* headers alone (RFC 9110 §9.3.2) */
		len = 0;
	}
	if (c->srv != NULL) {
		/* Own framing: HEADERS encoded now, the body held in the
		 * stream and framed from there. */
		if (len > sizeof(st->inl))
			return nrf_h2_respond(st, status, hdrs, n_hdrs, body, len, false);
		if (len > 0)
			memcpy(st->inl, body, len);
		st->inl_body = 0;
		st->inl_off = 0;
		st->inl_len = (uint16_t)len;
		st->flags |= NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE;
		st->resp_status = (uint16_t)status;
		st->resp_bytes = len;
		rv = h2_srv_headers(c, st, status, hdrs, n_hdrs, len == 0);
		if (rv != 0) {
			st->flags &= ~(NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE);
			st->inl_len = 0;
			return rv;
		}
		st->flags |= NRF_H2_SF_RESPONDED;
		return 0;
	}
	for (i = 0; i < n_hdrs; i++)
		need += hdrs[i].value.len;
	if (need > NRF_H2_INLINE_BYTES || nv_reserve(ctx, n_hdrs + 1) != 0)
		return nrf_h2_respond(st, status, hdrs, n_hdrs, body, len, false);
	/* Everything nghttp2 must read later lives in the stream, which
	 * outlives the frames: no copy inside nghttp2 (NO_COPY flags). */
	p = st->inl;
	p[0] = (char)('0' + status / 100);
	p[1] = (char)('0' + status / 10 % 10);
	p[2] = (char)('0' + status % 10);
	nv_set(&ctx->nv[0], ":status", 7, p, 3);
	ctx->nv[0].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
	p += 3;
	for (i = 0; i < n_hdrs; i++) {
		nghttp2_nv *nv = &ctx->nv[i + 1];

		memcpy(p, hdrs[i].value.p, hdrs[i].value.len);
		nv_set(nv, hdrs[i].name.p, hdrs[i].name.len, p, hdrs[i].value.len);
		nv->flags |= NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
		p += hdrs[i].value.len;
	}
	st->inl_body = (uint16_t)(p - st->inl);
	st->inl_off = st->inl_body;
	if (len > 0)
		memcpy(p, body, len);
	st->inl_len = (uint16_t)need;
	st->flags |= NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE;
	st->resp_status = (uint16_t)status;
	st->resp_bytes = len;
	prd.source.ptr = st;
	prd.read_callback = inline_read;
	rv = nghttp2_submit_response(c->sess, st->id, ctx->nv, n_hdrs + 1, len > 0 ? &prd : NULL);
	if (rv != 0) {
		st->flags &= ~(NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE);
		st->inl_len = 0;
		return rv == NGHTTP2_ERR_NOMEM ? NRF_ENOMEM : NRF_EPROTO;
	}
	st->flags |= NRF_H2_SF_RESPONDED;
	mark_dirty(c);
	return 0;
}

static void
resume(struct nrf_h2_stream *st)
{
	if (st->conn->srv != NULL) {
		h2_srv_resume(st->conn, st);
		return;
	}
	if (st->flags & NRF_H2_SF_DEFERRED) {
		st->flags &= ~NRF_H2_SF_DEFERRED;
		nghttp2_session_resume_data(st->conn->sess, st->id);
	}
	mark_dirty(st->conn);
}

int
nrf_h2_append(struct nrf_h2_stream *st, struct nrf_h2_body *b)
{
	if (!(st->flags & NRF_H2_SF_RESPONDED) || (st->flags & NRF_H2_SF_OUT_EOF) ||
		(st->conn->fl & CF_DEAD) || (st->flags & NRF_H2_SF_RESET)) {
		nrf_h2_body_release(st->conn->ctx, b);
		return (st->flags & (NRF_H2_SF_HEAD | NRF_H2_SF_RESET)) &&
				(st->flags & NRF_H2_SF_RESPONDED)
			? 0 : NRF_EINVAL;
	}
	if (b->len == 0)
		return 0;
	st->resp_bytes += b->len;
	h2_body_join(st->conn->ctx, &st->out, b);
	resume(st);
	return 0;
}

int
nrf_h2_end(struct nrf_h2_stream *st)
{
	if (!(st->flags & NRF_H2_SF_RESPONDED) || (st->conn->fl & CF_DEAD))
		return NRF_EINVAL;
	st->flags |= NRF_H2_SF_OUT_EOF;
	resume(st);
	return 0;
}

void
nrf_h2_reset(struct nrf_h2_stream *st, uint32_t h2_code)
{
	struct nrf_h2_conn *c = st->conn;

	if ((c->fl & CF_DEAD) || (st->flags & NRF_H2_SF_RESET))
		return;
	if (!c->server) {
		h2_cli_reset(c, st, h2_code);
		return;
	}
	if (c->srv != NULL) {
		h2_srv_reset(c, st, h2_code);
		return;
	}
	st->flags |= NRF_H2_SF_RESET;
	if (c->server && (st->flags & NRF_H2_SF_RESPONDED) && !(st->flags & H2_SF_HDRS_OUT)) {
		/* Queued HEADERS would be dropped by the reset: it follows them
		 * (on_frame_send()); no more of the body is framed meanwhile. */
		st->flags |= H2_SF_RST_DUE;
		st->rst_code = h2_code;
		nrf_h2_body_release(c->ctx, &st->out);
		mark_dirty(c);
		return;
	}
	nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id, h2_code);
	mark_dirty(c);
}
