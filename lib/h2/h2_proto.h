/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_PROTO_H
#define NRF_H2_PROTO_H

/*
 * The HTTP/2 protocol layer under both of nrfwd's own engines (h2_proto.c;
 * decision 0067): the front server (h2_srv.c) and the upstream client
 * (h2_cli.c) each embed a struct h2_proto and hand it a struct h2_side,
 * the table of what differs by side. Internal to lib/h2.
 *
 * The layer holds what RFC 9113 says the same way for both ends of a
 * connection:
 * - the read loop: frames cut out of the input, a frame begun in one read
 *   finished from the next (h2_proto_recv()), frame headers read once;
 * - SETTINGS (validated, applied, acknowledged; the first frame must be
 *   one), PING (answered, ACKs handed to h2_conn_ping_ack()), GOAWAY
 *   received and sent, WINDOW_UPDATE and the send windows (connection and
 *   streams, SETTINGS_INITIAL_WINDOW_SIZE applied to open streams),
 *   PRIORITY, PUSH_PROMISE (refused either way);
 * - header blocks: HEADERS padding and priority, CONTINUATION assembly
 *   (interleaving and count limits), the block through the HPACK decoder
 *   (h2_hpack.c) to the side's field callback;
 * - DATA padding; stream lookup by id; streams closed after the frame at
 *   hand (cq); the output queue taken first on every fill; HEADERS and
 *   CONTINUATION framing of an encoded block.
 *
 * What a side owns: its stream states and who opens streams (the client
 * opens them, ids from next_id; the server takes them from HEADERS), the
 * HTTP checks (requests vs answers), DATA delivery and the receive windows
 * (a front holds a body until its owner frees it, an upstream leg credits
 * as it relays), RST_STREAM, and how a connection error is sent (the server
 * mimics nghttp2's GOAWAY with debug text, h2spec and the differential
 * fuzzer pin it; the client sends GOAWAY without text and logs).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h2_frame.h"
#include "h2_hpack.h"
#include "h2_int.h"
#include "nrf_list.h"

/*
 * What differs by side. Numbers and flags:
 * who: the other end in logs ("client", "upstream").
 * push_why: the connection error text of a PUSH_PROMISE.
 * lim: numbers. push_max, the highest SETTINGS_ENABLE_PUSH accepted (a
 *   client may offer push, 1; a server never does, 0); max_acks, PING and
 *   SETTINGS ACKs queued unwritten before the peer counts as flooding
 *   (nghttp2's max_outbound_ack, the server; none, the client); data_max,
 *   the largest DATA frame sent (also under the peer's
 *   SETTINGS_MAX_FRAME_SIZE).
 * cs: the side's st->cs bits: ignored, of a stream whose frames are
 *   ignored (reset or closing); queued, of one on pr->cq, and closing,
 *   those set when it is put there; end_recv, END_STREAM received, and
 *   end_sent, ours queued.
 * size: bytes of the side's connection state (h2_proto_new()).
 * flags: H2_SIDE_* below.
 *
 * Callbacks (NULL where marked optional):
 * conn_error: GOAWAY(@p code) for a connection error; returns the negative
 *   NRF_E* the read loop returns.
 * pre: optional, each whole frame before it is handled (0, or a code that
 *   stops the input).
 * data, headers, rst_stream: those frames, payload @p p of @p len bytes.
 * on_field: the HPACK decoder's callback (arg: struct h2_fld_arg).
 * block_end: a header block complete (END_HEADERS).
 * idle: @p sid (stream @p st, or NULL) is idle for this side: a frame on it
 *   other than HEADERS is a connection error.
 * reset: RST_STREAM(@p code) of @p st.
 * goaway_recv: a valid GOAWAY came (pr->r_goaway_last holds the lowest last
 *   stream id received).
 * stream_close: close @p st, taken from pr->cq.
 * settings: optional, a SETTINGS frame applied (@p flags: with FL_ACK, the
 *   peer acknowledged ours).
 * data_begin: optional, a frame header whose payload has @p have of its
 *   bytes in this read: true when the side took it as it arrives (*rc set).
 * early: optional, a frame header seen before its payload is all here.
 * body: up to @p room bytes of @p st's body to send into @p d, under the
 *   send window @p w (the lower of the connection's and the stream's):
 *   bytes written, *@p eof when they end it; -1: no frame now.
 * sent: a DATA frame of @p n bytes (@p eof: with END_STREAM) of @p st was
 *   framed.
 * head: optional, stream @p st of pr->sq before its DATA (*@p out bytes of
 *   @p dst, @p cap, used): 0, its DATA next; 1, the next stream; -1, no
 *   more streams on this fill.
 */
