/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /loops (docs/rest-api.md, "Loops"): the loop paths this nrfwd saw,
 * merged over its workers (nrf_rt_loops_get()), most frequent first. The
 * pure part (api_loops_render()) is tested without a runtime; the same
 * document, cut to a few paths, goes into the fleet status in etcd
 * (nrf_api_loops_json()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "api_int.h"
#include "nrf_api.h"
#include "nrf_common.h"

/* RFC 3339 UTC text of the moment @p mono_ns (nrf_now_ns() clock, in the
 * past): the wall clock @p real_ns minus the time since then. */
static json_t *
wall_of(uint64_t mono_ns, uint64_t now_ns, uint64_t real_ns)
{
	uint64_t ago = now_ns > mono_ns ? now_ns - mono_ns : 0;
	uint64_t real = real_ns > ago ? real_ns - ago : 0;
	time_t t = (time_t)(real / 1000000000ull);
	struct tm tm;
	char buf[40];

	gmtime_r(&t, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		(unsigned int)(real / 1000000ull % 1000));
	return json_string(buf);
}

static int
by_count(const void *a, const void *b)
{
	const struct nrf_rt_loop *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->last_ns != y->last_ns)
		return x->last_ns > y->last_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The path's members as an array ("a:1 b:2" -> ["a:1", "b:2"]). */
static json_t *
members(const char *path)
{
	json_t *a = json_array();
	const char *p = path;

	while (a != NULL && *p != '\0') {
		const char *sp = strchr(p, ' ');
		size_t n = sp != NULL ? (size_t)(sp - p) : strlen(p);

		json_array_append_new(a, json_stringn(p, n));
		p += n;
		while (*p == ' ')
			p++;
	}
	return a;
}

static json_t *
str_or_null(const char *s)
{
	return s[0] != '\0' ? json_string(s) : json_null();
}

json_t *
api_loops_doc(struct nrf_rt_loop *v, size_t n, uint64_t drops, const char *self,
	unsigned int workers, size_t limit, uint64_t now_ns, uint64_t real_ns)
{
	json_t *o = json_object(), *paths = json_array();

	if (o == NULL || paths == NULL) {
		json_decref(o);
		json_decref(paths);
		return NULL;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_count);
	json_object_set_new(o, "identity", json_string(self));
	json_object_set_new(o, "workers", json_integer(workers));
	json_object_set_new(o, "entriesPerWorker", json_integer(NRF_RT_LOOP_ENTRIES));
	json_object_set_new(o, "distinctPaths", json_integer((json_int_t)n));
	json_object_set_new(o, "dropped", json_integer((json_int_t)drops));
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct nrf_rt_loop *e = &v[i];
		json_t *p = json_object();
		double span = now_ns > e->first_ns ? (double)(now_ns - e->first_ns) / 1e9 : 0.0;

		if (p == NULL)
			break;
		json_object_set_new(p, "kind", json_string(
			nrf_rt_loop_kind_name((enum nrf_rt_loop_kind)e->kind)));
		json_object_set_new(p, "path", members(e->path));
		json_object_set_new(p, "truncated", json_boolean(e->truncated));
		json_object_set_new(p, "skipped", str_or_null(e->skipped));
		json_object_set_new(p, "entry", str_or_null(e->entry));
		json_object_set_new(p, "count", json_integer((json_int_t)e->count));
		json_object_set_new(p, "firstSeen", wall_of(e->first_ns, now_ns, real_ns));
		json_object_set_new(p, "lastSeen", wall_of(e->last_ns, now_ns, real_ns));
		json_object_set_new(p, "lastSeenSecondsAgo", json_real(now_ns > e->last_ns
			? (double)(now_ns - e->last_ns) / 1e9 : 0.0));
		/* since first seen, over at least a second */
		json_object_set_new(p, "ratePerSecond",
			json_real((double)e->count / (span > 1.0 ? span : 1.0)));
		json_object_set_new(p, "client", str_or_null(e->client));
		json_object_set_new(p, "requestId", str_or_null(e->rid));
		json_array_append_new(paths, p);
	}
	json_object_set_new(o, "paths", paths);
	return o;
}

/* The text of @p o (NULL: NULL) with @p flags; @p o is released. */
static char *
dump(json_t *o, size_t flags)
{
	char *text;

	if (o == NULL)
		return NULL;
	text = json_dumps(o, flags);
	json_decref(o);
	return text;
}

char *
api_loops_render(struct nrf_rt_loop *v, size_t n, uint64_t drops, const char *self,
	unsigned int workers, size_t limit, uint64_t now_ns, uint64_t real_ns)
{
	return dump(api_loops_doc(v, n, drops, self, workers, limit, now_ns, real_ns),
		JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}

static uint64_t
real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static json_t *
loops_doc_of(struct nrf_rt *rt, size_t limit, uint64_t *sig)
{
	struct nrf_rt_loop *v = NULL;
	size_t n = 0;
	uint64_t drops = 0;
	char self[300];
	json_t *o;

	if (nrf_rt_loops_get(rt, &v, &n, &drops) != 0)
		return NULL;
	if (sig != NULL) {
		*sig = (uint64_t)n << 48 ^ drops << 32;
		for (size_t i = 0; i < n; i++)
			*sig += v[i].count;
	}
	nrf_rt_self_name(rt, self, sizeof(self));
	o = api_loops_doc(v, n, drops, self, nrf_rt_workers(rt), limit, nrf_now_ns(),
		real_now());
	free(v);
	if (o != NULL) {
		/* where it listens: `fleet loops` places it in the topology */
		json_t *ls = json_array();
		struct nrf_tp_addr a;
		char buf[80];

		for (unsigned int i = 0; nrf_rt_listen_addr(rt, i, &a) == 0; i++) {
			char *colon;

			nrf_tp_addr_format(&a, buf, sizeof(buf));
			colon = strrchr(buf, ':');
			if (colon == NULL)
				continue;
			*colon = '\0';
			if (buf[0] == '[') {
				memmove(buf, buf + 1, strlen(buf));
				buf[strlen(buf) - 1] = '\0';
			}
			json_array_append_new(ls, json_pack("{s:s, s:i}", "address", buf, "port",
				(int)a.port));
		}
		json_object_set_new(o, "listen", ls);
	}
	return o;
}

char *
api_loops_get(struct nrf_rt *rt, size_t limit)
{
	return dump(loops_doc_of(rt, limit, NULL), JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}

char *
nrf_api_loops_json(struct nrf_rt *rt, size_t limit, uint64_t *sig)
{
	return dump(loops_doc_of(rt, limit, sig), JSON_COMPACT | JSON_PRESERVE_ORDER);
}
