/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trace: one request, hop by hop, through the data path's decision code.
 *
 * The order of the calls is lib/rt's (rt_proxy.c), and must stay so:
 *  - answer_at_once(): nrf_via_scan() of every Via line (an error: 400),
 *    nrf_fwd_classify() with no apiPrefix, nrf_fwd_decide() with the
 *    worker's rotation counter (incremented per decided request) and its
 *    held-down bitset; loop detected / hop limit: the error at once;
 *    local-only without a local NRF: 501;
 *  - start(): the local NRF first (held down: a failed try at once), its
 *    answer relayed unless nrf_fwd_local_action() says NEXT (the body is
 *    looked at only for a 200 discovery answer with emptyDiscoveryResult);
 *  - next_candidate(): candidates in plan order; with
 *    3gpp-Sbi-Max-Forward-Hops 0 the hop limit stops the walk; every try
 *    counts in the ledger; a try that fails (nothing listens, the NRF is
 *    down) is nrf_fwd_ledger_fail() and holds the peer down; an answer goes
 *    through nrf_fwd_peer_answer() on its status, then again with its body
 *    when nrf_fwd_peer_needs_body();
 *  - answer_final(): nrf_fwd_final(); DO_LOCAL relays the kept local answer.
 * The forwarded request carries one more Via field line, the member
 * nrf_via_member_format() gives for ocnrfHost:ocnrfPort (rt_try_send()),
 * the peer's apiPrefix in front of the path, and 3gpp-Sbi-Max-Forward-Hops
 * one less when it was present. tests/integration/test_topo_agreement.py
 * holds this to running nrfwd processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nrf_err.h"
#include "topo_int.h"

struct trace_ctx {
	struct nrf_topo *t;
	struct nrf_topo_hops *tr;
	const char *method;
	struct topo_strs *strs; /* strings the trace owns */
};

const char *
nrf_topo_try_end_name(enum nrf_topo_try_end e)
{
	switch (e) {
	case NRF_TOPO_TRY_FAILED:
		return "failed";
	case NRF_TOPO_TRY_REROUTED:
		return "rerouted";
	case NRF_TOPO_TRY_RELAYED:
		return "relayed";
	case NRF_TOPO_TRY_REFUSED:
		return "refused";
	}
	return "unknown";
}

const char *
nrf_topo_local_name(enum nrf_topo_local l)
{
	switch (l) {
	case NRF_TOPO_LOCAL_NOT_ASKED:
		return "not-asked";
	case NRF_TOPO_LOCAL_ANSWERS:
		return "answers";
	case NRF_TOPO_LOCAL_ABSENT:
		return "claims-absence";
	case NRF_TOPO_LOCAL_FAILED:
		return "down";
	}
	return "unknown";
}

/* Keep @p s (malloc'd) for the trace's lifetime; NULL on ENOMEM. */
static const char *
keep(struct trace_ctx *c, char *s)
{
	struct topo_strs *k = c->strs;

	if (s == NULL)
		return NULL;
	if (k->n == k->cap) {
		size_t cap = k->cap * 2 + 16;
		char **nv = realloc(k->v, cap * sizeof(*nv));

		if (nv == NULL) {
			free(s);
			return NULL;
		}
		k->v = nv;
		k->cap = cap;
	}
	k->v[k->n++] = s;
	return s;
}

/* ------------------------------------------------------------------------ */
/* The assumed local NRF (nrfstub's answers, docs/nrfstub.md)                */

/* Value of query parameter @p name in @p path (after '?'), into @p out. */
static bool
query_param(const char *path, const char *name, char *out, size_t cap)
{
	const char *q = strchr(path, '?');
	size_t nl = strlen(name);

	if (q == NULL)
		return false;
	for (q++; *q != '\0';) {
		const char *amp = strchr(q, '&');
		size_t len = amp != NULL ? (size_t)(amp - q) : strlen(q);

		if (len > nl && strncmp(q, name, nl) == 0 && q[nl] == '=') {
			size_t vl = len - nl - 1;

			if (vl >= cap)
				vl = cap - 1;
			memcpy(out, q + nl + 1, vl);
			out[vl] = '\0';
			return true;
		}
		if (amp == NULL)
			break;
		q = amp + 1;
	}
	return false;
}

