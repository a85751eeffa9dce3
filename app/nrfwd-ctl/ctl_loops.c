/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loops observed by running nrfwd (docs/nrfwd-ctl.md, "loops";
 * docs/behaviour.md, "How to find a loop in production"):
 *   loops [--api URL]... [--json] [--dot FILE] [--svg FILE]
 *   fleet loops --etcd URLS --config-key KEY... [--json] [--dot FILE] [--svg FILE]
 *
 * Each nrfwd's GET /loops (or the summary it publishes with its etcd
 * status) lists paths: the Via a looping request carried, what happened
 * (detected: 508; prevented: a peer skipped; hop limit) and how often. The
 * paths of every instance are turned into cycles (the NRFs from the first
 * passage of the repeated one back to it), each named once whatever
 * instance saw it and how, in a canonical rotation. The configured
 * topology (the running documents; lib/topo as lint and trace build it)
 * says which peer entries make each step of a cycle, and lint's findings
 * whether it was predicted.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "ctl.h"
#include "ctl_http.h"
#include "nrf_cfgsrc.h"
#include "nrf_err.h"
#include "nrf_etcd.h"

#define MAX_APIS 256
#define MAX_NODES 64

/* One instance's loops document (GET /loops) and what it is called. */
struct lsrc {
	char *label;
	json_t *doc;
};

struct node {
	int32_t nrf;       /* index in the topology, -1: not in it */
	const char *name;  /* the NRF's name, else the member as seen */
};

struct cycle {
	struct node n[MAX_NODES];
	size_t len;
	char text[4096];           /* "A -> B -> A" */
	uint64_t count[3];         /* by kind: detected, prevented, hop-limit */
	double rate;               /* per second: the largest of its observations */
	char first[40], last[40];  /* RFC 3339 (they compare as text) */
	json_t *seen;              /* observations */
	json_t *entered;           /* strings: "X (from Y)" */
};

struct opts {
	const char *apis[MAX_APIS];
	size_t n_apis;
	const char *keys[MAX_APIS];
	size_t n_keys;
	struct nrf_etcd_params ep;
	bool json;
	const char *dot, *svg;
};

static const char *const kinds[3] = {"detected", "prevented", "hop-limit"};

static int
kind_of(const char *k)
{
	for (int i = 0; i < 3; i++)
		if (k != NULL && strcmp(k, kinds[i]) == 0)
			return i;
	return -1;
}

static const char *
jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* The NRF @p member (host:port) names, or -1. */
static int32_t
nrf_of(const struct nrf_topo *t, const char *member)
{
	int i;

	if (t == NULL || member[0] == '\0')
		return -1;
	i = nrf_topo_find(t, member);
	return i >= 0 ? i : -1;
}

static struct node
node_of(const struct nrf_topo *t, const char *member)
{
	struct node n = {nrf_of(t, member), member};

	if (n.nrf >= 0)
		n.name = nrf_topo_at(t, (size_t)n.nrf)->name;
	return n;
}

static bool
same(const struct node *a, const struct node *b)
{
	return a->nrf >= 0 || b->nrf >= 0 ? a->nrf == b->nrf : strcasecmp(a->name, b->name) == 0;
}

/* The last passage through @p x in @p m[0..@p h): its index, -1 when none. */
static long
last_of(const struct node *m, size_t h, const struct node *x)
{
	for (size_t i = h; i-- > 0;)
		if (same(&m[i], x))
			return (long)i;
	return -1;
}

/*
 * The cycle of one observed path into @p c (nodes in canonical rotation:
 * starting at the smallest name), the member where the request entered it
 * into @p at and the one before into @p from (NULL: it came from a client).
 * @return false when the path holds no cycle (a hop limit on a long path).
 */
static bool
cycle_of(const struct nrf_topo *t, const json_t *p, const char *self, struct cycle *c,
	struct node *at, const char **from)
{
	struct node m[MAX_NODES + 2], me = node_of(t, self), seq[MAX_NODES + 2];
	const json_t *path = json_object_get(p, "path");
	int kind = kind_of(jstr(p, "kind"));
	size_t h = 0, n = 0, i, best = 0;
	long k = -1;

