/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NRF side of nrfstub: profile store, the Nnrf_NFDiscovery,
 * Nnrf_NFManagement and Nnrf_AccessToken operations the forwarder cares
 * about, and the /_stub/ control API.
 *
 * Hot answers (discovery by NF type, profile retrieval) are serialised once
 * and shared as blobs; a profile change bumps the store generation, which
 * invalidates the discovery cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nrf_common.h"
#include "nrf_log.h"
#include "stub.h"

struct profile {
	char *id;
	char *type;
	int discoverable;	/* nfStatus == REGISTERED */
	json_t *json;
	struct blob *body;	/* compact serialisation of json */
};

#define DISC_CACHE_N 16

struct disc_cache {
	char type[48];
	uint64_t gen;
	struct blob *body;
};

#define P_DISC "/nnrf-disc/v1/nf-instances"
#define P_NFI "/nnrf-nfm/v1/nf-instances"
#define P_SUBS "/nnrf-nfm/v1/subscriptions"
#define P_TOKEN "/oauth2/token"
#define CT_JSON "application/json"
#define CT_PROBLEM "application/problem+json"

/* ---- profile store ---------------------------------------------------- */

static void
profile_clear(struct profile *p)
{
	free(p->id);
	free(p->type);
	json_decref(p->json);
	blob_put(p->body);
	memset(p, 0, sizeof(*p));
}

static struct profile *
profile_find(struct store *st, const char *id)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (strcmp(st->v[i].id, id) == 0)
			return &st->v[i];
	return NULL;
}

/* Check the members nrfstub relies on; NULL when fine, else the problem. */
static const char *
profile_check(json_t *j)
{
	if (!json_is_object(j))
		return "NFProfile is not a JSON object";
	if (!json_is_string(json_object_get(j, "nfInstanceId")))
		return "nfInstanceId missing or not a string";
	if (!json_is_string(json_object_get(j, "nfType")))
		return "nfType missing or not a string";
	if (!json_is_string(json_object_get(j, "nfStatus")))
		return "nfStatus missing or not a string";
	return NULL;
}

/*
 * Insert or replace profile @p j (reference taken, already checked).
 * Returns the profile, or NULL on ENOMEM; @p created tells which.
 */
static struct profile *
profile_put(struct store *st, json_t *j, int *created)
{
	const char *id = json_string_value(json_object_get(j, "nfInstanceId"));
	struct profile np = {0}, *p;
	char *s;

	np.id = strdup(id);
	np.type = strdup(json_string_value(json_object_get(j, "nfType")));
	np.discoverable = strcmp(json_string_value(json_object_get(j, "nfStatus")),
		"REGISTERED") == 0;
	np.json = j;
	s = json_dumps(j, JSON_COMPACT);
	np.body = s != NULL ? blob_take(s, strlen(s)) : NULL;
	if (np.id == NULL || np.type == NULL || np.body == NULL) {
		profile_clear(&np);
		return NULL;
	}
	p = profile_find(st, id);
	*created = p == NULL;
	if (p == NULL) {
		if (st->n == st->cap) {
			size_t cap = st->cap != 0 ? st->cap * 2 : 16;
			struct profile *v = realloc(st->v, cap * sizeof(*v));

			if (v == NULL) {
				profile_clear(&np);
				return NULL;
			}
			st->v = v;
			st->cap = cap;
		}
		p = &st->v[st->n++];
	} else {
		profile_clear(p);
	}
	*p = np;
	st->gen++;
	return p;
}

static void
profile_del(struct store *st, struct profile *p)
{
	size_t i = (size_t)(p - st->v);

	profile_clear(p);
	memmove(&st->v[i], &st->v[i + 1], (st->n - i - 1) * sizeof(*p));
	st->n--;
	st->gen++;
}

