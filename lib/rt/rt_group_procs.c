/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker group "processes": the workers are processes of their own (nrfwd's
 * DPDK primary starts one per worker lcore, decision 0011) and this runtime
 * holds only the configuration snapshots. Publishing hands the document
 * to them and every question about workers and counters goes to the
 * owner's nrf_rt_remote_ops, so lib/api serves this runtime as any other.
 * Starting, supervising and stopping the processes is the owner's.
 */
#include <string.h>

#include "nrf_err.h"
#include "rt_group.h"

static int
procs_check(const struct nrf_rt_params *p)
{
	return p->workers == 0 && p->remote != NULL ? 0 : NRF_EINVAL;
}

static int
procs_start(struct nrf_rt *rt)
{
	(void)rt;
	return 0;
}

static void
procs_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap)
{
	rt->p.remote->published(rt->p.remote_arg, snap->cfg, snap->gen);
}

static void
procs_stop(struct nrf_rt *rt, uint32_t drain_ms)
{
	(void)rt;
	(void)drain_ms;
}

static void
procs_join(struct nrf_rt *rt)
{
	(void)rt;
}

static unsigned int
procs_workers(const struct nrf_rt *rt)
{
	return rt->p.remote->workers(rt->p.remote_arg);
}

static int
procs_worker_get(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_worker_info *out)
{
	return rt->p.remote->worker_get(rt->p.remote_arg, i, out);
}

static void
procs_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out)
{
	rt->p.remote->stats_get(rt->p.remote_arg, out);
}

static int
procs_peers(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out, size_t *n)
{
	return rt->p.remote->peer_stats_get(rt->p.remote_arg, out, n);
}

static int
procs_dp(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_dp_stats *out)
{
	return rt->p.remote->dp_stats_get(rt->p.remote_arg, i, out);
}

static bool
procs_generation_seen(const struct nrf_rt *rt, uint64_t gen)
{
	return rt->p.remote->generation_seen(rt->p.remote_arg, gen);
}

static bool
procs_serving(const struct nrf_rt *rt)
{
	return rt->p.remote->running(rt->p.remote_arg);
}

const struct rt_group_ops rt_group_procs = {
	.name = "processes",
	.check = procs_check,
	.start = procs_start,
	.publish = procs_publish,
	.stop = procs_stop,
	.join = procs_join,
	.stats = {
		.workers = procs_workers,
		.worker_get = procs_worker_get,
		.get = procs_stats_get,
		.peers = procs_peers,
		.dp = procs_dp,
		.generation_seen = procs_generation_seen,
		.serving = procs_serving,
	},
};
