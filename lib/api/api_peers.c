/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /peers (docs/rest-api.md, "Peers"): every upstream of the running
 * configuration joined by name with its counters and health summed over
 * the workers. The pure part (api_peers_render()) takes both lists, so it
 * is tested without a runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api_int.h"
#include "nrf_common.h"

static const struct nrf_rt_peer_stats *
stats_of(const struct nrf_rt_peer_stats *st, size_t n, const struct nrf_rt_upstream *u)
{
	for (size_t i = 0; i < n; i++)
		if (st[i].local == u->local && strcmp(st[i].name, u->name) == 0)
			return &st[i];
	return NULL;
}

static double
ago_s(uint64_t now, uint64_t then)
{
	return now > then ? (double)(now - then) / 1e9 : 0.0;
}

/* "dns": the resolver's view of a re-resolved name (rt_dns.c), or null. */
static json_t *
dns_of(const struct nrf_rt_upstream *u, uint64_t now_ns)
{
	json_t *o;

	if (u->dns_name[0] == '\0')
		return json_null();
	o = json_object();
	if (o == NULL)
		return json_null();
	json_object_set_new(o, "name", json_string(u->dns_name));
	json_object_set_new(o, "resolvedSecondsAgo", u->dns_resolved_ns != 0
		? json_real(ago_s(now_ns, u->dns_resolved_ns)) : json_null());
	json_object_set_new(o, "nextInSeconds", u->dns_next_ns != 0
		? json_real(u->dns_next_ns > now_ns ? (double)(u->dns_next_ns - now_ns) / 1e9 : 0.0)
		: json_null());
	json_object_set_new(o, "ttl", json_boolean(u->dns_ttl));
	json_object_set_new(o, "lastError", u->dns_error[0] != '\0'
		? json_string(u->dns_error) : json_null());
	return o;
}

/* Try -> answer head latency since start, from the buckets of
 * nrfwd_upstream_response_seconds (nrf_rt_lat_quantile()); null before
 * the first answer. */
static json_t *
latency(const struct nrf_rt_peer_stats *s)
{
	static const struct {
		const char *key;
		double q;
	} qs[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}};
	uint64_t n = 0;
	json_t *o;

	for (unsigned int b = 0; b <= NRF_RT_LAT_BUCKETS; b++)
		n += s->lat_bucket[b];
	if (n == 0)
		return json_null();
	o = json_object();
	if (o == NULL)
		return json_null();
	json_object_set_new(o, "answers", json_integer((json_int_t)n));
	json_object_set_new(o, "mean", json_real((double)s->lat_sum_ns / 1e9 / (double)n));
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		json_object_set_new(o, qs[i].key, json_real(nrf_rt_lat_quantile(s->lat_bucket,
			qs[i].q)));
	return o;
}

