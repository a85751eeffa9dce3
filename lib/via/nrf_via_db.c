/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The identity database, per-thread scratch, and the member nrfwd appends.
 *
 * What Hyperscan gets. The obvious database, one regex per identity with
 * its separators built in,
 *
 *   (?:^|[ \t,]) host \.? :0* port (?:$|[ \t,(])
 *
 * is correct but slow here, and slower the more identities there are: NRF
 * identities share long tails (".example.com:8080", ".3gppnetwork.org"),
 * and Hyperscan's literal matcher confirms candidates by hashing the last
 * 8 bytes of each literal, so every candidate is compared with every
 * identity. Measured on a 4-member Via: 0.7 us at 64 identities and 4 us
 * at 1024, against 0.11 us for what follows (bench/micro/via_scan_bench,
 * docs/benchmarks.md).
 *
 * So each identity is given to Hyperscan as a plain caseless literal: the
 * shortest prefix of its host (at least 8 bytes when the host is that
 * long) that no other identity's host starts with. Such a literal ends on
 * the byte that tells it from every other identity, which is where
 * Hyperscan looks, and the scan cost stays flat as identities grow. A
 * literal is moved off a run of equal bytes at its end, so that Hyperscan
 * keeps its pure-literal runtime (avoid_flood_tail(), decision 0008).
 * Hyperscan reports every occurrence (no HS_FLAG_SINGLEMATCH), and the
 * match callback checks each one against the whole rule above (separator
 * before, rest of the host, optional dot, ':', leading zeros, port,
 * separator after; nrf_via_scan.c, confirm()). Checking every occurrence
 * is what makes the check safe: a near miss early in the value cannot hide
 * a real match later, which is the trap of SINGLEMATCH plus a check.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hs/hs.h>

#include "nrf_err.h"
#include "nrf_via.h"
#include "nrf_via_internal.h"

int
nrf_via_host_char(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9'))
		return 1;
	/* RFC 3986 unreserved, '%' of pct-encoded, and the sub-delims that
	 * cannot split or open anything in Via (no ',', '(', ')'). */
	switch (c) {
	case '-': case '.': case '_': case '~': case '%':
	case '!': case '$': case '&': case '\'': case '*': case '+': case ';':
	case '=':
		return 1;
	default:
		return 0;
	}
}

static bool
v6_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		(c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

int
nrf_via_host_normalise(const char *host, char *dst, int *v6)
{
	size_t len;
	bool bracketed = false;

	if (host == NULL)
		return -1;
	/* Bounded: a host longer than this is refused anyway. */
	len = strnlen(host, VIA_HOST_MAX + 3);
	if (len > 0 && host[0] == '[') {
		if (len < 3 || host[len - 1] != ']')
			return -1;
		host++;
		len -= 2;
		bracketed = true;
	}
	*v6 = memchr(host, ':', len) != NULL;
	if (*v6) {
		/* Every IPv6 text has "::" or seven ':'; one ':' is a
		 * host:port passed as a host. */
		size_t colons = 0;

		for (size_t i = 0; i < len; i++)
			colons += host[i] == ':';
		if (colons < 2)
			return -1;
	} else if (bracketed) {
		return -1;
	}
	if (!*v6 && len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len > VIA_HOST_MAX)
		return -1;
	/* No empty label: with "a.." one trailing dot would be ambiguous. */
	if (!*v6) {
		if (host[0] == '.' || host[len - 1] == '.')
			return -1;
		for (size_t i = 1; i < len; i++)
			if (host[i] == '.' && host[i - 1] == '.')
				return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];

		if (*v6 ? !v6_char(c) : !nrf_via_host_char(c))
			return -1;
		dst[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : (char)c;
	}
	dst[len] = '\0';
	return (int)len;
}

static int
map_hs_err(hs_error_t e)
{
	return e == HS_NOMEM ? NRF_ENOMEM : NRF_EMATCHER;
}

static bool
identity_ok(const struct nrf_via_identity *id)
{
	if (id->port == 0)
		return false;
	if (id->kind == NRF_VIA_SELF)
		return true;
	return id->kind == NRF_VIA_PEER && id->peer < NRF_VIA_MAX_PEERS;
}

static int
cmp_key(const void *a, const void *b)
{
	return strcmp((*(const struct via_key *const *)a)->s,
		(*(const struct via_key *const *)b)->s);
}

static size_t
common_prefix(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] != '\0' && a[i] == b[i])
		i++;
	return i;
}

