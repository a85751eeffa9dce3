/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker's counters: the per-upstream table (struct rt_pstats), requests
 * by operation and outcome with their latency, and the mapping of answers
 * to outcomes. Every counter has one writer, the worker; the control
 * thread reads them with relaxed atomic loads (nrf_rt_stats_get(),
 * nrf_rt_peer_stats_get() in rt.c), so a writer never takes a lock and a
 * reader never sees a torn 64-bit value.
 *
 * The upstream table is append-only and chunked: an entry, once published
 * (n_pstats with release), never moves and is never freed while the worker
 * lives, so a pool can keep a pointer to it, and a name's counters survive
 * its pools (a peer removed and added back counts on).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_log.h"
#include "rt_int.h"

/* Single-writer counter of an upstream entry. */
#define PS_ADD(e, field, n)                                                    \
	__atomic_store_n(&(e)->field, (e)->field + (uint64_t)(n), __ATOMIC_RELAXED)

struct rt_pstats *
rt_pstats_get(struct rt_worker *w, const char *name, bool local)
{
	uint32_t n = atomic_load_explicit(&w->n_pstats, memory_order_relaxed), k;
	const uint32_t max = RT_PSTATS_CHUNK * RT_PSTATS_CHUNKS;
	struct rt_pstats *chunk, *e;

	for (k = 0; k < n; k++) {
		e = &w->pstats[k / RT_PSTATS_CHUNK][k % RT_PSTATS_CHUNK];
		if (e->local == local && strcmp(e->name, name) == 0)
			return e;
	}
	if (n == max) /* full: the last entry counts for every further name */
		return &w->pstats[(max - 1) / RT_PSTATS_CHUNK][(max - 1) % RT_PSTATS_CHUNK];
	chunk = w->pstats[n / RT_PSTATS_CHUNK];
	if (chunk == NULL) {
		chunk = calloc(RT_PSTATS_CHUNK, sizeof(*chunk));
		if (chunk == NULL)
			return NULL;
		atomic_store_explicit(&w->pstats[n / RT_PSTATS_CHUNK], chunk,
			memory_order_release);
	}
	e = &chunk[n % RT_PSTATS_CHUNK];
	snprintf(e->name, sizeof(e->name), "%s", n == max - 1 ? "(other)" : name);
	e->local = n == max - 1 ? false : local;
	atomic_store_explicit(&w->n_pstats, n + 1, memory_order_release);
	return e;
}

const uint64_t rt_lat_bounds_ns[16] = {
#define NS(us) ((uint64_t)(us) * 1000u)
	NS(500), NS(1000), NS(2500), NS(5000), NS(10000), NS(25000), NS(50000),
	NS(100000), NS(250000), NS(500000), NS(1000000), NS(2500000), NS(5000000),
	NS(10000000), UINT64_MAX, UINT64_MAX,
#undef NS
};

_Static_assert(NRF_RT_LAT_BUCKETS == 14, "rt_lat_bounds_ns[] mirrors NRF_RT_LAT_BOUNDS_US");

unsigned int
nrf_rt_lat_bucket(uint64_t ns)
{
	return rt_lat_bucket(ns);
}

void
rt_count_try(struct rt_pool *p)
{
	PS_ADD(p->stats, tries, 1);
}

void
rt_count_fail(struct rt_pool *p, enum nrf_rt_fail why)
{
	PS_ADD(p->stats, fail[why], 1);
	__atomic_store_n(&p->stats->last_fail, (uint32_t)why, __ATOMIC_RELAXED);
	__atomic_store_n(&p->stats->last_fail_ns, nrf_now_ns(), __ATOMIC_RELAXED);
}

void
rt_count_status(struct rt_pool *p, int status)
{
	struct rt_pstats *e = p->stats;
	unsigned int k;

	for (k = 0; k < NRF_RT_PEER_CODES; k++) {
		uint16_t c = atomic_load_explicit(&e->codes[k], memory_order_relaxed);

		if (c == status) {
			PS_ADD(e, code_n[k], 1);
			return;
		}
		if (c == 0) {
			__atomic_store_n(&e->code_n[k], 1, __ATOMIC_RELAXED);
			atomic_store_explicit(&e->codes[k], (uint16_t)status, memory_order_release);
			return;
		}
	}
	PS_ADD(e, code_other, 1);
}

void
rt_count_answer_latency(struct rt_pool *p, uint64_t ns)
{
	unsigned int b = rt_lat_bucket(ns);

	PS_ADD(p->stats, lat_bucket[b], 1);
	PS_ADD(p->stats, lat_sum_ns, ns);
}

