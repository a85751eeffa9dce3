/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration table: every key of the document, declared once.
 *
 * Each entry says the key's name, JSON type, where it lands in struct
 * nrf_cfg, its bounds, its default, its text rule and whether a change
 * applies live or only at restart (.apply). Loading (type checks, bounds,
 * defaults, required and unknown fields, cfg_load.c), emitting
 * (cfg_emit.c), comparing and the live diff of a REST change (cfg_diff.c)
 * all walk these tables, so a scalar added here is loaded, validated,
 * emitted, compared and classified without touching anything else; a key
 * nobody classified fails the unit test that walks the table
 * (tests/unit/cfg/cfg_table_test.cc), and so does docs/config.md when its
 * list of live and restart-only keys no longer matches.
 *
 * .apply is inherited: an object that is live as a whole says so once
 * (generalOptions); a key of a mixed object (runtime.limits) says it
 * itself. An object marked restart-only (runtime.dpdk) is the unit of the
 * restart diff: compared whole and named once, as the DPDK port is set up
 * once from all of it.
 *
 * What a table cannot say (arrays of peers, sets and error responses,
 * aliases, the listen list, the optional local NRF) is in F_CUSTOM hooks,
 * each with its JSON type and a valid example; the rules that span several
 * fields are in cfg_check.c.
 *
 * The tables nest, so C wants the inner ones first: cfg_root_fields, at the
 * end, is the document. The tables of one array element (peers, sets, error
 * responses, listen entries, the local NRF) belong to their F_CUSTOM key
 * and apply as it does.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cfg_int.h"
#include "nrf_cfg.h"

/* errorResponses: a valid list other than the default (empty). */
#define ERROR_RESPONSES_EXAMPLE                                                \
	"[{\"errorCondition\": \"NRF_Not_Reachable\", \"errorCode\": 503}]"

#define FLD(n, t, T, m) .name = (n), .type = (t), .off = offsetof(T, m)
/* How a change of the key applies (.apply); neither: as its object. */
#define LIVE .apply = NRF_CFG_APPLY_LIVE
#define RESTART_ONLY .apply = NRF_CFG_APPLY_RESTART

const char *const cfg_status_names[] = {"DISABLED", "ENABLED", NULL};
static const char *const scheme_names[] = {"http", "https", NULL};
static const char *const scope_names[] = {"HOST", "SET", NULL};
static const char *const transport_names[] = {"kernel", "dpdk", NULL};
static const char *const alog_format_names[] = {"text", "json", NULL};
static const char *const key_by_names[] = {"address", "nfInstance", NULL};
const char *const cfg_cond_names[] = {
	"NRF_Forwarding_Loop_Detection",
	"NRF_Forwarding_Loop_Prevention",
	"NRF_Forwarding_Hop_Limit",
	"NRF_Not_Reachable",
	"NRF_Forwarding_Overload",
	"NRF_Local_Unavailable",
	"NRF_Client_Limit",
	NULL,
};

const struct field cfg_general_fields[] = {
	{FLD("ocnrfHost", F_STR, struct nrf_cfg_general, host),
		.required = true, .def_str = "", .check = cfg_check_host},
	{FLD("ocnrfPort", F_U16, struct nrf_cfg_general, port),
		.required = true, .min = 1, .max = 65535},
	{FLD("nrfSetId", F_STR, struct nrf_cfg_general, nrf_set_id), .def_str = ""},
	{.name = "aliases", .type = F_CUSTOM, .load = cfg_load_aliases, .emit = cfg_emit_aliases,
		.eq = cfg_eq_aliases, .jtype = "array",
		.example = "[\"nrf-alias.example.com:8080\"]"},
	{FLD("viaOnResponses", F_BOOL, struct nrf_cfg_general, via_on_responses),
		.def = true},
	{NULL},
};

static const struct field trigger_codes_fields[] = {
	{FLD("pattern", F_PATTERN, struct nrf_cfg_forwarding, trigger_pattern),
		.off2 = offsetof(struct nrf_cfg_forwarding, triggers),
		.def_str = "^404$"},
	{NULL},
};

static const struct field trigger_fields[] = {
	{.name = "statusCodes", .type = F_OBJECT, .sub = trigger_codes_fields},
	{FLD("emptyDiscoveryResult", F_BOOL, struct nrf_cfg_forwarding,
		empty_discovery_result), .def = true},
	{NULL},
};

