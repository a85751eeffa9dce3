/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_INT_H
#define NRF_RT_INT_H

/*
 * Internals of lib/rt shared by its translation units:
 *   rt.c        control side: snapshots, runtime create/start/stop, stats
 *   rt_worker.c worker thread: loop, listeners, front connections, drain
 *   rt_timer.c  per-worker timer heap
 *   rt_pool.c   per-worker, per-peer connection pools and queues, health,
 *               per-snapshot pool views (live peer changes)
 *   rt_proxy.c  the request pipeline (docs/behaviour.md §3) on one front stream
 *   rt_stats.c  counters: per upstream, per operation and outcome, latency
 *   rt_sweep.c  runtime.timeouts: the periodic sweep of the h2 context
 *   rt_mem.c    the memory budget and giving memory back
 *   rt_alog.c   the access log and request ids
 *   rt_limit.c  runtime.limits.perClient: per-client limits (429)
 */

#include <pthread.h>
#include <stdatomic.h>

#include "nrf_cfg.h"
#include "nrf_fwd.h"
#include "nrf_h2.h"
#include "nrf_list.h"
#include "nrf_rt.h"
#include "nrf_tp.h"
#include "nrf_tp_tls.h"
#include "nrf_via.h"
#include "rt_alog.h"
#include "rt_limit.h"
#include "rt_timer.h"

#define MOD "rt"

/* Answers are held whole up to this many body bytes (and maxBodyBytes)
 * before they are relayed, so an upstream that breaks off mid-answer is a
 * failed try, not a client stream reset (docs/failures.md). */
#define RT_HOLD_MAX_BYTES (64u * 1024u)

/* ------------------------------------------------------------------------ */
/* Snapshot                                                                  */

/* Where tries to one upstream go, and how they are addressed. */
struct rt_ep {
	struct nrf_tp_addr addr;
	bool ok;                 /* address known */
	bool tls;                /* https */
	struct nrf_tp_tls_ctx *tlsc; /* https: client context (the snapshot's;
				  * a pool holds its own reference) */
	char tls_name[256];      /* https: SNI and certificate name */
	char name[280];          /* for logs: "host:port" */
	char authority[280];     /* :authority of forwarded requests */
	char scheme[8];          /* :scheme */
	char api_root[560];      /* 3gpp-Sbi-Target-apiRoot (peers) */
	char prefix[256];        /* apiPrefix ("" for the local NRF); a copy, so
				  * a pool may outlive the snapshot it came from */
	/* strlen() of authority, scheme, api_root and prefix, set with them
	 * (ep_fill()): try_send() builds every upstream request from them. */
	uint16_t authority_len, scheme_len, api_root_len, prefix_len;
};

struct rt_view;

struct nrf_rt_snap {
	struct nrf_cfg *cfg;
	struct nrf_via_db *db;
	struct nrf_fwd_table *table;
	uint64_t gen;
	struct rt_ep *peers;     /* [cfg->n_peers] */
	struct rt_ep local;      /* local.ok == false: no local NRF */
	bool links;              /* some upstream has rewriteLinks (rt_links.c) */
	struct nrf_tp_tls_ctx *tls_srv; /* TLS listeners (rt_tls.c); NULL: none */
	struct nrf_tp_tls_ctx *tls_cli; /* https upstreams; NULL: none */
	/* Requests holding this snapshot, per worker (written by that worker). */
	_Atomic uint32_t *refs;
	unsigned int n_refs;
	/* Per worker: its pools for this snapshot's peer indices (owned and
	 * only touched by that worker), and whether that view still exists
	 * (the control thread frees the snapshot only once it is gone). */
	struct rt_view **views;
	_Atomic uint8_t *view_live;
	struct nrf_rt_snap *retired_next;
};

struct rt_worker;

/* ------------------------------------------------------------------------ */
/* Pools                                                                     */

struct rt_pool;
struct rt_pconn;
struct rt_xact;

