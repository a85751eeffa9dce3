/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Via parsing. The parser is strict where the scan is cheap: it checks the
 * whole member grammar, while the scan only checks what it must (control
 * bytes, comment balance) to count members and blank comments. Both share
 * the byte classes and the comment walker below, so a member and a comment
 * are the same thing to both, and on any input the parser accepts the scan
 * finds exactly the members whose received-by matches (tests/fuzz/fuzz_via.c
 * checks that).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_err.h"
#include "nrf_via.h"
#include "nrf_via_internal.h"

const uint8_t nrf_via_cls[256] = {
	[0x00 ... 0x08] = VIA_C_CTL,
	['\t'] = VIA_C_WS,
	[0x0a ... 0x1f] = VIA_C_CTL,
	[' '] = VIA_C_WS,
	[','] = VIA_C_COMMA,
	['('] = VIA_C_OPEN,
	[')'] = VIA_C_CLOSE,
	['\\'] = VIA_C_BSLASH,
	[0x7f] = VIA_C_CTL,
};

size_t
nrf_via_comment_end(const unsigned char *p, size_t len, size_t i)
{
	size_t depth = 0;

	/* Iterative, not recursive: nesting depth is attacker-controlled. */
	for (; i < len; i++) {
		switch (nrf_via_cls[p[i]]) {
		case VIA_C_OPEN:
			depth++;
			break;
		case VIA_C_CLOSE:
			if (--depth == 0)
				return i + 1;
			break;
		case VIA_C_BSLASH:
			/* quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ) */
			if (++i == len || nrf_via_cls[p[i]] == VIA_C_CTL)
				return 0;
			break;
		case VIA_C_CTL:
			return 0;
		default:
			break;
		}
	}
	return 0;
}

/* tchar of RFC 9110 §5.6.2: protocol-name and protocol-version. */
static bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9'))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
	case '+': case '-': case '.': case '^': case '_': case '`': case '|':
	case '~':
		return true;
	default:
		return false;
	}
}

static size_t
skip_ows(const unsigned char *p, size_t len, size_t i)
{
	while (i < len && nrf_via_cls[p[i]] == VIA_C_WS)
		i++;
	return i;
}

static size_t
skip_tchars(const unsigned char *p, size_t len, size_t i)
{
	while (i < len && is_tchar(p[i]))
		i++;
	return i;
}

static struct nrf_slice
slice(const unsigned char *p, size_t from, size_t to)
{
	struct nrf_slice s = {(const char *)p + from, to - from};

	return s;
}

/*
 * Port digits in p[from, to): any number of leading zeros, value at most
 * 65535. Returns the value or -1.
 */
static int32_t
parse_port(const unsigned char *p, size_t from, size_t to)
{
	int32_t v = 0;

	if (from == to)
		return -1;
	for (size_t i = from; i < to; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
		if (v > 65535)
			return -1;
	}
	return v;
}

/*
 * Split received-by p[from, to) into host and port. The bracket form holds
 * an IPv6 literal; otherwise the first ':' starts the port, so an
 * unbracketed IPv6 address is a bad port rather than a silent mismatch.
 */
static int
split_received_by(const unsigned char *p, size_t from, size_t to,
	struct nrf_via_member *m)
{
	size_t colon = to;

	if (p[from] == '[') {
		size_t close = from + 1;

		while (close < to && p[close] != ']')
			close++;
		if (close == to || close == from + 1)
			return NRF_EPARSE;
		m->host = slice(p, from + 1, close);
		if (close + 1 == to) {
			m->port = -1;
			return 0;
		}
		if (p[close + 1] != ':')
			return NRF_EPARSE;
		colon = close + 1;
	} else {
		for (size_t i = from; i < to; i++) {
			if (p[i] == ':') {
				colon = i;
				break;
			}
		}
		if (colon == from)
			return NRF_EPARSE;
		m->host = slice(p, from, colon);
		if (colon == to) {
			m->port = -1;
			return 0;
		}
	}
	m->port = parse_port(p, colon + 1, to);
	return m->port < 0 ? NRF_EPARSE : 0;
}

/*
 * One member starting at p[i] (not OWS, not a comma). On success *next is
 * the index of the ',' that ends it, or len.
 */
static int
parse_member(const unsigned char *p, size_t len, size_t i,
	struct nrf_via_member *m, size_t *next)
{
	size_t j, rb;
	int rc;

	/* received-protocol = [ protocol-name "/" ] protocol-version */
	j = skip_tchars(p, len, i);
	if (j == i)
		return NRF_EPARSE;
	m->proto_name = slice(p, i, i);
	if (j < len && p[j] == '/') {
		size_t v = skip_tchars(p, len, j + 1);

		if (v == j + 1)
			return NRF_EPARSE;
		m->proto_name = slice(p, i, j);
		m->proto_version = slice(p, j + 1, v);
		j = v;
	} else {
		m->proto_version = slice(p, i, j);
	}

	/* RWS received-by */
	i = skip_ows(p, len, j);
	if (i == j)
		return NRF_EPARSE;
	rb = i;
	/* A backslash is plain outside a comment. */
	while (i < len && (nrf_via_cls[p[i]] == VIA_C_PLAIN ||
			nrf_via_cls[p[i]] == VIA_C_BSLASH))
		i++;
	if (i == rb)
		return NRF_EPARSE;
	m->received_by = slice(p, rb, i);
	rc = split_received_by(p, rb, i, m);
	if (rc != 0)
		return rc;

	/*
	 * [ RWS comment ]. A comment right after received-by, without the
	 * RWS, is accepted: the scan treats '(' as a separator too.
	 */
	i = skip_ows(p, len, i);
	m->comment = slice(p, i, i);
	if (i < len && p[i] == '(') {
		size_t end = nrf_via_comment_end(p, len, i);

		if (end == 0)
			return NRF_EPARSE;
		m->comment = slice(p, i, end);
		i = skip_ows(p, len, end);
	}
	if (i < len && p[i] != ',')
		return NRF_EPARSE;
	*next = i;
	return 0;
}

int
nrf_via_parse(const struct nrf_slice *lines, size_t n_lines,
	struct nrf_via_member *out, size_t max_out, size_t *n_members)
{
	size_t count = 0;
	int rc;

	if (n_members == NULL)
		return NRF_EINVAL;
	*n_members = 0;
	rc = nrf_via_check_lines(lines, n_lines);
	if (rc != 0)
		return rc;
	if (out == NULL)
		max_out = 0;

	for (size_t l = 0; l < n_lines; l++) {
		const unsigned char *p = (const unsigned char *)lines[l].p;
		size_t len = lines[l].len;
		size_t i = 0;

		for (;;) {
			struct nrf_via_member m;

			/* Empty list elements: "a, , b" and ",a" (RFC 9110 §5.6.1). */
			while (i < len && (nrf_via_cls[p[i]] == VIA_C_WS ||
					nrf_via_cls[p[i]] == VIA_C_COMMA))
				i++;
			if (i == len)
				break;
			rc = parse_member(p, len, i, &m, &i);
			if (rc != 0) {
				*n_members = count;
				return rc;
			}
			m.line = (uint16_t)l;
			if (count < max_out)
				out[count] = m;
			count++;
		}
	}
	*n_members = count;
	return 0;
}