/* The last path segment (before the query, a trailing '/' ignored). */
static void
last_segment(const char *path, char *out, size_t cap)
{
	size_t len = strcspn(path, "?");
	size_t end, start;

	if (len > 0 && path[len - 1] == '/')
		len--;
	end = len;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	len = end - start < cap ? end - start : cap - 1;
	memcpy(out, path + start, len);
	out[len] = '\0';
}

static bool
holds(const struct topo_strs *s, const char *v, bool nocase)
{
	for (size_t i = 0; i < s->n; i++)
		if (nocase ? strcasecmp(s->v[i], v) == 0 : strcmp(s->v[i], v) == 0)
			return true;
	return false;
}

struct local_ans {
	uint16_t status;
	const char *body;
	size_t len;
	const char *cause;
};

static int
problem(struct trace_ctx *c, struct local_ans *a, int status, const char *title,
	const char *cause, const char *detail)
{
	char buf[512];
	int n = nrf_fwd_problem_render(buf, sizeof(buf), status, title, cause, detail);

	if (n < 0)
		return n;
	a->status = (uint16_t)status;
	a->body = keep(c, strdup(buf));
	a->len = (size_t)n;
	a->cause = cause;
	return a->body != NULL ? 0 : NRF_ENOMEM;
}

static int
json_answer(struct trace_ctx *c, struct local_ans *a, int status, char *body)
{
	a->status = (uint16_t)status;
	a->body = keep(c, body);
	a->len = a->body != NULL ? strlen(a->body) : 0;
	a->cause = "";
	return a->body != NULL ? 0 : NRF_ENOMEM;
}

/* What the local NRF of node @p n answers to @p path (as it arrives). */
static int
local_answer(struct trace_ctx *c, const struct topo_node *n, const char *path,
	struct local_ans *a)
{
	enum nrf_fwd_op op = nrf_fwd_classify(nrf_slice_str(c->method), nrf_slice_str(path),
		nrf_slice_str(""));
	char v[256];

	switch (op) {
	case NRF_OP_NF_DISCOVER:
		if (!query_param(path, "target-nf-type", v, sizeof(v)) || v[0] == '\0')
			return problem(c, a, 400, "Bad Request", "MANDATORY_QUERY_PARAM_MISSING",
				"query parameter target-nf-type is required");
		if (!holds(&n->types, v, true))
			return json_answer(c, a, 200,
				strdup("{\"validityPeriod\":3600,\"nfInstances\":[]}"));
		return json_answer(c, a, 200,
			topo_asprintf("{\"validityPeriod\":3600,\"nfInstances\":[{"
				      "\"nfInstanceId\":\"%s-%s\",\"nfType\":\"%s\","
				      "\"nfStatus\":\"REGISTERED\"}]}",
				n->cfg->general.host, v, v));
	case NRF_OP_NF_PROFILE_RETRIEVAL:
		last_segment(path, v, sizeof(v));
		if (!holds(&n->ids, v, false))
			return problem(c, a, 404, "Not Found", "DATA_NOT_FOUND",
				"no NF instance with this nfInstanceId");
		return json_answer(c, a, 200,
			topo_asprintf("{\"nfInstanceId\":\"%s\",\"nfStatus\":\"REGISTERED\"}", v));
	case NRF_OP_NF_STATUS_SUBSCRIBE:
		return json_answer(c, a, 201, strdup("{\"subscriptionId\":\"1\"}"));
	case NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE:
	case NRF_OP_NF_STATUS_UNSUBSCRIBE:
		last_segment(path, v, sizeof(v));
		if (!holds(&n->subs, v, false))
			return problem(c, a, 404, "Not Found", "SUBSCRIPTION_NOT_FOUND",
				"no subscription with this subscriptionId");
		if (op == NRF_OP_NF_STATUS_UNSUBSCRIBE)
			return json_answer(c, a, 204, strdup(""));
		return json_answer(c, a, 200, topo_asprintf("{\"subscriptionId\":\"%s\"}", v));
	case NRF_OP_ACCESS_TOKEN:
		return json_answer(c, a, 200,
			strdup("{\"access_token\":\"t\",\"token_type\":\"Bearer\","
			       "\"expires_in\":3600}"));
	default:
		break;
	}
	if (strncmp(path, "/nnrf-", 6) == 0 || strncmp(path, "/oauth2/", 8) == 0)
		return json_answer(c, a, 200, strdup("{}"));
	return problem(c, a, 404, "Not Found", "RESOURCE_URI_STRUCTURE_NOT_FOUND",
		"no such resource");
}

