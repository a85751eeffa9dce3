/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus text exposition (format 0.0.4) of the runtime's counters.
 * The names and labels are the contract of docs/metrics.md: add, never
 * rename.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "nrf_common.h"
#include "nrf_fwd.h"

void
api_buf_printf(struct api_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p != NULL ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t nc = NRF_MAX(b->cap * 2, b->len + (size_t)n + 1024);
			char *np = realloc(b->p, nc);

			if (np == NULL) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = nc;
		}
	}
}

void
api_buf_fini(struct api_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* A label value: backslash, quote and newline escaped (into @p out). */
static const char *
esc(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s != '\0' && n + 3 < cap; s++) {
		if (*s == '\\' || *s == '"') {
			out[n++] = '\\';
			out[n++] = *s;
		} else if (*s == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return out;
}

static void
head(struct api_buf *b, const char *name, const char *type, const char *help)
{
	api_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
scalar(struct api_buf *b, const char *name, const char *type, const char *help,
	uint64_t v)
{
	head(b, name, type, help);
	api_buf_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void
requests(struct api_buf *b, const struct nrf_rt_stats *st)
{
	static const uint64_t bounds_us[NRF_RT_LAT_BUCKETS] = NRF_RT_LAT_BOUNDS_US;
	unsigned int op, o, k;

	head(b, "nrfwd_requests_total", "counter",
		"Front requests by operation and outcome (the answer nrfwd gave).");
	for (op = 0; op < NRF_OP_COUNT; op++)
		for (o = 0; o < NRF_RT_OUT_COUNT; o++)
			api_buf_printf(b, "nrfwd_requests_total{operation=\"%s\",outcome=\"%s\"} %llu\n",
				nrf_fwd_op_name((enum nrf_fwd_op)op),
				nrf_rt_outcome_name((enum nrf_rt_outcome)o),
				(unsigned long long)st->req[op][o]);

	head(b, "nrfwd_request_duration_seconds", "histogram",
		"Time from a complete request to its stream's end, by operation.");
	for (op = 0; op < NRF_OP_COUNT; op++) {
		const char *name = nrf_fwd_op_name((enum nrf_fwd_op)op);
		uint64_t cum = 0;

		for (k = 0; k < NRF_RT_LAT_BUCKETS; k++) {
			cum += st->lat_bucket[op][k];
			api_buf_printf(b,
				"nrfwd_request_duration_seconds_bucket{operation=\"%s\",le=\"%g\"} %llu\n",
				name, (double)bounds_us[k] / 1e6, (unsigned long long)cum);
		}
		cum += st->lat_bucket[op][NRF_RT_LAT_BUCKETS];
		api_buf_printf(b,
			"nrfwd_request_duration_seconds_bucket{operation=\"%s\",le=\"+Inf\"} %llu\n",
			name, (unsigned long long)cum);
		api_buf_printf(b, "nrfwd_request_duration_seconds_sum{operation=\"%s\"} %.9f\n",
			name, (double)st->lat_sum_ns[op] / 1e9);
		api_buf_printf(b, "nrfwd_request_duration_seconds_count{operation=\"%s\"} %llu\n",
			name, (unsigned long long)cum);
	}
}

/* Per-upstream try latency: per-worker single-writer buckets (rt_stats.c)
 * summed over workers (and worker processes) by the scrape. */
/* A per-upstream gauge of GET /peers (a uint64_t of struct
 * nrf_rt_peer_stats at @p off), for every upstream seen. */
static void
upstream_gauge(struct api_buf *b, const struct api_metrics_in *in, const char *name,
	const char *help, size_t off)
{
	char e[600];
	size_t i;

	head(b, name, "gauge", help);
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];
		uint64_t v;

		if (p->name[0] == '\0')
			continue;
		memcpy(&v, (const char *)p + off, sizeof(v));
		api_buf_printf(b, "%s{peer=\"%s\",role=\"%s\"} %llu\n", name,
			esc(p->name, e, sizeof(e)), p->local ? "local" : "peer",
			(unsigned long long)v);
	}
}

static void
upstream_latency(struct api_buf *b, const struct api_metrics_in *in)
{
	static const uint64_t bounds_us[NRF_RT_LAT_BUCKETS] = NRF_RT_LAT_BOUNDS_US;
	char e[600];
	size_t i;
	unsigned int k;

	head(b, "nrfwd_upstream_response_seconds", "histogram",
		"Time from the start of a try to the upstream's answer head, by upstream "
		"(tries that got an answer).");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];
		const char *role = p->local ? "local" : "peer";
		uint64_t cum = 0;

		if (p->name[0] == '\0')
			continue;
		esc(p->name, e, sizeof(e));
		for (k = 0; k < NRF_RT_LAT_BUCKETS; k++) {
			cum += p->lat_bucket[k];
			api_buf_printf(b, "nrfwd_upstream_response_seconds_bucket{peer=\"%s\",role=\"%s\","
				"le=\"%g\"} %llu\n", e, role, (double)bounds_us[k] / 1e6,
				(unsigned long long)cum);
		}
		cum += p->lat_bucket[NRF_RT_LAT_BUCKETS];
		api_buf_printf(b, "nrfwd_upstream_response_seconds_bucket{peer=\"%s\",role=\"%s\","
			"le=\"+Inf\"} %llu\n", e, role, (unsigned long long)cum);
		api_buf_printf(b, "nrfwd_upstream_response_seconds_sum{peer=\"%s\",role=\"%s\"} "
			"%.9f\n", e, role, (double)p->lat_sum_ns / 1e9);
		api_buf_printf(b, "nrfwd_upstream_response_seconds_count{peer=\"%s\",role=\"%s\"} "
			"%llu\n", e, role, (unsigned long long)cum);
	}
}

