/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel back-end of the transport: epoll, non-blocking sockets.
 *
 * Connections are registered once, edge-triggered, for input, output and
 * hang-up, so steady-state traffic costs no epoll_ctl() calls. Listeners are
 * level-triggered: accept() takes a bounded batch per event and the rest is
 * reported again by the next epoll_wait().
 *
 * A closed connection's memory stays on a per-loop graveyard until the next
 * poll() begins: an event for it may already sit in the batch being
 * dispatched, and its handler must then not run (fd == -1 marks it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nrf_addr.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_tp.h"

#define EVENTS_PER_POLL 256
#define ACCEPT_BATCH 64

enum src_kind {
	SRC_CONN = 0,
	SRC_LISTENER,
	SRC_WAKE,
};

/* Head of everything registered with epoll (epoll_event.data.ptr). */
struct src {
	int fd;
	uint8_t kind;
	nrf_tp_event_fn fn;
	void *ctx;
	struct src *dead_next;
};

struct nrf_tp_loop {
	int epfd;
	int reserve_fd;  /* spent to refuse a connection when out of fds */
	struct src wake;
	nrf_tp_wake_fn wake_fn;
	void *wake_ctx;
	struct src *graveyard;
	struct epoll_event evs[EVENTS_PER_POLL];
};

struct nrf_tp_conn {
	struct src s; /* first member */
	struct nrf_tp_loop *loop;
	bool connecting;  /* no event seen yet since connect() */
	int connect_err;  /* result, taken before any read can clear SO_ERROR */
	/*
	 * A read returned less than asked: the socket was empty then, and
	 * edge-triggered epoll reports the next arrival, so until then a read
	 * is EAGAIN without a recv() (one syscall fewer per wake). Not once
	 * the peer's FIN, a hang-up or an error was reported: its edge is
	 * gone, and the read that returns 0 or the error must still happen.
	 */
	bool drained;
	bool ended;
};

struct nrf_tp_listener {
	struct src s; /* first member */
	struct nrf_tp_loop *loop;
};

static int
errno_to_nrf(int e)
{
	switch (e) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		return NRF_EAGAIN;
	case ENOMEM:
	case ENOBUFS:
	case EMFILE:
	case ENFILE:
		return NRF_ENOMEM;
	/* The reasons an operator acts on keep their name (not "input/output
	 * error"): a port in use, a peer that refuses, no route. */
	case EADDRINUSE:
		return NRF_EADDRINUSE;
	case EADDRNOTAVAIL:
		return NRF_EADDRNOTAVAIL;
	case ECONNREFUSED:
		return NRF_ECONNREFUSED;
	case EACCES:
	case EPERM:
		return NRF_EACCES;
	case ENETUNREACH:
	case EHOSTUNREACH:
		return NRF_EUNREACH;
	case ECONNRESET:
		return NRF_ECONNRESET;
	case ETIMEDOUT:
		return NRF_ETIMEDOUT;
	default:
		return NRF_EIO;
	}
}

static socklen_t
to_sockaddr(const struct nrf_tp_addr *a, struct sockaddr_storage *ss)
{
	return nrf_addr_to_sockaddr(a->family, a->ip, a->port, ss);
}

static void
from_sockaddr(const struct sockaddr_storage *ss, struct nrf_tp_addr *a)
{
	memset(a, 0, sizeof(*a));
	nrf_addr_from_sockaddr((const struct sockaddr *)ss, &a->family, a->ip, &a->port);
}

static void
bury(struct nrf_tp_loop *loop, struct src *s)
{
	s->fd = -1;
	s->fn = NULL;
	s->dead_next = loop->graveyard;
	loop->graveyard = s;
}

static struct nrf_tp_loop *
kern_loop_create(int *err)
{
	struct nrf_tp_loop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev;

	if (loop == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	loop->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	loop->wake.kind = SRC_WAKE;
	if (loop->epfd < 0 || loop->wake.fd < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &loop->wake;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wake.fd, &ev) < 0)
		goto fail;
	*err = 0;
	return loop;
fail:
	*err = errno_to_nrf(errno);
	if (*err == NRF_EAGAIN)
		*err = NRF_EIO;
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->wake.fd >= 0)
		close(loop->wake.fd);
	if (loop->reserve_fd >= 0)
		close(loop->reserve_fd);
	free(loop);
	return NULL;
}

static void
free_graveyard(struct nrf_tp_loop *loop)
{
	while (loop->graveyard != NULL) {
		struct src *s = loop->graveyard;

		loop->graveyard = s->dead_next;
		free(s);
	}
}

