/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every HTTP/2 connection shares, whatever its engine (h2_srv.c on the
 * front, h2_cli.c toward upstreams; struct h2_engine_ops): the transport,
 * the output buffer, reads with their budget, teardown and lingering, the
 * public connection and stream API.
 *
 * Why the work is split between event handlers and nrf_h2_ctx_run(): an
 * engine must not be freed (or re-entered) from inside its own input or
 * output pass, and the owner reacts to one stream's events by acting on
 * other connections. So callbacks only mark connections: "dirty" (output
 * pending), "rq" (read budget used up, continue later), "dead" (tear
 * down). nrf_h2_ctx_run() then writes, reads and tears down outside of
 * any engine pass, one connection at a time, and loops until nothing is
 * marked. Writes are batched that way too: one write per connection per
 * loop iteration, however many streams produced output.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_int.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "h2"

static void conn_event(void *arg, unsigned int events);

/* Opaque data of the PING that measures the round trip after a shutdown
 * notice (nrf_h2_conn_shutdown()). */
static const uint8_t drain_ping[8] = {'n', 'r', 'f', 'd', 'r', 'a', 'i', 'n'};

/* ------------------------------------------------------------------------ */
/* Marking                                                                   */

static void
mark_dirty(struct nrf_h2_conn *c)
{
	if (!(c->fl & CF_DEAD) && !nrf_list_linked(&c->dirty))
		nrf_list_add_tail(&c->ctx->dirty, &c->dirty);
}

static void
mark_read(struct nrf_h2_conn *c)
{
	if (!(c->fl & CF_DEAD) && !nrf_list_linked(&c->rq))
		nrf_list_add_tail(&c->ctx->rq, &c->rq);
}

static void
conn_fail(struct nrf_h2_conn *c, int err)
{
	if (c->fl & (CF_DEAD | CF_FINAL))
		return;
	c->fl |= CF_DEAD;
	c->err = err;
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
	nrf_list_del(&c->lng);
	h2_ev_busy(c);
	nrf_list_add_tail(&c->ctx->dead, &c->dead);
}

void
h2_conn_fail(struct nrf_h2_conn *c, int err)
{
	conn_fail(c, err);
}

/* Every stream left at teardown: it is gone. */
static void
stream_unlink(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	nrf_list_del(&st->link);
	if (--c->n_streams == 0)
		h2_ev_idle(c);
}

/* ------------------------------------------------------------------------ */
/* For the engines                                                           */

void
h2_conn_deliver(struct nrf_h2_conn *c, struct nrf_h2_stream *st, int err)
{
	if (st->flags & NRF_H2_SF_DELIVERED)
		return;
	st->flags |= NRF_H2_SF_DELIVERED;
	if (err != 0)
		st->flags |= NRF_H2_SF_REJECTED;
	if (c->cbs->on_request != NULL)
		c->cbs->on_request(st, err);
}

/* Front: once headers are in, check what this proxy can handle. */
int
h2_conn_check_head(struct nrf_h2_conn *c, struct nrf_h2_stream *st)
{
	const struct nrf_h2_msg *m = &st->msg;

	if (st->flags & NRF_H2_SF_BUSY)
		return NRF_EFULL;
	if (st->flags & NRF_H2_SF_HDR_OVER)
		return NRF_ETOOBIG; /* 431 */
	if (m->path.len == 0 || m->method.len == 0 || nrf_slice_eq(m->method, "CONNECT"))
		return NRF_EPARSE;
	/* content-length as h2_check_field() parsed it (-1: none) */
	if (st->chk.clen > 0 && (uint64_t)st->chk.clen > c->ctx->lim.max_body_bytes)
		return NRF_ETOOBIG;
	return 0;
}

