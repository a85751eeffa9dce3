/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_LIMIT_H
#define NRF_RT_LIMIT_H

/*
 * The client table of runtime.limits.perClient (rt_limit.c, decision
 * 0055). Internal to lib/rt (rt_int.h has the worker side); a header of its
 * own so the unit tests (C++) can drive the table without a worker.
 *
 * One table per worker, used by that worker's thread only: fixed size,
 * allocated once when the limits are first turned on, never per request.
 * Each client has a token bucket for ratePerSecond/burst and a count of
 * its requests in progress for maxStreams. A new client takes a free
 * entry, or when the table is full the entry of the client seen least
 * recently (counted: nrfwd_client_limit_evictions_total); that client
 * starts afresh when it comes back (full bucket, no stream counted): the
 * table fails open, never closed.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RT_LIMIT_SLOTS 4096u     /* clients one worker tracks */

enum rt_limit_kind {
	RT_LK_NONE = 0,
	RT_LK_V4,        /* IPv4 address in b[0..3] */
	RT_LK_V6,        /* IPv6 address (whole: no /64 grouping) */
	RT_LK_NF,        /* NF instance id (UUID) of the User-Agent */
};

struct rt_limit_key {
	uint8_t kind;    /* enum rt_limit_kind */
	uint8_t b[16];   /* unused bytes 0 */
};

struct rt_limit_ent {
	uint8_t key[16];
	uint8_t kind;    /* RT_LK_NONE: free */
	uint32_t streams; /* requests in progress that took a transaction */
	uint32_t hnext;  /* next entry of its hash chain, slot + 1; 0: end */
	uint32_t newer, older; /* recency list, slot + 1; 0: end */
	uint64_t stamp;  /* when the key was set (unique in the table) */
	uint64_t tat;    /* bucket (GCRA's theoretical arrival time): when, in
			  * ns, the bucket is full again; a request conforms
			  * while that is at most tolerance_ns ahead of it */
};

struct rt_limit {
	/* Settings (rt_limit_set()). */
	uint32_t max_streams;    /* 0: off */
	uint64_t interval_ns;    /* 1 s / ratePerSecond; 0: no rate limit */
	uint64_t tolerance_ns;   /* (burst - 1) * interval_ns */
	enum nrf_cfg_key_by key_by;
	/* The table. */
	struct rt_limit_ent *ent; /* [slots] */
	uint32_t *heads;         /* hash buckets [n_heads], slot + 1 */
	uint32_t n_heads;        /* power of two */
	uint32_t slots;
	uint32_t used;           /* entries taken (slots below are in use) */
	uint32_t newest, oldest; /* recency list ends, slot + 1 */
	uint64_t stamp;
	uint64_t seed;
	/* Counters: nrfwd_client_limit_evictions_total, the clients gauge
	 * (NULL: none kept, unit tests may point it anywhere). */
	struct nrf_rt_stats *st;
	uint64_t evictions;
};

/* A table of @p slots (1..65536) entries. 0 or NRF_ENOMEM. */
int rt_limit_init(struct rt_limit *l, uint32_t slots, uint64_t seed);
void rt_limit_fini(struct rt_limit *l);
/* Take the limits of @p c; a change of keyBy forgets every client. */
void rt_limit_set(struct rt_limit *l, const struct nrf_cfg_client_limits *c);
/* Forget every client (in-flight requests are then not released). */
void rt_limit_clear(struct rt_limit *l);
/* Keys: the address of nrf_h2_conn_peer() ("a.b.c.d:port", "[v6]:port";
 * an IPv4-mapped IPv6 address is its IPv4 address); the NF instance id of
 * a User-Agent value "<NF type>-<UUID>[ <FQDN>]" (TS 29.500 §5.2.2.2).
 * false: not such a value (@p k is then not written). */
bool rt_limit_key_addr(const char *peer, struct rt_limit_key *k);
bool rt_limit_key_ua(struct nrf_slice ua, struct rt_limit_key *k);
/* The entry of @p k, made when new (see above): it becomes the one seen
 * most recently. @p word (may be NULL) receives its tag. Never NULL. */
struct rt_limit_ent *rt_limit_find(struct rt_limit *l, const struct rt_limit_key *k,
	uint64_t *word);
/* The entry a tag still names (NULL: 0, or it went to another client). */
struct rt_limit_ent *rt_limit_tagged(const struct rt_limit *l, uint64_t tag);
uint64_t rt_limit_tag(const struct rt_limit *l, const struct rt_limit_ent *e);
/* @p e is seen now (most recent). */
void rt_limit_touch(struct rt_limit *l, struct rt_limit_ent *e);
/* One token of @p e's bucket at time @p now_ns: 0 taken, else the whole
 * seconds until one will be there (>= 1; the bucket is not changed). */
uint32_t rt_limit_take(const struct rt_limit *l, struct rt_limit_ent *e, uint64_t now_ns);
/* A request counted in the entry of @p tag is over (no-op when the tag no
 * longer names it). */
void rt_limit_release(struct rt_limit *l, uint64_t tag);

#ifdef __cplusplus
}
#endif
#endif /* NRF_RT_LIMIT_H */