	for (i = 0; i < json_array_size(path) && h < MAX_NODES; i++)
		m[h++] = node_of(t, json_string_value(json_array_get(path, i)) != NULL
			? json_string_value(json_array_get(path, i)) : "?");
	if (kind == 0 || kind == 1) {
		/* detected: back at itself, from its last passage; prevented: it
		 * would have gone back to the skipped peer, then on to itself */
		struct node back = kind == 0 ? me : node_of(t, jstr(p, "skipped"));

		k = last_of(m, h, &back);
		if (k < 0)
			return false;
		for (i = (size_t)k; i < h; i++)
			seq[n++] = m[i];
		if (kind == 1)
			seq[n++] = me;
	} else {
		/* a hop limit: the last NRF that appears twice, if any */
		m[h++] = me;
		for (size_t j = h; j-- > 1 && k < 0;)
			for (i = j; i-- > 0;)
				if (same(&m[i], &m[j])) {
					k = (long)i;
					for (size_t q = i; q < j; q++)
						seq[n++] = m[q];
					break;
				}
		if (k < 0)
			return false;
	}
	if (n == 0 || n > MAX_NODES)
		return false;
	*at = m[k];
	*from = k > 0 ? m[k - 1].name : NULL;
	for (i = 1; i < n; i++)
		if (strcmp(seq[i].name, seq[best].name) < 0)
			best = i;
	memset(c, 0, sizeof(*c));
	c->len = n;
	for (i = 0; i < n; i++)
		c->n[i] = seq[(best + i) % n];
	{
		size_t off = 0;

		for (i = 0; i <= n && off < sizeof(c->text); i++)
			off += (size_t)snprintf(c->text + off, sizeof(c->text) - off, "%s%s",
				i > 0 ? " -> " : "", c->n[i % n].name);
	}
	return true;
}

/* Lint findings about cycles with the same NRFs in the same order. */
static json_t *
predicted_by(const struct nrf_topo_findings *l, const struct cycle *c)
{
	json_t *codes = json_array();

	for (size_t i = 0; l != NULL && i < l->n; i++) {
		const struct nrf_topo_finding *f = &l->v[i];
		size_t n = f->n_path > 0 ? f->n_path - 1 : 0;

		if (strncmp(f->code, "cycle-", 6) != 0 || n != c->len)
			continue;
		for (size_t r = 0; r < n; r++) {
			bool eq = true;

			for (size_t j = 0; j < n && eq; j++)
				eq = c->n[j].nrf >= 0 && c->n[j].nrf == (int32_t)f->path[(r + j) % n];
			if (eq) {
				json_array_append_new(codes, json_string(f->code));
				break;
			}
		}
	}
	return codes;
}

/* The peer entries that make each step of @p c; @p labels[k] of the edges
 * found get @p what appended (for the picture); steps no entry explains
 * are added to @p extra as dashed purple edges. */
static json_t *
entries_of(const struct nrf_topo *t, const struct cycle *c, char **labels, const char *what,
	char **extra)
{
	json_t *a = json_array();
	size_t n_edges = 0;
	const struct nrf_topo_edge *edges = t != NULL ? nrf_topo_edges(t, &n_edges) : NULL;

	for (size_t i = 0; i < c->len; i++) {
		const struct node *x = &c->n[i], *y = &c->n[(i + 1) % c->len];
		bool any = false;

		for (size_t k = 0; x->nrf >= 0 && y->nrf >= 0 && k < n_edges; k++) {
			const struct nrf_topo_edge *e = &edges[k];
			const struct nrf_topo_nrf *fr;
			const struct nrf_cfg_peer *p;
			json_t *o;

			if (e->from != (uint16_t)x->nrf || e->to != y->nrf)
				continue;
			any = true;
			fr = nrf_topo_at(t, e->from);
			p = &fr->cfg->peers[e->peer];
			o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b}", "from", fr->name,
				"source", fr->source, "pointer", p->pointer, "peer", p->name, "to",
				y->name, "recognised", e->recognised, "active", e->active);
			json_array_append_new(a, o);
			if (labels != NULL) {
				char *old = labels[k], *nw = NULL;

				if (asprintf(&nw, "%s%s%s", old != NULL ? old : "",
					    old != NULL ? "\n" : "", what) >= 0) {
					free(old);
					labels[k] = nw;
				}
			}
		}
		if (!any) {
			json_array_append_new(a, json_pack("{s:s, s:n, s:n, s:n, s:s, s:b, s:b}",
				"from", x->name, "source", "pointer", "peer", "to", y->name,
				"recognised", false, "active", false));
			if (extra != NULL && x->nrf >= 0 && y->nrf >= 0) {
				char *old = *extra, *nw = NULL;

				if (asprintf(&nw, "%s\tn%d -> n%d [label=\"%s\\n(no peer entry)\", "
					    "color=purple, fontcolor=purple, style=dashed, "
					    "penwidth=2.0];\n", old != NULL ? old : "", x->nrf, y->nrf,
					    what) >= 0) {
					free(old);
					*extra = nw;
				}
			}
		}
	}
	return a;
}

