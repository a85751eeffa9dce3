/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forwarding decision. Everything that depends only on the snapshot
 * (candidate order, which operations may be forwarded, error bodies) is
 * computed once in nrf_fwd_table_create() so that nrf_fwd_decide() is a walk
 * over a few small arrays and bit tests.
 */
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_fwd.h"

/* Peers of one list that share a priority: order[first .. first+n-1]. */
struct prio_group {
	uint16_t first;
	uint16_t n;
};

/* One candidate list: a growth set, or the forwarding peers. */
struct cand_list {
	enum nrf_cfg_mode mode;
	uint16_t set;          /* growth: set index; forwarding: NRF_CFG_NO_SET */
	uint16_t first_peer;   /* the list's peers in cfg->peers */
	uint16_t n_peers;
	uint16_t first_group;  /* its groups in groups[] */
	uint16_t n_groups;
};

struct nrf_fwd_table {
	const struct nrf_cfg *cfg;
	bool op_enabled[NRF_OP_COUNT];
	enum nrf_cfg_mode primary_mode;
	uint16_t n_lists;
	uint16_t n_groups;
	struct cand_list lists[NRF_CFG_MAX_SETS + 1];
	struct prio_group groups[NRF_CFG_MAX_PEERS];
	uint16_t order[NRF_CFG_MAX_PEERS];
	struct nrf_fwd_problem problems[NRF_MODE_COUNT][NRF_COND_COUNT];
	char *bodies[NRF_MODE_COUNT][NRF_COND_COUNT];
};

/* ------------------------------------------------------------------------ */
/* Operations                                                                */

static const char *const op_names[NRF_OP_COUNT] = {
	[NRF_OP_OTHER] = "other",
	[NRF_OP_NF_DISCOVER] = "NFDiscover",
	[NRF_OP_NF_PROFILE_RETRIEVAL] = "NFProfileRetrieval",
	[NRF_OP_NF_STATUS_SUBSCRIBE] = "NFStatusSubscribe",
	[NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE] = "NFStatusSubscribeUpdate",
	[NRF_OP_NF_STATUS_UNSUBSCRIBE] = "NFStatusUnsubscribe",
	[NRF_OP_ACCESS_TOKEN] = "AccessToken",
};

const char *
nrf_fwd_op_name(enum nrf_fwd_op op)
{
	if ((unsigned)op >= NRF_OP_COUNT)
		return "other";
	return op_names[op];
}

/* Does @p s start with @p lit? On success advance past it. */
static bool
eat(struct nrf_slice *s, const char *lit)
{
	size_t n = strlen(lit);

	if (s->len < n || memcmp(s->p, lit, n) != 0)
		return false;
	s->p += n;
	s->len -= n;
	return true;
}

/* The rest is empty or a single "/". */
static bool
at_end(struct nrf_slice s)
{
	return s.len == 0 || (s.len == 1 && s.p[0] == '/');
}

/* The rest is "/{id}" or "/{id}/" with a non-empty id without '/'. */
static bool
one_segment(struct nrf_slice s)
{
	size_t i;

	if (s.len < 2 || s.p[0] != '/')
		return false;
	for (i = 1; i < s.len; i++)
		if (s.p[i] == '/')
			return i > 1 && i == s.len - 1;
	return true;
}

/* @p s without its query ('?' and what follows). */
static inline void
cut_query(struct nrf_slice *s)
{
	const char *q;

	if (s->len == 0)
		return;
	if (s->p[0] == '?') {
		s->len = 0;
		return;
	}
	q = memchr(s->p, '?', s->len);
	if (q != NULL)
		s->len = (size_t)(q - s->p);
}

enum nrf_fwd_op
nrf_fwd_classify(struct nrf_slice method, struct nrf_slice path,
	struct nrf_slice api_prefix)
{
	struct nrf_slice p = path;

