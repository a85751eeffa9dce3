/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request pipeline of docs/behaviour.md §3 on one front stream ("transaction").
 *
 * Life of a transaction: created when h2 delivers a complete request
 * (rt_front_cbs.on_request), freed when the front stream closes
 * (rt_front_cbs.on_close) — never earlier, so every path below may assume
 * x->front is valid, and the one place that frees also cancels whatever
 * is still running upstream. Exactly one answer per front stream: every
 * answer goes through a function that sets x->answered first, and the
 * request timer is the backstop that answers (or resets the stream when an
 * answer had started) if nothing else did.
 *
 * One try at a time: x->t is the local NRF or a candidate peer, queued in a
 * pool or open as a peer stream. A try ends by relaying (T_RELAY: the answer
 * streams to the client with flow control), by keeping the local answer for
 * step 8 (T_BUFFER then moved to x->local), or by failing (connect failure,
 * reset, GOAWAY before processing, per-try timeout, reroute status) and
 * moving on to the next candidate.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

#define KEEP_XACTS 4096

static void next_candidate(struct rt_xact *x);
static void answer_final(struct rt_xact *x);
static void try_timeout(struct rt_timer *t, void *arg);
static void request_timeout(struct rt_timer *t, void *arg);
static void relay_due(struct rt_timer *t, void *arg);

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */

/*
 * The worker's next free transaction, left on the free list: a request's
 * plan is decided into it (x->plan), and only a request that goes upstream
 * takes it (xact_take()); one answered at once from the plan never
 * initialises or takes a transaction at all.
 */
static struct rt_xact *
xact_next(struct rt_worker *w)
{
	struct rt_xact *x = w->free_x;

	if (x == NULL) {
		x = malloc(sizeof(*x));
		if (x == NULL)
			return NULL;
		x->next_free = NULL;
		w->free_x = x;
		w->n_free_x++;
	}
	return x;
}

/* Take @p x (= xact_next(w)) off the free list; x->plan is kept, x->req
 * and x->rid are left for the caller to fill (front_on_request()), x->local
 * for local_complete() (have_local is cleared): 401 bytes less to clear
 * (measured). */
static void
xact_take(struct rt_worker *w, struct rt_xact *x)
{
	w->free_x = x->next_free;
	if (--w->n_free_x < w->low_free_x)
		w->low_free_x = w->n_free_x;
	nrf_zero(x, offsetof(struct rt_xact, req));
	x->w = w;
	x->t.x = x;
	/* rt_timer_init() on zeroed timers: only the callback is left to set */
	x->t.timer.fn = try_timeout;
	x->t.due.fn = relay_due;
	x->rtimer.fn = request_timeout;
	w->n_xact++;
}

static void
xact_put(struct rt_worker *w, struct rt_xact *x)
{
	w->n_xact--;
	if (w->n_free_x >= KEEP_XACTS) {
		free(x);
		return;
	}
	x->next_free = w->free_x;
	w->free_x = x;
	w->n_free_x++;
}

#define FLOOR_XACTS 128

size_t
rt_xact_trim(struct rt_worker *w)
{
	uint32_t k = w->low_free_x > FLOOR_XACTS ? (w->low_free_x - FLOOR_XACTS + 1) / 2 : 0;
	size_t n = 0;

	for (; k > 0 && w->free_x != NULL; k--) {
		struct rt_xact *x = w->free_x;

		w->free_x = x->next_free;
		w->n_free_x--;
		free(x);
		n += sizeof(*x);
	}
	w->low_free_x = w->n_free_x;
	return n;
}

void
rt_xact_pool_fini(struct rt_worker *w)
{
	while (w->free_x != NULL) {
		struct rt_xact *x = w->free_x;

		w->free_x = x->next_free;
		free(x);
	}
	w->n_free_x = 0;
}

