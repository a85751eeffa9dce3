/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target, differential: the same client bytes into nrfwd's own
 * front (lib/h2: h2_guard.c's frame-header pass, h2_srv.c, h2_hpack.c,
 * h2_check.c; an nrf_h2 context with one server connection on the fake
 * transport of tests/unit/rt/fake_tp.h) and into nghttp2's server session
 * configured as the front it replaced (decisions 0009, 0046, 0063:
 * no_closed_streams, no_http_messaging, no_auto_window_update, the same
 * max_continuations, the same SETTINGS and connection window). Both have
 * the same trivial owner: every request gets one answer, decided by
 * nrfwd's request policy (h2_conn_check_head() and on_request's contract
 * in nrf_h2.h, written out again below for nghttp2's callbacks): 431 for a
 * header list over max_header_bytes, 400 without :method or :path or for
 * CONNECT, 413 for a content-length or a body over max_body_bytes (at
 * once, before the request ends), else 200 once the request is complete;
 * the answer has a 2-byte body.
 *
 * Input: byte 0 chooses the scene, the rest is what the client sends (the
 * connection preface is put in front of it unless byte 0 says "raw"), in
 * pieces of the chosen size; after each piece both servers run until they
 * have nothing left to do, and what they wrote is taken.
 *
 *   byte 0  bits 0-3  piece size: whole, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32,
 *                     64, 100, 256, 1000, 4096
 *           bit 4     raw: no preface put in front
 *           bit 5     small limits (1 KiB header list, 512 B bodies,
 *                     4 streams); else 16 KiB, 64 KiB, 100
 *
 * nghttp2 gets the bytes behind h2_guard.c's frame-header pass, as the
 * nghttp2 front did (ng_recv()): the pass's rules are nrfwd's on
 * both sides, not differences. A third session, nghttp2 with its own HTTP
 * messaging on, is an oracle for HTTP's rules only (exceptions 1 and 14).
 *
 * The outputs are parsed into outcome classes (struct outcome): per
 * stream the :status of the answer's first HEADERS (0: none) and the code
 * of the server's first RST_STREAM (-1: none); for the connection, the
 * first GOAWAY's error code and last-stream-id (-1: none), compared
 * exactly (both servers report the last stream they opened). nrfwd's and
 * nghttp2's must be equal but for the known, intended differences, each a
 * numbered, commented exception in benign_stream() and benign_conn() (1-3,
 * 13, 14, 16-19 per stream; 4-12, 15, 16 and 19-21 for the connection, with the
 * streams they leave unprocessed); any other difference aborts with the three
 * outcome lists on stderr. Exceptions 9 and 13 are checked: a fresh nrfwd
 * front is given the rest of the input's last frame and must then do what
 * nghttp2 did. Order and framing of the output (DATA sizes,
 * WINDOW_UPDATE, SETTINGS and PING ACKs) are not compared: they are
 * nobody's contract.
 *
 * Time does not pass: no timeout of nrfwd's (nrf_h2_ctx_sweep()) runs,
 * as nghttp2 has none. nghttp2 1.52 as Debian ships it (with its limit on
 * stream resets, CVE-2023-44487, and on CONTINUATION frames,
 * CVE-2024-28182).
 *
 * FUZZ_VERBOSE=1 prints both outcome lists for every input.
 */
#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tp.h"
#include "h2_frames.h"
#include "h2_guard.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz_front_diff: %s:%d: %s\n", __FILE__, __LINE__, \
				#cond);                                                     \
			abort();                                                            \
		}                                                                           \
	} while (0)

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN (sizeof(preface) - 1)
#define LISTEN_PORT 8080

static const size_t pieces[16] = {0, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32, 64, 100, 256, 1000, 4096};

/* The limits both servers run with (nrf_h2_limits; windows at nrfwd's
 * defaults: stream 256 KiB, connection 16 MiB). */
struct limits {
	uint32_t max_header_bytes;
	uint32_t max_body_bytes;
	uint32_t max_streams;
};

#define STREAM_WINDOW (256u * 1024u)
#define CONN_WINDOW (16u * 1024u * 1024u)
static const char body[] = "ok";

/* ------------------------------------------------------------------------ */
/* Outcomes                                                                  */

struct sout {
	int32_t id;
	int status;  /* :status of the server's first HEADERS, 0: none */
	int64_t rst; /* RST_STREAM code from the server, -1: none */
};

struct outcome {
	const char *who;
	struct sout *st;
	size_t n, cap;
	int64_t ga_code; /* first GOAWAY: error code, -1: none */
	int64_t ga_last; /* its last-stream-id */
	bool bad_output; /* the output did not parse (reported, aborts) */
	bool closed;	 /* nrfwd: the connection was closed */
	/* the byte stream the server wrote */
	uint8_t *buf;
	size_t len, bcap;
};

static struct sout *
out_stream(struct outcome *o, int32_t id)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->st[i].id == id)
			return &o->st[i];
	if (o->n == o->cap) {
		o->cap = o->cap * 2 + 16;
		o->st = realloc(o->st, o->cap * sizeof(*o->st));
		CHECK(o->st != NULL);
	}
	o->st[o->n].id = id;
	o->st[o->n].status = 0;
	o->st[o->n].rst = -1;
	return &o->st[o->n++];
}

static const struct sout *
find_stream(const struct outcome *o, int32_t id)
{
	static const struct sout none = {0, 0, -1};

	for (size_t i = 0; i < o->n; i++)
		if (o->st[i].id == id)
			return &o->st[i];
	return &none;
}

static void
out_append(struct outcome *o, const uint8_t *p, size_t n)
{
	if (o->len + n > o->bcap) {
		o->bcap = (o->len + n) * 2;
		o->buf = realloc(o->buf, o->bcap);
		CHECK(o->buf != NULL);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The :status of a complete response header block (nghttp2's inflater,
 * one per connection: the encoders may use the dynamic table). */
static int
block_status(nghttp2_hd_inflater *inf, const uint8_t *p, size_t len, bool *bad)
{
	int status = -1;

	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &fl, p, len, 1);

		if (rv < 0) {
			*bad = true;
			return -1;
		}
		p += rv;
		len -= (size_t)rv;
		if ((fl & NGHTTP2_HD_INFLATE_EMIT) && status < 0 && nv.namelen == 7 &&
			memcmp(nv.name, ":status", 7) == 0) {
			status = 0;
			for (size_t i = 0; i < nv.valuelen && i < 4; i++)
				status = status * 10 + (nv.value[i] - '0');
		}
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(inf);
			break;
		}
		if (rv == 0 && len == 0) {
			*bad = true;
			break;
		}
	}
	return status;
}

/* Frames of the server's output into the outcome. */
static void
parse_output(struct outcome *o)
{
	nghttp2_hd_inflater *inf;
	const uint8_t *p = o->buf;
	size_t left = o->len;
	uint8_t *hb = NULL;
	size_t hb_len = 0;
	int32_t hb_id = 0;

	CHECK(nghttp2_hd_inflate_new(&inf) == 0);
	while (left >= 9) {
		size_t len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
		uint8_t type = p[3], flags = p[4];
		int32_t id = (int32_t)(get32(p + 5) & 0x7fffffffu);
		const uint8_t *pl = p + 9;

		if (left - 9 < len)
			break; /* cut short: not written yet */
		if (type == NGHTTP2_HEADERS || (type == NGHTTP2_CONTINUATION && hb_id != 0)) {
			size_t skip = 0, plen = len;

			if (type == NGHTTP2_HEADERS) {
				if (flags & NGHTTP2_FLAG_PADDED)
					skip = 1, plen -= 1 + pl[0];
				if (flags & NGHTTP2_FLAG_PRIORITY)
					skip += 5, plen -= 5;
				hb_id = id;
				hb_len = 0;
			}
			hb = realloc(hb, hb_len + plen + 1);
			CHECK(hb != NULL);
			memcpy(hb + hb_len, pl + skip, plen);
			hb_len += plen;
			if (flags & NGHTTP2_FLAG_END_HEADERS) {
				struct sout *s = out_stream(o, hb_id);
				int status = block_status(inf, hb, hb_len, &o->bad_output);

				if (s->status == 0)
					s->status = status;
				hb_id = 0;
			}
		} else if (type == NGHTTP2_RST_STREAM && len == 4) {
			struct sout *s = out_stream(o, id);

			if (s->rst < 0)
				s->rst = get32(pl);
		} else if (type == NGHTTP2_GOAWAY && len >= 8 && o->ga_code < 0) {
			o->ga_last = get32(pl) & 0x7fffffffu;
			o->ga_code = get32(pl + 4);
		}
		p += 9 + len;
		left -= 9 + len;
	}
	free(hb);
	nghttp2_hd_inflate_del(inf);
}

