/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `nrfwd-ctl lint TOPOLOGY...`: lib/topo's findings as text (default) or
 * JSON (--json, for CI), with an optional picture; exit status 0 when
 * nothing above info was found, 1 for warnings, 2 for errors
 * (docs/nrfwd-ctl.md, "lint").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "nrf_err.h"

#define MAX_SOURCES 4096

static void
print_codes(void)
{
	size_t n;
	const struct nrf_topo_code *c = nrf_topo_codes(&n);

	for (size_t i = 0; i < n; i++)
		printf("%-24s %-8s %s\n", c[i].code, nrf_topo_severity_name(c[i].severity),
			c[i].summary);
}

static const char *
nrf_name(const struct nrf_topo *t, int32_t i)
{
	return i >= 0 ? nrf_topo_at(t, (size_t)i)->name : NULL;
}

static void
print_text(const struct nrf_topo *t, const struct nrf_topo_findings *l)
{
	size_t n_edges;

	nrf_topo_edges(t, &n_edges);
	printf("%zu NRF%s, %zu peer entr%s\n", nrf_topo_count(t),
		nrf_topo_count(t) == 1 ? "" : "s", n_edges, n_edges == 1 ? "y" : "ies");
	for (size_t i = 0; i < l->n; i++) {
		const struct nrf_topo_finding *f = &l->v[i];

		printf("%-7s %s: %s\n", nrf_topo_severity_name(f->severity), f->code, f->message);
		for (size_t k = 0; k < f->n_refs; k++) {
			const struct nrf_topo_ref *r = &f->refs[k];

			printf("        %s: %s", r->source,
				r->pointer[0] != '\0' ? r->pointer : "/");
			if (r->note[0] != '\0')
				printf("  (%s)", r->note);
			putchar('\n');
		}
	}
	printf("%zu error%s, %zu warning%s, %zu info\n", l->count[NRF_TOPO_ERROR],
		l->count[NRF_TOPO_ERROR] == 1 ? "" : "s", l->count[NRF_TOPO_WARNING],
		l->count[NRF_TOPO_WARNING] == 1 ? "" : "s", l->count[NRF_TOPO_INFO]);
}

static json_t *
lint_json(const struct nrf_topo *t, const struct nrf_topo_findings *l, int status)
{
	json_t *out = json_object(), *nrfs = json_array(), *fs = json_array(), *sum;

	for (size_t i = 0; i < nrf_topo_count(t); i++) {
		const struct nrf_topo_nrf *n = nrf_topo_at(t, i);
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(n->name));
		json_object_set_new(o, "source", json_string(n->source));
		json_object_set_new(o, "nrfSetId", json_string(n->cfg->general.nrf_set_id));
		json_array_append_new(nrfs, o);
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct nrf_topo_finding *f = &l->v[i];
		json_t *o = json_object(), *refs = json_array(), *path = json_array();
		json_t *ents = json_array();

		json_object_set_new(o, "code", json_string(f->code));
		json_object_set_new(o, "severity",
			json_string(nrf_topo_severity_name(f->severity)));
		json_object_set_new(o, "message", json_string(f->message));
		for (size_t k = 0; k < f->n_refs; k++) {
			const struct nrf_topo_ref *r = &f->refs[k];
			json_t *ro = json_object();

			json_object_set_new(ro, "file", json_string(r->source));
			json_object_set_new(ro, "pointer", json_string(r->pointer));
			json_object_set_new(ro, "nrf",
				r->nrf >= 0 ? json_string(nrf_name(t, r->nrf)) : json_null());
			json_object_set_new(ro, "note", json_string(r->note));
			json_array_append_new(refs, ro);
		}
		for (size_t k = 0; k < f->n_path; k++)
			json_array_append_new(path, json_string(nrf_name(t, f->path[k])));
		for (size_t k = 0; k < f->n_entries; k++) {
			const struct nrf_topo_nrf *n = nrf_topo_at(t, f->entries[k].from);
			const struct nrf_cfg_peer *p = &n->cfg->peers[f->entries[k].peer];
			const struct nrf_topo_edge *e =
				nrf_topo_peer_edge(t, f->entries[k].from, f->entries[k].peer);
			json_t *eo = json_object();

			json_object_set_new(eo, "nrf", json_string(n->name));
			json_object_set_new(eo, "pointer", json_string(p->pointer));
			json_object_set_new(eo, "peer", json_string(p->name));
			json_object_set_new(eo, "reaches",
				e->to >= 0 ? json_string(nrf_name(t, e->to)) : json_null());
			json_array_append_new(ents, eo);
		}
		json_object_set_new(o, "refs", refs);
		json_object_set_new(o, "path", path);
		json_object_set_new(o, "entries", ents);
		json_array_append_new(fs, o);
	}
	sum = json_object();
	json_object_set_new(sum, "errors", json_integer((json_int_t)l->count[NRF_TOPO_ERROR]));
	json_object_set_new(sum, "warnings",
		json_integer((json_int_t)l->count[NRF_TOPO_WARNING]));
	json_object_set_new(sum, "info", json_integer((json_int_t)l->count[NRF_TOPO_INFO]));
	json_object_set_new(sum, "longestPath", json_integer((json_int_t)l->longest_path));
	json_object_set_new(sum, "pathSearchComplete", json_boolean(l->path_search_complete));
	json_object_set_new(sum, "pathVisits", json_integer((json_int_t)l->path_visits));
	json_object_set_new(out, "nrfs", nrfs);
	json_object_set_new(out, "findings", fs);
	json_object_set_new(out, "summary", sum);
	json_object_set_new(out, "exitStatus", json_integer(status));
	return out;
}

