/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_CFG_H
#define NRF_CFG_H

/**
 * @file
 * Configuration model: the JSON document of docs/behaviour.md §5 loaded into an immutable
 * snapshot.
 *
 * A snapshot is built whole on the control thread (load + validate + derive),
 * then only read. It may be read by any number of threads concurrently and
 * is freed by its creator once no reader holds it (rt uses RCU for that).
 * Loading never half-applies anything: either every field is valid and a
 * complete snapshot is returned, or NULL is returned with every problem
 * listed.
 *
 * All strings in a snapshot are owned by it, NUL-terminated, never NULL
 * (absent optional strings are ""), and live as long as the snapshot.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Upper bounds, enforced by validation. */
#define NRF_CFG_MAX_PEERS 1024     /**< peers of both modes together */
#define NRF_CFG_MAX_SETS 64        /**< growth NRF sets */
#define NRF_CFG_MAX_ALIASES 16     /**< generalOptions.aliases */
#define NRF_CFG_MAX_LISTEN 8       /**< runtime.listen entries */
#define NRF_CFG_MAX_ATTEMPTS 16    /**< forwardingOptions.maxForwardAttempts */
#define NRF_CFG_MAX_VIA_MEMBERS 1024 /**< forwardingOptions.maxViaMembers */
#define NRF_CFG_NO_SET UINT16_MAX  /**< nrf_cfg_peer.set of a forwarding peer */

enum nrf_cfg_scheme {
	NRF_SCHEME_HTTP = 0,
	NRF_SCHEME_HTTPS = 1,
};

/** Which forwarding mode a peer or an error response belongs to. */
enum nrf_cfg_mode {
	NRF_MODE_FORWARDING = 0, /**< forwardingOptions: across segments */
	NRF_MODE_GROWTH = 1,     /**< nrfGrowth.nrfForwardingOptions: across sets */
	NRF_MODE_COUNT
};

/** nrfGrowth.nrfForwardingOptions.loopPreventionScope */
enum nrf_cfg_scope {
	NRF_SCOPE_HOST = 0, /**< skip only the host found in Via */
	NRF_SCOPE_SET = 1,  /**< one host of a set in Via skips the whole set */
};

/** errorResponses[].errorCondition */
enum nrf_cfg_cond {
	NRF_COND_LOOP_DETECTION = 0, /**< NRF_Forwarding_Loop_Detection */
	NRF_COND_LOOP_PREVENTION,    /**< NRF_Forwarding_Loop_Prevention */
	NRF_COND_HOP_LIMIT,          /**< NRF_Forwarding_Hop_Limit */
	NRF_COND_NOT_REACHABLE,      /**< NRF_Not_Reachable */
	NRF_COND_OVERLOAD,           /**< NRF_Forwarding_Overload */
	NRF_COND_LOCAL_UNAVAILABLE,  /**< NRF_Local_Unavailable: the local NRF
				      *   failed and no peer had a positive
				      *   answer (docs/failures.md) */
	NRF_COND_CLIENT_LIMIT,       /**< NRF_Client_Limit: the client is over
				      *   runtime.limits.perClient */
	NRF_COND_COUNT
};

/** A resolved error response: the configured one, or the docs/behaviour.md §5 default. */
struct nrf_cfg_error_response {
	uint16_t status;          /**< 100..599 */
	bool configured;          /**< false: defaults of docs/behaviour.md §5 */
	const char *cause;        /**< ProblemDetails.cause */
	const char *title;        /**< ProblemDetails.title */
	const char *detail;       /**< ProblemDetails.detail ("" = omitted) */
	const char *retry_after;  /**< Retry-After value ("" = no header) */
	const char *redirect_url; /**< Location for 3xx ("" = no header) */
};

/**
 * Set of HTTP status codes selected by a pattern, compiled once at load time
 * (the pattern is a POSIX extended regular expression matched against the
 * three-digit code). Test with nrf_cfg_status_match(); never a regex per
 * request.
 */
struct nrf_cfg_status_set {
	uint64_t bits[10]; /**< bit c set <=> code c (0..639) selected */
};

