/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_TLS_H
#define NRF_TP_TLS_H

/**
 * @file
 * TLS (OpenSSL 3) as a decorator of any transport: the same code runs over
 * kernel sockets and over the DPDK port + lwIP.
 *
 * A TLS loop (nrf_tp_tls_loop_create()) wraps one loop of an inner back-end
 * (struct nrf_tp_ops + loop). Connections of the TLS loop are driven with
 * the ops of nrf_tp_tls_ops(); each is either a TLS connection or a
 * cleartext one (a plain pass-through to the inner connection), so one
 * HTTP/2 context serves both kinds side by side:
 *   - front: an inner connection accepted from an inner listener is wrapped
 *     by nrf_tp_tls_server() (TLS when given a server context);
 *   - upstream: ops->connect() opens a cleartext connection, or a TLS one
 *     when nrf_tp_tls_connect_next() armed it just before.
 *
 * A TLS connection does its handshake by itself, driven by the inner
 * connection's events: read()/writev() return NRF_EAGAIN until it is done.
 * A client connection reports "connected" (its first NRF_TP_EV_OUT,
 * connect_result() 0) only once the handshake has succeeded, and NRF_EIO
 * (NRF_TP_EV_ERR) when TCP or the handshake failed, so a bad certificate
 * counts as a failed connect. A server connection that fails its handshake
 * reports NRF_TP_EV_ERR; read() then returns NRF_EIO.
 *
 * OpenSSL reads and writes through a BIO whose read/write are the inner
 * connection's read()/writev() (no socket, no extra buffer or copy).
 *
 * Threads: contexts are created and freed on the control thread and
 * shared read-only by every worker (OpenSSL's SSL_CTX is thread-safe for
 * SSL_new()); a TLS loop and its connections belong to the loop's thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A server's TLS 1.2 ciphers when none are configured: ECDHE key exchange
 * with an AEAD cipher only (AES-GCM, ChaCha20-Poly1305), no CBC suite.
 */
#define NRF_TP_TLS_SERVER_CIPHERS "ECDHE+AESGCM:ECDHE+CHACHA20"

/** Settings of a TLS context. Strings are copied; NULL or "" = not set. */
struct nrf_tp_tls_conf {
	bool server;               /**< listener side (else client side) */
	const char *cert_file;     /**< PEM chain, leaf first (server: required) */
	const char *key_file;      /**< PEM private key; unset: cert_file */
	const char *ca_file;       /**< server: CA bundle for client certificates;
				    * client: CA bundle (unset: system store) */
	bool verify_client;        /**< server: require a client certificate (mTLS) */
	const char *cipher_suites; /**< TLS 1.3 suites (SSL_CTX_set_ciphersuites) */
	const char *ciphers;       /**< TLS 1.2 cipher list (SSL_CTX_set_cipher_list);
				    *   unset: a server uses NRF_TP_TLS_SERVER_CIPHERS,
				    *   a client OpenSSL's default */
	const char *groups;        /**< key exchange groups (SSL_CTX_set1_groups_list) */
};

/** A shared, reference-counted TLS context (an SSL_CTX and its settings). */
struct nrf_tp_tls_ctx;

/**
 * Build a context: TLS 1.2..1.3, ALPN "h2" only (server: a client that
 * offers no "h2", or no ALPN at all, gets the no_application_protocol
 * alert), the certificate and key loaded and checked against each other,
 * the CA bundle loaded. Client contexts verify the server's chain and name
 * and keep sessions for resumption (per TLS loop).
 * @param why  on failure, a one-line reason naming the file
 *             ("certFile /x.pem: cannot load: no start line").
 * @return a context holding one reference, or NULL with @p err =
 *   NRF_ECONFIG (a file does not load, key and certificate do not match,
 *   a cipher or group list is not accepted), NRF_ENOMEM.
 * Control thread (reads files).
 */
struct nrf_tp_tls_ctx *nrf_tp_tls_ctx_create(const struct nrf_tp_tls_conf *conf,
	char *why, size_t why_cap, int *err);