static void
peers(struct api_buf *b, const struct api_metrics_in *in)
{
	char e[600];
	size_t i;
	unsigned int k;

	head(b, "nrfwd_loop_preventions_total", "counter",
		"Candidate peers skipped because their identity was in Via, by peer.");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (!p->local && p->name[0] != '\0')
			api_buf_printf(b, "nrfwd_loop_preventions_total{peer=\"%s\"} %llu\n",
				esc(p->name, e, sizeof(e)), (unsigned long long)p->loop_prevented);
	}
	head(b, "nrfwd_forwards_total", "counter",
		"Answers of peer NRFs to forwarded requests, by peer and status code "
		"(reroutes included).");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (p->local || p->name[0] == '\0')
			continue;
		esc(p->name, e, sizeof(e));
		for (k = 0; k < p->n_codes; k++)
			api_buf_printf(b, "nrfwd_forwards_total{peer=\"%s\",status=\"%u\"} %llu\n", e,
				p->codes[k], (unsigned long long)p->code_n[k]);
		if (p->code_other > 0)
			api_buf_printf(b, "nrfwd_forwards_total{peer=\"%s\",status=\"other\"} %llu\n",
				e, (unsigned long long)p->code_other);
	}
	head(b, "nrfwd_local_nrf_answers_total", "counter",
		"Answers of the local NRF, by status code.");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (!p->local || p->name[0] == '\0')
			continue;
		esc(p->name, e, sizeof(e));
		for (k = 0; k < p->n_codes; k++)
			api_buf_printf(b, "nrfwd_local_nrf_answers_total{local_nrf=\"%s\",status=\"%u\"} "
				"%llu\n", e, p->codes[k], (unsigned long long)p->code_n[k]);
		if (p->code_other > 0)
			api_buf_printf(b, "nrfwd_local_nrf_answers_total{local_nrf=\"%s\","
				"status=\"other\"} %llu\n", e, (unsigned long long)p->code_other);
	}
	head(b, "nrfwd_tries_total", "counter",
		"Tries started towards an upstream (role peer, or local for the local NRF).");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (p->name[0] != '\0')
			api_buf_printf(b, "nrfwd_tries_total{peer=\"%s\",role=\"%s\"} %llu\n",
				esc(p->name, e, sizeof(e)), p->local ? "local" : "peer",
				(unsigned long long)p->tries);
	}
	head(b, "nrfwd_try_failures_total", "counter",
		"Tries that gave no answer to relay, by upstream and reason.");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (p->name[0] == '\0')
			continue;
		esc(p->name, e, sizeof(e));
		for (k = 0; k < NRF_RT_FAIL_COUNT; k++)
			api_buf_printf(b, "nrfwd_try_failures_total{peer=\"%s\",role=\"%s\",reason=\"%s\"} "
				"%llu\n", e, p->local ? "local" : "peer",
				nrf_rt_fail_name((enum nrf_rt_fail)k), (unsigned long long)p->fail[k]);
	}
	head(b, "nrfwd_upstream_up", "gauge",
		"Workers that do not hold the upstream down (summed over workers; "
		"configured upstreams only).");
	for (i = 0; i < in->n_peers; i++) {
		const struct nrf_rt_peer_stats *p = &in->peers[i];

		if (p->name[0] == '\0' || p->workers == 0)
			continue;
		api_buf_printf(b, "nrfwd_upstream_up{peer=\"%s\",role=\"%s\"} %u\n",
			esc(p->name, e, sizeof(e)), p->local ? "local" : "peer",
			p->workers - NRF_MIN(p->workers_down, p->workers));
	}
	upstream_gauge(b, in, "nrfwd_upstream_connections",
		"Connected HTTP/2 connections to the upstream (summed over workers).",
		offsetof(struct nrf_rt_peer_stats, conns));
	upstream_gauge(b, in, "nrfwd_upstream_streams",
		"Streams open to the upstream now: tries sent, answer not over (summed over workers).",
		offsetof(struct nrf_rt_peer_stats, inflight));
	upstream_gauge(b, in, "nrfwd_upstream_queued",
		"Tries waiting in the upstream's queues for a connection or a stream (summed over "
		"workers).", offsetof(struct nrf_rt_peer_stats, queued));
	upstream_latency(b, in);
}

