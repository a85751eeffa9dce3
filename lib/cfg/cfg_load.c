/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loading: JSON text -> an immutable snapshot.
 *
 * The walk reads the tables of cfg_table.c (type checks, bounds, defaults,
 * required and unknown fields); what a table cannot say is in the F_CUSTOM
 * loaders below; the final pass resolves error responses and runs the
 * rules across fields (cfg_check.c) on the whole candidate.
 *
 * A load never stops at the first problem: every check records a problem
 * and goes on with a harmless default, so an operator fixes a file in one
 * round. Nothing is published unless the problem count is zero.
 *
 * Every string of a snapshot lives in one arena (nrf_cfg.priv) or is a
 * string literal, so freeing a snapshot is freeing a few chunks, and the
 * jansson tree is dropped as soon as the walk is over.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r; meson passes it too */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cfg_int.h"
#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_err.h"

/* Bound file reads: a configuration is kilobytes; this is a typo guard. */
#define MAX_FILE_BYTES (16u << 20)

/* ------------------------------------------------------------------ */
/* Arena: the snapshot's storage.                                      */

#define CHUNK_BYTES 8192

static void
arena_free(struct chunk *c)
{
	while (c != NULL) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

static void *
arena_alloc(struct load_ctx *c, size_t n)
{
	const size_t a = sizeof(max_align_t);
	struct chunk *ch = c->arena;
	void *p;

	n = (n + a - 1) / a * a;
	if (ch == NULL || ch->cap - ch->used < n) {
		size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;

		ch = malloc(sizeof(*ch) + cap);
		if (ch == NULL) {
			c->oom = true;
			return NULL;
		}
		ch->used = 0;
		ch->cap = cap;
		ch->next = c->arena;
		c->arena = ch;
	}
	p = (char *)ch->data + ch->used;
	ch->used += n;
	memset(p, 0, n);
	return p;
}

/* Never NULL: on failure the load is already marked out of memory. */
static const char *
arena_strndup(struct load_ctx *c, const char *s, size_t n)
{
	char *d = arena_alloc(c, n + 1);

	if (d == NULL)
		return "";
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static const char *
arena_strdup(struct load_ctx *c, const char *s)
{
	return arena_strndup(c, s, strlen(s));
}

static const char *
arena_printf(struct load_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *
arena_printf(struct load_ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *d;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "";
	d = arena_alloc(c, (size_t)n + 1);
	if (d == NULL)
		return "";
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return d;
}

/* ------------------------------------------------------------------ */
/* Problems.                                                           */

/*
 * Pointers and reasons may quote the operator's text: cut them on a UTF-8
 * character boundary so they stay valid when put into a JSON answer.
 */
static void
copy_trunc(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);

	if (n >= dstsz) {
		n = dstsz - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int
problems_add_v(struct nrf_cfg_problems *out, const char *ptr, const char *fmt,
	va_list ap) __attribute__((format(printf, 3, 0)));

static int
problems_add_v(struct nrf_cfg_problems *out, const char *ptr, const char *fmt,
	va_list ap)
{
	struct nrf_cfg_problem *p;
	char reason[1024];

	if (out->n == out->cap) {
		size_t cap = out->cap != 0 ? out->cap * 2 : 8;
		struct nrf_cfg_problem *v = realloc(out->v, cap * sizeof(*v));

		if (v == NULL)
			return NRF_ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	p = &out->v[out->n++];
	vsnprintf(reason, sizeof(reason), fmt, ap);
	copy_trunc(p->pointer, sizeof(p->pointer), ptr);
	copy_trunc(p->reason, sizeof(p->reason), reason);
	return 0;
}

int
nrf_cfg_problem_add(struct nrf_cfg_problems *out, const char *ptr, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (out == NULL)
		return 0;
	va_start(ap, fmt);
	rc = problems_add_v(out, ptr, fmt, ap);
	va_end(ap);
	return rc;
}

void
cfg_problem_at(struct load_ctx *c, const char *ptr, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet > 0)
		return;
	c->n_problems++;
	if (c->out == NULL)
		return;
	va_start(ap, fmt);
	if (problems_add_v(c->out, ptr, fmt, ap) != 0)
		c->oom = true;
	va_end(ap);
}

/* A problem at the value being checked. */
#define problem(c, ...) cfg_problem_at((c), (c)->path, __VA_ARGS__)

void
nrf_cfg_problems_fini(struct nrf_cfg_problems *p)
{
	if (p == NULL)
		return;
	free(p->v);
	p->v = NULL;
	p->n = 0;
	p->cap = 0;
}

/* RFC 6901: '~' is written "~0" and '/' is written "~1" in a segment. */
static size_t
path_push(struct load_ctx *c, const char *key)
{
	const size_t cap = sizeof(c->path) - 1;
	size_t old = c->path_len;
	size_t n = old;

	if (n < cap)
		c->path[n++] = '/';
	for (const char *k = key; *k != '\0' && n < cap; k++) {
		if (*k == '~' || *k == '/') {
			if (n + 2 > cap)
				break;
			c->path[n++] = '~';
			c->path[n++] = *k == '~' ? '0' : '1';
		} else {
			c->path[n++] = *k;
		}
	}
	c->path[n] = '\0';
	c->path_len = n;
	return old;
}

static size_t
path_push_index(struct load_ctx *c, size_t i)
{
	char b[24];

	snprintf(b, sizeof(b), "%zu", i);
	return path_push(c, b);
}

static void
path_pop(struct load_ctx *c, size_t old)
{
	c->path_len = old;
	c->path[old] = '\0';
}

/* ------------------------------------------------------------------ */
/* Generic walk: load.                                                 */

static void load_object(struct load_ctx *c, const struct field *fields,
	const json_t *obj, void *base);

static const struct field *
find_field(const struct field *f, const char *key)
{
	for (; f->name != NULL; f++)
		if (strcmp(f->name, key) == 0)
			return f;
	return NULL;
}

static void
set_default(const struct field *f, void *p)
{
	switch (f->type) {
	case F_STR:
	case F_PATTERN:
		*(const char **)p = f->def_str;
		break;
	case F_STATUS:
	case F_BOOL:
		*(bool *)p = f->def != 0;
		break;
	case F_U16:
		*(uint16_t *)p = (uint16_t)f->def;
		break;
	case F_U32:
		*(uint32_t *)p = (uint32_t)f->def;
		break;
	case F_ENUM:
		*(int *)p = (int)f->def;
		break;
	case F_OBJECT:
	case F_CUSTOM:
		break;
	}
}

static void
load_enum(struct load_ctx *c, const struct field *f, const json_t *v, void *p)
{
	const char *const *names = f->type == F_STATUS ? cfg_status_names : f->names;
	char expected[256];
	size_t n = 0;
	const char *s;

	if (!json_is_string(v)) {
		problem(c, "wrong type: must be a string");
		return;
	}
	s = json_string_value(v);
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(names[i], s) == 0) {
			if (f->type == F_STATUS)
				*(bool *)p = i != 0;
			else
				*(int *)p = i;
			return;
		}
	}
	expected[0] = '\0';
	for (int i = 0; names[i] != NULL && n < sizeof(expected); i++)
		n += (size_t)snprintf(expected + n, sizeof(expected) - n, "%s%s",
			i == 0 ? "" : ", ", names[i]);
	problem(c, "unknown %s \"%s\": expected %s", f->name, s, expected);
}

/*
 * Defaults of a pattern field must compile into its bit set too: walking
 * an absent field with the default text keeps one code path for both.
 */
static void
load_default_pattern(struct load_ctx *c, const struct field *f, void *base)
{
	char why[192];

	if (cfg_compile_status_set(f->def_str,
		    (struct nrf_cfg_status_set *)((char *)base + f->off2),
		    why, sizeof(why)) != 0)
		problem(c, "default pattern: %s", why);
}

static void
load_field(struct load_ctx *c, const struct field *f, const json_t *v, void *base)
{
	void *p = (char *)base + f->off;
	json_int_t iv;
	char why[192];

	if (f->type == F_OBJECT) {
		if (v != NULL && !json_is_object(v)) {
			problem(c, "wrong type: must be an object");
			/* defaults inside, without a "missing" for each of them */
			c->quiet++;
			load_object(c, f->sub, NULL, p);
			c->quiet--;
			return;
		}
		load_object(c, f->sub, v, p);
		return;
	}
	if (f->type == F_CUSTOM) {
		if (v == NULL && f->required)
			problem(c, "missing required field");
		f->load(c, v, p, f->arg);
		return;
	}
	set_default(f, p);
	if (v == NULL) {
		if (f->required)
			problem(c, "missing required field");
		if (f->type == F_PATTERN)
			load_default_pattern(c, f, base);
		return;
	}
	switch (f->type) {
	case F_STR:
		if (!json_is_string(v)) {
			problem(c, "wrong type: must be a string");
			return;
		}
		if (f->check != NULL) {
			const char *r = f->check(json_string_value(v));

			if (r != NULL) {
				problem(c, "%s", r);
				return;
			}
		}
		*(const char **)p = arena_strdup(c, json_string_value(v));
		break;
	case F_PATTERN:
		if (!json_is_string(v)) {
			problem(c, "wrong type: must be a string");
			return;
		}
		if (cfg_compile_status_set(json_string_value(v),
			    (struct nrf_cfg_status_set *)((char *)base + f->off2),
			    why, sizeof(why)) != 0) {
			problem(c, "%s", why);
			return;
		}
		*(const char **)p = arena_strdup(c, json_string_value(v));
		break;
	case F_STATUS:
	case F_ENUM:
		load_enum(c, f, v, p);
		break;
	case F_BOOL:
		if (!json_is_boolean(v)) {
			problem(c, "wrong type: must be true or false");
			return;
		}
		*(bool *)p = json_is_true(v);
		break;
	case F_U16:
	case F_U32:
		if (!json_is_integer(v)) {
			problem(c, "wrong type: must be an integer");
			return;
		}
		iv = json_integer_value(v);
		if (iv < f->min || iv > f->max) {
			problem(c, "out of range: %lld not in %lld..%lld",
				(long long)iv, f->min, f->max);
			return;
		}
		if (f->type == F_U16)
			*(uint16_t *)p = (uint16_t)iv;
		else
			*(uint32_t *)p = (uint32_t)iv;
		break;
	case F_OBJECT:
	case F_CUSTOM:
		break;
	}
}

static void
load_object(struct load_ctx *c, const struct field *fields, const json_t *obj,
	void *base)
{
	if (obj != NULL) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)obj, key, v) {
			if (find_field(fields, key) == NULL) {
				size_t o = path_push(c, key);

				problem(c, "unknown field");
				path_pop(c, o);
			}
		}
	}
	for (const struct field *f = fields; f->name != NULL; f++) {
		const json_t *v = obj != NULL ? json_object_get(obj, f->name) : NULL;
		size_t o = path_push(c, f->name);

		load_field(c, f, v, base);
		path_pop(c, o);
	}
}

