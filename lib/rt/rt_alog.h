/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_ALOG_H
#define NRF_RT_ALOG_H

/*
 * Access log and request ids (rt_alog.c, docs/access-log.md). Internal to
 * lib/rt. Every function below runs on the worker thread of @p w unless
 * it says otherwise; nothing here makes a system call per request.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_fwd.h"
#include "nrf_h2.h"

struct rt_worker;
struct rt_xact;

/* Longest request id kept (a client's longer x-request-id is not used). */
#define RT_RID_MAX 128
/* First byte of a transaction's rid not worked out yet (never in a valid id). */
#define RT_RID_LATER '\x01'

/*
 * Per worker: (re)read runtime.accessLog and runtime.requestId of the
 * worker's snapshot. The first call of the process opens the log file
 * (path restart-only). At worker creation and at every snapshot switch.
 * @return 0, NRF_ENOMEM, or NRF_EIO when the file cannot be opened
 * (logged with the path and the reason).
 */
int rt_alog_conf(struct rt_worker *w);
/* Write what the worker's buffer holds (worker exit). */
void rt_alog_flush(struct rt_worker *w);
/* Flush and free the worker's state (worker teardown). NULL-safe. */
void rt_alog_fini(struct rt_worker *w);

/*
 * The id of a request: its x-request-id (printable, at most RT_RID_MAX
 * bytes), else the trace-id of its traceparent, else one generated when
 * runtime.requestId.generate is on, else none. Worked out only when asked
 * for (an answer nrfwd gives itself, an access log line).
 *
 * rt_rid_begin(): @p m was just delivered; it is "the current request"
 * until rt_rid_take() or the next rt_rid_begin(), and @p m must stay valid
 * that long (the delivering callback). rt_rid_cur(): its id ("" when none).
 * rt_rid_take(): the current request becomes transaction @p x (its message
 * moved to x->req); x->rid is filled by rt_rid_xact() from x->req when first
 * asked for, the same id rt_rid_cur() gave if it was asked already.
 */
void rt_rid_begin(struct rt_worker *w, const struct nrf_h2_msg *m);
const char *rt_rid_cur(struct rt_worker *w);
void rt_rid_take(struct rt_worker *w, struct rt_xact *x);
const char *rt_rid_xact(struct rt_xact *x);

/*
 * Correlated hops (docs/access-log.md "Request ids").
 *
 * rt_rid_upstream(): the id to send upstream as x-request-id for @p x, whose
 * request has neither x-request-id nor traceparent (the caller saw its
 * fields): the id generated for it ("" when runtime.requestId.generate is
 * off). The same id the access log and nrfwd's own answers carry.
 *
 * rt_trace_child(): @p tp is the request's traceparent; when it is a valid
 * version-00 value (W3C Trace Context), writes into @p buf (at least 55
 * bytes) the same value with a new parent-id, nrfwd's span for this request
 * (one per transaction, kept in x->span for the access log), and returns
 * its length; 0 when @p tp is not valid (forwarded unchanged).
 */
const char *rt_rid_upstream(struct rt_xact *x);
size_t rt_trace_child(struct rt_xact *x, struct nrf_slice tp, char *buf);

/*
 * One line for a request answered at once, inside the callback that
 * delivered it (no transaction): status and bytes from @p st.
 */
void rt_alog_once(struct rt_worker *w, struct nrf_h2_stream *st, enum nrf_fwd_op op,
	unsigned int outcome, uint32_t via_members);
/* One line for transaction @p x, its front stream closing. */
void rt_alog_xact(struct rt_worker *w, struct rt_xact *x);

#endif /* NRF_RT_ALOG_H */
