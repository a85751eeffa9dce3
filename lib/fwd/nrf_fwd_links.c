/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Links that point past nrfwd (docs/decisions/0013-links-past-nrfwd.md):
 * an upstream's absolute URIs of itself, in Location and in HAL "href"
 * members, turned into URIs of the apiRoot the client used.
 *
 * The JSON side is a scanner, not a parser: it walks string tokens, and a
 * string followed by ':' is a member name. That is all it needs to find
 * "href" members at any depth, it never allocates, and on input that is
 * not JSON it does nothing worse than leave the bytes alone. Matching
 * works on the decoded start of a string (so `http:\/\/host` matches), but
 * only the origin is replaced: the rest of the string keeps its bytes and
 * its escapes, so valid JSON stays valid.
 */
#include <string.h>
#include <strings.h>

#include "nrf_err.h"
#include "nrf_fwd.h"

void
nrf_fwd_links_peer(struct nrf_fwd_links *l, const struct nrf_cfg_peer *p)
{
	const char *hosts[3] = {p->fqdn, p->ipv4, p->ipv6};

	l->n_from = 0;
	for (int i = 0; i < 3; i++) {
		struct nrf_fwd_link_origin *o;

		if (hosts[i] == NULL || hosts[i][0] == '\0')
			continue;
		o = &l->from[l->n_from++];
		o->scheme = p->scheme;
		o->host = hosts[i];
		o->port = p->port;
		o->api_prefix = p->api_prefix != NULL ? p->api_prefix : "";
	}
}

void
nrf_fwd_links_local(struct nrf_fwd_links *l, const struct nrf_cfg_endpoint *ep)
{
	l->n_from = 0;
	if (!ep->present || ep->address == NULL || ep->address[0] == '\0')
		return;
	l->from[0].scheme = ep->scheme;
	l->from[0].host = ep->address;
	l->from[0].port = ep->port;
	l->from[0].api_prefix = "";
	l->n_from = 1;
}

bool
nrf_fwd_links_json_type(struct nrf_slice ct)
{
	const char *semi = ct.p != NULL ? memchr(ct.p, ';', ct.len) : NULL;
	size_t n = semi != NULL ? (size_t)(semi - ct.p) : ct.len;
	const char *p = ct.p;

	while (n > 0 && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n < 16 || strncasecmp(p, "application/", 12) != 0)
		return false;
	if (n == 16 && strncasecmp(p + 12, "json", 4) == 0)
		return true;
	return n > 17 && strncasecmp(p + n - 5, "+json", 5) == 0;
}

/* ------------------------------------------------------------------------ */
/* Matching an origin                                                        */

static bool
prefix_usable(const struct nrf_fwd_links *l)
{
	const struct nrf_slice s[2] = {l->to_scheme, l->to_authority};

	for (int k = 0; k < 2; k++) {
		if (s[k].p == NULL || s[k].len == 0)
			return false;
		for (size_t i = 0; i < s[k].len; i++) {
			unsigned char c = (unsigned char)s[k].p[i];

			if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
				return false;
		}
	}
	return true;
}

/* Hosts compare case-insensitively, one trailing dot ignored on each side. */
static bool
host_eq(const char *h, size_t n, const char *want)
{
	size_t m = strlen(want);

	if (n > 1 && h[n - 1] == '.')
		n--;
	if (m > 1 && want[m - 1] == '.')
		m--;
	return n == m && n > 0 && strncasecmp(h, want, n) == 0;
}

/*
 * Length of the origin of @p o at the start of @p d (@p n bytes, decoded),
 * or 0. @p complete: @p d is the whole URI, so its end is a boundary.
 */