/* ------------------------------------------------------------------ */
/* Custom loaders.                                                     */

static bool
expect_array(struct load_ctx *c, const json_t *j)
{
	if (json_is_array(j))
		return true;
	problem(c, "wrong type: must be an array");
	return false;
}

void
cfg_load_aliases(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	struct nrf_cfg_general *g = p;
	size_t n;

	(void)arg;
	g->n_aliases = 0;
	if (j == NULL || !expect_array(c, j))
		return;
	n = json_array_size(j);
	if (n > NRF_CFG_MAX_ALIASES)
		problem(c, "too many aliases: %zu, at most %d", n, NRF_CFG_MAX_ALIASES);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(j, i);
		size_t o = path_push_index(c, i);
		const char *host, *r;
		size_t host_len;
		uint16_t port;

		if (!json_is_string(v)) {
			problem(c, "wrong type: must be a string");
		} else if ((r = cfg_parse_hostport(json_string_value(v), &host, &host_len,
				    &port)) != NULL) {
			problem(c, "%s", r);
		} else if (g->n_aliases < NRF_CFG_MAX_ALIASES) {
			c->alias_index[g->n_aliases] = i;
			g->aliases[g->n_aliases].host = arena_strndup(c, host, host_len);
			g->aliases[g->n_aliases].port = port;
			g->n_aliases++;
		}
		path_pop(c, o);
	}
}

