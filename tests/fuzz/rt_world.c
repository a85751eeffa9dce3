/* SPDX-License-Identifier: BSD-3-Clause */
/* See rt_world.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_frames.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_via.h"
#include "rt_int.h"
#include "rt_world.h"

#define LISTEN_PORT 8080
#define UP_PORT 8000
#define MAX_SEGMENTS 16
#define SLOTS 64
/* Turns of world_settle() before a transaction that never ends is a bug:
 * far more than the timers of the configuration below can take (request
 * timeout 1 s, probes every 10..40 ms). */
#define SETTLE_TURNS 20000

static const char *const up_names[UP_N] = {"local", "nrf-b", "nrf-c", "nrf-g"};

/* A stream of a canned upstream. */
struct up_stream {
	bool used;
	bool head;
	const char *body;
	size_t len;
	size_t off;
	char *via;        /* the request's via field lines, '\n' between them */
	size_t via_len;
	size_t via_cap;
	uint32_t n_via;
};

/* The remote end of one connection nrfwd opened to an upstream. */
struct upsrv {
	struct world *w;
	struct fake_conn *c;
	int up;
	uint8_t mode;
	nghttp2_session *s;       /* canned modes that speak HTTP/2 */
	bool closing;             /* GOAWAY sent: close once written */
	bool shut;                /* end of stream sent */
	const uint8_t *seg;       /* UP_SCRIPT: this connection's segment */
	size_t seg_len;
	size_t seg_off;
	size_t seg_lim;           /* the script may speak up to here */
	bool started;             /* nrfwd sent HEADERS: all of it may */
	bool spoke;               /* started, or a frame of it released */
	bool wrote;               /* nrfwd wrote something */
	struct h2f watch;         /* UP_SCRIPT: nrfwd's frames */
	struct up_stream slots[SLOTS];
	struct upsrv *next;
};

struct world {
	struct world_params p;
	struct nrf_rt *rt;
	struct rt_worker *wk;
	struct upsrv *srvs;
	const uint8_t *seg[MAX_SEGMENTS];
	size_t seg_len[MAX_SEGMENTS];
	unsigned int n_seg;
	unsigned int script_conns;
	struct fake_conn *front;
	bool front_gone;
	int32_t *delivered;
	size_t n_delivered;
	size_t cap_delivered;
	struct nrf_h2_stream **open;
	size_t n_open;
	size_t cap_open;
	uint8_t *up_log;
	size_t n_up_log;
	size_t cap_up_log;
};

/* The callbacks of rt_front_cbs carry the worker only: one world at a time. */
static struct world *cur;

void
world_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "world: %s:%d: check failed: %s\n", file, line, what);
	abort();
}

static void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	WORLD_CHECK(q != NULL);
	return q;
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */

