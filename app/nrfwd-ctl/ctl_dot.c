/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pictures of a topology: Graphviz DOT text, and SVG rendered by Graphviz's
 * own `dot` (Debian package graphviz) when it is installed.
 *
 * Nodes are NRFs (clustered by their nrfSetId), edges are peer entries
 * (label: mode and priority). What lint found is drawn on top: red for
 * errors (an entry loop prevention cannot recognise, a cycle that ends in
 * 508, an NRF as its own peer), orange for warnings (a cycle loop
 * prevention breaks), dashed grey for entries that reach nothing. A traced
 * request is blue: the tries in order (#1, #2, ...; dashed when the try
 * failed), the NRF that answered filled green (its local NRF answered) or
 * red (an error).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"

/* A DOT string: quotes and backslashes escaped. */
static void
q(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static const char *
base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b != NULL && b[1] != '\0' ? b + 1 : s;
}

enum mark {
	M_NONE = 0,
	M_WARN,
	M_ERROR,
};

struct edge_look {
	enum mark mark;
	int try_no;      /* 1-based order of the first try along it; 0: none */
	bool try_failed;
	const char *skipped; /* skipped by loop prevention: the reason */
};

static void
mark_findings(const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	struct edge_look *look, enum mark *node_mark)
{
	size_t n_edges;
	const struct nrf_topo_edge *edges = nrf_topo_edges(t, &n_edges);

	(void)edges;
	for (size_t i = 0; lint != NULL && i < lint->n; i++) {
		const struct nrf_topo_finding *fd = &lint->v[i];
		enum mark m = fd->severity == NRF_TOPO_ERROR ? M_ERROR
			: fd->severity == NRF_TOPO_WARNING   ? M_WARN
							     : M_NONE;

		if (m == M_NONE || strcmp(fd->code, "longest-path") == 0)
			continue;
		for (size_t k = 0; k < fd->n_entries; k++) {
			const struct nrf_topo_edge *e =
				nrf_topo_peer_edge(t, fd->entries[k].from, fd->entries[k].peer);
			size_t idx = (size_t)(e - edges);

			if (e != NULL && look[idx].mark < m)
				look[idx].mark = m;
		}
		if (strcmp(fd->code, "identity-shared") == 0 ||
			strcmp(fd->code, "path-over-max-via") == 0) {
			for (size_t k = 0; k < fd->n_refs; k++)
				if (fd->refs[k].nrf >= 0 && node_mark[fd->refs[k].nrf] < m)
					node_mark[fd->refs[k].nrf] = m;
		}
	}
}

static void
mark_trace(const struct nrf_topo *t, const struct nrf_topo_hops *tr, struct edge_look *look,
	bool *visited)
{
	size_t n_edges;
	const struct nrf_topo_edge *edges = nrf_topo_edges(t, &n_edges);
	int no = 0;

	/* Tries in the order they were made: hops are numbered so. */
	for (size_t h = 0; tr != NULL && h < tr->n_hops; h++) {
		const struct nrf_topo_hop *hp = &tr->hops[h];

		visited[hp->nrf] = true;
		for (uint16_t k = 0; hp->scan_rc == 0 && hp->plan.verdict == NRF_FWD_FORWARD &&
			k < hp->plan.n_skip; k++) {
			const struct nrf_topo_edge *e =
				nrf_topo_peer_edge(t, hp->nrf, hp->plan.skip[k].peer);
			enum nrf_fwd_skip_reason r =
				(enum nrf_fwd_skip_reason)hp->plan.skip[k].reason;

			if (e != NULL && r != NRF_FWD_SKIP_DOWN)
				look[e - edges].skipped = nrf_fwd_skip_reason_name(r);
		}
		for (uint16_t k = 0; k < hp->n_tries; k++) {
			const struct nrf_topo_edge *e =
				nrf_topo_peer_edge(t, hp->nrf, hp->tries[k].peer);
			size_t idx = (size_t)(e - edges);

			if (e == NULL || look[idx].try_no != 0)
				continue;
			look[idx].try_no = ++no;
			look[idx].try_failed = hp->tries[k].end == NRF_TOPO_TRY_FAILED;
		}
	}
}

/* Index of the dangling target of edge @p e among @p names (added). */
static size_t
dangling_id(const struct nrf_topo *t, const struct nrf_topo_edge *e, const char **names,
	size_t *n)
{
	const char *nm = nrf_topo_at(t, e->from)->cfg->peers[e->peer].name;

	for (size_t i = 0; i < *n; i++)
		if (strcmp(names[i], nm) == 0)
			return i;
	names[*n] = nm;
	return (*n)++;
}

static void dot_write(FILE *f, const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	const struct nrf_topo_hops *tr, const char *const *observed, const char *extra,
	const char *title);

void
ctl_dot_write(FILE *f, const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	const struct nrf_topo_hops *tr, const char *title)
{
	dot_write(f, t, lint, tr, NULL, NULL, title);
}

void
ctl_dot_write_observed(FILE *f, const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	const char *const *observed, const char *extra, const char *title)
{
	dot_write(f, t, lint, NULL, observed, extra, title);
}

