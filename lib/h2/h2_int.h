/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_INT_H
#define NRF_H2_INT_H

/*
 * Internals shared by the translation units of lib/h2 (not installed, not
 * included by other modules).
 */

#include <nghttp2/nghttp2.h>

#include "h2_guard.h"
#include "h2_hpack.h"
#include "nrf_common.h"
#include "nrf_h2.h"
#include "nrf_list.h"

/* Output buffer of one connection; mem_send is not called while less
 * than OBUF_RESERVE bytes are free, so a frame chunk always fits whole. */
#define OBUF_CAP (64 * 1024)
#define OBUF_RESERVE (16384 + 64)

/* Reads per transport event before the connection yields to others. */
#define READ_BUDGET 8
#define RBUF_SIZE (32 * 1024)

/* Free-list caps (objects kept for reuse, per context), and the floors
 * nrf_h2_ctx_trim() keeps however long they sit idle (h2_pool.c). */
#define KEEP_CHUNKS 512
#define KEEP_BLOCKS 1024
#define KEEP_STREAMS 4096
#define KEEP_OBUFS 256
#define FLOOR_CHUNKS 32
#define FLOOR_BLOCKS 16
#define FLOOR_STREAMS 128
#define FLOOR_OBUFS 4
#define FLOOR_MEM 64 /* per size class of nghttp2's allocator */

/* A free list that knows its low-water mark since the last trim: objects
 * that stayed unused the whole time are the ones given back. */
struct h2_pool {
	void *head;    /* free objects, linked through a pointer at .link */
	size_t link;
	uint32_t n;    /* on the list (relaxed stores: read by any thread) */
	uint32_t low;  /* lowest n since the last trim */
	uint32_t keep; /* cap */
	uint32_t floor; /* trim keeps this many */
	size_t size;   /* bytes per object */
};

/* Private stream flag (above the public NRF_H2_SF_* bits): a peer stream
 * charged the upstream window (h2_stream_get()). */
#define H2_SF_WINDOW 0x10000000u
/* Front: the response's HEADERS frame has been written (on_frame_send). */
#define H2_SF_HDRS_OUT 0x20000000u
/* Front: a reset waits for the response's HEADERS (nrf_h2_reset()). */
#define H2_SF_RST_DUE 0x40000000u
/* Peer: reset as malformed by h2_conn.c (PROTOCOL_ERROR), whatever code
 * nghttp2 later closes it with (on_stream_close()). */
#define H2_SF_MAL_RST 0x80000000u

/* Header blocks decoded beyond this many times the limit (and at least
 * H2_BOMB_MIN over it) end the connection (h2_conn.c, header_flood()). */
#define H2_BOMB_FACTOR 4u
#define H2_BOMB_MIN (64u * 1024u)

enum conn_state {
	CONN_CONNECTING = 0,
	CONN_OPEN,
};

#define CF_DEAD 0x01u        /* on the dead list, torn down by ctx_run */
#define CF_WBLOCK 0x02u      /* transport refused more; wait for EV_OUT */
#define CF_RPAUSED 0x04u     /* reading stopped while output is blocked */
#define CF_GOAWAY_RECV 0x08u /* peer sent GOAWAY */
#define CF_SHUTDOWN 0x10u    /* we sent (graceful) GOAWAY */
#define CF_NOIDS 0x20u       /* stream ids exhausted */
#define CF_FINAL 0x40u       /* teardown's last flush is running */
#define CF_NOTICE 0x80u      /* shutdown notice sent */
#define CF_RSTOP 0x100u      /* input is read and dropped, never fed again */
#define CF_CALM 0x200u       /* header flood: GOAWAY(ENHANCE_YOUR_CALM) once
			      * calm_id is answered (or at once) */
#define CF_LINGER 0x400u     /* front: done, input drained until the client
			      * closes or LINGER_NS pass (conn_done()) */