static char *
config_doc(const struct world_params *p)
{
#define PEER "{\"apiVersion\": \"v1\", \"scheme\": \"http\", \"fqdn\": \"%s.fuzz.example\", " \
	"\"ipv4Address\": \"10.0.0.%d\", \"port\": %d, \"apiPrefix\": \"%s\", \"priority\": %d%s}"
	char b[512], c[512], g[512], local[160], growth[1024];
	size_t cap = 8192;
	char *doc = malloc(cap);

	WORLD_CHECK(doc != NULL);
	snprintf(b, sizeof(b), PEER, "nrf-b", 2, UP_PORT, "", 1, "");
	snprintf(c, sizeof(c), PEER, "nrf-c", 3, UP_PORT, "/c", 2, ", \"rewriteLinks\": true");
	snprintf(g, sizeof(g), PEER, "nrf-g", 4, UP_PORT, "", 1, "");
#undef PEER
	if (p->local)
		snprintf(local, sizeof(local),
			"\"localNrf\": {\"scheme\": \"http\", \"address\": \"10.0.0.1\", \"port\": %d},",
			UP_PORT);
	else
		snprintf(local, sizeof(local), "\"localNrf\": null,");
	if (p->growth)
		snprintf(growth, sizeof(growth),
			"\"nrfGrowth\": {\"nrfForwardingOptions\": {\"featureStatus\": \"ENABLED\", "
			"\"loopPreventionScope\": \"HOST\", \"nrfHostConfig\": {\"staticNrfConfigList\": "
			"[{\"nrfSetId\": \"set2.fuzz\", \"nrfHostConfigList\": [%s]}]}, "
			"\"errorResponses\": []}},", g);
	else
		growth[0] = '\0';
	snprintf(doc, cap,
		"{\"generalOptions\": {\"ocnrfHost\": \"nrf-a.fuzz.example\", \"ocnrfPort\": %d, "
		"\"nrfSetId\": \"set1.fuzz\", \"aliases\": [\"10.0.0.9:%d\"]},"
		"\"forwardingOptions\": {\"featureStatus\": \"ENABLED\", "
		"\"discoveryStatus\": \"ENABLED\", \"profileRetrievalStatus\": \"ENABLED\", "
		"\"subscriptionStatus\": \"ENABLED\", \"accessTokenStatus\": \"ENABLED\", "
		"\"forwardingTriggers\": {\"statusCodes\": {\"pattern\": \"^404$\"}, "
		"\"emptyDiscoveryResult\": true}, "
		"\"nrfRerouteOnResponseHttpStatusCodes\": {\"pattern\": \"^5[0-9]{2}$\"}, "
		"\"maxForwardAttempts\": 3, \"maxViaMembers\": 16, "
		"\"nrfHostConfig\": [%s, %s], \"errorResponses\": []},"
		"%s"
		"\"runtime\": {\"listen\": [{\"address\": \"127.0.0.1\", \"port\": %d, \"tls\": false}], "
		"%s"
		"\"management\": {\"address\": \"127.0.0.1\", \"port\": 0}, "
		"\"timeouts\": {\"connectMs\": 100, \"perTryMs\": %u, \"requestMs\": %u}, "
		"\"health\": {\"probeIntervalMs\": 10, \"probeIntervalMaxMs\": 40, "
		"\"probeTimeoutMs\": 50}, "
		"\"limits\": {\"maxConnections\": 8, \"maxConcurrentStreams\": %d, "
		"\"maxHeaderBytes\": %d, \"maxBodyBytes\": %d, \"peerQueueDepth\": %d%s%s}}}",
		LISTEN_PORT, LISTEN_PORT, b, c, growth, LISTEN_PORT, local,
		p->per_try_ms != 0 ? p->per_try_ms : 300, p->request_ms != 0 ? p->request_ms : 1000,
		p->small_limits ? 4 : 128, p->small_limits ? 1024 : 16384,
		p->small_limits ? 512 : 131072, p->small_limits ? 2 : 64,
		p->per_client != NULL ? ", \"perClient\": " : "",
		p->per_client != NULL ? p->per_client : "");
	return doc;
}

/* ------------------------------------------------------------------------ */
/* Canned upstreams (nghttp2 servers)                                        */

static const char body_data[] =
	"{\"validityPeriod\":3600,\"nfInstances\":[{\"nfInstanceId\":"
	"\"4947a69a-f61b-4bc1-b9da-47c9c5d14b64\",\"nfType\":\"AMF\",\"nfStatus\":\"REGISTERED\","
	"\"_links\":{\"self\":{\"href\":\"http://10.0.0.3:8000/c/nnrf-nfm/v1/nf-instances/"
	"4947a69a-f61b-4bc1-b9da-47c9c5d14b64\"}}}]}";
static const char body_empty[] = "{\"validityPeriod\":3600,\"nfInstances\":[]}";
static const char body_404[] =
	"{\"title\":\"Not Found\",\"status\":404,\"cause\":\"RESOURCE_NOT_FOUND\"}";
static const char body_503[] =
	"{\"title\":\"Service Unavailable\",\"status\":503,\"cause\":\"NF_CONGESTION\"}";