int
store_load(struct store *st, const char *file, char *err, size_t errsz)
{
	json_error_t jerr;
	json_t *root, *arr, *tok, *j;
	size_t i;
	int created;

	memset(st, 0, sizeof(*st));
	st->subs = json_object();
	st->cache = calloc(DISC_CACHE_N, sizeof(*st->cache));
	if (st->subs == NULL || st->cache == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		if (jerr.line > 0)
			snprintf(err, errsz, "%s:%d:%d: %s", file, jerr.line,
				jerr.column, jerr.text);
		else
			snprintf(err, errsz, "%s: %s", file, jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		snprintf(err, errsz, "%s: top level is not a JSON object", file);
		goto fail;
	}
	arr = json_object_get(root, "nfProfiles");
	if (arr != NULL && !json_is_array(arr)) {
		snprintf(err, errsz, "%s: nfProfiles is not an array", file);
		goto fail;
	}
	json_array_foreach(arr, i, j) {
		const char *why = profile_check(j);

		if (why != NULL) {
			snprintf(err, errsz, "%s: nfProfiles[%zu]: %s", file, i, why);
			goto fail;
		}
		if (profile_find(st, json_string_value(json_object_get(j,
				"nfInstanceId"))) != NULL) {
			snprintf(err, errsz, "%s: nfProfiles[%zu]: duplicate "
				"nfInstanceId", file, i);
			goto fail;
		}
		if (profile_put(st, json_deep_copy(j), &created) == NULL) {
			snprintf(err, errsz, "out of memory");
			goto fail;
		}
	}
	tok = json_object_get(root, "accessToken");
	if (tok != NULL && !json_is_object(tok)) {
		snprintf(err, errsz, "%s: accessToken is not an object", file);
		goto fail;
	}
	st->token = json_incref(tok);
	json_decref(root);
	return 0;
fail:
	json_decref(root);
	return -1;
}

void
store_fini(struct store *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		profile_clear(&st->v[i]);
	free(st->v);
	if (st->cache != NULL)
		for (i = 0; i < DISC_CACHE_N; i++)
			blob_put(st->cache[i].body);
	free(st->cache);
	json_decref(st->subs);
	json_decref(st->token);
	memset(st, 0, sizeof(*st));
}

/* ---- helpers ---------------------------------------------------------- */

void
stream_problem(struct stream *s, int status, const char *title,
	const char *cause, const char *detail)
{
	struct sb b = {0};

	sb_puts(&b, "{\"title\":");
	sb_json_str(&b, title, strlen(title));
	sb_printf(&b, ",\"status\":%d", status);
	if (detail != NULL) {
		sb_puts(&b, ",\"detail\":");
		sb_json_str(&b, detail, strlen(detail));
	}
	if (cause != NULL) {
		sb_puts(&b, ",\"cause\":");
		sb_json_str(&b, cause, strlen(cause));
	}
	sb_puts(&b, "}");
	stream_respond(s, status, CT_PROBLEM, sb_blob(&b));
}

static void
respond_json(struct stream *s, int status, json_t *j)
{
	char *txt = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (txt == NULL) {
		stream_problem(s, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory");
		return;
	}
	stream_respond(s, status, CT_JSON, blob_take(txt, strlen(txt)));
}

static void
method_not_allowed(struct stream *s, const char *allow)
{
	stream_problem(s, 405, "Method Not Allowed", NULL, NULL);
	s->allow = allow;
}

/* Host (and port) the client addressed, for Location and _links; the one
 * --link-host names instead, as an NRF configured with its own apiRoot. */
static const char *
req_host(const struct stub *st, const struct stream *s)
{
	if (st->link_host != NULL)
		return st->link_host;
	if (s->authority.len > 0)
		return stream_str(s, s->authority);
	if (s->host.len > 0)
		return stream_str(s, s->host);
	return st->listen_str;
}

static void
set_location(const struct stub *st, struct stream *s, const char *base,
	const char *id)
{
	size_t n = strlen(req_host(st, s)) + strlen(base) + strlen(id) + 16;

	free(s->location);
	s->location = malloc(n);
	if (s->location != NULL)
		snprintf(s->location, n, "http://%s%s/%s", req_host(st, s), base, id);
}

/*
 * Find @p key in a query string (or form body) and URL-decode its value
 * into @p out. Returns 1 when found, 0 when absent, -1 when too long.
 */
static int
query_get(const char *q, size_t qlen, const char *key, char *out, size_t outsz)
{
	size_t klen = strlen(key), i = 0;

	while (i < qlen) {
		const char *amp = memchr(q + i, '&', qlen - i);
		size_t end = amp != NULL ? (size_t)(amp - q) : qlen;
		const char *eq = memchr(q + i, '=', end - i);
		size_t nend = eq != NULL ? (size_t)(eq - q) : end;

		if (nend - i == klen && memcmp(q + i, key, klen) == 0) {
			size_t vs = eq != NULL ? nend + 1 : end;

			return url_decode(q + vs, end - vs, out, outsz) < 0 ? -1 : 1;
		}
		i = end + 1;
	}
	return 0;
}

/* True when @p name is one of the comma-separated names in @p list. */
static int
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p != '\0') {
		const char *c = strchr(p, ',');
		size_t l = c != NULL ? (size_t)(c - p) : strlen(p);

		if (l == n && memcmp(p, name, n) == 0)
			return 1;
		if (c == NULL)
			break;
		p = c + 1;
	}
	return 0;
}

static int
has_service(const struct profile *p, const char *list)
{
	json_t *svcs = json_object_get(p->json, "nfServices"), *sv;
	size_t i;

	json_array_foreach(svcs, i, sv) {
		const char *name = json_string_value(json_object_get(sv,
			"serviceName"));

		if (name != NULL && in_list(list, name))
			return 1;
	}
	return 0;
}

