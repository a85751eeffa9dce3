/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peer (client) connections: nrfwd's own HTTP/2 client framing
 * (decision 0039). Front connections: h2_srv.c (decision 0046). Both sit
 * on one protocol layer (h2_proto.c, decision 0067); this file keeps what
 * only a client does, and cli_side, its table of what differs by side.
 *
 * Why not nghttp2 here: a forwarded request paid nghttp2's full client
 * session on this leg (stream objects, priority tree, frame queue, its
 * HPACK encoder with Huffman coding of every :path), about as much again as
 * nrfwd's whole own work (measured). What an upstream leg needs is small:
 * requests go out as one HEADERS frame encoded straight into the
 * connection's output queue (HPACK without a dynamic table: literal values,
 * static-table names; RFC 7541 §6.2.2/§6.2.3), request bodies as DATA under
 * the peer's windows, and answers come back through nrfwd's own HPACK
 * decoder (h2_hpack.c, decision 0047; nghttp2's public inflater until
 * then). The HTTP rules of answers are h2_check.c's,
 * as before (decision 0034).
 *
 * The semantics the owner sees are those of the nghttp2 client session this
 * replaces (struct nrf_h2_cbs): on_response at the final header block,
 * on_data per DATA frame and at END_STREAM, on_close once per stream with
 * the RST_STREAM code (REFUSED_STREAM for streams above a GOAWAY's last
 * stream id, PROTOCOL_ERROR for a malformed answer, FLOW_CONTROL_ERROR at
 * once for DATA beyond the stream window). A stream this side resets or
 * that ends is closed after the frame at hand (cli->cq), never under a
 * caller that still holds it.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_frame.h"
#include "h2_int.h"
#include "h2_proto.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

#define H2C_BC_FIELDS 16u
#define H2C_BC_BYTES 1024u

struct h2_cli {
	struct h2_proto pr; /* the protocol layer's state (h2_proto.h) */
	/* A DATA frame whose payload is delivered as it arrives (data_begin()):
	 * bytes still to come, its stream and flags. */
	uint32_t d_left;
	uint32_t d_sid;
	uint8_t d_flags;
	uint32_t next_id;   /* next stream id (odd) */
	uint32_t n_open;    /* streams whose HEADERS were written, not closed */
	uint32_t rx_open;   /* connection: DATA received, not re-credited */
	/* The header block being received: its size as HPACK bombs count it
	 * and its END_STREAM. */
	uint64_t hb_bytes;
	uint8_t hb_end;
	/*
	 * The last answer header block that left the HPACK table as it was
	 * (only indexed fields and literals not indexed), decoded: the same
	 * bytes decode to the same fields while the table does not change
	 * (gen), so they are replayed without the decoder (block_replay()).
	 */
	uint32_t gen;       /* bumped by every block that may change the table */
	uint32_t bc_gen;    /* gen the cached block was decoded at */
	uint16_t bc_len;    /* its bytes (0: nothing cached) */
	uint16_t bc_used;   /* bytes of bc_data used (block, then fields) */
	uint8_t bc_n;       /* fields */
	bool bc_rec;        /* the block at hand is being recorded */
	uint8_t bc_phase;   /* hdr_phase of the recorded stream at its start */
	uint16_t bc_drop;   /* fields the checks dropped (bit per field) */
	uint64_t bc_hbytes; /* its header list size as HPACK bombs count it */
	/* The answer checks' state before and after the recorded block: a
	 * stream in the same state gets the same outcome without them. */
	struct nrf_h2_reqchk bc_chk0, bc_chk1;
	struct {
		uint16_t n, nl, v, vl; /* offsets into bc_data */
	} bc_f[H2C_BC_FIELDS];
	uint8_t bc_data[H2C_BC_BYTES];
	bool goaway_sent;
};

static const struct h2_side cli_side;
_Static_assert(offsetof(struct h2_cli, pr) == 0, "h2_proto_new() gives the state");

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

static inline struct nrf_h2_stream *
lookup(struct nrf_h2_conn *c, uint32_t sid)
{
	return h2_slot_find(c, c->cli->pr.slot, sid);
}

/*
 * A stream the peer cannot know: its id was taken at nrf_h2_request() but
 * its HEADERS still wait here (the peer's MAX_CONCURRENT_STREAMS) or were
 * dropped unsent. For the peer it is idle, and HEADERS, DATA, RST_STREAM
 * or WINDOW_UPDATE on it are a connection error (RFC 9113 §5.1), as in
 * nghttp2 (its last_sent_stream_id); never an answer to a request the
 * peer has not seen.
 */
static inline bool
unsent(const struct nrf_h2_stream *st)
{
	return st != NULL && !(st->cs & H2C_SENT);
}

/* The stream's own HEADERS frames are gone (written, or never sent). */
void
h2_cli_hb_free(struct nrf_h2_stream *st)
{
	if (st->hb != NULL && st->hb != (uint8_t *)st->inl)
		free(st->hb);
	st->hb = NULL;
	st->hb_len = 0;
	st->cs &= ~H2C_HDRS;
}

static void
stream_close(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	struct h2_cli *k = c->cli;
	uint32_t code = st->rst_code;

	h2_proto_unlink(&k->pr, st);
	c->n_streams--;
	if (st->cs & H2C_SENT)
		k->n_open--;
	/* A stream this side found malformed closes with the code of its
	 * reset, also when its answer had ended before the last check. */
	if ((st->flags & H2_SF_MAL_RST) && code == NRF_H2_NO_ERROR)
		code = NRF_H2_PROTOCOL_ERROR;
	h2_cli_hb_free(st);
	if (st->user != NULL && c->cbs->on_close != NULL)
		c->cbs->on_close(st, code, 0);
	h2_stream_put(c->ctx, st);
	if (c->cbs->on_conn_stream_gone != NULL)
		c->cbs->on_conn_stream_gone(c);
}