static bool
ascii_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Bytes at the end of s[0..n) equal to its last byte (keys are in lower
 * case). */
static size_t
tail_run(const char *s, size_t n)
{
	size_t r = 1;

	while (r < n && s[n - 1 - r] == s[n - 1])
		r++;
	return r;
}

/*
 * True when Hyperscan's compiler would split a literal of @p n bytes that
 * ends in a run of @p run equal bytes into a shorter literal plus a
 * "flood-prone suffix" engine (rose_build_convert.cpp,
 * convertFloodProneSuffixes(), with hwlmFloodProneSuffixLen() = 3 for
 * any database of more than one literal): more than 5 bytes, a run of 3
 * or more that is not the whole literal, and at least 5 bytes left once
 * the run is cut to 2.
 */
static bool
flood_prone(size_t n, size_t run)
{
	return n > 5 && run > VIA_LIT_RUN_MAX && run < n &&
		n - (run - VIA_LIT_RUN_MAX) >= 5;
}

/*
 * Move a literal off a flood-prone tail ("nrf-0000"). One such literal
 * costs the whole database Hyperscan's pure-literal runtime: every scan
 * then runs the full Rose engine and every reported literal costs much
 * more (docs/decisions/0008-via-scan-cost.md). So the
 * literal grows past the run when the host goes on, on to the next letter
 * or digit ("nrf-0000.s", not "nrf-0000.": Hyperscan's literal matchers
 * look at the last bytes of a literal first, and "0." is in every
 * "2.0 " of a Via), or else stops two bytes into the run. It need not be
 * unique then: every report is confirmed against the whole identity.
 */
static size_t
avoid_flood_tail(const struct via_key *k, size_t lit)
{
	size_t run;
	bool grown = false;

	while (lit < k->len && flood_prone(lit, tail_run(k->s, lit))) {
		lit++;
		grown = true;
	}
	while (grown && lit < k->len && !ascii_alnum(k->s[lit - 1]))
		lit++;
	run = tail_run(k->s, lit);
	if (flood_prone(lit, run))
		lit -= run - VIA_LIT_RUN_MAX;
	return lit;
}

/*
 * lit_len of every key: one more than its longest common prefix with any
 * other key, which is found among its neighbours in sorted order, then
 * moved off a run of equal bytes (avoid_flood_tail()).
 */
static int
choose_literals(struct nrf_via_db *db)
{
	struct via_key **order = malloc(db->n * sizeof(*order));

	if (order == NULL)
		return NRF_ENOMEM;
	for (size_t i = 0; i < db->n; i++)
		order[i] = &db->key[i];
	qsort(order, db->n, sizeof(*order), cmp_key);
	for (size_t r = 0; r < db->n; r++) {
		struct via_key *k = order[r];
		size_t lcp = 0, want;

		if (r > 0)
			lcp = common_prefix(k->s, order[r - 1]->s);
		if (r + 1 < db->n)
			lcp = NRF_MAX(lcp, common_prefix(k->s, order[r + 1]->s));
		want = NRF_MAX(lcp + 1, (size_t)VIA_LIT_MIN);
		want = NRF_MIN(want, (size_t)k->len);
		/* One literal is matched by Hyperscan's noodle, which has no
		 * such limit. */
		k->lit_len = (uint16_t)(db->n > 1 ? avoid_flood_tail(k, want) : want);
	}
	free(order);
	return 0;
}

static int
compile(struct nrf_via_db *db)
{
	const char **lits = NULL;
	size_t *lens = NULL;
	unsigned int *flags = NULL, *hs_ids = NULL;
	hs_compile_error_t *cerr = NULL;
	hs_error_t e;
	int rc;

	rc = choose_literals(db);
	if (rc != 0)
		return rc;
	rc = NRF_ENOMEM;
	lits = calloc(db->n, sizeof(*lits));
	lens = calloc(db->n, sizeof(*lens));
	flags = calloc(db->n, sizeof(*flags));
	hs_ids = calloc(db->n, sizeof(*hs_ids));
	if (lits == NULL || lens == NULL || flags == NULL || hs_ids == NULL)
		goto out;
	for (size_t i = 0; i < db->n; i++) {
		lits[i] = db->key[i].s;
		lens[i] = db->key[i].lit_len;
		flags[i] = HS_FLAG_CASELESS;
		hs_ids[i] = (unsigned int)i;
	}
	e = hs_compile_lit_multi(lits, flags, hs_ids, lens, (unsigned int)db->n,
		HS_MODE_BLOCK, NULL, &db->hs, &cerr);
	if (e != HS_SUCCESS) {
		db->hs = NULL;
		rc = map_hs_err(e);
		goto out;
	}
	rc = 0;
out:
	if (cerr != NULL)
		hs_free_compile_error(cerr);
	free(hs_ids);
	free(flags);
	free(lens);
	free(lits);
	return rc;
}

