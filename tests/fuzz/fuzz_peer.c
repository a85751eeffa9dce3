/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: an upstream (the local NRF or a forwarding peer) that
 * answers nrfwd's forwarded requests with arbitrary bytes, behind a real
 * nrfwd worker (rt_world.h): nghttp2's client session and nrfwd's peer
 * stream handling (lib/h2), the pools and health, the tries, held answers,
 * the answer rule of docs/failures.md (lib/fwd) and the relay to a
 * well-behaved client (an nghttp2 client session here).
 *
 * Input: byte 0 and byte 1 choose the scene; the rest is the script of the
 * fuzzed upstream: connection k to it writes segment k (segments
 * separated by "\n--\n"; further connections are refused), once nrfwd sent
 * a request on it, in pieces of the chosen size, one worker loop turn per
 * piece.
 *
 *   byte 0  bits 0-1  fuzzed: 0 the local NRF (nrf-b as bits 2-3 say),
 *                     1 nrf-b with the local NRF answering 404, 2 nrf-b with
 *                     the local NRF refusing connections, 3 nrf-b with no
 *                     local NRF (a pure forwarder)
 *           bits 2-3  the canned peer (nrf-c; nrf-b when the local NRF is
 *                     fuzzed): data, empty, 404, refuses
 *           bit 4     three requests at once (else one)
 *           bit 5     second set of requests (POST subscription, GET with
 *                     nrf-b in Via, PUT registration: local only), else GET
 *                     discovery, GET profile, HEAD discovery
 *           bit 6     the script ends with end of stream (else silence)
 *           bit 7     NRF Growth forwarding to nrf-g (answers 404)
 *   byte 1  bits 0-3  piece size: whole, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32,
 *                     64, 100, 256, 1000, 4096
 *
 * Checked, abort() when not (with the configuration's limits, answers of
 * this size are always held whole before they are relayed, so the client
 * never sees a reset: docs/failures.md, "Held answers"):
 *   - every request gets exactly one complete answer: final HEADERS, the
 *     body, END_STREAM; no RST_STREAM, no GOAWAY, nothing the client's
 *     nghttp2 session finds invalid (a truncated body passed as complete
 *     fails its content-length check);
 *   - a 404 reaches the client only when the local NRF claimed absence
 *     itself (a 404 or a 200 was counted from it) or there is none: a
 *     failure of the local NRF is never turned into absence;
 *   - everything nrfwd sends an upstream is valid HTTP/2 (rt_world.c);
 *   - no transaction is left once every timer that matters has run, and
 *     nothing of the client once it is gone; leaks are LeakSanitizer's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "rt_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const size_t pieces[16] = {0, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32, 64, 100, 256, 1000,
	4096};
static const uint8_t canned[4] = {UP_DATA, UP_EMPTY, UP_404, UP_REFUSE};

struct req {
	const char *method;
	const char *path;
	const char *via;   /* NULL: none */
	const char *body;  /* NULL: none */
};

#define PROFILE "/nnrf-nfm/v1/nf-instances/4947a69a-f61b-4bc1-b9da-47c9c5d14b64"

static const struct req reqs[2][3] = {
	{
		{"GET", "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF",
			NULL, NULL},
		{"GET", PROFILE, NULL, NULL},
		{"HEAD", "/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF",
			NULL, NULL},
	},
	{
		{"POST", "/nnrf-nfm/v1/subscriptions", NULL,
			"{\"nfStatusNotificationUri\":\"http://10.1.1.1/notify\","
			"\"reqNfType\":\"SMF\",\"subscrCond\":{\"nfType\":\"AMF\"}}"},
		{"GET", "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF",
			"2.0 nrf-b.fuzz.example:8000", NULL},
		{"PUT", PROFILE, NULL,
			"{\"nfInstanceId\":\"4947a69a-f61b-4bc1-b9da-47c9c5d14b64\","
			"\"nfType\":\"AMF\",\"nfStatus\":\"REGISTERED\"}"},
	},
};

struct rstate {
	int32_t id;
	const struct req *r;
	size_t body_off;
	int status;        /* final status */
	int finals;        /* final HEADERS received */
	bool end;
	bool closed;
	uint32_t code;     /* RST_STREAM code (0: a normal close) */
	char from[16];     /* x-fake-upstream of the answer */
};