static const struct field reroute_fields[] = {
	{FLD("pattern", F_PATTERN, struct nrf_cfg_forwarding, reroute_pattern),
		.off2 = offsetof(struct nrf_cfg_forwarding, reroute),
		.def_str = "^5[0-9]{2}$"},
	{NULL},
};

/* One peer of nrfHostConfig / nrfHostConfigList (element table). */
const struct field cfg_peer_fields[] = {
	{FLD("apiVersion", F_STR, struct nrf_cfg_peer, api_version),
		.def_str = "v1", .check = cfg_check_api_version},
	{FLD("scheme", F_ENUM, struct nrf_cfg_peer, scheme),
		.names = scheme_names, .def = NRF_SCHEME_HTTP},
	{FLD("fqdn", F_STR, struct nrf_cfg_peer, fqdn), .def_str = "", .check = cfg_check_fqdn},
	{FLD("ipv4Address", F_STR, struct nrf_cfg_peer, ipv4), .def_str = "",
		.check = cfg_check_ipv4},
	{FLD("ipv6Address", F_STR, struct nrf_cfg_peer, ipv6), .def_str = "",
		.check = cfg_check_ipv6},
	/* 0 = by scheme, resolved in load_peer() */
	{FLD("port", F_U16, struct nrf_cfg_peer, port), .min = 1, .max = 65535, .def = 0},
	{FLD("apiPrefix", F_STR, struct nrf_cfg_peer, api_prefix), .def_str = "",
		.check = cfg_check_api_prefix},
	{FLD("priority", F_U32, struct nrf_cfg_peer, priority),
		.min = 0, .max = 65535, .def = 1},
	{FLD("rewriteLinks", F_BOOL, struct nrf_cfg_peer, rewrite_links), .def = false},
	{NULL},
};

/* One errorResponses[] entry (element table). errorCause, errorTitle,
 * errorDetail: NULL = the condition's default. */
const struct field cfg_error_fields[] = {
	{FLD("errorCondition", F_ENUM, struct err_entry, cond), .required = true,
		.names = cfg_cond_names, .def = -1},
	{FLD("errorCode", F_U16, struct err_entry, code), .required = true,
		.min = 100, .max = 599},
	{FLD("errorCause", F_STR, struct err_entry, cause)},
	{FLD("errorTitle", F_STR, struct err_entry, title)},
	{FLD("errorDetail", F_STR, struct err_entry, detail)},
	{FLD("retryAfter", F_STR, struct err_entry, retry_after), .def_str = "",
		.check = cfg_check_retry_after},
	{FLD("redirectUrl", F_STR, struct err_entry, redirect_url), .def_str = "",
		.check = cfg_check_header_value},
	{NULL},
};

const struct field cfg_fwd_fields[] = {
	{FLD("featureStatus", F_STATUS, struct nrf_cfg_forwarding, enabled), .def = false},
	{FLD("discoveryStatus", F_STATUS, struct nrf_cfg_forwarding, discovery), .def = true},
	{FLD("profileRetrievalStatus", F_STATUS, struct nrf_cfg_forwarding,
		profile_retrieval), .def = true},
	{FLD("subscriptionStatus", F_STATUS, struct nrf_cfg_forwarding, subscription),
		.def = true},
	{FLD("accessTokenStatus", F_STATUS, struct nrf_cfg_forwarding, access_token),
		.def = true},
	{.name = "forwardingTriggers", .type = F_OBJECT, .sub = trigger_fields},
	{.name = "nrfRerouteOnResponseHttpStatusCodes", .type = F_OBJECT,
		.sub = reroute_fields},
	{FLD("maxForwardAttempts", F_U32, struct nrf_cfg_forwarding, max_forward_attempts),
		.min = 1, .max = NRF_CFG_MAX_ATTEMPTS, .def = 2},
	{FLD("maxViaMembers", F_U32, struct nrf_cfg_forwarding, max_via_members),
		.min = 1, .max = NRF_CFG_MAX_VIA_MEMBERS, .def = 16},
	{.name = "nrfHostConfig", .type = F_CUSTOM, .load = cfg_load_fwd_peers,
		.emit = cfg_emit_fwd_peers, .jtype = "array",
		.example = "[{\"fqdn\": \"nrf-e.example.com\"}]"},
	{.name = "errorResponses", .type = F_CUSTOM, .load = cfg_load_errors,
		.emit = cfg_emit_errors, .arg = NRF_MODE_FORWARDING, .jtype = "array",
		.example = ERROR_RESPONSES_EXAMPLE},
	{NULL},
};