/* Peer names re-resolved (nrf_rt_dns_start(); docs/behaviour.md). */
static void
dns(struct api_buf *b, const struct api_metrics_in *in)
{
	if (!in->dns.running)
		return;
	head(b, "nrfwd_dns_resolutions_total", "counter",
		"Resolutions of peer names: changed (the address moved; a new generation), "
		"unchanged, failed (the last good address stays).");
	api_buf_printf(b, "nrfwd_dns_resolutions_total{result=\"changed\"} %llu\n",
		(unsigned long long)in->dns.changed);
	api_buf_printf(b, "nrfwd_dns_resolutions_total{result=\"unchanged\"} %llu\n",
		(unsigned long long)in->dns.unchanged);
	api_buf_printf(b, "nrfwd_dns_resolutions_total{result=\"failed\"} %llu\n",
		(unsigned long long)in->dns.failed);
	scalar(b, "nrfwd_dns_names", "gauge", "Peer names re-resolved periodically.",
		in->dns.names);
}

static double
worker_busy_s(const struct api_metrics_in *in, unsigned int i)
{
	const struct nrf_rt_dp_stats *d = in->dp != NULL ? &in->dp[i] : NULL;

	if (d != NULL && d->polled && d->tsc_hz > 0)
		return (double)d->lc.busy_cycles / (double)d->tsc_hz;
	return (double)in->workers[i].cpu_ns / 1e9;
}

