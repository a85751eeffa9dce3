/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfstub: a small NRF stand-in for demos, integration tests and
 * benchmarks. HTTP/2 cleartext (prior knowledge) server, one thread, one
 * epoll loop, non-blocking sockets, nghttp2 server sessions driven through
 * nghttp2_session_mem_recv / nghttp2_session_mem_send.
 *
 * Output path: frames from mem_send are gathered in one loop-wide buffer
 * and written with one send() per connection turn; only what the kernel
 * does not take is copied into a per-connection backlog, so idle
 * connections hold no output memory. Delayed answers (fault "delay") wait
 * on a deadline-sorted list that sets the epoll_wait timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include "nrf_addr.h"
#include "nrf_common.h"
#include "nrf_log.h"
#include "nrf_sys.h"
#include "stub.h"

#define EXIT_USAGE 2
#define WBUF_SIZE (128u << 10)		/* gather buffer shared by all conns */
#define RBUF_SIZE (64u << 10)
#define PEND_HIGH (256u << 10)		/* backlog that stops reading/producing */
#define STREAM_POOL_MAX 4096
#define CONN_WINDOW (4u << 20)
#define STREAM_WINDOW (1u << 20)

enum ev_kind {
	EV_LISTEN,
	EV_SIGNAL,
	EV_CONN,
};

enum kill_mode {
	KILL_NONE = 0,
	KILL_FIN,
	KILL_RST,
	KILL_GARBAGE,
	KILL_DROP,	/* FIN after what is produced so far; no GOAWAY */
};

struct loop;

struct conn {
	enum ev_kind kind;	/* first: epoll data points here */
	struct nrf_list link;	/* in lp->conns */
	struct loop *lp;
	int fd;
	uint32_t id;
	uint32_t events;
	enum kill_mode kill;
	nghttp2_session *sess;
	struct nrf_list streams;	/* struct stream.link */
	char *pend;		/* bytes the kernel did not take yet */
	size_t pend_off;
	size_t pend_len;
	size_t pend_cap;
};

struct loop {
	struct stub st;
	int ep;
	enum ev_kind lsn_kind;
	int lfd;
	enum ev_kind sig_kind;
	int sfd;
	int reserve_fd;		/* spare fd to shed connections on EMFILE */
	int stop;
	struct nrf_list conns;	/* struct conn.link */
	uint32_t next_conn_id;
	struct stream *pool;
	uint32_t pool_n;
	struct stream *thead;	/* delayed answers, sorted by deadline */
	struct stream *ttail;
	nghttp2_session_callbacks *cbs;
	nghttp2_option *opt;
	size_t wlen;
	char wbuf[WBUF_SIZE];
	char rbuf[RBUF_SIZE];
};

static const char garbage[] =
	"This is not HTTP/2. \xff\xfe\xfd\x00\x01 nrfstub garbage fault\r\n";

#define NV(n, v, vl) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), \
	NGHTTP2_NV_FLAG_NO_COPY_NAME}

/* ---- streams ----------------------------------------------------------- */

