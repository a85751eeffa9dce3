/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `nrfwd-ctl trace TOPOLOGY... --at NRF ...`: one request hop by hop
 * (lib/topo, nrf_topo_trace()), printed as text or JSON; `--all` traces a
 * discovery of every NF type of the holdings at every NRF and summarises
 * (docs/nrfwd-ctl.md, "trace").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "nrf_err.h"
#include "nrf_via.h"

#define MAX_VIA_LINES 256
#define MAX_SOURCES 4096

static const char *
NAME(const struct nrf_topo *t, int32_t i)
{
	return i >= 0 ? nrf_topo_at(t, (size_t)i)->name : "(none)";
}

static const char *
base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b != NULL && b[1] != '\0' ? b + 1 : s;
}

static const char *
kind_name(enum nrf_topo_kind k)
{
	switch (k) {
	case NRF_TOPO_ANS_NONE:
		return "none";
	case NRF_TOPO_ANS_LOCAL:
		return "local";
	case NRF_TOPO_ANS_ERROR:
		return "error";
	case NRF_TOPO_ANS_REJECT:
		return "reject";
	}
	return "unknown";
}

/* The Via field lines of the answer hop @p h gives back. */
static size_t
answer_via(const struct nrf_topo *t, const struct nrf_topo_hops *tr, size_t h,
	char lines[][320], size_t max)
{
	uint16_t who[NRF_CFG_MAX_VIA_MEMBERS + 64];
	size_t n = nrf_topo_answer_via(t, tr, h, who, NRF_ARRAY_SIZE(who));

	if (n > NRF_ARRAY_SIZE(who))
		n = NRF_ARRAY_SIZE(who);
	for (size_t i = 0; i < n && i < max; i++) {
		const struct nrf_cfg *c = nrf_topo_at(t, who[i])->cfg;

		if (nrf_via_member_format(lines[i], 320, c->general.host, c->general.port) < 0)
			lines[i][0] = '\0';
	}
	return n < max ? n : max;
}