struct h2_side {
	const char *who;
	const char *push_why;
	struct {
		uint32_t push_max, max_acks, data_max;
	} lim;
	struct {
		uint32_t ignored, queued, closing, end_recv, end_sent;
	} cs;
	size_t size;
	uint32_t flags;
	int (*conn_error)(struct nrf_h2_conn *c, uint32_t code, const char *why);
	int (*pre)(struct nrf_h2_conn *c, const uint8_t *f);
	int (*data)(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p,
		size_t len);
	int (*headers)(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p,
		size_t len);
	int (*rst_stream)(struct nrf_h2_conn *c, uint32_t sid, const uint8_t *p, size_t len);
	int (*on_field)(void *arg, const struct h2_hpack_field *f);
	void (*block_end)(struct nrf_h2_conn *c);
	bool (*idle)(const struct nrf_h2_conn *c, uint32_t sid, const struct nrf_h2_stream *st);
	void (*reset)(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code);
	void (*goaway_recv)(struct nrf_h2_conn *c);
	void (*stream_close)(struct nrf_h2_conn *c, struct nrf_h2_stream *st);
	void (*settings)(struct nrf_h2_conn *c, uint8_t flags);
	bool (*data_begin)(struct nrf_h2_conn *c, const uint8_t *f, size_t have, int *rc);
	void (*early)(struct nrf_h2_conn *c, const uint8_t *f);
	long (*body)(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *d, size_t room,
		int64_t w, bool *eof);
	void (*sent)(struct nrf_h2_conn *c, struct nrf_h2_stream *st, size_t n, bool eof);
	int (*head)(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *dst, size_t cap,
		size_t *out);
};

/* struct h2_side.flags */
/* ENABLE_CONNECT_PROTOCOL and NO_RFC7540_PRIORITIES checked (values over
 * 1) and the latter applied, as nghttp2's server does. */
#define H2_SIDE_EXT_SETTINGS 0x01u
/* PING's length checked before its stream id. */
#define H2_SIDE_PING_LEN_FIRST 0x02u
/* WINDOW_UPDATE of 0 on a stream is a connection error (as nghttp2 makes
 * it); else the stream is reset (RFC 9113 §6.9). */
#define H2_SIDE_WU0_CONN 0x04u
/* A header block the decoder refuses resets its stream before the
 * connection error. */
#define H2_SIDE_RST_ON_HPACK 0x08u
/* No stream after one the send windows stop, on a fill. */
#define H2_SIDE_WINDOW_STOP 0x10u

/* One connection's protocol state, embedded in the side's (c->pr). */
struct h2_proto {
	const struct h2_side *side;
	struct h2_hpack hp; /* HPACK decoder (decision 0047) */
	/* A frame begun in an earlier read (up to 9 + H2_FRAME_MAX bytes). */
	uint8_t *ib;
	uint32_t ib_len;
	bool ib_seen;       /* its frame header went through side->early() */
	bool settings_seen; /* the peer's first SETTINGS came */
	bool settings_acked; /* the peer acknowledged ours */
	bool r_no_rfc7540;  /* the peer's SETTINGS_NO_RFC7540_PRIORITIES (H2_SIDE_EXT_SETTINGS) */
	bool stop;          /* a connection error was sent: input ignored */
	struct nrf_list sq; /* streams with something to send (H2_CS_SQ) */
	struct nrf_list cq; /* streams to close after the frame at hand */
	struct nrf_h2_stream *slot[H2C_SLOTS];
	uint32_t r_max_streams, r_init_win, r_max_frame; /* the peer's SETTINGS */
	int64_t swin;       /* connection send window */
	uint32_t win;       /* connection receive window announced */
	uint32_t oq_acks;   /* PING/SETTINGS ACKs queued (c->oq), not yet written */
	uint32_t r_goaway_last; /* GOAWAY received: lowest last stream id */
	/* The header block being received (hb_sid 0: none). */
	uint32_t hb_sid;
	struct nrf_h2_stream *hb_st; /* NULL: decoded and dropped */
	uint32_t hb_frames;
};

/* The largest frame accepted: SETTINGS_MAX_FRAME_SIZE is not announced,
 * so it is the protocol's default. */
#define H2_FRAME_MAX 16384u

/* Bytes of a frame's payload. */
struct h2_bytes {
	const uint8_t *p;
	size_t len;
};

/* The connection and what the side's field callback returned, through the
 * decoder (side->on_field's arg). */
struct h2_fld_arg {
	struct nrf_h2_conn *c;
	int rc;
};

/* A side's connection state (side->size bytes, zeroed, counted), whose
 * first member is its struct h2_proto, set up for @p side (c->pr) with what
 * the peer's SETTINGS leave at their defaults; NULL: no memory. */