static struct stream *
stream_get(struct loop *lp, struct conn *c, int32_t id)
{
	struct stream *s = lp->pool, keep;

	if (s != NULL) {
		lp->pool = s->next;
		lp->pool_n--;
	} else {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return NULL;
	}
	keep = *s;
	memset(s, 0, sizeof(*s));
	s->hbuf = keep.hbuf;
	s->hcap = keep.hcap;
	s->hv = keep.hv;
	s->hv.n = 0;
	s->body = keep.body;
	s->body_cap = keep.body_cap;
	s->sha = keep.sha;
	/* offset 0 is the empty string: an absent span reads as "" */
	if (s->hcap == 0) {
		s->hbuf = malloc(1024);
		if (s->hbuf == NULL) {
			free(s->hv.v);
			free(s->body);
			EVP_MD_CTX_free(s->sha);
			free(s);
			return NULL;
		}
		s->hcap = 1024;
	}
	s->hbuf[0] = '\0';
	s->hlen = 1;
	s->conn = c;
	s->id = id;
	/* A digest only while recording (one context per pooled stream, made
	 * on first use); one kept from an earlier stream is always reset. */
	if (lp->st.rec.enabled && s->sha == NULL)
		s->sha = EVP_MD_CTX_new();
	if (s->sha != NULL && !EVP_DigestInit_ex(s->sha, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(s->sha);
		s->sha = NULL;
	}
	nrf_list_add_head(&c->streams, &s->link);
	lp->st.stats.streams_active++;
	return s;
}

static void
timer_del(struct loop *lp, struct stream *s)
{
	if (s->tprev != NULL)
		s->tprev->tnext = s->tnext;
	else
		lp->thead = s->tnext;
	if (s->tnext != NULL)
		s->tnext->tprev = s->tprev;
	else
		lp->ttail = s->tprev;
	s->tnext = s->tprev = NULL;
	s->flags &= ~STREAM_F_TIMER;
}

/* Insert from the tail: with one delay value deadlines arrive in order. */
static void
timer_add(struct loop *lp, struct stream *s)
{
	struct stream *t = lp->ttail;

	while (t != NULL && t->deadline_ns > s->deadline_ns)
		t = t->tprev;
	s->tprev = t;
	s->tnext = t != NULL ? t->tnext : lp->thead;
	if (s->tnext != NULL)
		s->tnext->tprev = s;
	else
		lp->ttail = s;
	if (t != NULL)
		t->tnext = s;
	else
		lp->thead = s;
	s->flags |= STREAM_F_TIMER;
}

static void
stream_release(struct loop *lp, struct stream *s)
{
	struct conn *c = s->conn;

	if (!(s->flags & (STREAM_F_RECORDED | STREAM_F_CONTROL)) &&
	    s->method.len > 0) {
		/* the client gave up (or the connection died) mid-request */
		lp->st.stats.incomplete++;
		rec_add(&lp->st.rec, s, c->id, 0, "none", lp->st.now_ms);
	}
	if (s->flags & STREAM_F_TIMER)
		timer_del(lp, s);
	nrf_list_del(&s->link);
	blob_put(s->rbody);
	s->rbody = NULL;
	free(s->location);
	s->location = NULL;
	lp->st.stats.streams_active--;
	/* keep ordinary buffers for reuse, drop outsized ones */
	if (s->body_cap > (64u << 10)) {
		free(s->body);
		s->body = NULL;
		s->body_cap = 0;
	}
	if (s->hcap > (16u << 10)) {
		free(s->hbuf);
		s->hbuf = NULL;
		s->hcap = 0;
	}
	if (lp->pool_n >= STREAM_POOL_MAX) {
		free(s->hbuf);
		free(s->hv.v);
		free(s->body);
		EVP_MD_CTX_free(s->sha);
		free(s);
		return;
	}
	s->next = lp->pool;
	lp->pool = s;
	lp->pool_n++;
}

static void
stream_free_all(struct stream *s)
{
	while (s != NULL) {
		struct stream *n = s->next;

		free(s->hbuf);
		free(s->hv.v);
		free(s->body);
		EVP_MD_CTX_free(s->sha);
		free(s);
		s = n;
	}
}

void
stream_respond(struct stream *s, int status, const char *ctype,
	struct blob *body)
{
	blob_put(s->rbody);
	s->status = status;
	s->rctype = ctype;
	s->rbody = body;
	s->roff = 0;
	if (body == NULL && ctype != NULL) {
		/* the body could not be built: say so without one */
		s->status = 500;
		s->rctype = NULL;
	}
}

/* Append @p len bytes plus a NUL to the header buffer. */
static int
hbuf_add(struct stream *s, const uint8_t *p, size_t len, struct span *out)
{
	if (s->hlen + len + 1 > s->hcap) {
		size_t cap = s->hcap;
		char *nb;

		while (cap < s->hlen + len + 1)
			cap *= 2;
		nb = realloc(s->hbuf, cap);
		if (nb == NULL)
			return -1;
		s->hbuf = nb;
		s->hcap = cap;
	}
	memcpy(s->hbuf + s->hlen, p, len);
	out->off = (uint32_t)s->hlen;
	out->len = (uint32_t)len;
	s->hlen += len;
	s->hbuf[s->hlen++] = '\0';
	return 0;
}

static ssize_t
body_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t length,
	uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct stream *s = src->ptr;
	size_t n = NRF_MIN(length, s->rbody->len - s->roff);

	(void)sess;
	(void)id;
	(void)ud;
	if (s->cut > 0) {
		/* FAULT_TRUNCATE: nghttp2 resets the stream (INTERNAL_ERROR) when
		 * the source fails, after the bytes already given. FAULT_DROP:
		 * the stream waits and conn_flush() closes the connection once
		 * the bytes already given are out. */
		if (s->roff >= s->cut - 1) {
			if (!(s->flags & STREAM_F_CUT_DROP))
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
			s->conn->kill = KILL_DROP;
			return NGHTTP2_ERR_DEFERRED;
		}
		n = NRF_MIN(n, s->cut - 1 - s->roff);
	}
	memcpy(buf, s->rbody->data + s->roff, n);
	s->roff += n;
	if (s->roff == s->rbody->len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* Decimal text of @p v into @p buf (NUL-terminated); returns the length. */
static size_t
utoa(uint64_t v, char *buf)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

static void
stream_submit(struct loop *lp, struct conn *c, struct stream *s)
{
	nghttp2_data_provider prd;
	nghttp2_nv nva[7];
	size_t n = 0, nlen;
	int rv, st = s->status;

	if (st < 200 || st > 599)
		st = s->status = 500;
	utoa((uint64_t)st, s->status_str);
	nva[n++] = (nghttp2_nv)NV(":status", s->status_str, 3);
	if (s->rbody != NULL) {
		nlen = utoa(s->rbody->len, s->clen_str);
		if (s->rctype != NULL)
			nva[n++] = (nghttp2_nv)NV("content-type", s->rctype,
				strlen(s->rctype));
		nva[n++] = (nghttp2_nv)NV("content-length", s->clen_str, nlen);
	}
	nva[n++] = (nghttp2_nv)NV("x-nrfstub", lp->st.name, strlen(lp->st.name));
	if (s->location != NULL)
		nva[n++] = (nghttp2_nv)NV("location", s->location,
			strlen(s->location));
	if (s->allow != NULL)
		nva[n++] = (nghttp2_nv)NV("allow", s->allow, strlen(s->allow));
	prd.source.ptr = s;
	prd.read_callback = body_read;
	/* A HEAD answer carries the headers of the GET answer, never a body
	 * (RFC 9110 §9.3.2); nghttp2 treats DATA on it as a protocol error.
	 * --head-body sends it anyway, as some servers do (tests of proxies). */
	rv = nghttp2_submit_response(c->sess, s->id, nva, n,
		s->rbody != NULL && s->rbody->len > 0 &&
				(lp->st.head_body ||
					!(s->method.len == 4 &&
						strcmp(stream_str(s, s->method), "HEAD") == 0))
			? &prd
			: NULL);
	if (rv != 0) {
		NRF_LOG_RL(WARN, STUB_MODULE, "conn %u stream %d: submit: %s",
			c->id, s->id, nghttp2_strerror(rv));
		nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, s->id,
			NGHTTP2_INTERNAL_ERROR);
		return;
	}
	s->flags |= STREAM_F_ANSWERED;
	lp->st.stats.status[st]++;
}

/*
 * FAULT_BIGDROP: build the answer to learn its size. Returns 1 when it is
 * over the limit (the answer is thrown away: the connection will be
 * dropped instead), else 0 with the answer in place and @p hold_ms set to
 * the time it waits (only until the first drop).
 */
static int
bigdrop_check(struct stub *st, struct stream *s, long *hold_ms)
{
	api_handle(st, s);
	if (s->rbody == NULL || s->rbody->len <= (size_t)st->fault.arg) {
		*hold_ms = st->fault.dropped ? 0 : st->fault.hold;
		return 0;
	}
	stream_respond(s, 0, NULL, NULL);
	free(s->location);
	s->location = NULL;
	s->allow = NULL;
	return 1;
}

/* A request is complete: answer it, record it, apply the fault mode. */
static int
on_request(struct loop *lp, struct conn *c, struct stream *s)
{
	struct stub *st = &lp->st;
	enum fault_mode mode;
	struct blob *fbody;
	long arg, hold_ms = 0;
	int answered = 0;

	s->flags |= STREAM_F_DONE;
	if (s->flags & STREAM_F_CONTROL) {
		st->stats.control++;
		ctl_handle(st, s);
		stream_submit(lp, c, s);
		return 0;
	}
	st->stats.requests++;
	mode = st->fault.mode;
	arg = st->fault.arg;
	fbody = blob_get(st->fault.body);
	if (mode == FAULT_BIGDROP) {
		/* only the answers over the limit are faulted (and counted) */
		answered = 1;
		if (bigdrop_check(st, s, &hold_ms) == 0)
			mode = FAULT_NONE;
		else
			st->fault.dropped = 1;
	}
	if (mode != FAULT_NONE) {
		st->stats.faults[mode]++;
		if (st->fault.count > 0 && --st->fault.count == 0) {
			blob_put(st->fault.body);
			memset(&st->fault, 0, sizeof(st->fault));
			st->fault.count = -1;
		}
	}
	switch (mode) {
	case FAULT_NONE:
	case FAULT_DELAY:
		if (!answered)
			api_handle(st, s);
		break;
	case FAULT_TRUNCATE:
	case FAULT_DROP:
		api_handle(st, s);
		s->cut = (size_t)arg + 1;
		if (mode == FAULT_DROP)
			s->flags |= STREAM_F_CUT_DROP;
		break;
	case FAULT_STATUS:
		stream_respond(s, (int)arg, fbody != NULL ?
			"application/problem+json" : NULL, blob_get(fbody));
		break;
	default:
		break;
	}
	blob_put(fbody);
	rec_add(&st->rec, s, c->id, 1, fault_name(mode), st->now_ms);
	s->flags |= STREAM_F_RECORDED;

	switch (mode) {
	case FAULT_NONE:
		if (hold_ms > 0) {
			s->deadline_ns = nrf_now_ns() + (uint64_t)hold_ms * 1000000ull;
			timer_add(lp, s);
			break;
		}
		/* fall through */
	case FAULT_STATUS:
	case FAULT_TRUNCATE:
	case FAULT_DROP:
		stream_submit(lp, c, s);
		break;
	case FAULT_DELAY:
		s->deadline_ns = nrf_now_ns() + (uint64_t)arg * 1000000ull;
		timer_add(lp, s);
		break;
	case FAULT_RESET:
		nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, s->id,
			(uint32_t)arg);
		break;
	case FAULT_CLOSE:
		c->kill = arg == 1 ? KILL_RST : KILL_FIN;
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	case FAULT_GARBAGE:
		c->kill = KILL_GARBAGE;
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	case FAULT_BIGDROP:
		/* The rest of this read is still served (answers already made
		 * go out), then conn_read() drops the connection: the streams
		 * still held or open die with it. */
		c->kill = KILL_DROP;
		break;
	case FAULT_BLACKHOLE:
	default:
		break;
	}
	return 0;
}