static void
workers(struct api_buf *b, const struct api_metrics_in *in)
{
	unsigned int i;

	head(b, "nrfwd_worker_busy_ratio", "gauge",
		"Share of wall time a worker thread was on a CPU over the last 10 s or more "
		"(the same for every scraper; rate(nrfwd_worker_busy_seconds_total) for other windows).");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_busy_ratio{worker=\"%u\"} %.4f\n", i, in->busy[i]);
	head(b, "nrfwd_worker_cpu_seconds_total", "counter", "CPU time of a worker thread.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_cpu_seconds_total{worker=\"%u\"} %.6f\n", i,
			(double)in->workers[i].cpu_ns / 1e9);
	head(b, "nrfwd_worker_config_generation", "gauge",
		"Configuration generation a worker uses for new requests.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_config_generation{worker=\"%u\"} %llu\n", i,
			(unsigned long long)in->workers[i].generation);
	head(b, "nrfwd_worker_up", "gauge", "1 while a worker serves, 0 while it is down.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_up{worker=\"%u\"} %d\n", i,
			in->workers[i].running ? 1 : 0);
	head(b, "nrfwd_worker_requests_total", "counter",
		"Front requests a worker answered (or saw reset); since its last start.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_requests_total{worker=\"%u\"} %llu\n", i,
			(unsigned long long)in->workers[i].requests);
	head(b, "nrfwd_worker_connections_open", "gauge", "Front connections a worker holds.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_connections_open{worker=\"%u\"} %llu\n", i,
			(unsigned long long)in->workers[i].conns_open);
	head(b, "nrfwd_worker_restarts_total", "counter",
		"Times a worker process was restarted after it died (DPDK worker processes).");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_restarts_total{worker=\"%u\"} %u\n", i,
			in->workers[i].restarts);
	/* The same per-request cost on both transports: busy TSC cycles of a
	 * DPDK worker's poll loop (which spins when idle, so CPU time would
	 * say 100 %), CPU time of a kernel worker thread. */
	head(b, "nrfwd_worker_busy_seconds_total", "counter",
		"Time a worker spent on work: busy poll-loop cycles (DPDK), thread CPU time "
		"(kernel sockets).");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_busy_seconds_total{worker=\"%u\"} %.6f\n", i,
			worker_busy_s(in, i));
	head(b, "nrfwd_worker_busy_seconds_per_request", "gauge",
		"nrfwd_worker_busy_seconds_total over nrfwd_worker_requests_total, seconds.");
	for (i = 0; i < in->n_workers; i++)
		api_buf_printf(b, "nrfwd_worker_busy_seconds_per_request{worker=\"%u\"} %.9f\n", i,
			in->workers[i].requests > 0 ?
			worker_busy_s(in, i) / (double)in->workers[i].requests : 0.0);
}

/* The poll loop of a DPDK worker (nrf_rt_dp_stats_get()): its useful-work
 * share is busy cycles over all cycles, which CPU time cannot tell (the
 * loop spins between sleeps). */
#define EACH_DP(i, d)                                                          \
	for ((i) = 0; (i) < in->n_workers; (i)++)                              \
		if (((d) = &in->dp[(i)])->polled)

/* One sample of DPDK worker @p d: NAME{lcore="N",LABELS} V (@p labels "":
 * the lcore only). */
static void
lc(struct api_buf *b, const char *name, const char *labels, const struct nrf_rt_dp_stats *d,
	uint64_t v)
{
	api_buf_printf(b, "%s{lcore=\"%d\"%s%s} %llu\n", name, d->lcore,
		labels[0] != '\0' ? "," : "", labels, (unsigned long long)v);
}

/* The per-lcore counters and gauges of a DPDK worker, in their order on
 * /metrics: each a HELP/TYPE head, then per worker one sample per label
 * set (lc()), a field of its nrf_tp_dpdk_lcore_stats. */
