/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_CTL_H
#define NRF_CTL_H

/*
 * nrfwd-ctl's commands and what they share. Each command is
 * `int ctl_<name>(int argc, char **argv)` with argv[1] the command name
 * (argv[0] the program), returning the process exit status.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_fwd.h"
#include "nrf_topo.h"

#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3
/* lint and trace: their 2 is "errors found", so a usage error is 4. */
#define EXIT_TOPO_USAGE 4
#define DEFAULT_API "http://127.0.0.1:9090"

void ctl_usage(FILE *f);

/* ------------------------------------------------------------------------ */
/* Command lines (main.c)                                                     */

/* getopt_long() entries that more than one command takes, spelled once. */
#define CTL_OPT_API {"api", required_argument, NULL, 'a'}
#define CTL_OPT_JSON {"json", no_argument, NULL, 'j'}
/* The request explain and trace follow: --method M --path P --via VALUE. */
#define CTL_OPTS_REQUEST                                                     \
	{"method", required_argument, NULL, 'm'},                            \
	{"path", required_argument, NULL, 'p'},                              \
	{"via", required_argument, NULL, 'v'}
/* etcd's TLS files (fleet, fleet loops): ctl_etcd_tls_opt() takes codes 1..3. */
#define CTL_OPTS_ETCD_TLS                                                    \
	{"etcd-cacert", required_argument, NULL, 1},                         \
	{"etcd-cert", required_argument, NULL, 2},                           \
	{"etcd-key", required_argument, NULL, 3}
/* What lint and trace print: --json, and pictures (ctl_picture()) with
 * --dot FILE --svg FILE; ctl_output_opt() takes these codes. */
#define CTL_OPTS_OUTPUT                                                      \
	{"json", no_argument, NULL, 'j'},                                    \
	{"dot", required_argument, NULL, 'D'},                               \
	{"svg", required_argument, NULL, 'S'}
/* --help and the end of the table. */
#define CTL_OPTS_END {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}

struct nrf_etcd_params;

struct ctl_output {
	bool json;
	const char *dot; /* NULL: none; "-": stdout instead of the text or JSON */
	const char *svg;
};

/* An option of CTL_OPTS_OUTPUT (code @p c) into @p o. @return false when
 * @p c is none of them. */
bool ctl_output_opt(struct ctl_output *o, int c, const char *arg);

/* The exit status of getopt_long()'s @p c when it is --help ('h': the usage
 * on stdout, 0) or an option it refused (the usage on stderr,
 * @p usage_status). */
int ctl_help_or_usage(int c, int usage_status);

/* An option of CTL_OPTS_ETCD_TLS (code @p c) into @p ep. */
void ctl_etcd_tls_opt(struct nrf_etcd_params *ep, int c, const char *arg);

/* One --via line: @p arg appended to @p lines (*@p n of at most @p max).
 * @return 0, or -1 with the reason on stderr when they are full. */
int ctl_via_add(struct nrf_slice *lines, size_t *n, size_t max, const char *arg);

/* --max-forward-hops @p arg (0..999999999) into *@p out. @return 0, or -1
 * with the reason on stderr. */
int ctl_max_hops(const char *arg, long *out);

/* @p o as indented JSON (keys in order) on stdout. @return 0, or -1 when it
 * could not be rendered (nothing printed). */
int ctl_print_json(const json_t *o);

/* Commands (ctl_check.c, ctl_explain.c, ctl_api.c, ctl_lint.c, ctl_trace.c). */
int ctl_check(int argc, char **argv);
int ctl_explain(int argc, char **argv);
int ctl_api(int argc, char **argv);
int ctl_lint(int argc, char **argv);
int ctl_trace(int argc, char **argv);
int ctl_fleet(int argc, char **argv);
int ctl_fleet_doc(int argc, char **argv);

/* Every problem of @p p on stderr, one a line: "  <json-pointer>: <reason>"
 * ("/" for the document's root). */
void ctl_problems_list(const struct nrf_cfg_problems *p);

/* "FILE: invalid configuration, N problems:" on stderr (the reason when
 * @p err is not NRF_ECONFIG: the file cannot be read, not JSON), then
 * ctl_problems_list(). */
void ctl_problems_print(const char *file, int err, const struct nrf_cfg_problems *p);