#define CF_PREFACE 0x10000u  /* front: the client's SETTINGS arrived */
#define CF_ACKED 0x20000u    /* front: our SETTINGS were acknowledged */

/* How long a front connection ended under a client still sending waits
 * for the client to close (conn_done()). */
#define LINGER_NS (500ull * 1000 * 1000)

/*
 * The output queue of nrfwd's own HTTP/2 client and server (h2_oq.c):
 * whole frames, written in order ahead of the DATA that h2_cli_fill() and
 * h2_srv_fill() frame from stream bodies. Bytes [off, len) of buf are
 * queued; cap bytes are allocated (0: none).
 */
struct h2_oq {
	uint8_t *buf;
	uint32_t len, off, cap;
};

/*
 * h2_cli.c: a peer (client) connection's HTTP/2, nrfwd's own framing
 * (decision 0039): h2_cli_engine. Its state, struct h2_cli, and the
 * server's, struct h2_srv, are their files' own; both begin with a
 * struct h2_proto, the protocol layer's (h2_proto.h).
 */
struct h2_proto;
struct h2_cli;
struct h2_srv;

/* Stream slots by (id >> 1) % H2C_SLOTS, a stream found without a walk. */
#define H2C_SLOTS 256u

/* Stream state bit (st->cs) both sides share: on pr->sq, data to send. */
#define H2_CS_SQ 0x10u

/* Stream state bits (st->cs). */
#define H2C_END_SENT 0x01u /* END_STREAM queued */
#define H2C_END_RECV 0x02u /* END_STREAM received */
#define H2C_RST 0x04u      /* RST_STREAM sent or received */
#define H2C_CLOSING 0x08u  /* on cli->cq */
#define H2C_SQ H2_CS_SQ     /* on pr.sq */
#define H2C_HDRS 0x20u     /* its HEADERS wait in st->hb (on cli->sq) */
#define H2C_BODY 0x40u     /* a request body follows its HEADERS */
#define H2C_OPENED 0x80u   /* a HEADERS frame of the answer came */
#define H2C_SENT 0x100u    /* its HEADERS were written: counted in n_open */

int h2_cli_start(struct nrf_h2_conn *c);
/* Input: 0, or a negative NRF_E* (connection error, GOAWAY queued). */
int h2_cli_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len);
/* Output: frames into @p dst (at most @p cap bytes); returns bytes written. */
size_t h2_cli_fill(struct nrf_h2_conn *c, uint8_t *dst, size_t cap);
bool h2_cli_want_write(const struct nrf_h2_conn *c);
/* Both sides done: a GOAWAY went either way and no stream is left. */
bool h2_cli_done(const struct nrf_h2_conn *c);
void h2_cli_goaway(struct nrf_h2_conn *c, uint32_t code, const char *why);
uint32_t h2_cli_next_id(const struct nrf_h2_conn *c);
void h2_cli_reset(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code);
/* Free what a peer stream holds of its HEADERS (before h2_stream_put()). */
void h2_cli_hb_free(struct nrf_h2_stream *st);

/*
 * h2_srv.c: a front (server) connection's HTTP/2, nrfwd's own framing
 * (decision 0046): h2_srv_engine.
 */
/* Front stream state bits (st->cs). */
#define HS_RD 0x01u      /* END_STREAM received (half-closed remote) */
#define HS_WR 0x02u      /* END_STREAM queued */
#define HS_CLOSING 0x04u /* RST_STREAM sent or received: frames ignored */
#define HS_HDRS 0x08u    /* the answer's HEADERS are queued */
#define HS_SQ H2_CS_SQ   /* on pr.sq */
#define HS_CLOSED 0x20u  /* on srv->cq */

int h2_srv_start(struct nrf_h2_conn *c);
/* Input: 0, NRF_EPARSE (not HTTP/2: close without GOAWAY), or NRF_EPROTO
 * (a connection error: GOAWAY queued, the rest of the input ignored). */