static const char *
hostport_text(struct load_ctx *c, const char *host, uint16_t port)
{
	if (strchr(host, ':') != NULL)
		return arena_printf(c, "[%s]:%u", host, port);
	return arena_printf(c, "%s:%u", host, port);
}

static void
append_peer(struct load_ctx *c, const struct nrf_cfg_peer *pe)
{
	if (c->n_peers == c->cap_peers) {
		size_t cap = c->cap_peers != 0 ? c->cap_peers * 2 : 16;
		struct nrf_cfg_peer *v = realloc(c->peers, cap * sizeof(*v));

		if (v == NULL) {
			c->oom = true;
			return;
		}
		c->peers = v;
		c->cap_peers = cap;
	}
	c->peers[c->n_peers++] = *pe;
}

static void
load_peer(struct load_ctx *c, const json_t *j, enum nrf_cfg_mode mode, size_t set)
{
	struct nrf_cfg_peer pe;
	size_t len;

	if (!json_is_object(j)) {
		problem(c, "wrong type: must be an object");
		return;
	}
	if (c->n_peers == NRF_CFG_MAX_PEERS && !c->peer_limit_reported) {
		problem(c, "too many peers: more than %d in both modes together",
			NRF_CFG_MAX_PEERS);
		c->peer_limit_reported = true;
	}
	memset(&pe, 0, sizeof(pe));
	load_object(c, cfg_peer_fields, j, &pe);
	if (pe.port == 0)
		pe.port = pe.scheme == NRF_SCHEME_HTTPS ? 443 : 80;
	len = strlen(pe.api_prefix);
	if (len > 0 && pe.api_prefix[len - 1] == '/')
		pe.api_prefix = arena_strndup(c, pe.api_prefix, len - 1);
	if (*pe.fqdn == '\0' && *pe.ipv4 == '\0' && *pe.ipv6 == '\0')
		problem(c, "empty host: a peer needs a non-empty fqdn, ipv4Address or ipv6Address");
	pe.index = (uint16_t)c->n_peers;
	pe.mode = mode;
	pe.set = mode == NRF_MODE_GROWTH ? (uint16_t)set : NRF_CFG_NO_SET;
	pe.pointer = arena_strdup(c, c->path);
	if (*pe.fqdn != '\0')
		pe.ids[pe.n_ids++] = (struct nrf_cfg_hostport){pe.fqdn, pe.port};
	if (*pe.ipv4 != '\0')
		pe.ids[pe.n_ids++] = (struct nrf_cfg_hostport){pe.ipv4, pe.port};
	if (*pe.ipv6 != '\0')
		pe.ids[pe.n_ids++] = (struct nrf_cfg_hostport){pe.ipv6, pe.port};
	pe.name = pe.n_ids > 0 ? hostport_text(c, pe.ids[0].host, pe.port) : "";
	append_peer(c, &pe);
}

