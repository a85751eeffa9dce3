/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tp_dpdk_echo: a test server on the DPDK + lwIP transport, written against
 * the nrf_tp ops table only (plus nrf_tp_dpdk_init/fini and the counters),
 * so what passes here is what the contract promises the HTTP/2 layer.
 * run_tp_dpdk.py drives it with kernel clients in a network namespace.
 *
 *   tp_dpdk_echo EAL-ARGS -- --ip A.B.C.D/LEN [--gw A.B.C.D] [--port N]
 *       [--idle-spin N] [--idle-sleep-us N] [--idle-sleep-max-us N] [--arp-probe-ms N]
 *       [--deadline-s N] [--mbufs N] [--pci-nic] [--poll-thread | --poll-lcore]
 *
 * The loop is polled by the main thread, or (--poll-thread) by a plain
 * pthread as the runtime's workers do, or (--poll-lcore) on the data-path
 * lcore through nrf_tp_dpdk_launch(); in the last two the main thread calls
 * loop_wake() every 10 ms meanwhile.
 *
 * Prints "READY <port>" on stdout once it listens. Every connection starts
 * with one command line:
 *   ECHO                 echo every byte until the client closes
 *   SEND <n>             send n pattern bytes (byte i = i % 251), close
 *   SINK                 read to end of stream, answer "GOT <n>", close
 *   GROUP <g>            wait; the first byte that arrives on any member of
 *                        group g closes every member (a handler closing
 *                        connections whose events are already queued)
 *   CONNECT <ip> <port> <n> <k>
 *                        k connections to a kernel echo server, n pattern
 *                        bytes each, echo checked; answers
 *                        "DONE ok=<a> fail=<b> err=<first error>"
 *   HOLD                 read nothing more (the data stays queued in the
 *                        transport) until a RELEASE, then as SINK
 *   RELEASE              every HOLD connection turns SINK; answers
 *                        "RELEASED <n>"
 *   STATS                one line of counters
 *   QUIT                 answer "BYE", stop, exit 0
 * Exit status: 0 after QUIT, 2 on the deadline, 10 - code when
 * nrf_tp_dpdk_init() fails (11 = NRF_EINVAL, 12 = NRF_ENOMEM, ...).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp.h"
#include "nrf_tp_dpdk.h"

#define MAX_SESS 16384
#define BUF_CAP 65536
#define PAT_MOD 251

enum mode {
	M_CMD = 0,
	M_ECHO,
	M_SEND,
	M_SINK,
	M_GROUP,
	M_REPLY,      /* write buf, then close */
	M_WAIT,       /* CONNECT running: wait for its DONE */
	M_HOLD,       /* read nothing until RELEASE, then SINK */
	M_UP_CONNECTING,
	M_UP,
};

struct sess {
	int used;     /* 1 open, 2 closed (slots are never reused) */
	enum mode mode;
	struct nrf_tp_conn *c;
	uint8_t *buf;
	size_t blen, boff;
	uint64_t total, sent, got;
	long group;
	/* CONNECT: control session and its counters */
	struct sess *ctl;
	unsigned int k, ok, fail;
	int first_err;
	const char *first_what;
};

static const struct nrf_tp_ops *tp;
static struct nrf_tp_loop *loop;
static struct sess sess[MAX_SESS];
static unsigned int n_sess;
static uint8_t pattern[BUF_CAP + PAT_MOD];
static bool quit;
static unsigned int deadline_s = 120;
static char final_line[1024];
static atomic_int loop_done;
static int thread_rc;

/* Which thread polls: this one, a plain pthread, or the data-path lcore. */
static enum { RUN_MAIN = 0, RUN_PTHREAD, RUN_LCORE } run_mode;

static struct {
	uint64_t accepted, closed, events, violations, read_eio, write_eio, group_closed;
	uint64_t up_ok, up_fail, wakes;
	char last_peer[64];
} st;

static void on_event(void *ctx, unsigned int ev);

static struct sess *
sess_new(struct nrf_tp_conn *c, enum mode m)
{
	struct sess *s;

	if (n_sess >= MAX_SESS)
		return NULL;
	s = &sess[n_sess++];
	memset(s, 0, sizeof(*s));
	s->buf = malloc(BUF_CAP);
	if (s->buf == NULL)
		return NULL;
	s->used = 1;
	s->mode = m;
	s->c = c;
	tp->set_handler(c, on_event, s);
	return s;
}

