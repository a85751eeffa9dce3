/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_H
#define NRF_RT_H

/**
 * @file
 * Per-worker runtime of the data path: worker threads, each with its own
 * transport loop, timers, HTTP/2 context, Hyperscan scratch, peer pools and
 * counters; the request pipeline of docs/behaviour.md §3 run on every front stream; and
 * the configuration snapshot the workers read.
 *
 * Snapshots: the control thread builds a struct nrf_rt_snap (configuration +
 * Via database + forwarding table + resolved peer addresses) and publishes
 * it with one atomic pointer store (nrf_rt_publish()). Each worker picks it
 * up at the top of a loop iteration; requests in flight finish on the
 * snapshot they started with. A retired snapshot is freed by
 * nrf_rt_reclaim() once every worker has moved past it and no request holds
 * it (quiescent-state scheme: per-worker "seen generation" + per-worker
 * reference counts, each written by its worker only).
 *
 * Threads: nrf_rt_* functions are for the control thread (the one that
 * created the runtime), except where noted. Workers never touch each other's
 * connections or sessions.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_fwd.h"
#include "nrf_tp.h"
#include "nrf_tp_dpdk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NRF_RT_MAX_WORKERS 64

/**
 * Peer connections one worker opens per peer (the local NRF included), on
 * demand: a pool grows only while tries wait for a stream. Eight, so that
 * a burst waits at the upstream (its SETTINGS_MAX_CONCURRENT_STREAMS per
 * connection) rather than in nrfwd's queue, which sheds by waiting time
 * (decision 0053).
 */
#define NRF_RT_POOL_CONNS 8

struct nrf_rt_snap;

/**
 * Build a snapshot from @p cfg (taken over: freed with the snapshot, also
 * on failure): the Via identity database (nrf_fwd_via_db_create), the
 * forwarding table, the address of every peer and of the local NRF (a
 * numeric ipv4/ipv6 address when configured, else the fqdn resolved now —
 * blocking, control thread). A peer that cannot be resolved stays in the
 * table and fails every try (logged once here).
 * TLS contexts (runtime.tls, runtime.tlsClient) are built here too: a TLS
 * file that does not load gives NRF_ECONFIG (logged with the field's
 * pointer, the file and the reason; nrf_rt_tls_check()).
 * @return NULL with @p err = NRF_ENOMEM, NRF_EMATCHER, NRF_EINVAL or
 *   NRF_ECONFIG.
 */
struct nrf_rt_snap *nrf_rt_snap_create(struct nrf_cfg *cfg, int *err);

struct nrf_rt;

/**
 * nrf_rt_snap_create() for a change of the running @p rt (REST, SIGHUP,
 * configuration source): a peer name that @p rt's resolver already knows
 * (nrf_rt_dns_start()) is not looked up again here — the snapshot takes
 * the resolver's last good address when it is published — so a change
 * never waits for DNS on a name nrfwd already resolves; only names new to
 * the configuration are resolved now (blocking). Without a resolver, the
 * same as nrf_rt_snap_create(). Same ownership and errors. Control side
 * (any thread that publishes).
 */
struct nrf_rt_snap *nrf_rt_snap_create_for(struct nrf_rt *rt, struct nrf_cfg *cfg, int *err);

/** Free a snapshot that was never published. NULL-safe. */
void nrf_rt_snap_free(struct nrf_rt_snap *s);

/** The configuration of a snapshot. */
const struct nrf_cfg *nrf_rt_snap_cfg(const struct nrf_rt_snap *s);

struct nrf_rt_stats;
struct nrf_rt_peer_stats;
struct nrf_rt_worker_info;
struct nrf_rt_dp_stats;
struct nrf_rt_loop;

/**
 * Workers in other processes (nrfwd's DPDK primary: one worker process per
 * lcore, docs/decisions/0011-mp-workers.md). Such a runtime holds the
 * configuration snapshots and no worker of its own: publishing calls
 * published(), and every question about workers and counters goes to these
 * functions, so lib/api serves both kinds of runtime unchanged. Every
 * function is called from control threads (main or API thread) and must be
 * thread-safe.
 */
struct nrf_rt_remote_ops {
	/** Snapshot @p cfg of generation @p gen was published (under the
	 *  runtime's control lock): hand it to the workers. */
	void (*published)(void *arg, const struct nrf_cfg *cfg, uint64_t gen);
	/** True when every running worker uses @p gen or newer. */
	bool (*generation_seen)(void *arg, uint64_t gen);
	/** Number of workers (running or not). */
	unsigned int (*workers)(void *arg);
	/** Worker @p i (0 or NRF_ENOENT). */
	int (*worker_get)(void *arg, unsigned int i, struct nrf_rt_worker_info *out);
	/** Counters summed over the workers. */
	void (*stats_get)(void *arg, struct nrf_rt_stats *out);
	/** Upstream counters summed over the workers (malloc'd array). */
	int (*peer_stats_get)(void *arg, struct nrf_rt_peer_stats **out, size_t *n);
	/** Poll-loop counters of worker @p i (0 or NRF_ENOENT). */
	int (*dp_stats_get)(void *arg, unsigned int i, struct nrf_rt_dp_stats *out);
	/** True while some worker serves. */
	bool (*running)(void *arg);
	/** Loop events merged over the workers (nrf_rt_loops_get()); NULL:
	 *  the workers keep none. */
	int (*loops_get)(void *arg, struct nrf_rt_loop **out, size_t *n, uint64_t *drops);
};