#define LCF(f) offsetof(struct nrf_tp_dpdk_lcore_stats, f)
static const struct lc_metric {
	const char *name, *type, *help;
	struct {
		const char *labels; /* NULL: no more samples */
		size_t off;
	} s[4];
} lc_metrics[] = {
	{"nrfwd_dpdk_iterations_total", "counter",
		"Poll loop iterations of the DPDK worker: all, and busy ones (received, sent or "
		"dispatched something).",
		{{"kind=\"all\"", LCF(iterations)}, {"kind=\"busy\"", LCF(busy_iterations)}}},
	{"nrfwd_dpdk_idle_sleeps_total", "counter",
		"Idle backoff sleeps of the DPDK worker.",
		{{"", LCF(idle_sleeps)}}},
	{"nrfwd_dpdk_frames_total", "counter",
		"Frames received and sent by the DPDK port.",
		{{"dir=\"rx\"", LCF(rx_frames)}, {"dir=\"tx\"", LCF(tx_frames)}}},
	{"nrfwd_dpdk_worker_frames_total", "counter",
		"Frames between DPDK worker processes: ARP copies sent to the others, frames of "
		"another worker's connection handed to it, frames received from the others.",
		{{"kind=\"arp_out\"", LCF(arp_shared)},
			{"kind=\"steered_out\"", LCF(steered)},
			{"kind=\"in\"", LCF(from_workers)}}},
	{"nrfwd_dpdk_frames_dropped_total", "counter",
		"Frames dropped by the DPDK worker: rx not for the stack (not IPv4/ARP, own or "
		"loopback source, no memory), rx not of the port's VLAN (untagged or another "
		"VLAN, on a tagged port), tx queue full, tx without an mbuf.",
		{{"dir=\"rx\",reason=\"stack\"", LCF(rx_dropped)},
			{"dir=\"rx\",reason=\"vlan\"", LCF(rx_vlan_other)},
			{"dir=\"tx\",reason=\"queue_full\"", LCF(tx_dropped)},
			{"dir=\"tx\",reason=\"no_mbuf\"", LCF(tx_nombuf)}}},
	{"nrfwd_dpdk_neighbours", "gauge",
		"Neighbour (ARP) entries of the DPDK worker: all, and those pinned by connections "
		"or as the gateway (never evicted).",
		{{"kind=\"all\"", LCF(neigh_entries)}, {"kind=\"pinned\"", LCF(neigh_pinned)}}},
	{"nrfwd_dpdk_neighbour_events_total", "counter",
		"Neighbour table events: packets sent to the MAC of the frame they answer "
		"(direct), stranger entries evicted, entries refused (no room), packets to "
		"unresolved neighbours dropped (queue_drop).",
		{{"event=\"direct\"", LCF(neigh_direct)},
			{"event=\"evicted\"", LCF(neigh_evicted)},
			{"event=\"refused\"", LCF(neigh_refused)},
			{"event=\"queue_drop\"", LCF(neigh_queue_drops)}}},
	{"nrfwd_dpdk_arp_total", "counter",
		"ARP frames the DPDK worker sent: requests, requests not sent (over the per-second "
		"budget), replies.",
		{{"kind=\"request\"", LCF(arp_requests)},
			{"kind=\"request_limited\"", LCF(arp_limited)},
			{"kind=\"reply\"", LCF(arp_replies)}}},
	{"nrfwd_dpdk_stray_rst_total", "counter",
		"RSTs in answer to received segments (no connection, out of window): sent, and "
		"not sent because the per-second budget was spent.",
		{{"kind=\"sent\"", LCF(rst_sent)}, {"kind=\"limited\"", LCF(rst_limited)}}},
	{"nrfwd_dpdk_challenge_acks_total", "counter",
		"ACKs in answer to unacceptable segments of live connections (RFC 5961 challenge "
		"ACKs): sent, and not sent (segment dropped) because the per-second budget was "
		"spent.",
		{{"kind=\"sent\"", LCF(challenge_acks)},
			{"kind=\"limited\"", LCF(challenge_limited)}}},
	{"nrfwd_dpdk_syn_cookies_total", "counter",
		"SYN cookies of the DPDK worker: SYN-ACKs sent with one (a listener with many "
		"half-open connections), ACKs that returned a valid one (connections made).",
		{{"kind=\"sent\"", LCF(syn_cookies_sent)},
			{"kind=\"valid\"", LCF(syn_cookies_ok)}}},
	{"nrfwd_dpdk_lwip_pcbs", "gauge",
		"TCP pcbs of the DPDK worker's lwIP by state (sampled once a second).",
		{{"state=\"syn_rcvd\"", LCF(pcb_syn_rcvd)},
			{"state=\"established\"", LCF(pcb_established)},
			{"state=\"closing\"", LCF(pcb_closing)},
			{"state=\"time_wait\"", LCF(pcb_time_wait)}}},
	{"nrfwd_dpdk_rx_held_frames", "gauge",
		"Received frames lwIP or unread data of the DPDK worker hold in place (at most a "
		"quarter of the mbuf pool; sampled once a second).",
		{{"", LCF(rx_held)}}},
	{"nrfwd_dpdk_pcbs_dropped_total", "counter",
		"TCP pcbs the DPDK worker dropped: half_open (SYN_RCVD past synRcvdTimeoutMs or "
		"synAckRetries), orphan (connections nrfwd had closed, reset when lwIP's pool was "
		"nearly used up).",
		{{"kind=\"half_open\"", LCF(half_open_expired)},
			{"kind=\"orphan\"", LCF(orphans_reset)}}},
	{"nrfwd_dpdk_listen_overflows_total", "counter",
		"Connections the DPDK worker refused because a listen queue was full.",
		{{"", LCF(listen_overflows)}}},
};
#undef LCF

