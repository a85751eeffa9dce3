/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A topology: NRFs, their addresses, and their peer entries resolved to the
 * NRFs they reach. The identity database and forwarding table of every NRF
 * are the data path's own (nrf_fwd_via_db_create(), nrf_fwd_table_create()),
 * so trace and lint decide with exactly what a running nrfwd would load.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nrf_err.h"
#include "topo_int.h"

char *
topo_strdup(const char *s)
{
	return strdup(s != NULL ? s : "");
}

char *
topo_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static void
strs_fini(struct topo_strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int
strs_add(struct topo_strs *s, const char *v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap * 2 + 8;
		char **nv = realloc(s->v, cap * sizeof(*nv));

		if (nv == NULL)
			return NRF_ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n] = strdup(v);
	if (s->v[s->n] == NULL)
		return NRF_ENOMEM;
	s->n++;
	return 0;
}

struct nrf_topo *
nrf_topo_create(int *err)
{
	struct nrf_topo *t = calloc(1, sizeof(*t));

	if (err != NULL)
		*err = t == NULL ? NRF_ENOMEM : 0;
	return t;
}

void
nrf_topo_free(struct nrf_topo *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct topo_node *n = &t->nodes[i];

		nrf_fwd_table_free(n->table);
		nrf_via_db_free(n->db);
		nrf_cfg_free(n->cfg);
		free(n->source);
		strs_fini(&n->types);
		strs_fini(&n->ids);
		strs_fini(&n->subs);
	}
	for (size_t i = 0; i < t->n_bad; i++) {
		free(t->bad[i].source);
		free(t->bad[i].v);
	}
	for (size_t i = 0; i < t->n_addrs; i++)
		free(t->addrs[i].key);
	nrf_via_scratch_free(t->scratch);
	free(t->addrs);
	free(t->edges);
	free(t->bad);
	free(t->nodes);
	free(t);
}

int
nrf_topo_add(struct nrf_topo *t, struct nrf_cfg *cfg, const char *source)
{
	struct topo_node *n;

	if (t == NULL || cfg == NULL || source == NULL || t->resolved) {
		nrf_cfg_free(cfg);
		return NRF_EINVAL;
	}
	if (t->n >= NRF_TOPO_MAX_NRFS) {
		nrf_cfg_free(cfg);
		return NRF_ETOOBIG;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap * 2 + 8;
		struct topo_node *nv = realloc(t->nodes, cap * sizeof(*nv));

		if (nv == NULL) {
			nrf_cfg_free(cfg);
			return NRF_ENOMEM;
		}
		t->nodes = nv;
		t->cap = cap;
	}
	n = &t->nodes[t->n];
	memset(n, 0, sizeof(*n));
	n->source = strdup(source);
	if (n->source == NULL) {
		nrf_cfg_free(cfg);
		return NRF_ENOMEM;
	}
	n->cfg = cfg;
	n->pub.index = (uint16_t)t->n;
	n->pub.source = n->source;
	n->pub.cfg = cfg;
	n->pub.name = cfg->general.self_name;
	return (int)t->n++;
}

