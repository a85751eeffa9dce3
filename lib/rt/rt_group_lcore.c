/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker group "lcore": the one worker of a polled transport (DPDK port +
 * lwIP, nrf_tp_dpdk.h).
 *
 * lwIP keeps global state, so such a transport has one loop per process:
 * the runtime then has exactly one worker, and it runs on the data-path
 * lcore (nrf_dp_launch()) rather than on a pthread, which would inherit
 * the main lcore's CPU set and share the control thread's core. Without a
 * second lcore in the EAL core list the worker falls back to a pthread
 * (the transport registers it with the EAL on its first poll).
 *
 * The worker loop is the same as on kernel sockets (rt_worker_main()):
 * poll() is one poll-mode iteration there and idles by itself.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_dpdk.h"
#include "rt_group.h"

/* After the worker closed everything: keep polling this long so FINs,
 * GOAWAYs and retransmissions still leave (a closed lwIP connection only
 * sends from poll()). */
#define DP_LINGER_MS 100u
/* How long nrf_rt_start() waits for the launched worker to say hello. */
#define DP_HELLO_MS 2000u

bool
rt_group_lcore_transport(const struct nrf_tp_ops *tp)
{
	const struct nrf_tp_ops *dp = nrf_tp_dpdk_ops();

	return tp != NULL && dp != NULL && tp == dp;
}

static int
lcore_check(const struct nrf_rt_params *p)
{
	if (p->workers == 1)
		return 0;
	NRF_LOG(ERR, MOD, "the DPDK transport runs one worker per process (one lwIP stack, "
		"one port); got %u workers: use --workers 1 and one nrfwd process per core",
		p->workers);
	return NRF_EINVAL;
}

static void
linger(struct rt_worker *w)
{
	uint64_t end = nrf_now_ns() + (uint64_t)DP_LINGER_MS * 1000000u;

	while (nrf_now_ns() < end)
		(void)w->tp->poll(w->loop, 1);
}

static int
dp_worker(void *arg)
{
	struct rt_worker *w = arg;

	w->th = pthread_self();
	atomic_store_explicit(&w->rt->dp_hello, true, memory_order_release);
	(void)rt_worker_main(w);
	linger(w);
	return 0;
}

static void *
dp_worker_thread(void *arg)
{
	(void)dp_worker(arg);
	return NULL;
}

static int
lcore_start(struct nrf_rt *rt)
{
	struct rt_worker *w = rt->w[0];
	uint64_t end;
	int lc;

	atomic_store(&rt->dp_hello, false);
	lc = nrf_dp_launch(dp_worker, w);
	if (lc >= 0) {
		rt->dp_lcore = lc;
	} else if (lc == NRF_ENOENT) {
		NRF_LOG(WARN, MOD, "no second lcore in the EAL core list (-l): the worker polls "
			"from a thread sharing the main lcore's CPU (use -l 0,1)");
		if (pthread_create(&rt->dp_th, NULL, dp_worker_thread, w) != 0)
			return NRF_ENOMEM;
		rt->dp_lcore = -1;
	} else {
		NRF_LOG(ERR, MOD, "cannot start the worker on the data-path lcore: %s",
			nrf_strerror(lc));
		return lc;
	}
	w->started = true;
	/* w->th is written by the worker itself on an lcore: wait for it, so
	 * the control side may read it from now on. */
	end = nrf_now_ns() + (uint64_t)DP_HELLO_MS * 1000000u;
	while (!atomic_load_explicit(&rt->dp_hello, memory_order_acquire) && nrf_now_ns() < end) {
		struct timespec ts = {0, 100000};

		nanosleep(&ts, NULL);
	}
	if (!atomic_load_explicit(&rt->dp_hello, memory_order_acquire))
		NRF_LOG(WARN, MOD, "the data-path worker did not start within %u ms", DP_HELLO_MS);
	NRF_LOG(INFO, MOD, "worker 0 polls the DPDK port on %s%d",
		rt->dp_lcore >= 0 ? "lcore " : "a registered thread, lcore ",
		rt->dp_lcore >= 0 ? rt->dp_lcore : nrf_tp_dpdk_poll_lcore());
	return 0;
}

static void
lcore_join(struct nrf_rt *rt)
{
	struct rt_worker *w = rt->w[0];

	if (!w->started)
		return;
	if (rt->dp_lcore >= 0)
		(void)nrf_dp_join();
	else
		pthread_join(rt->dp_th, NULL);
	w->started = false;
}

static int
lcore_dp_stats(const struct nrf_rt *rt, unsigned int i, struct nrf_rt_dp_stats *out)
{
	int lc;

	(void)rt;
	if (i != 0)
		return NRF_ENOENT;
	out->tsc_hz = nrf_tp_dpdk_tsc_hz();
	lc = nrf_tp_dpdk_poll_lcore();
	if (lc < 0)
		return 0;
	out->lcore = lc;
	if (nrf_tp_dpdk_lcore_stats((unsigned int)lc, &out->lc) == 0)
		out->polled = true;
	(void)nrf_tp_dpdk_port_stats(&out->port);
	return 0;
}

const struct rt_group_ops rt_group_lcore = {
	.name = "lcore",
	.check = lcore_check,
	.start = lcore_start,
	.publish = rt_local_publish,
	.stop = rt_local_stop,
	.join = lcore_join,
	.stats = {
		.workers = rt_local_workers,
		.worker_get = rt_local_worker_get,
		.get = rt_local_stats_get,
		.peers = rt_local_peer_stats_get,
		.dp = lcore_dp_stats,
		.generation_seen = rt_local_generation_seen,
		.serving = rt_local_serving,
	},
};