static void
load_peer_list(struct load_ctx *c, const json_t *j, enum nrf_cfg_mode mode, size_t set)
{
	for (size_t i = 0; i < json_array_size(j); i++) {
		size_t o = path_push_index(c, i);

		load_peer(c, json_array_get(j, i), mode, set);
		path_pop(c, o);
	}
}

void
cfg_load_fwd_peers(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	(void)p;
	(void)arg;
	if (j == NULL || !expect_array(c, j))
		return;
	load_peer_list(c, j, NRF_MODE_FORWARDING, 0);
}

void
cfg_load_set_hosts(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	(void)p;
	(void)arg;
	if (j == NULL || !expect_array(c, j))
		return;
	if (json_array_size(j) == 0)
		problem(c, "empty NRF set: list at least one host");
	load_peer_list(c, j, NRF_MODE_GROWTH, c->cur_set);
}

void
cfg_load_sets(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	size_t n;

	(void)p;
	(void)arg;
	if (j == NULL || !expect_array(c, j))
		return;
	n = json_array_size(j);
	if (n > NRF_CFG_MAX_SETS)
		problem(c, "too many NRF sets: %zu, at most %d", n, NRF_CFG_MAX_SETS);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(j, i);
		size_t o = path_push_index(c, i);
		struct nrf_cfg_set s;

		if (!json_is_object(v)) {
			problem(c, "wrong type: must be an object");
			path_pop(c, o);
			continue;
		}
		memset(&s, 0, sizeof(s));
		c->cur_set = c->n_sets;
		s.first_peer = (uint16_t)c->n_peers;
		load_object(c, cfg_set_fields, v, &s);
		s.n_peers = (uint16_t)(c->n_peers - s.first_peer);
		if (c->n_sets == c->cap_sets) {
			size_t cap = c->cap_sets != 0 ? c->cap_sets * 2 : 8;
			struct nrf_cfg_set *sv = realloc(c->sets, cap * sizeof(*sv));

			if (sv == NULL) {
				c->oom = true;
				path_pop(c, o);
				return;
			}
			c->sets = sv;
			c->cap_sets = cap;
		}
		c->sets[c->n_sets++] = s;
		path_pop(c, o);
	}
}