static struct up_stream *
slot_new(struct upsrv *u)
{
	for (unsigned int i = 0; i < SLOTS; i++) {
		struct up_stream *st = &u->slots[i];

		if (!st->used) {
			char *via = st->via;
			size_t cap = st->via_cap;

			memset(st, 0, sizeof(*st));
			st->via = via; /* kept for the next stream */
			st->via_cap = cap;
			st->used = true;
			return st;
		}
	}
	return NULL;
}

static ssize_t
body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *fl,
	nghttp2_data_source *src, void *ud)
{
	struct up_stream *st = src->ptr;
	size_t n = st->len - st->off;

	(void)s;
	(void)id;
	(void)ud;
	if (n > len)
		n = len;
	memcpy(buf, st->body + st->off, n);
	st->off += n;
	if (st->off == st->len)
		*fl |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#define NV(n, v)                                                               \
	{                                                                      \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v),      \
			NGHTTP2_NV_FLAG_NONE                                   \
	}

static void
answer(struct upsrv *u, int32_t id, struct up_stream *st)
{
	const char *status = "200", *ctype = "application/json";
	char clen[24];
	nghttp2_data_provider dp;

	switch (u->mode) {
	case UP_DATA:
		st->body = body_data;
		break;
	case UP_EMPTY:
		st->body = body_empty;
		break;
	case UP_404:
		status = "404";
		ctype = "application/problem+json";
		st->body = body_404;
		break;
	case UP_503:
		status = "503";
		ctype = "application/problem+json";
		st->body = body_503;
		break;
	case UP_RESET:
		nghttp2_submit_rst_stream(u->s, NGHTTP2_FLAG_NONE, id, NGHTTP2_INTERNAL_ERROR);
		return;
	case UP_GOAWAY:
		nghttp2_submit_goaway(u->s, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0);
		u->closing = true;
		return;
	default:
		return; /* silent */
	}
	st->len = strlen(st->body);
	snprintf(clen, sizeof(clen), "%zu", st->len);
	{
		nghttp2_nv nv[] = {
			NV(":status", status),
			NV("content-type", ctype),
			NV("content-length", clen),
			NV("x-fake-upstream", up_names[u->up]),
		};

		dp.source.ptr = st;
		dp.read_callback = body_read;
		WORLD_CHECK(nghttp2_submit_response(u->s, id, nv, sizeof(nv) / sizeof(nv[0]),
				    st->head ? NULL : &dp) == 0);
	}
}

/* Identities of the fuzz world (config_doc()): nrfwd's own and the peers'. */
struct ident {
	const char *host;
	uint16_t port;
	int up;  /* upstream index; -1: nrfwd itself */
};

static const struct ident idents[] = {
	{"nrf-a.fuzz.example", LISTEN_PORT, -1},
	{"10.0.0.9", LISTEN_PORT, -1},
	{"nrf-b.fuzz.example", UP_PORT, UP_B},
	{"10.0.0.2", UP_PORT, UP_B},
	{"nrf-c.fuzz.example", UP_PORT, UP_C},
	{"10.0.0.3", UP_PORT, UP_C},
	{"nrf-g.fuzz.example", UP_PORT, UP_G},
	{"10.0.0.4", UP_PORT, UP_G},
};

/* docs/via.md's matching rule read literally on one parsed member (as in
 * fuzz_via.c). */
static bool
ident_match(const struct nrf_via_member *m, const struct ident *id)
{
	struct nrf_slice h = m->host;

	if (m->port != id->port || (m->received_by.len > 0 && m->received_by.p[0] == '['))
		return false;
	if (h.len > 0 && h.p[h.len - 1] == '.')
		h.len--;
	if (h.len != strlen(id->host))
		return false;
	for (size_t i = 0; i < h.len; i++) {
		char c = h.p[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != id->host[i])
			return false;
	}
	return true;
}

/*
 * A request forwarded to peer @p u: nrfwd's own Via member is its last
 * field line, and the lines before it (the client's, unchanged) name
 * neither nrfwd (loop detection answers those itself) nor this peer (loop
 * prevention skips a peer already in Via), with at most maxViaMembers
 * members (16; more is the hop limit). Checked member by member when the
 * client's lines parse (the Via scan also passes lines the parser refuses,
 * docs/via.md: those members never match).
 */