/** True when @p code is in @p set. Codes outside 100..599 are never in. */
static inline bool
nrf_cfg_status_match(const struct nrf_cfg_status_set *set, int code)
{
	if (code < 100 || code > 599)
		return false;
	return (set->bits[code >> 6] >> (code & 63)) & 1;
}

/** A host:port identity as it appears in Via. */
struct nrf_cfg_hostport {
	const char *host; /**< fqdn, IPv4 text, or IPv6 text without brackets */
	uint16_t port;
};

/**
 * A peer NRF of either mode. Peers of both modes share one table,
 * nrf_cfg.peers: forwarding peers first in document order, then growth peers
 * set by set in document order; each growth set's hosts are contiguous.
 */
struct nrf_cfg_peer {
	uint16_t index;              /**< position in nrf_cfg.peers */
	enum nrf_cfg_mode mode;
	uint16_t set;                /**< growth: index in nrf_cfg.sets; else NRF_CFG_NO_SET */
	enum nrf_cfg_scheme scheme;
	const char *api_version;     /**< "v1" by default */
	const char *fqdn;            /**< "" when only addresses are configured */
	const char *ipv4;            /**< "" when not configured */
	const char *ipv6;            /**< "" when not configured; no brackets */
	uint16_t port;               /**< 1..65535; default 80 (http) / 443 (https) */
	const char *api_prefix;      /**< "" or "/prefix" without trailing slash */
	uint32_t priority;           /**< lower is preferred; default 1 */
	bool rewrite_links;          /**< rewriteLinks: its links in answers point
				      *   at the apiRoot the client used (default
				      *   false; decision 0013) */
	const char *name;            /**< display identity: first of fqdn, ipv4, [ipv6] with ":port" */
	const char *pointer;         /**< JSON pointer of this peer in the document */
	/** Identities of this peer (fqdn, ipv4, ipv6 — those configured). */
	struct nrf_cfg_hostport ids[3];
	uint8_t n_ids;
};

/** A growth NRF set: its hosts are peers[first_peer .. first_peer+n_peers-1]. */
struct nrf_cfg_set {
	const char *nrf_set_id;
	uint16_t first_peer;
	uint16_t n_peers;
};

struct nrf_cfg_general {
	const char *host;          /**< ocnrfHost (required, non-empty) */
	uint16_t port;             /**< ocnrfPort (required) */
	const char *nrf_set_id;    /**< "" when absent */
	struct nrf_cfg_hostport aliases[NRF_CFG_MAX_ALIASES];
	uint16_t n_aliases;
	const char *self_name;     /**< "host:port" as appended to Via */
	/** viaOnResponses (default true): answers relayed from the local NRF
	 *  or a peer get `via: 2.0 <self_name>` as their last field line
	 *  (RFC 9110 §7.6.3); nrfwd's own answers never carry it. */
	bool via_on_responses;
};

/** forwardingOptions */
struct nrf_cfg_forwarding {
	bool enabled;                  /**< featureStatus (default DISABLED) */
	bool discovery;                /**< discoveryStatus (default ENABLED) */
	bool profile_retrieval;        /**< profileRetrievalStatus (default ENABLED) */
	bool subscription;             /**< subscriptionStatus (default ENABLED) */
	bool access_token;             /**< accessTokenStatus (default ENABLED) */
	const char *trigger_pattern;   /**< default "^404$" */
	struct nrf_cfg_status_set triggers;
	bool empty_discovery_result;   /**< default true */
	const char *reroute_pattern;   /**< default "^5[0-9]{2}$" */
	struct nrf_cfg_status_set reroute;
	uint32_t max_forward_attempts; /**< 1..NRF_CFG_MAX_ATTEMPTS, default 2 */
	uint32_t max_via_members;      /**< 1..NRF_CFG_MAX_VIA_MEMBERS, default 16 */
	uint16_t first_peer;           /**< forwarding peers in nrf_cfg.peers */
	uint16_t n_peers;
};