void
h2_conn_ping_ack(struct nrf_h2_conn *c, const uint8_t d[8])
{
	uint64_t token = 0;
	unsigned int i;

	if ((c->fl & CF_NOTICE) && memcmp(d, drain_ping, sizeof(drain_ping)) == 0) {
		nrf_h2_conn_shutdown(c, true);
		return;
	}
	for (i = 0; i < 8; i++)
		token = token << 8 | d[i];
	if (c->cbs->on_conn_ping_ack != NULL)
		c->cbs->on_conn_ping_ack(c, token);
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

struct nrf_h2_ctx *
nrf_h2_ctx_create(const struct nrf_tp_ops *tp, struct nrf_tp_loop *loop,
	const struct nrf_h2_limits *lim, int *err)
{
	struct nrf_h2_ctx *ctx;

	if (tp == NULL || loop == NULL || lim == NULL || lim->max_header_bytes < 512 ||
		lim->max_concurrent_streams == 0) {
		*err = NRF_EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	ctx->tp = tp;
	ctx->loop = loop;
	ctx->lim = *lim;
	ctx->lim.max_header_bytes = (ctx->lim.max_header_bytes + 15u) & ~15u;
	if (ctx->lim.stream_window == 0)
		ctx->lim.stream_window = 256 * 1024;
	if (ctx->lim.conn_window == 0)
		ctx->lim.conn_window = 16 * 1024 * 1024;
	if (ctx->lim.peer_stream_window == 0)
		ctx->lim.peer_stream_window = 64 * 1024;
	/* A header list far beyond the limit ends the connection (header_flood()). */
	ctx->bomb_bytes = NRF_MAX((uint64_t)ctx->lim.max_header_bytes * H2_BOMB_FACTOR,
		(uint64_t)ctx->lim.max_header_bytes + H2_BOMB_MIN);
	h2_mem_init(&ctx->mem, &ctx->acct[NRF_H2_MEM_HTTP2], &ctx->total);
	h2_pools_init(ctx);
	nrf_list_init(&ctx->conns);
	nrf_list_init(&ctx->dirty);
	nrf_list_init(&ctx->rq);
	nrf_list_init(&ctx->dead);
	nrf_list_init(&ctx->lingering);
	nrf_list_init(&ctx->ev_hs);
	nrf_list_init(&ctx->ev_idle);
	h2_check_init();
	*err = 0;
	return ctx;
}

void
nrf_h2_ctx_free(struct nrf_h2_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (!nrf_list_empty(&ctx->conns))
		NRF_LOG(ERR, MOD, "context freed with open connections");
	h2_pools_fini(ctx);
	h2_mem_fini(&ctx->mem);
	free(ctx);
}

void
nrf_h2_ctx_stats_get(const struct nrf_h2_ctx *ctx, struct nrf_h2_ctx_stats *out)
{
	out->conns_server = ctx->n_server;
	out->conns_client = ctx->n_client;
	out->streams = ctx->n_streams;
	out->chunks_free = ctx->chunks.n;
	out->blocks_free = ctx->blocks.n;
}

/* ------------------------------------------------------------------------ */
/* Pumps                                                                     */

/*
 * Both sides are done (a GOAWAY is written, no stream is left): the
 * connection closes. One this side ended while its client was still
 * sending (CF_RSTOP: refused over maxConnections, a header flood, a fatal
 * input error) lingers first: its input is read and dropped until the
 * client closes it or LINGER_NS pass. Closing a socket with unread input
 * makes the kernel send RST instead of FIN, and the client could lose the
 * GOAWAY and see a bare reset.
 */
static void
conn_done(struct nrf_h2_conn *c)
{
	if (c->fl & (CF_LINGER | CF_FINAL))
		return; /* lingering already, or being torn down */
	if (!c->server || !(c->fl & CF_RSTOP)) {
		conn_fail(c, 0);
		return;
	}
	/* Nothing is written after the GOAWAY: streams still open (a
	 * connection error ends them with it) end for their owners now, as
	 * at teardown, not when the lingering does. */
	for (struct nrf_list *l = c->streams.next; l != &c->streams; l = l->next) {
		struct nrf_h2_stream *st = nrf_container_of(l, struct nrf_h2_stream, link);

		if (st->user != NULL && c->cbs->on_close != NULL)
			c->cbs->on_close(st, NRF_H2_INTERNAL_ERROR, NRF_ECLOSED);
		st->user = NULL;
	}
	c->fl |= CF_LINGER | CF_RSTOP;
	c->linger_until = nrf_now_ns() + LINGER_NS;
	nrf_list_add_tail(&c->ctx->lingering, &c->lng);
	/* The client sees the end right after the GOAWAY; its close ends
	 * the lingering at once (conn_read()). */
	if (c->ctx->tp->shutdown_write != NULL)
		c->ctx->tp->shutdown_write(c->tc);
	mark_read(c);
}

/* Lingering connections whose time is up close (nrf_h2_ctx_run()). */
static void
linger_expire(struct nrf_h2_ctx *ctx)
{
	uint64_t now = nrf_now_ns();

	while (!nrf_list_empty(&ctx->lingering)) {
		struct nrf_h2_conn *c = nrf_container_of(ctx->lingering.next, struct nrf_h2_conn, lng);

		if (c->linger_until > now)
			break;
		conn_fail(c, 0);
	}
}

static void
conn_flush(struct nrf_h2_conn *c)
{
	const struct nrf_tp_ops *tp = c->ctx->tp;

	if ((c->fl & (CF_DEAD | CF_WBLOCK)) || c->state != CONN_OPEN)
		return;
	for (;;) {
		struct iovec iov;
		ssize_t w;

		/* The output buffer is taken only while there is output and
		 * kept only while the transport refuses some of it. */
		if (c->obuf == NULL) {
			if (!c->eng->want_write(c))
				break;
			c->obuf = h2_obuf_get(c->ctx);
			if (c->obuf == NULL) {
				conn_fail(c, NRF_ENOMEM);
				return;
			}
		}
		if (c->ooff > 0 && c->olen < OBUF_CAP) {
			memmove(c->obuf, c->obuf + c->ooff, c->olen - c->ooff);
			c->olen -= c->ooff;
			c->ooff = 0;
		}
		/* Frames written straight into the buffer. */
		if (c->olen < OBUF_CAP)
			c->olen += (uint32_t)c->eng->fill(c, c->obuf + c->olen, OBUF_CAP - c->olen);
		if (c->fl & CF_DEAD)
			return; /* an owner's callback closed it */
		if (c->olen == c->ooff) {
			c->olen = c->ooff = 0;
			break;
		}
		iov.iov_base = c->obuf + c->ooff;
		iov.iov_len = c->olen - c->ooff;
		w = tp->writev(c->tc, &iov, 1);
		if (w == NRF_EAGAIN) {
			c->fl |= CF_WBLOCK;
			return;
		}
		if (w < 0) {
			conn_fail(c, NRF_EIO);
			return;
		}
		c->ooff += (uint32_t)w;
		if (c->ooff == c->olen)
			c->olen = c->ooff = 0;
	}
	if (c->obuf != NULL && c->olen == 0) {
		h2_obuf_put(c->ctx, c->obuf);
		c->obuf = NULL;
	}
	if (c->eng->done(c)) {
		conn_done(c); /* both sides done (GOAWAY, no streams) */
		return;
	}
	if (c->fl & CF_RPAUSED) {
		c->fl &= ~CF_RPAUSED;
		mark_read(c);
	}
}

static void
conn_read(struct nrf_h2_conn *c)
{
	const struct nrf_tp_ops *tp = c->ctx->tp;
	/* Bytes per transport event before the connection yields to others:
	 * READ_BUDGET full reads, counted in bytes where the transport hands
	 * out one received segment at a time (read_ref()). */
	size_t budget = (size_t)READ_BUDGET * RBUF_SIZE;

	while (budget > 0) {
		const uint8_t *in = c->ctx->rbuf;
		ssize_t n;
		int rc;

		if (c->fl & CF_DEAD)
			return;
		if (c->fl & CF_WBLOCK) {
			/* The other end does not read: stop taking requests
			 * from it until it does. */
			c->fl |= CF_RPAUSED;
			return;
		}
		n = tp->read_ref != NULL ? tp->read_ref(c->tc, (const void **)&in) : 0;
		if (n == 0) {
			in = c->ctx->rbuf;
			n = tp->read(c->tc, c->ctx->rbuf, sizeof(c->ctx->rbuf));
			if (n > 0)
				budget -= NRF_MIN(budget, (size_t)RBUF_SIZE);
		} else if (n > 0) {
			budget -= NRF_MIN(budget, (size_t)n);
		}
		if (n == NRF_EAGAIN)
			return;
		if (n < 0) {
			conn_fail(c, (c->fl & CF_LINGER) ? 0 : n == NRF_ECLOSED ? NRF_ECLOSED : NRF_EIO);
			return;
		}
		if (c->fl & CF_RSTOP)
			continue; /* dropped: the connection ends once written */
		rc = c->eng->recv(c, in, (size_t)n);
		mark_dirty(c);
		if (rc == 0)
			continue;
		/* The rest of the input is read and dropped from now on. */
		c->fl |= CF_RSTOP;
		if (rc == NRF_EPARSE || !c->server || (c->fl & CF_WBLOCK)) {
			/* Not HTTP/2 (closed without a GOAWAY); an upstream's
			 * connection error (its GOAWAY is written by the
			 * teardown's last flush); or a client that does not
			 * read (one last attempt). */
			conn_fail(c, NRF_EPROTO);
			return;
		}
		/* A client's connection error: the GOAWAY queued is written,
		 * then the connection closes (conn_done()). Meanwhile, and
		 * while it lingers, its input is read and dropped: left
		 * unread, it would turn the close into a reset the client may
		 * see before the GOAWAY. */
		return;
	}
	mark_read(c); /* budget used up: continue next iteration */
}

static void
conn_event(void *arg, unsigned int events)
{
	struct nrf_h2_conn *c = arg;

	if (c->fl & CF_DEAD)
		return;
	if (c->state == CONN_CONNECTING) {
		int rc = c->ctx->tp->connect_result(c->tc);

		if (rc != 0) {
			/* The transport's reason (connection refused, unreachable…)
			 * goes to on_conn_close and from there into the logs. */
			conn_fail(c, rc);
			return;
		}
		c->state = CONN_OPEN;
		mark_dirty(c);
		if (c->cbs->on_conn_ready != NULL)
			c->cbs->on_conn_ready(c);
		if (c->fl & CF_DEAD)
			return;
	}
	if (events & NRF_TP_EV_OUT) {
		c->fl &= ~CF_WBLOCK;
		h2_tmo_writable(c);
		mark_dirty(c);
	}
	if (events & (NRF_TP_EV_IN | NRF_TP_EV_ERR))
		conn_read(c);
}

/* Last chance to get a GOAWAY out before the socket closes; never blocks. */
static void
final_flush(struct nrf_h2_conn *c)
{
	int guard;

	if (c->state != CONN_OPEN || (c->fl & CF_WBLOCK) || c->eng == NULL)
		return;
	/* conn_flush() skips dead connections; CF_FINAL keeps it from
	 * queueing this one for teardown a second time. */
	c->fl = (c->fl & ~CF_DEAD) | CF_FINAL;
	for (guard = 0; guard < 4 && !(c->fl & CF_WBLOCK); guard++) {
		if (!c->eng->want_write(c) && c->olen == c->ooff)
			break;
		conn_flush(c);
	}
	c->fl |= CF_DEAD;
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
}

static void
conn_teardown(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	int err = c->err;

	nrf_list_del(&c->dead);
	nrf_list_del(&c->lng);
	h2_ev_busy(c);
	/* A GOAWAY may be queued (protocol error, timeout): one last try. */
	if (err == 0 || err == NRF_EPROTO || err == NRF_ETIMEDOUT) {
		int saved = c->err;

		final_flush(c);
		c->err = saved;
	}
	nrf_list_del(&c->dirty);
	nrf_list_del(&c->rq);
	nrf_list_del(&c->lng);
	while (!nrf_list_empty(&c->streams)) {
		struct nrf_h2_stream *st = nrf_container_of(c->streams.next, struct nrf_h2_stream,
			link);

		stream_unlink(c, st);
		if (st->user != NULL && c->cbs->on_close != NULL)
			c->cbs->on_close(st, NRF_H2_INTERNAL_ERROR, NRF_ECLOSED);
		if (!c->server)
			h2_cli_hb_free(st);
		h2_stream_put(ctx, st);
	}
	if (c->cbs->on_conn_close != NULL)
		c->cbs->on_conn_close(c, err);
	nrf_list_del(&c->all);
	if (c->server)
		ctx->n_server--;
	else
		ctx->n_client--;
	c->eng->free(c);
	ctx->tp->close(c->tc);
	h2_obuf_put(ctx, c->obuf);
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, -(int64_t)sizeof(*c));
	free(c->peer);
	free(c);
}

bool
nrf_h2_ctx_run(struct nrf_h2_ctx *ctx)
{
	struct nrf_list todo;

	if (!nrf_list_empty(&ctx->lingering))
		linger_expire(ctx);
	/* Reads that used up their budget last time: one more budget each. */
	nrf_list_init(&todo);
	if (!nrf_list_empty(&ctx->rq)) {
		todo.next = ctx->rq.next;
		todo.prev = ctx->rq.prev;
		todo.next->prev = &todo;
		todo.prev->next = &todo;
		nrf_list_init(&ctx->rq);
		while (!nrf_list_empty(&todo)) {
			struct nrf_h2_conn *c = nrf_container_of(todo.next, struct nrf_h2_conn, rq);

			nrf_list_del(&c->rq);
			conn_read(c);
		}
	}
	for (;;) {
		while (!nrf_list_empty(&ctx->dirty)) {
			struct nrf_h2_conn *c = nrf_container_of(ctx->dirty.next, struct nrf_h2_conn, dirty);

			nrf_list_del(&c->dirty);
			conn_flush(c);
		}
		if (nrf_list_empty(&ctx->dead))
			break;
		conn_teardown(nrf_container_of(ctx->dead.next, struct nrf_h2_conn, dead));
	}
	return !nrf_list_empty(&ctx->rq);
}

/* ------------------------------------------------------------------------ */
/* Connections                                                               */

static struct nrf_h2_conn *
conn_new(struct nrf_h2_ctx *ctx, const struct nrf_h2_cbs *cbs, void *user, bool server)
{
	struct nrf_h2_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	nrf_list_init(&c->streams);
	h2_acct_add(ctx, NRF_H2_MEM_HTTP2, (int64_t)sizeof(*c));
	c->ctx = ctx;
	c->cbs = cbs;
	c->user = user;
	c->server = server;
	nrf_list_init(&c->all);
	nrf_list_init(&c->dirty);
	nrf_list_init(&c->rq);
	nrf_list_init(&c->dead);
	nrf_list_init(&c->lng);
	nrf_list_init(&c->evl);
	return c;
}

static int
conn_start(struct nrf_h2_conn *c)
{
	struct nrf_h2_ctx *ctx = c->ctx;
	int rv;

	/* The one place that picks an engine. */
	c->eng = c->server ? &h2_srv_engine : &h2_cli_engine;
	rv = c->eng->start(c);
	if (rv != 0)
		return rv;
	ctx->tp->set_handler(c->tc, conn_event, c);
	nrf_list_add_tail(&ctx->conns, &c->all);
	if (c->server) {
		ctx->n_server++;
		h2_ev_idle(c); /* handshake under way, no stream yet */
	} else {
		ctx->n_client++;
	}
	mark_dirty(c);
	return 0;
}

static void
conn_destroy_unstarted(struct nrf_h2_conn *c)
{
	if (c->eng != NULL)
		c->eng->free(c);
	if (c->tc != NULL)
		c->ctx->tp->close(c->tc);
	h2_obuf_put(c->ctx, c->obuf);
	h2_acct_add(c->ctx, NRF_H2_MEM_HTTP2, -(int64_t)sizeof(*c));
	free(c->peer);
	free(c);
}

struct nrf_h2_conn *
nrf_h2_conn_server(struct nrf_h2_ctx *ctx, struct nrf_tp_conn *tc,
	const struct nrf_h2_cbs *cbs, void *user, int *err)
{
	struct nrf_h2_conn *c = conn_new(ctx, cbs, user, true);

	if (c == NULL) {
		ctx->tp->close(tc);
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->tc = tc;
	c->state = CONN_OPEN;
	*err = conn_start(c);
	if (*err != 0) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	return c;
}

struct nrf_h2_conn *
nrf_h2_conn_client(struct nrf_h2_ctx *ctx, const struct nrf_tp_addr *addr,
	const struct nrf_h2_cbs *cbs, void *user, int *err)
{
	struct nrf_h2_conn *c = conn_new(ctx, cbs, user, false);

	if (c == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->tc = ctx->tp->connect(ctx->loop, addr, err);
	if (c->tc == NULL) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	c->state = CONN_CONNECTING;
	*err = conn_start(c);
	if (*err != 0) {
		conn_destroy_unstarted(c);
		return NULL;
	}
	return c;
}

void *
nrf_h2_conn_user(const struct nrf_h2_conn *c)
{
	return c->user;
}

const char *
nrf_h2_conn_peer(struct nrf_h2_conn *c)
{
	char buf[64];

	if (c->peer != NULL)
		return c->peer;
	buf[0] = '\0';
	if (c->tc != NULL && c->ctx->tp->peer_name != NULL)
		c->ctx->tp->peer_name(c->tc, buf, sizeof(buf));
	c->peer = strdup(buf[0] != '\0' ? buf : "-");
	return c->peer != NULL ? c->peer : "-";
}

uint64_t *
nrf_h2_conn_word(struct nrf_h2_conn *c)
{
	return &c->word;
}

bool
nrf_h2_conn_usable(const struct nrf_h2_conn *c)
{
	return !c->server && c->state == CONN_OPEN &&
		!(c->fl & (CF_DEAD | CF_GOAWAY_RECV | CF_SHUTDOWN | CF_NOIDS));
}

uint32_t
nrf_h2_conn_streams(const struct nrf_h2_conn *c)
{
	return c->n_streams;
}

int
nrf_h2_conn_ping(struct nrf_h2_conn *c, uint64_t token)
{
	uint8_t d[8];
	unsigned int i;

	if (c == NULL || (c->fl & CF_DEAD))
		return NRF_EINVAL;
	for (i = 0; i < 8; i++)
		d[i] = (uint8_t)(token >> (56 - 8 * i));
	/* A connecting client writes nothing yet (conn_flush waits for
	 * CONN_OPEN); the PING follows the preface and SETTINGS then. */
	return c->eng->ping(c, d);
}

void
nrf_h2_conn_shutdown(struct nrf_h2_conn *c, bool final)
{
	if ((c->fl & (CF_DEAD | CF_SHUTDOWN | CF_LINGER)) || !c->server)
		return;
	if (!final) {
		if (!(c->fl & CF_NOTICE)) {
			c->fl |= CF_NOTICE;
			h2_srv_goaway(c, 0x7fffffffu, NRF_H2_NO_ERROR, NULL, false);
			/* Its ACK proves the client saw the notice: then the
			 * final GOAWAY cannot refuse a stream already sent. */
			c->eng->ping(c, drain_ping);
		}
		return;
	}
	c->fl |= CF_SHUTDOWN;
	h2_ev_busy(c);
	h2_srv_goaway(c, h2_srv_last_proc(c), NRF_H2_NO_ERROR, NULL, false);
	mark_dirty(c);
}

void
nrf_h2_conn_refuse(struct nrf_h2_conn *c, uint32_t h2_code, const char *why)
{
	if (!c->server || (c->fl & CF_DEAD))
		return;
	/* Its input is never fed to the engine: no stream can open, and with
	 * the GOAWAY written and no stream, the engine is done, so
	 * conn_flush() closes it. */
	c->fl |= CF_RSTOP | CF_SHUTDOWN;
	h2_ev_busy(c);
	h2_srv_goaway(c, 0, h2_code, why, false);
	mark_dirty(c);
}

/* nrf_h2_ctx_evict() of @p c (off its list, h2_ev_ok()). */
static void
evict(struct nrf_h2_conn *c, const struct nrf_h2_cbs *cbs, const char *why)
{
	c->cbs = cbs;
	c->fl |= CF_RSTOP;
	if (!(c->fl & CF_PREFACE)) {
		/* Nothing of HTTP/2 from the client yet (TLS under way, the
		 * preface incomplete): nothing to tell it. */
		conn_fail(c, NRF_ECLOSED);
		return;
	}
	/* As nrf_h2_conn_refuse(), with the last stream processed: its input
	 * is never fed again, so no stream can open, and with the GOAWAY
	 * written and no stream, conn_flush() closes it. */
	c->fl |= CF_SHUTDOWN;
	h2_srv_goaway(c, h2_srv_last_proc(c), NRF_H2_NO_ERROR, why, false);
	mark_dirty(c);
}

enum nrf_h2_evict
nrf_h2_ctx_evict(struct nrf_h2_ctx *ctx, const struct nrf_h2_cbs *cbs, const char *why)
{
	struct nrf_list *l;

	while ((l = nrf_list_first(&ctx->ev_hs)) != NULL) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, evl);

		nrf_list_del(l);
		if (h2_ev_ok(c)) {
			evict(c, cbs, why);
			return NRF_H2_EVICT_HANDSHAKE;
		}
	}
	while ((l = nrf_list_first(&ctx->ev_idle)) != NULL) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, evl);

		nrf_list_del(l);
		if (h2_ev_ok(c)) {
			evict(c, cbs, why);
			return NRF_H2_EVICT_IDLE;
		}
	}
	return NRF_H2_EVICT_NONE;
}