int
nrf_topo_add_invalid(struct nrf_topo *t, const char *source, int err,
	const struct nrf_cfg_problems *problems)
{
	struct topo_invalid *b;

	if (t == NULL || source == NULL)
		return NRF_EINVAL;
	if (t->n_bad == t->cap_bad) {
		size_t cap = t->cap_bad * 2 + 4;
		struct topo_invalid *nv = realloc(t->bad, cap * sizeof(*nv));

		if (nv == NULL)
			return NRF_ENOMEM;
		t->bad = nv;
		t->cap_bad = cap;
	}
	b = &t->bad[t->n_bad];
	memset(b, 0, sizeof(*b));
	b->source = strdup(source);
	b->err = err;
	if (b->source == NULL)
		return NRF_ENOMEM;
	if (problems != NULL && problems->n > 0) {
		b->v = malloc(problems->n * sizeof(*b->v));
		if (b->v == NULL) {
			free(b->source);
			return NRF_ENOMEM;
		}
		memcpy(b->v, problems->v, problems->n * sizeof(*b->v));
		b->n = problems->n;
	}
	t->n_bad++;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Addresses                                                                 */

int
topo_key(char *buf, size_t cap, const char *host, uint16_t port)
{
	char h[300], canon[INET6_ADDRSTRLEN];
	unsigned char a6[16];
	size_t len;
	int n;

	len = strlen(host);
	if (len > 0 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len >= sizeof(h))
		return -1;
	for (size_t i = 0; i < len; i++)
		h[i] = (char)tolower((unsigned char)host[i]);
	h[len] = '\0';
	if (strchr(h, ':') != NULL) {
		if (inet_pton(AF_INET6, h, a6) == 1 &&
			inet_ntop(AF_INET6, a6, canon, sizeof(canon)) != NULL)
			n = snprintf(buf, cap, "[%s]:%u", canon, port);
		else
			n = snprintf(buf, cap, "[%s]:%u", h, port);
	} else {
		if (len > 0 && h[len - 1] == '.')
			h[len - 1] = '\0';
		n = snprintf(buf, cap, "%s:%u", h, port);
	}
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

static int
addr_cmp(const void *a, const void *b)
{
	const struct topo_addr *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	if (x->nrf != y->nrf)
		return x->nrf < y->nrf ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->which < y->which ? -1 : x->which > y->which;
}

size_t
topo_addr_find(const struct nrf_topo *t, const char *key, size_t *first)
{
	size_t lo = 0, hi = t->n_addrs, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->addrs[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < t->n_addrs && strcmp(t->addrs[lo + n].key, key) == 0)
		n++;
	return n;
}

static int
addr_add(struct nrf_topo *t, size_t *cap, const char *host, uint16_t port, uint16_t nrf,
	enum topo_addr_kind kind, uint16_t which)
{
	char key[320];
	struct topo_addr *a;

	if (topo_key(key, sizeof(key), host, port) < 0)
		return 0; /* cannot be an identity either */
	if (t->n_addrs == *cap) {
		size_t nc = *cap * 2 + 16;
		struct topo_addr *nv = realloc(t->addrs, nc * sizeof(*nv));

		if (nv == NULL)
			return NRF_ENOMEM;
		t->addrs = nv;
		*cap = nc;
	}
	a = &t->addrs[t->n_addrs];
	a->key = strdup(key);
	if (a->key == NULL)
		return NRF_ENOMEM;
	a->nrf = nrf;
	a->kind = (uint8_t)kind;
	a->which = which;
	t->n_addrs++;
	return 0;
}

static bool
wildcard(const char *addr)
{
	return strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0 ||
		strcmp(addr, "[::]") == 0;
}

static int
index_addresses(struct nrf_topo *t)
{
	size_t cap = 0;
	int rc;

	for (size_t i = 0; i < t->n; i++) {
		const struct nrf_cfg *c = t->nodes[i].cfg;

		rc = addr_add(t, &cap, c->general.host, c->general.port, (uint16_t)i,
			TOPO_ADDR_SELF, 0);
		for (uint16_t a = 0; rc == 0 && a < c->general.n_aliases; a++)
			rc = addr_add(t, &cap, c->general.aliases[a].host,
				c->general.aliases[a].port, (uint16_t)i, TOPO_ADDR_ALIAS, a);
		for (uint16_t l = 0; rc == 0 && l < c->rt.n_listen; l++)
			if (!wildcard(c->rt.listen[l].address))
				rc = addr_add(t, &cap, c->rt.listen[l].address,
					c->rt.listen[l].port, (uint16_t)i, TOPO_ADDR_LISTEN, l);
		if (rc != 0)
			return rc;
	}
	if (t->n_addrs > 1)
		qsort(t->addrs, t->n_addrs, sizeof(*t->addrs), addr_cmp);
	return 0;
}

/* The lowest-numbered NRF with address @p key, or -1. */
static int32_t
addr_nrf(const struct nrf_topo *t, const char *key)
{
	size_t first, n = topo_addr_find(t, key, &first);

	return n > 0 ? t->addrs[first].nrf : -1;
}

/* ------------------------------------------------------------------------ */
/* Resolution                                                                */

int
topo_scan(struct nrf_topo *t, size_t n, const struct nrf_slice *lines, size_t n_lines,
	struct nrf_via_result *res)
{
	return nrf_via_scan(t->nodes[n].db, t->scratch, lines, n_lines, res);
}

enum nrf_fwd_op
topo_walk_op(const struct nrf_cfg *cfg)
{
	if (nrf_fwd_op_enabled(cfg, NRF_OP_NF_DISCOVER))
		return NRF_OP_NF_DISCOVER;
	for (int op = NRF_OP_OTHER + 1; op < NRF_OP_COUNT; op++)
		if (nrf_fwd_op_enabled(cfg, (enum nrf_fwd_op)op))
			return (enum nrf_fwd_op)op;
	return NRF_OP_OTHER;
}

/* Where lib/rt connects for a peer: ipv4Address, else ipv6Address, else
 * fqdn (rt.c, resolve_peer()). */
static int
connect_key(char *buf, size_t cap, const struct nrf_cfg_peer *p)
{
	const char *h = p->ipv4[0] != '\0' ? p->ipv4 : p->ipv6[0] != '\0' ? p->ipv6 : p->fqdn;

	return topo_key(buf, cap, h, p->port);
}

static int
resolve_edges(struct nrf_topo *t)
{
	size_t total = 0, e = 0;

	for (size_t i = 0; i < t->n; i++)
		total += t->nodes[i].cfg->n_peers;
	t->edges = calloc(total > 0 ? total : 1, sizeof(*t->edges));
	if (t->edges == NULL)
		return NRF_ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct nrf_cfg *c = t->nodes[i].cfg;
		bool forwards = topo_walk_op(c) != NRF_OP_OTHER;

		t->nodes[i].first_edge = e;
		for (uint16_t p = 0; p < c->n_peers; p++, e++) {
			const struct nrf_cfg_peer *peer = &c->peers[p];
			struct nrf_topo_edge *ed = &t->edges[e];
			char key[320];

			ed->from = (uint16_t)i;
			ed->peer = p;
			ed->to = connect_key(key, sizeof(key), peer) < 0 ? -1 : addr_nrf(t, key);
			ed->named = -1;
			ed->active = forwards && (peer->mode == NRF_MODE_FORWARDING
							 ? c->fwd.enabled
							 : c->growth.enabled);
			for (uint8_t k = 0; k < peer->n_ids; k++) {
				int32_t nm;

				if (topo_key(key, sizeof(key), peer->ids[k].host,
					    peer->ids[k].port) < 0)
					continue;
				nm = addr_nrf(t, key);
				if (nm >= 0 && nm != ed->to && ed->named < 0)
					ed->named = nm;
			}
			if (ed->to >= 0) {
				/* The member the reached NRF appends, through the
				 * scan of the NRF that must recognise it. */
				const char *m = t->nodes[ed->to].via_member;
				struct nrf_slice line = nrf_slice_str(m);
				struct nrf_via_result res;

				ed->recognised = m[0] != '\0' &&
					topo_scan(t, i, &line, 1, &res) == 0 &&
					nrf_via_result_has_peer(&res, p);
			}
		}
	}
	t->n_edges = e;
	return 0;
}

int
nrf_topo_resolve(struct nrf_topo *t)
{
	int rc = 0;

	if (t == NULL || t->resolved)
		return NRF_EINVAL;
	for (size_t i = 0; i < t->n; i++) {
		struct topo_node *n = &t->nodes[i];

		n->db = nrf_fwd_via_db_create(n->cfg, &rc);
		if (n->db == NULL)
			return rc;
		n->table = nrf_fwd_table_create(n->cfg, &rc);
		if (n->table == NULL)
			return rc;
		if (t->scratch == NULL)
			t->scratch = nrf_via_scratch_create(n->db, &rc);
		else
			rc = nrf_via_scratch_update(t->scratch, n->db);
		if (t->scratch == NULL || rc != 0)
			return rc != 0 ? rc : NRF_ENOMEM;
		/* As lib/rt formats it (rt_worker.c); "" when it cannot be. */
		if (nrf_via_member_format(n->via_member, sizeof(n->via_member),
			    n->cfg->general.host, n->cfg->general.port) < 0)
			n->via_member[0] = '\0';
	}
	rc = index_addresses(t);
	if (rc == 0)
		rc = resolve_edges(t);
	if (rc == 0)
		t->resolved = true;
	return rc;
}

size_t
nrf_topo_count(const struct nrf_topo *t)
{
	return t != NULL ? t->n : 0;
}

const struct nrf_topo_nrf *
nrf_topo_at(const struct nrf_topo *t, size_t i)
{
	return t != NULL && i < t->n ? &t->nodes[i].pub : NULL;
}

const struct nrf_topo_edge *
nrf_topo_edges(const struct nrf_topo *t, size_t *n)
{
	*n = t != NULL ? t->n_edges : 0;
	return t != NULL ? t->edges : NULL;
}

const struct nrf_topo_edge *
nrf_topo_peer_edge(const struct nrf_topo *t, size_t from, size_t peer)
{
	if (t == NULL || !t->resolved || from >= t->n || peer >= t->nodes[from].cfg->n_peers)
		return NULL;
	return &t->edges[t->nodes[from].first_edge + peer];
}

static const char *
base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b != NULL ? b + 1 : s;
}