/* ---- nghttp2 callbacks -------------------------------------------------- */

static int
cb_begin_headers(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
	struct conn *c = ud;
	struct stream *s;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = stream_get(c->lp, c, frame->hd.stream_id);
	if (s == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(sess, frame->hd.stream_id, s);
	return 0;
}

static int
is_name(const uint8_t *n, size_t nl, const char *lit, size_t ll)
{
	return nl == ll && memcmp(n, lit, ll) == 0;
}

static int
cb_header(nghttp2_session *sess, const nghttp2_frame *frame,
	const uint8_t *name, size_t namelen, const uint8_t *value,
	size_t valuelen, uint8_t flags, void *ud)
{
	struct conn *c = ud;
	struct stream *s;
	struct hdr h;
	int is_host;

	(void)flags;
	s = nghttp2_session_get_stream_user_data(sess, frame->hd.stream_id);
	if (s == NULL)
		return 0;
	if (s->hlen + namelen + valuelen + 2 > STUB_MAX_HDR_BYTES) {
		NRF_LOG_RL(INFO, STUB_MODULE, "conn %u stream %d: header block "
			"over %u bytes: reset", c->id, s->id, STUB_MAX_HDR_BYTES);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (namelen > 0 && name[0] == ':') {
		struct span *sp = NULL;

		if (is_name(name, namelen, ":method", 7))
			sp = &s->method;
		else if (is_name(name, namelen, ":path", 5))
			sp = &s->path;
		else if (is_name(name, namelen, ":authority", 10))
			sp = &s->authority;
		else if (is_name(name, namelen, ":scheme", 7))
			sp = &s->scheme;
		if (sp == NULL)
			return 0;
		if (hbuf_add(s, value, valuelen, sp) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		if (sp == &s->path && valuelen >= 7 &&
		    memcmp(value, "/_stub/", 7) == 0)
			s->flags |= STREAM_F_CONTROL;
		return 0;
	}
	is_host = is_name(name, namelen, "host", 4);
	if (!c->lp->st.rec.enabled && !is_host)
		return 0;
	if (hbuf_add(s, name, namelen, &h.name) < 0 ||
	    hbuf_add(s, value, valuelen, &h.value) < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (is_host)
		s->host = h.value;
	if (!c->lp->st.rec.enabled)
		return 0;
	if (hdrs_reserve(&s->hv, s->hv.n + 1) != 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	s->hv.v[s->hv.n++] = h;
	return 0;
}

static int
cb_data_chunk(nghttp2_session *sess, uint8_t flags, int32_t id,
	const uint8_t *data, size_t len, void *ud)
{
	struct conn *c = ud;
	struct stream *s;

	(void)flags;
	s = nghttp2_session_get_stream_user_data(sess, id);
	if (s == NULL)
		return 0;
	s->body_total += len;
	if (c->lp->st.rec.enabled && !(s->flags & STREAM_F_CONTROL))
		if (s->sha != NULL)
			EVP_DigestUpdate(s->sha, data, len);
	if (s->body_total > STUB_MAX_BODY)
		return 0;	/* answered 413 at the end */
	if (s->body_len + len > s->body_cap) {
		size_t cap = s->body_cap != 0 ? s->body_cap : 1024;
		char *nb;

		while (cap < s->body_len + len)
			cap *= 2;
		nb = realloc(s->body, cap);
		if (nb == NULL)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		s->body = nb;
		s->body_cap = cap;
	}
	memcpy(s->body + s->body_len, data, len);
	s->body_len += len;
	return 0;
}

static int
cb_frame_recv(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
	struct conn *c = ud;
	struct stream *s;

	if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
		return 0;
	if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, frame->hd.stream_id);
	if (s == NULL || (s->flags & STREAM_F_DONE))
		return 0;
	return on_request(c->lp, c, s);
}

static int
cb_stream_close(nghttp2_session *sess, int32_t id, uint32_t error_code,
	void *ud)
{
	struct conn *c = ud;
	struct stream *s;

	(void)error_code;
	s = nghttp2_session_get_stream_user_data(sess, id);
	if (s != NULL)
		stream_release(c->lp, s);
	return 0;
}

/* ---- connections -------------------------------------------------------- */

static size_t
pend_size(const struct conn *c)
{
	return c->pend_len - c->pend_off;
}

static int
pend_append(struct conn *c, const void *p, size_t n)
{
	if (c->pend_off > 0 && c->pend_off == c->pend_len)
		c->pend_off = c->pend_len = 0;
	if (c->pend_len + n > c->pend_cap) {
		size_t cap, live = pend_size(c);
		char *nb;

		if (c->pend_off > 0) {
			memmove(c->pend, c->pend + c->pend_off, live);
			c->pend_off = 0;
			c->pend_len = live;
		}
		cap = c->pend_cap != 0 ? c->pend_cap : 16384;
		while (cap < live + n)
			cap *= 2;
		if (cap > c->pend_cap) {
			nb = realloc(c->pend, cap);
			if (nb == NULL)
				return -1;
			c->pend = nb;
			c->pend_cap = cap;
		}
	}
	memcpy(c->pend + c->pend_len, p, n);
	c->pend_len += n;
	return 0;
}

/* Send @p n bytes now if nothing is queued, queue what the kernel refuses. */
static int
out_send(struct conn *c, const char *p, size_t n)
{
	ssize_t w;

	if (pend_size(c) > 0)
		return pend_append(c, p, n);
	while (n > 0) {
		w = send(c->fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return n > 0 ? pend_append(c, p, n) : 0;
}

static int
pend_write(struct conn *c)
{
	ssize_t w;

	while (pend_size(c) > 0) {
		w = send(c->fd, c->pend + c->pend_off, pend_size(c), MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		c->pend_off += (size_t)w;
	}
	c->pend_off = c->pend_len = 0;
	if (c->pend_cap > (64u << 10)) {
		free(c->pend);
		c->pend = NULL;
		c->pend_cap = 0;
	}
	return 0;
}

static void
conn_set_events(struct loop *lp, struct conn *c)
{
	struct epoll_event ev;
	uint32_t want = 0;

	if (pend_size(c) < PEND_HIGH)
		want |= EPOLLIN;
	if (pend_size(c) > 0)
		want |= EPOLLOUT;
	if (want == c->events)
		return;
	ev.events = want;
	ev.data.ptr = c;
	if (epoll_ctl(lp->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = want;
}

/*
 * Move what nghttp2 has to send into the socket. Returns 0, or -1 when the
 * connection is dead or finished and must be closed.
 */
static int
conn_flush(struct loop *lp, struct conn *c)
{
	const uint8_t *data;
	ssize_t n;

	if (pend_write(c) < 0)
		return -1;
	lp->wlen = 0;
	while (pend_size(c) < PEND_HIGH) {
		n = nghttp2_session_mem_send(c->sess, &data);
		if (n < 0) {
			NRF_LOG_RL(INFO, STUB_MODULE, "conn %u: send: %s", c->id,
				nghttp2_strerror((int)n));
			return -1;
		}
		if (n == 0)
			break;
		if (pend_size(c) > 0) {
			if (pend_append(c, data, (size_t)n) < 0)
				return -1;
			continue;
		}
		if (lp->wlen + (size_t)n > WBUF_SIZE) {
			if (out_send(c, lp->wbuf, lp->wlen) < 0)
				return -1;
			lp->wlen = 0;
			if ((size_t)n > WBUF_SIZE || pend_size(c) > 0) {
				if (out_send(c, (const char *)data, (size_t)n) < 0)
					return -1;
				continue;
			}
		}
		memcpy(lp->wbuf + lp->wlen, data, (size_t)n);
		lp->wlen += (size_t)n;
	}
	if (lp->wlen > 0 && out_send(c, lp->wbuf, lp->wlen) < 0)
		return -1;
	lp->wlen = 0;
	if (c->kill == KILL_DROP)
		return -1;	/* FAULT_DROP/BIGDROP: what was made is out; close */
	if (pend_size(c) == 0 && !nghttp2_session_want_read(c->sess) &&
	    !nghttp2_session_want_write(c->sess))
		return -1;
	conn_set_events(lp, c);
	return 0;
}

static void
conn_close(struct loop *lp, struct conn *c)
{
	struct linger lg = {1, 0};

	switch (c->kill) {
	case KILL_RST:
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		break;
	case KILL_GARBAGE:
		if (send(c->fd, garbage, sizeof(garbage) - 1, MSG_NOSIGNAL) < 0)
			NRF_LOG_RL(DEBUG, STUB_MODULE, "conn %u: garbage: %s",
				c->id, strerror(errno));
		shutdown(c->fd, SHUT_WR);
		break;
	case KILL_DROP: {
		int i;

		/* A FIN after the bytes already sent: closing with unread input
		 * would make the kernel send a RST and discard them. */
		shutdown(c->fd, SHUT_WR);
		for (i = 0; i < 64 && recv(c->fd, lp->rbuf, sizeof(lp->rbuf), 0) > 0; i++)
			;
		NRF_LOG_RL(INFO, STUB_MODULE, "conn %u: dropped (fault)", c->id);
		break;
	}
	default:
		break;
	}
	close(c->fd);
	nghttp2_session_del(c->sess);
	while (!nrf_list_empty(&c->streams))
		stream_release(lp, nrf_container_of(c->streams.next, struct stream, link));
	free(c->pend);
	nrf_list_del(&c->link);
	lp->st.stats.conn_active--;
	NRF_LOG(DEBUG, STUB_MODULE, "conn %u closed", c->id);
	free(c);
}

static void
conn_new(struct loop *lp, int fd)
{
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, lp->st.max_streams},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
	};
	struct epoll_event ev;
	struct conn *c;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	nrf_list_init(&c->streams);
	c->kind = EV_CONN;
	c->lp = lp;
	c->fd = fd;
	c->id = ++lp->next_conn_id;
	if (nghttp2_session_server_new2(&c->sess, lp->cbs, c, lp->opt) != 0) {
		close(fd);
		free(c);
		return;
	}
	if (nghttp2_submit_settings(c->sess, NGHTTP2_FLAG_NONE, iv,
			NRF_ARRAY_SIZE(iv)) != 0 ||
	    nghttp2_session_set_local_window_size(c->sess, NGHTTP2_FLAG_NONE, 0,
			CONN_WINDOW) != 0) {
		nghttp2_session_del(c->sess);
		close(fd);
		free(c);
		return;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	if (epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		nghttp2_session_del(c->sess);
		close(fd);
		free(c);
		return;
	}
	c->events = EPOLLIN;
	nrf_list_add_head(&lp->conns, &c->link);
	lp->st.stats.conn_accepted++;
	lp->st.stats.conn_active++;
	NRF_LOG(DEBUG, STUB_MODULE, "conn %u accepted", c->id);
	if (conn_flush(lp, c) < 0)
		conn_close(lp, c);
}

/* Returns 0, or -1 when the connection must be closed. */
static int
conn_read(struct loop *lp, struct conn *c)
{
	ssize_t n, rv;
	int i;

	for (i = 0; i < 8; i++) {
		n = recv(c->fd, lp->rbuf, sizeof(lp->rbuf), 0);
		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		rv = nghttp2_session_mem_recv(c->sess, (const uint8_t *)lp->rbuf,
			(size_t)n);
		if (rv >= 0 && c->kill == KILL_DROP) {
			/* FAULT_BIGDROP: send the answers made (unless mute:
			 * nothing more, not even the PING ACK), then close */
			if (!lp->st.fault.mute)
				(void)conn_flush(lp, c);
			return -1;
		}
		if (rv < 0) {
			if (c->kill == KILL_NONE) {
				NRF_LOG_RL(INFO, STUB_MODULE, "conn %u: %s", c->id,
					nghttp2_strerror((int)rv));
				/* best effort: let a queued GOAWAY out */
				(void)conn_flush(lp, c);
			}
			return -1;
		}
		if ((size_t)n < sizeof(lp->rbuf))
			break;
	}
	return conn_flush(lp, c);
}

static void
conn_event(struct loop *lp, struct conn *c, uint32_t events)
{
	if (events & EPOLLERR) {
		conn_close(lp, c);
		return;
	}
	if ((events & EPOLLOUT) && conn_flush(lp, c) < 0) {
		conn_close(lp, c);
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && conn_read(lp, c) < 0)
		conn_close(lp, c);
}

static void
accept_all(struct loop *lp)
{
	int i, fd;

	for (i = 0; i < 64; i++) {
		fd = accept4(lp->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_new(lp, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if ((errno == EMFILE || errno == ENFILE) && lp->reserve_fd >= 0) {
			/* shed one connection rather than spin on the listener */
			close(lp->reserve_fd);
			fd = accept(lp->lfd, NULL, NULL);
			if (fd >= 0)
				close(fd);
			lp->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		}
		NRF_LOG_RL(WARN, STUB_MODULE, "accept: %s", strerror(errno));
		return;
	}
}

static void
timers_run(struct loop *lp)
{
	uint64_t now = nrf_now_ns();
	struct stream *s;
	struct conn *c;

	while ((s = lp->thead) != NULL && s->deadline_ns <= now) {
		timer_del(lp, s);
		c = s->conn;
		stream_submit(lp, c, s);
		if (conn_flush(lp, c) < 0)
			conn_close(lp, c);
	}
}

static int
timer_timeout_ms(const struct loop *lp)
{
	uint64_t now, d;

	if (lp->thead == NULL)
		return -1;
	now = nrf_now_ns();
	if (lp->thead->deadline_ns <= now)
		return 0;
	d = lp->thead->deadline_ns - now;
	return (int)NRF_MIN((d + 999999) / 1000000, (uint64_t)INT32_MAX);
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Returns 0 after a signal, -1 when epoll fails. */
static int
loop_run(struct loop *lp)
{
	struct epoll_event evs[256];
	int i, n;

	while (!lp->stop) {
		n = epoll_wait(lp->ep, evs, NRF_ARRAY_SIZE(evs),
			timer_timeout_ms(lp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			NRF_LOG(ERR, STUB_MODULE, "epoll_wait: %s", strerror(errno));
			return -1;
		}
		lp->st.now_ms = wall_ms();
		for (i = 0; i < n; i++) {
			enum ev_kind *k = evs[i].data.ptr;

			if (*k == EV_CONN) {
				conn_event(lp, (struct conn *)(void *)k, evs[i].events);
			} else if (*k == EV_LISTEN) {
				accept_all(lp);
			} else {
				struct signalfd_siginfo si;

				if (read(lp->sfd, &si, sizeof(si)) == sizeof(si)) {
					NRF_LOG(INFO, STUB_MODULE, "signal %u: exiting",
						si.ssi_signo);
					lp->stop = 1;
				}
			}
		}
		timers_run(lp);
	}
	return 0;
}

/* ---- setup -------------------------------------------------------------- */

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "nrfstub: error: %s\n", msg);
	exit(EXIT_USAGE);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nrfstub --listen ADDR:PORT --profiles FILE [--name NAME]\n"
		"               [--fault MODE[:ARG]] [--log-level LEVEL] [--no-record]\n"
		"               [--head-body] [--link-host HOST[:PORT]] [--max-streams N]\n"
		"  --listen ADDR:PORT  h2c listen address: 127.0.0.1:8080, [::1]:8080\n"
		"  --profiles FILE     {\"nfProfiles\": [...], \"accessToken\": {...}}\n"
		"  --name NAME         sent in x-nrfstub on every answer (default nrfstub)\n"
		"  --fault MODE[:ARG]  none, delay:MS, reset[:H2CODE], close[:1=RST],\n"
		"                      status:CODE, garbage, blackhole, truncate[:BYTES],\n"
		"                      drop[:BYTES], bigdrop[:SIZE[:HOLD_MS[:mute]]]\n"
		"  --log-level LEVEL   error, warn, info (default), debug\n"
		"  --no-record         do not record requests (GET /_stub/requests is empty)\n"
		"  --head-body         send the body on HEAD answers too (RFC 9110 forbids\n"
		"                      it; some servers do it: a test of clients and proxies)\n"
		"  --link-host H[:P]   Location and _links name http://H[:P] instead of the\n"
		"                      request's :authority (an NRF with its own apiRoot)\n"
		"  --max-streams N     SETTINGS_MAX_CONCURRENT_STREAMS (default 1000): with a\n"
		"                      delay fault, an NRF that serves a bounded rate\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n");
}

/* Parse "host:port" / "[v6]:port" and open a listening socket. */
static int
open_listener(const char *arg, char *out, size_t outsz)
{
	char host[256], port[16];
	struct addrinfo hints, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const char *colon;
	size_t hl;
	int fd, one = 1, rv, pn;
	char *end;

	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');

		if (rb == NULL || rb[1] != ':')
			usage_error("--listen '%s': expected [IPV6]:PORT", arg);
		hl = (size_t)(rb - arg - 1);
		colon = rb + 1;
		if (hl >= sizeof(host))
			usage_error("--listen '%s': address too long", arg);
		memcpy(host, arg + 1, hl);
	} else {
		colon = strrchr(arg, ':');
		if (colon == NULL)
			usage_error("--listen '%s': expected ADDR:PORT", arg);
		hl = (size_t)(colon - arg);
		if (hl >= sizeof(host))
			usage_error("--listen '%s': address too long", arg);
		memcpy(host, arg, hl);
		if (memchr(host, ':', hl) != NULL)
			usage_error("--listen '%s': put IPv6 addresses in brackets", arg);
	}
	host[hl] = '\0';
	pn = (int)strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || pn < 0 || pn > 65535 ||
	    strlen(colon + 1) > 5)
		usage_error("--listen '%s': bad port", arg);
	snprintf(port, sizeof(port), "%d", pn);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rv = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
	if (rv != 0)
		usage_error("--listen '%s': %s", arg, gai_strerror(rv));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
	    listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		fprintf(stderr, "nrfstub: error: listen on %s: %s\n", arg,
			strerror(errno));
		freeaddrinfo(res);
		exit(1);
	}
	freeaddrinfo(res);
	nrf_sockaddr_format((const struct sockaddr *)&ss, out, outsz);
	return fd;
}

static int
log_level_of(const char *s)
{
	static const char *const names[][2] = {
		{"err", "error"}, {"warn", "warning"}, {"info", "info"},
		{"debug", "debug"},
	};
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, names[i][0]) == 0 || strcmp(s, names[i][1]) == 0 ||
		    (s[0] == '0' + i && s[1] == '\0'))
			return i;
	return -1;
}

static void
check_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 64)
		usage_error("--name must be 1..64 characters");
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			usage_error("--name '%s': only printable ASCII without "
				"spaces", name);
}

static int
link_host_ok(const char *h)
{
	size_t i, n = strlen(h);

	if (n == 0 || n > 255)
		return 0;
	for (i = 0; i < n; i++)
		if (h[i] < 0x21 || h[i] > 0x7e || h[i] == '/' || h[i] == '"' || h[i] == '\\')
			return 0;
	return 1;
}

static int
setup_callbacks(struct loop *lp)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return -1;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb,
		cb_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, cb_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb,
		cb_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cb_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
		cb_stream_close);
	lp->cbs = cb;
	if (nghttp2_option_new(&lp->opt) != 0)
		return -1;
	nghttp2_option_set_no_closed_streams(lp->opt, 1);
	return 0;
}