static size_t
origin_match(const struct nrf_fwd_link_origin *o, const char *d, size_t n, bool complete)
{
	const char *sch = o->scheme == NRF_SCHEME_HTTPS ? "https" : "http";
	size_t sl = o->scheme == NRF_SCHEME_HTTPS ? 5 : 4;
	size_t a, ae, hs, he, p, plen, e;
	uint32_t port;

	if (n < sl + 3 || strncasecmp(d, sch, sl) != 0 || memcmp(d + sl, "://", 3) != 0)
		return 0;
	a = sl + 3;
	for (ae = a; ae < n && d[ae] != '/' && d[ae] != '?' && d[ae] != '#'; ae++)
		;
	if (ae == n && !complete)
		return 0; /* the authority may go on past what was decoded */
	if (ae == a || memchr(d + a, '@', ae - a) != NULL)
		return 0; /* no host, or userinfo: never ours */
	if (d[a] == '[') {
		const char *close = memchr(d + a, ']', ae - a);

		if (close == NULL)
			return 0;
		hs = a + 1;
		he = (size_t)(close - d);
		p = he + 1;
	} else {
		const char *colon = memchr(d + a, ':', ae - a);

		hs = a;
		he = colon != NULL ? (size_t)(colon - d) : ae;
		p = he;
	}
	port = o->scheme == NRF_SCHEME_HTTPS ? 443 : 80;
	if (p < ae) {
		if (d[p++] != ':')
			return 0;
		if (p < ae) {
			port = 0;
			for (; p < ae; p++) {
				if (d[p] < '0' || d[p] > '9')
					return 0;
				port = port * 10 + (uint32_t)(d[p] - '0');
				if (port > 65535)
					return 0;
			}
		}
	}
	if (port != o->port || !host_eq(d + hs, he - hs, o->host))
		return 0;
	plen = strlen(o->api_prefix);
	if (n - ae < plen || memcmp(d + ae, o->api_prefix, plen) != 0)
		return 0;
	e = ae + plen;
	if (e == n)
		return complete ? e : 0;
	return d[e] == '/' || d[e] == '?' || d[e] == '#' ? e : 0;
}

static size_t
match_any(const struct nrf_fwd_links *l, const char *d, size_t n, bool complete)
{
	for (unsigned int i = 0; i < l->n_from && i < NRF_FWD_LINKS_MAX_FROM; i++) {
		size_t m = origin_match(&l->from[i], d, n, complete);

		if (m > 0)
			return m;
	}
	return 0;
}

/* The client-facing prefix written at @p out + @p o (room checked). */
static size_t
put_prefix(const struct nrf_fwd_links *l, char *out, size_t o)
{
	memcpy(out + o, l->to_scheme.p, l->to_scheme.len);
	o += l->to_scheme.len;
	memcpy(out + o, "://", 3);
	o += 3;
	memcpy(out + o, l->to_authority.p, l->to_authority.len);
	return o + l->to_authority.len;
}

/* True when raw bytes @p r (@p n) already are the client-facing prefix. */
static bool
is_prefix(const struct nrf_fwd_links *l, const char *r, size_t n)
{
	size_t sl = l->to_scheme.len;

	return n == sl + 3 + l->to_authority.len && memcmp(r, l->to_scheme.p, sl) == 0 &&
	       memcmp(r + sl, "://", 3) == 0 &&
	       memcmp(r + sl + 3, l->to_authority.p, l->to_authority.len) == 0;
}

