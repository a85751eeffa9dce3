/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS decorator over any transport back-end (nrf_tp_tls.h).
 *
 * Why a BIO over the inner connection rather than a socket BIO: the inner
 * back-end may be lwIP, which has no descriptor. Why not a pair of memory
 * BIOs: they need two ciphertext buffers per connection (about 40 KiB, for
 * 10000 connections 400 MiB) and one more copy each way; a BIO whose read
 * and write are the inner connection's read() and writev() keeps OpenSSL's
 * own (released-when-idle) record buffers only, and still never touches a
 * socket API. HAProxy does the same over its transport layer.
 *
 * Edge-triggered contract: a TLS read reports NRF_EAGAIN only after the
 * inner read did, so the next inner event comes; OpenSSL's read-ahead
 * keeps whole records in its buffer and they are returned before any
 * further inner read. A write that the inner connection refused stays
 * pending inside OpenSSL; the caller retries with the same bytes on
 * NRF_TP_EV_OUT (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER: h2 may have moved
 * them, SSL_MODE_ENABLE_PARTIAL_WRITE: one record at a time).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_tls.h"

#define MOD "tls"

/* Client sessions kept per loop for resumption (name + address). */
#define SESS_SLOTS 64

struct nrf_tp_tls_ctx {
	SSL_CTX *ssl;
	bool server;
	atomic_uint refs;
	char *key; /* settings + file identities, for nrf_tp_tls_ctx_same() */
	char *paths[3];   /* certificate, key, CA files (NULL: not set) */
	char *files;      /* their identities when loaded (files_key()) */
	int64_t not_after; /* the certificate's notAfter, Unix seconds; 0: none */
};

struct sess_slot {
	struct nrf_tp_tls_ctx *ctx; /* referenced while the slot is used */
	struct nrf_tp_addr addr;
	char name[256];
	SSL_SESSION *sess;
	uint64_t used;
};

struct tls_loop {
	const struct nrf_tp_ops *in;
	struct nrf_tp_loop *il;
	struct nrf_tp_tls_ctx *next_ctx; /* armed by nrf_tp_tls_connect_next() */
	char next_name[256];
	struct sess_slot slots[SESS_SLOTS];
	uint64_t tick;
	struct nrf_tp_tls_stats st;
};

enum {
	S_TCP = 0,   /* client: TCP connect under way */
	S_HANDSHAKE, /* TLS handshake under way */
	S_OPEN,
	S_FAILED,
};

struct tls_conn {
	struct tls_loop *lp;
	struct nrf_tp_conn *ic;
	SSL *ssl;                /* NULL: cleartext pass-through */
	struct nrf_tp_tls_ctx *ctx;
	nrf_tp_event_fn fn;
	void *arg;
	uint8_t state;
	bool server;
	bool rd_wants_out;       /* SSL_read needs the inner connection writable */
	int ioerr;               /* last inner error seen by the BIO */
	struct nrf_tp_addr addr; /* client: where to (session cache key) */
	char name[256];          /* client: server name */
};

#define TC(c) ((struct tls_conn *)(void *)(c))
#define TL(l) ((struct tls_loop *)(void *)(l))

/* ------------------------------------------------------------------------ */
/* BIO over the inner connection                                             */

static BIO_METHOD *bio_meth;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;
static int ex_idx = -1;

static int
bio_write(BIO *b, const char *buf, int len)
{
	struct tls_conn *c = BIO_get_data(b);
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = (size_t)len};
	ssize_t n;

	BIO_clear_retry_flags(b);
	n = c->lp->in->writev(c->ic, &iov, 1);
	if (n > 0)
		return (int)n;
	if (n == NRF_EAGAIN) {
		BIO_set_retry_write(b);
		return -1;
	}
	c->ioerr = NRF_EIO;
	return -1;
}