int h2_srv_recv(struct nrf_h2_conn *c, const uint8_t *in, size_t len);
size_t h2_srv_fill(struct nrf_h2_conn *c, uint8_t *dst, size_t cap);
bool h2_srv_want_write(const struct nrf_h2_conn *c);
bool h2_srv_want_read(const struct nrf_h2_conn *c);
void h2_srv_goaway(struct nrf_h2_conn *c, uint32_t last, uint32_t code, const char *why,
	bool term);
uint32_t h2_srv_last_proc(const struct nrf_h2_conn *c);
void h2_srv_reset(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code);
int h2_srv_headers(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int status,
	const struct nrf_h2_hdr *hdrs, size_t n_hdrs, bool end);
void h2_srv_resume(struct nrf_h2_conn *c, struct nrf_h2_stream *st);
void h2_srv_rst(struct nrf_h2_conn *c, uint32_t sid, uint32_t code);

/*
 * h2_oq.c, for h2_cli.c and h2_srv.c: @p c's output queue (c->oq).
 * h2_oq_reserve(): room for @p n more bytes at its end (the caller writes
 * them, then adds them to c->oq.len); NULL: no memory. h2_oq_put(): a frame
 * header queued with room for its @p len payload bytes (returned, for the
 * caller to write); NULL: no memory, and the connection failed. h2_oq_frame(): a
 * frame with @p len bytes of @p payload queued; false: no memory, and the
 * connection failed (h2_conn_fail(NRF_ENOMEM)). h2_oq_take(): up to @p cap
 * queued bytes copied to @p dst and dequeued; an emptied queue gives back
 * a buffer grown past 64 KiB. h2_oq_fini(): the buffer freed.
 */
uint8_t *h2_oq_reserve(struct nrf_h2_conn *c, size_t n);
uint8_t *h2_oq_put(struct nrf_h2_conn *c, uint8_t type, uint8_t flags, uint32_t sid,
	size_t len);
bool h2_oq_frame(struct nrf_h2_conn *c, uint8_t type, uint8_t flags, uint32_t sid,
	const void *payload, size_t len);
void h2_oq_window_update(struct nrf_h2_conn *c, uint32_t sid, uint32_t inc);
void h2_oq_rst(struct nrf_h2_conn *c, uint32_t sid, uint32_t code);
size_t h2_oq_take(struct nrf_h2_conn *c, uint8_t *dst, size_t cap);
void h2_oq_fini(struct nrf_h2_conn *c);

/*
 * The engine of a connection: its HTTP/2 framing and state, chosen once
 * when the connection starts (h2_srv_engine for front connections,
 * h2_cli_engine for connections to upstreams). h2_conn.c keeps what every
 * connection shares (transport, output buffer, marking, teardown,
 * lingering, timeouts' bookkeeping) and reaches the engine only through
 * these; an engine reaches its owner through h2_conn_deliver(),
 * h2_conn_fail(), h2_conn_ping_ack() and the owner's callbacks.
 *
 * start: set up (SETTINGS queued); 0 or NRF_ENOMEM. free: release (NULL-
 * safe on a connection it never started). recv: input; 0, NRF_EPARSE (not
 * HTTP/2: close without GOAWAY) or another negative NRF_E* (a connection
 * error: GOAWAY queued, the rest of the input is dropped). fill: frames into
 * @p dst, at most @p cap bytes; returns bytes written. want_write: output
 * pending. done: both sides are done (GOAWAY either way, no stream left):
 * the connection closes once its output is written. ping: a PING with
 * @p data queued. reset: RST_STREAM(@p code) of @p st.
 */
struct h2_engine_ops {
	const char *name;
	int (*start)(struct nrf_h2_conn *c);
	void (*free)(struct nrf_h2_conn *c);
	int (*recv)(struct nrf_h2_conn *c, const uint8_t *in, size_t len);
	size_t (*fill)(struct nrf_h2_conn *c, uint8_t *dst, size_t cap);
	bool (*want_write)(const struct nrf_h2_conn *c);
	bool (*done)(const struct nrf_h2_conn *c);
	int (*ping)(struct nrf_h2_conn *c, const uint8_t data[8]);
	void (*reset)(struct nrf_h2_conn *c, struct nrf_h2_stream *st, uint32_t code);
};