void
cfg_load_errors(struct load_ctx *c, const json_t *j, void *p, int mode)
{
	bool seen[NRF_COND_COUNT] = {false};

	(void)p;
	if (j == NULL || !expect_array(c, j))
		return;
	for (size_t i = 0; i < json_array_size(j); i++) {
		const json_t *v = json_array_get(j, i);
		size_t o = path_push_index(c, i);
		struct err_entry e;

		if (!json_is_object(v)) {
			problem(c, "wrong type: must be an object");
			path_pop(c, o);
			continue;
		}
		memset(&e, 0, sizeof(e));
		load_object(c, cfg_error_fields, v, &e);
		if (e.cond >= 0 && e.cond < NRF_COND_COUNT) {
			if (seen[e.cond]) {
				size_t o2 = path_push(c, "errorCondition");

				problem(c, "duplicate errorCondition %s in this list",
					cfg_cond_names[e.cond]);
				path_pop(c, o2);
			} else {
				seen[e.cond] = true;
				c->errs[mode][e.cond] = e;
				c->err_set[mode][e.cond] = true;
			}
		}
		path_pop(c, o);
	}
}

static bool
same_address(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (inet_pton(AF_INET6, a, x) == 1 && inet_pton(AF_INET6, b, y) == 1)
		return memcmp(x, y, sizeof(x)) == 0;
	return strcmp(a, b) == 0;
}

void
cfg_load_listen(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	struct nrf_cfg_runtime *rt = p;
	size_t n;

	(void)arg;
	rt->n_listen = 0;
	if (j == NULL) {
		/* the SBI port is where peers and consumers already look */
		rt->listen[0].address = "0.0.0.0";
		rt->listen[0].port = c->cfg->general.port;
		rt->listen[0].tls = false;
		rt->n_listen = 1;
		return;
	}
	if (!expect_array(c, j))
		return;
	n = json_array_size(j);
	if (n == 0)
		problem(c, "empty listen list: at least one entry is needed");
	if (n > NRF_CFG_MAX_LISTEN)
		problem(c, "too many listen entries: %zu, at most %d", n, NRF_CFG_MAX_LISTEN);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(j, i);
		size_t o = path_push_index(c, i);
		struct nrf_cfg_listen l;

		if (!json_is_object(v)) {
			problem(c, "wrong type: must be an object");
			path_pop(c, o);
			continue;
		}
		load_object(c, cfg_listen_fields, v, &l);
		for (size_t k = 0; k < rt->n_listen; k++) {
			if (rt->listen[k].port == l.port &&
				same_address(rt->listen[k].address, l.address)) {
				problem(c, "duplicate listen address %s port %u",
					l.address, l.port);
				break;
			}
		}
		if (rt->n_listen < NRF_CFG_MAX_LISTEN)
			rt->listen[rt->n_listen++] = l;
		path_pop(c, o);
	}
}

