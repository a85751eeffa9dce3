/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_H
#define NRF_H2_H

/**
 * @file
 * HTTP/2 on top of the transport: front connections (nrfwd's own server,
 * h2_srv.c: h2c with prior knowledge, or h2 after TLS) and peer connections
 * (nrfwd's own client, h2_cli.c), their streams, and the per-worker pools
 * that hold request and response messages. nghttp2 provides the HPACK
 * encoder and its allocator interface; the framing is nrfwd's.
 *
 * Protocol code does no I/O of its own: bytes read by the transport are fed
 * to the connection's engine (struct h2_engine_ops in h2_int.h); its frames
 * are pulled into a bounded per-connection buffer that the transport writes
 * (the "pumps", driven by transport events and by nrf_h2_ctx_run()).
 *
 * What this module decides: HTTP/2 framing, flow control, the limits of
 * struct nrf_h2_limits. What it leaves to the owner (rt): what to do with a
 * request or an answer, through struct nrf_h2_cbs.
 *
 * Threads: a context and everything created from it belong to one worker
 * thread. Nothing is locked; nothing may be shared between workers.
 *
 * Memory: header blocks, body chunks, stream objects and output buffers
 * come from per-context free lists, so the steady state does not call
 * malloc per request; the lists give back what a burst left unused
 * (nrf_h2_ctx_trim()). Every byte a context holds is accounted by kind
 * (nrf_h2_ctx_mem_get()) and checked against its budget
 * (nrf_h2_ctx_set_budget()). What one connection can make a context hold
 * is bounded by flow control: docs/architecture-datapath.md, "Memory".
 *
 * Re-entrancy: callbacks run inside an engine's input or output pass, or
 * inside nrf_h2_ctx_run(). From
 * a callback the owner may call any function below on any stream or
 * connection of the same context; connection teardown, writes and reads are
 * always deferred to nrf_h2_ctx_run(), never done inside a callback.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_common.h"
#include "nrf_list.h"
#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Payload bytes of one body chunk: one DATA frame of the default
 *  SETTINGS_MAX_FRAME_SIZE. */
#define NRF_H2_CHUNK_SIZE 16384

/**
 * Bytes a stream holds itself for a response this proxy generates
 * (nrf_h2_respond_inline()): the header values and the body together.
 */
#define NRF_H2_INLINE_BYTES 1024

/** HTTP/2 error codes used by callers (RFC 9113 §7). */
#define NRF_H2_NO_ERROR 0x0u
#define NRF_H2_PROTOCOL_ERROR 0x1u
#define NRF_H2_INTERNAL_ERROR 0x2u
#define NRF_H2_FLOW_CONTROL_ERROR 0x3u
#define NRF_H2_SETTINGS_TIMEOUT 0x4u
#define NRF_H2_STREAM_CLOSED 0x5u
#define NRF_H2_FRAME_SIZE_ERROR 0x6u
#define NRF_H2_REFUSED_STREAM 0x7u
#define NRF_H2_CANCEL 0x8u
#define NRF_H2_COMPRESSION_ERROR 0x9u
#define NRF_H2_ENHANCE_YOUR_CALM 0xbu

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/** One chunk of a body. */
struct nrf_h2_chunk {
	struct nrf_h2_chunk *next;
	uint32_t off; /**< first unread byte */
	uint32_t len; /**< end of the bytes written */
	char data[NRF_H2_CHUNK_SIZE];
};

/** A body: a list of chunks owned by whoever holds the struct. */
struct nrf_h2_body {
	struct nrf_h2_chunk *head;
	struct nrf_h2_chunk *tail;
	size_t len; /**< unread bytes in all chunks */
};

/** A header field; slices point into the owning message's header block. */
struct nrf_h2_hdr {
	struct nrf_slice name;
	struct nrf_slice value;
};

/**
 * A request or a response as received: pseudo-headers, regular fields in
 * arrival order (names lower case, as HTTP/2 requires), body.
 *
 * All header bytes live in one header block of the context's block size
 * (the limit on a header list, RFC 9113 §6.5.2: name + value + 32 per
 * field): the field table grows from the front, the bytes from the back.
 * Trailer fields are not kept.
 */
struct nrf_h2_msg {
	struct nrf_slice method;    /**< request :method */
	struct nrf_slice scheme;    /**< request :scheme */
	struct nrf_slice authority; /**< request :authority ("" when absent) */
	struct nrf_slice path;      /**< request :path (with query) */
	int status;                 /**< response :status; 0 for requests */
	struct nrf_h2_hdr *hdrs;    /**< regular fields */
	uint32_t n_hdrs;
	uint32_t n_via;             /**< how many of them are `via` lines */
	uint32_t list_size;         /**< header list size so far */
	char *block;                /**< header block (pool), NULL when none */
	uint32_t block_top;         /**< bytes are in block[block_top, cap) */
	struct nrf_h2_body body;
};

struct nrf_h2_ctx;

/**
 * Append @p len bytes to @p b (chunks from the pool of @p ctx).
 * @return 0 or NRF_ENOMEM (nothing appended then).
 */
int nrf_h2_body_append(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b,
	const void *data, size_t len);

