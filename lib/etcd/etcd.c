/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd v3 over its JSON gateway with libcurl (decision 0029). Why the
 * gateway rather than gRPC: Debian 12 ships libcurl and jansson for C,
 * while a gRPC client would mean C++ (libgrpc++), generated protobuf code
 * of etcd's .proto files and a second event loop; the gateway is the same
 * API (etcd translates every call to its gRPC service), documented and
 * versioned by etcd (/v3 since 3.4).
 *
 * Failover is per request: the endpoint that answered last goes first, a
 * transport failure moves on to the next. A watch is one streaming POST:
 * the gateway writes one JSON object per message, so the stream is cut
 * into objects by counting braces outside strings (no reliance on the
 * newlines between them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_etcd.h"

#define MAX_EP 16
#define MAX_ANSWER (64u * 1024 * 1024)

struct nrf_etcd {
	char *ep[MAX_EP];
	unsigned int n_ep;
	unsigned int cur;        /* endpoint that answered last */
	CURL *h;
	char *cacert, *cert, *key, *user, *password;
	char *token;             /* etcd auth token, when authenticated */
	uint32_t timeout_ms, connect_ms;
	char err[320];
	char cerr[CURL_ERROR_SIZE]; /* curl's detail of the last failure */
	char why[CURL_ERROR_SIZE];  /* curl_why()'s text */
};

/* ------------------------------------------------------------------------ */
/* Base64                                                                    */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
nrf_etcd_b64_encode(const void *data, size_t len)
{
	const unsigned char *p = data;
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		*o++ = b64[p[i] >> 2];
		*o++ = b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		*o++ = b64[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		*o++ = b64[p[i + 2] & 63];
	}
	if (i < len) {
		*o++ = b64[p[i] >> 2];
		if (i + 1 < len) {
			*o++ = b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
			*o++ = b64[(p[i + 1] & 15) << 2];
		} else {
			*o++ = b64[(p[i] & 3) << 4];
			*o++ = '=';
		}
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int
b64_val(char c)
{
	const char *p = c != '\0' ? strchr(b64, c) : NULL;

	return p != NULL ? (int)(p - b64) : -1;
}

char *
nrf_etcd_b64_decode(const char *s, size_t *out_len, int *err)
{
	size_t n = strlen(s), i, o = 0;
	unsigned int acc = 0, bits = 0, pad = 0;
	char *out;

	if (n % 4 != 0) {
		*err = NRF_EPARSE;
		return NULL;
	}
	out = malloc(n / 4 * 3 + 1);
	if (out == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		int v;

		if (s[i] == '=') {
			/* padding only at the end, at most two */
			if (i + 2 < n || ++pad > 2)
				goto bad;
			continue;
		}
		if (pad > 0 || (v = b64_val(s[i])) < 0)
			goto bad;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	*out_len = o;
	*err = 0;
	return out;
bad:
	free(out);
	*err = NRF_EPARSE;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* JSON of the gateway                                                       */

/* int64 fields come as strings ("12"); absent means 0 (proto3 defaults). */
static int64_t
i64_of(const json_t *o, const char *name)
{
	const json_t *v = json_object_get(o, name);

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	return 0;
}

void
nrf_etcd_kv_fini(struct nrf_etcd_kv *kv)
{
	if (kv == NULL)
		return;
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void
nrf_etcd_kvs_fini(struct nrf_etcd_kvs *kvs)
{
	size_t i;

	if (kvs == NULL)
		return;
	for (i = 0; i < kvs->n; i++)
		nrf_etcd_kv_fini(&kvs->v[i]);
	free(kvs->v);
	memset(kvs, 0, sizeof(*kvs));
}

static int
kv_of(const json_t *o, struct nrf_etcd_kv *kv)
{
	const char *k = json_string_value(json_object_get(o, "key"));
	const char *v = json_string_value(json_object_get(o, "value"));
	size_t kl = 0;
	int err = 0;

	memset(kv, 0, sizeof(*kv));
	if (!json_is_object(o) || k == NULL)
		return NRF_EPROTO;
	kv->key = nrf_etcd_b64_decode(k, &kl, &err);
	if (kv->key == NULL)
		return err == NRF_ENOMEM ? err : NRF_EPROTO;
	kv->value = nrf_etcd_b64_decode(v != NULL ? v : "", &kv->value_len, &err);
	if (kv->value == NULL) {
		nrf_etcd_kv_fini(kv);
		return err == NRF_ENOMEM ? err : NRF_EPROTO;
	}
	kv->create_revision = i64_of(o, "create_revision");
	kv->mod_revision = i64_of(o, "mod_revision");
	kv->version = i64_of(o, "version");
	kv->lease = i64_of(o, "lease");
	return 0;
}

int
nrf_etcd_watch_message(const char *text, size_t len, nrf_etcd_watch_fn *fn, void *arg,
	bool *created, int64_t *compact_rev)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	json_t *res = json_object_get(doc, "result"), *evs, *e;
	struct nrf_etcd_event *v = NULL;
	size_t n, i;
	int rc = 0;

	if (!json_is_object(res)) {
		json_decref(doc);
		return NRF_EPROTO;
	}
	if (json_is_true(json_object_get(res, "created"))) {
		*created = true;
		rc = fn(arg, NULL, 0);
		if (rc != 0) {
			json_decref(doc);
			return rc;
		}
	}
	if (i64_of(res, "compact_revision") > 0) {
		*compact_rev = i64_of(res, "compact_revision");
		json_decref(doc);
		return NRF_EAGAIN;
	}
	if (json_is_true(json_object_get(res, "canceled"))) {
		json_decref(doc);
		return NRF_EPROTO;
	}
	evs = json_object_get(res, "events");
	n = json_array_size(evs);
	if (n > 0) {
		v = calloc(n, sizeof(*v));
		if (v == NULL) {
			json_decref(doc);
			return NRF_ENOMEM;
		}
		json_array_foreach(evs, i, e) {
			const char *type = json_string_value(json_object_get(e, "type"));

			v[i].deleted = type != NULL && strcmp(type, "DELETE") == 0;
			rc = kv_of(json_object_get(e, "kv"), &v[i].kv);
			if (rc != 0) {
				n = i;
				goto out;
			}
		}
		rc = fn(arg, v, n);
	}
out:
	for (i = 0; i < n; i++)
		nrf_etcd_kv_fini(&v[i].kv);
	free(v);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Handle                                                                    */

int
nrf_etcd_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : NRF_EIO;
}

static char *
dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (s == NULL || s[0] == '\0')
		return NULL;
	d = strdup(s);
	if (d == NULL)
		*oom = true;
	return d;
}

struct nrf_etcd *
nrf_etcd_create(const struct nrf_etcd_params *p, int *err)
{
	struct nrf_etcd *e;
	char *list, *save = NULL, *tok;
	bool oom = false;

	if (p == NULL || p->endpoints == NULL || p->endpoints[0] == '\0') {
		*err = NRF_EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	list = strdup(p->endpoints);
	if (e == NULL || list == NULL) {
		free(e);
		free(list);
		*err = NRF_ENOMEM;
		return NULL;
	}
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		size_t n;

		while (*tok == ' ')
			tok++;
		n = strlen(tok);
		while (n > 0 && (tok[n - 1] == '/' || tok[n - 1] == ' '))
			tok[--n] = '\0';
		if (n == 0)
			continue;
		if (e->n_ep == MAX_EP || (strncmp(tok, "http://", 7) != 0 &&
			strncmp(tok, "https://", 8) != 0)) {
			*err = NRF_EINVAL;
			goto fail;
		}
		e->ep[e->n_ep] = strdup(tok);
		if (e->ep[e->n_ep++] == NULL) {
			*err = NRF_ENOMEM;
			goto fail;
		}
	}
	if (e->n_ep == 0) {
		*err = NRF_EINVAL;
		goto fail;
	}
	e->cacert = dup_or_null(p->cacert, &oom);
	e->cert = dup_or_null(p->cert, &oom);
	e->key = dup_or_null(p->key, &oom);
	e->user = dup_or_null(p->user, &oom);
	e->password = dup_or_null(p->password != NULL ? p->password : "", &oom);
	e->timeout_ms = p->timeout_ms != 0 ? p->timeout_ms : 2000;
	e->connect_ms = p->connect_ms != 0 ? p->connect_ms : 500;
	e->h = curl_easy_init();
	if (oom || e->h == NULL) {
		*err = NRF_ENOMEM;
		goto fail;
	}
	free(list);
	*err = 0;
	return e;
fail:
	free(list);
	nrf_etcd_free(e);
	return NULL;
}

void
nrf_etcd_free(struct nrf_etcd *e)
{
	unsigned int i;

	if (e == NULL)
		return;
	if (e->h != NULL)
		curl_easy_cleanup(e->h);
	for (i = 0; i < e->n_ep; i++)
		free(e->ep[i]);
	free(e->cacert);
	free(e->cert);
	free(e->key);
	free(e->user);
	if (e->password != NULL)
		memset(e->password, 0, strlen(e->password));
	free(e->password);
	free(e->token);
	free(e);
}

const char *
nrf_etcd_endpoint(const struct nrf_etcd *e)
{
	return e->ep[e->cur];
}

const char *
nrf_etcd_last_error(const struct nrf_etcd *e)
{
	return e->err;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */

struct sink {
	char *p;
	size_t len, cap;
	bool over;
};

static size_t
sink_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;

	if (s->len + n + 1 > MAX_ANSWER) {
		s->over = true;
		return 0;
	}
	if (s->len + n + 1 > s->cap) {
		size_t nc = NRF_MAX(s->cap * 2, s->len + n + 1024);
		char *np = realloc(s->p, nc);

		if (np == NULL)
			return 0;
		s->p = np;
		s->cap = nc;
	}
	memcpy(s->p + s->len, data, n);
	s->len += n;
	s->p[s->len] = '\0';
	return n;
}

/* Why a transfer failed: curl's own detail when it gave one (TLS: "SSL
 * certificate problem: unable to get local issuer certificate", "...alert
 * bad certificate"), after the name of its error code, which the detail
 * does not always repeat. */
static const char *
curl_why(struct nrf_etcd *e, CURLcode cc)
{
	const char *what = curl_easy_strerror(cc);

	if (e->cerr[0] == '\0' || strcmp(e->cerr, what) == 0)
		return what;
	snprintf(e->why, sizeof(e->why), "%s (%.200s)", what, e->cerr);
	return e->why;
}

/* Options common to every request on endpoint @p i. */
static struct curl_slist *
setup(struct nrf_etcd *e, unsigned int i, const char *path, const char *body,
	char *url, size_t url_cap)
{
	struct curl_slist *hdrs = NULL;
	char auth[1024];

	curl_easy_reset(e->h);
	e->cerr[0] = '\0';
	curl_easy_setopt(e->h, CURLOPT_ERRORBUFFER, e->cerr);
	snprintf(url, url_cap, "%s%s", e->ep[i], path);
	curl_easy_setopt(e->h, CURLOPT_URL, url);
	curl_easy_setopt(e->h, CURLOPT_POST, 1L);
	curl_easy_setopt(e->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(e->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->h, CURLOPT_CONNECTTIMEOUT_MS, (long)e->connect_ms);
	curl_easy_setopt(e->h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e->h, CURLOPT_TCP_KEEPIDLE, 5L);
	curl_easy_setopt(e->h, CURLOPT_TCP_KEEPINTVL, 2L);
	curl_easy_setopt(e->h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (e->cacert != NULL)
		curl_easy_setopt(e->h, CURLOPT_CAINFO, e->cacert);
	if (e->cert != NULL)
		curl_easy_setopt(e->h, CURLOPT_SSLCERT, e->cert);
	if (e->key != NULL)
		curl_easy_setopt(e->h, CURLOPT_SSLKEY, e->key);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip for larger documents. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (e->token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: %s", e->token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	curl_easy_setopt(e->h, CURLOPT_HTTPHEADER, hdrs);
	return hdrs;
}

static int authenticate(struct nrf_etcd *e);

/*
 * One unary call: POST @p body to @p path, answer parsed into @p out.
 * Endpoints are tried from the last good one; transport failures and
 * 5xx answers (no leader, member stopping) move on.
 */
static int
call(struct nrf_etcd *e, const char *path, const char *body, json_t **out, bool retry_auth)
{
	unsigned int k;
	int rc = NRF_EIO;

	*out = NULL;
	if (e->user != NULL && e->token == NULL && strcmp(path, "/v3/auth/authenticate") != 0 &&
		(rc = authenticate(e)) != 0)
		return rc;
	for (k = 0; k < e->n_ep; k++) {
		unsigned int i = (e->cur + k) % e->n_ep;
		struct sink s = {0};
		struct curl_slist *hdrs;
		char url[512];
		long status = 0;
		CURLcode cc;
		json_t *doc;

		hdrs = setup(e, i, path, body, url, sizeof(url));
		curl_easy_setopt(e->h, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
		curl_easy_setopt(e->h, CURLOPT_WRITEFUNCTION, sink_write);
		curl_easy_setopt(e->h, CURLOPT_WRITEDATA, &s);
		cc = curl_easy_perform(e->h);
		curl_slist_free_all(hdrs);
		if (cc != CURLE_OK) {
			snprintf(e->err, sizeof(e->err), "%s: %s", e->ep[i], curl_why(e, cc));
			free(s.p);
			rc = s.over ? NRF_ETOOBIG : NRF_EIO;
			continue;
		}
		curl_easy_getinfo(e->h, CURLINFO_RESPONSE_CODE, &status);
		doc = json_loadb(s.p != NULL ? s.p : "", s.len, 0, NULL);
		if (status >= 500 || doc == NULL) {
			const char *m = json_string_value(json_object_get(doc, "message"));

			snprintf(e->err, sizeof(e->err), "%s: HTTP %ld%s%s", e->ep[i], status,
				m != NULL ? ": " : "", m != NULL ? m : "");
			json_decref(doc);
			free(s.p);
			rc = doc == NULL && status < 500 ? NRF_EPROTO : NRF_EIO;
			continue;
		}
		free(s.p);
		e->cur = i;
		if (status != 200) {
			const char *m = json_string_value(json_object_get(doc, "message"));

			snprintf(e->err, sizeof(e->err), "%s: HTTP %ld: %s", e->ep[i], status,
				m != NULL ? m : "refused");
			/* An expired or revoked token: once more with a fresh one. */
			if (retry_auth && e->user != NULL && m != NULL && strstr(m, "auth") != NULL) {
				json_decref(doc);
				free(e->token);
				e->token = NULL;
				return call(e, path, body, out, false);
			}
			*out = doc;
			return NRF_EINVAL;
		}
		e->err[0] = '\0';
		*out = doc;
		return 0;
	}
	return rc;
}

static int
authenticate(struct nrf_etcd *e)
{
	json_t *req = json_pack("{s:s, s:s}", "name", e->user, "password", e->password), *ans;
	char *body = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
	const char *tok;
	int rc;

	json_decref(req);
	if (body == NULL)
		return NRF_ENOMEM;
	rc = call(e, "/v3/auth/authenticate", body, &ans, false);
	memset(body, 0, strlen(body));
	free(body);
	if (rc != 0) {
		json_decref(ans);
		return rc;
	}
	tok = json_string_value(json_object_get(ans, "token"));
	if (tok == NULL) {
		json_decref(ans);
		snprintf(e->err, sizeof(e->err), "%s: authentication answer without a token",
			e->ep[e->cur]);
		return NRF_EPROTO;
	}
	e->token = strdup(tok);
	json_decref(ans);
	return e->token != NULL ? 0 : NRF_ENOMEM;
}

/* JSON text of a request object (stolen), or NULL. */
static char *
text_of(json_t *o)
{
	char *t = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return t;
}

/* The exclusive end of a prefix range: the key with its last byte + 1. */
static char *
prefix_end(const char *key)
{
	size_t n = strlen(key);
	char *end = strdup(key);

	if (end == NULL)
		return NULL;
	while (n > 0) {
		if ((unsigned char)end[n - 1] < 0xff) {
			end[n - 1]++;
			end[n] = '\0';
			return end;
		}
		n--;
	}
	/* all 0xff: every key from here on ("\0" in etcd's terms) */
	end[0] = '\0';
	return end;
}

int
nrf_etcd_get(struct nrf_etcd *e, const char *key, bool prefix, struct nrf_etcd_kvs *out)
{
	char *k64 = nrf_etcd_b64_encode(key, strlen(key)), *end = NULL, *e64 = NULL, *body;
	json_t *req, *ans = NULL, *kvs, *kv;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (prefix) {
		end = prefix_end(key);
		e64 = end != NULL ? nrf_etcd_b64_encode(end, strlen(end)) : NULL;
		if (end != NULL && end[0] == '\0') {
			free(e64);
			e64 = strdup("AA==");
		}
	}
	if (k64 == NULL || (prefix && e64 == NULL)) {
		rc = NRF_ENOMEM;
		goto out;
	}
	req = json_pack("{s:s}", "key", k64);
	if (req != NULL && prefix)
		json_object_set_new(req, "range_end", json_string(e64));
	body = text_of(req);
	if (body == NULL) {
		rc = NRF_ENOMEM;
		goto out;
	}
	rc = call(e, "/v3/kv/range", body, &ans, true);
	free(body);
	if (rc != 0)
		goto out;
	out->revision = i64_of(json_object_get(ans, "header"), "revision");
	kvs = json_object_get(ans, "kvs");
	if (json_array_size(kvs) > 0) {
		out->v = calloc(json_array_size(kvs), sizeof(*out->v));
		if (out->v == NULL) {
			rc = NRF_ENOMEM;
			goto out;
		}
		json_array_foreach(kvs, i, kv) {
			rc = kv_of(kv, &out->v[out->n]);
			if (rc != 0) {
				nrf_etcd_kvs_fini(out);
				goto out;
			}
			out->n++;
		}
	}
out:
	json_decref(ans);
	free(k64);
	free(end);
	free(e64);
	return rc;
}

/* {"key":..., "value":..., "lease":...} of a put. */
static json_t *
put_obj(const char *key, const void *value, size_t len, int64_t lease)
{
	char *k64 = nrf_etcd_b64_encode(key, strlen(key));
	char *v64 = nrf_etcd_b64_encode(value, len);
	json_t *o = k64 != NULL && v64 != NULL ? json_pack("{s:s, s:s}", "key", k64, "value", v64)
					       : NULL;
	char lb[32];

	if (o != NULL && lease != 0) {
		snprintf(lb, sizeof(lb), "%lld", (long long)lease);
		json_object_set_new(o, "lease", json_string(lb));
	}
	free(k64);
	free(v64);
	return o;
}

int
nrf_etcd_put(struct nrf_etcd *e, const char *key, const void *value, size_t len,
	int64_t lease, int64_t *rev)
{
	char *body = text_of(put_obj(key, value, len, lease));
	json_t *ans = NULL;
	int rc;

	if (body == NULL)
		return NRF_ENOMEM;
	rc = call(e, "/v3/kv/put", body, &ans, true);
	free(body);
	if (rc == 0 && rev != NULL)
		*rev = i64_of(json_object_get(ans, "header"), "revision");
	json_decref(ans);
	return rc;
}

int
nrf_etcd_put_if(struct nrf_etcd *e, const char *key, const void *value, size_t len,
	int64_t mod_revision, int64_t *rev)
{
	json_t *put = put_obj(key, value, len, 0), *req;
	char *k64 = nrf_etcd_b64_encode(key, strlen(key)), *body;
	char mr[32];
	json_t *ans = NULL;
	int rc;

	if (rev != NULL)
		*rev = 0;
	snprintf(mr, sizeof(mr), "%lld", (long long)mod_revision);
	/* mod_revision 0 with MOD/EQUAL holds for a key that does not exist. */
	req = put != NULL && k64 != NULL
		? json_pack("{s:[{s:s, s:s, s:s, s:s}], s:[{s:o}]}",
			"compare", "key", k64, "target", "MOD", "result", "EQUAL",
			"mod_revision", mr, "success", "request_put", put)
		: NULL;
	if (req == NULL)
		json_decref(put);
	free(k64);
	body = text_of(req);
	if (body == NULL)
		return NRF_ENOMEM;
	rc = call(e, "/v3/kv/txn", body, &ans, true);
	free(body);
	if (rc == 0) {
		if (!json_is_true(json_object_get(ans, "succeeded")))
			rc = NRF_EAGAIN;
		else if (rev != NULL)
			*rev = i64_of(json_object_get(ans, "header"), "revision");
	}
	json_decref(ans);
	return rc;
}

/* A lease call: {"@p field": "@p v"} to @p path (the answer in *@p ans). */
static int
lease_call(struct nrf_etcd *e, const char *path, const char *field, int64_t v, json_t **ans)
{
	char body[64];

	snprintf(body, sizeof(body), "{\"%s\":\"%lld\"}", field, (long long)v);
	return call(e, path, body, ans, true);
}

int
nrf_etcd_lease_grant(struct nrf_etcd *e, int64_t ttl_s, int64_t *id)
{
	json_t *ans = NULL;
	int rc;

	rc = lease_call(e, "/v3/lease/grant", "TTL", ttl_s, &ans);
	if (rc == 0) {
		*id = i64_of(ans, "ID");
		if (*id == 0)
			rc = NRF_EPROTO;
	}
	json_decref(ans);
	return rc;
}

int
nrf_etcd_lease_keepalive(struct nrf_etcd *e, int64_t id)
{
	json_t *ans = NULL, *res;
	int rc;

	rc = lease_call(e, "/v3/lease/keepalive", "ID", id, &ans);
	if (rc == 0) {
		/* A streaming call: its first message is {"result": {...}}; an
		 * expired lease comes back with no TTL (0). */
		res = json_object_get(ans, "result");
		if (!json_is_object(res))
			rc = NRF_EPROTO;
		else if (i64_of(res, "TTL") <= 0)
			rc = NRF_ENOENT;
	} else if (rc == NRF_EINVAL) {
		rc = NRF_ENOENT;
	}
	json_decref(ans);
	return rc;
}

int
nrf_etcd_lease_revoke(struct nrf_etcd *e, int64_t id)
{
	json_t *ans = NULL;
	int rc;

	rc = lease_call(e, "/v3/lease/revoke", "ID", id, &ans);
	json_decref(ans);
	return rc == NRF_EINVAL ? NRF_ENOENT : rc;
}

/* ------------------------------------------------------------------------ */
/* Watch                                                                     */

struct wstate {
	struct sink buf;         /* bytes of the message being received */
	int depth;
	bool in_str, esc;
	bool created;
	int rc;                  /* first non-zero outcome of a message */
	int64_t compact_rev;
	uint64_t last_rx_ns;
	uint64_t start_ns;
	uint32_t idle_ms;
	uint32_t create_ms;
	bool idle;
	bool not_created;
	nrf_etcd_stop_fn *stop;
	nrf_etcd_watch_fn *fn;
	void *arg;
};

static size_t
watch_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct wstate *w = arg;
	size_t n = size * nmemb, i;

	w->last_rx_ns = nrf_now_ns();
	for (i = 0; i < n; i++) {
		char c = data[i];

		if (w->depth == 0 && c != '{')
			continue; /* newlines between messages */
		if (sink_write(&c, 1, 1, &w->buf) != 1)
			return 0;
		if (w->in_str) {
			if (w->esc)
				w->esc = false;
			else if (c == '\\')
				w->esc = true;
			else if (c == '"')
				w->in_str = false;
			continue;
		}
		if (c == '"') {
			w->in_str = true;
		} else if (c == '{') {
			w->depth++;
		} else if (c == '}' && --w->depth == 0) {
			int rc = nrf_etcd_watch_message(w->buf.p, w->buf.len, w->fn, w->arg,
				&w->created, &w->compact_rev);

			w->buf.len = 0;
			if (rc != 0) {
				w->rc = rc;
				return 0; /* ends the transfer */
			}
		}
	}
	return n;
}

static int
watch_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
	curl_off_t ulnow)
{
	struct wstate *w = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (w->stop != NULL && w->stop(w->arg))
		return 1;
	if (!w->created && nrf_now_ns() - w->start_ns > (uint64_t)w->create_ms * 1000000ull) {
		w->not_created = true;
		return 1;
	}
	if (w->idle_ms != 0 && nrf_now_ns() - w->last_rx_ns > (uint64_t)w->idle_ms * 1000000ull) {
		w->idle = true;
		return 1;
	}
	return 0;
}

int
nrf_etcd_watch(struct nrf_etcd *e, const char *key, int64_t start_rev,
	nrf_etcd_watch_fn *fn, nrf_etcd_stop_fn *stop, void *arg, int64_t *compact_rev,
	uint32_t idle_ms)
{
	char *k64 = nrf_etcd_b64_encode(key, strlen(key)), *body;
	char sr[32];
	unsigned int k;
	int rc = NRF_EIO;

	if (k64 == NULL)
		return NRF_ENOMEM;
	snprintf(sr, sizeof(sr), "%lld", (long long)(start_rev > 0 ? start_rev : 0));
	body = text_of(json_pack("{s:{s:s, s:s}}", "create_request", "key", k64,
		"start_revision", sr));
	free(k64);
	if (body == NULL)
		return NRF_ENOMEM;
	if (e->user != NULL && e->token == NULL && (rc = authenticate(e)) != 0) {
		free(body);
		return rc;
	}
	for (k = 0; k < e->n_ep; k++) {
		unsigned int i = (e->cur + k) % e->n_ep;
		struct wstate w = {.fn = fn, .arg = arg, .stop = stop, .idle_ms = idle_ms};
		struct curl_slist *hdrs;
		char url[512];
		long status = 0;
		CURLcode cc;

		w.last_rx_ns = w.start_ns = nrf_now_ns();
		w.create_ms = e->timeout_ms;
		hdrs = setup(e, i, "/v3/watch", body, url, sizeof(url));
		curl_easy_setopt(e->h, CURLOPT_WRITEFUNCTION, watch_write);
		curl_easy_setopt(e->h, CURLOPT_WRITEDATA, &w);
		curl_easy_setopt(e->h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(e->h, CURLOPT_XFERINFOFUNCTION, watch_progress);
		curl_easy_setopt(e->h, CURLOPT_XFERINFODATA, &w);
		cc = curl_easy_perform(e->h);
		curl_slist_free_all(hdrs);
		curl_easy_getinfo(e->h, CURLINFO_RESPONSE_CODE, &status);
		free(w.buf.p);
		if (w.rc != 0) {
			/* fn's verdict, compaction or a bad message: not the endpoint */
			e->cur = i;
			if (w.rc == NRF_EAGAIN)
				*compact_rev = w.compact_rev;
			free(body);
			return w.rc;
		}
		if (stop != NULL && stop(arg)) {
			free(body);
			return 0;
		}
		if (w.not_created) {
			snprintf(e->err, sizeof(e->err), "%s: watch not confirmed within %u ms",
				e->ep[i], e->timeout_ms);
			rc = NRF_EIO;
			continue;
		}
		if (w.idle) {
			snprintf(e->err, sizeof(e->err), "%s: watch silent for %u ms", e->ep[i],
				idle_ms);
			free(body);
			return NRF_ETIMEDOUT;
		}
		snprintf(e->err, sizeof(e->err), "%s: watch %s (HTTP %ld)", e->ep[i],
			cc != CURLE_OK ? curl_why(e, cc) : "stream ended", status);
		if (w.created) {
			/* The stream had worked on this endpoint: the caller resumes
			 * from the revision it saw last (maybe elsewhere). */
			e->cur = (i + 1) % e->n_ep;
			free(body);
			return NRF_EIO;
		}
		rc = NRF_EIO;
	}
	free(body);
	return rc;
}