/* null is accepted as "no local NRF" so that an emitted document reloads. */
void
cfg_load_local_nrf(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	struct nrf_cfg_endpoint *ep = p;

	(void)arg;
	memset(ep, 0, sizeof(*ep));
	ep->address = "";
	if (j == NULL || json_is_null(j))
		return;
	if (!json_is_object(j)) {
		problem(c, "wrong type: must be an object or null");
		return;
	}
	load_object(c, cfg_endpoint_fields, j, ep);
	ep->present = true;
	if (ep->port == 0)
		ep->port = ep->scheme == NRF_SCHEME_HTTPS ? 443 : 80;
}

/* runtime.dpdk.portId: absent or null = the only port (-1), or 0..1023.
 * null is what emit writes, so an emitted document reloads. */
#define DPDK_MAX_PORT_ID 1023

void
cfg_load_port_id(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	int32_t *id = p;
	json_int_t v;

	(void)arg;
	*id = -1;
	if (j == NULL || json_is_null(j))
		return;
	if (!json_is_integer(j)) {
		problem(c, "wrong type: must be an integer or null (the only port)");
		return;
	}
	v = json_integer_value(j);
	if (v < 0 || v > DPDK_MAX_PORT_ID) {
		problem(c, "out of range: %lld not in 0..%d", (long long)v, DPDK_MAX_PORT_ID);
		return;
	}
	*id = (int32_t)v;
}

/* ------------------------------------------------------------------ */
/* Final pass: resolved defaults, then the rules across fields.        */

static const struct {
	uint16_t status;
	const char *cause;
	const char *detail;
	const char *retry_after;
} cond_defaults[NRF_COND_COUNT] = {
	[NRF_COND_LOOP_DETECTION] = {508, "LOOP_DETECTED",
		"The request already passed through this NRF."},
	[NRF_COND_LOOP_PREVENTION] = {508, "LOOP_PREVENTED",
		"Every candidate NRF has already processed the request."},
	[NRF_COND_HOP_LIMIT] = {508, "MAX_HOPS_REACHED",
		"The request passed through too many NRFs."},
	[NRF_COND_NOT_REACHABLE] = {504, "TARGET_NF_NOT_REACHABLE",
		"No NRF could be reached to serve the request."},
	/* Retry-After 1: a shed request waited past queueTargetMs (a tenth
	 * of a second by default); a second is a fair pause for a client. */
	[NRF_COND_OVERLOAD] = {503, "NF_CONGESTION",
		"The NRF is too busy to forward the request.", "1"},
	/* Retry-After 1: health probes bring an upstream back within about a
	 * second of its return (runtime.health). */
	[NRF_COND_LOCAL_UNAVAILABLE] = {503, "NF_SERVICE_FAILURE",
		"The local NRF could not be reached; no other NRF had the answer.", "1"},
	/* TS 29.500 Table 5.2.7.2-1: 429 is NF_CONGESTION_RISK. Retry-After
	 * comes from the client's bucket when no retryAfter is configured. */
	[NRF_COND_CLIENT_LIMIT] = {429, "NF_CONGESTION_RISK",
		"The client is over its request limit at this NRF."},
};

static const struct {
	uint16_t code;
	const char *title;
} status_titles[] = {
	{100, "Continue"}, {101, "Switching Protocols"}, {200, "OK"},
	{201, "Created"}, {202, "Accepted"},
	{203, "Non-Authoritative Information"}, {204, "No Content"},
	{205, "Reset Content"}, {206, "Partial Content"},
	{300, "Multiple Choices"}, {301, "Moved Permanently"}, {302, "Found"},
	{303, "See Other"}, {304, "Not Modified"}, {307, "Temporary Redirect"},
	{308, "Permanent Redirect"}, {400, "Bad Request"}, {401, "Unauthorized"},
	{402, "Payment Required"}, {403, "Forbidden"}, {404, "Not Found"},
	{405, "Method Not Allowed"}, {406, "Not Acceptable"},
	{407, "Proxy Authentication Required"}, {408, "Request Timeout"},
	{409, "Conflict"}, {410, "Gone"}, {411, "Length Required"},
	{412, "Precondition Failed"}, {413, "Content Too Large"},
	{414, "URI Too Long"}, {415, "Unsupported Media Type"},
	{416, "Range Not Satisfiable"}, {417, "Expectation Failed"},
	{421, "Misdirected Request"}, {422, "Unprocessable Content"},
	{425, "Too Early"}, {426, "Upgrade Required"},
	{428, "Precondition Required"}, {429, "Too Many Requests"},
	{431, "Request Header Fields Too Large"},
	{500, "Internal Server Error"}, {501, "Not Implemented"},
	{502, "Bad Gateway"}, {503, "Service Unavailable"},
	{504, "Gateway Timeout"}, {505, "HTTP Version Not Supported"},
	{507, "Insufficient Storage"}, {508, "Loop Detected"},
	{511, "Network Authentication Required"},
};

