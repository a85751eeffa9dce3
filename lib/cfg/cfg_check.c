/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation: the text rules of string keys (the .check of a table entry),
 * status patterns, and the rules that span several keys, run once on the
 * whole candidate after the walk (cfg_check_document()).
 *
 * Every rule records a problem and lets the load go on, so an operator
 * fixes a file in one round; messages and JSON pointers are part of the
 * contract (tests/unit/cfg) and of the REST answers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strptime; meson passes it too */
#endif
#include <arpa/inet.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cfg_int.h"
#include "nrf_cfg.h"
#include "nrf_common.h"

/*
 * glibc's regcomp() builds "x+" and "x{n,m}" by copying x's tree, so nested
 * repetitions multiply: "a++++++++++++++++++++++++++++++++++" alone asks for
 * gigabytes, and its epsilon closures grow faster than quadratically with
 * the copies ("((((){9}){9}){9})+" takes seconds). Patterns are estimated
 * before regcomp() sees them and held to the size a pattern without
 * repetitions may have anyway; status codes have three digits, so a
 * sensible pattern is a few dozen elements.
 */
#define MAX_PATTERN_LEN 256
#define MAX_PATTERN_NODES MAX_PATTERN_LEN

#define HOST_MAX 253

/* ------------------------------------------------------------------ */
/* Text rules.                                                         */

static bool
is_ipv4(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1;
}

static bool
is_ipv6(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, s, &a) == 1;
}

static bool
is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		(ch >= '0' && ch <= '9');
}

/*
 * A DNS name as it can appear in Via and :authority: labels of letters,
 * digits, '-' (not first or last) and '_' (service names use it), one
 * optional trailing dot.
 * Text made of digits and dots only must be a real IPv4 address, so a
 * mistyped address is not taken for a name.
 */
static bool
valid_hostname(const char *s)
{
	size_t len = strlen(s);
	size_t label = 0;
	bool digits_only = true;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > HOST_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!is_alnum(ch) && ch != '-' && ch != '_')
			return false;
		if (ch == '-' && label == 0)
			return false;
		if (ch < '0' || ch > '9')
			digits_only = false;
		if (++label > 63)
			return false;
	}
	if (s[len - 1] == '-')
		return false;
	if (digits_only)
		return len == strlen(s) && is_ipv4(s);
	return true;
}

/* fqdn, IPv4 or IPv6 text (no brackets). */
static bool
valid_host(const char *s)
{
	if (strchr(s, ':') != NULL)
		return is_ipv6(s);
	return valid_hostname(s);
}

const char *
cfg_check_host(const char *s)
{
	if (*s == '\0')
		return "empty host";
	if (!valid_host(s))
		return "invalid host: not a host name, IPv4 or IPv6 address";
	return NULL;
}

const char *
cfg_check_fqdn(const char *s)
{
	if (*s != '\0' && !valid_hostname(s))
		return "invalid host name";
	return NULL;
}

const char *
cfg_check_ipv4(const char *s)
{
	if (*s != '\0' && !is_ipv4(s))
		return "invalid IPv4 address";
	return NULL;
}

const char *
cfg_check_ipv6(const char *s)
{
	if (*s != '\0' && !is_ipv6(s))
		return "invalid IPv6 address (no brackets)";
	return NULL;
}

/* Addresses we bind to: literals only, there is no resolver at startup. */
const char *
cfg_check_bind_address(const char *s)
{
	if (!is_ipv4(s) && !is_ipv6(s))
		return "invalid IP address: must be an IPv4 or IPv6 literal";
	return NULL;
}

const char *
cfg_check_api_version(const char *s)
{
	if (*s == '\0')
		return "empty apiVersion";
	for (; *s != '\0'; s++)
		if (!is_alnum(*s) && *s != '.' && *s != '-' && *s != '_')
			return "invalid apiVersion: letters, digits, '.', '-', '_' only";
	return NULL;
}