/** One more reference. Any thread. */
void nrf_tp_tls_ctx_ref(struct nrf_tp_tls_ctx *c);

/** Drop a reference; the last one frees. NULL-safe. Any thread. */
void nrf_tp_tls_ctx_free(struct nrf_tp_tls_ctx *c);

/**
 * True when both were built from the same settings and the same file
 * contents (path, size and modification time), so a connection pool may
 * keep using one in place of the other. NULL equals NULL only.
 */
bool nrf_tp_tls_ctx_same(const struct nrf_tp_tls_ctx *a, const struct nrf_tp_tls_ctx *b);

/**
 * Whether the certificate, key or CA file of @p c changed on disk since
 * @p c loaded them (path, modification time, size, inode: a file
 * rewritten in place or replaced by a rename). Control thread (stat(2)).
 * NULL: false.
 */
bool nrf_tp_tls_ctx_files_changed(const struct nrf_tp_tls_ctx *c);

/** The notAfter of @p c's own certificate, Unix seconds; 0: none (a client
 *  context without a certificate, or NULL). Any thread. */
int64_t nrf_tp_tls_ctx_not_after(const struct nrf_tp_tls_ctx *c);

/**
 * New TLS loop over @p inner_loop of back-end @p inner (both borrowed: the
 * caller polls, wakes and frees the inner loop as before).
 * @return NULL with @p err = NRF_ENOMEM.
 */
struct nrf_tp_loop *nrf_tp_tls_loop_create(const struct nrf_tp_ops *inner,
	struct nrf_tp_loop *inner_loop, int *err);

/** Free a TLS loop; its connections must be closed. NULL-safe. */
void nrf_tp_tls_loop_free(struct nrf_tp_loop *loop);

/**
 * The ops of TLS-loop connections: connect, connect_result, set_handler,
 * read, writev, close, peer_name. poll, set_wake and loop_wake act on the
 * inner loop. loop_create, listen and accept are not offered (NULL result,
 * NRF_EINVAL): listeners stay on the inner back-end, their connections are
 * wrapped with nrf_tp_tls_server(). Static table; any thread.
 */
const struct nrf_tp_ops *nrf_tp_tls_ops(void);

/**
 * Wrap inner connection @p inner (taken over: closed with the result, also
 * on failure) accepted on the inner back-end of @p loop. @p ctx: a server
 * context (TLS; the connection holds its own reference) or NULL
 * (cleartext). Set its handler with nrf_tp_tls_ops()->set_handler().
 * @return NULL with @p err = NRF_ENOMEM or NRF_EINVAL (@p ctx is a client
 *   context).
 */
struct nrf_tp_conn *nrf_tp_tls_server(struct nrf_tp_loop *loop, struct nrf_tp_conn *inner,
	struct nrf_tp_tls_ctx *ctx, int *err);

/**
 * Make the next ops->connect() on @p loop a TLS client connection with
 * client context @p ctx: SNI @p server_name (unless it is an IP address)
 * and the certificate checked against it (DNS name, or IP address). A
 * session from an earlier connection to the same name and address is
 * offered for resumption. The setting is used by exactly one connect()
 * (also a failing one). Loop thread.
 * @return 0, or NRF_EINVAL (@p ctx is NULL or a server context, or the
 *   name is empty or longer than 255 bytes).
 */
int nrf_tp_tls_connect_next(struct nrf_tp_loop *loop, struct nrf_tp_tls_ctx *ctx,
	const char *server_name);

/** Counters of one TLS loop (single writer: the loop's thread). */
struct nrf_tp_tls_stats {
	uint64_t handshakes;        /**< completed, both sides */
	uint64_t resumed;           /**< of which resumed sessions */
	uint64_t handshake_failures; /**< failed, both sides */
};

/** Relaxed reads of the counters of @p loop; any thread. */
void nrf_tp_tls_stats_get(const struct nrf_tp_loop *loop, struct nrf_tp_tls_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* NRF_TP_TLS_H */
