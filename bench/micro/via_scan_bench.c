/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Via scan cost: nrf_via_scan() against the ways one might write it
 * instead, measured in the same run on the same inputs:
 *
 *   (a) naive: lower-case the value once, then for every identity search
 *       its "host:port" with memmem() and check the member boundaries
 *       around each occurrence;
 *   (b) parse + hash: nrf_via_parse(), then look every member's normalised
 *       host:port up in an open-addressing hash set of the identities;
 *   (c) Hyperscan regex: one Hyperscan regex per identity with the
 *       separators built in, (?:^|[ \t,])host\.?:0*port(?:$|[ \t,(]), plus
 *       a scalar member count: the design lib/via measured and did not
 *       take (docs/via.md, "Why literals").
 *
 * Every method produces the same thing (member count, self, peer bits);
 * that is checked before timing. Inputs are fixed: identities
 * "nrf-%04d.seg%d.example.com:8080" (0 is this NRF, the others peers); Via
 * values of 1, 4, 16 and 64 members on one field line, every member but
 * the last a hop nrfwd does not know (SCPs, another operator's NRFs, IP
 * literals), the last one the last identity. A second table varies how
 * many members are identities, or near misses of one, at 64 identities.
 *
 * Each cell: warm-up and calibration, then RUNS runs of about RUN_NS; the
 * median ns per request with min and max, and the median in TSC ticks.
 * "hs_scan alone" is the Hyperscan call nrf_via_scan() makes, on the same
 * database, scratch and line with a callback that only counts: the part
 * of the scan's cost that is Hyperscan's. The whole run takes about 25 s.
 *
 * Not a test: run by hand, pinned, e.g.
 *   taskset -c 1 build/bench/micro/via_scan_bench
 * Options:
 *   --ids N        only the cells with N identities (repeatable)
 *   --members M    only the cells with M members (repeatable)
 *   --runs R       runs per cell (default 7, at most 31)
 *   --no-hits      skip the second table
 *   --known K      with --calls: the last K members are identities
 *                  (default 1, as in the main table; 0 for none)
 *   --calls N      no timing: call nrf_via_scan() N times on each selected
 *                  main-table cell and exit, for instruction counts:
 *     valgrind --tool=callgrind --toggle-collect=nrf_via_scan \
 *       build/bench/micro/via_scan_bench --ids 64 --members 4 --calls 1000
 *                  (Ir of nrf_via_scan / N = instructions per call)
 * Output is Markdown (docs/benchmarks.md).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <hs/hs.h>

#include "nrf_err.h"
#include "nrf_via.h"
/* For "hs_scan alone": the Hyperscan database and scratch inside. */
#include "nrf_via_internal.h"

#define RUNS_MAX 31
#define RUN_NS 30000000ull /* ~30 ms per run */
#define MAX_IDS 1024
#define MAX_MEMBERS 64
#define VIA_CAP 8192

static const size_t id_counts[] = {1, 8, 64, 1024};
static const size_t member_counts[] = {1, 4, 16, 64};

/* Options (main()). */
static int runs = 7;
static bool want_ids[NRF_ARRAY_SIZE(id_counts)], want_members[NRF_ARRAY_SIZE(member_counts)];
static bool hits_too = true;
static unsigned long calls; /* --calls: instruction-count mode */
static size_t calls_known = 1; /* --known: identities among the members */

struct ident {
	char host[64];
	char key[72]; /* "host:port", lower case: (a) and (b) */
	size_t key_len;
	uint16_t port;
	enum nrf_via_kind kind;
	uint16_t peer;
};

struct outcome {
	uint32_t members;
	bool self;
	uint64_t peers[NRF_VIA_MAX_PEERS / 64];
};

static struct ident idents[MAX_IDS];

static void
mark(struct outcome *o, const struct ident *id)
{
	if (id->kind == NRF_VIA_SELF)
		o->self = true;
	else
		o->peers[id->peer >> 6] |= 1ull << (id->peer & 63);
}

/* Members: non-empty list elements, commas inside comments not counted. */
static uint32_t
count_members(const char *v, size_t len)
{
	uint32_t n = 0;
	bool content = false;
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		char c = v[i];

		if (c == '(')
			depth++;
		else if (c == ')' && depth > 0)
			depth--;
		if (depth > 0 || c == ')')
			content = true;
		else if (c == ',') {
			n += content;
			content = false;
		} else if (c != ' ' && c != '\t') {
			content = true;
		}
	}
	return n + content;
}