/*
 * The waiter contract: all a pool knows of a try. rt_pool.c and
 * rt_proxy.c meet here and nowhere else (rt_pool.c never sees a struct
 * rt_try or a transaction).
 *
 * The owner (rt_proxy.c) embeds one in each try and sets @force and
 * @isolate before rt_pool_submit(); the pool sets @pool, links @qlink and
 * sets @queued while the waiter is in one of its queues. The pool calls
 * back exactly one of two functions for a waiter it took (submitted, or
 * later taken out of its queue):
 *   rt_waiter_send(wt, conn)  open the request's stream on @conn (a
 *                             connection with room); 0 or < 0;
 *   rt_waiter_failed(wt, ..)  the pool cannot serve it (connect failed,
 *                             probe failed, shutting down, or shed:
 *                             NRF_RT_FAIL_OVERLOAD when it waited in the
 *                             queue past runtime.limits.queueTargetMs,
 *                             see rt_pool_submit()).
 * Both are called on the worker thread, with @queued already false. The
 * owner takes a queued waiter back with rt_pool_dequeue() (abort,
 * timeout); after that the pool never calls back for it. Once a stream
 * sent for the waiter is gone (closed or cancelled), the owner calls
 * rt_pool_sent_done() before it submits the waiter again.
 */
struct rt_waiter {
	struct rt_pool *pool;    /* set by rt_pool_submit() */
	struct nrf_list qlink;   /* in the pool's queue (pool only) */
	bool queued;             /* in @pool's queue (written by the pool) */
	bool force;              /* owner: held down, tried anyway as a last
				  * resort (see rt_pool_submit()) */
	bool isolate;            /* owner: a stream lost with its connection,
				  * sent again: only on a connection that
				  * carries no other such stream */
	bool isolated;           /* pool: sent under @isolate (counted on
				  * its connection until rt_pool_sent_done()) */
	struct rt_pconn *pc;     /* pool: the connection it was last sent on
				  * (valid while its stream is) */
	uint64_t enq_ns;         /* pool: when it was queued (rt_now()) */
};

/* Implemented by the owner of waiters (rt_proxy.c), called by pools. */
int rt_waiter_send(struct rt_waiter *wt, struct nrf_h2_conn *c);
void rt_waiter_failed(struct rt_waiter *wt, enum nrf_rt_fail reason, const char *why);

struct rt_pconn {
	struct rt_pool *pool;
	struct nrf_h2_conn *h2;
	bool ready;              /* connected */
	bool alive;              /* its first PING was answered: the upstream's
				  * HTTP/2 layer is there (health) */
	bool probe;              /* opened while the pool was held down */
	uint32_t streams;        /* streams sent on it and not gone yet
				  * (counted in its pool's rt_pstats.inflight) */
	uint32_t isolated;       /* of them, lost streams sent again
				  * (struct rt_waiter.isolate): at most one */
	uint64_t opened;         /* nrf_now_ns() at open */
	struct rt_timer ctimer;  /* connect timeout, then PING ACK timeout */
	struct nrf_list link;    /* in pool->conns, newest first */
};

/* Counters of one upstream name in one worker (single writer: the worker;
 * read with relaxed atomic loads by the control thread). Entries are never
 * freed while the worker lives, so a name's counters survive its pools. */
