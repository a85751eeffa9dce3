/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `explain` answers "why did my request get 508?" by running the same Via scan and
 * forwarding decision as the data path and printing every step as JSON
 * (format: docs/nrfwd-ctl.md; keep it stable).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_fwd.h"
#include "nrf_rt.h"
#include "nrf_via.h"

#define MAX_VIA_LINES 256

struct nrf_cfg *
ctl_load(const char *file)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_cfg *cfg;
	int err;

	cfg = nrf_cfg_load_file(file, 1, &probs, &err);
	if (cfg == NULL)
		ctl_problems_print(file, err, &probs);
	nrf_cfg_problems_fini(&probs);
	return cfg;
}

/* ------------------------------------------------------------------------ */
/* explain                                                                   */

json_t *
ctl_jslice(struct nrf_slice s)
{
	return json_stringn_nocheck(s.p != NULL ? s.p : "", s.len);
}

static json_t *
peer_json(const struct nrf_cfg *cfg, uint16_t p)
{
	const struct nrf_cfg_peer *peer = &cfg->peers[p];
	json_t *o = json_object();

	json_object_set_new(o, "peer", json_string(peer->name));
	json_object_set_new(o, "mode", json_string(nrf_cfg_mode_name(peer->mode)));
	json_object_set_new(o, "nrfSetId",
		peer->set != NRF_CFG_NO_SET ? json_string(cfg->sets[peer->set].nrf_set_id)
					    : json_null());
	json_object_set_new(o, "priority", json_integer(peer->priority));
	json_object_set_new(o, "configPointer", json_string(peer->pointer));
	return o;
}

json_t *
ctl_problem_json(const struct nrf_fwd_table *t, enum nrf_cfg_mode mode,
	enum nrf_cfg_cond cond)
{
	const struct nrf_fwd_problem *pb = nrf_fwd_table_problem(t, mode, cond);
	json_t *o = json_object();
	json_t *hdrs = json_object();

	json_object_set_new(o, "condition", json_string(nrf_cfg_cond_name(cond)));
	json_object_set_new(o, "errorResponsesOf", json_string(nrf_cfg_mode_name(mode)));
	json_object_set_new(o, "status", json_integer(pb->status));
	json_object_set_new(hdrs, "content-type", json_string("application/problem+json"));
	if (pb->retry_after[0] != '\0')
		json_object_set_new(hdrs, "retry-after", json_string(pb->retry_after));
	if (pb->location[0] != '\0')
		json_object_set_new(hdrs, "location", json_string(pb->location));
	json_object_set_new(o, "headers", hdrs);
	json_object_set_new(o, "problemDetails", json_loadb(pb->body, pb->body_len, 0, NULL));
	return o;
}

struct match_ctx {
	const struct nrf_cfg *cfg;
	const struct nrf_via_db *db;
	json_t *arr;
};

static int
on_match(void *arg, uint32_t id, uint32_t member)
{
	struct match_ctx *m = arg;
	const struct nrf_via_identity *idn = nrf_via_db_identity(m->db, id);
	json_t *o = json_object();
	char text[300];

	if (strchr(idn->host, ':') != NULL)
		snprintf(text, sizeof(text), "[%s]:%u", idn->host, idn->port);
	else
		snprintf(text, sizeof(text), "%s:%u", idn->host, idn->port);
	json_object_set_new(o, "member", json_integer(member));
	json_object_set_new(o, "identity", json_string(text));
	if (idn->kind == NRF_VIA_SELF) {
		json_object_set_new(o, "kind", json_string("self"));
	} else {
		const struct nrf_cfg_peer *p = &m->cfg->peers[idn->peer];

		json_object_set_new(o, "kind", json_string(p->set != NRF_CFG_NO_SET ? "set" : "peer"));
		json_object_set_new(o, "peer", json_string(p->name));
		json_object_set_new(o, "mode", json_string(nrf_cfg_mode_name(p->mode)));
		if (p->set != NRF_CFG_NO_SET)
			json_object_set_new(o, "nrfSetId",
				json_string(m->cfg->sets[p->set].nrf_set_id));
	}
	json_array_append_new(m->arr, o);
	return 0;
}

