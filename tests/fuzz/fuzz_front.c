/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: arbitrary bytes from a client on a front connection of
 * a real nrfwd worker (rt_world.h): nghttp2's server session, nrfwd's
 * frame-header pass and HTTP checks (lib/h2), the Via scan, the decision
 * (answer_at_once(), nrf_fwd_decide()), transactions, tries at the local
 * NRF and the peers, relays — everything behind rt_front_cbs, on the fake
 * transport, with upstreams that answer as the first two bytes say.
 *
 * Input: byte 0 and byte 1 choose the scene, the rest is what the client
 * sends (the connection preface is put in front of it unless byte 1 says
 * "raw"), in pieces of the chosen size with one worker loop turn after
 * each piece.
 *
 *   byte 0  bits 0-2  local NRF: data, 404, empty, reset, refuses, silent,
 *                     GOAWAY, none configured (a pure forwarder)
 *           bits 3-4  nrf-b: data, 404, 503, reset
 *           bit 5     nrf-c refuses (else answers data)
 *           bit 6     small limits (1 KiB headers, 512 B bodies, 4 streams)
 *           bit 7     NRF Growth forwarding to nrf-g (answers 404)
 *   byte 1  bits 0-3  piece size: whole, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32,
 *                     64, 100, 256, 1000, 4096
 *           bit 4     raw: no preface put in front
 *           bit 5     the client reads slowly (128 bytes in flight)
 *           bit 6     the client resets the connection at the end (else FIN)
 *
 * Checked, abort() when not:
 *   - nrfwd's output on the connection is well-formed for a server: per
 *     stream at most one HEADERS (nrfwd sends no 1xx, no trailers), no DATA
 *     before it, nothing after END_STREAM or RST_STREAM, no PUSH_PROMISE;
 *   - every request delivered to the pipeline (on_request) gets an answer
 *     (HEADERS) or a RST_STREAM once the worker is idle, unless the client
 *     reset that stream or the connection ended with an error;
 *   - no transaction is left without an answer, none is left at all once
 *     every timer that matters has run (world_settle());
 *   - everything nrfwd sends an upstream is valid HTTP/2 (rt_world.c);
 *   - once the client is gone: no front connection, stream or transaction
 *     left, every transport connection closed by nrfwd when the runtime is
 *     freed; leaks are LeakSanitizer's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_frames.h"
#include "rt_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN (sizeof(preface) - 1)

static const size_t pieces[16] = {0, 1, 2, 3, 5, 8, 9, 13, 16, 24, 32, 64, 100, 256, 1000,
	4096};
static const uint8_t local_modes[8] = {UP_DATA, UP_404, UP_EMPTY, UP_RESET, UP_REFUSE,
	UP_SILENT, UP_GOAWAY, UP_404 /* unused: no local NRF */};
static const uint8_t b_modes[4] = {UP_DATA, UP_404, UP_503, UP_RESET};

struct fstream {
	int32_t id;
	uint8_t headers;   /* HEADERS frames from nrfwd */
	bool end;          /* END_STREAM from nrfwd */
	bool rst_out;      /* RST_STREAM from nrfwd */
	bool rst_in;       /* RST_STREAM from the client */
};

struct client {
	struct world *w;
	struct fake_conn *c;
	bool slow;
	bool goaway_err;   /* nrfwd ended the connection with an error */
	struct fstream *st;
	size_t n_st;
	size_t cap_st;
	struct h2f in;     /* client -> nrfwd */
	struct h2f out;    /* nrfwd -> client */
};

static struct fstream *
stream(struct client *cl, int32_t id)
{
	for (size_t i = 0; i < cl->n_st; i++)
		if (cl->st[i].id == id)
			return &cl->st[i];
	if (cl->n_st == cl->cap_st) {
		cl->cap_st = cl->cap_st * 2 + 16;
		cl->st = realloc(cl->st, cl->cap_st * sizeof(*cl->st));
		WORLD_CHECK(cl->st != NULL);
	}
	memset(&cl->st[cl->n_st], 0, sizeof(cl->st[0]));
	cl->st[cl->n_st].id = id;
	return &cl->st[cl->n_st++];
}

static void
on_client_frame(void *arg, uint8_t type, uint8_t flags, int32_t id, const uint8_t *pl,
	size_t len)
{
	struct client *cl = arg;

	(void)flags;
	(void)pl;
	(void)len;
	if (type == H2F_RST_STREAM && id != 0)
		stream(cl, id)->rst_in = true;
}