	if (p.p == NULL || method.p == NULL)
		return NRF_OP_OTHER;
	if (api_prefix.len > 0) {
		cut_query(&p);
		if (p.len > api_prefix.len && memcmp(p.p, api_prefix.p, api_prefix.len) == 0 &&
			p.p[api_prefix.len] == '/') {
			p.p += api_prefix.len;
			p.len -= api_prefix.len;
		}
	}
	/* The query is cut from what follows a literal only: none of them
	 * holds a '?', so a path starts with one exactly when the path
	 * without its query does (measured: no memchr() over a discovery
	 * request's whole path, whose rest starts with its '?'). */
	if (eat(&p, "/nnrf-disc/v1/nf-instances")) {
		cut_query(&p);
		return nrf_slice_eq(method, "GET") && at_end(p) ? NRF_OP_NF_DISCOVER
								 : NRF_OP_OTHER;
	}
	if (eat(&p, "/nnrf-nfm/v1/nf-instances")) {
		cut_query(&p);
		return nrf_slice_eq(method, "GET") && one_segment(p)
			? NRF_OP_NF_PROFILE_RETRIEVAL
			: NRF_OP_OTHER;
	}
	if (eat(&p, "/nnrf-nfm/v1/subscriptions")) {
		cut_query(&p);
		if (at_end(p))
			return nrf_slice_eq(method, "POST") ? NRF_OP_NF_STATUS_SUBSCRIBE
							     : NRF_OP_OTHER;
		if (!one_segment(p))
			return NRF_OP_OTHER;
		if (nrf_slice_eq(method, "PATCH"))
			return NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE;
		if (nrf_slice_eq(method, "DELETE"))
			return NRF_OP_NF_STATUS_UNSUBSCRIBE;
		return NRF_OP_OTHER;
	}
	if (eat(&p, "/oauth2/token")) {
		cut_query(&p);
		return nrf_slice_eq(method, "POST") && at_end(p) ? NRF_OP_ACCESS_TOKEN
								  : NRF_OP_OTHER;
	}
	return NRF_OP_OTHER;
}

bool
nrf_fwd_op_enabled(const struct nrf_cfg *cfg, enum nrf_fwd_op op)
{
	bool sw;

	if (cfg == NULL || (!cfg->fwd.enabled && !cfg->growth.enabled))
		return false;
	switch (op) {
	case NRF_OP_NF_DISCOVER:
		sw = cfg->fwd.discovery;
		break;
	case NRF_OP_NF_PROFILE_RETRIEVAL:
		sw = cfg->fwd.profile_retrieval;
		break;
	case NRF_OP_NF_STATUS_SUBSCRIBE:
	case NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE:
	case NRF_OP_NF_STATUS_UNSUBSCRIBE:
		sw = cfg->fwd.subscription;
		break;
	case NRF_OP_ACCESS_TOKEN:
		sw = cfg->fwd.access_token;
		break;
	default:
		sw = false;
		break;
	}
	return sw;
}

const char *
nrf_fwd_verdict_name(enum nrf_fwd_verdict v)
{
	switch (v) {
	case NRF_FWD_LOOP_DETECTED:
		return "loop-detected";
	case NRF_FWD_HOP_LIMIT:
		return "hop-limit";
	case NRF_FWD_LOCAL_ONLY:
		return "local-only";
	case NRF_FWD_FORWARD:
		return "forward";
	}
	return "unknown";
}