/* One NRF set of staticNrfConfigList (element table). */
const struct field cfg_set_fields[] = {
	{FLD("nrfSetId", F_STR, struct nrf_cfg_set, nrf_set_id), .required = true,
		.def_str = "", .check = cfg_check_nonempty_set_id},
	{.name = "nrfHostConfigList", .type = F_CUSTOM, .required = true,
		.load = cfg_load_set_hosts, .emit = cfg_emit_set_hosts, .jtype = "array"},
	{NULL},
};

static const struct field growth_host_fields[] = {
	{.name = "staticNrfConfigList", .type = F_CUSTOM, .load = cfg_load_sets,
		.emit = cfg_emit_sets, .jtype = "array",
		.example = "[{\"nrfSetId\": \"set9\", "
			   "\"nrfHostConfigList\": [{\"fqdn\": \"nrf-g.example.com\"}]}]"},
	{NULL},
};

const struct field cfg_growth_fields[] = {
	{FLD("featureStatus", F_STATUS, struct nrf_cfg_growth, enabled), .def = false},
	{FLD("loopPreventionScope", F_ENUM, struct nrf_cfg_growth, scope),
		.names = scope_names, .def = NRF_SCOPE_HOST},
	{.name = "nrfHostConfig", .type = F_OBJECT, .sub = growth_host_fields},
	{.name = "errorResponses", .type = F_CUSTOM, .load = cfg_load_errors,
		.emit = cfg_emit_errors, .arg = NRF_MODE_GROWTH, .jtype = "array",
		.example = ERROR_RESPONSES_EXAMPLE},
	{NULL},
};

static const struct field growth_outer_fields[] = {
	{FLD("nrfForwardingOptions", F_OBJECT, struct nrf_cfg, growth),
		.sub = cfg_growth_fields},
	{NULL},
};

/* One runtime.listen entry (element table). */
const struct field cfg_listen_fields[] = {
	{FLD("address", F_STR, struct nrf_cfg_listen, address), .def_str = "0.0.0.0",
		.check = cfg_check_bind_address},
	{FLD("port", F_U16, struct nrf_cfg_listen, port), .required = true,
		.min = 1, .max = 65535},
	{FLD("tls", F_BOOL, struct nrf_cfg_listen, tls), .def = false},
	{NULL},
};

/* runtime.localNrf when it is an object (element table). */
const struct field cfg_endpoint_fields[] = {
	{FLD("scheme", F_ENUM, struct nrf_cfg_endpoint, scheme),
		.names = scheme_names, .def = NRF_SCHEME_HTTP},
	{FLD("address", F_STR, struct nrf_cfg_endpoint, address), .required = true,
		.def_str = "", .check = cfg_check_host},
	/* 0 = by scheme, resolved in cfg_load_local_nrf() */
	{FLD("port", F_U16, struct nrf_cfg_endpoint, port), .min = 1, .max = 65535},
	{FLD("rewriteLinks", F_BOOL, struct nrf_cfg_endpoint, rewrite_links), .def = false},
	{NULL},
};

static const struct field mgmt_fields[] = {
	{FLD("address", F_STR, struct nrf_cfg_runtime, mgmt_address),
		.def_str = "127.0.0.1", .check = cfg_check_bind_address, RESTART_ONLY},
	{FLD("port", F_U16, struct nrf_cfg_runtime, mgmt_port),
		.min = 0, .max = 65535, .def = 9090, RESTART_ONLY},
	{NULL},
};