char *
api_peers_render(const struct nrf_rt_upstream *up, size_t n_up,
	const struct nrf_rt_peer_stats *st, size_t n_st, uint64_t generation, uint64_t now_ns)
{
	json_t *doc = json_object(), *arr = json_array();
	char *text;

	if (doc == NULL || arr == NULL) {
		json_decref(doc);
		json_decref(arr);
		return NULL;
	}
	json_object_set_new(doc, "generation", json_integer((json_int_t)generation));
	json_object_set_new(doc, "upstreams", arr);
	for (size_t i = 0; i < n_up; i++) {
		const struct nrf_rt_upstream *u = &up[i];
		const struct nrf_rt_peer_stats *s = stats_of(st, n_st, u);
		json_t *o = json_object(), *fails = json_object(), *codes = json_object();
		const char *state = "up";

		if (o == NULL || fails == NULL || codes == NULL) {
			json_decref(o);
			json_decref(fails);
			json_decref(codes);
			json_decref(doc);
			return NULL;
		}
		json_object_set_new(o, "name", json_string(u->name));
		/* role as in the metrics' label and the access log's outcome;
		 * a peer's mode names the configuration it comes from */
		json_object_set_new(o, "role", json_string(u->local ? "local" : "peer"));
		if (!u->local)
			json_object_set_new(o, "mode", json_string(u->mode == NRF_MODE_GROWTH
				? "growth" : "forwarding"));
		if (u->set_id[0] != '\0')
			json_object_set_new(o, "nrfSetId", json_string(u->set_id));
		if (!u->local)
			json_object_set_new(o, "priority", json_integer(u->priority));
		json_object_set_new(o, "configured", json_string(u->configured));
		json_object_set_new(o, "address", u->address[0] != '\0'
			? json_string(u->address) : json_null());
		json_object_set_new(o, "tls", json_boolean(u->tls));
		json_object_set_new(o, "dns", dns_of(u, now_ns));
		if (u->address[0] == '\0')
			state = "unresolved";
		else if (s != NULL && s->workers_down > 0 && s->workers_down >= s->workers)
			state = s->workers_probing > 0 ? "probing" : "down";
		else if (s != NULL && s->workers_down > 0)
			state = "partly down";
		json_object_set_new(o, "state", json_string(state));
		json_object_set_new(o, "workers", json_integer(s != NULL ? s->workers : 0));
		json_object_set_new(o, "workersDown", json_integer(s != NULL ? s->workers_down : 0));
		json_object_set_new(o, "workersProbing",
			json_integer(s != NULL ? s->workers_probing : 0));
		json_object_set_new(o, "downForSeconds", s != NULL && s->down_since_ns != 0
			? json_real(ago_s(now_ns, s->down_since_ns)) : json_null());
		json_object_set_new(o, "nextProbeInSeconds",
			s != NULL && s->down_since_ns != 0 && s->next_probe_ns != 0
			? json_real(ago_s(s->next_probe_ns, now_ns)) : json_null());
		if (s != NULL && s->last_fail_ns != 0) {
			json_t *lf = json_object();

			json_object_set_new(lf, "reason", json_string(nrf_rt_fail_name(s->last_fail)));
			json_object_set_new(lf, "secondsAgo", json_real(ago_s(now_ns, s->last_fail_ns)));
			json_object_set_new(o, "lastFailure", lf);
		} else {
			json_object_set_new(o, "lastFailure", json_null());
		}
		json_object_set_new(o, "connections",
			json_integer(s != NULL ? (json_int_t)s->conns : 0));
		json_object_set_new(o, "inFlight",
			json_integer(s != NULL ? (json_int_t)s->inflight : 0));
		json_object_set_new(o, "queued",
			json_integer(s != NULL ? (json_int_t)s->queued : 0));
		json_object_set_new(o, "latencySeconds", s != NULL ? latency(s) : json_null());
		json_object_set_new(o, "tries", json_integer(s != NULL ? (json_int_t)s->tries : 0));
		json_object_set_new(o, "loopPreventionSkips",
			json_integer(s != NULL ? (json_int_t)s->loop_prevented : 0));
		for (int k = 0; k < NRF_RT_FAIL_COUNT; k++)
			json_object_set_new(fails, nrf_rt_fail_name((enum nrf_rt_fail)k),
				json_integer(s != NULL ? (json_int_t)s->fail[k] : 0));
		json_object_set_new(o, "failures", fails);
		for (unsigned int k = 0; s != NULL && k < s->n_codes; k++) {
			char code[8];

			snprintf(code, sizeof(code), "%u", s->codes[k]);
			json_object_set_new(codes, code, json_integer((json_int_t)s->code_n[k]));
		}
		if (s != NULL && s->code_other > 0)
			json_object_set_new(codes, "other", json_integer((json_int_t)s->code_other));
		json_object_set_new(o, "answers", codes);
		json_array_append_new(arr, o);
	}
	text = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	return text;
}

char *
api_peers_get(struct nrf_rt *rt)
{
	struct nrf_rt_upstream *up = NULL;
	struct nrf_rt_peer_stats *st = NULL;
	size_t n_up = 0, n_st = 0;
	char *text = NULL;

	if (nrf_rt_upstreams_get(rt, &up, &n_up) == 0 &&
		nrf_rt_peer_stats_get(rt, &st, &n_st) == 0)
		text = api_peers_render(up, n_up, st, n_st, nrf_rt_generation(rt), nrf_now_ns());
	free(up);
	free(st);
	return text;
}
