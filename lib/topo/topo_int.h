/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of lib/topo shared by topo.c, topo_trace.c and topo_lint.c. */
#ifndef TOPO_INT_H
#define TOPO_INT_H

#include "nrf_topo.h"

/* What kind of address of an NRF an index entry is. */
enum topo_addr_kind {
	TOPO_ADDR_SELF = 0, /* ocnrfHost:ocnrfPort: what it appends to Via */
	TOPO_ADDR_ALIAS,    /* generalOptions.aliases[] */
	TOPO_ADDR_LISTEN,   /* runtime.listen[] other than 0.0.0.0 / :: */
};

/* One address of one NRF; the index is sorted by key, then NRF. */
struct topo_addr {
	char *key;      /* topo_key(): normalised host:port */
	uint16_t nrf;
	uint8_t kind;   /* enum topo_addr_kind */
	uint16_t which; /* alias or listen index */
};

struct topo_strs {
	char **v;
	size_t n;
	size_t cap;
};

struct topo_node {
	struct nrf_topo_nrf pub;
	struct nrf_cfg *cfg;
	char *source;
	struct nrf_via_db *db;
	struct nrf_fwd_table *table;
	char via_member[320];   /* "2.0 host:port", as lib/rt appends it */
	size_t first_edge;      /* its peers' edges: edges[first_edge ..] */
	struct topo_strs types; /* holdings */
	struct topo_strs ids;
	struct topo_strs subs;
	bool down;
	bool local_down;
	uint32_t rotation;      /* state of its one worker */
	uint64_t held[NRF_CFG_MAX_PEERS / 64];
};

struct topo_invalid {
	char *source;
	int err;
	struct nrf_cfg_problem *v;
	size_t n;
};

struct nrf_topo {
	struct topo_node *nodes;
	size_t n;
	size_t cap;
	struct topo_invalid *bad;
	size_t n_bad;
	size_t cap_bad;
	struct topo_addr *addrs;
	size_t n_addrs;
	struct nrf_topo_edge *edges;
	size_t n_edges;
	struct nrf_via_scratch *scratch; /* usable with every node's db */
	bool resolved;
};

/*
 * Normalise host:port as identities compare (docs/behaviour.md §4): lower case, one
 * trailing dot removed, an IPv6 address in its canonical text within
 * brackets. @return the length, or -1 when it does not fit.
 */
int topo_key(char *buf, size_t cap, const char *host, uint16_t port);

/*
 * The NRFs whose addresses have key @p key: *first is the first index
 * entry, the return value how many entries (0: none).
 */
size_t topo_addr_find(const struct nrf_topo *t, const char *key, size_t *first);

/* Scan Via field lines with node @p n's database. */
int topo_scan(struct nrf_topo *t, size_t n, const struct nrf_slice *lines, size_t n_lines,
	struct nrf_via_result *res);

/* The operation lint walks with at node @p n: NFDiscover when it may be
 * forwarded there, else the first forwardable one, else NRF_OP_OTHER. */
enum nrf_fwd_op topo_walk_op(const struct nrf_cfg *cfg);

/* strdup that tolerates NULL (gives ""). */
char *topo_strdup(const char *s);

/* printf into a new string (NULL on ENOMEM). */
char *topo_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* TOPO_INT_H */
