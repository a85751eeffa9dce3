/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/via. The input, split on '\n', is a set of Via
 * field lines; it goes through nrf_via_parse(), nrf_via_scan() and
 * nrf_via_scan_each() against a fixed small database, and every invariant
 * below that fails calls abort():
 *
 *   - scan and scan_each return the same code and the same result;
 *   - codes are 0, NRF_EPARSE or NRF_ETOOBIG; ETOOBIG from one means
 *     ETOOBIG from the other; a scan parse error is a parse error;
 *   - when the parser accepts the input, the scan does too, counts the
 *     same members, and reports exactly the (identity, member) pairs a
 *     plain reference matcher finds in the parsed members, in member
 *     order; self and peer bits are those of the reported identities;
 *   - parsed slices lie inside their line; the count does not depend on
 *     the size of the output array;
 *   - a member written by nrf_via_member_format() parses back.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_via.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 4096
/* A member takes at least 4 bytes ("1 a" and a comma). */
#define MAX_MEMBERS (NRF_VIA_MAX_BYTES / 4 + 1)

struct hit {
	uint32_t id, member;
};

static const struct nrf_via_identity idents[] = {
	{"nrf-a.seg1.example.com", 8080, NRF_VIA_SELF, 0},
	{"10.10.1.2", 8080, NRF_VIA_SELF, 0},
	{"nrf-e.seg2.example.com", 8080, NRF_VIA_PEER, 0},
	{"10.10.2.2", 8080, NRF_VIA_PEER, 0},
	{"[2001:db8::2]", 8443, NRF_VIA_PEER, 1},
	{"NRF-Z.seg2.example.com.", 9090, NRF_VIA_PEER, 1023},
	{"nrf-a.seg1.example.com", 9090, NRF_VIA_PEER, 2},
	{"nrf-a", 8080, NRF_VIA_PEER, 3},
	{"a", 1, NRF_VIA_PEER, 4},
	{"2001:db8::2", 8443, NRF_VIA_PEER, 5},
	{"10.10.2.20", 80, NRF_VIA_PEER, 6},
	/* Literals moved off a run of equal bytes (decision 0008): longer
	 * than the unique prefix, and shorter than a host that ends in one. */
	{"nrf-0000.seg1.example.com", 8080, NRF_VIA_PEER, 7},
	{"nrf-000", 8080, NRF_VIA_PEER, 8},
	{"abcddd", 1, NRF_VIA_PEER, 9},
};
#define N_IDENTS (sizeof(idents) / sizeof(idents[0]))

static struct nrf_via_db *db;
static struct nrf_via_scratch *scratch;
static struct nrf_slice lines[MAX_LINES];
static struct nrf_via_member members[MAX_MEMBERS];
static struct hit hits[MAX_MEMBERS * N_IDENTS];
static size_t n_hits;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_via: %s:%d: %s\n", __FILE__,     \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

static void
setup(void)
{
	int err;

	if (db != NULL)
		return;
	db = nrf_via_db_create(idents, N_IDENTS, &err);
	CHECK(db != NULL);
	scratch = nrf_via_scratch_create(db, &err);
	CHECK(scratch != NULL);
}

static int
collect(void *ctx, uint32_t id, uint32_t member)
{
	(void)ctx;
	CHECK(n_hits < sizeof(hits) / sizeof(hits[0]));
	hits[n_hits].id = id;
	hits[n_hits].member = member;
	n_hits++;
	return 0;
}

static bool
eq_nocase(struct nrf_slice a, const char *b)
{
	size_t n = strlen(b);

	if (a.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)a.p[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c != (unsigned char)b[i])
			return false;
	}
	return true;
}

/* docs/via.md's matching rule read literally, on one parsed member. */
static bool
reference_match(const struct nrf_via_member *m, const struct nrf_via_identity *id)
{
	bool v6 = strchr(id->host, ':') != NULL;
	bool bracketed = m->received_by.len > 0 && m->received_by.p[0] == '[';
	struct nrf_slice host = m->host;

	if (m->port != id->port || v6 != bracketed)
		return false;
	if (!v6 && host.len > 0 && host.p[host.len - 1] == '.')
		host.len--;
	return eq_nocase(host, id->host);
}

static bool
inside(struct nrf_slice part, struct nrf_slice whole)
{
	return part.p >= whole.p && part.p + part.len <= whole.p + whole.len;
}

static void
check_members(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct nrf_via_member *m = &members[i];
		struct nrf_slice line;

		CHECK(m->line < MAX_LINES);
		line = lines[m->line];
		CHECK(inside(m->proto_version, line) && m->proto_version.len > 0);
		CHECK(inside(m->proto_name, line));
		CHECK(inside(m->received_by, line) && m->received_by.len > 0);
		CHECK(inside(m->host, m->received_by) && m->host.len > 0);
		CHECK(inside(m->comment, line));
		CHECK(m->comment.len == 0 || (m->comment.p[0] == '(' &&
			m->comment.p[m->comment.len - 1] == ')'));
		CHECK(m->port >= -1 && m->port <= 65535);
		CHECK(i == 0 || m->line >= members[i - 1].line);
	}
}

