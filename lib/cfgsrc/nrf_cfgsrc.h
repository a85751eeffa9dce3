/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_CFGSRC_H
#define NRF_CFGSRC_H

/**
 * @file
 * The configuration source "etcd": one document shared by a fleet of nrfwd
 * instances (docs/fleet.md, decisions 0029 and 0030).
 *
 * The shared document (generalOptions, forwardingOptions, nrfGrowth) is the
 * value of one etcd key; runtime (listen, management, transport, DPDK, TLS
 * files) stays in each instance's local file. The running document is the
 * two put together, loaded by nrf_cfg_load() exactly as a file would be,
 * then checked for restart-only settings (nrf_rt_restart_only()), compiled
 * (nrf_rt_snap_create()) and published (nrf_rt_publish()): the path of the
 * REST API and of the file. A document that fails any step is refused
 * whole; the instance keeps what it runs and says why in its status key.
 *
 * Threads of the source (control plane, never the request path):
 *  - the watcher: one revision-based watch of the key (a streaming POST,
 *    no polling), resumed from the last seen revision after a disconnect,
 *    read again when that revision was compacted; applies every change;
 *  - the reporter: a lease (TTL lease_ttl_s) kept alive every third of it,
 *    and the instance's status put under "<prefix>/instances/<id>" with
 *    that lease whenever it changes (prefix: the key without its last
 *    component). It is also what notices that etcd stopped answering.
 * Both reconnect with a capped exponential backoff (100 ms .. 2 s, with
 * jitter) over every endpoint. While etcd is unreachable the instance
 * serves with what it applied last.
 *
 * Configuration changes are serialised by the source's lock, which the
 * REST API takes too (struct nrf_api_source, nrf_cfgsrc_api_source()), so
 * a REST change of the runtime group and an etcd change never publish
 * over each other.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_etcd.h"
#include "nrf_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of the source. Strings are copied. */
struct nrf_cfgsrc_params {
	struct nrf_etcd_params etcd;  /**< endpoints, TLS, authentication */
	const char *key;              /**< e.g. "/nrfwd/<cluster>/config" */
	const char *instance_id;      /**< this instance's name in the fleet */
	const char *config_path;      /**< the local file (runtime only) */
	/**
	 * Cached copy of the last applied shared document, rewritten
	 * atomically after every apply; read at start when etcd is
	 * unreachable. NULL: no cache.
	 */
	const char *cache_path;
	const char *version;          /**< reported in the status ("nrfwd 0.1.0") */
	uint32_t lease_ttl_s;         /**< status key lease (0: 10 s) */
	/**
	 * Validation only (nrfwd-ctl check): nrf_cfgsrc_load() reads the key
	 * or the cached copy as nrfwd would, but writes no cached copy.
	 */
	bool read_only;
	/**
	 * Optional: the summary of the instance's loop table published with
	 * its status under "loops" (a JSON object's text, malloc'd; NULL:
	 * none), and in @p sig a value that changes when the summary does
	 * (counts, paths, drops). Called by the reporter thread at most every
	 * 2 s; the status is put again only when @p sig changed.
	 */
	char *(*loops_json)(struct nrf_rt *rt, uint64_t *sig);
};

/** The source's state, for readiness, metrics and tests. */
struct nrf_cfgsrc_state {
	bool up;                  /**< watch established and etcd answering */
	bool from_cache;          /**< running on the cached copy (not yet
				   *   confirmed by etcd) */
	int64_t applied_revision; /**< mod_revision of the document in use */
	int64_t seen_revision;    /**< mod_revision of the key seen last */
	uint64_t generation;      /**< generation published for it */
	double contact_age_s;     /**< seconds since etcd last answered
				   *   (-1: never) */
	uint64_t applied;         /**< documents applied from the store */
	uint64_t refused;         /**< documents refused */
	uint64_t reconnects;      /**< watch streams started again */
};

struct nrf_cfgsrc;

/**
 * Create the source (no thread, no connection yet).
 * @return NULL with @p err = NRF_EINVAL (no key, a key ending in '/', no
 *   instance id, bad endpoints), NRF_ENOMEM.
 * Control thread, before any other thread runs (libcurl's global init).
 */
struct nrf_cfgsrc *nrf_cfgsrc_create(const struct nrf_cfgsrc_params *p, int *err);

/**
 * The first configuration: the local file (runtime only: a shared group
 * in it is a problem) with the shared document read from etcd; when no
 * endpoint answers, or the stored document is refused, with the cached
 * copy (logged). @p problems lists every reason (pointers into the whole
 * document).
 * @return a snapshot of generation 1 (caller owns), or NULL with @p err =
 *   NRF_ECONFIG (file or document invalid, no usable cache), NRF_EIO (etcd
 *   unreachable and no cache), NRF_ENOENT (the key does not exist and no
 *   cache), NRF_ENOMEM. Control thread.
 */
struct nrf_cfg *nrf_cfgsrc_load(struct nrf_cfgsrc *s, struct nrf_cfg_problems *problems,
	int *err);

/**
 * Start the watcher and the reporter for runtime @p rt (which must outlive
 * the source's threads: nrf_cfgsrc_stop() before nrf_rt_free()).
 * @return 0 or NRF_ENOMEM. Control thread.
 */
int nrf_cfgsrc_start(struct nrf_cfgsrc *s, struct nrf_rt *rt);

