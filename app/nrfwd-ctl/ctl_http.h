/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_CTL_HTTP_H
#define NRF_CTL_HTTP_H

/*
 * A minimal HTTP/1.1 client for nrfwd-ctl: one request per connection
 * ("Connection: close"), plain http only, answers with Content-Length,
 * chunked transfer coding or read to the end. Enough for the management
 * listener of nrfwd (libmicrohttpd); no dependency beyond libc.
 */

#include <stddef.h>

struct ctl_http_resp {
	int status;
	char reason[64];
	char content_type[128];
	char *body;       /* NUL-terminated (malloc'd) */
	size_t body_len;
};

/*
 * @p base is "http://HOST:PORT" ([v6] allowed; a path prefix is kept);
 * @p path is appended. @p ctype and @p body may be NULL; @p token (may be
 * NULL) is sent as "Authorization: Bearer". Returns 0 with @p out filled,
 * or -1 with a message in @p err (cannot connect, timeout after 30 s,
 * malformed answer).
 */
int ctl_http_request(const char *base, const char *method, const char *path,
	const char *ctype, const char *body, size_t len, const char *token,
	struct ctl_http_resp *out, char *err, size_t err_cap);

void ctl_http_resp_fini(struct ctl_http_resp *r);

#endif /* NRF_CTL_HTTP_H */