/** nrfGrowth.nrfForwardingOptions */
struct nrf_cfg_growth {
	bool enabled;                  /**< featureStatus (default DISABLED) */
	enum nrf_cfg_scope scope;      /**< loopPreventionScope (default HOST) */
	uint16_t first_peer;           /**< growth peers in nrf_cfg.peers */
	uint16_t n_peers;
};

struct nrf_cfg_listen {
	const char *address; /**< default "0.0.0.0" */
	uint16_t port;       /**< required */
	bool tls;            /**< default false */
};

struct nrf_cfg_endpoint {
	bool present;        /**< false: no local NRF (pure forwarder) */
	enum nrf_cfg_scheme scheme;
	const char *address;
	uint16_t port;
	bool rewrite_links;  /**< rewriteLinks: as nrf_cfg_peer.rewrite_links */
};

/** runtime.transport: how nrfwd moves bytes (restart-only). */
enum nrf_cfg_transport {
	NRF_TRANSPORT_KERNEL = 0, /**< "kernel": kernel sockets (epoll) */
	NRF_TRANSPORT_DPDK = 1,   /**< "dpdk": one DPDK port + lwIP, poll mode */
};

/**
 * runtime.dpdk: the DPDK port and its poll loop (used with transport
 * "dpdk"; restart-only). Field meanings: struct nrf_tp_dpdk_conf and
 * docs/tuning.md.
 */
struct nrf_cfg_dpdk {
	const char *ipv4_address;    /**< ipv4Address: the port's IPv4 address; with
				      * transport "dpdk" this or ipv6Address is
				      * required; "" none */
	uint16_t prefix_length;      /**< prefixLength 1..32, default 24 */
	const char *gateway;         /**< gateway: IPv4 on the port's network; "" none */
	const char *ipv6_address;    /**< ipv6Address: the port's IPv6 address
				      * (global or unique-local); "" none */
	uint16_t ipv6_prefix_length; /**< ipv6PrefixLength 1..64, default 64 */
	const char *ipv6_gateway;    /**< ipv6Gateway: in the prefix or link-local;
				      * "" none */
	int32_t port_id;             /**< portId 0..1023; -1 (null, default): the only port */
	uint32_t rx_descriptors;     /**< rxDescriptors 64..16384, default 1024 */
	uint32_t tx_descriptors;     /**< txDescriptors 64..16384, default 1024 */
	uint32_t mbufs;              /**< mbufs 1023..1048575, default 8191 */
	uint32_t mbuf_cache;         /**< mbufCache 0..512, default 256 */
	uint16_t mtu;                /**< mtu 0 (the device's, at most 1500) or
				      * 576..9000 (jumbo frames), default 0 */
	uint16_t vlan;               /**< vlan: 802.1Q VLAN id 1..4094 of the port;
				      * 0 (default): untagged */
	uint32_t burst;              /**< burst 1..64, default 32 */
	uint32_t idle_spin;          /**< idleSpin 0..1000000, default 512 */
	uint32_t idle_sleep_us;      /**< idleSleepUs 0..100000 (0: pure poll), default 100 */
	uint32_t idle_sleep_max_us;  /**< idleSleepMaxUs 0..1000000, default 1000 */
	uint32_t arp_probe_ms;       /**< arpProbeMs 0..10000 (0: skip), default 300 */
	uint32_t link_wait_ms;       /**< linkWaitMs 0..60000, default 2000 */
	/* Floods (docs/tuning.md "Floods"): budgets per second. */
	uint32_t arp_rate;           /**< arpRequestsPerSecond 1..1000000, default 200 */
	uint32_t arp_stranger_rate;  /**< arpStrangerRequestsPerSecond, default 20 */
	uint32_t stray_rst_rate;     /**< strayResetsPerSecond, default 200 */
	uint32_t challenge_ack_rate; /**< challengeAcksPerSecond, default 1000 */
	uint32_t syn_cookie_from;    /**< synCookieThreshold 1..254, default 128 */
	uint32_t syn_rcvd_timeout_ms; /**< synRcvdTimeoutMs 1000..20000, default 20000 */
	uint32_t synack_retries;     /**< synAckRetries 1..12, default 5 */
};