struct nrf_via_db *
nrf_via_db_create(const struct nrf_via_identity *ids, size_t n, int *err)
{
	struct nrf_via_db *db = NULL;
	size_t host_bytes = 0;
	char *w;
	int rc = NRF_EINVAL;

	if (ids == NULL || n == 0 || n > NRF_VIA_MAX_IDENTITIES)
		goto fail;
	/* Validate everything before allocating anything. */
	for (size_t i = 0; i < n; i++) {
		char host[VIA_HOST_MAX + 1];
		int v6;
		int len = nrf_via_host_normalise(ids[i].host, host, &v6);

		if (len < 0 || !identity_ok(&ids[i]))
			goto fail;
		/* "host\0" for the identity; "[host]:port\0" or "host:port\0"
		 * for the key, then its case mask (via_key_case()) */
		host_bytes += (size_t)len + 1 + 2 * ((size_t)len + (v6 ? 2 : 0) + 7);
	}

	rc = NRF_ENOMEM;
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		goto fail;
	db->n = n;
	db->key = calloc(n, sizeof(*db->key));
	db->ids = calloc(n, sizeof(*db->ids));
	db->hosts = malloc(host_bytes);
	if (db->key == NULL || db->ids == NULL || db->hosts == NULL)
		goto fail;
	w = db->hosts;
	for (size_t i = 0; i < n; i++) {
		struct via_key *k = &db->key[i];
		int v6, n_port;
		int len = nrf_via_host_normalise(ids[i].host, w, &v6);

		db->ids[i] = ids[i];
		db->ids[i].host = w;
		if (ids[i].kind == NRF_VIA_SELF)
			db->ids[i].peer = 0;
		w += len + 1;
		k->s = w;
		k->len = (uint16_t)(len + (v6 ? 2 : 0));
		n_port = sprintf(w, v6 ? "[%s]:%u" : "%s:%u", db->ids[i].host,
			(unsigned)ids[i].port) - k->len - 1;
		k->port_len = (uint8_t)n_port;
		w += k->len + 1 + n_port + 1;
		for (size_t j = 0; j < (size_t)k->len + 1 + k->port_len; j++)
			*w++ = (k->s[j] >= 'a' && k->s[j] <= 'z') ? 0x20 : 0;
		k->tag = ids[i].kind == NRF_VIA_SELF ? VIA_TAG_SELF : ids[i].peer;
		k->v6 = v6 != 0;
	}
	rc = compile(db);
	if (rc != 0)
		goto fail;
	if (err != NULL)
		*err = 0;
	return db;
fail:
	nrf_via_db_free(db);
	if (err != NULL)
		*err = rc;
	return NULL;
}

void
nrf_via_db_free(struct nrf_via_db *db)
{
	if (db == NULL)
		return;
	hs_free_database(db->hs);
	free(db->hosts);
	free(db->ids);
	free(db->key);
	free(db);
}

size_t
nrf_via_db_count(const struct nrf_via_db *db)
{
	return db != NULL ? db->n : 0;
}

const struct nrf_via_identity *
nrf_via_db_identity(const struct nrf_via_db *db, uint32_t id)
{
	if (db == NULL || id >= db->n)
		return NULL;
	return &db->ids[id];
}

