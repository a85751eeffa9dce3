/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_API_INT_H
#define NRF_API_INT_H

/*
 * Internals of lib/api shared by its translation units and unit tests:
 *   api.c          libmicrohttpd daemon, routing, auth, health, apply
 *   api_cfg.c      configuration groups, merge patch, problems, file write
 *   api_metrics.c  Prometheus text exposition
 *   api_source.c   a configuration source other than the file (etcd)
 *   api_persist.c  what a REST change writes into the configuration file
 * Nothing here does network I/O, so it is tested without a listener.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "nrf_api.h"
#include "nrf_cfg.h"
#include "nrf_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define API_MOD "api"
#define API_ROOT "/nrf-configuration/v1"

/* ------------------------------------------------------------------------ */
/* Resources                                                                 */

enum api_res {
	API_RES_NONE = 0,   /* unknown path: 404 */
	API_RES_ALL,        /* /nrf-configuration/v1/ */
	API_RES_GENERAL,
	API_RES_FORWARDING,
	API_RES_GROWTH,
	API_RES_RUNTIME,
	API_RES_METRICS,
	API_RES_HEALTHZ,
	API_RES_READYZ,
	API_RES_PEERS,      /* /peers (api_peers.c) */
	API_RES_LOOPS,      /* /loops (api_loops.c) */
	API_RES_DPDK,       /* /dpdk (api_dpdk.c) */
};

/* A configuration group as a resource. */
struct api_group {
	enum api_res res;
	const char *name;          /* "forwardingOptions", "nrfGrowth/nrfForwardingOptions" */
	const char *pointer;       /* JSON pointer in the document */
	enum nrf_cfg_group cfg;
	const char *parent;        /* member holding it ("" = the root) */
	const char *key;           /* its member name */
};

/* Resource of a request path (query already cut); trailing '/' tolerated. */
enum api_res api_route(const char *path);

/* Group of a configuration resource; NULL for others and API_RES_ALL. */
const struct api_group *api_group_of(enum api_res res);

/* Group by name as in the path ("generalOptions", ...); NULL if unknown. */
const struct api_group *api_group_by_name(const char *name);

/* Methods a resource allows, as for the Allow header ("GET, HEAD, ..."). */
const char *api_allow(enum api_res res);

/* True when @p method is in the resource's Allow list. */
bool api_method_allowed(enum api_res res, const char *method);

/* Media type of a Content-Type value, without parameters, lower case, in
 * @p out; "" when @p ct is NULL. */
void api_media_type(const char *ct, char *out, size_t cap);

/* Constant-time check of an Authorization header against the token. */
bool api_auth_ok(const char *authorization, const char *token);

/* ------------------------------------------------------------------------ */
/* Changes                                                                   */

/* RFC 7396 JSON merge patch: the result of applying @p patch to @p target
 * (which may be NULL: absent). Returns a new reference (caller decrefs);
 * @p target is not changed. NULL only when out of memory. */
json_t *api_merge_patch(const json_t *target, const json_t *patch);

/*
 * The document @p running (JSON text of the whole running configuration)
 * with group @p g replaced by @p body (@p merge false, PUT) or merged with
 * it (@p merge true, PATCH). @p out receives the new document as compact
 * JSON text (malloc'd). Problems that make the change impossible before
 * validation (PUT of something that is not an object, a running document
 * that does not parse) are added to @p probs with the group's pointer.
 * @return 0, NRF_EINVAL (problems listed), NRF_ENOMEM.
 */
int api_doc_apply(const char *running, const struct api_group *g, bool merge,
	const json_t *body, char **out, struct nrf_cfg_problems *probs);

/* Append one problem (pointer, printf reason); out of memory: dropped. */
#define api_problem_add(probs, ...) ((void)nrf_cfg_problem_add((probs), __VA_ARGS__))

/*
 * ProblemDetails (TS 29.571) as JSON text: title, status, detail (omitted
 * when NULL or ""), cause, and invalidParams [{param, reason}] when
 * @p invalid holds any. malloc'd; NULL when out of memory.
 */
char *api_problem_json(int status, const char *title, const char *cause,
	const char *detail, const struct nrf_cfg_problems *invalid);

/*
 * Replace @p path with @p len bytes atomically: write "<dir>/.<name>.nrfwd-tmp"
 * (the mode of the existing file, else 0644), fsync it, rename it over
 * @p path, fsync the directory. On failure the temp file is removed,
 * @p path is unchanged and @p why (of @p why_cap bytes) says what failed.
 * @return 0 or NRF_EIO.
 */
int api_file_write_atomic(const char *path, const char *data, size_t len,
	char *why, size_t why_cap);

/* ------------------------------------------------------------------------ */
/* The configuration file as nrfwd last saw it (api_persist.c)              */