static const struct field timeout_fields[] = {
	{FLD("connectMs", F_U32, struct nrf_cfg_runtime, connect_ms),
		.min = 1, .max = 600000, .def = 1000},
	{FLD("perTryMs", F_U32, struct nrf_cfg_runtime, per_try_ms),
		.min = 1, .max = 600000, .def = 2000},
	{FLD("requestMs", F_U32, struct nrf_cfg_runtime, request_ms),
		.min = 1, .max = 600000, .def = 5000},
	/* What a client or peer can hold open (docs/config.md, "Timeouts"). */
	{FLD("handshakeMs", F_U32, struct nrf_cfg_runtime, handshake_ms),
		.min = 1, .max = 600000, .def = 5000},
	{FLD("requestHeaderMs", F_U32, struct nrf_cfg_runtime, request_header_ms),
		.min = 1, .max = 600000, .def = 5000},
	{FLD("requestBodyMs", F_U32, struct nrf_cfg_runtime, request_body_ms),
		.min = 1, .max = 600000, .def = 10000},
	{FLD("idleMs", F_U32, struct nrf_cfg_runtime, idle_ms),
		.min = 1, .max = 3600000, .def = 60000},
	{FLD("stalledReaderMs", F_U32, struct nrf_cfg_runtime, stalled_reader_ms),
		.min = 1, .max = 600000, .def = 10000},
	{FLD("upstreamIdleMs", F_U32, struct nrf_cfg_runtime, upstream_idle_ms),
		.min = 0, .max = 3600000, .def = 60000},
	/* Graceful stop (docs/config.md "Timeouts"): read when the signal
	 * comes, so live like the rest of timeouts. */
	{FLD("drainMs", F_U32, struct nrf_cfg_runtime, drain_ms),
		.min = 0, .max = 600000, .def = 5000},
	/* Before drainMs (decision 0060): /readyz 503 with the listeners still
	 * open, then listeners closed but no GOAWAY yet. */
	{FLD("unreadyMs", F_U32, struct nrf_cfg_runtime, unready_ms),
		.min = 0, .max = 600000, .def = 0},
	{FLD("goawayDelayMs", F_U32, struct nrf_cfg_runtime, goaway_delay_ms),
		.min = 0, .max = 600000, .def = 0},
	{NULL},
};

/* runtime.limits.perClient (decision 0055): read by each worker at every
 * snapshot switch (rt_limit.c); burst without ratePerSecond is refused in
 * check_limits(). */
static const struct field per_client_fields[] = {
	{FLD("maxStreams", F_U32, struct nrf_cfg_client_limits, max_streams),
		.min = 0, .max = 1000000, .def = 0},
	{FLD("ratePerSecond", F_U32, struct nrf_cfg_client_limits, rate_per_second),
		.min = 0, .max = 10000000, .def = 0},
	{FLD("burst", F_U32, struct nrf_cfg_client_limits, burst),
		.min = 0, .max = 10000000, .def = 0},
	{FLD("keyBy", F_ENUM, struct nrf_cfg_client_limits, key_by),
		.names = key_by_names, .def = NRF_KEY_BY_ADDRESS},
	{NULL},
};

static const struct field limit_fields[] = {
	{FLD("maxConnections", F_U32, struct nrf_cfg_runtime, max_connections),
		.min = 1, .max = 1000000, .def = 10000, LIVE},
	{FLD("maxConcurrentStreams", F_U32, struct nrf_cfg_runtime,
		max_concurrent_streams), .min = 1, .max = 65535, .def = 128, RESTART_ONLY},
	{FLD("maxHeaderBytes", F_U32, struct nrf_cfg_runtime, max_header_bytes),
		.min = 1024, .max = 1048576, .def = 16384, RESTART_ONLY},
	{FLD("maxBodyBytes", F_U32, struct nrf_cfg_runtime, max_body_bytes),
		.min = 0, .max = 1073741824, .def = 1048576, RESTART_ONLY},
	/* A memory bound far above a burst: requests are shed by their
	 * waiting time (queueTargetMs), not by a count (decision 0053). */
	{FLD("peerQueueDepth", F_U32, struct nrf_cfg_runtime, peer_queue_depth),
		.min = 1, .max = 1048576, .def = 65536, LIVE},
	{FLD("queueTargetMs", F_U32, struct nrf_cfg_runtime, queue_target_ms),
		.min = 1, .max = 600000, .def = 100, LIVE},
	{FLD("queueIntervalMs", F_U32, struct nrf_cfg_runtime, queue_interval_ms),
		.min = 0, .max = 600000, .def = 100, LIVE},
	/* Bytes (u32: up to 4 GiB - 1); decision 0018. */
	{FLD("maxBufferedBytes", F_U32, struct nrf_cfg_runtime, max_buffered_bytes),
		.min = 4194304, .max = 4294967295LL, .def = 1073741824, LIVE},
	{FLD("perClient", F_OBJECT, struct nrf_cfg_runtime, per_client),
		.sub = per_client_fields, LIVE},
	{NULL},
};

