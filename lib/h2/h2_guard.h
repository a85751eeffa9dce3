/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_GUARD_H
#define NRF_H2_GUARD_H

/*
 * The front connection's frame-header pass (h2_guard.c; decision 0015).
 *
 * The front server keeps no closed streams and no RFC 7540 priorities (as
 * nghttp2 1.52 with the settings of decision 0009, whose behaviour it
 * keeps): it drops frames on closed streams silently, ignores a HEADERS
 * whose stream id is below an earlier one, and skips PRIORITY frames
 * unread. These rules, checked on each frame the server's frame loop
 * assembles before it handles it (h2_srv.c), are the RFC 9113 rules that
 * leaves out:
 *
 *   frame                                   answer
 *   HEADERS opening a stream id the client  GOAWAY(PROTOCOL_ERROR)   §5.1.1
 *     skipped (below its highest one)
 *   DATA/HEADERS after the client's         GOAWAY(STREAM_CLOSED)    §5.1
 *     END_STREAM on that stream
 *   DATA/HEADERS after the client's         RST_STREAM(STREAM_CLOSED), once
 *     RST_STREAM on that stream
 *   DATA on a stream id the client skipped  GOAWAY(STREAM_CLOSED)    §5.1
 *   PRIORITY on stream 0                    GOAWAY(PROTOCOL_ERROR)   §6.3
 *   PRIORITY, or trailer HEADERS with       RST_STREAM(PROTOCOL_ERROR), once;
 *     priority, depending on its own        GOAWAY(PROTOCOL_ERROR) on an
 *     stream                                idle or forgotten stream §5.3.1
 *
 * Everything the pass is not sure of is left to the server (which ignores
 * it):
 * every verdict above rests on the client's own frames, never on what this
 * side did to a stream, so a frame that crosses our RST_STREAM is never
 * punished (RFC 9113 §5.1: it must be ignored). Memory is bounded: the
 * state of the last H2_GUARD_WIN stream ids below the highest is kept
 * (client stream ids only grow); older ones are forgotten.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Client stream ids remembered behind the highest (a power of two; at
 * least the usual SETTINGS_MAX_CONCURRENT_STREAMS, 128). */
#define H2_GUARD_WIN 128u

/* State of a remembered stream id (h2_guard.win[]). */
#define H2_GS_OPENED 0x01u   /* the client sent HEADERS on it */
#define H2_GS_ENDED 0x02u    /* ... with END_STREAM (or trailers did) */
#define H2_GS_RESET 0x04u    /* the client sent RST_STREAM on it */
#define H2_GS_ANSWERED 0x08u /* the pass sent its RST_STREAM already */

/* One front connection's pass. All zero = a new connection. */
struct h2_guard {
	uint32_t hi;   /* highest stream id the client opened; 0: none */
	uint32_t blk;  /* stream of an unfinished header block; 0: none */
	uint8_t want;  /* leading payload bytes the check of a frame needs */
	uint8_t state; /* H2_GUARD_ON, _OFF, _DONE */
	uint8_t win[H2_GUARD_WIN]; /* H2_GS_* of ids (hi - 2 * WIN, hi] */
};

#define H2_GUARD_ON 0u	 /* checking */
#define H2_GUARD_OFF 1u	 /* the server is ending the connection: frames pass */
#define H2_GUARD_DONE 2u /* the pass ended the connection */

/* What the pass asks for. */
#define H2_GV_RST 1u	/* stream error: RST_STREAM(sid, code) */
#define H2_GV_GOAWAY 2u /* connection error: GOAWAY(code) */

struct h2_guard_verdict {
	uint8_t kind; /* H2_GV_* */
	uint8_t type; /* the offending frame's type */
	uint32_t sid;
	uint32_t code; /* HTTP/2 error code */
	size_t at;     /* always 0: the verdict is on the frame given */
};

/*
 * The rules above for one whole frame the client sent (@p f: its 9-byte
 * header and its whole payload), before the server handles it: true, with
 * @p v filled, when it breaks one. The caller (h2_srv.c) sends what @p v
 * says: on H2_GV_GOAWAY it ends the connection (and sets state to
 * H2_GUARD_DONE), on H2_GV_RST it resets the stream and still hands the
 * frame to the server, which ignores frames on a stream it reset. No I/O,
 * no allocation. Frame headers are read once: the server's frame loop
 * calls this.
 */
bool h2_guard_frame(struct h2_guard *g, const uint8_t *f, struct h2_guard_verdict *v);

#endif /* NRF_H2_GUARD_H */