static void
kern_loop_free(struct nrf_tp_loop *loop)
{
	if (loop == NULL)
		return;
	free_graveyard(loop);
	close(loop->wake.fd);
	close(loop->epfd);
	if (loop->reserve_fd >= 0)
		close(loop->reserve_fd);
	free(loop);
}

static int
kern_poll(struct nrf_tp_loop *loop, int timeout_ms)
{
	int n, i;

	free_graveyard(loop);
	n = epoll_wait(loop->epfd, loop->evs, EVENTS_PER_POLL, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : NRF_EIO;
	for (i = 0; i < n; i++) {
		struct src *s = loop->evs[i].data.ptr;
		uint32_t e = loop->evs[i].events;
		unsigned int ev = 0;

		if (s->fd < 0)
			continue; /* closed by an earlier handler of this batch */
		if (s->kind == SRC_WAKE) {
			uint64_t v;

			if (read(s->fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: another wake was already consumed */
			}
			if (loop->wake_fn != NULL)
				loop->wake_fn(loop->wake_ctx);
			continue;
		}
		if (e & (EPOLLIN | EPOLLRDHUP))
			ev |= NRF_TP_EV_IN;
		if (e & EPOLLOUT)
			ev |= NRF_TP_EV_OUT;
		if (e & (EPOLLERR | EPOLLHUP))
			ev |= NRF_TP_EV_ERR | NRF_TP_EV_IN;
		if (s->kind == SRC_CONN) {
			struct nrf_tp_conn *c = (struct nrf_tp_conn *)s;

			if (ev & NRF_TP_EV_IN)
				c->drained = false;
			if (e & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
				c->ended = true;
			if (c->connecting) {
				int soe = 0;
				socklen_t len = sizeof(soe);

				c->connecting = false;
				if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soe, &len) < 0 ||
					soe != 0 || (e & EPOLLERR))
					c->connect_err = soe != 0 ? errno_to_nrf(soe) : NRF_EIO;
			}
		}
		if (s->fn != NULL)
			s->fn(s->ctx, ev);
	}
	return n;
}

static void
kern_set_wake(struct nrf_tp_loop *loop, nrf_tp_wake_fn fn, void *ctx)
{
	loop->wake_fn = fn;
	loop->wake_ctx = ctx;
}

static void
kern_loop_wake(struct nrf_tp_loop *loop)
{
	uint64_t one = 1;

	if (write(loop->wake.fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, a wake is pending */
	}
}

static struct nrf_tp_listener *
kern_listen(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int backlog,
	nrf_tp_event_fn fn, void *ctx, int *err)
{
	struct nrf_tp_listener *l = calloc(1, sizeof(*l));
	struct sockaddr_storage ss;
	socklen_t len = to_sockaddr(addr, &ss);
	struct epoll_event ev;
	int one = 1;

	if (l == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	l->loop = loop;
	l->s.kind = SRC_LISTENER;
	l->s.fn = fn;
	l->s.ctx = ctx;
	l->s.fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->s.fd < 0)
		goto fail;
	if (setsockopt(l->s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		setsockopt(l->s.fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		goto fail;
	if (bind(l->s.fd, (struct sockaddr *)&ss, len) < 0)
		goto fail;
	if (listen(l->s.fd, backlog > 0 ? backlog : 1024) < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &l->s;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, l->s.fd, &ev) < 0)
		goto fail;
	*err = 0;
	return l;
fail:
	*err = errno_to_nrf(errno);
	if (*err == NRF_EAGAIN)
		*err = NRF_EIO;
	nrf_err_why_set("%s", strerror(errno)); /* the errno text, for the start's report */
	if (l->s.fd >= 0) {
		int e = errno;

		close(l->s.fd);
		errno = e;
	}
	free(l);
	return NULL;
}

static int
kern_listener_addr(struct nrf_tp_listener *l, struct nrf_tp_addr *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(l->s.fd, (struct sockaddr *)&ss, &len) < 0)
		return NRF_EIO;
	from_sockaddr(&ss, out);
	return 0;
}

static void
kern_listener_close(struct nrf_tp_listener *l)
{
	if (l == NULL)
		return;
	close(l->s.fd);
	bury(l->loop, &l->s);
}

static struct nrf_tp_conn *
conn_register(struct nrf_tp_loop *loop, int fd, int *err)
{
	struct nrf_tp_conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev;
	int one = 1;

	if (c == NULL) {
		close(fd);
		*err = NRF_ENOMEM;
		return NULL;
	}
	/* Small request/response frames: never wait for Nagle. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->loop = loop;
	c->s.fd = fd;
	c->s.kind = SRC_CONN;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.ptr = &c->s;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		*err = errno_to_nrf(errno);
		close(fd);
		free(c);
		return NULL;
	}
	*err = 0;
	return c;
}

static struct nrf_tp_conn *
kern_accept(struct nrf_tp_listener *l, int *err)
{
	int fd = accept4(l->s.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		struct nrf_tp_loop *loop = l->loop;

		if ((errno == EMFILE || errno == ENFILE) && loop->reserve_fd >= 0) {
			/* Out of descriptors: the listener is level-triggered and
			 * would report this connection forever. Spend the reserve
			 * descriptor to take it and close it (refused). */
			close(loop->reserve_fd);
			fd = accept4(l->s.fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				close(fd);
			loop->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			*err = NRF_ENOMEM;
			return NULL;
		}
		*err = errno == ECONNABORTED ? NRF_EAGAIN : errno_to_nrf(errno);
		return NULL;
	}
	return conn_register(l->loop, fd, err);
}

static struct nrf_tp_conn *
kern_connect(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int *err)
{
	struct sockaddr_storage ss;
	socklen_t len = to_sockaddr(addr, &ss);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct nrf_tp_conn *c;

	if (fd < 0) {
		*err = errno_to_nrf(errno);
		return NULL;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		*err = errno_to_nrf(errno);
		if (*err == NRF_EAGAIN)
			*err = NRF_EIO; /* EAGAIN here: no ephemeral ports left */
		close(fd);
		return NULL;
	}
	c = conn_register(loop, fd, err);
	if (c != NULL)
		c->connecting = true;
	return c;
}

static int
kern_connect_result(struct nrf_tp_conn *c)
{
	if (c->connecting)
		return NRF_EAGAIN;
	return c->connect_err;
}

static void
kern_set_handler(struct nrf_tp_conn *c, nrf_tp_event_fn fn, void *ctx)
{
	c->s.fn = fn;
	c->s.ctx = ctx;
}

static ssize_t
kern_read(struct nrf_tp_conn *c, void *buf, size_t cap)
{
	ssize_t n;

	if (c->drained)
		return NRF_EAGAIN;
	do {
		n = recv(c->s.fd, buf, cap, 0);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		if ((size_t)n < cap && !c->ended)
			c->drained = true;
		return n;
	}
	if (n == 0)
		return NRF_ECLOSED;
	return errno_to_nrf(errno);
}

static void
kern_shutdown_write(struct nrf_tp_conn *c)
{
	(void)shutdown(c->s.fd, SHUT_WR); /* ENOTCONN: gone already, close() follows */
}

static ssize_t
kern_writev(struct nrf_tp_conn *c, const struct iovec *iov, int iovcnt)
{
	struct msghdr mh;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = (struct iovec *)(uintptr_t)iov;
	mh.msg_iovlen = (size_t)iovcnt;
	do {
		n = sendmsg(c->s.fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n >= 0)
		return n > 0 ? n : NRF_EAGAIN;
	return errno_to_nrf(errno);
}

static void
kern_close(struct nrf_tp_conn *c)
{
	if (c == NULL)
		return;
	close(c->s.fd);
	bury(c->loop, &c->s);
}

static void
kern_peer_name(struct nrf_tp_conn *c, char *buf, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct nrf_tp_addr a;

	if (getpeername(c->s.fd, (struct sockaddr *)&ss, &len) < 0) {
		if (cap > 0)
			buf[0] = '\0';
		return;
	}
	from_sockaddr(&ss, &a);
	nrf_tp_addr_format(&a, buf, cap);
}

static const struct nrf_tp_ops kern_ops = {
	.name = "kernel",
	.loop_create = kern_loop_create,
	.loop_free = kern_loop_free,
	.poll = kern_poll,
	.set_wake = kern_set_wake,
	.loop_wake = kern_loop_wake,
	.listen = kern_listen,
	.listener_addr = kern_listener_addr,
	.listener_close = kern_listener_close,
	.accept = kern_accept,
	.connect = kern_connect,
	.connect_result = kern_connect_result,
	.set_handler = kern_set_handler,
	.read = kern_read,
	.writev = kern_writev,
	.close = kern_close,
	.shutdown_write = kern_shutdown_write,
	.peer_name = kern_peer_name,
};

const struct nrf_tp_ops *
nrf_tp_kern_ops(void)
{
	return &kern_ops;
}