/* runtime.health: a held-down upstream comes back within
 * probeIntervalMaxMs (+ one round trip) of its return; the interval rule
 * is in check_timeouts(). */
static const struct field health_fields[] = {
	{FLD("probeIntervalMs", F_U32, struct nrf_cfg_runtime, probe_interval_ms),
		.min = 10, .max = 60000, .def = 250},
	{FLD("probeIntervalMaxMs", F_U32, struct nrf_cfg_runtime, probe_interval_max_ms),
		.min = 10, .max = 600000, .def = 500},
	{FLD("probeTimeoutMs", F_U32, struct nrf_cfg_runtime, probe_timeout_ms),
		.min = 10, .max = 60000, .def = 500},
	/* decision 0052: one connection that dies serving never holds an
	 * upstream down; this many failed tries in a row do. */
	{FLD("consecutiveFailures", F_U32, struct nrf_cfg_runtime, consecutive_failures),
		.min = 1, .max = 1000, .def = 5},
	{NULL},
};

/* runtime.dns (docs/behaviour.md "Peer names"): read by the resolver
 * thread before each round (rt_dns.c); minTtlMs <= maxTtlMs is in
 * check_timeouts(). */
static const struct field dns_fields[] = {
	{FLD("refreshMs", F_U32, struct nrf_cfg_runtime, dns_refresh_ms),
		.min = 0, .max = 86400000, .def = 30000},
	{FLD("minTtlMs", F_U32, struct nrf_cfg_runtime, dns_min_ttl_ms),
		.min = 100, .max = 86400000, .def = 1000},
	{FLD("maxTtlMs", F_U32, struct nrf_cfg_runtime, dns_max_ttl_ms),
		.min = 100, .max = 86400000, .def = 300000},
	{FLD("timeoutMs", F_U32, struct nrf_cfg_runtime, dns_timeout_ms),
		.min = 10, .max = 60000, .def = 2000},
	{NULL},
};

/* runtime.accessLog (docs/access-log.md); a path that cannot be opened
 * is found when the data path starts (nrf_rt_create()). The file is
 * opened once at start (and reopened on SIGUSR1): its path is
 * restart-only; format, sampling, rate limit and flush interval are read
 * per snapshot by the workers. */
static const struct field alog_fields[] = {
	{FLD("path", F_STR, struct nrf_cfg_access_log, path), .def_str = "", RESTART_ONLY},
	{FLD("format", F_ENUM, struct nrf_cfg_access_log, format),
		.names = alog_format_names, .def = NRF_ALOG_TEXT, LIVE},
	{FLD("sample", F_U32, struct nrf_cfg_access_log, sample),
		.min = 1, .max = 1000000, .def = 1, LIVE},
	{FLD("maxLinesPerSecond", F_U32, struct nrf_cfg_access_log, max_per_second),
		.min = 0, .max = 10000000, .def = 0, LIVE},
	{FLD("flushMs", F_U32, struct nrf_cfg_access_log, flush_ms),
		.min = 10, .max = 10000, .def = 200, LIVE},
	{NULL},
};

/* runtime.requestId (docs/access-log.md, "Request ids"). */
static const struct field rid_fields[] = {
	{FLD("generate", F_BOOL, struct nrf_cfg_runtime, request_id_generate), .def = true},
	{NULL},
};

/* The DPDK port (struct nrf_tp_dpdk_conf); rules across fields in
 * check_dpdk(). */