static void
dump(const struct outcome *o)
{
	fprintf(stderr, "  %s: GOAWAY %lld last %lld%s\n", o->who, (long long)o->ga_code,
		(long long)o->ga_last, o->bad_output ? " (output did not parse)" : "");
	for (size_t i = 0; i < o->n; i++)
		fprintf(stderr, "  %s: stream %d: status %d rst %lld\n", o->who, o->st[i].id,
			o->st[i].status, (long long)o->st[i].rst);
}

/* ------------------------------------------------------------------------ */
/* The owner's answer, as both servers decide it                            */

static int
answer_status(int err, const struct nrf_h2_stream *st)
{
	switch (err) {
	case 0:
		return 200;
	case NRF_EPARSE:
		return 400;
	case NRF_ETOOBIG:
		return (st->flags & NRF_H2_SF_HDR_OVER) ? 431 : 413;
	case NRF_EFULL:
		return 503;
	case NRF_ETIMEDOUT:
		return 408;
	default:
		return 500;
	}
}

/* ------------------------------------------------------------------------ */
/* nrfwd's own front                                                         */

static void
own_on_request(struct nrf_h2_stream *st, int err)
{
	static const struct nrf_h2_hdr ct = {
		.name = {"content-type", 12}, .value = {"text/plain", 10}};

	CHECK(nrf_h2_respond(st, answer_status(err, st), &ct, 1, body, sizeof(body) - 1, false) ==
		0);
}

static const struct nrf_h2_cbs own_cbs = {
	.on_request = own_on_request,
};

struct own {
	const struct nrf_tp_ops *tp;
	struct nrf_tp_loop *loop;
	struct nrf_h2_ctx *ctx;
	struct nrf_tp_listener *l;
	struct fake_conn *c;
};

static void
on_listen(void *arg, unsigned int ev)
{
	(void)arg;
	(void)ev;
}

static void
own_start(struct own *o, const struct limits *lim)
{
	struct nrf_h2_limits hl;
	struct nrf_tp_addr a;
	struct nrf_tp_conn *tc;
	int err;

	memset(&hl, 0, sizeof(hl));
	hl.max_header_bytes = lim->max_header_bytes;
	hl.max_body_bytes = lim->max_body_bytes;
	hl.max_concurrent_streams = lim->max_streams;
	hl.stream_window = STREAM_WINDOW;
	hl.conn_window = CONN_WINDOW;
	o->tp = fake_tp_ops();
	o->loop = o->tp->loop_create(&err);
	CHECK(o->loop != NULL);
	o->ctx = nrf_h2_ctx_create(o->tp, o->loop, &hl, &err);
	CHECK(o->ctx != NULL);
	CHECK(nrf_tp_addr_parse("127.0.0.1", LISTEN_PORT, &a) == 0);
	o->l = o->tp->listen(o->loop, &a, 16, on_listen, o, &err);
	CHECK(o->l != NULL);
	o->c = fake_tp_dial(LISTEN_PORT);
	CHECK(o->c != NULL);
	tc = o->tp->accept(o->l, &err);
	CHECK(tc != NULL);
	CHECK(nrf_h2_conn_server(o->ctx, tc, &own_cbs, o, &err) != NULL);
}

/* Run until nothing is left to do; take what was written. */
static void
own_run(struct own *o, struct outcome *out)
{
	for (int i = 0; i < 10000; i++) {
		bool moved = o->tp->poll(o->loop, 0) > 0;
		const uint8_t *p;
		size_t n;

		moved |= nrf_h2_ctx_run(o->ctx);
		p = fake_conn_out(o->c, &n);
		if (n > 0) {
			out_append(out, p, n);
			fake_conn_take(o->c, n);
			moved = true;
		}
		if (!moved)
			return;
	}
	CHECK(!"nrfwd's front never settles");
}

static void
own_stop(struct own *o, struct outcome *out)
{
	fake_conn_shutdown(o->c);
	own_run(o, out);
	CHECK(fake_conn_closed(o->c));
	fake_conn_release(o->c);
	o->tp->listener_close(o->l);
	nrf_h2_ctx_free(o->ctx);
	o->tp->loop_free(o->loop);
	CHECK(fake_tp_reset() == 0);
}

/* ------------------------------------------------------------------------ */
/* nghttp2's server session                                                  */

struct ngs {
	int32_t id;
	uint32_t hdr_bytes; /* header list so far (name + value + 32) */
	bool hdr_over;
	bool has_path, has_method, connect;
	int64_t clen; /* content-length, -1: none or not a number */
	uint64_t body;
	bool answered;
	bool in_headers; /* the request's first header block */
	size_t sent;	 /* answer body bytes given to nghttp2 */
};

struct ng {
	nghttp2_session *sess;
	const struct limits *lim;
	struct ngs *st;
	size_t n, cap;
	bool dead; /* mem_recv failed: the application closes */
	struct h2_guard guard;
	/* frame headers whole, judged first (ng_recv()) */
	size_t pre;    /* preface bytes passed */
	size_t left;   /* payload bytes of the current frame to come */
	uint8_t fb[14]; /* a frame header and up to 5 payload bytes */
	size_t fb_len;
	uint8_t *feed;  /* bytes for nghttp2's next mem_recv (ng_put()) */
	size_t feed_len, feed_cap;
};

static struct ngs *
ng_stream(struct ng *g, int32_t id)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->st[i].id == id)
			return &g->st[i];
	if (g->n == g->cap) {
		g->cap = g->cap * 2 + 16;
		g->st = realloc(g->st, g->cap * sizeof(*g->st));
		CHECK(g->st != NULL);
	}
	memset(&g->st[g->n], 0, sizeof(g->st[0]));
	g->st[g->n].id = id;
	g->st[g->n].clen = -1;
	return &g->st[g->n++];
}

static ssize_t
ng_read_body(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
	nghttp2_data_source *src, void *arg)
{
	struct ng *g = arg;
	struct ngs *s = ng_stream(g, id);
	size_t n = sizeof(body) - 1 - s->sent;

	(void)sess;
	(void)src;
	n = n < len ? n : len; /* the client's window may be smaller */
	memcpy(buf, body + s->sent, n);
	s->sent += n;
	if (s->sent == sizeof(body) - 1)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void
ng_answer(struct ng *g, struct ngs *s, int status)
{
	char sbuf[4];
	nghttp2_nv nv[2] = {
		{(uint8_t *)":status", (uint8_t *)sbuf, 7, 3, NGHTTP2_NV_FLAG_NONE},
		{(uint8_t *)"content-type", (uint8_t *)"text/plain", 12, 10, NGHTTP2_NV_FLAG_NONE},
	};
	nghttp2_data_provider dp = {.read_callback = ng_read_body};

	if (s->answered)
		return;
	s->answered = true;
	snprintf(sbuf, sizeof(sbuf), "%03d", status);
	/* A stream nghttp2 closed meanwhile: nothing to answer. */
	(void)nghttp2_submit_response(g->sess, s->id, nv, 2, &dp);
}

static int
ng_on_begin_headers(nghttp2_session *sess, const nghttp2_frame *f, void *arg)
{
	struct ng *g = arg;

	(void)sess;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		ng_stream(g, f->hd.stream_id)->in_headers = true;
	return 0;
}

static int
ng_on_header(nghttp2_session *sess, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
	const uint8_t *value, size_t valuelen, uint8_t flags, void *arg)
{
	struct ng *g = arg;
	struct ngs *s;
	size_t cost = namelen + valuelen + 32;

	(void)sess;
	(void)flags;
	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s = ng_stream(g, f->hd.stream_id);
	if (!s->in_headers || s->hdr_over)
		return 0;
	if (cost > g->lim->max_header_bytes - s->hdr_bytes) {
		s->hdr_over = true;
		return 0;
	}
	s->hdr_bytes += (uint32_t)cost;
	if (namelen == 5 && memcmp(name, ":path", 5) == 0 && valuelen > 0)
		s->has_path = true;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0 && valuelen > 0) {
		s->has_method = true;
		s->connect = valuelen == 7 && memcmp(value, "CONNECT", 7) == 0;
	}
	if (namelen == 14 && memcmp(name, "content-length", 14) == 0) {
		int64_t v = 0;

		for (size_t i = 0; i < valuelen && v >= 0; i++)
			v = (value[i] >= '0' && value[i] <= '9' && v < (INT64_MAX - 9) / 10)
				    ? v * 10 + (value[i] - '0')
				    : -1;
		s->clen = valuelen > 0 ? v : -1;
	}
	return 0;
}

