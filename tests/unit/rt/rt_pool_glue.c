/* SPDX-License-Identifier: BSD-3-Clause */
/* See rt_pool_glue.h. */
#include <stdlib.h>

#include "rt_int.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_pool_glue.h"

#define MAX_TRIES 64

struct rtp_try {
	struct rt_xact *x;
};

struct rtp {
	struct nrf_rt *rt;
	struct rt_worker *w;
	struct rtp_try tries[MAX_TRIES];
	unsigned int n_tries;
};

static const char req_method[] = "GET";
static const char req_path[] = "/nnrf-disc/v1/nf-instances?target-nf-type=UDM";

struct rtp *
rtp_create(const char *doc, size_t len)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_params p = {.workers = 1};
	struct nrf_rt_snap *s;
	struct nrf_cfg *cfg;
	struct rtp *r;
	int err = 0;

	cfg = nrf_cfg_load(doc, len, 1, &probs, &err);
	if (cfg == NULL) {
		NRF_LOG(ERR, "test", "configuration: %s: %s", probs.n > 0 ? probs.v[0].pointer : "",
			probs.n > 0 ? probs.v[0].reason : nrf_strerror(err));
		nrf_cfg_problems_fini(&probs);
		return NULL;
	}
	nrf_cfg_problems_fini(&probs);
	s = nrf_rt_snap_create(cfg, &err);
	if (s == NULL)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		nrf_rt_snap_free(s);
		return NULL;
	}
	r->rt = nrf_rt_create(&p, s, &err);
	if (r->rt == NULL) {
		free(r);
		return NULL;
	}
	r->w = r->rt->w[0];
	return r;
}

void
rtp_free(struct rtp *r)
{
	unsigned int i;

	if (r == NULL)
		return;
	nrf_rt_free(r->rt);
	for (i = 0; i < r->n_tries; i++)
		free(r->tries[i].x);
	free(r);
}

struct nrf_rt *
rtp_rt(struct rtp *r)
{
	return r->rt;
}

void
rtp_turn(struct rtp *r, int timeout_ms)
{
	struct rt_worker *w = r->w;

	w->tp->poll(w->loop, timeout_ms);
	rt_timers_run(&w->timers, nrf_now_ns());
	nrf_h2_ctx_run(w->h2);
}

void
rtp_warm(struct rtp *r)
{
	rt_pool_warm(r->w);
}

struct rtp_try *
rtp_try_new(struct rtp *r, bool force)
{
	struct rtp_try *t;
	struct rt_xact *x;

	if (r->n_tries == MAX_TRIES)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->w = r->w;
	x->snap = r->w->snap;
	x->answered = true;
	x->req.method.p = req_method;
	x->req.method.len = sizeof(req_method) - 1;
	x->req.path.p = req_path;
	x->req.path.len = sizeof(req_path) - 1;
	x->t.x = x;
	x->t.wt.force = force;
	t = &r->tries[r->n_tries++];
	t->x = x;
	return t;
}

static struct rt_pool *
pool_of(struct rtp *r, bool local)
{
	return local ? r->w->view->local : r->w->view->pools[0];
}

int
rtp_submit(struct rtp *r, struct rtp_try *t, bool local)
{
	int rc;

	t->x->t.local = local;
	rc = rt_pool_submit(pool_of(r, local), &t->x->t.wt);
	if (rc == 0 && t->x->t.wt.queued)
		t->x->t.state = T_QUEUED; /* as rt_proxy.c's try_start() */
	return rc;
}

int
rtp_try_state(const struct rtp_try *t)
{
	switch (t->x->t.state) {
	case T_IDLE:
		return RTP_IDLE;
	case T_QUEUED:
		return RTP_QUEUED;
	case T_SENT:
		return RTP_SENT;
	default:
		return RTP_OTHER;
	}
}

void
rtp_try_cancel(struct rtp_try *t)
{
	if (t->x->t.ps != NULL) {
		nrf_h2_cancel(t->x->t.ps);
		t->x->t.ps = NULL;
	}
	t->x->t.state = T_IDLE;
}

void
rtp_pool_get(struct rtp *r, bool local, struct rtp_pool_info *out)
{
	const struct rt_pool *p = pool_of(r, local);

	out->down = p->down;
	out->down_bit = !local && (r->w->down[0] & 1) != 0;
	out->backoff_ms = p->backoff_ms;
	out->n_conns = p->n_conns;
	out->first_alive = !nrf_list_empty(&p->conns) &&
		nrf_container_of(p->conns.next, struct rt_pconn, link)->alive;
	out->qlen = p->qlen;
	out->connect_failures = p->stats->fail[NRF_RT_FAIL_CONNECT];
	out->consec = p->consec;
}