/* Every reported pair is a reference match, and as many as there are. */
static void
check_hits(size_t n, const struct nrf_via_result *res)
{
	size_t want = 0;
	bool self = false;
	uint64_t peers[NRF_VIA_MAX_PEERS / 64] = {0};

	for (size_t i = 0; i < n; i++)
		for (uint32_t id = 0; id < N_IDENTS; id++)
			want += reference_match(&members[i], nrf_via_db_identity(db, id));
	CHECK(n_hits == want);
	CHECK(res->hits == want);
	for (size_t k = 0; k < n_hits; k++) {
		const struct nrf_via_identity *id = nrf_via_db_identity(db, hits[k].id);

		CHECK(id != NULL);
		CHECK(hits[k].member < n);
		CHECK(k == 0 || hits[k].member >= hits[k - 1].member);
		CHECK(reference_match(&members[hits[k].member], id));
		/* No pair twice: both reports of one pair would be counted. */
		for (size_t j = k + 1; j < n_hits && hits[j].member == hits[k].member; j++)
			CHECK(hits[j].id != hits[k].id);
		if (id->kind == NRF_VIA_SELF)
			self = true;
		else
			peers[id->peer >> 6] |= UINT64_C(1) << (id->peer & 63);
	}
	CHECK(res->self == self);
	CHECK(memcmp(res->peers, peers, sizeof(peers)) == 0);
}

static bool
same_slice(struct nrf_slice a, struct nrf_slice b)
{
	return a.p == b.p && a.len == b.len;
}

static bool
same_member(const struct nrf_via_member *a, const struct nrf_via_member *b)
{
	return same_slice(a->proto_name, b->proto_name) &&
		same_slice(a->proto_version, b->proto_version) &&
		same_slice(a->received_by, b->received_by) &&
		same_slice(a->host, b->host) && same_slice(a->comment, b->comment) &&
		a->port == b->port && a->line == b->line;
}

/* Format the first member's host and port again and parse it back. */
static void
check_format(size_t n)
{
	char host[300], buf[320];
	struct nrf_slice line;
	struct nrf_via_member m;
	size_t count;
	int len;

	if (n == 0 || members[0].port <= 0 || members[0].host.len >= sizeof(host))
		return;
	memcpy(host, members[0].host.p, members[0].host.len);
	host[members[0].host.len] = '\0';
	len = nrf_via_member_format(buf, sizeof(buf), host, (uint16_t)members[0].port);
	if (len == NRF_EINVAL)
		return; /* not a host nrfwd would configure */
	CHECK(len > 0 && (size_t)len == strlen(buf));
	line.p = buf;
	line.len = (size_t)len;
	CHECK(nrf_via_parse(&line, 1, &m, 1, &count) == 0);
	CHECK(count == 1);
	CHECK(m.port == members[0].port);
	CHECK(m.host.len == members[0].host.len &&
		memcmp(m.host.p, members[0].host.p, m.host.len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	struct nrf_via_result res, res_each;
	struct nrf_via_member one;
	size_t n_lines = 0, n = 0, n_small = 0;
	int rc_parse, rc_small, rc_scan, rc_each;

	setup();
	/* Lines point into the input itself, so a read past its end is
	 * caught by the sanitizers. */
	for (size_t start = 0;;) {
		const char *nl = memchr(p + start, '\n', size - start);
		size_t end = nl != NULL ? (size_t)(nl - p) : size;

		if (n_lines == MAX_LINES)
			return 0;
		lines[n_lines].p = p + start;
		lines[n_lines].len = end - start;
		n_lines++;
		if (nl == NULL)
			break;
		start = end + 1;
	}

	rc_parse = nrf_via_parse(lines, n_lines, members, MAX_MEMBERS, &n);
	rc_small = nrf_via_parse(lines, n_lines, &one, 1, &n_small);
	rc_scan = nrf_via_scan(db, scratch, lines, n_lines, &res);
	n_hits = 0;
	rc_each = nrf_via_scan_each(db, scratch, lines, n_lines, &res_each, collect, NULL);

	CHECK(rc_parse == 0 || rc_parse == NRF_EPARSE || rc_parse == NRF_ETOOBIG);
	CHECK(rc_scan == 0 || rc_scan == NRF_EPARSE || rc_scan == NRF_ETOOBIG);
	CHECK(rc_small == rc_parse && n_small == n);
	CHECK(rc_each == rc_scan);
	CHECK(res.members == res_each.members && res.hits == res_each.hits &&
		res.self == res_each.self &&
		memcmp(res.peers, res_each.peers, sizeof(res.peers)) == 0);
	CHECK((rc_scan == NRF_ETOOBIG) == (rc_parse == NRF_ETOOBIG));
	if (rc_scan == NRF_EPARSE)
		CHECK(rc_parse == NRF_EPARSE);
	if (rc_parse != 0)
		return 0;
	CHECK(n <= MAX_MEMBERS);
	CHECK(rc_scan == 0);
	CHECK(res.members == n);
	check_members(n);
	check_hits(n, &res);
	if (n > 0)
		CHECK(same_member(&one, &members[0]));
	check_format(n);
	return 0;
}