void
h2_cli_reset(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code)
{
	st->flags |= NRF_H2_SF_RESET;
	if (st->cs & (H2C_RST | H2C_CLOSING))
		return;
	st->cs |= H2C_RST;
	/* A stream whose HEADERS are still here was never opened: nothing
	 * reaches the peer (a client's rapid reset stops at this proxy). */
	if (st->cs & H2C_HDRS)
		h2_cli_hb_free(st);
	else
		h2_oq_rst(c, (uint32_t)st->id, code);
	h2_proto_close_due(c, st, code);
}

/* A malformed answer (RFC 9113 §8.1.1): reset once, nothing more of it
 * delivered; its owner sees the stream close with PROTOCOL_ERROR. */
static void
malformed(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	st->flags |= NRF_H2_SF_MALFORMED;
	if (st->flags & NRF_H2_SF_RESET)
		return;
	st->flags |= H2_SF_MAL_RST;
	h2_cli_reset(c, st, NRF_H2_PROTOCOL_ERROR);
}

/* ------------------------------------------------------------------------ */
/* Connection errors                                                         */

static int
conn_error(struct nrf_h2_conn *c, uint32_t code, const char *why)
{
	struct h2_cli *k = c->cli;
	uint8_t b[8];

	NRF_LOG_RL(WARN, MOD, "upstream connection: %s: GOAWAY(%s)", why,
		nghttp2_http2_strerror(code));
	if (!k->goaway_sent) {
		k->goaway_sent = true;
		put32(b, 0); /* this side processes no stream the peer opens */
		put32(b + 4, code);
		/* written, if at all, by the teardown's last flush */
		h2_oq_frame(c, FT_GOAWAY, 0, 0, b, 8);
	}
	return NRF_EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Input: header blocks                                                      */

/* Keep a decoded field with the block being recorded; false: it does not
 * fit (the block is not cached). */
static bool
bc_add(struct h2_cli *k, const struct h2_hpack_field *nv)
{
	uint32_t u = k->bc_used;

	if (k->bc_n == H2C_BC_FIELDS || u + nv->namelen + nv->valuelen > H2C_BC_BYTES)
		return false;
	k->bc_f[k->bc_n].n = (uint16_t)u;
	k->bc_f[k->bc_n].nl = (uint16_t)nv->namelen;
	memcpy(k->bc_data + u, nv->name, nv->namelen);
	u += (uint32_t)nv->namelen;
	k->bc_f[k->bc_n].v = (uint16_t)u;
	k->bc_f[k->bc_n].vl = (uint16_t)nv->valuelen;
	memcpy(k->bc_data + u, nv->value, nv->valuelen);
	u += (uint32_t)nv->valuelen;
	k->bc_used = (uint16_t)u;
	k->bc_n++;
	return true;
}

/* One field of an answer header block. @p known: H2_KNOWN_* (bytes of
 * HPACK's static table, or a replayed field whose bytes were checked when
 * it was first decoded). */
static int
field(struct nrf_h2_conn *c, const struct h2_hpack_field *nv, unsigned int known)
{
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st = k->pr.hb_st;
	int rc;

	k->hb_bytes += nv->namelen + nv->valuelen + 32;
	if (k->hb_bytes > c->ctx->bomb_bytes)
		return conn_error(c, NRF_H2_ENHANCE_YOUR_CALM, "answer header block too big");
	if (st == NULL || st->user == NULL || (st->flags & NRF_H2_SF_MALFORMED)) {
		k->bc_rec = false; /* its bytes go unchecked: not cached */
		return 0;
	}
	rc = h2_check_answer_field(&st->chk, nv->name, nv->namelen, nv->value, nv->valuelen,
		st->hdr_phase != 0, known);
	if (k->bc_rec && (rc == H2_CHK_BAD || !bc_add(k, nv)))
		k->bc_rec = false;
	if (rc == H2_CHK_DROP) {
		if (k->bc_rec)
			k->bc_drop |= (uint16_t)(1u << (k->bc_n - 1));
		return 0;
	}
	if (rc != H2_CHK_OK) {
		malformed(c, st);
		return 0;
	}
	if (st->hdr_phase != 0)
		return 0; /* trailers: checked, not kept */
	if (h2_msg_store(c->ctx, &st->msg, nv->name, nv->namelen, nv->value, nv->valuelen,
		    0) != 0)
		h2_cli_reset(c, st, NRF_H2_INTERNAL_ERROR); /* over the limit, memory */
	return 0;
}

static int
on_field(void *arg, const struct h2_hpack_field *f)
{
	struct h2_fld_arg *a = arg;

	a->rc = field(a->c, f, f->known); /* H2_HPACK_STATIC_* = H2_KNOWN_* */
	return a->rc != 0;
}

/* The end of a header block: the HTTP rules, then the owner is told. */
static void
block_end(struct nrf_h2_conn *c)
{
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st = k->pr.hb_st;
	bool end = k->hb_end != 0;
	int chk;

	k->pr.hb_sid = 0;
	k->pr.hb_st = NULL;
	if (st == NULL || (st->flags & (NRF_H2_SF_MALFORMED | NRF_H2_SF_RESET)))
		return;
	if (st->user == NULL) {
		/* Forgotten by its owner after its answer ended (trailers). */
		if (end)
			h2_proto_end_recv(c, st);
		return;
	}
	chk = st->hdr_phase == 0 ? h2_check_answer_head(&st->chk)
		: end ? H2_CHK_OK : H2_CHK_BAD; /* trailers need END_STREAM */
	if (chk == H2_CHK_BAD || (end && h2_check_answer_end(&st->chk) != H2_CHK_OK)) {
		malformed(c, st);
		return;
	}
	if (st->hdr_phase == 0) {
		if (chk == H2_CHK_INTERIM) {
			h2_msg_reset_fields(c->ctx, &st->msg); /* 1xx: skipped */
			return;
		}
		st->hdr_phase = 1;
		st->flags |= NRF_H2_SF_HEADERS;
		if ((st->flags & NRF_H2_SF_HEAD) && !end) {
			/* The answer to HEAD is complete with its headers: the
			 * rest of the stream is not needed (CANCEL). */
			end = true;
			st->flags |= NRF_H2_SF_END;
			if (st->user != NULL && c->cbs->on_response != NULL)
				c->cbs->on_response(st);
			if (st->user != NULL && c->cbs->on_data != NULL)
				c->cbs->on_data(st);
			h2_cli_reset(c, st, NRF_H2_CANCEL);
			return;
		}
		if (end)
			st->flags |= NRF_H2_SF_END;
		if (st->user != NULL && c->cbs->on_response != NULL)
			c->cbs->on_response(st);
	}
	if (end) {
		st->flags |= NRF_H2_SF_END;
		if (st->user != NULL && c->cbs->on_data != NULL)
			c->cbs->on_data(st);
		h2_proto_end_recv(c, st);
	}
}

/*
 * True when header block @p p leaves the decoder's dynamic table as it
 * is: only indexed fields and literals "without indexing" or "never
 * indexed" (RFC 7541 §6.1, §6.2.2, §6.2.3), read without decoding a string.
 * A literal "with incremental indexing", a table size update or bytes
 * that do not parse: false (the decoder then decodes, or refuses, it).
 */
static bool
skip_int(const uint8_t **pp, const uint8_t *e, unsigned int prefix, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t max = (1u << prefix) - 1, v;
	int sh;

	if (p == e)
		return false;
	v = *p++ & max;
	if (v == max) {
		for (sh = 0;; sh += 7) {
			if (p == e || sh > 28)
				return false;
			v += (uint64_t)(*p & 0x7f) << sh;
			if (!(*p++ & 0x80))
				break;
		}
	}
	*pp = p;
	*out = v;
	return true;
}

static bool
keeps_table(const uint8_t *p, size_t len)
{
	const uint8_t *e = p + len;
	uint64_t v;
	int strs;

	while (p < e) {
		if (*p & 0x80) { /* indexed */
			if (!skip_int(&p, e, 7, &v) || v == 0)
				return false;
			continue;
		}
		if (*p & 0xe0)
			return false; /* incremental indexing, table size update */
		if (!skip_int(&p, e, 4, &v))
			return false;
		for (strs = v == 0 ? 2 : 1; strs > 0; strs--) {
			/* length (its H bit masked), then the bytes */
			if (!skip_int(&p, e, 7, &v) || (uint64_t)(e - p) < v)
				return false;
			p += v;
		}
	}
	return true;
}

/*
 * The cached block again: its fields without the decoder. A stream whose
 * answer checks are where the recorded one's were at the start of the
 * block (the usual case: a first header block, fresh checks) ends where
 * that one ended, so only the fields are stored; any other runs every
 * check with the fields' bytes known good.
 */
static int
block_replay(struct nrf_h2_conn *c)
{
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st = k->pr.hb_st;
	unsigned int i;

	k->bc_rec = false;
	if (st != NULL && st->user != NULL &&
		!(st->flags & (NRF_H2_SF_MALFORMED | NRF_H2_SF_RESET)) &&
		st->hdr_phase == k->bc_phase &&
		memcmp(&st->chk, &k->bc_chk0, sizeof(st->chk)) == 0) {
		k->hb_bytes += k->bc_hbytes;
		if (k->hb_bytes > c->ctx->bomb_bytes)
			return conn_error(c, NRF_H2_ENHANCE_YOUR_CALM,
				"answer header block too big");
		for (i = 0; i < k->bc_n && st->hdr_phase == 0; i++) {
			if (k->bc_drop & (1u << i))
				continue;
			if (h2_msg_store(c->ctx, &st->msg, k->bc_data + k->bc_f[i].n,
				    k->bc_f[i].nl, k->bc_data + k->bc_f[i].v, k->bc_f[i].vl,
				    0) != 0) {
				h2_cli_reset(c, st, NRF_H2_INTERNAL_ERROR);
				break;
			}
		}
		st->chk = k->bc_chk1;
		block_end(c);
		return 0;
	}
	for (i = 0; i < k->bc_n; i++) {
		struct h2_hpack_field nv;
		int rc;

		nv.name = k->bc_data + k->bc_f[i].n;
		nv.namelen = k->bc_f[i].nl;
		nv.value = k->bc_data + k->bc_f[i].v;
		nv.valuelen = k->bc_f[i].vl;
		nv.never = false;
		rc = field(c, &nv, H2_KNOWN_NAME | H2_KNOWN_VALUE);
		if (rc != 0)
			return rc;
	}
	block_end(c);
	return 0;
}

static int
on_headers(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st;
	uint32_t dep;
	int rc;

	if (sid == 0 || (sid & 1) == 0 || sid >= k->next_id)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "HEADERS on a stream never opened");
	rc = h2_proto_headers_payload(c, flags, &p, &len, &dep);
	if (rc != 0)
		return rc;
	st = lookup(c, sid);
	if (unsent(st))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "HEADERS on a stream never opened");
	if (st != NULL && (st->cs & (H2C_RST | H2C_CLOSING)))
		st = NULL; /* decoded (HPACK state) and dropped */
	if (st != NULL && (st->cs & H2C_END_RECV)) {
		h2_cli_reset(c, st, NRF_H2_STREAM_CLOSED); /* after END_STREAM */
		st = NULL;
	}
	if (st != NULL)
		st->cs |= H2C_OPENED; /* an answer's HEADERS came (nghttp2's OPENED) */
	h2_proto_block_begin(&k->pr, sid, st);
	k->hb_end = (flags & FL_END_STREAM) != 0;
	k->hb_bytes = 0;
	if (!(flags & FL_END_HEADERS) || len > H2C_BC_BYTES / 2) {
		k->gen++; /* not looked at: it may change the table */
		k->bc_rec = false;
	} else if (len != 0 && k->bc_len == len && k->bc_gen == k->gen &&
		memcmp(k->bc_data, p, len) == 0) {
		/* len 0 never matches: bc_len 0 is "nothing cached", and the
		 * fields of a recording that failed half-way stay in bc_f. */
		return block_replay(c);
	} else if (!keeps_table(p, len)) {
		k->gen++;
		k->bc_rec = false;
	} else {
		/* Record it: block bytes first, then its fields; the stream's
		 * checks before and after (only a live stream's: a dropped
		 * one's fields go unchecked). */
		k->bc_len = 0;
		k->bc_n = 0;
		k->bc_drop = 0;
		memcpy(k->bc_data, p, len);
		k->bc_used = (uint16_t)len;
		k->bc_rec = st != NULL && st->user != NULL &&
			!(st->flags & (NRF_H2_SF_MALFORMED | NRF_H2_SF_RESET));
		if (k->bc_rec) {
			k->bc_phase = st->hdr_phase;
			k->bc_chk0 = st->chk;
		}
	}
	if (h2_proto_inflate(c, p, len, (flags & FL_END_HEADERS) != 0) != 0)
		return NRF_EPROTO;
	if (k->bc_rec) {
		k->bc_rec = false;
		if (k->pr.hb_st == st && !(st->flags & NRF_H2_SF_MALFORMED)) {
			k->bc_len = (uint16_t)len;
			k->bc_gen = k->gen;
			k->bc_chk1 = st->chk;
			k->bc_hbytes = k->hb_bytes;
		}
	}
	if (flags & FL_END_HEADERS)
		block_end(c);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Input: DATA and flow control                                              */

