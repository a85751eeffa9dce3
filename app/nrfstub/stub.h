/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFSTUB_STUB_H
#define NRFSTUB_STUB_H

/*
 * Internal interfaces of nrfstub, shared by its translation units:
 *   nrfstub.c   command line, epoll loop, connections, HTTP/2 glue, timers
 *   stub_api.c  NRF API and control API handlers, profile store
 *   stub_rec.c  request recording ring
 *   stub_util.c blobs, string builder, URL decoding
 *
 * Everything runs on the single event-loop thread; nothing here is
 * thread-safe and nothing needs to be.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <nghttp2/nghttp2.h>
#include <openssl/evp.h>

#include "nrf_list.h"

#define STUB_MODULE "nrfstub"
#define STUB_MAX_BODY (1u << 20)	/* request body limit; over it: 413 */
#define STUB_MAX_HDR_BYTES (64u << 10)	/* header block limit; over it: RST */
#define STUB_MAX_STREAMS 1000		/* SETTINGS_MAX_CONCURRENT_STREAMS */
#define STUB_REC_KEEP 1000		/* recorded requests kept */
#define STUB_REC_BODY_MAX 4096		/* body bytes kept per record */
#define STUB_MAX_SUBS 100000		/* subscriptions stored */
#define STUB_VALIDITY_PERIOD 3600

/*
 * Reference-counted immutable byte string, used for response bodies so a
 * cached discovery answer or profile can be sent on many streams without
 * copying. ref == 0 marks a static blob that is never freed.
 */
struct blob {
	uint32_t ref;
	size_t len;
	char *data;
};

/* New blob of @p len uninitialised bytes (plus a NUL); NULL on ENOMEM. */
struct blob *blob_alloc(size_t len);
/* Blob owning malloc'd @p s (freed on last put, also on failure). */
struct blob *blob_take(char *s, size_t len);
struct blob *blob_copy(const char *s, size_t len);
void blob_put(struct blob *b);

static inline struct blob *
blob_get(struct blob *b)
{
	if (b != NULL && b->ref != 0)
		b->ref++;
	return b;
}

/*
 * Growable string builder. Allocation failure sets @c oom and turns every
 * later call into a no-op; sb_blob() then returns NULL.
 */
struct sb {
	char *p;
	size_t len;
	size_t cap;
	int oom;
};