/* @p ref is @p s, or its base name, or that without ".json". */
static bool
source_is(const char *s, const char *ref)
{
	const char *b = base_name(s);
	size_t bl = strlen(b), rl = strlen(ref);

	if (strcmp(s, ref) == 0 || strcmp(b, ref) == 0)
		return true;
	return bl == rl + 5 && strcmp(b + rl, ".json") == 0 && strncmp(b, ref, rl) == 0;
}

/* @p ref as host:port (a "[v6]:port" too): its key. */
static bool
ref_key(const char *ref, char *key, size_t cap)
{
	const char *colon = strrchr(ref, ':');
	char host[300];
	char *end;
	unsigned long port;

	if (colon == NULL || colon == ref || (size_t)(colon - ref) >= sizeof(host))
		return false;
	if (strchr(ref, ']') != NULL && colon < strchr(ref, ']'))
		return false;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '\0' || port == 0 || port > 65535)
		return false;
	memcpy(host, ref, (size_t)(colon - ref));
	host[colon - ref] = '\0';
	if (strchr(host, ':') != NULL && host[0] != '[')
		return false; /* an unbracketed IPv6 address has no port */
	return topo_key(key, cap, host, (uint16_t)port) >= 0;
}

int
nrf_topo_find(const struct nrf_topo *t, const char *ref)
{
	int32_t found = -1;
	char key[320];
	bool by_key;

	if (t == NULL || ref == NULL || ref[0] == '\0')
		return NRF_ENOENT;
	by_key = t->resolved && ref_key(ref, key, sizeof(key));
	for (size_t i = 0; i < t->n; i++) {
		const struct topo_node *n = &t->nodes[i];
		bool hit = source_is(n->source, ref) ||
			strcasecmp(n->cfg->general.host, ref) == 0 ||
			strcasecmp(n->cfg->general.self_name, ref) == 0;

		if (!hit && by_key) {
			size_t first, k = topo_addr_find(t, key, &first);

			for (size_t j = 0; j < k && !hit; j++)
				hit = t->addrs[first + j].nrf == i;
		}
		if (!hit)
			continue;
		if (found >= 0)
			return NRF_EEXIST;
		found = (int32_t)i;
	}
	return found >= 0 ? found : NRF_ENOENT;
}

