/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_API_H
#define NRF_API_H

/**
 * @file
 * The management listener (docs/behaviour.md §6, §7): the REST configuration API, the
 * Prometheus metrics and the health checks, served over HTTP/1.1 by
 * libmicrohttpd on a thread of its own (the "API thread", part of the
 * control plane: never on the request path).
 *
 * Resources (docs/rest-api.md):
 *   GET               /nrf-configuration/v1/          every group
 *   GET, PUT, PATCH   /nrf-configuration/v1/generalOptions
 *   GET, PUT, PATCH   /nrf-configuration/v1/forwardingOptions
 *   GET, PUT, PATCH   /nrf-configuration/v1/nrfGrowth/nrfForwardingOptions
 *   GET, PUT, PATCH   /nrf-configuration/v1/runtime   (restart-only parts refused)
 *   GET               /metrics, /healthz, /readyz
 *
 * Readiness (/readyz) reports what the data path will do: 200 while it can
 * serve (local NRF not held down in every worker, or none configured,
 * configuration in use, workers running); 503 when the local NRF is held
 * down in every worker (requests then get NRF_Local_Unavailable), while
 * draining (nrf_api_drain()), or before the workers run. The JSON body
 * says why and lists every held-down upstream with since when. Worker
 * state is read from the upstream counters (nrf_rt_peer_stats_get():
 * relaxed loads, no lock on the data path).
 *
 * A PUT replaces a group, a PATCH merges into it (RFC 7396,
 * application/merge-patch+json). The change is applied to the whole running
 * document and loaded with the same loader as the file (nrf_cfg_load); a
 * valid document is checked for restart-only settings
 * (nrf_rt_restart_only), compiled into a snapshot (Via database, forwarding
 * table, peer addresses), persisted atomically to the configuration file,
 * and only then published to the workers (nrf_rt_publish). Any failure
 * leaves the running configuration and the file untouched.
 *
 * Threads: nrf_api_create()/nrf_api_free() on the control thread; the
 * handlers run on the API thread and use only the thread-safe control
 * functions of lib/rt. Requests are handled one at a time.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_rt.h"
#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default limit on a request body (PUT/PATCH), bytes. */
#define NRF_API_MAX_BODY (1024 * 1024)

/**
 * A configuration source other than the file (the fleet's etcd,
 * lib/cfgsrc), wired by the application. With one, a PUT or PATCH of a
 * shared group (generalOptions, forwardingOptions, nrfGrowth) is validated
 * and compiled here as always, then written to the source instead of
 * being published: every instance, this one included, applies it from the
 * source. The answer is 200 once this instance applied it (within
 * settle_ms), 409 when the source moved on since the revision the change
 * was based on, 503 when the source cannot be reached, 400 when this
 * instance refused it after all. A change of runtime is applied here and
 * written to config_path (which then holds the runtime group only) by the
 * rules of a file without a source: 409 over a hand edit, only what the
 * file says plus the change; persist() when the file's document cannot
 * take the change. A reload of the file (nrf_api_reload_file()) takes its
 * runtime and keeps the running shared groups (decision 0037). Every
 * function is called on the API thread (lock and unlock also on the thread
 * of nrf_api_reload_file()).
 */
struct nrf_api_source {
	/** Serialise with the source's own applies (held from reading the
	 *  running document to writing or publishing). */
	void (*lock)(void *arg);
	void (*unlock)(void *arg);
	/** Write @p next's shared groups, compare-and-swap (lock held).
	 *  0 with @p ticket, NRF_EAGAIN conflict, NRF_EIO unreachable. */
	int (*write)(void *arg, const struct nrf_cfg *next, int64_t *ticket, char *why,
		size_t why_cap);
	/** Wait for @p ticket to be applied here (lock not held): 0,
	 *  NRF_ECONFIG (refused: @p problems), NRF_ETIMEDOUT. */
	int (*wait)(void *arg, int64_t ticket, uint32_t ms, struct nrf_cfg_problems *problems);
	/** Persist a runtime change whole (when the file's own document
	 *  cannot take it; see above). */
	int (*persist)(void *arg, const struct nrf_cfg *next, char *why, size_t why_cap);
	/** JSON object text for /readyz "configSource" (malloc'd or NULL). */
	char *(*status_json)(void *arg);
	/** Prometheus text appended to /metrics (malloc'd or NULL). */
	char *(*metrics)(void *arg);
	/** Optional (NULL: changes are written whole by write()). The shared
	 *  document as stored at the revision seen last, @p mod that revision
	 *  (malloc'd, or NULL when unknown); a change is applied to it ... */
	char *(*stored)(void *arg, int64_t *mod);
	/** ... and written with a compare-and-swap on @p base (results as
	 *  write()). */
	int (*write_text)(void *arg, const char *text, size_t len, int64_t base, int64_t *ticket,
		char *why, size_t why_cap);
	void *arg;
};