/* Receive window of stream @p st: credit @p n bytes (WINDOW_UPDATE once
 * half the window waits, as nghttp2 did). */
static void
stream_credit(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t n)
{
	st->rx_due += n;
	if (st->cs & (H2C_END_RECV | H2C_RST | H2C_CLOSING)) {
		st->rx_open -= NRF_MIN(st->rx_open, st->rx_due);
		st->rx_due = 0; /* nothing more comes: no update */
		return;
	}
	if (st->rx_due >= c->ctx->lim.peer_stream_window / 2) {
		h2_oq_window_update(c, (uint32_t)st->id, st->rx_due);
		st->rx_open -= NRF_MIN(st->rx_open, st->rx_due);
		st->rx_due = 0;
	}
}

/*
 * DATA beyond the stream window: a failed try, told apart before any of
 * its bytes are relayed. The owner is told at once (FLOW_CONTROL_ERROR)
 * and forgets the stream, which is reset.
 */
static void
window_broken(struct nrf_h2_conn *c, struct nrf_h2_stream *st, size_t len)
{
	NRF_LOG_RL(WARN, MOD, "upstream sent DATA beyond its flow-control window on stream %d "
		"(%u + %zu > %u): reset", st->id, st->rx_open, len,
		c->ctx->lim.peer_stream_window);
	st->flags |= NRF_H2_SF_RESET;
	if (st->user != NULL && c->cbs->on_close != NULL)
		c->cbs->on_close(st, NRF_H2_FLOW_CONTROL_ERROR, 0);
	st->user = NULL;
	st->src = NULL;
	st->src_chunk = NULL;
	if (st->unconsumed > 0)
		h2_peer_unconsumed(c->ctx, st, -(int64_t)st->unconsumed);
	nrf_h2_msg_release(c->ctx, &st->msg);
	st->flags &= ~NRF_H2_SF_RESET; /* let h2_cli_reset() queue it */
	st->cs &= ~H2C_RST;
	h2_cli_reset(c, st, NRF_H2_FLOW_CONTROL_ERROR);
}