static void
check_forwarded(struct upsrv *u, const struct up_stream *st)
{
	static struct nrf_via_member m[NRF_VIA_MAX_BYTES / 4 + 1];
	struct nrf_slice lines[1024];
	const char *own = u->w->wk->via_member;
	size_t n_lines = 0, n = 0, start = 0;

	WORLD_CHECK(st->n_via >= 1);
	for (size_t i = 0; i <= st->via_len; i++) {
		if (i == st->via_len || st->via[i] == '\n') {
			WORLD_CHECK(n_lines < sizeof(lines) / sizeof(lines[0]));
			lines[n_lines].p = st->via + start;
			lines[n_lines].len = i - start;
			n_lines++;
			start = i + 1;
		}
	}
	WORLD_CHECK(lines[n_lines - 1].len == strlen(own) &&
		memcmp(lines[n_lines - 1].p, own, strlen(own)) == 0);
	if (nrf_via_parse(lines, n_lines - 1, m, sizeof(m) / sizeof(m[0]), &n) != 0)
		return;
	WORLD_CHECK(n <= 16);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(idents) / sizeof(idents[0]); k++) {
			if ((idents[k].up == -1 || idents[k].up == u->up) &&
				ident_match(&m[i], &idents[k])) {
				fprintf(stderr, "world: %s got a request whose Via names %s:%u\n",
					up_names[u->up], idents[k].host, idents[k].port);
				WORLD_CHECK(!"a request forwarded into a loop");
			}
		}
	}
}

static int
up_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct upsrv *u = ud;
	struct up_stream *st;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = slot_new(u);
	if (st == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
	return 0;
}

static int
up_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct up_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

	(void)flags;
	(void)ud;
	if (st == NULL)
		return 0;
	if (nlen == 7 && memcmp(name, ":method", 7) == 0 && vlen == 4 &&
		memcmp(value, "HEAD", 4) == 0)
		st->head = true;
	if (nlen == 3 && memcmp(name, "via", 3) == 0) {
		if (st->via_len + vlen + 1 > st->via_cap) {
			st->via_cap = (st->via_len + vlen + 1) * 2;
			st->via = xrealloc(st->via, st->via_cap);
		}
		if (st->n_via++ > 0)
			st->via[st->via_len++] = '\n';
		memcpy(st->via + st->via_len, value, vlen);
		st->via_len += vlen;
	}
	return 0;
}

static int
up_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct upsrv *u = ud;
	struct up_stream *st;

	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
		!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (st == NULL)
		return 0;
	if (u->up != UP_LOCAL)
		check_forwarded(u, st);
	if (u->w->n_up_log == u->w->cap_up_log) {
		u->w->cap_up_log = u->w->cap_up_log * 2 + 16;
		u->w->up_log = xrealloc(u->w->up_log, u->w->cap_up_log);
	}
	u->w->up_log[u->w->n_up_log++] = (uint8_t)u->up;
	answer(u, f->hd.stream_id, st);
	return 0;
}

static int
up_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct up_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)code;
	(void)ud;
	if (st != NULL)
		st->used = false;
	return 0;
}

/*
 * nrfwd is a client of this upstream: whatever it sends must be valid
 * HTTP/2 and valid HTTP (nghttp2 checks both; header fields a client sent
 * nrfwd were checked by nrfwd's front the same way).
 */
static int
up_invalid_frame(nghttp2_session *s, const nghttp2_frame *f, int err, void *ud)
{
	(void)s;
	(void)ud;
	fprintf(stderr, "world: upstream got an invalid frame from nrfwd: type %u stream %d: %s\n",
		f->hd.type, f->hd.stream_id, nghttp2_strerror(err));
	WORLD_CHECK(!"nrfwd sent an upstream an invalid frame");
	return 0;
}

static nghttp2_session_callbacks *up_cbs;