const struct field cfg_dpdk_fields[] = {
	{FLD("ipv4Address", F_STR, struct nrf_cfg_dpdk, ipv4_address), .def_str = "",
		.check = cfg_check_ipv4},
	{FLD("prefixLength", F_U16, struct nrf_cfg_dpdk, prefix_length),
		.min = 1, .max = 32, .def = 24},
	{FLD("gateway", F_STR, struct nrf_cfg_dpdk, gateway), .def_str = "",
		.check = cfg_check_ipv4},
	/* IPv6, dual stack with the above (decision 0065). */
	{FLD("ipv6Address", F_STR, struct nrf_cfg_dpdk, ipv6_address), .def_str = "",
		.check = cfg_check_ipv6, .example = "\"2001:db8::10\""},
	{FLD("ipv6PrefixLength", F_U16, struct nrf_cfg_dpdk, ipv6_prefix_length),
		.min = 1, .max = 128, .def = 64},
	{FLD("ipv6Gateway", F_STR, struct nrf_cfg_dpdk, ipv6_gateway), .def_str = "",
		.check = cfg_check_ipv6, .example = "\"fe80::1\""},
	{FLD("portId", F_CUSTOM, struct nrf_cfg_dpdk, port_id),
		.load = cfg_load_port_id, .emit = cfg_emit_port_id, .eq = cfg_eq_port_id,
		.jtype = "integer or null", .example = "0"},
	{FLD("rxDescriptors", F_U32, struct nrf_cfg_dpdk, rx_descriptors),
		.min = 64, .max = 16384, .def = 1024},
	{FLD("txDescriptors", F_U32, struct nrf_cfg_dpdk, tx_descriptors),
		.min = 64, .max = 16384, .def = 1024},
	{FLD("mbufs", F_U32, struct nrf_cfg_dpdk, mbufs),
		.min = 1023, .max = 1048575, .def = 8191},
	{FLD("mbufCache", F_U32, struct nrf_cfg_dpdk, mbuf_cache),
		.min = 0, .max = 512, .def = 256},
	{FLD("mtu", F_U16, struct nrf_cfg_dpdk, mtu), .min = 0, .max = 9000, .def = 0},
	{FLD("vlan", F_U16, struct nrf_cfg_dpdk, vlan), .min = 0, .max = 4094, .def = 0},
	{FLD("burst", F_U32, struct nrf_cfg_dpdk, burst), .min = 1, .max = 64, .def = 32},
	{FLD("idleSpin", F_U32, struct nrf_cfg_dpdk, idle_spin),
		.min = 0, .max = 1000000, .def = 512},
	{FLD("idleSleepUs", F_U32, struct nrf_cfg_dpdk, idle_sleep_us),
		.min = 0, .max = 100000, .def = 100},
	{FLD("idleSleepMaxUs", F_U32, struct nrf_cfg_dpdk, idle_sleep_max_us),
		.min = 0, .max = 1000000, .def = 1000},
	{FLD("arpProbeMs", F_U32, struct nrf_cfg_dpdk, arp_probe_ms),
		.min = 0, .max = 10000, .def = 300},
	{FLD("linkWaitMs", F_U32, struct nrf_cfg_dpdk, link_wait_ms),
		.min = 0, .max = 60000, .def = 2000},
	/* Floods (docs/tuning.md "Floods"; decisions 0056, 0057, 0062). */
	{FLD("arpRequestsPerSecond", F_U32, struct nrf_cfg_dpdk, arp_rate),
		.min = 1, .max = 1000000, .def = 200},
	{FLD("arpStrangerRequestsPerSecond", F_U32, struct nrf_cfg_dpdk, arp_stranger_rate),
		.min = 1, .max = 1000000, .def = 20},
	{FLD("strayResetsPerSecond", F_U32, struct nrf_cfg_dpdk, stray_rst_rate),
		.min = 1, .max = 1000000, .def = 200},
	{FLD("challengeAcksPerSecond", F_U32, struct nrf_cfg_dpdk, challenge_ack_rate),
		.min = 1, .max = 1000000, .def = 1000},
	{FLD("synCookieThreshold", F_U32, struct nrf_cfg_dpdk, syn_cookie_from),
		.min = 1, .max = 254, .def = 128},
	{FLD("synRcvdTimeoutMs", F_U32, struct nrf_cfg_dpdk, syn_rcvd_timeout_ms),
		.min = 1000, .max = 20000, .def = 20000},
	{FLD("synAckRetries", F_U32, struct nrf_cfg_dpdk, synack_retries),
		.min = 1, .max = 12, .def = 5},
	{NULL},
};

/* runtime.tls / runtime.tlsClient (docs/tls.md); files are loaded by the
 * runtime, consistency is checked in check_tls(). */
static const struct field tls_fields[] = {
	{FLD("certFile", F_STR, struct nrf_cfg_tls, cert_file), .def_str = ""},
	{FLD("keyFile", F_STR, struct nrf_cfg_tls, key_file), .def_str = ""},
	{FLD("caFile", F_STR, struct nrf_cfg_tls, ca_file), .def_str = ""},
	{FLD("verifyClient", F_BOOL, struct nrf_cfg_tls, verify_client), .def = false},
	{FLD("cipherSuites", F_STR, struct nrf_cfg_tls, cipher_suites), .def_str = ""},
	{FLD("ciphers", F_STR, struct nrf_cfg_tls, ciphers), .def_str = ""},
	{FLD("groups", F_STR, struct nrf_cfg_tls, groups), .def_str = ""},
	{NULL},
};