static json_t *
members_json(const struct nrf_slice *lines, size_t n_lines, json_t **parse_error,
	size_t *count)
{
	struct nrf_via_member *mem = NULL;
	json_t *arr = json_array();
	size_t n = 0;
	int rc;

	rc = nrf_via_parse(lines, n_lines, NULL, 0, &n);
	if (n > 0) {
		mem = calloc(n, sizeof(*mem));
		if (mem == NULL) {
			*parse_error = json_string(nrf_strerror(NRF_ENOMEM));
			return arr;
		}
		rc = nrf_via_parse(lines, n_lines, mem, n, &n);
	}
	*count = n;
	*parse_error = rc == 0 ? json_null() : json_string(nrf_strerror(rc));
	for (size_t i = 0; mem != NULL && i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "index", json_integer((json_int_t)i));
		json_object_set_new(o, "line", json_integer(mem[i].line));
		json_object_set_new(o, "protocol",
			mem[i].proto_name.len > 0 ? ctl_jslice(mem[i].proto_name) : json_null());
		json_object_set_new(o, "version", ctl_jslice(mem[i].proto_version));
		json_object_set_new(o, "receivedBy", ctl_jslice(mem[i].received_by));
		json_object_set_new(o, "host", ctl_jslice(mem[i].host));
		json_object_set_new(o, "port",
			mem[i].port >= 0 ? json_integer(mem[i].port) : json_null());
		json_object_set_new(o, "comment",
			mem[i].comment.len > 0 ? ctl_jslice(mem[i].comment) : json_null());
		json_array_append_new(arr, o);
	}
	free(mem);
	return arr;
}

static int
find_peer(const struct nrf_cfg *cfg, const char *name)
{
	for (uint16_t p = 0; p < cfg->n_peers; p++) {
		if (strcmp(cfg->peers[p].name, name) == 0)
			return p;
		for (uint8_t i = 0; i < cfg->peers[p].n_ids; i++) {
			char id[300];

			snprintf(id, sizeof(id), "%s:%u", cfg->peers[p].ids[i].host,
				cfg->peers[p].ids[i].port);
			if (strcmp(id, name) == 0 || strcmp(cfg->peers[p].ids[i].host, name) == 0)
				return p;
		}
	}
	return -1;
}

/*
 * The failure branches: what the client gets when the local NRF and the
 * candidates answer or fail, computed with the data path's rule
 * (nrf_fwd_peer_answer(), nrf_fwd_final(); docs/failures.md) and rendered
 * as the data path renders it. The ledger is booked as lib/rt books it.
 */
struct branch_ctx {
	const struct nrf_cfg *cfg;
	const struct nrf_fwd_table *t;
	const struct nrf_fwd_plan *plan;
	long max_hops;           /* -1: no 3gpp-Sbi-Max-Forward-Hops */
	char via_member[320];    /* appended to relayed answers; "" none */
};

/* A relayed answer (from the local NRF or a peer), as the client gets it. */
static json_t *
relay_json(const struct branch_ctx *b, const char *from, const char *what)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string("relay"));
	json_object_set_new(o, "from", json_string(from));
	json_object_set_new(o, "what", json_string(what));
	json_object_set_new(o, "via", b->via_member[0] != '\0' ? json_string(b->via_member)
							     : json_null());
	return o;
}

/* nrfwd's own answer for @p cond: status, headers, ProblemDetails. */
static json_t *
error_json(const struct branch_ctx *b, enum nrf_cfg_cond cond)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string("error"));
	json_object_update_new(o, ctl_problem_json(b->t, b->plan->error_mode, cond));
	return o;
}

