/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration model.
 *
 * The shape of the document lives in one place: the field tables below
 * (name, type, bounds, default, extra rule). Loading (type checks, bounds,
 * defaults, required and unknown fields), emitting and comparing all walk
 * the same tables, so a scalar added to a table is loaded, validated,
 * emitted and compared without touching anything else. What a table cannot
 * say (arrays of peers, sets and error responses, aliases, the listen list,
 * the optional local NRF) is in F_CUSTOM hooks, and the rules that span
 * several fields (identities, derived names, resolved error responses) run
 * in one final pass over the whole candidate.
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
#define _GNU_SOURCE /* strptime, GNU strerror_r; meson passes it too */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_err.h"

/* Bound file reads: a configuration is kilobytes; this is a typo guard. */
#define MAX_FILE_BYTES (16u << 20)

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
/* Arena: the snapshot's storage.                                      */

struct chunk {
	struct chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

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

/* ------------------------------------------------------------------ */
/* Load context.                                                       */

/* One errorResponses[] entry as written, before defaults are resolved. */
struct err_entry {
	int cond;
	uint16_t code;
	const char *cause;
	const char *title;
	const char *detail;
	const char *retry_after;
	const char *redirect_url;
};

struct load_ctx {
	struct nrf_cfg *cfg;
	struct chunk *arena;
	struct nrf_cfg_problems *out;
	size_t n_problems;
	bool oom;
	/* inside a value already reported as the wrong type */
	int quiet;
	/* JSON pointer of the value being checked. */
	char path[512];
	size_t path_len;
	/* Peers and sets grow while walking; copied to the arena at the end. */
	struct nrf_cfg_peer *peers;
	size_t n_peers;
	size_t cap_peers;
	bool peer_limit_reported;
	struct nrf_cfg_set *sets;
	size_t n_sets;
	size_t cap_sets;
	size_t cur_set;
	/* Where each stored alias sits in the aliases array, for pointers. */
	size_t alias_index[NRF_CFG_MAX_ALIASES];
	bool err_set[NRF_MODE_COUNT][NRF_COND_COUNT];
	struct err_entry errs[NRF_MODE_COUNT][NRF_COND_COUNT];
};

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

static int
problems_add(struct nrf_cfg_problems *out, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
problems_add(struct nrf_cfg_problems *out, const char *ptr, const char *fmt, ...)
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

static void
problem_at(struct load_ctx *c, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
problem_at(struct load_ctx *c, const char *ptr, const char *fmt, ...)
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
#define problem(c, ...) problem_at((c), (c)->path, __VA_ARGS__)

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

static const char *
check_host(const char *s)
{
	if (*s == '\0')
		return "empty host";
	if (!valid_host(s))
		return "invalid host: not a host name, IPv4 or IPv6 address";
	return NULL;
}

static const char *
check_fqdn(const char *s)
{
	if (*s != '\0' && !valid_hostname(s))
		return "invalid host name";
	return NULL;
}

static const char *
check_ipv4(const char *s)
{
	if (*s != '\0' && !is_ipv4(s))
		return "invalid IPv4 address";
	return NULL;
}

static const char *
check_ipv6(const char *s)
{
	if (*s != '\0' && !is_ipv6(s))
		return "invalid IPv6 address (no brackets)";
	return NULL;
}

/* Addresses we bind to: literals only, there is no resolver at startup. */
static const char *
check_bind_address(const char *s)
{
	if (!is_ipv4(s) && !is_ipv6(s))
		return "invalid IP address: must be an IPv4 or IPv6 literal";
	return NULL;
}

static const char *
check_api_version(const char *s)
{
	if (*s == '\0')
		return "empty apiVersion";
	for (; *s != '\0'; s++)
		if (!is_alnum(*s) && *s != '.' && *s != '-' && *s != '_')
			return "invalid apiVersion: letters, digits, '.', '-', '_' only";
	return NULL;
}

/* The prefix goes into :path, so nothing that ends or escapes a path. */
static const char *
check_api_prefix(const char *s)
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

static const char *
check_nonempty_set_id(const char *s)
{
	return *s == '\0' ? "empty nrfSetId" : NULL;
}

/* Values that become header fields must not smuggle in other fields. */
static const char *
check_header_value(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch == 0x7f)
			return "invalid header value: spaces and control characters are not allowed";
	}
	return NULL;
}

/* Retry-After (RFC 9110 §10.2.3): delay-seconds or an IMF-fixdate. */
static const char *
check_retry_after(const char *s)
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
static const char *
parse_hostport(const char *s, const char **host, size_t *host_len, uint16_t *port)
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
static int
compile_status_set(const char *pat, struct nrf_cfg_status_set *set,
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
/* Field tables.                                                       */

enum ftype {
	F_OBJECT,  /* nested JSON object; .sub walked on base + .off */
	F_STR,     /* const char * */
	F_STATUS,  /* "ENABLED" / "DISABLED" -> bool */
	F_BOOL,    /* true / false -> bool */
	F_U16,     /* integer in .min..max -> uint16_t */
	F_U32,     /* integer in .min..max -> uint32_t */
	F_ENUM,    /* one of .names -> enum (int-sized) */
	F_PATTERN, /* POSIX ERE -> const char * at .off, status set at .off2 */
	F_CUSTOM,  /* .load / .emit hooks; compared in nrf_cfg_equal() */
};

struct field;
typedef const char *(str_check_fn)(const char *s);
/* @p j is NULL when the field is absent. */
typedef void (load_fn)(struct load_ctx *c, const json_t *j, void *p, int arg);
typedef json_t *(emit_fn)(const struct nrf_cfg *cfg, const void *p, int arg);

struct field {
	const char *name;
	enum ftype type;
	size_t off;
	size_t off2;
	bool required;
	long long min;
	long long max;
	long long def;
	const char *def_str; /* NULL: resolved after the walk */
	const char *const *names;
	str_check_fn *check;
	const struct field *sub;
	load_fn *load;
	emit_fn *emit;
	int arg;
};

#define FLD(n, t, T, m) .name = (n), .type = (t), .off = offsetof(T, m)

static const char *const status_names[] = {"DISABLED", "ENABLED", NULL};
static const char *const scheme_names[] = {"http", "https", NULL};
static const char *const scope_names[] = {"HOST", "SET", NULL};
static const char *const transport_names[] = {"kernel", "dpdk", NULL};
static const char *const alog_format_names[] = {"text", "json", NULL};
static const char *const cond_names[] = {
	"NRF_Forwarding_Loop_Detection",
	"NRF_Forwarding_Loop_Prevention",
	"NRF_Forwarding_Hop_Limit",
	"NRF_Not_Reachable",
	"NRF_Forwarding_Overload",
	"NRF_Local_Unavailable",
	NULL,
};

static load_fn load_aliases, load_fwd_peers, load_sets, load_set_hosts,
	load_errors, load_listen, load_local_nrf, load_port_id;
static emit_fn emit_aliases, emit_fwd_peers, emit_sets, emit_set_hosts,
	emit_errors, emit_listen, emit_local_nrf, emit_port_id;

static const struct field general_fields[] = {
	{FLD("ocnrfHost", F_STR, struct nrf_cfg_general, host),
		.required = true, .def_str = "", .check = check_host},
	{FLD("ocnrfPort", F_U16, struct nrf_cfg_general, port),
		.required = true, .min = 1, .max = 65535},
	{FLD("nrfSetId", F_STR, struct nrf_cfg_general, nrf_set_id), .def_str = ""},
	{.name = "aliases", .type = F_CUSTOM, .load = load_aliases, .emit = emit_aliases},
	{FLD("viaOnResponses", F_BOOL, struct nrf_cfg_general, via_on_responses),
		.def = true},
	{NULL},
};

static const struct field trigger_codes_fields[] = {
	{FLD("pattern", F_PATTERN, struct nrf_cfg_forwarding, trigger_pattern),
		.off2 = offsetof(struct nrf_cfg_forwarding, triggers),
		.def_str = "^404$"},
	{NULL},
};

static const struct field trigger_fields[] = {
	{.name = "statusCodes", .type = F_OBJECT, .sub = trigger_codes_fields},
	{FLD("emptyDiscoveryResult", F_BOOL, struct nrf_cfg_forwarding,
		empty_discovery_result), .def = true},
	{NULL},
};

static const struct field reroute_fields[] = {
	{FLD("pattern", F_PATTERN, struct nrf_cfg_forwarding, reroute_pattern),
		.off2 = offsetof(struct nrf_cfg_forwarding, reroute),
		.def_str = "^5[0-9]{2}$"},
	{NULL},
};

static const struct field peer_fields[] = {
	{FLD("apiVersion", F_STR, struct nrf_cfg_peer, api_version),
		.def_str = "v1", .check = check_api_version},
	{FLD("scheme", F_ENUM, struct nrf_cfg_peer, scheme),
		.names = scheme_names, .def = NRF_SCHEME_HTTP},
	{FLD("fqdn", F_STR, struct nrf_cfg_peer, fqdn), .def_str = "", .check = check_fqdn},
	{FLD("ipv4Address", F_STR, struct nrf_cfg_peer, ipv4), .def_str = "",
		.check = check_ipv4},
	{FLD("ipv6Address", F_STR, struct nrf_cfg_peer, ipv6), .def_str = "",
		.check = check_ipv6},
	/* 0 = by scheme, resolved in load_peer() */
	{FLD("port", F_U16, struct nrf_cfg_peer, port), .min = 1, .max = 65535, .def = 0},
	{FLD("apiPrefix", F_STR, struct nrf_cfg_peer, api_prefix), .def_str = "",
		.check = check_api_prefix},
	{FLD("priority", F_U32, struct nrf_cfg_peer, priority),
		.min = 0, .max = 65535, .def = 1},
	{FLD("rewriteLinks", F_BOOL, struct nrf_cfg_peer, rewrite_links), .def = false},
	{NULL},
};

/* errorCause, errorTitle, errorDetail: NULL = the condition's default. */
static const struct field error_fields[] = {
	{FLD("errorCondition", F_ENUM, struct err_entry, cond), .required = true,
		.names = cond_names, .def = -1},
	{FLD("errorCode", F_U16, struct err_entry, code), .required = true,
		.min = 100, .max = 599},
	{FLD("errorCause", F_STR, struct err_entry, cause)},
	{FLD("errorTitle", F_STR, struct err_entry, title)},
	{FLD("errorDetail", F_STR, struct err_entry, detail)},
	{FLD("retryAfter", F_STR, struct err_entry, retry_after), .def_str = "",
		.check = check_retry_after},
	{FLD("redirectUrl", F_STR, struct err_entry, redirect_url), .def_str = "",
		.check = check_header_value},
	{NULL},
};

static const struct field fwd_fields[] = {
	{FLD("featureStatus", F_STATUS, struct nrf_cfg_forwarding, enabled), .def = false},
	{FLD("discoveryStatus", F_STATUS, struct nrf_cfg_forwarding, discovery), .def = true},
	{FLD("profileRetrievalStatus", F_STATUS, struct nrf_cfg_forwarding,
		profile_retrieval), .def = true},
	{FLD("subscriptionStatus", F_STATUS, struct nrf_cfg_forwarding, subscription),
		.def = true},
	{FLD("accessTokenStatus", F_STATUS, struct nrf_cfg_forwarding, access_token),
		.def = true},
	{.name = "forwardingTriggers", .type = F_OBJECT, .sub = trigger_fields},
	{.name = "nrfRerouteOnResponseHttpStatusCodes", .type = F_OBJECT,
		.sub = reroute_fields},
	{FLD("maxForwardAttempts", F_U32, struct nrf_cfg_forwarding, max_forward_attempts),
		.min = 1, .max = NRF_CFG_MAX_ATTEMPTS, .def = 2},
	{FLD("maxViaMembers", F_U32, struct nrf_cfg_forwarding, max_via_members),
		.min = 1, .max = NRF_CFG_MAX_VIA_MEMBERS, .def = 16},
	{.name = "nrfHostConfig", .type = F_CUSTOM, .load = load_fwd_peers,
		.emit = emit_fwd_peers},
	{.name = "errorResponses", .type = F_CUSTOM, .load = load_errors,
		.emit = emit_errors, .arg = NRF_MODE_FORWARDING},
	{NULL},
};

static const struct field set_fields[] = {
	{FLD("nrfSetId", F_STR, struct nrf_cfg_set, nrf_set_id), .required = true,
		.def_str = "", .check = check_nonempty_set_id},
	{.name = "nrfHostConfigList", .type = F_CUSTOM, .required = true,
		.load = load_set_hosts, .emit = emit_set_hosts},
	{NULL},
};

static const struct field growth_host_fields[] = {
	{.name = "staticNrfConfigList", .type = F_CUSTOM, .load = load_sets,
		.emit = emit_sets},
	{NULL},
};

static const struct field growth_fields[] = {
	{FLD("featureStatus", F_STATUS, struct nrf_cfg_growth, enabled), .def = false},
	{FLD("loopPreventionScope", F_ENUM, struct nrf_cfg_growth, scope),
		.names = scope_names, .def = NRF_SCOPE_HOST},
	{.name = "nrfHostConfig", .type = F_OBJECT, .sub = growth_host_fields},
	{.name = "errorResponses", .type = F_CUSTOM, .load = load_errors,
		.emit = emit_errors, .arg = NRF_MODE_GROWTH},
	{NULL},
};

static const struct field growth_outer_fields[] = {
	{FLD("nrfForwardingOptions", F_OBJECT, struct nrf_cfg, growth),
		.sub = growth_fields},
	{NULL},
};

static const struct field listen_fields[] = {
	{FLD("address", F_STR, struct nrf_cfg_listen, address), .def_str = "0.0.0.0",
		.check = check_bind_address},
	{FLD("port", F_U16, struct nrf_cfg_listen, port), .required = true,
		.min = 1, .max = 65535},
	{FLD("tls", F_BOOL, struct nrf_cfg_listen, tls), .def = false},
	{NULL},
};

static const struct field endpoint_fields[] = {
	{FLD("scheme", F_ENUM, struct nrf_cfg_endpoint, scheme),
		.names = scheme_names, .def = NRF_SCHEME_HTTP},
	{FLD("address", F_STR, struct nrf_cfg_endpoint, address), .required = true,
		.def_str = "", .check = check_host},
	/* 0 = by scheme, resolved in load_local_nrf() */
	{FLD("port", F_U16, struct nrf_cfg_endpoint, port), .min = 1, .max = 65535},
	{FLD("rewriteLinks", F_BOOL, struct nrf_cfg_endpoint, rewrite_links), .def = false},
	{NULL},
};

static const struct field mgmt_fields[] = {
	{FLD("address", F_STR, struct nrf_cfg_runtime, mgmt_address),
		.def_str = "127.0.0.1", .check = check_bind_address},
	{FLD("port", F_U16, struct nrf_cfg_runtime, mgmt_port),
		.min = 0, .max = 65535, .def = 9090},
	{NULL},
};

static const struct field timeout_fields[] = {
	{FLD("connectMs", F_U32, struct nrf_cfg_runtime, connect_ms),
		.min = 1, .max = 600000, .def = 1000},
	{FLD("perTryMs", F_U32, struct nrf_cfg_runtime, per_try_ms),
		.min = 1, .max = 600000, .def = 2000},
	{FLD("requestMs", F_U32, struct nrf_cfg_runtime, request_ms),
		.min = 1, .max = 600000, .def = 5000},
	/* What a client or peer can hold open (docs/config.md, "Timeouts"). */
	{FLD("handshakeMs", F_U32, struct nrf_cfg_runtime, handshake_ms),
		.min = 1, .max = 600000, .def = 5000},
	{FLD("requestHeaderMs", F_U32, struct nrf_cfg_runtime, request_header_ms),
		.min = 1, .max = 600000, .def = 5000},
	{FLD("requestBodyMs", F_U32, struct nrf_cfg_runtime, request_body_ms),
		.min = 1, .max = 600000, .def = 10000},
	{FLD("idleMs", F_U32, struct nrf_cfg_runtime, idle_ms),
		.min = 1, .max = 3600000, .def = 60000},
	{FLD("stalledReaderMs", F_U32, struct nrf_cfg_runtime, stalled_reader_ms),
		.min = 1, .max = 600000, .def = 10000},
	{FLD("upstreamIdleMs", F_U32, struct nrf_cfg_runtime, upstream_idle_ms),
		.min = 0, .max = 3600000, .def = 60000},
	{NULL},
};

static const struct field limit_fields[] = {
	{FLD("maxConnections", F_U32, struct nrf_cfg_runtime, max_connections),
		.min = 1, .max = 1000000, .def = 10000},
	{FLD("maxConcurrentStreams", F_U32, struct nrf_cfg_runtime,
		max_concurrent_streams), .min = 1, .max = 65535, .def = 128},
	{FLD("maxHeaderBytes", F_U32, struct nrf_cfg_runtime, max_header_bytes),
		.min = 1024, .max = 1048576, .def = 16384},
	{FLD("maxBodyBytes", F_U32, struct nrf_cfg_runtime, max_body_bytes),
		.min = 0, .max = 1073741824, .def = 1048576},
	{FLD("peerQueueDepth", F_U32, struct nrf_cfg_runtime, peer_queue_depth),
		.min = 1, .max = 1048576, .def = 1024},
	/* Bytes (u32: up to 4 GiB - 1); decision 0018. */
	{FLD("maxBufferedBytes", F_U32, struct nrf_cfg_runtime, max_buffered_bytes),
		.min = 4194304, .max = 4294967295LL, .def = 1073741824},
	{NULL},
};

/* runtime.health: a held-down upstream comes back within
 * probeIntervalMaxMs (+ one round trip) of its return; the interval rule
 * is in check_timeouts(). */
static const struct field health_fields[] = {
	{FLD("probeIntervalMs", F_U32, struct nrf_cfg_runtime, probe_interval_ms),
		.min = 10, .max = 60000, .def = 250},
	{FLD("probeIntervalMaxMs", F_U32, struct nrf_cfg_runtime, probe_interval_max_ms),
		.min = 10, .max = 600000, .def = 500},
	{FLD("probeTimeoutMs", F_U32, struct nrf_cfg_runtime, probe_timeout_ms),
		.min = 10, .max = 60000, .def = 500},
	{NULL},
};

/* runtime.accessLog (docs/access-log.md); a path that cannot be opened
 * is found when the data path starts (nrf_rt_create()). */
static const struct field alog_fields[] = {
	{FLD("path", F_STR, struct nrf_cfg_access_log, path), .def_str = ""},
	{FLD("format", F_ENUM, struct nrf_cfg_access_log, format),
		.names = alog_format_names, .def = NRF_ALOG_TEXT},
	{FLD("sample", F_U32, struct nrf_cfg_access_log, sample),
		.min = 1, .max = 1000000, .def = 1},
	{FLD("maxLinesPerSecond", F_U32, struct nrf_cfg_access_log, max_per_second),
		.min = 0, .max = 10000000, .def = 0},
	{FLD("flushMs", F_U32, struct nrf_cfg_access_log, flush_ms),
		.min = 10, .max = 10000, .def = 200},
	{NULL},
};

/* runtime.requestId (docs/access-log.md, "Request ids"). */
static const struct field rid_fields[] = {
	{FLD("generate", F_BOOL, struct nrf_cfg_runtime, request_id_generate), .def = true},
	{NULL},
};

/* The DPDK port (struct nrf_tp_dpdk_conf); rules across fields in
 * check_dpdk(). */
static const struct field dpdk_fields[] = {
	{FLD("ipv4Address", F_STR, struct nrf_cfg_dpdk, ipv4_address), .def_str = "",
		.check = check_ipv4},
	{FLD("prefixLength", F_U16, struct nrf_cfg_dpdk, prefix_length),
		.min = 1, .max = 32, .def = 24},
	{FLD("gateway", F_STR, struct nrf_cfg_dpdk, gateway), .def_str = "",
		.check = check_ipv4},
	{FLD("portId", F_CUSTOM, struct nrf_cfg_dpdk, port_id),
		.load = load_port_id, .emit = emit_port_id},
	{FLD("rxDescriptors", F_U32, struct nrf_cfg_dpdk, rx_descriptors),
		.min = 64, .max = 16384, .def = 1024},
	{FLD("txDescriptors", F_U32, struct nrf_cfg_dpdk, tx_descriptors),
		.min = 64, .max = 16384, .def = 1024},
	{FLD("mbufs", F_U32, struct nrf_cfg_dpdk, mbufs),
		.min = 1023, .max = 1048575, .def = 8191},
	{FLD("mbufCache", F_U32, struct nrf_cfg_dpdk, mbuf_cache),
		.min = 0, .max = 512, .def = 256},
	{FLD("burst", F_U32, struct nrf_cfg_dpdk, burst), .min = 1, .max = 64, .def = 32},
	{FLD("idleSpin", F_U32, struct nrf_cfg_dpdk, idle_spin),
		.min = 0, .max = 1000000, .def = 512},
	{FLD("idleSleepUs", F_U32, struct nrf_cfg_dpdk, idle_sleep_us),
		.min = 0, .max = 100000, .def = 100},
	{FLD("idleSleepMaxUs", F_U32, struct nrf_cfg_dpdk, idle_sleep_max_us),
		.min = 0, .max = 1000000, .def = 1000},
	{FLD("arpProbeMs", F_U32, struct nrf_cfg_dpdk, arp_probe_ms),
		.min = 0, .max = 10000, .def = 300},
	{FLD("linkWaitMs", F_U32, struct nrf_cfg_dpdk, link_wait_ms),
		.min = 0, .max = 60000, .def = 2000},
	{NULL},
};

/* runtime.tls / runtime.tlsClient (docs/tls.md); files are loaded by the
 * runtime, consistency is checked in check_tls(). */
static const struct field tls_fields[] = {
	{FLD("certFile", F_STR, struct nrf_cfg_tls, cert_file), .def_str = ""},
	{FLD("keyFile", F_STR, struct nrf_cfg_tls, key_file), .def_str = ""},
	{FLD("caFile", F_STR, struct nrf_cfg_tls, ca_file), .def_str = ""},
	{FLD("verifyClient", F_BOOL, struct nrf_cfg_tls, verify_client), .def = false},
	{FLD("cipherSuites", F_STR, struct nrf_cfg_tls, cipher_suites), .def_str = ""},
	{FLD("ciphers", F_STR, struct nrf_cfg_tls, ciphers), .def_str = ""},
	{FLD("groups", F_STR, struct nrf_cfg_tls, groups), .def_str = ""},
	{NULL},
};

static const struct field tls_client_fields[] = {
	{FLD("caFile", F_STR, struct nrf_cfg_tls_client, ca_file), .def_str = ""},
	{FLD("certFile", F_STR, struct nrf_cfg_tls_client, cert_file), .def_str = ""},
	{FLD("keyFile", F_STR, struct nrf_cfg_tls_client, key_file), .def_str = ""},
	{FLD("cipherSuites", F_STR, struct nrf_cfg_tls_client, cipher_suites), .def_str = ""},
	{FLD("ciphers", F_STR, struct nrf_cfg_tls_client, ciphers), .def_str = ""},
	{FLD("groups", F_STR, struct nrf_cfg_tls_client, groups), .def_str = ""},
	{NULL},
};

static const struct field runtime_fields[] = {
	{.name = "listen", .type = F_CUSTOM, .load = load_listen, .emit = emit_listen},
	{FLD("localNrf", F_CUSTOM, struct nrf_cfg_runtime, local_nrf),
		.load = load_local_nrf, .emit = emit_local_nrf},
	{.name = "management", .type = F_OBJECT, .sub = mgmt_fields},
	{.name = "timeouts", .type = F_OBJECT, .sub = timeout_fields},
	{.name = "limits", .type = F_OBJECT, .sub = limit_fields},
	{.name = "health", .type = F_OBJECT, .sub = health_fields},
	{FLD("accessLog", F_OBJECT, struct nrf_cfg_runtime, access_log), .sub = alog_fields},
	{.name = "requestId", .type = F_OBJECT, .sub = rid_fields},
	{FLD("transport", F_ENUM, struct nrf_cfg_runtime, transport),
		.names = transport_names, .def = NRF_TRANSPORT_KERNEL},
	{FLD("dpdk", F_OBJECT, struct nrf_cfg_runtime, dpdk), .sub = dpdk_fields},
	{FLD("tls", F_OBJECT, struct nrf_cfg_runtime, tls), .sub = tls_fields},
	{FLD("tlsClient", F_OBJECT, struct nrf_cfg_runtime, tls_client),
		.sub = tls_client_fields},
	{NULL},
};

static const struct field root_fields[] = {
	{FLD("generalOptions", F_OBJECT, struct nrf_cfg, general), .sub = general_fields},
	{FLD("forwardingOptions", F_OBJECT, struct nrf_cfg, fwd), .sub = fwd_fields},
	{.name = "nrfGrowth", .type = F_OBJECT, .sub = growth_outer_fields},
	{FLD("runtime", F_OBJECT, struct nrf_cfg, rt), .sub = runtime_fields},
	{NULL},
};

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
	const char *const *names = f->type == F_STATUS ? status_names : f->names;
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

	if (compile_status_set(f->def_str,
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
		if (compile_status_set(json_string_value(v),
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

static void
load_aliases(struct load_ctx *c, const json_t *j, void *p, int arg)
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
		} else if ((r = parse_hostport(json_string_value(v), &host, &host_len,
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
	load_object(c, peer_fields, j, &pe);
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

static void
load_fwd_peers(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	(void)p;
	(void)arg;
	if (j == NULL || !expect_array(c, j))
		return;
	load_peer_list(c, j, NRF_MODE_FORWARDING, 0);
}

static void
load_set_hosts(struct load_ctx *c, const json_t *j, void *p, int arg)
{
	(void)p;
	(void)arg;
	if (j == NULL || !expect_array(c, j))
		return;
	if (json_array_size(j) == 0)
		problem(c, "empty NRF set: list at least one host");
	load_peer_list(c, j, NRF_MODE_GROWTH, c->cur_set);
}

static void
load_sets(struct load_ctx *c, const json_t *j, void *p, int arg)
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
		load_object(c, set_fields, v, &s);
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

static void
load_errors(struct load_ctx *c, const json_t *j, void *p, int mode)
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
		load_object(c, error_fields, v, &e);
		if (e.cond >= 0 && e.cond < NRF_COND_COUNT) {
			if (seen[e.cond]) {
				size_t o2 = path_push(c, "errorCondition");

				problem(c, "duplicate errorCondition %s in this list",
					cond_names[e.cond]);
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

static void
load_listen(struct load_ctx *c, const json_t *j, void *p, int arg)
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
		load_object(c, listen_fields, v, &l);
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
static void
load_local_nrf(struct load_ctx *c, const json_t *j, void *p, int arg)
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
	load_object(c, endpoint_fields, j, ep);
	ep->present = true;
	if (ep->port == 0)
		ep->port = ep->scheme == NRF_SCHEME_HTTPS ? 443 : 80;
}

/* runtime.dpdk.portId: absent or null = the only port (-1), or 0..1023.
 * null is what emit writes, so an emitted document reloads. */
#define DPDK_MAX_PORT_ID 1023

static void
load_port_id(struct load_ctx *c, const json_t *j, void *p, int arg)
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
/* Final pass: rules across fields.                                    */

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
	[NRF_COND_OVERLOAD] = {503, "NF_CONGESTION",
		"The NRF is too busy to forward the request."},
	/* Retry-After 1: health probes bring an upstream back within about a
	 * second of its return (runtime.health). */
	[NRF_COND_LOCAL_UNAVAILABLE] = {503, "NF_SERVICE_FAILURE",
		"The local NRF could not be reached; no other NRF had the answer.", "1"},
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
			problem_at(c, ptr, "own identity %s listed as a peer (see %s)",
				ids[i].key, first_ptr);
		else
			problem_at(c, ptr, "duplicate identity %s (also at %s)",
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
				problem_at(c, ptr, "duplicate nrfSetId %s", c->sets[i].nrf_set_id);
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
		problem_at(c, "/runtime/timeouts/perTryMs",
			"out of range: perTryMs %u exceeds requestMs %u",
			rt->per_try_ms, rt->request_ms);
	if (rt->connect_ms > rt->request_ms)
		problem_at(c, "/runtime/timeouts/connectMs",
			"out of range: connectMs %u exceeds requestMs %u",
			rt->connect_ms, rt->request_ms);
	if (rt->probe_interval_max_ms < rt->probe_interval_ms)
		problem_at(c, "/runtime/health/probeIntervalMaxMs",
			"out of range: probeIntervalMaxMs %u is below probeIntervalMs %u",
			rt->probe_interval_max_ms, rt->probe_interval_ms);
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

/*
 * runtime.dpdk on its own (pool sizes, address and gateway), and with
 * transport "dpdk" what the port can serve: lwIP is IPv4 only, listens on
 * 0.0.0.0 or the port's address, and cannot reach loopback or itself.
 */
/* TLS settings that only make sense together (files are loaded later, by
 * the runtime and by `nrfwd-ctl check`). */
static void
check_tls(struct load_ctx *c)
{
	const struct nrf_cfg_runtime *rt = &c->cfg->rt;

	/* certFile missing with a tls listener: reported by the runtime's
	 * file check (nrf_rt_tls_check()), with the other file problems. */
	if (rt->tls.verify_client && *rt->tls.ca_file == '\0')
		problem_at(c, "/runtime/tls/caFile", "missing: required with verifyClient: true");
	if (*rt->tls_client.key_file != '\0' && *rt->tls_client.cert_file == '\0')
		problem_at(c, "/runtime/tlsClient/certFile", "missing: keyFile is set");
}

static void
check_dpdk(struct load_ctx *c)
{
	const struct nrf_cfg_runtime *rt = &c->cfg->rt;
	const struct nrf_cfg_dpdk *d = &rt->dpdk;
	uint32_t ip = 0, gw, mask;
	bool have_ip = ipv4_of(d->ipv4_address, &ip);

	mask = d->prefix_length >= 32 ? UINT32_MAX : ~(UINT32_MAX >> d->prefix_length);
	if (rt->transport == NRF_TRANSPORT_DPDK && *d->ipv4_address == '\0')
		problem_at(c, "/runtime/dpdk/ipv4Address", "missing required field: the DPDK "
			"port's address (transport \"dpdk\")");
	if (have_ip && (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 14 ||
		    (d->prefix_length < 31 && ((ip & ~mask) == 0 || (ip | mask) == UINT32_MAX))))
		problem_at(c, "/runtime/dpdk/ipv4Address", "not a usable host address on a /%u "
			"network", d->prefix_length);
	if (have_ip && ipv4_of(d->gateway, &gw) && ((gw & mask) != (ip & mask) || gw == ip))
		problem_at(c, "/runtime/dpdk/gateway", "not on the port's network %s/%u",
			d->ipv4_address, d->prefix_length);
	if ((uint64_t)d->mbufs < (uint64_t)d->rx_descriptors + d->tx_descriptors +
			2u * d->burst + d->mbuf_cache)
		problem_at(c, "/runtime/dpdk/mbufs", "out of range: %u mbufs cannot fill %u RX + "
			"%u TX descriptors, two bursts of %u and a cache of %u", d->mbufs,
			d->rx_descriptors, d->tx_descriptors, d->burst, d->mbuf_cache);
	if (d->idle_sleep_max_us < d->idle_sleep_us)
		problem_at(c, "/runtime/dpdk/idleSleepMaxUs", "out of range: %u is below "
			"idleSleepUs %u", d->idle_sleep_max_us, d->idle_sleep_us);
	if (rt->transport != NRF_TRANSPORT_DPDK)
		return;
	if (rt->local_nrf.present) {
		uint32_t a;
		const char *addr = rt->local_nrf.address;

		if (loopback_host(addr) || (have_ip && ipv4_of(addr, &a) && a == ip))
			problem_at(c, "/runtime/localNrf/address", "not reachable over the DPDK "
				"port: loopback or the port's own address");
		else if (strchr(addr, ':') != NULL)
			problem_at(c, "/runtime/localNrf/address", "the DPDK transport is IPv4 "
				"only");
	}
	if (!have_ip)
		return;
	for (size_t i = 0; i < rt->n_listen; i++) {
		char ptr[64];
		uint32_t a;

		if (ipv4_of(rt->listen[i].address, &a) && (a == 0 || a == ip))
			continue;
		snprintf(ptr, sizeof(ptr), "/runtime/listen/%zu/address", i);
		problem_at(c, ptr, "the DPDK port serves only 0.0.0.0 or its own address %s",
			d->ipv4_address);
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
	check_identities(c);
	check_sets(c);
	check_timeouts(c);
	check_dpdk(c);
	check_tls(c);
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
		problem_at(&c, "", "wrong type: the document must be a JSON object");
		c.quiet++;
		load_object(&c, root_fields, NULL, cfg);
		c.quiet--;
	} else {
		load_object(&c, root_fields, root, cfg);
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
		if (problems_add(problems, "", "line %zu, column %zu: NUL byte in text",
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
		if (problems_add(problems, "", "line %d, column %d: %s", jerr.line,
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
	if (problems_add(problems, "", "cannot read %s: %s", path, why) != 0) {
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

/* ------------------------------------------------------------------ */
/* Emit.                                                               */

static json_t *emit_object(const struct nrf_cfg *cfg, const struct field *fields,
	const void *base);

static json_t *
emit_value(const struct nrf_cfg *cfg, const struct field *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	int v;

	switch (f->type) {
	case F_OBJECT:
		return emit_object(cfg, f->sub, p);
	case F_STR:
	case F_PATTERN:
		return json_string(*(const char *const *)p);
	case F_STATUS:
		return json_string(status_names[*(const bool *)p ? 1 : 0]);
	case F_BOOL:
		return json_boolean(*(const bool *)p);
	case F_U16:
		return json_integer(*(const uint16_t *)p);
	case F_U32:
		return json_integer(*(const uint32_t *)p);
	case F_ENUM:
		v = *(const int *)p;
		for (int i = 0; f->names[i] != NULL; i++)
			if (i == v)
				return json_string(f->names[i]);
		return NULL;
	case F_CUSTOM:
		return f->emit(cfg, p, f->arg);
	}
	return NULL;
}

/* jansson keeps insertion order, so the table order is the key order. */
static json_t *
emit_object(const struct nrf_cfg *cfg, const struct field *fields, const void *base)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	for (const struct field *f = fields; f->name != NULL; f++) {
		if (json_object_set_new(o, f->name, emit_value(cfg, f, base)) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *
emit_peer_range(const struct nrf_cfg *cfg, size_t first, size_t n)
{
	json_t *a = json_array();

	for (size_t i = first; a != NULL && i < first + n; i++) {
		if (json_array_append_new(a, emit_object(cfg, peer_fields,
				&cfg->peers[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
emit_fwd_peers(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_forwarding *fwd = p;

	(void)arg;
	return emit_peer_range(cfg, fwd->first_peer, fwd->n_peers);
}

static json_t *
emit_set_hosts(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_set *s = p;

	(void)arg;
	return emit_peer_range(cfg, s->first_peer, s->n_peers);
}

static json_t *
emit_sets(const struct nrf_cfg *cfg, const void *p, int arg)
{
	json_t *a = json_array();

	(void)p;
	(void)arg;
	for (size_t i = 0; a != NULL && i < cfg->n_sets; i++) {
		if (json_array_append_new(a, emit_object(cfg, set_fields,
				&cfg->sets[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * Only configured responses are written: the defaults stay defaults, so a
 * reloaded document keeps `configured` as it was.
 */
static json_t *
emit_errors(const struct nrf_cfg *cfg, const void *p, int mode)
{
	json_t *a = json_array();

	(void)p;
	for (int k = 0; a != NULL && k < NRF_COND_COUNT; k++) {
		const struct nrf_cfg_error_response *r = &cfg->errors[mode][k];
		struct err_entry e = {k, r->status, r->cause, r->title, r->detail,
			r->retry_after, r->redirect_url};

		if (!r->configured)
			continue;
		if (json_array_append_new(a, emit_object(cfg, error_fields, &e)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
emit_hostport(const struct nrf_cfg_hostport *hp)
{
	if (strchr(hp->host, ':') != NULL)
		return json_sprintf("[%s]:%u", hp->host, hp->port);
	return json_sprintf("%s:%u", hp->host, hp->port);
}

static json_t *
emit_aliases(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_general *g = p;
	json_t *a = json_array();

	(void)cfg;
	(void)arg;
	for (size_t i = 0; a != NULL && i < g->n_aliases; i++) {
		if (json_array_append_new(a, emit_hostport(&g->aliases[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
emit_listen(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_runtime *rt = p;
	json_t *a = json_array();

	(void)arg;
	for (size_t i = 0; a != NULL && i < rt->n_listen; i++) {
		if (json_array_append_new(a, emit_object(cfg, listen_fields,
				&rt->listen[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
emit_port_id(const struct nrf_cfg *cfg, const void *p, int arg)
{
	int32_t id = *(const int32_t *)p;

	(void)cfg;
	(void)arg;
	return id < 0 ? json_null() : json_integer(id);
}

static json_t *
emit_local_nrf(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_endpoint *ep = p;

	(void)arg;
	if (!ep->present)
		return json_null();
	return emit_object(cfg, endpoint_fields, ep);
}

char *
nrf_cfg_emit(const struct nrf_cfg *cfg, enum nrf_cfg_group group, int indent,
	int *err)
{
	const struct field *fields;
	const void *base;
	size_t flags, n;
	json_t *j;
	char *out;

	if (cfg == NULL) {
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	switch (group) {
	case NRF_CFG_ALL:
		fields = root_fields;
		base = cfg;
		break;
	case NRF_CFG_GENERAL:
		fields = general_fields;
		base = &cfg->general;
		break;
	case NRF_CFG_FORWARDING:
		fields = fwd_fields;
		base = &cfg->fwd;
		break;
	case NRF_CFG_GROWTH:
		fields = growth_fields;
		base = &cfg->growth;
		break;
	case NRF_CFG_RUNTIME:
		fields = runtime_fields;
		base = &cfg->rt;
		break;
	default:
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	flags = indent > 0 ? JSON_INDENT(NRF_MIN(indent, 31)) : JSON_COMPACT;
	j = emit_object(cfg, fields, base);
	if (j == NULL) {
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	/* dump into our own malloc'd buffer: the caller free()s it */
	n = json_dumpb(j, NULL, 0, flags);
	out = n != 0 ? malloc(n + 1) : NULL;
	if (out == NULL || json_dumpb(j, out, n, flags) != n) {
		free(out);
		json_decref(j);
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	out[n] = '\0';
	json_decref(j);
	set_err(err, 0);
	return out;
}

/* ------------------------------------------------------------------ */
/* Compare.                                                            */

static bool
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
eq_object(const struct field *fields, const void *a, const void *b)
{
	for (const struct field *f = fields; f->name != NULL; f++) {
		const char *pa = (const char *)a + f->off;
		const char *pb = (const char *)b + f->off;

		switch (f->type) {
		case F_OBJECT:
			if (!eq_object(f->sub, pa, pb))
				return false;
			break;
		case F_PATTERN:
			if (memcmp((const char *)a + f->off2, (const char *)b + f->off2,
				    sizeof(struct nrf_cfg_status_set)) != 0)
				return false;
			/* fall through */
		case F_STR:
			if (!str_eq(*(const char *const *)pa, *(const char *const *)pb))
				return false;
			break;
		case F_STATUS:
		case F_BOOL:
			if (*(const bool *)pa != *(const bool *)pb)
				return false;
			break;
		case F_U16:
			if (*(const uint16_t *)pa != *(const uint16_t *)pb)
				return false;
			break;
		case F_U32:
			if (*(const uint32_t *)pa != *(const uint32_t *)pb)
				return false;
			break;
		case F_ENUM:
			if (*(const int *)pa != *(const int *)pb)
				return false;
			break;
		case F_CUSTOM:
			break;
		}
	}
	return true;
}

static bool
hostport_eq(const struct nrf_cfg_hostport *a, const struct nrf_cfg_hostport *b)
{
	return a->port == b->port && str_eq(a->host, b->host);
}

static bool
peer_eq(const struct nrf_cfg_peer *a, const struct nrf_cfg_peer *b)
{
	if (!eq_object(peer_fields, a, b) || a->index != b->index ||
		a->mode != b->mode || a->set != b->set || a->n_ids != b->n_ids ||
		!str_eq(a->name, b->name) || !str_eq(a->pointer, b->pointer))
		return false;
	for (int i = 0; i < a->n_ids && i < 3; i++)
		if (!hostport_eq(&a->ids[i], &b->ids[i]))
			return false;
	return true;
}

static bool
error_eq(const struct nrf_cfg_error_response *a, const struct nrf_cfg_error_response *b)
{
	return a->status == b->status && a->configured == b->configured &&
		str_eq(a->cause, b->cause) && str_eq(a->title, b->title) &&
		str_eq(a->detail, b->detail) && str_eq(a->retry_after, b->retry_after) &&
		str_eq(a->redirect_url, b->redirect_url);
}

bool
nrf_cfg_equal(const struct nrf_cfg *a, const struct nrf_cfg *b)
{
	const struct nrf_cfg_runtime *ra, *rb;

	if (a == b)
		return true;
	if (a == NULL || b == NULL)
		return false;
	if (!eq_object(root_fields, a, b))
		return false;

	/* what F_CUSTOM hooks and the final pass own */
	if (a->general.n_aliases != b->general.n_aliases ||
		!str_eq(a->general.self_name, b->general.self_name))
		return false;
	for (size_t i = 0; i < a->general.n_aliases; i++)
		if (!hostport_eq(&a->general.aliases[i], &b->general.aliases[i]))
			return false;

	ra = &a->rt;
	rb = &b->rt;
	if (!nrf_cfg_dpdk_equal(&ra->dpdk, &rb->dpdk))
		return false;
	if (ra->n_listen != rb->n_listen)
		return false;
	for (size_t i = 0; i < ra->n_listen; i++)
		if (!eq_object(listen_fields, &ra->listen[i], &rb->listen[i]))
			return false;
	if (ra->local_nrf.present != rb->local_nrf.present ||
		(ra->local_nrf.present &&
			!eq_object(endpoint_fields, &ra->local_nrf, &rb->local_nrf)))
		return false;

	for (int m = 0; m < NRF_MODE_COUNT; m++)
		for (int k = 0; k < NRF_COND_COUNT; k++)
			if (!error_eq(&a->errors[m][k], &b->errors[m][k]))
				return false;

	if (a->n_peers != b->n_peers || a->n_sets != b->n_sets ||
		a->fwd.first_peer != b->fwd.first_peer ||
		a->fwd.n_peers != b->fwd.n_peers ||
		a->growth.first_peer != b->growth.first_peer ||
		a->growth.n_peers != b->growth.n_peers)
		return false;
	for (size_t i = 0; i < a->n_peers; i++)
		if (!peer_eq(&a->peers[i], &b->peers[i]))
			return false;
	for (size_t i = 0; i < a->n_sets; i++)
		if (!str_eq(a->sets[i].nrf_set_id, b->sets[i].nrf_set_id) ||
			a->sets[i].first_peer != b->sets[i].first_peer ||
			a->sets[i].n_peers != b->sets[i].n_peers)
			return false;
	return true;
}

bool
nrf_cfg_dpdk_equal(const struct nrf_cfg_dpdk *a, const struct nrf_cfg_dpdk *b)
{
	return eq_object(dpdk_fields, a, b) && a->port_id == b->port_id;
}

const char *
nrf_cfg_transport_name(enum nrf_cfg_transport t)
{
	if ((int)t < 0 || t > NRF_TRANSPORT_DPDK)
		return NULL;
	return transport_names[t];
}

const char *
nrf_cfg_cond_name(enum nrf_cfg_cond cond)
{
	if ((int)cond < 0 || cond >= NRF_COND_COUNT)
		return NULL;
	return cond_names[cond];
}

const char *
nrf_cfg_mode_name(enum nrf_cfg_mode mode)
{
	switch (mode) {
	case NRF_MODE_FORWARDING:
		return "forwarding";
	case NRF_MODE_GROWTH:
		return "growth";
	default:
		return NULL;
	}
}