void sb_put(struct sb *b, const void *d, size_t n);
void sb_puts(struct sb *b, const char *s);
void sb_printf(struct sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append @p s as a quoted JSON string (escaped; bytes >= 0x80 copied). */
void sb_json_str(struct sb *b, const char *s, size_t n);
/* Hand the bytes over as a blob (builder left empty); NULL on ENOMEM. */
struct blob *sb_blob(struct sb *b);
void sb_fini(struct sb *b);

/*
 * Decode a URL query component (percent escapes, '+' as space) into @p out
 * (NUL-terminated). Returns the decoded length, or -1 if it does not fit.
 */
int url_decode(const char *s, size_t n, char *out, size_t outsz);

/* Offset/length into a stream's header buffer; len 0 with off 0 = absent. */
struct span {
	uint32_t off;
	uint32_t len;
};

struct hdr {
	struct span name;
	struct span value;
};

/* Headers in order, in an array that grows (the owner frees v). */
struct hdrs {
	struct hdr *v;
	uint32_t n;
	uint32_t cap;
};

/* Room for @p want headers in @p h: the capacity doubles from 16 until it
 * holds them. @return 0, or -1 out of memory (@p h unchanged). */
int hdrs_reserve(struct hdrs *h, uint32_t want);

enum fault_mode {
	FAULT_NONE = 0,
	FAULT_DELAY,
	FAULT_RESET,
	FAULT_CLOSE,
	FAULT_STATUS,
	FAULT_GARBAGE,
	FAULT_BLACKHOLE,
	FAULT_TRUNCATE,		/* the answer's headers and arg body bytes, then RST_STREAM */
	FAULT_DROP,		/* the answer's headers and arg body bytes, then TCP close */
	FAULT_BIGDROP,		/* an answer over arg bytes: TCP close instead */
	FAULT__N
};

struct fault {
	enum fault_mode mode;
	long arg;
	long count;		/* requests left to fault; -1 = until changed */
	long hold;		/* FAULT_BIGDROP: ms the other answers wait */
	int dropped;		/* FAULT_BIGDROP: a connection was dropped */
	int mute;		/* FAULT_BIGDROP: nothing more is written on a
				 * dropped connection (answers made in the same
				 * read, the PING ACK): what Open5GS does */
	struct blob *body;	/* ProblemDetails for FAULT_STATUS */
};

const char *fault_name(enum fault_mode m);
/*
 * Parse "MODE[:ARG]" (or "bigdrop[:ARG[:HOLD]]") into @p f; -1 with a
 * message in @p err on error.
 */
int fault_parse(const char *s, struct fault *f, char *err, size_t errsz);
/* Check mode/arg, fill defaults and the status body; -1 + message. */
int fault_finish(struct fault *f, char *err, size_t errsz);

#define STREAM_F_CONTROL 0x01	/* /_stub/ path: no fault, no record */
#define STREAM_F_DONE 0x02	/* request fully received */
#define STREAM_F_RECORDED 0x04
#define STREAM_F_TIMER 0x08	/* on the delay list */
#define STREAM_F_ANSWERED 0x10	/* response submitted */
#define STREAM_F_CUT_DROP 0x20	/* at the cut: drop the connection, not the stream */

struct conn;

/*
 * One request stream. Pooled: the buffers keep their capacity between
 * uses so the steady state does not allocate per request.
 */
struct stream {
	struct nrf_list link;	/* in its connection's streams */
	struct stream *next;	/* the loop's pool of free streams */
	struct stream *tnext;	/* delay list, sorted by deadline */
	struct stream *tprev;
	struct conn *conn;
	int32_t id;
	uint32_t flags;

	/* request headers: names and values, NUL-terminated, in hbuf */
	char *hbuf;
	size_t hlen;
	size_t hcap;
	struct hdrs hv;		/* regular headers in order (recording only) */
	struct span method;
	struct span path;
	struct span authority;
	struct span scheme;
	struct span host;

	/* request body, first STUB_MAX_BODY bytes */
	char *body;
	size_t body_len;
	size_t body_cap;
	size_t body_total;
	EVP_MD_CTX *sha;	/* SHA-256 of the whole body (OpenSSL), kept
				 * with the stream for reuse; recording only */

	/* response */
	int status;
	const char *rctype;
	struct blob *rbody;
	size_t roff;
	size_t cut;		/* FAULT_TRUNCATE/DROP: body bytes + 1 to send; 0: all */
	char *location;
	const char *allow;
	uint64_t deadline_ns;
	char status_str[8];
	char clen_str[24];
};

static inline const char *
stream_str(const struct stream *s, struct span sp)
{
	return s->hbuf + sp.off;
}

/* Set the response of @p s (takes the reference on @p body). */
void stream_respond(struct stream *s, int status, const char *ctype,
	struct blob *body);
/* ProblemDetails response (application/problem+json). */
void stream_problem(struct stream *s, int status, const char *title,
	const char *cause, const char *detail);

/* Counters shown by GET /_stub/stats. */
struct stub_stats {
	uint64_t requests;
	uint64_t incomplete;
	uint64_t control;
	uint64_t conn_accepted;
	uint64_t conn_active;
	uint64_t streams_active;
	uint64_t faults[FAULT__N];
	uint64_t status[600];
	uint64_t started_ns;
};

struct rec;

struct recorder {
	struct rec *slots;
	uint32_t first;
	uint32_t count;
	uint64_t next_seq;
	uint64_t evicted;
	int enabled;
};

int rec_init(struct recorder *r, int enabled);
void rec_fini(struct recorder *r);
/* Record @p s (headers, body prefix, SHA-256). Never fails loudly. */
void rec_add(struct recorder *r, const struct stream *s, uint32_t conn_id,
	int complete, const char *fault, int64_t now_ms);
void rec_clear(struct recorder *r);
/* JSON array of records with seq > @p since, at most @p limit (newest). */
json_t *rec_dump(const struct recorder *r, uint64_t since, uint64_t limit);

struct profile;

/* The NRF's data: profiles, subscriptions, token settings. */
struct store {
	struct profile *v;
	size_t n;
	size_t cap;
	uint64_t gen;		/* bumped on every profile change */
	json_t *subs;		/* subscriptionId -> subscription */
	uint64_t sub_seq;
	json_t *token;		/* accessToken overrides from the file */
	uint64_t token_seq;
	struct disc_cache *cache;
};

int store_load(struct store *st, const char *file, char *err, size_t errsz);
void store_fini(struct store *st);

struct stub {
	const char *name;
	char idname[64];	/* name restricted to [A-Za-z0-9-] for ids */
	char listen_str[80];
	const char *link_host;	/* --link-host: Location/_links host; NULL: :authority */
	struct store store;
	struct recorder rec;
	struct fault fault;
	struct stub_stats stats;
	int64_t now_ms;		/* wall clock at the top of the loop turn */
	bool head_body;		/* --head-body: DATA on HEAD answers too */
	uint32_t max_streams;	/* SETTINGS_MAX_CONCURRENT_STREAMS (--max-streams) */
};

/* Route a non-control request and set its response. */
void api_handle(struct stub *st, struct stream *s);
/* Route a /_stub/ control request and set its response. */
void ctl_handle(struct stub *st, struct stream *s);

#endif /* NRFSTUB_STUB_H */