/* The ops of engine @p e, whose functions are h2_<e>_start, _recv, _fill,
 * _want_write, _done and _reset; free and ping are the protocol layer's. */
#define H2_ENGINE_OPS(e, label)                                                  \
	{                                                                        \
		.name = label, .start = h2_##e##_start, .free = h2_proto_free,      \
		.recv = h2_##e##_recv, .fill = h2_##e##_fill,                      \
		.want_write = h2_##e##_want_write, .done = h2_##e##_done,           \
		.ping = h2_proto_ping, .reset = h2_##e##_reset,                    \
	}

extern const struct h2_engine_ops h2_srv_engine;
extern const struct h2_engine_ops h2_cli_engine;

/* h2_conn.c, for h2_cli.c and h2_srv.c */
void h2_conn_fail(struct nrf_h2_conn *c, int err);
/* Front (both servers): the request of @p st to its owner (on_request),
 * once; and what this proxy can handle of a complete request head (0 or
 * the NRF_E* the owner answers with: 503, 431, 400, 413). */
void h2_conn_deliver(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int err);
int h2_conn_check_head(struct nrf_h2_conn *c, struct nrf_h2_stream *st);

/* A PING ACK on a front connection (the drain's, or the owner's token). */
void h2_conn_ping_ack(struct nrf_h2_conn *c, const uint8_t d[8]);
struct nrf_h2_stream *h2_srv_stream(struct nrf_h2_conn *c, uint32_t sid);

struct nrf_h2_conn {
	struct nrf_h2_ctx *ctx;
	const struct h2_engine_ops *eng; /* h2_srv_engine or h2_cli_engine */
	/* The engine's state, whose first member is its protocol layer's
	 * (h2_proto.h): cli for h2_cli_engine, srv for h2_srv_engine. */
	union {
		struct h2_proto *pr;
		struct h2_cli *cli;
		struct h2_srv *srv;
	};
	struct nrf_tp_conn *tc;
	const struct nrf_h2_cbs *cbs;
	void *user;
	char *peer;              /* nrf_h2_conn_peer(), malloc'd on first ask */
	uint64_t word;           /* nrf_h2_conn_word(): the owner's */
	bool server;
	uint8_t state;
	uint32_t fl;
	int err;
	struct nrf_list streams; /* struct nrf_h2_stream.link, newest first */
	uint32_t n_streams;
	/* The stream whose header block is being received (on_header is
	 * called once per field: no map lookup each time). */
	struct nrf_h2_stream *hdr_st;
	int32_t hdr_id;
	struct nrf_list all;   /* ctx->conns */
	struct nrf_list dirty; /* ctx->dirty: output pending */
	struct nrf_list rq;    /* ctx->rq: reads to continue */
	struct nrf_list dead;  /* ctx->dead: teardown pending */
	struct nrf_list lng;   /* ctx->lingering (CF_LINGER) */
	struct nrf_list evl;   /* front: ctx->ev_hs or ctx->ev_idle (h2_ev_*()) */
	uint64_t linger_until;
	/* Own client and server: frames queued in order (the client's
	 * preface, SETTINGS, HEADERS, RST_STREAM, WINDOW_UPDATE, PING,
	 * GOAWAY), written before any DATA. */
	struct h2_oq oq;
	uint8_t *obuf;
	uint32_t olen;
	uint32_t ooff;
	/* Timeouts (h2_tmo.c): when a sweep first saw the connection waiting
	 * (ns; 0: not seen so). Event paths only clear them. */
	uint64_t tmo_hs;      /* front: handshake not done */
	uint64_t tmo_idle;    /* no open stream */
	uint64_t tmo_wr;      /* the transport takes no byte */
	int32_t tmo_idle_id;  /* stream id mark when tmo_idle was noted */
	/* Header list bytes (name + value + 32 per field) decoded in the
	 * current header block and not kept: over the limit, refused,
	 * malformed, trailers (header_flood()). */
	uint64_t hdr_bytes;
	int32_t calm_id;      /* the stream answered before that GOAWAY */
};

