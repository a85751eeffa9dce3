/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request recording: a ring of the last STUB_REC_KEEP requests. Slots keep
 * their buffers between uses, so recording copies a few hundred bytes per
 * request and allocates only while the ring warms up. JSON is built only
 * when a test asks for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_common.h"
#include "stub.h"

struct rec {
	uint64_t seq;
	int64_t ts_ms;
	uint32_t conn_id;
	int32_t stream_id;
	int status;
	int complete;
	const char *fault;
	size_t body_len;
	uint8_t sha[32];
	char *buf;		/* copy of the stream's hbuf, then the body prefix */
	size_t bcap;
	struct hdrs hv;
	struct span method;
	struct span path;
	struct span authority;
	struct span scheme;
	struct span body;
};

/* SHA-256 of the empty string: most requests have no body. */
static const uint8_t sha_empty[32] = {
	0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8,
	0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
	0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
};

int
rec_init(struct recorder *r, int enabled)
{
	memset(r, 0, sizeof(*r));
	r->slots = calloc(STUB_REC_KEEP, sizeof(*r->slots));
	if (r->slots == NULL)
		return -1;
	r->next_seq = 1;
	r->enabled = enabled;
	return 0;
}

void
rec_fini(struct recorder *r)
{
	uint32_t i;

	if (r->slots == NULL)
		return;
	for (i = 0; i < STUB_REC_KEEP; i++) {
		free(r->slots[i].buf);
		free(r->slots[i].hv.v);
	}
	free(r->slots);
	r->slots = NULL;
}

void
rec_clear(struct recorder *r)
{
	r->first = 0;
	r->count = 0;
}

/* Grow (or, after an outsized request, shrink) a slot buffer to @p need. */
static int
slot_fit(struct rec *e, size_t need)
{
	size_t cap;
	char *p;

	if (need <= e->bcap && !(e->bcap > 32768 && need < e->bcap / 4))
		return 0;
	cap = 512;
	while (cap < need)
		cap *= 2;
	p = realloc(e->buf, cap);
	if (p == NULL)
		return -1;
	e->buf = p;
	e->bcap = cap;
	return 0;
}

void
rec_add(struct recorder *r, const struct stream *s, uint32_t conn_id,
	int complete, const char *fault, int64_t now_ms)
{
	struct rec *e;
	size_t keep;
	uint32_t idx;

	if (!r->enabled || r->slots == NULL)
		return;
	if (r->count < STUB_REC_KEEP) {
		idx = (r->first + r->count) % STUB_REC_KEEP;
		r->count++;
	} else {
		idx = r->first;
		r->first = (r->first + 1) % STUB_REC_KEEP;
		r->evicted++;
	}
	e = &r->slots[idx];
	keep = NRF_MIN(s->body_len, (size_t)STUB_REC_BODY_MAX);
	if (slot_fit(e, s->hlen + keep + 1) < 0)
		goto drop;
	if (hdrs_reserve(&e->hv, s->hv.n) != 0)
		goto drop;
	e->seq = r->next_seq++;
	e->ts_ms = now_ms;
	e->conn_id = conn_id;
	e->stream_id = s->id;
	e->status = s->status;
	e->complete = complete;
	e->fault = fault;
	if (s->hlen > 0)
		memcpy(e->buf, s->hbuf, s->hlen);
	if (s->hv.n > 0)
		memcpy(e->hv.v, s->hv.v, s->hv.n * sizeof(*e->hv.v));
	e->hv.n = s->hv.n;
	e->method = s->method;
	e->path = s->path;
	e->authority = s->authority;
	e->scheme = s->scheme;
	e->body.off = (uint32_t)s->hlen;
	e->body.len = (uint32_t)keep;
	if (keep > 0)
		memcpy(e->buf + s->hlen, s->body, keep);
	e->buf[s->hlen + keep] = '\0';
	e->body_len = s->body_total;
	if (s->body_total == 0) {
		memcpy(e->sha, sha_empty, sizeof(e->sha));
	} else {
		/* A copy: the stream's digest stays usable (OpenSSL EVP). */
		EVP_MD_CTX *md = EVP_MD_CTX_new();

		if (md == NULL || s->sha == NULL || !EVP_MD_CTX_copy_ex(md, s->sha) ||
			!EVP_DigestFinal_ex(md, e->sha, NULL))
			memset(e->sha, 0, sizeof(e->sha));
		EVP_MD_CTX_free(md);
	}
	return;
drop:
	/* Out of memory: forget the slot rather than keep a torn record. */
	if (idx == (r->first + r->count - 1) % STUB_REC_KEEP)
		r->count--;
}