static const struct field tls_client_fields[] = {
	{FLD("caFile", F_STR, struct nrf_cfg_tls_client, ca_file), .def_str = ""},
	{FLD("certFile", F_STR, struct nrf_cfg_tls_client, cert_file), .def_str = ""},
	{FLD("keyFile", F_STR, struct nrf_cfg_tls_client, key_file), .def_str = ""},
	{FLD("cipherSuites", F_STR, struct nrf_cfg_tls_client, cipher_suites), .def_str = ""},
	{FLD("ciphers", F_STR, struct nrf_cfg_tls_client, ciphers), .def_str = ""},
	{FLD("groups", F_STR, struct nrf_cfg_tls_client, groups), .def_str = ""},
	{NULL},
};

const struct field cfg_runtime_fields[] = {
	/* sockets bound at start, one per worker */
	{.name = "listen", .type = F_CUSTOM, .load = cfg_load_listen, .emit = cfg_emit_listen,
		.eq = cfg_eq_listen, .jtype = "array", RESTART_ONLY,
		.example = "[{\"address\": \"0.0.0.0\", \"port\": 18080}]"},
	{FLD("localNrf", F_CUSTOM, struct nrf_cfg_runtime, local_nrf),
		.load = cfg_load_local_nrf, .emit = cfg_emit_local_nrf, .eq = cfg_eq_local_nrf,
		.jtype = "object or null", LIVE,
		.example = "{\"address\": \"192.0.2.20\", \"port\": 8090}"},
	/* per key: the listener of the REST API */
	{.name = "management", .type = F_OBJECT, .sub = mgmt_fields},
	{.name = "timeouts", .type = F_OBJECT, .sub = timeout_fields, LIVE},
	/* per key: SETTINGS and buffers of the h2 contexts are fixed at start */
	{.name = "limits", .type = F_OBJECT, .sub = limit_fields},
	{.name = "health", .type = F_OBJECT, .sub = health_fields, LIVE},
	{.name = "dns", .type = F_OBJECT, .sub = dns_fields, LIVE},
	/* per key: the file is opened at start */
	{FLD("accessLog", F_OBJECT, struct nrf_cfg_runtime, access_log), .sub = alog_fields},
	{.name = "requestId", .type = F_OBJECT, .sub = rid_fields, LIVE},
	{FLD("transport", F_ENUM, struct nrf_cfg_runtime, transport),
		.names = transport_names, .def = NRF_TRANSPORT_KERNEL, RESTART_ONLY},
	/* the port is set up once: compared whole, named "/runtime/dpdk" */
	{FLD("dpdk", F_OBJECT, struct nrf_cfg_runtime, dpdk), .sub = cfg_dpdk_fields, RESTART_ONLY},
	/* certificates are loaded per snapshot (nrf_rt_snap_create()) */
	{FLD("tls", F_OBJECT, struct nrf_cfg_runtime, tls), .sub = tls_fields, LIVE},
	{FLD("tlsClient", F_OBJECT, struct nrf_cfg_runtime, tls_client),
		.sub = tls_client_fields, LIVE},
	{NULL},
};

const struct field cfg_root_fields[] = {
	/* identities, peers, switches, error responses: every snapshot */
	{FLD("generalOptions", F_OBJECT, struct nrf_cfg, general), .sub = cfg_general_fields,
		LIVE},
	{FLD("forwardingOptions", F_OBJECT, struct nrf_cfg, fwd), .sub = cfg_fwd_fields,
		LIVE},
	{.name = "nrfGrowth", .type = F_OBJECT, .sub = growth_outer_fields, LIVE},
	/* per key */
	{FLD("runtime", F_OBJECT, struct nrf_cfg, rt), .sub = cfg_runtime_fields},
	{NULL},
};

/* ------------------------------------------------------------------ */
/* The table as a flat list of keys and restart units.                 */

/* Room for the table as it is with a margin; the unit test checks that
 * every key of an emitted document is listed, so an overflow shows. */
#define MAX_KEYS 192
#define MAX_UNITS 32
#define POINTER_BYTES 12288

static struct {
	pthread_once_t once;
	struct nrf_cfg_key keys[MAX_KEYS];
	size_t n_keys;
	struct cfg_unit units[MAX_UNITS];
	size_t n_units;
	char text[POINTER_BYTES];
	size_t used;
} ix = {.once = PTHREAD_ONCE_INIT};