static int
on_data(struct nrf_h2_conn *c, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st;
	struct h2_bytes d;
	bool end = (flags & FL_END_STREAM) != 0;
	int rc;

	if (sid == 0 || (sid & 1) == 0 || sid >= k->next_id)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA on a stream never opened");
	/* The connection window: credited at once. */
	if ((uint64_t)k->rx_open + len > k->pr.win)
		return conn_error(c, NRF_H2_FLOW_CONTROL_ERROR,
			"DATA beyond the connection window");
	k->rx_open += (uint32_t)len;
	if (k->rx_open >= k->pr.win / 2) {
		h2_oq_window_update(c, 0, k->rx_open);
		k->rx_open = 0;
	}
	rc = h2_proto_data_payload(c, flags, p, len, &d);
	if (rc != 0)
		return rc;
	st = lookup(c, sid);
	if (unsent(st))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA on a stream never opened");
	if (st == NULL || (st->cs & (H2C_RST | H2C_CLOSING)))
		return 0; /* a stream closed or reset: dropped */
	if (st->cs & H2C_END_RECV) {
		h2_cli_reset(c, st, NRF_H2_STREAM_CLOSED);
		return 0;
	}
	if (!(st->cs & H2C_OPENED))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "DATA before the answer's HEADERS");
	if ((uint64_t)st->rx_open + len > c->ctx->lim.peer_stream_window) {
		window_broken(c, st, len);
		return 0;
	}
	st->rx_open += (uint32_t)len;
	if (len > d.len)
		stream_credit(c, st, (uint32_t)(len - d.len)); /* padding */
	if (st->user == NULL || (st->flags & NRF_H2_SF_MALFORMED)) {
		/* Nobody relays it: the window comes back at once. */
		stream_credit(c, st, (uint32_t)d.len);
		if (end)
			h2_proto_end_recv(c, st);
		return 0;
	}
	/* More than content-length, a body before the final answer, or an
	 * end while an answer is due: malformed, and not delivered. */
	if (h2_check_answer_data(&st->chk, d.len) != H2_CHK_OK ||
		(end && h2_check_answer_end(&st->chk) != H2_CHK_OK)) {
		stream_credit(c, st, (uint32_t)d.len);
		malformed(c, st);
		return 0;
	}
	if (d.len > 0) {
		if (nrf_h2_body_append(c->ctx, &st->msg.body, d.p, d.len) != 0) {
			stream_credit(c, st, (uint32_t)d.len);
			h2_cli_reset(c, st, NRF_H2_INTERNAL_ERROR);
			return 0;
		}
		h2_peer_unconsumed(c->ctx, st, (int64_t)d.len);
	}
	if (end)
		st->flags |= NRF_H2_SF_END;
	if ((d.len > 0 || end) && c->cbs->on_data != NULL)
		c->cbs->on_data(st);
	if (end)
		h2_proto_end_recv(c, st);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Input: the other frames                                                   */

/* A GOAWAY came: streams above the lowest last stream id it gave are
 * refused, the owner may send them elsewhere. */