static void
sess_close(struct sess *s)
{
	if (s->used != 1)
		return;
	tp->close(s->c);
	s->c = NULL;
	s->used = 2;
	free(s->buf);
	s->buf = NULL;
	st.closed++;
}

/* Write buf[boff, blen): 0 all out, 1 blocked, -1 error. */
static int
flush_buf(struct sess *s)
{
	while (s->boff < s->blen) {
		struct iovec iov = {s->buf + s->boff, s->blen - s->boff};
		ssize_t w = tp->writev(s->c, &iov, 1);

		if (w == NRF_EAGAIN)
			return 1;
		if (w < 0) {
			st.write_eio++;
			return -1;
		}
		s->boff += (size_t)w;
	}
	s->boff = s->blen = 0;
	return 0;
}

static void
reply(struct sess *s, const char *text)
{
	size_t n = strlen(text);

	memcpy(s->buf, text, n);
	s->blen = n;
	s->boff = 0;
	s->mode = M_REPLY;
	if (flush_buf(s) != 1)
		sess_close(s);
}

/* Pattern bytes [sent, total): 0 all out, 1 blocked, -1 error. */
static int
send_pattern(struct sess *s)
{
	while (s->sent < s->total) {
		struct iovec iov[2];
		size_t len = (size_t)NRF_MIN(s->total - s->sent, (uint64_t)BUF_CAP);
		size_t half = len / 2;
		ssize_t w;

		/* Two iovecs: writev must take them as one stream. */
		iov[0].iov_base = pattern + s->sent % PAT_MOD;
		iov[0].iov_len = half;
		iov[1].iov_base = pattern + (s->sent + half) % PAT_MOD;
		iov[1].iov_len = len - half;
		w = tp->writev(s->c, iov, 2);
		if (w == NRF_EAGAIN)
			return 1;
		if (w < 0) {
			st.write_eio++;
			return -1;
		}
		s->sent += (uint64_t)w;
	}
	return 0;
}

static void
pump_echo(struct sess *s)
{
	for (;;) {
		ssize_t n;
		int r = flush_buf(s);

		if (r == 1)
			return; /* EV_OUT brings us back; reading waits (backpressure) */
		if (r < 0) {
			sess_close(s);
			return;
		}
		/* Echo reads in place (read_ref(), no copy by the transport)
		 * where the back-end offers it; the other modes use read(). */
		if (tp->read_ref != NULL) {
			const void *in;

			n = tp->read_ref(s->c, &in);
			if (n > BUF_CAP) {
				st.read_eio++; /* one segment is never larger */
				sess_close(s);
				return;
			}
			if (n > 0)
				memcpy(s->buf, in, (size_t)n);
		} else {
			n = tp->read(s->c, s->buf, BUF_CAP);
		}
		if (n == NRF_EAGAIN)
			return;
		if (n == NRF_ECLOSED) {
			sess_close(s);
			return;
		}
		if (n < 0) {
			st.read_eio++;
			sess_close(s);
			return;
		}
		s->blen = (size_t)n;
		s->boff = 0;
	}
}

static void
pump_send(struct sess *s)
{
	int r = send_pattern(s);

	if (r == 0 || r < 0)
		sess_close(s);
}

static void
pump_sink(struct sess *s)
{
	char line[64];

	for (;;) {
		ssize_t n = tp->read(s->c, s->buf, BUF_CAP);

		if (n == NRF_EAGAIN)
			return;
		if (n == NRF_ECLOSED) {
			snprintf(line, sizeof(line), "GOT %" PRIu64 "\n", s->got);
			reply(s, line);
			return;
		}
		if (n < 0) {
			st.read_eio++;
			sess_close(s);
			return;
		}
		s->got += (uint64_t)n;
	}
}

/* Close every member of group @p g; the others may have events queued in
 * this very poll(): their handlers must not run any more. */
static void
group_fire(long g)
{
	unsigned int i;

	for (i = 0; i < n_sess; i++) {
		if (sess[i].used == 1 && sess[i].mode == M_GROUP && sess[i].group == g) {
			sess_close(&sess[i]);
			st.group_closed++;
		}
	}
}