static const char *
status_title(uint16_t code)
{
	static const char *const classes[] = {"Informational", "Success",
		"Redirection", "Client Error", "Server Error"};

	for (size_t i = 0; i < NRF_ARRAY_SIZE(status_titles); i++)
		if (status_titles[i].code == code)
			return status_titles[i].title;
	if (code >= 100 && code <= 599)
		return classes[code / 100 - 1];
	return "Error";
}

static void
resolve_errors(struct load_ctx *c)
{
	for (int m = 0; m < NRF_MODE_COUNT; m++) {
		for (int k = 0; k < NRF_COND_COUNT; k++) {
			struct nrf_cfg_error_response *r = &c->cfg->errors[m][k];
			const struct err_entry *e = &c->errs[m][k];

			if (!c->err_set[m][k]) {
				r->configured = false;
				r->status = cond_defaults[k].status;
				r->cause = cond_defaults[k].cause;
				r->title = status_title(r->status);
				r->detail = cond_defaults[k].detail;
				r->retry_after = cond_defaults[k].retry_after != NULL
					? cond_defaults[k].retry_after : "";
				r->redirect_url = "";
				continue;
			}
			r->configured = true;
			r->status = e->code;
			r->cause = e->cause != NULL ? e->cause : cond_defaults[k].cause;
			r->title = e->title != NULL ? e->title : status_title(e->code);
			r->detail = e->detail != NULL ? e->detail : cond_defaults[k].detail;
			r->retry_after = e->retry_after != NULL ? e->retry_after : "";
			r->redirect_url = e->redirect_url != NULL ? e->redirect_url : "";
		}
	}
}


static void
finish(struct load_ctx *c)
{
	struct nrf_cfg *cfg = c->cfg;
	struct nrf_cfg_general *g = &cfg->general;
	size_t n_fwd = 0;

	g->self_name = hostport_text(c, g->host, g->port);
	resolve_errors(c);
	cfg_check_document(c);
	if (c->n_problems != 0 || c->oom)
		return;

	/* only a valid candidate reaches here: counts fit the limits */
	if (c->n_peers > 0) {
		struct nrf_cfg_peer *p = arena_alloc(c, c->n_peers * sizeof(*p));

		if (p == NULL)
			return;
		memcpy(p, c->peers, c->n_peers * sizeof(*p));
		cfg->peers = p;
	}
	if (c->n_sets > 0) {
		struct nrf_cfg_set *s = arena_alloc(c, c->n_sets * sizeof(*s));

		if (s == NULL)
			return;
		memcpy(s, c->sets, c->n_sets * sizeof(*s));
		cfg->sets = s;
	}
	cfg->n_peers = (uint16_t)c->n_peers;
	cfg->n_sets = (uint16_t)c->n_sets;
	while (n_fwd < c->n_peers && c->peers[n_fwd].mode == NRF_MODE_FORWARDING)
		n_fwd++;
	cfg->fwd.first_peer = 0;
	cfg->fwd.n_peers = (uint16_t)n_fwd;
	cfg->growth.first_peer = (uint16_t)n_fwd;
	cfg->growth.n_peers = (uint16_t)(c->n_peers - n_fwd);
}

/* ------------------------------------------------------------------ */
/* Load entry points.                                                  */

static void
set_err(int *err, int v)
{
	if (err != NULL)
		*err = v;
}

