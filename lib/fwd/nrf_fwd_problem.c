/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ProblemDetails rendering. Bodies of the configured error conditions are
 * rendered once per snapshot (nrf_fwd_table_create); this renderer serves
 * those and the few answers with a per-request detail.
 */
#include <stdio.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_fwd.h"

struct out {
	char *p;
	size_t cap;
	size_t len;
	bool overflow;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->len + n >= o->cap) {
		o->overflow = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void
put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* JSON string with RFC 8259 escapes; bytes >= 0x80 pass through as UTF-8. */
static void
put_json_string(struct out *o, const char *s)
{
	put(o, "\"", 1);
	for (; *s != '\0'; s++) {
		char esc[6];
		size_t n = nrf_json_escape((unsigned char)*s, esc, 0);

		if (n > 0)
			put(o, esc, n);
		else
			put(o, s, 1);
	}
	put(o, "\"", 1);
}

int
nrf_fwd_problem_render(char *buf, size_t cap, int status, const char *title,
	const char *cause, const char *detail)
{
	struct out o = {buf, cap, 0, false};
	char num[16];

	if (buf == NULL || cap == 0)
		return NRF_ETOOBIG;
	put_str(&o, "{\"title\":");
	put_json_string(&o, title != NULL ? title : "");
	snprintf(num, sizeof(num), "%d", status);
	put_str(&o, ",\"status\":");
	put_str(&o, num);
	if (detail != NULL && detail[0] != '\0') {
		put_str(&o, ",\"detail\":");
		put_json_string(&o, detail);
	}
	if (cause != NULL && cause[0] != '\0') {
		put_str(&o, ",\"cause\":");
		put_json_string(&o, cause);
	}
	put_str(&o, "}");
	if (o.overflow) {
		buf[0] = '\0';
		return NRF_ETOOBIG;
	}
	buf[o.len] = '\0';
	return (int)o.len;
}