static int
bio_read(BIO *b, char *buf, int len)
{
	struct tls_conn *c = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	n = c->lp->in->read(c->ic, buf, (size_t)len);
	if (n > 0)
		return (int)n;
	if (n == NRF_EAGAIN) {
		BIO_set_retry_read(b);
		return -1;
	}
	c->ioerr = n == NRF_ECLOSED ? NRF_ECLOSED : NRF_EIO;
	return n == NRF_ECLOSED ? 0 : -1;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static int
bio_destroy(BIO *b)
{
	(void)b;
	return 1;
}

static void
bio_setup(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "nrf_tp");

	if (m != NULL && BIO_meth_set_write(m, bio_write) == 1 &&
		BIO_meth_set_read(m, bio_read) == 1 && BIO_meth_set_ctrl(m, bio_ctrl) == 1 &&
		BIO_meth_set_create(m, bio_create) == 1 &&
		BIO_meth_set_destroy(m, bio_destroy) == 1)
		bio_meth = m;
	else
		BIO_meth_free(m);
	ex_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */

static const unsigned char alpn_h2[] = {2, 'h', '2'};

static int
alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen,
	const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)s;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)(uintptr_t)out, outlen, alpn_h2,
		    sizeof(alpn_h2), in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
	return SSL_TLSEXT_ERR_OK;
}

static void sess_store(struct tls_conn *c, SSL_SESSION *sess);

static int
new_session(SSL *s, SSL_SESSION *sess)
{
	struct tls_conn *c = SSL_get_ex_data(s, ex_idx);

	if (c == NULL)
		return 0;
	sess_store(c, sess);
	return 1; /* the reference is ours */
}

static bool
set(const char *s)
{
	return s != NULL && *s != '\0';
}

/* One "field=value;" with the file's identity, for nrf_tp_tls_ctx_same(). */
static void
key_add(char *key, size_t cap, const char *field, const char *v, bool file)
{
	size_t n = strlen(key);
	struct stat st;

	if (!set(v))
		v = "";
	if (file && *v != '\0' && stat(v, &st) == 0)
		snprintf(key + n, cap - n, "%s=%s@%lld.%ld.%lld;", field, v,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size);
	else
		snprintf(key + n, cap - n, "%s=%s;", field, v);
}

/* The identity of each file of @p paths (path, mtime, size, inode): a file
 * rewritten in place or replaced by a rename gives another text. */
static void
files_key(char *const *paths, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < 3; i++) {
		struct stat st;

		if (paths[i] == NULL)
			continue;
		if (stat(paths[i], &st) != 0)
			memset(&st, 0, sizeof(st));
		snprintf(out + n, cap - n, "%s@%lld.%ld.%lld.%llu;", paths[i],
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size,
			(unsigned long long)st.st_ino);
		n = strlen(out);
	}
}

static const char *
ssl_reason(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

	return r != NULL ? r : "unknown OpenSSL error";
}

static int
file_readable(const char *what, const char *path, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		snprintf(why, cap, "%s %s: %s", what, path, strerror(errno));
		return NRF_ECONFIG;
	}
	fclose(f);
	return 0;
}

