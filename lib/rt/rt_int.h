/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_INT_H
#define NRF_RT_INT_H

/*
 * Internals of lib/rt shared by its translation units:
 *   rt.c        control side: snapshots, runtime create/start/stop, stats
 *   rt_worker.c worker thread: loop, listeners, front connections, drain
 *   rt_timer.c  per-worker timer heap
 *   rt_pool.c   per-worker, per-peer connection pools and queues, health
 *   rt_proxy.c  the request pipeline (SPEC §3) on one front stream
 */

#include <pthread.h>
#include <stdatomic.h>

#include "nrf_cfg.h"
#include "nrf_fwd.h"
#include "nrf_h2.h"
#include "nrf_rt.h"
#include "nrf_tp.h"
#include "nrf_via.h"
#include "rt_timer.h"

#define MOD "rt"

/* ------------------------------------------------------------------------ */
/* Snapshot                                                                  */

/* Where tries to one upstream go, and how they are addressed. */
struct rt_ep {
	struct nrf_tp_addr addr;
	bool ok;                 /* address known */
	bool tls;                /* https: not supported by this transport yet */
	char name[280];          /* for logs: "host:port" */
	char authority[280];     /* :authority of forwarded requests */
	char scheme[8];          /* :scheme */
	char api_root[560];      /* 3gpp-Sbi-Target-apiRoot (peers) */
	const char *prefix;      /* apiPrefix ("" for the local NRF) */
};

struct nrf_rt_snap {
	struct nrf_cfg *cfg;
	struct nrf_via_db *db;
	struct nrf_fwd_table *table;
	uint64_t gen;
	struct rt_ep *peers;     /* [cfg->n_peers] */
	struct rt_ep local;      /* local.ok == false: no local NRF */
	/* Requests holding this snapshot, per worker (written by that worker). */
	_Atomic uint32_t *refs;
	unsigned int n_refs;
	struct nrf_rt_snap *retired_next;
};

struct rt_worker;

#define RT_CONTAINER(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------------------ */
/* Pools                                                                     */

struct rt_pool;
struct rt_try;

struct rt_pconn {
	struct rt_pool *pool;
	struct nrf_h2_conn *h2;
	bool ready;              /* connected */
	struct rt_timer ctimer;  /* connect timeout */
	struct rt_pconn *prev;
	struct rt_pconn *next;
};

struct rt_pool {
	struct rt_worker *w;
	int peer;                /* index in cfg->peers, -1: local NRF */
	struct rt_ep ep;         /* copy from the worker's snapshot */
	struct rt_pconn *conns;
	uint32_t n_conns;
	struct rt_try *qhead;
	struct rt_try *qtail;
	uint32_t qlen;
	bool down;
	bool ever_up;
	uint32_t backoff_ms;
	struct rt_timer hold;    /* end of hold-down */
};

/* Send @p t through @p p: on an open connection with room, else queued.
 * 0 (t->state SENT or QUEUED), NRF_EFULL (queue full), other < 0: cannot
 * be tried now (down, no address, TLS, connect failed at once). */
int rt_pool_submit(struct rt_pool *p, struct rt_try *t);
/* Take a queued try out of its pool's queue. */
void rt_pool_dequeue(struct rt_try *t);
void rt_pool_init(struct rt_worker *w, struct rt_pool *p, int peer, const struct rt_ep *ep);
/* Before the h2 context closes its connections (worker exit). */
void rt_pool_fini(struct rt_pool *p);

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */

enum rt_try_state {
	T_IDLE = 0,
	T_QUEUED,   /* in a pool queue */
	T_SENT,     /* stream open, waiting for the answer's headers */
	T_BUFFER,   /* local answer: keeping its body (trigger check / step 8) */
	T_RELAY,    /* answer chosen: streaming it to the client */
};

struct rt_xact;

struct rt_try {
	struct rt_xact *x;
	struct rt_pool *pool;
	struct nrf_h2_stream *ps;
	struct rt_try *qprev;
	struct rt_try *qnext;
	uint8_t state;
	bool local;
	bool need_body;          /* 200 NFDiscover: decide on the body */
	bool eof_sent;           /* relay: front body ended */
	struct rt_timer timer;   /* per-try timeout */
};

struct rt_xact {
	struct rt_worker *w;
	struct nrf_h2_stream *front;
	struct nrf_rt_snap *snap;
	struct nrf_h2_msg req;     /* the request, kept for every try */
	struct nrf_fwd_plan plan;
	uint16_t next;             /* next plan.cand[] to try */
	bool answered;
	struct rt_try t;           /* the try in progress (one at a time) */
	struct nrf_h2_msg local;   /* local NRF answer kept for step 8 */
	bool have_local;
	struct rt_timer rtimer;    /* request timeout */
	struct rt_xact *next_free;
};

extern const struct nrf_h2_cbs rt_front_cbs;
extern const struct nrf_h2_cbs rt_peer_cbs;

/* Peer stream callbacks (rt_proxy.c), used by rt_peer_cbs (rt_pool.c). */
void rt_peer_on_response(struct nrf_h2_stream *st);
void rt_peer_on_data(struct nrf_h2_stream *st);
void rt_peer_on_close(struct nrf_h2_stream *st, uint32_t code, int err);

/* Put the request of @p t on @p c (used by pools). 0 or < 0. */
int rt_try_send(struct rt_try *t, struct nrf_h2_conn *c);
/* A queued or sent try could not be completed (pool side failure). */
void rt_try_failed(struct rt_try *t, const char *why);
void rt_xact_pool_fini(struct rt_worker *w);

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
	struct nrf_h2_ctx *h2;
	struct nrf_via_scratch *scratch;
	struct nrf_rt_snap *snap;

	struct rt_listener lst[NRF_CFG_MAX_LISTEN];
	unsigned int n_lst;
	uint32_t n_front;
	uint32_t max_front;

	struct rt_pool *pools;   /* [snap->cfg->n_peers] */
	uint16_t n_pools;
	struct rt_pool local;
	uint64_t down[NRF_CFG_MAX_PEERS / 64];

	struct rt_timers timers;  /* arg = this worker */

	struct rt_xact *free_x;
	uint32_t n_free_x;
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
	char via_member[320];

	atomic_int stop;
	uint32_t drain_ms;
	bool draining;
	bool drain_expired;
	bool drain_final;        /* final GOAWAY sent */
	bool exiting;            /* closing everything: no new connections */
	struct rt_timer drain_timer;
	_Atomic uint64_t seen_gen;

	struct nrf_rt_stats st;
} NRF_CACHE_ALIGNED;

/* Single-writer counter update, readable from the control thread. */
#define RT_STAT(w, field, n)                                                   \
	__atomic_store_n(&(w)->st.field, (w)->st.field + (uint64_t)(n), __ATOMIC_RELAXED)

struct nrf_rt {
	struct nrf_rt_params p;
	const struct nrf_tp_ops *tp;
	struct rt_worker *w[NRF_RT_MAX_WORKERS];
	unsigned int n;
	_Atomic(struct nrf_rt_snap *) snap;
	struct nrf_rt_snap *cur;
	struct nrf_rt_snap *retired;
};

struct rt_worker *rt_worker_create(struct nrf_rt *rt, unsigned int id,
	struct nrf_rt_snap *snap, uint16_t *bound_ports, int *err);
void rt_worker_free(struct rt_worker *w);
void *rt_worker_main(void *arg);
/* Mark peer @p p down/up in the worker's health bitset. */
void rt_worker_set_down(struct rt_worker *w, int peer, bool down);

#endif /* NRF_RT_INT_H */