struct rt_pstats {
	char name[280];
	bool local;
	uint64_t tries;
	uint64_t loop_prevented;
	uint64_t fail[NRF_RT_FAIL_COUNT];
	_Atomic uint16_t codes[NRF_RT_PEER_CODES]; /* 0: slot free */
	uint64_t code_n[NRF_RT_PEER_CODES];
	uint64_t code_other;
	/* Try → answer head latency of this upstream (the buckets of
	 * NRF_RT_LAT_BOUNDS_US and +Inf; nrfwd_upstream_response_seconds). */
	uint64_t lat_bucket[NRF_RT_LAT_BUCKETS + 1];
	uint64_t lat_sum_ns;
	/* Health (readiness, nrfwd_upstream_up): pools of this name that are
	 * configured (not retired) and, of them, held down; down_since is the
	 * nrf_now_ns() when the first of them went down, 0 while none is.
	 * pools and down_since are read by the control thread (relaxed). */
	uint32_t pools;
	uint32_t n_down;         /* worker only */
	uint64_t down_since;
	/* Last failed try (GET /peers): nrf_now_ns() and enum nrf_rt_fail. */
	uint64_t last_fail_ns;
	uint32_t last_fail;
	/* Gauges of GET /peers (rt_pool.c; written by the worker with a
	 * relaxed store, like pools): connections of this name's pools that
	 * are connected, streams open on them, tries waiting in their queues,
	 * and pools held down with a probe connection under way. */
	uint32_t conns;
	uint32_t inflight;
	uint32_t queued;
	uint32_t probing;
	/* When the next probe is due (nrf_now_ns() clock), set at every
	 * hold-down (re-armed probe); meaningful while down_since != 0. */
	uint64_t probe_at;
};

#define RT_PSTATS_CHUNK 64
#define RT_PSTATS_CHUNKS 64

struct rt_pool {
	struct rt_worker *w;
	int peer;                /* index in the current snapshot's peers; -1: local
				  * NRF, or not in the current snapshot */
	bool local;              /* the local NRF's pool */
	struct rt_ep ep;         /* fixed for the pool's life (it is the key) */
	struct rt_pstats *stats;
	uint32_t n_views;        /* views that use this pool */
	uint64_t claimed;        /* generation of the view being built that took it */
	bool retired;            /* no view uses it: closing, freed when empty */
	struct nrf_list all;     /* in w->all_pools, newest first */
	struct nrf_list conns;   /* struct rt_pconn.link */
	uint32_t n_conns;
	struct nrf_list queue;   /* struct rt_waiter.qlink, FIFO */
	struct nrf_list rqueue;  /* lost streams to send again (isolate), FIFO */
	uint32_t qlen;           /* in both queues */
	uint64_t above_since;    /* rt_now() since the oldest waiter has waited
				  * past queueTargetMs without a break; 0: not */
	struct rt_timer shed;    /* next look at the queues' heads (shedding) */
	uint32_t consec;         /* consecutive failed tries (connections that
				  * died serving count once): health */
	bool down;               /* held down: probed until a PING is answered */
	bool probing;            /* counted in stats->probing (probe_sync()) */
	bool ever_up;
	uint32_t backoff_ms;     /* current probe interval (0: no failure) */
	struct rt_timer hold;    /* next probe */
};

/* A worker's pools for one snapshot: pools[i] serves snapshot peer i. */
struct rt_view {
	struct nrf_rt_snap *snap;
	struct rt_pool **pools;  /* [snap->cfg->n_peers] */
	uint16_t n_pools;
	struct rt_pool *local;
	struct rt_view *next;    /* the worker's list of old views */
};

/* Send @p wt through @p p (wt->pool = @p p): on an open connection with
 * room (rt_waiter_send() called from here, its result returned), else
 * queued (wt->queued set). 0 (sent or queued), NRF_EFULL (queue full),
 * other < 0: cannot be tried now (NRF_EAGAIN held down or worker exiting,
 * NRF_ENOENT no address, NRF_EINVAL TLS, or the connect failed at once).
 * A held-down pool takes a waiter only when wt->force is set: it is queued
 * behind the probe under way (one is started when none is), sent once that
 * probe's PING is answered (the pool is up again), and failed through
 * rt_waiter_failed(wt, NRF_RT_FAIL_CONNECT, ...) when the probe fails. */
int rt_pool_submit(struct rt_pool *p, struct rt_waiter *wt);
/* Take a queued waiter out of its pool's queue (no-op when not queued). */
void rt_pool_dequeue(struct rt_waiter *wt);
/* The stream last sent for @p wt is gone (closed or cancelled): its
 * connection may take another lost stream. No-op unless it was sent under
 * isolation. */