/* ------------------------------------------------------------------------ */
/* The report                                                                */

/* Every instance's paths, one a line, as /loops lists them. */
static void
print_table(struct lsrc *src, size_t n_src)
{
	size_t rows = 0;

	for (size_t s = 0; s < n_src; s++)
		rows += json_array_size(json_object_get(src[s].doc, "paths"));
	if (rows == 0)
		return;
	printf("\n%-30s %-9s %8s %8s %-24s %s\n", "AT", "KIND", "COUNT", "RATE/S", "LAST SEEN",
		"VIA (oldest first) [-> SKIPPED ENTRY]");
	for (size_t s = 0; s < n_src; s++) {
		size_t i, q;
		json_t *p, *m;

		json_array_foreach(json_object_get(src[s].doc, "paths"), i, p) {
			const char *sk = json_string_value(json_object_get(p, "skipped"));

			printf("%-30s %-9s %8lld %8.2f %-24s", jstr(src[s].doc, "identity"),
				jstr(p, "kind"), (long long)json_integer_value(json_object_get(p, "count")),
				json_real_value(json_object_get(p, "ratePerSecond")), jstr(p, "lastSeen"));
			if (json_is_true(json_object_get(p, "truncated")))
				printf(" ...");
			json_array_foreach(json_object_get(p, "path"), q, m)
				printf(" %s", json_string_value(m));
			if (sk != NULL)
				printf(" -> %s %s", sk, jstr(p, "entry"));
			putchar('\n');
		}
	}
}