static void
dpdk(struct api_buf *b, const struct api_metrics_in *in)
{
	static const char *const kinds[] = {"all", "busy", "poll_busy", "tx", "rx"};
	const struct nrf_rt_dp_stats *d, *first = NULL;
	unsigned int i, k;

	head(b, "nrfwd_dpdk_cycles_total", "counter",
		"TSC cycles of the DPDK worker's poll loop: all, busy iterations, inside poll() "
		"of busy iterations, inside the device TX call, inside the device RX call of busy "
		"iterations.");
	EACH_DP(i, d) {
		const struct nrf_tp_dpdk_lcore_stats *l = &d->lc;
		const uint64_t cyc[] = {l->cycles, l->busy_cycles, l->poll_busy_cycles,
			l->tx_cycles, l->rx_cycles};

		if (first == NULL)
			first = d;
		for (k = 0; k < NRF_ARRAY_SIZE(kinds); k++)
			api_buf_printf(b, "nrfwd_dpdk_cycles_total{lcore=\"%d\",kind=\"%s\"} %llu\n",
				d->lcore, kinds[k], (unsigned long long)cyc[k]);
	}
	for (size_t m = 0; m < NRF_ARRAY_SIZE(lc_metrics); m++) {
		const struct lc_metric *lm = &lc_metrics[m];

		head(b, lm->name, lm->type, lm->help);
		EACH_DP(i, d) {
			for (k = 0; k < NRF_ARRAY_SIZE(lm->s) && lm->s[k].labels != NULL; k++)
				lc(b, lm->name, lm->s[k].labels, d,
					*(const uint64_t *)((const char *)&d->lc + lm->s[k].off));
		}
	}
	head(b, "nrfwd_dpdk_vlan", "gauge",
		"The DPDK port's 802.1Q VLAN (0: untagged), and where its tags are stripped (rx) "
		"and inserted (tx): device (offload), software, or none (untagged).");
	EACH_DP(i, d) {
		const struct nrf_tp_dpdk_lcore_stats *l = &d->lc;

		api_buf_printf(b, "nrfwd_dpdk_vlan{lcore=\"%d\",rx=\"%s\",tx=\"%s\"} %llu\n",
			d->lcore, l->vlan == 0 ? "none" :
			l->vlan_offloads & NRF_TP_DPDK_VLAN_RX_STRIP ? "device" : "software",
			l->vlan == 0 ? "none" :
			l->vlan_offloads & NRF_TP_DPDK_VLAN_TX_INSERT ? "device" : "software",
			(unsigned long long)l->vlan);
	}
	if (first == NULL)
		return;
	d = first; /* the port is one for all workers */
	scalar(b, "nrfwd_dpdk_port_missed_total", "counter",
		"Frames the DPDK port dropped because its RX ring was full (imissed).", d->port.imissed);
	scalar(b, "nrfwd_dpdk_port_rx_nombuf_total", "counter",
		"RX mbuf allocation failures of the DPDK port.", d->port.rx_nombuf);
	scalar(b, "nrfwd_dpdk_port_rx_errors_total", "counter",
		"Erroneous frames the DPDK port received (ierrors).", d->port.ierrors);
	scalar(b, "nrfwd_dpdk_port_tx_errors_total", "counter",
		"Frames the DPDK port failed to send (oerrors).", d->port.oerrors);
	if (in->n_xstats > 0) {
		head(b, "nrfwd_dpdk_port_xstats_total", "counter",
			"Extended counters of the DPDK port, as its driver names them "
			"(rte_eth_xstats_get(); drops by cause on a NIC, few on net_af_packet).");
		for (i = 0; i < in->n_xstats; i++) {
			char e[2 * sizeof(in->xstats[i].name)];

			api_buf_printf(b, "nrfwd_dpdk_port_xstats_total{name=\"%s\"} %llu\n",
				esc(in->xstats[i].name, e, sizeof(e)),
				(unsigned long long)in->xstats[i].value);
		}
	}
	scalar(b, "nrfwd_dpdk_tsc_hz", "gauge", "TSC cycles per second (cycles to seconds).",
		d->tsc_hz);
}

