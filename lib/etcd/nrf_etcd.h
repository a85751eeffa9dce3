/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_ETCD_H
#define NRF_ETCD_H

/**
 * @file
 * A client of etcd's v3 API through its JSON gateway (HTTP/1.1 + JSON,
 * keys and values in base64, 64-bit numbers as strings), on libcurl
 * (decision 0029). Only what nrfwd needs: range (one key or a prefix),
 * put, compare-and-swap on a key's mod_revision, leases, and a
 * revision-based watch of one key.
 *
 * Endpoints: a comma-separated list of base URLs ("http://h1:2379,
 * https://h2:2379"). A request goes to the endpoint that answered last; on
 * a transport failure (refused, reset, timeout, TLS failure, 5xx from a
 * member without a leader) it tries each other endpoint once before it
 * fails with NRF_EIO. TLS: the CA file verifies the members, a client
 * certificate and key authenticate nrfwd (etcd's --client-cert-auth).
 * Authentication: with a user and password, a token is fetched from
 * /v3/auth/authenticate and sent in the Authorization header; it is
 * fetched again once when a request is refused as unauthenticated.
 *
 * Threads: a handle is used by one thread at a time (it holds a libcurl
 * easy handle); create one handle per thread. nrf_etcd_global_init() once
 * per process before any thread creates a handle. Nothing here is on the
 * request path: every call blocks for up to the request timeout per
 * endpoint.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of a client handle. Strings are copied. */
struct nrf_etcd_params {
	const char *endpoints;  /**< "http://127.0.0.1:2379,..." (required) */
	const char *cacert;     /**< CA file for https endpoints; NULL: system CAs */
	const char *cert;       /**< client certificate (PEM); NULL: none */
	const char *key;        /**< its private key (PEM); NULL: none */
	const char *user;       /**< etcd user; NULL: no authentication */
	const char *password;   /**< its password */
	uint32_t timeout_ms;    /**< per request and endpoint (0: 2000) */
	uint32_t connect_ms;    /**< connect timeout (0: 500) */
};

/** One key-value pair as etcd returns it. */
struct nrf_etcd_kv {
	char *key;              /**< NUL-terminated */
	char *value;            /**< value_len bytes, NUL-terminated */
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;
};

/** A range result: @c n pairs, and the store's revision when read. */
struct nrf_etcd_kvs {
	struct nrf_etcd_kv *v;
	size_t n;
	int64_t revision;       /**< header.revision */
};

/** One watch event. */
struct nrf_etcd_event {
	bool deleted;           /**< DELETE (kv.value empty) or PUT */
	struct nrf_etcd_kv kv;
};

struct nrf_etcd;

/** libcurl's global initialisation. Once, before any thread starts. */
int nrf_etcd_global_init(void);

/**
 * Create a handle. No connection is made yet.
 * @return NULL with @p err = NRF_EINVAL (no endpoint, an endpoint that is
 *   not http:// or https://, more than 16), NRF_ENOMEM.
 */
struct nrf_etcd *nrf_etcd_create(const struct nrf_etcd_params *p, int *err);

/** Free a handle (a watch in progress must have returned). NULL-safe. */
void nrf_etcd_free(struct nrf_etcd *e);

/** The endpoint used last (for logs and status). Never NULL. */
const char *nrf_etcd_endpoint(const struct nrf_etcd *e);

/**
 * The last failure, readable ("http://127.0.0.1:2379: Couldn't connect to
 * server"); "" after a success.
 */
const char *nrf_etcd_last_error(const struct nrf_etcd *e);

/**
 * Read @p key, or every key that starts with it when @p prefix.
 * @param out  filled (caller nrf_etcd_kvs_fini()s); n = 0 when absent.
 * @return 0, NRF_EIO (no endpoint answered), NRF_EPROTO (an answer that is
 *   not what the gateway sends), NRF_EINVAL (refused by etcd: permission,
 *   bad request), NRF_ENOMEM.
 */
int nrf_etcd_get(struct nrf_etcd *e, const char *key, bool prefix,
	struct nrf_etcd_kvs *out);

/** Free what a range or watch gave. NULL-safe. */
void nrf_etcd_kvs_fini(struct nrf_etcd_kvs *kvs);
void nrf_etcd_kv_fini(struct nrf_etcd_kv *kv);

/**
 * Put @p key = @p value (@p len bytes), attached to @p lease (0: none).
 * @param rev  if not NULL, receives the store's revision after the put.
 * @return 0, NRF_EIO, NRF_EPROTO, NRF_EINVAL (refused; e.g. unknown lease),
 *   NRF_ENOMEM.
 */
