/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runtime.limits.perClient (docs/config.md "Per-client limits", decision
 * 0055): one client that floods, or loops in its own retries, is answered
 * 429 NRF_Client_Limit before it takes every stream of a worker and queues
 * toward an upstream.
 *
 * Each worker keeps its own table of clients (rt_int.h): nothing is shared
 * or locked, and a limit applies per worker (a client whose connections
 * land on several workers gets it on each). A client is its IP address,
 * or with keyBy "nfInstance" the NF instance id of its User-Agent when
 * that is well-formed. The entry of a connection's address is looked up
 * once and cached in the connection (nrf_h2_conn_word()): later requests
 * on it check a stamp instead of hashing.
 *
 * The rate is a token bucket of burst tokens filled at ratePerSecond,
 * kept as one timestamp per client (GCRA, the "virtual scheduling" form
 * of a token bucket: the theoretical arrival time of the next request; a
 * request conforms while that time is at most (burst - 1) intervals
 * ahead). No division per request; the wait until the next token is the
 * distance past that tolerance, which gives Retry-After.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

#define NS_PER_S 1000000000ull
#define TAG_SLOT_BITS 16

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

static void
stats_publish(struct rt_limit *l)
{
	if (l->st == NULL)
		return;
	__atomic_store_n(&l->st->clients_tracked, (uint64_t)l->used, __ATOMIC_RELAXED);
	__atomic_store_n(&l->st->client_evictions, l->evictions, __ATOMIC_RELAXED);
}

int
rt_limit_init(struct rt_limit *l, uint32_t slots, uint64_t seed)
{
	uint32_t n = 1;

	memset(l, 0, sizeof(*l));
	if (slots == 0 || slots > (1u << TAG_SLOT_BITS))
		return NRF_EINVAL;
	while (n < 2 * slots)
		n <<= 1;
	l->ent = calloc(slots, sizeof(*l->ent));
	l->heads = calloc(n, sizeof(*l->heads));
	if (l->ent == NULL || l->heads == NULL) {
		rt_limit_fini(l);
		return NRF_ENOMEM;
	}
	l->slots = slots;
	l->n_heads = n;
	l->seed = seed | 1;
	return 0;
}

void
rt_limit_fini(struct rt_limit *l)
{
	free(l->ent);
	free(l->heads);
	l->ent = NULL;
	l->heads = NULL;
	l->slots = 0;
	l->used = 0;
}

void
rt_limit_clear(struct rt_limit *l)
{
	if (l->ent == NULL)
		return;
	memset(l->ent, 0, (size_t)l->slots * sizeof(*l->ent));
	memset(l->heads, 0, (size_t)l->n_heads * sizeof(*l->heads));
	l->used = 0;
	l->newest = 0;
	l->oldest = 0;
	/* l->stamp goes on: a tag from before never matches again */
	stats_publish(l);
}

void
rt_limit_set(struct rt_limit *l, const struct nrf_cfg_client_limits *c)
{
	uint64_t burst = c->burst != 0 ? c->burst : c->rate_per_second;

	if (c->key_by != l->key_by)
		rt_limit_clear(l);
	l->key_by = c->key_by;
	l->max_streams = c->max_streams;
	if (c->rate_per_second == 0) {
		l->interval_ns = 0;
		l->tolerance_ns = 0;
		return;
	}
	l->interval_ns = NS_PER_S / c->rate_per_second;
	if (l->interval_ns == 0)
		l->interval_ns = 1;
	l->tolerance_ns = (burst - 1) * l->interval_ns;
}

static uint32_t
key_hash(const struct rt_limit *l, uint8_t kind, const uint8_t *b)
{
	uint64_t x, y, h;

	memcpy(&x, b, 8);
	memcpy(&y, b + 8, 8);
	/* Seeded per table: clients cannot aim their keys at one chain
	 * without knowing the seed. */
	h = (x ^ l->seed) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	h = (h ^ y ^ kind) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 32;
	return (uint32_t)h & (l->n_heads - 1);
}

static void
lru_unlink(struct rt_limit *l, struct rt_limit_ent *e)
{
	if (e->newer != 0)
		l->ent[e->newer - 1].older = e->older;
	else
		l->newest = e->older;
	if (e->older != 0)
		l->ent[e->older - 1].newer = e->newer;
	else
		l->oldest = e->newer;
	e->newer = 0;
	e->older = 0;
}