static void
loop_fini(struct loop *lp)
{
	while (!nrf_list_empty(&lp->conns))
		conn_close(lp, nrf_container_of(lp->conns.next, struct conn, link));
	stream_free_all(lp->pool);
	lp->pool = NULL;
	if (lp->cbs != NULL)
		nghttp2_session_callbacks_del(lp->cbs);
	if (lp->opt != NULL)
		nghttp2_option_del(lp->opt);
	store_fini(&lp->st.store);
	rec_fini(&lp->st.rec);
	blob_put(lp->st.fault.body);
	if (lp->lfd >= 0)
		close(lp->lfd);
	if (lp->sfd >= 0)
		close(lp->sfd);
	if (lp->reserve_fd >= 0)
		close(lp->reserve_fd);
	if (lp->ep >= 0)
		close(lp->ep);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"profiles", required_argument, NULL, 'p'},
		{"name", required_argument, NULL, 'n'},
		{"fault", required_argument, NULL, 'f'},
		{"log-level", required_argument, NULL, 'L'},
		{"no-record", no_argument, NULL, 'R'},
		{"head-body", no_argument, NULL, 'B'},
		{"link-host", required_argument, NULL, 'H'},
		{"max-streams", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *listen_arg = NULL, *profiles = NULL, *fault_arg = NULL;
	struct epoll_event ev;
	struct loop *lp;
	char err[512];
	sigset_t mask;
	int opt, lvl, rv, record = 1;
	size_t i;

	lp = calloc(1, sizeof(*lp));
	if (lp == NULL)
		usage_error("out of memory");
	lp->ep = lp->lfd = lp->sfd = lp->reserve_fd = -1;
	nrf_list_init(&lp->conns);
	lp->st.name = "nrfstub";
	lp->st.fault.count = -1;
	lp->st.max_streams = STUB_MAX_STREAMS;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			listen_arg = optarg;
			break;
		case 'p':
			profiles = optarg;
			break;
		case 'n':
			lp->st.name = optarg;
			break;
		case 'f':
			fault_arg = optarg;
			break;
		case 'L':
			lvl = log_level_of(optarg);
			if (lvl < 0)
				usage_error("--log-level '%s': use error, warn, info "
					"or debug", optarg);
			nrf_log_set_level((enum nrf_log_level)lvl);
			break;
		case 'R':
			record = 0;
			break;
		case 'B':
			lp->st.head_body = true;
			break;
		case 'H':
			lp->st.link_host = optarg;
			break;
		case 'M': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v < 1 || v > 100000)
				usage_error("--max-streams '%s': 1..100000", optarg);
			lp->st.max_streams = (uint32_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			free(lp);
			return 0;
		case 'V':
			printf("nrfstub " NRF_VERSION "\n");
			free(lp);
			return 0;
		default:
			usage_error("unknown option or missing argument: '%s' "
				"(see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s' (see --help)", argv[optind]);
	if (listen_arg == NULL)
		usage_error("--listen ADDR:PORT is required (see --help)");
	if (profiles == NULL)
		usage_error("--profiles FILE is required (see --help)");
	check_name(lp->st.name);
	if (lp->st.link_host != NULL && !link_host_ok(lp->st.link_host))
		usage_error("--link-host '%s': a host[:port], printable ASCII without "
			"spaces, '/', '\"' or '\\'", lp->st.link_host);
	for (i = 0; lp->st.name[i] != '\0' && i + 1 < sizeof(lp->st.idname); i++) {
		char ch = lp->st.name[i];

		lp->st.idname[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') ? ch : '-';
	}
	if (fault_arg != NULL && fault_parse(fault_arg, &lp->st.fault, err,
			sizeof(err)) < 0)
		usage_error("--fault '%s': %s", fault_arg, err);
	if (store_load(&lp->st.store, profiles, err, sizeof(err)) < 0)
		usage_error("--profiles: %s", err);
	if (rec_init(&lp->st.rec, record) < 0 || setup_callbacks(lp) < 0)
		usage_error("out of memory");

	(void)nrf_raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	lp->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->sfd < 0 || lp->ep < 0) {
		NRF_LOG(ERR, STUB_MODULE, "signalfd/epoll: %s", strerror(errno));
		return 1;
	}
	lp->lfd = open_listener(listen_arg, lp->st.listen_str,
		sizeof(lp->st.listen_str));
	lp->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lp->lsn_kind = EV_LISTEN;
	lp->sig_kind = EV_SIGNAL;
	ev.events = EPOLLIN;
	ev.data.ptr = &lp->lsn_kind;
	if (epoll_ctl(lp->ep, EPOLL_CTL_ADD, lp->lfd, &ev) < 0)
		return 1;
	ev.data.ptr = &lp->sig_kind;
	if (epoll_ctl(lp->ep, EPOLL_CTL_ADD, lp->sfd, &ev) < 0)
		return 1;
	lp->st.stats.started_ns = nrf_now_ns();
	lp->st.now_ms = wall_ms();
	NRF_LOG(INFO, STUB_MODULE, "%zu NF profiles from %s, fault %s, "
		"recording %s", lp->st.store.n, profiles,
		fault_name(lp->st.fault.mode), record ? "on" : "off");
	fprintf(stderr, "nrfstub %s listening on %s\n", lp->st.name,
		lp->st.listen_str);
	fflush(stderr);

	rv = loop_run(lp);

	loop_fini(lp);
	free(lp);
	return rv < 0 ? 1 : 0;
}