static void
pump_group(struct sess *s)
{
	ssize_t n = tp->read(s->c, s->buf, BUF_CAP);

	if (n == NRF_EAGAIN)
		return;
	if (n <= 0) {
		sess_close(s);
		return;
	}
	group_fire(s->group);
}

static void
up_done(struct sess *u, int err, const char *what)
{
	struct sess *ctl = u->ctl;

	sess_close(u);
	if (err == 0)
		st.up_ok++;
	else
		st.up_fail++;
	if (ctl == NULL || ctl->used != 1)
		return;
	if (err == 0) {
		ctl->ok++;
	} else {
		ctl->fail++;
		if (ctl->first_err == 0) {
			ctl->first_err = err;
			ctl->first_what = what;
		}
	}
	if (ctl->ok + ctl->fail == ctl->k) {
		char line[128];

		snprintf(line, sizeof(line), "DONE ok=%u fail=%u err=%s:%s\n", ctl->ok, ctl->fail,
			nrf_errname(ctl->first_err), ctl->first_what != NULL ? ctl->first_what : "-");
		reply(ctl, line);
	}
}

static void
pump_up(struct sess *u)
{
	int r = send_pattern(u);

	if (r < 0) {
		up_done(u, NRF_EIO, "write");
		return;
	}
	for (;;) {
		ssize_t n = tp->read(u->c, u->buf, BUF_CAP);
		ssize_t j;

		if (n == NRF_EAGAIN)
			return;
		if (n < 0) {
			up_done(u, (int)n, "read");
			return;
		}
		for (j = 0; j < n; j++) {
			if (u->buf[j] != (uint8_t)((u->got + (uint64_t)j) % PAT_MOD)) {
				up_done(u, NRF_EPROTO, "pattern");
				return;
			}
		}
		u->got += (uint64_t)n;
		if (u->got >= u->total) {
			up_done(u, 0, NULL);
			return;
		}
	}
}

static void
start_connect(struct sess *ctl, const char *ip, unsigned int port, uint64_t n, unsigned int k)
{
	struct nrf_tp_addr a;
	unsigned int i;

	ctl->k = k;
	ctl->mode = M_WAIT;
	if (k == 0 || nrf_tp_addr_parse(ip, (uint16_t)port, &a) != 0) {
		reply(ctl, "ERR bad CONNECT\n");
		return;
	}
	for (i = 0; i < k && ctl->used == 1; i++) {
		int err;
		struct nrf_tp_conn *c = tp->connect(loop, &a, &err);
		struct sess *u;

		if (c == NULL) {
			ctl->fail++;
			if (ctl->first_err == 0) {
				ctl->first_err = err;
				ctl->first_what = "connect";
			}
			if (ctl->ok + ctl->fail == ctl->k) {
				char line[128];

				snprintf(line, sizeof(line), "DONE ok=%u fail=%u err=%s:connect\n",
					ctl->ok, ctl->fail, nrf_errname(ctl->first_err));
				reply(ctl, line);
			}
			continue;
		}
		u = sess_new(c, M_UP_CONNECTING);
		if (u == NULL) {
			tp->close(c);
			ctl->fail++;
			continue;
		}
		u->ctl = ctl;
		u->total = n;
	}
}

static void stats_line(char *buf, size_t cap);