/** Runtime parameters. */
struct nrf_rt_params {
	unsigned int workers;          /**< 1..NRF_RT_MAX_WORKERS; 0 with @p remote */
	const struct nrf_tp_ops *tp;   /**< NULL: kernel transport;
					* nrf_tp_dpdk_ops(): exactly one worker,
					* run on the data-path lcore */
	/** Workers in other processes (then @p workers is 0 and no listener
	 *  is bound here); NULL: the workers are this runtime's threads. */
	const struct nrf_rt_remote_ops *remote;
	void *remote_arg;
};

struct nrf_rt;

/**
 * Create the runtime with its first snapshot @p snap (taken over, also on
 * failure): one loop per worker, and for every runtime.listen entry one
 * listener socket per worker on the same address (SO_REUSEPORT), bound now
 * so address problems are reported here. No thread is started yet.
 * @return NULL with @p err = NRF_EINVAL (bad parameters,
 *   more than one worker on the DPDK
 *   transport), NRF_EIO (bind/listen failed; the
 *   errno of the failure is kept), NRF_ENOMEM.
 */
struct nrf_rt *nrf_rt_create(const struct nrf_rt_params *p, struct nrf_rt_snap *snap,
	int *err);

/** Start the worker threads. @return 0 or NRF_ENOMEM (nothing started). */
int nrf_rt_start(struct nrf_rt *rt);

/**
 * Publish a new snapshot (taken over). Workers switch at their next loop
 * iteration; requests in flight finish on the snapshot they started with
 * (and with the peer connections of that snapshot); the old snapshot is
 * retired and freed by nrf_rt_reclaim().
 *
 * Live: everything in generalOptions, forwardingOptions and nrfGrowth
 * (own identity, peers added, removed, reordered or readdressed, priorities,
 * switches, error responses), runtime.localNrf, runtime.timeouts,
 * runtime.limits.maxConnections, runtime.limits.peerQueueDepth and
 * runtime.health (a new probe interval applies from the next failure). Each
 * worker keeps one connection pool per upstream; a pool whose upstream is
 * gone (or whose address, scheme, authority or apiPrefix changed) serves
 * the requests that still use it and is closed once the last one is done;
 * new upstreams get new pools (connected on demand).
 *
 * Restart-only (see nrf_rt_restart_only()): runtime.listen,
 * runtime.management, runtime.transport, runtime.dpdk and the limits baked
 * into the workers' HTTP/2 contexts and buffers (maxConcurrentStreams,
 * maxHeaderBytes, maxBodyBytes).
 *
 * A generation that does not grow is bumped past the current one.
 * Control thread (serialised with the other control functions by an
 * internal lock, so the API thread and the main thread may both call).
 * @return 0, or NRF_EINVAL when a restart-only setting differs,
 *   NRF_ENOMEM (@p snap is freed in both cases; nothing changed).
 */
int nrf_rt_publish(struct nrf_rt *rt, struct nrf_rt_snap *snap);

/**
 * Compare the restart-only settings of the running snapshot with @p next.
 *
 * @param ptrs  receives up to @p max JSON pointers (static strings, e.g.
 *              "/runtime/listen", "/runtime/limits/maxHeaderBytes") of the
 *              settings that differ.
 * @return the number of differing settings (0: @p next can be published
 *   live). Control thread.
 */
unsigned int nrf_rt_restart_only(struct nrf_rt *rt, const struct nrf_cfg *next,
	const char **ptrs, unsigned int max);

/**
 * One way to apply a configuration live, for every source of changes (the
 * REST API, SIGHUP, the etcd watch): nrf_rt_prepare() checks and compiles,
 * the caller then persists the change where it keeps it (a file, etcd) or
 * drops it, and nrf_rt_commit() publishes it and waits for the workers.
 */
enum nrf_rt_refusal {
	NRF_RT_APPLY_OK = 0,
	/** restart-only settings differ (ch->restart[], ch->n_restart) */
	NRF_RT_APPLY_RESTART_ONLY,
	/** it cannot be compiled: identities, TLS files (ch->err) */
	NRF_RT_APPLY_UNUSABLE,
	/** out of memory */
	NRF_RT_APPLY_NOMEM,
};

struct nrf_rt_change {
	struct nrf_rt_snap *snap;   /**< NRF_RT_APPLY_OK: compiled, not published */
	const char *restart[8];     /**< JSON pointers of restart-only settings */
	unsigned int n_restart;     /**< how many differ (may exceed 8) */
	int err;                    /**< the NRF_E* behind a refusal */
};

/**
 * Check @p cfg against the running configuration (restart-only settings)
 * and compile it into a snapshot (Via database, forwarding table, peer
 * addresses, TLS). Takes @p cfg: it is freed on a refusal, owned by
 * ch->snap otherwise. Nothing is changed either way. Control thread.
 */
enum nrf_rt_refusal nrf_rt_prepare(struct nrf_rt *rt, struct nrf_cfg *cfg,
	struct nrf_rt_change *ch);