/*
 * RFC 7396 merge patch of @p patch into object @p target.
 */
static void
merge_patch(json_t *target, json_t *patch)
{
	const char *key;
	json_t *v;

	json_object_foreach(patch, key, v) {
		json_t *cur = json_object_get(target, key);

		if (json_is_null(v)) {
			json_object_del(target, key);
		} else if (json_is_object(v) && json_is_object(cur)) {
			merge_patch(cur, v);
		} else if (json_is_object(v)) {
			json_t *o = json_object();

			merge_patch(o, v);
			json_object_set_new(target, key, o);
		} else {
			json_object_set(target, key, v);
		}
	}
}

/* Resolve one JSON Pointer token (~0, ~1 unescaped) into @p out. */
static int
ptr_token(const char **pp, char *out, size_t outsz)
{
	const char *p = *pp;
	size_t o = 0;

	while (*p != '\0' && *p != '/') {
		char ch = *p++;

		if (ch == '~' && (*p == '0' || *p == '1'))
			ch = *p++ == '0' ? '~' : '/';
		if (o + 1 >= outsz)
			return -1;
		out[o++] = ch;
	}
	out[o] = '\0';
	*pp = p;
	return 0;
}

/*
 * RFC 6902 JSON Patch, the add / replace / remove operations NF heartbeats
 * and subscription updates use. Returns 0, or -1 when an operation fails
 * (the document may then be partly patched: callers work on a copy).
 */
static int
json_patch(json_t *doc, json_t *ops)
{
	json_t *op;
	size_t i;

	json_array_foreach(ops, i, op) {
		const char *kind = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		json_t *val = json_object_get(op, "value");
		json_t *cur = doc;
		char tok[256];

		if (kind == NULL || path == NULL || path[0] != '/')
			return -1;
		path++;
		for (;;) {
			if (ptr_token(&path, tok, sizeof(tok)) < 0)
				return -1;
			if (*path == '\0')
				break;
			path++;
			cur = json_is_object(cur) ? json_object_get(cur, tok) :
				json_is_array(cur) ? json_array_get(cur,
					(size_t)strtoul(tok, NULL, 10)) : NULL;
			if (cur == NULL)
				return -1;
		}
		if (strcmp(kind, "remove") == 0) {
			if (json_is_object(cur)) {
				if (json_object_del(cur, tok) < 0)
					return -1;
			} else if (!json_is_array(cur) || json_array_remove(cur,
					(size_t)strtoul(tok, NULL, 10)) < 0) {
				return -1;
			}
		} else if (strcmp(kind, "add") == 0 || strcmp(kind, "replace") == 0) {
			if (val == NULL)
				return -1;
			if (json_is_object(cur)) {
				if (kind[0] == 'r' && json_object_get(cur, tok) == NULL)
					return -1;
				json_object_set(cur, tok, val);
			} else if (json_is_array(cur)) {
				size_t idx = (size_t)strtoul(tok, NULL, 10);

				if (kind[0] == 'r') {
					if (json_array_set(cur, idx, val) < 0)
						return -1;
				} else if (strcmp(tok, "-") == 0) {
					json_array_append(cur, val);
				} else if (json_array_insert(cur, idx, val) < 0) {
					return -1;
				}
			} else {
				return -1;
			}
		} else {
			/* test, move, copy: accepted and ignored */
		}
	}
	return 0;
}