static void
snap_ref(struct rt_worker *w, struct nrf_rt_snap *s, int d)
{
	uint32_t v = atomic_load_explicit(&s->refs[w->id], memory_order_relaxed);

	atomic_store_explicit(&s->refs[w->id], v + (uint32_t)d, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* Answers                                                                   */

static void
hdr_set(struct nrf_h2_hdr *h, const char *name, const char *value)
{
	h->name = nrf_slice_str(name);
	h->value = nrf_slice_str(value);
}

/* A ProblemDetails answer on @p st (no transaction needed). */
static int
respond_problem(struct nrf_h2_stream *st, int status, const char *body, size_t len,
	const char *retry_after, const char *location)
{
	struct nrf_h2_hdr h[5];
	char clen[24], *p = clen + sizeof(clen) - 1;
	size_t n = 0, v = len;
	const char *rid;
	int rc;

	/* Digits by hand: snprintf showed up in the 508 profile. */
	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	hdr_set(&h[n++], "content-type", "application/problem+json");
	h[n].name = nrf_slice_str("content-length");
	h[n].value.p = p; /* its length is known: no strlen() */
	h[n++].value.len = (size_t)(clen + sizeof(clen) - 1 - p);
	if (retry_after != NULL && retry_after[0] != '\0')
		hdr_set(&h[n++], "retry-after", retry_after);
	if (location != NULL && location[0] != '\0')
		hdr_set(&h[n++], "location", location);
	/* The request id on every answer nrfwd gives itself (rt_alog.c). */
	rid = st->user != NULL ? rt_rid_xact(st->user) : rt_rid_cur(nrf_h2_conn_user(st->conn));
	if (rid[0] != '\0')
		hdr_set(&h[n++], "x-request-id", rid);
	rc = nrf_h2_respond_inline(st, status, h, n, body, len);
	if (rc != 0)
		nrf_h2_reset(st, NRF_H2_INTERNAL_ERROR);
	return rc;
}

static int
respond_rendered(struct nrf_h2_stream *st, int status, const char *title,
	const char *cause, const char *detail)
{
	char body[512];
	int len = nrf_fwd_problem_render(body, sizeof(body), status, title, cause, detail);

	if (len < 0)
		len = nrf_fwd_problem_render(body, sizeof(body), status, title, cause, "");
	return respond_problem(st, status, body, len > 0 ? (size_t)len : 0, NULL, NULL);
}

/*
 * Every answer to a transaction's front stream begins here, so the rule
 * "every request is answered exactly once" is checked in one place: a
 * second answer is not sent (rt_answer_violation(): counted, and an abort
 * in builds without NDEBUG). @return false when @p x was answered already.
 */
static bool
answer_begin(struct rt_xact *x, uint8_t outcome)
{
	if (NRF_UNLIKELY(x->answered)) {
		rt_answer_violation(x->w, "was answered twice");
		return false;
	}
	x->answered = true;
	x->outcome = outcome;
	return true;
}

static void
answer_rendered(struct rt_xact *x, int status, const char *title, const char *cause,
	const char *detail)
{
	if (!answer_begin(x, (uint8_t)rt_outcome_of_status(status)))
		return;
	RT_STAT(x->w, answered_error, 1);
	respond_rendered(x->front, status, title, cause, detail);
}

/*
 * The configured error response of @p cond (errorResponses of @p mode in
 * snapshot @p s) on @p st, counted. No transaction needed: also the
 * answer given at once from the plan (answer_at_once()).
 * @return the outcome to count.
 */
static uint8_t
send_error(struct rt_worker *w, struct nrf_h2_stream *st, const struct nrf_rt_snap *s,
	enum nrf_cfg_mode mode, enum nrf_cfg_cond cond)
{
	const struct nrf_fwd_problem *p = nrf_fwd_table_problem(s->table, mode, cond);

	RT_STAT(w, answered_error, 1);
	switch (cond) {
	case NRF_COND_LOOP_DETECTION:
		RT_STAT(w, loop_detected, 1);
		break;
	case NRF_COND_HOP_LIMIT:
		RT_STAT(w, hop_limit, 1);
		break;
	case NRF_COND_NOT_REACHABLE:
		RT_STAT(w, not_reachable, 1);
		break;
	case NRF_COND_OVERLOAD:
		RT_STAT(w, overload, 1);
		break;
	case NRF_COND_LOCAL_UNAVAILABLE:
		RT_STAT(w, local_unavailable, 1);
		break;
	default:
		break;
	}
	if (p == NULL)
		respond_rendered(st, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"no error response for condition");
	else
		respond_problem(st, p->status, p->body, p->body_len, p->retry_after, p->location);
	return (uint8_t)rt_outcome_of_cond(cond);
}

/* Answer with the configured error response of @p cond. */
static void
answer_error(struct rt_xact *x, enum nrf_cfg_cond cond)
{
	if (!answer_begin(x, (uint8_t)rt_outcome_of_cond(cond)))
		return;
	send_error(x->w, x->front, x->snap, x->plan.error_mode, cond);
}

size_t
rt_via_on_answer(const struct rt_xact *x, struct nrf_h2_hdr *h, size_t n)
{
	const struct rt_worker *w = x->w;

	if (!x->snap->cfg->general.via_on_responses || w->via_member[0] == '\0' ||
		n + 1 > w->hdrs_cap)
		return n;
	h[n].name = nrf_slice_str("via");
	h[n].value.p = w->via_member;
	h[n].value.len = w->via_member_len;
	return n + 1;
}

/*
 * Answer the front stream with the status and fields of upstream answer
 * @p m (its body follows through nrf_h2_append() when @p more). A relayed
 * answer gets nrfwd's own Via member as its last field line, after any the
 * upstream sent (RFC 9110 §7.6.3; rt_via_on_answer()). The field entries
 * of a message grow up from the start of its header block and its bytes
 * down from block_top, so the block nearly always has room for one more
 * entry past n_hdrs: the Via line is written there, outside the message's
 * fields (n_hdrs is unchanged), and the list is passed as it is (HTTP/2
 * copies it). Otherwise the fields are listed in the worker's scratch
 * (slices, no copy of bytes, no allocation: a message has fewer than
 * hdrs_cap fields, as its header block holds 32 bytes per field). Answers
 * nrfwd gives itself do not carry it (docs/via.md).
 */
static int
relay_respond(struct rt_xact *x, struct nrf_h2_msg *m, bool more)
{
	struct rt_worker *w = x->w;
	size_t n;

	if (!x->snap->cfg->general.via_on_responses || m->n_hdrs + 1 > w->hdrs_cap)
		return nrf_h2_respond(x->front, m->status, m->hdrs, m->n_hdrs, NULL, 0, more);
	if (m->block != NULL && ((size_t)m->n_hdrs + 1) * sizeof(*m->hdrs) <= m->block_top) {
		/* no copy of the list (measured cheaper) */
		n = rt_via_on_answer(x, m->hdrs, m->n_hdrs);
		return nrf_h2_respond(x->front, m->status, m->hdrs, n, NULL, 0, more);
	}
	if (m->n_hdrs > 0)
		memcpy(w->hdrs, m->hdrs, m->n_hdrs * sizeof(*m->hdrs));
	n = rt_via_on_answer(x, w->hdrs, m->n_hdrs);
	return nrf_h2_respond(x->front, m->status, w->hdrs, n, NULL, 0, more);
}

/* Step 8 with the local answer kept: relay it whole. */
static void
answer_local(struct rt_xact *x)
{
	struct nrf_h2_msg *m = &x->local;
	bool body = m->body.len > 0;
	int rc;

	if (!answer_begin(x, NRF_RT_OUT_LOCAL))
		return;
	RT_STAT(x->w, answered_local, 1);
	if (NRF_UNLIKELY(rt_links_on(x, true))) {
		rc = rt_links_respond(x, m, true, true);
		if (rc < 0)
			nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
		if (rc != 0)
			return;
	}
	rc = relay_respond(x, m, body);
	if (rc == 0 && body) {
		nrf_h2_append(x->front, &m->body);
		rc = nrf_h2_end(x->front);
	}
	if (rc != 0)
		nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
}

/* ------------------------------------------------------------------------ */
/* Tries                                                                     */

/* Stop the current try wherever it is; no callbacks for it afterwards. */
static void
try_abort(struct rt_try *t)
{
	struct rt_worker *w = t->x->w;

	rt_pool_dequeue(&t->wt); /* when queued */
	if (t->ps != NULL) {
		nrf_h2_cancel(t->ps);
		t->ps = NULL;
		if (NRF_UNLIKELY(t->wt.isolated))
			rt_pool_sent_done(&t->wt);
	}
	rt_timer_cancel(&w->timers, &t->timer);
	if (NRF_UNLIKELY(t->due.idx != 0))
		rt_timer_cancel(&w->timers, &t->due);
	t->state = T_IDLE;
}

static int
try_start(struct rt_xact *x, struct rt_pool *p, bool local, bool force)
{
	struct rt_try *t = &x->t;
	int rc;

	t->local = local;
	t->wt.force = force;
	t->wt.isolate = false;
	t->retried = false;
	t->lost = false;
	t->need_body = false;
	t->hold = false;
	t->eof_sent = false;
	t->ps = NULL;
	t->state = T_IDLE;
	rc = rt_pool_submit(p, &t->wt);
	if (rc != 0) {
		t->state = T_IDLE;
		return rc;
	}
	if (t->wt.queued)
		t->state = T_QUEUED;
	rt_timer_arm_lane(&x->w->timers, &t->timer, x->snap->cfg->rt.per_try_ms);
	rt_count_try(p);
	t->started_ns = rt_now(x->w);
	if (!local)
		RT_STAT(x->w, forwards, 1);
	return 0;
}

static void
try_failed(struct rt_try *t, enum nrf_rt_fail reason, const char *why)
{
	struct rt_xact *x = t->x;
	struct rt_worker *w = x->w;

	try_abort(t);
	RT_STAT(w, try_failures, 1);
	rt_count_fail(t->wt.pool, reason);
	NRF_LOG_RL(WARN, MOD, "worker %u: try to %s failed: %s", w->id, t->wt.pool->ep.name,
		why);
	nrf_fwd_ledger_fail(&x->plan, &x->lg, t->local ? -1 : (int)x->next - 1);
	if (x->answered)
		return;
	if (reason == NRF_RT_FAIL_OVERLOAD) {
		/* shed by its waiting time in the queue (decision 0053) */
		answer_error(x, NRF_COND_OVERLOAD);
		return;
	}
	if (t->local && x->plan.verdict != NRF_FWD_FORWARD) {
		answer_final(x);
		return;
	}
	next_candidate(x);
}

/*
 * RFC 9113 §8.7: a stream refused (REFUSED_STREAM, or above a GOAWAY's
 * last-stream-id) was not processed, and a safe method may be sent again
 * anyway. Either is sent once more to the same upstream before it counts
 * as a failed try: one connection lost to a big answer must not fail
 * every other stream that was on it. A stream lost with its connection
 * goes apart from the others lost with it (t->wt.isolate: on a connection
 * that carries no other such stream), so the one whose answer kills
 * connections takes down only itself the second time; a stream lost with
 * a second connection is not sent again (decision 0052). The caller
 * decides which case it is. @return true when the try is under way again.
 */
static bool
try_retry(struct rt_try *t)
{
	struct rt_xact *x = t->x;
	struct rt_worker *w = x->w;
	int rc;

	if (x->answered || w->exiting)
		return false;
	rt_timer_cancel(&w->timers, &t->timer);
	t->need_body = false;
	t->hold = false;
	t->eof_sent = false;
	t->ps = NULL;
	t->state = T_IDLE;
	rc = rt_pool_submit(t->wt.pool, &t->wt);
	if (rc != 0) {
		t->state = T_IDLE;
		return false;
	}
	if (t->wt.queued)
		t->state = T_QUEUED;
	rt_timer_arm_lane(&w->timers, &t->timer, x->snap->cfg->rt.per_try_ms);
	RT_STAT(w, retries, 1);
	return true;
}

static bool
method_is_safe(struct nrf_slice m)
{
	return nrf_slice_eq(m, "GET") || nrf_slice_eq(m, "HEAD");
}

static void
try_timeout(struct rt_timer *tm, void *arg)
{
	struct rt_worker *w = arg;
	struct rt_try *t = nrf_container_of(tm, struct rt_try, timer);

	RT_STAT(w, try_timeouts, 1);
	if (t->state == T_SENT || t->state == T_BUFFER)
		rt_pool_try_failed(t->wt.pool); /* a sent one, not a queued one */
	try_failed(t, NRF_RT_FAIL_TIMEOUT, "per-try timeout");
}

/* Build the request for @p t in the worker's scratch and open the stream. */
static int
try_send(struct rt_try *t, struct nrf_h2_conn *c)
{
	struct rt_xact *x = t->x;
	struct rt_worker *w = x->w;
	const struct nrf_h2_msg *r = &x->req;
	const struct rt_ep *ep = &t->wt.pool->ep;
	struct nrf_h2_hdr *h = w->hdrs;
	size_t n = 0, i;
	char hops[12], tparent[55];
	bool have_rid = false, have_tp = false;
	int err;

	h[n].name = nrf_slice_str(":method");
	h[n++].value = r->method;
	h[n].name = nrf_slice_str(":scheme");
	h[n].value.p = ep->scheme;
	h[n++].value.len = ep->scheme_len;
	h[n].name = nrf_slice_str(":authority");
	if (t->local) {
		h[n].value.p = ep->authority;
		h[n].value.len = ep->authority_len;
		if (r->authority.len > 0) {
			h[n].value = r->authority;
		} else {
			/* looked for only when needed (measured: HTTP/2
			 * clients send :authority) */
			struct nrf_slice host = nrf_h2_msg_get(r, "host");

			if (host.len > 0)
				h[n].value = host;
		}
		n++;
		h[n].name = nrf_slice_str(":path");
		h[n++].value = r->path;
	} else {
		size_t plen = ep->prefix_len;

		h[n].value.p = ep->authority;
		h[n++].value.len = ep->authority_len;
		h[n].name = nrf_slice_str(":path");
		if (plen == 0) {
			/* nrf_h2_request() copies the list: the request's own
			 * :path will do (measured: two memcpy() calls) */
			h[n++].value = r->path;
		} else {
			if (plen + r->path.len > w->path_cap)
				return NRF_ETOOBIG;
			nrf_copy(w->path, ep->prefix, plen);
			nrf_copy(w->path + plen, r->path.p, r->path.len);
			h[n].value.p = w->path;
			h[n++].value.len = plen + r->path.len;
		}
	}
	for (i = 0; i < r->n_hdrs; i++) {
		const struct nrf_h2_hdr *f = &r->hdrs[i];

		if (nrf_slice_eq(f->name, "host"))
			continue;
		if (!t->local && (nrf_slice_eq(f->name, "3gpp-sbi-target-apiroot") ||
					 nrf_slice_eq(f->name, "3gpp-sbi-max-forward-hops")))
			continue;
		h[n] = *f; /* via lines stay, in order; hop-by-hop dropped by h2 */
		/* Correlated hops: the client's id goes on as it is; a
		 * traceparent goes on with nrfwd's span as its parent-id. */
		if (f->name.len == 12 && memcmp(f->name.p, "x-request-id", 12) == 0) {
			have_rid = true;
		} else if (f->name.len == 11 && memcmp(f->name.p, "traceparent", 11) == 0 &&
			!have_tp) {
			size_t tl = rt_trace_child(x, f->value, tparent);

			have_tp = true;
			if (tl > 0) {
				h[n].value.p = tparent;
				h[n].value.len = tl;
			}
		}
		n++;
	}
	if (!have_rid && !have_tp) {
		/* none of the client's: the id nrfwd logs, so hops join */
		const char *rid = rt_rid_upstream(x);

		if (rid[0] != '\0') {
			h[n].name = nrf_slice_str("x-request-id");
			h[n].value.p = rid;
			h[n++].value.len = strlen(rid);
		}
	}
	if (!t->local) {
		h[n].name = nrf_slice_str("3gpp-sbi-target-apiroot");
		h[n].value.p = ep->api_root;
		h[n++].value.len = ep->api_root_len;
		h[n].name = nrf_slice_str("via");
		h[n].value.p = w->via_member;
		h[n++].value.len = w->via_member_len;
		if (x->max_hops > 0) {
			/* TS 29.500 §6.10.10: one hop less; h2 copies it.
			 * Digits by hand, as in respond_problem(). */
			char *p = hops + sizeof(hops);
			uint32_t v = (uint32_t)x->max_hops - 1;

			do {
				*--p = (char)('0' + v % 10);
				v /= 10;
			} while (v != 0);
			h[n].name = nrf_slice_str("3gpp-sbi-max-forward-hops");
			h[n].value.p = p;
			h[n++].value.len = (size_t)(hops + sizeof(hops) - p);
		}
	}
	t->ps = nrf_h2_request(c, h, n, &r->body, t, &err);
	if (t->ps == NULL)
		return err;
	t->state = T_SENT;
	return 0;
}

/* The waiter contract (rt_int.h): a pool sends or fails a try it took. */
int
rt_waiter_send(struct rt_waiter *wt, struct nrf_h2_conn *c)
{
	return try_send(nrf_container_of(wt, struct rt_try, wt), c);
}

void
rt_waiter_failed(struct rt_waiter *wt, enum nrf_rt_fail reason, const char *why)
{
	try_failed(nrf_container_of(wt, struct rt_try, wt), reason, why);
}

/* The answer of the current try is the one: stream it to the client. */
static void
relay_start(struct rt_xact *x)
{
	struct rt_try *t = &x->t;
	struct nrf_h2_stream *ps = t->ps;
	bool end = (ps->flags & NRF_H2_SF_END) != 0;
	int rc;

	rt_timer_cancel(&x->w->timers, &t->timer);
	if (NRF_UNLIKELY(t->due.idx != 0))
		rt_timer_cancel(&x->w->timers, &t->due);
	if (!answer_begin(x, t->local ? NRF_RT_OUT_LOCAL : NRF_RT_OUT_PEER)) {
		try_abort(t);
		return;
	}
	t->state = T_RELAY;
	if (t->local)
		RT_STAT(x->w, answered_local, 1);
	else
		RT_STAT(x->w, answered_peer, 1);
	if (NRF_UNLIKELY(rt_links_on(x, t->local))) {
		rc = rt_links_respond(x, &ps->msg, t->local, end);
		if (rc != 0) {
			t->eof_sent = end;
			if (rc < 0) {
				nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
				try_abort(t);
			}
			return;
		}
	}
	if (end && ps->msg.body.len == 0) {
		t->eof_sent = true;
		rc = relay_respond(x, &ps->msg, false);
	} else {
		rc = relay_respond(x, &ps->msg, true);
		if (rc == 0) {
			nrf_h2_append(x->front, &ps->msg.body);
			if (end) {
				t->eof_sent = true;
				nrf_h2_end(x->front);
			}
		}
	}
	if (rc != 0) {
		nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
		try_abort(t);
		return;
	}
	/* nghttp2 copied the fields: the answer's header block can go now,
	 * not when its last byte has reached a (maybe slow) client. */
	nrf_h2_msg_release(x->w->h2, &ps->msg);
}

/* The local answer is complete while being kept: decide what it means. */
static void
local_complete(struct rt_xact *x)
{
	struct rt_worker *w = x->w;
	struct rt_try *t = &x->t;
	struct nrf_h2_stream *ps = t->ps;

	if (t->need_body) {
		struct nrf_slice b = nrf_h2_body_flat(&ps->msg.body, w->flat, w->flat_cap);

		if (nrf_fwd_local_action(x->snap->cfg, x->plan.op, ps->msg.status, b.p, b.len) ==
			NRF_FWD_RELAY) {
			relay_start(x);
			return;
		}
	}
	/* Forwarding trigger: keep the answer for step 8, go to the peers. */
	nrf_h2_msg_move(&x->local, &ps->msg);
	x->have_local = true;
	x->lg.local = NRF_FWD_LOCAL_ABSENT;
	try_abort(t);
	next_candidate(x);
}

/* A peer's answer is complete while being held: the body may decide. */
static void
peer_complete(struct rt_xact *x)
{
	struct rt_try *t = &x->t;
	struct nrf_h2_stream *ps = t->ps;
	const struct nrf_cfg *cfg = x->snap->cfg;
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

	if (nrf_fwd_peer_needs_body(cfg, &x->plan, &x->lg, ps->msg.status)) {
		struct nrf_slice b = nrf_h2_body_flat(&ps->msg.body, x->w->flat, x->w->flat_cap);

		if (nrf_fwd_peer_answer(cfg, &x->plan, &x->lg, ps->msg.status, b.p, b.len,
			    &cond) == NRF_FWD_DO_ERROR) {
			try_abort(t);
			answer_error(x, cond);
			return;
		}
	}
	relay_start(x);
}

void
rt_peer_on_response(struct nrf_h2_stream *ps)
{
	struct rt_try *t = ps->user;
	struct rt_xact *x = t->x;
	const struct nrf_cfg *cfg = x->snap->cfg;
	int status = ps->msg.status;

	/* A status nrfwd cannot give its client is a malformed answer: lib/h2
	 * keeps nghttp2's rules, which take "000".."099" as a final answer,
	 * but RFC 9110 §15 has no status below 100 and nrf_h2_respond()
	 * refuses one. The stream is reset and the try fails (on_close), as
	 * for any answer lib/h2 finds malformed; the client gets the next
	 * candidate's answer or the failure rule's, never a reset. */
	if (NRF_UNLIKELY(status < 100)) {
		NRF_LOG_RL(WARN, MOD, "worker %u: %s answered status %d: malformed", x->w->id,
			t->wt.pool->ep.name, status);
		nrf_h2_reset(ps, NRF_H2_PROTOCOL_ERROR);
		return;
	}
	rt_count_status(t->wt.pool, status);
	rt_count_answer_latency(t->wt.pool, rt_now(x->w) - t->started_ns);
	rt_pool_try_answered(t->wt.pool);
	if (!t->local) {
		enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

		switch (nrf_fwd_peer_answer(cfg, &x->plan, &x->lg, status, NULL, 0, &cond)) {
		case NRF_FWD_DO_NEXT:
			RT_STAT(x->w, reroutes, 1);
			rt_count_fail(t->wt.pool, NRF_RT_FAIL_REROUTE);
			NRF_LOG_RL(INFO, MOD, "worker %u: %s answered %d: rerouting", x->w->id,
				t->wt.pool->ep.name, status);
			nrf_fwd_ledger_fail(&x->plan, &x->lg, (int)x->next - 1);
			try_abort(t);
			next_candidate(x);
			return;
		case NRF_FWD_DO_ERROR:
			/* Absence from a peer while the local NRF failed. */
			try_abort(t);
			answer_error(x, cond);
			return;
		default:
			break;
		}
		/* Keep the answer until it is complete (up to hold_cap()): a
		 * peer that breaks off mid-answer is then one more failed try and
		 * the next candidate answers, instead of a client stream reset
		 * after its headers. NRF answers are small; bigger ones stream. */
		if (!(ps->flags & NRF_H2_SF_END)) {
			t->hold = true;
			t->state = T_BUFFER;
			rt_peer_on_data(ps);
			return;
		}
		peer_complete(x);
		return;
	}
	if (x->plan.verdict == NRF_FWD_FORWARD && x->plan.op == NRF_OP_NF_DISCOVER &&
		status == 200 && cfg->fwd.empty_discovery_result &&
		nrf_fwd_op_enabled(cfg, x->plan.op) &&
		!nrf_cfg_status_match(&cfg->fwd.triggers, status)) {
		t->need_body = true; /* empty nfInstances? needs the body */
	} else if (x->plan.verdict != NRF_FWD_FORWARD ||
		   nrf_fwd_local_action(cfg, x->plan.op, status, NULL, 0) == NRF_FWD_RELAY) {
		/* The local answer is the one. Held until complete like a
		 * peer's: a local NRF that breaks off mid-answer is then a
		 * failed try (sent again once, or forwarded), not a client
		 * stream reset after its headers. */
		if (ps->flags & NRF_H2_SF_END) {
			relay_start(x);
			return;
		}
		t->hold = true;
	}
	t->state = T_BUFFER;
	rt_peer_on_data(ps);
}

/*
 * How much of an answer is held before it is relayed (peer answers, local
 * answers, the local answer kept for step 8): up to maxBodyBytes, at most
 * RT_HOLD_MAX_BYTES. Beyond that the answer streams with flow control.
 */
static size_t
hold_cap(const struct rt_xact *x)
{
	return NRF_MIN((size_t)x->snap->cfg->rt.max_body_bytes, (size_t)RT_HOLD_MAX_BYTES);
}

/*
 * An answer over hold_cap() of an upstream with rewriteLinks is held on,
 * up to maxBodyBytes, so that a long one (NFListRetrieval) has its links
 * rewritten too (decision 0013). Asked only past hold_cap().
 */
static bool
hold_for_links(const struct rt_xact *x, size_t len)
{
	return rt_links_on(x, x->t.local) && len <= x->snap->cfg->rt.max_body_bytes;
}

/*
 * An answer too big to hold, still arriving: it will be relayed as it is,
 * but not from inside this read. The rest of the read (and of the loop
 * iteration's reads) comes first, so an upstream that sends more than its
 * window in one go (h2 reports it on the frame header, as a reset with
 * FLOW_CONTROL_ERROR) is a failed try before any of its answer reached the
 * client, and the client gets the failure rule's answer, not headers and
 * a reset.
 */
static void
relay_due(struct rt_timer *tm, void *arg)
{
	struct rt_try *t = nrf_container_of(tm, struct rt_try, due);

	(void)arg;
	if (t->state == T_BUFFER && t->ps != NULL)
		relay_start(t->x);
}

void
rt_peer_on_data(struct nrf_h2_stream *ps)
{
	struct rt_try *t = ps->user;
	struct rt_xact *x = t->x;

	switch (t->state) {
	case T_RELAY:
		if (ps->msg.body.len > 0)
			nrf_h2_append(x->front, &ps->msg.body);
		if ((ps->flags & NRF_H2_SF_END) && !t->eof_sent) {
			t->eof_sent = true;
			nrf_h2_end(x->front);
		}
		break;
	case T_BUFFER:
		/* Held, not consumed: the upstream sends at most its stream
		 * window (RT_HOLD_MAX_BYTES) until the relay consumes. An answer
		 * held for its links (rewriteLinks, decision 0013) is taken out
		 * of flow control up to maxBodyBytes, while the worker is within
		 * its memory budget (decision 0018). */
		if (ps->msg.body.len >= hold_cap(x) && hold_for_links(x, ps->msg.body.len) &&
			!nrf_h2_ctx_over_budget(x->w->h2)) {
			nrf_h2_consume(ps, ps->unconsumed);
			if (!(ps->flags & NRF_H2_SF_END))
				return;
		} else if (ps->flags & NRF_H2_SF_END) {
			if (ps->msg.body.len > hold_cap(x)) {
				relay_start(x); /* too big to keep: as it is */
				return;
			}
		} else {
			if (ps->msg.body.len >= NRF_MAX(hold_cap(x), (size_t)1) ||
				(ps->msg.body.len + NRF_H2_CHUNK_SIZE >= RT_HOLD_MAX_BYTES &&
					nrf_h2_stalled(ps))) {
				/* Too big to keep for later: relayed as it is. */
				if (t->due.idx == 0 &&
					rt_timer_arm(&x->w->timers, &t->due, 0) != 0)
					relay_start(x); /* no timer: now */
			}
			return;
		}
		if (NRF_UNLIKELY(t->due.idx != 0))
			rt_timer_cancel(&x->w->timers, &t->due);
		if ((ps->flags & NRF_H2_SF_END) && t->hold && t->local)
			relay_start(x);
		else if ((ps->flags & NRF_H2_SF_END) && t->hold)
			peer_complete(x);
		else if (ps->flags & NRF_H2_SF_END)
			local_complete(x);
		break;
	default:
		break;
	}
}

void
rt_peer_on_close(struct nrf_h2_stream *ps, uint32_t code, int err)
{
	struct rt_try *t = ps->user;
	struct rt_xact *x = t->x;
	bool complete = (ps->flags & NRF_H2_SF_END) != 0;
	enum nrf_rt_fail reason;
	char why[64];

	t->ps = NULL;
	if (NRF_UNLIKELY(t->wt.isolated))
		rt_pool_sent_done(&t->wt);
	if (t->state == T_RELAY) {
		rt_timer_cancel(&x->w->timers, &t->timer);
		t->state = T_IDLE;
		if (!complete || !t->eof_sent) {
			RT_STAT(x->w, relay_aborts, 1);
			NRF_LOG_RL(WARN, MOD, "worker %u: answer from %s broke off (code %u)",
				x->w->id, t->wt.pool->ep.name, code);
			nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
		}
		return;
	}
	if (err == 0 && code == NRF_H2_REFUSED_STREAM && !t->retried) {
		t->retried = true;
		if (try_retry(t)) {
			NRF_LOG_RL(INFO, MOD, "worker %u: stream to %s refused: sent again",
				x->w->id, t->wt.pool->ep.name);
			return;
		}
	} else if (err != 0 && !t->lost && method_is_safe(x->req.method)) {
		t->lost = true;
		t->wt.isolate = true;
		if (try_retry(t)) {
			NRF_LOG_RL(INFO, MOD, "worker %u: stream to %s lost with its connection: "
				"sent again apart", x->w->id, t->wt.pool->ep.name);
			return;
		}
	} else if (err == 0 && code != NRF_H2_REFUSED_STREAM) {
		rt_pool_try_failed(t->wt.pool);
	}
	reason = err != 0 ? NRF_RT_FAIL_CONN_LOST
		: code == NRF_H2_REFUSED_STREAM ? NRF_RT_FAIL_REFUSED : NRF_RT_FAIL_RESET;
	if (err != 0)
		snprintf(why, sizeof(why), "connection lost");
	else if (code == NRF_H2_REFUSED_STREAM)
		snprintf(why, sizeof(why), "refused (REFUSED_STREAM or GOAWAY)");
	else
		snprintf(why, sizeof(why), "stream reset (code %u)", code);
	try_failed(t, reason, why);
}

/* ------------------------------------------------------------------------ */
/* Pipeline                                                                  */

/* Nothing more to try: the rule (lib/fwd) says what the client gets. */
static void
answer_final(struct rt_xact *x)
{
	enum nrf_cfg_cond cond = NRF_COND_NOT_REACHABLE;

	if (nrf_fwd_final(&x->plan, &x->lg, &cond) == NRF_FWD_DO_LOCAL && x->have_local) {
		answer_local(x);
		return;
	}
	answer_error(x, cond);
}

static void
next_candidate(struct rt_xact *x)
{
	struct rt_worker *w = x->w;

	while (x->next < x->plan.n_cand) {
		uint16_t i = x->next++;
		uint16_t peer = x->plan.cand[i];
		struct rt_pool *p = rt_xact_pool(x, peer);
		int rc;

		if (p == NULL)
			continue;
		if (x->max_hops == 0) {
			/* TS 29.500 §6.10.10: no hop left to forward with. */
			size_t n_via = nrf_h2_msg_via(&x->req, w->via, w->via_cap);

			x->lg.hop_limit = true;
			rt_loop_note(w, NRF_RT_LOOP_HOP_LIMIT, w->via, NRF_MIN(n_via, w->via_cap),
				-1, x->front, x);
			break;
		}
		x->lg.tried++;
		rc = try_start(x, p, false, (x->plan.cand_down >> i) & 1);
		if (rc == 0)
			return;
		rt_count_fail(p, rc == NRF_EFULL ? NRF_RT_FAIL_OVERLOAD : NRF_RT_FAIL_UNAVAILABLE);
		if (rc == NRF_EFULL) {
			answer_error(x, NRF_COND_OVERLOAD);
			return;
		}
		nrf_fwd_ledger_fail(&x->plan, &x->lg, i);
		RT_STAT(w, try_failures, 1);
		NRF_LOG_RL(WARN, MOD, "worker %u: peer %s not tried: %s", w->id,
			p->ep.name, nrf_strerror(rc));
	}
	answer_final(x);
}

/* How often a relay held back by its client looks again (request timer). */
#define CLIENT_BOUND_RECHECK_MS 100

/*
 * The answer is being relayed and what holds it back is the client: bytes
 * wait for its flow-control window (or socket), also after the upstream's
 * stream ended, or the upstream's stream is stalled because the client has
 * not taken what came before.
 */
static bool
client_bound(const struct rt_xact *x)
{
	return nrf_h2_pending(x->front) > 0 ||
		(x->t.state == T_RELAY && x->t.ps != NULL && nrf_h2_stalled(x->t.ps));
}

static void
request_timeout(struct rt_timer *tm, void *arg)
{
	struct rt_worker *w = arg;
	struct rt_xact *x = nrf_container_of(tm, struct rt_xact, rtimer);

	/* Time blocked on the client's own flow control is the client's, not
	 * the upstream's (decision 0052): requestMs stops counting while the
	 * relay waits for the client, and stalledReaderMs (h2's sweep: no byte
	 * taken at all, RST_STREAM(CANCEL)) governs it. The timer looks again
	 * shortly; a relay that was held back at the last look gets one more,
	 * so a client that just took a window's worth is not cut off in the
	 * round trip before the upstream's next bytes. */
	if (x->answered) {
		bool now = client_bound(x);

		if (now || x->client_bound) {
			uint64_t framed = x->front->resp_bytes - nrf_h2_pending(x->front);

			x->client_bound = now;
			/* A client that takes nothing at all: stalledReaderMs,
			 * counted in looks so that it holds on any clock (h2's
			 * sweep does the same on the wall clock; the first ends
			 * it). */
			x->stalled_looks = framed != x->framed ? 0 : x->stalled_looks + 1;
			x->framed = framed;
			if ((uint64_t)x->stalled_looks * CLIENT_BOUND_RECHECK_MS >=
				x->snap->cfg->rt.stalled_reader_ms) {
				RT_STAT(w, timeouts[NRF_RT_TMO_STALLED_READER], 1);
				try_abort(&x->t);
				nrf_h2_reset(x->front, NRF_H2_CANCEL);
				return;
			}
			if (rt_timer_arm(&w->timers, &x->rtimer, CLIENT_BOUND_RECHECK_MS) == 0)
				return;
		}
	}
	RT_STAT(w, request_timeouts, 1);
	NRF_LOG_RL(WARN, MOD, "worker %u: request timeout", w->id);
	if (!x->answered && x->t.state != T_IDLE) {
		/* The try under way is cut short: a failed try for the rule. */
		rt_count_fail(x->t.wt.pool, NRF_RT_FAIL_TIMEOUT);
		nrf_fwd_ledger_fail(&x->plan, &x->lg, x->t.local ? -1 : (int)x->next - 1);
	}
	try_abort(&x->t);
	if (!x->answered) {
		answer_final(x);
		/* The backstop: after it, nothing else would answer. */
		if (NRF_UNLIKELY(!x->answered))
			rt_answer_violation(w, "reached its request timeout and was not answered");
		return;
	}
	/* An answer had begun and did not finish in time. */
	RT_STAT(w, relay_aborts, 1);
	nrf_h2_reset(x->front, NRF_H2_INTERNAL_ERROR);
}

/* Loop prevention skipped peers (their identity is in Via): one loop event
 * per recorded skip (rt_loops.c). Only requests that loop get here. */
static __attribute__((noinline)) void
note_skips(struct rt_worker *w, struct nrf_h2_stream *st, const struct nrf_fwd_plan *plan,
	size_t n_via)
{
	for (uint16_t k = 0; k < plan->n_skip; k++)
		if (plan->skip[k].reason != NRF_FWD_SKIP_DOWN)
			rt_loop_note(w, NRF_RT_LOOP_PREVENTED, w->via, n_via,
				(int)plan->skip[k].peer, st, NULL);
}

/*
 * docs/behaviour.md §3 steps 2-4 on the request as h2 delivered it (@p st->msg): one Via
 * scan, the operation, the verdict into @p plan. Answers that need no
 * upstream (loop detected, hop limit, malformed Via, local-only operation
 * and no local NRF) are given here and counted, before any transaction,
 * snapshot reference, request move or timer exists: that is the whole
 * cost of a 508. @return true when answered; false: @p plan says where
 * the request goes (start()).
 */
static bool
answer_at_once(struct rt_worker *w, struct nrf_h2_stream *st, const struct nrf_rt_snap *s,
	struct nrf_fwd_plan *plan)
{
	struct nrf_via_result via;
	size_t n_via;
	enum nrf_fwd_op op;
	uint8_t outcome;
	int rc;

	n_via = nrf_h2_msg_via(&st->msg, w->via, w->via_cap);
	if (n_via > w->via_cap)
		n_via = w->via_cap;
	rc = nrf_via_scan(s->db, w->scratch, w->via, n_via, &via);
	if (rc != 0) {
		RT_STAT(w, bad_requests, 1);
		NRF_LOG_RL(INFO, MOD, "worker %u: bad Via header: %s", w->id, nrf_strerror(rc));
		RT_STAT(w, answered_error, 1);
		respond_rendered(st, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"malformed Via header");
		rt_count_answer(w, NRF_OP_OTHER, rt_outcome_of_status(400));
		rt_alog_once(w, st, NRF_OP_OTHER, rt_outcome_of_status(400), 0);
		return true;
	}
	op = nrf_fwd_classify(st->msg.method, st->msg.path, nrf_slice_str(""));
	rc = nrf_fwd_decide(s->table, &via, op, w->rotation++, w->down, plan);
	if (rc != 0) {
		RT_STAT(w, answered_error, 1);
		respond_rendered(st, 500, "Internal Server Error", "SYSTEM_FAILURE", "");
		rt_count_answer(w, NRF_OP_OTHER, rt_outcome_of_status(500));
		rt_alog_once(w, st, NRF_OP_OTHER, rt_outcome_of_status(500), via.members);
		return true;
	}
	if (plan->n_skip_via > 0) {
		note_skips(w, st, plan, n_via);
		return false; /* skips to count per peer: start() */
	}
	switch (plan->verdict) {
	case NRF_FWD_LOOP_DETECTED:
	case NRF_FWD_HOP_LIMIT:
		outcome = send_error(w, st, s, plan->error_mode, plan->error);
		rt_loop_note(w, plan->verdict == NRF_FWD_LOOP_DETECTED ? NRF_RT_LOOP_DETECTED
			: NRF_RT_LOOP_HOP_LIMIT, w->via, n_via, -1, st, NULL);
		break;
	case NRF_FWD_LOCAL_ONLY:
		if (s->cfg->rt.local_nrf.present)
			return false;
		RT_STAT(w, answered_error, 1);
		respond_rendered(st, 501, "Not Implemented", "UNSUPPORTED_RESOURCE",
			"operation is served by the local NRF only, and there is none");
		outcome = (uint8_t)rt_outcome_of_status(501);
		break;
	default:
		return false;
	}
	rt_count_answer(w, plan->op, outcome);
	rt_alog_once(w, st, plan->op, outcome, via.members);
	return true;
}

/*
 * 3gpp-Sbi-Max-Forward-Hops (TS 29.500 §5.2.3.2.14): a non-negative
 * integer; absent leaves x->max_hops at -1 (never added). @return false
 * when present but malformed (several field lines, not digits, too big).
 */
static bool
parse_max_hops(struct rt_xact *x)
{
	const struct nrf_h2_msg *r = &x->req;
	struct nrf_slice v = {NULL, 0};
	uint32_t n = 0;
	size_t i, k = 0;

	for (i = 0; i < r->n_hdrs; i++) {
		if (nrf_slice_eq(r->hdrs[i].name, "3gpp-sbi-max-forward-hops")) {
			v = r->hdrs[i].value;
			k++;
		}
	}
	if (k == 0)
		return true;
	while (v.len > 0 && (v.p[0] == ' ' || v.p[0] == '\t')) {
		v.p++;
		v.len--;
	}
	while (v.len > 0 && (v.p[v.len - 1] == ' ' || v.p[v.len - 1] == '\t'))
		v.len--;
	if (k > 1 || v.len == 0 || v.len > 9)
		return false;
	for (i = 0; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return false;
		n = n * 10 + (uint32_t)(v.p[i] - '0');
	}
	x->max_hops = (int32_t)n;
	return true;
}

/* Every upstream this request could go to is held down: its local NRF
 * (asked only when it has one) and each candidate. */
static bool
all_down(const struct rt_xact *x)
{
	const struct rt_pool *lp = x->snap->views[x->w->id]->local;
	uint32_t mask = x->plan.verdict == NRF_FWD_FORWARD && x->plan.n_cand > 0
		? (1u << x->plan.n_cand) - 1u : 0u;

	return NRF_UNLIKELY(lp->down) && (x->plan.cand_down & mask) == mask;
}

/* The rest of the pipeline for a request with a transaction and a plan. */
static void
start(struct rt_xact *x)
{
	struct rt_worker *w = x->w;
	struct nrf_rt_snap *s = x->snap;
	int rc;

	if (x->plan.n_skip_via > 0) {
		RT_STAT(w, loop_prevented, x->plan.n_skip_via);
		rt_count_skips(x);
	}
	switch (x->plan.verdict) {
	case NRF_FWD_LOOP_DETECTED:
	case NRF_FWD_HOP_LIMIT:
		answer_error(x, x->plan.error);
		return;
	case NRF_FWD_LOCAL_ONLY:
		if (!s->cfg->rt.local_nrf.present) {
			answer_rendered(x, 501, "Not Implemented", "UNSUPPORTED_RESOURCE",
				"operation is served by the local NRF only, and there is none");
			return;
		}
		break;
	case NRF_FWD_FORWARD:
		break;
	}
	x->max_hops = -1;
	if (x->plan.verdict == NRF_FWD_FORWARD && !parse_max_hops(x)) {
		answer_rendered(x, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"malformed 3gpp-Sbi-Max-Forward-Hops header");
		return;
	}
	/* From here on the answer depends on upstreams: bound it. Requests
	 * answered at once never touch the timer heap. */
	if (rt_timer_arm_lane(&w->timers, &x->rtimer, s->cfg->rt.request_ms) != 0) {
		/* No memory for the backstop: nothing may go upstream unbounded. */
		answer_error(x, NRF_COND_OVERLOAD);
		return;
	}
	if (!s->cfg->rt.local_nrf.present) {
		next_candidate(x);
		return;
	}
	/* Local NRF first (LOCAL_ONLY, or FORWARD with a local NRF). A held
	 * down local NRF is a failed try at once (docs/failures.md), unless
	 * every candidate is held down too: then it is tried anyway, waiting
	 * on its probe (Envoy's panic threshold; decision 0052). */
	x->lg.local = NRF_FWD_LOCAL_PENDING;
	rc = try_start(x, rt_xact_local(x), true, all_down(x));
	if (rc == 0)
		return;
	nrf_fwd_ledger_fail(&x->plan, &x->lg, -1);
	rt_count_fail(rt_xact_local(x), rc == NRF_EFULL ? NRF_RT_FAIL_OVERLOAD
		: NRF_RT_FAIL_UNAVAILABLE);
	if (rc == NRF_EFULL) {
		answer_error(x, NRF_COND_OVERLOAD);
		return;
	}
	RT_STAT(w, try_failures, 1);
	NRF_LOG_RL(WARN, MOD, "worker %u: local NRF not tried: %s", w->id, nrf_strerror(rc));
	if (x->plan.verdict == NRF_FWD_FORWARD)
		next_candidate(x);
	else
		answer_final(x);
}

/* ------------------------------------------------------------------------ */
/* Front stream callbacks                                                    */

/*
 * The request did not arrive whole within runtime.timeouts.requestBodyMs
 * (h2's sweep): 408 (RFC 9110 §15.5.9), counted under its operation. TS
 * 29.500 has no application error for it, so the ProblemDetails has no
 * cause. h2 resets the stream (NO_ERROR) once the answer is out.
 */
static void
request_incomplete(struct rt_worker *w, struct nrf_h2_stream *st)
{
	enum nrf_fwd_op op = nrf_fwd_classify(st->msg.method, st->msg.path, nrf_slice_str(""));

	NRF_LOG_RL(INFO, MOD, "worker %u: request not complete within requestBodyMs: 408",
		w->id);
	respond_rendered(st, 408, "Request Timeout", "",
		"request not complete within runtime.timeouts.requestBodyMs");
	rt_count_answer(w, op, NRF_RT_OUT_REQUEST_TIMEOUT);
	rt_alog_once(w, st, op, NRF_RT_OUT_REQUEST_TIMEOUT, 0);
}

/*
 * The worker is over its share of runtime.limits.maxBufferedBytes: the
 * request is refused before anything is kept for it, with the answer of a
 * full queue (NRF_Forwarding_Overload, 503 NF_CONGESTION by default), which
 * a client or a previous hop retries elsewhere (decision 0018).
 */
static void
budget_reject(struct rt_worker *w, struct nrf_h2_stream *st)
{
	struct nrf_h2_mem_stats m;
	enum nrf_fwd_op op = nrf_fwd_classify(st->msg.method, st->msg.path, nrf_slice_str(""));
	uint8_t outcome;

	RT_STAT(w, budget_rejections, 1);
	nrf_h2_ctx_mem_get(w->h2, &m);
	NRF_LOG_RL(WARN, MOD, "worker %u: %llu bytes buffered, over its memory budget "
		"of %llu (runtime.limits.maxBufferedBytes): request refused", w->id,
		(unsigned long long)m.total, (unsigned long long)w->budget);
	outcome = send_error(w, st, w->snap, NRF_MODE_FORWARDING, NRF_COND_OVERLOAD);
	rt_count_answer(w, op, outcome);
	rt_alog_once(w, st, op, outcome, 0);
}

/* A request h2 delivered with an error: the answer for each limit. */
static void
reject(struct rt_worker *w, struct nrf_h2_stream *st, int err)
{
	if (err == NRF_EFULL) {
		budget_reject(w, st);
		return;
	}
	RT_STAT(w, bad_requests, 1);
	rt_count_reject(w);
	NRF_LOG_RL(INFO, MOD, "worker %u: rejected request: %s%s", w->id, nrf_strerror(err),
		(st->flags & NRF_H2_SF_HDR_OVER) ? " (header list)" : "");
	if (st->flags & NRF_H2_SF_HDR_OVER)
		/* RFC 6585 §5; TS 29.500 has no cause of its own for it. */
		respond_rendered(st, 431, "Request Header Fields Too Large", "INVALID_MSG_FORMAT",
			"header list exceeds runtime.limits.maxHeaderBytes");
	else if (err == NRF_ETOOBIG)
		respond_rendered(st, 413, "Payload Too Large", "INVALID_MSG_FORMAT",
			"request body exceeds runtime.limits.maxBodyBytes");
	else
		respond_rendered(st, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"malformed request");
	rt_alog_once(w, st, NRF_OP_OTHER, NRF_RT_OUT_BAD_REQUEST, 0);
}

static void
front_on_request(struct nrf_h2_stream *st, int err)
{
	struct rt_worker *w = nrf_h2_conn_user(st->conn);
	struct rt_xact *x;

	RT_STAT(w, requests, 1);
	rt_rid_begin(w, &st->msg);
	if (err == NRF_ETIMEDOUT) {
		request_incomplete(w, st);
		return;
	}
	if (err != 0) {
		reject(w, st, err); /* over the memory budget too (h2 checked) */
		return;
	}
	/* runtime.limits.perClient: before anything is kept, 508s included */
	if (NRF_UNLIKELY(w->lim_on) && rt_limit_admit(w, st))
		return;
	x = xact_next(w);
	if (x == NULL) {
		if (NRF_UNLIKELY(w->lim_cur != 0))
			rt_limit_undo(w);
		nrf_h2_reset(st, NRF_H2_REFUSED_STREAM);
		return;
	}
	if (answer_at_once(w, st, w->snap, &x->plan)) {
		if (NRF_UNLIKELY(w->lim_cur != 0))
			rt_limit_undo(w); /* no transaction: no stream held */
		return; /* st->user stays NULL: h2 frees the stream by itself */
	}
	xact_take(w, x);
	x->lim = w->lim_cur; /* maxStreams: held until the stream closes */
	x->front = st;
	st->user = x;
	x->t0 = rt_now(w);
	x->snap = w->snap;
	snap_ref(w, x->snap, 1);
	nrf_h2_msg_move(&x->req, &st->msg);
	rt_rid_take(w, x);
	start(x);
	/* Unanswered, a transaction must have its request timer running:
	 * that backstop answers whatever else happens (it is cancelled only
	 * when the front stream closes). */
	if (NRF_UNLIKELY(!x->answered && x->rtimer.idx == 0))
		rt_answer_violation(w, "was left with no answer and no request timer");
}

static void
front_on_sent(struct nrf_h2_stream *st, size_t n)
{
	struct rt_xact *x = st->user;

	if (x->t.state == T_RELAY && x->t.ps != NULL)
		nrf_h2_consume(x->t.ps, n);
}

static void
front_on_close(struct nrf_h2_stream *st, uint32_t code, int err)
{
	struct rt_xact *x = st->user;
	struct rt_worker *w = x->w;

	(void)code;
	(void)err;
	if (!x->answered)
		RT_STAT(w, client_resets, 1);
	rt_count_request(w, x);
	rt_alog_xact(w, x);
	try_abort(&x->t);
	rt_timer_cancel(&w->timers, &x->rtimer);
	nrf_h2_msg_release(w->h2, &x->req);
	if (x->have_local) /* the only way into x->local (local_complete()) */
		nrf_h2_msg_release(w->h2, &x->local);
	snap_ref(w, x->snap, -1);
	if (NRF_UNLIKELY(x->lim != 0))
		rt_limit_done(w, x);
	st->user = NULL;
	xact_put(w, x);
}

static void
front_conn_close(struct nrf_h2_conn *c, int err)
{
	struct rt_worker *w = nrf_h2_conn_user(c);

	(void)err;
	w->n_front--;
	RT_STAT(w, conns_closed, 1);
}

const struct nrf_h2_cbs rt_front_cbs = {
	.on_request = front_on_request,
	.on_sent = front_on_sent,
	.on_close = front_on_close,
	.on_conn_close = front_conn_close,
};