/** Parameters of the management listener. */
struct nrf_api_params {
	/** Numeric IPv4 or IPv6 address to bind ("127.0.0.1" when NULL). */
	const char *address;
	/** TCP port; 0 lets the kernel pick one (see nrf_api_addr()). */
	uint16_t port;
	/**
	 * Configuration file rewritten on every accepted change (temp file in
	 * the same directory, fsync, rename, fsync of the directory). NULL:
	 * changes are not persisted (tests only). With @p source it holds the
	 * runtime group only.
	 */
	const char *config_path;
	/**
	 * Bearer token required for PUT and PATCH ("Authorization: Bearer
	 * <token>"); NULL or "": none. Copied. Never echoed.
	 */
	const char *token;
	/** Body limit (0: NRF_API_MAX_BODY). */
	size_t max_body;
	/** Milliseconds a change waits for every worker to use it before it
	 *  is answered (0: 1000). The answer is 200 either way. */
	uint32_t settle_ms;
	/** Configuration source other than the file; NULL: the file. Must
	 *  outlive the API. */
	const struct nrf_api_source *source;
};

struct nrf_api;

/**
 * Start the management listener for runtime @p rt (which must outlive the
 * API; free the API before stopping the runtime).
 * @return NULL with @p err = NRF_EINVAL (bad address or parameters),
 *   NRF_EIO (cannot listen: address in use, ...), NRF_ENOMEM.
 */
struct nrf_api *nrf_api_create(const struct nrf_api_params *p, struct nrf_rt *rt,
	int *err);

/** The bound address (port 0 resolved). @return 0 or NRF_EINVAL. */
int nrf_api_addr(const struct nrf_api *api, struct nrf_tp_addr *out);

/**
 * The process is stopping (SIGTERM): from now on GET /readyz answers 503
 * with status "draining" (load balancers stop sending before the
 * listeners close), and PUT/PATCH are refused with 503 (no configuration
 * change while draining). Everything else is still served, so keep the
 * API until the runtime has drained (nrf_rt_join()), then free it. Any
 * thread; idempotent; NULL-safe.
 */
void nrf_api_drain(struct nrf_api *api);

/** Stop the listener (requests in progress finish first) and free. NULL-safe. */
void nrf_api_free(struct nrf_api *api);

/**
 * Read a bearer token from @p path: the file's content without trailing
 * white space. @return malloc'd token, or NULL with @p err = NRF_EIO (cannot
 * read; errno says why), NRF_EINVAL (empty, or bytes that cannot be in a token: controls,
 * spaces), NRF_ETOOBIG (over 4096 bytes), NRF_ENOMEM. Any thread.
 */
char *nrf_api_token_read(const char *path, int *err);

/**
 * Reload the configuration from the file @p path (SIGHUP, systemctl
 * reload): the path of a REST PUT of the whole document — load and validate
 * all of it (nrf_cfg_load_file()), refuse it when a restart-only setting
 * differs (nrf_rt_restart_only()), build the snapshot (Via database,
 * forwarding table, peer addresses: nrf_rt_snap_create()), publish it
 * (nrf_rt_publish()). All or nothing: on any failure the running
 * configuration stays. The file is read, never rewritten. A file whose
 * content is the running configuration publishes nothing (0, *@p gen
 * unchanged, not counted as a reload).
 *
 * Serialised with REST changes (the API's lock) and counted in its
 * counters (reloads, reload_failures, last apply time). Logs one line: the
 * generation applied, "unchanged", or why it was refused (the first
 * problem with its JSON pointer; restart-only settings by pointer).
 *
 * @param api   the management listener, or NULL when there is none (then
 *              nothing is counted; the caller serialises).
 * @param rt    the runtime.
 * @param path  the configuration file; with a configuration source
 *              (nrf_api_params.source) it holds runtime only, put
 *              together with the running shared groups.
 * @param gen   if not NULL, receives the generation in use afterwards.
 * @param why   if not NULL, receives a one-line reason on failure
 *              (@p why_cap bytes).
 * @return 0, NRF_EIO (cannot read), NRF_EPARSE (not JSON), NRF_ECONFIG
 *   (invalid, or a restart-only setting differs, or the snapshot cannot be
 *   built: identities, TLS files), NRF_ENOMEM. Control thread (the main
 *   thread: never the API thread).
 */
int nrf_api_reload_file(struct nrf_api *api, struct nrf_rt *rt, const char *path,
	uint64_t *gen, char *why, size_t why_cap);

/**
 * The document of GET /loops (docs/rest-api.md, "Loops") with at most
 * @p limit paths, the most frequent, as compact JSON text (malloc'd; NULL:
 * out of memory): what an instance publishes of its loops with its fleet
 * status. @p sig (may be NULL) receives a value that changes when the
 * counts, paths or drops do. Control threads.
 */
char *nrf_api_loops_json(struct nrf_rt *rt, size_t limit, uint64_t *sig);

/** Counters of the API itself (for tests; also exported as metrics). */
struct nrf_api_stats {
	uint64_t requests;         /**< HTTP requests answered */
	uint64_t reloads;          /**< changes applied (REST or file reload) */
	uint64_t reload_failures;  /**< PUT/PATCH or file reload refused:
				    *   invalid, restart-only, persistence or
				    *   internal failure */
};

void nrf_api_stats_get(const struct nrf_api *api, struct nrf_api_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* NRF_API_H */
