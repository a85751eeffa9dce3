/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of the front frame-header pass (lib/h2/h2_guard.c, decision 0015)
 * against what it sits in front of, nghttp2_session_mem_recv(), on the same
 * bytes in the same run:
 *
 *   (a) pass: h2_guard_frame() on every frame of the input, whole, as the
 *       own server's frame loop calls it;
 *   (b) mem_recv: nghttp2_session_mem_recv() of a server session set up as
 *       nrfwd's front sessions are (no closed streams, no HTTP messaging,
 *       SETTINGS_NO_RFC7540_PRIORITIES), no application callbacks: the
 *       library's own work only, a lower bound of what a front frame costs;
 *   (c) both (the pass was in front of nghttp2's server session until
 *       decision 0063; (b) stays as the reference of a library's cost).
 *
 * Input (fixed): a client's connection as nrfwd sees it, in 32 KiB reads
 * (lib/h2's read buffer, so frames are cut between reads as in life):
 * preface, SETTINGS, its ACK, a connection WINDOW_UPDATE, then REQUESTS
 * requests, three NFDiscover GETs (11 fields, HPACK from nghttp2's own
 * deflater, a 3-member Via, a query that differs per request) for every
 * NFStatusSubscribe POST (HEADERS, then a 420-byte JSON body in one DATA
 * frame); each request is then cancelled by the client (RST_STREAM), which
 * closes its stream in the session without a response being sent; a PING
 * and a stream WINDOW_UPDATE every 16 requests. Sessions are created and
 * freed outside the timed part, one per pass over the input.
 *
 * Output: Markdown, ns per frame and per request, median of RUNS runs of
 * about RUN_NS each (methods interleaved run by run), min-max, and the
 * pass's share of (c).
 *
 * Not a test: run by hand, pinned, e.g.
 *   taskset -c 1 build/bench/micro/h2_guard_bench
 * Options:
 *   --runs R     runs per method (default 9, at most 31)
 *   --calls N    no timing: N passes of the input with each method named by
 *                --method, for instruction counts (bench/micro/h2_guard_icount.sh):
 *     valgrind --tool=callgrind --toggle-collect=h2_guard_frame \
 *       build/bench/micro/h2_guard_bench --method pass --calls 20
 *   --method pass|recv|both   with --calls
 * It prints the frame and request counts of one pass (divide Ir by them).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_guard.h"
#include "nrf_common.h"

#define REQUESTS 1000
#define RBUF 32768 /* lib/h2's RBUF_SIZE */
#define RUNS_MAX 31
#define RUN_NS 40000000ull
#define INPUT_CAP (4u << 20)

enum method { M_PASS, M_RECV, M_BOTH, M_COUNT };
static const char *const method_name[M_COUNT] = {"pass", "recv", "both"};

static uint8_t input[INPUT_CAP];
static size_t input_len;
static unsigned long frames, requests;
static int32_t last_sid;
static nghttp2_session_callbacks *cbs;
static nghttp2_option *opt;

static void
put(const void *p, size_t n)
{
	if (n == 0)
		return;
	if (input_len + n > INPUT_CAP) {
		fprintf(stderr, "input too large\n");
		exit(1);
	}
	memcpy(input + input_len, p, n);
	input_len += n;
}

static void
put_frame(uint8_t type, uint8_t flags, int32_t sid, const void *payload, size_t n)
{
	uint8_t h[9] = {(uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, type, flags,
		(uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8), (uint8_t)sid};

	put(h, 9);
	put(payload, n);
	frames++;
}

static void
put_u32_frame(uint8_t type, int32_t sid, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	put_frame(type, 0, sid, p, 4);
}

#define NV(n, v) {(uint8_t *)(uintptr_t)(n), (uint8_t *)(uintptr_t)(v), sizeof(n) - 1, \
	strlen(v), NGHTTP2_NV_FLAG_NONE}

static void
build_input(void)
{
	static const char body_fmt[] =
		"{\"nfStatusNotificationUri\":\"http://smf-%04d.seg1.example.com:8080/notify\","
		"\"subscrCond\":{\"nfType\":\"AMF\"},\"reqNotifEvents\":[\"NF_REGISTERED\","
		"\"NF_DEREGISTERED\",\"NF_PROFILE_CHANGED\"],\"validityTime\":\"2030-01-01T00:00:00Z\","
		"\"reqNfType\":\"SMF\",\"reqNfFqdn\":\"smf-%04d.seg1.example.com\",\"plmnId\":"
		"{\"mcc\":\"001\",\"mnc\":\"01\"},\"notifCondition\":{\"monitoredAttributes\":"
		"[\"/nfStatus\",\"/load\"]},\"nfInstanceId\":\"5a1f0b6e-6f0a-4c1e-9a01-%012d\"}";
	static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static const uint8_t settings[] = {0, 3, 0, 0, 0, 100, 0, 4, 0, 0x10, 0, 0, 0, 2, 0, 0, 0, 0};
	nghttp2_hd_deflater *defl;
	uint8_t block[4096];
	char path[160], body[600], clen[8];

	if (nghttp2_hd_deflate_new(&defl, 4096) != 0)
		exit(1);
	put(preface, 24);
	put_frame(NGHTTP2_SETTINGS, 0, 0, settings, sizeof(settings));
	put_frame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
	put_u32_frame(NGHTTP2_WINDOW_UPDATE, 0, 16 << 20);
	for (int i = 0; i < REQUESTS; i++) {
		int32_t sid = 2 * i + 1;
		bool post = i % 4 == 3;
		int n = 0;
		ssize_t blen;

		snprintf(path, sizeof(path),
			"/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"
			"&requester-nf-instance-fqdn=smf-%04d.seg1.example.com", i);
		snprintf(body, sizeof(body), body_fmt, i, i, i);
		snprintf(clen, sizeof(clen), "%zu", strlen(body));
		nghttp2_nv get[] = {
			NV(":method", "GET"), NV(":scheme", "http"),
			NV(":authority", "nrf-a.seg1.example.com:8080"), NV(":path", path),
			NV("user-agent", "SMF-smf-0001.seg1.example.com"),
			NV("accept", "application/json"),
			NV("via", "2.0 scp-1.seg1.example.com:8080, 2.0 nrf-x.seg9.example.com:8080, "
				"2.0 nrf-y.seg8.example.com:8080"),
			NV("3gpp-sbi-message-priority", "12"),
			NV("3gpp-sbi-correlation-info", "imsi-001010000000001"),
			NV("3gpp-sbi-max-forward-hops", "4"),
			NV("accept-encoding", "gzip"),
		};
		nghttp2_nv pst[] = {
			NV(":method", "POST"), NV(":scheme", "http"),
			NV(":authority", "nrf-a.seg1.example.com:8080"),
			NV(":path", "/nnrf-nfm/v1/subscriptions"),
			NV("user-agent", "SMF-smf-0001.seg1.example.com"),
			NV("content-type", "application/json"), NV("content-length", clen),
			NV("accept", "application/json"),
			NV("via", "2.0 scp-1.seg1.example.com:8080"),
			NV("3gpp-sbi-message-priority", "12"),
			NV("3gpp-sbi-max-forward-hops", "4"),
		};
		n = post ? (int)NRF_ARRAY_SIZE(pst) : (int)NRF_ARRAY_SIZE(get);
		blen = nghttp2_hd_deflate_hd(defl, block, sizeof(block), post ? pst : get,
			(size_t)n);
		if (blen < 0)
			exit(1);
		put_frame(NGHTTP2_HEADERS,
			NGHTTP2_FLAG_END_HEADERS | (post ? 0 : NGHTTP2_FLAG_END_STREAM), sid, block,
			(size_t)blen);
		if (post)
			put_frame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, sid, body, strlen(body));
		if (i % 16 == 15) {
			put_frame(NGHTTP2_PING, 0, 0, "benchpng", 8);
			put_u32_frame(NGHTTP2_WINDOW_UPDATE, sid, 1000);
		}
		put_u32_frame(NGHTTP2_RST_STREAM, sid, NGHTTP2_CANCEL);
		requests++;
		last_sid = sid;
	}
	nghttp2_hd_deflate_del(defl);
}

static nghttp2_session *
session_new(void)
{
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 128},
		{NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16384},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 256 * 1024},
	};
	nghttp2_session *s;
	const uint8_t *out;

	if (nghttp2_session_server_new2(&s, cbs, NULL, opt) != 0 ||
		nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, NRF_ARRAY_SIZE(iv)) != 0 ||
		nghttp2_session_set_local_window_size(s, NGHTTP2_FLAG_NONE, 0, 16 << 20) != 0)
		exit(1);
	/* our SETTINGS out (in flight), so the client's ACK is expected */
	while (nghttp2_session_mem_send(s, &out) > 0)
		;
	return s;
}