static void
cli_goaway_recv(struct nrf_h2_conn *c)
{
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &c->streams) {
		struct nrf_h2_stream *st = nrf_container_of(l, struct nrf_h2_stream, link);

		if ((uint32_t)st->id > c->cli->pr.r_goaway_last && !(st->cs & H2C_CLOSING)) {
			st->cs |= H2C_RST; /* nothing more is sent on it */
			h2_proto_close_due(c, st, NRF_H2_REFUSED_STREAM);
		}
	}
	if (c->cbs->on_conn_goaway != NULL)
		c->cbs->on_conn_goaway(c);
}

static int
on_rst_stream(struct nrf_h2_conn *c, uint32_t sid, const uint8_t *p, size_t len)
{
	struct nrf_h2_stream *st;

	if (len != 4)
		return conn_error(c, NRF_H2_FRAME_SIZE_ERROR, "RST_STREAM length");
	if (sid == 0 || sid >= c->cli->next_id)
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "RST_STREAM on an idle stream");
	st = lookup(c, sid);
	if (unsent(st))
		return conn_error(c, NRF_H2_PROTOCOL_ERROR, "RST_STREAM on an idle stream");
	if (st == NULL || (st->cs & H2C_CLOSING))
		return 0;
	st->cs |= H2C_RST;
	h2_proto_close_due(c, st, get32(p));
	return 0;
}

/*
 * The header of a DATA frame whose payload has not all arrived: a frame
 * beyond the stream window is a failed try now, as nghttp2 told at the
 * frame header. Waiting for the payload could take another loop
 * iteration, in which the owner may already have begun relaying what came
 * before (rt relays a held answer from a timer), and the client would get
 * headers and a reset instead of the failure rule's answer.
 */
static void
early_check(struct nrf_h2_conn *c, const uint8_t *f)
{
	uint32_t sid = get32(f + 5) & WIN_MAX, flen = frame_len(f);
	struct nrf_h2_stream *st;

	if (f[3] != FT_DATA || !c->cli->pr.settings_seen || c->cli->pr.hb_sid != 0)
		return;
	st = lookup(c, sid);
	if (st == NULL || unsent(st) || st->user == NULL ||
		(st->cs & (H2C_RST | H2C_CLOSING | H2C_END_RECV)) ||
		(uint64_t)st->rx_open + flen <= c->ctx->lim.peer_stream_window)
		return;
	window_broken(c, st, flen);
}

/* A piece of the DATA frame data_begin() started: the frame's flags go with
 * its last piece, so the pieces are the frame as on_data() sees it. */
static int
data_piece(struct nrf_h2_conn *c, const uint8_t *p, size_t len)
{
	struct h2_cli *k = c->cli;
	int rc;

	k->d_left -= (uint32_t)len;
	rc = on_data(c, k->d_left == 0 ? k->d_flags : 0, k->d_sid, p, len);
	if (!nrf_list_empty(&k->pr.cq))
		h2_proto_close_pending(c);
	return rc;
}

/*
 * The header and the first @p have bytes of a DATA frame cut by the end
 * of a read (@p f): its payload goes to the stream as it arrives instead
 * of waiting, copied, in the frame buffer. Read in place (the DPDK
 * transport's segments, decision 0048) most answers are cut so. Only a
 * frame whose every rule on_data() applies can be told now: unpadded, on
 * an open stream somebody relays, within both windows at its full length
 * (as nghttp2 checks at the frame header); anything else is buffered and
 * handled whole, as before. @return true when taken.
 */
static bool
data_begin(struct nrf_h2_conn *c, const uint8_t *f, size_t have, int *rc)
{
	struct h2_cli *k = c->cli;
	uint32_t sid = get32(f + 5) & WIN_MAX, flen = frame_len(f);
	struct nrf_h2_stream *st;

	if (f[3] != FT_DATA || (f[4] & FL_PADDED) || !k->pr.settings_seen || k->pr.hb_sid != 0 ||
		sid == 0 || (sid & 1) == 0 || sid >= k->next_id ||
		(uint64_t)k->rx_open + flen > k->pr.win)
		return false;
	st = lookup(c, sid);
	if (st == NULL || unsent(st) || st->user == NULL || !(st->cs & H2C_OPENED) ||
		(st->cs & (H2C_RST | H2C_CLOSING | H2C_END_RECV)) ||
		(st->flags & NRF_H2_SF_MALFORMED) ||
		(uint64_t)st->rx_open + flen > c->ctx->lim.peer_stream_window)
		return false;
	k->d_left = flen;
	k->d_sid = sid;
	k->d_flags = f[4];
	*rc = have > 0 ? data_piece(c, f + 9, have) : 0;
	return true;
}