/* One line: what an answer is and who made it. */
static void
describe(char *buf, size_t cap, const struct nrf_topo *t, const struct nrf_topo_answer *a)
{
	switch (a->kind) {
	case NRF_TOPO_ANS_LOCAL:
		snprintf(buf, cap, "%u%s%s from the local NRF of %s", a->status,
			a->cause[0] != '\0' ? " " : "", a->cause, NAME(t, a->origin));
		break;
	case NRF_TOPO_ANS_ERROR:
		snprintf(buf, cap, "%u %s (%s) by %s", a->status, a->cause,
			nrf_cfg_cond_name(a->cond), NAME(t, a->origin));
		break;
	case NRF_TOPO_ANS_REJECT:
		snprintf(buf, cap, "%u %s by %s", a->status, a->cause, NAME(t, a->origin));
		break;
	default:
		snprintf(buf, cap, "no answer");
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */

static json_t *
answer_json(const struct nrf_topo *t, const struct nrf_topo_hops *tr, size_t h)
{
	const struct nrf_topo_answer *a = &tr->hops[h].answer;
	static char lines[NRF_CFG_MAX_VIA_MEMBERS + 64][320];
	size_t n = answer_via(t, tr, h, lines, NRF_ARRAY_SIZE(lines));
	json_t *o = json_object(), *via = json_array(), *body;

	json_object_set_new(o, "status", json_integer(a->status));
	json_object_set_new(o, "kind", json_string(kind_name(a->kind)));
	json_object_set_new(o, "cause", a->cause != NULL && a->cause[0] != '\0'
			? json_string(a->cause)
			: json_null());
	json_object_set_new(o, "condition", a->kind == NRF_TOPO_ANS_ERROR
			? json_string(nrf_cfg_cond_name(a->cond))
			: json_null());
	json_object_set_new(o, "errorResponsesOf", a->kind == NRF_TOPO_ANS_ERROR
			? json_string(nrf_cfg_mode_name(a->mode))
			: json_null());
	json_object_set_new(o, "answeredBy", a->origin >= 0 ? json_string(NAME(t, a->origin))
							   : json_null());
	json_object_set_new(o, "answeredByHop",
		a->origin_hop >= 0 ? json_integer(a->origin_hop + 1) : json_null());
	for (size_t i = 0; i < n; i++)
		json_array_append_new(via, json_string(lines[i]));
	json_object_set_new(o, "via", via);
	body = a->body != NULL && a->body_len > 0 ? json_loadb(a->body, a->body_len, 0, NULL)
						  : NULL;
	json_object_set_new(o, "body", body != NULL ? body : json_null());
	return o;
}

static json_t *
peer_json(const struct nrf_topo *t, size_t nrf, uint16_t peer)
{
	const struct nrf_cfg *c = nrf_topo_at(t, nrf)->cfg;
	const struct nrf_cfg_peer *p = &c->peers[peer];
	const struct nrf_topo_edge *e = nrf_topo_peer_edge(t, nrf, peer);
	json_t *o = json_object();

	json_object_set_new(o, "peer", json_string(p->name));
	json_object_set_new(o, "configPointer", json_string(p->pointer));
	json_object_set_new(o, "mode", json_string(nrf_cfg_mode_name(p->mode)));
	json_object_set_new(o, "nrfSetId", p->set != NRF_CFG_NO_SET
			? json_string(c->sets[p->set].nrf_set_id)
			: json_null());
	json_object_set_new(o, "priority", json_integer(p->priority));
	json_object_set_new(o, "reaches", e != NULL && e->to >= 0 ? json_string(NAME(t, e->to))
								 : json_null());
	return o;
}

static json_t *
hop_json(const struct nrf_topo *t, const struct nrf_topo_hops *tr, size_t h)
{
	const struct nrf_topo_hop *hp = &tr->hops[h];
	const struct nrf_topo_nrf *n = nrf_topo_at(t, hp->nrf);
	const struct nrf_cfg *cfg = n->cfg;
	json_t *o = json_object(), *via = json_array(), *scan = json_object(), *peers;
	json_t *arr, *local;

	json_object_set_new(o, "hop", json_integer((json_int_t)h + 1));
	json_object_set_new(o, "nrf", json_string(n->name));
	json_object_set_new(o, "source", json_string(n->source));
	json_object_set_new(
		o, "from", hp->parent >= 0 ? json_integer(hp->parent + 1) : json_null());
	json_object_set_new(o, "depth", json_integer(hp->depth));
	for (size_t i = 0; i < hp->n_via; i++)
		json_array_append_new(via, ctl_jslice(hp->via[i]));
	json_object_set_new(o, "via", via);
	json_object_set_new(o, "maxForwardHops",
		hp->max_forward_hops >= 0 ? json_integer(hp->max_forward_hops) : json_null());
	json_object_set_new(o, "down", json_boolean(hp->answer.kind == NRF_TOPO_ANS_NONE));
	json_object_set_new(scan, "error",
		hp->scan_rc != 0 && hp->answer.kind != NRF_TOPO_ANS_NONE
			? json_string(nrf_strerror(hp->scan_rc))
			: json_null());
	json_object_set_new(scan, "members", json_integer(hp->scan.members));
	json_object_set_new(scan, "self", json_boolean(hp->scan.self));
	peers = json_array();
	for (uint16_t p = 0; hp->scan_rc == 0 && p < cfg->n_peers; p++)
		if (nrf_via_result_has_peer(&hp->scan, p))
			json_array_append_new(peers, json_string(cfg->peers[p].name));
	json_object_set_new(scan, "peers", peers);
	json_object_set_new(o, "viaScan", scan);
	if (hp->scan_rc != 0) {
		json_object_set_new(o, "answer", answer_json(t, tr, h));
		return o;
	}
	json_object_set_new(o, "operation", json_string(nrf_fwd_op_name(hp->op)));
	json_object_set_new(o, "rotation", json_integer(hp->rotation));
	json_object_set_new(o, "verdict", json_string(nrf_fwd_verdict_name(hp->plan.verdict)));
	if (cfg->rt.local_nrf.present) {
		local = json_object();
		json_object_set_new(local, "address",
			json_sprintf("%s:%u", cfg->rt.local_nrf.address, cfg->rt.local_nrf.port));
		json_object_set_new(local, "outcome", json_string(nrf_topo_local_name(hp->local)));
		json_object_set_new(local, "status",
			hp->local == NRF_TOPO_LOCAL_ANSWERS || hp->local == NRF_TOPO_LOCAL_ABSENT
				? json_integer(hp->local_status)
				: json_null());
	} else {
		local = json_null();
	}
	json_object_set_new(o, "localNrf", local);
	if (hp->plan.verdict == NRF_FWD_FORWARD) {
		arr = json_array();
		for (uint16_t i = 0; i < hp->plan.n_cand; i++) {
			json_t *c = peer_json(t, hp->nrf, hp->plan.cand[i]);

			json_object_set_new(c, "heldDown",
				json_boolean((hp->plan.cand_down >> i) & 1));
			json_object_set_new(c, "covered",
				json_boolean((hp->plan.cand_covered >> i) & 1));
			json_array_append_new(arr, c);
		}
		json_object_set_new(o, "candidates", arr);
		arr = json_array();
		for (uint16_t i = 0; i < hp->plan.n_skip; i++) {
			json_t *c = peer_json(t, hp->nrf, hp->plan.skip[i].peer);

			json_object_set_new(c, "reason",
				json_string(nrf_fwd_skip_reason_name(
					(enum nrf_fwd_skip_reason)hp->plan.skip[i].reason)));
			json_array_append_new(arr, c);
		}
		json_object_set_new(o, "skipped", arr);
		arr = json_array();
		for (uint16_t i = 0; i < hp->n_tries; i++) {
			const struct nrf_topo_try *tr_ = &hp->tries[i];
			json_t *c = peer_json(t, hp->nrf, tr_->peer);

			json_object_set_new(c, "heldDown", json_boolean(tr_->held_down));
			json_object_set_new(c, "hop",
				tr_->hop >= 0 ? json_integer(tr_->hop + 1) : json_null());
			json_object_set_new(c, "end", json_string(nrf_topo_try_end_name(tr_->end)));
			json_object_set_new(c, "status",
				tr_->status != 0 ? json_integer(tr_->status) : json_null());
			json_array_append_new(arr, c);
		}
		json_object_set_new(o, "tries", arr);
		json_object_set_new(o, "stoppedByMaxForwardHops", json_boolean(hp->lg.hop_limit));
	}
	json_object_set_new(o, "relays", hp->relayed_hop >= 0 ? json_integer(hp->relayed_hop + 1)
							      : json_null());
	json_object_set_new(o, "answer", answer_json(t, tr, h));
	return o;
}

static json_t *
trace_json(const struct nrf_topo *t, const struct nrf_topo_hops *tr,
	const struct nrf_topo_request *req)
{
	json_t *o = json_object(), *r = json_object(), *via = json_array(), *hops = json_array();

	json_object_set_new(r, "at", json_string(NAME(t, (int32_t)req->at)));
	json_object_set_new(r, "method", json_string(req->method));
	json_object_set_new(r, "path", json_string(req->path));
	for (size_t i = 0; i < req->n_via; i++)
		json_array_append_new(via, ctl_jslice(req->via[i]));
	json_object_set_new(r, "via", via);
	json_object_set_new(r, "maxForwardHops", req->max_forward_hops >= 0
			? json_integer(req->max_forward_hops)
			: json_null());
	json_object_set_new(o, "request", r);
	for (size_t h = 0; h < tr->n_hops; h++)
		json_array_append_new(hops, hop_json(t, tr, h));
	json_object_set_new(o, "hops", hops);
	json_object_set_new(o, "answer", answer_json(t, tr, 0));
	return o;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

static void
ind(int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("    ", stdout);
}

static void
print_peer(const struct nrf_topo *t, size_t nrf, uint16_t peer)
{
	const struct nrf_cfg *c = nrf_topo_at(t, nrf)->cfg;
	const struct nrf_cfg_peer *p = &c->peers[peer];
	const struct nrf_topo_edge *e = nrf_topo_peer_edge(t, nrf, peer);

	printf("%s (%s p%u", p->name,
		p->mode == NRF_MODE_FORWARDING ? "forwarding" : c->sets[p->set].nrf_set_id,
		p->priority);
	if (e->to < 0)
		printf(", reaches no NRF of the topology)");
	else if (strcmp(NAME(t, e->to), p->name) != 0)
		printf(", reaches %s)", NAME(t, e->to));
	else
		printf(")");
}

static void
print_hop(const struct nrf_topo *t, const struct nrf_topo_hops *tr, size_t h)
{
	const struct nrf_topo_hop *hp = &tr->hops[h];
	const struct nrf_topo_nrf *n = nrf_topo_at(t, hp->nrf);
	const struct nrf_cfg *cfg = n->cfg;
	int d = hp->depth;
	char what[600];

	ind(d);
	printf("hop %zu: %s (%s)\n", h + 1, n->name, base(n->source));
	ind(d);
	printf("  via: ");
	for (size_t i = 0; i < hp->n_via; i++)
		printf("%s%.*s", i > 0 ? ", " : "", (int)hp->via[i].len, hp->via[i].p);
	printf(hp->n_via == 0 ? "(none)\n" : "\n");
	if (hp->answer.kind == NRF_TOPO_ANS_NONE) {
		ind(d);
		printf("  down: the connection is refused\n");
	} else if (hp->scan_rc != 0) {
		ind(d);
		printf("  the Via does not scan (%s)\n", nrf_strerror(hp->scan_rc));
	} else {
		ind(d);
		printf("  %s, rotation %u: %s", nrf_fwd_op_name(hp->op), hp->rotation,
			nrf_fwd_verdict_name(hp->plan.verdict));
		if (hp->plan.verdict == NRF_FWD_LOOP_DETECTED)
			printf(" (its own identity is in Via)");
		else if (hp->plan.verdict == NRF_FWD_HOP_LIMIT)
			printf(" (%u Via members, maxViaMembers %u)", hp->scan.members,
				cfg->fwd.max_via_members);
		putchar('\n');
		if (hp->plan.verdict == NRF_FWD_FORWARD || hp->plan.verdict == NRF_FWD_LOCAL_ONLY) {
			ind(d);
			if (!cfg->rt.local_nrf.present)
				printf("  local NRF: none (a pure forwarder)\n");
			else if (hp->local == NRF_TOPO_LOCAL_FAILED)
				printf("  local NRF %s:%u: down (a failed try)\n",
					cfg->rt.local_nrf.address, cfg->rt.local_nrf.port);
			else
				printf("  local NRF %s:%u: %u%s, %s\n", cfg->rt.local_nrf.address,
					cfg->rt.local_nrf.port, hp->local_status,
					hp->local == NRF_TOPO_LOCAL_ABSENT &&
							hp->local_status == 200
						? " with an empty nfInstances"
						: "",
					hp->local == NRF_TOPO_LOCAL_ABSENT
						? "claims absence: kept, the request goes on"
						: "its answer is relayed");
		}
	}
	if (hp->scan_rc == 0 && hp->plan.verdict == NRF_FWD_FORWARD &&
		hp->local != NRF_TOPO_LOCAL_ANSWERS) {
		ind(d);
		printf("  candidates:%s\n", hp->plan.n_cand == 0 ? " none" : "");
		for (uint16_t i = 0; i < hp->plan.n_cand; i++) {
			ind(d);
			printf("    %u. ", i + 1);
			print_peer(t, hp->nrf, hp->plan.cand[i]);
			if ((hp->plan.cand_down >> i) & 1)
				printf(" held down: a last resort");
			putchar('\n');
		}
		for (uint16_t i = 0; i < hp->plan.n_skip; i++) {
			ind(d);
			printf("    skipped: ");
			print_peer(t, hp->nrf, hp->plan.skip[i].peer);
			printf(": %s\n",
				nrf_fwd_skip_reason_name(
					(enum nrf_fwd_skip_reason)hp->plan.skip[i].reason));
		}
		for (uint16_t i = 0; i < hp->n_tries; i++) {
			const struct nrf_topo_try *ty = &hp->tries[i];

			ind(d);
			printf("  try %u: %s", i + 1, cfg->peers[ty->peer].name);
			if (ty->hop < 0) {
				printf(": failed (%s)\n", ty->to < 0
								  ? "nothing of the topology there"
								  : "its NRF is down");
				continue;
			}
			printf(" -> hop %d\n", ty->hop + 1);
			print_hop(t, tr, (size_t)ty->hop);
			ind(d);
			printf("  try %u: %s %u", i + 1, nrf_topo_try_end_name(ty->end),
				ty->status);
			if (ty->end == NRF_TOPO_TRY_REROUTED)
				printf(" (a reroute status: the next candidate)");
			else if (ty->end == NRF_TOPO_TRY_REFUSED)
				printf(" (claims absence, but the local NRF failed)");
			putchar('\n');
		}
		if (hp->lg.hop_limit) {
			ind(d);
			printf("  3gpp-Sbi-Max-Forward-Hops is 0: nothing more is forwarded\n");
		}
	}
	describe(what, sizeof(what), t, &hp->answer);
	ind(d);
	if (hp->relayed_hop >= 0)
		printf("  answers: %s (relays hop %d)\n", what, hp->relayed_hop + 1);
	else
		printf("  answers: %s\n", what);
}

static void
print_text(const struct nrf_topo *t, const struct nrf_topo_hops *tr,
	const struct nrf_topo_request *req)
{
	static char lines[NRF_CFG_MAX_VIA_MEMBERS + 64][320];
	size_t n = answer_via(t, tr, 0, lines, NRF_ARRAY_SIZE(lines));
	char what[600];

	printf("%s %s at %s\n", req->method, req->path, NAME(t, (int32_t)req->at));
	print_hop(t, tr, 0);
	describe(what, sizeof(what), t, &tr->hops[0].answer);
	printf("answer: %s", what);
	if (tr->hops[0].answer.origin_hop >= 0)
		printf(" (hop %d)", tr->hops[0].answer.origin_hop + 1);
	printf("; via:");
	for (size_t i = 0; i < n; i++)
		printf("%s %s", i > 0 ? "," : "", lines[i]);
	printf(n == 0 ? " (none)\n" : "\n");
}

/* ------------------------------------------------------------------------ */
/* --all                                                                     */

static void
reset_state(struct nrf_topo *t, uint32_t rotation)
{
	for (size_t i = 0; i < nrf_topo_count(t); i++) {
		nrf_topo_set_rotation(t, i, rotation);
		for (uint16_t p = 0; p < nrf_topo_at(t, i)->cfg->n_peers; p++)
			nrf_topo_set_held_down(t, i, p, false);
	}
}

struct tally {
	char key[160];
	size_t n;
};

static int
trace_all(struct nrf_topo *t, struct nrf_topo_request *req, uint32_t rotation, bool json)
{
	const char **types = NULL;
	size_t n_types = ctl_holdings_types(t, &types);
	const char *fallback[1] = {"AMF"};
	struct tally *tally = NULL;
	size_t n_tally = 0, total = 0;
	json_t *out = json_object(), *arr = json_array();
	int status = 0;

	if (n_types == 0) {
		types = fallback; /* every local NRF holds nothing: one type says all */
		n_types = 1;
	}
	if (!json)
		printf("%-40s %-10s %s\n", "at", "NF type", "answer");
	for (size_t i = 0; i < nrf_topo_count(t) && status == 0; i++) {
		for (size_t k = 0; k < n_types; k++) {
			struct nrf_topo_hops tr;
			char path[300], what[600], key[160];
			const struct nrf_topo_answer *a;
			size_t j;
			int rc;

			snprintf(path, sizeof(path), "/nnrf-disc/v1/nf-instances?target-nf-type=%s",
				types[k]);
			req->at = i;
			req->path = path;
			reset_state(t, rotation);
			rc = nrf_topo_trace(t, req, &tr);
			if (rc != 0) {
				fprintf(stderr, "nrfwd-ctl: trace at %s: %s\n", NAME(t, (int32_t)i),
					nrf_strerror(rc));
				nrf_topo_hops_fini(&tr);
				status = 1;
				break;
			}
			a = &tr.hops[0].answer;
			describe(what, sizeof(what), t, a);
			if (a->kind == NRF_TOPO_ANS_LOCAL)
				snprintf(key, sizeof(key), "%u from a local NRF", a->status);
			else
				snprintf(key, sizeof(key), "%u %s", a->status, a->cause);
			for (j = 0; j < n_tally && strcmp(tally[j].key, key) != 0; j++)
				;
			if (j == n_tally) {
				struct tally *nv = realloc(tally, (n_tally + 1) * sizeof(*nv));

				if (nv != NULL) {
					tally = nv;
					snprintf(tally[n_tally].key, sizeof(tally[n_tally].key),
						"%s", key);
					tally[n_tally++].n = 0;
				}
			}
			if (j < n_tally)
				tally[j].n++;
			total++;
			if (json) {
				json_t *o = json_object();

				json_object_set_new(o, "at", json_string(NAME(t, (int32_t)i)));
				json_object_set_new(o, "nfType", json_string(types[k]));
				json_object_set_new(o, "hops", json_integer((json_int_t)tr.n_hops));
				json_object_set_new(o, "answer", answer_json(t, &tr, 0));
				json_array_append_new(arr, o);
			} else {
				printf("%-40s %-10s %s (%zu hop%s)\n", NAME(t, (int32_t)i),
					types[k], what, tr.n_hops, tr.n_hops == 1 ? "" : "s");
			}
			nrf_topo_hops_fini(&tr);
		}
	}
	if (json) {
		json_t *sum = json_object();

		for (size_t j = 0; j < n_tally; j++)
			json_object_set_new(
				sum, tally[j].key, json_integer((json_int_t)tally[j].n));
		json_object_set_new(out, "traces", arr);
		json_object_set_new(out, "summary", sum);
		ctl_print_json(out);
	} else {
		printf("%zu trace%s:", total, total == 1 ? "" : "s");
		for (size_t j = 0; j < n_tally; j++)
			printf("%s %zu x %s", j > 0 ? "," : "", tally[j].n, tally[j].key);
		putchar('\n');
		json_decref(arr);
	}
	json_decref(out);
	free(tally);
	if (types != fallback)
		free(types);
	return status;
}

/* ------------------------------------------------------------------------ */

int
ctl_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		CTL_OPT_API,
		{"at", required_argument, NULL, 't'},
		CTL_OPTS_REQUEST,
		{"holdings", required_argument, NULL, 'H'},
		{"down", required_argument, NULL, 'd'},
		{"max-forward-hops", required_argument, NULL, 'M'},
		{"rotation", required_argument, NULL, 'r'},
		{"state", required_argument, NULL, 's'},
		{"all", no_argument, NULL, 'A'},
		CTL_OPTS_OUTPUT,
		CTL_OPTS_END,
	};
	const char *apis[MAX_SOURCES], *downs[MAX_SOURCES];
	const char *at = NULL, *holdings = NULL, *state = NULL;
	struct ctl_output fmt = {0};
	struct nrf_slice lines[MAX_VIA_LINES];
	struct nrf_topo_request req = {0};
	struct ctl_topo_src src = {0};
	struct nrf_topo_hops tr = {0};
	struct nrf_topo *t;
	size_t n_down = 0;
	unsigned long rotation = 0;
	bool all = false;
	int c, rc, status = 0, i;

	req.method = "GET";
	req.path = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF";
	req.max_forward_hops = -1;
	req.via = lines;
	optind = 2;
	while ((c = getopt_long(argc, argv, "a:t:m:p:v:H:d:M:r:s:AjD:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (src.n_apis < MAX_SOURCES)
				apis[src.n_apis++] = optarg;
			break;
		case 't':
			at = optarg;
			break;
		case 'm':
			req.method = optarg;
			break;
		case 'p':
			req.path = optarg;
			break;
		case 'v':
			if (ctl_via_add(lines, &req.n_via, MAX_VIA_LINES, optarg) != 0)
				return EXIT_TOPO_USAGE;
			break;
		case 'H':
			holdings = optarg;
			break;
		case 'd':
			if (n_down < MAX_SOURCES)
				downs[n_down++] = optarg;
			break;
		case 'M': {
			long hops;

			if (ctl_max_hops(optarg, &hops) != 0)
				return EXIT_TOPO_USAGE;
			req.max_forward_hops = hops;
			break;
		}
		case 'r':
			rotation = strtoul(optarg, NULL, 10);
			break;
		case 's':
			state = optarg;
			break;
		case 'A':
			all = true;
			break;
		default:
			if (ctl_output_opt(&fmt, c, optarg))
				break;
			return ctl_help_or_usage(c, EXIT_TOPO_USAGE);
		}
	}
	if ((at == NULL) == !all) {
		fprintf(stderr, "nrfwd-ctl: trace: give --at NRF, or --all\n");
		return EXIT_TOPO_USAGE;
	}
	if (all && (state != NULL || fmt.dot != NULL || fmt.svg != NULL)) {
		fprintf(stderr, "nrfwd-ctl: trace --all: no --state, --dot or --svg\n");
		return EXIT_TOPO_USAGE;
	}
	src.paths = (const char **)argv + optind;
	src.n_paths = (size_t)(argc - optind);
	src.apis = apis;
	t = ctl_topo_load(&src, false, &rc);
	if (t == NULL)
		return rc == 0 ? 1 : rc;
	reset_state(t, (uint32_t)rotation);
	if (holdings != NULL && ctl_holdings_load(t, holdings) != 0) {
		status = EXIT_TOPO_USAGE;
		goto out;
	}
	for (size_t k = 0; k < n_down; k++) {
		i = ctl_topo_find(t, downs[k], "--down");
		if (i < 0) {
			status = EXIT_TOPO_USAGE;
			goto out;
		}
		nrf_topo_set_down(t, (size_t)i, true);
	}
	if (all) {
		status = trace_all(t, &req, (uint32_t)rotation, fmt.json);
		goto out;
	}
	i = ctl_topo_find(t, at, "--at");
	if (i < 0 || (state != NULL && ctl_state_load(t, state) != 0)) {
		status = EXIT_TOPO_USAGE;
		goto out;
	}
	req.at = (size_t)i;
	rc = nrf_topo_trace(t, &req, &tr);
	if (rc == NRF_ETOOBIG) {
		fprintf(stderr, "nrfwd-ctl: trace: the request fans out to more than %d hops (each "
				"hop tries its next candidate after a rerouted 5xx): the NRFs would "
				"see a storm of requests; lint the topology\n",
			NRF_TOPO_MAX_HOPS);
		status = 1;
		goto out;
	}
	if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: trace: %s\n", nrf_strerror(rc));
		status = 1;
		goto out;
	}
	if (fmt.dot == NULL || strcmp(fmt.dot, "-") != 0) {
		if (fmt.json) {
			json_t *o = trace_json(t, &tr, &req);

			ctl_print_json(o);
			json_decref(o);
		} else {
			print_text(t, &tr, &req);
		}
	}
	fflush(stdout);
	if (state != NULL && ctl_state_save(t, state) != 0)
		status = 1;
	if (fmt.dot != NULL || fmt.svg != NULL) {
		/* The picture shows what lint finds too (it leaves the state alone). */
		struct nrf_topo_findings l;
		char title[1400], what[600];

		describe(what, sizeof(what), t, &tr.hops[0].answer);
		snprintf(title, sizeof(title), "nrfwd-ctl trace: %s %s at %s\nanswer: %s",
			req.method, req.path, NAME(t, (int32_t)req.at), what);
		rc = nrf_topo_lint(t, NULL, &l);
		if (ctl_picture(fmt.dot, fmt.svg, t, rc == 0 ? &l : NULL, &tr, title) != 0)
			status = EXIT_TOPO_USAGE;
		nrf_topo_findings_fini(&l);
	}
out:
	nrf_topo_hops_fini(&tr);
	nrf_topo_free(t);
	return status;
}
