/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_H
#define NRF_RT_H

/**
 * @file
 * Per-worker runtime of the data path: worker threads, each with its own
 * transport loop, timers, HTTP/2 context, Hyperscan scratch, peer pools and
 * counters; the request pipeline of SPEC §3 run on every front stream; and
 * the configuration snapshot the workers read.
 *
 * Snapshots: the control thread builds a struct nrf_rt_snap (configuration +
 * Via database + forwarding table + resolved peer addresses) and publishes
 * it with one atomic pointer store (nrf_rt_publish()). Each worker picks it
 * up at the top of a loop iteration; requests in flight finish on the
 * snapshot they started with. A retired snapshot is freed by
 * nrf_rt_reclaim() once every worker has moved past it and no request holds
 * it (quiescent-state scheme: per-worker "seen generation" + per-worker
 * reference counts, each written by its worker only).
 *
 * Threads: nrf_rt_* functions are for the control thread (the one that
 * created the runtime), except where noted. Workers never touch each other's
 * connections or sessions.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NRF_RT_MAX_WORKERS 64

/** Peer connections one worker keeps per peer (the local NRF included). */
#define NRF_RT_POOL_CONNS 4

struct nrf_rt_snap;

/**
 * Build a snapshot from @p cfg (taken over: freed with the snapshot, also
 * on failure): the Via identity database (nrf_fwd_via_db_create), the
 * forwarding table, the address of every peer and of the local NRF (a
 * numeric ipv4/ipv6 address when configured, else the fqdn resolved now —
 * blocking, control thread). A peer that cannot be resolved stays in the
 * table and fails every try (logged once here).
 * @return NULL with @p err = NRF_ENOMEM, NRF_EMATCHER or NRF_EINVAL.
 */
struct nrf_rt_snap *nrf_rt_snap_create(struct nrf_cfg *cfg, int *err);

/** Free a snapshot that was never published. NULL-safe. */
void nrf_rt_snap_free(struct nrf_rt_snap *s);

/** The configuration of a snapshot. */
const struct nrf_cfg *nrf_rt_snap_cfg(const struct nrf_rt_snap *s);

/** Runtime parameters. */
struct nrf_rt_params {
	unsigned int workers;          /**< 1..NRF_RT_MAX_WORKERS */
	const struct nrf_tp_ops *tp;   /**< NULL: kernel transport */
};

struct nrf_rt;

/**
 * Create the runtime with its first snapshot @p snap (taken over, also on
 * failure): one loop per worker, and for every runtime.listen entry one
 * listener socket per worker on the same address (SO_REUSEPORT), bound now
 * so address problems are reported here. No thread is started yet.
 * @return NULL with @p err = NRF_EINVAL (bad parameters, TLS listener:
 *   not supported by this transport yet), NRF_EIO (bind/listen failed; the
 *   errno of the failure is kept), NRF_ENOMEM.
 */
struct nrf_rt *nrf_rt_create(const struct nrf_rt_params *p, struct nrf_rt_snap *snap,
	int *err);

/** Start the worker threads. @return 0 or NRF_ENOMEM (nothing started). */
int nrf_rt_start(struct nrf_rt *rt);

/**
 * Publish a new snapshot (taken over). Workers switch at their next loop
 * iteration; the old one is retired and freed by nrf_rt_reclaim().
 * The listener set and the peer list must be those of the running snapshot
 * (live changes of listeners and peers are a later step); settings, error
 * responses and Via identities may change.
 * @return 0, or NRF_EINVAL when listeners or peers differ (@p snap freed).
 */
int nrf_rt_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap);

/** Generation of the snapshot published last. */
uint64_t nrf_rt_generation(const struct nrf_rt *rt);

/**
 * Free retired snapshots no worker can still see. Call periodically.
 * @return the number of retired snapshots still waiting.
 */
unsigned int nrf_rt_reclaim(struct nrf_rt *rt);

/**
 * Begin a graceful stop: every worker stops accepting, sends GOAWAY to its
 * clients, lets streams in flight finish for up to @p drain_ms, then closes
 * whatever is left and exits its thread. Returns at once; any thread
 * (not a signal handler).
 */
void nrf_rt_stop(struct nrf_rt *rt, uint32_t drain_ms);

/** Wait for every worker thread to exit (after nrf_rt_stop()). */
void nrf_rt_join(struct nrf_rt *rt);

/** Free the runtime (workers joined or never started). NULL-safe. */
void nrf_rt_free(struct nrf_rt *rt);

/** Counters, summed over workers (each worker writes its own). */
struct nrf_rt_stats {
	uint64_t conns_accepted;
	uint64_t conns_refused;       /**< over maxConnections */
	uint64_t requests;            /**< front streams answered or reset */
	uint64_t bad_requests;        /**< 400/413 answered by nrfwd */
	uint64_t loop_detected;
	uint64_t hop_limit;
	uint64_t loop_prevented;      /**< candidates skipped by Via (all requests) */
	uint64_t answered_local;      /**< local NRF answer relayed */
	uint64_t answered_peer;       /**< peer answer relayed */
	uint64_t answered_error;      /**< nrfwd ProblemDetails (508/504/503/501...) */
	uint64_t not_reachable;
	uint64_t overload;
	uint64_t forwards;            /**< tries sent to peers (not the local NRF) */
	uint64_t reroutes;            /**< peer answers that moved to the next */
	uint64_t try_failures;        /**< connect, reset, GOAWAY, timeout */
	uint64_t try_timeouts;
	uint64_t request_timeouts;
	uint64_t client_resets;       /**< client went away before the answer */
	uint64_t relay_aborts;        /**< upstream broke after the answer began */
	uint64_t peer_connects;
	uint64_t peer_connect_failures;
};

void nrf_rt_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out);

/** Listener of worker 0 for runtime.listen[@p i]: the bound address. */
int nrf_rt_listen_addr(const struct nrf_rt *rt, unsigned int i, struct nrf_tp_addr *out);

#ifdef __cplusplus
}
#endif
#endif /* NRF_RT_H */
