/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The access log (runtime.accessLog) and request ids (docs/access-log.md).
 *
 * Why it is shaped like this: a line per request must not cost a system
 * call per request on the data path. Each worker formats its lines straight
 * into its own buffer (no lock, no allocation) and writes the whole buffer
 * with one write(2) from its timer every flushMs, or at once when the next
 * line might not fit (one write per 64 KiB, never one per line). Lines are
 * never split between writes, and the file is opened with O_APPEND, so the
 * workers' writes interleave whole lines only.
 *
 * Every worker of the process writes to one file descriptor number. SIGUSR1
 * (logrotate) reopens the path and dup2()s the new file onto that number:
 * a worker in the middle of a write finishes it on the old file, the next
 * one goes to the new file, and no worker ever sees a closed descriptor.
 *
 * The clock: CLOCK_REALTIME_COARSE (vDSO, a few ns; its resolution is the
 * kernel tick, 1-4 ms), read once per line: a precise clock read costs
 * about 100 ns on this kind of VM (kvm-clock), a tenth of a 508's budget.
 * The date-and-time text is formatted once a second per worker and
 * reused. Latency is measured with the monotonic clock (nrf_now_ns()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_int.h"

#define ALOG_BUF (64u * 1024u)
/* A line is at most this long: the fields are cut (method 32 bytes,
 * path 1024, ids 128) and escaping at most sextuples a byte. */
#define ALOG_LINE_MAX 8192u
#define ALOG_PATH_MAX 1024u
#define ALOG_METHOD_MAX 32u

/* ------------------------------------------------------------------------ */
/* The process's file                                                        */

static pthread_mutex_t alog_lock = PTHREAD_MUTEX_INITIALIZER;
static int alog_fd = -1;      /* written by the control side under alog_lock */
static char alog_path[4096];  /* "" while closed; "-": standard error */

static int
open_path(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

/* Open runtime.accessLog.path for the process, once. */
static int
alog_open(const char *path)
{
	int rc = 0;

	pthread_mutex_lock(&alog_lock);
	if (alog_fd < 0) {
		if (strcmp(path, "-") == 0) {
			alog_fd = STDERR_FILENO;
		} else {
			int fd = open_path(path);

			if (fd < 0) {
				int e = errno;

				NRF_LOG(ERR, MOD, "runtime.accessLog.path: cannot open \"%s\": %s",
					path, strerror(e));
				nrf_err_why_set("runtime.accessLog.path \"%s\": %s", path,
					strerror(e));
				rc = NRF_EIO;
			} else {
				alog_fd = fd;
			}
		}
		if (rc == 0)
			snprintf(alog_path, sizeof(alog_path), "%s", path);
	}
	pthread_mutex_unlock(&alog_lock);
	return rc;
}

int
nrf_rt_alog_reopen(void)
{
	int rc = 0, fd;

	pthread_mutex_lock(&alog_lock);
	if (alog_fd < 0 || strcmp(alog_path, "-") == 0) {
		pthread_mutex_unlock(&alog_lock);
		return 0;
	}
	fd = open_path(alog_path);
	if (fd < 0) {
		rc = NRF_EIO;
		NRF_LOG(ERR, MOD, "access log: cannot reopen \"%s\": %s (still writing to the "
			"file opened before)", alog_path, strerror(errno));
	} else {
		if (dup2(fd, alog_fd) < 0) {
			rc = NRF_EIO;
			NRF_LOG(ERR, MOD, "access log: cannot reopen \"%s\": dup2: %s", alog_path,
				strerror(errno));
		} else {
			NRF_LOG(INFO, MOD, "access log reopened: %s", alog_path);
		}
		close(fd);
	}
	pthread_mutex_unlock(&alog_lock);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Per worker                                                                */

struct rt_alog {
	struct rt_worker *w;
	struct rt_timer timer;
	bool on;
	bool json;
	bool gen_ids;
	uint32_t sample;
	uint32_t max_per_s;
	uint32_t flush_ms;
	/* rate limit: lines this second (monotonic) */
	uint64_t sec;
	uint32_t in_sec;
	uint32_t sample_n;
	/* the date-and-time text of the current second */
	time_t tsec;
	char tstr[24];            /* "2024-05-01T10:00:00" */
	/* request ids */
	uint64_t rid_seed;
	uint64_t rid_seq;
	const struct nrf_h2_msg *rid_msg; /* the request just delivered */
	bool rid_done;            /* rid holds its id */
	char rid[RT_RID_MAX + 1];
	char *buf;
	size_t len;
	uint64_t werr;            /* failed writes, for the rate-limited log */
};

static void
alog_write(struct rt_alog *a)
{
	size_t off = 0;
	int fd = __atomic_load_n(&alog_fd, __ATOMIC_RELAXED);

	while (off < a->len && fd >= 0) {
		ssize_t n = write(fd, a->buf + off, a->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			RT_STAT(a->w, alog_dropped, 1);
			NRF_LOG_RL(WARN, MOD, "worker %u: access log write failed: %s", a->w->id,
				n < 0 ? strerror(errno) : "nothing written");
			break;
		}
		off += (size_t)n;
	}
	a->len = 0;
}

static void
flush_tick(struct rt_timer *t, void *arg)
{
	struct rt_worker *w = arg;
	struct rt_alog *a = w->alog;

	if (a->len > 0)
		alog_write(a);
	if (a->on)
		rt_timer_arm(&w->timers, t, a->flush_ms);
}

static uint64_t
mix64(uint64_t z)
{
	/* splitmix64's finaliser: a bijection, so distinct inputs give
	 * distinct ids. */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int
rt_alog_conf(struct rt_worker *w)
{
	const struct nrf_cfg_runtime *r = &w->snap->cfg->rt;
	struct rt_alog *a = w->alog;
	bool on = r->access_log.path[0] != '\0';

	if (a == NULL) {
		struct timespec ts;

		a = calloc(1, sizeof(*a));
		if (a == NULL)
			return NRF_ENOMEM;
		a->w = w;
		a->rid_done = true; /* no current request yet: "" */
		rt_timer_init(&a->timer, flush_tick);
		clock_gettime(CLOCK_REALTIME, &ts);
		a->rid_seed = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
			((uint64_t)getpid() << 16) ^ w->id);
		w->alog = a;
	}
	if (on && a->buf == NULL) {
		int rc = alog_open(r->access_log.path);

		if (rc != 0)
			return rc;
		a->buf = malloc(ALOG_BUF);
		if (a->buf == NULL)
			return NRF_ENOMEM;
	}
	a->on = on && a->buf != NULL;
	a->json = r->access_log.format == NRF_ALOG_JSON;
	a->sample = r->access_log.sample > 0 ? r->access_log.sample : 1;
	a->max_per_s = r->access_log.max_per_second;
	a->flush_ms = r->access_log.flush_ms > 0 ? r->access_log.flush_ms : 200;
	a->gen_ids = r->request_id_generate;
	if (a->on)
		rt_timer_arm(&w->timers, &a->timer, a->flush_ms);
	return 0;
}

void
rt_alog_flush(struct rt_worker *w)
{
	if (w->alog != NULL && w->alog->len > 0)
		alog_write(w->alog);
}

void
rt_alog_fini(struct rt_worker *w)
{
	if (w->alog == NULL)
		return;
	rt_alog_flush(w);
	rt_timer_cancel(&w->timers, &w->alog->timer);
	free(w->alog->buf);
	free(w->alog);
	w->alog = NULL;
}

/* ------------------------------------------------------------------------ */
/* Request ids                                                               */

static bool
rid_ok(struct nrf_slice v)
{
	if (v.len == 0 || v.len > RT_RID_MAX)
		return false;
	for (size_t i = 0; i < v.len; i++)
		if ((unsigned char)v.p[i] <= 0x20 || (unsigned char)v.p[i] >= 0x7f ||
			v.p[i] == '"' || v.p[i] == '\\')
			return false;
	return true;
}

static const char hexd[] = "0123456789abcdef";

/* The first x-request-id and traceparent of @p m, in one pass over its
 * fields (absent: {NULL, 0}). */
static void
rid_fields(const struct nrf_h2_msg *m, struct nrf_slice *xrid, struct nrf_slice *tp)
{
	bool have_x = false, have_t = false;

	xrid->p = tp->p = NULL;
	xrid->len = tp->len = 0;
	for (uint32_t i = 0; i < m->n_hdrs; i++) {
		const struct nrf_h2_hdr *h = &m->hdrs[i];

		if (h->name.len == 12 && !have_x && memcmp(h->name.p, "x-request-id", 12) == 0) {
			*xrid = h->value;
			have_x = true;
		} else if (h->name.len == 11 && !have_t &&
			memcmp(h->name.p, "traceparent", 11) == 0) {
			*tp = h->value;
			have_t = true;
		}
	}
}

/*
 * Ids are worked out only when an answer nrfwd gives itself or a line of
 * the access log needs one (measured): most relayed requests need none, and
 * looking for two fields among all of a request's, then copying the id, was
 * paid by every request.
 */
static void
rid_compute(struct rt_alog *a, const struct nrf_h2_msg *m, char *out)
{
	struct nrf_slice v, tp;

	rid_fields(m, &v, &tp);
	if (rid_ok(v)) {
		memcpy(out, v.p, v.len);
		out[v.len] = '\0';
		return;
	}
	/* W3C Trace Context: version "-" trace-id (32 hex) "-" ... */
	v = tp;
	if (v.len >= 35 && v.p[2] == '-' && v.p[35] == '-') {
		struct nrf_slice id = {v.p + 3, 32};

		if (rid_ok(id)) {
			memcpy(out, id.p, 32);
			out[32] = '\0';
			return;
		}
	}
	if (a->gen_ids) {
		/* 16 digits at once (measured: every answer nrfwd gives
		 * itself needs an id) */
		nrf_hex16(mix64(a->rid_seed + a->rid_seq++), out);
		out[16] = '\0';
		return;
	}
	out[0] = '\0';
}

void
rt_rid_begin(struct rt_worker *w, const struct nrf_h2_msg *m)
{
	struct rt_alog *a = w->alog;

	if (NRF_UNLIKELY(a == NULL))
		return;
	a->rid_msg = m;
	a->rid_done = false;
}

const char *
rt_rid_cur(struct rt_worker *w)
{
	struct rt_alog *a = w->alog;

	if (a == NULL)
		return "";
	if (!a->rid_done) {
		if (a->rid_msg != NULL)
			rid_compute(a, a->rid_msg, a->rid);
		else
			a->rid[0] = '\0';
		a->rid_done = true;
	}
	return a->rid;
}

void
rt_rid_take(struct rt_worker *w, struct rt_xact *x)
{
	struct rt_alog *a = w->alog;

	x->span[0] = '\0';
	if (a == NULL) {
		x->rid[0] = '\0';
	} else if (NRF_UNLIKELY(a->rid_done)) {
		strcpy(x->rid, a->rid); /* given out already: the same id */
	} else {
		x->rid[0] = RT_RID_LATER;
		a->rid_done = true; /* the request is the transaction's now */
		a->rid[0] = '\0';
	}
}

const char *
rt_rid_xact(struct rt_xact *x)
{
	if (x->rid[0] == RT_RID_LATER) {
		struct rt_alog *a = x->w->alog;

		if (a != NULL)
			rid_compute(a, &x->req, x->rid);
		else
			x->rid[0] = '\0';
	}
	return x->rid;
}

const char *
rt_rid_upstream(struct rt_xact *x)
{
	struct rt_alog *a = x->w->alog;

	if (x->rid[0] == RT_RID_LATER) {
		/* neither field is there (the caller looked): no second pass */
		if (a != NULL && a->gen_ids) {
			nrf_hex16(mix64(a->rid_seed + a->rid_seq++), x->rid);
			x->rid[16] = '\0';
		} else {
			x->rid[0] = '\0';
		}
	}
	return x->rid;
}

static bool
all_hex(const char *p, size_t n)
{
	bool nonzero = false;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		nonzero |= c != '0';
	}
	return nonzero;
}

size_t
rt_trace_child(struct rt_xact *x, struct nrf_slice tp, char *buf)
{
	struct rt_alog *a = x->w->alog;

	/* 00-<trace-id 32>-<parent-id 16>-<flags 2>: 55 bytes */
	if (tp.len != 55 || tp.p[0] != '0' || tp.p[1] != '0' || tp.p[2] != '-' ||
		tp.p[35] != '-' || tp.p[52] != '-' || !all_hex(tp.p + 3, 32) ||
		!all_hex(tp.p + 36, 16) || !(all_hex(tp.p + 53, 2) || (tp.p[53] == '0' &&
		tp.p[54] == '0')))
		return 0;
	if (x->span[0] == '\0') {
		uint64_t v = a != NULL ? mix64(a->rid_seed + a->rid_seq++) :
					 mix64((uint64_t)(uintptr_t)x);

		nrf_hex16(v != 0 ? v : 1, x->span); /* all-zero is invalid */
		x->span[16] = '\0';
	}
	memcpy(buf, tp.p, 55);
	memcpy(buf + 36, x->span, 16);
	return 55;
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                     */

static const char *const cond_of_outcome[NRF_RT_OUT_COUNT] = {
	[NRF_RT_OUT_LOOP_DETECTED] = "NRF_Forwarding_Loop_Detection",
	[NRF_RT_OUT_HOP_LIMIT] = "NRF_Forwarding_Hop_Limit",
	[NRF_RT_OUT_LOOP_PREVENTED] = "NRF_Forwarding_Loop_Prevention",
	[NRF_RT_OUT_NOT_REACHABLE] = "NRF_Not_Reachable",
	[NRF_RT_OUT_OVERLOAD] = "NRF_Forwarding_Overload",
	[NRF_RT_OUT_LOCAL_UNAVAILABLE] = "NRF_Local_Unavailable",
	[NRF_RT_OUT_CLIENT_LIMITED] = "NRF_Client_Limit",
};

/* Append @p s (@p n bytes, cut at @p max) escaped: JSON string content, or
 * text (bytes outside 0x21..0x7e, '"' and '\\' as \xHH; empty as "-"). */
static char *
put_esc(char *p, const char *s, size_t n, size_t max, bool json)
{
	if (n > max)
		n = max;
	if (!json && n == 0) {
		*p++ = '-';
		return p;
	}
	for (size_t i = 0; i < n; i++) {
		/* Fast path: a run of bytes that need no escape is copied. */
		size_t k = i;
		unsigned char c;

		while (k < n && (unsigned char)s[k] > 0x20 && (unsigned char)s[k] < 0x7f &&
			s[k] != '"' && s[k] != '\\')
			k++;
		if (k > i) {
			memcpy(p, s + i, k - i);
			p += k - i;
			i = k;
			if (i == n)
				break;
		}
		c = (unsigned char)s[i];

		if (json) {
			if (c == '"' || c == '\\') {
				*p++ = '\\';
				*p++ = (char)c;
			} else if (c < 0x20 || c >= 0x7f) {
				memcpy(p, "\\u00", 4);
				p[4] = hexd[c >> 4];
				p[5] = hexd[c & 15];
				p += 6;
			} else {
				*p++ = (char)c;
			}
		} else if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			p[0] = '\\';
			p[1] = 'x';
			p[2] = hexd[c >> 4];
			p[3] = hexd[c & 15];
			p += 4;
		} else {
			*p++ = (char)c;
		}
	}
	return p;
}

static char *
put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static char *
put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* "2024-05-01T10:00:00.123Z" */
static char *
put_time(struct rt_alog *a, char *p)
{
	struct timespec ts;
	uint32_t ms;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec != a->tsec) {
		struct tm tm;

		gmtime_r(&ts.tv_sec, &tm);
		strftime(a->tstr, sizeof(a->tstr), "%Y-%m-%dT%H:%M:%S", &tm);
		a->tsec = ts.tv_sec;
	}
	p = put_str(p, a->tstr);
	ms = (uint32_t)(ts.tv_nsec / 1000000);
	p[0] = '.';
	p[1] = (char)('0' + ms / 100);
	p[2] = (char)('0' + ms / 10 % 10);
	p[3] = (char)('0' + ms % 10);
	p[4] = 'Z';
	return p + 5;
}

struct line {
	const char *client;
	struct nrf_slice method;
	struct nrf_slice path;
	unsigned int status;
	unsigned int outcome;
	const char *upstream;     /* NULL: none */
	uint32_t via;
	uint64_t latency_ns;
	uint64_t bytes;
	const char *rid;
	const char *span;         /* parent-id sent upstream; "" none */
};

/* Sampling and rate limit: is this line written? */
static bool
take(struct rt_alog *a, const struct line *l)
{
	bool relayed = l->outcome == NRF_RT_OUT_LOCAL || l->outcome == NRF_RT_OUT_PEER;

	if (relayed && l->status < 500 && a->sample > 1 && a->sample_n++ % a->sample != 0)
		return false;
	if (a->max_per_s > 0) {
		uint64_t sec = rt_now(a->w) / 1000000000ull;

		if (sec != a->sec) {
			a->sec = sec;
			a->in_sec = 0;
		}
		if (a->in_sec >= a->max_per_s) {
			RT_STAT(a->w, alog_dropped, 1);
			return false;
		}
		a->in_sec++;
	}
	return true;
}

static void
emit(struct rt_alog *a, const struct line *l)
{
	const char *cond = l->outcome < NRF_RT_OUT_COUNT ? cond_of_outcome[l->outcome] : NULL;
	const char *oname = nrf_rt_outcome_name((enum nrf_rt_outcome)l->outcome);
	bool j = a->json;
	char *p;

	if (!take(a, l))
		return;
	if (a->len + ALOG_LINE_MAX > ALOG_BUF)
		alog_write(a); /* full: one write of the whole buffer */
	p = a->buf + a->len;
	if (j) {
		p = put_str(p, "{\"time\":\"");
		p = put_time(a, p);
		p = put_str(p, "\",\"client\":\"");
		p = put_esc(p, l->client, strlen(l->client), 64, true);
		p = put_str(p, "\",\"worker\":");
		p = put_u64(p, a->w->id);
		p = put_str(p, ",\"method\":\"");
		p = put_esc(p, l->method.p, l->method.len, ALOG_METHOD_MAX, true);
		p = put_str(p, "\",\"path\":\"");
		p = put_esc(p, l->path.p, l->path.len, ALOG_PATH_MAX, true);
		p = put_str(p, "\",\"status\":");
		p = put_u64(p, l->status);
		p = put_str(p, ",\"outcome\":\"");
		p = put_str(p, oname);
		p = put_str(p, "\",\"upstream\":");
		if (l->upstream != NULL) {
			*p++ = '"';
			p = put_esc(p, l->upstream, strlen(l->upstream), 280, true);
			*p++ = '"';
		} else {
			p = put_str(p, "null");
		}
		p = put_str(p, ",\"condition\":");
		if (cond != NULL) {
			*p++ = '"';
			p = put_str(p, cond);
			*p++ = '"';
		} else {
			p = put_str(p, "null");
		}
		p = put_str(p, ",\"via\":");
		p = put_u64(p, l->via);
		p = put_str(p, ",\"latency_us\":");
		p = put_u64(p, l->latency_ns / 1000);
		p = put_str(p, ",\"bytes\":");
		p = put_u64(p, l->bytes);
		p = put_str(p, ",\"request_id\":");
		if (l->rid[0] != '\0') {
			*p++ = '"';
			p = put_esc(p, l->rid, strlen(l->rid), RT_RID_MAX, true);
			*p++ = '"';
		} else {
			p = put_str(p, "null");
		}
		p = put_str(p, ",\"span_id\":");
		if (l->span[0] != '\0') {
			*p++ = '"';
			p = put_str(p, l->span);
			*p++ = '"';
		} else {
			p = put_str(p, "null");
		}
		p = put_str(p, "}\n");
	} else {
		p = put_time(a, p);
		*p++ = ' ';
		p = put_esc(p, l->client, strlen(l->client), 64, false);
		*p++ = ' ';
		p = put_u64(p, a->w->id);
		*p++ = ' ';
		p = put_esc(p, l->method.p, l->method.len, ALOG_METHOD_MAX, false);
		*p++ = ' ';
		p = put_esc(p, l->path.p, l->path.len, ALOG_PATH_MAX, false);
		*p++ = ' ';
		p = put_u64(p, l->status);
		*p++ = ' ';
		p = put_str(p, oname);
		*p++ = ' ';
		p = put_esc(p, l->upstream != NULL ? l->upstream : "",
			l->upstream != NULL ? strlen(l->upstream) : 0, 280, false);
		*p++ = ' ';
		p = put_str(p, cond != NULL ? cond : "-");
		*p++ = ' ';
		p = put_u64(p, l->via);
		*p++ = ' ';
		p = put_u64(p, l->latency_ns / 1000);
		*p++ = ' ';
		p = put_u64(p, l->bytes);
		*p++ = ' ';
		p = put_esc(p, l->rid, strlen(l->rid), RT_RID_MAX, false);
		*p++ = ' ';
		p = put_esc(p, l->span, strlen(l->span), 16, false);
		*p++ = '\n';
	}
	a->len = (size_t)(p - a->buf);
	RT_STAT(a->w, alog_lines, 1);
}

void
rt_alog_once(struct rt_worker *w, struct nrf_h2_stream *st, enum nrf_fwd_op op,
	unsigned int outcome, uint32_t via_members)
{
	struct rt_alog *a = w->alog;
	struct line l;

	(void)op;
	if (NRF_LIKELY(a == NULL || !a->on))
		return;
	l.client = nrf_h2_conn_peer(st->conn);
	l.method = st->msg.method;
	l.path = st->msg.path;
	l.status = st->resp_status;
	l.outcome = outcome;
	l.upstream = NULL;
	l.via = via_members;
	l.latency_ns = 0;
	l.bytes = st->resp_bytes;
	l.rid = rt_rid_cur(w);
	l.span = "";
	emit(a, &l);
}

void
rt_alog_xact(struct rt_worker *w, struct rt_xact *x)
{
	struct rt_alog *a = w->alog;
	struct line l;

	if (NRF_LIKELY(a == NULL || !a->on))
		return;
	l.client = nrf_h2_conn_peer(x->front->conn);
	l.method = x->req.method;
	l.path = x->req.path;
	l.status = x->front->resp_status;
	l.outcome = x->answered ? x->outcome : NRF_RT_OUT_CLIENT_RESET;
	l.upstream = NULL;
	if (l.outcome == NRF_RT_OUT_LOCAL) {
		const struct rt_pool *p = rt_xact_local(x);

		l.upstream = p != NULL ? p->ep.name : NULL;
	} else if (l.outcome == NRF_RT_OUT_PEER && x->t.wt.pool != NULL) {
		l.upstream = x->t.wt.pool->ep.name;
	}
	l.via = x->plan.via_members;
	l.latency_ns = rt_now(a->w) - x->t0;
	l.bytes = x->front->resp_bytes;
	l.rid = rt_rid_xact(x);
	l.span = x->span;
	emit(a, &l);
}