/**
 * runtime.tls: the server side of every listener with tls: true (TLS 1.2
 * and 1.3, ALPN h2 only). Files are loaded when the data path starts
 * (nrf_rt_snap_create(); `nrfwd-ctl check` loads them too). docs/tls.md.
 */
struct nrf_cfg_tls {
	const char *cert_file;     /**< certFile: PEM chain, leaf first; "" = none
				    * (required when a listener has tls) */
	const char *key_file;      /**< keyFile: PEM private key; "" = certFile */
	const char *ca_file;       /**< caFile: CA bundle for client certificates */
	bool verify_client;        /**< verifyClient: require a client certificate
				    * signed by caFile (mTLS); default false */
	const char *cipher_suites; /**< cipherSuites: TLS 1.3 list; "" = OpenSSL's */
	const char *ciphers;       /**< ciphers: TLS 1.2 list; "" = OpenSSL's */
	const char *groups;        /**< groups: key exchange groups; "" = OpenSSL's */
};

/**
 * runtime.tlsClient: TLS toward https peers and an https local NRF (SNI and
 * certificate name check against the peer's fqdn, else its address).
 */
struct nrf_cfg_tls_client {
	const char *ca_file;       /**< caFile: CA bundle; "" = the system store */
	const char *cert_file;     /**< certFile: client certificate chain; "" = none */
	const char *key_file;      /**< keyFile: its key; "" = certFile */
	const char *cipher_suites; /**< as in struct nrf_cfg_tls */
	const char *ciphers;
	const char *groups;
};

/** runtime.accessLog format. */
enum nrf_cfg_alog_format {
	NRF_ALOG_TEXT = 0, /**< "text": space-separated fields (docs/access-log.md) */
	NRF_ALOG_JSON,     /**< "json": one JSON object per line */
};

/**
 * runtime.accessLog (docs/access-log.md): one line per answered request.
 * Absent (path ""): off. path is restart-only; the rest is live.
 */
struct nrf_cfg_access_log {
	const char *path;          /**< path: a file (appended, reopened on
				    *   SIGUSR1), "-" standard error, "" off */
	enum nrf_cfg_alog_format format; /**< format, default "text" */
	uint32_t sample;           /**< sample 1..1000000: one in N of the
				    *   relayed answers below 500 is logged;
				    *   nrfwd's own answers and 5xx always,
				    *   default 1 (every request) */
	uint32_t max_per_second;   /**< maxLinesPerSecond 0..10000000 per
				    *   worker (0: no limit, default); lines
				    *   over it are counted, not written */
	uint32_t flush_ms;         /**< flushMs 10..10000, default 200: how
				    *   long a line may wait in its worker's
				    *   buffer */
};

/** runtime.limits.perClient.keyBy: what tells one client from another. */
enum nrf_cfg_key_by {
	NRF_KEY_BY_ADDRESS = 0,   /**< "address": the client's IP address (an
				   *   IPv6 address whole, not its /64) */
	NRF_KEY_BY_NF_INSTANCE,   /**< "nfInstance": the NF instance id of a
				   *   well-formed User-Agent (TS 29.500
				   *   §5.2.2.2), else the IP address */
};

/**
 * runtime.limits.perClient (docs/config.md, "Per-client limits"; live):
 * limits each worker applies to each client on its own (decision 0055).
 * 0 turns a limit off; all off (the default): nothing is tracked.
 */
struct nrf_cfg_client_limits {
	uint32_t max_streams;      /**< maxStreams 0..1000000: requests of one
				    *   client in progress at once (those that
				    *   went to an upstream) */
	uint32_t rate_per_second;  /**< ratePerSecond 0..10000000: requests of
				    *   one client per second (token bucket) */
	uint32_t burst;            /**< burst 0..10000000: the bucket's size;
				    *   0 = ratePerSecond. Needs ratePerSecond */
	enum nrf_cfg_key_by key_by; /**< keyBy, default "address" */
};