static int
report(struct lsrc *src, size_t n_src, struct nrf_topo *t, const struct opts *o)
{
	struct nrf_topo_findings l = {0};
	bool linted = false;
	struct cycle *cy = NULL;
	size_t n_cy = 0, n_edges = 0;
	json_t *out = json_object(), *jc = json_array(), *paths = json_array(),
	       *inst = json_array();
	char **labels = NULL, *extra = NULL;
	int status = 0;

	if (t != NULL) {
		nrf_topo_edges(t, &n_edges);
		labels = calloc(n_edges + 1, sizeof(*labels));
		linted = nrf_topo_lint(t, NULL, &l) == 0;
	}
	for (size_t s = 0; s < n_src; s++) {
		const json_t *d = src[s].doc;
		const char *self = jstr(d, "identity");
		size_t i;
		json_t *p;

		json_array_append_new(inst, json_pack("{s:s, s:s, s:I, s:I}", "instance",
			src[s].label, "identity", self, "distinctPaths",
			json_integer_value(json_object_get(d, "distinctPaths")), "dropped",
			json_integer_value(json_object_get(d, "dropped"))));
		json_array_foreach(json_object_get(d, "paths"), i, p) {
			struct cycle c;
			struct node at;
			const char *from = NULL;
			int kind = kind_of(jstr(p, "kind"));
			json_t *obs;
			size_t j;

			if (!cycle_of(t, p, self, &c, &at, &from)) {
				json_t *cp = json_deep_copy(p);

				json_object_set_new(cp, "instance", json_string(src[s].label));
				json_object_set_new(cp, "at", json_string(self));
				json_array_append_new(paths, cp);
				if (kind != 1)
					status = 1;
				continue;
			}
			for (j = 0; j < n_cy && strcmp(cy[j].text, c.text) != 0; j++)
				;
			if (j == n_cy) {
				struct cycle *nc = realloc(cy, (n_cy + 1) * sizeof(*cy));

				if (nc == NULL)
					break;
				cy = nc;
				cy[n_cy] = c;
				cy[n_cy].seen = json_array();
				cy[n_cy].entered = json_array();
				n_cy++;
			}
			if (kind >= 0)
				cy[j].count[kind] += (uint64_t)json_integer_value(json_object_get(p, "count"));
			/* a looping request is often seen twice (a skip at one
			 * nrfwd, a 508 at another): the largest rate, not a sum */
			if (json_real_value(json_object_get(p, "ratePerSecond")) > cy[j].rate)
				cy[j].rate = json_real_value(json_object_get(p, "ratePerSecond"));
			if (cy[j].first[0] == '\0' || strcmp(jstr(p, "firstSeen"), cy[j].first) < 0)
				snprintf(cy[j].first, sizeof(cy[j].first), "%s", jstr(p, "firstSeen"));
			if (strcmp(jstr(p, "lastSeen"), cy[j].last) > 0)
				snprintf(cy[j].last, sizeof(cy[j].last), "%s", jstr(p, "lastSeen"));
			{
				char e[600];
				size_t k;
				json_t *v;
				bool dup = false;

				snprintf(e, sizeof(e), "%s (from %s)", at.name,
					from != NULL ? from : "a client");
				json_array_foreach(cy[j].entered, k, v)
					dup |= strcmp(json_string_value(v), e) == 0;
				if (!dup)
					json_array_append_new(cy[j].entered, json_string(e));
			}
			obs = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O}",
				"instance", src[s].label, "at", self, "kind", jstr(p, "kind"),
				"count", json_object_get(p, "count"), "ratePerSecond",
				json_object_get(p, "ratePerSecond"), "path",
				json_object_get(p, "path"), "skipped", json_object_get(p, "skipped"),
				"entry", json_object_get(p, "entry"), "client",
				json_object_get(p, "client"), "lastSeen", json_object_get(p, "lastSeen"));
			if (obs != NULL)
				json_array_append_new(cy[j].seen, obs);
		}
	}
	for (size_t j = 0; j < n_cy; j++) {
		struct cycle *c = &cy[j];
		char what[256];
		json_t *names = json_array(), *pred, *ents, *co;

		snprintf(what, sizeof(what), "observed %.2f/s: %llu detected, %llu prevented, "
			"%llu hop limit", c->rate, (unsigned long long)c->count[0],
			(unsigned long long)c->count[1], (unsigned long long)c->count[2]);
		for (size_t i = 0; i < c->len; i++)
			json_array_append_new(names, json_string(c->n[i].name));
		json_array_append_new(names, json_string(c->n[0].name));
		pred = predicted_by(linted ? &l : NULL, c);
		ents = entries_of(t, c, labels, what, &extra);
		co = json_pack("{s:s, s:o, s:{s:I, s:I, s:I}, s:f, s:s, s:s, s:o, s:o, s:o, "
			"s:{s:b, s:o}}",
			"cycle", c->text, "nrfs", names, "counts", "detected",
			(json_int_t)c->count[0], "prevented", (json_int_t)c->count[1], "hopLimit",
			(json_int_t)c->count[2], "ratePerSecond", c->rate, "firstSeen", c->first,
			"lastSeen", c->last, "enteredAt", c->entered, "entries", ents, "observations",
			c->seen, "lint", "predicted", json_array_size(pred) > 0, "codes", pred);
		json_array_append_new(jc, co);
		if (c->count[0] > 0 || c->count[2] > 0)
			status = 1;
	}
	json_object_set_new(out, "instances", inst);
	json_object_set_new(out, "cycles", jc);
	json_object_set_new(out, "otherPaths", paths);
	json_object_set_new(out, "topology", json_boolean(t != NULL));
	if (o->json) {
		ctl_print_json(out);
	} else {
		size_t i, k;
		json_t *c, *v;

		json_array_foreach(inst, i, v)
			printf("%s (%s): %lld loop path%s, %lld dropped\n", jstr(v, "instance"),
				jstr(v, "identity"),
				(long long)json_integer_value(json_object_get(v, "distinctPaths")),
				json_integer_value(json_object_get(v, "distinctPaths")) == 1 ? "" : "s",
				(long long)json_integer_value(json_object_get(v, "dropped")));
		print_table(src, n_src);
		if (t == NULL)
			printf("(no topology: the running configurations could not be read; "
			       "entries and lint are left out)\n");
		json_array_foreach(jc, i, c) {
			const json_t *cnt = json_object_get(c, "counts");
			const json_t *lt = json_object_get(c, "lint");

			printf("\ncycle %s\n", jstr(c, "cycle"));
			printf("  seen:     %lld detected (508), %lld prevented, %lld hop limit; "
			       "%.2f/s; first %s, last %s\n",
				(long long)json_integer_value(json_object_get(cnt, "detected")),
				(long long)json_integer_value(json_object_get(cnt, "prevented")),
				(long long)json_integer_value(json_object_get(cnt, "hopLimit")),
				json_real_value(json_object_get(c, "ratePerSecond")),
				jstr(c, "firstSeen"), jstr(c, "lastSeen"));
			json_array_foreach(json_object_get(c, "observations"), k, v) {
				const char *sk = json_string_value(json_object_get(v, "skipped"));

				printf("  at %s: %s %lld", jstr(v, "at"), jstr(v, "kind"),
					(long long)json_integer_value(json_object_get(v, "count")));
				if (sk != NULL)
					printf(" (skipped %s, %s)", sk, jstr(v, "entry"));
				printf(", Via:");
				{
					size_t q;
					json_t *m;

					json_array_foreach(json_object_get(v, "path"), q, m)
						printf(" %s", json_string_value(m));
				}
				printf("  [%s]\n", jstr(v, "instance"));
			}
			json_array_foreach(json_object_get(c, "enteredAt"), k, v)
				printf("  entered:  %s\n", json_string_value(v));
			json_array_foreach(json_object_get(c, "entries"), k, v) {
				const char *ptr = json_string_value(json_object_get(v, "pointer"));

				if (ptr == NULL)
					printf("  entry:    %s -> %s: no peer entry found\n",
						jstr(v, "from"), jstr(v, "to"));
				else
					printf("  entry:    %s %s (%s) -> %s%s%s\n", jstr(v, "source"),
						ptr, jstr(v, "peer"), jstr(v, "to"),
						json_is_true(json_object_get(v, "recognised")) ? ""
						: "  [loop prevention cannot recognise it]",
						json_is_true(json_object_get(v, "active")) ? ""
						: "  [mode disabled]");
			}
			if (json_is_true(json_object_get(lt, "predicted"))) {
				printf("  lint:     predicted (");
				json_array_foreach(json_object_get(lt, "codes"), k, v)
					printf("%s%s", k > 0 ? ", " : "", json_string_value(v));
				printf(")\n");
			} else {
				printf("  lint:     not predicted%s\n", t == NULL ? " (no topology)" : "");
			}
		}
		json_array_foreach(paths, i, v) {
			size_t q;
			json_t *m;

			printf("\npath without a cycle at %s: %s %lld, Via:", jstr(v, "at"),
				jstr(v, "kind"), (long long)json_integer_value(json_object_get(v, "count")));
			json_array_foreach(json_object_get(v, "path"), q, m)
				printf(" %s", json_string_value(m));
			printf("  [%s]\n", jstr(v, "instance"));
		}
		if (json_array_size(jc) == 0 && json_array_size(paths) == 0)
			printf("\nno loop observed\n");
	}
	if (t != NULL && (o->dot != NULL || o->svg != NULL)) {
		if (ctl_picture_observed(o->dot, o->svg, t, linted ? &l : NULL,
			    (const char *const *)labels, extra, "nrfwd-ctl loops") != 0)
			status = EXIT_USAGE;
	} else if (o->dot != NULL || o->svg != NULL) {
		fprintf(stderr, "nrfwd-ctl: --dot/--svg: no topology to draw\n");
		status = EXIT_UNREACHABLE;
	}
	free(cy); /* their JSON arrays went into @c out */
	for (size_t k = 0; labels != NULL && k < n_edges; k++)
		free(labels[k]);
	free(labels);
	free(extra);
	json_decref(out);
	nrf_topo_findings_fini(&l);
	return status;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