const char *
nrf_fwd_skip_reason_name(enum nrf_fwd_skip_reason r)
{
	switch (r) {
	case NRF_FWD_SKIP_VIA_HOST:
		return "via-host";
	case NRF_FWD_SKIP_VIA_SET:
		return "via-set";
	case NRF_FWD_SKIP_DOWN:
		return "down";
	}
	return "unknown";
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */

static int
render_problems(struct nrf_fwd_table *t)
{
	const struct nrf_cfg *cfg = t->cfg;

	for (int m = 0; m < NRF_MODE_COUNT; m++) {
		for (int c = 0; c < NRF_COND_COUNT; c++) {
			const struct nrf_cfg_error_response *er = &cfg->errors[m][c];
			struct nrf_fwd_problem *pb = &t->problems[m][c];
			size_t cap = 256 + 6 * (strlen(er->title) + strlen(er->detail) +
				strlen(er->cause));
			char *body = malloc(cap);
			int n;

			if (body == NULL)
				return NRF_ENOMEM;
			n = nrf_fwd_problem_render(body, cap, er->status, er->title,
				er->cause, er->detail);
			if (n < 0) {
				free(body);
				return NRF_EINTERNAL;
			}
			t->bodies[m][c] = body;
			pb->status = er->status;
			pb->body = body;
			pb->body_len = (size_t)n;
			pb->retry_after = er->retry_after;
			pb->location = er->status >= 300 && er->status < 400
				? er->redirect_url
				: "";
		}
	}
	return 0;
}

/* Stable sort of a list's peers by priority (lists are small; control thread). */
static void
add_list(struct nrf_fwd_table *t, enum nrf_cfg_mode mode, uint16_t set,
	uint16_t first, uint16_t n)
{
	const struct nrf_cfg_peer *peers = t->cfg->peers;
	struct cand_list *l = &t->lists[t->n_lists++];
	uint16_t *ord = &t->order[first];

	l->mode = mode;
	l->set = set;
	l->first_peer = first;
	l->n_peers = n;
	l->first_group = t->n_groups;
	l->n_groups = 0;
	for (uint16_t i = 0; i < n; i++)
		ord[i] = (uint16_t)(first + i);
	for (uint16_t i = 1; i < n; i++) {
		uint16_t v = ord[i];
		uint16_t j = i;

		while (j > 0 && peers[ord[j - 1]].priority > peers[v].priority) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = v;
	}
	for (uint16_t i = 0; i < n;) {
		uint16_t j = i;

		while (j < n && peers[ord[j]].priority == peers[ord[i]].priority)
			j++;
		t->groups[t->n_groups].first = (uint16_t)(first + i);
		t->groups[t->n_groups].n = (uint16_t)(j - i);
		t->n_groups++;
		l->n_groups++;
		i = j;
	}
}

struct nrf_fwd_table *
nrf_fwd_table_create(const struct nrf_cfg *cfg, int *err)
{
	struct nrf_fwd_table *t;
	int rc;

	if (cfg == NULL) {
		if (err != NULL)
			*err = NRF_EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		if (err != NULL)
			*err = NRF_ENOMEM;
		return NULL;
	}
	t->cfg = cfg;
	for (int op = 0; op < NRF_OP_COUNT; op++)
		t->op_enabled[op] = nrf_fwd_op_enabled(cfg, (enum nrf_fwd_op)op);
	/* Errors that belong to no candidate (loop detection, hop limit) use
	 * the forwarding group, unless only growth forwarding is on. */
	t->primary_mode = !cfg->fwd.enabled && cfg->growth.enabled ? NRF_MODE_GROWTH
								   : NRF_MODE_FORWARDING;
	if (cfg->growth.enabled)
		for (uint16_t s = 0; s < cfg->n_sets; s++)
			add_list(t, NRF_MODE_GROWTH, s, cfg->sets[s].first_peer,
				cfg->sets[s].n_peers);
	if (cfg->fwd.enabled)
		add_list(t, NRF_MODE_FORWARDING, NRF_CFG_NO_SET, cfg->fwd.first_peer,
			cfg->fwd.n_peers);
	rc = render_problems(t);
	if (rc < 0) {
		nrf_fwd_table_free(t);
		if (err != NULL)
			*err = rc;
		return NULL;
	}
	if (err != NULL)
		*err = 0;
	return t;
}

void
nrf_fwd_table_free(struct nrf_fwd_table *t)
{
	if (t == NULL)
		return;
	for (int m = 0; m < NRF_MODE_COUNT; m++)
		for (int c = 0; c < NRF_COND_COUNT; c++)
			free(t->bodies[m][c]);
	free(t);
}

const struct nrf_cfg *
nrf_fwd_table_cfg(const struct nrf_fwd_table *t)
{
	return t->cfg;
}

const struct nrf_fwd_problem *
nrf_fwd_table_problem(const struct nrf_fwd_table *t, enum nrf_cfg_mode mode,
	enum nrf_cfg_cond cond)
{
	if ((unsigned)mode >= NRF_MODE_COUNT)
		mode = NRF_MODE_FORWARDING;
	if ((unsigned)cond >= NRF_COND_COUNT)
		cond = NRF_COND_NOT_REACHABLE;
	return &t->problems[mode][cond];
}

int
nrf_fwd_identities(const struct nrf_cfg *cfg, struct nrf_via_identity *out,
	size_t max)
{
	size_t n = 0;

#define NRF_FWD_ADD(h, p, k, peer_)                                            \
	do {                                                                   \
		if (n >= max)                                                  \
			return NRF_ETOOBIG;                                    \
		out[n].host = (h);                                             \
		out[n].port = (p);                                             \
		out[n].kind = (k);                                             \
		out[n].peer = (peer_);                                         \
		n++;                                                           \
	} while (0)

	NRF_FWD_ADD(cfg->general.host, cfg->general.port, NRF_VIA_SELF, 0);
	for (uint16_t i = 0; i < cfg->general.n_aliases; i++)
		NRF_FWD_ADD(cfg->general.aliases[i].host, cfg->general.aliases[i].port,
			NRF_VIA_SELF, 0);
	for (uint16_t p = 0; p < cfg->n_peers; p++)
		for (uint8_t i = 0; i < cfg->peers[p].n_ids; i++)
			NRF_FWD_ADD(cfg->peers[p].ids[i].host, cfg->peers[p].ids[i].port,
				NRF_VIA_PEER, p);
#undef NRF_FWD_ADD
	return (int)n;
}

struct nrf_via_db *
nrf_fwd_via_db_create(const struct nrf_cfg *cfg, int *err)
{
	size_t max = 1 + NRF_CFG_MAX_ALIASES + 3 * (size_t)cfg->n_peers;
	struct nrf_via_identity *ids = calloc(max, sizeof(*ids));
	struct nrf_via_db *db;
	int n;

	if (ids == NULL) {
		if (err != NULL)
			*err = NRF_ENOMEM;
		return NULL;
	}
	n = nrf_fwd_identities(cfg, ids, max);
	if (n < 0) {
		free(ids);
		if (err != NULL)
			*err = n;
		return NULL;
	}
	db = nrf_via_db_create(ids, (size_t)n, err);
	free(ids);
	return db;
}

/* ------------------------------------------------------------------------ */
/* Decision                                                                  */

static inline bool
bit_test(const uint64_t *bits, uint16_t i)
{
	return (bits[i >> 6] >> (i & 63)) & 1;
}

static bool
set_in_via(const struct nrf_via_result *via, const struct cand_list *l)
{
	for (uint16_t p = l->first_peer; p < l->first_peer + l->n_peers; p++)
		if (nrf_via_result_has_peer(via, p))
			return true;
	return false;
}

static void
record_skip(struct nrf_fwd_plan *plan, uint16_t peer, enum nrf_fwd_skip_reason r)
{
	if (r == NRF_FWD_SKIP_DOWN)
		plan->n_skip_down++;
	else
		plan->n_skip_via++;
	if (plan->n_skip < NRF_FWD_MAX_SKIPS) {
		plan->skip[plan->n_skip].peer = peer;
		plan->skip[plan->n_skip].reason = (uint8_t)r;
		plan->n_skip++;
	}
}

int
nrf_fwd_decide(const struct nrf_fwd_table *t, const struct nrf_via_result *via,
	enum nrf_fwd_op op, uint32_t rotation, const uint64_t *down,
	struct nrf_fwd_plan *plan)
{
	const struct nrf_cfg *cfg;
	enum nrf_cfg_mode last_mode;
	uint32_t max_cand;
	uint16_t down_peers[NRF_CFG_MAX_ATTEMPTS];
	uint16_t down_cov = 0;
	uint16_t n_down;

	if (t == NULL || via == NULL || plan == NULL)
		return NRF_EINVAL;
	cfg = t->cfg;
	if ((unsigned)op >= NRF_OP_COUNT)
		op = NRF_OP_OTHER;
	plan->op = op;
	plan->n_cand = 0;
	plan->cand_down = 0;
	plan->cand_covered = 0;
	plan->n_skip = 0;
	plan->n_skip_via = 0;
	plan->n_skip_down = 0;
	plan->via_members = via->members;
	plan->error_mode = t->primary_mode;

	if (via->self) {
		plan->verdict = NRF_FWD_LOOP_DETECTED;
		plan->error = NRF_COND_LOOP_DETECTION;
		return 0;
	}
	if (via->members > cfg->fwd.max_via_members) {
		plan->verdict = NRF_FWD_HOP_LIMIT;
		plan->error = NRF_COND_HOP_LIMIT;
		return 0;
	}
	if (!t->op_enabled[op]) {
		plan->verdict = NRF_FWD_LOCAL_ONLY;
		plan->error = NRF_COND_NOT_REACHABLE;
		return 0;
	}

	plan->verdict = NRF_FWD_FORWARD;
	max_cand = NRF_MIN(cfg->fwd.max_forward_attempts, NRF_CFG_MAX_ATTEMPTS);
	last_mode = t->primary_mode;
	n_down = 0;
	for (uint16_t li = 0; li < t->n_lists && plan->n_cand < max_cand; li++) {
		const struct cand_list *l = &t->lists[li];
		bool whole_set = l->mode == NRF_MODE_GROWTH &&
			cfg->growth.scope == NRF_SCOPE_SET && set_in_via(via, l);

		for (uint16_t gi = 0; gi < l->n_groups && plan->n_cand < max_cand; gi++) {
			const struct prio_group *g = &t->groups[l->first_group + gi];
			uint32_t start = rotation % g->n;

			for (uint16_t k = 0; k < g->n && plan->n_cand < max_cand; k++) {
				uint16_t p = t->order[g->first + (start + k) % g->n];

				last_mode = l->mode;
				if (nrf_via_result_has_peer(via, p))
					record_skip(plan, p, NRF_FWD_SKIP_VIA_HOST);
				else if (whole_set)
					record_skip(plan, p, NRF_FWD_SKIP_VIA_SET);
				else if (down != NULL && bit_test(down, p) &&
					 n_down < NRF_CFG_MAX_ATTEMPTS) {
					if (l->mode == NRF_MODE_GROWTH && set_in_via(via, l))
						down_cov |= (uint16_t)(1u << n_down);
					down_peers[n_down++] = p; /* last resort */
				}
				else if (down != NULL && bit_test(down, p))
					record_skip(plan, p, NRF_FWD_SKIP_DOWN);
				else {
					if (l->mode == NRF_MODE_GROWTH && set_in_via(via, l))
						plan->cand_covered |=
							(uint16_t)(1u << plan->n_cand);
					plan->cand[plan->n_cand++] = p;
				}
			}
		}
	}
	/* Held-down peers are a hint, not a verdict: after every healthy
	 * candidate, in the same order, while attempts are left. */
	for (uint16_t i = 0; i < n_down; i++) {
		if (plan->n_cand < max_cand) {
			if ((down_cov >> i) & 1)
				plan->cand_covered |= (uint16_t)(1u << plan->n_cand);
			plan->cand_down |= (uint16_t)(1u << plan->n_cand);
			plan->cand[plan->n_cand++] = down_peers[i];
		} else {
			record_skip(plan, down_peers[i], NRF_FWD_SKIP_DOWN);
		}
	}
	plan->error_mode = last_mode;
	plan->error = plan->n_cand == 0 && plan->n_skip_via > 0 && plan->n_skip_down == 0
		? NRF_COND_LOOP_PREVENTION
		: NRF_COND_NOT_REACHABLE;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Answers                                                                   */

static size_t
skip_ws(const char *b, size_t i, size_t len)
{
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i;
}

/* Index after the JSON string starting at b[i] == '"', or len on error. */
static size_t
skip_string(const char *b, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		if (b[i] == '\\')
			i++;
		else if (b[i] == '"')
			return i + 1;
	}
	return len;
}

/* Index after the JSON value at b[i], or len on error. Bounded nesting is
 * not needed: only bracket depth is counted, never recursed. */
static size_t
skip_value(const char *b, size_t i, size_t len)
{
	size_t depth = 0;

	while (i < len) {
		char c = b[i];

		if (c == '"') {
			i = skip_string(b, i, len);
			if (depth == 0)
				return i;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return i;
			if (--depth == 0)
				return i + 1;
		} else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' ||
					  c == '\n' || c == '\r')) {
			return i;
		}
		i++;
	}
	return len;
}