/* h2_mem.c: nghttp2's allocator, one pool per context (= per worker). */
#define H2_MEM_MIN 32u      /* smallest class */
#define H2_MEM_CLASSES 8u   /* 32 .. 4096 bytes */
#define H2_MEM_MAX (H2_MEM_MIN << (H2_MEM_CLASSES - 1))
#define H2_MEM_KEEP 8192u   /* free blocks kept per class */

/* One size class: its free list, its length and the lowest length since
 * the last trim, all the worker's own (the bytes are reported through
 * h2_acct_add(), never these). One struct per class, so the allocator's
 * fast paths index one array (measured). */
struct h2_mem_cls {
	void *free;
	uint32_t n;
	uint32_t low;
};

struct h2_mem {
	nghttp2_mem mem;
	/* One more class, never on a list, its n always UINT32_MAX: the
	 * class of blocks too large for the lists. */
	struct h2_mem_cls cls[H2_MEM_CLASSES + 1];
	/* The context's counters (h2_acct_add()) of the bytes this allocator
	 * holds from the system, in use or on its free lists
	 * (NRF_H2_MEM_HTTP2), and of the total. */
	uint64_t *used;
	uint64_t *total;
};

void h2_mem_init(struct h2_mem *m, uint64_t *used, uint64_t *total);
void h2_mem_fini(struct h2_mem *m);
/* Give back free blocks that stayed unused since the last call (down to
 * FLOOR_MEM per class). @return bytes given back. */
size_t h2_mem_trim(struct h2_mem *m);

struct nrf_h2_ctx {
	const struct nrf_tp_ops *tp;
	struct nrf_tp_loop *loop;
	struct nrf_h2_limits lim;
	struct h2_mem mem;

	struct h2_pool chunks;
	struct h2_pool blocks;
	struct h2_pool streams;
	struct h2_pool obufs;

	/* Memory accounting (h2_pool.c): bytes by enum nrf_h2_mem_kind and
	 * their total. Single writer (the worker), relaxed stores: any thread
	 * may read (nrf_h2_ctx_mem_get()). */
	uint64_t acct[NRF_H2_MEM_COUNT];
	uint64_t total;
	uint64_t budget;         /* nrf_h2_ctx_set_budget(); 0: none */
	uint64_t bomb_bytes;     /* header_flood() threshold */

	struct nrf_list conns;
	struct nrf_list dirty;
	struct nrf_list rq;
	struct nrf_list dead;
	struct nrf_list lingering; /* in deadline order */
	/* Front connections with no open stream, still taking requests, the
	 * oldest first (nrf_h2_ctx_evict()): handshake not done, in accept
	 * order; handshake done, in the order they became idle. Kept by the
	 * h2_ev_*() hooks; entries that stopped taking requests since (a
	 * GOAWAY, a close) are dropped when the eviction meets them. */
	struct nrf_list ev_hs;
	struct nrf_list ev_idle;
	uint32_t n_server;
	uint32_t n_client;
	uint32_t n_streams;

	struct nrf_h2_timeouts tmo; /* h2_tmo.c; all 0 until set */
	uint8_t rbuf[RBUF_SIZE];
};

/*
 * Eviction lists (nrf_h2_ctx_evict()): the hooks of the front event paths.
 * A list move when a connection goes idle <-> busy and when its handshake
 * ends; nothing per request beyond that.
 */
#define H2_HS_DONE (CF_PREFACE | CF_ACKED)