static void
lru_push(struct rt_limit *l, struct rt_limit_ent *e)
{
	uint32_t me = (uint32_t)(e - l->ent) + 1;

	e->newer = 0;
	e->older = l->newest;
	if (l->newest != 0)
		l->ent[l->newest - 1].newer = me;
	l->newest = me;
	if (l->oldest == 0)
		l->oldest = me;
}

void
rt_limit_touch(struct rt_limit *l, struct rt_limit_ent *e)
{
	if (l->newest == (uint32_t)(e - l->ent) + 1)
		return;
	lru_unlink(l, e);
	lru_push(l, e);
}

uint64_t
rt_limit_tag(const struct rt_limit *l, const struct rt_limit_ent *e)
{
	return (e->stamp << TAG_SLOT_BITS) | (uint64_t)(e - l->ent);
}

struct rt_limit_ent *
rt_limit_tagged(const struct rt_limit *l, uint64_t tag)
{
	uint32_t slot = (uint32_t)(tag & ((1u << TAG_SLOT_BITS) - 1));
	struct rt_limit_ent *e;

	if (tag == 0 || slot >= l->used)
		return NULL;
	e = &l->ent[slot];
	return e->stamp == tag >> TAG_SLOT_BITS ? e : NULL;
}

/* Take the entry of the client seen least recently out of its chain. */
static struct rt_limit_ent *
evict_oldest(struct rt_limit *l)
{
	struct rt_limit_ent *e = &l->ent[l->oldest - 1];
	uint32_t me = (uint32_t)(e - l->ent) + 1;
	uint32_t *p = &l->heads[key_hash(l, e->kind, e->key)];

	while (*p != 0 && *p != me)
		p = &l->ent[*p - 1].hnext;
	if (*p == me)
		*p = e->hnext;
	lru_unlink(l, e);
	l->evictions++;
	return e;
}

struct rt_limit_ent *
rt_limit_find(struct rt_limit *l, const struct rt_limit_key *k, uint64_t *word)
{
	uint32_t h = key_hash(l, k->kind, k->b);
	uint32_t i;
	struct rt_limit_ent *e;

	for (i = l->heads[h]; i != 0; i = e->hnext) {
		e = &l->ent[i - 1];
		if (e->kind == k->kind && memcmp(e->key, k->b, sizeof(e->key)) == 0) {
			rt_limit_touch(l, e);
			if (word != NULL)
				*word = rt_limit_tag(l, e);
			return e;
		}
	}
	if (l->used < l->slots)
		e = &l->ent[l->used++];
	else
		e = evict_oldest(l);
	memcpy(e->key, k->b, sizeof(e->key));
	e->kind = k->kind;
	e->streams = 0;
	e->tat = 0; /* a full bucket */
	/* 48 bits of stamps: a new key every nanosecond for three days */
	e->stamp = ++l->stamp & ((1ull << (64 - TAG_SLOT_BITS)) - 1);
	e->hnext = l->heads[h];
	l->heads[h] = (uint32_t)(e - l->ent) + 1;
	lru_push(l, e);
	stats_publish(l);
	if (word != NULL)
		*word = rt_limit_tag(l, e);
	return e;
}

uint32_t
rt_limit_take(const struct rt_limit *l, struct rt_limit_ent *e, uint64_t now_ns)
{
	uint64_t tat = e->tat > now_ns ? e->tat : now_ns;
	uint64_t wait;

	if (tat - now_ns <= l->tolerance_ns) {
		e->tat = tat + l->interval_ns;
		return 0;
	}
	wait = (tat - now_ns - l->tolerance_ns + NS_PER_S - 1) / NS_PER_S;
	return wait < 1 ? 1 : wait > UINT32_MAX ? UINT32_MAX : (uint32_t)wait;
}

void
rt_limit_release(struct rt_limit *l, uint64_t tag)
{
	struct rt_limit_ent *e = rt_limit_tagged(l, tag);

	if (e != NULL && e->streams > 0)
		e->streams--;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */

bool
rt_limit_key_addr(const char *peer, struct rt_limit_key *k)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char host[64];
	const char *end;
	size_t n;
	uint8_t b[16];

	if (peer == NULL)
		return false;
	if (peer[0] == '[') {
		end = strchr(peer, ']');
		peer++;
	} else {
		end = strrchr(peer, ':');
	}
	if (end == NULL || (n = (size_t)(end - peer)) == 0 || n >= sizeof(host))
		return false;
	memcpy(host, peer, n);
	host[n] = '\0';
	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, host, b) == 1) {
		k->kind = RT_LK_V4;
		memcpy(k->b, b, 4);
		return true;
	}
	if (inet_pton(AF_INET6, host, b) != 1)
		return false;
	if (memcmp(b, mapped, sizeof(mapped)) == 0) {
		k->kind = RT_LK_V4;
		memcpy(k->b, b + 12, 4);
		return true;
	}
	k->kind = RT_LK_V6;
	memcpy(k->b, b, 16);
	return true;
}