/* The bytes of the file when nrfwd last loaded or wrote it. */
struct api_file_mark {
	bool set;       /* false: unknown (unreadable at start) */
	size_t len;
	uint64_t hash;  /* FNV-1a 64 of the bytes */
};

/*
 * The whole file @p path, NUL-terminated, malloc'd (at most 64 MiB);
 * @p len its length. NULL with @p err an errno value.
 */
char *api_file_read(const char *path, size_t *len, int *err);
/* Remember @p text (@p len bytes) as the file's content. */
void api_file_mark_text(struct api_file_mark *m, const char *text, size_t len);
/* api_file_mark_text() of the file now; unreadable: unset, NRF_EIO. */
int api_file_mark_path(struct api_file_mark *m, const char *path);
/* Is @p text what @p m remembers? false when @p m is unset. */
bool api_file_mark_same(const struct api_file_mark *m, const char *text, size_t len);

/*
 * The file's next content: the change of a PATCH (@p merge) or PUT with
 * @p body on group @p g applied to @p disk, the document as it is on disk
 * (keys it leaves out stay out, its key order kept), indented by 2, with a
 * final newline, checked to load (nrf_cfg_load(), @p generation).
 * malloc'd, @p len its length; NULL when @p disk is not a JSON object,
 * the result does not load, or out of memory (the caller then writes the
 * running configuration whole).
 */
char *api_persist_doc(const char *disk, const struct api_group *g, bool merge,
	const json_t *body, uint64_t generation, size_t *len);

/*
 * api_persist_doc() for a file that holds the runtime group only (with a
 * configuration source, docs/fleet.md): @p g is the runtime group, @p disk
 * the file as it is on disk; the result is checked by loading @p whole
 * (the running document, JSON text) with its runtime replaced by the
 * result's (api_compose_runtime()).
 */
char *api_persist_runtime_doc(const char *disk, const struct api_group *g, bool merge,
	const json_t *body, const char *whole, uint64_t generation, size_t *len);

/*
 * The running document @p whole (JSON text) with its runtime group taken
 * from @p local (@p local_len bytes: the text of a configuration file that
 * holds runtime only, the configuration source holding the rest). A group
 * other than runtime in @p local, or a @p local that is not a JSON object,
 * is a problem in @p probs (its pointer, the reason). @return compact JSON
 * text (malloc'd), or NULL (problems listed, or out of memory).
 */
char *api_compose_runtime(const char *whole, const char *local, size_t local_len,
	struct nrf_cfg_problems *probs);

/* ------------------------------------------------------------------------ */
/* Metrics                                                                   */

/* A growing text buffer; @c oom set once an append failed. */
struct api_buf {
	char *p;
	size_t len;
	size_t cap;
	bool oom;
};