struct client {
	struct world *w;
	struct fake_conn *c;
	nghttp2_session *s;
	struct rstate rq[3];
	int n;
	bool goaway;
	bool invalid;
};

static struct rstate *
rstate_of(struct client *cl, int32_t id)
{
	for (int i = 0; i < cl->n; i++)
		if (cl->rq[i].id == id)
			return &cl->rq[i];
	return NULL;
}

static int
c_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
	const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct client *cl = ud;
	struct rstate *r = rstate_of(cl, f->hd.stream_id);

	(void)s;
	(void)flags;
	if (r != NULL && nlen == 7 && memcmp(name, ":status", 7) == 0 && vlen == 3 &&
		value[0] >= '2') {
		r->status = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
		r->finals++;
	}
	if (r != NULL && nlen == 15 && memcmp(name, "x-fake-upstream", 15) == 0)
		snprintf(r->from, sizeof(r->from), "%.*s", (int)vlen, (const char *)value);
	return 0;
}

static int
c_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct client *cl = ud;
	struct rstate *r = rstate_of(cl, f->hd.stream_id);

	(void)s;
	if (f->hd.type == NGHTTP2_GOAWAY)
		cl->goaway = true;
	if (r != NULL && (f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
		(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		r->end = true;
	return 0;
}

static int
c_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct client *cl = ud;
	struct rstate *r = rstate_of(cl, id);

	(void)s;
	if (r != NULL) {
		r->closed = true;
		r->code = code;
	}
	return 0;
}

static int
c_invalid(nghttp2_session *s, const nghttp2_frame *f, int err, void *ud)
{
	struct client *cl = ud;

	(void)s;
	fprintf(stderr, "fuzz_peer: client got an invalid frame: type %u stream %d: %s\n",
		f->hd.type, f->hd.stream_id, nghttp2_strerror(err));
	cl->invalid = true;
	return 0;
}

static ssize_t
c_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *fl,
	nghttp2_data_source *src, void *ud)
{
	struct rstate *r = src->ptr;
	size_t left = strlen(r->r->body) - r->body_off;

	(void)s;
	(void)id;
	(void)ud;
	if (len > left)
		len = left;
	memcpy(buf, r->r->body + r->body_off, len);
	r->body_off += len;
	if (r->body_off == strlen(r->r->body))
		*fl |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)len;
}

#define NV(n, v)                                                               \
	{                                                                      \
		(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v),          \
			NGHTTP2_NV_FLAG_NONE                                   \
	}

static void
submit(struct client *cl, const struct req *q)
{
	struct rstate *r = &cl->rq[cl->n];
	char clen[24];
	nghttp2_nv nv[8] = {
		NV(":method", q->method),
		NV(":scheme", "http"),
		NV(":authority", "nrf-a.fuzz.example:8080"),
		NV(":path", q->path),
		NV("accept", "application/json"),
	};
	size_t n = 5;
	nghttp2_data_provider dp = {.source.ptr = r, .read_callback = c_body};

	if (q->via != NULL)
		nv[n++] = (nghttp2_nv)NV("via", q->via);
	if (q->body != NULL) {
		snprintf(clen, sizeof(clen), "%zu", strlen(q->body));
		nv[n++] = (nghttp2_nv)NV("content-type", "application/json");
		nv[n++] = (nghttp2_nv)NV("content-length", clen);
	}
	memset(r, 0, sizeof(*r));
	r->r = q;
	r->id = nghttp2_submit_request(cl->s, NULL, nv, n, q->body != NULL ? &dp : NULL, r);
	WORLD_CHECK(r->id > 0);
	cl->n++;
}

/* The client's turn: its output to nrfwd, nrfwd's output to it. */
static bool
client_io(void *arg)
{
	struct client *cl = arg;
	const uint8_t *p;
	ssize_t len;
	size_t n;
	bool moved = false;

	p = fake_conn_out(cl->c, &n);
	if (n > 0) {
		len = nghttp2_session_mem_recv(cl->s, p, n);
		if (len < 0)
			fprintf(stderr, "fuzz_peer: client session: %s\n",
				nghttp2_strerror((int)len));
		WORLD_CHECK(len == (ssize_t)n);
		fake_conn_take(cl->c, n);
		moved = true;
	}
	while ((len = nghttp2_session_mem_send(cl->s, &p)) > 0) {
		WORLD_CHECK(fake_conn_push(cl->c, p, (size_t)len) == 0);
		moved = true;
	}
	WORLD_CHECK(len == 0);
	return moved;
}