/* ------------------------------------------------------------------------ */
/* Assumptions and state                                                     */

int
nrf_topo_hold(struct nrf_topo *t, size_t nrf, enum nrf_topo_holding kind, const char *value)
{
	struct topo_node *n;

	if (t == NULL || nrf >= t->n || value == NULL)
		return NRF_EINVAL;
	n = &t->nodes[nrf];
	switch (kind) {
	case NRF_TOPO_NF_TYPE:
		return strs_add(&n->types, value);
	case NRF_TOPO_NF_INSTANCE:
		return strs_add(&n->ids, value);
	case NRF_TOPO_SUBSCRIPTION:
		return strs_add(&n->subs, value);
	}
	return NRF_EINVAL;
}

size_t
nrf_topo_holdings(const struct nrf_topo *t, size_t nrf, enum nrf_topo_holding kind,
	const char *const **out)
{
	const struct topo_strs *s;

	*out = NULL;
	if (t == NULL || nrf >= t->n)
		return 0;
	s = kind == NRF_TOPO_NF_TYPE ? &t->nodes[nrf].types
		: kind == NRF_TOPO_NF_INSTANCE ? &t->nodes[nrf].ids
					       : &t->nodes[nrf].subs;
	*out = (const char *const *)s->v;
	return s->n;
}

void
nrf_topo_set_down(struct nrf_topo *t, size_t nrf, bool down)
{
	if (t != NULL && nrf < t->n)
		t->nodes[nrf].down = down;
}

void
nrf_topo_set_local_down(struct nrf_topo *t, size_t nrf, bool down)
{
	if (t != NULL && nrf < t->n)
		t->nodes[nrf].local_down = down;
}

bool
nrf_topo_is_down(const struct nrf_topo *t, size_t nrf)
{
	return t != NULL && nrf < t->n && t->nodes[nrf].down;
}

bool
nrf_topo_is_local_down(const struct nrf_topo *t, size_t nrf)
{
	return t != NULL && nrf < t->n && t->nodes[nrf].local_down;
}

uint32_t
nrf_topo_rotation(const struct nrf_topo *t, size_t nrf)
{
	return t != NULL && nrf < t->n ? t->nodes[nrf].rotation : 0;
}

void
nrf_topo_set_rotation(struct nrf_topo *t, size_t nrf, uint32_t rotation)
{
	if (t != NULL && nrf < t->n)
		t->nodes[nrf].rotation = rotation;
}

bool
nrf_topo_held_down(const struct nrf_topo *t, size_t nrf, size_t peer)
{
	if (t == NULL || nrf >= t->n || peer >= NRF_CFG_MAX_PEERS)
		return false;
	return (t->nodes[nrf].held[peer >> 6] >> (peer & 63)) & 1;
}

void
nrf_topo_set_held_down(struct nrf_topo *t, size_t nrf, size_t peer, bool down)
{
	uint64_t bit;

	if (t == NULL || nrf >= t->n || peer >= NRF_CFG_MAX_PEERS)
		return;
	bit = 1ull << (peer & 63);
	if (down)
		t->nodes[nrf].held[peer >> 6] |= bit;
	else
		t->nodes[nrf].held[peer >> 6] &= ~bit;
}
