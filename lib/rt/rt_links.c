/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Links past nrfwd (docs/decisions/0013-links-past-nrfwd.md): an answer of
 * an upstream with rewriteLinks is relayed with its Location and its JSON
 * "href" members pointed at the apiRoot the client used.
 *
 * Called only when the upstream has the option on (rt_links_on()), so the
 * normal path pays one flag test. Everything here uses the worker's
 * scratch: the rewritten Location in w->path (free between building
 * requests), the body in w->links; nghttp2 copies header values and
 * nrf_h2_respond() copies the body, so nothing outlives the call.
 */
#include <string.h>
#include <strings.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

bool
rt_links_body(const struct nrf_h2_msg *m)
{
	struct nrf_slice ce = nrf_h2_msg_get(m, "content-encoding");

	if (ce.len > 0 && !(ce.len == 8 && strncasecmp(ce.p, "identity", 8) == 0))
		return false;
	return nrf_fwd_links_json_type(nrf_h2_msg_get(m, "content-type"));
}

/* Origins of the upstream, and the apiRoot the client used. */
static void
links_of(const struct rt_xact *x, bool local, struct nrf_fwd_links *l)
{
	const struct nrf_cfg *cfg = x->snap->cfg;
	const struct nrf_h2_msg *r = &x->req;

	if (local)
		nrf_fwd_links_local(l, &cfg->rt.local_nrf);
	else
		nrf_fwd_links_peer(l, &cfg->peers[x->plan.cand[x->next - 1]]);
	l->to_scheme = r->scheme.len > 0 ? r->scheme : nrf_slice_str("http");
	l->to_authority = r->authority;
	if (l->to_authority.len == 0)
		l->to_authority = nrf_h2_msg_get(r, "host");
	if (l->to_authority.len == 0)
		l->to_authority = nrf_slice_str(cfg->general.self_name);
}

static const char *
upstream_name(const struct rt_xact *x, bool local)
{
	return local ? "the local NRF" : x->snap->cfg->peers[x->plan.cand[x->next - 1]].name;
}

int
rt_links_respond(struct rt_xact *x, struct nrf_h2_msg *m, bool local, bool end)
{
	struct rt_worker *w = x->w;
	struct nrf_h2_hdr *h = w->hdrs;
	struct nrf_fwd_links l;
	struct nrf_slice loc;
	char clen[24], *cp = clen + sizeof(clen) - 1;
	size_t loc_len = 0, body_len = 0, n = 0, v, i;
	int loc_rc = 0, body_rc = 0, rc;
	bool have_clen = false;

	links_of(x, local, &l);
	loc = nrf_h2_msg_get(m, "location");
	if (loc.len > 0) {
		loc_rc = nrf_fwd_links_uri(&l, loc.p, loc.len, w->path, w->path_cap, &loc_len);
		if (loc_rc < 0)
			NRF_LOG_RL(WARN, MOD, "worker %u: Location from %s not rewritten: %s",
				w->id, upstream_name(x, local), nrf_strerror(loc_rc));
	}
	if (m->body.len > 0 && rt_links_body(m)) {
		if (!end || m->body.len > w->flat_cap) {
			NRF_LOG_RL(WARN, MOD, "worker %u: answer from %s over "
				"runtime.limits.maxBodyBytes: relayed with its links as they are",
				w->id, upstream_name(x, local));
		} else {
			struct nrf_slice b = nrf_h2_body_flat(&m->body, w->flat, w->flat_cap);

			body_rc = nrf_fwd_links_json(&l, b.p, b.len, w->links, w->links_cap,
				&body_len);
			if (body_rc < 0)
				NRF_LOG_RL(WARN, MOD, "worker %u: links in an answer from %s not "
					"rewritten: %s", w->id, upstream_name(x, local),
					nrf_strerror(body_rc));
		}
	}
	if (loc_rc <= 0 && body_rc <= 0)
		return 0;

	/* The answer's fields with the new values; content-length follows the
	 * body (added when the upstream sent none: the length is known). */
	v = body_len;
	*cp = '\0';
	do {
		*--cp = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < m->n_hdrs && n + 2 < w->hdrs_cap; i++) {
		h[n] = m->hdrs[i];
		if (loc_rc > 0 && nrf_slice_eq(h[n].name, "location")) {
			h[n].value.p = w->path;
			h[n].value.len = loc_len;
		} else if (body_rc > 0 && nrf_slice_eq(h[n].name, "content-length")) {
			if (have_clen)
				continue;
			h[n].value = nrf_slice_str(cp);
			have_clen = true;
		}
		n++;
	}
	if (body_rc > 0 && !have_clen) {
		h[n].name = nrf_slice_str("content-length");
		h[n++].value = nrf_slice_str(cp);
	}
	n = rt_via_on_answer(x, h, n); /* relayed: our Via member last */
	if (body_rc > 0) {
		rc = nrf_h2_respond(x->front, m->status, h, n, w->links, body_len, false);
		nrf_h2_body_release(w->h2, &m->body);
		return rc == 0 ? 1 : rc;
	}
	/* Only Location changed: the body goes as it is, and may still come. */
	if (end && m->body.len == 0) {
		rc = nrf_h2_respond(x->front, m->status, h, n, NULL, 0, false);
	} else {
		rc = nrf_h2_respond(x->front, m->status, h, n, NULL, 0, true);
		if (rc == 0 && m->body.len > 0)
			nrf_h2_append(x->front, &m->body);
		if (rc == 0 && end)
			rc = nrf_h2_end(x->front);
	}
	return rc == 0 ? 1 : rc;
}