static void
on_server_frame(void *arg, uint8_t type, uint8_t flags, int32_t id, const uint8_t *pl,
	size_t len)
{
	struct client *cl = arg;
	struct fstream *s;

	switch (type) {
	case H2F_HEADERS:
		s = stream(cl, id);
		WORLD_CHECK(!s->end && !s->rst_out);   /* nothing after the end */
		WORLD_CHECK(s->headers == 0);          /* one answer per stream */
		s->headers++;
		if (flags & H2F_END_STREAM)
			s->end = true;
		break;
	case H2F_DATA:
		if (id == 0)
			break; /* not nrfwd's doing: nghttp2 does not send it */
		s = stream(cl, id);
		WORLD_CHECK(s->headers > 0);           /* DATA after HEADERS */
		WORLD_CHECK(!s->end && !s->rst_out);
		if (flags & H2F_END_STREAM)
			s->end = true;
		break;
	case H2F_RST_STREAM:
		stream(cl, id)->rst_out = true;
		break;
	case H2F_GOAWAY:
		if (len >= 8 && h2f_u32(pl + 4) != 0)
			cl->goaway_err = true;
		break;
	case H2F_PUSH_PROMISE:
		WORLD_CHECK(!"nrfwd never pushes");
		break;
	default:
		break;
	}
}

/* The client reads what nrfwd wrote (128 bytes a turn when slow). */
static bool
client_io(void *arg)
{
	struct client *cl = arg;
	const uint8_t *p;
	size_t n;

	p = fake_conn_out(cl->c, &n);
	if (n == 0)
		return false;
	if (cl->slow && n > 128)
		n = 128;
	h2f_feed(&cl->out, p, n);
	fake_conn_take(cl->c, n);
	return true;
}

static void
client_send(struct client *cl, const uint8_t *p, size_t n)
{
	WORLD_CHECK(fake_conn_push(cl->c, p, n) == 0);
	h2f_feed(&cl->in, p, n);
}

/* Once the worker is idle: every delivered request was answered. */
static void
check_answers(struct client *cl)
{
	const int32_t *ids;
	size_t n = world_front_delivered(cl->w, &ids);
	bool dead = cl->goaway_err || fake_conn_closed(cl->c) || world_front_gone(cl->w);

	if (getenv("FUZZ_VERBOSE") != NULL) {
		fprintf(stderr, "fuzz_front: %zu delivered, connection %s\n", n,
			dead ? "ended with an error" : "up");
		for (size_t i = 0; i < cl->n_st; i++)
			fprintf(stderr, "fuzz_front: stream %d: headers %u end %d rst out %d in %d\n",
				cl->st[i].id, cl->st[i].headers, cl->st[i].end, cl->st[i].rst_out,
				cl->st[i].rst_in);
	}
	WORLD_CHECK(world_unanswered(cl->w) == 0);
	WORLD_CHECK(world_open_xacts(cl->w) == 0);
	if (dead)
		return;
	for (size_t i = 0; i < n; i++) {
		struct fstream *s = stream(cl, ids[i]);

		if (s->rst_in)
			continue;
		if (s->headers == 0 && !s->rst_out)
			fprintf(stderr, "fuzz_front: stream %d delivered, never answered\n", ids[i]);
		WORLD_CHECK(s->headers > 0 || s->rst_out);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world_params p;
	struct client cl;
	struct world *w;
	size_t piece, off;
	uint32_t conns, streams;
	uint8_t b0, b1;
	bool raw;

	if (size < 2)
		return 0;
	b0 = data[0];
	b1 = data[1];
	data += 2;
	size -= 2;
	memset(&p, 0, sizeof(p));
	p.local = (b0 & 7) != 7;
	p.up[UP_LOCAL] = local_modes[b0 & 7];
	p.up[UP_B] = b_modes[(b0 >> 3) & 3];
	p.up[UP_C] = (b0 & 0x20) ? UP_REFUSE : UP_DATA;
	p.up[UP_G] = UP_404;
	p.small_limits = (b0 & 0x40) != 0;
	p.growth = (b0 & 0x80) != 0;
	piece = pieces[b1 & 15];
	raw = (b1 & 0x10) != 0;

	w = world_create(&p);
	memset(&cl, 0, sizeof(cl));
	cl.w = w;
	cl.c = world_front_open(w);
	cl.slow = (b1 & 0x20) != 0;
	if (cl.slow)
		fake_conn_set_out_cap(cl.c, 128);
	h2f_init(&cl.in, PREFACE_LEN, on_client_frame, &cl);
	h2f_init(&cl.out, 0, on_server_frame, &cl);

	if (!raw)
		client_send(&cl, (const uint8_t *)preface, PREFACE_LEN);
	for (off = 0; off < size;) {
		size_t k = piece == 0 || piece > size - off ? size - off : piece;

		client_send(&cl, data + off, k);
		off += k;
		world_turn(w, client_io, &cl);
	}
	world_settle(w, client_io, &cl);
	check_answers(&cl);

	/* The client goes away: nothing of it may stay. */
	if (b1 & 0x40)
		fake_conn_reset(cl.c);
	else
		fake_conn_shutdown(cl.c);
	world_settle(w, client_io, &cl);
	WORLD_CHECK(world_front_gone(w));
	WORLD_CHECK(world_open_xacts(w) == 0);
	world_h2_gauges(w, &conns, &streams);
	WORLD_CHECK(conns == 0);

	world_free(w);
	h2f_fini(&cl.in);
	h2f_fini(&cl.out);
	free(cl.st);
	return 0;
}