int
h2_cli_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len)
{
	struct h2_cli *k = c->cli;
	int rc;

	if (k->d_left > 0) {
		/* The rest of a DATA frame data_begin() took. */
		size_t take = NRF_MIN(len, (size_t)k->d_left);

		rc = data_piece(c, in, take);
		if (rc != 0 || (c->fl & CF_DEAD) || k->d_left > 0)
			return rc;
		in += take;
		len -= take;
	}
	return h2_proto_recv(c, in, len);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* The request body of @p st (side->body): from the caller's chunks. */
static long
cli_body(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *d, size_t room, int64_t w,
	bool *eof)
{
	size_t done = 0;

	(void)c;
	if (w <= 0)
		return -1;
	room = NRF_MIN(room, (size_t)w);
	while (done < room && st->src_chunk != NULL) {
		const struct nrf_h2_chunk *ch = st->src_chunk;
		size_t n = NRF_MIN(room - done, (size_t)(ch->len - st->src_off));

		memcpy(d + done, ch->data + st->src_off, n);
		done += n;
		st->src_off += (uint32_t)n;
		if (st->src_off == ch->len) {
			st->src_chunk = ch->next;
			st->src_off = ch->next != NULL ? ch->next->off : 0;
		}
	}
	*eof = st->src_chunk == NULL;
	if (done == 0 && !*eof)
		return -1;
	return (long)done;
}

static void
cli_sent(struct nrf_h2_conn *c, struct nrf_h2_stream *st, size_t n, bool eof)
{
	(void)n;
	if (eof)
		h2_proto_end_sent(c, st, H2C_BODY);
}

/*
 * Streams in id order (side->head): HEADERS (never one before an older
 * stream's), then what the windows let out of a request body.
 */
static int
cli_head(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint8_t *dst, size_t cap,
	size_t *out)
{
	struct h2_cli *k = c->cli;

	if (st->cs & H2C_HDRS) {
		/* The peer's SETTINGS_MAX_CONCURRENT_STREAMS: the rest wait for
		 * a stream to close (as nghttp2 held them). On a new connection
		 * they wait for its SETTINGS (one round trip, once): a peer that
		 * allows fewer than the 100 assumed would refuse the excess. */
		if (st->hb_len > cap - *out || !k->pr.settings_seen ||
			k->n_open >= k->pr.r_max_streams)
			return -1;
		memcpy(dst + *out, st->hb, st->hb_len);
		*out += st->hb_len;
		h2_cli_hb_free(st);
		st->cs |= H2C_SENT;
		k->n_open++;
		if (!(st->cs & H2C_BODY)) {
			st->cs &= ~H2C_SQ;
			nrf_list_del(&st->sq);
			return 1;
		}
	}
	if (cap - *out <= 9 || k->pr.swin <= 0)
		return 1;
	if (st->src == NULL) {
		/* The owner forgot it before its body was out. */
		h2_cli_reset(c, st, NRF_H2_CANCEL);
		return 1;
	}
	return 0;
}

size_t
h2_cli_fill(struct nrf_h2_conn *c, uint8_t *dst, size_t cap)
{
	size_t out;

	if (h2_proto_fill_queued(c, dst, cap, &out) < 0)
		return out;
	/* Resets queued on the way go out with the next fill. */
	return h2_proto_fill_streams(c, dst, cap, out);
}

bool
h2_cli_want_write(const struct nrf_h2_conn *c)
{
	const struct h2_cli *k = c->cli;

	return h2_oq_pending(c) || !nrf_list_empty(&k->pr.cq) || !nrf_list_empty(&k->pr.sq);
}

bool
h2_cli_done(const struct nrf_h2_conn *c)
{
	const struct h2_cli *k = c->cli;

	return ((c->fl & CF_GOAWAY_RECV) || k->goaway_sent) && c->n_streams == 0 &&
		!h2_oq_pending(c);
}

/* ------------------------------------------------------------------------ */
/* Connection                                                                */

int
h2_cli_start(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	struct h2_cli *k = h2_proto_new(c, &cli_side);
	uint8_t *p;

	if (k == NULL)
		return NRF_ENOMEM;
	k->next_id = 1;
	k->pr.r_max_streams = 100; /* until the peer's SETTINGS (as nghttp2) */
	/* Preface, SETTINGS (no push, the header list limit, the stream
	 * window of answers), the connection window. */
	p = h2_oq_reserve(c, H2_PREFACE_LEN + 9 + 18 + 13);
	if (p == NULL)
		return NRF_ENOMEM;
	memcpy(p, H2_PREFACE, H2_PREFACE_LEN);
	p += H2_PREFACE_LEN;
	frame_hd(p, 18, FT_SETTINGS, 0, 0);
	p = h2_proto_setting(p + 9, 0x2, 0);
	p = h2_proto_setting(p, 0x6, ctx->lim.max_header_bytes);
	h2_proto_setting(p, 0x4, ctx->lim.peer_stream_window);
	c->oq.len = H2_PREFACE_LEN + 9 + 18;
	h2_proto_window(c, NRF_MIN(ctx->lim.conn_window, WIN_MAX));
	return 0;
}

void
h2_cli_goaway(struct nrf_h2_conn *c, uint32_t code, const char *why)
{
	struct h2_cli *k = c->cli;

	if (k->goaway_sent)
		return;
	k->goaway_sent = true;
	h2_proto_goaway(c, 0, code, why);
}

uint32_t
h2_cli_next_id(const struct nrf_h2_conn *c)
{
	return c->cli->next_id;
}

uint32_t
nrf_h2_conn_remote_max_streams(const struct nrf_h2_conn *c)
{
	return c->pr != NULL ? c->pr->r_max_streams : 0; /* peer connections */
}

/* ------------------------------------------------------------------------ */
/* Requests: HPACK without a dynamic table                                   */

/* Static-table index of a name; 0: not there (RFC 7541 Appendix A, the
 * first entry of each name). Constant-length compares: no libc call. */
static inline unsigned int
name_index(const char *n, size_t len)
{
	switch (len) {
	case 3:
		if (memcmp(n, "age", 3) == 0)
			return 21;
		if (memcmp(n, "via", 3) == 0)
			return 60;
		return 0;
	case 4:
		if (memcmp(n, "date", 4) == 0)
			return 33;
		if (memcmp(n, "etag", 4) == 0)
			return 34;
		if (memcmp(n, "from", 4) == 0)
			return 37;
		if (memcmp(n, "host", 4) == 0)
			return 38;
		if (memcmp(n, "link", 4) == 0)
			return 45;
		if (memcmp(n, "vary", 4) == 0)
			return 59;
		return 0;
	case 5:
		if (memcmp(n, ":path", 5) == 0)
			return 4;
		if (memcmp(n, "allow", 5) == 0)
			return 22;
		if (memcmp(n, "range", 5) == 0)
			return 50;
		return 0;
	case 6:
		if (memcmp(n, "accept", 6) == 0)
			return 19;
		if (memcmp(n, "cookie", 6) == 0)
			return 32;
		if (memcmp(n, "expect", 6) == 0)
			return 35;
		if (memcmp(n, "server", 6) == 0)
			return 54;
		return 0;
	case 7:
		if (memcmp(n, ":method", 7) == 0)
			return 2;
		if (memcmp(n, ":scheme", 7) == 0)
			return 6;
		if (memcmp(n, ":status", 7) == 0)
			return 8;
		if (memcmp(n, "expires", 7) == 0)
			return 36;
		if (memcmp(n, "referer", 7) == 0)
			return 51;
		if (memcmp(n, "refresh", 7) == 0)
			return 52;
		return 0;
	case 8:
		if (memcmp(n, "if-match", 8) == 0)
			return 39;
		if (memcmp(n, "if-range", 8) == 0)
			return 42;
		if (memcmp(n, "location", 8) == 0)
			return 46;
		return 0;
	case 10:
		if (memcmp(n, ":authority", 10) == 0)
			return 1;
		if (memcmp(n, "set-cookie", 10) == 0)
			return 55;
		if (memcmp(n, "user-agent", 10) == 0)
			return 58;
		return 0;
	case 11:
		if (memcmp(n, "retry-after", 11) == 0)
			return 53;
		return 0;
	case 12:
		if (memcmp(n, "content-type", 12) == 0)
			return 31;
		if (memcmp(n, "max-forwards", 12) == 0)
			return 47;
		return 0;
	case 13:
		if (memcmp(n, "accept-ranges", 13) == 0)
			return 18;
		if (memcmp(n, "authorization", 13) == 0)
			return 23;
		if (memcmp(n, "cache-control", 13) == 0)
			return 24;
		if (memcmp(n, "content-range", 13) == 0)
			return 30;
		if (memcmp(n, "if-none-match", 13) == 0)
			return 41;
		if (memcmp(n, "last-modified", 13) == 0)
			return 44;
		return 0;
	case 14:
		if (memcmp(n, "accept-charset", 14) == 0)
			return 15;
		if (memcmp(n, "content-length", 14) == 0)
			return 28;
		return 0;
	case 15:
		if (memcmp(n, "accept-encoding", 15) == 0)
			return 16;
		if (memcmp(n, "accept-language", 15) == 0)
			return 17;
		return 0;
	case 16:
		if (memcmp(n, "content-encoding", 16) == 0)
			return 26;
		if (memcmp(n, "content-language", 16) == 0)
			return 27;
		if (memcmp(n, "content-location", 16) == 0)
			return 29;
		if (memcmp(n, "www-authenticate", 16) == 0)
			return 61;
		return 0;
	case 17:
		if (memcmp(n, "if-modified-since", 17) == 0)
			return 40;
		if (memcmp(n, "transfer-encoding", 17) == 0)
			return 57;
		return 0;
	case 18:
		if (memcmp(n, "proxy-authenticate", 18) == 0)
			return 48;
		return 0;
	case 19:
		if (memcmp(n, "content-disposition", 19) == 0)
			return 25;
		if (memcmp(n, "if-unmodified-since", 19) == 0)
			return 43;
		if (memcmp(n, "proxy-authorization", 19) == 0)
			return 49;
		return 0;
	case 25:
		if (memcmp(n, "strict-transport-security", 25) == 0)
			return 56;
		return 0;
	case 27:
		if (memcmp(n, "access-control-allow-origin", 27) == 0)
			return 20;
		return 0;
	default:
		return 0;
	}
}

/*
 * Values new in every message (request ids, trace context) and
 * credentials are sent "never indexed" (RFC 7541 §7.1.3): no hop after this
 * one indexes them either. The rest is "without indexing".
 */
static inline bool
never_indexed(const char *n, size_t len)
{
	switch (len) {
	case 6:
		return memcmp(n, "cookie", 6) == 0;
	case 11:
		return memcmp(n, "traceparent", 11) == 0;
	case 12:
		return memcmp(n, "x-request-id", 12) == 0;
	case 13:
		return memcmp(n, "authorization", 13) == 0;
	case 19:
		return memcmp(n, "proxy-authorization", 19) == 0;
	default:
		return false;
	}
}

static uint8_t *
hp_field(uint8_t *p, const struct nrf_h2_hdr *h)
{
	const char *n = h->name.p, *v = h->value.p;
	size_t nl = h->name.len, vl = h->value.len;
	unsigned int idx;
	uint8_t first;

	if (nl > 0 && n[0] == ':') {
		/* The fully indexed pairs a request uses. */
		if (nl == 7 && n[1] == 'm') {
			if (vl == 3 && memcmp(v, "GET", 3) == 0) {
				*p++ = 0x80 | 2;
				return p;
			}
			if (vl == 4 && memcmp(v, "POST", 4) == 0) {
				*p++ = 0x80 | 3;
				return p;
			}
		} else if (nl == 7 && n[1] == 's') {
			if (vl == 4 && memcmp(v, "http", 4) == 0) {
				*p++ = 0x80 | 6;
				return p;
			}
			if (vl == 5 && memcmp(v, "https", 5) == 0) {
				*p++ = 0x80 | 7;
				return p;
			}
		} else if (nl == 5 && vl == 1 && v[0] == '/') {
			*p++ = 0x80 | 4;
			return p;
		}
	}
	first = never_indexed(n, nl) ? 0x10 : 0x00;
	idx = name_index(n, nl);
	if (idx != 0) {
		p = hp_int(p, first, 4, idx);
	} else {
		*p++ = first;
		p = hp_str(p, n, nl);
	}
	return hp_str(p, v, vl);
}

/*
 * The HEADERS frame of a request (and CONTINUATION frames when the block is
 * over the peer's frame size), encoded once into the stream itself (st->inl;
 * a longer list into its own allocation) and copied out by h2_cli_fill().
 * The stream keeps what it sends: the caller's fields may live in scratch
 * that the next request overwrites, and a request reset before it leaves
 * is simply dropped.
 */
static int
encode_headers(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t sid,
	const struct nrf_h2_hdr *hdrs, size_t n_hdrs, bool end)
{
	struct h2_cli *k = c->cli;
	size_t i, bound = 0, blen, maxf = k->pr.r_max_frame, nframes;
	uint8_t *base, *p;

	bound = 1;
	for (i = 0; i < n_hdrs; i++)
		bound += hdrs[i].name.len + hdrs[i].value.len + 16;
	nframes = bound / maxf + 1;
	if (bound + 9 * nframes <= sizeof(st->inl)) {
		base = (uint8_t *)st->inl;
	} else {
		base = malloc(bound + 9 * nframes);
		if (base == NULL)
			return NRF_ENOMEM;
	}
	p = base + 9;
	/* A dynamic table size update to 0 opens every block (RFC 7541 §6.3):
	 * this encoder keeps no table, and a peer that lowered
	 * SETTINGS_HEADER_TABLE_SIZE is told so by the first block after its
	 * SETTINGS, whenever a block encoded here is written. */
	*p++ = 0x20;
	for (i = 0; i < n_hdrs; i++) {
		if (hdrs[i].name.len > 0 && hdrs[i].name.p[0] != ':' &&
			nrf_h2_hop_by_hop(hdrs[i].name, hdrs[i].value))
			continue;
		p = hp_field(p, &hdrs[i]);
	}
	blen = (size_t)(p - base) - 9;
	st->hb = base;
	st->cs |= H2C_HDRS;
	st->hb_len = (uint32_t)h2_proto_frame_block(base, blen, maxf, sid, end);
	return 0;
}

static inline bool
is_head_req(const struct nrf_h2_hdr *hdrs, size_t n)
{
	return n > 0 && nrf_slice_eq(hdrs[0].name, ":method") && hdrs[0].value.len == 4 &&
		memcmp(hdrs[0].value.p, "HEAD", 4) == 0;
}

struct nrf_h2_stream *
nrf_h2_request(struct nrf_h2_conn *c, const struct nrf_h2_hdr *hdrs, size_t n_hdrs,
	const struct nrf_h2_body *body, void *user, int *err)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	struct h2_cli *k = c->cli;
	struct nrf_h2_stream *st;
	bool has_body = body != NULL && body->len > 0;
	int rc;

	if (!nrf_h2_conn_usable(c) || k == NULL) {
		*err = NRF_EINVAL;
		return NULL;
	}
	if (k->next_id > (uint32_t)INT32_MAX) {
		c->fl |= CF_NOIDS;
		*err = NRF_EPROTO;
		return NULL;
	}
	st = h2_stream_get(ctx, true);
	if (st == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	rc = encode_headers(c, st, k->next_id, hdrs, n_hdrs, !has_body);
	if (rc != 0) {
		h2_stream_put(ctx, st);
		*err = rc;
		return NULL;
	}
	st->conn = c;
	st->user = user;
	st->id = (int32_t)k->next_id;
	k->next_id += 2;
	if (is_head_req(hdrs, n_hdrs))
		st->flags |= NRF_H2_SF_HEAD;
	h2_anschk_init(&st->chk, (st->flags & NRF_H2_SF_HEAD) != 0);
	st->swin = k->pr.r_init_win;
	st->cs |= H2C_SQ;
	if (has_body) {
		st->src = body;
		st->src_chunk = body->head;
		st->src_off = body->head->off;
		st->cs |= H2C_BODY;
	} else {
		st->cs |= H2C_END_SENT;
	}
	nrf_list_add_tail(&k->pr.sq, &st->sq);
	nrf_list_add_head(&c->streams, &st->link);
	c->n_streams++;
	k->pr.slot[((uint32_t)st->id >> 1) % H2C_SLOTS] = st;
	h2_mark_dirty(c);
	*err = 0;
	return st;
}

void
nrf_h2_cancel(struct nrf_h2_stream *st)
{
	struct nrf_h2_conn *c = st->conn;

	st->user = NULL;
	st->src = NULL;
	st->src_chunk = NULL;
	if (c->fl & CF_DEAD)
		return;
	if (st->unconsumed > 0) {
		uint32_t n = st->unconsumed;

		h2_peer_unconsumed(c->ctx, st, -(int64_t)n);
		stream_credit(c, st, n);
	}
	nrf_h2_msg_release(c->ctx, &st->msg);
	if (!(st->flags & (NRF_H2_SF_END | NRF_H2_SF_RESET)))
		h2_cli_reset(c, st, NRF_H2_CANCEL);
	h2_mark_dirty(c);
}

void
nrf_h2_consume(struct nrf_h2_stream *st, size_t n)
{
	struct nrf_h2_conn *c = st->conn;

	if ((c->fl & CF_DEAD) || n == 0)
		return;
	if (n > st->unconsumed)
		n = st->unconsumed;
	if (n == 0)
		return;
	h2_peer_unconsumed(c->ctx, st, -(int64_t)n);
	stream_credit(c, st, (uint32_t)n);
}

bool
nrf_h2_stalled(const struct nrf_h2_stream *st)
{
	struct nrf_h2_conn *c = st->conn;

	if (c->server || (c->fl & CF_DEAD) || st->user == NULL)
		return false;
	return st->rx_open >= c->ctx->lim.peer_stream_window;
}

/* A frame other than HEADERS on @p sid is a connection error: an id this
 * side has not opened, or whose HEADERS the peer has not seen. */
static bool
cli_idle(const struct nrf_h2_conn *c, uint32_t sid, const struct nrf_h2_stream *st)
{
	return sid >= c->cli->next_id || unsent(st);
}

/* What the client side of the protocol layer (h2_proto.h) does its way. */
static const struct h2_side cli_side = {
	.who = "upstream",
	.push_why = "PUSH_PROMISE: push disabled",
	.lim = { .push_max = 0, .max_acks = UINT32_MAX, .data_max = UINT32_MAX },
	.size = sizeof(struct h2_cli),
	.cs = { .ignored = H2C_RST | H2C_CLOSING, .queued = H2C_CLOSING, .closing = H2C_CLOSING,
		.end_recv = H2C_END_RECV, .end_sent = H2C_END_SENT },
	.flags = H2_SIDE_PING_LEN_FIRST,
	.conn_error = conn_error,
	.data = on_data,
	.headers = on_headers,
	.rst_stream = on_rst_stream,
	.on_field = on_field,
	.block_end = block_end,
	.idle = cli_idle,
	.reset = h2_cli_reset,
	.goaway_recv = cli_goaway_recv,
	.stream_close = stream_close,
	.data_begin = data_begin,
	.early = early_check,
	.body = cli_body,
	.sent = cli_sent,
	.head = cli_head,
};

const struct h2_engine_ops h2_cli_engine = H2_ENGINE_OPS(cli, "client");