static int
parse(int argc, char **argv, int first, struct opts *o, bool fleet)
{
	static const struct option lo[] = {
		CTL_OPT_API,
		{"etcd", required_argument, NULL, 'e'},
		{"config-key", required_argument, NULL, 'k'},
		CTL_OPT_JSON,
		{"dot", required_argument, NULL, 'd'},
		{"svg", required_argument, NULL, 's'},
		CTL_OPTS_ETCD_TLS,
		CTL_OPTS_END,
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = first;
	while ((c = getopt_long(argc, argv, "a:e:k:jd:s:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (fleet || o->n_apis == MAX_APIS)
				return -1;
			o->apis[o->n_apis++] = optarg;
			break;
		case 'e':
			if (!fleet)
				return -1;
			o->ep.endpoints = optarg;
			break;
		case 'k':
			if (!fleet || o->n_keys == MAX_APIS)
				return -1;
			o->keys[o->n_keys++] = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'd':
			o->dot = optarg;
			break;
		case 's':
			o->svg = optarg;
			break;
		case 1:
		case 2:
		case 3:
			ctl_etcd_tls_opt(&o->ep, c, optarg);
			break;
		case 'h':
			ctl_usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind < argc)
		return -1;
	if (fleet && (o->ep.endpoints == NULL || o->n_keys == 0)) {
		fprintf(stderr, "nrfwd-ctl: --etcd URLS and --config-key KEY are required\n");
		return -1;
	}
	if (!fleet && o->n_apis == 0)
		o->apis[o->n_apis++] = DEFAULT_API;
	return 0;
}

static void
free_srcs(struct lsrc *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].label);
		json_decref(s[i].doc);
	}
	free(s);
}