void
nrf_h2_conn_close(struct nrf_h2_conn *c, int err)
{
	conn_fail(c, err);
}

uint32_t
nrf_h2_ctx_shutdown(struct nrf_h2_ctx *ctx, bool final)
{
	struct nrf_list *l;
	uint32_t n = 0;

	NRF_LIST_FOREACH(l, &ctx->conns) {
		struct nrf_h2_conn *c = nrf_container_of(l, struct nrf_h2_conn, all);

		if (!c->server)
			continue;
		nrf_h2_conn_shutdown(c, final);
		n++;
	}
	return n;
}

void
nrf_h2_ctx_close_all(struct nrf_h2_ctx *ctx)
{
	struct nrf_list *l;

	NRF_LIST_FOREACH(l, &ctx->conns)
		conn_fail(nrf_container_of(l, struct nrf_h2_conn, all), NRF_ECLOSED);
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

int
nrf_h2_respond(struct nrf_h2_stream *st, int status, const struct nrf_h2_hdr *hdrs,
	size_t n_hdrs, const void *body, size_t len, bool more)
{
	struct nrf_h2_conn *c = st->conn;
	struct nrf_h2_ctx *ctx = c->ctx;
	int rv;

	if (!c->server || (c->fl & CF_DEAD) || (st->flags & (NRF_H2_SF_RESPONDED | NRF_H2_SF_RESET)) ||
		status < 100 || status > 999)
		return NRF_EINVAL;
	if (st->flags & NRF_H2_SF_HEAD) {
		len = 0; /* no content (RFC 9110 §9.3.2): END_STREAM on HEADERS */
		more = false;
	}
	if (len > 0 && nrf_h2_body_append(ctx, &st->out, body, len) != 0)
		return NRF_ENOMEM;
	if (!more)
		st->flags |= NRF_H2_SF_OUT_EOF;
	st->resp_status = (uint16_t)status;
	st->resp_bytes = len;
	rv = h2_srv_headers(c, st, status, hdrs, n_hdrs, !more && len == 0);
	if (rv != 0) {
		nrf_h2_body_release(ctx, &st->out);
		return rv;
	}
	st->flags |= NRF_H2_SF_RESPONDED;
	return 0;
}

int
nrf_h2_respond_inline(struct nrf_h2_stream *st, int status, const struct nrf_h2_hdr *hdrs,
	size_t n_hdrs, const void *body, size_t len)
{
	struct nrf_h2_conn *c = st->conn;
	int rv;

	if (!c->server || (c->fl & CF_DEAD) || (st->flags & (NRF_H2_SF_RESPONDED | NRF_H2_SF_RESET)) ||
		status < 100 || status > 999)
		return NRF_EINVAL;
	if (st->flags & NRF_H2_SF_HEAD)
		len = 0; /* headers alone (RFC 9110 §9.3.2) */
	/* HEADERS encoded now, the body held in the stream and framed from
	 * there. */
	if (len > sizeof(st->inl))
		return nrf_h2_respond(st, status, hdrs, n_hdrs, body, len, false);
	if (len > 0)
		memcpy(st->inl, body, len);
	st->inl_body = 0;
	st->inl_off = 0;
	st->inl_len = (uint16_t)len;
	st->flags |= NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE;
	st->resp_status = (uint16_t)status;
	st->resp_bytes = len;
	rv = h2_srv_headers(c, st, status, hdrs, n_hdrs, len == 0);
	if (rv != 0) {
		st->flags &= ~(NRF_H2_SF_OUT_EOF | NRF_H2_SF_INLINE);
		st->inl_len = 0;
		return rv;
	}
	st->flags |= NRF_H2_SF_RESPONDED;
	return 0;
}

int
nrf_h2_append(struct nrf_h2_stream *st, struct nrf_h2_body *b)
{
	if (!(st->flags & NRF_H2_SF_RESPONDED) || (st->flags & NRF_H2_SF_OUT_EOF) ||
		(st->conn->fl & CF_DEAD) || (st->flags & NRF_H2_SF_RESET)) {
		nrf_h2_body_release(st->conn->ctx, b);
		return (st->flags & (NRF_H2_SF_HEAD | NRF_H2_SF_RESET)) &&
				(st->flags & NRF_H2_SF_RESPONDED)
			? 0 : NRF_EINVAL;
	}
	if (b->len == 0)
		return 0;
	st->resp_bytes += b->len;
	h2_body_join(st->conn->ctx, &st->out, b);
	h2_srv_resume(st->conn, st);
	return 0;
}

int
nrf_h2_end(struct nrf_h2_stream *st)
{
	if (!(st->flags & NRF_H2_SF_RESPONDED) || (st->conn->fl & CF_DEAD))
		return NRF_EINVAL;
	st->flags |= NRF_H2_SF_OUT_EOF;
	h2_srv_resume(st->conn, st);
	return 0;
}

void
nrf_h2_reset(struct nrf_h2_stream *st, uint32_t h2_code)
{
	struct nrf_h2_conn *c = st->conn;

	if ((c->fl & CF_DEAD) || (st->flags & NRF_H2_SF_RESET))
		return;
	c->eng->reset(c, st, h2_code);
}