/* Apply a PATCH body (JSON Patch array or merge-patch object) to a copy. */
static json_t *
patched_copy(const json_t *orig, const struct stream *s)
{
	json_t *doc, *patch;

	patch = json_loadb(s->body, s->body_len, 0, NULL);
	if (patch == NULL || !(json_is_array(patch) || json_is_object(patch))) {
		json_decref(patch);
		return NULL;
	}
	doc = json_deep_copy(orig);
	if (doc == NULL) {
		json_decref(patch);
		return NULL;
	}
	if (json_is_object(patch)) {
		merge_patch(doc, patch);
	} else if (json_patch(doc, patch) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	json_decref(patch);
	return doc;
}

/* ---- NRF operations ---------------------------------------------------- */

static void
op_discover(struct stub *st, struct stream *s, const char *q, size_t ql)
{
	char type[48], inst[128], svcs[512], lim[16];
	int ri, rs, rl, rt;
	struct disc_cache *dc = NULL;
	struct store *sto = &st->store;
	unsigned long limit = 0, hits = 0;
	struct sb b = {0};
	size_t i;

	rt = query_get(q, ql, "target-nf-type", type, sizeof(type));
	if (rt <= 0) {
		stream_problem(s, 400, "Bad Request", rt == 0 ?
			"MANDATORY_QUERY_PARAM_MISSING" : "INVALID_QUERY_PARAM",
			rt == 0 ? "query parameter target-nf-type is required" :
			"target-nf-type is too long");
		return;
	}
	ri = query_get(q, ql, "target-nf-instance-id", inst, sizeof(inst));
	rs = query_get(q, ql, "service-names", svcs, sizeof(svcs));
	rl = query_get(q, ql, "limit", lim, sizeof(lim));
	if (ri < 0 || rs < 0 || rl < 0) {
		stream_problem(s, 400, "Bad Request", "INVALID_QUERY_PARAM",
			"query parameter too long");
		return;
	}
	if (rl > 0)
		limit = strtoul(lim, NULL, 10);
	if (ri == 0 && rs == 0 && rl == 0) {
		/* The common query: answer from the per-type cache. */
		for (i = 0; i < DISC_CACHE_N; i++) {
			struct disc_cache *c = &sto->cache[i];

			if (c->body != NULL && c->gen == sto->gen &&
			    strcmp(c->type, type) == 0) {
				stream_respond(s, 200, CT_JSON, blob_get(c->body));
				return;
			}
		}
		dc = &sto->cache[sto->gen % DISC_CACHE_N];
		for (i = 0; i < DISC_CACHE_N; i++)
			if (sto->cache[i].gen != sto->gen || sto->cache[i].body == NULL) {
				dc = &sto->cache[i];
				break;
			}
	}
	sb_printf(&b, "{\"validityPeriod\":%d,\"nfInstances\":[",
		STUB_VALIDITY_PERIOD);
	for (i = 0; i < sto->n; i++) {
		const struct profile *p = &sto->v[i];

		if (!p->discoverable || strcasecmp(p->type, type) != 0)
			continue;
		if (ri > 0 && strcmp(p->id, inst) != 0)
			continue;
		if (rs > 0 && !has_service(p, svcs))
			continue;
		if (limit > 0 && hits >= limit)
			break;
		if (hits++ > 0)
			sb_put(&b, ",", 1);
		sb_put(&b, p->body->data, p->body->len);
	}
	sb_puts(&b, "]}");
	stream_respond(s, 200, CT_JSON, sb_blob(&b));
	if (dc != NULL && s->rbody != NULL) {
		blob_put(dc->body);
		snprintf(dc->type, sizeof(dc->type), "%s", type);
		dc->gen = sto->gen;
		dc->body = blob_get(s->rbody);
	}
}

/* Append "http://HOST/nnrf-nfm/v1/nf-instances[/ID]" as a JSON string. */
static void
sb_href(struct sb *b, const char *host, const char *id)
{
	struct sb u = {0};

	sb_printf(&u, "http://%s" P_NFI "%s%s", host, id != NULL ? "/" : "",
		id != NULL ? id : "");
	sb_json_str(b, u.p != NULL ? u.p : "", u.len);
	if (u.oom)
		b->oom = 1;
	sb_fini(&u);
}

static void
op_list(struct stub *st, struct stream *s, const char *q, size_t ql)
{
	char type[48], lim[16];
	const char *host = req_host(st, s);
	unsigned long limit = 0, hits = 0;
	struct sb b = {0};
	int rt, rl;
	size_t i;

	rt = query_get(q, ql, "nf-type", type, sizeof(type));
	rl = query_get(q, ql, "limit", lim, sizeof(lim));
	if (rt < 0 || rl < 0) {
		stream_problem(s, 400, "Bad Request", "INVALID_QUERY_PARAM",
			"query parameter too long");
		return;
	}
	if (rl > 0)
		limit = strtoul(lim, NULL, 10);
	sb_puts(&b, "{\"_links\":{\"self\":{\"href\":");
	sb_href(&b, host, NULL);
	sb_puts(&b, "},\"items\":[");
	for (i = 0; i < st->store.n; i++) {
		const struct profile *p = &st->store.v[i];

		if (rt > 0 && strcasecmp(p->type, type) != 0)
			continue;
		if (limit > 0 && hits >= limit)
			break;
		if (hits++ > 0)
			sb_put(&b, ",", 1);
		sb_puts(&b, "{\"href\":");
		sb_href(&b, host, p->id);
		sb_puts(&b, "}");
	}
	sb_puts(&b, "]}}");
	stream_respond(s, 200, CT_JSON, sb_blob(&b));
}

static void
op_register(struct stub *st, struct stream *s, const char *id)
{
	json_t *j, *jid;
	const char *why;
	struct profile *p;
	int created;

	j = json_loadb(s->body, s->body_len, 0, NULL);
	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"body is not a JSON object");
		return;
	}
	jid = json_object_get(j, "nfInstanceId");
	if (jid == NULL) {
		json_object_set_new(j, "nfInstanceId", json_string(id));
	} else if (!json_is_string(jid) || strcmp(json_string_value(jid), id) != 0) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"nfInstanceId does not match the resource URI");
		return;
	}
	why = profile_check(j);
	if (why != NULL) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "MANDATORY_IE_MISSING", why);
		return;
	}
	p = profile_put(&st->store, j, &created);
	if (p == NULL) {
		stream_problem(s, 500, "Internal Server Error", "SYSTEM_FAILURE",
			"out of memory");
		return;
	}
	stream_respond(s, created ? 201 : 200, CT_JSON, blob_get(p->body));
	if (created)
		set_location(st, s, P_NFI, id);
}