bool
nrf_fwd_discovery_empty(const char *b, size_t len)
{
	static const char key[] = "\"nfInstances\"";
	size_t i;

	if (b == NULL)
		return false;
	i = skip_ws(b, 0, len);
	if (i >= len || b[i] != '{')
		return false;
	i++;
	for (;;) {
		size_t k;
		bool is_key;

		i = skip_ws(b, i, len);
		if (i >= len || b[i] != '"')
			return false;
		k = i;
		i = skip_string(b, i, len);
		if (i >= len)
			return false;
		is_key = i - k == sizeof(key) - 1 && memcmp(b + k, key, i - k) == 0;
		i = skip_ws(b, i, len);
		if (i >= len || b[i] != ':')
			return false;
		i = skip_ws(b, i + 1, len);
		if (is_key) {
			if (i >= len || b[i] != '[')
				return false;
			i = skip_ws(b, i + 1, len);
			return i < len && b[i] == ']';
		}
		i = skip_ws(b, skip_value(b, i, len), len);
		if (i >= len || b[i] != ',')
			return false;
		i++;
	}
}

enum nrf_fwd_action
nrf_fwd_local_action(const struct nrf_cfg *cfg, enum nrf_fwd_op op, int status,
	const char *body, size_t body_len)
{
	if (!nrf_fwd_op_enabled(cfg, op))
		return NRF_FWD_RELAY;
	if (nrf_cfg_status_match(&cfg->fwd.triggers, status))
		return NRF_FWD_NEXT;
	if (op == NRF_OP_NF_DISCOVER && status == 200 &&
		cfg->fwd.empty_discovery_result && nrf_fwd_discovery_empty(body, body_len))
		return NRF_FWD_NEXT;
	return NRF_FWD_RELAY;
}