/* ---- (a) naive --------------------------------------------------------- */

struct naive {
	size_t n;
	char low[VIA_CAP];
};

static bool
sep_before(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

static bool
sep_after(char c)
{
	return c == ' ' || c == '\t' || c == ',' || c == '(';
}

static void
naive_run(struct naive *nv, const char *via, size_t len, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < len; i++) {
		char c = via[i];

		nv->low[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
	}
	o->members = count_members(via, len);
	for (size_t k = 0; k < nv->n; k++) {
		const struct ident *id = &idents[k];
		const char *p = nv->low;
		size_t left = len;

		while (left >= id->key_len) {
			const char *hit = memmem(p, left, id->key, id->key_len);
			size_t at, end;

			if (hit == NULL)
				break;
			at = (size_t)(hit - nv->low);
			end = at + id->key_len;
			if ((at == 0 || sep_before(nv->low[at - 1])) &&
					(end == len || sep_after(nv->low[end]))) {
				mark(o, id);
				break;
			}
			p = hit + 1;
			left = len - (at + 1);
		}
	}
}

/* ---- (b) parse + hash set ---------------------------------------------- */

#define HASH_SLOTS 4096 /* power of two, > 2 * MAX_IDS */

struct hashset {
	int16_t slot[HASH_SLOTS]; /* identity index, -1 empty */
};

static uint32_t
fnv1a(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static void
hash_build(struct hashset *hs, size_t n)
{
	memset(hs->slot, 0xff, sizeof(hs->slot));
	for (size_t k = 0; k < n; k++) {
		uint32_t h = fnv1a(idents[k].key, idents[k].key_len) & (HASH_SLOTS - 1);

		while (hs->slot[h] >= 0)
			h = (h + 1) & (HASH_SLOTS - 1);
		hs->slot[h] = (int16_t)k;
	}
}

static int
parse_hash_run(const struct hashset *hs, const struct nrf_slice *line,
	struct outcome *o)
{
	struct nrf_via_member m[MAX_MEMBERS];
	size_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = nrf_via_parse(line, 1, m, MAX_MEMBERS, &n);
	if (rc != 0)
		return rc;
	o->members = (uint32_t)n;
	for (size_t i = 0; i < n && i < MAX_MEMBERS; i++) {
		char key[300];
		size_t hl = m[i].host.len, kl;
		uint32_t h;
		int port = m[i].port;
		char digits[6];
		size_t nd = 0;

		if (port < 0 || hl == 0 || hl > 256)
			continue;
		if (m[i].host.p[hl - 1] == '.')
			hl--;
		for (size_t j = 0; j < hl; j++) {
			char c = m[i].host.p[j];

			key[j] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
		}
		kl = hl;
		key[kl++] = ':';
		do {
			digits[nd++] = (char)('0' + port % 10);
			port /= 10;
		} while (port > 0);
		while (nd > 0)
			key[kl++] = digits[--nd];
		h = fnv1a(key, kl) & (HASH_SLOTS - 1);
		while (hs->slot[h] >= 0) {
			const struct ident *id = &idents[hs->slot[h]];

			if (id->key_len == kl && memcmp(id->key, key, kl) == 0)
				mark(o, id);
			h = (h + 1) & (HASH_SLOTS - 1);
		}
	}
	return 0;
}

/* ---- (c) Hyperscan, one regex per identity with its separators --------- */

struct regex_db {
	hs_database_t *db;
	hs_scratch_t *scratch;
};

struct regex_ctx {
	struct outcome *o;
};

static int
regex_match(unsigned int id, unsigned long long from, unsigned long long to,
	unsigned int flags, void *ctx)
{
	(void)from;
	(void)to;
	(void)flags;
	mark(((struct regex_ctx *)ctx)->o, &idents[id]);
	return 0;
}

static int
regex_build(struct regex_db *r, size_t n)
{
	char (*pat)[256] = calloc(n, sizeof(*pat));
	const char **exprs = calloc(n, sizeof(*exprs));
	unsigned int *flags = calloc(n, sizeof(*flags)), *ids = calloc(n, sizeof(*ids));
	hs_compile_error_t *err = NULL;
	int rc = -1;

	if (pat == NULL || exprs == NULL || flags == NULL || ids == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *w = pat[i];

		w += sprintf(w, "(?:^|[ \\t,])");
		for (const char *h = idents[i].host; *h != '\0'; h++) {
			if (!((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9')))
				*w++ = '\\';
			*w++ = *h;
		}
		sprintf(w, "\\.?:0*%u(?:$|[ \\t,(])", idents[i].port);
		exprs[i] = pat[i];
		flags[i] = HS_FLAG_CASELESS;
		ids[i] = (unsigned int)i;
	}
	if (hs_compile_multi(exprs, flags, ids, (unsigned int)n, HS_MODE_BLOCK, NULL,
			&r->db, &err) != HS_SUCCESS) {
		fprintf(stderr, "regex compile: %s\n", err != NULL ? err->message : "?");
		hs_free_compile_error(err);
		goto out;
	}
	r->scratch = NULL;
	if (hs_alloc_scratch(r->db, &r->scratch) != HS_SUCCESS)
		goto out;
	rc = 0;
out:
	free(ids);
	free(flags);
	free(exprs);
	free(pat);
	return rc;
}

static void
regex_run(const struct regex_db *r, const char *via, size_t len, struct outcome *o)
{
	struct regex_ctx c = {o};

	memset(o, 0, sizeof(*o));
	o->members = count_members(via, len);
	if (hs_scan(r->db, via, (unsigned int)len, 0, r->scratch, regex_match, &c) != HS_SUCCESS)
		abort();
}

/* ---- harness ----------------------------------------------------------- */

enum method { M_HS, M_NAIVE, M_HASH, M_REGEX, M_HSRAW, M_COUNT };

struct cell {
	const struct nrf_via_db *db;
	struct nrf_via_scratch *s;
	struct naive *nv;
	const struct hashset *hs;
	const struct regex_db *rx;
	struct nrf_slice line;
};

static volatile uint64_t sink;

static void
run_once(enum method m, struct cell *c, struct outcome *o)
{
	struct nrf_via_result r;

	switch (m) {
	case M_HS:
		if (nrf_via_scan(c->db, c->s, &c->line, 1, &r) != 0)
			abort();
		o->members = r.members;
		o->self = r.self;
		memcpy(o->peers, r.peers, sizeof(o->peers));
		break;
	case M_NAIVE:
		naive_run(c->nv, c->line.p, c->line.len, o);
		break;
	case M_HASH:
		if (parse_hash_run(c->hs, &c->line, o) != 0)
			abort();
		break;
	default:
		regex_run(c->rx, c->line.p, c->line.len, o);
		break;
	}
}

static int
count_match(unsigned int id, unsigned long long from, unsigned long long to,
	unsigned int flags, void *ctx)
{
	(void)id;
	(void)from;
	(void)to;
	(void)flags;
	++*(uint64_t *)ctx;
	return 0;
}

/*
 * The loop the clock sees: one call per iteration and a data dependency
 * on its result, each method writing only what it produces itself.
 */
static uint64_t
loop(enum method m, struct cell *c, uint64_t iters)
{
	struct nrf_via_result r;
	struct outcome o;
	uint64_t acc = 0;

	switch (m) {
	case M_HS:
		for (uint64_t i = 0; i < iters; i++) {
			if (nrf_via_scan(c->db, c->s, &c->line, 1, &r) != 0)
				abort();
			acc += r.members + r.self + (r.peers[0] & 1);
		}
		break;
	case M_HSRAW:
		for (uint64_t i = 0; i < iters; i++)
			if (hs_scan(c->db->hs, c->line.p, (unsigned int)c->line.len, 0,
					c->s->hs, count_match, &acc) != HS_SUCCESS)
				abort();
		break;
	default:
		for (uint64_t i = 0; i < iters; i++) {
			run_once(m, c, &o);
			acc += o.members + o.self + (o.peers[0] & 1);
		}
		break;
	}
	return acc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct stat3 {
	double med, min, max, tsc;
};

/* Warm-up and calibration: double until one batch takes >= 3 ms; the
 * iterations that make one run of about RUN_NS. */
static uint64_t
calibrate(enum method m, struct cell *c)
{
	uint64_t iters = 1, t0, t;

	for (;;) {
		t0 = nrf_now_ns();
		sink += loop(m, c, iters);
		t = nrf_now_ns() - t0;
		if (t >= 3000000ull)
			break;
		iters *= 2;
	}
	return iters * RUN_NS / (t > 0 ? t : 1) + 1;
}

/*
 * The methods of one cell, their runs interleaved (run r of every method,
 * then run r + 1), so that a change of machine load between runs reaches
 * every method alike and the ratios hold.
 */
static void
measure_all(const enum method *ms, int n_ms, struct cell *c, struct stat3 *st)
{
	double ns[M_COUNT][RUNS_MAX], tsc[M_COUNT][RUNS_MAX];
	uint64_t iters[M_COUNT];

	for (int k = 0; k < n_ms; k++)
		iters[k] = calibrate(ms[k], c);
	for (int r = 0; r < runs; r++) {
		for (int k = 0; k < n_ms; k++) {
			uint64_t c0 = 0, c1 = 0, t0, t;

#if defined(__x86_64__)
			c0 = __rdtsc();
#endif
			t0 = nrf_now_ns();
			sink += loop(ms[k], c, iters[k]);
			t = nrf_now_ns() - t0;
#if defined(__x86_64__)
			c1 = __rdtsc();
#endif
			ns[k][r] = (double)t / (double)iters[k];
			tsc[k][r] = (double)(c1 - c0) / (double)iters[k];
		}
	}
	for (int k = 0; k < n_ms; k++) {
		struct stat3 *o = &st[ms[k]];

		qsort(ns[k], (size_t)runs, sizeof(ns[k][0]), cmp_double);
		qsort(tsc[k], (size_t)runs, sizeof(tsc[k][0]), cmp_double);
		o->med = ns[k][runs / 2];
		o->min = ns[k][0];
		o->max = ns[k][runs - 1];
		o->tsc = tsc[k][runs / 2];
	}
}

/* A hop nrfwd does not know: an SCP, another operator's NRF, an IP. */
static size_t
add_stranger(char *buf, size_t cap, size_t w, size_t i)
{
	const char *sep = w > 0 ? ", " : "";

	if (i % 3 == 0)
		return (size_t)snprintf(buf + w, cap - w, "%s2.0 scp-%02zu.region%zu.example.net:443",
			sep, i, i % 3 + 1);
	if (i % 3 == 1)
		return (size_t)snprintf(buf + w, cap - w, "%sHTTP/2.0 nrf-%04zu.seg9.example.org:8080",
			sep, 5000 + i);
	return (size_t)snprintf(buf + w, cap - w, "%s2.0 192.0.2.%zu:8080", sep, i % 250 + 1);
}

/* @p members members: strangers, then the last @p known identities
 * (the last identity last). */
static size_t
make_via(char *buf, size_t cap, size_t members, size_t n_ids, size_t known)
{
	size_t w = 0;

	for (size_t i = 0; i + known < members; i++)
		w += add_stranger(buf, cap, w, i);
	for (size_t k = known; k > 0; k--)
		w += (size_t)snprintf(buf + w, cap - w, "%sHTTP/2.0 %s:8080", w > 0 ? ", " : "",
			idents[n_ids - k].host);
	return w;
}

static void
make_identities(void)
{
	for (size_t i = 0; i < MAX_IDS; i++) {
		struct ident *id = &idents[i];

		snprintf(id->host, sizeof(id->host), "nrf-%04zu.seg%zu.example.com", i, i % 4 + 1);
		id->port = 8080;
		id->key_len = (size_t)snprintf(id->key, sizeof(id->key), "%s:%u", id->host, id->port);
		id->kind = i == 0 ? NRF_VIA_SELF : NRF_VIA_PEER;
		id->peer = i == 0 ? 0 : (uint16_t)(i - 1);
	}
}

static bool
same(const struct outcome *a, const struct outcome *b)
{
	return a->members == b->members && a->self == b->self &&
		memcmp(a->peers, b->peers, sizeof(a->peers)) == 0;
}

struct setup {
	struct nrf_via_db *db;
	struct nrf_via_scratch *s;
	struct regex_db rx;
};

static int
setup_ids(struct setup *su, size_t n, struct naive *nv, struct hashset *hs, bool regex)
{
	struct nrf_via_identity vids[MAX_IDS];
	int err;

	for (size_t i = 0; i < n; i++) {
		vids[i].host = idents[i].host;
		vids[i].port = idents[i].port;
		vids[i].kind = idents[i].kind;
		vids[i].peer = idents[i].peer;
	}
	su->db = nrf_via_db_create(vids, n, &err);
	if (su->db == NULL) {
		fprintf(stderr, "db_create: %s\n", nrf_strerror(err));
		return -1;
	}
	su->s = nrf_via_scratch_create(su->db, &err);
	if (su->s == NULL) {
		fprintf(stderr, "scratch_create: %s\n", nrf_strerror(err));
		return -1;
	}
	nv->n = n;
	hash_build(hs, n);
	memset(&su->rx, 0, sizeof(su->rx));
	return regex ? regex_build(&su->rx, n) : 0;
}

static void
teardown(struct setup *su)
{
	nrf_via_scratch_free(su->s);
	nrf_via_db_free(su->db);
	hs_free_scratch(su->rx.scratch);
	hs_free_database(su->rx.db);
}

/* Every method must agree, and with what the value holds. */
static bool
check(struct cell *c, size_t members, const struct outcome *want, int n_methods)
{
	for (int k = 0; k < n_methods; k++) {
		struct outcome o;

		run_once((enum method)k, c, &o);
		if (!same(&o, want) || o.members != members)
			return false;
	}
	return true;
}

/* --calls: nrf_via_scan() on the cell, @p calls times, nothing else. */
static void
call_only(struct cell *c)
{
	struct nrf_via_result r;

	for (unsigned long i = 0; i < calls; i++) {
		if (nrf_via_scan(c->db, c->s, &c->line, 1, &r) != 0)
			abort();
		sink += r.members;
	}
}

static int
main_table(struct naive *nv, struct hashset *hs, char *via)
{
	static const enum method all[] = {M_HS, M_HSRAW, M_NAIVE, M_HASH, M_REGEX};

	if (calls == 0) {
		printf("| identities | members | bytes | nrf_via_scan ns (min-max) | TSC ticks |"
			" hs_scan alone ns | (a) naive ns (min-max) | (b) parse+hash ns (min-max) |"
			" (c) hs regex ns (min-max) | (a)/scan | (b)/scan | (c)/scan |\n");
		printf("|---:|---:|---:|---|---:|---:|---|---|---|---:|---:|---:|\n");
	}
	for (size_t a = 0; a < NRF_ARRAY_SIZE(id_counts); a++) {
		size_t n = id_counts[a];
		struct setup su;

		if (!want_ids[a])
			continue;
		if (setup_ids(&su, n, nv, hs, calls == 0) != 0)
			return 1;
		for (size_t b = 0; b < NRF_ARRAY_SIZE(member_counts); b++) {
			size_t m = member_counts[b];
			struct cell c = {su.db, su.s, nv, hs, &su.rx, {via, 0}};
			struct outcome want = {0};
			struct stat3 st[M_COUNT];

			if (!want_members[b])
				continue;
			size_t known = calls > 0 ? NRF_MIN(calls_known, NRF_MIN(m, n)) : 1;

			c.line.len = make_via(via, VIA_CAP, m, n, known);
			want.members = (uint32_t)m;
			for (size_t k = 1; k <= known; k++)
				mark(&want, &idents[n - k]);
			if (!check(&c, m, &want, calls == 0 ? M_REGEX + 1 : M_HS + 1)) {
				fprintf(stderr, "methods disagree at %zu ids, %zu members\n", n, m);
				return 1;
			}
			if (calls > 0) {
				call_only(&c);
				continue;
			}
			measure_all(all, (int)NRF_ARRAY_SIZE(all), &c, st);
			printf("| %zu | %zu | %zu | %.0f (%.0f-%.0f) | %.0f | %.0f |"
				" %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) |"
				" %.1fx | %.1fx | %.1fx |\n",
				n, m, c.line.len,
				st[M_HS].med, st[M_HS].min, st[M_HS].max, st[M_HS].tsc,
				st[M_HSRAW].med,
				st[M_NAIVE].med, st[M_NAIVE].min, st[M_NAIVE].max,
				st[M_HASH].med, st[M_HASH].min, st[M_HASH].max,
				st[M_REGEX].med, st[M_REGEX].min, st[M_REGEX].max,
				st[M_NAIVE].med / st[M_HS].med, st[M_HASH].med / st[M_HS].med,
				st[M_REGEX].med / st[M_HS].med);
			fflush(stdout);
		}
		teardown(&su);
	}
	return 0;
}

/*
 * At 64 identities, 4 members: how the cost moves with the number of
 * members that are identities (each one is a Hyperscan match and a
 * confirm), and with near misses (a stranger that shares the literal of
 * an identity: same host, other port).
 */
static int
hits_table(struct naive *nv, struct hashset *hs, char *via)
{
	static const struct {
		const char *what;
		size_t known, near;
	} rows[] = {
		{"0 identities", 0, 0}, {"1 identity (last)", 1, 0}, {"2 identities", 2, 0},
		{"4 identities", 4, 0}, {"3 near misses + 1 identity", 1, 3},
	};
	const size_t n = 64, m = 4;
	struct setup su;

	if (setup_ids(&su, n, nv, hs, false) != 0)
		return 1;
	printf("\n| 64 identities, 4 members | bytes | nrf_via_scan ns (min-max) | TSC ticks |"
		" (b) parse+hash ns (min-max) | (b)/scan |\n");
	printf("|---|---:|---|---:|---|---:|\n");
	for (size_t r = 0; r < NRF_ARRAY_SIZE(rows); r++) {
		struct cell c = {su.db, su.s, nv, hs, NULL, {via, 0}};
		struct outcome want = {0};
		struct stat3 st_hs, st_hash;
		size_t w = 0;

		for (size_t i = 0; i < m; i++) {
			const char *sep = w > 0 ? ", " : "";

			if (i >= m - rows[r].known) {
				const struct ident *id = &idents[n - 1 - i];

				w += (size_t)snprintf(via + w, VIA_CAP - w, "%s2.0 %s:8080", sep, id->host);
				mark(&want, id);
			} else if (i < rows[r].near) {
				w += (size_t)snprintf(via + w, VIA_CAP - w, "%s2.0 %s:9090", sep,
					idents[10 + i].host);
			} else {
				w += add_stranger(via, VIA_CAP, w, i);
			}
		}
		c.line.len = w;
		want.members = (uint32_t)m;
		if (!check(&c, m, &want, M_HASH + 1)) {
			fprintf(stderr, "methods disagree: %s\n", rows[r].what);
			return 1;
		}
		{
			static const enum method two[] = {M_HS, M_HASH};
			struct stat3 st[M_COUNT];

			measure_all(two, 2, &c, st);
			st_hs = st[M_HS];
			st_hash = st[M_HASH];
		}
		printf("| %s | %zu | %.0f (%.0f-%.0f) | %.0f | %.0f (%.0f-%.0f) | %.1fx |\n",
			rows[r].what, w, st_hs.med, st_hs.min, st_hs.max, st_hs.tsc,
			st_hash.med, st_hash.min, st_hash.max, st_hash.med / st_hs.med);
		fflush(stdout);
	}
	teardown(&su);
	return 0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: via_scan_bench [--ids N]... [--members M]... [--runs R]"
		" [--no-hits] [--calls N [--known K]]\n");
	return 2;
}

static bool
pick(const size_t *vals, size_t n_vals, bool *want, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	for (size_t i = 0; *end == '\0' && i < n_vals; i++) {
		if (vals[i] == v) {
			want[i] = true;
			return true;
		}
	}
	fprintf(stderr, "via_scan_bench: no such cell value: %s\n", arg);
	return false;
}

int
main(int argc, char **argv)
{
	static struct naive nv;
	static struct hashset hs;
	static char via[VIA_CAP];
	uint64_t t_start = nrf_now_ns();
	bool any_ids = false, any_members = false;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--no-hits") == 0) {
			hits_too = false;
			continue;
		}
		if (v == NULL)
			return usage();
		i++;
		if (strcmp(o, "--ids") == 0) {
			if (!pick(id_counts, NRF_ARRAY_SIZE(id_counts), want_ids, v))
				return 2;
			any_ids = true;
		} else if (strcmp(o, "--members") == 0) {
			if (!pick(member_counts, NRF_ARRAY_SIZE(member_counts), want_members, v))
				return 2;
			any_members = true;
		} else if (strcmp(o, "--runs") == 0) {
			runs = atoi(v);
			if (runs < 1 || runs > RUNS_MAX)
				return usage();
		} else if (strcmp(o, "--known") == 0) {
			calls_known = strtoul(v, NULL, 10);
		} else if (strcmp(o, "--calls") == 0) {
			calls = strtoul(v, NULL, 10);
			if (calls == 0)
				return usage();
		} else {
			return usage();
		}
	}
	for (size_t i = 0; i < NRF_ARRAY_SIZE(want_ids); i++)
		want_ids[i] = want_ids[i] || !any_ids;
	for (size_t i = 0; i < NRF_ARRAY_SIZE(want_members); i++)
		want_members[i] = want_members[i] || !any_members;
	/* The second table is a fixed 64 x 4 cell, not one to select. */
	hits_too = hits_too && calls == 0 && !any_ids && !any_members;

	make_identities();
	if (main_table(&nv, &hs, via) != 0 || (hits_too && hits_table(&nv, &hs, via) != 0))
		return 1;
	if (calls == 0)
		fprintf(stderr, "%d runs per cell; total %.1f s\n", runs,
			(double)(nrf_now_ns() - t_start) / 1e9);
	return 0;
}