/* ------------------------------------------------------------------------ */
/* Hops                                                                      */

static struct nrf_topo_hop *
H(struct trace_ctx *c, int32_t h)
{
	return &c->tr->hops[h];
}

static int
hop_new(struct trace_ctx *c, size_t nrf, int32_t parent, const struct nrf_slice *via,
	size_t n_via, int64_t max_hops, int32_t *out)
{
	struct nrf_topo_hops *tr = c->tr;
	struct nrf_topo_hop *h;

	if (tr->n_hops >= NRF_TOPO_MAX_HOPS)
		return NRF_ETOOBIG;
	if (tr->n_hops == tr->cap) {
		size_t cap = tr->cap * 2 + 8;
		struct nrf_topo_hop *nv = realloc(tr->hops, cap * sizeof(*nv));

		if (nv == NULL)
			return NRF_ENOMEM;
		tr->hops = nv;
		tr->cap = cap;
	}
	h = &tr->hops[tr->n_hops];
	memset(h, 0, sizeof(*h));
	h->via = calloc(n_via + 1, sizeof(*h->via));
	if (h->via == NULL)
		return NRF_ENOMEM;
	if (n_via > 0)
		memcpy(h->via, via, n_via * sizeof(*via));
	h->n_via = n_via;
	h->nrf = (uint16_t)nrf;
	h->parent = parent;
	h->depth = parent < 0 ? 0 : (uint16_t)(H(c, parent)->depth + 1);
	h->max_forward_hops = max_hops;
	h->relayed_hop = -1;
	h->answer.origin = -1;
	h->answer.origin_hop = -1;
	*out = (int32_t)tr->n_hops++;
	return 0;
}

/* Hop @p h's answer is its own (made there, relayed from nowhere). */
static struct nrf_topo_answer *
answer_own(struct trace_ctx *c, int32_t h, enum nrf_topo_kind kind, uint16_t status,
	const char *cause, const char *body, size_t body_len)
{
	struct nrf_topo_hop *hp = H(c, h);
	struct nrf_topo_answer *a = &hp->answer;

	a->kind = kind;
	a->status = status;
	a->origin = hp->nrf;
	a->origin_hop = h;
	a->cause = cause;
	a->body = body;
	a->body_len = body_len;
	hp->relayed_hop = -1;
	return a;
}

static void
answer_error(struct trace_ctx *c, int32_t h, enum nrf_cfg_mode mode, enum nrf_cfg_cond cond)
{
	const struct topo_node *n = &c->t->nodes[H(c, h)->nrf];
	const struct nrf_fwd_problem *pb = nrf_fwd_table_problem(n->table, mode, cond);
	struct nrf_topo_answer *a = answer_own(c, h, NRF_TOPO_ANS_ERROR, pb->status,
		n->cfg->errors[mode][cond].cause, pb->body, pb->body_len);

	a->cond = cond;
	a->mode = mode;
}

static int
answer_reject(struct trace_ctx *c, int32_t h, int status, const char *title,
	const char *cause, const char *detail)
{
	struct local_ans la;
	int rc = problem(c, &la, status, title, cause, detail);

	if (rc != 0)
		return rc;
	answer_own(c, h, NRF_TOPO_ANS_REJECT, la.status, cause, la.body, la.len);
	return 0;
}

/* The local NRF's answer (kept or at once) is the hop's answer. */
static void
answer_local(struct trace_ctx *c, int32_t h, const char *cause)
{
	const struct nrf_topo_hop *hp = H(c, h);

	answer_own(c, h, NRF_TOPO_ANS_LOCAL, hp->local_status, cause, hp->local_body,
		hp->local_body_len);
}

static void
bit_set(uint64_t *bits, size_t i)
{
	bits[i >> 6] |= 1ull << (i & 63);
}

/* The held-down bitset the hop's worker has: its state, plus every entry
 * that reaches an NRF said to be down. */