/** Move every chunk of @p src to the end of @p dst; @p src becomes empty. */
void nrf_h2_body_splice(struct nrf_h2_body *dst, struct nrf_h2_body *src);

/** Return every chunk of @p b to the pool; @p b becomes empty. */
void nrf_h2_body_release(struct nrf_h2_ctx *ctx, struct nrf_h2_body *b);

/**
 * The body as one contiguous range: the chunk itself when it has one
 * chunk, else a copy into @p scratch (of @p cap bytes; a longer body is
 * cut). Empty body: {NULL, 0}.
 */
struct nrf_slice nrf_h2_body_flat(const struct nrf_h2_body *b, char *scratch,
	size_t cap);

/** Move @p src into @p dst (which must be empty or released); @p src is zeroed.
 *  Inline: once or twice per forwarded request (measured). */
static inline void
nrf_h2_msg_move(struct nrf_h2_msg *dst, struct nrf_h2_msg *src)
{
	*dst = *src;
	nrf_zero(src, sizeof(*src));
}

/** Return the header block and body of @p m to the pool; @p m is zeroed. */
void nrf_h2_msg_release(struct nrf_h2_ctx *ctx, struct nrf_h2_msg *m);

/**
 * Copy the `via` field lines of @p m, in order, into @p out (up to @p max).
 * @return the number of via lines (may exceed @p max: then only @p max
 * were written).
 */
size_t nrf_h2_msg_via(const struct nrf_h2_msg *m, struct nrf_slice *out, size_t max);

/** First field named @p name (lower case); {NULL, 0} when absent. */
struct nrf_slice nrf_h2_msg_get(const struct nrf_h2_msg *m, const char *name);

/** nrf_h2_hop_by_hop() past its length test (a name of NRF_H2_HOP_LENS). */
bool nrf_h2_hop_by_hop_named(struct nrf_slice name, struct nrf_slice value);

/* Lengths of those names: most fields (via, user-agent, content-type,
 * 3gpp-sbi-*, ...) are ruled out inline by their length, with no call
 * (measured: ~8 fields per forwarded request). */
#define NRF_H2_HOP_LENS ((1u << 2) | (1u << 7) | (1u << 10) | (1u << 14) | (1u << 16) | (1u << 17))

/**
 * True for connection-specific ("hop-by-hop") field names that a proxy never
 * forwards: connection, keep-alive, proxy-connection, transfer-encoding,
 * upgrade, http2-settings, and te unless its value is "trailers".
 * (HTTP/2 forbids them on the wire; nghttp2 already refuses a message that
 * carries one, so no field can be named by a `connection` header.)
 * Any thread; no side effects.
 */
