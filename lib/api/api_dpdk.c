/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /dpdk (docs/rest-api.md, "DPDK"): the DPDK transport's counters as
 * JSON, the same figures as the nrfwd_dpdk_* series of /metrics, grouped
 * per worker, and the port's counters with its extended ones. The pure
 * part (api_dpdk_render()) takes the figures, so it is tested without a
 * runtime.
 */
#include <stdlib.h>

#include <jansson.h>

#include "api_int.h"
#include "nrf_common.h"

static json_int_t
u(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v;
}

/* @p o["key"] = v for each pair (NULL-terminated names). */
static json_t *
obj(const char *const *keys, const uint64_t *vals)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && keys[i] != NULL; i++)
		json_object_set_new(o, keys[i], json_integer(u(vals[i])));
	return o;
}

static json_t *
worker(unsigned int i, const struct nrf_rt_dp_stats *d)
{
	const struct nrf_tp_dpdk_lcore_stats *l = &d->lc;
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "worker", json_integer(i));
	json_object_set_new(o, "lcore", json_integer(d->lcore));
	json_object_set_new(o, "busyShare", json_real(l->cycles > 0
		? (double)l->busy_cycles / (double)l->cycles : 0.0));
	json_object_set_new(o, "frames", obj((const char *const[]){"rx", "tx", NULL},
		(const uint64_t[]){l->rx_frames, l->tx_frames}));
	json_object_set_new(o, "framesDropped",
		obj((const char *const[]){"rx", "rxVlan", "txQueueFull", "txNoMbuf", NULL},
			(const uint64_t[]){l->rx_dropped, l->rx_vlan_other, l->tx_dropped,
				l->tx_nombuf}));
	json_object_set_new(o, "vlan", json_integer(u(l->vlan)));
	json_object_set_new(o, "vlanPath", l->vlan == 0 ? json_null() :
		json_pack("{s:s, s:s, s:b}",
			"rx", l->vlan_offloads & NRF_TP_DPDK_VLAN_RX_STRIP ? "device" : "software",
			"tx", l->vlan_offloads & NRF_TP_DPDK_VLAN_TX_INSERT ? "device" : "software",
			"deviceFilter", (l->vlan_offloads & NRF_TP_DPDK_VLAN_RX_FILTER) != 0));
	json_object_set_new(o, "neighbours",
		obj((const char *const[]){"entries", "pinned", "direct", "evicted", "refused",
			"queueDrops", NULL},
			(const uint64_t[]){l->neigh_entries, l->neigh_pinned, l->neigh_direct,
				l->neigh_evicted, l->neigh_refused, l->neigh_queue_drops}));
	json_object_set_new(o, "arp",
		obj((const char *const[]){"requests", "requestsLimited", "replies", NULL},
			(const uint64_t[]){l->arp_requests, l->arp_limited, l->arp_replies}));
	json_object_set_new(o, "strayResets", obj((const char *const[]){"sent", "limited", NULL},
		(const uint64_t[]){l->rst_sent, l->rst_limited}));
	json_object_set_new(o, "challengeAcks", obj((const char *const[]){"sent", "limited", NULL},
		(const uint64_t[]){l->challenge_acks, l->challenge_limited}));
	json_object_set_new(o, "synCookies", obj((const char *const[]){"sent", "valid", NULL},
		(const uint64_t[]){l->syn_cookies_sent, l->syn_cookies_ok}));
	json_object_set_new(o, "listenOverflows", json_integer(u(l->listen_overflows)));
	json_object_set_new(o, "pcbs",
		obj((const char *const[]){"synRcvd", "established", "closing", "timeWait", NULL},
			(const uint64_t[]){l->pcb_syn_rcvd, l->pcb_established, l->pcb_closing,
				l->pcb_time_wait}));
	json_object_set_new(o, "pcbsDropped", obj((const char *const[]){"halfOpen", "orphan",
		NULL}, (const uint64_t[]){l->half_open_expired, l->orphans_reset}));
	json_object_set_new(o, "rxHeldFrames", json_integer(u(l->rx_held)));
	return o;
}

char *
api_dpdk_render(const struct nrf_rt_dp_stats *dp, unsigned int n,
	const struct nrf_tp_dpdk_xstat *xs, unsigned int n_xs)
{
	json_t *doc = json_object(), *arr = json_array();
	const struct nrf_rt_dp_stats *first = NULL;
	char *text;

	if (doc == NULL || arr == NULL) {
		json_decref(doc);
		json_decref(arr);
		return NULL;
	}
	for (unsigned int i = 0; dp != NULL && i < n; i++) {
		if (!dp[i].polled)
			continue;
		if (first == NULL)
			first = &dp[i];
		json_array_append_new(arr, worker(i, &dp[i]));
	}
	json_object_set_new(doc, "transport", json_string(first != NULL ? "dpdk" : "kernel"));
	json_object_set_new(doc, "workers", arr);
	if (first != NULL) {
		const struct nrf_tp_dpdk_port_stats *p = &first->port;
		json_t *port = obj((const char *const[]){"rxFrames", "txFrames", "rxBytes",
			"txBytes", "rxMissed", "rxErrors", "txErrors", "rxNoMbuf", NULL},
			(const uint64_t[]){p->ipackets, p->opackets, p->ibytes, p->obytes, p->imissed,
				p->ierrors, p->oerrors, p->rx_nombuf});
		json_t *x = json_object();

		for (unsigned int i = 0; x != NULL && i < n_xs; i++)
			json_object_set_new(x, xs[i].name, json_integer(u(xs[i].value)));
		if (port != NULL)
			json_object_set_new(port, "xstats", x != NULL ? x : json_null());
		json_object_set_new(doc, "port", port != NULL ? port : json_null());
	} else {
		json_object_set_new(doc, "port", json_null());
	}
	text = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	return text;
}

char *
api_dpdk_get(struct nrf_rt *rt)
{
	struct nrf_rt_dp_stats *dp = calloc(NRF_RT_MAX_WORKERS, sizeof(*dp));
	struct nrf_tp_dpdk_xstat *xs = NULL;
	unsigned int n = NRF_MIN(nrf_rt_workers(rt), (unsigned int)NRF_RT_MAX_WORKERS), i;
	bool any = false;
	int nx = 0;
	char *text;

	if (dp == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (nrf_rt_dp_stats_worker(rt, i, &dp[i]) == 0 && dp[i].polled)
			any = true;
	if (any) {
		xs = calloc(API_XSTATS_MAX, sizeof(*xs));
		nx = xs != NULL ? nrf_tp_dpdk_port_xstats(xs, API_XSTATS_MAX) : 0;
	}
	text = api_dpdk_render(dp, any ? n : 0, xs, nx > 0 ? (unsigned int)nx : 0);
	free(xs);
	free(dp);
	return text;
}