void rt_pool_sent_done(struct rt_waiter *wt);
/* Health (docs/failures.md "Health"): a try of pool @p p failed on a
 * stream that was sent (a per-try timeout or a reset; a lost connection is
 * counted once by the pool itself), or got an answer. After
 * runtime.health.consecutiveFailures failures in a row the upstream is
 * held down and probed. */
void rt_pool_try_failed(struct rt_pool *p);
static inline void
rt_pool_try_answered(struct rt_pool *p)
{
	p->consec = 0;
}
/* Before the h2 context closes its connections (worker exit). */
void rt_pool_fini(struct rt_pool *p);
/* Keep the local NRF's pool of the current view connected: open one
 * connection when it has none and is not held down (worker start, new
 * snapshot), so its health is known before the first request asks. */
void rt_pool_warm(struct rt_worker *w);

/* Build the worker's view of @p s: pools of the current views whose
 * upstream is unchanged are shared, new upstreams get new pools. Also sets
 * every pool's current peer index and rebuilds the health bitset. 0 or
 * NRF_ENOMEM (nothing changed then). */
int rt_view_create(struct rt_worker *w, struct nrf_rt_snap *s);
/* Free views of old snapshots this worker no longer uses (no request
 * holds them); pools no view uses any more are closed. */
void rt_views_gc(struct rt_worker *w);
/* Worker teardown: every view and pool (connections already closed). */
void rt_views_free(struct rt_worker *w);

/* Pool of snapshot peer @p peer / of the local NRF, for a request on
 * @p x's snapshot (NULL when out of range). */
struct rt_pool *rt_xact_pool(struct rt_xact *x, uint16_t peer);
struct rt_pool *rt_xact_local(struct rt_xact *x);

/* Counters (rt_stats.c; worker thread, single writer). */
void rt_count_try(struct rt_pool *p);
void rt_count_fail(struct rt_pool *p, enum nrf_rt_fail why);
void rt_count_status(struct rt_pool *p, int status);
/* A try of pool @p p got its answer head @p ns after it started. */
void rt_count_answer_latency(struct rt_pool *p, uint64_t ns);
void rt_count_skips(struct rt_xact *x);
void rt_count_request(struct rt_worker *w, struct rt_xact *x);
void rt_count_reject(struct rt_worker *w);
/* A request answered at once, without a transaction (latency 0, as for
 * rejects: it is answered inside the callback that delivered it). */
void rt_count_answer(struct rt_worker *w, enum nrf_fwd_op op, unsigned int outcome);
/*
 * The rule "every request is answered exactly once" was broken (@p what
 * says how): counted (nrfwd_answer_violations_total) and logged; builds
 * without NDEBUG abort here (assert), so tests stop at the first breach.
 */
void rt_answer_violation(struct rt_worker *w, const char *what);
enum nrf_rt_outcome rt_outcome_of_cond(enum nrf_cfg_cond cond);
enum nrf_rt_outcome rt_outcome_of_status(int status);
/* The counters entry of @p name in worker @p w (created when new; the
 * overflow entry when the table is full). */
struct rt_pstats *rt_pstats_get(struct rt_worker *w, const char *name, bool local);

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */

enum rt_try_state {
	T_IDLE = 0,
	T_QUEUED,   /* in a pool queue */
	T_SENT,     /* stream open, waiting for the answer's headers */
	T_BUFFER,   /* keeping the answer's body: a local answer (trigger check,
		     * step 8), or a peer answer until it is complete */
	T_RELAY,    /* answer chosen: streaming it to the client */
};

struct rt_xact;

struct rt_try {
	struct rt_xact *x;
	struct rt_waiter wt;     /* what its pool knows of it (wt.pool: the
				  * pool of this try; wt.force: see
				  * rt_pool_submit()) */
	struct nrf_h2_stream *ps;
	uint8_t state;
	bool local;
	bool need_body;          /* 200 NFDiscover: decide on the body */
	bool hold;               /* peer answer kept whole before it is relayed */
	bool eof_sent;           /* relay: front body ended */
	bool retried;            /* sent again once after it was refused */
	bool lost;               /* lost with its connection once, sent again
				  * apart (wt.isolate); a second loss fails it */
	uint64_t started_ns;     /* nrf_now_ns() when the try started */
	struct rt_timer timer;   /* per-try timeout */
	struct rt_timer due;     /* relay an answer too big to hold (0 ms:
				  * after the reads of this loop iteration) */
};