int
ctl_loops(int argc, char **argv)
{
	struct opts o;
	struct ctl_topo_src ts = {0};
	struct lsrc *src;
	struct nrf_topo *t;
	size_t n = 0;
	int status, code = 0;

	if (parse(argc, argv, 2, &o, false) != 0) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	src = calloc(o.n_apis, sizeof(*src));
	if (src == NULL)
		return 1;
	for (size_t i = 0; i < o.n_apis; i++) {
		struct ctl_http_resp r = {0};
		char err[256];
		json_error_t je;

		if (ctl_http_request(o.apis[i], "GET", "/loops", NULL, NULL, 0, NULL, &r, err,
			    sizeof(err)) != 0) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", o.apis[i], err);
			free_srcs(src, n);
			return EXIT_UNREACHABLE;
		}
		if (r.status != 200 || (src[n].doc = json_loadb(r.body, r.body_len, 0, &je)) == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s/loops: %d %s\n", o.apis[i], r.status, r.reason);
			ctl_http_resp_fini(&r);
			free_srcs(src, n);
			return 1;
		}
		ctl_http_resp_fini(&r);
		src[n++].label = strdup(o.apis[i]);
	}
	ts.apis = o.apis;
	ts.n_apis = o.n_apis;
	t = ctl_topo_load(&ts, true, &code);
	status = report(src, n, t, &o);
	nrf_topo_free(t);
	free_srcs(src, n);
	return status;
}

/* ------------------------------------------------------------------------ */
/* fleet loops                                                               */

/* The runtime group an NRF of the topology needs from its instance: where
 * it listens ("listen" of its loops summary), so peer entries that connect
 * to an address resolve to it. */