static void
dot_write(FILE *f, const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	const struct nrf_topo_hops *tr, const char *const *observed, const char *extra,
	const char *title)
{
	size_t n = nrf_topo_count(t), n_edges, n_dang = 0;
	const struct nrf_topo_edge *edges = nrf_topo_edges(t, &n_edges);
	struct edge_look *look = calloc(n_edges + 1, sizeof(*look));
	enum mark *node_mark = calloc(n + 1, sizeof(*node_mark));
	bool *visited = calloc(n + 1, sizeof(*visited));
	const char **dang = calloc(n_edges + 1, sizeof(*dang));
	bool *clustered = calloc(n + 1, sizeof(*clustered));
	int32_t origin = -1;
	bool origin_error = false;

	if (look == NULL || node_mark == NULL || visited == NULL || dang == NULL ||
		clustered == NULL)
		goto out;
	mark_findings(t, lint, look, node_mark);
	mark_trace(t, tr, look, visited);
	if (tr != NULL && tr->n_hops > 0) {
		origin = tr->hops[0].answer.origin;
		origin_error = tr->hops[0].answer.kind != NRF_TOPO_ANS_LOCAL;
	}

	fprintf(f, "digraph nrfwd {\n");
	fprintf(f, "\tgraph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=");
	{
		char legend[2048];

		snprintf(legend, sizeof(legend), "%s%sred: error, orange: warning (lint); "
						  "dashed: nothing of the topology answers there; "
						  "grey dotted: its mode is disabled%s",
			title != NULL ? title : "", title != NULL ? "\n" : "",
			tr != NULL ? "\nblue: the traced request (#n: the order of its tries; "
				     "dotted: skipped by loop prevention); fill: who answered "
				     "(green: a local NRF, red: nrfwd's error)"
				   : observed != NULL ? "\nbold, labelled \"observed\": peer entries "
				     "of loops the running nrfwd saw (purple; red: not "
				     "recognisable); dashed purple: a step no entry explains"
				   : "");
		q(f, legend);
	}
	fprintf(f, "];\n");
	fprintf(f, "\tnode [shape=box, style=\"rounded,filled\", fillcolor=white, "
		   "fontname=\"Helvetica\", fontsize=10];\n");
	fprintf(f, "\tedge [fontname=\"Helvetica\", fontsize=9];\n");

	/* NRFs, one cluster per nrfSetId. */
	for (size_t i = 0; i < n; i++) {
		const char *sid = nrf_topo_at(t, i)->cfg->general.nrf_set_id;

		if (clustered[i])
			continue;
		if (sid[0] != '\0') {
			fprintf(f, "\tsubgraph \"cluster_%zu\" {\n\t\tlabel=", i);
			q(f, sid);
			fprintf(f, ";\n\t\tstyle=dashed; color=gray50; fontcolor=gray30;\n");
		}
		for (size_t j = i; j < n; j++) {
			const struct nrf_topo_nrf *nd = nrf_topo_at(t, j);
			const char *fill = "white", *color = "black";
			char label[600];

			if (clustered[j] || strcmp(nd->cfg->general.nrf_set_id, sid) != 0)
				continue;
			clustered[j] = true;
			if (visited[j])
				fill = "lightblue";
			if ((int32_t)j == origin)
				fill = origin_error ? "salmon" : "palegreen";
			if (node_mark[j] == M_ERROR)
				color = "red";
			else if (node_mark[j] == M_WARN)
				color = "darkorange";
			snprintf(label, sizeof(label), "%s\n%s%s", nd->name, base(nd->source),
				nrf_topo_is_down(t, j) ? "\n(down)" : "");
			fprintf(f, "%sn%zu [label=", sid[0] != '\0' ? "\t\t" : "\t", j);
			q(f, label);
			fprintf(f, ", fillcolor=%s, color=%s%s%s];\n", fill, color,
				node_mark[j] != M_NONE ? ", penwidth=2" : "",
				tr != NULL && tr->n_hops > 0 && tr->hops[0].nrf == j
					? ", peripheries=2"
					: "");
		}
		if (sid[0] != '\0')
			fprintf(f, "\t}\n");
	}

	/* Peer entries. */
	for (size_t k = 0; k < n_edges; k++) {
		const struct nrf_topo_edge *e = &edges[k];
		const struct nrf_cfg *cfg = nrf_topo_at(t, e->from)->cfg;
		const struct nrf_cfg_peer *p = &cfg->peers[e->peer];
		const char *color = "black", *style = "solid";
		char label[400];
		size_t len;
		double pen = 1.0;

		if (e->to < 0) {
			size_t d = dangling_id(t, e, dang, &n_dang);

			if (d + 1 == n_dang) {
				char dl[400];

				snprintf(dl, sizeof(dl), "%s\n(not in the topology)", p->name);
				fprintf(f, "\tx%zu [label=", d);
				q(f, dl);
				fprintf(f, ", style=\"rounded,dashed\", color=gray50, "
					   "fontcolor=gray40];\n");
			}
			fprintf(f, "\tn%u -> x%zu", e->from, d);
			color = "gray50";
			style = "dashed";
		} else {
			fprintf(f, "\tn%u -> n%d", e->from, e->to);
		}
		if (p->mode == NRF_MODE_FORWARDING)
			len = (size_t)snprintf(label, sizeof(label), "fwd p%u", p->priority);
		else
			len = (size_t)snprintf(label, sizeof(label), "growth %s p%u",
				cfg->sets[p->set].nrf_set_id, p->priority);
		if (e->to >= 0 && !e->recognised && len < sizeof(label))
			len += (size_t)snprintf(label + len, sizeof(label) - len,
				"\nnot recognisable");
		if (!e->active) {
			color = "gray60";
			style = "dotted";
			if (len < sizeof(label))
				len += (size_t)snprintf(label + len, sizeof(label) - len,
					"\n(mode disabled)");
		}
		if (look[k].mark == M_WARN) {
			color = "darkorange";
			pen = 1.6;
		}
		if (look[k].mark == M_ERROR || (e->to >= 0 && !e->recognised)) {
			color = "red";
			pen = 2.0;
		}
		if (look[k].skipped != NULL && look[k].try_no == 0) {
			color = "blue";
			style = "dotted";
			pen = 1.6;
			if (len < sizeof(label))
				len += (size_t)snprintf(label + len, sizeof(label) - len,
					"\nskipped (%s)", look[k].skipped);
		}
		if (observed != NULL && observed[k] != NULL) {
			/* an entry loop prevention cannot recognise stays red:
			 * usually the one to fix */
			color = e->to >= 0 && !e->recognised ? "red" : "purple";
			pen = 3.0;
			style = "bold";
			if (len < sizeof(label))
				len += (size_t)snprintf(label + len, sizeof(label) - len, "\n%s",
					observed[k]);
		}
		if (look[k].try_no > 0) {
			color = "blue";
			pen = 2.4;
			style = look[k].try_failed ? "dashed" : "solid";
			if (len < sizeof(label))
				snprintf(label + len, sizeof(label) - len, "\n#%d%s",
					look[k].try_no, look[k].try_failed ? " failed" : "");
		}
		fprintf(f, " [label=");
		q(f, label);
		fprintf(f, ", color=%s, fontcolor=%s, style=%s, penwidth=%.1f];\n", color,
			strcmp(color, "black") == 0 ? "gray20" : color, style, pen);
	}
	if (extra != NULL)
		fputs(extra, f);
	fprintf(f, "}\n");
out:
	free(look);
	free(node_mark);
	free(visited);
	free(dang);
	free(clustered);
}