/*
 * nrf_rt_lat_bucket(), inline for the two latencies counted per forwarded
 * request (the request's and the upstream answer's): the linear search it
 * replaces multiplied each bound by 1000 and walked half the buckets for
 * answers in the 1-25 ms range (measured slower). A 4-step binary search
 * over the bounds in ns, padded to 16 with +Inf (rt_stats.c).
 */
extern const uint64_t rt_lat_bounds_ns[16];

static inline unsigned int
rt_lat_bucket(uint64_t ns)
{
	unsigned int b = 0;

	/* Smallest b with ns <= rt_lat_bounds_ns[b]; entries 14 and 15 are
	 * +Inf, so the answer is at most 14 = NRF_RT_LAT_BUCKETS. */
	b += ns > rt_lat_bounds_ns[b + 7] ? 8 : 0;
	b += ns > rt_lat_bounds_ns[b + 3] ? 4 : 0;
	b += ns > rt_lat_bounds_ns[b + 1] ? 2 : 0;
	b += ns > rt_lat_bounds_ns[b] ? 1 : 0;
	return b;
}

struct rt_xact {
	struct rt_worker *w;
	struct nrf_h2_stream *front;
	struct nrf_rt_snap *snap;
	uint16_t next;             /* next plan.cand[] to try */
	bool answered;
	struct rt_try t;           /* the try in progress (one at a time) */
	bool have_local;           /* x->local holds the local NRF's answer */
	struct nrf_fwd_ledger lg;  /* what happened so far: the rule's input */
	int32_t max_hops;          /* 3gpp-Sbi-Max-Forward-Hops; -1: absent */
	struct rt_timer rtimer;    /* request timeout */
	uint64_t t0;               /* complete request received (ns) */
	uint8_t outcome;           /* enum nrf_rt_outcome of the answer given */
	bool client_bound;         /* relaying, and at the last look of the
				    * request timer the client's window (or
				    * socket) held the answer back */
	uint32_t stalled_looks;    /* looks since the client last took a byte */
	uint64_t framed;           /* answer body bytes framed at the last look */
	struct rt_xact *next_free;
	/* From here on not cleared by xact_take() (it clears only what comes
	 * before req): req is moved in and rid written (rt_rid_take()) as
	 * the transaction is taken; local is read only when have_local says
	 * it was moved in (local_complete()); the plan is decided before the
	 * transaction is taken. */
	struct nrf_h2_msg req;     /* the request, kept for every try */
	struct nrf_h2_msg local;   /* local NRF answer kept for step 8 */
	char rid[RT_RID_MAX + 1];  /* request id (rt_rid_xact()); "" none,
				    * RT_RID_LATER: not worked out yet */
	char span[17];             /* parent-id sent upstream in traceparent
				    * (rt_trace_child()); "" none */
	struct nrf_fwd_plan plan;
	uint64_t lim;              /* client entry whose maxStreams this request
				    * holds (w->lim_cur, written as the
				    * transaction is taken); 0: none */
};

extern const struct nrf_h2_cbs rt_front_cbs;
extern const struct nrf_h2_cbs rt_peer_cbs;

/* Peer stream callbacks (rt_proxy.c), used by rt_peer_cbs (rt_pool.c). */
void rt_peer_on_response(struct nrf_h2_stream *st);
void rt_peer_on_data(struct nrf_h2_stream *st);
void rt_peer_on_close(struct nrf_h2_stream *st, uint32_t code, int err);

void rt_xact_pool_fini(struct rt_worker *w);
/* Free half of the pooled transactions unused since the last call (above
 * a floor); bytes freed (rt_mem.c, once a second). */
size_t rt_xact_trim(struct rt_worker *w);

