/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequence locks over memory shared by the primary and its worker
 * processes (nrf_dp.h). A mutex would not do: a worker killed while
 * holding it would stop everybody; a reader that sees a write in progress
 * only tries again, and a writer that died mid-write is repaired by
 * whoever owns the data next (nrf_dp_seq_write_abandoned()).
 *
 * DPDK has rte_seqlock, but experimental in 22.11 and tied to the EAL
 * headers; these few lines are plain C so they are tested without DPDK.
 */
#include <string.h>
#include <time.h>

#include "nrf_dp.h"

#define READ_TRIES 100
#define BUSY_SLEEP_NS 100000L

void
nrf_dp_seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, __atomic_load_n(seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void
nrf_dp_seq_write_end(uint32_t *seq)
{
	__atomic_store_n(seq, __atomic_load_n(seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

void
nrf_dp_seq_write_abandoned(uint32_t *seq)
{
	if (__atomic_load_n(seq, __ATOMIC_RELAXED) & 1u)
		nrf_dp_seq_write_end(seq);
}

bool
nrf_dp_seq_read(const uint32_t *seq, bool (*copy)(void *arg), void *arg)
{
	int tries;

	for (tries = 0; tries < READ_TRIES; tries++) {
		uint32_t s0 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (s0 & 1u) {
			struct timespec ts = {0, BUSY_SLEEP_NS};

			nanosleep(&ts, NULL);
			continue;
		}
		if (!copy(arg))
			return true;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == s0)
			return true;
	}
	return false;
}

struct mem_copy {
	void *dst;
	const void *src;
	size_t n;
};

static bool
mem_copy(void *arg)
{
	struct mem_copy *m = arg;

	memcpy(m->dst, m->src, m->n);
	return true;
}

bool
nrf_dp_seq_copy(const uint32_t *seq, void *dst, const void *src, size_t n)
{
	struct mem_copy m = {dst, src, n};

	return nrf_dp_seq_read(seq, mem_copy, &m);
}