enum nrf_fwd_action
nrf_fwd_peer_action(const struct nrf_cfg *cfg, int status)
{
	if (status == 508)
		return NRF_FWD_RELAY;
	return nrf_cfg_status_match(&cfg->fwd.reroute, status) ? NRF_FWD_NEXT
								: NRF_FWD_RELAY;
}

/* ------------------------------------------------------------------------ */
/* The answer rule (docs/failures.md)                                        */

bool
nrf_fwd_claims_absence(const struct nrf_cfg *cfg, enum nrf_fwd_op op, int status,
	const char *body, size_t body_len)
{
	if (nrf_cfg_status_match(&cfg->fwd.triggers, status))
		return true;
	return op == NRF_OP_NF_DISCOVER && status == 200 && cfg->fwd.empty_discovery_result &&
		nrf_fwd_discovery_empty(body, body_len);
}

bool
nrf_fwd_peer_needs_body(const struct nrf_cfg *cfg, const struct nrf_fwd_plan *plan,
	const struct nrf_fwd_ledger *lg, int status)
{
	return lg->local == NRF_FWD_LOCAL_FAILED && plan->op == NRF_OP_NF_DISCOVER &&
		status == 200 && cfg->fwd.empty_discovery_result &&
		!nrf_cfg_status_match(&cfg->fwd.triggers, status);
}