static void
held_down(const struct nrf_topo *t, size_t nrf, uint64_t *down)
{
	const struct topo_node *n = &t->nodes[nrf];

	memcpy(down, n->held, sizeof(n->held));
	for (uint16_t p = 0; p < n->cfg->n_peers; p++) {
		const struct nrf_topo_edge *e = &t->edges[n->first_edge + p];

		if (e->to >= 0 && t->nodes[e->to].down)
			bit_set(down, p);
	}
}

static int hop_run(struct trace_ctx *c, size_t nrf, int32_t parent, const struct nrf_slice *via,
	size_t n_via, int64_t max_hops, const char *path, int32_t *out);

/* Nothing more to try (rt_proxy.c, answer_final()): the rule decides. */
static void
answer_final(struct trace_ctx *c, int32_t h, const char *local_cause)
{
	struct nrf_topo_hop *hp = H(c, h);
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

	if (nrf_fwd_final(&hp->plan, &hp->lg, &cond) == NRF_FWD_DO_LOCAL &&
		hp->local == NRF_TOPO_LOCAL_ABSENT)
		answer_local(c, h, local_cause);
	else
		answer_error(c, h, hp->plan.error_mode, cond);
}

/* The candidates, one at a time (rt_proxy.c, next_candidate()). */
static int
candidates(struct trace_ctx *c, int32_t h, const char *path, const char *local_cause)
{
	struct nrf_topo *t = c->t;
	struct nrf_topo_hop *hp = H(c, h);
	size_t nrf = hp->nrf;
	const struct topo_node *n = &t->nodes[nrf];
	const struct nrf_cfg *cfg = n->cfg;
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;
	struct nrf_slice *via;
	size_t n_via = hp->n_via;
	int64_t max_hops = hp->max_forward_hops;
	int rc = 0;

	/* The forwarded request's Via: the lines received plus ours. */
	via = calloc(n_via + 1, sizeof(*via));
	if (via == NULL)
		return NRF_ENOMEM;
	if (n_via > 0)
		memcpy(via, hp->via, n_via * sizeof(*via));
	via[n_via] = nrf_slice_str(n->via_member);

	for (uint16_t i = 0; i < hp->plan.n_cand; i++) {
		uint16_t peer = hp->plan.cand[i];
		const struct nrf_topo_edge *e = &t->edges[n->first_edge + peer];
		const struct nrf_cfg_peer *p = &cfg->peers[peer];
		struct nrf_topo_try *tr;
		enum nrf_fwd_next next;
		int32_t child = -1;
		char *fpath;

		if (max_hops == 0) {
			/* TS 29.500 §6.10.10: no hop left to forward with. */
			hp->lg.hop_limit = true;
			break;
		}
		hp->lg.tried++;
		tr = &hp->tries[hp->n_tries++];
		tr->cand = i;
		tr->peer = peer;
		tr->held_down = (hp->plan.cand_down >> i) & 1;
		tr->to = e->to;
		tr->hop = -1;
		if (e->to < 0 || t->nodes[e->to].down) {
			/* Nothing answers: a connect failure holds the peer
			 * down in this worker (rt_pool.c, mark_down()). */
			tr->end = NRF_TOPO_TRY_FAILED;
			nrf_fwd_ledger_fail(&hp->plan, &hp->lg, i);
			nrf_topo_set_held_down(t, nrf, peer, true);
			continue;
		}
		/* A held-down peer that answers its probe is up again. */
		nrf_topo_set_held_down(t, nrf, peer, false);
		fpath = topo_asprintf("%s%s", p->api_prefix, path);
		if (fpath == NULL || keep(c, fpath) == NULL) {
			rc = NRF_ENOMEM;
			break;
		}
		rc = hop_run(c, (size_t)e->to, h, via, n_via + 1,
			max_hops > 0 ? max_hops - 1 : max_hops, fpath, &child);
		hp = H(c, h); /* the hops may have moved */
		tr = &hp->tries[hp->n_tries - 1];
		if (rc != 0)
			break;
		tr->hop = child;
		tr->status = H(c, child)->answer.status;
		next = nrf_fwd_peer_answer(cfg, &hp->plan, &hp->lg, tr->status, NULL, 0, &cond);
		if (next == NRF_FWD_DO_RELAY &&
			nrf_fwd_peer_needs_body(cfg, &hp->plan, &hp->lg, tr->status)) {
			const struct nrf_topo_answer *ca = &H(c, child)->answer;

			next = nrf_fwd_peer_answer(cfg, &hp->plan, &hp->lg, tr->status, ca->body,
				ca->body_len, &cond);
		}
		if (next == NRF_FWD_DO_NEXT) {
			tr->end = NRF_TOPO_TRY_REROUTED;
			nrf_fwd_ledger_fail(&hp->plan, &hp->lg, i);
			continue;
		}
		if (next == NRF_FWD_DO_ERROR) {
			tr->end = NRF_TOPO_TRY_REFUSED;
			answer_error(c, h, hp->plan.error_mode, cond);
			free(via);
			return 0;
		}
		tr->end = NRF_TOPO_TRY_RELAYED;
		hp->answer = H(c, child)->answer;
		hp->relayed_hop = child;
		free(via);
		return 0;
	}
	free(via);
	if (rc != 0)
		return rc;
	answer_final(c, h, local_cause);
	return 0;
}