/**
 * Publish what nrf_rt_prepare() compiled (ch->snap is taken), then wait up to
 * @p settle_ms for every worker to use it. @p gen: the generation published;
 * @p seen: whether every worker used it within @p settle_ms (NULL-safe
 * both). @return 0 or nrf_rt_publish()'s error (nothing changed then).
 */
int nrf_rt_commit(struct nrf_rt *rt, struct nrf_rt_change *ch, uint32_t settle_ms,
	uint64_t *gen, bool *seen);

/** Drop a prepared change that is not committed (its snapshot freed). */
void nrf_rt_change_drop(struct nrf_rt_change *ch);

/**
 * The running configuration as JSON text (nrf_cfg_emit() of @p group of the
 * snapshot published last); @p gen (may be NULL) receives its generation.
 * @return malloc'd text (caller free()s) or NULL with @p err set
 *   (NRF_ENOMEM, NRF_EINVAL). Control thread.
 */
char *nrf_rt_emit(struct nrf_rt *rt, enum nrf_cfg_group group, int indent,
	uint64_t *gen, int *err);

/**
 * The local NRF of the running snapshot, for readiness: its name in the
 * upstream counters (struct nrf_rt_peer_stats with local set), "host:port"
 * ("[v6]:port"), written to @p name (@p cap bytes, cut to fit).
 * @return 0, NRF_ENOENT (no local NRF: a pure forwarder; @p name "") or
 *   NRF_EINVAL (its address is unknown, every try fails; @p name written).
 *   Control thread.
 */
int nrf_rt_local_name(struct nrf_rt *rt, char *name, size_t cap);

/**
 * This nrfwd's identity in the running snapshot: the "host:port" it
 * appends to Via (generalOptions.ocnrfHost:ocnrfPort), into @p name
 * (@p cap bytes, cut to fit). Control thread.
 */
void nrf_rt_self_name(struct nrf_rt *rt, char *name, size_t cap);

/**
 * True when every worker uses generation @p gen or a newer one (the change
 * is in effect for every new request). Any thread.
 */
bool nrf_rt_generation_seen(const struct nrf_rt *rt, uint64_t gen);

/**
 * How long a graceful stop waits for requests in flight: runtime.timeouts
 * .drainMs of the snapshot published last, at most its requestMs (no
 * request lives longer). Control thread (read when SIGTERM/SIGINT comes,
 * so a live change of drainMs counts).
 */
uint32_t nrf_rt_drain_ms(struct nrf_rt *rt);

/**
 * How long a graceful stop keeps accepting and serving as before while the
 * management API's /readyz already answers 503 (runtime.timeouts.unreadyMs
 * of the snapshot published last): the time a load balancer needs to see
 * it. The caller waits it out between nrf_api_drain() and nrf_rt_stop().
 * Control thread.
 */
uint32_t nrf_rt_unready_ms(struct nrf_rt *rt);

/** Generation of the snapshot published last. */
uint64_t nrf_rt_generation(const struct nrf_rt *rt);

/**
 * Free retired snapshots no worker can still see. Call periodically
 * (control thread; serialised with nrf_rt_publish() internally).
 * @return the number of retired snapshots still waiting.
 */
unsigned int nrf_rt_reclaim(struct nrf_rt *rt);

/**
 * Begin a graceful stop: every worker stops accepting (the connections its
 * listeners completed are taken first), serves its clients as before for
 * runtime.timeouts.goawayDelayMs (the worker's snapshot; 0: not at all),
 * sends GOAWAY, lets streams in flight finish for up to @p drain_ms, then closes
 * whatever is left and exits its thread. Returns at once; any thread
 * (not a signal handler).
 */
void nrf_rt_stop(struct nrf_rt *rt, uint32_t drain_ms);

/** Wait for every worker thread to exit (after nrf_rt_stop()). */
void nrf_rt_join(struct nrf_rt *rt);

/**
 * Reopen the access log file of this process (runtime.accessLog.path; SIGUSR1,
 * for logrotate): the path is opened again and takes the place of the file
 * descriptor the workers write to, so lines written from now on go to the
 * file now at that path. No-op when the log is off or goes to standard error.
 * Control thread (not a signal handler).
 * @return 0, or NRF_EIO (logged: the path and the reason; the workers keep
 *   writing to the file they had).
 */
int nrf_rt_alog_reopen(void);

/** One upstream of the running configuration (GET /peers). */
struct nrf_rt_upstream {
	char name[280];          /**< as in struct nrf_rt_peer_stats (the key) */
	bool local;              /**< the local NRF */
	enum nrf_cfg_mode mode;  /**< peers: forwarding or growth */
	char set_id[128];        /**< growth: its nrfSetId */
	uint32_t priority;       /**< peers: priority */
	char configured[300];    /**< what the configuration names: fqdn,
				  *   addresses, port */
	char address[64];        /**< the address tries go to ("ip:port",
				  *   "[v6]:port"); "" when it did not resolve */
	bool tls;                /**< https */
	/* Re-resolved name (nrf_rt_dns_start()); dns_name "" when the
	 * upstream has a numeric address or the resolver is not running. */
	char dns_name[256];      /**< the name re-resolved */
	uint64_t dns_resolved_ns; /**< nrf_now_ns() of the last good answer
				  *   (0: never) */
	uint64_t dns_next_ns;    /**< nrf_now_ns() of the next resolution
				  *   (0: none planned, refreshMs 0) */
	bool dns_ttl;            /**< the interval came from a DNS TTL */
	char dns_error[128];     /**< why the last resolution failed, "" when
				  *   it succeeded */
};