static void
op_nf_instance(struct stub *st, struct stream *s, const char *m, const char *id)
{
	struct profile *p = profile_find(&st->store, id);
	json_t *j;
	int created;

	if (strcmp(m, "PUT") == 0) {
		op_register(st, s, id);
		return;
	}
	if (strcmp(m, "GET") != 0 && strcmp(m, "PATCH") != 0 &&
	    strcmp(m, "DELETE") != 0) {
		method_not_allowed(s, "GET, PUT, PATCH, DELETE");
		return;
	}
	if (p == NULL) {
		stream_problem(s, 404, "Not Found", "DATA_NOT_FOUND",
			"no NF instance with this nfInstanceId");
		return;
	}
	if (m[0] == 'G') {
		stream_respond(s, 200, CT_JSON, blob_get(p->body));
	} else if (m[0] == 'D') {
		profile_del(&st->store, p);
		stream_respond(s, 204, NULL, NULL);
	} else {
		j = patched_copy(p->json, s);
		if (j == NULL || profile_check(j) != NULL || strcmp(id,
				json_string_value(json_object_get(j, "nfInstanceId"))) != 0) {
			json_decref(j);
			stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
				"patch does not apply to the NF profile");
			return;
		}
		if (profile_put(&st->store, j, &created) == NULL) {
			stream_problem(s, 500, "Internal Server Error",
				"SYSTEM_FAILURE", "out of memory");
			return;
		}
		stream_respond(s, 204, NULL, NULL);
	}
}

static void
op_subscribe(struct stub *st, struct stream *s)
{
	json_t *j;
	char id[96];

	j = json_loadb(s->body, s->body_len, 0, NULL);
	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"body is not a JSON object");
		return;
	}
	snprintf(id, sizeof(id), "%s-sub-%llu", st->idname,
		(unsigned long long)++st->store.sub_seq);
	json_object_set_new(j, "subscriptionId", json_string(id));
	if (json_object_size(st->store.subs) < STUB_MAX_SUBS)
		json_object_set(st->store.subs, id, j);
	else
		NRF_LOG_RL(WARN, STUB_MODULE, "%d subscriptions stored: %s "
			"answered but not kept", STUB_MAX_SUBS, id);
	respond_json(s, 201, j);
	set_location(st, s, P_SUBS, id);
}

static void
op_subscription(struct stub *st, struct stream *s, const char *m, const char *id)
{
	json_t *cur, *j;

	if (strcmp(m, "PATCH") != 0 && strcmp(m, "DELETE") != 0) {
		method_not_allowed(s, "PATCH, DELETE");
		return;
	}
	cur = json_object_get(st->store.subs, id);
	if (cur == NULL) {
		stream_problem(s, 404, "Not Found", "SUBSCRIPTION_NOT_FOUND",
			"no subscription with this subscriptionId");
		return;
	}
	if (m[0] == 'D') {
		json_object_del(st->store.subs, id);
		stream_respond(s, 204, NULL, NULL);
		return;
	}
	j = patched_copy(cur, s);
	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"patch does not apply to the subscription");
		return;
	}
	json_object_set_new(j, "subscriptionId", json_string(id));
	json_object_set(st->store.subs, id, j);
	respond_json(s, 200, j);
}

static void
oauth_error(struct stream *s, const char *err)
{
	struct sb b = {0};

	sb_printf(&b, "{\"error\":\"%s\"}", err);
	stream_respond(s, 400, CT_JSON, sb_blob(&b));
}

static void
op_token(struct stub *st, struct stream *s)
{
	char grant[64], scope[512], tok[128];
	json_t *j;
	int rg, rs;
	uint64_t x;

	rg = query_get(s->body, s->body_len, "grant_type", grant, sizeof(grant));
	if (rg <= 0) {
		oauth_error(s, "invalid_request");
		return;
	}
	if (strcmp(grant, "client_credentials") != 0) {
		oauth_error(s, "unsupported_grant_type");
		return;
	}
	rs = query_get(s->body, s->body_len, "scope", scope, sizeof(scope));
	/* opaque, unique per answer: a mixed counter */
	x = ++st->store.token_seq * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	snprintf(tok, sizeof(tok), "%s.%016llx", st->idname, (unsigned long long)x);
	j = json_pack("{s:s, s:s, s:i}", "access_token", tok, "token_type",
		"Bearer", "expires_in", STUB_VALIDITY_PERIOD);
	if (j != NULL && rs > 0)
		json_object_set_new(j, "scope", json_string(scope));
	if (j != NULL && st->store.token != NULL)
		json_object_update(j, st->store.token);
	respond_json(s, 200, j);
}

