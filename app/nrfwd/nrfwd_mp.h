/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_MP_H
#define NRFWD_MP_H

/*
 * nrfwd on several poll-mode cores (DPDK): one primary process and one
 * worker process per worker lcore (docs/decisions/0011-mp-workers.md).
 *
 * The primary owns the port (one queue pair per worker, nrf_tp_dpdk.h role
 * PRIMARY), the control plane (REST API, metrics, configuration file) and
 * the workers: it starts one DPDK secondary process per worker lcore of its
 * EAL core list, watches them and restarts one that dies. Each worker is a
 * complete single-worker nrfwd on its own queue pair with its own lwIP,
 * HTTP/2 sessions, Hyperscan scratch, peer pools and counters: nothing is
 * shared on the request path.
 *
 * Between them, one block of shared memory (an rte_memzone):
 * - the running configuration document and its generation, written by the
 *   primary when it publishes (nrf_rt_remote_ops.published), under a
 *   sequence lock; every worker's agent thread polls it every 20 ms and
 *   publishes a changed document to its own runtime with that generation,
 *   so all workers run the same generation;
 * - a generation of the access log, bumped by the primary on SIGUSR1: each
 *   agent reopens its process's access log when it changes;
 * - one slot per worker, written by that worker's agent every 20 ms under
 *   a sequence lock: pid, state, heartbeat, the generation it uses, its
 *   counters, upstream counters and poll-loop counters. The primary's
 *   nrf_rt_remote_ops read the slots, so lib/api shows sums and per-worker
 *   figures exactly as for a single process.
 *
 * Threads: everything here on the control (main) thread of its process,
 * except the remote ops (any control thread) and the worker's agent thread.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_rt.h"

struct nrfwd_mp;

/* How the primary starts a worker. */
struct nrfwd_mp_params {
	const char *exe;          /* this program (/proc/self/exe) */
	int eal_argc;             /* the primary's EAL arguments (argv[0] included) */
	char **eal_argv;
	const char *config_path;  /* --config: the workers' only when the primary's
				   * document cannot be handed over in memory */
	const char *log_level;    /* --log-level, passed on (NULL: default) */
};

/*
 * Primary: reserve the shared memory for nrf_tp_dpdk_queues() workers, store
 * @p cfg (generation @p gen) as the running document, and prepare the
 * workers' command lines (one per worker lcore; the worker's control thread
 * gets an lcore id of its own counted down from the top, on the main
 * lcore's CPUs). Workers start from @p cfg itself, handed over in an
 * inherited memory file (--config /proc/self/fd/3, decision 0051): the
 * primary's file alone may not load (etcd's source: runtime only). Logs and
 * returns NULL on failure.
 */
struct nrfwd_mp *nrfwd_mp_primary_create(const struct nrfwd_mp_params *p,
	const struct nrf_cfg *cfg, uint64_t gen);

/* The remote-worker operations for nrf_rt_params (arg: the nrfwd_mp). */
const struct nrf_rt_remote_ops *nrfwd_mp_remote_ops(void);

/* Start every worker. @return 0, or -1 when none could be started. */
int nrfwd_mp_start(struct nrfwd_mp *mp);

/*
 * Reap workers that exited and restart them (at once the first time, then
 * with a back-off of 0.1 s doubling to 5 s while a worker keeps dying
 * within 10 s of its start). Call every 100 ms or so. Each death is logged
 * with its cause.
 */
void nrfwd_mp_supervise(struct nrfwd_mp *mp);

/*
 * Stop: tell every worker (SIGTERM: drain for up to @p drain_ms), wait for
 * them, SIGKILL what is left 2 s after that. No restart afterwards.
 */
void nrfwd_mp_stop(struct nrfwd_mp *mp, uint32_t drain_ms);

/*
 * Primary, on SIGUSR1: have every worker process reopen its access log
 * (nrf_rt_alog_reopen()). A generation counter in the shared memory that
 * each worker's agent thread checks every 20 ms: the workers reopen within
 * about 20 ms (a worker that is starting opens the new file anyway).
 * docs/decisions/0032-sigusr1-reaches-worker-processes.md.
 */
void nrfwd_mp_alog_reopen(struct nrfwd_mp *mp);

/* Free (after nrfwd_mp_stop() and after the runtime that uses the ops). */
void nrfwd_mp_free(struct nrfwd_mp *mp);

/*
 * Worker: find the shared memory of the primary for worker @p index.
 * @p cfg (loaded from the file) is replaced by the running document of the
 * shared memory when that has another generation (a worker restarted after
 * REST changes comes back with them). Logs and returns -1 on failure.
 */
int nrfwd_mp_worker_attach(unsigned int index, struct nrf_cfg **cfg);

/* Worker: start the agent thread for @p rt (configuration, slot, primary
 * watch: it raises SIGTERM in this process when the primary is gone or
 * stopping). @return 0 or -1. */
int nrfwd_mp_worker_agent_start(struct nrf_rt *rt);

/* Worker: stop the agent and mark the slot stopped. */
void nrfwd_mp_worker_agent_stop(void);

#endif /* NRFWD_MP_H */