/* The prefix goes into :path, so nothing that ends or escapes a path. */
const char *
cfg_check_api_prefix(const char *s)
{
	if (*s == '\0')
		return NULL;
	if (*s != '/')
		return "invalid apiPrefix: must be empty or start with \"/\"";
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch == 0x7f || ch == '?' || ch == '#')
			return "invalid apiPrefix: spaces, control characters, '?' and '#' are not allowed";
	}
	return NULL;
}

const char *
cfg_check_nonempty_set_id(const char *s)
{
	return *s == '\0' ? "empty nrfSetId" : NULL;
}

/* Values that become header fields must not smuggle in other fields. */
const char *
cfg_check_header_value(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch == 0x7f)
			return "invalid header value: spaces and control characters are not allowed";
	}
	return NULL;
}

/* Retry-After (RFC 9110 §10.2.3): delay-seconds or an IMF-fixdate. */
const char *
cfg_check_retry_after(const char *s)
{
	struct tm tm;
	const char *end;
	size_t n = strlen(s);

	if (n == 0)
		return NULL;
	if (strspn(s, "0123456789") == n)
		return n <= 10 ? NULL : "invalid retryAfter: too many digits";
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL || *end != '\0')
		return "invalid retryAfter: must be seconds or an HTTP date";
	return NULL;
}

/*
 * "host:port" or "[ipv6]:port". Writes the host span and the port; returns
 * NULL or the reason.
 */
const char *
cfg_parse_hostport(const char *s, const char **host, size_t *host_len, uint16_t *port)
{
	const char *colon;
	unsigned long v = 0;
	size_t nd;
	char buf[HOST_MAX + 2];

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (rb == NULL || rb[1] != ':')
			return "invalid alias: must be host:port or [ipv6]:port";
		*host = s + 1;
		*host_len = (size_t)(rb - s - 1);
		colon = rb + 1;
		if (*host_len == 0 || *host_len >= sizeof(buf))
			return "invalid alias: bad IPv6 address";
		memcpy(buf, *host, *host_len);
		buf[*host_len] = '\0';
		if (!is_ipv6(buf))
			return "invalid alias: bad IPv6 address";
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return "invalid alias: must be host:port or [ipv6]:port";
		*host = s;
		*host_len = (size_t)(colon - s);
		if (memchr(s, ':', *host_len) != NULL)
			return "invalid alias: an IPv6 address needs brackets, [ipv6]:port";
		if (*host_len == 0)
			return "invalid alias: empty host";
		if (*host_len >= sizeof(buf))
			return "invalid alias: bad host name";
		memcpy(buf, *host, *host_len);
		buf[*host_len] = '\0';
		if (!valid_hostname(buf))
			return "invalid alias: bad host name";
	}
	nd = strspn(colon + 1, "0123456789");
	if (nd == 0 || colon[1 + nd] != '\0')
		return "invalid alias: port must be a number";
	if (nd > 5 || (v = strtoul(colon + 1, NULL, 10)) < 1 || v > 65535)
		return "invalid alias: port out of range 1..65535";
	*port = (uint16_t)v;
	return NULL;
}

#define SIZE_CAP 1000000000ull

static unsigned long long
sat_add(unsigned long long a, unsigned long long b)
{
	return a + b > SIZE_CAP ? SIZE_CAP : a + b;
}

static unsigned long long
sat_mul(unsigned long long a, unsigned long long b)
{
	if (b != 0 && a > SIZE_CAP / b)
		return SIZE_CAP;
	return a * b;
}

/* Past a bracket expression "[...]", classes like "[:digit:]" included. */
static const char *
skip_bracket(const char *p)
{
	const char *q = p + 1;

	if (*q == '^')
		q++;
	if (*q == ']')
		q++;
	while (*q != '\0' && *q != ']') {
		if (q[0] == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
			const char *end = q + 2;
			char close = q[1];

			while (*end != '\0' && !(end[0] == close && end[1] == ']'))
				end++;
			q = *end != '\0' ? end + 2 : end;
			continue;
		}
		q++;
	}
	return *q == ']' ? q + 1 : q;
}