int
ctl_lint(int argc, char **argv)
{
	static const struct option opts[] = {
		CTL_OPT_API,
		CTL_OPTS_OUTPUT,
		{"budget", required_argument, NULL, 'b'},
		{"codes", no_argument, NULL, 'c'},
		CTL_OPTS_END,
	};
	const char *apis[MAX_SOURCES];
	struct ctl_output fmt = {0};
	struct ctl_topo_src src = {0};
	struct nrf_topo_lint_opts lo = {0};
	struct nrf_topo_findings l;
	struct nrf_topo *t;
	int c, rc, status;

	optind = 2;
	while ((c = getopt_long(argc, argv, "a:jD:S:b:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (src.n_apis == MAX_SOURCES)
				return EXIT_TOPO_USAGE;
			apis[src.n_apis++] = optarg;
			break;
		case 'b':
			lo.path_budget = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			print_codes();
			return 0;
		default:
			if (ctl_output_opt(&fmt, c, optarg))
				break;
			return ctl_help_or_usage(c, EXIT_TOPO_USAGE);
		}
	}
	src.paths = (const char **)argv + optind;
	src.n_paths = (size_t)(argc - optind);
	src.apis = apis;
	t = ctl_topo_load(&src, fmt.json, &rc);
	if (t == NULL)
		return rc;
	rc = nrf_topo_lint(t, &lo, &l);
	if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: lint: %s\n", nrf_strerror(rc));
		nrf_topo_findings_fini(&l);
		nrf_topo_free(t);
		return EXIT_TOPO_USAGE;
	}
	status = l.count[NRF_TOPO_ERROR] > 0 ? 2 : l.count[NRF_TOPO_WARNING] > 0 ? 1 : 0;
	if (fmt.dot == NULL || strcmp(fmt.dot, "-") != 0) {
		if (fmt.json) {
			json_t *o = lint_json(t, &l, status);

			ctl_print_json(o);
			json_decref(o);
		} else {
			print_text(t, &l);
		}
	}
	fflush(stdout);
	if (ctl_picture(fmt.dot, fmt.svg, t, &l, NULL, "nrfwd-ctl lint") != 0)
		status = EXIT_TOPO_USAGE;
	nrf_topo_findings_fini(&l);
	nrf_topo_free(t);
	return status;
}