/**
 * The upstreams of the current snapshot, local NRF first, then the peers
 * in configuration order. Control thread. @p *out is malloc'd (caller
 * frees). @return 0 or NRF_ENOMEM.
 */
int nrf_rt_upstreams_get(struct nrf_rt *rt, struct nrf_rt_upstream **out, size_t *n);

/**
 * Start re-resolving peer names (runtime.dns, docs/behaviour.md "Peer
 * names"): a resolver thread of the runtime resolves the fqdn of every
 * peer that has no ipv4/ipv6 address (and a runtime.localNrf.address that
 * is a name) when it is due: after the answer's DNS TTL, or refreshMs for
 * answers without a TTL (/etc/hosts) and after failures, clamped to
 * [minTtlMs, maxTtlMs]; one resolution at most timeoutMs, at most one in
 * flight per name. When the address a name is used at changes, the
 * resolver compiles the running configuration into a new snapshot and
 * publishes it like a live change (a new generation; streams in flight
 * finish on their connections, new ones go to the new address) and logs
 * "peer NAME: OLD -> NEW". A failed resolution keeps the last good address
 * (logged once per name, then at most once a minute). Every snapshot
 * published afterwards (REST, SIGHUP) takes the resolver's addresses.
 *
 * Control thread, once, after nrf_rt_create(); nrf_rt_free() stops it.
 * Worker processes (nrf_rt_params.remote) resolve their own snapshots.
 * @return 0, NRF_EINVAL (already started), NRF_ENOMEM or NRF_EIO (thread).
 */
int nrf_rt_dns_start(struct nrf_rt *rt);

/** Resolver counters (nrfwd_dns_resolutions_total, docs/metrics.md). */
struct nrf_rt_dns_stats {
	uint64_t changed;        /**< answers that moved a name's address */
	uint64_t unchanged;      /**< answers that kept it */
	uint64_t failed;         /**< failures and timeouts (address kept) */
	unsigned int names;      /**< names re-resolved now */
	bool running;            /**< the resolver was started */
};

/** The resolver's counters; all 0 when it was not started. Any thread. */
void nrf_rt_dns_stats_get(struct nrf_rt *rt, struct nrf_rt_dns_stats *out);

/** Free the runtime (workers joined or never started). NULL-safe. */
void nrf_rt_free(struct nrf_rt *rt);

/**
 * How a front request ended (one per request, counted when its stream
 * closes): the answer nrfwd gave, or that the client went away first.
 */
enum nrf_rt_outcome {
	NRF_RT_OUT_LOCAL = 0,        /**< local NRF answer relayed */
	NRF_RT_OUT_PEER,             /**< peer answer relayed */
	NRF_RT_OUT_LOOP_DETECTED,    /**< NRF_Forwarding_Loop_Detection */
	NRF_RT_OUT_HOP_LIMIT,        /**< NRF_Forwarding_Hop_Limit */
	NRF_RT_OUT_LOOP_PREVENTED,   /**< NRF_Forwarding_Loop_Prevention */
	NRF_RT_OUT_NOT_REACHABLE,    /**< NRF_Not_Reachable */
	NRF_RT_OUT_OVERLOAD,         /**< NRF_Forwarding_Overload */
	NRF_RT_OUT_LOCAL_UNAVAILABLE, /**< NRF_Local_Unavailable */
	NRF_RT_OUT_BAD_REQUEST,      /**< 400 / 413 answered by nrfwd */
	NRF_RT_OUT_NOT_IMPLEMENTED,  /**< 501: local-only operation, no local NRF */
	NRF_RT_OUT_INTERNAL,         /**< 500 */
	NRF_RT_OUT_CLIENT_RESET,     /**< the stream closed before an answer */
	NRF_RT_OUT_REQUEST_TIMEOUT,  /**< 408: the request did not arrive whole
				      *   within timeouts.requestBodyMs */
	NRF_RT_OUT_CLIENT_LIMITED,   /**< NRF_Client_Limit: the client is over
				      *   runtime.limits.perClient (429) */
	NRF_RT_OUT_COUNT
};

/** "local", "peer", "loop_detected", ... (metric label values). */
const char *nrf_rt_outcome_name(enum nrf_rt_outcome o);

/** Why a try (local NRF or peer) did not give the answer. */
enum nrf_rt_fail {
	NRF_RT_FAIL_CONNECT = 0,     /**< connect failed or timed out */
	NRF_RT_FAIL_RESET,           /**< stream reset by the upstream */
	NRF_RT_FAIL_REFUSED,         /**< refused by GOAWAY before processing */
	NRF_RT_FAIL_CONN_LOST,       /**< connection lost while the try was open */
	NRF_RT_FAIL_TIMEOUT,         /**< per-try timeout */
	NRF_RT_FAIL_REROUTE,         /**< answered a nrfRerouteOn... status */
	NRF_RT_FAIL_UNAVAILABLE,     /**< not tried: down, no address, https */
	NRF_RT_FAIL_OVERLOAD,        /**< not tried: its queue was full */
	NRF_RT_FAIL_OTHER,           /**< submit failed, shutting down */
	NRF_RT_FAIL_COUNT
};