/*
 * An interval "{n}", "{n,}", "{,m}" or "{n,m}" at *pp: how many copies of
 * its atom regcomp() may make. False (nothing consumed) when it is not one.
 */
static bool
parse_interval(const char **pp, unsigned long long *copies)
{
	const char *q = *pp + 1;
	unsigned long long n = 0, m;

	while (*q >= '0' && *q <= '9')
		n = sat_add(sat_mul(n, 10), (unsigned long long)(*q++ - '0'));
	m = n;
	if (*q == ',') {
		q++;
		m = 0;
		while (*q >= '0' && *q <= '9')
			m = sat_add(sat_mul(m, 10), (unsigned long long)(*q++ - '0'));
	}
	if (*q != '}')
		return false;
	*copies = sat_add(n > m ? n : m, 1);
	*pp = q + 1;
	return true;
}

/* Elements of the tree regcomp() builds for the sequence at *pp. */
static unsigned long long
pattern_size(const char **pp, int depth)
{
	const char *p = *pp;
	unsigned long long total = 0;

	while (*p != '\0') {
		unsigned long long atom = 1, copies;

		if (*p == ')' && depth > 0)
			break;
		if (*p == '(') {
			p++;
			atom = sat_add(pattern_size(&p, depth + 1), 1);
			if (*p == ')')
				p++;
		} else if (*p == '[') {
			p = skip_bracket(p);
		} else if (*p == '\\' && p[1] != '\0') {
			p += 2;
		} else {
			p++;
		}
		for (;;) {
			if (*p == '*' || *p == '?') {
				p++;
			} else if (*p == '+') {
				atom = sat_mul(atom, 2);
				p++;
			} else if (*p == '{' && parse_interval(&p, &copies)) {
				atom = sat_mul(atom, copies);
			} else {
				break;
			}
		}
		total = sat_add(total, atom);
	}
	*pp = p;
	return total;
}

/*
 * The pattern is compiled once here, then only the bit set is consulted on
 * the data path: testing each of the 500 codes as text is the exact meaning
 * of "the pattern matches the code", whatever the pattern looks like.
 */
int
cfg_compile_status_set(const char *pat, struct nrf_cfg_status_set *set,
	char *why, size_t whysz)
{
	const char *pat_end = pat;
	regex_t re;
	int rc;

	memset(set, 0, sizeof(*set));
	if (*pat == '\0') {
		snprintf(why, whysz, "invalid pattern: empty");
		return -1;
	}
	if (strlen(pat) > MAX_PATTERN_LEN) {
		snprintf(why, whysz, "invalid pattern: longer than %d characters",
			MAX_PATTERN_LEN);
		return -1;
	}
	if (pattern_size(&pat_end, 0) > MAX_PATTERN_NODES) {
		snprintf(why, whysz,
			"invalid pattern: too complex, its repetitions expand to more than %d elements",
			MAX_PATTERN_NODES);
		return -1;
	}
	rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		snprintf(why, whysz, "invalid pattern: %s", msg);
		return -1;
	}
	for (int code = 100; code <= 599; code++) {
		char s[4];

		snprintf(s, sizeof(s), "%d", code);
		if (regexec(&re, s, 0, NULL, 0) == 0)
			set->bits[code >> 6] |= 1ull << (code & 63);
	}
	regfree(&re);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Rules across fields.                                                */

/* One identity of the candidate, for the duplicate check. */
struct ident {
	char *key;            /* canonical "host:port" */
	size_t owner;         /* ids of one owner never clash with each other */
	bool own;             /* ocnrfHost or an alias */
	const char *ptr;      /* JSON pointer (prefix when leaf != NULL) */
	const char *leaf;
	size_t alias;         /* SIZE_MAX unless an alias */
	size_t dup_of;        /* SIZE_MAX when first of its key */
};

/*
 * Via matching compares hosts case-insensitively with one trailing dot
 * ignored; IPv6 is compared as an address, so "::1" and "0::1" clash.
 */
