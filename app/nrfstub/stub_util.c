/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small helpers for nrfstub: blobs, a string builder, URL decoding and
 * fault-mode parsing. (SHA-256 of recorded bodies is OpenSSL's EVP.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_common.h"
#include "stub.h"

struct blob *
blob_alloc(size_t len)
{
	struct blob *b = malloc(sizeof(*b) + len + 1);

	if (b == NULL)
		return NULL;
	b->ref = 1;
	b->len = len;
	b->data = (char *)(b + 1);
	b->data[len] = '\0';
	return b;
}

struct blob *
blob_take(char *s, size_t len)
{
	struct blob *b;

	if (s == NULL)
		return NULL;
	b = malloc(sizeof(*b));
	if (b == NULL) {
		free(s);
		return NULL;
	}
	b->ref = 1;
	b->len = len;
	b->data = s;
	return b;
}

struct blob *
blob_copy(const char *s, size_t len)
{
	struct blob *b = blob_alloc(len);

	if (b != NULL && len > 0)
		memcpy(b->data, s, len);
	return b;
}

void
blob_put(struct blob *b)
{
	if (b == NULL || b->ref == 0)
		return;
	if (--b->ref > 0)
		return;
	if (b->data != (char *)(b + 1))
		free(b->data);
	free(b);
}

static int
sb_reserve(struct sb *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	cap = b->cap != 0 ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
sb_put(struct sb *b, const void *d, size_t n)
{
	if (sb_reserve(b, n) < 0)
		return;
	if (n > 0)
		memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
sb_puts(struct sb *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

void
sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb_reserve(b, 64) < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (sb_reserve(b, (size_t)n) < 0)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

int
hdrs_reserve(struct hdrs *h, uint32_t want)
{
	uint32_t cap = h->cap != 0 ? h->cap : 16;
	struct hdr *v;

	if (want <= h->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	v = realloc(h->v, cap * sizeof(*v));
	if (v == NULL)
		return -1;
	h->v = v;
	h->cap = cap;
	return 0;
}

void
sb_json_str(struct sb *b, const char *s, size_t n)
{
	size_t i, run = 0;

	sb_put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		char esc[6];
		size_t e = nrf_json_escape((unsigned char)s[i], esc, 1);

		if (e == 0)
			continue;
		sb_put(b, s + run, i - run);
		run = i + 1;
		sb_put(b, esc, e);
	}
	sb_put(b, s + run, n - run);
	sb_put(b, "\"", 1);
}

struct blob *
sb_blob(struct sb *b)
{
	struct blob *r;

	if (b->oom) {
		sb_fini(b);
		return NULL;
	}
	if (b->p == NULL)
		return blob_alloc(0);
	r = blob_take(b->p, b->len);
	b->p = NULL;
	b->len = b->cap = 0;
	return r;
}

void
sb_fini(struct sb *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

int
url_decode(const char *s, size_t n, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '+') {
			ch = ' ';
		} else if (ch == '%' && i + 2 < n && nrf_hexval(s[i + 1]) >= 0 &&
			   nrf_hexval(s[i + 2]) >= 0) {
			ch = (char)(nrf_hexval(s[i + 1]) << 4 | nrf_hexval(s[i + 2]));
			i += 2;
		}
		if (o + 1 >= outsz)
			return -1;
		out[o++] = ch;
	}
	if (o >= outsz)
		return -1;
	out[o] = '\0';
	return (int)o;
}

static const char *const fault_names[FAULT__N] = {
	[FAULT_NONE] = "none",
	[FAULT_DELAY] = "delay",
	[FAULT_RESET] = "reset",
	[FAULT_CLOSE] = "close",
	[FAULT_STATUS] = "status",
	[FAULT_GARBAGE] = "garbage",
	[FAULT_BLACKHOLE] = "blackhole",
	[FAULT_TRUNCATE] = "truncate",
	[FAULT_DROP] = "drop",
	[FAULT_BIGDROP] = "bigdrop",
};

const char *
fault_name(enum fault_mode m)
{
	return (unsigned)m < FAULT__N ? fault_names[m] : "?";
}

static int
fault_mode_of(const char *s, size_t n)
{
	int i;

	for (i = 0; i < FAULT__N; i++)
		if (strlen(fault_names[i]) == n && memcmp(fault_names[i], s, n) == 0)
			return i;
	return -1;
}

int
fault_parse(const char *s, struct fault *f, char *err, size_t errsz)
{
	const char *colon = strchr(s, ':');
	size_t n = colon != NULL ? (size_t)(colon - s) : strlen(s);
	int m = fault_mode_of(s, n);
	char *end;

	f->mode = FAULT_NONE;
	f->arg = -1;
	f->count = -1;
	f->hold = 0;
	f->dropped = 0;
	f->mute = 0;
	f->body = NULL;
	if (m < 0) {
		snprintf(err, errsz, "unknown fault mode '%.*s' (none, delay, reset, "
			"close, status, garbage, blackhole, truncate, drop, bigdrop)",
			(int)n, s);
		return -1;
	}
	f->mode = (enum fault_mode)m;
	if (colon != NULL) {
		errno = 0;
		f->arg = strtol(colon + 1, &end, 10);
		if (errno == 0 && *end == ':' && end != colon + 1 &&
		    f->mode == FAULT_BIGDROP) {
			const char *h = end + 1;

			f->hold = strtol(h, &end, 10);
			if (end == h || f->hold < 0) {
				snprintf(err, errsz, "bad hold '%s'", h);
				return -1;
			}
			if (strcmp(end, ":mute") == 0) {
				f->mute = 1;
				end += strlen(end);
			}
		}
		if (errno != 0 || end == colon + 1 || *end != '\0' || f->arg < 0) {
			snprintf(err, errsz, "bad fault argument '%s'", colon + 1);
			return -1;
		}
	}
	return fault_finish(f, err, errsz);
}

int
fault_finish(struct fault *f, char *err, size_t errsz)
{
	struct sb b = {0};

	blob_put(f->body);
	f->body = NULL;
	f->dropped = 0;
	if ((f->hold != 0 || f->mute != 0) && f->mode != FAULT_BIGDROP) {
		snprintf(err, errsz, "hold and mute only apply to bigdrop");
		return -1;
	}
	switch (f->mode) {
	case FAULT_NONE:
	case FAULT_GARBAGE:
	case FAULT_BLACKHOLE:
		f->arg = 0;
		break;
	case FAULT_DELAY:
		if (f->arg < 0)
			f->arg = 1000;
		if (f->arg > 3600000) {
			snprintf(err, errsz, "delay %ld ms out of range 0..3600000", f->arg);
			return -1;
		}
		break;
	case FAULT_RESET:
		if (f->arg < 0)
			f->arg = NGHTTP2_INTERNAL_ERROR;
		if (f->arg > NGHTTP2_HTTP_1_1_REQUIRED) {
			snprintf(err, errsz, "reset error code %ld out of range 0..13", f->arg);
			return -1;
		}
		break;
	case FAULT_TRUNCATE:
	case FAULT_DROP:
		if (f->arg < 0)
			f->arg = 1;
		if (f->arg > 1000000) {
			snprintf(err, errsz, "%s after %ld bytes out of range 0..1000000",
				fault_name(f->mode), f->arg);
			return -1;
		}
		break;
	case FAULT_BIGDROP:
		if (f->arg < 0)
			f->arg = 16384;
		if (f->arg > 100000000) {
			snprintf(err, errsz, "bigdrop size %ld out of range 0..100000000",
				f->arg);
			return -1;
		}
		if (f->hold < 0 || f->hold > 3600000) {
			snprintf(err, errsz, "hold %ld ms out of range 0..3600000", f->hold);
			return -1;
		}
		break;
	case FAULT_CLOSE:
		if (f->arg < 0)
			f->arg = 0;
		if (f->arg > 1) {
			snprintf(err, errsz, "close argument %ld: 0 (FIN) or 1 (RST)", f->arg);
			return -1;
		}
		break;
	case FAULT_STATUS:
		if (f->arg < 0)
			f->arg = 503;
		if (f->arg < 200 || f->arg > 599) {
			snprintf(err, errsz, "status %ld out of range 200..599", f->arg);
			return -1;
		}
		if (f->arg == 204 || f->arg == 304)
			break;
		sb_printf(&b, "{\"title\":\"nrfstub fault\",\"status\":%ld,"
			"\"detail\":\"status fault injected by nrfstub\","
			"\"cause\":\"%s\"}", f->arg,
			f->arg == 503 ? "NF_CONGESTION" :
			f->arg == 404 ? "DATA_NOT_FOUND" :
			f->arg == 500 ? "SYSTEM_FAILURE" : "NRFSTUB_FAULT");
		f->body = sb_blob(&b);
		if (f->body == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		break;
	default:
		snprintf(err, errsz, "bad fault mode");
		return -1;
	}
	return 0;
}