static int
ng_on_data_chunk(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
	void *arg)
{
	struct ng *g = arg;
	struct ngs *s = ng_stream(g, id);

	(void)sess;
	(void)flags;
	(void)data;
	s->body += len;
	if (!s->answered && s->body > g->lim->max_body_bytes)
		ng_answer(g, s, 413);
	return 0;
}

static int
ng_on_frame_recv(nghttp2_session *sess, const nghttp2_frame *f, void *arg)
{
	struct ng *g = arg;
	struct ngs *s;
	bool end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	(void)sess;
	if (f->hd.type == NGHTTP2_HEADERS) {
		s = ng_stream(g, f->hd.stream_id);
		if (s->in_headers) {
			/* end of the request's header block (h2_conn_check_head()) */
			s->in_headers = false;
			if (s->hdr_over)
				ng_answer(g, s, 431);
			else if (!s->has_path || !s->has_method || s->connect)
				ng_answer(g, s, 400);
			else if (s->clen > 0 && (uint64_t)s->clen > g->lim->max_body_bytes)
				ng_answer(g, s, 413);
		}
		if (end)
			ng_answer(g, s, 200);
	} else if (f->hd.type == NGHTTP2_DATA && end) {
		ng_answer(g, ng_stream(g, f->hd.stream_id), 200);
	}
	return 0;
}

static void
ng_start(struct ng *g, const struct limits *lim, bool messaging)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	nghttp2_settings_entry iv[4] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, lim->max_streams},
		{NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, lim->max_header_bytes},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
	};
	uint32_t win = CONN_WINDOW;

	memset(g, 0, sizeof(*g));
	g->lim = lim;
	CHECK(nghttp2_session_callbacks_new(&cb) == 0);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, ng_on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, ng_on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, ng_on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, ng_on_frame_recv);
	CHECK(nghttp2_option_new(&opt) == 0);
	/* As the nghttp2 front was configured (decisions 0009, 0063). */
	nghttp2_option_set_no_closed_streams(opt, 1);
	nghttp2_option_set_no_http_messaging(opt, !messaging);
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_continuations(
		opt, 2 * ((lim->max_header_bytes + 16383) / 16384) > 8
			     ? 2 * ((lim->max_header_bytes + 16383) / 16384)
			     : 8);
	CHECK(nghttp2_session_server_new2(&g->sess, cb, g, opt) == 0);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	CHECK(nghttp2_submit_settings(g->sess, NGHTTP2_FLAG_NONE, iv, 4) == 0);
	/* connection window: max(conn_window, max_body + stream_window) */
	if ((uint64_t)lim->max_body_bytes + STREAM_WINDOW > win)
		win = lim->max_body_bytes + STREAM_WINDOW;
	CHECK(nghttp2_session_set_local_window_size(g->sess, NGHTTP2_FLAG_NONE, 0, (int32_t)win) ==
		0);
}

static void
ng_run(struct ng *g, struct outcome *out)
{
	for (;;) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(g->sess, &p);

		if (n <= 0)
			break;
		out_append(out, p, (size_t)n);
	}
	/* Nothing more to read or write (a GOAWAY either way, no stream
	 * left): the application closes, as nrfwd does. */
	if (!nghttp2_session_want_read(g->sess) && !nghttp2_session_want_write(g->sess))
		g->dead = true;
}

static void
ng_mem_recv(struct ng *g, const uint8_t *p, size_t n)
{
	ssize_t rv;

	if (g->dead || n == 0)
		return;
	rv = nghttp2_session_mem_recv(g->sess, p, n);
	if (rv < 0) {
		g->dead = true; /* a fatal error: the application closes */
		if (getenv("FUZZ_VERBOSE") != NULL)
			fprintf(stderr, "fuzz_front_diff: nghttp2_session_mem_recv: %s\n",
				nghttp2_strerror((int)rv));
	}
}

/*
 * The client's bytes into nghttp2 behind h2_guard.c's rules, as the removed
 * nghttp2 front took them (decision 0063; nrfwd's own server now checks them
 * on each whole frame, which gives the same verdicts because it acts on no
 * frame before it is whole): the rules nghttp2 1.52 leaves out with these
 * options (h2_guard.h lists them), judged on a frame's header, or on its
 * header and the first 4-5 payload bytes where a dependency is read, before
 * nghttp2 sees any of the frame; a GOAWAY verdict ends the session there
 * (terminate_session: nothing more is fed), a RST_STREAM verdict resets the
 * stream, which is then never answered, and the frame goes on to nghttp2.
 * These are intended differences from bare nghttp2, made explicit this way
 * rather than as exceptions after the fact.
 *
 * nghttp2 gets a frame header only whole: Debian's nghttp2 1.52 (its
 * backport of the CONTINUATION limit, CVE-2024-28182) counts every read
 * that ends inside a frame header after an unfinished header block as one
 * CONTINUATION frame, so with reads of a few bytes
 * nghttp2_session_mem_recv() fails with NGHTTP2_ERR_TOO_MANY_CONTINUATIONS
 * on a block of two frames: nghttp2's bug, which would hide every other
 * difference of those inputs. A TCP server's reads are cut anywhere, so
 * this changes nothing nghttp2 is meant to decide.
 */

/* Payload bytes the rules may read of a frame with header @p h: a
 * PRIORITY frame's dependency, or that of HEADERS with the PRIORITY flag
 * (after a pad length); 0 otherwise. */
static size_t
ng_guard_wants(const uint8_t *h)
{
	size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];

	if (h[3] == NGHTTP2_PRIORITY)
		return len == 5 ? 5 : 0;
	if (h[3] == NGHTTP2_HEADERS && (h[4] & NGHTTP2_FLAG_PRIORITY)) {
		size_t want = (h[4] & NGHTTP2_FLAG_PADDED) ? 5 : 4;

		return len >= want ? want : 0;
	}
	return 0;
}

/* Bytes for nghttp2, given to it in one nghttp2_session_mem_recv() per read
 * and verdict, as the removed front did (ng_flush()). */
static void
ng_put(struct ng *g, const uint8_t *p, size_t n)
{
	if (g->guard.state == H2_GUARD_DONE)
		return;
	if (g->feed_len + n > g->feed_cap) {
		g->feed_cap = (g->feed_len + n) * 2;
		g->feed = realloc(g->feed, g->feed_cap);
		CHECK(g->feed != NULL);
	}
	memcpy(g->feed + g->feed_len, p, n);
	g->feed_len += n;
}

static void
ng_flush(struct ng *g)
{
	ng_mem_recv(g, g->feed, g->feed_len);
	g->feed_len = 0;
}

/* The rules on the frame whose header (and first payload bytes) @p f holds:
 * at a verdict, what came before goes to nghttp2 first; then those bytes. */
static void
ng_judge(struct ng *g, const uint8_t *f, size_t n)
{
	struct h2_guard_verdict v;

	if (g->guard.state == H2_GUARD_DONE || g->dead)
		return;
	if (h2_guard_frame(&g->guard, f, &v)) {
		ng_flush(g);
		if (g->dead)
			return;
		if (v.kind == H2_GV_GOAWAY) {
			g->guard.state = H2_GUARD_DONE;
			(void)nghttp2_session_terminate_session(g->sess, v.code);
			return;
		}
		ng_stream(g, (int32_t)v.sid)->answered = true; /* never answered */
		(void)nghttp2_submit_rst_stream(g->sess, NGHTTP2_FLAG_NONE, (int32_t)v.sid, v.code);
	}
	ng_put(g, f, n);
}

