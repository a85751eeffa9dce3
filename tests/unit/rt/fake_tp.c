/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * See fake_tp.h. Connection objects are never freed inside ops->poll():
 * a handler may close any connection (its own or another), and poll walks
 * the global list by next pointers, so an object stays in the list until
 * the test releases its end outside poll (or fake_tp_reset()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tp.h"
#include "nrf_err.h"

struct buf {
	uint8_t *p;
	size_t off; /* first byte not taken */
	size_t len; /* end of the bytes */
	size_t cap;
};

struct nrf_tp_loop {
	nrf_tp_wake_fn wake_fn;
	void *wake_ctx;
	bool woken;
};

struct nrf_tp_listener {
	struct nrf_tp_loop *loop;
	uint16_t port;
	nrf_tp_event_fn fn;
	void *ctx;
	bool pending;
	bool closed;
	struct fake_conn *q_head; /* dialed, not accepted yet */
	struct fake_conn *q_tail;
	struct nrf_tp_listener *next;
};

struct fake_conn {
	struct nrf_tp_loop *loop;  /* nrfwd's loop; NULL while in an accept queue */
	nrf_tp_event_fn fn;
	void *ctx;
	unsigned int pending;      /* NRF_TP_EV_* to deliver */
	bool connecting;
	int connect_err;           /* result once the connect event is delivered */
	int connect_next;          /* ... what it will be */
	bool outbound;
	struct nrf_tp_addr addr;
	struct buf in;             /* test -> nrfwd */
	bool in_eof;
	bool reset;
	struct buf out;            /* nrfwd -> test */
	size_t out_cap;
	bool want_out;
	bool near_closed;          /* nrfwd closed its end */
	bool far_released;         /* the test released its end */
	void *user;
	unsigned int id;
	struct fake_conn *q_next;
	struct fake_conn *prev;
	struct fake_conn *next;
};

#define FC(c) ((struct fake_conn *)(void *)(c))
#define TC(c) ((struct nrf_tp_conn *)(void *)(c))

static struct {
	struct fake_conn *head;
	struct fake_conn *tail;
	struct nrf_tp_listener *lst;
	fake_connect_fn connect;
	void *connect_arg;
	unsigned int next_id;
	uint16_t next_port;
} W;

static int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	if (b->len + n > b->cap) {
		size_t cap = b->cap > 0 ? b->cap : 4096;
		uint8_t *q;

		if (b->off > 0) {
			memmove(b->p, b->p + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		while (cap < b->len + n)
			cap *= 2;
		if (cap != b->cap) {
			q = realloc(b->p, cap);
			if (q == NULL)
				return -1;
			b->p = q;
			b->cap = cap;
		}
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static struct fake_conn *
conn_new(void)
{
	struct fake_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->out_cap = SIZE_MAX;
	c->id = ++W.next_id;
	c->prev = W.tail;
	if (W.tail != NULL)
		W.tail->next = c;
	else
		W.head = c;
	W.tail = c;
	return c;
}

static void
conn_free(struct fake_conn *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		W.head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		W.tail = c->prev;
	free(c->in.p);
	free(c->out.p);
	free(c);
}

/* ------------------------------------------------------------------------ */
/* nrfwd's end: the ops table                                                */

static struct nrf_tp_loop *
f_loop_create(int *err)
{
	struct nrf_tp_loop *l = calloc(1, sizeof(*l));

	*err = l == NULL ? NRF_ENOMEM : 0;
	return l;
}

static void
f_loop_free(struct nrf_tp_loop *loop)
{
	free(loop);
}

static bool
deliver(struct fake_conn *c)
{
	unsigned int ev = c->pending;

	if (c->near_closed || c->fn == NULL || ev == 0)
		return false;
	c->pending = 0;
	if (c->connecting && (ev & (NRF_TP_EV_OUT | NRF_TP_EV_ERR))) {
		c->connecting = false;
		c->connect_err = c->connect_next;
	}
	c->fn(c->ctx, ev);
	return true;
}

static int
f_poll(struct nrf_tp_loop *loop, int timeout_ms)
{
	struct nrf_tp_listener *l;
	struct fake_conn *c;
	int n = 0;

	(void)timeout_ms; /* no time here: never waits */
	if (loop->woken) {
		loop->woken = false;
		if (loop->wake_fn != NULL)
			loop->wake_fn(loop->wake_ctx);
		n++;
	}
	for (l = W.lst; l != NULL; l = l->next) {
		if (l->loop != loop || l->closed || !l->pending)
			continue;
		l->pending = false;
		l->fn(l->ctx, NRF_TP_EV_IN);
		n++;
	}
	for (c = W.head; c != NULL; c = c->next)
		if (c->loop == loop && deliver(c))
			n++;
	return n;
}

static void
f_set_wake(struct nrf_tp_loop *loop, nrf_tp_wake_fn fn, void *ctx)
{
	loop->wake_fn = fn;
	loop->wake_ctx = ctx;
}

static void
f_loop_wake(struct nrf_tp_loop *loop)
{
	loop->woken = true;
}

static struct nrf_tp_listener *
f_listen(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int backlog,
	nrf_tp_event_fn fn, void *ctx, int *err)
{
	struct nrf_tp_listener *l = calloc(1, sizeof(*l));

	(void)backlog;
	if (l == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	if (W.next_port == 0)
		W.next_port = 40000;
	l->loop = loop;
	l->port = addr->port != 0 ? addr->port : W.next_port++;
	l->fn = fn;
	l->ctx = ctx;
	l->next = W.lst;
	W.lst = l;
	*err = 0;
	return l;
}

static int
f_listener_addr(struct nrf_tp_listener *l, struct nrf_tp_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = 4;
	out->ip[0] = 127;
	out->ip[3] = 1;
	out->port = l->port;
	return 0;
}

static void
f_listener_close(struct nrf_tp_listener *l)
{
	struct fake_conn *c;

	/* Freed by fake_tp_reset(): the closing handler may be its own. */
	l->closed = true;
	while ((c = l->q_head) != NULL) {
		l->q_head = c->q_next;
		c->near_closed = true; /* refused: the client sees the close */
	}
	l->q_tail = NULL;
}

static struct nrf_tp_conn *
f_accept(struct nrf_tp_listener *l, int *err)
{
	struct fake_conn *c = l->q_head;

	if (l->closed || c == NULL) {
		*err = NRF_EAGAIN;
		return NULL;
	}
	l->q_head = c->q_next;
	if (l->q_head == NULL)
		l->q_tail = NULL;
	c->q_next = NULL;
	c->loop = l->loop;
	/* Whatever the client sent before the accept is readable now. */
	if (c->in.len > c->in.off || c->in_eof || c->reset)
		c->pending |= NRF_TP_EV_IN;
	*err = 0;
	return TC(c);
}

static struct nrf_tp_conn *
f_connect(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int *err)
{
	struct fake_conn *c = conn_new();
	enum fake_connect what;

	if (c == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->loop = loop;
	c->outbound = true;
	c->addr = *addr;
	c->connecting = true;
	what = W.connect != NULL ? W.connect(W.connect_arg, c, addr) : FAKE_REFUSE_NOW;
	switch (what) {
	case FAKE_ACCEPT:
		c->pending = NRF_TP_EV_OUT;
		break;
	case FAKE_REFUSE:
		c->connect_next = NRF_EIO;
		c->reset = true;
		c->far_released = true;
		c->pending = NRF_TP_EV_ERR | NRF_TP_EV_IN;
		break;
	case FAKE_HANG:
		c->far_released = true;
		break;
	case FAKE_REFUSE_NOW:
	default:
		conn_free(c);
		*err = NRF_EIO;
		return NULL;
	}
	*err = 0;
	return TC(c);
}

static int
f_connect_result(struct nrf_tp_conn *tc)
{
	struct fake_conn *c = FC(tc);

	return c->connecting ? NRF_EAGAIN : c->connect_err;
}

static void
f_set_handler(struct nrf_tp_conn *tc, nrf_tp_event_fn fn, void *ctx)
{
	struct fake_conn *c = FC(tc);

	c->fn = fn;
	c->ctx = ctx;
}

static ssize_t
f_read(struct nrf_tp_conn *tc, void *p, size_t cap)
{
	struct fake_conn *c = FC(tc);
	size_t n = c->in.len - c->in.off;

	if (c->reset)
		return NRF_EIO;
	if (c->connecting)
		return NRF_EAGAIN;
	if (n == 0)
		return c->in_eof ? NRF_ECLOSED : NRF_EAGAIN;
	if (n > cap)
		n = cap;
	memcpy(p, c->in.p + c->in.off, n);
	c->in.off += n;
	return (ssize_t)n;
}

static ssize_t
f_writev(struct nrf_tp_conn *tc, const struct iovec *iov, int iovcnt)
{
	struct fake_conn *c = FC(tc);
	size_t room, done = 0;
	int i;

	if (c->reset || c->far_released)
		return NRF_EIO;
	if (c->connecting)
		return NRF_EAGAIN;
	room = c->out.len - c->out.off >= c->out_cap ? 0 : c->out_cap - (c->out.len - c->out.off);
	for (i = 0; i < iovcnt && room > 0; i++) {
		size_t n = iov[i].iov_len < room ? iov[i].iov_len : room;

		if (buf_add(&c->out, iov[i].iov_base, n) != 0)
			return done > 0 ? (ssize_t)done : NRF_ENOMEM;
		done += n;
		room -= n;
	}
	if (done == 0) {
		c->want_out = true;
		return NRF_EAGAIN;
	}
	return (ssize_t)done;
}

static void
f_close(struct nrf_tp_conn *tc)
{
	struct fake_conn *c = FC(tc);

	if (c == NULL)
		return;
	c->near_closed = true;
	c->fn = NULL;
	c->pending = 0;
}

static void
f_peer_name(struct nrf_tp_conn *tc, char *p, size_t cap)
{
	snprintf(p, cap, "fake:%u", FC(tc)->id);
}

static const struct nrf_tp_ops fake_ops = {
	.name = "fake",
	.loop_create = f_loop_create,
	.loop_free = f_loop_free,
	.poll = f_poll,
	.set_wake = f_set_wake,
	.loop_wake = f_loop_wake,
	.listen = f_listen,
	.listener_addr = f_listener_addr,
	.listener_close = f_listener_close,
	.accept = f_accept,
	.connect = f_connect,
	.connect_result = f_connect_result,
	.set_handler = f_set_handler,
	.read = f_read,
	.writev = f_writev,
	.close = f_close,
	.peer_name = f_peer_name,
};

const struct nrf_tp_ops *
fake_tp_ops(void)
{
	return &fake_ops;
}

/* ------------------------------------------------------------------------ */
/* The test's end                                                            */

void
fake_tp_set_connect(fake_connect_fn fn, void *arg)
{
	W.connect = fn;
	W.connect_arg = arg;
}

unsigned int
fake_tp_reset(void)
{
	unsigned int open = 0;

	while (W.head != NULL) {
		open += !W.head->near_closed;
		conn_free(W.head);
	}
	while (W.lst != NULL) {
		struct nrf_tp_listener *l = W.lst;

		W.lst = l->next;
		free(l);
	}
	memset(&W, 0, sizeof(W));
	return open;
}

struct fake_conn *
fake_tp_dial(uint16_t port)
{
	struct nrf_tp_listener *l;
	struct fake_conn *c;

	for (l = W.lst; l != NULL; l = l->next)
		if (!l->closed && l->port == port)
			break;
	if (l == NULL || (c = conn_new()) == NULL)
		return NULL;
	if (l->q_tail != NULL)
		l->q_tail->q_next = c;
	else
		l->q_head = c;
	l->q_tail = c;
	l->pending = true;
	return c;
}

void
fake_tp_each(void (*fn)(void *arg, struct fake_conn *c), void *arg)
{
	struct fake_conn *c, *next;

	for (c = W.head; c != NULL; c = next) {
		next = c->next;
		if (!c->far_released)
			fn(arg, c);
	}
}

int
fake_conn_push(struct fake_conn *c, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (buf_add(&c->in, p, n) != 0)
		return -1;
	c->pending |= NRF_TP_EV_IN;
	return 0;
}

void
fake_conn_shutdown(struct fake_conn *c)
{
	c->in_eof = true;
	c->pending |= NRF_TP_EV_IN;
}

void
fake_conn_reset(struct fake_conn *c)
{
	c->reset = true;
	c->pending |= NRF_TP_EV_IN | NRF_TP_EV_ERR;
}

const uint8_t *
fake_conn_out(const struct fake_conn *c, size_t *len)
{
	*len = c->out.len - c->out.off;
	return c->out.p != NULL ? c->out.p + c->out.off : NULL;
}

void
fake_conn_take(struct fake_conn *c, size_t n)
{
	size_t have = c->out.len - c->out.off;

	c->out.off += n < have ? n : have;
	if (c->want_out && c->out.len - c->out.off < c->out_cap) {
		c->want_out = false;
		c->pending |= NRF_TP_EV_OUT;
	}
}

void
fake_conn_set_out_cap(struct fake_conn *c, size_t cap)
{
	c->out_cap = cap;
	if (c->want_out && c->out.len - c->out.off < cap) {
		c->want_out = false;
		c->pending |= NRF_TP_EV_OUT;
	}
}

bool
fake_conn_closed(const struct fake_conn *c)
{
	return c->near_closed;
}

bool
fake_conn_outbound(const struct fake_conn *c)
{
	return c->outbound;
}

const struct nrf_tp_addr *
fake_conn_addr(const struct fake_conn *c)
{
	return &c->addr;
}

void
fake_conn_set_user(struct fake_conn *c, void *user)
{
	c->user = user;
}

void *
fake_conn_user(const struct fake_conn *c)
{
	return c->user;
}

void
fake_conn_release(struct fake_conn *c)
{
	c->far_released = true;
	c->user = NULL;
	if (c->near_closed)
		conn_free(c);
}