/* What nrf_fwd_final() says, rendered. */
static json_t *
final_json(const struct branch_ctx *b, const struct nrf_fwd_plan *plan,
	const struct nrf_fwd_ledger *lg)
{
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

	if (nrf_fwd_final(plan, lg, &cond) == NRF_FWD_DO_LOCAL)
		return relay_json(b, "local NRF", "its answer that claims absence, kept");
	return error_json(b, cond);
}

/*
 * A representative answer that claims absence (nrf_fwd_claims_absence()):
 * the first status of forwardingTriggers that a peer answer is not
 * rerouted on, else an empty 200 discovery result. @return false when no
 * answer claims absence under this configuration.
 */
static bool
absence_answer(const struct nrf_cfg *cfg, enum nrf_fwd_op op, int *status,
	const char **body, char *what, size_t cap)
{
	for (int c = 100; c <= 599; c++) {
		if (c != 508 && nrf_cfg_status_match(&cfg->fwd.triggers, c) &&
			nrf_fwd_peer_action(cfg, c) == NRF_FWD_RELAY) {
			*status = c;
			*body = "";
			snprintf(what, cap, "%d", c);
			return true;
		}
	}
	if (op == NRF_OP_NF_DISCOVER && cfg->fwd.empty_discovery_result) {
		*status = 200;
		*body = "{\"nfInstances\":[]}";
		snprintf(what, cap, "200 with an empty nfInstances");
		return true;
	}
	return false;
}

/* One candidate answers (those before it were down): the rule on it. */
static json_t *
peer_answer_json(const struct branch_ctx *b, const struct nrf_fwd_ledger *lg,
	const char *peer, int status, const char *body, const char *what)
{
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

	switch (nrf_fwd_peer_answer(b->cfg, b->plan, lg, status, body, strlen(body), &cond)) {
	case NRF_FWD_DO_ERROR:
		return error_json(b, cond);
	case NRF_FWD_DO_NEXT:
		return json_string("rerouted: the next candidate is tried");
	default:
		return relay_json(b, peer, what);
	}
}

/*
 * One branch: the local NRF in state @p local (NRF_FWD_LOCAL_NONE: there
 * is none; PENDING stands for "answers something that does not claim
 * absence"), then the candidates.
 */