static int
hop_run(struct trace_ctx *c, size_t nrf, int32_t parent, const struct nrf_slice *via,
	size_t n_via, int64_t max_hops, const char *path, int32_t *out)
{
	struct nrf_topo *t = c->t;
	struct topo_node *n = &t->nodes[nrf];
	const struct nrf_cfg *cfg = n->cfg;
	struct nrf_topo_hop *hp;
	struct local_ans la = {0};
	enum nrf_fwd_action act;
	int32_t h;
	int rc;

	rc = hop_new(c, nrf, parent, via, n_via, max_hops, &h);
	if (rc != 0)
		return rc;
	*out = h;
	hp = H(c, h);
	if (n->down) {
		/* Only the client's NRF gets here (tries to a down NRF fail
		 * before a hop): its connection is refused, nothing answers. */
		hp->scan_rc = NRF_ECLOSED;
		hp->answer.kind = NRF_TOPO_ANS_NONE;
		return 0;
	}
	hp->scan_rc = topo_scan(t, nrf, hp->via, hp->n_via, &hp->scan);
	if (hp->scan_rc != 0)
		return answer_reject(c, h, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"malformed Via header");
	hp->op = nrf_fwd_classify(nrf_slice_str(c->method), nrf_slice_str(path),
		nrf_slice_str(""));
	hp->rotation = n->rotation++;
	held_down(t, nrf, hp->down);
	rc = nrf_fwd_decide(n->table, &hp->scan, hp->op, hp->rotation, hp->down, &hp->plan);
	if (rc != 0)
		return rc;
	switch (hp->plan.verdict) {
	case NRF_FWD_LOOP_DETECTED:
	case NRF_FWD_HOP_LIMIT:
		answer_error(c, h, hp->plan.error_mode, hp->plan.error);
		return 0;
	case NRF_FWD_LOCAL_ONLY:
		if (!cfg->rt.local_nrf.present)
			return answer_reject(c, h, 501, "Not Implemented", "UNSUPPORTED_RESOURCE",
				"operation is served by the local NRF only, and there is none");
		break;
	case NRF_FWD_FORWARD:
		break;
	}
	if (!cfg->rt.local_nrf.present)
		return candidates(c, h, path, "");
	hp->lg.local = NRF_FWD_LOCAL_PENDING;
	if (n->local_down) {
		/* Held down: a failed try at once (docs/failures.md). */
		hp->local = NRF_TOPO_LOCAL_FAILED;
		nrf_fwd_ledger_fail(&hp->plan, &hp->lg, -1);
		if (hp->plan.verdict == NRF_FWD_FORWARD)
			return candidates(c, h, path, "");
		answer_final(c, h, "");
		return 0;
	}
	rc = local_answer(c, n, path, &la);
	if (rc != 0)
		return rc;
	hp = H(c, h);
	hp->local_status = la.status;
	hp->local_body = la.body;
	hp->local_body_len = la.len;
	/* rt_proxy.c, rt_peer_on_response() for the local try. */
	if (hp->plan.verdict == NRF_FWD_FORWARD && hp->op == NRF_OP_NF_DISCOVER &&
		la.status == 200 && cfg->fwd.empty_discovery_result &&
		nrf_fwd_op_enabled(cfg, hp->op) && !nrf_cfg_status_match(&cfg->fwd.triggers, 200))
		act = nrf_fwd_local_action(cfg, hp->op, la.status, la.body, la.len);
	else if (hp->plan.verdict != NRF_FWD_FORWARD)
		act = NRF_FWD_RELAY;
	else
		act = nrf_fwd_local_action(cfg, hp->op, la.status, NULL, 0);
	if (act == NRF_FWD_RELAY) {
		hp->local = NRF_TOPO_LOCAL_ANSWERS;
		answer_local(c, h, la.cause);
		return 0;
	}
	hp->local = NRF_TOPO_LOCAL_ABSENT;
	hp->lg.local = NRF_FWD_LOCAL_ABSENT;
	return candidates(c, h, path, la.cause);
}

