/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_H
#define NRF_TP_H

/**
 * @file
 * Transport: bytes in and out of TCP connections, behind an ops table, so the
 * HTTP/2 code above never calls a socket API itself.
 *
 * Back-ends: the kernel one (nrf_tp_kern_ops(): epoll, non-blocking sockets,
 * TCP_NODELAY, one SO_REUSEPORT listener socket per worker loop) here; a
 * DPDK port + lwIP back-end later plugs in the same table.
 *
 * Model: a loop (struct nrf_tp_loop) is owned by one thread and drives every
 * connection and listener created on it; their handlers run on that thread
 * from ops->poll(). Events are edge-shaped: after NRF_TP_EV_IN the handler
 * reads until ops->read() reports NRF_EAGAIN (or remembers that it stopped
 * early and comes back by itself); after a write returns NRF_EAGAIN the
 * handler gets NRF_TP_EV_OUT once the connection can take more.
 *
 * Threads: every op except loop_wake() runs on the loop's thread only (the
 * control thread may create loops and listeners before the loop's thread
 * starts). Nothing here allocates per read or write.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Readable: data, end of stream or an error is waiting for read(). */
#define NRF_TP_EV_IN 0x1u
/** Writable: a blocked write can go on; for a connect, it has finished. */
#define NRF_TP_EV_OUT 0x2u
/** Error or hang-up: the next read or write reports it. */
#define NRF_TP_EV_ERR 0x4u

/** An IPv4 or IPv6 address and TCP port (host byte order port). */
struct nrf_tp_addr {
	uint8_t family;   /**< 4 or 6; 0 = unset */
	uint16_t port;
	uint8_t ip[16];   /**< network byte order; IPv4 in ip[0..3] */
};

/**
 * Parse a numeric IPv4 or IPv6 address (no brackets, no name lookup).
 * @return 0, or NRF_EINVAL when @p host is not a numeric address.
 * Any thread.
 */
int nrf_tp_addr_parse(const char *host, uint16_t port, struct nrf_tp_addr *out);

/**
 * Resolve @p host (numeric address or name) to its first address. Name
 * lookups block: control thread only, never on a worker.
 * @return 0, NRF_EINVAL (empty host), NRF_ENOENT (no address).
 */
int nrf_tp_addr_resolve(const char *host, uint16_t port, struct nrf_tp_addr *out);

/**
 * "a.b.c.d:port" or "[v6]:port", NUL-terminated, truncated to @p cap.
 * @return @p buf. Any thread.
 */
char *nrf_tp_addr_format(const struct nrf_tp_addr *a, char *buf, size_t cap);

struct nrf_tp_loop;
struct nrf_tp_conn;
struct nrf_tp_listener;

/** Event handler of a connection or listener; @p events is NRF_TP_EV_*. */
typedef void (*nrf_tp_event_fn)(void *ctx, unsigned int events);

/** Called on the loop's thread after another thread called loop_wake(). */
typedef void (*nrf_tp_wake_fn)(void *ctx);

/**
 * The operations of one back-end. All ops are mandatory. Errors are negative
 * NRF_E* codes:
 *   NRF_EAGAIN  nothing to do now (read/write/accept would block)
 *   NRF_ECLOSED the peer closed the connection (read at end of stream)
 *   NRF_EIO     any other socket error (refused, reset, unreachable)
 *   NRF_ENOMEM  out of memory or descriptors
 */
struct nrf_tp_ops {
	const char *name; /**< "kernel", ... */

	/** New loop; NULL with @p err set. Any thread. */
	struct nrf_tp_loop *(*loop_create)(int *err);
	/** Free a loop; every connection and listener must be closed. */
	void (*loop_free)(struct nrf_tp_loop *loop);
	/**
	 * Wait up to @p timeout_ms (0: do not wait, -1: forever) and run the
	 * handlers of ready connections and listeners.
	 * @return number of events handled (>= 0), or NRF_EIO.
	 */
	int (*poll)(struct nrf_tp_loop *loop, int timeout_ms);
	/** Handler run by poll() after loop_wake(); set before the loop runs. */
	void (*set_wake)(struct nrf_tp_loop *loop, nrf_tp_wake_fn fn, void *ctx);
	/** Make poll() return soon and run the wake handler. Any thread. */
	void (*loop_wake)(struct nrf_tp_loop *loop);