int
nrf_fwd_links_uri(const struct nrf_fwd_links *l, const char *in, size_t len, char *out, size_t cap,
	size_t *out_len)
{
	size_t m, plen, n;

	if (l == NULL || (in == NULL && len > 0) || (out == NULL && cap > 0) || out_len == NULL ||
		!prefix_usable(l))
		return NRF_EINVAL;
	m = match_any(l, in, len, true);
	if (m == 0 || is_prefix(l, in, m))
		return 0;
	plen = l->to_scheme.len + 3 + l->to_authority.len;
	n = plen + (len - m);
	if (n > cap)
		return NRF_ETOOBIG;
	put_prefix(l, out, 0);
	memcpy(out + plen, in + m, len - m);
	*out_len = n;
	return 1;
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */

/*
 * One character of a JSON string at @p r (@p n raw bytes left, n > 0):
 * its decoded byte in @p c and its raw length, or 0 for an escape this
 * code does not decode (a non-ASCII \u, or a malformed one).
 */
static size_t
json_char(const char *r, size_t n, char *c)
{
	int v = 0;

	if (r[0] != '\\') {
		*c = r[0];
		return 1;
	}
	if (n < 2)
		return 0;
	switch (r[1]) {
	case '"':
	case '\\':
	case '/':
		*c = r[1];
		return 2;
	case 'b':
		*c = '\b';
		return 2;
	case 'f':
		*c = '\f';
		return 2;
	case 'n':
		*c = '\n';
		return 2;
	case 'r':
		*c = '\r';
		return 2;
	case 't':
		*c = '\t';
		return 2;
	case 'u':
		if (n < 6)
			return 0;
		for (int i = 2; i < 6; i++) {
			int h = nrf_hexval(r[i]);

			if (h < 0)
				return 0;
			v = v * 16 + h;
		}
		if (v == 0 || v > 0x7f)
			return 0;
		*c = (char)v;
		return 6;
	default:
		return 0;
	}
}

/*
 * Decode the start of a JSON string (raw bytes @p r, @p n, no quotes) into
 * @p d (up to @p cap bytes). @p complete: the whole string was decoded.
 */
static size_t
json_decode(const char *r, size_t n, char *d, size_t cap, bool *complete)
{
	size_t i = 0, k = 0;

	while (i < n && k < cap) {
		size_t step = json_char(r + i, n - i, &d[k]);

		if (step == 0)
			break;
		i += step;
		k++;
	}
	*complete = i == n;
	return k;
}

/* Raw bytes of the first @p m decoded characters of @p r (all decodable). */
static size_t
json_raw_len(const char *r, size_t n, size_t m)
{
	size_t i = 0;
	char c;

	while (m-- > 0)
		i += json_char(r + i, n - i, &c);
	return i;
}

/* Index of the closing quote of the string whose contents start at @p s,
 * or @p len when it is not closed. */
static size_t
json_str_end(const char *in, size_t len, size_t s)
{
	while (s < len) {
		const char *q = memchr(in + s, '"', len - s);
		size_t e, bs = 0;

		if (q == NULL)
			return len;
		e = (size_t)(q - in);
		while (e - bs > s && in[e - bs - 1] == '\\')
			bs++;
		if ((bs & 1) == 0)
			return e;
		s = e + 1;
	}
	return len;
}

static size_t
skip_ws(const char *in, size_t len, size_t i)
{
	while (i < len && (in[i] == ' ' || in[i] == '\t' || in[i] == '\n' || in[i] == '\r'))
		i++;
	return i;
}

static bool
is_href(const char *r, size_t n)
{
	char d[5];
	bool complete;

	if (n == 4)
		return memcmp(r, "href", 4) == 0;
	return n > 4 && json_decode(r, n, d, sizeof(d), &complete) == 4 && complete &&
	       memcmp(d, "href", 4) == 0;
}

int
nrf_fwd_links_json(const struct nrf_fwd_links *l, const char *in, size_t len, char *out, size_t cap,
	size_t *out_len)
{
	size_t plen, i = 0, copied = 0, o = 0;
	char d[NRF_FWD_LINKS_WINDOW];
	int count = 0;

	if (l == NULL || (in == NULL && len > 0) || (out == NULL && cap > 0) || out_len == NULL ||
		!prefix_usable(l))
		return NRF_EINVAL;
	plen = l->to_scheme.len + 3 + l->to_authority.len;
	while (i < len) {
		const char *q = memchr(in + i, '"', len - i);
		size_t s, e, vs, ve, n, m, raw;
		bool complete;

		if (q == NULL)
			break;
		s = (size_t)(q - in) + 1;
		e = json_str_end(in, len, s);
		if (e == len)
			break;
		i = e + 1;
		if (!is_href(in + s, e - s))
			continue;
		i = skip_ws(in, len, i);
		if (i == len || in[i] != ':')
			continue; /* a string value "href", not a member name */
		i = skip_ws(in, len, i + 1);
		if (i == len || in[i] != '"')
			continue; /* not a string: scan on from here */
		vs = i + 1;
		ve = json_str_end(in, len, vs);
		if (ve == len)
			break;
		i = ve + 1;
		n = json_decode(in + vs, ve - vs, d, sizeof(d), &complete);
		m = match_any(l, d, n, complete);
		if (m == 0)
			continue;
		raw = json_raw_len(in + vs, ve - vs, m);
		if (is_prefix(l, in + vs, raw))
			continue;
		if (o + (vs - copied) + plen > cap)
			return NRF_ETOOBIG;
		memcpy(out + o, in + copied, vs - copied);
		o = put_prefix(l, out, o + (vs - copied));
		copied = vs + raw;
		count++;
	}
	if (count == 0)
		return 0;
	if (o + (len - copied) > cap)
		return NRF_ETOOBIG;
	memcpy(out + o, in + copied, len - copied);
	*out_len = o + (len - copied);
	return count;
}