static void
run_command(struct sess *s, char *line, size_t rest_off, size_t rest_len)
{
	char ip[64];
	unsigned long long n;
	unsigned int port, k;
	long g;

	if (strcmp(line, "ECHO") == 0) {
		s->mode = M_ECHO;
		memmove(s->buf, s->buf + rest_off, rest_len);
		s->blen = rest_len;
		s->boff = 0;
		pump_echo(s);
	} else if (sscanf(line, "SEND %llu", &n) == 1) {
		s->mode = M_SEND;
		s->total = n;
		pump_send(s);
	} else if (strcmp(line, "SINK") == 0) {
		s->mode = M_SINK;
		s->got = rest_len;
		pump_sink(s);
	} else if (sscanf(line, "GROUP %ld", &g) == 1) {
		s->mode = M_GROUP;
		s->group = g;
		if (rest_len > 0)
			group_fire(g);
	} else if (sscanf(line, "CONNECT %63s %u %llu %u", ip, &port, &n, &k) == 4) {
		start_connect(s, ip, port, n, k);
	} else if (strcmp(line, "HOLD") == 0) {
		s->mode = M_HOLD;
		s->got = rest_len;
	} else if (strcmp(line, "RELEASE") == 0) {
		char out[64];
		unsigned int i, k = 0;

		for (i = 0; i < n_sess; i++) {
			if (sess[i].used == 1 && sess[i].mode == M_HOLD) {
				sess[i].mode = M_SINK;
				k++;
				pump_sink(&sess[i]);
			}
		}
		snprintf(out, sizeof(out), "RELEASED %u\n", k);
		reply(s, out);
	} else if (strcmp(line, "STATS") == 0) {
		char out[1024];

		stats_line(out, sizeof(out));
		reply(s, out);
	} else if (strcmp(line, "QUIT") == 0) {
		quit = true;
		reply(s, "BYE\n");
	} else {
		reply(s, "ERR unknown command\n");
	}
}

static void
pump_cmd(struct sess *s)
{
	for (;;) {
		ssize_t n = tp->read(s->c, s->buf + s->blen, BUF_CAP - 1 - s->blen);
		uint8_t *nl;

		if (n == NRF_EAGAIN)
			return;
		if (n < 0) {
			if (n != NRF_ECLOSED)
				st.read_eio++;
			sess_close(s);
			return;
		}
		s->blen += (size_t)n;
		nl = memchr(s->buf, '\n', s->blen);
		if (nl != NULL) {
			size_t len = (size_t)(nl - s->buf);
			size_t rest = s->blen - len - 1;
			char line[256];

			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			memcpy(line, s->buf, len);
			line[len] = '\0';
			s->blen = 0;
			run_command(s, line, (size_t)(nl - s->buf) + 1, rest);
			return;
		}
		if (s->blen >= 255) {
			reply(s, "ERR line too long\n");
			return;
		}
	}
}

static void
on_event(void *ctx, unsigned int ev)
{
	struct sess *s = ctx;

	if (s == NULL || s->used != 1) {
		st.violations++; /* a handler after close() */
		return;
	}
	st.events++;
	switch (s->mode) {
	case M_CMD:
		pump_cmd(s);
		break;
	case M_ECHO:
		pump_echo(s);
		break;
	case M_SEND:
		pump_send(s);
		break;
	case M_SINK:
		pump_sink(s);
		break;
	case M_GROUP:
		pump_group(s);
		break;
	case M_REPLY:
		if (flush_buf(s) != 1)
			sess_close(s);
		break;
	case M_WAIT:
		break;
	case M_UP_CONNECTING: {
		int r = tp->connect_result(s->c);

		if (r == NRF_EAGAIN)
			break;
		if (r != 0) {
			up_done(s, r, "connect");
			break;
		}
		s->mode = M_UP;
		pump_up(s);
		break;
	}
	case M_UP:
		if (ev & (NRF_TP_EV_IN | NRF_TP_EV_OUT | NRF_TP_EV_ERR))
			pump_up(s);
		break;
	case M_HOLD:
		break; /* the data waits in the transport until RELEASE */
	}
}

static void
on_listener(void *ctx, unsigned int ev)
{
	struct nrf_tp_listener *l = *(struct nrf_tp_listener **)ctx;

	(void)ev;
	for (;;) {
		int err;
		struct nrf_tp_conn *c = tp->accept(l, &err);

		if (c == NULL)
			return;
		st.accepted++;
		tp->peer_name(c, st.last_peer, sizeof(st.last_peer));
		if (sess_new(c, M_CMD) == NULL)
			tp->close(c);
	}
}

static void
on_wake(void *ctx)
{
	(void)ctx;
	st.wakes++;
}