/* JSON string of arbitrary bytes: as is when UTF-8, else with \xNN text. */
static json_t *
jstr(const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	json_t *j = json_stringn(p, n);
	struct sb b = {0};
	size_t i;

	if (j != NULL)
		return j;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch < 0x80) {
			sb_put(&b, &p[i], 1);
		} else {
			char esc[4] = {'\\', 'x', hex[ch >> 4], hex[ch & 15]};

			sb_put(&b, esc, 4);
		}
	}
	j = json_stringn(b.p != NULL ? b.p : "", b.len);
	sb_fini(&b);
	return j;
}

static json_t *
span_json(const struct rec *e, struct span sp)
{
	if (sp.off == 0 && sp.len == 0)
		return json_null();
	return jstr(e->buf + sp.off, sp.len);
}

static json_t *
b64_json(const char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0, olen = (n + 2) / 3 * 4;
	char *out = malloc(olen + 1);
	json_t *j;

	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)p[i] << 16 |
			(uint32_t)(unsigned char)p[i + 1] << 8 | (unsigned char)p[i + 2];

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)(unsigned char)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)p[i + 1] << 8;
		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	j = json_stringn(out, o);
	free(out);
	return j;
}

static json_t *
rec_json(const struct rec *e)
{
	json_t *o = json_object();
	json_t *hdrs = json_array();
	json_t *via = json_array();
	char hex[65];
	json_t *body;
	uint32_t i;

	if (o == NULL || hdrs == NULL || via == NULL) {
		json_decref(o);
		json_decref(hdrs);
		json_decref(via);
		return NULL;
	}
	for (i = 0; i < e->hv.n; i++) {
		const struct hdr *h = &e->hv.v[i];
		json_t *pair = json_array();

		json_array_append_new(pair, jstr(e->buf + h->name.off, h->name.len));
		json_array_append_new(pair, jstr(e->buf + h->value.off, h->value.len));
		json_array_append_new(hdrs, pair);
		if (h->name.len == 3 && memcmp(e->buf + h->name.off, "via", 3) == 0)
			json_array_append_new(via,
				jstr(e->buf + h->value.off, h->value.len));
	}
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->sha[i]);
	json_object_set_new(o, "seq", json_integer((json_int_t)e->seq));
	json_object_set_new(o, "ts_ms", json_integer(e->ts_ms));
	json_object_set_new(o, "conn", json_integer(e->conn_id));
	json_object_set_new(o, "stream", json_integer(e->stream_id));
	json_object_set_new(o, "method", span_json(e, e->method));
	json_object_set_new(o, "path", span_json(e, e->path));
	json_object_set_new(o, "authority", span_json(e, e->authority));
	json_object_set_new(o, "scheme", span_json(e, e->scheme));
	json_object_set_new(o, "headers", hdrs);
	json_object_set_new(o, "via", via);
	json_object_set_new(o, "body_len", json_integer((json_int_t)e->body_len));
	json_object_set_new(o, "body_sha256", json_string(hex));
	json_object_set_new(o, "body_truncated",
		json_boolean(e->body_len > e->body.len));
	body = json_stringn(e->buf + e->body.off, e->body.len);
	if (body != NULL)
		json_object_set_new(o, "body", body);
	else
		json_object_set_new(o, "body_base64",
			b64_json(e->buf + e->body.off, e->body.len));
	json_object_set_new(o, "complete", json_boolean(e->complete));
	json_object_set_new(o, "status", e->status > 0 ?
		json_integer(e->status) : json_null());
	json_object_set_new(o, "fault", json_string(e->fault));
	return o;
}

json_t *
rec_dump(const struct recorder *r, uint64_t since, uint64_t limit)
{
	json_t *arr = json_array();
	uint32_t i, start = 0, n;

	if (arr == NULL)
		return NULL;
	/* Records are in seq order: skip those at or before @p since. */
	while (start < r->count &&
	       r->slots[(r->first + start) % STUB_REC_KEEP].seq <= since)
		start++;
	n = r->count - start;
	if (limit > 0 && n > limit)
		start += n - (uint32_t)limit;
	for (i = start; i < r->count; i++) {
		json_t *o = rec_json(&r->slots[(r->first + i) % STUB_REC_KEEP]);

		if (o == NULL) {
			json_decref(arr);
			return NULL;
		}
		json_array_append_new(arr, o);
	}
	return arr;
}