/** "connect", "reset", "refused", ... (metric label values). */
const char *nrf_rt_fail_name(enum nrf_rt_fail f);

/**
 * What a timeout of runtime.timeouts ended (lib/h2's enum nrf_h2_tmo, in
 * the same order): docs/config.md says what each one does.
 */
enum nrf_rt_tmo {
	NRF_RT_TMO_HANDSHAKE = 0,    /**< handshakeMs: TLS, preface or SETTINGS ACK */
	NRF_RT_TMO_HEADER,           /**< requestHeaderMs: a header block unfinished */
	NRF_RT_TMO_BODY,             /**< requestBodyMs: a request not complete */
	NRF_RT_TMO_IDLE,             /**< idleMs: a front connection without stream */
	NRF_RT_TMO_STALLED_READER,   /**< stalledReaderMs: a client takes no answer */
	NRF_RT_TMO_UPSTREAM_IDLE,    /**< upstreamIdleMs: a pool connection unused */
	NRF_RT_TMO_UPSTREAM_STALLED, /**< stalledReaderMs: an upstream reads nothing */
	NRF_RT_TMO_COUNT
};

/** "handshake", "header", "body", ... (metric label values). */
const char *nrf_rt_timeout_name(enum nrf_rt_tmo r);

/** Which limit of runtime.limits.perClient refused a request. */
enum nrf_rt_limit {
	NRF_RT_LIMIT_RATE = 0,       /**< ratePerSecond (its bucket was empty) */
	NRF_RT_LIMIT_STREAMS,        /**< maxStreams (that many in progress) */
	NRF_RT_LIMIT_COUNT
};

/** "rate", "streams" (metric label values). */
const char *nrf_rt_limit_name(enum nrf_rt_limit r);

/**
 * Why a front connection gave way to a newcomer at
 * runtime.limits.maxConnections (lib/h2's enum nrf_h2_evict less its
 * NONE, in the same order; decision 0054).
 */
enum nrf_rt_evict {
	NRF_RT_EVICT_HANDSHAKE = 0, /**< its handshake was not done */
	NRF_RT_EVICT_IDLE,          /**< no open stream, idle the longest */
	NRF_RT_EVICT_COUNT
};

/** "handshake", "idle" (metric label values). */
const char *nrf_rt_evict_name(enum nrf_rt_evict r);

/**
 * What the memory of the data path holds (nrf_rt_stats.buffered), as the
 * workers' HTTP/2 contexts count it (lib/h2: enum nrf_h2_mem_kind, same
 * order). Their sum is checked against runtime.limits.maxBufferedBytes
 * (docs/architecture-datapath.md, "Memory").
 */
enum nrf_rt_buf {
	NRF_RT_BUF_BODIES = 0,  /**< request bodies, answers held or relayed */
	NRF_RT_BUF_HEADERS,     /**< header blocks (maxHeaderBytes each) */
	NRF_RT_BUF_OUTPUT,      /**< output of connections slower than nrfwd */
	NRF_RT_BUF_HTTP2,       /**< HTTP/2 sessions, streams, connections */
	NRF_RT_BUF_WINDOW,      /**< window granted to upstreams, not used yet */
	NRF_RT_BUF_COUNT
};

/** "bodies", "headers", ... (metric label values). */
const char *nrf_rt_buf_name(enum nrf_rt_buf k);

/** Upper bounds of the request latency histogram, in microseconds. */
#define NRF_RT_LAT_BOUNDS_US                                                   \
	{500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,  \
		1000000, 2500000, 5000000, 10000000}
#define NRF_RT_LAT_BUCKETS 14 /**< finite buckets; one more for +Inf */

/**
 * The histogram bucket of a latency of @p ns nanoseconds: the index of the
 * first bound of NRF_RT_LAT_BOUNDS_US (as ns) that is >= @p ns, or
 * NRF_RT_LAT_BUCKETS (+Inf) when none is. Any thread; no side effects.
 */
unsigned int nrf_rt_lat_bucket(uint64_t ns);

/**
 * Counters, summed over workers (each worker writes its own; readers use
 * relaxed atomic loads, so a sum may be a few microseconds old). Every
 * member is a uint64_t (summed as an array).
 */