/* The memory budget (runtime.limits.maxBufferedBytes, decision 0018). */
static void
memory(struct api_buf *b, const struct nrf_rt_stats *st)
{
	unsigned int k;

	head(b, "nrfwd_buffered_bytes", "gauge",
		"Bytes the data path holds now, by kind; their sum is checked against "
		"runtime.limits.maxBufferedBytes.");
	for (k = 0; k < NRF_RT_BUF_COUNT; k++)
		api_buf_printf(b, "nrfwd_buffered_bytes{kind=\"%s\"} %llu\n",
			nrf_rt_buf_name((enum nrf_rt_buf)k), (unsigned long long)st->buffered[k]);
	scalar(b, "nrfwd_buffer_budget_bytes", "gauge",
		"The memory budget of the data path (runtime.limits.maxBufferedBytes, split "
		"between the workers).", st->budget_bytes);
	scalar(b, "nrfwd_buffer_budget_rejections_total", "counter",
		"Requests refused (NRF_Forwarding_Overload) because a worker was over its "
		"share of the memory budget.", st->budget_rejections);
	scalar(b, "nrfwd_pooled_bytes", "gauge",
		"Bytes kept on free lists for reuse (not in nrfwd_buffered_bytes); given back "
		"to the system when unused for a few seconds.", st->pooled_bytes);
	head(b, "nrfwd_client_limited_total", "counter",
		"Requests answered NRF_Client_Limit (429 by default) because their client was "
		"over runtime.limits.perClient, by the limit.");
	for (k = 0; k < NRF_RT_LIMIT_COUNT; k++)
		api_buf_printf(b, "nrfwd_client_limited_total{reason=\"%s\"} %llu\n",
			nrf_rt_limit_name((enum nrf_rt_limit)k),
			(unsigned long long)st->client_limited[k]);
	scalar(b, "nrfwd_client_limit_clients", "gauge",
		"Clients the per-client limits track now, summed over the workers' tables.",
		st->clients_tracked);
	scalar(b, "nrfwd_client_limit_evictions_total", "counter",
		"Entries of a full per-client table given to a new client (the one seen "
		"least recently starts afresh when it comes back).", st->client_evictions);
	scalar(b, "nrfwd_access_log_lines_total", "counter",
		"Access log lines formatted (runtime.accessLog).", st->alog_lines);
	scalar(b, "nrfwd_access_log_dropped_total", "counter",
		"Access log lines not written: over accessLog.maxLinesPerSecond, or lost "
		"to a failed write.", st->alog_dropped);
}

