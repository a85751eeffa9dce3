/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_H2_GUARD_H
#define NRF_H2_GUARD_H

/*
 * The front connection's frame-header pass (h2_guard.c; decision 0015).
 *
 * Front sessions run nghttp2 without closed streams and without RFC 7540
 * priorities (decision 0009). With those settings nghttp2 1.52 drops frames
 * on closed streams silently, ignores a HEADERS whose stream id is below an
 * earlier one, and skips PRIORITY frames unread. This pass reads the frame
 * headers of a front connection's input before nghttp2_session_mem_recv()
 * does and applies the RFC 9113 rules nghttp2 leaves out:
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
 * Everything the pass is not sure of is left to nghttp2 (which ignores it):
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
	uint32_t skip; /* payload bytes of the current frame still to come */
	uint32_t blk;  /* stream of an unfinished header block; 0: none */
	uint32_t sid;  /* current frame's stream and type, while want > 0 */
	uint8_t type;
	uint8_t want; /* leading payload bytes the check needs (pay[]) */
	uint8_t got;
	uint8_t hlen;  /* bytes of a frame header cut by the end of a read */
	uint8_t pre;   /* connection preface bytes passed (24 in all) */
	uint8_t state; /* H2_GUARD_ON, _OFF, _DONE */
	uint8_t hdr[9];
	uint8_t pay[5];
	uint8_t win[H2_GUARD_WIN]; /* H2_GS_* of ids (hi - 2 * WIN, hi] */
};

#define H2_GUARD_ON 0u	 /* checking */
#define H2_GUARD_OFF 1u	 /* nghttp2 is ending the connection: bytes pass */
#define H2_GUARD_DONE 2u /* the pass ended the connection: bytes dropped */

/* What the pass asks for. */
#define H2_GV_RST 1u	/* stream error: RST_STREAM(sid, code) */
#define H2_GV_GOAWAY 2u /* connection error: GOAWAY(code) */

struct h2_guard_verdict {
	uint8_t kind; /* H2_GV_* */
	uint8_t type; /* the offending frame's type */
	uint32_t sid;
	uint32_t code; /* HTTP/2 error code */
	size_t at;     /* input before this offset goes to nghttp2 first */
};

/*
 * Read frame headers in @p in [*@p pos, @p len) and stop at the first frame
 * that breaks a rule: true, with @p v filled (v->at >= the entry value of
 * *@p pos) and *@p pos past the bytes examined (call again from there).
 * False when the input ends without one (*@p pos = @p len). No I/O, no
 * allocation; the state carries partial headers and payload across calls.
 */
bool h2_guard_scan(
	struct h2_guard *g, const uint8_t *in, size_t len, size_t *pos, struct h2_guard_verdict *v);

#endif /* NRF_H2_GUARD_H */