/* A front connection that has no open stream and still takes requests. */
static inline bool
h2_ev_ok(const struct nrf_h2_conn *c)
{
	return c->server && c->n_streams == 0 &&
		!(c->fl & (CF_DEAD | CF_FINAL | CF_SHUTDOWN | CF_NOTICE | CF_RSTOP | CF_LINGER |
			CF_CALM));
}

/* @p c has no open stream (new, or its last stream closed): at the tail of
 * its list. */
static inline void
h2_ev_idle(struct nrf_h2_conn *c)
{
	if (h2_ev_ok(c) && !nrf_list_linked(&c->evl))
		nrf_list_add_tail((c->fl & H2_HS_DONE) == H2_HS_DONE ? &c->ctx->ev_idle
								  : &c->ctx->ev_hs, &c->evl);
}

/* @p c opened a stream (or goes away): on no list. */
static inline void
h2_ev_busy(struct nrf_h2_conn *c)
{
	nrf_list_del(&c->evl);
}

/* h2_tmo.c hooks, called by the event paths of h2_conn.c (no clock). */

/* A SETTINGS frame arrived on a front connection (handshake progress); a
 * connection without a stream whose handshake just ended is idle from now
 * on (h2_ev_*()). */
static inline void
h2_tmo_settings(struct nrf_h2_conn *c, uint8_t flags)
{
	uint32_t was = c->fl;

	c->fl |= (flags & NGHTTP2_FLAG_ACK) ? CF_ACKED : CF_PREFACE;
	if ((was & H2_HS_DONE) != H2_HS_DONE && (c->fl & H2_HS_DONE) == H2_HS_DONE &&
		nrf_list_linked(&c->evl)) {
		nrf_list_del(&c->evl);
		h2_ev_idle(c);
	}
}

/* Bytes of a front answer were framed: the reader takes them. */
static inline void
h2_tmo_progress(struct nrf_h2_stream *st)
{
	st->tmo_out = 0;
}

/* The transport took bytes again (a write-blocked connection drains). */
static inline void
h2_tmo_writable(struct nrf_h2_conn *c)
{
	c->tmo_wr = 0;
}

/* Output pending on @p c: written by the next nrf_h2_ctx_run(). */
static inline void
h2_mark_dirty(struct nrf_h2_conn *c)
{
	if (!(c->fl & CF_DEAD) && !nrf_list_linked(&c->dirty))
		nrf_list_add_tail(&c->ctx->dirty, &c->dirty);
}

/* Queued frames not yet taken. */
static inline bool
h2_oq_pending(const struct nrf_h2_conn *c)
{
	return c->oq.off < c->oq.len;
}

/*
 * The open stream @p sid of @p c: @p slot's entry (own client and server
 * keep the newest stream of each (id >> 1) % H2C_SLOTS there), else, when a
 * newer stream took the slot, found on c->streams. NULL: none.
 */
static inline struct nrf_h2_stream *
h2_slot_find(struct nrf_h2_conn *c, struct nrf_h2_stream *const *slot, uint32_t sid)
{
	struct nrf_h2_stream *st = slot[(sid >> 1) % H2C_SLOTS];
	struct nrf_list *l;

	if (st != NULL && (uint32_t)st->id == sid)
		return st;
	NRF_LIST_FOREACH(l, &c->streams) {
		st = nrf_container_of(l, struct nrf_h2_stream, link);
		if ((uint32_t)st->id == sid)
			return st;
	}
	return NULL;
}

/* h2_check.c: HTTP semantics of front requests (nghttp2 1.52's rules,
 * which front sessions do not run: no_http_messaging). */
#define H2_CHK_OK 0
#define H2_CHK_BAD 1 /* malformed request: RST_STREAM(PROTOCOL_ERROR) */

