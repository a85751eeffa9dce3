/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker group "threads": one pthread per worker, each with its own
 * transport loop (kernel sockets, SO_REUSEPORT listeners). Also the parts
 * every group of workers living in this process shares (rt_local_*): the
 * lcore group differs only in where its one worker runs.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_group.h"

static int
threads_check(const struct nrf_rt_params *p)
{
	return p->workers >= 1 && p->workers <= NRF_RT_MAX_WORKERS ? 0 : NRF_EINVAL;
}

static void threads_join(struct nrf_rt *rt);

static int
threads_start(struct nrf_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		if (pthread_create(&rt->w[i]->th, NULL, rt_worker_main, rt->w[i]) != 0) {
			rt_local_stop(rt, 0);
			threads_join(rt);
			return NRF_ENOMEM;
		}
		rt->w[i]->started = true;
	}
	return 0;
}

static void
threads_join(struct nrf_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		if (rt->w[i]->started) {
			pthread_join(rt->w[i]->th, NULL);
			rt->w[i]->started = false;
		}
	}
}

static int
no_dp_stats(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_dp_stats *out)
{
	(void)rt;
	(void)i;
	(void)out;
	return NRF_ENOENT;
}

void
rt_local_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap)
{
	unsigned int i;

	(void)snap; /* in rt->snap: workers switch at the top of an iteration */
	for (i = 0; i < rt->n; i++)
		rt->tp->loop_wake(rt->w[i]->loop);
}

void
rt_local_stop(struct nrf_rt *rt, uint32_t drain_ms)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		struct rt_worker *w = rt->w[i];

		w->drain_ms = drain_ms;
		atomic_store_explicit(&w->stop, 1, memory_order_release);
		rt->tp->loop_wake(w->loop);
	}
}

unsigned int
rt_local_workers(const struct nrf_rt *rt)
{
	return rt->n;
}

bool
rt_local_generation_seen(const struct nrf_rt *rt, uint64_t gen)
{
	unsigned int i;

	for (i = 0; i < rt->n; i++) {
		const struct rt_worker *w = rt->w[i];

		if (atomic_load_explicit(&w->exited, memory_order_acquire))
			continue;
		if (atomic_load_explicit(&w->seen_gen, memory_order_acquire) < gen)
			return false;
	}
	return true;
}

bool
rt_local_serving(const struct nrf_rt *rt)
{
	(void)rt;
	return true; /* nrf_rt_running(): the runtime's own flag says it all */
}

const struct rt_group_ops rt_group_threads = {
	.name = "threads",
	.check = threads_check,
	.start = threads_start,
	.publish = rt_local_publish,
	.stop = rt_local_stop,
	.join = threads_join,
	.stats = {
		.workers = rt_local_workers,
		.worker_get = rt_local_worker_get,
		.get = rt_local_stats_get,
		.peers = rt_local_peer_stats_get,
		.dp = no_dp_stats,
		.generation_seen = rt_local_generation_seen,
		.serving = rt_local_serving,
	},
};
