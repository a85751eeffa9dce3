/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FAKE_TP_H
#define FAKE_TP_H

/*
 * An in-memory transport (struct nrf_tp_ops) for tests that drive a whole
 * lib/rt worker without sockets: the fuzz targets tests/fuzz/fuzz_front.c
 * and fuzz_peer.c, and the unit tests of the pipeline (docs/testing.md).
 *
 * Every connection has two ends: nrfwd's, used through the ops table like
 * a kernel socket, and the remote one, played by the test through the
 * fake_conn_*() functions below (a client that dialed a listener, or the
 * upstream nrfwd connected to). Bytes pushed by the test are what nrfwd
 * reads; what nrfwd writes waits in the connection until the test takes
 * it. Events follow the ops contract (edge-shaped: NRF_TP_EV_IN when bytes,
 * end of stream or an error arrive; NRF_TP_EV_OUT after a write that
 * returned NRF_EAGAIN once the test took bytes, and when a connect is
 * done) and are delivered by ops->poll(), which never waits: there is no
 * time here, the test decides what happens next.
 *
 * State is global (the ops table has no context): one test at a time, one
 * thread. fake_tp_reset() frees every connection and listener left; a
 * connection's object lives until both ends are done with it (nrfwd:
 * ops->close(); the test: fake_conn_release() or fake_tp_reset()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fake_conn;

/* What happens to a connect of nrfwd's. */
enum fake_connect {
	FAKE_ACCEPT = 0,  /* connected (NRF_TP_EV_OUT at the next poll) */
	FAKE_REFUSE_NOW,  /* ops->connect() fails at once (NRF_EIO) */
	FAKE_REFUSE,      /* connect_result() NRF_EIO at the next poll */
	FAKE_HANG,        /* never connects (the caller's timeout ends it) */
};

/*
 * nrfwd connects to @p a: return what happens. @p c is the new connection
 * (the test is its remote end when accepted; otherwise it is nrfwd's alone
 * and must not be kept). Called inside ops->connect().
 */
typedef enum fake_connect (*fake_connect_fn)(void *arg, struct fake_conn *c,
	const struct nrf_tp_addr *a);

/* The ops table. Static; the state behind it is global. */
const struct nrf_tp_ops *fake_tp_ops(void);

/* The connect hook (NULL: every connect is refused at once). */
void fake_tp_set_connect(fake_connect_fn fn, void *arg);

/*
 * Free every connection and listener left and clear the hook. Loops must
 * have been freed (every connection closed by nrfwd) first.
 * @return the number of connections nrfwd had not closed (a test may
 *   assert 0: a runtime that was freed closed them all).
 */
unsigned int fake_tp_reset(void);

/* A client connects to the listener on @p port: NULL when there is none. */
struct fake_conn *fake_tp_dial(uint16_t port);

/* Calls @p fn for every connection whose remote end is still held. */
void fake_tp_each(void (*fn)(void *arg, struct fake_conn *c), void *arg);

/* Remote end: bytes for nrfwd to read. 0 or -1 (no memory). */
int fake_conn_push(struct fake_conn *c, const void *p, size_t n);
/* Remote end: end of stream after the bytes pushed (a TCP FIN). */
void fake_conn_shutdown(struct fake_conn *c);
/* Remote end: connection reset (reads and writes fail with NRF_EIO). */
void fake_conn_reset(struct fake_conn *c);
/* Bytes nrfwd wrote that the test has not taken. */
const uint8_t *fake_conn_out(const struct fake_conn *c, size_t *len);
/* Take @p n of them. */
void fake_conn_take(struct fake_conn *c, size_t n);
/* nrfwd's writes stop (NRF_EAGAIN) while @p cap untaken bytes wait
 * (SIZE_MAX: never, the default): a client that does not read. */
void fake_conn_set_out_cap(struct fake_conn *c, size_t cap);
/* True once nrfwd closed its end. */
bool fake_conn_closed(const struct fake_conn *c);
/* True when this is a connection nrfwd opened (else: one it accepted). */
bool fake_conn_outbound(const struct fake_conn *c);
/* Where nrfwd connected to (outbound connections). */
const struct nrf_tp_addr *fake_conn_addr(const struct fake_conn *c);
/* The test's own pointer for this connection. */
void fake_conn_set_user(struct fake_conn *c, void *user);
void *fake_conn_user(const struct fake_conn *c);
/* The test is done with its end (the object is freed once nrfwd closed
 * its end too). Not inside ops->poll(). */
void fake_conn_release(struct fake_conn *c);

#ifdef __cplusplus
}
#endif
#endif /* FAKE_TP_H */