/*
 * Relayed answers (rt_proxy.c, docs/via.md): append nrfwd's own Via member
 * to the fields @p h[0..n) of an upstream answer about to be relayed for
 * @p x, when generalOptions.viaOnResponses is on and @p h (the worker's
 * hdrs, hdrs_cap entries) has room. @return the new count.
 */
size_t rt_via_on_answer(const struct rt_xact *x, struct nrf_h2_hdr *h, size_t n);

/* Links past nrfwd (rt_links.c, decision 0013). */

/* True when the upstream of the current try of @p x (@p local: the local
 * NRF) has rewriteLinks in the request's snapshot. */
static inline bool
rt_links_on(const struct rt_xact *x, bool local)
{
	const struct nrf_cfg *cfg = x->snap->cfg;

	if (NRF_LIKELY(!x->snap->links))
		return false;
	if (local)
		return cfg->rt.local_nrf.rewrite_links;
	return x->next > 0 && cfg->peers[x->plan.cand[x->next - 1]].rewrite_links;
}

/* True when the body of @p m is one whose links are rewritten (JSON, not
 * content-encoded): worth holding whole. */
bool rt_links_body(const struct nrf_h2_msg *m);

/*
 * Answer the front stream of @p x with @p m (an answer of the local NRF
 * when @p local, else of the current candidate), its links rewritten.
 * @p end: m's body is complete. Body chunks are moved to the front stream
 * or released. @return 0 when nothing was to be rewritten (nothing done:
 * relay @p m as usual), 1 answered, < 0 answering failed (the caller
 * resets the stream).
 */
int rt_links_respond(struct rt_xact *x, struct nrf_h2_msg *m, bool local, bool end);

/* ------------------------------------------------------------------------ */
/* Per-client limits (rt_limit.c, decision 0055; the table: rt_limit.h)      */

/* With every limit off (the default) nothing of this runs: the request
 * path tests w->lim_on and copies w->lim_cur (0) into its transaction, the
 * close path tests x->lim: two predictable branches and a copy, no call.
 *
 * Worker side. rt_limit_conf(): at creation and every snapshot switch (the
 * limits are live). rt_limit_admit(): front_on_request(), w->lim_on set;
 * true when the request was answered 429 (NRF_Client_Limit). Otherwise,
 * with maxStreams on, the request already counts in its client's entry,
 * which w->lim_cur names (0: none): the transaction it takes keeps that
 * in x->lim (front_on_request() copies it, whatever it is) and gives it
 * back with rt_limit_done() when it closes; a request answered without a
 * transaction gives it back at once with rt_limit_undo(). w->lim_cur is
 * only meaningful between an admission and the end of that callback
 * (rt_limit_conf() clears it; with the limits off it stays 0). */
void rt_limit_conf(struct rt_worker *w);
bool rt_limit_admit(struct rt_worker *w, struct nrf_h2_stream *st);
void rt_limit_undo(struct rt_worker *w);
void rt_limit_done(struct rt_worker *w, struct rt_xact *x);
void rt_limit_free(struct rt_worker *w);

/* ------------------------------------------------------------------------ */
/* Loop events (rt_loops.c; struct nrf_rt_loop)                              */

struct rt_loops;

/* The worker's table (allocated with the worker: nothing is allocated when
 * a loop happens). 0 or NRF_ENOMEM; rt_loops_free() is NULL-safe. */
int rt_loops_create(struct rt_worker *w);
void rt_loops_free(struct rt_worker *w);
/* Bytes of one worker's table (fixed). */
size_t rt_loops_bytes(void);

/*
 * A loop event of @p kind on the request whose Via field lines are
 * @p lines[0..n_lines) (as scanned), on front stream @p st; @p x its
 * transaction (NULL: answered at once, inside the delivering callback);
 * @p peer the snapshot peer skipped (PREVENTED; -1 otherwise). Called
 * only on requests that loop: a hash of the Via bytes, a probe of the
 * worker's index, two relaxed stores; a path not seen before is parsed,
 * normalised and stored (taking the place of the least recently seen one
 * when the table is full). Worker thread; no allocation, lock or log.
 */