/* Copy the URL-decoded last path segment after @p prefix; -1 if invalid. */
static int
path_id(const char *p, size_t pl, size_t prefix, char *out, size_t outsz)
{
	if (pl <= prefix || memchr(p + prefix, '/', pl - prefix) != NULL)
		return -1;
	return url_decode(p + prefix, pl - prefix, out, outsz) <= 0 ? -1 : 0;
}

static int
path_is(const char *p, size_t pl, const char *lit)
{
	size_t n = strlen(lit);

	return pl == n && memcmp(p, lit, n) == 0;
}

static int
path_under(const char *p, size_t pl, const char *lit)
{
	size_t n = strlen(lit);

	return pl > n && memcmp(p, lit, n) == 0 && p[n] == '/';
}

/*
 * Routing by table: one line per resource, with its handler per method.
 * A method the line does not list gets 405 with the line's Allow (a
 * literal: the answer keeps the pointer); no line for the path: 404.
 */
struct req {
	struct stub *st;
	struct stream *s;
	const char *m;           /* method (HEAD already mapped to GET) */
	const char *id;          /* URL-decoded last segment (ROUTE_ID lines) */
	const char *q;           /* query, NULL: none */
	size_t ql;
};

typedef void (*route_fn)(const struct req *r);

enum { ROUTE_EXACT = 0, ROUTE_ID = 1 };

#define ROUTE_METHODS 2

struct route {
	const char *path;
	int kind;                /* ROUTE_EXACT, or ROUTE_ID: path "/" one segment */
	const char *allow;       /* the methods below, for 405 */
	struct {
		const char *method; /* NULL: any (the handler checks) */
		route_fn fn;
	} m[ROUTE_METHODS];
};

/* Dispatch @p r on @p p (its path without query) through @p tab. 0 when
 * handled (answered, 405 included); -1: no such resource. */
static int
route(const struct route *tab, size_t n, struct req *r, const char *p, size_t pl)
{
	char id[256];
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct route *e = &tab[i];

		if (e->kind == ROUTE_EXACT ? !path_is(p, pl, e->path) : !path_under(p, pl, e->path))
			continue;
		if (e->kind == ROUTE_ID) {
			if (path_id(p, pl, strlen(e->path) + 1, id, sizeof(id)) < 0)
				return -1;
			r->id = id;
		}
		for (k = 0; k < ROUTE_METHODS && e->m[k].fn != NULL; k++) {
			if (e->m[k].method == NULL || strcmp(e->m[k].method, r->m) == 0) {
				e->m[k].fn(r);
				return 0;
			}
		}
		method_not_allowed(r->s, e->allow);
		return 0;
	}
	return -1;
}

static void
r_discover(const struct req *r)
{
	op_discover(r->st, r->s, r->q, r->ql);
}

static void
r_list(const struct req *r)
{
	op_list(r->st, r->s, r->q, r->ql);
}

static void
r_nf_instance(const struct req *r)
{
	op_nf_instance(r->st, r->s, r->m, r->id);
}

static void
r_subscribe(const struct req *r)
{
	op_subscribe(r->st, r->s);
}

static void
r_subscription(const struct req *r)
{
	op_subscription(r->st, r->s, r->m, r->id);
}

static void
r_token(const struct req *r)
{
	op_token(r->st, r->s);
}

static const struct route api_routes[] = {
	{P_DISC, ROUTE_EXACT, "GET", {{"GET", r_discover}}},
	{P_NFI, ROUTE_EXACT, "GET", {{"GET", r_list}}},
	{P_NFI, ROUTE_ID, NULL, {{NULL, r_nf_instance}}},
	{P_SUBS, ROUTE_EXACT, "POST", {{"POST", r_subscribe}}},
	{P_SUBS, ROUTE_ID, NULL, {{NULL, r_subscription}}},
	{P_TOKEN, ROUTE_EXACT, "POST", {{"POST", r_token}}},
};