struct nrf_rt_stats {
	uint64_t conns_accepted;
	uint64_t conns_refused;       /**< over maxConnections (GOAWAY) */
	/** Connections without work that gave way to a newcomer at
	 *  maxConnections (they still count in conns_closed once gone). */
	uint64_t conns_evicted[NRF_RT_EVICT_COUNT];
	uint64_t conns_closed;        /**< front connections gone */
	uint64_t requests;            /**< front streams answered or reset */
	uint64_t bad_requests;        /**< 400/413 answered by nrfwd */
	uint64_t loop_detected;
	uint64_t hop_limit;
	uint64_t loop_prevented;      /**< candidates skipped by Via (all requests) */
	uint64_t answered_local;      /**< local NRF answer relayed */
	uint64_t answered_peer;       /**< peer answer relayed */
	uint64_t answered_error;      /**< nrfwd ProblemDetails (508/504/503/501...) */
	uint64_t not_reachable;
	uint64_t overload;
	uint64_t local_unavailable;   /**< NRF_Local_Unavailable answers */
	uint64_t retries;             /**< streams lost with their connection (or
				       *   refused) and sent again, once */
	uint64_t forwards;            /**< tries sent to peers (not the local NRF) */
	uint64_t reroutes;            /**< peer answers that moved to the next */
	uint64_t try_failures;        /**< connect, reset, GOAWAY, timeout */
	uint64_t try_timeouts;
	uint64_t request_timeouts;
	uint64_t client_resets;       /**< client went away before the answer */
	uint64_t relay_aborts;        /**< upstream broke after the answer began */
	/** Breaches of "every request is answered exactly once" found by
	 *  lib/rt (a second answer attempted, or a transaction left with no
	 *  answer and nothing that will give one). Always 0 unless nrfwd has
	 *  a bug; builds without NDEBUG abort at the first one instead. */
	uint64_t answer_violations;
	uint64_t peer_connects;
	uint64_t peer_connect_failures;
	uint64_t peer_conns_lost;     /**< upstream connections that went away
				       *   while they carried streams */
	uint64_t queue_shed;          /**< tries shed by their waiting time in a
				       *   queue (runtime.limits.queueTargetMs) */
	uint64_t snapshot_switches;   /**< snapshots picked up by workers */
	/** Timeouts of runtime.timeouts that ended something, by reason. */
	uint64_t timeouts[NRF_RT_TMO_COUNT];
	uint64_t budget_rejections;   /**< requests refused over the memory
				       *   budget (runtime.limits.maxBufferedBytes) */
	uint64_t alog_lines;          /**< access log lines formatted */
	uint64_t alog_dropped;        /**< access log lines not written: over
				       *   maxLinesPerSecond, or a write failed */
	/** runtime.limits.perClient (decision 0055): requests refused
	 *  (NRF_Client_Limit), by enum nrf_rt_limit; entries of the
	 *  workers' client tables taken over from the client seen least
	 *  recently because the table was full; and, a gauge, the clients
	 *  the tables track now. */
	uint64_t client_limited[NRF_RT_LIMIT_COUNT];
	uint64_t client_evictions;
	uint64_t clients_tracked;
	/** Loop events (struct nrf_rt_loop): entries of the workers' loop
	 *  tables dropped, the least recently seen, to make room for a new
	 *  path (nrfwd_loop_paths_dropped_total). */
	uint64_t loop_drops;
	/** Gauges, summed over workers when read: bytes held now, by kind;
	 *  bytes kept on free lists for reuse; the workers' budgets. */
	uint64_t buffered[NRF_RT_BUF_COUNT];
	uint64_t pooled_bytes;
	uint64_t budget_bytes;
	/** Requests by operation (enum nrf_fwd_op) and outcome. */
	uint64_t req[NRF_OP_COUNT][NRF_RT_OUT_COUNT];
	/** Latency (complete request to stream closed) by operation:
	 *  bucket counts (non-cumulative; the last is +Inf) and sum. */
	uint64_t lat_bucket[NRF_OP_COUNT][NRF_RT_LAT_BUCKETS + 1];
	uint64_t lat_sum_ns[NRF_OP_COUNT];
};

void nrf_rt_stats_get(const struct nrf_rt *rt, struct nrf_rt_stats *out);

/** Exact status codes kept per upstream; others count as "other". */
#define NRF_RT_PEER_CODES 16

/**
 * Counters of one upstream (a peer NRF by its display name "host:port",
 * or the local NRF), summed over workers. Counters of a name survive the
 * upstream's removal from the configuration (and count on if it returns).
 */
struct nrf_rt_peer_stats {
	char name[280];
	bool local;                       /**< the local NRF */
	uint64_t tries;                   /**< tries started (sent or queued) */
	uint64_t loop_prevented;          /**< skipped: its identity was in Via */
	uint64_t fail[NRF_RT_FAIL_COUNT]; /**< tries that gave no answer, by reason */
	uint16_t codes[NRF_RT_PEER_CODES];/**< status codes answered ... */
	uint64_t code_n[NRF_RT_PEER_CODES]; /**< ... and how often */
	unsigned int n_codes;
	uint64_t code_other;              /**< answers with further codes */
	/** Latency from the start of a try to the upstream's answer head
	 *  (tries answered only), buckets of NRF_RT_LAT_BOUNDS_US then +Inf,
	 *  not cumulative; and their sum. */
	uint64_t lat_bucket[NRF_RT_LAT_BUCKETS + 1];
	uint64_t lat_sum_ns;
	/** Health, as the data path sees it now (docs/failures.md "Health"):
	 *  workers that have this upstream in their configuration ... */
	uint32_t workers;
	/** ... and of those, workers that hold it down (its connects or
	 *  PINGs failed; probed until one is answered). */
	uint32_t workers_down;
	/** Earliest hold-down start among those workers, nrf_now_ns() clock
	 *  (CLOCK_MONOTONIC, the same in every process); 0 when none. */
	uint64_t down_since_ns;
	/** Last failed try in any worker: nrf_now_ns() clock (0: none) and
	 *  its reason. */
	uint64_t last_fail_ns;
	enum nrf_rt_fail last_fail;
	/** Gauges, as the workers see it now (summed): connections to it
	 *  that are connected (HTTP/2 sessions, probes included) ... */
	uint64_t conns;
	/** ... streams open on them (tries sent, answer not over) ... */
	uint64_t inflight;
	/** ... tries waiting in its queues for a connection or stream ... */
	uint64_t queued;
	/** ... and workers that hold it down with a probe connection under
	 *  way (connect or its PING) right now. */
	uint32_t workers_probing;
	/** Earliest next probe among the workers that hold it down
	 *  (nrf_now_ns() clock; in the past while a probe is overdue or under
	 *  way); 0 when none holds it down. */
	uint64_t next_probe_ns;
};