static char *
ident_key(const char *host, uint16_t port)
{
	unsigned char a6[16];
	char canon[INET6_ADDRSTRLEN];
	size_t n = strlen(host);
	char *k;

	if (strchr(host, ':') != NULL && inet_pton(AF_INET6, host, a6) == 1 &&
		inet_ntop(AF_INET6, a6, canon, sizeof(canon)) != NULL) {
		host = canon;
		n = strlen(canon);
	} else if (n > 0 && host[n - 1] == '.') {
		n--;
	}
	k = malloc(n + 8);
	if (k == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char ch = host[i];

		k[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
	}
	snprintf(k + n, 8, ":%u", port);
	return k;
}

static int
ident_cmp(const void *pa, const void *pb)
{
	const struct ident *a = *(const struct ident *const *)pa;
	const struct ident *b = *(const struct ident *const *)pb;
	int r = strcmp(a->key, b->key);

	if (r != 0)
		return r;
	return a < b ? -1 : a > b;
}

static void
ident_pointer(const struct ident *id, char *buf, size_t sz)
{
	if (id->alias != SIZE_MAX)
		snprintf(buf, sz, "/generalOptions/aliases/%zu", id->alias);
	else
		snprintf(buf, sz, "%s%s", id->ptr, id->leaf != NULL ? id->leaf : "");
}

static void
check_identities(struct load_ctx *c)
{
	const struct nrf_cfg_general *g = &c->cfg->general;
	static const char *const leaves[] = {"/fqdn", "/ipv4Address", "/ipv6Address"};
	size_t max = 1 + g->n_aliases + 3 * c->n_peers, n = 0;
	struct ident *ids = calloc(max, sizeof(*ids));
	struct ident **ord = calloc(max, sizeof(*ord));

	if (ids == NULL || ord == NULL) {
		c->oom = true;
		goto out;
	}
	if (*g->host != '\0' && g->port != 0)
		ids[n++] = (struct ident){ident_key(g->host, g->port), 0, true,
			"/generalOptions/ocnrfHost", NULL, SIZE_MAX, SIZE_MAX};
	for (size_t i = 0; i < g->n_aliases; i++)
		ids[n++] = (struct ident){ident_key(g->aliases[i].host, g->aliases[i].port),
			1 + i, true, NULL, NULL, c->alias_index[i], SIZE_MAX};
	for (size_t i = 0; i < c->n_peers; i++) {
		const struct nrf_cfg_peer *pe = &c->peers[i];
		const char *hosts[3] = {pe->fqdn, pe->ipv4, pe->ipv6};

		for (int k = 0; k < 3; k++) {
			if (*hosts[k] == '\0')
				continue;
			ids[n++] = (struct ident){ident_key(hosts[k], pe->port),
				1 + NRF_CFG_MAX_ALIASES + i, false, pe->pointer,
				leaves[k], SIZE_MAX, SIZE_MAX};
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (ids[i].key == NULL) {
			c->oom = true;
			goto out;
		}
		ord[i] = &ids[i];
	}
	qsort(ord, n, sizeof(*ord), ident_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		for (; j < n && strcmp(ord[j]->key, ord[i]->key) == 0; j++)
			if (ord[j]->owner != ord[i]->owner)
				ord[j]->dup_of = (size_t)(ord[i] - ids);
		i = j;
	}
	/* report in document order */
	for (size_t i = 0; i < n; i++) {
		const struct ident *first;
		char ptr[192], first_ptr[192];

		if (ids[i].dup_of == SIZE_MAX)
			continue;
		first = &ids[ids[i].dup_of];
		ident_pointer(&ids[i], ptr, sizeof(ptr));
		ident_pointer(first, first_ptr, sizeof(first_ptr));
		if (first->own && !ids[i].own)
			cfg_problem_at(c, ptr, "own identity %s listed as a peer (see %s)",
				ids[i].key, first_ptr);
		else
			cfg_problem_at(c, ptr, "duplicate identity %s (also at %s)",
				ids[i].key, first_ptr);
	}
out:
	for (size_t i = 0; ids != NULL && i < n; i++)
		free(ids[i].key);
	free(ids);
	free(ord);
}

static void
check_sets(struct load_ctx *c)
{
	/* over the limit is already a problem; keep this quadratic check small */
	if (c->n_sets > NRF_CFG_MAX_SETS)
		return;
	for (size_t i = 1; i < c->n_sets; i++) {
		for (size_t k = 0; k < i; k++) {
			if (*c->sets[i].nrf_set_id != '\0' &&
				strcasecmp(c->sets[i].nrf_set_id, c->sets[k].nrf_set_id) == 0) {
				char ptr[192];

				snprintf(ptr, sizeof(ptr),
					"/nrfGrowth/nrfForwardingOptions/nrfHostConfig/staticNrfConfigList/%zu/nrfSetId",
					i);
				cfg_problem_at(c, ptr, "duplicate nrfSetId %s", c->sets[i].nrf_set_id);
				break;
			}
		}
	}
}

static void
check_timeouts(struct load_ctx *c)
{
	const struct nrf_cfg_runtime *rt = &c->cfg->rt;

	if (rt->per_try_ms > rt->request_ms)
		cfg_problem_at(c, "/runtime/timeouts/perTryMs",
			"out of range: perTryMs %u exceeds requestMs %u",
			rt->per_try_ms, rt->request_ms);
	if (rt->connect_ms > rt->request_ms)
		cfg_problem_at(c, "/runtime/timeouts/connectMs",
			"out of range: connectMs %u exceeds requestMs %u",
			rt->connect_ms, rt->request_ms);
	if (rt->probe_interval_max_ms < rt->probe_interval_ms)
		cfg_problem_at(c, "/runtime/health/probeIntervalMaxMs",
			"out of range: probeIntervalMaxMs %u is below probeIntervalMs %u",
			rt->probe_interval_max_ms, rt->probe_interval_ms);
	if (rt->dns_max_ttl_ms < rt->dns_min_ttl_ms)
		cfg_problem_at(c, "/runtime/dns/maxTtlMs",
			"out of range: maxTtlMs %u is below minTtlMs %u",
			rt->dns_max_ttl_ms, rt->dns_min_ttl_ms);
}

/* runtime.limits.perClient: a bucket size needs a rate to fill it. */
static void
check_limits(struct load_ctx *c)
{
	const struct nrf_cfg_client_limits *l = &c->cfg->rt.per_client;

	if (l->burst != 0 && l->rate_per_second == 0)
		cfg_problem_at(c, "/runtime/limits/perClient/burst",
			"burst %u without ratePerSecond: burst is the size of the rate's "
			"token bucket; set ratePerSecond too, or burst 0", l->burst);
}

static bool
ipv4_of(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (*s == '\0' || inet_pton(AF_INET, s, &a) != 1)
		return false;
	*out = ntohl(a.s_addr);
	return true;
}

static bool
loopback_host(const char *s)
{
	uint32_t a;
	unsigned char v6[16];
	static const unsigned char lo6[16] = {[15] = 1};

	if (ipv4_of(s, &a))
		return (a >> 24) == 127;
	if (inet_pton(AF_INET6, s, v6) == 1)
		return memcmp(v6, lo6, sizeof(v6)) == 0;
	return strcasecmp(s, "localhost") == 0;
}

/* TLS settings that only make sense together (files are loaded later, by
 * the runtime and by `nrfwd-ctl check`). */
static void
check_tls(struct load_ctx *c)
{
	const struct nrf_cfg_runtime *rt = &c->cfg->rt;

	/* certFile missing with a tls listener: reported by the runtime's
	 * file check (nrf_rt_tls_check()), with the other file problems. */
	if (rt->tls.verify_client && *rt->tls.ca_file == '\0')
		cfg_problem_at(c, "/runtime/tls/caFile", "missing: required with verifyClient: true");
	if (*rt->tls_client.key_file != '\0' && *rt->tls_client.cert_file == '\0')
		cfg_problem_at(c, "/runtime/tlsClient/certFile", "missing: keyFile is set");
}

/* @p s as IPv6 into @p out (16 bytes). */
static bool
ipv6_of(const char *s, uint8_t *out)
{
	return *s != '\0' && inet_pton(AF_INET6, s, out) == 1;
}

/* Leading @p bits of @p a and @p b equal. */
static bool
prefix6_eq(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int i;

	for (i = 0; bits >= 8; i++, bits -= 8)
		if (a[i] != b[i])
			return false;
	return bits == 0 || ((a[i] ^ b[i]) >> (8 - bits)) == 0;
}

static bool
link_local6(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/* runtime.dpdk's IPv6 address and gateway (decision 0065). */
static void
check_dpdk6(struct load_ctx *c, const struct nrf_cfg_dpdk *d, const uint8_t *ip6)
{
	static const uint8_t zero[16];
	uint8_t gw[16];

	if (d->ipv6_prefix_length > 64)
		cfg_problem_at(c, "/runtime/dpdk/ipv6PrefixLength", "out of range: %u; the DPDK "
			"port takes 1..64 (its stack treats the address's /64 as on-link)",
			d->ipv6_prefix_length);
	if (link_local6(ip6))
		cfg_problem_at(c, "/runtime/dpdk/ipv6Address", "a link-local address (fe80::/10) "
			"cannot be the port's address: the port has its own, from its MAC; give a "
			"global or unique-local address");
	else if (memcmp(ip6, zero, 15) == 0 || ip6[0] == 0xff ||
		(memcmp(ip6, zero, 10) == 0 && ip6[10] == 0xff && ip6[11] == 0xff))
		cfg_problem_at(c, "/runtime/dpdk/ipv6Address", "not a usable host address: "
			"unspecified, loopback, multicast or IPv4-mapped");
	if (!ipv6_of(d->ipv6_gateway, gw))
		return;
	if (memcmp(gw, ip6, 16) == 0 || (!link_local6(gw) &&
		    !prefix6_eq(gw, ip6, d->ipv6_prefix_length)))
		cfg_problem_at(c, "/runtime/dpdk/ipv6Gateway", "not on the port's network %s/%u "
			"(nor link-local)", d->ipv6_address, d->ipv6_prefix_length);
}

/* A listen or local NRF address the DPDK port serves: 0.0.0.0 or its
 * IPv4 address (with one), :: or its IPv6 address. */
static bool
dpdk_serves(const char *addr, bool have_ip, uint32_t ip, bool have_ip6, const uint8_t *ip6)
{
	uint32_t a;
	uint8_t a6[16];
	static const uint8_t zero[16];

	if (ipv4_of(addr, &a))
		return have_ip && (a == 0 || a == ip);
	if (ipv6_of(addr, a6))
		return memcmp(a6, zero, 16) == 0 || (have_ip6 && memcmp(a6, ip6, 16) == 0);
	return false;
}

/*
 * runtime.dpdk on its own (pool sizes, addresses and gateways), and with
 * transport "dpdk" what the port can serve: it listens on 0.0.0.0, :: or
 * its own addresses, reaches a family only with an address of it, and
 * cannot reach loopback or itself.
 */
static void
check_dpdk(struct load_ctx *c)
{
	const struct nrf_cfg_runtime *rt = &c->cfg->rt;
	const struct nrf_cfg_dpdk *d = &rt->dpdk;
	uint32_t ip = 0, gw, mask;
	uint8_t ip6[16] = {0};
	bool have_ip = ipv4_of(d->ipv4_address, &ip);
	bool have_ip6 = ipv6_of(d->ipv6_address, ip6);

	mask = d->prefix_length >= 32 ? UINT32_MAX : ~(UINT32_MAX >> d->prefix_length);
	if (rt->transport == NRF_TRANSPORT_DPDK && *d->ipv4_address == '\0' &&
		*d->ipv6_address == '\0')
		cfg_problem_at(c, "/runtime/dpdk/ipv4Address", "missing required field: the DPDK "
			"port's address, ipv4Address or ipv6Address or both (transport \"dpdk\")");
	if (have_ip && (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 14 ||
		    (d->prefix_length < 31 && ((ip & ~mask) == 0 || (ip | mask) == UINT32_MAX))))
		cfg_problem_at(c, "/runtime/dpdk/ipv4Address", "not a usable host address on a /%u "
			"network", d->prefix_length);
	if (have_ip && ipv4_of(d->gateway, &gw) && ((gw & mask) != (ip & mask) || gw == ip))
		cfg_problem_at(c, "/runtime/dpdk/gateway", "not on the port's network %s/%u",
			d->ipv4_address, d->prefix_length);
	if (have_ip6)
		check_dpdk6(c, d, ip6);
	if ((uint64_t)d->mbufs < (uint64_t)d->rx_descriptors + d->tx_descriptors +
			2u * d->burst + d->mbuf_cache)
		cfg_problem_at(c, "/runtime/dpdk/mbufs", "out of range: %u mbufs cannot fill %u RX + "
			"%u TX descriptors, two bursts of %u and a cache of %u", d->mbufs,
			d->rx_descriptors, d->tx_descriptors, d->burst, d->mbuf_cache);
	if (d->mtu != 0 && d->mtu < 576)
		cfg_problem_at(c, "/runtime/dpdk/mtu", "out of range: %u; 0 (the device's MTU, at "
			"most 1500) or 576..9000", d->mtu);
	if (d->mtu != 0 && d->mtu < 1280 && have_ip6)
		cfg_problem_at(c, "/runtime/dpdk/mtu", "out of range: %u; IPv6 needs at least 1280",
			d->mtu);
	if (d->idle_sleep_max_us < d->idle_sleep_us)
		cfg_problem_at(c, "/runtime/dpdk/idleSleepMaxUs", "out of range: %u is below "
			"idleSleepUs %u", d->idle_sleep_max_us, d->idle_sleep_us);
	if (rt->transport != NRF_TRANSPORT_DPDK)
		return;
	if (!have_ip && *d->gateway != '\0')
		cfg_problem_at(c, "/runtime/dpdk/gateway", "an IPv4 gateway needs ipv4Address");
	if (!have_ip6 && *d->ipv6_gateway != '\0')
		cfg_problem_at(c, "/runtime/dpdk/ipv6Gateway", "an IPv6 gateway needs ipv6Address");
	if (rt->local_nrf.present) {
		uint32_t a;
		uint8_t a6[16];
		const char *addr = rt->local_nrf.address;

		if (loopback_host(addr) || (have_ip && ipv4_of(addr, &a) && a == ip) ||
			(have_ip6 && ipv6_of(addr, a6) && memcmp(a6, ip6, 16) == 0))
			cfg_problem_at(c, "/runtime/localNrf/address", "not reachable over the DPDK "
				"port: loopback or the port's own address");
		else if (strchr(addr, ':') != NULL && !have_ip6)
			cfg_problem_at(c, "/runtime/localNrf/address", "an IPv6 address, but the DPDK "
				"port has no ipv6Address");
		else if (ipv4_of(addr, &a) && !have_ip)
			cfg_problem_at(c, "/runtime/localNrf/address", "an IPv4 address, but the DPDK "
				"port has no ipv4Address");
	}
	if (!have_ip && !have_ip6)
		return;
	for (size_t i = 0; i < rt->n_listen; i++) {
		char ptr[64];

		if (dpdk_serves(rt->listen[i].address, have_ip, ip, have_ip6, ip6))
			continue;
		snprintf(ptr, sizeof(ptr), "/runtime/listen/%zu/address", i);
		cfg_problem_at(c, ptr, "the DPDK port serves only 0.0.0.0, :: or its own "
			"address%s %s%s%s", have_ip && have_ip6 ? "es" : "",
			have_ip ? d->ipv4_address : "", have_ip && have_ip6 ? " and " : "",
			have_ip6 ? d->ipv6_address : "");
	}
}

void
cfg_check_document(struct load_ctx *c)
{
	check_identities(c);
	check_sets(c);
	check_timeouts(c);
	check_limits(c);
	check_dpdk(c);
	check_tls(c);
}