int
nrf_topo_trace(struct nrf_topo *t, const struct nrf_topo_request *req,
	struct nrf_topo_hops *out)
{
	struct trace_ctx c;
	struct topo_strs *strs;
	struct nrf_slice *lines = NULL;
	int32_t h;
	int rc;

	if (out == NULL)
		return NRF_EINVAL;
	memset(out, 0, sizeof(*out));
	if (t == NULL || req == NULL || !t->resolved || req->at >= t->n ||
		req->method == NULL || req->path == NULL || (req->n_via > 0 && req->via == NULL))
		return NRF_EINVAL;
	strs = calloc(1, sizeof(*strs));
	if (strs == NULL)
		return NRF_ENOMEM;
	out->priv = strs;
	c.t = t;
	c.tr = out;
	c.method = req->method;
	c.strs = strs;
	/* The client's lines, copied: the trace outlives the caller's. */
	if (req->n_via > 0) {
		lines = calloc(req->n_via, sizeof(*lines));
		if (lines == NULL)
			return NRF_ENOMEM;
		for (size_t i = 0; i < req->n_via; i++) {
			char *s = malloc(req->via[i].len + 1);

			if (s != NULL) {
				memcpy(s, req->via[i].p, req->via[i].len);
				s[req->via[i].len] = '\0';
			}
			if (keep(&c, s) == NULL) {
				free(lines);
				return NRF_ENOMEM;
			}
			lines[i].p = s;
			lines[i].len = req->via[i].len;
		}
	}
	rc = hop_run(&c, req->at, -1, lines, req->n_via, req->max_forward_hops, req->path, &h);
	free(lines);
	return rc;
}

void
nrf_topo_hops_fini(struct nrf_topo_hops *tr)
{
	struct topo_strs *strs;

	if (tr == NULL)
		return;
	for (size_t i = 0; i < tr->n_hops; i++)
		free(tr->hops[i].via);
	strs = tr->priv;
	if (strs != NULL) {
		for (size_t i = 0; i < strs->n; i++)
			free(strs->v[i]);
		free(strs->v);
		free(strs);
	}
	free(tr->hops);
	memset(tr, 0, sizeof(*tr));
}

size_t
nrf_topo_answer_via(const struct nrf_topo *t, const struct nrf_topo_hops *tr, size_t hop,
	uint16_t *out, size_t max)
{
	size_t chain[NRF_CFG_MAX_VIA_MEMBERS + 64];
	size_t n_chain = 0, n = 0;
	int32_t h = (int32_t)hop;

	if (t == NULL || tr == NULL || hop >= tr->n_hops)
		return 0;
	/* From the client's hop down to the hop that made the answer. */
	while (h >= 0 && n_chain < NRF_ARRAY_SIZE(chain)) {
		chain[n_chain++] = (size_t)h;
		h = tr->hops[h].relayed_hop;
	}
	for (size_t k = n_chain; k-- > 0;) {
		const struct nrf_topo_hop *hp = &tr->hops[chain[k]];
		const struct topo_node *nd = &t->nodes[hp->nrf];

		/* nrfwd's own answers carry no member of their maker. */
		if (k == n_chain - 1 && hp->answer.kind != NRF_TOPO_ANS_LOCAL)
			continue;
		if (!nd->cfg->general.via_on_responses || nd->via_member[0] == '\0')
			continue;
		if (n < max)
			out[n] = hp->nrf;
		n++;
	}
	return n;
}
