/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RT_POOL_GLUE_H
#define RT_POOL_GLUE_H

/*
 * A C window on lib/rt internals for rt_pool_test.cc (rt_int.h uses C11
 * atomics, which C++17 cannot include): one runtime with one worker whose
 * thread is not started, driven from the test thread exactly as
 * rt_worker_main() drives it, and tries submitted to the pool of snapshot
 * peer 0 with a transaction that already has its answer (so the pipeline's
 * failure path only counts and logs).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtp;
struct rtp_try;

/* Runtime of configuration @p doc (one worker). NULL on failure (logged). */
struct rtp *rtp_create(const char *doc, size_t len);
/* Free the runtime (its connections closed, queued tries failed), then
 * the tries. NULL-safe. */
void rtp_free(struct rtp *r);
struct nrf_rt *rtp_rt(struct rtp *r);
/* One worker loop iteration: poll (up to @p timeout_ms), timers, h2. */
void rtp_turn(struct rtp *r, int timeout_ms);
/* rt_pool_warm() of the worker (as at its start). */
void rtp_warm(struct rtp *r);

/* A new try (t->force = @p force) of a GET request, owned by @p r. */
struct rtp_try *rtp_try_new(struct rtp *r, bool force);
/* rt_pool_submit() to snapshot peer 0's pool (@p local: the local NRF's). */
int rtp_submit(struct rtp *r, struct rtp_try *t, bool local);
enum { RTP_IDLE = 0, RTP_QUEUED = 1, RTP_SENT = 2, RTP_OTHER = 3 };
int rtp_try_state(const struct rtp_try *t);
/* Forget the try's stream (nrf_h2_cancel()). */
void rtp_try_cancel(struct rtp_try *t);

struct rtp_pool_info {
	bool down;               /* held down */
	bool down_bit;           /* its bit in the worker's health bitset */
	uint32_t backoff_ms;     /* current probe interval */
	uint32_t n_conns;
	bool first_alive;        /* the first connection answered its PING */
	uint32_t qlen;
	uint64_t connect_failures; /* tries failed with NRF_RT_FAIL_CONNECT */
	uint32_t consec;         /* failed tries in a row (health) */
};

/* Snapshot peer 0's pool (@p local: the local NRF's). */
void rtp_pool_get(struct rtp *r, bool local, struct rtp_pool_info *out);

#ifdef __cplusplus
}
#endif
#endif /* RT_POOL_GLUE_H */
