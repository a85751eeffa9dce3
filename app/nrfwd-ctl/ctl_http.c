/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 client of nrfwd-ctl (see ctl_http.h). Blocking sockets with a
 * receive/send timeout: a command line tool, never the data path.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ctl_http.h"

#define TIMEOUT_S 30
#define MAX_ANSWER (64u * 1024 * 1024)

static int
parse_base(const char *base, char *host, size_t hcap, char *port, size_t pcap,
	const char **prefix)
{
	const char *p, *end, *colon;
	size_t n;

	if (strncmp(base, "http://", 7) != 0)
		return -1;
	p = base + 7;
	end = strchr(p, '/');
	if (end == NULL)
		end = p + strlen(p);
	*prefix = end;
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (rb == NULL)
			return -1;
		n = (size_t)(rb - p - 1);
		if (n == 0 || n >= hcap)
			return -1;
		memcpy(host, p + 1, n);
		host[n] = '\0';
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		n = (size_t)((colon != NULL ? colon : end) - p);
		if (n == 0 || n >= hcap)
			return -1;
		memcpy(host, p, n);
		host[n] = '\0';
	}
	if (colon == NULL) {
		snprintf(port, pcap, "80");
		return 0;
	}
	n = (size_t)(end - colon - 1);
	if (n == 0 || n >= pcap)
		return -1;
	memcpy(port, colon + 1, n);
	port[n] = '\0';
	return 0;
}

static int
dial(const char *host, const char *port, char *err, size_t cap)
{
	struct addrinfo hints, *res, *ai;
	struct timeval tv = {TIMEOUT_S, 0};
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, cap, "%s:%s: %s", host, port, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		snprintf(err, cap, "cannot connect to %s:%s: %s", host, port, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static int
send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Header @p name (lower case) in the header block [h, end); value copied. */
static int
header(const char *h, const char *end, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	while (h < end) {
		const char *eol = strstr(h, "\r\n");

		if (eol == NULL || eol > end)
			eol = end;
		if ((size_t)(eol - h) > nl && strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
			const char *v = h + nl + 1;
			size_t n;

			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			n = (size_t)(eol - v);
			while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			if (n >= cap)
				n = cap - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return 0;
		}
		h = eol + 2;
	}
	return -1;
}

/* Decode a chunked body in place. */
static int
dechunk(char *b, size_t len, size_t *out_len)
{
	size_t in = 0, out = 0;

	for (;;) {
		char *end;
		unsigned long n;
		char *eol = NULL;
		size_t k;

		for (k = in; k + 1 < len; k++)
			if (b[k] == '\r' && b[k + 1] == '\n') {
				eol = b + k;
				break;
			}
		if (eol == NULL)
			return -1;
		n = strtoul(b + in, &end, 16);
		if (end == b + in)
			return -1;
		in = (size_t)(eol - b) + 2;
		if (n == 0)
			break;
		if (in + n + 2 > len)
			return -1;
		memmove(b + out, b + in, n);
		out += n;
		in += n + 2;
	}
	b[out] = '\0';
	*out_len = out;
	return 0;
}

int
ctl_http_request(const char *base, const char *method, const char *path, const char *ctype,
	const char *body, size_t len, const char *token, struct ctl_http_resp *out, char *err,
	size_t err_cap)
{
	char host[256], port[16], head[2048], val[64];
	const char *prefix;
	char *buf = NULL, *hend, *sp;
	size_t n = 0, cap = 0, hlen;
	int fd, k;

	memset(out, 0, sizeof(*out));
	if (parse_base(base, host, sizeof(host), port, sizeof(port), &prefix) != 0) {
		snprintf(err, err_cap, "bad API URL \"%s\" (expected http://HOST:PORT)", base);
		return -1;
	}
	fd = dial(host, port, err, err_cap);
	if (fd < 0)
		return -1;
	k = snprintf(head, sizeof(head),
		"%s %.*s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nConnection: close\r\n"
		"Accept: application/json, application/problem+json, text/plain\r\n"
		"User-Agent: nrfwd-ctl\r\n",
		method, (int)strcspn(prefix, "?"), prefix, path,
		strchr(host, ':') != NULL ? "[" : "", host, strchr(host, ':') != NULL ? "]" : "",
		port);
	if (ctype != NULL)
		k += snprintf(head + k, sizeof(head) - (size_t)k, "Content-Type: %s\r\n", ctype);
	if (body != NULL || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0)
		k += snprintf(head + k, sizeof(head) - (size_t)k, "Content-Length: %zu\r\n", len);
	if (token != NULL)
		k += snprintf(head + k, sizeof(head) - (size_t)k, "Authorization: Bearer %s\r\n",
			token);
	k += snprintf(head + k, sizeof(head) - (size_t)k, "\r\n");
	if ((size_t)k >= sizeof(head) || send_all(fd, head, (size_t)k) != 0 ||
		(len > 0 && send_all(fd, body, len) != 0)) {
		snprintf(err, err_cap, "cannot send the request: %s", strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nb;

			cap = cap == 0 ? 16384 : cap * 2;
			if (cap > MAX_ANSWER || (nb = realloc(buf, cap + 1)) == NULL) {
				snprintf(err, err_cap, "answer too big");
				goto fail;
			}
			buf = nb;
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, err_cap, "no answer: %s", strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	fd = -1;
	if (buf == NULL)
		goto bad;
	buf[n] = '\0';
	hend = strstr(buf, "\r\n\r\n");
	if (hend == NULL || strncmp(buf, "HTTP/1.", 7) != 0)
		goto bad;
	sp = strchr(buf, ' ');
	if (sp == NULL || sp > hend)
		goto bad;
	out->status = atoi(sp + 1);
	if (strlen(sp + 1) > 4) {
		size_t rl = strcspn(sp + 5, "\r\n");

		snprintf(out->reason, sizeof(out->reason), "%.*s", (int)rl, sp + 5);
	}
	header(buf, hend + 2, "content-type", out->content_type, sizeof(out->content_type));
	val[0] = '\0';
	header(buf, hend + 2, "transfer-encoding", val, sizeof(val));
	hlen = (size_t)(hend + 4 - buf);
	out->body_len = n - hlen;
	memmove(buf, buf + hlen, out->body_len + 1);
	if (strstr(val, "chunked") != NULL && dechunk(buf, out->body_len, &out->body_len) != 0)
		goto bad;
	out->body = buf;
	return 0;
bad:
	snprintf(err, err_cap, "malformed HTTP answer");
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

void
ctl_http_resp_fini(struct ctl_http_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}