void *h2_proto_new(struct nrf_h2_conn *c, const struct h2_side *side);
/* The decoder, the output queue, the frame buffer and the state
 * h2_proto_new() gave released (c->pr NULL: nothing to do); both engines'
 * free op. */
void h2_proto_free(struct nrf_h2_conn *c);
/* SETTINGS entry @p id = @p v at @p p (6 bytes); returns the byte after. */
uint8_t *h2_proto_setting(uint8_t *p, uint16_t id, uint32_t v);
/* The connection receive window @p win announced (a WINDOW_UPDATE queued
 * after the SETTINGS when it is over 65 535). */
void h2_proto_window(struct nrf_h2_conn *c, uint32_t win);
/* Input bytes: 0, or what the side's frame handling returned (a negative
 * NRF_E* after a connection error). */
int h2_proto_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len);
/* @p st's body as DATA frames into @p dst (at most @p cap bytes) under the
 * send windows: bytes written. */
size_t h2_proto_fill_data(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *dst,
	size_t cap);
/* The streams of pr->sq in order (side->head, then their DATA) into @p dst
 * after the @p out bytes there: the bytes of @p dst used. */
size_t h2_proto_fill_streams(struct nrf_h2_conn *c, uint8_t *dst, size_t cap, size_t out);
/* GOAWAY(@p last, @p code, debug text @p why) queued; false: no memory
 * (the connection failed). */
bool h2_proto_goaway(struct nrf_h2_conn *c, uint32_t last, uint32_t code, const char *why);
/* PING with @p data queued (both engines' ping op). */
int h2_proto_ping(struct nrf_h2_conn *c, const uint8_t data[8]);
/* An encoded header block at @p base + 9 (@p blen bytes) framed in place as
 * HEADERS and CONTINUATION frames of at most @p maxf bytes on @p sid;
 * @p base has room for 9 bytes per frame. Returns the bytes framed. */
size_t h2_proto_frame_split(uint8_t *base, size_t blen, size_t maxf, uint32_t sid, bool end);
static inline size_t
h2_proto_frame_block(uint8_t *base, size_t blen, size_t maxf, uint32_t sid, bool end)
{
	if (blen > maxf)
		return h2_proto_frame_split(base, blen, maxf, sid, end);
	frame_hd(base, (uint32_t)blen, FT_HEADERS,
		(uint8_t)(FL_END_HEADERS | (end ? FL_END_STREAM : 0)), sid);
	return 9 + blen;
}
/* Max frames of one header block: as many as a header list of
 * max_header_bytes needs twice over (nghttp2's max_continuations + 1). */
uint32_t h2_proto_max_frames(const struct nrf_h2_ctx *ctx);

/* What every request's frames pass through, inline. */

/* A new header block on @p sid (@p st: NULL, decoded and dropped). */
static inline void
h2_proto_block_begin(struct h2_proto *pr, uint32_t sid, struct nrf_h2_stream *st)
{
	pr->hb_sid = sid;
	pr->hb_st = st;
	pr->hb_frames = 1;
}

/* @p st on pr->cq, closed after the frame at hand with @p code. */
static inline void
h2_proto_close_due(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code)
{
	const struct h2_side *side = c->pr->side;

	if (st->cs & side->cs.queued)
		return;
	st->cs = (st->cs & ~H2_CS_SQ) | side->cs.closing;
	st->rst_code = code;
	nrf_list_del(&st->sq);
	nrf_list_add_tail(&c->pr->cq, &st->sq);
	h2_mark_dirty(c);
}

/* END_STREAM received on @p st: closed once ours is queued too. */
static inline void
h2_proto_end_recv(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	const struct h2_side *side = c->pr->side;

	st->cs |= side->cs.end_recv;
	if (st->cs & side->cs.end_sent)
		h2_proto_close_due(c, st, NRF_H2_NO_ERROR);
}

/* END_STREAM of @p st framed (st->cs bits @p clear cleared): off pr->sq,
 * closed once the peer's END_STREAM came too. */
static inline void
h2_proto_end_sent(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t clear)
{
	const struct h2_side *side = c->pr->side;

	st->cs = (st->cs & ~(H2_CS_SQ | clear)) | side->cs.end_sent;
	nrf_list_del(&st->sq);
	if (st->cs & side->cs.end_recv)
		h2_proto_close_due(c, st, NRF_H2_NO_ERROR);
}