static void
session_check(nghttp2_session *s)
{
	if (nghttp2_session_get_last_proc_stream_id(s) != last_sid ||
		!nghttp2_session_want_read(s)) {
		fprintf(stderr, "nghttp2 did not take the input as expected\n");
		exit(1);
	}
}

/* The rules on every frame of the input, whole, as the server's frame loop
 * hands them over (after the 24-byte preface). */
static uint64_t
scan_all(struct h2_guard *g, const uint8_t *p, size_t n)
{
	struct h2_guard_verdict v;
	size_t pos = 24;
	uint64_t hits = 0;

	while (pos + 9 <= n) {
		size_t flen = (size_t)p[pos] << 16 | (size_t)p[pos + 1] << 8 | p[pos + 2];

		if (h2_guard_frame(g, p + pos, &v))
			hits++;
		pos += 9 + flen;
	}
	return hits;
}

/* One pass over the input; @return ns spent in the timed part. */
static uint64_t
one_pass(enum method m)
{
	static struct h2_guard g;
	nghttp2_session *s = NULL;
	uint64_t t0, t, hits = 0;

	memset(&g, 0, sizeof(g));
	if (m != M_PASS)
		s = session_new();
	t0 = nrf_now_ns();
	if (m != M_RECV)
		hits += scan_all(&g, input, input_len);
	for (size_t off = 0; off < input_len && m != M_PASS; off += RBUF) {
		size_t n = NRF_MIN((size_t)RBUF, input_len - off);

		if (nghttp2_session_mem_recv(s, input + off, n) != (ssize_t)n)
			exit(1);
	}
	t = nrf_now_ns() - t0;
	if (hits != 0) {
		fprintf(stderr, "the pass found a broken rule in the bench input\n");
		exit(1);
	}
	if (s != NULL) {
		session_check(s);
		nghttp2_session_del(s);
	}
	return t;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	double ns[M_COUNT][RUNS_MAX];
	unsigned long calls = 0;
	int runs = 9, only = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
			calls = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--method") == 0 && i + 1 < argc) {
			i++;
			for (int k = 0; k < M_COUNT; k++)
				if (strcmp(argv[i], method_name[k]) == 0)
					only = k;
		} else {
			fprintf(stderr, "usage: %s [--runs R] [--calls N --method pass|recv|both]\n",
				argv[0]);
			return 2;
		}
	}
	if (runs < 1 || runs > RUNS_MAX || (calls > 0 && only < 0)) {
		fprintf(stderr, "bad --runs or --calls without --method\n");
		return 2;
	}
	if (nghttp2_session_callbacks_new(&cbs) != 0 || nghttp2_option_new(&opt) != 0)
		return 1;
	nghttp2_option_set_no_closed_streams(opt, 1);
	nghttp2_option_set_no_http_messaging(opt, 1);
	build_input();
	if (calls > 0) {
		for (unsigned long c = 0; c < calls; c++)
			one_pass((enum method)only);
		printf("frames %lu requests %lu passes %lu\n", frames, requests, calls);
		return 0;
	}

	/* warm-up and calibration: passes per run of about RUN_NS */
	unsigned long passes[M_COUNT];

	for (int k = 0; k < M_COUNT; k++) {
		uint64_t t = 0;
		unsigned long n = 0;

		while (t < 20000000ull) {
			t += one_pass((enum method)k);
			n++;
		}
		passes[k] = (unsigned long)(RUN_NS * n / t) + 1;
	}
	for (int r = 0; r < runs; r++) {
		for (int k = 0; k < M_COUNT; k++) {
			uint64_t t = 0;

			for (unsigned long p = 0; p < passes[k]; p++)
				t += one_pass((enum method)k);
			ns[k][r] = (double)t / (double)passes[k] / (double)frames;
		}
	}
	printf("Input: %lu requests, %lu frames, %zu bytes in %zu reads of %d KiB; %d runs.\n\n",
		requests, frames, input_len, (input_len + RBUF - 1) / RBUF, RBUF / 1024, runs);
	printf("| method | ns per frame, median (min-max) | ns per request |\n");
	printf("|---|---:|---:|\n");
	double med[M_COUNT];

	for (int k = 0; k < M_COUNT; k++) {
		qsort(ns[k], (size_t)runs, sizeof(ns[k][0]), cmp_double);
		med[k] = ns[k][runs / 2];
		printf("| %s | %.2f (%.2f-%.2f) | %.1f |\n", k == M_PASS ? "(a) pass"
			: k == M_RECV ? "(b) nghttp2 mem_recv" : "(c) pass + mem_recv",
			med[k], ns[k][0], ns[k][runs - 1],
			med[k] * (double)frames / (double)requests);
	}
	printf("\n(a)/(b) = %.2f %%; ((c) - (b))/(b) = %.2f %%\n", 100.0 * med[M_PASS] / med[M_RECV],
		100.0 * (med[M_BOTH] - med[M_RECV]) / med[M_RECV]);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cbs);
	return 0;
}