static int
ctx_setup(struct nrf_tp_tls_ctx *t, const struct nrf_tp_tls_conf *cf, char *why, size_t cap)
{
	SSL_CTX *s = t->ssl;
	const char *key = set(cf->key_file) ? cf->key_file : cf->cert_file;

	SSL_CTX_set_min_proto_version(s, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(s, TLS1_3_VERSION);
	SSL_CTX_set_options(s, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
		(cf->server ? SSL_OP_CIPHER_SERVER_PREFERENCE : 0));
	SSL_CTX_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
		SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_read_ahead(s, 1);
	if (set(cf->cipher_suites) && SSL_CTX_set_ciphersuites(s, cf->cipher_suites) != 1) {
		snprintf(why, cap, "cipherSuites \"%s\": not accepted: %s", cf->cipher_suites,
			ssl_reason());
		return NRF_ECONFIG;
	}
	if (set(cf->ciphers) && SSL_CTX_set_cipher_list(s, cf->ciphers) != 1) {
		snprintf(why, cap, "ciphers \"%s\": not accepted: %s", cf->ciphers, ssl_reason());
		return NRF_ECONFIG;
	}
	/* A server's TLS 1.2 default: forward secrecy and AEAD only, no CBC
	 * (LUCKY13 and friends); "ciphers" replaces it. */
	if (!set(cf->ciphers) && cf->server &&
		SSL_CTX_set_cipher_list(s, NRF_TP_TLS_SERVER_CIPHERS) != 1) {
		snprintf(why, cap, "default ciphers: %s", ssl_reason());
		return NRF_ECONFIG;
	}
	if (set(cf->groups) && SSL_CTX_set1_groups_list(s, cf->groups) != 1) {
		snprintf(why, cap, "groups \"%s\": not accepted: %s", cf->groups, ssl_reason());
		return NRF_ECONFIG;
	}
	if (set(cf->cert_file)) {
		if (file_readable("certFile", cf->cert_file, why, cap) != 0 ||
			file_readable("keyFile", key, why, cap) != 0)
			return NRF_ECONFIG;
		if (SSL_CTX_use_certificate_chain_file(s, cf->cert_file) != 1) {
			snprintf(why, cap, "certFile %s: cannot load: %s", cf->cert_file,
				ssl_reason());
			return NRF_ECONFIG;
		}
		if (SSL_CTX_use_PrivateKey_file(s, key, SSL_FILETYPE_PEM) != 1) {
			if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH)
				snprintf(why, cap, "keyFile %s: does not match certFile %s", key,
					cf->cert_file);
			else
				snprintf(why, cap, "keyFile %s: cannot load: %s", key, ssl_reason());
			return NRF_ECONFIG;
		}
		if (SSL_CTX_check_private_key(s) != 1) {
			snprintf(why, cap, "keyFile %s: does not match certFile %s: %s", key,
				cf->cert_file, ssl_reason());
			return NRF_ECONFIG;
		}
	} else if (cf->server) {
		snprintf(why, cap, "certFile: missing");
		return NRF_ECONFIG;
	}
	if (set(cf->ca_file)) {
		if (file_readable("caFile", cf->ca_file, why, cap) != 0)
			return NRF_ECONFIG;
		if (SSL_CTX_load_verify_locations(s, cf->ca_file, NULL) != 1) {
			snprintf(why, cap, "caFile %s: cannot load: %s", cf->ca_file, ssl_reason());
			return NRF_ECONFIG;
		}
	} else if (!cf->server && SSL_CTX_set_default_verify_paths(s) != 1) {
		snprintf(why, cap, "caFile: the system CA store does not load: %s", ssl_reason());
		return NRF_ECONFIG;
	}
	if (cf->server) {
		static const unsigned char sid[] = "nrfwd";

		if (cf->verify_client) {
			STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cf->ca_file);

			if (names == NULL) {
				snprintf(why, cap, "caFile %s: no certificate names: %s",
					cf->ca_file, ssl_reason());
				return NRF_ECONFIG;
			}
			SSL_CTX_set_client_CA_list(s, names);
			SSL_CTX_set_verify(s, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
		}
		/* Stateless tickets only: no session cache lock shared by workers. */
		SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_session_id_context(s, sid, sizeof(sid) - 1);
		SSL_CTX_set_num_tickets(s, 1);
		/* A client that offers ALPN without h2 is refused (alert 120,
		 * no_application_protocol, RFC 7301 3.2); one that offers no
		 * ALPN gets no callback, completes the handshake and is a client
		 * of the listener's protocol, h2 (RFC 9113 3.3: prior knowledge;
		 * what TLS scanners and load balancers' health checks do). */
		SSL_CTX_set_alpn_select_cb(s, alpn_select, NULL);
	} else {
		SSL_CTX_set_verify(s, SSL_VERIFY_PEER, NULL);
		if (SSL_CTX_set_alpn_protos(s, alpn_h2, sizeof(alpn_h2)) != 0) {
			snprintf(why, cap, "ALPN: %s", ssl_reason());
			return NRF_ENOMEM;
		}
		SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_CLIENT |
			SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(s, new_session);
	}
	return 0;
}