void rt_loop_note(struct rt_worker *w, enum nrf_rt_loop_kind kind,
	const struct nrf_slice *lines, size_t n_lines, int peer, struct nrf_h2_stream *st,
	struct rt_xact *x);

/* Read worker @p w's table into @p v (nrf_rt_loops_merge()). Control
 * thread. 0 or NRF_ENOMEM. */
int rt_loops_read(const struct rt_worker *w, struct nrf_rt_loop **v, size_t *n,
	size_t *cap);

/* ------------------------------------------------------------------------ */
/* Worker                                                                    */

struct rt_listener {
	struct rt_worker *w;
	struct nrf_tp_listener *l;
};

struct rt_worker {
	struct nrf_rt *rt;
	unsigned int id;
	pthread_t th;
	bool started;
	const struct nrf_tp_ops *tp;
	struct nrf_tp_loop *loop;
	struct nrf_tp_loop *tls_loop; /* TLS decorator over loop: the h2 context's */
	struct nrf_h2_ctx *h2;
	struct nrf_via_scratch *scratch;
	struct nrf_rt_snap *snap;

	struct rt_listener lst[NRF_CFG_MAX_LISTEN];
	unsigned int n_lst;
	uint32_t n_front;
	uint32_t max_front;

	struct rt_view *view;     /* pools of the current snapshot (w->snap) */
	struct rt_view *old_views; /* of older snapshots still in use */
	struct nrf_list all_pools; /* every pool (rt_pool.all), also retired ones */
	uint64_t view_seq;         /* views built (pool claim marks) */
	uint64_t down[NRF_CFG_MAX_PEERS / 64]; /* by current peer index */

	/* upstream counters: chunks published with release, count too */
	struct rt_pstats *_Atomic pstats[RT_PSTATS_CHUNKS];
	_Atomic uint32_t n_pstats;

	struct rt_timers timers;  /* arg = this worker */

	struct rt_xact *free_x;
	uint32_t n_free_x;
	uint32_t low_free_x;      /* lowest n_free_x since the last trim */
	uint32_t n_xact;
	uint32_t rotation;

	/* scratch for building requests and scanning */
	struct nrf_slice *via;
	size_t via_cap;
	struct nrf_h2_hdr *hdrs;
	size_t hdrs_cap;
	char *path;
	size_t path_cap;
	char *flat;
	size_t flat_cap;
	char *links;              /* rewritten answer bodies (rt_links.c) */
	size_t links_cap;
	char via_member[320];
	size_t via_member_len;   /* strlen(via_member) */

	atomic_int stop;
	atomic_bool exited;
	uint32_t drain_ms;
	bool draining;
	bool drain_expired;
	bool drain_quiet;        /* goawayDelayMs: listeners closed, no GOAWAY yet */
	bool drain_final;        /* final GOAWAY sent */
	bool exiting;            /* closing everything: no new connections */
	struct rt_timer drain_timer;
	struct rt_timer sweep_timer; /* runtime.timeouts (rt_sweep.c) */
	uint32_t sweep_ms;
	uint64_t budget;          /* its share of maxBufferedBytes (rt_mem.c) */
	struct rt_timer mem_timer; /* pools given back, malloc_trim() */
	size_t mem_freed;         /* bytes given back since the last malloc_trim() */
	_Atomic uint64_t seen_gen;
	struct rt_alog *alog;     /* access log buffer, request ids (rt_alog.c) */
	/* runtime.limits.perClient (rt_limit.c): on, the table (allocated
	 * the first time they are on), and the entry whose maxStreams the
	 * request being delivered holds (rt_limit_admit()). */
	bool lim_on;
	struct rt_limit *lim;
	uint64_t lim_cur;
	_Atomic uint64_t loop_ns; /* nrf_now_ns() of its last iteration (liveness) */
	struct rt_loops *loops;   /* loop events (rt_loops.c) */

	struct nrf_rt_stats st;
} NRF_CACHE_ALIGNED;