struct nrf_cfg_runtime {
	struct nrf_cfg_listen listen[NRF_CFG_MAX_LISTEN];
	uint16_t n_listen;                /**< default: one, 0.0.0.0:ocnrfPort */
	struct nrf_cfg_endpoint local_nrf;
	const char *mgmt_address;         /**< default "127.0.0.1" */
	uint16_t mgmt_port;               /**< default 9090; 0 disables */
	uint32_t connect_ms;              /**< default 1000 */
	uint32_t per_try_ms;              /**< default 2000 */
	uint32_t request_ms;              /**< default 5000 */
	uint32_t handshake_ms;            /**< default 5000: TLS + preface + SETTINGS ACK */
	uint32_t request_header_ms;       /**< default 5000: a header block */
	uint32_t request_body_ms;         /**< default 10000: a whole request */
	uint32_t idle_ms;                 /**< default 60000: front, no stream */
	uint32_t stalled_reader_ms;       /**< default 10000: answer not taken */
	uint32_t upstream_idle_ms;        /**< default 60000; 0: never */
	uint32_t drain_ms;                /**< default 5000: SIGTERM/SIGINT wait for
					   *   requests in flight (at most request_ms) */
	uint32_t unready_ms;              /**< default 0: /readyz 503 while still
					   *   accepting, before the listeners close */
	uint32_t goaway_delay_ms;         /**< default 0: listeners closed, clients
					   *   served without GOAWAY this long */
	uint32_t max_connections;         /**< default 10000 */
	uint32_t max_concurrent_streams;  /**< default 128 */
	uint32_t max_header_bytes;        /**< default 16384 */
	uint32_t max_body_bytes;          /**< default 1048576 */
	uint32_t peer_queue_depth;        /**< default 65536: a memory bound only */
	uint32_t queue_target_ms;         /**< queueTargetMs, default 100: a try
					   *   that waits in a queue toward its
					   *   upstream longer than this, while
					   *   that queue has stood above it for
					   *   queue_interval_ms, is shed */
	uint32_t queue_interval_ms;       /**< queueIntervalMs, default 100 */
	uint32_t max_buffered_bytes;      /**< default 1073741824: memory budget
					   *   of the data path (all workers) */
	struct nrf_cfg_client_limits per_client; /**< limits.perClient */
	/* runtime.health (docs/failures.md "Health"): how a held-down
	 * upstream is probed back. Live. */
	uint32_t probe_interval_ms;       /**< probeIntervalMs: first probe after a
					   *   failure, default 250 */
	uint32_t probe_interval_max_ms;   /**< probeIntervalMaxMs: the interval
					   *   doubles per failed probe up to
					   *   this, default 500 */
	uint32_t consecutive_failures;    /**< consecutiveFailures: failed tries
					   *   in a row (a connection that died
					   *   serving counts once) that hold an
					   *   upstream down, default 5 */
	uint32_t probe_timeout_ms;        /**< probeTimeoutMs: connect + PING ACK
					   *   of a probe; PING ACK of any new
					   *   connection, default 500 */
	/* runtime.dns (docs/behaviour.md "Peer names"): how names of peers
	 * with an fqdn only (and a local NRF given by name) are re-resolved
	 * off the data path. Live. */
	uint32_t dns_refresh_ms;          /**< refreshMs: interval for answers
					   *   without a TTL (/etc/hosts) and
					   *   after a failure; 0: resolve once,
					   *   when the snapshot is compiled;
					   *   default 30000 */
	uint32_t dns_min_ttl_ms;          /**< minTtlMs: a DNS TTL below this is
					   *   raised to it, default 1000 */
	uint32_t dns_max_ttl_ms;          /**< maxTtlMs: a DNS TTL above this is
					   *   lowered to it, default 300000 */
	uint32_t dns_timeout_ms;          /**< timeoutMs: one resolution at most
					   *   this long, default 2000 */
	struct nrf_cfg_access_log access_log; /**< runtime.accessLog */
	/** runtime.requestId.generate: a request without x-request-id or
	 *  traceparent gets an id of nrfwd's own (default true, live). */
	bool request_id_generate;
	enum nrf_cfg_transport transport; /**< default kernel */
	struct nrf_cfg_dpdk dpdk;         /**< the DPDK port (transport dpdk) */
	struct nrf_cfg_tls tls;           /**< TLS listeners (server side) */
	struct nrf_cfg_tls_client tls_client; /**< https upstreams (client side) */
};