	/**
	 * Listen on @p addr (port 0: any free port, see listener_addr()) with
	 * address and port reuse, so every worker loop can have its own
	 * listener on the same address. @p fn gets NRF_TP_EV_IN when
	 * connections wait for accept().
	 * @return NULL with @p err = NRF_EIO (bind/listen failed; errno kept),
	 *   NRF_ENOMEM.
	 */
	struct nrf_tp_listener *(*listen)(struct nrf_tp_loop *loop,
		const struct nrf_tp_addr *addr, int backlog, nrf_tp_event_fn fn,
		void *ctx, int *err);
	/** The bound address (resolves port 0). */
	int (*listener_addr)(struct nrf_tp_listener *l, struct nrf_tp_addr *out);
	/** Stop listening and free @p l (safe inside its own handler). */
	void (*listener_close)(struct nrf_tp_listener *l);
	/**
	 * Accept one connection (non-blocking, TCP_NODELAY). Its handler must
	 * be set with set_handler() before the loop polls again.
	 * @return NULL with @p err = NRF_EAGAIN (none waiting), NRF_ENOMEM
	 *   (descriptors exhausted: stop accepting for a while), NRF_EIO.
	 */
	struct nrf_tp_conn *(*accept)(struct nrf_tp_listener *l, int *err);

	/**
	 * Start a non-blocking connect to @p addr. The handler (set_handler()
	 * right after) gets NRF_TP_EV_OUT or NRF_TP_EV_ERR when it is done;
	 * then connect_result() tells which. The caller runs the connect
	 * timeout (close() cancels).
	 * @return NULL with @p err = NRF_EIO (failed at once, e.g. refused),
	 *   NRF_ENOMEM.
	 */
	struct nrf_tp_conn *(*connect)(struct nrf_tp_loop *loop,
		const struct nrf_tp_addr *addr, int *err);
	/**
	 * After the first event of a connect: 0 connected, NRF_EIO failed
	 * (the result is taken before the handler runs, so a read in the
	 * handler cannot hide it); NRF_EAGAIN before that event.
	 */
	int (*connect_result)(struct nrf_tp_conn *c);
	/** Set the event handler of @p c. */
	void (*set_handler)(struct nrf_tp_conn *c, nrf_tp_event_fn fn, void *ctx);

	/** Read up to @p cap bytes: > 0 bytes, NRF_EAGAIN, NRF_ECLOSED, NRF_EIO. */
	ssize_t (*read)(struct nrf_tp_conn *c, void *buf, size_t cap);
	/**
	 * Optional (NULL: use read()). Read without a copy: @p *data points at
	 * the next received bytes where the transport keeps them (the DPDK
	 * back-end: the frame lwIP took in place), @return how many (> 0, one
	 * piece of what was received, as much as the caller may take at once),
	 * 0 when this connection cannot be read in place (a TLS connection:
	 * nothing was consumed, use read()), or what read() returns instead of
	 * bytes. The bytes are consumed by the call and stay valid, unchanged,
	 * until the next read(), read_ref() or close() of @p c; the caller must
	 * not keep pointers into them.
	 */
	ssize_t (*read_ref)(struct nrf_tp_conn *c, const void **data);
	/** Write: bytes taken (> 0, maybe fewer than offered), NRF_EAGAIN, NRF_EIO. */
	ssize_t (*writev)(struct nrf_tp_conn *c, const struct iovec *iov, int iovcnt);
	/**
	 * Close and free @p c. No handler call for it happens afterwards, also
	 * not for events already collected by the running poll(); safe inside
	 * its own handler.
	 */
	void (*close)(struct nrf_tp_conn *c);
	/**
	 * Optional (NULL: nothing is sent). End this side's output after what
	 * was written (a TCP FIN; on TLS a close_notify first) while reading
	 * goes on: a server that ends a connection its client is still
	 * writing on reads and drops the rest, and the client sees the end
	 * right after the last frame instead of a reset. Best effort, never
	 * blocks; nothing may be written afterwards; close() still frees @p c.
	 */
	void (*shutdown_write)(struct nrf_tp_conn *c);
	/** Address of the other end ("a.b.c.d:port") for logs. */
	void (*peer_name)(struct nrf_tp_conn *c, char *buf, size_t cap);
};

/** The kernel back-end (epoll). Static table; any thread. */
const struct nrf_tp_ops *nrf_tp_kern_ops(void);

#ifdef __cplusplus
}
#endif
#endif /* NRF_TP_H */