/* Load a configuration file; prints every problem on stderr. */
struct nrf_cfg *ctl_load(const char *file);

/* A whole file ("-": stdin), NUL-terminated; NULL with errno set. */
char *ctl_read_all(const char *file, size_t *len);

json_t *ctl_jslice(struct nrf_slice s);

/* The error response of @p cond in @p mode's group, as explain shows it. */
json_t *ctl_problem_json(const struct nrf_fwd_table *t, enum nrf_cfg_mode mode,
	enum nrf_cfg_cond cond);

/* ------------------------------------------------------------------------ */
/* Topologies (ctl_topo.c)                                                    */

/* Where a topology comes from: files and directories, and REST APIs. */
struct ctl_topo_src {
	const char **paths;
	size_t n_paths;
	const char **apis;
	size_t n_apis;
};

/*
 * Load and resolve a topology: every FILE, every *.json of a DIRECTORY
 * (sorted), the running document of every API (GET
 * {apiRoot}/nrf-configuration/v1/). A configuration that does not load is
 * recorded (lint reports it) and printed on stderr when @p quiet is false.
 * @return the topology, or NULL with *exit_code set (3: an API not
 *   reachable; 4: nothing to load, an unreadable path; 1: it does not
 *   resolve).
 */
struct nrf_topo *ctl_topo_load(const struct ctl_topo_src *src, bool quiet, int *exit_code);

/* An NRF by --at / --down reference; prints why not on stderr. -1 when none. */
int ctl_topo_find(const struct nrf_topo *t, const char *ref, const char *what);

/*
 * Read a holdings file (docs/nrfwd-ctl.md): which NF types, profile ids and
 * subscription ids each local NRF holds, which NRFs or local NRFs are down.
 * @return 0, or -1 with the reason on stderr.
 */
int ctl_holdings_load(struct nrf_topo *t, const char *file);

/* The NF types of every holding, sorted and unique (caller frees the array,
 * not the strings, which the topology owns through ctl_holdings_load()). */
size_t ctl_holdings_types(const struct nrf_topo *t, const char ***out);

/* Read / write a trace state file (rotation counters, held-down peers);
 * a missing file reads as the zero state. @return 0 or -1 (stderr). */
int ctl_state_load(struct nrf_topo *t, const char *file);
int ctl_state_save(const struct nrf_topo *t, const char *file);

/* ------------------------------------------------------------------------ */
/* Pictures (ctl_dot.c)                                                       */

/*
 * Graphviz DOT of the forwarding graph: NRFs (clustered by nrfSetId), peer
 * entries as edges, targets outside the topology as dashed nodes; the
 * findings of @p lint (may be NULL) and the path of @p trace (may be NULL)
 * highlighted. @p title may be NULL.
 */
void ctl_dot_write(FILE *f, const struct nrf_topo *t, const struct nrf_topo_findings *lint,
	const struct nrf_topo_hops *trace, const char *title);

/*
 * Loops observed by running nrfwd (ctl_loops.c) drawn over the same graph:
 * @p observed[k] (NULL: none) labels edge k of nrf_topo_edges() as part of
 * an observed loop (purple, bold); @p extra (may be NULL): DOT lines added
 * before the closing brace (observed steps that no peer entry explains).
 */
void ctl_dot_write_observed(FILE *f, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const char *const *observed, const char *extra,
	const char *title);

/*
 * Write the picture where asked: DOT to @p dot_file ("-": stdout), SVG
 * rendered by Graphviz's `dot` to @p svg_file. Either may be NULL.
 * @return 0, or -1 with the reason on stderr (dot not installed, a file).
 */
int ctl_picture(const char *dot_file, const char *svg_file, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const struct nrf_topo_hops *trace, const char *title);

/* ctl_picture() of ctl_dot_write_observed(). */
int ctl_picture_observed(const char *dot_file, const char *svg_file, const struct nrf_topo *t,
	const struct nrf_topo_findings *lint, const char *const *observed, const char *extra,
	const char *title);

/* loops (ctl_loops.c): --api URLs, and `fleet loops` through etcd. */
int ctl_loops(int argc, char **argv);
int ctl_fleet_loops(int argc, char **argv);

#endif /* NRF_CTL_H */