/** An immutable configuration snapshot. Read-only for everyone. */
struct nrf_cfg {
	uint64_t generation;
	struct nrf_cfg_general general;
	struct nrf_cfg_forwarding fwd;
	struct nrf_cfg_growth growth;
	struct nrf_cfg_runtime rt;
	/** Resolved error responses per mode and condition. */
	struct nrf_cfg_error_response errors[NRF_MODE_COUNT][NRF_COND_COUNT];
	const struct nrf_cfg_peer *peers;
	uint16_t n_peers;
	const struct nrf_cfg_set *sets;
	uint16_t n_sets;
	void *priv; /**< owned storage; do not touch */
};

/** One validation problem: where (RFC 6901 JSON pointer) and why. */
struct nrf_cfg_problem {
	char pointer[192];
	char reason[192];
};

/** Problems collected by a load; grow as needed. Zero-initialise. */
struct nrf_cfg_problems {
	struct nrf_cfg_problem *v;
	size_t n;
	size_t cap;
};

/** Free the problem list's storage and zero it. NULL-safe. */
void nrf_cfg_problems_fini(struct nrf_cfg_problems *p);

/**
 * Append one problem to @p out: @p ptr (an RFC 6901 pointer, "" for the
 * root) and a printf-style reason, both truncated to their fields. For the
 * layers that check documents of their own (the REST API, a configuration
 * source) so every problem list is built one way. Any thread; @p out is
 * the caller's. @return 0, or NRF_ENOMEM (the list is unchanged). @p out
 * NULL: nothing, 0.
 */