void api_buf_printf(struct api_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void api_buf_fini(struct api_buf *b);

/* Everything one scrape shows. */
struct api_metrics_in {
	const struct nrf_rt_stats *st;
	const struct nrf_rt_peer_stats *peers;
	size_t n_peers;
	const struct nrf_rt_worker_info *workers;
	const double *busy;             /* [n_workers] busy share 0..1 */
	unsigned int n_workers;
	uint64_t generation;            /* published last */
	int64_t tls_not_after[2];       /* certificate notAfter, Unix s: server,
					 * client (0: none) */
	struct nrf_api_stats api;
	double last_apply[3];           /* seconds: validate, persist, publish */
	const struct nrf_rt_dp_stats *dp; /* [n_workers] the DPDK workers' loops
					   * (entries with !polled are skipped);
					   * NULL: not on DPDK */
	struct nrf_rt_dns_stats dns;    /* peer names (!running: no series) */
	uint64_t loop_paths;            /* distinct loop paths (GET /loops) */
	const struct nrf_tp_dpdk_xstat *xstats; /* the DPDK port's extended
					 * counters (with dp) */
	unsigned int n_xstats;
};

/* Extended counters of the DPDK port shown at most (/metrics, GET /dpdk). */
#define API_XSTATS_MAX 256

/* The Prometheus text exposition (format 0.0.4) of @p in. */
void api_metrics_render(struct api_buf *b, const struct api_metrics_in *in);

/* nrfwd_build_info and the standard process_* series (CPU, resident memory,
 * open fds, start time, fd limit) read from /proc/self at the moment of the
 * call (api_process.c). A /proc file that cannot be read leaves its series
 * out. Control thread (the scrape); no state. */
void api_metrics_process(struct api_buf *b);

/* Worker busy share over a trailing window (api.c): samples of the
 * workers' busy time kept at most one a second, the ratio taken against
 * the newest sample at least API_BUSY_WINDOW_NS old, so two scrapers see
 * the same figure whatever their intervals. */
#define API_BUSY_WINDOW_NS 10000000000ull
#define API_BUSY_SAMPLES 16
struct api_busy_sample {
	uint64_t wall_ns;
	uint64_t busy_ns[NRF_RT_MAX_WORKERS];
};

/* ------------------------------------------------------------------------ */
/* Configuration source (api_source.c; struct nrf_api_source). Every       */
/* function is a no-op (or false) when @p src is NULL.                      */

/* Take the source's lock; true when taken. */
bool api_source_lock(const struct nrf_api_source *src);
void api_source_unlock(const struct nrf_api_source *src);

/* The answer to a change of a shared group sent to the source. */
struct api_src_out {
	unsigned int status;       /* 200, 202 (not yet applied here), 400, 409, 500, 503 */
	const char *title;
	const char *cause;
	char detail[640];
	struct nrf_cfg_problems probs;  /* for 400; caller finis */
};

/*
 * Write the snapshot's shared groups to the source (source lock held,
 * released here: *@p locked becomes false), then wait up to @p settle_ms
 * for this instance to apply them from the source. @p snap is freed.
 * @p doc (not NULL): write this text instead (the change applied to the
 * stored document, api_persist_shared_doc()), compare-and-swap on @p base.
 */
void api_source_change(const struct nrf_api_source *src, struct nrf_rt_snap *snap,
	const char *doc, size_t doc_len, int64_t base, uint32_t settle_ms, bool *locked,
	struct api_src_out *out);

/*
 * The source's shared document with a PATCH (@p merge) or PUT of group @p g
 * applied to it as api_persist_doc() applies one to a file (the stored
 * keys and order kept, indented by 2), checked by loading it with the
 * running runtime group of @p whole (JSON text). NULL when @p stored is not
 * a JSON object, the result does not load, or out of memory (the caller
 * then writes the running shared groups whole).
 */
char *api_persist_shared_doc(const char *stored, const struct api_group *g, bool merge,
	const json_t *body, const char *whole, uint64_t generation, size_t *len);

/* Persist a runtime change through the source. 0 or NRF_EIO (@p why). */
int api_source_persist(const struct nrf_api_source *src, struct nrf_rt_snap *snap,
	char *why, size_t why_cap);

/* Append the source's metrics; add "configSource" to a /readyz document. */
void api_source_metrics(const struct nrf_api_source *src, struct api_buf *b);
void api_source_ready(const struct nrf_api_source *src, json_t *doc);

/*
 * GET /peers (api_peers.c): @p up upstreams of the running configuration
 * joined by name with @p st (their counters summed over the workers), as
 * a JSON document (malloc'd, no trailing newline; NULL: out of memory).
 * @p now_ns: nrf_now_ns(), for "seconds ago" fields.
 */
char *api_peers_render(const struct nrf_rt_upstream *up, size_t n_up,
	const struct nrf_rt_peer_stats *st, size_t n_st, uint64_t generation, uint64_t now_ns);
/* api_peers_render() of @p rt now (control thread). */
char *api_peers_get(struct nrf_rt *rt);

/*
 * GET /loops (api_loops.c): loop paths @p v[0..n) merged over the workers
 * (sorted here, most frequent first), at most @p limit of them, with the
 * table's drops, this nrfwd's identity @p self and its worker count.
 * @p now_ns: nrf_now_ns(); @p real_ns: the wall clock (ns since the epoch)
 * at the same moment. api_loops_doc(): as a JSON object (NULL: out of
 * memory); api_loops_render(): as text (malloc'd).
 */
json_t *api_loops_doc(struct nrf_rt_loop *v, size_t n, uint64_t drops, const char *self,
	unsigned int workers, size_t limit, uint64_t now_ns, uint64_t real_ns);
char *api_loops_render(struct nrf_rt_loop *v, size_t n, uint64_t drops, const char *self,
	unsigned int workers, size_t limit, uint64_t now_ns, uint64_t real_ns);
/* api_loops_render() of @p rt now (control thread). */
char *api_loops_get(struct nrf_rt *rt, size_t limit);

/*
 * GET /dpdk (docs/rest-api.md, "DPDK"): the DPDK transport's counters as
 * JSON: per worker @p dp[0..@p n) (entries with !polled are skipped; NULL
 * or n == 0: not on DPDK), the port's counters (from the first polled
 * worker) and its @p n_xs extended counters @p xs. A malloc'd string, NULL
 * without memory. Pure: tested without a runtime.
 */
char *api_dpdk_render(const struct nrf_rt_dp_stats *dp, unsigned int n,
	const struct nrf_tp_dpdk_xstat *xs, unsigned int n_xs);
/* api_dpdk_render() of @p rt now (control thread). */
char *api_dpdk_get(struct nrf_rt *rt);

#ifdef __cplusplus
}
#endif

#endif /* NRF_API_INT_H */