void
api_handle(struct stub *st, struct stream *s)
{
	struct req r = {.st = st, .s = s};
	const char *p, *q;
	size_t pl;

	if (s->method.len == 0 || s->path.len == 0) {
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"missing :method or :path");
		return;
	}
	if (s->body_total > STUB_MAX_BODY) {
		stream_problem(s, 413, "Payload Too Large", "INVALID_MSG_FORMAT",
			"request body exceeds 1 MiB");
		return;
	}
	r.m = stream_str(s, s->method);
	/* HEAD is served wherever GET is (RFC 9110 §9.3.2): the same status
	 * and fields; stream_submit() leaves the body out. */
	if (strcmp(r.m, "HEAD") == 0)
		r.m = "GET";
	p = stream_str(s, s->path);
	q = memchr(p, '?', s->path.len);
	pl = q != NULL ? (size_t)(q - p) : s->path.len;
	if (q != NULL)
		q++;
	r.q = q;
	r.ql = q != NULL ? s->path.len - pl - 1 : 0;
	if (route(api_routes, NRF_ARRAY_SIZE(api_routes), &r, p, pl) == 0)
		return;
	stream_problem(s, 404, "Not Found", "RESOURCE_URI_STRUCTURE_NOT_FOUND",
		"no such resource on this NRF");
}

/* ---- control API (/_stub/) -------------------------------------------- */

static json_t *
fault_json(const struct fault *f)
{
	json_t *o = json_pack("{s:s, s:I, s:I}", "mode", fault_name(f->mode),
		"arg", (json_int_t)f->arg, "count", (json_int_t)f->count);

	if (o != NULL && f->mode == FAULT_BIGDROP) {
		json_object_set_new(o, "hold", json_integer((json_int_t)f->hold));
		json_object_set_new(o, "mute", json_boolean(f->mute));
		json_object_set_new(o, "dropped", json_boolean(f->dropped));
	}
	return o;
}

static void
ctl_fault_put(struct stub *st, struct stream *s)
{
	struct fault f = {0};
	json_t *j, *jm, *ja, *jc, *jh, *ju;
	char err[160];
	const char *mode;

	j = json_loadb(s->body, s->body_len, 0, NULL);
	jm = json_object_get(j, "mode");
	ja = json_object_get(j, "arg");
	jc = json_object_get(j, "count");
	jh = json_object_get(j, "hold");
	ju = json_object_get(j, "mute");
	mode = json_string_value(jm);
	if (!json_is_object(j) || mode == NULL ||
	    (ja != NULL && !json_is_integer(ja)) ||
	    (jc != NULL && !json_is_integer(jc)) ||
	    (jh != NULL && !json_is_integer(jh)) || (ju != NULL && !json_is_boolean(ju))) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"expected {\"mode\": string, \"arg\": integer, "
			"\"count\": integer, \"hold\": integer, \"mute\": boolean}");
		return;
	}
	if (fault_parse(mode, &f, err, sizeof(err)) < 0)
		goto bad;
	if (ja != NULL || jh != NULL || ju != NULL) {
		if (ju != NULL)
			f.mute = json_is_true(ju);
		if (ja != NULL)
			f.arg = (long)json_integer_value(ja);
		if (jh != NULL)
			f.hold = (long)json_integer_value(jh);
		if (f.arg < 0 || f.hold < 0) {
			snprintf(err, sizeof(err), "arg and hold must not be negative");
			goto bad;
		}
		if (fault_finish(&f, err, sizeof(err)) < 0)
			goto bad;
	}
	if (jc != NULL)
		f.count = json_integer_value(jc) > 0 ?
			(long)json_integer_value(jc) : -1;
	json_decref(j);
	blob_put(st->fault.body);
	st->fault = f;
	NRF_LOG(INFO, STUB_MODULE, "fault set to %s arg %ld count %ld hold %ld",
		fault_name(f.mode), f.arg, f.count, f.hold);
	respond_json(s, 200, fault_json(&st->fault));
	return;
bad:
	json_decref(j);
	blob_put(f.body);
	stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT", err);
}

static json_t *
stats_json(const struct stub *st)
{
	const struct stub_stats *ss = &st->stats;
	json_t *o = json_object(), *resp = json_object(), *flt = json_object();
	char key[8];
	int i;

	for (i = 0; i < 600; i++) {
		if (ss->status[i] == 0)
			continue;
		snprintf(key, sizeof(key), "%d", i);
		json_object_set_new(resp, key, json_integer((json_int_t)ss->status[i]));
	}
	for (i = 1; i < FAULT__N; i++)
		json_object_set_new(flt, fault_name((enum fault_mode)i),
			json_integer((json_int_t)ss->faults[i]));
	json_object_set_new(o, "name", json_string(st->name));
	json_object_set_new(o, "uptime_ms", json_integer((json_int_t)
		((nrf_now_ns() - ss->started_ns) / 1000000)));
	json_object_set_new(o, "requests", json_integer((json_int_t)ss->requests));
	json_object_set_new(o, "incomplete",
		json_integer((json_int_t)ss->incomplete));
	json_object_set_new(o, "control", json_integer((json_int_t)ss->control));
	json_object_set_new(o, "responses", resp);
	json_object_set_new(o, "faults", flt);
	json_object_set_new(o, "connections", json_pack("{s:I, s:I}",
		"accepted", (json_int_t)ss->conn_accepted,
		"active", (json_int_t)ss->conn_active));
	json_object_set_new(o, "streams_active",
		json_integer((json_int_t)ss->streams_active));
	json_object_set_new(o, "recording", json_boolean(st->rec.enabled));
	json_object_set_new(o, "recorded", json_integer(st->rec.count));
	json_object_set_new(o, "record_seq",
		json_integer((json_int_t)(st->rec.next_seq - 1)));
	json_object_set_new(o, "profiles", json_integer((json_int_t)st->store.n));
	json_object_set_new(o, "subscriptions",
		json_integer((json_int_t)json_object_size(st->store.subs)));
	json_object_set_new(o, "fault", fault_json(&st->fault));
	return o;
}