/**
 * Estimate the @p q quantile (0 < q < 1) of a latency histogram with the
 * buckets of NRF_RT_LAT_BOUNDS_US (@p bucket: NRF_RT_LAT_BUCKETS + 1
 * counts, not cumulative, the last one +Inf), in seconds: the bucket that
 * holds the rank q * total is found and the value interpolated linearly
 * inside it (the way Prometheus' histogram_quantile() does; the first
 * bucket starts at 0). A rank in the +Inf bucket gives the largest finite
 * bound. The estimate is only as fine as the buckets.
 * @return the estimate, or a negative value when the histogram is empty.
 *   Any thread.
 */
double nrf_rt_lat_quantile(const uint64_t *bucket, double q);

/**
 * Counters of every upstream seen since start, summed over workers.
 * @param out  receives a malloc'd array (caller free()s), @p n its length.
 * @return 0 or NRF_ENOMEM. Any thread except workers.
 */
/**
 * Add the counters of @p e into the array @p *v (@p *n entries, room for
 * @p *cap; start with NULL, 0, 0) under @p e's name and role, appending an
 * entry when it is new: how the counters of several runtimes (worker
 * processes) are summed (workers and workers_down add up, down_since_ns is
 * the earliest). The caller free()s @p *v.
 * @return 0 or NRF_ENOMEM (@p *v and its entries kept). Any thread.
 */
int nrf_rt_peer_stats_merge(struct nrf_rt_peer_stats **v, size_t *n, size_t *cap,
	const struct nrf_rt_peer_stats *e);

int nrf_rt_peer_stats_get(const struct nrf_rt *rt, struct nrf_rt_peer_stats **out,
	size_t *n);

/* ------------------------------------------------------------------------ */
/* Loop events (docs/behaviour.md, "How to find a loop in production")       */

/** What a loop event is. */
enum nrf_rt_loop_kind {
	NRF_RT_LOOP_DETECTED = 0, /**< own identity in Via: answered 508 */
	NRF_RT_LOOP_PREVENTED,    /**< a peer skipped: its identity in Via */
	NRF_RT_LOOP_HOP_LIMIT,    /**< maxViaMembers exceeded, or
				   *   3gpp-Sbi-Max-Forward-Hops used up */
	NRF_RT_LOOP_KINDS
};

/** "detected", "prevented", "hop-limit". */
const char *nrf_rt_loop_kind_name(enum nrf_rt_loop_kind k);

/** Entries of one worker's loop table (least recently seen dropped). */
#define NRF_RT_LOOP_ENTRIES 128
/** Bytes of one path's text (its last members are kept). */
#define NRF_RT_LOOP_PATH_MAX 384
#define NRF_RT_LOOP_NAME_MAX 128
#define NRF_RT_LOOP_ADDR_MAX 64
#define NRF_RT_LOOP_RID_MAX 129

/**
 * One loop path and how often it was seen. The path is the request's Via
 * as this nrfwd received it: each member's received-by normalised as
 * identities compare (nrf_via_member_identity()), oldest first, separated
 * by one space. Too long a Via keeps its last members (@c truncated).
 */
struct nrf_rt_loop {
	uint8_t kind;                     /**< enum nrf_rt_loop_kind */
	bool truncated;                   /**< members before the path left out */
	uint16_t hops;                    /**< members in @c path */
	char path[NRF_RT_LOOP_PATH_MAX];
	/** PREVENTED: the peer entry skipped (its display name, and its JSON
	 *  pointer in this nrfwd's configuration); "" otherwise. */
	char skipped[NRF_RT_LOOP_NAME_MAX];
	char entry[NRF_RT_LOOP_NAME_MAX];
	uint64_t count;
	uint64_t first_ns, last_ns;       /**< nrf_now_ns() of the first and
					   *   last event */
	/** The first event's client (address:port of the connection it came
	 *  on) and request id ("" when it had none). */
	char client[NRF_RT_LOOP_ADDR_MAX];
	char rid[NRF_RT_LOOP_RID_MAX];
};

/**
 * The loop events of every worker, merged by kind, path and skipped peer
 * (nrf_rt_loops_merge()). @p out receives a malloc'd array (NULL when
 * empty) of @p n entries, @p drops (may be NULL) the entries dropped so
 * far. Workers are never stopped or locked: an entry being replaced at
 * that moment is read again or left out. Control threads.
 * @return 0 or NRF_ENOMEM.
 */
int nrf_rt_loops_get(const struct nrf_rt *rt, struct nrf_rt_loop **out, size_t *n,
	uint64_t *drops);