static json_t *
branch_json(const struct branch_ctx *b, enum nrf_fwd_local local)
{
	const struct nrf_fwd_plan *plan = b->plan;
	const struct nrf_cfg *cfg = b->cfg;
	struct nrf_fwd_ledger lg = {0};
	struct nrf_fwd_plan via_plan;
	json_t *o = json_object(), *arr;
	const char *abody = "";
	char awhat[64];
	int astatus = 0;
	bool absence;

	switch (local) {
	case NRF_FWD_LOCAL_NONE:
		json_object_set_new(o, "local", json_null());
		break;
	case NRF_FWD_LOCAL_PENDING:
		json_object_set_new(o, "local", json_string("answers"));
		json_object_set_new(o, "answer", relay_json(b, "local NRF",
			plan->verdict == NRF_FWD_FORWARD
				? "its answer (one that does not claim absence)"
				: "its answer, whatever it is"));
		return o;
	case NRF_FWD_LOCAL_ABSENT:
		json_object_set_new(o, "local", json_string("claimsAbsence"));
		break;
	case NRF_FWD_LOCAL_FAILED:
		json_object_set_new(o, "local", json_string("down"));
		break;
	}
	lg.local = (uint8_t)local;
	if (local == NRF_FWD_LOCAL_FAILED)
		nrf_fwd_ledger_fail(plan, &lg, -1);
	if (plan->verdict != NRF_FWD_FORWARD) {
		/* Local only: nothing is forwarded. */
		json_object_set_new(o, "answer", final_json(b, plan, &lg));
		return o;
	}
	absence = absence_answer(cfg, plan->op, &astatus, &abody, awhat, sizeof(awhat));
	arr = json_array();
	for (uint16_t i = 0; i < plan->n_cand; i++) {
		const struct nrf_cfg_peer *p = &cfg->peers[plan->cand[i]];
		const char *data = plan->op == NRF_OP_NF_DISCOVER
			? "{\"nfInstances\":[{\"nfInstanceId\":\"x\"}]}" : "{}";
		json_t *c;

		if (b->max_hops == 0)
			break; /* TS 29.500 §6.10.10: no hop left, nothing is tried */
		c = json_object();
		json_object_set_new(c, "peer", json_string(p->name));
		json_object_set_new(c, "heldDown", json_boolean((plan->cand_down >> i) & 1));
		lg.tried++;
		json_object_set_new(c, "answersData",
			peer_answer_json(b, &lg, p->name, 200, data, "its answer (200 with data)"));
		if (absence) {
			char what[96];

			snprintf(what, sizeof(what), "its answer (%s)", awhat);
			json_object_set_new(c, "claimsAbsence",
				peer_answer_json(b, &lg, p->name, astatus, abody, what));
		}
		/* ... and when it is down, the next one is tried. */
		nrf_fwd_ledger_fail(plan, &lg, i);
		json_array_append_new(arr, c);
	}
	json_object_set_new(o, "candidates", arr);
	if (b->max_hops == 0 && plan->n_cand > 0)
		lg.hop_limit = true;
	json_object_set_new(o, "everyCandidateDown", final_json(b, plan, &lg));
	/* Had every candidate been skipped by loop prevention instead. */
	via_plan = *plan;
	via_plan.n_skip_via = plan->n_skip_via + plan->n_cand + plan->n_skip_down;
	via_plan.n_cand = 0;
	via_plan.cand_down = 0;
	via_plan.cand_covered = 0;
	via_plan.n_skip_down = 0;
	memset(&lg, 0, sizeof(lg));
	lg.local = (uint8_t)local;
	if (local == NRF_FWD_LOCAL_FAILED)
		nrf_fwd_ledger_fail(&via_plan, &lg, -1);
	json_object_set_new(o, "everyCandidateInVia", final_json(b, &via_plan, &lg));
	return o;
}

/* decision.branches for a verdict that goes upstream. */
static json_t *
branches_json(const struct branch_ctx *b)
{
	json_t *arr = json_array();

	if (b->plan->verdict == NRF_FWD_LOCAL_ONLY && !b->cfg->rt.local_nrf.present) {
		/* What the data path renders at once (lib/rt). */
		char body[512];
		int n = nrf_fwd_problem_render(body, sizeof(body), 501, "Not Implemented",
			"UNSUPPORTED_RESOURCE",
			"operation is served by the local NRF only, and there is none");
		json_t *o = json_object(), *e = json_object(), *h = json_object();

		json_object_set_new(o, "local", json_null());
		json_object_set_new(e, "kind", json_string("error"));
		json_object_set_new(e, "status", json_integer(501));
		json_object_set_new(h, "content-type", json_string("application/problem+json"));
		json_object_set_new(e, "headers", h);
		json_object_set_new(e, "problemDetails",
			n > 0 ? json_loadb(body, (size_t)n, 0, NULL) : json_null());
		json_object_set_new(o, "answer", e);
		json_array_append_new(arr, o);
		return arr;
	}
	if (!b->cfg->rt.local_nrf.present) {
		json_array_append_new(arr, branch_json(b, NRF_FWD_LOCAL_NONE));
		return arr;
	}
	json_array_append_new(arr, branch_json(b, NRF_FWD_LOCAL_PENDING));
	if (b->plan->verdict == NRF_FWD_FORWARD)
		json_array_append_new(arr, branch_json(b, NRF_FWD_LOCAL_ABSENT));
	json_array_append_new(arr, branch_json(b, NRF_FWD_LOCAL_FAILED));
	return arr;
}

