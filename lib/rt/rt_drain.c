/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The graceful stop's wait, from the running configuration
 * (runtime.timeouts.drainMs). Read when the signal comes rather than at
 * start, so a REST change of it applies like the other timeouts. Also
 * runtime.timeouts.unreadyMs, the wait before it (decision 0060).
 */
#include <pthread.h>

#include "rt_int.h"

uint32_t
nrf_rt_drain_ms(struct nrf_rt *rt)
{
	uint32_t ms;

	pthread_mutex_lock(&rt->ctl_lock);
	ms = rt->cur->cfg->rt.drain_ms;
	/* no request lives longer than requestMs: waiting longer only delays
	 * the exit */
	if (ms > rt->cur->cfg->rt.request_ms)
		ms = rt->cur->cfg->rt.request_ms;
	pthread_mutex_unlock(&rt->ctl_lock);
	return ms;
}

uint32_t
nrf_rt_unready_ms(struct nrf_rt *rt)
{
	uint32_t ms;

	pthread_mutex_lock(&rt->ctl_lock);
	ms = rt->cur->cfg->rt.unready_ms;
	pthread_mutex_unlock(&rt->ctl_lock);
	return ms;
}
