/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_GROUP_H
#define NRF_RT_GROUP_H

/*
 * Worker groups: how a runtime's workers run, behind one ops table, so the
 * control side (rt.c) never asks which process model it is in.
 *
 *   threads   (rt_group_threads.c)  one pthread per worker (kernel sockets)
 *   lcore     (rt_group_lcore.c)    one worker on the data-path lcore of a
 *                                   polled transport (DPDK + lwIP: one
 *                                   stack per process)
 *   processes (rt_group_procs.c)    no worker here: they are processes of
 *                                   their own, reached through
 *                                   nrf_rt_remote_ops (nrfwd's DPDK
 *                                   primary, decision 0011)
 *
 * nrf_rt_create() picks the group from the parameters (remote ops given:
 * processes; the DPDK transport: lcore; else threads). Every function runs
 * on a control thread; publish under the runtime's ctl_lock.
 */

#include <stdbool.h>
#include <stdint.h>

#include "rt_int.h"

/* Questions about the workers and their counters (nrf_rt.h has the
 * contracts of the public functions that forward to them). */
struct rt_group_stats {
	unsigned int (*workers)(const struct nrf_rt *rt);
	int (*worker_get)(const struct nrf_rt *rt, unsigned int i,
		struct nrf_rt_worker_info *out);
	void (*get)(const struct nrf_rt *rt, struct nrf_rt_stats *out);
	int (*peers)(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out, size_t *n);
	/* Poll-loop counters of worker @p i (@p out zeroed, lcore -1, first). */
	int (*dp)(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_dp_stats *out);
	/* Every running worker uses @p gen or newer. */
	bool (*generation_seen)(const struct nrf_rt *rt, uint64_t gen);
	/* Some worker serves (asked only while the runtime is running). */
	bool (*serving)(const struct nrf_rt *rt);
};

struct rt_group_ops {
	const char *name;
	/* Parameters this group can run: 0 or NRF_EINVAL (logged when a
	 * person must fix something). */
	int (*check)(const struct nrf_rt_params *p);
	/* Start the workers created by nrf_rt_create(): 0 or an error
	 * (nothing left running). */
	int (*start)(struct nrf_rt *rt);
	/* A new snapshot is in rt->snap: make the workers look at it. */
	void (*publish)(struct nrf_rt *rt, struct nrf_rt_snap *snap);
	/* Ask the workers to drain for up to @p drain_ms and stop; join waits
	 * until they have (no-op when not started). */
	void (*stop)(struct nrf_rt *rt, uint32_t drain_ms);
	void (*join)(struct nrf_rt *rt);
	struct rt_group_stats stats;
};

extern const struct rt_group_ops rt_group_threads;
extern const struct rt_group_ops rt_group_lcore;
extern const struct rt_group_ops rt_group_procs;

/* The parts threads and lcore share: workers of this process, in rt->w[]
 * (rt_group_threads.c). */
void rt_local_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap);
void rt_local_stop(struct nrf_rt *rt, uint32_t drain_ms);
unsigned int rt_local_workers(const struct nrf_rt *rt);
int rt_local_worker_get(const struct nrf_rt *rt, unsigned int i,
	struct nrf_rt_worker_info *out);
void rt_local_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out);
int rt_local_peer_stats_get(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out,
	size_t *n);
bool rt_local_generation_seen(const struct nrf_rt *rt, uint64_t gen);
bool rt_local_serving(const struct nrf_rt *rt);

/* The transport the lcore group runs on (nrf_tp_dpdk_ops(), when built). */
bool rt_group_lcore_transport(const struct nrf_tp_ops *tp);

#endif /* NRF_RT_GROUP_H */