int nrf_cfg_problem_add(struct nrf_cfg_problems *out, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Load and validate a configuration document.
 *
 * @param text        JSON text, @p len bytes (need not be NUL-terminated;
 *                    a NUL byte inside is a parse problem).
 * @param generation  stored in the snapshot (the caller counts generations).
 * @param problems    if not NULL, receives every problem found (appended);
 *                    the caller finis it.
 * @param err         if not NULL, receives 0 or the error code.
 * @return a new snapshot (caller frees with nrf_cfg_free()), or NULL:
 *   NRF_EPARSE (not JSON; one problem with pointer "" and the line/column),
 *   NRF_ECONFIG (JSON but invalid; every problem listed),
 *   NRF_ENOMEM.
 * Control thread (or any thread not on the data path): it allocates.
 */
struct nrf_cfg *nrf_cfg_load(const char *text, size_t len, uint64_t generation,
	struct nrf_cfg_problems *problems, int *err);

/**
 * nrf_cfg_load() on a file's content. Adds NRF_EIO (cannot read; one
 * problem naming the file and the errno text).
 */
struct nrf_cfg *nrf_cfg_load_file(const char *path, uint64_t generation,
	struct nrf_cfg_problems *problems, int *err);

/** Free a snapshot. NULL-safe. Only when no reader holds it. */
void nrf_cfg_free(struct nrf_cfg *cfg);

/** Groups of the document, for nrf_cfg_emit(). */
enum nrf_cfg_group {
	NRF_CFG_ALL = 0,            /**< the whole document */
	NRF_CFG_GENERAL,            /**< generalOptions */
	NRF_CFG_FORWARDING,         /**< forwardingOptions */
	NRF_CFG_GROWTH,             /**< nrfGrowth.nrfForwardingOptions */
	NRF_CFG_RUNTIME,            /**< runtime */
};

/**
 * The snapshot as JSON text with every default filled in, keys in a stable
 * order, indented by @p indent spaces (0: compact). Loading the result of
 * NRF_CFG_ALL gives an equal snapshot (nrf_cfg_equal()).
 *
 * @return malloc'd NUL-terminated text (caller free()s), or NULL on
 *   NRF_ENOMEM (stored in @p err when not NULL).
 */
char *nrf_cfg_emit(const struct nrf_cfg *cfg, enum nrf_cfg_group group,
	int indent, int *err);

/**
 * How a change of a key reaches a running nrfwd. Every key of the
 * configuration table is one or the other (a unit test walks the table);
 * the table is the only list.
 */
enum nrf_cfg_apply {
	NRF_CFG_APPLY_UNSET = 0, /**< not classified: a table bug */
	NRF_CFG_APPLY_LIVE,      /**< taken by the next published snapshot */
	NRF_CFG_APPLY_RESTART,   /**< baked in at start (listeners, h2 contexts,
				  *   buffers, the DPDK port): a live change is
				  *   refused, the file change waits for a restart */
};

/**
 * Why a change of a restart-only key is refused live: the reason the REST
 * API gives with each pointer of nrf_cfg_restart_diff().
 */
#define NRF_CFG_RESTART_REASON                                                 \
	"takes effect only after a restart: change the configuration file and " \
	"restart nrfwd"

/**
 * One key of the configuration table as tools, docs and tests see it: a
 * value of the document that is not an object (objects are walked into;
 * arrays and objects with their own rules, such as runtime.listen or
 * runtime.localNrf, are one key each).
 */
struct nrf_cfg_key {
	const char *pointer;      /**< RFC 6901, e.g. "/runtime/limits/maxHeaderBytes" */
	const char *type;         /**< JSON type as docs/config.md writes it:
				   *   "string", "integer", "boolean", "array",
				   *   "object or null", "integer or null" */
	enum nrf_cfg_apply apply; /**< live or restart-only; UNSET only in a broken table */
	const char *decided_at;   /**< pointer of the table entry whose flag
				   *   decides @p apply: the key itself or an
				   *   object around it ("/runtime/timeouts");
				   *   a restart-only key is refused under this
				   *   pointer ("/runtime/dpdk" for every key of
				   *   runtime.dpdk). NULL when UNSET. */
	bool required;            /**< the document must have it */
	long long min;            /**< integers: lowest accepted value */
	long long max;            /**< integers: highest accepted value */
	const char *const *names; /**< strings with a fixed set of values: the
				   *   values, NULL-terminated; else NULL */
	const char *example;      /**< keys with their own rules (arrays, null):
				   *   a valid value other than the default, JSON
				   *   text; else NULL */
};

/**
 * Every key of the configuration table, in document (emit) order.
 *
 * @param keys  receives the array (static, read-only, never freed).
 * @return the number of keys. Any thread (built once, on first use).
 */
size_t nrf_cfg_keys(const struct nrf_cfg_key **keys);

/**
 * Which restart-only keys differ between two snapshots: the live diff of a
 * configuration change (@p a running, @p b the candidate). A key is
 * restart-only when the configuration table says so (struct nrf_cfg_key);
 * a restart-only object (runtime.dpdk) is compared whole and named once.
 *
 * @param ptrs  if not NULL, receives up to @p max JSON pointers, in document
 *              order (static strings: struct nrf_cfg_key.decided_at), e.g.
 *              "/runtime/listen", "/runtime/limits/maxHeaderBytes".
 * @return the number of differing restart-only keys, which may exceed
 *   @p max (0: @p b can be published live). @p a or @p b NULL: 0.
 * Any thread; reads both snapshots only.
 */
unsigned int nrf_cfg_restart_diff(const struct nrf_cfg *a, const struct nrf_cfg *b,
	const char **ptrs, unsigned int max);

/** True when two snapshots hold the same configuration (generation ignored). */
bool nrf_cfg_equal(const struct nrf_cfg *a, const struct nrf_cfg *b);

/** True when two runtime.dpdk groups are the same. */
bool nrf_cfg_dpdk_equal(const struct nrf_cfg_dpdk *a, const struct nrf_cfg_dpdk *b);

/** "kernel" / "dpdk"; NULL for an unknown value. */
const char *nrf_cfg_transport_name(enum nrf_cfg_transport t);

/** "NRF_Forwarding_Loop_Detection", …; NULL for an unknown value. */
const char *nrf_cfg_cond_name(enum nrf_cfg_cond cond);

/** "forwarding" / "growth". */
const char *nrf_cfg_mode_name(enum nrf_cfg_mode mode);

#ifdef __cplusplus
}
#endif
#endif /* NRF_CFG_H */