void
api_metrics_render(struct api_buf *b, const struct api_metrics_in *in)
{
	const struct nrf_rt_stats *st = in->st;
	static const char *const phases[3] = {"validate", "persist", "publish"};
	unsigned int k;

	requests(b, st);
	scalar(b, "nrfwd_loop_detections_total", "counter",
		"Requests answered NRF_Forwarding_Loop_Detection (own identity in Via).",
		st->loop_detected);
	scalar(b, "nrfwd_hop_limit_total", "counter",
		"Requests answered NRF_Forwarding_Hop_Limit (more Via members than allowed).",
		st->hop_limit);
	scalar(b, "nrfwd_loop_prevention_skips_total", "counter",
		"Candidates skipped by loop prevention, all peers.", st->loop_prevented);
	scalar(b, "nrfwd_loop_paths", "gauge",
		"Distinct loop paths (kind, Via path, skipped peer) the workers' loop tables "
		"hold now (GET /loops).", in->loop_paths);
	scalar(b, "nrfwd_loop_paths_dropped_total", "counter",
		"Loop paths dropped, the least recently seen, to make room in a full "
		"worker's loop table.", st->loop_drops);
	peers(b, in);
	scalar(b, "nrfwd_reroutes_total", "counter",
		"Peer answers with a reroute status that moved on to the next candidate.",
		st->reroutes);
	scalar(b, "nrfwd_retries_total", "counter",
		"Upstream streams lost with their connection (or refused) before an answer and "
		"sent again once, apart from the other streams lost with it.", st->retries);
	scalar(b, "nrfwd_request_timeouts_total", "counter",
		"Requests ended by runtime.timeouts.requestMs.", st->request_timeouts);
	scalar(b, "nrfwd_client_resets_total", "counter",
		"Requests whose client went away before the answer.", st->client_resets);
	scalar(b, "nrfwd_relay_aborts_total", "counter",
		"Answers that broke off after they began (front stream reset).", st->relay_aborts);
	scalar(b, "nrfwd_answer_violations_total", "counter",
		"Requests answered twice or left unanswered (a bug; always 0).",
		st->answer_violations);
	head(b, "nrfwd_timeouts_total", "counter",
		"Connections and streams ended by runtime.timeouts, by reason.");
	for (k = 0; k < NRF_RT_TMO_COUNT; k++)
		api_buf_printf(b, "nrfwd_timeouts_total{reason=\"%s\"} %llu\n",
			nrf_rt_timeout_name((enum nrf_rt_tmo)k), (unsigned long long)st->timeouts[k]);
	scalar(b, "nrfwd_connections_accepted_total", "counter",
		"Front connections accepted.", st->conns_accepted);
	scalar(b, "nrfwd_connections_refused_total", "counter",
		"Front connections refused at runtime.limits.maxConnections (every connection "
		"had an open stream), or while draining.", st->conns_refused);
	head(b, "nrfwd_connections_evicted_total", "counter",
		"Front connections without an open stream closed at "
		"runtime.limits.maxConnections to take a new one, by reason.");
	for (k = 0; k < NRF_RT_EVICT_COUNT; k++)
		api_buf_printf(b, "nrfwd_connections_evicted_total{reason=\"%s\"} %llu\n",
			nrf_rt_evict_name((enum nrf_rt_evict)k),
			(unsigned long long)st->conns_evicted[k]);
	head(b, "nrfwd_connections_open", "gauge", "Front connections open.");
	api_buf_printf(b, "nrfwd_connections_open %llu\n",
		(unsigned long long)(st->conns_accepted >= st->conns_closed
			? st->conns_accepted - st->conns_closed : 0));
	scalar(b, "nrfwd_peer_connects_total", "counter",
		"Connections opened to upstreams (local NRF and peers).", st->peer_connects);
	scalar(b, "nrfwd_peer_connect_failures_total", "counter",
		"Connections to upstreams that failed or timed out.", st->peer_connect_failures);
	scalar(b, "nrfwd_peer_connections_lost_total", "counter",
		"Upstream connections that went away while they carried streams.",
		st->peer_conns_lost);
	scalar(b, "nrfwd_queue_shed_total", "counter",
		"Requests shed (NRF_Forwarding_Overload) because they waited in a queue toward "
		"an upstream past runtime.limits.queueTargetMs.", st->queue_shed);
	memory(b, st);
	workers(b, in);
	if (in->dp != NULL)
		dpdk(b, in);
	dns(b, in);
	scalar(b, "nrfwd_config_generation", "gauge",
		"Generation of the configuration published last.", in->generation);
	{
		/* the family always (dashboards and rules find it), a sample
		 * per role that has a certificate */
		static const char *const role[2] = {"server", "client"};

		head(b, "nrfwd_tls_certificate_expiry_timestamp_seconds", "gauge",
			"notAfter of the certificate in use, Unix seconds (role server: TLS "
			"listeners; client: presented to upstreams).");
		for (int i = 0; i < 2; i++) {
			if (in->tls_not_after[i] != 0)
				api_buf_printf(b, "nrfwd_tls_certificate_expiry_timestamp_seconds"
					"{role=\"%s\"} %lld\n", role[i],
					(long long)in->tls_not_after[i]);
		}
	}
	scalar(b, "nrfwd_config_reloads_total", "counter",
		"Configuration changes applied through the REST API.", in->api.reloads);
	scalar(b, "nrfwd_config_reload_failures_total", "counter",
		"Configuration changes refused (invalid, restart-only, not persisted).",
		in->api.reload_failures);
	head(b, "nrfwd_config_last_apply_seconds", "gauge",
		"Duration of the phases of the last applied change (publish: until every "
		"worker used it).");
	for (k = 0; k < 3; k++)
		api_buf_printf(b, "nrfwd_config_last_apply_seconds{phase=\"%s\"} %.6f\n", phases[k],
			in->last_apply[k]);
	scalar(b, "nrfwd_api_requests_total", "counter",
		"Requests answered by the management listener.", in->api.requests);
}