static void
ng_recv(struct ng *g, const uint8_t *in, size_t len)
{
	while (len > 0) {
		size_t k;

		if (g->pre < PREFACE_LEN || g->left > 0) {
			/* the preface, or the rest of a payload, as it comes */
			k = g->pre < PREFACE_LEN ? PREFACE_LEN - g->pre : g->left;
			k = k < len ? k : len;
			ng_put(g, in, k);
			if (g->pre < PREFACE_LEN)
				g->pre += k;
			else
				g->left -= k;
		} else {
			/* a header, and the payload bytes the rules read */
			size_t need = g->fb_len < 9 ? 9 : 9 + ng_guard_wants(g->fb);

			k = need - g->fb_len < len ? need - g->fb_len : len;
			memcpy(g->fb + g->fb_len, in, k);
			g->fb_len += k;
			if (g->fb_len == 9)
				need = 9 + ng_guard_wants(g->fb);
			if (g->fb_len == need) {
				g->left = ((size_t)g->fb[0] << 16 | (size_t)g->fb[1] << 8 | g->fb[2]) -
					(need - 9);
				ng_judge(g, g->fb, need);
				g->fb_len = 0;
			}
		}
		in += k;
		len -= k;
	}
	ng_flush(g);
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                            */

static void
outcome_free(struct outcome *o)
{
	free(o->st);
	free(o->buf);
}

/* What the client's own frames say (its bytes, split as a server reads
 * them): the streams it reset. */
struct cview {
	int32_t *rst;
	size_t n, cap;
	bool cut;	       /* the input ends inside a frame whose header is complete */
	bool long_cont;	       /* ... a CONTINUATION over 16 384 bytes */
	bool many_settings;    /* a SETTINGS frame with more than 32 entries */
	bool odd_goaway;       /* a GOAWAY naming a client stream, or a higher one */
	bool dup_settings;     /* a SETTINGS frame naming a known setting twice */
	bool bad_pad;	       /* a padded DATA or HEADERS with no room for its padding */
	unsigned int acks;     /* SETTINGS ACKs the client sent */
	bool wu0;	       /* a WINDOW_UPDATE of 0 on a stream */
	bool data_after_es;    /* DATA on a stream after the client's END_STREAM */
	bool held_big;         /* 20: the input ends in an oversized frame nghttp2 never saw */
	int32_t *es;	       /* streams the client ended */
	size_t n_es, cap_es;
	bool reuse;	       /* HEADERS on a stream id below the client's highest */
	bool ga_seen;	       /* the client sent GOAWAY */
	int32_t after_ga;      /* the first stream it opened after that, 0: none */
	int32_t hi;	       /* the client's highest stream id so far */
	int32_t cut_data;      /* the stream of a DATA frame the input ends in */
	int32_t cut_headers;   /* ... of a HEADERS frame the input ends in */
	int32_t verify_sid;    /* exception 13 taken on this stream: verify_cut() */
	int verify_status;     /* ... nghttp2's answer there */
	bool verify_malformed; /* ... or a reset, which nghttp2+http makes too */
	uint32_t ga_last;      /* last-stream-id of its last GOAWAY (2^31 - 1: none) */
	int32_t blk;	       /* stream of an unfinished header block, 0: none */
	bool blk_broken;       /* a header block was broken by another frame */
	bool verify_blk;       /* exception 9 taken: nrfwd must confirm it */
	const struct h2f *f;
};

/*
 * 4. (Connection.) The input ends inside a frame whose 9-byte header came
 *    whole. nghttp2 applies several connection rules to the header alone
 *    (the first frame must be SETTINGS, DATA or HEADERS on stream 0 or an
 *    idle stream, a CONTINUATION out of place, ...) and sends GOAWAY before
 *    the payload arrives; nrfwd applies them to the whole frame (h2_srv.c
 *    reads frames whole), so with the rest of the frame it would end the
 *    connection too. Benign when nrfwd has not sent GOAWAY yet and
 *    nghttp2's GOAWAY (with the answers it dropped, see 3) is the only
 *    difference.
 */
static bool
cut_short(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return cv->cut && a->ga_code < 0 && b->ga_code > 0;
}

/*
 * 6. (Connection.) A CONTINUATION longer than SETTINGS_MAX_FRAME_SIZE
 *    (16 384 here). nrfwd ends the connection with FRAME_SIZE_ERROR (RFC
 *    9113 §4.2) at its header; nghttp2 1.52 checks the length of every
 *    frame but CONTINUATION (it adds it to the header block being read),
 *    so it reads on and ends with COMPRESSION_ERROR when the bytes do not
 *    decode, or waits for the rest. nrfwd is right here. Inputs are much
 *    shorter than such a frame, so it is the one the input ends in.
 */
/*
 * 7. (Connection.) A SETTINGS frame with more than 32 entries. Debian's
 *    nghttp2 1.52 ends the connection with GOAWAY(ENHANCE_YOUR_CALM) at
 *    its header (nghttp2_option_set_max_settings(), default 32, a
 *    defence against SETTINGS floods); nrfwd takes them (RFC 9113 has no
 *    such limit; a frame holds at most 2 730 entries, each a few
 *    instructions, and unacknowledged SETTINGS are bounded by MAX_ACKS)
 *    and goes on. Everything nghttp2 would have done after it may
 *    differ: only streams where nghttp2 wrote nothing.
 */
static bool
many_settings(const struct outcome *b, const struct cview *cv)
{
	return cv->many_settings && b->ga_code == NGHTTP2_ENHANCE_YOUR_CALM;
}

/*
 * 8. (Connection.) A client's GOAWAY whose last-stream-id is odd (a
 *    stream of the client's, where it names the last stream the
 *    server opened: RFC 9113 §6.8) or higher than in its previous
 *    GOAWAY (which §6.8 forbids). nghttp2 ends the connection with
 *    PROTOCOL_ERROR ("GOAWAY: invalid last_stream_id"); nrfwd takes the
 *    GOAWAY (it opens no streams, so the id tells it nothing) and goes
 *    on. RFC 9113 does not require the check. Everything nghttp2 would
 *    have done after it may differ: only streams where nghttp2 wrote
 *    nothing.
 */
static bool
odd_goaway(const struct outcome *b, const struct cview *cv)
{
	return cv->odd_goaway && b->ga_code == NGHTTP2_PROTOCOL_ERROR;
}

/*
 * 9. (Connection.) The input ends inside a header block (its last frame
 *    complete, without END_HEADERS) that does not decode. nghttp2 decodes
 *    a block as its bytes come and finds some errors inside a string
 *    (a Huffman EOS or bad padding); nrfwd's decoder (h2_hpack.c) takes a
 *    string whole, so it has not decided yet. Benign only if nrfwd ends
 *    the connection with COMPRESSION_ERROR once the block is finished
 *    with an empty CONTINUATION (END_HEADERS), which the target then
 *    checks (verify_block()).
 */
static bool
open_block(const struct outcome *a, const struct outcome *b, struct cview *cv)
{
	if (cv->cut || cv->blk == 0 || cv->blk_broken || a->ga_code >= 0 ||
		b->ga_code != NGHTTP2_COMPRESSION_ERROR)
		return false;
	cv->verify_blk = true;
	return true;
}

/*
 * 10. A SETTINGS frame that names a setting nghttp2 knows twice. nghttp2
 *    keeps only the last value of each (inbound_frame_set_settings_entry())
 *    and checks that one; nrfwd processes them in order, as RFC 9113
 *    §6.5.3 says, and ends the connection at an invalid value even if a
 *    later one replaces it (PROTOCOL_ERROR, or FLOW_CONTROL_ERROR for
 *    INITIAL_WINDOW_SIZE). Everything after may differ: only streams
 *    nrfwd did not process (above its GOAWAY's last-stream-id) where it
 *    wrote nothing.
 */
static bool
dup_settings(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return cv->dup_settings && (a->ga_code != b->ga_code || a->ga_last != b->ga_last) &&
	       (a->ga_code == NGHTTP2_PROTOCOL_ERROR || a->ga_code == NGHTTP2_FLOW_CONTROL_ERROR);
}

/*
 * 11. A padded DATA or HEADERS frame whose padding does not fit, on a
 *    stream that is not open. nrfwd ends the connection with
 *    PROTOCOL_ERROR as RFC 9113 §6.1 and §6.2 say (it checks the frame
 *    before the stream); nghttp2 ignores frames on streams it does not
 *    know before it reads their padding. Everything after may differ, as
 *    in 10 (nghttp2 may end the connection later for another reason,
 *    with the same code and a higher last-stream-id).
 */
static bool
bad_pad(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return cv->bad_pad && a->ga_code == NGHTTP2_PROTOCOL_ERROR &&
	       (b->ga_code != a->ga_code || b->ga_last != a->ga_last);
}

/*
 * 12. (Connection.) More SETTINGS ACKs than SETTINGS sent (both servers
 *    send one). nghttp2 ends the connection with PROTOCOL_ERROR
 *    ("SETTINGS: unexpected ACK"); nrfwd ignores the extra ACK: RFC 9113
 *    does not make it an error. Everything nghttp2 would have done after
 *    it may differ: only streams where nghttp2 wrote nothing.
 */
static bool
extra_ack(const struct outcome *b, const struct cview *cv)
{
	return cv->acks > 1 && b->ga_code == NGHTTP2_PROTOCOL_ERROR;
}

/*
 * 15. (Connection.) A frame on a stream that nrfwd closed in the same
 *    read (answered, or reset as malformed: h2_srv.c closes a stream once
 *    its RST_STREAM or its last frame is queued, and ignores what the
 *    client sends on it then): a WINDOW_UPDATE of 0, a HEADERS after the
 *    client's END_STREAM that the guard has forgotten (more than 128
 *    stream ids back), a DATA after the client's END_STREAM on a stream
 *    nrfwd reset as malformed. nghttp2 writes only after the whole read,
 *    so the stream is still open there, and it ends the connection
 *    (PROTOCOL_ERROR for the increment, STREAM_CLOSED for the HEADERS
 *    and the DATA), while nrfwd goes on (and may end the connection
 *    later, for another reason, after a later stream).
 *    Everything nghttp2 would have done after it may differ: only
 *    streams where nghttp2 wrote nothing.
 */
static bool
closed_in_read(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return (a->ga_code < 0 || a->ga_last > b->ga_last) &&
	       ((cv->wu0 && b->ga_code == NGHTTP2_PROTOCOL_ERROR) ||
					 ((cv->reuse || cv->data_after_es) &&
						 b->ga_code == NGHTTP2_STREAM_CLOSED));
}

/* 16 (see benign_stream()): nrfwd closed the connection, without a
 * GOAWAY of its own, after the client's GOAWAY; nghttp2 read on into
 * frames that were not whole yet (a new stream, DATA on an idle one). */
static bool
after_goaway(const struct outcome *a, const struct cview *cv)
{
	return cv->ga_seen && a->closed && a->ga_code < 0;
}

/*
 * 20. (Connection.) The input ends inside a frame longer than
 *    SETTINGS_MAX_FRAME_SIZE whose header came whole but not the 4-5
 *    payload bytes of its dependency (PRIORITY, or HEADERS with the
 *    PRIORITY flag). nrfwd ends the connection with FRAME_SIZE_ERROR at
 *    the header (RFC 9113 §4.2); the nghttp2 side, fed as the removed
 *    front fed it, holds such a header back until the frame-header rules
 *    can read the dependency, so nghttp2 has not seen the frame yet (with
 *    its header it would end the connection the same way).
 */
static bool
held_big(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return cv->held_big && a->ga_code == NGHTTP2_FRAME_SIZE_ERROR && b->ga_code < 0;
}

/*
 * 21. (Connection.) A header block that decodes past the front's header
 *    flood limit (struct nrf_h2_limits: GOAWAY(ENHANCE_YOUR_CALM), a
 *    defence nghttp2 1.52 does not have) and holds a decoding error
 *    further on: nghttp2 reads on to the error (COMPRESSION_ERROR). Both
 *    end the connection after the same stream.
 */
static bool
flood_first(const struct outcome *a, const struct outcome *b)
{
	return a->ga_code == NGHTTP2_ENHANCE_YOUR_CALM && b->ga_code == NGHTTP2_COMPRESSION_ERROR &&
	       a->ga_last == b->ga_last;
}

static bool
long_cont(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	return cv->long_cont && a->ga_code == NGHTTP2_FRAME_SIZE_ERROR &&
	       (b->ga_code < 0 || b->ga_code == NGHTTP2_COMPRESSION_ERROR);
}

static void
on_client_frame(void *arg, uint8_t type, uint8_t flags, int32_t id, const uint8_t *pl, size_t len)
{
	struct cview *cv = arg;

	(void)flags;
	(void)pl;
	(void)len;
	if (type == NGHTTP2_SETTINGS && cv->f->pl_need > 32 * 6)
		cv->many_settings = true;
	if ((type == NGHTTP2_DATA || type == NGHTTP2_HEADERS) && (flags & NGHTTP2_FLAG_PADDED) &&
		(cv->f->pl_need == 0 || pl[0] >= cv->f->pl_need))
		cv->bad_pad = true;
	if (type == NGHTTP2_SETTINGS && (flags & NGHTTP2_FLAG_ACK))
		cv->acks++;
	if (type == NGHTTP2_WINDOW_UPDATE && id != 0 && len == 4 && (get32(pl) & 0x7fffffffu) == 0)
		cv->wu0 = true;
	if (type == NGHTTP2_GOAWAY)
		cv->ga_seen = true;
	if (type == NGHTTP2_DATA && id != 0) {
		for (size_t i = 0; i < cv->n_es; i++)
			if (cv->es[i] == id)
				cv->data_after_es = true;
	}
	if ((type == NGHTTP2_DATA || type == NGHTTP2_HEADERS) && id != 0 &&
		(flags & NGHTTP2_FLAG_END_STREAM)) {
		if (cv->n_es == cv->cap_es) {
			cv->cap_es = cv->cap_es * 2 + 8;
			cv->es = realloc(cv->es, cv->cap_es * sizeof(*cv->es));
			CHECK(cv->es != NULL);
		}
		cv->es[cv->n_es++] = id;
	}
	if (type == NGHTTP2_HEADERS && id > cv->hi && cv->ga_seen && cv->after_ga == 0)
		cv->after_ga = id;
	if (type == NGHTTP2_HEADERS && id != 0) {
		if (id <= cv->hi)
			cv->reuse = true;
		else
			cv->hi = id;
	}
	if (type == NGHTTP2_SETTINGS && !(flags & NGHTTP2_FLAG_ACK)) {
		uint32_t seen = 0;

		for (size_t i = 0; i + 6 <= len; i += 6) {
			uint16_t sid = (uint16_t)(pl[i] << 8 | pl[i + 1]);

			if (sid >= 1 && sid <= 9 && sid != 7) {
				if (seen & (1u << sid))
					cv->dup_settings = true;
				seen |= 1u << sid;
			}
		}
	}
	if (cv->blk != 0 && (type != NGHTTP2_CONTINUATION || id != cv->blk)) {
		cv->blk = 0; /* a block broken by another frame: not 9's case */
		cv->blk_broken = true;
	} else if (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION) {
		cv->blk = (flags & NGHTTP2_FLAG_END_HEADERS) ? 0 : id;
	}
	if (type == NGHTTP2_GOAWAY && id == 0 && len >= 8) {
		uint32_t last = get32(pl) & 0x7fffffffu;

		if ((last & 1) != 0 || last > cv->ga_last)
			cv->odd_goaway = true;
		cv->ga_last = last;
	}
	if (type != H2F_RST_STREAM || id == 0)
		return;
	if (cv->n == cv->cap) {
		cv->cap = cv->cap * 2 + 8;
		cv->rst = realloc(cv->rst, cv->cap * sizeof(*cv->rst));
		CHECK(cv->rst != NULL);
	}
	cv->rst[cv->n++] = id;
}

static bool
client_reset(const struct cview *cv, int32_t id)
{
	for (size_t i = 0; i < cv->n; i++)
		if (cv->rst[i] == id)
			return true;
	return false;
}

/* 19: fewer streams below @p id that nrfwd took and nghttp2 refused
 * than streams below it that nrfwd reset itself (not REFUSED_STREAM). */
static bool
slots_freed(const struct outcome *a, const struct outcome *b, int32_t id)
{
	size_t freed = 0, taken = 0;

	for (size_t i = 0; i < a->n; i++) {
		if (a->st[i].id >= id)
			continue;
		if (a->st[i].rst >= 0 && a->st[i].rst != NGHTTP2_REFUSED_STREAM)
			freed++;
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct sout *x = find_stream(a, b->st[i].id);

		if (b->st[i].id < id && b->st[i].rst == NGHTTP2_REFUSED_STREAM &&
			x->rst != NGHTTP2_REFUSED_STREAM)
			taken++;
	}
	return taken < freed;
}

static bool slots_freed_conn(const struct outcome *a, const struct outcome *b,
	const struct cview *cv);

/*
 * The known, intended differences on one stream. @p x is nrfwd's outcome,
 * @p y nghttp2's (no_http_messaging, as configured for the front), @p z
 * that of nghttp2 with its own HTTP messaging on (an oracle for HTTP's
 * rules only, not compared otherwise). Returns the reason when the
 * difference is benign, NULL when it is not.
 */
static const char *
benign_stream(const struct sout *x, const struct sout *y, const struct sout *z, struct cview *cv,
	const struct outcome *a, const struct outcome *b)
{
	/*
	 * 1. HTTP messaging. nrfwd checks requests itself (h2_check.c:
	 *    pseudo-headers, field names and values, connection-specific
	 *    fields, TE, content-length against the body; RFC 9113 §8.1.1,
	 *    §8.2) and resets a malformed request with
	 *    RST_STREAM(PROTOCOL_ERROR), never delivering it (an answer
	 *    already sent, an early 413 or 431, stays). The front's nghttp2
	 *    ran with no_http_messaging, so it delivers it and the owner
	 *    answers. Benign when nghttp2's own HTTP messaging finds the
	 *    request malformed too: the same rule, applied by the other
	 *    implementation.
	 */
	if (x->rst == NGHTTP2_PROTOCOL_ERROR && y->rst < 0 && z->rst == NGHTTP2_PROTOCOL_ERROR &&
		(x->status == 0 || x->status == y->status))
		return "malformed request (HTTP messaging: nrfwd and nghttp2's own checks)";
	/*
	 * 14. The same as nghttp2 with its HTTP messaging on, where the two
	 *    nghttp2 sessions differ themselves (a malformed request reset,
	 *    with the HPACK and stream-state consequences that has for the
	 *    rest of the connection, e.g. a later header block nghttp2 without
	 *    messaging decodes and the other does not): nrfwd checks HTTP,
	 *    so that session is the one it should match. The connection
	 *    outcome takes the same rule (compare()).
	 */
	if (x->status == z->status && x->rst == z->rst)
		return "as nghttp2 with HTTP messaging (14)";
	/*
	 * 2. A stream the client reset itself. Whether its answer was
	 *    written before the client's RST_STREAM was read depends on how
	 *    much each server reads before it writes (nghttp2 processes the
	 *    whole read, nrfwd writes between its read budget's slices): a
	 *    race the client started, the same on the wire as an answer that
	 *    crossed the RST_STREAM. Only the answer may differ, not resets
	 *    sent by the server.
	 */
	if (client_reset(cv, x->id) && x->rst == y->rst && (x->status == 0 || y->status == 0))
		return "stream reset by the client: its answer raced the RST_STREAM";
	/*
	 *    The same race for nrfwd's reset of a malformed request (1): nrfwd
	 *    queued it before it read the client's RST_STREAM; nghttp2, which
	 *    writes after the whole read, dropped its own once the client's
	 *    reset closed the stream, so neither nghttp2 session wrote
	 *    anything on it.
	 */
	if (client_reset(cv, x->id) && x->status == 0 && x->rst == NGHTTP2_PROTOCOL_ERROR &&
		y->status == 0 && y->rst < 0 && z->status == 0 && z->rst < 0)
		return "stream reset by the client: nrfwd's reset of a malformed request raced it (2)";
	/*
	 * 17. An answer whose stream is then reset (here: a WINDOW_UPDATE
	 *    that overflows its window, FLOW_CONTROL_ERROR). nrfwd writes the
	 *    answer's HEADERS before the RST_STREAM, so the client sees the
	 *    status of an answer that broke off (nrf_h2_reset() in nrf_h2.h);
	 *    nghttp2 drops HEADERS it has not written once the stream is
	 *    reset. Only when both reset the stream with the same code.
	 */
	if (x->status != 0 && y->status == 0 && x->rst >= 0 && x->rst == y->rst)
		return "answer's HEADERS before the reset (17)";
	/*
	 * 16. A stream the client opened after its own GOAWAY. Both servers
	 *    close the connection once a GOAWAY was received and no stream is
	 *    left; nrfwd looks at whole frames, nghttp2 opens a stream at its
	 *    HEADERS' frame header, so when the client's GOAWAY and the start
	 *    of a new HEADERS come in one read, nghttp2 may still take the
	 *    stream where nrfwd has closed (and goes on to whatever that
	 *    stream brings, a connection error too: benign_conn()). Only
	 *    streams nrfwd did nothing on, once it closed without a GOAWAY.
	 */
	if (after_goaway(a, cv) && cv->after_ga != 0 && x->id >= cv->after_ga && x->status == 0 &&
		x->rst < 0)
		return "opened after the client's GOAWAY (16)";
	/*
	 * 13. The input ends inside a DATA frame. nghttp2 hands the owner a
	 *    body as its bytes come, so its early 413 (a body over
	 *    max_body_bytes) goes out before the frame is whole; nrfwd takes
	 *    DATA frames whole. Only while nrfwd's connection is up; benign
	 *    only if nrfwd, given the rest of the frame (zeros), answers the
	 *    same or resets a request nghttp2's HTTP messaging finds
	 *    malformed too: checked by verify_cut().
	 */
	if (cv->cut_data != 0 && x->id == cv->cut_data && x->status == 0 && x->rst < 0 &&
		y->status != 0 && a->ga_code < 0 && cv->verify_sid == 0) {
		cv->verify_sid = x->id;
		cv->verify_status = y->status;
		cv->verify_malformed = z->rst == NGHTTP2_PROTOCOL_ERROR;
		return "its DATA frame is not whole yet (checked)";
	}
	/*
	 * 3. Frames queued before a connection error in the same read.
	 *    nghttp2's terminate_session writes its GOAWAY first and nothing
	 *    after it, dropping the answers it had queued, and the
	 *    RST_STREAM(COMPRESSION_ERROR) it queues for the stream whose
	 *    header block failed to decode; nrfwd writes what it queued (an
	 *    answer to a stream at or below the GOAWAY's last-stream-id, which
	 *    the client may take as processed; that RST_STREAM), then the
	 *    GOAWAY. Only when both ended the connection with an error (the
	 *    GOAWAYs are compared on their own), or nghttp2 alone did for a
	 *    reason 4, 6, 7, 8, 9, 12, 15 or 19 excuses; when nghttp2 wrote
	 *    nothing on the stream, or the same answer; and when a reset
	 *    nrfwd wrote carries the
	 *    connection error's code or
	 *    PROTOCOL_ERROR (a malformed request, 1, which nghttp2 with HTTP
	 *    messaging cannot confirm here: its GOAWAY dropped that reset too)
	 *    or FLOW_CONTROL_ERROR (a WINDOW_UPDATE that overflowed the
	 *    stream's window, RFC 9113 §6.9.1, in the same read) or
	 *    REFUSED_STREAM (over SETTINGS_MAX_CONCURRENT_STREAMS: nghttp2
	 *    queued that reset too).
	 */
	/*
	 * 19. A stream nghttp2 refuses over SETTINGS_MAX_CONCURRENT_STREAMS
	 *    that nrfwd takes, because nrfwd reset an earlier stream (a
	 *    malformed request) in the same read: a stream counts against
	 *    the limit while open or half-closed (RFC 9113 §5.1.2), and
	 *    nrfwd closes it when its RST_STREAM is queued, nghttp2 only
	 *    once that frame is written, after the whole read. nrfwd then
	 *    does with the stream what it does with any (here: no answer
	 *    yet, or a reset of a malformed request). Only as many such
	 *    streams as nrfwd reset below them (slots_freed()).
	 */
	if (x->status == 0 && x->rst != NGHTTP2_REFUSED_STREAM && y->rst == NGHTTP2_REFUSED_STREAM &&
		y->status == 0 && slots_freed(a, b, x->id))
		return "taken in a slot a reset freed in the same read (19)";
	/*
	 * 4, per stream: the input ends inside the HEADERS frame that opens
	 *    a stream over SETTINGS_MAX_CONCURRENT_STREAMS; nghttp2 refuses
	 *    it at the frame header, nrfwd once the frame is whole.
	 */
	if (cv->cut_headers != 0 && x->id == cv->cut_headers && x->status == 0 && x->rst < 0 &&
		y->status == 0 && y->rst == NGHTTP2_REFUSED_STREAM)
		return "refused at the header of a frame not whole yet (4)";
	/*
	 * 18. A stream refused (over SETTINGS_MAX_CONCURRENT_STREAMS before
	 *    the client acknowledged it) whose header block then ends the
	 *    connection (it does not decode: the block is still read, to keep
	 *    the HPACK context). nrfwd writes the RST_STREAM(REFUSED_STREAM)
	 *    it queued, then the GOAWAY; nghttp2 drops the reset, as in 3.
	 *    Both tell the client the same: the stream is above the GOAWAY's
	 *    last-stream-id and was not processed, so it may be sent again.
	 */
	if (a->ga_code > 0 && b->ga_code > 0 && x->id > a->ga_last && x->status == 0 &&
		x->rst == NGHTTP2_REFUSED_STREAM && y->status == 0 && y->rst < 0)
		return "refused, then the connection error (18)";
	if ((dup_settings(a, b, cv) || bad_pad(a, b, cv)) && x->id > a->ga_last && x->status == 0 &&
		x->rst < 0)
		return "not processed after nrfwd's GOAWAY (10, 11)";
	if (((a->ga_code > 0 && b->ga_code > 0 && x->id <= a->ga_last) || cut_short(a, b, cv) ||
		    long_cont(a, b, cv) || many_settings(b, cv) || odd_goaway(b, cv) ||
		    open_block(a, b, cv) || extra_ack(b, cv) || closed_in_read(a, b, cv) ||
		    (a->ga_code < 0 && slots_freed_conn(a, b, cv))) &&
		x->id != 0 && (y->status == 0 || y->status == x->status) && y->rst < 0 &&
		(x->rst < 0 || x->rst == a->ga_code || x->rst == NGHTTP2_PROTOCOL_ERROR ||
			x->rst == NGHTTP2_FLOW_CONTROL_ERROR || x->rst == NGHTTP2_REFUSED_STREAM))
		return "written before the GOAWAY, where nghttp2 drops it";
	return NULL;
}

/* The codes of 5. */
static bool rule_code(int64_t code);

/*
 * 19, for the connection: both end it with the same code (or two of 5's),
 * nrfwd after a later stream, because the streams it took past nghttp2's
 * last-stream-id came in slots its own resets freed (nghttp2 refused them,
 * and its GOAWAY dropped those resets): each such stream with output has
 * one more reset of nrfwd's below it than such streams below it.
 */
static bool
slots_freed_conn(const struct outcome *a, const struct outcome *b, const struct cview *cv)
{
	/* nrfwd may also go on where nghttp2 ended the connection for a
	 * stream over the limit the client had acknowledged. */
	bool over_acked = a->ga_code < 0 && b->ga_code == NGHTTP2_PROTOCOL_ERROR && cv->acks > 0;
	int64_t a_last = over_acked ? INT32_MAX : a->ga_last;

	if (!over_acked &&
		(a->ga_code < 0 || b->ga_code < 0 || a->ga_last <= b->ga_last ||
			!(a->ga_code == b->ga_code || (rule_code(a->ga_code) && rule_code(b->ga_code)))))
		return false;
	/* Each stream nrfwd took past nghttp2's last-stream-id needs a slot:
	 * a reset of nrfwd's below it (one it took that way may free the
	 * next one's). */
	for (size_t i = 0; i < a->n; i++) {
		const struct sout *t = &a->st[i];
		size_t freed = 0, taken = 0;

		if (t->id <= b->ga_last || t->id > a_last || t->rst == NGHTTP2_REFUSED_STREAM)
			continue;
		for (size_t j = 0; j < a->n; j++) {
			const struct sout *x = &a->st[j];

			if (x->id >= t->id)
				continue;
			if (x->rst >= 0 && x->rst != NGHTTP2_REFUSED_STREAM)
				freed++;
			if (x->id > b->ga_last && x->rst != NGHTTP2_REFUSED_STREAM)
				taken++;
		}
		if (taken + 1 > freed)
			return false;
	}
	return true;
}

static bool
rule_code(int64_t code)
{
	return code == NGHTTP2_PROTOCOL_ERROR || code == NGHTTP2_FRAME_SIZE_ERROR ||
	       code == NGHTTP2_COMPRESSION_ERROR || code == NGHTTP2_STREAM_CLOSED;
}

/* The known, intended differences of the connection outcome. */
static bool
benign_conn(const struct outcome *a, const struct outcome *b, struct cview *cv)
{
	if (cut_short(a, b, cv) || long_cont(a, b, cv) || many_settings(b, cv) ||
		odd_goaway(b, cv) || open_block(a, b, cv) || dup_settings(a, b, cv) ||
		bad_pad(a, b, cv) || extra_ack(b, cv) || closed_in_read(a, b, cv) ||
		after_goaway(a, cv) || held_big(a, b, cv) || slots_freed_conn(a, b, cv) ||
		flood_first(a, b))
		return true;
	/*
	 * 5. The order of the checks when the input breaks two connection
	 *    rules: both end the connection after the same stream, with
	 *    PROTOCOL_ERROR, FRAME_SIZE_ERROR, COMPRESSION_ERROR or
	 *    STREAM_CLOSED (h2_guard.c's verdicts), not the same; either code
	 *    is right by RFC 9113, and which comes first is no contract.
	 *    nghttp2 checks a frame's length before most other rules, but
	 *    the first frame's type (§3.4) and a header block's CONTINUATION
	 *    (§6.10) before the length, and finds a Huffman error in a
	 *    string as its bytes come; nrfwd checks every frame's
	 *    length against SETTINGS_MAX_FRAME_SIZE first (h2_srv_recv()),
	 *    then a frame's stream id before its length (SETTINGS on a
	 *    stream, PUSH_PROMISE), and decodes a string once it is whole.
	 *    Seen: an oversized first frame that is not SETTINGS, an
	 *    oversized frame inside a header block, SETTINGS with both a
	 *    stream id and a bad length, a short PUSH_PROMISE, a Huffman EOS
	 *    in a string cut by the end of HEADERS followed by an oversized
	 *    frame, a PING on a stream after a HEADERS the guard punishes
	 *    (corpus found_check_order_*). The price: the target does not see
	 *    which of these four codes a connection error has, only that
	 *    both end the connection after the same stream.
	 */
	if (a->ga_code > 0 && b->ga_code > 0 && a->ga_last == b->ga_last && rule_code(a->ga_code) &&
		rule_code(b->ga_code))
		return true;
	return false;
}

static void
compare(struct outcome *a, struct outcome *b, struct outcome *c, struct cview *cv)
{
	bool same = !a->bad_output && !b->bad_output;
	bool verbose = getenv("FUZZ_VERBOSE") != NULL;

	if (same && (a->ga_code != b->ga_code || a->ga_last != b->ga_last))
		same = benign_conn(a, b, cv) || /* 14, with 5's codes */
		       ((a->ga_code == c->ga_code || (a->ga_code > 0 && rule_code(a->ga_code) &&
							     rule_code(c->ga_code))) &&
			       a->ga_last == c->ga_last);
	for (int pass = 0; pass < 2; pass++) {
		const struct outcome *o = pass == 0 ? a : b;

		for (size_t i = 0; same && i < o->n; i++) {
			int32_t id = o->st[i].id;
			/* copies: a stream one side does not know has id 0 */
			struct sout x = *find_stream(a, id), y = *find_stream(b, id);
			struct sout z = *find_stream(c, id);
			const char *why;

			if (x.status == y.status && x.rst == y.rst)
				continue;
			x.id = y.id = z.id = id;
			why = benign_stream(&x, &y, &z, cv, a, b);
			if (why == NULL)
				same = false;
			else if (verbose && pass == 0)
				fprintf(stderr, "fuzz_front_diff: stream %d differs: %s\n", id,
					why);
		}
	}
	if (!same || verbose) {
		fprintf(stderr, "fuzz_front_diff: %s\n", same ? "same" : "DIFFERENT outcomes");
		dump(a);
		dump(b);
		dump(c);
	}
	CHECK(same);
}

/*
 * Exception 9: the client's bytes (@p pre and @p data, without @p drop
 * trailing bytes of a frame header cut short), then an empty CONTINUATION
 * with END_HEADERS on @p sid, into a fresh nrfwd front: it must end the
 * connection with COMPRESSION_ERROR.
 */
static void
verify_block(const struct limits *lim, const uint8_t *pre, size_t pre_len, const uint8_t *data,
	size_t size, size_t drop, int32_t sid)
{
	uint8_t cont[9] = {0, 0, 0, NGHTTP2_CONTINUATION, NGHTTP2_FLAG_END_HEADERS,
		(uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8), (uint8_t)sid};
	struct outcome v = {.who = "nrfwd, block finished", .ga_code = -1, .ga_last = -1};
	struct own own;

	own_start(&own, lim);
	CHECK(fake_conn_push(own.c, pre, pre_len) == 0);
	CHECK(fake_conn_push(own.c, data, size - drop) == 0);
	CHECK(fake_conn_push(own.c, cont, sizeof(cont)) == 0);
	own_run(&own, &v);
	parse_output(&v);
	if (v.ga_code != NGHTTP2_COMPRESSION_ERROR) {
		fprintf(stderr, "fuzz_front_diff: a header block nghttp2 could not decode "
				"did not end nrfwd's connection once finished\n");
		dump(&v);
	}
	CHECK(v.ga_code == NGHTTP2_COMPRESSION_ERROR);
	own_stop(&own, &v);
	outcome_free(&v);
}

/*
 * Exception 13: the client's bytes (@p pre and @p data), then @p fill
 * zeros that finish the DATA frame the input ends in, into a fresh nrfwd
 * front: stream @p cv->verify_sid must get nghttp2's answer, or a reset
 * with PROTOCOL_ERROR where nghttp2's HTTP messaging reset it too.
 */
static void
verify_cut(const struct limits *lim, const uint8_t *pre, size_t pre_len, const uint8_t *data,
	size_t size, size_t fill, const struct cview *cv)
{
	struct outcome v = {.who = "nrfwd, DATA finished", .ga_code = -1, .ga_last = -1};
	uint8_t *zeros = calloc(1, fill + 1);
	const struct sout *x;
	struct own own;

	CHECK(zeros != NULL);
	own_start(&own, lim);
	CHECK(fake_conn_push(own.c, pre, pre_len) == 0);
	CHECK(fake_conn_push(own.c, data, size) == 0);
	CHECK(fake_conn_push(own.c, zeros, fill) == 0);
	own_run(&own, &v);
	parse_output(&v);
	x = find_stream(&v, cv->verify_sid);
	if (x->status != cv->verify_status &&
		!(cv->verify_malformed && x->rst == NGHTTP2_PROTOCOL_ERROR)) {
		fprintf(stderr,
			"fuzz_front_diff: stream %d: nghttp2 answered %d on part of a "
			"DATA frame, nrfwd not on the whole frame\n",
			cv->verify_sid, cv->verify_status);
		dump(&v);
		abort();
	}
	own_stop(&own, &v);
	outcome_free(&v);
	free(zeros);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct limits small = {1024, 512, 4}, normal = {16384, 65536, 100};
	static bool once;
	struct outcome oa = {.who = "nrfwd       ", .ga_code = -1, .ga_last = -1};
	struct outcome ob = {.who = "nghttp2     ", .ga_code = -1, .ga_last = -1};
	struct outcome oc = {.who = "nghttp2+http", .ga_code = -1, .ga_last = -1};
	struct cview cv = {.ga_last = 0x7fffffffu};
	const struct limits *lim;
	struct h2f cf;
	struct own own;
	struct ng ng, nm;
	size_t piece;
	uint8_t b0;

	if (!once) {
		once = true;
		if (getenv("WORLD_LOG") == NULL)
			nrf_log_set_level((enum nrf_log_level) - 1); /* nothing printed */
	}
	if (size < 1)
		return 0;
	b0 = data[0];
	data++;
	size--;
	piece = pieces[b0 & 15];
	lim = (b0 & 0x20) ? &small : &normal;

	own_start(&own, lim);
	ng_start(&ng, lim, false);
	ng_start(&nm, lim, true);
	h2f_init(&cf, PREFACE_LEN, on_client_frame, &cv);
	cv.f = &cf;
	own_run(&own, &oa);
	ng_run(&ng, &ob);
	ng_run(&nm, &oc);
	if (!(b0 & 0x10)) {
		CHECK(fake_conn_push(own.c, preface, PREFACE_LEN) == 0);
		ng_recv(&ng, (const uint8_t *)preface, PREFACE_LEN);
		ng_recv(&nm, (const uint8_t *)preface, PREFACE_LEN);
		h2f_feed(&cf, (const uint8_t *)preface, PREFACE_LEN);
	}
	for (size_t off = 0; off < size;) {
		size_t k = piece == 0 || piece > size - off ? size - off : piece;

		CHECK(fake_conn_push(own.c, data + off, k) == 0);
		ng_recv(&ng, data + off, k);
		ng_recv(&nm, data + off, k);
		h2f_feed(&cf, data + off, k);
		off += k;
		own_run(&own, &oa);
		ng_run(&ng, &ob);
		ng_run(&nm, &oc);
	}
	cv.cut = cf.hd_len == 9 && cf.pl_len < cf.pl_need;
	oa.closed = fake_conn_closed(own.c);
	cv.long_cont = cv.cut && cf.hd[3] == NGHTTP2_CONTINUATION && cf.pl_need > 16384;
	if (cv.cut && cf.hd[3] == NGHTTP2_DATA)
		cv.cut_data = (int32_t)(get32(cf.hd + 5) & 0x7fffffffu);
	if (cv.cut && cf.hd[3] == NGHTTP2_HEADERS)
		cv.cut_headers = (int32_t)(get32(cf.hd + 5) & 0x7fffffffu);
	if (cv.cut && cf.hd[3] == NGHTTP2_SETTINGS && cf.pl_need > 32 * 6)
		cv.many_settings = true;
	cv.held_big = cv.cut && cf.pl_need > 16384 && cf.pl_len < ng_guard_wants(cf.hd);
	parse_output(&oa);
	parse_output(&ob);
	parse_output(&oc);
	compare(&oa, &ob, &oc, &cv);

	own_stop(&own, &oa);
	if (cv.verify_blk)
		verify_block(lim, (const uint8_t *)preface, (b0 & 0x10) ? 0 : PREFACE_LEN, data,
			size, cf.hd_len, cv.blk);
	if (cv.verify_sid != 0)
		verify_cut(lim, (const uint8_t *)preface, (b0 & 0x10) ? 0 : PREFACE_LEN, data, size,
			cf.pl_need - cf.pl_len, &cv);
	nghttp2_session_del(ng.sess);
	nghttp2_session_del(nm.sess);
	free(ng.st);
	free(nm.st);
	free(ng.feed);
	free(nm.feed);
	h2f_fini(&cf);
	free(cv.rst);
	free(cv.es);
	outcome_free(&oa);
	outcome_free(&ob);
	outcome_free(&oc);
	return 0;
}