static struct nrf_cfg *
load_root(const json_t *root, uint64_t generation,
	struct nrf_cfg_problems *problems, int *err)
{
	struct load_ctx c;
	struct nrf_cfg *cfg = calloc(1, sizeof(*cfg));

	if (cfg == NULL) {
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	memset(&c, 0, sizeof(c));
	c.cfg = cfg;
	c.out = problems;
	cfg->generation = generation;
	if (!json_is_object(root)) {
		cfg_problem_at(&c, "", "wrong type: the document must be a JSON object");
		c.quiet++;
		load_object(&c, cfg_root_fields, NULL, cfg);
		c.quiet--;
	} else {
		load_object(&c, cfg_root_fields, root, cfg);
	}
	finish(&c);
	free(c.peers);
	free(c.sets);
	if (c.oom || c.n_problems != 0) {
		arena_free(c.arena);
		free(cfg);
		set_err(err, c.oom ? NRF_ENOMEM : NRF_ECONFIG);
		return NULL;
	}
	cfg->priv = c.arena;
	set_err(err, 0);
	return cfg;
}

struct nrf_cfg *
nrf_cfg_load(const char *text, size_t len, uint64_t generation,
	struct nrf_cfg_problems *problems, int *err)
{
	json_error_t jerr;
	const char *nul;
	json_t *root;
	struct nrf_cfg *cfg;

	if (text == NULL && len > 0) {
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	if (text == NULL)
		text = "";
	/* jansson would stop at a NUL in some places; say where it is */
	nul = memchr(text, '\0', len);
	if (nul != NULL) {
		size_t line = 1, col = 1;

		for (const char *p = text; p < nul; p++) {
			col++;
			if (*p == '\n') {
				line++;
				col = 1;
			}
		}
		if (nrf_cfg_problem_add(problems, "", "line %zu, column %zu: NUL byte in text",
			    line, col) != 0) {
			set_err(err, NRF_ENOMEM);
			return NULL;
		}
		set_err(err, NRF_EPARSE);
		return NULL;
	}
	/* jansson does not always set the error code byte */
	memset(&jerr, 0, sizeof(jerr));
	root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		/* jansson leaves the text empty when its first allocation fails */
		if (json_error_code(&jerr) == json_error_out_of_memory ||
			jerr.text[0] == '\0') {
			set_err(err, NRF_ENOMEM);
			return NULL;
		}
		if (nrf_cfg_problem_add(problems, "", "line %d, column %d: %s", jerr.line,
			    jerr.column, jerr.text) != 0) {
			set_err(err, NRF_ENOMEM);
			return NULL;
		}
		set_err(err, NRF_EPARSE);
		return NULL;
	}
	cfg = load_root(root, generation, problems, err);
	json_decref(root);
	return cfg;
}

struct nrf_cfg *
nrf_cfg_load_file(const char *path, uint64_t generation,
	struct nrf_cfg_problems *problems, int *err)
{
	char ebuf[128];
	const char *why = NULL;
	struct nrf_cfg *cfg;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	if (path == NULL) {
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	f = fopen(path, "rb");
	if (f == NULL) {
		why = strerror_r(errno, ebuf, sizeof(ebuf));
		goto io_error;
	}
	for (;;) {
		size_t got;

		if (cap - len < 4096) {
			char *nb;

			cap = cap != 0 ? cap * 2 : 16384;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				fclose(f);
				free(buf);
				set_err(err, NRF_ENOMEM);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len > MAX_FILE_BYTES) {
			why = "larger than 16 MiB";
			break;
		}
		if (got == 0) {
			if (ferror(f))
				why = strerror_r(errno, ebuf, sizeof(ebuf));
			break;
		}
	}
	fclose(f);
	if (why != NULL) {
		free(buf);
		goto io_error;
	}
	cfg = nrf_cfg_load(buf, len, generation, problems, err);
	free(buf);
	return cfg;

io_error:
	if (nrf_cfg_problem_add(problems, "", "cannot read %s: %s", path, why) != 0) {
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	set_err(err, NRF_EIO);
	return NULL;
}

void
nrf_cfg_free(struct nrf_cfg *cfg)
{
	if (cfg == NULL)
		return;
	arena_free(cfg->priv);
	free(cfg);
}