/*
 * TS 29.500 §5.2.2.2: User-Agent of an NF is "<NF type>-<NF instance id>"
 * with an optional " <FQDN>" after it; the instance id is a UUID (TS 29.571
 * NfInstanceId, 8-4-4-4-12 hex digits). The NF type (TS 29.510 NFType:
 * "AMF", "5G_EIR", ...) is letters, digits, '_' and '-'. Anything else
 * (a library's "curl/8.5.0", an id that is no UUID) is not an NF's.
 */
bool
rt_limit_key_ua(struct nrf_slice ua, struct rt_limit_key *k)
{
	const char *p = ua.p, *u;
	size_t n = ua.len, tok = 0, i, j = 0;
	uint8_t b[16];

	if (p == NULL)
		return false;
	while (n > 0 && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (tok < n && p[tok] != ' ' && p[tok] != '\t')
		tok++;
	if (tok < 36 + 2)
		return false;
	u = p + tok - 36;
	if (u[-1] != '-')
		return false;
	for (i = 0; i < tok - 37; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '_' || c == '-'))
			return false;
	}
	/* 8-4-4-4-12: every group has an even length, so no pair of digits
	 * straddles a dash */
	for (i = 0; i < 36;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (u[i++] != '-')
				return false;
			continue;
		}
		hi = nrf_hexval(u[i]);
		lo = nrf_hexval(u[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		b[j++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	memset(k, 0, sizeof(*k));
	k->kind = RT_LK_NF;
	memcpy(k->b, b, sizeof(b));
	return true;
}

/* ------------------------------------------------------------------------ */
/* Worker side                                                               */

void
rt_limit_conf(struct rt_worker *w)
{
	const struct nrf_cfg_client_limits *c = &w->snap->cfg->rt.per_client;
	bool on = c->max_streams != 0 || c->rate_per_second != 0;
	int rc;

	w->lim_cur = 0;
	if (on && w->lim == NULL) {
		struct rt_limit *l = malloc(sizeof(*l));

		rc = l != NULL ? rt_limit_init(l, RT_LIMIT_SLOTS,
					 nrf_now_ns() ^ ((uint64_t)(uintptr_t)l << 17) ^ w->id)
			       : NRF_ENOMEM;
		if (rc != 0) {
			free(l);
			NRF_LOG_RL(ERR, MOD,
				"worker %u: no memory for the per-client limits: "
				"runtime.limits.perClient is off in this worker",
				w->id);
			w->lim_on = false;
			return;
		}
		l->st = &w->st;
		/* the table's keyBy before the first rt_limit_set() */
		l->key_by = c->key_by;
		w->lim = l;
	}
	if (w->lim != NULL)
		rt_limit_set(w->lim, c);
	w->lim_on = on;
}

void
rt_limit_free(struct rt_worker *w)
{
	if (w->lim == NULL)
		return;
	rt_limit_fini(w->lim);
	free(w->lim);
	w->lim = NULL;
	w->lim_on = false;
}

/* The entry of the client of @p st; NULL when it has no usable key (the
 * transport could not tell the address): such a client is not limited. */
static struct rt_limit_ent *
client_entry(struct rt_limit *l, struct nrf_h2_stream *st)
{
	uint64_t *word = nrf_h2_conn_word(st->conn);
	struct rt_limit_ent *e = rt_limit_tagged(l, *word);
	struct rt_limit_key k;

	if (l->key_by == NRF_KEY_BY_NF_INSTANCE &&
		rt_limit_key_ua(nrf_h2_msg_get(&st->msg, "user-agent"), &k)) {
		if (e != NULL && e->kind == RT_LK_NF && memcmp(e->key, k.b, sizeof(e->key)) == 0) {
			rt_limit_touch(l, e);
			return e;
		}
		return rt_limit_find(l, &k, word);
	}
	/* A connection has one address: an address entry cached in it is
	 * its own. */
	if (e != NULL && e->kind != RT_LK_NF) {
		rt_limit_touch(l, e);
		return e;
	}
	if (!rt_limit_key_addr(nrf_h2_conn_peer(st->conn), &k))
		return NULL;
	return rt_limit_find(l, &k, word);
}

/* Decimal digits of @p v ending at @p end (exclusive); the first digit. */
static char *
digits(char *end, uint64_t v)
{
	char *p = end;

	*--p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return p;
}

/* 429 (the configured answer of NRF_Client_Limit) on @p st, counted and
 * logged like every answer given at once. */
static void
refuse(struct rt_worker *w, struct nrf_h2_stream *st, enum nrf_rt_limit why, uint32_t retry)
{
	static const struct nrf_fwd_problem none = {429, "", 0, "", ""};
	const struct nrf_fwd_problem *p =
		nrf_fwd_table_problem(w->snap->table, NRF_MODE_FORWARDING, NRF_COND_CLIENT_LIMIT);
	enum nrf_fwd_op op = nrf_fwd_classify(st->msg.method, st->msg.path, nrf_slice_str(""));
	struct nrf_h2_hdr h[5];
	char clen[24], ra[24];
	const char *rid = rt_rid_cur(w);
	size_t n = 0;

	if (p == NULL)
		p = &none;
	RT_STAT(w, answered_error, 1);
	RT_STAT(w, client_limited[why], 1);
	NRF_LOG_RL(INFO, MOD,
		"worker %u: client %s over its %s limit (runtime.limits.perClient): "
		"%u",
		w->id, nrf_h2_conn_peer(st->conn),
		why == NRF_RT_LIMIT_RATE ? "ratePerSecond" : "maxStreams", p->status);
	h[n].name = nrf_slice_str("content-type");
	h[n++].value = nrf_slice_str("application/problem+json");
	h[n].name = nrf_slice_str("content-length");
	h[n++].value = nrf_slice_str(digits(clen + sizeof(clen), p->body_len));
	/* A retryAfter configured for the condition wins; else the client's
	 * bucket says when a token will be there (maxStreams: 1 s). */
	h[n].name = nrf_slice_str("retry-after");
	h[n++].value = nrf_slice_str(p->retry_after != NULL && p->retry_after[0] != '\0'
					     ? p->retry_after
					     : digits(ra + sizeof(ra), retry));
	if (p->location != NULL && p->location[0] != '\0') {
		h[n].name = nrf_slice_str("location");
		h[n++].value = nrf_slice_str(p->location);
	}
	if (rid[0] != '\0') {
		h[n].name = nrf_slice_str("x-request-id");
		h[n++].value = nrf_slice_str(rid);
	}
	if (nrf_h2_respond_inline(st, p->status, h, n, p->body, p->body_len) != 0)
		nrf_h2_reset(st, NRF_H2_INTERNAL_ERROR);
	rt_count_answer(w, op, NRF_RT_OUT_CLIENT_LIMITED);
	rt_alog_once(w, st, op, NRF_RT_OUT_CLIENT_LIMITED, 0);
}

bool
rt_limit_admit(struct rt_worker *w, struct nrf_h2_stream *st)
{
	struct rt_limit *l = w->lim;
	struct rt_limit_ent *e = client_entry(l, st);
	uint32_t retry;

	w->lim_cur = 0;
	if (e == NULL)
		return false;
	if (l->max_streams != 0 && e->streams >= l->max_streams) {
		refuse(w, st, NRF_RT_LIMIT_STREAMS, 1);
		return true;
	}
	if (l->interval_ns != 0 && (retry = rt_limit_take(l, e, rt_now(w))) != 0) {
		refuse(w, st, NRF_RT_LIMIT_RATE, retry);
		return true;
	}
	if (l->max_streams != 0) {
		/* held from now on: given back when the stream closes, or at
		 * once when no transaction takes it (rt_limit_undo()) */
		e->streams++;
		w->lim_cur = rt_limit_tag(l, e);
	}
	return false;
}

void
rt_limit_undo(struct rt_worker *w)
{
	if (w->lim != NULL)
		rt_limit_release(w->lim, w->lim_cur);
	w->lim_cur = 0;
}

void
rt_limit_done(struct rt_worker *w, struct rt_xact *x)
{
	if (w->lim != NULL)
		rt_limit_release(w->lim, x->lim);
	x->lim = 0;
}