/* Run `dot -Tsvg -o @p svg` with @p text on its stdin. */
static int
render_svg(const char *text, size_t len, const char *svg)
{
	struct sigaction ign, old;
	int fds[2], status;
	pid_t pid;
	size_t off = 0;

	if (pipe(fds) != 0) {
		fprintf(stderr, "nrfwd-ctl: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nrfwd-ctl: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		execlp("dot", "dot", "-Tsvg", "-o", svg, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	/* A dot that is not installed exits at once: the write then fails
	 * with EPIPE instead of killing this process with SIGPIPE. */
	sigemptyset(&ign.sa_mask);
	ign.sa_flags = 0;
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	while (off < len) {
		ssize_t w = write(fds[1], text + off, len - off);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fds[1]);
	sigaction(SIGPIPE, &old, NULL);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			fprintf(stderr, "nrfwd-ctl: --svg: Graphviz's dot is not installed "
					"(apt-get install graphviz); --dot FILE writes the DOT "
					"source, `dot -Tsvg -o %s FILE` renders it\n",
				svg);
		else
			fprintf(stderr, "nrfwd-ctl: --svg: dot failed to render %s\n", svg);
		return -1;
	}
	return 0;
}

static int
picture(const char *dot_file, const char *svg_file, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const struct nrf_topo_hops *trace,
	const char *const *observed, const char *extra, const char *title)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int rc = 0;

	if (dot_file == NULL && svg_file == NULL)
		return 0;
	m = open_memstream(&text, &len);
	if (m == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s\n", strerror(errno));
		return -1;
	}
	dot_write(m, t, lint, trace, observed, extra, title);
	fclose(m);
	if (dot_file != NULL) {
		FILE *f = strcmp(dot_file, "-") == 0 ? stdout : fopen(dot_file, "w");

		if (f == NULL || fwrite(text, 1, len, f) != len) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", dot_file, strerror(errno));
			rc = -1;
		}
		if (f != NULL && f != stdout)
			fclose(f);
	}
	if (rc == 0 && svg_file != NULL)
		rc = render_svg(text, len, svg_file);
	free(text);
	return rc;
}

int
ctl_picture(const char *dot_file, const char *svg_file, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const struct nrf_topo_hops *trace, const char *title)
{
	return picture(dot_file, svg_file, t, lint, trace, NULL, NULL, title);
}

int
ctl_picture_observed(const char *dot_file, const char *svg_file, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const char *const *observed, const char *extra,
	const char *title)
{
	return picture(dot_file, svg_file, t, lint, NULL, observed, extra, title);
}