static void
stats_line(char *buf, size_t cap)
{
	struct nrf_tp_dpdk_lcore_stats ls;
	int lc = nrf_tp_dpdk_poll_lcore();

	memset(&ls, 0, sizeof(ls));
	if (lc >= 0)
		(void)nrf_tp_dpdk_lcore_stats((unsigned int)lc, &ls);
	snprintf(buf, cap,
		"STATS accepted=%" PRIu64 " closed=%" PRIu64 " events=%" PRIu64
		" violations=%" PRIu64 " read_eio=%" PRIu64 " write_eio=%" PRIu64
		" group_closed=%" PRIu64 " up_ok=%" PRIu64 " up_fail=%" PRIu64 " wakes=%" PRIu64
		" last_peer=%s lcore=%d iters=%" PRIu64 " busy_iters=%" PRIu64
		" cycles=%" PRIu64 " busy_cycles=%" PRIu64 " poll_busy_cycles=%" PRIu64
		" tx_cycles=%" PRIu64
		" hz=%" PRIu64 " rx=%" PRIu64 " tx=%" PRIu64 " tx_drop=%" PRIu64
		" tx_nombuf=%" PRIu64 " rx_drop=%" PRIu64 " sleeps=%" PRIu64 "\n",
		st.accepted, st.closed, st.events, st.violations, st.read_eio, st.write_eio,
		st.group_closed, st.up_ok, st.up_fail, st.wakes, st.last_peer[0] ? st.last_peer : "-", lc,
		ls.iterations, ls.busy_iterations, ls.cycles, ls.busy_cycles, ls.poll_busy_cycles,
		ls.tx_cycles,
		nrf_tp_dpdk_tsc_hz(), ls.rx_frames, ls.tx_frames, ls.tx_dropped, ls.tx_nombuf,
		ls.rx_dropped, ls.idle_sleeps);
}

static int
parse_app_args(int argc, char **argv, struct nrf_tp_dpdk_conf *conf, unsigned int *port)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--pci-nic") == 0) {
			conf->pci_nic_intended = true;
			continue;
		}
		if (strcmp(a, "--poll-thread") == 0) {
			run_mode = RUN_PTHREAD;
			continue;
		}
		if (strcmp(a, "--poll-lcore") == 0) {
			run_mode = RUN_LCORE;
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "tp_dpdk_echo: %s needs a value\n", a);
			return -1;
		}
		i++;
		if (strcmp(a, "--ip") == 0) {
			char host[64];
			const char *slash = strchr(v, '/');
			size_t hl = slash != NULL ? (size_t)(slash - v) : strlen(v);

			if (slash == NULL || hl >= sizeof(host)) {
				fprintf(stderr, "tp_dpdk_echo: --ip wants A.B.C.D/LEN\n");
				return -1;
			}
			memcpy(host, v, hl);
			host[hl] = '\0';
			if (nrf_tp_addr_parse(host, 0, &conf->ip) != 0)
				return -1;
			conf->prefix_len = (uint8_t)atoi(slash + 1);
		} else if (strcmp(a, "--gw") == 0) {
			if (nrf_tp_addr_parse(v, 0, &conf->gateway) != 0)
				return -1;
		} else if (strcmp(a, "--port") == 0) {
			*port = (unsigned int)atoi(v);
		} else if (strcmp(a, "--idle-spin") == 0) {
			conf->idle_spin = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--idle-sleep-us") == 0) {
			conf->idle_sleep_us = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--idle-sleep-max-us") == 0) {
			conf->idle_sleep_max_us = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--arp-probe-ms") == 0) {
			conf->arp_probe_ms = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--mbufs") == 0) {
			conf->mbufs = (uint32_t)strtoul(v, NULL, 10);
		} else if (strcmp(a, "--deadline-s") == 0) {
			deadline_s = (unsigned int)atoi(v);
		} else {
			fprintf(stderr, "tp_dpdk_echo: unknown option %s\n", a);
			return -1;
		}
	}
	return 0;
}

/* The poll loop: until QUIT or the deadline; then everything is closed
 * on this thread, which owns the loop. */