#define H2_HF_METHOD 0x0001u
#define H2_HF_PATH 0x0002u
#define H2_HF_SCHEME 0x0004u
#define H2_HF_AUTHORITY 0x0008u
#define H2_HF_HOST 0x0010u
#define H2_HF_NO_PSEUDO 0x0020u      /* a regular field was seen */
#define H2_HF_CONNECT 0x0040u
#define H2_HF_OPTIONS 0x0080u
#define H2_HF_PATH_REGULAR 0x0100u   /* :path starts with '/' */
#define H2_HF_PATH_ASTERISK 0x0200u  /* :path is "*" */
#define H2_HF_SCHEME_HTTP 0x0400u    /* :scheme http or https */

/* Build the byte tables (from nghttp2's own checks); any thread, once. */
void h2_check_init(void);
bool h2_check_name(const uint8_t *p, size_t len);
bool h2_check_value(const uint8_t *p, size_t len);
void h2_reqchk_init(struct nrf_h2_reqchk *rc);
/*
 * What nghttp2 tells of a field's bytes (nghttp2_rcbuf_is_static()): the
 * name, or the name and the value, come from HPACK's static table, whose
 * names are valid and whose values are valid for their names. Their bytes
 * need no check and no copy; every rule about the field still applies.
 */
#define H2_KNOWN_NAME 0x1u
#define H2_KNOWN_VALUE 0x2u
/* One received field (@p trailer: in the trailer block; @p known:
 * H2_KNOWN_*, 0 for bytes of unknown origin): H2_CHK_*. */
int h2_check_field(struct nrf_h2_reqchk *rc, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, bool trailer, unsigned int known);
/* End of the request header block. */
int h2_check_head(const struct nrf_h2_reqchk *rc);
/* @p n more body bytes. */
int h2_check_data(struct nrf_h2_reqchk *rc, size_t n);
/* END_STREAM: body length = content-length. */
int h2_check_end(const struct nrf_h2_reqchk *rc);

/*
 * Both fronts (h2_srv.c, and h2_conn.c's nghttp2 session): the HTTP rules
 * of a request at the end of a header block (@p headers) and at END_STREAM
 * (@p end), in nghttp2's order: the request head, trailers only with
 * END_STREAM, then the end of the message. True: @p st is (now) malformed
 * (NRF_H2_SF_MALFORMED).
 */
static inline bool
h2_req_malformed(struct nrf_h2_stream *st, bool headers, bool end)
{
	if (!(st->flags & NRF_H2_SF_MALFORMED) && headers) {
		if (st->hdr_phase == 0 ? h2_check_head(&st->chk) != H2_CHK_OK : !end)
			st->flags |= NRF_H2_SF_MALFORMED; /* trailers need END_STREAM */
	}
	if (!(st->flags & NRF_H2_SF_MALFORMED) && end && h2_check_end(&st->chk) != H2_CHK_OK)
		st->flags |= NRF_H2_SF_MALFORMED;
	return (st->flags & NRF_H2_SF_MALFORMED) != 0;
}

/*
 * h2_check.c: HTTP semantics of answers on peer (client) streams, which
 * peer sessions do not run either (no_http_messaging): nghttp2 1.52's
 * client-side rules, same outcome for every input. The state lives in the
 * stream's chk (flags H2_AF_*), reset by h2_anschk_init() when the request
 * is submitted. H2_CHK_BAD: the stream is malformed, to be reset with
 * RST_STREAM(PROTOCOL_ERROR) and nothing more of it delivered.
 */
#define H2_CHK_DROP 2 /* a field nghttp2 removes (content-length: 0 on a 204) */
#define H2_CHK_INTERIM 3 /* h2_check_answer_head(): a 1xx, a final answer follows */

#define H2_AF_STATUS 0x0001u       /* :status seen in this block */
#define H2_AF_NO_PSEUDO 0x0020u    /* a regular field was seen */
#define H2_AF_EXPECT_FINAL 0x0040u /* a 1xx was received */
#define H2_AF_HEAD 0x0080u         /* the request was HEAD: no body */

/* @p head: the request's method is HEAD. */
void h2_anschk_init(struct nrf_h2_reqchk *rc, bool head);
/* One received answer field (@p trailer: after the final header block;
 * @p known: H2_KNOWN_*): H2_CHK_OK, H2_CHK_BAD or H2_CHK_DROP (valid, not
 * to be delivered). */