static nghttp2_session *
client_session(struct client *cl)
{
	nghttp2_session_callbacks *cbs;
	nghttp2_session *s;

	WORLD_CHECK(nghttp2_session_callbacks_new(&cbs) == 0);
	nghttp2_session_callbacks_set_on_header_callback(cbs, c_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, c_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, c_stream_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cbs, c_invalid);
	WORLD_CHECK(nghttp2_session_client_new(&s, cbs, cl) == 0);
	nghttp2_session_callbacks_del(cbs);
	WORLD_CHECK(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0) == 0);
	return s;
}

static void
check_answers(struct client *cl, bool local)
{
	if (getenv("FUZZ_VERBOSE") != NULL)
		for (int i = 0; i < cl->n; i++)
			fprintf(stderr, "fuzz_peer: %s %s: status %d x-fake-upstream %s, closed %d code %u\n",
				cl->rq[i].r->method, cl->rq[i].r->path, cl->rq[i].status,
				cl->rq[i].from[0] != '\0' ? cl->rq[i].from : "-",
				cl->rq[i].closed, cl->rq[i].code);
	WORLD_CHECK(!cl->goaway);
	WORLD_CHECK(!cl->invalid);
	for (int i = 0; i < cl->n; i++) {
		const struct rstate *r = &cl->rq[i];

		if (!(r->closed && r->code == 0 && r->finals == 1 && r->end))
			fprintf(stderr, "fuzz_peer: %s %s: closed %d code %u finals %d end %d "
				"status %d\n", r->r->method, r->r->path, r->closed, r->code,
				r->finals, r->end, r->status);
		WORLD_CHECK(r->closed);
		WORLD_CHECK(r->code == 0);
		WORLD_CHECK(r->finals == 1);
		WORLD_CHECK(r->end);
		/* A failure is never turned into absence (docs/failures.md). */
		if (r->status == 404 && local)
			WORLD_CHECK(world_up_status(cl->w, UP_LOCAL, 404) +
				world_up_status(cl->w, UP_LOCAL, 200) > 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world_params p;
	struct client cl;
	struct world *w;
	uint32_t conns, streams;
	uint8_t b0, b1;
	int n_req;

	if (size < 2)
		return 0;
	b0 = data[0];
	b1 = data[1];
	memset(&p, 0, sizeof(p));
	p.script = data + 2;
	p.script_len = size - 2;
	p.chunk = pieces[b1 & 15];
	p.script_close = (b0 & 0x40) != 0;
	p.growth = (b0 & 0x80) != 0;
	p.local = true;
	p.up[UP_C] = UP_DATA;
	p.up[UP_G] = UP_404;
	switch (b0 & 3) {
	case 0:
		p.up[UP_LOCAL] = UP_SCRIPT;
		p.up[UP_B] = canned[(b0 >> 2) & 3];
		break;
	case 1:
	case 2:
	case 3:
		p.up[UP_LOCAL] = (b0 & 3) == 1 ? UP_404 : UP_REFUSE;
		p.local = (b0 & 3) != 3;
		p.up[UP_B] = UP_SCRIPT;
		p.up[UP_C] = canned[(b0 >> 2) & 3];
		break;
	}
	n_req = (b0 & 0x10) ? 3 : 1;

	w = world_create(&p);
	memset(&cl, 0, sizeof(cl));
	cl.w = w;
	cl.c = world_front_open(w);
	cl.s = client_session(&cl);
	for (int i = 0; i < n_req; i++)
		submit(&cl, &reqs[(b0 >> 5) & 1][i]);
	world_settle(w, client_io, &cl);
	check_answers(&cl, p.local);

	/* The client goes away: nothing of it may stay. */
	WORLD_CHECK(nghttp2_session_terminate_session(cl.s, NGHTTP2_NO_ERROR) == 0);
	client_io(&cl);
	fake_conn_shutdown(cl.c);
	world_settle(w, NULL, NULL);
	WORLD_CHECK(world_front_gone(w));
	WORLD_CHECK(world_open_xacts(w) == 0);
	world_h2_gauges(w, &conns, &streams);
	WORLD_CHECK(conns == 0);

	world_free(w);
	nghttp2_session_del(cl.s);
	return 0;
}