int nrf_etcd_put(struct nrf_etcd *e, const char *key, const void *value, size_t len,
	int64_t lease, int64_t *rev);

/**
 * Compare-and-swap: put @p key = @p value only if the key's mod_revision
 * is still @p mod_revision (0: only if the key does not exist), in one
 * etcd transaction.
 * @param rev  receives the revision of the put (0 on conflict).
 * @return 0 (written), NRF_EAGAIN (the key changed since @p mod_revision:
 *   nothing written), NRF_EIO, NRF_EPROTO, NRF_EINVAL, NRF_ENOMEM.
 */
int nrf_etcd_put_if(struct nrf_etcd *e, const char *key, const void *value, size_t len,
	int64_t mod_revision, int64_t *rev);

/** Grant a lease of @p ttl_s seconds. @return 0, NRF_EIO, NRF_EPROTO, NRF_EINVAL. */
int nrf_etcd_lease_grant(struct nrf_etcd *e, int64_t ttl_s, int64_t *id);

/**
 * Renew lease @p id once.
 * @return 0, NRF_ENOENT (the lease expired or was revoked: grant another
 *   and put again what was attached), NRF_EIO, NRF_EPROTO.
 */
int nrf_etcd_lease_keepalive(struct nrf_etcd *e, int64_t id);

/** Revoke lease @p id (its keys go at once). @return 0, NRF_ENOENT, NRF_EIO. */
int nrf_etcd_lease_revoke(struct nrf_etcd *e, int64_t id);

/**
 * Called for each batch of events of a watch (all of one revision or
 * more, in order), and once with @p n = 0 when etcd confirmed the watch
 * (the stream is live). The events and their strings are valid during the
 * call only. Return 0 to go on, anything else to end the watch (it is
 * returned by nrf_etcd_watch()).
 */
typedef int (nrf_etcd_watch_fn)(void *arg, const struct nrf_etcd_event *ev, size_t n);

/** True when a watch should end now (called with the watch's @p arg). */
typedef bool (nrf_etcd_stop_fn)(void *arg);

/**
 * Watch @p key from @p start_rev (every change with a revision >=
 * start_rev, then live ones) over one long-lived streaming POST
 * /v3/watch. Blocks until the stream ends, @p fn returns non-zero, or
 * @p stop returns true (checked about once a second, libcurl's progress
 * callback).
 * @param compact_rev  receives the compaction revision when etcd refused
 *   @p start_rev as compacted (then read the key again and watch from the
 *   revision of that read + 1).
 * @param idle_ms  the stream is given up (NRF_ETIMEDOUT) when nothing at
 *   all arrived for this long (0: never); etcd sends progress
 *   notifications only when asked, so callers renew lease keep-alives on
 *   another handle and set @p stop when the store stopped answering.
 *   A member that does not confirm the watch within the request timeout
 *   (one that accepts connections but hangs) is left for the next one.
 * @return what @p fn returned, 0 when stopped, NRF_EAGAIN (compacted:
 *   @p compact_rev set), NRF_EIO (no endpoint, or the stream broke),
 *   NRF_ETIMEDOUT, NRF_EPROTO, NRF_ENOMEM.
 */
int nrf_etcd_watch(struct nrf_etcd *e, const char *key, int64_t start_rev,
	nrf_etcd_watch_fn *fn, nrf_etcd_stop_fn *stop, void *arg, int64_t *compact_rev,
	uint32_t idle_ms);

/* ------------------------------------------------------------------------ */
/* Pure helpers (exported for unit tests)                                    */

/** Base64 (RFC 4648, padded) of @p len bytes: malloc'd text, NULL on ENOMEM. */
char *nrf_etcd_b64_encode(const void *data, size_t len);

/**
 * Decode base64 text @p s: malloc'd bytes (NUL-terminated, @p out_len set),
 * NULL when @p s is not base64 (err NRF_EPARSE) or on NRF_ENOMEM.
 */
char *nrf_etcd_b64_decode(const char *s, size_t *out_len, int *err);

/**
 * Parse one message of the watch stream (a JSON object with "result" or
 * "error") and call @p fn for its events.
 * @param created    set true when the message is the creation answer.
 * @param compact_rev set when the message says the start was compacted.
 * @return what @p fn returned (0 also for messages without events),
 *   NRF_EAGAIN (compacted), NRF_EPROTO (not a watch message, or "error"),
 *   NRF_ENOMEM.
 */
int nrf_etcd_watch_message(const char *text, size_t len, nrf_etcd_watch_fn *fn,
	void *arg, bool *created, int64_t *compact_rev);

#ifdef __cplusplus
}
#endif
#endif /* NRF_ETCD_H */