/* @p st out of the stream slots, the lists and the header block. */
static inline void
h2_proto_unlink(struct h2_proto *pr, struct nrf_h2_stream *st)
{
	struct nrf_h2_stream **slot = &pr->slot[((uint32_t)st->id >> 1) % H2C_SLOTS];

	nrf_list_del(&st->sq);
	nrf_list_del(&st->link);
	if (*slot == st)
		*slot = NULL;
	if (pr->hb_st == st)
		pr->hb_st = NULL;
}

/* Close what waits on pr->cq (not while the connection is torn down). */
static inline void
h2_proto_close_pending(struct nrf_h2_conn *c)
{
	struct h2_proto *pr = c->pr;

	/* Not while the connection is torn down (its last flush): the
	 * teardown closes what is left, and no owner sees it usable. */
	while (!nrf_list_empty(&pr->cq) && !(c->fl & (CF_DEAD | CF_FINAL))) {
		struct nrf_h2_stream *st = nrf_container_of(pr->cq.next, struct nrf_h2_stream, sq);

		pr->side->stream_close(c, st);
	}
}

/* First on every fill: streams due closed, then the output queue into
 * @p dst (*@p out bytes). Returns -1: frames remain queued (nothing may
 * follow them); 1: the queue was written whole; 0: it was empty. */
static inline int
h2_proto_fill_queued(struct nrf_h2_conn *c, uint8_t *dst, size_t cap, size_t *out)
{
	struct h2_proto *pr = c->pr;

	if (!nrf_list_empty(&pr->cq))
		h2_proto_close_pending(c);
	*out = 0;
	if (!h2_oq_pending(c))
		return 0;
	*out = h2_oq_take(c, dst, cap);
	if (h2_oq_pending(c))
		return -1; /* frames stay in order */
	pr->oq_acks = 0;
	return 1;
}

/* HEADERS padding and priority taken off @p p / @p len (@p dep: the
 * dependency); 0 or a connection error. */
static inline int
h2_proto_headers_payload(struct nrf_h2_conn *c, uint8_t flags, const uint8_t **pp,
	size_t *lenp, uint32_t *dep)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;

	if (flags & FL_PADDED) {
		size_t pad;

		if (len < 1 || (pad = p[0]) > len - 1)
			return c->pr->side->conn_error(c, NRF_H2_PROTOCOL_ERROR, "HEADERS: invalid padding");
		p++;
		len -= 1 + pad;
	}
	if (flags & FL_PRIORITY) {
		if (len < 5)
			return c->pr->side->conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "HEADERS: priority cut short");
		*dep = get32(p) & WIN_MAX;
		p += 5;
		len -= 5;
	}
	*pp = p;
	*lenp = len;
	return 0;
}

/* DATA padding: the data @p d of payload @p p / @p len. */
static inline int
h2_proto_data_payload(struct nrf_h2_conn *c, uint8_t flags, const uint8_t *p, size_t len,
	struct h2_bytes *d)
{
	size_t pad;

	d->p = p;
	d->len = len;
	if (!(flags & FL_PADDED))
		return 0;
	if (len < 1 || (pad = p[0]) > len - 1)
		return c->pr->side->conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA: invalid padding");
	d->p = p + 1;
	d->len = len - 1 - pad;
	return 0;
}

/* A header block fragment through the HPACK decoder to side->on_field:
 * 0, or what stops the input (a block the decoder refuses: connection
 * error COMPRESSION_ERROR). */
static inline int
h2_proto_inflate(struct nrf_h2_conn *c, const uint8_t *in, size_t len, bool final)
{
	struct h2_proto *pr = c->pr;
	const struct h2_side *side = pr->side;
	struct h2_fld_arg a = { c, 0 };
	int rv = h2_hpack_decode(&pr->hp, in, len, final, side->on_field, &a);

	if (rv > 0)
		return a.rc;
	if (rv < 0) {
		if ((side->flags & H2_SIDE_RST_ON_HPACK) && pr->hb_st != NULL && !(pr->hb_st->cs & side->cs.ignored))
			side->reset(c, pr->hb_st, NRF_H2_COMPRESSION_ERROR);
		return c->pr->side->conn_error(c, NRF_H2_COMPRESSION_ERROR, h2_hpack_strerror(rv));
	}
	return 0;
}

/* The block fragment @p p through the decoder; at END_HEADERS (@p flags)
 * the side's block_end. 0, or the code that stops the input. */
static inline int
h2_proto_fragment(struct nrf_h2_conn *c, uint8_t flags, const uint8_t *p, size_t len)
{
	int rc = h2_proto_inflate(c, p, len, (flags & FL_END_HEADERS) != 0);

	if (rc != 0)
		return rc;
	if (flags & FL_END_HEADERS)
		c->pr->side->block_end(c);
	return 0;
}

#endif /* NRF_H2_PROTO_H */