static nghttp2_session *
up_session(struct upsrv *u)
{
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
	nghttp2_session *s;

	if (up_cbs == NULL) {
		WORLD_CHECK(nghttp2_session_callbacks_new(&up_cbs) == 0);
		nghttp2_session_callbacks_set_on_begin_headers_callback(up_cbs, up_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(up_cbs, up_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(up_cbs, up_frame_recv);
		nghttp2_session_callbacks_set_on_stream_close_callback(up_cbs, up_stream_close);
		nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(up_cbs,
			up_invalid_frame);
	}
	WORLD_CHECK(nghttp2_session_server_new(&s, up_cbs, u) == 0);
	WORLD_CHECK(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 1) == 0);
	return s;
}

static int
up_of(const struct nrf_tp_addr *a)
{
	if (a->family != 4 || a->port != UP_PORT || a->ip[0] != 10 || a->ip[1] != 0 ||
		a->ip[2] != 0 || a->ip[3] < 1 || a->ip[3] > UP_N)
		return -1;
	return a->ip[3] - 1;
}

/*
 * A script speaks once nrfwd sent a request on its connection (its bytes
 * may then answer it), or, on a connection that carries no request (a
 * health probe), once nothing else happens (world_settle()).
 */
static void
on_script_frame(void *arg, uint8_t type, uint8_t flags, int32_t id, const uint8_t *pl,
	size_t len)
{
	struct upsrv *u = arg;

	(void)flags;
	(void)id;
	(void)pl;
	(void)len;
	if (type == H2F_HEADERS) {
		u->started = u->spoke = true;
		u->seg_lim = u->seg_len;
	}
}

/* The end of the frame that starts at @p off of the segment (its end when
 * the rest is no whole frame header). */
static size_t
next_frame_end(const struct upsrv *u, size_t off)
{
	const uint8_t *p = u->seg + off;
	size_t left = u->seg_len - off, n;

	if (left < 9)
		return u->seg_len;
	n = 9 + ((size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2]);
	return n < left ? off + n : u->seg_len;
}

/*
 * Nothing else happens: each script that waits for a request says its
 * next frame (nrfwd holds a new connection's HEADERS until the upstream's
 * SETTINGS came: the script's first frame is usually those SETTINGS, and
 * the rest waits for the request it may answer). @return true if any.
 */
static bool
scripts_start(struct world *w)
{
	bool any = false;

	for (struct upsrv *u = w->srvs; u != NULL; u = u->next) {
		if (u->mode == UP_SCRIPT && u->wrote && !u->started && !u->shut &&
			u->seg_off == u->seg_lim && (u->seg_lim < u->seg_len || !u->spoke)) {
			u->seg_lim = next_frame_end(u, u->seg_off);
			u->spoke = true;
			any = true;
		}
	}
	return any;
}

static enum fake_connect
on_connect(void *arg, struct fake_conn *c, const struct nrf_tp_addr *a)
{
	struct world *w = arg;
	int up = up_of(a);
	struct upsrv *u;
	uint8_t mode;

	WORLD_CHECK(up >= 0); /* nrfwd connects only where it was told to */
	mode = w->p.up[up];
	if (mode == UP_REFUSE)
		return FAKE_REFUSE;
	if (mode == UP_SCRIPT && w->script_conns >= w->n_seg)
		return FAKE_REFUSE;
	u = calloc(1, sizeof(*u));
	WORLD_CHECK(u != NULL);
	u->w = w;
	u->c = c;
	u->up = up;
	u->mode = mode;
	if (mode == UP_SCRIPT) {
		h2f_init(&u->watch, 24 /* client preface */, on_script_frame, u);
		u->seg = w->seg[w->script_conns];
		u->seg_len = w->seg_len[w->script_conns];
		w->script_conns++;
	} else if (mode != UP_HANG) {
		u->s = up_session(u);
	}
	fake_conn_set_user(c, u);
	u->next = w->srvs;
	w->srvs = u;
	return FAKE_ACCEPT;
}

static void
upsrv_free(struct world *w, struct upsrv *u)
{
	struct upsrv **pp;

	for (pp = &w->srvs; *pp != u; pp = &(*pp)->next)
		;
	*pp = u->next;
	if (u->s != NULL)
		nghttp2_session_del(u->s);
	for (unsigned int i = 0; i < SLOTS; i++)
		free(u->slots[i].via);
	h2f_fini(&u->watch);
	fake_conn_release(u->c);
	free(u);
}

/* One upstream connection's turn. @return true when anything moved. */
static bool
upsrv_turn(struct world *w, struct upsrv *u)
{
	bool moved = false;
	const uint8_t *out;
	size_t n;

	out = fake_conn_out(u->c, &n);
	if (n > 0) {
		moved = true;
		u->wrote = true;
		if (u->mode == UP_SCRIPT)
			h2f_feed(&u->watch, out, n);
		if (u->s != NULL) {
			ssize_t rv = nghttp2_session_mem_recv(u->s, out, n);

			if (rv < 0)
				fprintf(stderr, "world: upstream session: %s\n", nghttp2_strerror((int)rv));
			WORLD_CHECK(rv >= 0);
		}
		fake_conn_take(u->c, n);
	}
	if (u->s != NULL && !u->shut) {
		const uint8_t *data;
		ssize_t len;

		while ((len = nghttp2_session_mem_send(u->s, &data)) > 0) {
			WORLD_CHECK(fake_conn_push(u->c, data, (size_t)len) == 0);
			moved = true;
		}
		WORLD_CHECK(len == 0);
		if (u->closing || (!nghttp2_session_want_read(u->s) &&
					  !nghttp2_session_want_write(u->s))) {
			fake_conn_shutdown(u->c);
			u->shut = true;
			moved = true;
		}
	}
	if (u->mode == UP_SCRIPT && !u->shut) {
		size_t left = u->seg_lim - u->seg_off;
		size_t k = w->p.chunk == 0 || w->p.chunk > left ? left : w->p.chunk;

		if (k > 0) {
			WORLD_CHECK(fake_conn_push(u->c, u->seg + u->seg_off, k) == 0);
			u->seg_off += k;
			moved = true;
		} else if (w->p.script_close && u->spoke && u->seg_off == u->seg_len) {
			fake_conn_shutdown(u->c);
			u->shut = true;
			moved = true;
		}
	}
	if (fake_conn_closed(u->c)) {
		upsrv_free(w, u);
		moved = true;
	}
	return moved;
}

/* ------------------------------------------------------------------------ */
/* Front                                                                     */

static void
open_del(struct world *w, struct nrf_h2_stream *st)
{
	for (size_t i = 0; i < w->n_open; i++) {
		if (w->open[i] == st) {
			w->open[i] = w->open[--w->n_open];
			return;
		}
	}
}

static void
wrap_on_request(struct nrf_h2_stream *st, int err)
{
	struct world *w = cur;

	if (w->n_delivered == w->cap_delivered) {
		w->cap_delivered = w->cap_delivered * 2 + 16;
		w->delivered = xrealloc(w->delivered, w->cap_delivered * sizeof(*w->delivered));
	}
	w->delivered[w->n_delivered++] = st->id;
	rt_front_cbs.on_request(st, err);
	if (st->user != NULL) {
		if (w->n_open == w->cap_open) {
			w->cap_open = w->cap_open * 2 + 16;
			w->open = xrealloc(w->open, w->cap_open * sizeof(*w->open));
		}
		w->open[w->n_open++] = st;
	}
}

static void
wrap_on_sent(struct nrf_h2_stream *st, size_t n)
{
	rt_front_cbs.on_sent(st, n);
}

static void
wrap_on_close(struct nrf_h2_stream *st, uint32_t code, int err)
{
	open_del(cur, st);
	rt_front_cbs.on_close(st, code, err);
}

static void
wrap_conn_close(struct nrf_h2_conn *c, int err)
{
	cur->front_gone = true;
	rt_front_cbs.on_conn_close(c, err);
}

static const struct nrf_h2_cbs wrap_cbs = {
	.on_request = wrap_on_request,
	.on_sent = wrap_on_sent,
	.on_close = wrap_on_close,
	.on_conn_close = wrap_conn_close,
};

struct fake_conn *
world_front_open(struct world *w)
{
	struct rt_worker *wk = w->wk;
	struct nrf_tp_conn *tc;
	int err;

	WORLD_CHECK(w->front == NULL);
	w->front = fake_tp_dial(LISTEN_PORT);
	WORLD_CHECK(w->front != NULL);
	/* What rt_worker.c's on_listener() does, with the callbacks wrapped. */
	tc = wk->tp->accept(wk->lst[0].l, &err);
	WORLD_CHECK(tc != NULL);
	tc = nrf_tp_tls_server(wk->tls_loop, tc, NULL, &err);
	WORLD_CHECK(tc != NULL);
	WORLD_CHECK(nrf_h2_conn_server(wk->h2, tc, &wrap_cbs, wk, &err) != NULL);
	wk->n_front++;
	return w->front;
}

size_t
world_front_delivered(const struct world *w, const int32_t **ids)
{
	*ids = w->delivered;
	return w->n_delivered;
}

uint32_t
world_open_xacts(const struct world *w)
{
	return w->wk->n_xact;
}

uint32_t
world_unanswered(const struct world *w)
{
	uint32_t n = 0;

	for (size_t i = 0; i < w->n_open; i++) {
		const struct nrf_h2_stream *st = w->open[i];
		const struct rt_xact *x = st->user;

		if (x != NULL && !x->answered && !(st->flags & NRF_H2_SF_RESET))
			n++;
	}
	return n;
}

bool
world_front_gone(const struct world *w)
{
	return w->front_gone;
}

void
world_h2_gauges(const struct world *w, uint32_t *server_conns, uint32_t *streams)
{
	struct nrf_h2_ctx_stats hs;

	nrf_h2_ctx_stats_get(w->wk->h2, &hs);
	*server_conns = hs.conns_server;
	*streams = hs.streams;
}

uint64_t
world_up_status(const struct world *w, int up, int status)
{
	const struct rt_view *v = w->wk->view;
	const struct rt_pool *p = NULL;

	if (up == UP_LOCAL) {
		p = v->local;
	} else {
		for (uint16_t i = 0; i < v->n_pools; i++) {
			const struct rt_pool *q = v->pools[i];

			if (q != NULL && q->ep.addr.family == 4 && q->ep.addr.ip[3] == up + 1)
				p = q;
		}
	}
	if (p == NULL)
		return 0;
	for (unsigned int k = 0; k < NRF_RT_PEER_CODES; k++)
		if (atomic_load_explicit(&p->stats->codes[k], memory_order_relaxed) == status)
			return p->stats->code_n[k];
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The loop                                                                  */

bool
world_turn(struct world *w, bool (*extra)(void *arg), void *arg)
{
	struct rt_worker *wk = w->wk;
	struct upsrv *u, *next;
	bool moved;

	/* No timers here: time passes in world_settle() only. */
	moved = wk->tp->poll(wk->loop, 0) > 0;
	moved |= nrf_h2_ctx_run(wk->h2);
	for (u = w->srvs; u != NULL; u = next) {
		next = u->next;
		moved |= upsrv_turn(w, u);
	}
	if (extra != NULL)
		moved |= extra(arg);
	return moved;
}

/*
 * Time passes up to the earliest deadline: every deadline comes closer by
 * the same amount, so the earliest is due now (on the real clock, from
 * which the timers armed from now on count). So virtual time adds up over
 * the steps, and no timer fires before one that is due earlier.
 * Timestamps nrfwd keeps itself (a connection's age, latencies) do not see
 * these steps: code that compares them with the clock sees less time pass.
 */
static void
timers_advance(struct rt_timers *ts)
{
	uint64_t now = nrf_now_ns();
	struct rt_timer *t = rt_timers_first(ts);

	if (t == NULL || t->at <= now)
		return;
	rt_timers_shift(ts, t->at - now);
}

bool
world_settle_check(struct world *w, bool (*extra)(void *arg), void *arg)
{
	struct rt_timers *ts = &w->wk->timers;

	for (unsigned int i = 0; i < SETTLE_TURNS; i++) {
		struct rt_timer *t;

		if (world_turn(w, extra, arg))
			continue;
		if (w->wk->n_xact == 0)
			return true;
		if (scripts_start(w))
			continue;
		if (rt_timers_first(ts) == NULL)
			break;
		/* Nothing moves and requests wait: time passes up to the
		 * earliest deadline, and that timer alone fires (as in
		 * rt_timers_run()). */
		timers_advance(ts);
		t = rt_timers_first(ts);
		rt_timer_cancel(ts, t);
		t->fn(t, ts->arg);
	}
	fprintf(stderr, "world: %u transactions, %u unanswered, after %d turns\n",
		w->wk->n_xact, world_unanswered(w), SETTLE_TURNS);
	return false;
}

void
world_settle(struct world *w, bool (*extra)(void *arg), void *arg)
{
	if (!world_settle_check(w, extra, arg))
		WORLD_CHECK(!"requests that never end");
}

size_t
world_up_log(const struct world *w, const uint8_t **ups)
{
	*ups = w->up_log;
	return w->n_up_log;
}

struct nrf_rt *
world_rt(const struct world *w)
{
	return w->rt;
}

/* ------------------------------------------------------------------------ */
/* Create and free                                                           */

static void
split_script(struct world *w)
{
	const uint8_t *p = w->p.script, *end;
	const size_t sl = sizeof(WORLD_SEGMENT_SEP) - 1;

	if (p == NULL)
		return;
	end = p + w->p.script_len;
	while (w->n_seg < MAX_SEGMENTS) {
		const uint8_t *q = memmem(p, (size_t)(end - p), WORLD_SEGMENT_SEP, sl);

		w->seg[w->n_seg] = p;
		w->seg_len[w->n_seg] = q != NULL ? (size_t)(q - p) : (size_t)(end - p);
		w->n_seg++;
		if (q == NULL)
			break;
		p = q + sl;
	}
}

struct world *
world_create(const struct world_params *p)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_params rp = {.workers = 1, .tp = fake_tp_ops()};
	struct nrf_rt_snap *s;
	struct nrf_cfg *cfg;
	struct world *w;
	char *doc;
	int err = 0;

	if (getenv("WORLD_LOG") == NULL)
		nrf_log_set_level((enum nrf_log_level)-1); /* nothing printed */
	else
		nrf_log_set_level(NRF_LOG_DEBUG);
	w = calloc(1, sizeof(*w));
	WORLD_CHECK(w != NULL);
	w->p = *p;
	split_script(w);
	WORLD_CHECK(cur == NULL);
	cur = w;
	fake_tp_set_connect(on_connect, w);
	doc = config_doc(p);
	cfg = nrf_cfg_load(doc, strlen(doc), 1, &probs, &err);
	if (cfg == NULL)
		fprintf(stderr, "world: configuration: %s: %s\n",
			probs.n > 0 ? probs.v[0].pointer : "",
			probs.n > 0 ? probs.v[0].reason : nrf_strerror(err));
	nrf_cfg_problems_fini(&probs);
	free(doc);
	WORLD_CHECK(cfg != NULL);
	s = nrf_rt_snap_create(cfg, &err);
	WORLD_CHECK(s != NULL);
	w->rt = nrf_rt_create(&rp, s, &err);
	WORLD_CHECK(w->rt != NULL);
	w->wk = w->rt->w[0];
	rt_pool_warm(w->wk); /* as rt_worker_main() does first */
	return w;
}

void
world_free(struct world *w)
{
	nrf_rt_free(w->rt);
	while (w->srvs != NULL)
		upsrv_free(w, w->srvs);
	if (w->front != NULL)
		fake_conn_release(w->front);
	/* Every connection nrfwd opened or accepted was closed by it. */
	WORLD_CHECK(fake_tp_reset() == 0);
	free(w->delivered);
	free(w->open);
	free(w->up_log);
	free(w);
	cur = NULL;
}