void
rt_count_skips(struct rt_xact *x)
{
	uint16_t i;

	for (i = 0; i < x->plan.n_skip; i++) {
		const struct nrf_fwd_skip *sk = &x->plan.skip[i];
		struct rt_pool *p;

		if (sk->reason == NRF_FWD_SKIP_DOWN)
			continue;
		p = rt_xact_pool(x, sk->peer);
		if (p != NULL)
			PS_ADD(p->stats, loop_prevented, 1);
	}
}

static void
count_latency(struct rt_worker *w, enum nrf_fwd_op op, uint64_t ns)
{
	unsigned int b = rt_lat_bucket(ns);

	RT_STAT(w, lat_bucket[op][b], 1);
	RT_STAT(w, lat_sum_ns[op], ns);
}

void
rt_count_request(struct rt_worker *w, struct rt_xact *x)
{
	enum nrf_fwd_op op = x->plan.op < NRF_OP_COUNT ? x->plan.op : NRF_OP_OTHER;
	unsigned int o = x->answered ? x->outcome : NRF_RT_OUT_CLIENT_RESET;
	uint64_t now = rt_now(w);

	RT_STAT(w, req[op][o], 1);
	count_latency(w, op, now > x->t0 ? now - x->t0 : 0);
}

void
rt_count_answer(struct rt_worker *w, enum nrf_fwd_op op, unsigned int outcome)
{
	if (op >= NRF_OP_COUNT)
		op = NRF_OP_OTHER;
	RT_STAT(w, req[op][outcome], 1);
	count_latency(w, op, 0);
}

void
rt_count_reject(struct rt_worker *w)
{
	RT_STAT(w, req[NRF_OP_OTHER][NRF_RT_OUT_BAD_REQUEST], 1);
	count_latency(w, NRF_OP_OTHER, 0);
}

enum nrf_rt_outcome
rt_outcome_of_cond(enum nrf_cfg_cond cond)
{
	switch (cond) {
	case NRF_COND_LOOP_DETECTION:
		return NRF_RT_OUT_LOOP_DETECTED;
	case NRF_COND_LOOP_PREVENTION:
		return NRF_RT_OUT_LOOP_PREVENTED;
	case NRF_COND_HOP_LIMIT:
		return NRF_RT_OUT_HOP_LIMIT;
	case NRF_COND_NOT_REACHABLE:
		return NRF_RT_OUT_NOT_REACHABLE;
	case NRF_COND_OVERLOAD:
		return NRF_RT_OUT_OVERLOAD;
	case NRF_COND_LOCAL_UNAVAILABLE:
		return NRF_RT_OUT_LOCAL_UNAVAILABLE;
	case NRF_COND_CLIENT_LIMIT:
		return NRF_RT_OUT_CLIENT_LIMITED;
	default:
		return NRF_RT_OUT_INTERNAL;
	}
}

enum nrf_rt_outcome
rt_outcome_of_status(int status)
{
	if (status == 400 || status == 413)
		return NRF_RT_OUT_BAD_REQUEST;
	if (status == 501)
		return NRF_RT_OUT_NOT_IMPLEMENTED;
	return NRF_RT_OUT_INTERNAL;
}


void
rt_answer_violation(struct rt_worker *w, const char *what)
{
	RT_STAT(w, answer_violations, 1);
	NRF_LOG_RL(ERR, MOD, "worker %u: BUG: a request %s (every request is answered "
		"exactly once)", w->id, what);
	assert(!"every request is answered exactly once");
}

/* GET /peers' quantiles come from the same buckets as
 * nrfwd_upstream_response_seconds: no second structure on the data path,
 * at the price of an estimate only as fine as the buckets (a value inside
 * 10..25 ms is placed by assuming the answers spread evenly there). */
double
nrf_rt_lat_quantile(const uint64_t *bucket, double q)
{
	static const uint64_t bounds_us[NRF_RT_LAT_BUCKETS] = NRF_RT_LAT_BOUNDS_US;
	uint64_t total = 0, cum = 0;
	double rank, lo, hi;
	unsigned int b;

	for (b = 0; b <= NRF_RT_LAT_BUCKETS; b++)
		total += bucket[b];
	if (total == 0 || !(q > 0.0 && q < 1.0))
		return -1.0;
	rank = q * (double)total;
	for (b = 0; b < NRF_RT_LAT_BUCKETS; b++) {
		if ((double)(cum + bucket[b]) >= rank && bucket[b] > 0) {
			lo = b == 0 ? 0.0 : (double)bounds_us[b - 1] / 1e6;
			hi = (double)bounds_us[b] / 1e6;
			return lo + (hi - lo) * (rank - (double)cum) / (double)bucket[b];
		}
		cum += bucket[b];
	}
	return (double)bounds_us[NRF_RT_LAT_BUCKETS - 1] / 1e6;
}