struct nrf_tp_tls_ctx *
nrf_tp_tls_ctx_create(const struct nrf_tp_tls_conf *cf, char *why, size_t cap, int *err)
{
	struct nrf_tp_tls_ctx *t;
	char key[2048] = "";
	int rc;

	snprintf(why, cap, "out of memory");
	pthread_once(&bio_once, bio_setup);
	if (bio_meth == NULL || ex_idx < 0) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	t->server = cf->server;
	atomic_init(&t->refs, 1);
	ERR_clear_error();
	t->ssl = SSL_CTX_new(cf->server ? TLS_server_method() : TLS_client_method());
	if (t->ssl == NULL) {
		free(t);
		*err = NRF_ENOMEM;
		return NULL;
	}
	rc = ctx_setup(t, cf, why, cap);
	ERR_clear_error();
	if (rc == 0) {
		key_add(key, sizeof(key), "server", cf->server ? "1" : "0", false);
		key_add(key, sizeof(key), "cert", cf->cert_file, true);
		key_add(key, sizeof(key), "key", cf->key_file, true);
		key_add(key, sizeof(key), "ca", cf->ca_file, true);
		key_add(key, sizeof(key), "verify", cf->verify_client ? "1" : "0", false);
		key_add(key, sizeof(key), "suites", cf->cipher_suites, false);
		key_add(key, sizeof(key), "ciphers", cf->ciphers, false);
		key_add(key, sizeof(key), "groups", cf->groups, false);
		t->key = strdup(key);
		if (t->key == NULL)
			rc = NRF_ENOMEM;
	}
	if (rc == 0) {
		const char *p[3] = {cf->cert_file, cf->key_file, cf->ca_file};
		X509 *x = SSL_CTX_get0_certificate(t->ssl);
		struct tm tm;

		for (int i = 0; i < 3; i++) {
			if (set(p[i]) && (t->paths[i] = strdup(p[i])) == NULL)
				rc = NRF_ENOMEM;
		}
		files_key(t->paths, key, sizeof(key));
		if (rc == 0 && (t->files = strdup(key)) == NULL)
			rc = NRF_ENOMEM;
		if (x != NULL && ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
			t->not_after = (int64_t)timegm(&tm);
	}
	if (rc != 0) {
		SSL_CTX_free(t->ssl);
		free(t->key);
		free(t->files);
		for (int i = 0; i < 3; i++)
			free(t->paths[i]);
		free(t);
		*err = rc;
		return NULL;
	}
	why[0] = '\0';
	*err = 0;
	return t;
}

void
nrf_tp_tls_ctx_ref(struct nrf_tp_tls_ctx *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void
nrf_tp_tls_ctx_free(struct nrf_tp_tls_ctx *c)
{
	if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	SSL_CTX_free(c->ssl);
	free(c->key);
	free(c->files);
	for (int i = 0; i < 3; i++)
		free(c->paths[i]);
	free(c);
}

bool
nrf_tp_tls_ctx_files_changed(const struct nrf_tp_tls_ctx *c)
{
	char now[2048];

	if (c == NULL || c->files == NULL)
		return false;
	files_key(c->paths, now, sizeof(now));
	return strcmp(now, c->files) != 0;
}

int64_t
nrf_tp_tls_ctx_not_after(const struct nrf_tp_tls_ctx *c)
{
	return c != NULL ? c->not_after : 0;
}

bool
nrf_tp_tls_ctx_same(const struct nrf_tp_tls_ctx *a, const struct nrf_tp_tls_ctx *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a == b || strcmp(a->key, b->key) == 0;
}

/* ------------------------------------------------------------------------ */
/* Client session cache (per loop)                                           */

static struct sess_slot *
sess_find(struct tls_loop *lp, const struct nrf_tp_tls_ctx *ctx, const char *name,
	const struct nrf_tp_addr *a)
{
	for (unsigned int i = 0; i < SESS_SLOTS; i++) {
		struct sess_slot *s = &lp->slots[i];

		if (s->sess != NULL && s->ctx == ctx && memcmp(&s->addr, a, sizeof(*a)) == 0 &&
			strcmp(s->name, name) == 0)
			return s;
	}
	return NULL;
}

static void
slot_clear(struct sess_slot *s)
{
	SSL_SESSION_free(s->sess);
	nrf_tp_tls_ctx_free(s->ctx);
	memset(s, 0, sizeof(*s));
}

static void
sess_store(struct tls_conn *c, SSL_SESSION *sess)
{
	struct tls_loop *lp = c->lp;
	struct sess_slot *s = sess_find(lp, c->ctx, c->name, &c->addr);

	if (s == NULL) {
		s = &lp->slots[0];
		for (unsigned int i = 0; i < SESS_SLOTS && s->sess != NULL; i++) {
			if (lp->slots[i].sess == NULL || lp->slots[i].used < s->used)
				s = &lp->slots[i];
		}
		if (s->sess != NULL)
			slot_clear(s);
		nrf_tp_tls_ctx_ref(c->ctx);
		s->ctx = c->ctx;
		s->addr = c->addr;
		snprintf(s->name, sizeof(s->name), "%s", c->name);
	} else {
		SSL_SESSION_free(s->sess);
	}
	s->sess = sess;
	s->used = ++lp->tick;
}

/* ------------------------------------------------------------------------ */
/* Connections                                                               */

static void
deliver(struct tls_conn *c, unsigned int ev)
{
	if (c->fn != NULL)
		c->fn(c->arg, ev); /* may close c: nothing after this */
}

static void
hs_failed(struct tls_conn *c, int ssl_err)
{
	char peer[80] = "";
	long vr = SSL_get_verify_result(c->ssl);
	const char *r;

	c->lp->in->peer_name(c->ic, peer, sizeof(peer));
	if (vr != X509_V_OK)
		r = X509_verify_cert_error_string(vr);
	else if (ssl_err == SSL_ERROR_SSL)
		r = ssl_reason();
	else if (c->ioerr == NRF_ECLOSED)
		r = "connection closed by the other end";
	else
		r = "connection error";
	if (c->server)
		NRF_LOG_RL(WARN, MOD, "handshake with client %s failed: %s", peer, r);
	else
		NRF_LOG_RL(WARN, MOD, "handshake with %s (%s) failed: %s", c->name, peer, r);
	ERR_clear_error();
	c->lp->st.handshake_failures++;
	c->state = S_FAILED;
}

/* 0 done, NRF_EAGAIN waiting for the inner connection, NRF_EIO failed. */
static int
handshake(struct tls_conn *c)
{
	int r = SSL_do_handshake(c->ssl);

	if (r != 1) {
		int e = SSL_get_error(c->ssl, r);

		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return NRF_EAGAIN;
		hs_failed(c, e);
		return NRF_EIO;
	}
	if (!c->server) {
		const unsigned char *p;
		unsigned int n;

		SSL_get0_alpn_selected(c->ssl, &p, &n);
		if (n != 0 && (n != 2 || memcmp(p, "h2", 2) != 0)) {
			NRF_LOG_RL(WARN, MOD, "handshake with %s: server chose ALPN \"%.*s\", "
				"not h2", c->name, (int)n, (const char *)p);
			c->lp->st.handshake_failures++;
			c->state = S_FAILED;
			return NRF_EIO;
		}
	}
	c->lp->st.handshakes++;
	if (SSL_session_reused(c->ssl))
		c->lp->st.resumed++;
	c->state = S_OPEN;
	return 0;
}

static void
tls_event(void *arg, unsigned int ev)
{
	struct tls_conn *c = arg;

	if (c->state == S_TCP) {
		if (c->lp->in->connect_result(c->ic) != 0) {
			c->state = S_FAILED;
			deliver(c, NRF_TP_EV_ERR);
			return;
		}
		c->state = S_HANDSHAKE;
	}
	if (c->state == S_HANDSHAKE) {
		int r = handshake(c);

		if (r == NRF_EAGAIN)
			return;
		/* Done: the owner writes and reads now (records may already
		 * wait behind the handshake); failed: it reads the error. */
		deliver(c, r == 0 ? NRF_TP_EV_IN | NRF_TP_EV_OUT : NRF_TP_EV_ERR);
		return;
	}
	if (c->state == S_OPEN && (ev & NRF_TP_EV_OUT) && c->rd_wants_out) {
		c->rd_wants_out = false;
		ev |= NRF_TP_EV_IN;
	}
	deliver(c, ev);
}

static struct tls_conn *
conn_new(struct tls_loop *lp, struct nrf_tp_conn *ic, struct nrf_tp_tls_ctx *ctx, bool server)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	BIO *b;

	if (c == NULL)
		return NULL;
	c->lp = lp;
	c->ic = ic;
	c->server = server;
	if (ctx == NULL)
		return c;
	c->ssl = SSL_new(ctx->ssl);
	b = BIO_new(bio_meth);
	if (c->ssl == NULL || b == NULL) {
		BIO_free(b);
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	BIO_set_data(b, c);
	SSL_set_bio(c->ssl, b, b);
	SSL_set_ex_data(c->ssl, ex_idx, c);
	nrf_tp_tls_ctx_ref(ctx);
	c->ctx = ctx;
	c->state = server ? S_HANDSHAKE : S_TCP;
	if (server)
		SSL_set_accept_state(c->ssl);
	else
		SSL_set_connect_state(c->ssl);
	lp->in->set_handler(ic, tls_event, c);
	return c;
}

static void
conn_free(struct tls_conn *c)
{
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	nrf_tp_tls_ctx_free(c->ctx);
	free(c);
}

struct nrf_tp_conn *
nrf_tp_tls_server(struct nrf_tp_loop *loop, struct nrf_tp_conn *inner,
	struct nrf_tp_tls_ctx *ctx, int *err)
{
	struct tls_loop *lp = TL(loop);
	struct tls_conn *c;

	if (ctx != NULL && !ctx->server) {
		lp->in->close(inner);
		*err = NRF_EINVAL;
		return NULL;
	}
	c = conn_new(lp, inner, ctx, true);
	if (c == NULL) {
		lp->in->close(inner);
		*err = NRF_ENOMEM;
		return NULL;
	}
	*err = 0;
	return (struct nrf_tp_conn *)(void *)c;
}

int
nrf_tp_tls_connect_next(struct nrf_tp_loop *loop, struct nrf_tp_tls_ctx *ctx,
	const char *server_name)
{
	struct tls_loop *lp = TL(loop);
	size_t n = server_name != NULL ? strlen(server_name) : 0;

	if (ctx == NULL || ctx->server || n == 0 || n >= sizeof(lp->next_name))
		return NRF_EINVAL;
	lp->next_ctx = ctx;
	memcpy(lp->next_name, server_name, n + 1);
	return 0;
}

static bool
is_ip(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int
client_setup(struct tls_conn *c, const char *name)
{
	struct sess_slot *s;

	snprintf(c->name, sizeof(c->name), "%s", name);
	SSL_set_hostflags(c->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (is_ip(name)) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), name) != 1)
			return NRF_EINVAL;
	} else if (SSL_set_tlsext_host_name(c->ssl, name) != 1 || SSL_set1_host(c->ssl, name) != 1) {
		return NRF_EINVAL;
	}
	s = sess_find(c->lp, c->ctx, c->name, &c->addr);
	if (s != NULL) {
		s->used = ++c->lp->tick;
		SSL_set_session(c->ssl, s->sess);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                       */

static struct nrf_tp_loop *
tls_loop_create(int *err)
{
	*err = NRF_EINVAL; /* nrf_tp_tls_loop_create() */
	return NULL;
}

struct nrf_tp_loop *
nrf_tp_tls_loop_create(const struct nrf_tp_ops *inner, struct nrf_tp_loop *inner_loop, int *err)
{
	struct tls_loop *lp = calloc(1, sizeof(*lp));

	pthread_once(&bio_once, bio_setup);
	if (lp == NULL || bio_meth == NULL) {
		free(lp);
		*err = NRF_ENOMEM;
		return NULL;
	}
	lp->in = inner;
	lp->il = inner_loop;
	*err = 0;
	return (struct nrf_tp_loop *)(void *)lp;
}

void
nrf_tp_tls_loop_free(struct nrf_tp_loop *loop)
{
	struct tls_loop *lp = TL(loop);

	if (lp == NULL)
		return;
	for (unsigned int i = 0; i < SESS_SLOTS; i++) {
		if (lp->slots[i].sess != NULL)
			slot_clear(&lp->slots[i]);
	}
	free(lp);
}

void
nrf_tp_tls_stats_get(const struct nrf_tp_loop *loop, struct nrf_tp_tls_stats *out)
{
	const struct tls_loop *lp = (const struct tls_loop *)(const void *)loop;

	out->handshakes = __atomic_load_n(&lp->st.handshakes, __ATOMIC_RELAXED);
	out->resumed = __atomic_load_n(&lp->st.resumed, __ATOMIC_RELAXED);
	out->handshake_failures = __atomic_load_n(&lp->st.handshake_failures, __ATOMIC_RELAXED);
}

static int
tls_poll(struct nrf_tp_loop *loop, int timeout_ms)
{
	return TL(loop)->in->poll(TL(loop)->il, timeout_ms);
}

static void
tls_set_wake(struct nrf_tp_loop *loop, nrf_tp_wake_fn fn, void *ctx)
{
	TL(loop)->in->set_wake(TL(loop)->il, fn, ctx);
}

static void
tls_loop_wake(struct nrf_tp_loop *loop)
{
	TL(loop)->in->loop_wake(TL(loop)->il);
}

static struct nrf_tp_listener *
tls_listen(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int backlog,
	nrf_tp_event_fn fn, void *ctx, int *err)
{
	(void)loop;
	(void)addr;
	(void)backlog;
	(void)fn;
	(void)ctx;
	*err = NRF_EINVAL; /* listeners stay on the inner back-end */
	return NULL;
}

static int
tls_listener_addr(struct nrf_tp_listener *l, struct nrf_tp_addr *out)
{
	(void)l;
	(void)out;
	return NRF_EINVAL;
}

static void
tls_listener_close(struct nrf_tp_listener *l)
{
	(void)l;
}

static struct nrf_tp_conn *
tls_accept(struct nrf_tp_listener *l, int *err)
{
	(void)l;
	*err = NRF_EINVAL;
	return NULL;
}

static struct nrf_tp_conn *
tls_connect(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int *err)
{
	struct tls_loop *lp = TL(loop);
	struct nrf_tp_tls_ctx *ctx = lp->next_ctx;
	struct nrf_tp_conn *ic;
	struct tls_conn *c;

	lp->next_ctx = NULL;
	ic = lp->in->connect(lp->il, addr, err);
	if (ic == NULL)
		return NULL;
	c = conn_new(lp, ic, ctx, false);
	if (c == NULL) {
		lp->in->close(ic);
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->addr = *addr;
	if (ctx != NULL && client_setup(c, lp->next_name) != 0) {
		lp->in->close(ic);
		conn_free(c);
		*err = NRF_EINVAL;
		return NULL;
	}
	*err = 0;
	return (struct nrf_tp_conn *)(void *)c;
}

static int
tls_connect_result(struct nrf_tp_conn *tc)
{
	struct tls_conn *c = TC(tc);

	if (c->ssl == NULL)
		return c->lp->in->connect_result(c->ic);
	switch (c->state) {
	case S_OPEN:
		return 0;
	case S_FAILED:
		return NRF_EIO;
	default:
		return NRF_EAGAIN;
	}
}

static void
tls_set_handler(struct nrf_tp_conn *tc, nrf_tp_event_fn fn, void *ctx)
{
	struct tls_conn *c = TC(tc);

	if (c->ssl == NULL) {
		c->lp->in->set_handler(c->ic, fn, ctx); /* cleartext: no detour */
		return;
	}
	c->fn = fn;
	c->arg = ctx;
}

/* In place only through a cleartext connection of a transport that reads
 * in place (the DPDK back-end); 0 otherwise: the caller reads. */
static ssize_t
tls_read_ref(struct nrf_tp_conn *tc, const void **data)
{
	struct tls_conn *c = TC(tc);

	if (c->ssl == NULL && c->lp->in->read_ref != NULL)
		return c->lp->in->read_ref(c->ic, data);
	return 0;
}

static ssize_t
tls_read(struct nrf_tp_conn *tc, void *buf, size_t cap)
{
	struct tls_conn *c = TC(tc);
	int r, e;

	if (c->ssl == NULL)
		return c->lp->in->read(c->ic, buf, cap);
	if (c->state != S_OPEN)
		return c->state == S_FAILED ? NRF_EIO : NRF_EAGAIN;
	r = SSL_read(c->ssl, buf, (int)NRF_MIN(cap, (size_t)INT32_MAX));
	if (r > 0)
		return r;
	e = SSL_get_error(c->ssl, r);
	switch (e) {
	case SSL_ERROR_WANT_READ:
		return NRF_EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		c->rd_wants_out = true;
		return NRF_EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return NRF_ECLOSED;
	default:
		ERR_clear_error();
		c->state = S_FAILED;
		return c->ioerr == NRF_ECLOSED ? NRF_ECLOSED : NRF_EIO;
	}
}

static ssize_t
tls_writev(struct nrf_tp_conn *tc, const struct iovec *iov, int iovcnt)
{
	struct tls_conn *c = TC(tc);
	size_t taken = 0;

	if (c->ssl == NULL)
		return c->lp->in->writev(c->ic, iov, iovcnt);
	if (c->state != S_OPEN)
		return c->state == S_FAILED ? NRF_EIO : NRF_EAGAIN;
	for (int i = 0; i < iovcnt; i++) {
		const char *p = iov[i].iov_base;
		size_t off = 0;

		while (off < iov[i].iov_len) {
			size_t want = NRF_MIN(iov[i].iov_len - off, (size_t)INT32_MAX);
			int r = SSL_write(c->ssl, p + off, (int)want);
			int e;

			if (r > 0) {
				off += (size_t)r;
				taken += (size_t)r;
				continue;
			}
			e = SSL_get_error(c->ssl, r);
			if (taken > 0 && (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ))
				return (ssize_t)taken;
			if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
				return NRF_EAGAIN;
			ERR_clear_error();
			c->state = S_FAILED;
			return taken > 0 ? (ssize_t)taken : NRF_EIO;
		}
	}
	return (ssize_t)taken;
}

static void
tls_close(struct nrf_tp_conn *tc)
{
	struct tls_conn *c = TC(tc);

	if (c->ssl != NULL && c->state == S_OPEN) {
		/* close_notify, one attempt: never waits */
		c->fn = NULL;
		if (SSL_shutdown(c->ssl) < 0)
			ERR_clear_error();
	}
	c->lp->in->close(c->ic);
	conn_free(c);
}

/* close_notify (one attempt, as in tls_close()), then the inner
 * transport's FIN; SSL_read() goes on until the client's close_notify. */
static void
tls_shutdown_write(struct nrf_tp_conn *tc)
{
	struct tls_conn *c = TC(tc);

	if (c->ssl != NULL) {
		if (c->state != S_OPEN)
			return;
		if (SSL_shutdown(c->ssl) < 0) {
			ERR_clear_error();
			return;
		}
	}
	if (c->lp->in->shutdown_write != NULL)
		c->lp->in->shutdown_write(c->ic);
}

static void
tls_peer_name(struct nrf_tp_conn *tc, char *buf, size_t cap)
{
	struct tls_conn *c = TC(tc);

	c->lp->in->peer_name(c->ic, buf, cap);
}

static void
tls_loop_free_op(struct nrf_tp_loop *loop)
{
	nrf_tp_tls_loop_free(loop);
}

static const struct nrf_tp_ops tls_ops = {
	.name = "tls",
	.loop_create = tls_loop_create,
	.loop_free = tls_loop_free_op,
	.poll = tls_poll,
	.set_wake = tls_set_wake,
	.loop_wake = tls_loop_wake,
	.listen = tls_listen,
	.listener_addr = tls_listener_addr,
	.listener_close = tls_listener_close,
	.accept = tls_accept,
	.connect = tls_connect,
	.connect_result = tls_connect_result,
	.set_handler = tls_set_handler,
	.read = tls_read,
	.read_ref = tls_read_ref,
	.writev = tls_writev,
	.close = tls_close,
	.shutdown_write = tls_shutdown_write,
	.peer_name = tls_peer_name,
};

const struct nrf_tp_ops *
nrf_tp_tls_ops(void)
{
	return &tls_ops;
}