static void
ctl_requests_get(const struct req *r)
{
	uint64_t since = 0, limit = 0;
	char buf[32];

	if (query_get(r->q, r->ql, "since", buf, sizeof(buf)) > 0)
		since = strtoull(buf, NULL, 10);
	if (query_get(r->q, r->ql, "limit", buf, sizeof(buf)) > 0)
		limit = strtoull(buf, NULL, 10);
	respond_json(r->s, 200, rec_dump(&r->st->rec, since, limit));
}

static void
ctl_requests_delete(const struct req *r)
{
	rec_clear(&r->st->rec);
	stream_respond(r->s, 204, NULL, NULL);
}

static void
ctl_stats_get(const struct req *r)
{
	respond_json(r->s, 200, stats_json(r->st));
}

static void
ctl_stats_delete(const struct req *r)
{
	struct stub_stats *ss = &r->st->stats;
	uint64_t started = ss->started_ns;
	uint64_t ca = ss->conn_active;
	uint64_t sa = ss->streams_active;

	memset(ss, 0, sizeof(*ss));
	ss->started_ns = started;
	ss->conn_active = ca;
	ss->streams_active = sa;
	stream_respond(r->s, 204, NULL, NULL);
}

static void
ctl_fault_get(const struct req *r)
{
	respond_json(r->s, 200, fault_json(&r->st->fault));
}

static void
ctl_fault_put_r(const struct req *r)
{
	ctl_fault_put(r->st, r->s);
}

static void
ctl_record_get(const struct req *r)
{
	respond_json(r->s, 200, json_pack("{s:b}", "enabled", r->st->rec.enabled));
}

static void
ctl_record_put(const struct req *r)
{
	struct stream *s = r->s;
	json_t *j = json_loadb(s->body, s->body_len, 0, NULL);

	if (!json_is_boolean(json_object_get(j, "enabled"))) {
		json_decref(j);
		stream_problem(s, 400, "Bad Request", "INVALID_MSG_FORMAT",
			"expected {\"enabled\": boolean}");
		return;
	}
	r->st->rec.enabled = json_is_true(json_object_get(j, "enabled"));
	json_decref(j);
	respond_json(s, 200, json_pack("{s:b}", "enabled", r->st->rec.enabled));
}

static const struct route ctl_routes[] = {
	{"/_stub/requests", ROUTE_EXACT, "GET, DELETE",
		{{"GET", ctl_requests_get}, {"DELETE", ctl_requests_delete}}},
	{"/_stub/stats", ROUTE_EXACT, "GET, DELETE",
		{{"GET", ctl_stats_get}, {"DELETE", ctl_stats_delete}}},
	{"/_stub/fault", ROUTE_EXACT, "GET, PUT", {{"GET", ctl_fault_get}, {"PUT", ctl_fault_put_r}}},
	{"/_stub/record", ROUTE_EXACT, "GET, PUT", {{"GET", ctl_record_get}, {"PUT", ctl_record_put}}},
};

void
ctl_handle(struct stub *st, struct stream *s)
{
	struct req r = {.st = st, .s = s, .m = stream_str(s, s->method)};
	const char *p = stream_str(s, s->path), *q;
	size_t pl;

	if (s->method.len == 0) {
		stream_problem(s, 400, "Bad Request", NULL, "missing :method");
		return;
	}
	q = memchr(p, '?', s->path.len);
	pl = q != NULL ? (size_t)(q - p) : s->path.len;
	if (q != NULL)
		q++;
	r.q = q;
	r.ql = q != NULL ? s->path.len - pl - 1 : 0;
	if (route(ctl_routes, NRF_ARRAY_SIZE(ctl_routes), &r, p, pl) == 0)
		return;
	stream_problem(s, 404, "Not Found", NULL,
		"control resources: /_stub/requests, /_stub/stats, "
		"/_stub/fault, /_stub/record");
}
