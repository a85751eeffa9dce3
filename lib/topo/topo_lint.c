/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lint: findings about a resolved topology.
 *
 * Peer entries are judged on their resolution (topo.c). Cycles are found on
 * the graph of active entries (Tarjan's strongly connected components): an
 * entry u -> v inside a component closes a cycle, and the shortest path
 * v ~> u (breadth first) is its witness. The witness is then walked with
 * the data path's code — the Via built hop by hop, nrf_via_scan(),
 * nrf_fwd_decide() with every other peer of the hop held down, so that the
 * next NRF of the walk is the first candidate unless loop prevention skips
 * it — which says how the cycle ends: skipped (prevented), back at v
 * (508 LOOP_DETECTED) or at the hop limit first. Long paths are searched
 * depth first with the same step, within a budget of hop evaluations (the
 * number of simple paths grows exponentially with the topology).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "topo_int.h"

enum code_idx {
	C_CONFIG_INVALID = 0,
	C_IDENTITY_SHARED,
	C_PEER_IS_SELF,
	C_PEER_UNRECOGNISABLE,
	C_PEER_NAMES_TWO,
	C_CYCLE_LOOP,
	C_CYCLE_HOP_LIMIT,
	C_PEER_DANGLING,
	C_CYCLE_PREVENTED,
	C_PATH_OVER_MAX_VIA,
	C_SET_ID_MISMATCH,
	C_SET_PARTIAL,
	C_PATTERN_NOTHING,
	C_NRF_UNREACHABLE,
	C_LONGEST_PATH,
	C_COUNT
};

static const struct nrf_topo_code codes[C_COUNT] = {
	[C_CONFIG_INVALID] = {"config-invalid", NRF_TOPO_ERROR,
		"a configuration does not load (nrfwd would refuse it); it is left out"},
	[C_IDENTITY_SHARED] = {"identity-shared", NRF_TOPO_ERROR,
		"two NRFs use the same identity or address"},
	[C_PEER_IS_SELF] = {"peer-is-self", NRF_TOPO_ERROR,
		"an NRF lists itself as a peer (by ocnrfHost, an alias or a listen address)"},
	[C_PEER_UNRECOGNISABLE] = {"peer-unrecognisable", NRF_TOPO_ERROR,
		"a peer entry reaches an NRF without naming the identity that NRF puts in Via: "
		"loop prevention can never skip it"},
	[C_PEER_NAMES_TWO] = {"peer-names-two-nrfs", NRF_TOPO_ERROR,
		"a peer entry's identities name another NRF than the one it reaches"},
	[C_CYCLE_LOOP] = {"cycle-loop-detected", NRF_TOPO_ERROR,
		"a forwarding cycle comes back to an NRF: 508 LOOP_DETECTED there"},
	[C_CYCLE_HOP_LIMIT] = {"cycle-hop-limit", NRF_TOPO_ERROR,
		"a forwarding cycle exceeds maxViaMembers before it is prevented or detected"},
	[C_PEER_DANGLING] = {"peer-dangling", NRF_TOPO_WARNING,
		"a peer entry names no NRF of the topology (every try to it fails)"},
	[C_CYCLE_PREVENTED] = {"cycle-prevented", NRF_TOPO_WARNING,
		"a forwarding cycle that loop prevention breaks"},
	[C_PATH_OVER_MAX_VIA] = {"path-over-max-via", NRF_TOPO_WARNING,
		"a forwarding path longer than a hop's maxViaMembers: 508 MAX_HOPS_REACHED there"},
	[C_SET_ID_MISMATCH] = {"set-id-mismatch", NRF_TOPO_WARNING,
		"a growth set lists an NRF whose own nrfSetId is another one"},
	[C_SET_PARTIAL] = {"set-listed-partially", NRF_TOPO_WARNING,
		"loopPreventionScope SET on an NRF set that an NRF lists without all its members"},
	[C_PATTERN_NOTHING] = {"pattern-matches-nothing", NRF_TOPO_WARNING,
		"a status pattern selects no status code 100..599"},
	[C_NRF_UNREACHABLE] = {"nrf-unreachable", NRF_TOPO_INFO,
		"no other NRF forwards to this NRF (clients only)"},
	[C_LONGEST_PATH] = {"longest-path", NRF_TOPO_INFO,
		"the longest forwarding path found, and the smallest maxViaMembers on it"},
};

const struct nrf_topo_code *
nrf_topo_codes(size_t *n)
{
	*n = C_COUNT;
	return codes;
}

const char *
nrf_topo_severity_name(enum nrf_topo_severity s)
{
	switch (s) {
	case NRF_TOPO_INFO:
		return "info";
	case NRF_TOPO_WARNING:
		return "warning";
	case NRF_TOPO_ERROR:
		return "error";
	default:
		break;
	}
	return "unknown";
}

struct lint_ctx {
	struct nrf_topo *t;
	struct nrf_topo_findings *out;
	uint8_t *code_of;   /* code index of out->v[i] */
	size_t code_cap;
	int err;            /* sticky: the first allocation failure */
	/* graph */
	size_t *adj_first;  /* active edges with a target, by NRF */
	size_t *adj;        /* edge indices */
	uint32_t *scc;
	/* walks */
	struct nrf_slice *lines;
	uint64_t *down;
};

/* ------------------------------------------------------------------------ */
/* Findings                                                                  */

static struct nrf_topo_finding *
finding(struct lint_ctx *L, enum code_idx code, char *message)
{
	struct nrf_topo_findings *o = L->out;
	struct nrf_topo_finding *f;

	if (message == NULL || L->err != 0) {
		free(message);
		L->err = NRF_ENOMEM;
		return NULL;
	}
	if (o->n == o->cap) {
		size_t cap = o->cap * 2 + 16;
		struct nrf_topo_finding *nv = realloc(o->v, cap * sizeof(*nv));
		uint8_t *nc = realloc(L->code_of, cap);

		if (nc != NULL)
			L->code_of = nc;
		if (nv == NULL || nc == NULL) {
			if (nv != NULL)
				o->v = nv;
			free(message);
			L->err = NRF_ENOMEM;
			return NULL;
		}
		o->v = nv;
		o->cap = cap;
	}
	f = &o->v[o->n];
	memset(f, 0, sizeof(*f));
	f->code = codes[code].code;
	f->severity = codes[code].severity;
	f->message = message;
	L->code_of[o->n] = (uint8_t)code;
	o->n++;
	o->count[f->severity]++;
	return f;
}

static void
ref(struct lint_ctx *L, struct nrf_topo_finding *f, int32_t nrf, const char *source,
	char *pointer, const char *note)
{
	struct nrf_topo_ref *nv, *r;

	if (f == NULL || pointer == NULL) {
		free(pointer);
		if (f != NULL)
			L->err = NRF_ENOMEM;
		return;
	}
	nv = realloc(f->refs, (f->n_refs + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(pointer);
		L->err = NRF_ENOMEM;
		return;
	}
	f->refs = nv;
	r = &f->refs[f->n_refs];
	r->nrf = nrf;
	r->source = source;
	r->pointer = pointer;
	r->note = topo_strdup(note);
	if (r->note == NULL) {
		free(pointer);
		L->err = NRF_ENOMEM;
		return;
	}
	f->n_refs++;
}

/* A reference into NRF @p n's document. */
static void
nref(struct lint_ctx *L, struct nrf_topo_finding *f, size_t n, char *pointer, const char *note)
{
	ref(L, f, (int32_t)n, L->t->nodes[n].source, pointer, note);
}

static void
entry(struct lint_ctx *L, struct nrf_topo_finding *f, uint16_t from, uint16_t peer)
{
	struct nrf_topo_entry *nv;

	if (f == NULL)
		return;
	nv = realloc(f->entries, (f->n_entries + 1) * sizeof(*nv));
	if (nv == NULL) {
		L->err = NRF_ENOMEM;
		return;
	}
	f->entries = nv;
	f->entries[f->n_entries].from = from;
	f->entries[f->n_entries].peer = peer;
	f->n_entries++;
}

static void
path(struct lint_ctx *L, struct nrf_topo_finding *f, const uint16_t *p, size_t n)
{
	if (f == NULL || n == 0)
		return;
	f->path = malloc(n * sizeof(*p));
	if (f->path == NULL) {
		L->err = NRF_ENOMEM;
		return;
	}
	memcpy(f->path, p, n * sizeof(*p));
	f->n_path = n;
}

static const char *
NAME(const struct lint_ctx *L, size_t n)
{
	return L->t->nodes[n].cfg->general.self_name;
}

static const struct nrf_cfg_peer *
PEER(const struct lint_ctx *L, const struct nrf_topo_edge *e)
{
	return &L->t->nodes[e->from].cfg->peers[e->peer];
}

/* The pointer of an address index entry in its NRF's document. */
static char *
addr_pointer(const struct topo_addr *a)
{
	switch (a->kind) {
	case TOPO_ADDR_SELF:
		return strdup("/generalOptions/ocnrfHost");
	case TOPO_ADDR_ALIAS:
		return topo_asprintf("/generalOptions/aliases/%u", a->which);
	default:
		return topo_asprintf("/runtime/listen/%u", a->which);
	}
}

static const char *
addr_kind_name(const struct topo_addr *a)
{
	switch (a->kind) {
	case TOPO_ADDR_SELF:
		return "ocnrfHost:ocnrfPort";
	case TOPO_ADDR_ALIAS:
		return "an alias";
	default:
		return "a listen address";
	}
}

/* The first address index entry of NRF @p nrf with key @p key. */
static const struct topo_addr *
addr_of(const struct nrf_topo *t, const char *key, size_t nrf)
{
	size_t first, n = topo_addr_find(t, key, &first);

	for (size_t i = 0; i < n; i++)
		if (t->addrs[first + i].nrf == nrf)
			return &t->addrs[first + i];
	return NULL;
}

/* How entry @p p reaches NRF @p to: its connect address's index entry. */
static const struct topo_addr *
reach_addr(const struct nrf_topo *t, const struct nrf_cfg_peer *p, size_t to, char *key,
	size_t cap)
{
	const char *h = p->ipv4[0] != '\0' ? p->ipv4 : p->ipv6[0] != '\0' ? p->ipv6 : p->fqdn;

	if (topo_key(key, cap, h, p->port) < 0)
		return NULL;
	return addr_of(t, key, to);
}

/* ------------------------------------------------------------------------ */
/* Configurations, identities, peer entries                                  */

static void
lint_invalid(struct lint_ctx *L)
{
	for (size_t i = 0; i < L->t->n_bad; i++) {
		const struct topo_invalid *b = &L->t->bad[i];
		struct nrf_topo_finding *f = finding(L, C_CONFIG_INVALID,
			topo_asprintf("%s does not load (%s), %zu problem%s: it is left out of the "
				      "topology",
				b->source, nrf_strerror(b->err), b->n, b->n == 1 ? "" : "s"));

		for (size_t k = 0; k < b->n; k++)
			ref(L, f, -1, b->source, strdup(b->v[k].pointer), b->v[k].reason);
		if (b->n == 0)
			ref(L, f, -1, b->source, strdup(""), nrf_strerror(b->err));
	}
}

static void
lint_identities(struct lint_ctx *L)
{
	const struct nrf_topo *t = L->t;

	for (size_t i = 0; i < t->n_addrs;) {
		size_t j = i, distinct = 1;

		while (j + 1 < t->n_addrs && strcmp(t->addrs[j + 1].key, t->addrs[i].key) == 0) {
			if (t->addrs[j + 1].nrf != t->addrs[j].nrf)
				distinct++;
			j++;
		}
		if (distinct > 1) {
			struct nrf_topo_finding *f = finding(L, C_IDENTITY_SHARED,
				topo_asprintf("%s is an identity or address of %zu NRFs",
					t->addrs[i].key, distinct));

			for (size_t k = i; k <= j; k++)
				nref(L, f, t->addrs[k].nrf, addr_pointer(&t->addrs[k]),
					addr_kind_name(&t->addrs[k]));
		}
		i = j + 1;
	}
}

static void
lint_entries(struct lint_ctx *L)
{
	struct nrf_topo *t = L->t;
	char key[320];

	for (size_t k = 0; k < t->n_edges; k++) {
		const struct nrf_topo_edge *e = &t->edges[k];
		const struct nrf_cfg_peer *p = PEER(L, e);
		const char *mode =
			p->mode == NRF_MODE_FORWARDING ? "forwarding peer" : "growth peer";
		struct nrf_topo_finding *f;
		const struct topo_addr *a;
		int32_t self_by_id = -1;

		for (uint8_t i = 0; i < p->n_ids && self_by_id < 0; i++) {
			if (topo_key(key, sizeof(key), p->ids[i].host, p->ids[i].port) >= 0 &&
				addr_of(t, key, e->from) != NULL)
				self_by_id = i;
		}
		if (e->to == e->from || self_by_id >= 0) {
			if (self_by_id < 0)
				reach_addr(t, p, e->from, key, sizeof(key));
			else
				topo_key(key, sizeof(key), p->ids[self_by_id].host,
					p->ids[self_by_id].port);
			a = addr_of(t, key, e->from);
			f = finding(L, C_PEER_IS_SELF,
				topo_asprintf(
					"%s lists itself as a %s: %s is %s of its own; a request "
					"it forwards there comes straight back (508 LOOP_DETECTED)",
					NAME(L, e->from), mode, key,
					a != NULL ? addr_kind_name(a) : "an address"));
			nref(L, f, e->from, strdup(p->pointer), p->name);
			if (a != NULL)
				nref(L, f, e->from, addr_pointer(a), addr_kind_name(a));
			entry(L, f, e->from, e->peer);
			continue;
		}
		if (e->to >= 0 && !e->recognised) {
			a = reach_addr(t, p, (size_t)e->to, key, sizeof(key));
			f = finding(L, C_PEER_UNRECOGNISABLE,
				topo_asprintf(
					"%s's %s %s reaches %s (%s is %s of it), but %s puts "
					"\"%s\" in Via, which the entry does not name: loop "
					"prevention at %s can never skip %s, and a request that "
					"has passed %s is forwarded back to it",
					NAME(L, e->from), mode, p->name, NAME(L, e->to), key,
					a != NULL ? addr_kind_name(a) : "an address",
					NAME(L, e->to), t->nodes[e->to].via_member,
					NAME(L, e->from), NAME(L, e->to), NAME(L, e->to)));
			nref(L, f, e->from, strdup(p->pointer), p->name);
			if (a != NULL && a->kind != TOPO_ADDR_SELF)
				nref(L, f, (size_t)e->to, addr_pointer(a), addr_kind_name(a));
			nref(L, f, (size_t)e->to, strdup("/generalOptions/ocnrfHost"),
				"what it puts in Via");
			entry(L, f, e->from, e->peer);
		}
		if (e->named >= 0) {
			f = finding(L, C_PEER_NAMES_TWO,
				e->to >= 0
					? topo_asprintf(
						  "%s's %s %s reaches %s but also names %s: loop "
						  "prevention skips it when %s is in Via, and "
						  "not when %s is",
						  NAME(L, e->from), mode, p->name, NAME(L, e->to),
						  NAME(L, e->named), NAME(L, e->named),
						  NAME(L, e->to))
					: topo_asprintf(
						  "%s's %s %s names %s, but its address reaches "
						  "no NRF of the topology: every try to it fails",
						  NAME(L, e->from), mode, p->name,
						  NAME(L, e->named)));
			nref(L, f, e->from, strdup(p->pointer), p->name);
			nref(L, f, (size_t)e->named, strdup("/generalOptions/ocnrfHost"), "named");
			entry(L, f, e->from, e->peer);
		}
		if (e->to < 0 && e->named < 0) {
			f = finding(L, C_PEER_DANGLING,
				topo_asprintf(
					"%s's %s %s names no NRF of the topology: every try to "
					"it fails (an NRF outside the topology?)",
					NAME(L, e->from), mode, p->name));
			nref(L, f, e->from, strdup(p->pointer), p->name);
			entry(L, f, e->from, e->peer);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Sets and patterns                                                         */

static char *
set_pointer(uint16_t s)
{
	return topo_asprintf("/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/%u",
		s);
}

static void
lint_set_ids(struct lint_ctx *L)
{
	struct nrf_topo *t = L->t;

	for (size_t k = 0; k < t->n_edges; k++) {
		const struct nrf_topo_edge *e = &t->edges[k];
		const struct nrf_cfg_peer *p = PEER(L, e);
		const struct nrf_cfg *fc = t->nodes[e->from].cfg;
		const char *listed, *own;
		struct nrf_topo_finding *f;

		if (p->mode != NRF_MODE_GROWTH || e->to < 0 || e->to == e->from)
			continue;
		listed = fc->sets[p->set].nrf_set_id;
		own = t->nodes[e->to].cfg->general.nrf_set_id;
		if (strcmp(listed, own) == 0)
			continue;
		f = finding(L, C_SET_ID_MISMATCH,
			own[0] != '\0'
				? topo_asprintf(
					  "%s lists %s in NRF set %s, but %s says it is in %s",
					  NAME(L, e->from), NAME(L, e->to), listed, NAME(L, e->to),
					  own)
				: topo_asprintf("%s lists %s in NRF set %s, but %s has no nrfSetId",
					  NAME(L, e->from), NAME(L, e->to), listed,
					  NAME(L, e->to)));
		nref(L, f, e->from, strdup(p->pointer), p->name);
		nref(L, f, (size_t)e->to, strdup("/generalOptions/nrfSetId"), own);
		entry(L, f, e->from, e->peer);
	}
}

/* Is NRF @p m a member of set @p sid: its own nrfSetId, or listed in it? */
static bool
set_member(const struct nrf_topo *t, const char *sid, size_t m)
{
	if (strcmp(t->nodes[m].cfg->general.nrf_set_id, sid) == 0)
		return true;
	for (size_t k = 0; k < t->n_edges; k++) {
		const struct nrf_topo_edge *e = &t->edges[k];
		const struct nrf_cfg *c = t->nodes[e->from].cfg;
		const struct nrf_cfg_peer *p = &c->peers[e->peer];

		if (e->to == (int32_t)m && p->mode == NRF_MODE_GROWTH &&
			strcmp(c->sets[p->set].nrf_set_id, sid) == 0)
			return true;
	}
	return false;
}

/* Does some NRF apply scope SET to set @p sid? Its index, or -1. */
static int32_t
set_scope_user(const struct nrf_topo *t, const char *sid)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct nrf_cfg *c = t->nodes[i].cfg;

		if (!c->growth.enabled || c->growth.scope != NRF_SCOPE_SET)
			continue;
		for (uint16_t s = 0; s < c->n_sets; s++)
			if (strcmp(c->sets[s].nrf_set_id, sid) == 0)
				return (int32_t)i;
	}
	return -1;
}

static void
lint_set_partial(struct lint_ctx *L)
{
	struct nrf_topo *t = L->t;

	for (size_t i = 0; i < t->n; i++) {
		const struct nrf_cfg *c = t->nodes[i].cfg;

		for (uint16_t s = 0; s < c->n_sets; s++) {
			const char *sid = c->sets[s].nrf_set_id;
			int32_t user = set_scope_user(t, sid);
			struct nrf_topo_finding *f = NULL;
			char *missing = NULL;
			size_t n_missing = 0;

			if (user < 0)
				continue;
			for (size_t m = 0; m < t->n; m++) {
				bool listed = false;
				char *nm;

				if (m == i || !set_member(t, sid, m))
					continue;
				for (uint16_t p = c->sets[s].first_peer;
					p < c->sets[s].first_peer + c->sets[s].n_peers; p++)
					listed |= t->edges[t->nodes[i].first_edge + p].to ==
						  (int32_t)m;
				if (listed)
					continue;
				nm = topo_asprintf("%s%s%s", missing != NULL ? missing : "",
					missing != NULL ? ", " : "", NAME(L, m));
				free(missing);
				missing = nm;
				n_missing++;
				if (missing == NULL) {
					L->err = NRF_ENOMEM;
					return;
				}
			}
			if (n_missing == 0)
				continue;
			f = finding(L, C_SET_PARTIAL,
				topo_asprintf(
					"%s lists NRF set %s without %s (member%s by %s own "
					"nrfSetId or another NRF's list), and %s applies "
					"loopPreventionScope SET to it: a host of the set in "
					"Via that %s does not list does not make it skip the set",
					NAME(L, i), sid, missing, n_missing == 1 ? "" : "s",
					n_missing == 1 ? "its" : "their", NAME(L, (size_t)user),
					NAME(L, i)));
			free(missing);
			nref(L, f, i, set_pointer(s), sid);
			if ((size_t)user != i)
				nref(L, f, (size_t)user,
					strdup("/nrfGrowth/nrfForwardingOptions/loopPreventionScope"),
					"SET");
		}
	}
}

static bool
set_empty(const struct nrf_cfg_status_set *s)
{
	for (int c = 100; c <= 599; c++)
		if (nrf_cfg_status_match(s, c))
			return false;
	return true;
}

/* A status pattern of NRF @p i that selects no status: @p field is its
 * name under forwardingOptions (dotted), @p pointer its JSON pointer, @p
 * effect what follows. */
static void
pattern_nothing(struct lint_ctx *L, size_t i, const char *field, const char *pointer,
	const char *pattern, const char *effect)
{
	struct nrf_topo_finding *f = finding(L, C_PATTERN_NOTHING,
		topo_asprintf("%s: %s.pattern \"%s\" selects no status: %s", NAME(L, i), field,
			pattern, effect));

	nref(L, f, i, strdup(pointer), pattern);
}

static void
lint_patterns(struct lint_ctx *L)
{
	for (size_t i = 0; i < L->t->n; i++) {
		const struct nrf_cfg *c = L->t->nodes[i].cfg;

		if (set_empty(&c->fwd.triggers))
			pattern_nothing(L, i, "forwardingTriggers.statusCodes",
				"/forwardingOptions/forwardingTriggers/statusCodes/pattern",
				c->fwd.trigger_pattern, "only an empty discovery result is forwarded");
		if (set_empty(&c->fwd.reroute))
			pattern_nothing(L, i, "nrfRerouteOnResponseHttpStatusCodes",
				"/forwardingOptions/nrfRerouteOnResponseHttpStatusCodes/pattern",
				c->fwd.reroute_pattern, "a peer's 5xx is relayed, never rerouted");
	}
}

/* ------------------------------------------------------------------------ */
/* The graph                                                                 */

static bool
usable(const struct nrf_topo_edge *e)
{
	return e->active && e->to >= 0;
}

static int
graph_build(struct lint_ctx *L)
{
	struct nrf_topo *t = L->t;
	size_t n = 0;

	L->adj_first = calloc(t->n + 1, sizeof(*L->adj_first));
	L->adj = calloc(t->n_edges + 1, sizeof(*L->adj));
	L->scc = calloc(t->n + 1, sizeof(*L->scc));
	L->lines = calloc(NRF_CFG_MAX_VIA_MEMBERS + 2, sizeof(*L->lines));
	L->down = calloc(NRF_CFG_MAX_PEERS / 64, sizeof(*L->down));
	if (L->adj_first == NULL || L->adj == NULL || L->scc == NULL || L->lines == NULL ||
		L->down == NULL)
		return NRF_ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		L->adj_first[i] = n;
		for (uint16_t p = 0; p < t->nodes[i].cfg->n_peers; p++) {
			size_t k = t->nodes[i].first_edge + p;

			if (usable(&t->edges[k]))
				L->adj[n++] = k;
		}
	}
	L->adj_first[t->n] = n;
	return 0;
}

/* Tarjan's strongly connected components, without recursion. */
static int
graph_scc(struct lint_ctx *L)
{
	size_t n = L->t->n;
	uint32_t *idx = malloc((n + 1) * sizeof(*idx)), *low = malloc((n + 1) * sizeof(*low));
	uint32_t *stack = malloc((n + 1) * sizeof(*stack));
	uint32_t *cstack = malloc((n + 1) * sizeof(*cstack));
	size_t *it = malloc((n + 1) * sizeof(*it));
	bool *on = calloc(n + 1, sizeof(*on));
	uint32_t next = 1, comps = 0;
	size_t sp = 0, csp = 0;
	int rc = 0;

	if (idx == NULL || low == NULL || stack == NULL || cstack == NULL || it == NULL ||
		on == NULL) {
		rc = NRF_ENOMEM;
		goto out;
	}
	memset(idx, 0, (n + 1) * sizeof(*idx));
	for (size_t s = 0; s < n; s++) {
		if (idx[s] != 0)
			continue;
		cstack[csp++] = (uint32_t)s;
		idx[s] = low[s] = next++;
		it[s] = L->adj_first[s];
		stack[sp++] = (uint32_t)s;
		on[s] = true;
		while (csp > 0) {
			uint32_t v = cstack[csp - 1];

			if (it[v] < L->adj_first[v + 1]) {
				uint32_t w = (uint32_t)L->t->edges[L->adj[it[v]++]].to;

				if (idx[w] == 0) {
					idx[w] = low[w] = next++;
					it[w] = L->adj_first[w];
					stack[sp++] = w;
					on[w] = true;
					cstack[csp++] = w;
				} else if (on[w] && idx[w] < low[v]) {
					low[v] = idx[w];
				}
				continue;
			}
			csp--;
			if (csp > 0 && low[v] < low[cstack[csp - 1]])
				low[cstack[csp - 1]] = low[v];
			if (low[v] == idx[v]) {
				uint32_t w;

				do {
					w = stack[--sp];
					on[w] = false;
					L->scc[w] = comps;
				} while (w != v);
				comps++;
			}
		}
	}
out:
	free(idx);
	free(low);
	free(stack);
	free(cstack);
	free(it);
	free(on);
	return rc;
}

/*
 * The shortest path @p from ~> @p to inside their component (breadth
 * first), as NRFs into @p out (from first, to last) and the edges taken
 * into @p via_edge. @return its number of NRFs, 0 when none.
 */
static size_t
shortest(struct lint_ctx *L, size_t from, size_t to, uint16_t *out, size_t *via_edge,
	int32_t *prev, size_t *prev_edge, uint32_t *queue)
{
	size_t n = L->t->n, head = 0, tail = 0, len = 0;

	for (size_t i = 0; i < n; i++)
		prev[i] = -2;
	prev[from] = -1;
	queue[tail++] = (uint32_t)from;
	while (head < tail && prev[to] == -2) {
		uint32_t v = queue[head++];

		for (size_t a = L->adj_first[v]; a < L->adj_first[v + 1]; a++) {
			const struct nrf_topo_edge *e = &L->t->edges[L->adj[a]];
			uint32_t w = (uint32_t)e->to;

			if (prev[w] != -2 || L->scc[w] != L->scc[from])
				continue;
			prev[w] = (int32_t)v;
			prev_edge[w] = L->adj[a];
			queue[tail++] = w;
		}
	}
	if (prev[to] == -2)
		return 0;
	for (int32_t v = (int32_t)to; v >= 0; v = prev[v])
		len++;
	for (int32_t v = (int32_t)to, k = (int32_t)len - 1; v >= 0; v = prev[v], k--) {
		out[k] = (uint16_t)v;
		if (k > 0)
			via_edge[k - 1] = prev_edge[v];
	}
	return len;
}

/* ------------------------------------------------------------------------ */
/* Walking with the data path's decision                                     */

enum step_end {
	STEP_NEXT = 0,     /* the entry is a candidate: the request goes on */
	STEP_SKIP_HOST,    /* loop prevention skips it: its identity is in Via */
	STEP_SKIP_SET,     /* loop prevention skips its whole set (scope SET) */
	STEP_LOOP,         /* the hop answers 508 LOOP_DETECTED */
	STEP_HOP_LIMIT,    /* the hop answers 508 MAX_HOPS_REACHED */
	STEP_NO_FORWARD,   /* the hop does not forward the operation */
	STEP_BROKEN,       /* the Via does not scan, or a decision error */
};

/*
 * At NRF @p x with Via @p lines (n members of one line each), request @p op:
 * is peer @p peer a candidate? Every other peer of @p x is held down, so
 * that @p peer is the first candidate unless Via skips it. @p peer may be
 * -1: only the verdict.
 */
static enum step_end
step(struct lint_ctx *L, size_t x, size_t n_lines, enum nrf_fwd_op op, int32_t peer)
{
	struct nrf_topo *t = L->t;
	const struct topo_node *nd = &t->nodes[x];
	struct nrf_via_result res;
	struct nrf_fwd_plan plan;

	L->out->path_visits++;
	if (topo_scan(t, x, L->lines, n_lines, &res) != 0)
		return STEP_BROKEN;
	memset(L->down, 0xff, (NRF_CFG_MAX_PEERS / 64) * sizeof(*L->down));
	if (peer >= 0)
		L->down[peer >> 6] &= ~(1ull << (peer & 63));
	if (nrf_fwd_decide(nd->table, &res, op, 0, L->down, &plan) != 0)
		return STEP_BROKEN;
	switch (plan.verdict) {
	case NRF_FWD_LOOP_DETECTED:
		return STEP_LOOP;
	case NRF_FWD_HOP_LIMIT:
		return STEP_HOP_LIMIT;
	case NRF_FWD_LOCAL_ONLY:
		return STEP_NO_FORWARD;
	case NRF_FWD_FORWARD:
		break;
	}
	if (peer < 0)
		return STEP_NEXT;
	for (uint16_t i = 0; i < plan.n_cand; i++)
		if (plan.cand[i] == peer && !((plan.cand_down >> i) & 1))
			return STEP_NEXT;
	return nrf_via_result_has_peer(&res, (uint16_t)peer) ? STEP_SKIP_HOST : STEP_SKIP_SET;
}

/* An operation every NRF of @p p forwards, or NRF_OP_OTHER. */
static enum nrf_fwd_op
common_op(const struct lint_ctx *L, const uint16_t *p, size_t n)
{
	for (int op = NRF_OP_NF_DISCOVER; op < NRF_OP_COUNT; op++) {
		bool all = true;

		for (size_t i = 0; i < n && all; i++)
			all = nrf_fwd_op_enabled(L->t->nodes[p[i]].cfg, (enum nrf_fwd_op)op);
		if (all)
			return (enum nrf_fwd_op)op;
	}
	return NRF_OP_OTHER;
}

/* ------------------------------------------------------------------------ */
/* Cycles                                                                    */

struct cycle {
	uint16_t *nodes;     /* v .. u (the cycle without its return) */
	size_t n;
	size_t *edges;       /* n edges: nodes[i] -> nodes[i+1], the last u -> v */
	enum code_idx code;
	size_t at;           /* where it ends: the NRF that skips, detects, limits */
	enum step_end how;
	char *canon;         /* canonical key: the node ring from its lowest NRF */
};

static char *
canon_key(const uint16_t *nodes, size_t n)
{
	size_t lo = 0, len = 0;
	char *s = malloc(n * 6 + 1);

	if (s == NULL)
		return NULL;
	for (size_t i = 1; i < n; i++)
		if (nodes[i] < nodes[lo])
			lo = i;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%u,", nodes[(lo + i) % n]);
	s[len] = '\0';
	return s;
}

/* Walk the cycle's witness from its first NRF; fill code / at / how. */
static bool
cycle_walk(struct lint_ctx *L, struct cycle *c)
{
	const struct nrf_topo *t = L->t;
	enum nrf_fwd_op op = common_op(L, c->nodes, c->n);

	if (op == NRF_OP_OTHER)
		return false;
	for (size_t k = 0; k < c->n; k++) {
		size_t x = c->nodes[k];
		const struct nrf_topo_edge *e = &t->edges[c->edges[k]];
		enum step_end s = step(L, x, k, op, e->peer);

		switch (s) {
		case STEP_NEXT:
			L->lines[k] = nrf_slice_str(t->nodes[x].via_member);
			continue;
		case STEP_HOP_LIMIT:
			c->code = C_CYCLE_HOP_LIMIT;
			c->at = x;
			c->how = s;
			return true;
		case STEP_SKIP_HOST:
		case STEP_SKIP_SET:
			if (k + 1 < c->n)
				return false; /* the witness is cut short: not this way */
			c->code = C_CYCLE_PREVENTED;
			c->at = x;
			c->how = s;
			return true;
		default:
			return false;
		}
	}
	/* Back at the first NRF, with every member of the ring in Via. */
	switch (step(L, c->nodes[0], c->n, op, -1)) {
	case STEP_LOOP:
		c->code = C_CYCLE_LOOP;
		c->at = c->nodes[0];
		c->how = STEP_LOOP;
		return true;
	case STEP_HOP_LIMIT:
		c->code = C_CYCLE_HOP_LIMIT;
		c->at = c->nodes[0];
		c->how = STEP_HOP_LIMIT;
		return true;
	default:
		return false;
	}
}

static char *
ring_text(const struct lint_ctx *L, const uint16_t *nodes, size_t n)
{
	char *s = topo_strdup(NAME(L, nodes[0]));

	for (size_t i = 1; i <= n && s != NULL; i++) {
		char *ns = topo_asprintf("%s -> %s", s, NAME(L, nodes[i % n]));

		free(s);
		s = ns;
	}
	return s;
}

/* What one witness says, for the finding's message. */
static char *
cycle_text(const struct lint_ctx *L, const struct cycle *c)
{
	const char *first = NAME(L, c->nodes[0]);
	const char *last = NAME(L, c->nodes[c->n - 1]);

	switch (c->how) {
	case STEP_SKIP_HOST:
		return topo_asprintf("entering at %s: %s skips %s, already in Via (prevented)",
			first, last, first);
	case STEP_SKIP_SET:
		return topo_asprintf(
			"entering at %s: %s skips the NRF set of %s, a host of which is "
			"in Via (prevented)",
			first, last, first);
	case STEP_LOOP:
		return topo_asprintf("entering at %s: %s forwards it back to %s, which answers 508 "
				     "LOOP_DETECTED",
			first, last, first);
	case STEP_HOP_LIMIT:
		return topo_asprintf("entering at %s: %s answers 508 MAX_HOPS_REACHED before the "
				     "cycle closes (maxViaMembers %u)",
			first, NAME(L, c->at), L->t->nodes[c->at].cfg->fwd.max_via_members);
	default:
		return strdup("");
	}
}

static int
cycle_cmp_canon(const void *a, const void *b)
{
	const struct cycle *x = a, *y = b;
	int c = strcmp(x->canon, y->canon);

	if (c != 0)
		return c;
	/* worst first, then by the closing entry */
	if (codes[x->code].severity != codes[y->code].severity)
		return codes[x->code].severity > codes[y->code].severity ? -1 : 1;
	return x->edges[x->n - 1] < y->edges[y->n - 1] ? -1 : 1;
}

/* The last witness of the ring that starts at @p i (sorted by ring). */
static size_t
group_end(const struct cycle *cy, size_t n_cy, size_t i)
{
	size_t j = i;

	while (j + 1 < n_cy && strcmp(cy[j + 1].canon, cy[i].canon) == 0)
		j++;
	return j;
}

/*
 * The finding of ring cy[i..j] (its witnesses). With @p same (n_same
 * rings, each given by its first witness, i among them): one finding for
 * all of them, the rings loop prevention breaks in one component.
 */
static void
ring_finding(struct lint_ctx *L, const struct cycle *cy, size_t i, size_t j,
	const size_t *same, size_t n_same)
{
	const struct nrf_topo *t = L->t;
	struct nrf_topo_finding *f;
	char *ring = ring_text(L, cy[i].nodes, cy[i].n);
	char *text = NULL;
	uint16_t *p;

	for (size_t k = i; k <= j; k++) {
		char *w = cycle_text(L, &cy[k]);
		char *nt = topo_asprintf("%s%s%s", text != NULL ? text : "",
			text != NULL ? "; " : "", w != NULL ? w : "");

		free(w);
		free(text);
		text = nt;
	}
	if (n_same > 1)
		f = finding(L, cy[i].code,
			topo_asprintf(
				"%zu forwarding cycles are broken by loop prevention (harmless: "
				"each ends in a skip), e.g. cycle %s: %s",
				n_same, ring != NULL ? ring : "", text != NULL ? text : ""));
	else
		f = finding(L, cy[i].code,
			topo_asprintf("cycle %s: %s", ring != NULL ? ring : "",
				text != NULL ? text : ""));
	free(ring);
	free(text);
	p = malloc((cy[i].n + 1) * sizeof(*p));
	if (p != NULL) {
		memcpy(p, cy[i].nodes, cy[i].n * sizeof(*p));
		p[cy[i].n] = cy[i].nodes[0];
		path(L, f, p, cy[i].n + 1);
		free(p);
	} else {
		L->err = NRF_ENOMEM;
	}
	for (size_t k = 0; k < cy[i].n; k++) {
		const struct nrf_topo_edge *e = &t->edges[cy[i].edges[k]];

		nref(L, f, e->from, strdup(PEER(L, e)->pointer), PEER(L, e)->name);
	}
	if (cy[i].how == STEP_HOP_LIMIT)
		nref(L, f, cy[i].at, strdup("/forwardingOptions/maxViaMembers"), "maxViaMembers");
	/* Every entry of every ring, for pictures (each once). */
	for (size_t r = 0; r < (n_same > 0 ? n_same : 1); r++) {
		const struct cycle *c = &cy[n_same > 0 ? same[r] : i];

		for (size_t k = 0; f != NULL && k < c->n; k++) {
			const struct nrf_topo_edge *e = &t->edges[c->edges[k]];
			bool dup = false;

			for (size_t q = 0; q < f->n_entries && !dup; q++)
				dup = f->entries[q].from == e->from &&
				      f->entries[q].peer == e->peer;
			if (!dup)
				entry(L, f, e->from, e->peer);
		}
	}
}

static void
lint_cycles(struct lint_ctx *L)
{
	struct nrf_topo *t = L->t;
	size_t n = t->n;
	uint16_t *nodes = malloc((n + 1) * sizeof(*nodes));
	size_t *edges = malloc((n + 1) * sizeof(*edges));
	int32_t *prev = malloc((n + 1) * sizeof(*prev));
	size_t *prev_edge = malloc((n + 1) * sizeof(*prev_edge));
	uint32_t *queue = malloc((n + 1) * sizeof(*queue));
	struct cycle *cy = NULL;
	size_t n_cy = 0, cap_cy = 0, n_prev = 0;
	size_t *prevented = NULL;

	if (nodes == NULL || edges == NULL || prev == NULL || prev_edge == NULL || queue == NULL) {
		L->err = NRF_ENOMEM;
		goto out;
	}
	for (size_t a = 0; a < L->adj_first[n]; a++) {
		const struct nrf_topo_edge *e = &t->edges[L->adj[a]];
		size_t u = e->from, v = (size_t)e->to, len;
		struct cycle c = {0};

		if (u == v || L->scc[u] != L->scc[v])
			continue; /* self: peer-is-self; else no way back */
		len = shortest(L, v, u, nodes, edges, prev, prev_edge, queue);
		if (len == 0 || len > NRF_CFG_MAX_VIA_MEMBERS)
			continue;
		edges[len - 1] = L->adj[a];
		c.n = len;
		c.nodes = nodes;
		c.edges = edges;
		if (!cycle_walk(L, &c))
			continue;
		if (n_cy == cap_cy) {
			size_t nc = cap_cy * 2 + 16;
			struct cycle *nv = realloc(cy, nc * sizeof(*nv));

			if (nv == NULL) {
				L->err = NRF_ENOMEM;
				goto out;
			}
			cy = nv;
			cap_cy = nc;
		}
		c.nodes = malloc(len * sizeof(*c.nodes));
		c.edges = malloc(len * sizeof(*c.edges));
		c.canon = canon_key(nodes, len);
		if (c.nodes == NULL || c.edges == NULL || c.canon == NULL) {
			free(c.nodes);
			free(c.edges);
			free(c.canon);
			L->err = NRF_ENOMEM;
			goto out;
		}
		memcpy(c.nodes, nodes, len * sizeof(*nodes));
		memcpy(c.edges, edges, len * sizeof(*edges));
		cy[n_cy++] = c;
	}
	if (n_cy > 1)
		qsort(cy, n_cy, sizeof(*cy), cycle_cmp_canon);
	/* One finding per ring that ends in an error (the worst witness leads,
	 * the others follow); the rings loop prevention breaks, one finding
	 * per strongly connected component (a mesh has very many). */
	prevented = calloc(n_cy + 1, sizeof(*prevented));
	if (prevented == NULL) {
		L->err = NRF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_cy;) {
		size_t j = i;

		while (j + 1 < n_cy && strcmp(cy[j + 1].canon, cy[i].canon) == 0)
			j++;
		if (cy[i].code == C_CYCLE_PREVENTED)
			prevented[n_prev++] = i;
		else
			ring_finding(L, cy, i, j, NULL, 0);
		i = j + 1;
	}
	for (size_t a = 0; a < n_prev; a++) {
		size_t i = prevented[a], n_same = 0;
		uint32_t comp;
		size_t *same;

		if (i == SIZE_MAX)
			continue;
		comp = L->scc[cy[i].nodes[0]];
		same = malloc((n_prev - a) * sizeof(*same));
		if (same == NULL) {
			L->err = NRF_ENOMEM;
			break;
		}
		for (size_t b = a; b < n_prev; b++) {
			if (prevented[b] != SIZE_MAX && L->scc[cy[prevented[b]].nodes[0]] == comp) {
				same[n_same++] = prevented[b];
				if (b != a)
					prevented[b] = SIZE_MAX;
			}
		}
		ring_finding(L, cy, i, group_end(cy, n_cy, i), same, n_same);
		free(same);
	}
out:
	for (size_t i = 0; i < n_cy; i++) {
		free(cy[i].nodes);
		free(cy[i].edges);
		free(cy[i].canon);
	}
	free(cy);
	free(prevented);
	free(nodes);
	free(edges);
	free(prev);
	free(prev_edge);
	free(queue);
}

/* ------------------------------------------------------------------------ */
/* Long paths                                                                */

struct path_search {
	uint16_t *path;       /* current path */
	size_t *iter;         /* next adjacency index per depth */
	bool *on;             /* NRF on the current path */
	uint16_t *best;       /* longest found */
	size_t best_n;
	bool *limited;        /* NRF already reported for the hop limit */
	size_t n_limited;
	uint16_t *witness;    /* the first path found over a hop limit */
	size_t witness_n;
	uint64_t budget;
};

static void
limit_found(struct lint_ctx *L, struct path_search *s, size_t depth)
{
	size_t x = s->path[depth];

	if (s->limited[x])
		return;
	s->limited[x] = true;
	s->n_limited++;
	if (s->witness_n == 0) {
		memcpy(s->witness, s->path, (depth + 1) * sizeof(*s->path));
		s->witness_n = depth + 1;
	}
	(void)L;
}

/* One finding for every NRF a request can reach over maxViaMembers. */
static void
limit_finding(struct lint_ctx *L, struct path_search *s)
{
	size_t x, n = s->witness_n;
	struct nrf_topo_finding *f;
	char *ring;

	if (n == 0)
		return;
	x = s->witness[n - 1];
	ring = topo_strdup(NAME(L, s->witness[0]));
	for (size_t i = 1; i < n && ring != NULL; i++) {
		char *nr = topo_asprintf("%s -> %s", ring, NAME(L, s->witness[i]));

		free(ring);
		ring = nr;
	}
	f = finding(L, C_PATH_OVER_MAX_VIA,
		topo_asprintf("a request can arrive at %zu NRF%s with more Via members than "
			      "their maxViaMembers (508 MAX_HOPS_REACHED there, relayed back), "
			      "e.g. %s: %s receives %zu members, its maxViaMembers is %u",
			s->n_limited, s->n_limited == 1 ? "" : "s", ring != NULL ? ring : "",
			NAME(L, x), n - 1, L->t->nodes[x].cfg->fwd.max_via_members));
	free(ring);
	path(L, f, s->witness, n);
	for (size_t i = 0; i < L->t->n; i++)
		if (s->limited[i])
			nref(L, f, i, strdup("/forwardingOptions/maxViaMembers"), NAME(L, i));
}

/* Depth first from @p start, every NRF forwarding @p op. */
static void
search_from(struct lint_ctx *L, struct path_search *s, size_t start, uint64_t budget)
{
	const struct nrf_topo *t = L->t;
	enum nrf_fwd_op op = topo_walk_op(t->nodes[start].cfg);
	uint64_t spent = 0;
	size_t depth = 0;

	if (op == NRF_OP_OTHER)
		return;
	s->path[0] = (uint16_t)start;
	s->on[start] = true;
	s->iter[0] = L->adj_first[start];
	if (s->best_n == 0) {
		s->best[0] = (uint16_t)start;
		s->best_n = 1;
	}
	for (;;) {
		size_t x = s->path[depth];
		bool pushed = false;

		while (s->iter[depth] < L->adj_first[x + 1] && spent < budget) {
			const struct nrf_topo_edge *e = &t->edges[L->adj[s->iter[depth]++]];
			size_t y = (size_t)e->to;
			enum step_end st;

			if (s->on[y] || t->nodes[y].down)
				continue;
			spent++;
			if (step(L, x, depth, op, e->peer) != STEP_NEXT)
				continue;
			L->lines[depth] = nrf_slice_str(t->nodes[x].via_member);
			spent++;
			st = step(L, y, depth + 1, op, -1);
			if (depth + 1 >= NRF_CFG_MAX_VIA_MEMBERS) {
				st = STEP_HOP_LIMIT;
			}
			s->path[depth + 1] = (uint16_t)y;
			if (st == STEP_HOP_LIMIT) {
				limit_found(L, s, depth + 1);
				continue;
			}
			if (depth + 2 > s->best_n) {
				memcpy(s->best, s->path, (depth + 2) * sizeof(*s->path));
				s->best_n = depth + 2;
			}
			if (st != STEP_NEXT)
				continue;
			depth++;
			s->on[y] = true;
			s->iter[depth] = L->adj_first[y];
			pushed = true;
			break;
		}
		if (pushed)
			continue;
		s->on[x] = false;
		if (depth == 0)
			break;
		depth--;
	}
	if (spent >= budget)
		L->out->path_search_complete = false;
}

static void
lint_paths(struct lint_ctx *L, uint64_t budget)
{
	const struct nrf_topo *t = L->t;
	size_t n = t->n, min_at = 0;
	struct path_search s = {0};
	uint64_t per;
	uint32_t min_max = UINT32_MAX;
	struct nrf_topo_finding *f;
	char *ring;

	if (n == 0)
		return;
	s.path = calloc(n + 1, sizeof(*s.path));
	s.iter = calloc(n + 1, sizeof(*s.iter));
	s.on = calloc(n + 1, sizeof(*s.on));
	s.best = calloc(n + 1, sizeof(*s.best));
	s.limited = calloc(n + 1, sizeof(*s.limited));
	s.witness = calloc(n + 1, sizeof(*s.witness));
	if (s.path == NULL || s.iter == NULL || s.on == NULL || s.best == NULL ||
		s.limited == NULL || s.witness == NULL) {
		L->err = NRF_ENOMEM;
		goto out;
	}
	L->out->path_search_complete = true;
	per = budget / n > 64 ? budget / n : 64;
	for (size_t i = 0; i < n; i++)
		search_from(L, &s, i, per);
	limit_finding(L, &s);
	L->out->longest_path = s.best_n;
	for (size_t i = 0; i < s.best_n; i++) {
		uint32_t m = t->nodes[s.best[i]].cfg->fwd.max_via_members;

		if (m < min_max) {
			min_max = m;
			min_at = s.best[i];
		}
	}
	ring = topo_strdup(NAME(L, s.best[0]));
	for (size_t i = 1; i < s.best_n && ring != NULL; i++) {
		char *nr = topo_asprintf("%s -> %s", ring, NAME(L, s.best[i]));

		free(ring);
		ring = nr;
	}
	f = finding(L, C_LONGEST_PATH,
		topo_asprintf(
			"the longest forwarding path found has %zu NRF%s (%s); the last one "
			"receives %zu Via member%s; the smallest maxViaMembers on it is %u (%s)%s",
			s.best_n, s.best_n == 1 ? "" : "s", ring != NULL ? ring : "", s.best_n - 1,
			s.best_n == 2 ? "" : "s", min_max, NAME(L, min_at),
			L->out->path_search_complete
				? ""
				: "; the search stopped at its budget: longer paths may exist"));
	free(ring);
	path(L, f, s.best, s.best_n);
	nref(L, f, min_at, strdup("/forwardingOptions/maxViaMembers"), "maxViaMembers");
out:
	free(s.path);
	free(s.iter);
	free(s.on);
	free(s.best);
	free(s.limited);
	free(s.witness);
}

static void
lint_unreachable(struct lint_ctx *L)
{
	const struct nrf_topo *t = L->t;
	size_t *in;

	if (t->n < 2)
		return;
	in = calloc(t->n, sizeof(*in));
	if (in == NULL) {
		L->err = NRF_ENOMEM;
		return;
	}
	for (size_t a = 0; a < L->adj_first[t->n]; a++) {
		const struct nrf_topo_edge *e = &t->edges[L->adj[a]];

		if ((size_t)e->to != e->from)
			in[e->to]++;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct nrf_topo_finding *f;

		if (in[i] > 0)
			continue;
		f = finding(L, C_NRF_UNREACHABLE,
			topo_asprintf("no other NRF forwards to %s: it receives requests from "
				      "clients only",
				NAME(L, i)));
		nref(L, f, i, strdup("/generalOptions/ocnrfHost"), NAME(L, i));
	}
	free(in);
}

/* ------------------------------------------------------------------------ */

/* Findings by code (the table's order: errors first), then as found. */
static int
order(struct lint_ctx *L)
{
	struct nrf_topo_findings *o = L->out;
	struct nrf_topo_finding *v;
	size_t k = 0;

	if (o->n < 2)
		return 0;
	v = malloc(o->n * sizeof(*v));
	if (v == NULL)
		return NRF_ENOMEM;
	for (int c = 0; c < C_COUNT; c++)
		for (size_t i = 0; i < o->n; i++)
			if (L->code_of[i] == c)
				v[k++] = o->v[i];
	memcpy(o->v, v, o->n * sizeof(*v));
	free(v);
	return 0;
}

int
nrf_topo_lint(struct nrf_topo *t, const struct nrf_topo_lint_opts *opts,
	struct nrf_topo_findings *out)
{
	struct lint_ctx L = {0};
	uint64_t budget = opts != NULL && opts->path_budget > 0 ? opts->path_budget : 50000;
	int rc;

	if (out == NULL)
		return NRF_EINVAL;
	memset(out, 0, sizeof(*out));
	if (t == NULL || !t->resolved)
		return NRF_EINVAL;
	L.t = t;
	L.out = out;
	rc = graph_build(&L);
	if (rc == 0)
		rc = graph_scc(&L);
	if (rc == 0) {
		lint_invalid(&L);
		lint_identities(&L);
		lint_entries(&L);
		lint_cycles(&L);
		lint_paths(&L, budget);
		lint_set_ids(&L);
		lint_set_partial(&L);
		lint_patterns(&L);
		lint_unreachable(&L);
		rc = L.err;
	}
	if (rc == 0)
		rc = order(&L);
	free(L.code_of);
	free(L.adj_first);
	free(L.adj);
	free(L.scc);
	free(L.lines);
	free(L.down);
	return rc;
}

void
nrf_topo_findings_fini(struct nrf_topo_findings *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct nrf_topo_finding *f = &l->v[i];

		for (size_t k = 0; k < f->n_refs; k++) {
			free(f->refs[k].pointer);
			free(f->refs[k].note);
		}
		free(f->refs);
		free(f->message);
		free(f->path);
		free(f->entries);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