struct nrf_via_scratch *
nrf_via_scratch_create(const struct nrf_via_db *db, int *err)
{
	struct nrf_via_scratch *s;
	hs_error_t e;
	int rc;

	if (db == NULL) {
		rc = NRF_EINVAL;
		goto fail;
	}
	/* Aligned: the blanking buffer is copied into on the request path. */
	if (posix_memalign((void **)&s, NRF_CACHE_LINE, sizeof(*s)) != 0) {
		rc = NRF_ENOMEM;
		goto fail;
	}
	s->hs = NULL;
	memset(s->buf + NRF_VIA_MAX_BYTES, 0, VIA_HS_OVERREAD);
	e = hs_alloc_scratch(db->hs, &s->hs);
	if (e != HS_SUCCESS) {
		free(s);
		rc = map_hs_err(e);
		goto fail;
	}
	if (err != NULL)
		*err = 0;
	return s;
fail:
	if (err != NULL)
		*err = rc;
	return NULL;
}

int
nrf_via_scratch_update(struct nrf_via_scratch *s, const struct nrf_via_db *db)
{
	hs_scratch_t *grown = NULL;
	hs_error_t e;

	if (s == NULL || db == NULL)
		return NRF_EINVAL;
	/*
	 * hs_alloc_scratch() frees the scratch it is given when it fails, so
	 * grow a clone and swap only on success: the old scratch stays usable
	 * with the databases it was made for.
	 */
	e = hs_clone_scratch(s->hs, &grown);
	if (e != HS_SUCCESS)
		return map_hs_err(e);
	e = hs_alloc_scratch(db->hs, &grown);
	if (e != HS_SUCCESS) {
		hs_free_scratch(grown);
		return map_hs_err(e);
	}
	hs_free_scratch(s->hs);
	s->hs = grown;
	return 0;
}

void
nrf_via_scratch_free(struct nrf_via_scratch *s)
{
	if (s == NULL)
		return;
	hs_free_scratch(s->hs);
	free(s);
}

int
nrf_via_member_format(char *buf, size_t cap, const char *host, uint16_t port)
{
	char norm[VIA_HOST_MAX + 1];
	int v6, n;
	bool brackets;

	if (host == NULL || host[0] == '\0' || port == 0)
		return NRF_EINVAL;
	/* Append only what our own database would recognise: a host with a
	 * space or a comma would inject members into the next hop's Via. */
	if (nrf_via_host_normalise(host, norm, &v6) < 0)
		return NRF_EINVAL;
	if (buf == NULL && cap > 0)
		return NRF_EINVAL;
	brackets = v6 && host[0] != '[';
	n = snprintf(buf, cap, brackets ? "2.0 [%s]:%u" : "2.0 %s:%u", host,
		(unsigned)port);
	if (n < 0 || (size_t)n >= cap) {
		if (cap > 0)
			buf[0] = '\0';
		return NRF_ETOOBIG;
	}
	return n;
}

int
nrf_via_member_identity(const struct nrf_via_member *m, char *buf, size_t cap)
{
	char host[VIA_HOST_MAX + 3], norm[VIA_HOST_MAX + 1], port[8];
	size_t hl, n, pl = 0;
	int v6 = 0, len;

	if (m == NULL || buf == NULL)
		return NRF_EINVAL;
	if (cap > 0)
		buf[0] = '\0';
	hl = NRF_MIN(m->host.len, sizeof(host) - 1);
	if (hl > 0)
		memcpy(host, m->host.p, hl);
	host[hl] = '\0';
	len = nrf_via_host_normalise(host, norm, &v6);
	if (len < 0) {
		/* not an identity's spelling: as received, lower case */
		for (size_t i = 0; i < hl && i < VIA_HOST_MAX; i++) {
			unsigned char c = (unsigned char)host[i];

			norm[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : (char)c;
		}
		len = (int)NRF_MIN(hl, (size_t)VIA_HOST_MAX);
		norm[len] = '\0';
		v6 = 0;
	}
	if (m->port >= 0) {
		uint32_t v = (uint32_t)m->port;
		char *p = port + sizeof(port);

		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v != 0);
		pl = (size_t)(port + sizeof(port) - p);
		memmove(port, p, pl);
	}
	n = (size_t)len + (v6 ? 2 : 0) + (m->port >= 0 ? 1 + pl : 0);
	if (n + 1 > cap)
		return NRF_ETOOBIG;
	n = 0;
	if (v6)
		buf[n++] = '[';
	memcpy(buf + n, norm, (size_t)len);
	n += (size_t)len;
	if (v6)
		buf[n++] = ']';
	if (m->port >= 0) {
		buf[n++] = ':';
		memcpy(buf + n, port, pl);
		n += pl;
	}
	buf[n] = '\0';
	return (int)n;
}