static int
run_loop(void *arg)
{
	struct nrf_tp_listener *l = *(struct nrf_tp_listener **)arg;
	uint64_t deadline = nrf_now_ns() + (uint64_t)deadline_s * 1000000000ull;
	uint64_t quit_at = 0;
	unsigned int i;
	int rc = 0;

	for (i = 0;; i++) {
		if (tp->poll(loop, 10) < 0) {
			fprintf(stderr, "tp_dpdk_echo: poll failed\n");
			rc = 1;
			break;
		}
		if ((i & 255) != 0)
			continue;
		if (quit && quit_at == 0)
			quit_at = nrf_now_ns() + 200000000ull; /* let BYE and FINs go out */
		if (quit_at != 0 && nrf_now_ns() >= quit_at)
			break;
		if (nrf_now_ns() >= deadline) {
			fprintf(stderr, "tp_dpdk_echo: deadline reached\n");
			rc = 2;
			break;
		}
	}
	stats_line(final_line, sizeof(final_line));
	for (i = 0; i < n_sess; i++)
		sess_close(&sess[i]);
	tp->listener_close(l);
	tp->loop_free(loop);
	atomic_store(&loop_done, 1);
	return rc;
}

static void *
run_loop_thread(void *arg)
{
	thread_rc = run_loop(arg);
	return NULL;
}

/* Another thread pokes the loop while it runs (loop_wake: any thread). */
static void
wake_until_done(void)
{
	while (!atomic_load(&loop_done)) {
		tp->loop_wake(loop);
		usleep(10000);
	}
}

int
main(int argc, char **argv)
{
	struct nrf_tp_dpdk_conf conf;
	struct nrf_tp_listener *l = NULL;
	struct nrf_tp_addr any, bound;
	unsigned int port = 5000, i;
	int n, err, eal_argc = argc, rc = 0;
	pthread_t th;

	for (i = 0; i < (unsigned int)PAT_MOD + BUF_CAP; i++)
		pattern[i] = (uint8_t)(i % PAT_MOD);
	nrf_tp_dpdk_conf_defaults(&conf);
	for (n = 1; n < argc; n++) {
		if (strcmp(argv[n], "--") == 0) {
			eal_argc = n + 1;
			break;
		}
	}
	if (parse_app_args(argc - eal_argc + 1, argv + eal_argc - 1, &conf, &port) != 0)
		return 64;

	n = nrf_tp_dpdk_init(eal_argc, argv, &conf);
	if (n < 0) {
		fprintf(stderr, "tp_dpdk_echo: init failed: %s\n", nrf_errname(n));
		return 10 - n;
	}
	tp = nrf_tp_dpdk_ops();
	loop = tp->loop_create(&err);
	if (loop == NULL) {
		fprintf(stderr, "tp_dpdk_echo: loop_create: %s\n", nrf_errname(err));
		nrf_tp_dpdk_fini();
		return 1;
	}
	if (tp->loop_create(&err) != NULL || err != NRF_EEXIST) {
		fprintf(stderr, "tp_dpdk_echo: a second loop was not refused\n");
		tp->loop_free(loop);
		nrf_tp_dpdk_fini();
		return 1;
	}
	tp->set_wake(loop, on_wake, NULL);
	memset(&any, 0, sizeof(any));
	any.family = 4;
	any.port = (uint16_t)port;
	l = tp->listen(loop, &any, 1024, on_listener, &l, &err);
	if (l == NULL || tp->listener_addr(l, &bound) != 0) {
		fprintf(stderr, "tp_dpdk_echo: listen: %s\n", nrf_errname(err));
		tp->loop_free(loop);
		nrf_tp_dpdk_fini();
		return 1;
	}
	printf("READY %u\n", bound.port);
	fflush(stdout);

	switch (run_mode) {
	case RUN_MAIN:
		rc = run_loop(&l);
		break;
	case RUN_PTHREAD:
		/* As the runtime's worker threads do: a plain pthread, which the
		 * transport registers with the EAL on its first poll. */
		if (pthread_create(&th, NULL, run_loop_thread, &l) != 0) {
			rc = run_loop(&l);
			break;
		}
		wake_until_done();
		pthread_join(th, NULL);
		rc = thread_rc;
		break;
	case RUN_LCORE:
		n = nrf_tp_dpdk_launch(run_loop, &l);
		if (n < 0) {
			fprintf(stderr, "tp_dpdk_echo: launch: %s\n", nrf_errname(n));
			rc = run_loop(&l);
			break;
		}
		wake_until_done();
		rc = nrf_tp_dpdk_join();
		break;
	}
	printf("FINAL %s", final_line);
	fflush(stdout);
	nrf_tp_dpdk_fini();
	return rc;
}