int
ctl_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		CTL_OPTS_REQUEST,
		{"rotation", required_argument, NULL, 'r'},
		{"down", required_argument, NULL, 'd'},
		{"max-forward-hops", required_argument, NULL, 'H'},
		CTL_OPTS_END,
	};
	const char *method = "GET";
	const char *path = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF";
	const char *down_names[NRF_CFG_MAX_PEERS];
	struct nrf_slice lines[MAX_VIA_LINES];
	uint64_t down[NRF_CFG_MAX_PEERS / 64] = {0};
	struct nrf_via_scratch *scratch = NULL;
	struct nrf_fwd_table *t = NULL;
	struct nrf_via_db *db = NULL;
	struct nrf_via_result res;
	struct nrf_fwd_plan plan;
	struct nrf_cfg *cfg;
	size_t n_lines = 0, n_down = 0, n_members = 0;
	unsigned long rotation = 0;
	json_t *out, *req, *via, *vialines, *dec, *arr, *perr;
	struct match_ctx mctx;
	struct branch_ctx bctx;
	long max_hops = -1;
	enum nrf_fwd_op op;
	int c, rc, status = 1;

	optind = 2;
	while ((c = getopt_long(argc, argv, "m:p:v:r:d:H:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			method = optarg;
			break;
		case 'p':
			path = optarg;
			break;
		case 'v':
			if (ctl_via_add(lines, &n_lines, MAX_VIA_LINES, optarg) != 0)
				return EXIT_USAGE;
			break;
		case 'r':
			rotation = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			if (n_down < NRF_ARRAY_SIZE(down_names))
				down_names[n_down++] = optarg;
			break;
		case 'H':
			if (ctl_max_hops(optarg, &max_hops) != 0)
				return EXIT_USAGE;
			break;
		default:
			return ctl_help_or_usage(c, EXIT_USAGE);
		}
	}
	if (optind != argc - 1) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	cfg = ctl_load(argv[optind]);
	if (cfg == NULL)
		return 1;
	for (size_t i = 0; i < n_down; i++) {
		int p = find_peer(cfg, down_names[i]);

		if (p < 0) {
			fprintf(stderr, "nrfwd-ctl: --down %s: no such peer\n", down_names[i]);
			nrf_cfg_free(cfg);
			return EXIT_USAGE;
		}
		down[p >> 6] |= 1ull << (p & 63);
	}
	db = nrf_fwd_via_db_create(cfg, &rc);
	if (db != NULL)
		scratch = nrf_via_scratch_create(db, &rc);
	if (db != NULL && scratch != NULL)
		t = nrf_fwd_table_create(cfg, &rc);
	if (t == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s\n", nrf_strerror(rc));
		goto out;
	}

	out = json_object();
	req = json_object();
	json_object_set_new(req, "method", json_string(method));
	json_object_set_new(req, "path", json_string(path));
	vialines = json_array();
	for (size_t i = 0; i < n_lines; i++)
		json_array_append_new(vialines, ctl_jslice(lines[i]));
	json_object_set_new(req, "via", vialines);
	json_object_set_new(req, "maxForwardHops",
		max_hops >= 0 ? json_integer(max_hops) : json_null());
	json_object_set_new(out, "self", json_string(cfg->general.self_name));
	json_object_set_new(out, "request", req);

	via = json_object();
	json_object_set_new(via, "members", members_json(lines, n_lines, &perr, &n_members));
	json_object_set_new(via, "memberCount", json_integer((json_int_t)n_members));
	json_object_set_new(via, "parseError", perr);
	mctx.cfg = cfg;
	mctx.db = db;
	mctx.arr = json_array();
	rc = nrf_via_scan_each(db, scratch, lines, n_lines, &res, on_match, &mctx);
	json_object_set_new(via, "matched", mctx.arr);
	json_object_set_new(out, "via", via);

	op = nrf_fwd_classify(nrf_slice_str(method), nrf_slice_str(path), nrf_slice_str(""));
	json_object_set_new(out, "operation", json_string(nrf_fwd_op_name(op)));
	json_object_set_new(out, "forwardable", json_boolean(nrf_fwd_op_enabled(cfg, op)));

	dec = json_object();
	if (rc != 0) {
		/* What the data path answers for a Via it cannot parse. */
		char body[512];
		int n = nrf_fwd_problem_render(body, sizeof(body), 400, "Bad Request",
			"INVALID_MSG_FORMAT", nrf_strerror(rc));
		json_t *e = json_object();

		json_object_set_new(dec, "verdict", json_string("malformed"));
		json_object_set_new(e, "status", json_integer(400));
		json_object_set_new(e, "problemDetails",
			n > 0 ? json_loadb(body, (size_t)n, 0, NULL) : json_null());
		json_object_set_new(dec, "error", e);
	} else {
		nrf_fwd_decide(t, &res, op, (uint32_t)rotation, down, &plan);
		json_object_set_new(dec, "verdict", json_string(nrf_fwd_verdict_name(plan.verdict)));
		if (plan.verdict == NRF_FWD_LOOP_DETECTED || plan.verdict == NRF_FWD_HOP_LIMIT) {
			json_object_set_new(dec, "error",
				ctl_problem_json(t, plan.error_mode, plan.error));
		} else {
			json_object_set_new(dec, "localNrf",
				cfg->rt.local_nrf.present
					? json_sprintf("%s:%u", cfg->rt.local_nrf.address,
						  cfg->rt.local_nrf.port)
					: json_null());
		}
		if (plan.verdict == NRF_FWD_FORWARD) {
			arr = json_array();
			for (uint16_t i = 0; i < plan.n_cand; i++)
				json_array_append_new(arr, peer_json(cfg, plan.cand[i]));
			json_object_set_new(dec, "candidates", arr);
			arr = json_array();
			for (uint16_t i = 0; i < plan.n_skip; i++) {
				json_t *o = peer_json(cfg, plan.skip[i].peer);

				json_object_set_new(o, "reason",
					json_string(nrf_fwd_skip_reason_name(
						(enum nrf_fwd_skip_reason)plan.skip[i].reason)));
				json_array_append_new(arr, o);
			}
			json_object_set_new(dec, "skipped", arr);
			json_object_set_new(dec, "loopPreventionSkips", json_integer(plan.n_skip_via));
		}
		if (plan.verdict == NRF_FWD_FORWARD) {
			/* The local NRF claimed absence (or there is none) and no
			 * candidate answered: every one was down, or none is left. */
			struct nrf_fwd_ledger lg = {0};
			enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

			lg.local = cfg->rt.local_nrf.present ? NRF_FWD_LOCAL_ABSENT
							      : NRF_FWD_LOCAL_NONE;
			for (uint16_t i = 0; i < plan.n_cand && max_hops != 0; i++) {
				lg.tried++;
				nrf_fwd_ledger_fail(&plan, &lg, i);
			}
			lg.hop_limit = max_hops == 0 && plan.n_cand > 0;
			json_object_set_new(dec, "whenNoCandidateAnswers",
				nrf_fwd_final(&plan, &lg, &cond) == NRF_FWD_DO_LOCAL
					? json_string("local answer")
					: ctl_problem_json(t, plan.error_mode, cond));
		}
		if (plan.verdict == NRF_FWD_FORWARD || plan.verdict == NRF_FWD_LOCAL_ONLY) {
			bctx.cfg = cfg;
			bctx.t = t;
			bctx.plan = &plan;
			bctx.max_hops = max_hops;
			bctx.via_member[0] = '\0';
			if (cfg->general.via_on_responses &&
				nrf_via_member_format(bctx.via_member, sizeof(bctx.via_member),
					cfg->general.host, cfg->general.port) < 0)
				bctx.via_member[0] = '\0';
			json_object_set_new(dec, "branches", branches_json(&bctx));
		}
	}
	json_object_set_new(out, "decision", dec);
	if (ctl_print_json(out) == 0)
		status = 0;
	json_decref(out);
out:
	nrf_fwd_table_free(t);
	nrf_via_scratch_free(scratch);
	nrf_via_db_free(db);
	nrf_cfg_free(cfg);
	return status;
}