static char *
runtime_of(const json_t *loops)
{
	json_t *rt = json_object(), *ls = json_array(), *v;
	size_t i;
	char *text;

	json_array_foreach(json_object_get(loops, "listen"), i, v)
		json_array_append(ls, v);
	json_object_set_new(rt, "listen", ls);
	text = json_dumps(rt, JSON_COMPACT);
	json_decref(rt);
	return text;
}

int
ctl_fleet_loops(int argc, char **argv)
{
	struct opts o;
	struct nrf_etcd *e;
	struct lsrc *src = NULL;
	size_t n = 0, cap = 0;
	struct nrf_topo *t = NULL;
	int err = 0, status;

	if (parse(argc, argv, 3, &o, true) != 0) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	nrf_etcd_global_init();
	e = nrf_etcd_create(&o.ep, &err);
	if (e == NULL) {
		fprintf(stderr, "nrfwd-ctl: --etcd %s: %s\n", o.ep.endpoints, nrf_strerror(err));
		return EXIT_USAGE;
	}
	t = nrf_topo_create(&err);
	for (size_t k = 0; k < o.n_keys; k++) {
		struct nrf_etcd_kvs cfg = {0}, inst = {0};
		char *prefix = nrf_cfgsrc_instances_prefix(o.keys[k]);
		char *runtime = NULL;
		int rc;

		if (prefix == NULL) {
			fprintf(stderr, "nrfwd-ctl: --config-key %s: expected /<path>/config\n",
				o.keys[k]);
			free_srcs(src, n);
			nrf_topo_free(t);
			nrf_etcd_free(e);
			return EXIT_USAGE;
		}
		rc = nrf_etcd_get(e, o.keys[k], false, &cfg);
		if (rc == 0)
			rc = nrf_etcd_get(e, prefix, true, &inst);
		if (rc != 0) {
			fprintf(stderr, "nrfwd-ctl: etcd: %s\n", nrf_etcd_last_error(e));
			free(prefix);
			free_srcs(src, n);
			nrf_topo_free(t);
			nrf_etcd_free(e);
			return rc == NRF_EIO ? EXIT_UNREACHABLE : 1;
		}
		for (size_t i = 0; i < inst.n; i++) {
			json_t *s = json_loadb(inst.v[i].value, inst.v[i].value_len, 0, NULL);
			json_t *lp = json_object_get(s, "loops");

			if (json_is_object(lp)) {
				if (n == cap) {
					struct lsrc *ns = realloc(src, (cap * 2 + 8) * sizeof(*src));

					if (ns == NULL) {
						json_decref(s);
						break;
					}
					src = ns;
					cap = cap * 2 + 8;
				}
				src[n].doc = json_incref(lp);
				if (asprintf(&src[n].label, "%s%s", prefix,
					    jstr(s, "id")[0] != '\0' ? jstr(s, "id")
					    : inst.v[i].key + strlen(prefix)) < 0)
					src[n].label = strdup("?");
				if (runtime == NULL)
					runtime = runtime_of(lp);
				n++;
			}
			json_decref(s);
		}
		/* the NRF of this key: its shared document with its listen addresses */
		if (t != NULL && cfg.n > 0) {
			struct nrf_cfg_problems probs = {0};
			char *doc = nrf_cfgsrc_compose(cfg.v[0].value, cfg.v[0].value_len,
				runtime != NULL ? runtime : "{}", &probs, &err);
			struct nrf_cfg *c = doc != NULL
				? nrf_cfg_load(doc, strlen(doc), 1, &probs, &err) : NULL;

			if (c != NULL)
				nrf_topo_add(t, c, o.keys[k]);
			else
				nrf_topo_add_invalid(t, o.keys[k], err, &probs);
			nrf_cfg_problems_fini(&probs);
			free(doc);
		}
		free(runtime);
		free(prefix);
		nrf_etcd_kvs_fini(&cfg);
		nrf_etcd_kvs_fini(&inst);
	}
	nrf_etcd_free(e);
	if (t != NULL && nrf_topo_resolve(t) != 0) {
		nrf_topo_free(t);
		t = NULL;
	}
	status = report(src, n, t, &o);
	nrf_topo_free(t);
	free_srcs(src, n);
	return status;
}