/**
 * Add @p e into the array @p *v (@p *n entries, room for @p *cap; start
 * with NULL, 0, 0): counts add up, first_ns is the earliest, last_ns the
 * latest, client and rid those of the earliest. The caller free()s @p *v.
 * @return 0 or NRF_ENOMEM. Any thread.
 */
int nrf_rt_loops_merge(struct nrf_rt_loop **v, size_t *n, size_t *cap,
	const struct nrf_rt_loop *e);

/** One worker, as seen from the control thread. */
struct nrf_rt_worker_info {
	bool running;            /**< thread started and not exited */
	uint64_t generation;     /**< configuration generation it uses */
	uint64_t cpu_ns;         /**< CPU time of its thread (0 when not running) */
	uint64_t requests;       /**< front requests it answered (or saw reset) */
	uint64_t conns_open;     /**< front connections open now */
	int pid;                 /**< its process (remote workers), else 0 */
	uint32_t restarts;       /**< times it was restarted (remote workers) */
	/**
	 * nrf_now_ns() (CLOCK_MONOTONIC, comparable across processes) at its
	 * last loop iteration: the data path's liveness. An idle worker
	 * iterates at least once a second (timer cap), so an age of several
	 * seconds means the loop is stuck. Remote workers: as of their last
	 * report.
	 */
	uint64_t loop_ns;
};

/** Number of workers. */
unsigned int nrf_rt_workers(const struct nrf_rt *rt);

/** Information on worker @p i. @return 0 or NRF_ENOENT. Control thread. */
int nrf_rt_worker_get(const struct nrf_rt *rt, unsigned int i,
	struct nrf_rt_worker_info *out);

/** True while the workers run and no stop was requested. Any thread. */
bool nrf_rt_running(const struct nrf_rt *rt);

/** Listener of worker 0 for runtime.listen[@p i]: the bound address. */
int nrf_rt_listen_addr(const struct nrf_rt *rt, unsigned int i, struct nrf_tp_addr *out);

/**
 * Poll-mode accounting of the worker on a DPDK transport (params.tp ==
 * nrf_tp_dpdk_ops()). That transport runs exactly one worker per process
 * (nrf_rt_create() refuses more with NRF_EINVAL), started by
 * nrf_rt_start() on the data-path lcore with nrf_dp_launch() (or on a
 * registered pthread when the EAL core list has a single lcore).
 *
 * busy_cycles / requests (nrf_rt_stats) is the data-path cost per request
 * in TSC cycles; lc.busy_cycles / lc.cycles the load of the lcore.
 */
struct nrf_rt_dp_stats {
	bool polled;                          /**< the worker has polled */
	int lcore;                            /**< its lcore id, -1 before */
	uint64_t tsc_hz;                      /**< cycles per second */
	struct nrf_tp_dpdk_lcore_stats lc;    /**< that lcore's counters */
	struct nrf_tp_dpdk_port_stats port;   /**< the port's counters */
};

/**
 * Counters of the polling worker (any thread; each value consistent):
 * nrf_rt_dp_stats_worker() of worker 0.
 * @return 0, or NRF_ENOENT when the runtime is not on the DPDK transport
 *   (@p out zeroed, lcore -1).
 */
int nrf_rt_dp_stats_get(const struct nrf_rt *rt, struct nrf_rt_dp_stats *out);

/**
 * Poll-loop counters of worker @p i: the lcore's and the port's for the
 * one worker of a runtime on the DPDK transport, the worker process's for
 * a runtime of remote workers (its nrf_rt_remote_ops.dp_stats_get).
 * @return 0, NRF_ENOENT (no such worker, or not on the DPDK transport).
 */
int nrf_rt_dp_stats_worker(const struct nrf_rt *rt, unsigned int i,
	struct nrf_rt_dp_stats *out);

/**
 * Load the TLS files of @p cfg the way the data path will (runtime.tls when
 * a listener has tls or certFile is set; runtime.tlsClient when an upstream
 * is https or a file is set): certificate, key (and that they match), CA
 * bundles, cipher and group lists. Each problem (at most @p max stored in
 * @p out) is a JSON pointer ("/runtime/tls/keyFile") and a reason naming
 * the file. nrf_rt_snap_create() fails with NRF_ECONFIG on the same
 * problems. docs/tls.md.
 * @return the number of problems (0: every file loads). Control thread.
 */
size_t nrf_rt_tls_check(const struct nrf_cfg *cfg, struct nrf_cfg_problem *out, size_t max);

/**
 * Whether a certificate, key or CA file of the running snapshot's TLS
 * contexts changed on disk since they were loaded (renewed at the same
 * path): a reload of an otherwise unchanged configuration then builds
 * and publishes a new snapshot, whose contexts load the new files (new
 * connections use them, open ones keep theirs). Control side; stat(2).
 */
bool nrf_rt_tls_files_changed(struct nrf_rt *rt);

/**
 * The notAfter (Unix seconds) of the certificate the running snapshot
 * serves with (@p server, TLS listeners) and presents to upstreams
 * (@p client, runtime.tlsClient.certFile); 0 where there is none.
 * Control side (metrics).
 */
void nrf_rt_tls_expiry(struct nrf_rt *rt, int64_t *server, int64_t *client);

#ifdef __cplusplus
}
#endif
#endif /* NRF_RT_H */
