/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RT_WORLD_H
#define RT_WORLD_H

/*
 * A whole nrfwd worker in one process, for the fuzz targets fuzz_front.c
 * and fuzz_peer.c and the pipeline unit tests (tests/unit/rt/
 * rt_proxy_test.cc): a real lib/rt runtime (one worker, its thread not
 * started) on the fake transport of tests/unit/rt/fake_tp.h, driven from
 * the caller's thread exactly as rt_worker_main() drives it, and the
 * upstreams it connects to played here: the local NRF (10.0.0.1:8000),
 * forwarding peers nrf-b (10.0.0.2:8000, priority 1) and nrf-c
 * (10.0.0.3:8000, priority 2, rewriteLinks), and the NRF Growth host nrf-g
 * (10.0.0.4:8000). Each upstream is an nghttp2 server with a canned
 * behaviour, or a script: raw bytes the upstream writes, whatever nrfwd
 * sent.
 *
 * Time: nrfwd's timers are CLOCK_MONOTONIC deadlines and nothing here
 * waits or looks at the clock. world_turn() runs no timer at all;
 * world_settle() lets time pass whenever nothing else can happen and
 * requests wait: every deadline of the worker comes closer until the
 * earliest is due, and that timer fires (a per-try timeout, a probe, the
 * request timeout). So a run does not depend on the machine's speed (a
 * fuzzer's crash replays), virtual time adds up, and no timer fires before
 * one that is due earlier. Timestamps nrfwd keeps and compares with the
 * clock itself (a connection's age) see less time pass than the timers.
 *
 * Front streams: the client connection is accepted the way rt_worker.c's
 * on_listener() does it (TLS pass-through, nrf_h2_conn_server() with the
 * worker as owner) but with rt_front_cbs wrapped, so the world sees which
 * streams were delivered to the pipeline (world_front_delivered()) and
 * which transactions are still open.
 *
 * Every check that fails calls abort() with a message on stderr (the
 * fuzzer's crash), see WORLD_CHECK.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WORLD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond))                                                   \
			world_fail(__FILE__, __LINE__, #cond);                 \
	} while (0)

void world_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* Upstreams, by index. */
enum { UP_LOCAL = 0, UP_B, UP_C, UP_G, UP_N };

/* What an upstream does. */
enum up_mode {
	UP_DATA = 0,  /* 200 with one NF instance */
	UP_EMPTY,     /* 200 with an empty nfInstances */
	UP_404,       /* 404 ProblemDetails */
	UP_503,       /* 503 (a reroute status for peers) */
	UP_RESET,     /* RST_STREAM on every request */
	UP_GOAWAY,    /* GOAWAY (nothing processed) and close */
	UP_SILENT,    /* speaks HTTP/2 (SETTINGS, PING) but never answers */
	UP_HANG,      /* TCP accepted, never a byte */
	UP_REFUSE,    /* connection refused */
	UP_SCRIPT,    /* the script's bytes, see struct world_params */
	UP_MODES
};

struct world_params {
	bool local;              /* a local NRF is configured */
	bool small_limits;       /* maxHeaderBytes 1024, maxBodyBytes 512,
				  * 4 streams per connection, queue depth 2 */
	bool growth;             /* NRF Growth forwarding with nrf-g */
	uint8_t up[UP_N];        /* enum up_mode of each upstream */
	/*
	 * UP_SCRIPT: connection k to a scripted upstream writes segment k of
	 * @script (segments separated by WORLD_SEGMENT_SEP; connections past
	 * the last segment are refused), in pieces of @chunk bytes (0: all at
	 * once), one piece per turn, starting once nrfwd sent a request on
	 * the connection (so the bytes can answer it), or, on a connection
	 * that carries none (a health probe), once nothing else happens; then
	 * end of stream when @script_close, else silence.
	 */
	const uint8_t *script;
	size_t script_len;
	size_t chunk;
	bool script_close;
	/* runtime.timeouts.perTryMs (0: 300) and requestMs (0: 1000). */
	uint32_t per_try_ms;
	uint32_t request_ms;
	/* runtime.limits.perClient as JSON text (NULL: absent, all off). The
	 * fake transport tells no address: limits apply to requests whose
	 * User-Agent names an NF instance, with keyBy "nfInstance". */
	const char *per_client;
};

#define WORLD_SEGMENT_SEP "\n--\n"

struct world;

/* The world of @p p (the script is borrowed). Aborts on failure. */
struct world *world_create(const struct world_params *p);
/* Free the runtime, the upstreams and the fake transport; checks that
 * every connection was closed by nrfwd. */
void world_free(struct world *w);

/* The front (client) connection, accepted as a worker does. Aborts when
 * nrfwd refuses it. One per world. */
struct fake_conn *world_front_open(struct world *w);

/*
 * One loop iteration: transport poll, due timers, h2 run, then the
 * upstreams (canned answers, script pieces) and @p extra (the caller's
 * client, may be NULL). @return true when anything happened.
 */
bool world_turn(struct world *w, bool (*extra)(void *arg), void *arg);

/*
 * Turn until nothing happens and no transaction is left, letting time pass
 * (earliest timer first) while transactions wait. Aborts when transactions
 * are still open after a long while (a request nobody answers).
 */
void world_settle(struct world *w, bool (*extra)(void *arg), void *arg);
/* world_settle() that reports instead of aborting: false when
 * transactions are still open after the same long while. */
bool world_settle_check(struct world *w, bool (*extra)(void *arg), void *arg);

/* Front streams delivered to the pipeline (on_request called), in order;
 * and the number of transactions (front streams with a request pipeline)
 * still open. */
size_t world_front_delivered(const struct world *w, const int32_t **ids);
uint32_t world_open_xacts(const struct world *w);
/* Transactions still open that have no answer (and no reset). */
uint32_t world_unanswered(const struct world *w);
/* The front connection is gone (on_conn_close called). */
bool world_front_gone(const struct world *w);

/* Gauges of the worker's HTTP/2 context. */
void world_h2_gauges(const struct world *w, uint32_t *server_conns, uint32_t *streams);
/* How often the upstream of index @p up answered with @p status, as the
 * worker counted it (nrfwd_upstream_responses_total). */
uint64_t world_up_status(const struct world *w, int up, int status);

/* Requests the canned upstreams received (complete, in arrival order):
 * their upstream indices (UP_LOCAL...). Not scripted ones. */
size_t world_up_log(const struct world *w, const uint8_t **ups);

/* The runtime (nrf_rt_stats_get(), nrf_rt_peer_stats_get()). */
struct nrf_rt *world_rt(const struct world *w);

#ifdef __cplusplus
}
#endif
#endif /* RT_WORLD_H */