/** Stop both threads (within about a second) and revoke the status lease
 *  (the status key goes at once). Control thread; idempotent. */
void nrf_cfgsrc_stop(struct nrf_cfgsrc *s);

/** Free (stopped first). NULL-safe. */
void nrf_cfgsrc_free(struct nrf_cfgsrc *s);

/** Current state. Any thread. */
void nrf_cfgsrc_state_get(struct nrf_cfgsrc *s, struct nrf_cfgsrc_state *out);

/* ------------------------------------------------------------------------ */
/* Management API hooks (lib/api's struct nrf_api_source, wired by app/)     */

/** Take / release the configuration lock (see above). */
void nrf_cfgsrc_lock(struct nrf_cfgsrc *s);
void nrf_cfgsrc_unlock(struct nrf_cfgsrc *s);

/**
 * A REST change of a shared group, validated and compiled by the caller
 * into @p next: its shared groups are written to etcd in one transaction
 * that succeeds only if the key's mod_revision is still the one this
 * instance saw last (the revision the change was based on). Call with the
 * lock held. @p ticket receives the new revision, for nrf_cfgsrc_wait().
 * @return 0, NRF_EAGAIN (the key moved on: conflict, nothing written),
 *   NRF_EIO (etcd unreachable; @p why says which endpoint and why),
 *   NRF_ENOMEM, NRF_EINVAL (refused by etcd, e.g. permission).
 */
int nrf_cfgsrc_write(struct nrf_cfgsrc *s, const struct nrf_cfg *next, int64_t *ticket,
	char *why, size_t why_cap);

/**
 * The shared document as stored in etcd at the revision this instance saw
 * last (its text as written, not re-emitted), and that revision in @p mod
 * (0: the key is absent). A REST change is applied to this text
 * (decision 0037) and written with nrf_cfgsrc_write_text(). @return
 * malloc'd text, or NULL (absent, not read yet, out of memory). Any thread.
 */
char *nrf_cfgsrc_stored(struct nrf_cfgsrc *s, int64_t *mod);

/**
 * nrf_cfgsrc_write() of a document already put together (@p text, @p len
 * bytes: the shared groups only), compare-and-swap on @p base (the
 * mod_revision the text was based on, from nrf_cfgsrc_stored()). Same
 * results and lock rule as nrf_cfgsrc_write().
 */
int nrf_cfgsrc_write_text(struct nrf_cfgsrc *s, const char *text, size_t len, int64_t base,
	int64_t *ticket, char *why, size_t why_cap);

/**
 * Wait up to @p ms for the watch to deliver revision @p ticket (without
 * the lock).
 * @return 0 (applied here), NRF_ECONFIG (refused here: @p problems, when
 *   not NULL, receives the reasons), NRF_ETIMEDOUT (not seen yet).
 */
int nrf_cfgsrc_wait(struct nrf_cfgsrc *s, int64_t ticket, uint32_t ms,
	struct nrf_cfg_problems *problems);

/**
 * A REST change of the runtime group: rewrite the local file with the
 * runtime group of @p next only (atomically). Lock held.
 * @return 0 or NRF_EIO (@p why set), NRF_ENOMEM.
 */
int nrf_cfgsrc_persist_runtime(struct nrf_cfgsrc *s, const struct nrf_cfg *next,
	char *why, size_t why_cap);

/** The source's part of /readyz as JSON text (malloc'd; NULL: ENOMEM). */
char *nrf_cfgsrc_status_json(struct nrf_cfgsrc *s);

/** The source's metrics, Prometheus text (malloc'd; NULL: ENOMEM). */
char *nrf_cfgsrc_metrics(struct nrf_cfgsrc *s);

/* ------------------------------------------------------------------------ */
/* Documents (pure; exported for unit tests and nrfwd-ctl)                   */

/**
 * The runtime group of a local file's text as compact JSON text
 * (malloc'd; "{}" when the file has none). A shared group in it
 * (generalOptions, forwardingOptions, nrfGrowth) is a problem.
 * @return NULL with @p err = NRF_EPARSE (not a JSON object), NRF_ECONFIG
 *   (shared group present; problems listed), NRF_ENOMEM.
 */
char *nrf_cfgsrc_local_runtime(const char *text, size_t len,
	struct nrf_cfg_problems *problems, int *err);

/**
 * The running document: shared document @p shared (@p len bytes) with
 * "runtime" set to @p runtime_json, as compact JSON text (malloc'd).
 * @return NULL with @p err = NRF_EPARSE (not a JSON object: one problem at
 *   ""), NRF_ECONFIG ("runtime" present in the shared document: it is per
 *   instance), NRF_ENOMEM.
 */
char *nrf_cfgsrc_compose(const char *shared, size_t len, const char *runtime_json,
	struct nrf_cfg_problems *problems, int *err);

/** The shared groups of @p cfg, indented JSON text (malloc'd; NULL: ENOMEM). */
char *nrf_cfgsrc_shared_of(const struct nrf_cfg *cfg, int *err);

/** "<prefix>/instances/" of @p key ("/nrfwd/c1/config" -> "/nrfwd/c1/instances/";
 *  malloc'd; NULL when the key has no '/' before its last component). */
char *nrf_cfgsrc_instances_prefix(const char *key);

#ifdef __cplusplus
}
#endif
#endif /* NRF_CFGSRC_H */
