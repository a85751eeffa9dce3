/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loop events: which paths looped, per worker (docs/behaviour.md, "How to
 * find a loop in production"; decision 0061).
 *
 * Each worker owns a table of NRF_RT_LOOP_ENTRIES entries, allocated with
 * the worker, and an open-addressing index over them. An entry is keyed by
 * a 64-bit hash of the event's kind, the skipped peer, the snapshot and the
 * Via bytes as received: the common event (the same loop again) costs that
 * hash, one probe and two relaxed stores, with no parse. Only a key not
 * seen before parses the Via and normalises each member as identities
 * compare; two spellings of one path are then two entries of the worker,
 * merged by their normalised text when the table is read
 * (nrf_rt_loops_merge(), which also merges the workers). A full table
 * gives the place of its least recently seen entry to the new one and
 * counts a drop.
 *
 * The control thread reads without stopping the worker: the count and the
 * last time are single-writer values read with relaxed loads (as every
 * counter of lib/rt); the rest of an entry changes only when the entry is
 * (re)filled, under a sequence counter (odd while written) that the reader
 * checks before and after its copy.
 */
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "rt_int.h"

/* Index slots: a power of two, at least twice the entries. */
#define RT_LOOP_IDX 256
/* Members of one Via field line looked at (nrfwd appends one per line). */
#define RT_LOOP_LINE_MEMBERS 32

struct rt_loop_slot {
	_Atomic uint32_t seq;     /* odd while the worker (re)fills it */
	uint64_t key;
	struct nrf_rt_loop e;     /* count, last_ns: relaxed single-writer */
};

struct rt_loops {
	uint32_t n_used;          /* slots filled (relaxed; they never empty) */
	uint16_t idx[RT_LOOP_IDX]; /* slot + 1 by key; 0: empty */
	struct rt_loop_slot slot[NRF_RT_LOOP_ENTRIES];
};

static const char *const kind_names[NRF_RT_LOOP_KINDS] = {
	[NRF_RT_LOOP_DETECTED] = "detected",
	[NRF_RT_LOOP_PREVENTED] = "prevented",
	[NRF_RT_LOOP_HOP_LIMIT] = "hop-limit",
};

const char *
nrf_rt_loop_kind_name(enum nrf_rt_loop_kind k)
{
	return (unsigned int)k < NRF_RT_LOOP_KINDS ? kind_names[k] : "?";
}

int
rt_loops_create(struct rt_worker *w)
{
	w->loops = calloc(1, sizeof(*w->loops));
	return w->loops != NULL ? 0 : NRF_ENOMEM;
}

size_t
rt_loops_bytes(void)
{
	return sizeof(struct rt_loops);
}

void
rt_loops_free(struct rt_worker *w)
{
	free(w->loops);
	w->loops = NULL;
}

/* ------------------------------------------------------------------------ */
/* Worker side                                                               */

static inline uint64_t
mix(uint64_t h)
{
	h ^= h >> 32;
	h *= UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
}

/* One step of the hash: xor, rotate, multiply (three operations a word). */
static inline uint64_t
step(uint64_t h, uint64_t v)
{
	h ^= v;
	h = (h << 31) | (h >> 33);
	return h * UINT64_C(0xc2b2ae3d27d4eb4f);
}

/*
 * The Via bytes, eight at a time; a line's last word overlaps the one
 * before it rather than being assembled byte by byte (the instructions
 * of this hash are most of what a 508 pays for its loop event).
 */
static inline uint64_t
hash_lines(const struct nrf_slice *lines, size_t n)
{
	uint64_t h = UINT64_C(0x6a09e667f3bcc908) ^ n;

	for (size_t i = 0; i < n; i++) {
		const char *p = lines[i].p;
		size_t len = lines[i].len, k = 0;

		if (NRF_LIKELY(len >= 8)) {
			/* two words an iteration: a third fewer instructions */
			for (; k + 16 <= len; k += 16) {
				h = step(h, nrf_load64(p + k));
				h = step(h, nrf_load64(p + k + 8));
			}
			if (k + 8 <= len) {
				h = step(h, nrf_load64(p + k));
				k += 8;
			}
			if (k < len)
				h = step(h, nrf_load64(p + len - 8));
		} else {
			uint64_t v = 0;

			for (; k < len; k++)
				v = (v << 8) | (unsigned char)p[k];
			h = step(h, v);
		}
		h = step(h, len);
	}
	return h;
}

/* Index slot of @p key, or of the empty slot where it would go. */
static inline uint32_t
idx_find(const struct rt_loops *t, uint64_t key)
{
	uint32_t i = (uint32_t)key & (RT_LOOP_IDX - 1);

	while (t->idx[i] != 0 && t->slot[t->idx[i] - 1].key != key)
		i = (i + 1) & (RT_LOOP_IDX - 1);
	return i;
}

/* Take the key of slot @p s out of the index (backward-shift deletion). */
static void
idx_remove(struct rt_loops *t, uint32_t s)
{
	uint32_t i = idx_find(t, t->slot[s].key), j = i;

	if (t->idx[i] != s + 1)
		return;
	for (;;) {
		uint32_t home;

		t->idx[i] = 0;
		for (;;) {
			j = (j + 1) & (RT_LOOP_IDX - 1);
			if (t->idx[j] == 0)
				return;
			home = (uint32_t)t->slot[t->idx[j] - 1].key & (RT_LOOP_IDX - 1);
			/* move j back to i unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->idx[i] = t->idx[j];
		i = j;
	}
}

static void
copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = src != NULL ? strnlen(src, cap - 1) : 0;

	if (n > 0)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * The path of @p lines into @p e: members' identities, oldest first, the
 * last ones that fit when the whole does not. Built from the end of a
 * buffer backwards, then moved to its start.
 */
static void
path_fill(struct nrf_rt_loop *e, const struct nrf_slice *lines, size_t n_lines)
{
	char buf[NRF_RT_LOOP_PATH_MAX];
	size_t pos = sizeof(buf) - 1;
	uint16_t hops = 0;
	bool full = false;

	buf[pos] = '\0';
	for (size_t l = n_lines; l-- > 0 && !full;) {
		struct nrf_via_member m[RT_LOOP_LINE_MEMBERS];
		size_t nm = 0;
		int rc = nrf_via_parse(&lines[l], 1, m, RT_LOOP_LINE_MEMBERS, &nm);

		if (rc != 0 || nm > RT_LOOP_LINE_MEMBERS) {
			/* the scan accepts what the parser refuses (a member
			 * without received-by); such a line is one "?" */
			if (pos < 2) {
				full = true;
				break;
			}
			buf[--pos] = '?';
			buf[--pos] = ' ';
			hops++;
			continue;
		}
		for (size_t k = nm; k-- > 0;) {
			char id[300];
			int len = nrf_via_member_identity(&m[k], id, sizeof(id));

			if (len < 0) {
				id[0] = '?';
				id[1] = '\0';
				len = 1;
			}
			if ((size_t)len + 1 > pos) {
				full = true;
				break;
			}
			pos -= (size_t)len;
			memcpy(buf + pos, id, (size_t)len);
			buf[--pos] = ' ';
			hops++;
		}
	}
	/* buf[pos] is the separator before the oldest member kept (or the
	 * NUL when there is none) */
	if (buf[pos] == ' ')
		pos++;
	memcpy(e->path, buf + pos, sizeof(buf) - pos);
	e->hops = hops;
	e->truncated = full;
}

/* A key not in the table: fill a slot for it (cold: once per new path). */
static __attribute__((noinline, cold)) void
loop_insert(struct rt_worker *w, uint64_t key, uint32_t at, enum nrf_rt_loop_kind kind,
	const struct nrf_slice *lines, size_t n_lines, int peer, struct nrf_h2_stream *st,
	struct rt_xact *x)
{
	struct rt_loops *t = w->loops;
	const struct nrf_rt_snap *snap = x != NULL ? x->snap : w->snap;
	struct rt_loop_slot *sl;
	struct nrf_rt_loop *e;
	uint32_t s, seq;
	uint64_t now = rt_now(w);
	const char *rid;

	if (t->n_used < NRF_RT_LOOP_ENTRIES) {
		s = t->n_used;
		__atomic_store_n(&t->n_used, s + 1, __ATOMIC_RELEASE);
	} else {
		/* the least recently seen gives way */
		s = 0;
		for (uint32_t i = 1; i < NRF_RT_LOOP_ENTRIES; i++)
			if (t->slot[i].e.last_ns < t->slot[s].e.last_ns)
				s = i;
		idx_remove(t, s);
		RT_STAT(w, loop_drops, 1);
		at = idx_find(t, key); /* the removal may have moved keys */
	}
	sl = &t->slot[s];
	e = &sl->e;
	seq = atomic_load_explicit(&sl->seq, memory_order_relaxed);
	atomic_store_explicit(&sl->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	sl->key = key;
	e->kind = (uint8_t)kind;
	path_fill(e, lines, n_lines);
	e->skipped[0] = e->entry[0] = '\0';
	if (peer >= 0 && snap != NULL && (size_t)peer < snap->cfg->n_peers) {
		copy_str(e->skipped, sizeof(e->skipped), snap->cfg->peers[peer].name);
		copy_str(e->entry, sizeof(e->entry), snap->cfg->peers[peer].pointer);
	}
	__atomic_store_n(&e->count, 1, __ATOMIC_RELAXED);
	e->first_ns = now;
	__atomic_store_n(&e->last_ns, now, __ATOMIC_RELAXED);
	copy_str(e->client, sizeof(e->client), st != NULL ? nrf_h2_conn_peer(st->conn) : "");
	rid = x != NULL ? rt_rid_xact(x) : rt_rid_cur(w);
	copy_str(e->rid, sizeof(e->rid), rid);
	atomic_store_explicit(&sl->seq, seq + 2, memory_order_release);
	t->idx[at] = (uint16_t)(s + 1);
}

void
rt_loop_note(struct rt_worker *w, enum nrf_rt_loop_kind kind, const struct nrf_slice *lines,
	size_t n_lines, int peer, struct nrf_h2_stream *st, struct rt_xact *x)
{
	struct rt_loops *t = w->loops;
	const struct nrf_rt_snap *snap = x != NULL ? x->snap : w->snap;
	uint64_t key;
	uint32_t at;

	if (NRF_UNLIKELY(t == NULL))
		return;
	key = hash_lines(lines, n_lines);
	key = mix(step(key, ((uint64_t)kind << 56) ^ ((uint64_t)(uint32_t)(peer + 1) << 32) ^
		(snap != NULL ? snap->gen : 0)));
	at = idx_find(t, key);
	if (NRF_LIKELY(t->idx[at] != 0)) {
		struct nrf_rt_loop *e = &t->slot[t->idx[at] - 1].e;

		__atomic_store_n(&e->count, e->count + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&e->last_ns, rt_now(w), __ATOMIC_RELAXED);
		return;
	}
	loop_insert(w, key, at, kind, lines, n_lines, peer, st, x);
}

/* ------------------------------------------------------------------------ */
/* Control side                                                              */

int
rt_loops_read(const struct rt_worker *w, struct nrf_rt_loop **v, size_t *n, size_t *cap)
{
	const struct rt_loops *t = w->loops;
	uint32_t used;

	if (t == NULL)
		return 0;
	used = __atomic_load_n(&t->n_used, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < used && i < NRF_RT_LOOP_ENTRIES; i++) {
		const struct rt_loop_slot *sl = &t->slot[i];
		struct nrf_rt_loop e;
		bool ok = false;

		/* a few tries: the worker refills an entry in microseconds */
		for (int k = 0; k < 1000 && !ok; k++) {
			uint32_t s1 = atomic_load_explicit(&sl->seq, memory_order_acquire), s2;

			if (s1 & 1)
				continue;
			memcpy(&e, &sl->e, sizeof(e));
			e.count = __atomic_load_n(&sl->e.count, __ATOMIC_RELAXED);
			e.last_ns = __atomic_load_n(&sl->e.last_ns, __ATOMIC_RELAXED);
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&sl->seq, memory_order_relaxed);
			ok = s1 == s2 && s1 != 0;
		}
		if (!ok)
			continue;
		e.path[sizeof(e.path) - 1] = '\0';
		e.skipped[sizeof(e.skipped) - 1] = '\0';
		e.entry[sizeof(e.entry) - 1] = '\0';
		e.client[sizeof(e.client) - 1] = '\0';
		e.rid[sizeof(e.rid) - 1] = '\0';
		if (nrf_rt_loops_merge(v, n, cap, &e) != 0)
			return NRF_ENOMEM;
	}
	return 0;
}

int
nrf_rt_loops_merge(struct nrf_rt_loop **v, size_t *n, size_t *cap, const struct nrf_rt_loop *e)
{
	struct nrf_rt_loop *o;

	for (size_t i = 0; i < *n; i++) {
		o = &(*v)[i];
		if (o->kind != e->kind || strcmp(o->path, e->path) != 0 ||
			strcmp(o->skipped, e->skipped) != 0)
			continue;
		o->count += e->count;
		if (e->first_ns < o->first_ns) {
			o->first_ns = e->first_ns;
			memcpy(o->client, e->client, sizeof(o->client));
			memcpy(o->rid, e->rid, sizeof(o->rid));
		}
		if (e->last_ns > o->last_ns)
			o->last_ns = e->last_ns;
		o->truncated |= e->truncated;
		return 0;
	}
	if (*n == *cap) {
		size_t nc = *cap > 0 ? *cap * 2 : 16;
		struct nrf_rt_loop *nv = realloc(*v, nc * sizeof(*nv));

		if (nv == NULL)
			return NRF_ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *e;
	return 0;
}