int h2_check_answer_field(struct nrf_h2_reqchk *rc, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, bool trailer, unsigned int known);
/* End of a non-trailer header block: H2_CHK_OK (final answer),
 * H2_CHK_INTERIM (1xx; the block's state is reset for the next) or
 * H2_CHK_BAD (no :status). */
int h2_check_answer_head(struct nrf_h2_reqchk *rc);
/* @p n more body bytes: H2_CHK_BAD before the final answer or beyond
 * content-length (0 for HEAD, 204 and 304). */
int h2_check_answer_data(struct nrf_h2_reqchk *rc, size_t n);
/* END_STREAM (on HEADERS after h2_check_answer_head(), or on DATA):
 * H2_CHK_BAD while a final answer is due or when the body is shorter
 * than content-length. */
int h2_check_answer_end(const struct nrf_h2_reqchk *rc);

/* h2_pool.c: the context's pools and memory accounting. */
static inline void
h2_acct_add(struct nrf_h2_ctx *ctx, unsigned int kind, int64_t delta)
{
	__atomic_store_n(&ctx->acct[kind], ctx->acct[kind] + (uint64_t)delta, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx->total, ctx->total + (uint64_t)delta, __ATOMIC_RELAXED);
}

void h2_pools_init(struct nrf_h2_ctx *ctx);
void h2_pools_fini(struct nrf_h2_ctx *ctx);
struct nrf_h2_chunk *h2_chunk_get(struct nrf_h2_ctx *ctx);
void h2_chunk_put(struct nrf_h2_ctx *ctx, struct nrf_h2_chunk *c);
char *h2_block_get(struct nrf_h2_ctx *ctx);
void h2_block_put(struct nrf_h2_ctx *ctx, char *b);
/* A stream object; @p peer: a client stream (charged the upstream window
 * until it is put back). */
struct nrf_h2_stream *h2_stream_get(struct nrf_h2_ctx *ctx, bool peer);
void h2_stream_put(struct nrf_h2_ctx *ctx, struct nrf_h2_stream *st);
uint8_t *h2_obuf_get(struct nrf_h2_ctx *ctx);
void h2_obuf_put(struct nrf_h2_ctx *ctx, uint8_t *b);
/* Bytes of a peer stream received and not consumed (flow control):
 * moved from the window charge to the bodies' (they sit in chunks). */
static inline void
h2_peer_unconsumed(struct nrf_h2_ctx *ctx, struct nrf_h2_stream *st, int64_t delta)
{
	st->unconsumed = (uint32_t)((int64_t)st->unconsumed + delta);
	h2_acct_add(ctx, NRF_H2_MEM_WINDOW, -delta);
}
/* Memory over the context's budget (nrf_h2_ctx_set_budget())? */
static inline bool
h2_over_budget(const struct nrf_h2_ctx *ctx)
{
	return ctx->budget != 0 && ctx->total >= ctx->budget;
}
/* Store one received field; pseudo-headers fill the named slices. Bytes
 * @p known to be in HPACK's static table (H2_KNOWN_*) are referenced, the
 * others copied into the block. */
int h2_msg_store(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m, const uint8_t *name,
	size_t nlen, const uint8_t *value, size_t vlen, unsigned int known);
/* Forget the fields (for an interim 1xx response); keeps the block. */
void h2_msg_reset_fields(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m);
/* nrf_h2_body_splice(), copying into @p dst's last chunk the first chunks
 * of @p src that fit there (freed then). */
void h2_body_join(struct nrf_h2_ctx *ctx, struct nrf_h2_body *dst, struct nrf_h2_body *src);
/* Copy up to @p cap bytes from the front of @p b, freeing emptied chunks. */
size_t h2_body_take(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b, uint8_t *dst,
	size_t cap);

#endif /* NRF_H2_INT_H */