enum nrf_fwd_next
nrf_fwd_peer_answer(const struct nrf_cfg *cfg, const struct nrf_fwd_plan *plan,
	const struct nrf_fwd_ledger *lg, int status, const char *body, size_t body_len,
	enum nrf_cfg_cond *cond)
{
	if (nrf_fwd_peer_action(cfg, status) == NRF_FWD_NEXT)
		return NRF_FWD_DO_NEXT;
	/* A peer's absence is the whole truth only when the local NRF said
	 * the same (or there is none). */
	if (status != 508 && lg->local == NRF_FWD_LOCAL_FAILED &&
		nrf_fwd_claims_absence(cfg, plan->op, status, body, body_len)) {
		*cond = NRF_COND_LOCAL_UNAVAILABLE;
		return NRF_FWD_DO_ERROR;
	}
	return NRF_FWD_DO_RELAY;
}

void
nrf_fwd_ledger_fail(const struct nrf_fwd_plan *plan, struct nrf_fwd_ledger *lg, int cand)
{
	if (cand < 0) {
		lg->local = NRF_FWD_LOCAL_FAILED;
		return;
	}
	lg->failed++;
	if (cand >= NRF_CFG_MAX_ATTEMPTS || !((plan->cand_covered >> cand) & 1))
		lg->uncovered++;
}

enum nrf_fwd_next
nrf_fwd_final(const struct nrf_fwd_plan *plan, const struct nrf_fwd_ledger *lg,
	enum nrf_cfg_cond *cond)
{
	if (lg->local == NRF_FWD_LOCAL_FAILED || lg->local == NRF_FWD_LOCAL_PENDING) {
		*cond = NRF_COND_LOCAL_UNAVAILABLE;
		return NRF_FWD_DO_ERROR;
	}
	if (lg->local == NRF_FWD_LOCAL_ABSENT) {
		if (lg->uncovered > 0 || plan->n_skip_down > 0) {
			/* A peer that should have been asked was not. */
			*cond = NRF_COND_NOT_REACHABLE;
			return NRF_FWD_DO_ERROR;
		}
		if (lg->hop_limit) {
			*cond = NRF_COND_HOP_LIMIT;
			return NRF_FWD_DO_ERROR;
		}
		return NRF_FWD_DO_LOCAL;
	}
	if (lg->failed > 0) {
		*cond = NRF_COND_NOT_REACHABLE;
		return NRF_FWD_DO_ERROR;
	}
	if (lg->hop_limit) {
		*cond = NRF_COND_HOP_LIMIT;
		return NRF_FWD_DO_ERROR;
	}
	if (lg->tried == 0 && plan->n_skip_via > 0 && plan->n_skip_down == 0) {
		*cond = NRF_COND_LOOP_PREVENTION;
		return NRF_FWD_DO_ERROR;
	}
	*cond = NRF_COND_NOT_REACHABLE;
	return NRF_FWD_DO_ERROR;
}