/*
 * The worker's clock: nrf_now_ns() read once per loop iteration, at the
 * first use after poll() stopped waiting (the loop clears it before it
 * waits: the events poll() dispatches never see a time from before the
 * wait). What is handled later in the same iteration gets the same time:
 * the error is the iteration's own duration (microseconds, a millisecond
 * under heavy load), against one vDSO clock read per event saved (issue
 * 19; the trade HAProxy makes with now_ms).
 */
static inline uint64_t
rt_now(struct rt_worker *w)
{
	return rt_timers_now(&w->timers);
}

/* Single-writer counter update, readable from the control thread. */
#define RT_STAT(w, field, n)                                                   \
	__atomic_store_n(&(w)->st.field, (w)->st.field + (uint64_t)(n), __ATOMIC_RELAXED)

struct rt_group_ops;

struct nrf_rt {
	struct nrf_rt_params p;
	const struct rt_group_ops *grp; /* how the workers run (rt_group.h) */
	const struct nrf_tp_ops *tp;
	struct rt_worker *w[NRF_RT_MAX_WORKERS];
	unsigned int n;
	_Atomic(struct nrf_rt_snap *) snap;
	struct nrf_rt_snap *cur;
	struct nrf_rt_snap *retired;
	_Atomic uint64_t cur_gen;  /* rt->cur->gen, for any thread */
	pthread_mutex_t ctl_lock; /* control side: publish, reclaim, emit */
	struct rt_dns *dns;       /* peer names (rt_dns.c); NULL: not started.
				   * Set and cleared under ctl_lock. */
	atomic_bool running;
	/* Lcore group (rt_group_lcore.c): the worker's lcore (-1: a pthread,
	 * dp_th), and its hello once it has stored its thread id. */
	int dp_lcore;
	pthread_t dp_th;
	atomic_bool dp_hello;
};

/* nrf_rt_snap_create(); @p resolve false: names are not looked up (their
 * endpoints stay without address until rt_dns_sync() gives the table's);
 * @p rt (may be NULL): neither are names its resolver knows. */
struct nrf_rt_snap *rt_snap_build(struct nrf_cfg *cfg, struct nrf_rt *rt, bool resolve,
	int *err);
/* nrf_rt_publish() with ctl_lock held. */
int rt_publish_locked(struct nrf_rt *rt, struct nrf_rt_snap *snap);

struct rt_worker *rt_worker_create(struct nrf_rt *rt, unsigned int id,
	struct nrf_rt_snap *snap, uint16_t *bound_ports, int *err);
void rt_worker_free(struct rt_worker *w);
void *rt_worker_main(void *arg);
/* runtime.timeouts of the worker's snapshot into its h2 context, and the
 * sweep timer armed for their period (rt_sweep.c). At creation and at every
 * snapshot switch: the timeouts are live. */
void rt_sweep_conf(struct rt_worker *w);
/* Peer connection idle for upstreamIdleMs: may it be closed? (on_conn_idle) */
bool rt_pconn_idle(struct nrf_h2_conn *c);
/* Memory (rt_mem.c): the worker's share of runtime.limits.maxBufferedBytes
 * into its h2 context (at creation and at every snapshot switch: live), and
 * the once-a-second timer that gives unused pooled memory back. */
void rt_mem_conf(struct rt_worker *w);
/* Connections refused over maxConnections (rt_worker.c). */
extern const struct nrf_h2_cbs rt_refused_cbs;

/* Mark peer @p p down/up in the worker's health bitset. */
void rt_worker_set_down(struct rt_worker *w, int peer, bool down);

/* TLS (rt_tls.c): the snapshot's contexts from runtime.tls/tlsClient, set
 * on every https endpoint. 0, NRF_ECONFIG (logged: pointer, file, reason)
 * or NRF_ENOMEM. */
int rt_tls_snap_init(struct nrf_rt_snap *s);
void rt_tls_snap_fini(struct nrf_rt_snap *s);

#endif /* NRF_RT_INT_H */