static const char *
ix_pointer(const char *path)
{
	size_t n = strlen(path) + 1;
	char *p;

	if (POINTER_BYTES - ix.used < n)
		return NULL;
	p = ix.text + ix.used;
	memcpy(p, path, n);
	ix.used += n;
	return p;
}

static const char *
key_type(const struct field *f)
{
	switch (f->type) {
	case F_STR:
	case F_STATUS:
	case F_ENUM:
	case F_PATTERN:
		return "string";
	case F_BOOL:
		return "boolean";
	case F_U16:
	case F_U32:
		return "integer";
	case F_OBJECT:
		return "object";
	case F_CUSTOM:
		return f->jtype;
	}
	return NULL;
}

/*
 * @p apply and @p at: the class inherited from the enclosing objects and
 * where it was decided; @p in_unit: inside a restart-only object, which is
 * compared whole, so a key in it cannot be live (a contradiction is left
 * unclassified for the unit test to name).
 */
static void
ix_walk(const struct field *fields, size_t base_off, char *path, size_t len,
	enum nrf_cfg_apply apply, const char *at, bool in_unit)
{
	for (const struct field *f = fields; f->name != NULL; f++) {
		enum nrf_cfg_apply a = apply;
		const char *a_at = at;
		bool unit = in_unit;
		const char *ptr;

		/* names are plain words: no "~0" / "~1" escapes needed */
		snprintf(path + len, 512 - len, "/%s", f->name);
		ptr = ix_pointer(path);
		if (ptr == NULL)
			return;
		if (in_unit) {
			if (f->apply != NRF_CFG_APPLY_UNSET && f->apply != NRF_CFG_APPLY_RESTART) {
				a = NRF_CFG_APPLY_UNSET;
				a_at = NULL;
			}
		} else if (f->apply != NRF_CFG_APPLY_UNSET) {
			a = f->apply;
			a_at = ptr;
			if (a == NRF_CFG_APPLY_RESTART && ix.n_units < MAX_UNITS) {
				ix.units[ix.n_units++] = (struct cfg_unit){f, base_off, ptr};
				unit = true;
			}
		}
		if (f->type == F_OBJECT) {
			ix_walk(f->sub, base_off + f->off, path, strlen(path), a, a_at, unit);
			continue;
		}
		if (ix.n_keys == MAX_KEYS)
			return;
		ix.keys[ix.n_keys++] = (struct nrf_cfg_key){
			.pointer = ptr,
			.type = key_type(f),
			.apply = a,
			.decided_at = a_at,
			.required = f->required,
			.min = f->type == F_U16 || f->type == F_U32 ? f->min : 0,
			.max = f->type == F_U16 || f->type == F_U32 ? f->max : 0,
			.names = f->type == F_STATUS ? cfg_status_names
				: f->type == F_ENUM ? f->names : NULL,
			.example = f->example,
		};
	}
}

static void
ix_build(void)
{
	char path[512] = "";

	ix_walk(cfg_root_fields, 0, path, 0, NRF_CFG_APPLY_UNSET, NULL, false);
}

size_t
nrf_cfg_keys(const struct nrf_cfg_key **keys)
{
	pthread_once(&ix.once, ix_build);
	if (keys != NULL)
		*keys = ix.keys;
	return ix.n_keys;
}

size_t
cfg_restart_units(const struct cfg_unit **units)
{
	pthread_once(&ix.once, ix_build);
	*units = ix.units;
	return ix.n_units;
}

/* ------------------------------------------------------------------ */
/* Names.                                                              */

const char *
nrf_cfg_transport_name(enum nrf_cfg_transport t)
{
	if ((int)t < 0 || t > NRF_TRANSPORT_DPDK)
		return NULL;
	return transport_names[t];
}

const char *
nrf_cfg_cond_name(enum nrf_cfg_cond cond)
{
	if ((int)cond < 0 || cond >= NRF_COND_COUNT)
		return NULL;
	return cfg_cond_names[cond];
}

const char *
nrf_cfg_mode_name(enum nrf_cfg_mode mode)
{
	switch (mode) {
	case NRF_MODE_FORWARDING:
		return "forwarding";
	case NRF_MODE_GROWTH:
		return "growth";
	default:
		return NULL;
	}
}