static inline bool
nrf_h2_hop_by_hop(struct nrf_slice name, struct nrf_slice value)
{
	if (name.len > 17 || !((NRF_H2_HOP_LENS >> name.len) & 1))
		return false;
	return nrf_h2_hop_by_hop_named(name, value);
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

/**
 * Limits and settings of a context (one per worker). Zero for the windows
 * means their default.
 */
struct nrf_h2_limits {
	/** Header list limit (RFC 9113 §6.5.2: name + value + 32 per field)
	 *  and block size (>= 512). A front header block may span
	 *  2 * ceil(max_header_bytes / 16384) CONTINUATION frames (at least
	 *  8); a longer one, or one that decodes to more than
	 *  max(4 * max_header_bytes, max_header_bytes + 64 KiB), ends the
	 *  connection with GOAWAY(ENHANCE_YOUR_CALM) (see on_request). */
	uint32_t max_header_bytes;
	uint32_t max_body_bytes;        /**< request body limit on front streams */
	uint32_t max_concurrent_streams; /**< front SETTINGS_MAX_CONCURRENT_STREAMS */
	/** Front SETTINGS_INITIAL_WINDOW_SIZE (default 256 KiB). Request
	 *  bodies are read without waiting on the stream window. */
	uint32_t stream_window;
	/** Connection receive window of both roles (default 16 MiB; front:
	 *  at least max_body_bytes + stream_window). On a front connection it
	 *  bounds the request body bytes held for its open streams: they are
	 *  credited back when their stream closes. Peer connections credit
	 *  data back as it arrives (the stream window bounds them). */
	uint32_t conn_window;
	/** Peer SETTINGS_INITIAL_WINDOW_SIZE (default 64 KiB): the most an
	 *  upstream sends on a stream before the owner consumes
	 *  (nrf_h2_consume()), so the most an answer holds in memory; charged
	 *  whole to the budget for every open peer stream. */
	uint32_t peer_stream_window;
};

/**
 * New per-worker context on loop @p loop of transport @p tp.
 * @return NULL with @p err = NRF_ENOMEM or NRF_EINVAL (bad limits).
 * Any thread; afterwards only the worker's thread uses it.
 */
struct nrf_h2_ctx *nrf_h2_ctx_create(const struct nrf_tp_ops *tp,
	struct nrf_tp_loop *loop, const struct nrf_h2_limits *lim, int *err);

/**
 * Free the context. Every connection must have been closed and reaped
 * (nrf_h2_conn_close() + nrf_h2_ctx_run()) first. NULL-safe.
 */
void nrf_h2_ctx_free(struct nrf_h2_ctx *ctx);

/**
 * Run deferred work: continue reads that stopped at their budget, write
 * every connection with pending output, tear down closed connections
 * (calling on_close for their streams, then on_conn_close). Call once per
 * loop iteration after the transport poll and the timers.
 * @return true when work is left that should not wait for an event (poll
 * with timeout 0 next time).
 */
bool nrf_h2_ctx_run(struct nrf_h2_ctx *ctx);

/** Pool and connection gauges of a context. */
struct nrf_h2_ctx_stats {
	uint32_t conns_server;
	uint32_t conns_client;
	uint32_t streams;
	uint32_t chunks_free;
	uint32_t blocks_free;
};

void nrf_h2_ctx_stats_get(const struct nrf_h2_ctx *ctx, struct nrf_h2_ctx_stats *out);

/* ------------------------------------------------------------------------ */
/* Timeouts                                                                  */

/**
 * Timeouts of a context, in milliseconds (0: that check is off). Nothing
 * a client or peer can hold open is kept for ever (docs/config.md,
 * runtime.timeouts):
 */
struct nrf_h2_timeouts {
	/** front: from accept until the client's preface (SETTINGS) has
	 *  arrived and our SETTINGS are acknowledged; a TLS handshake is part
	 *  of it. GOAWAY (SETTINGS_TIMEOUT when only the ACK is missing, else
	 *  NO_ERROR) and close; with TLS not yet up, a bare close. */
	uint32_t handshake_ms;
	/** front: a header block (HEADERS + CONTINUATION) not finished. The
	 *  connection can carry nothing else meanwhile: GOAWAY(NO_ERROR) with
	 *  the last stream before that one, close. */
	uint32_t header_ms;
	/** front: a request (headers and body, END_STREAM) not complete, from
	 *  its first HEADERS frame. Not yet answered: on_request(st,
	 *  NRF_ETIMEDOUT) (the owner answers 408), then RST_STREAM(NO_ERROR)
	 *  once the answer is out; already answered (an early 4xx): RST_STREAM
	 *  (NO_ERROR when the answer is out, else CANCEL). */
	uint32_t body_ms;
	/** front: no open stream (handshake done): GOAWAY(NO_ERROR, last
	 *  stream processed); closes once written. */
	uint32_t idle_ms;
	/** front: an answer with bytes to send and none framed (the client's
	 *  stream or connection window stays at 0): RST_STREAM(CANCEL), which
	 *  closes the stream (the owner cancels what runs upstream). Either
	 *  role: a connection whose transport takes no byte for this long
	 *  (the other end does not read at all) is closed. */
	uint32_t stalled_ms;
	/** peer: no stream on a connected, usable connection: on_conn_idle(),
	 *  then GOAWAY(NO_ERROR) and close. */
	uint32_t upstream_idle_ms;
};

/** Why nrf_h2_ctx_sweep() ended something (counter index). */
enum nrf_h2_tmo {
	NRF_H2_TMO_HANDSHAKE = 0, /**< handshake_ms (front connection) */
	NRF_H2_TMO_HEADER,        /**< header_ms (front connection) */
	NRF_H2_TMO_BODY,          /**< body_ms (front stream) */
	NRF_H2_TMO_IDLE,          /**< idle_ms (front connection) */
	NRF_H2_TMO_STALLED_READER, /**< stalled_ms (front stream or connection) */
	NRF_H2_TMO_UPSTREAM_IDLE, /**< upstream_idle_ms (peer connection) */
	NRF_H2_TMO_UPSTREAM_STALLED, /**< stalled_ms (peer connection) */
	NRF_H2_TMO_COUNT
};

/**
 * Set the timeouts of @p ctx (copied; a new context has every one off).
 * Takes effect at the next sweep, also for what is already open. Worker
 * thread of @p ctx.
 */
void nrf_h2_ctx_set_timeouts(struct nrf_h2_ctx *ctx, const struct nrf_h2_timeouts *t);

/**
 * How often the owner should call nrf_h2_ctx_sweep() for the timeouts set:
 * a quarter of the shortest one, between 10 and 250 ms.
 */
uint32_t nrf_h2_ctx_sweep_period_ms(const struct nrf_h2_ctx *ctx);

/**
 * Check every connection and stream of @p ctx against the timeouts and end
 * what is over (the actions of struct nrf_h2_timeouts; sends and closes
 * are deferred to nrf_h2_ctx_run() as usual, on_request may be called from
 * here). Call every nrf_h2_ctx_sweep_period_ms() with the monotonic clock
 * @p now_ns.
 *
 * How time is kept: the event paths never read the clock. A sweep notes
 * the time it first sees a connection or stream in a waiting state, the
 * event paths only clear that note when it moves on (a stream opened,
 * bytes framed, the socket writable again), and a later sweep that finds
 * the note older than the timeout acts. So nothing ends before its timeout,
 * and nothing waits more than two sweep periods beyond it (one to notice
 * the wait, one between sweeps). Cost: one pass
 * over the connections and their open streams per period.
 *
 * @param counts  per enum nrf_h2_tmo, incremented for each action.
 * Worker thread of @p ctx; not from a callback.
 */
void nrf_h2_ctx_sweep(struct nrf_h2_ctx *ctx, uint64_t now_ns,
	uint64_t counts[NRF_H2_TMO_COUNT]);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */

/** What a context's memory holds (nrf_h2_ctx_mem_get()). */
enum nrf_h2_mem_kind {
	/** Body chunks: request bodies, answers held or being relayed,
	 *  answers kept for later. */
	NRF_H2_MEM_BODIES = 0,
	/** Header blocks of requests and answers (max_header_bytes each). */
	NRF_H2_MEM_HEADERS,
	/** Output buffers of connections whose other end reads slower than
	 *  this side writes. */
	NRF_H2_MEM_OUTPUT,
	/** nghttp2's memory (its streams, frames, HPACK tables: what its
	 *  allocator holds, in use or kept for reuse) and this module's
	 *  connection and stream objects. */
	NRF_H2_MEM_HTTP2,
	/** Receive window granted to upstreams on the peer streams open now
	 *  and not used yet: what they may still send without being asked. */
	NRF_H2_MEM_WINDOW,
	NRF_H2_MEM_COUNT
};

/** Memory of a context, in bytes. */
struct nrf_h2_mem_stats {
	uint64_t bytes[NRF_H2_MEM_COUNT]; /**< by enum nrf_h2_mem_kind */
	uint64_t total;                   /**< their sum: the budget's measure */
	uint64_t pooled;                  /**< kept on this module's free lists
					   *   (not in total; nghttp2's are in
					   *   NRF_H2_MEM_HTTP2) */
};

/**
 * The memory of @p ctx now. Any thread (relaxed loads of single-writer
 * counters: each value is exact, the set a few microseconds apart).
 */
void nrf_h2_ctx_mem_get(const struct nrf_h2_ctx *ctx, struct nrf_h2_mem_stats *out);

/**
 * Memory budget of @p ctx (@p bytes 0: none, the default). While the
 * total of nrf_h2_ctx_mem_get() is at or over it, new front requests are
 * refused without keeping their fields or body: a stream whose header
 * block begins, or whose body arrives, over the budget is delivered with
 * on_request(st, NRF_EFULL) (NRF_H2_SF_BUSY set). Answers in flight go
 * on: they are bounded by flow control. Worker thread of @p ctx.
 */
void nrf_h2_ctx_set_budget(struct nrf_h2_ctx *ctx, uint64_t bytes);

/** True while @p ctx is at or over its budget. Worker thread. */
bool nrf_h2_ctx_over_budget(const struct nrf_h2_ctx *ctx);

/**
 * Give back to the system the pooled objects (chunks, blocks, stream
 * objects, output buffers, nghttp2's small blocks) that stayed unused
 * since the previous call: half of them each call, above a small floor.
 * Call about once a second. Worker thread.
 * @return bytes freed (the caller may then ask the allocator to return
 *   memory to the system, e.g. glibc's malloc_trim()).
 */
size_t nrf_h2_ctx_trim(struct nrf_h2_ctx *ctx);

/* ------------------------------------------------------------------------ */
/* Connections and streams                                                   */

struct nrf_h2_conn;

/**
 * One stream. Fields are read-only for the owner except @c user.
 * Front stream: @c msg is the request; peer stream: @c msg is the response.
 */
/** Private: HTTP checks of a front request or of a peer's answer
 *  (lib/h2/h2_check.c). */
struct nrf_h2_reqchk {
	uint32_t fl;
	int32_t status; /**< answers: :status of the current block, -1: none */
	int64_t clen; /**< content-length, -1 when absent */
	int64_t rlen; /**< body bytes received */
};

struct nrf_h2_stream {
	struct nrf_h2_conn *conn;
	int32_t id;
	uint32_t flags;          /**< NRF_H2_SF_* */
	void *user;              /**< owner's object; NULL: no callbacks */
	struct nrf_h2_msg msg;
	/** Front: the status of the answer submitted (0: none yet) and the
	 *  body bytes handed to HTTP/2 for it so far (access log). */
	uint16_t resp_status;
	uint64_t resp_bytes;
	/* private */
	struct nrf_h2_body out;  /**< front: response body not yet framed */
	const struct nrf_h2_body *src; /**< peer: request body (borrowed) */
	const struct nrf_h2_chunk *src_chunk;
	uint32_t src_off;
	uint32_t unconsumed;     /**< peer: received, not yet consumed */
	uint32_t rx_held;        /**< front: body bytes not yet credited to
				  *   the connection window */
	uint8_t hdr_phase;
	uint32_t rst_code;       /**< front: code of a reset held for the HEADERS */
	struct nrf_h2_reqchk chk;  /**< HTTP checks of the request (front) or answer (peer) */
	struct nrf_list link;    /**< h2 only: in its connection's streams */
	uint16_t inl_len;        /**< front: inline response bytes used */
	uint16_t inl_body;       /**< front: inline body starts here */
	uint16_t inl_off;        /**< front: next inline body byte to frame */
	uint64_t tmo_req;        /**< front: request seen incomplete since (ns; 0: not yet) */
	uint64_t tmo_out;        /**< front: answer seen waiting for the reader since */
	/* Peer streams, nrfwd's own HTTP/2 client (h2_cli.c). */
	uint32_t cs;             /**< peer: H2C_* state bits */
	uint32_t rx_open;        /**< peer: DATA received, not yet re-credited */
	uint32_t rx_due;         /**< peer: consumed, not yet announced */
	int64_t swin;            /**< peer: send window (request body) */
	struct nrf_list sq;      /**< peer: on the send or the close queue */
	uint8_t *hb;             /**< peer: HEADERS frame(s) not yet written */
	uint32_t hb_len;
	/* Last: not cleared when the stream is reused (only inl_len bytes
	 * of it are ever read). */
	char inl[NRF_H2_INLINE_BYTES];
};

/** Front: request complete / peer: final response complete (END_STREAM seen). */
#define NRF_H2_SF_END 0x0001u
/** Front: a response was submitted. */
#define NRF_H2_SF_RESPONDED 0x0002u
/** Front: the response body is complete (nrf_h2_end() or no body). */
#define NRF_H2_SF_OUT_EOF 0x0004u
/** Peer: final response headers received (msg.status set). */
#define NRF_H2_SF_HEADERS 0x0008u
/** Front: on_request already called. */
#define NRF_H2_SF_DELIVERED 0x0010u
/** Front: the request exceeded a limit or was malformed (answered 4xx). */
#define NRF_H2_SF_REJECTED 0x0020u
/** Front: refused for memory (the context was over its budget). */
#define NRF_H2_SF_BUSY 0x2000u
/** Front: the request is malformed (HTTP rules): reset, never delivered. */
#define NRF_H2_SF_MALFORMED 0x0800u
/** Front: the response is held in the stream (nrf_h2_respond_inline()). */
#define NRF_H2_SF_INLINE 0x0400u
/** Data provider is deferred, waiting for nrf_h2_append()/nrf_h2_end(). */
#define NRF_H2_SF_DEFERRED 0x0040u
/** Header list over the limit (fields after the limit are dropped). */
#define NRF_H2_SF_HDR_OVER 0x0080u
/** Stream reset or cancelled by this side. */
#define NRF_H2_SF_RESET 0x0100u
/** Response fully framed (END_STREAM sent). */
#define NRF_H2_SF_OUT_DONE 0x0200u
/**
 * The request's method is HEAD, whose answer has no content (RFC 9110
 * §9.3.2). Front: responses on the stream are sent as their headers alone
 * (END_STREAM on HEADERS); any body given is dropped. Peer: the answer is
 * complete with its final headers (NRF_H2_SF_END is set then); when the
 * upstream did not end the stream there, the stream is reset with CANCEL
 * at once, and a body it sends is never delivered.
 */
#define NRF_H2_SF_HEAD 0x1000u
/** Front: the request did not arrive in time (nrf_h2_ctx_sweep()). */
#define NRF_H2_SF_TIMEDOUT 0x8000u

/**
 * What happens to a connection's streams and the connection itself. Every
 * pointer may be NULL where the role does not use it. The owner object is
 * nrf_h2_conn_user(st->conn).
 */
struct nrf_h2_cbs {
	/**
	 * Front: a request stream is ready, exactly once per stream, or never
	 * when it closes first. @p err: 0 complete request (headers, body,
	 * END_STREAM); NRF_EPARSE malformed for this proxy (no :path,
	 * CONNECT: answer 400); NRF_ETOOBIG a limit: the body over
	 * max_body_bytes (answer 413), or, with NRF_H2_SF_HDR_OVER set, the
	 * header list over max_header_bytes (answer 431, RFC 6585; a header
	 * block decoding far beyond it, see struct nrf_h2_limits, is
	 * delivered before it ends, and the connection then closes with
	 * GOAWAY(ENHANCE_YOUR_CALM) once the answer is sent); NRF_EFULL the
	 * context is over its memory budget (NRF_H2_SF_BUSY, answer 503);
	 * NRF_ETIMEDOUT the request was not complete within the body timeout
	 * (nrf_h2_ctx_sweep(): answer 408; once the answer is out the stream
	 * is reset with NO_ERROR, RFC 9113 §8.1). After an early 4xx/5xx the
	 * rest of the body is read and dropped, and the stream reset with
	 * NO_ERROR only if the client sends more than 1 MiB after the answer.
	 * The owner answers with nrf_h2_respond().
	 */
	void (*on_request)(struct nrf_h2_stream *st, int err);
	/** Front: @p n bytes of the response body were framed (flow control). */
	void (*on_sent)(struct nrf_h2_stream *st, size_t n);
	/**
	 * Peer: final response headers received (1xx are skipped).
	 * NRF_H2_SF_END is already set when they ended the stream (an answer
	 * without a body, or the answer to HEAD); on_data follows then.
	 */
	void (*on_response)(struct nrf_h2_stream *st);
	/** Peer: body bytes were added to st->msg.body, or END_STREAM seen. */
	void (*on_data)(struct nrf_h2_stream *st);
	/**
	 * Either role: the stream is gone; @p st is freed when this returns
	 * (or, for a peer stream that broke flow control, forgotten: never
	 * used by the owner again, freed later).
	 * @p h2_code: RST_STREAM code or NRF_H2_NO_ERROR for a normal close;
	 * REFUSED_STREAM also for a request the peer never processed (GOAWAY);
	 * FLOW_CONTROL_ERROR for a peer that sent more DATA than its window
	 * (reported when the frame header arrives, before any of its bytes,
	 * and the stream is reset). @p err: 0, or NRF_ECLOSED when the
	 * connection went away. Called only while st->user is not NULL.
	 */
	void (*on_close)(struct nrf_h2_stream *st, uint32_t h2_code, int err);
	/** Peer: the TCP connection is established (requests may be sent). */
	void (*on_conn_ready)(struct nrf_h2_conn *c);
	/**
	 * Peer: a stream of @p c closed, also one the owner had forgotten
	 * (nrf_h2_cancel()): room for a queued request may be free now.
	 * Called after on_close of that stream, if any.
	 */
	void (*on_conn_stream_gone)(struct nrf_h2_conn *c);
	/** Peer: GOAWAY received; no new streams on @p c. */
	void (*on_conn_goaway)(struct nrf_h2_conn *c);
	/**
	 * Either role: the connection is gone (after on_close of each of its
	 * streams); @p c is freed when this returns. @p err: 0 orderly close,
	 * or why (a failed connect: the transport's reason, e.g.
	 * NRF_ECONNREFUSED, NRF_EUNREACH, else NRF_EIO; NRF_EIO socket error,
	 * NRF_ETIMEDOUT, NRF_EPROTO protocol error, NRF_ECLOSED peer closed).
	 */
	void (*on_conn_close)(struct nrf_h2_conn *c, int err);
	/**
	 * Either role: a PING ACK arrived, the answer to
	 * nrf_h2_conn_ping(c, @p token) (@p token read from its opaque
	 * data). Not called for the PING of nrf_h2_conn_shutdown().
	 */
	void (*on_conn_ping_ack)(struct nrf_h2_conn *c, uint64_t token);
	/**
	 * Peer: @p c has carried no stream for the upstream idle timeout
	 * (nrf_h2_ctx_sweep()). Return true (or leave the callback NULL) to
	 * let it go: GOAWAY(NO_ERROR), then it closes once that is written
	 * (on_conn_close(c, 0)); false keeps it (asked again next sweep).
	 */
	bool (*on_conn_idle)(struct nrf_h2_conn *c);
};

/**
 * Front connection on accepted transport connection @p tc (taken over:
 * closed with the connection, also on failure). Sends our SETTINGS.
 * @return NULL with @p err = NRF_ENOMEM.
 */
struct nrf_h2_conn *nrf_h2_conn_server(struct nrf_h2_ctx *ctx,
	struct nrf_tp_conn *tc, const struct nrf_h2_cbs *cbs, void *user, int *err);

/**
 * Peer connection: starts a transport connect to @p addr; on_conn_ready or
 * on_conn_close follows (never inside this call). The caller runs the
 * connect timeout (nrf_h2_conn_close(c, NRF_ETIMEDOUT)).
 * @return NULL with @p err = NRF_EIO (connect failed at once) or NRF_ENOMEM.
 */
struct nrf_h2_conn *nrf_h2_conn_client(struct nrf_h2_ctx *ctx,
	const struct nrf_tp_addr *addr, const struct nrf_h2_cbs *cbs, void *user,
	int *err);

/** The owner pointer given at creation. */
void *nrf_h2_conn_user(const struct nrf_h2_conn *c);

/**
 * The other end's address of @p c as "addr:port" ("[v6]:port"), "-" when
 * the transport cannot tell. Asked of the transport once per connection
 * (a system call on kernel sockets) and kept: cheap on every later call.
 * The string lives as long as @p c. Worker thread of @p c.
 */
const char *nrf_h2_conn_peer(struct nrf_h2_conn *c);

/**
 * A word of @p c kept for its owner: 0 when the connection is made, never
 * read or written by this module (rt caches the client's entry of its
 * per-client limits there, decision 0055). Lives as long as @p c. Worker
 * thread of @p c.
 */
uint64_t *nrf_h2_conn_word(struct nrf_h2_conn *c);

/** True for a client connection that is connected, not closing, no GOAWAY. */
bool nrf_h2_conn_usable(const struct nrf_h2_conn *c);

/** Peer's SETTINGS_MAX_CONCURRENT_STREAMS (100 until its SETTINGS arrive). */
uint32_t nrf_h2_conn_remote_max_streams(const struct nrf_h2_conn *c);

/** Open streams of @p c (those this module still tracks). */
uint32_t nrf_h2_conn_streams(const struct nrf_h2_conn *c);

/**
 * Send a PING on @p c (either role; a client connection may still be
 * connecting: the PING then follows the connection preface). Its ACK calls
 * the owner's on_conn_ping_ack(c, @p token): one round trip through the
 * other end's HTTP/2 layer, which a TCP connect alone does not prove (a
 * server that accepts and never speaks HTTP/2 never answers it). The
 * token travels as the PING's 8 bytes of opaque data (big-endian) and is
 * read back from the ACK; several PINGs may be outstanding, so the owner
 * chooses tokens it can tell apart. The caller runs the timeout
 * (e.g. nrf_h2_conn_close(c, NRF_ETIMEDOUT) when no ACK came).
 * Worker thread of @p c's context; callable from callbacks.
 * @return 0, NRF_EINVAL (@p c is NULL or being torn down: closed or
 *   failed, no callback will follow), NRF_ENOMEM (nghttp2 could not queue
 *   the frame).
 */
int nrf_h2_conn_ping(struct nrf_h2_conn *c, uint64_t token);

/**
 * Graceful shutdown of a front connection, in two steps (RFC 9113 §6.8):
 * @p final false sends a shutdown notice (GOAWAY with the largest stream
 * id: the client stops opening streams, the ones already on the way are
 * still served) and a PING; when its ACK arrives (one round trip: the client
 * has seen the notice) the GOAWAY (NO_ERROR) with the last stream processed
 * follows by itself. @p final true sends that GOAWAY now (the owner's
 * fallback for clients that do not answer the PING). Open streams go on;
 * the connection closes once they are done and everything is written.
 */
void nrf_h2_conn_shutdown(struct nrf_h2_conn *c, bool final);

/**
 * Front: refuse @p c (just made by nrf_h2_conn_server()): our SETTINGS
 * and GOAWAY(last-stream-id 0, @p h2_code) with @p why as debug data,
 * then the connection closes once they are written; no stream is ever
 * delivered. RFC 9113 §6.8: the client may retry every request elsewhere
 * or later. Worker thread.
 */
void nrf_h2_conn_refuse(struct nrf_h2_conn *c, uint32_t h2_code, const char *why);

/** What nrf_h2_ctx_evict() ended. */
enum nrf_h2_evict {
	NRF_H2_EVICT_NONE = 0,  /**< nothing: every front connection has work */
	NRF_H2_EVICT_HANDSHAKE, /**< one whose handshake was not done */
	NRF_H2_EVICT_IDLE,      /**< the one with no open stream for the longest */
};

/**
 * Front: make room for one more connection by ending the oldest front
 * connection of @p ctx that has no work (the owner's connection limit):
 *
 * - who: a front connection with no open stream that still takes requests
 *   (no GOAWAY sent, not closing, not refused by nrf_h2_conn_refuse()). A
 *   stream is open from its first HEADERS frame until it closes, so a
 *   request still arriving, one being answered, and an answer still being
 *   written all count as work: such a connection is never chosen. Bytes
 *   of a frame not yet complete are not a stream.
 * - which: the one that has waited longest for its handshake to be done
 *   (TLS, the client's preface and SETTINGS, the ACK of ours: the
 *   handshake timeout's span), in accept order; when every connection is
 *   past it, the one that has had no open stream for the longest.
 * - how: with the client's SETTINGS not there yet (TLS under way, preface
 *   incomplete), closed at once (on_conn_close(c, NRF_ECLOSED) follows from
 *   nrf_h2_ctx_run()). Otherwise GOAWAY(NO_ERROR, the last stream
 *   processed) with @p why (may be NULL) as debug data; its input is no
 *   longer fed (a stream the client opens meanwhile is not processed: the
 *   GOAWAY tells it so, and it may send it again elsewhere), and it closes
 *   once that is written (lingering as after nrf_h2_conn_refuse(); the
 *   idle or handshake timeout closes one whose client takes nothing).
 * - owner: from this call on @p c's callbacks are @p cbs (its user
 *   pointer stays): the owner tells it from the connections it counts by
 *   them; only on_conn_close of @p cbs is ever called.
 *
 * Cost: O(1) amortised. The context keeps its front connections with no
 * open stream on two lists in the order above, moved when a connection's
 * first stream opens or its last stream closes and when its handshake ends;
 * an entry that stopped taking requests meanwhile is dropped when met here.
 * Worker thread of @p ctx; not from a callback of @p ctx.
 * @return what was ended, NRF_H2_EVICT_NONE when no connection qualifies.
 */
enum nrf_h2_evict nrf_h2_ctx_evict(struct nrf_h2_ctx *ctx, const struct nrf_h2_cbs *cbs,
	const char *why);

/**
 * Close @p c now: every stream is closed (on_close with err NRF_ECLOSED),
 * then on_conn_close(@p err). Deferred to nrf_h2_ctx_run(); idempotent.
 */
void nrf_h2_conn_close(struct nrf_h2_conn *c, int err);

/**
 * nrf_h2_conn_shutdown(c, @p final) on every front connection of @p ctx.
 * @return the number of front connections still open.
 */
uint32_t nrf_h2_ctx_shutdown(struct nrf_h2_ctx *ctx, bool final);

/** Close every connection of @p ctx (nrf_h2_conn_close(c, NRF_ECLOSED)). */
void nrf_h2_ctx_close_all(struct nrf_h2_ctx *ctx);

/**
 * Front: answer stream @p st. @p status 100..999; @p hdrs regular fields
 * (hop-by-hop ones are dropped), copied; @p body of @p len bytes copied into
 * the response body. @p more: more body follows through nrf_h2_append()
 * and nrf_h2_end(); otherwise the response ends with @p body. The answer to
 * a HEAD request (NRF_H2_SF_HEAD) is its headers alone, sent with
 * END_STREAM whatever @p body and @p more say (content-length, if given,
 * is kept: it is the length of the GET answer).
 * @return 0, NRF_EINVAL (already answered, peer stream, stream gone),
 *   NRF_ENOMEM, NRF_EPROTO (nghttp2 refused).
 */
int nrf_h2_respond(struct nrf_h2_stream *st, int status, const struct nrf_h2_hdr *hdrs,
	size_t n_hdrs, const void *body, size_t len, bool more);

/**
 * Front: answer stream @p st with a complete response this proxy generates
 * itself (ProblemDetails and the like): the same answer as
 * nrf_h2_respond(st, status, hdrs, n_hdrs, body, len, false), cheaper. The
 * header values and the body are copied into the stream itself (up to
 * NRF_H2_INLINE_BYTES together; a longer answer takes nrf_h2_respond()),
 * handed to nghttp2 without another copy, and the body is framed straight
 * from there: no body chunk, no per-answer allocation of this module.
 * @p hdrs are sent as given (the caller generates them: no hop-by-hop
 * check); their names must stay valid until the stream closes (string
 * literals). Returns as nrf_h2_respond().
 */
int nrf_h2_respond_inline(struct nrf_h2_stream *st, int status,
	const struct nrf_h2_hdr *hdrs, size_t n_hdrs, const void *body, size_t len);

/**
 * Front: move @p b's bytes to the end of the response body; resumes
 * sending. Chunks of @p b whose bytes fit in the room left in the last
 * chunk of the response body are copied there and freed, so a body relayed
 * as it arrives, however small its DATA frames, takes about one chunk per
 * NRF_H2_CHUNK_SIZE bytes (at most two), never one per frame. On a HEAD
 * stream, and on one this side reset (nrf_h2_reset()), the chunks are
 * returned to the pool instead (the answer has no content, or no more of
 * it is sent) and 0 is returned.
 */
int nrf_h2_append(struct nrf_h2_stream *st, struct nrf_h2_body *b);

/** Front: the response body is complete. */
int nrf_h2_end(struct nrf_h2_stream *st);

/**
 * Either role: RST_STREAM with @p h2_code (on_close follows later). On a
 * front stream whose response was submitted but whose HEADERS frame is not
 * written yet, the reset waits for that frame: the client always sees the
 * status of an answer that broke off, never a bare RST_STREAM (libnghttp2
 * drops queued HEADERS of a stream once a reset is submitted).
 */
void nrf_h2_reset(struct nrf_h2_stream *st, uint32_t h2_code);

/**
 * Peer: send a request on client connection @p c. @p hdrs holds the
 * pseudo-headers (":method", ":scheme", ":authority", ":path") first, then
 * the regular fields; all copied. A HEAD request's stream gets
 * NRF_H2_SF_HEAD: its answer ends with its final headers. @p body (may be
 * NULL or empty) is sent from its start and only read, never consumed, so
 * the caller can send it again elsewhere; it must stay unchanged until the
 * stream closes or nrf_h2_cancel() is called.
 * @return the stream (user = @p user), or NULL with @p err = NRF_EINVAL
 *   (connection not usable), NRF_ENOMEM, NRF_EPROTO (nghttp2 refused, e.g.
 *   stream ids exhausted: the connection stops being usable).
 */
struct nrf_h2_stream *nrf_h2_request(struct nrf_h2_conn *c,
	const struct nrf_h2_hdr *hdrs, size_t n_hdrs, const struct nrf_h2_body *body,
	void *user, int *err);

/**
 * Peer: forget stream @p st: no more callbacks (user = NULL), the request
 * body is no longer read, and the stream is reset with CANCEL unless it has
 * already ended. Safe on a stream that is already closing.
 */
void nrf_h2_cancel(struct nrf_h2_stream *st);

/**
 * Peer: @p n bytes of st->msg.body were used (relayed or kept): let the
 * peer send more on this stream (WINDOW_UPDATE as needed). Peer streams do
 * not get stream window updates otherwise, so a slow client slows its own
 * upstream stream only, and an answer never holds more than the stream
 * window (peer_stream_window) of unconsumed bytes. The connection window
 * is credited as data arrives.
 */
void nrf_h2_consume(struct nrf_h2_stream *st, size_t n);

/**
 * Front: bytes of the answer body handed over (nrf_h2_append()) and not
 * framed yet: they wait for the client's flow-control window or for its
 * socket to take more. Worker thread; no side effects.
 */
static inline size_t
nrf_h2_pending(const struct nrf_h2_stream *st)
{
	return st->out.len;
}

/**
 * Peer: true when @p st's receive window is used up: the peer sends no
 * more of its answer until the owner consumes (nrf_h2_consume()). An owner
 * that holds an answer before relaying it must relay (or consume) by then.
 */
bool nrf_h2_stalled(const struct nrf_h2_stream *st);

#ifdef __cplusplus
}
#endif
#endif /* NRF_H2_H */
