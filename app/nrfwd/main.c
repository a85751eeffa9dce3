/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd: the forwarding data path of an NRF.
 *
 *   nrfwd [EAL args --] --config FILE [--workers N] [--log-level L]
 *         [--management ADDR:PORT] [--api-token-file FILE]
 *
 * The control thread (this one) loads and validates the configuration,
 * builds the first snapshot, binds the listeners, starts the workers and
 * then only waits for signals: SIGTERM/SIGINT drain and stop (exit 0),
 * SIGHUP reloads the configuration file (nrfwd_sd.h, also for systemd's
 * notifications and watchdog).
 * Anything before a "--" is for the DPDK EAL (runtime.transport "dpdk",
 * nrfwd_tp.c); the kernel transport ignores it.
 *
 * On DPDK with two or more worker lcores this process becomes the primary
 * of one worker process per worker lcore (nrfwd_mp.h): it keeps the port,
 * the REST API and the configuration, and runs no worker itself; each
 * worker is this program again, started with --mp-worker K.
 *
 * main() is: parse the command line, prepare what every role needs
 * (configuration, transport, signals, first snapshot), then run one of
 * three roles: single process (kernel threads or one DPDK lcore), primary
 * of worker processes, or worker process. Each role function starts its
 * parts in order and undoes them in reverse with goto-style cleanup.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "nrf_addr.h"
#include "nrf_api.h"
#include "nrf_cfg.h"
#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_rt.h"
#include "nrf_sys.h"
#include "nrf_tp.h"
#include "nrf_tp_dpdk.h"
#include "nrfwd_mp.h"
#include "nrfwd_sd.h"
#include "nrfwd_opts.h"
#include "nrfwd_src.h"
#include "nrfwd_tp.h"

#define MOD "nrfwd"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nrfwd [EAL-ARGS --] --config FILE [--workers N] [--log-level LEVEL]\n"
		"  -c, --config FILE      configuration document (JSON, docs/config.md)\n"
		"  -w, --workers N        worker threads, 1..%d (default 1)\n"
		"      --log-level LEVEL  error, warn, info (default) or debug\n"
		"  -M, --management ADDR:PORT  management listener (REST API, metrics,\n"
		"                         health) instead of runtime.management; port 0\n"
		"                         picks a free port (logged)\n"
		"  -T, --api-token-file FILE  bearer token required for PUT/PATCH\n"
		"      --pci-nic          DPDK: allow EAL arguments without --no-pci / -a\n"
		"      --dpdk-processes   DPDK: run the worker in a process of its own even\n"
		"                         with one worker lcore (as with two or more)\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n",
		NRF_RT_MAX_WORKERS);
	nrfwd_src_usage(f);
	nrfwd_tp_usage(f);
}

/* What a start failure says: the failing module's reason (errno text and
 * what it was about, nrf_err_why_take()), else the code's text. */
static const char *
start_why(int err)
{
	const char *why = nrf_err_why_take();

	return why != NULL ? why : nrf_strerror(err);
}

/* ------------------------------------------------------------------------ */
/* Management listener (lib/api): REST configuration API, metrics, health.   */

struct mgmt_opts {
	const char *listen;      /* --management ADDR:PORT, NULL: runtime.management */
	const char *token_file;  /* --api-token-file */
};

/* --management and --api-token-file, checked before anything listens (a
 * mistake there must not leave the data path half started): the address
 * parses, the token file reads as a token. Does not bind. 0, or -1 after
 * logging why. */
static int
mgmt_check(const struct mgmt_opts *o)
{
	char addr[128], *token;
	uint16_t port;
	int err;

	if (o->listen != NULL && nrf_hostport_split(o->listen, addr, sizeof(addr), &port) != 0) {
		NRF_LOG(ERR, MOD, "--management: expected ADDR:PORT, got \"%s\"", o->listen);
		return -1;
	}
	if (o->token_file == NULL)
		return 0;
	errno = 0;
	token = nrf_api_token_read(o->token_file, &err);
	if (token == NULL) {
		NRF_LOG(ERR, MOD, "--api-token-file %s: %s", o->token_file,
			err == NRF_EIO && errno != 0 ? strerror(errno)
			: err == NRF_EINVAL ? "empty, or not a token (spaces or control characters)"
			: nrf_strerror(err));
		return -1;
	}
	memset(token, 0, strlen(token));
	free(token);
	return 0;
}

/* Start the management listener, or not (port 0 in the configuration and
 * no --management). Returns 0 with *out set (or NULL when disabled), or -1
 * after logging why. */
static int
mgmt_start(const struct mgmt_opts *o, struct nrf_rt *rt, const struct nrf_cfg *cfg,
	const char *config_path, struct nrf_api **out)
{
	struct nrf_api_params ap = {0};
	struct nrf_tp_addr a;
	char addr[128], buf[80];
	char *token = NULL;
	int err;

	*out = NULL;
	if (o->listen != NULL) {
		if (nrf_hostport_split(o->listen, addr, sizeof(addr), &ap.port) != 0) {
			NRF_LOG(ERR, MOD, "--management: expected ADDR:PORT, got \"%s\"", o->listen);
			return -1;
		}
		ap.address = addr;
	} else {
		if (cfg->rt.mgmt_port == 0) {
			NRF_LOG(INFO, MOD, "management listener disabled (runtime.management.port 0)");
			if (o->token_file != NULL)
				NRF_LOG(WARN, MOD, "--api-token-file %s is not used: no management "
					"listener (runtime.management.port 0, no --management)",
					o->token_file);
			return 0;
		}
		ap.address = cfg->rt.mgmt_address;
		ap.port = cfg->rt.mgmt_port;
	}
	if (o->token_file != NULL) {
		token = nrf_api_token_read(o->token_file, &err);
		if (token == NULL) {
			NRF_LOG(ERR, MOD, "--api-token-file %s: %s", o->token_file, nrf_strerror(err));
			return -1;
		}
	}
	ap.config_path = config_path;
	ap.token = token;
	(void)nrf_err_why_take();
	nrfwd_src_api(&ap);
	*out = nrf_api_create(&ap, rt, &err);
	if (token != NULL) {
		memset(token, 0, strlen(token));
		free(token);
	}
	if (*out == NULL) {
		NRF_LOG(ERR, MOD, "cannot start the management listener: %s", start_why(err));
		return -1;
	}
	nrf_api_addr(*out, &a);
	NRF_LOG(INFO, MOD, "nrfwd management on %s%s", nrf_tp_addr_format(&a, buf, sizeof(buf)),
		o->token_file != NULL ? " (token required for changes)" : "");
	return 0;
}

static void
log_stats(const struct nrf_rt *rt)
{
	struct nrf_rt_stats s;

	nrf_rt_stats_get(rt, &s);
	NRF_LOG(INFO, MOD,
		"stats: requests=%llu local=%llu peer=%llu error=%llu loop_detected=%llu "
		"hop_limit=%llu loop_prevented=%llu not_reachable=%llu overload=%llu "
		"bad=%llu forwards=%llu reroutes=%llu try_failures=%llu try_timeouts=%llu "
		"request_timeouts=%llu client_resets=%llu relay_aborts=%llu conns=%llu",
		(unsigned long long)s.requests, (unsigned long long)s.answered_local,
		(unsigned long long)s.answered_peer, (unsigned long long)s.answered_error,
		(unsigned long long)s.loop_detected, (unsigned long long)s.hop_limit,
		(unsigned long long)s.loop_prevented, (unsigned long long)s.not_reachable,
		(unsigned long long)s.overload, (unsigned long long)s.bad_requests,
		(unsigned long long)s.forwards, (unsigned long long)s.reroutes,
		(unsigned long long)s.try_failures, (unsigned long long)s.try_timeouts,
		(unsigned long long)s.request_timeouts, (unsigned long long)s.client_resets,
		(unsigned long long)s.relay_aborts, (unsigned long long)s.conns_accepted);
}

/* The primary's summary: requests and busy cycles per request of each
 * worker process (the same figures /metrics shows). */
static void
log_workers(const struct nrf_rt *rt)
{
	unsigned int i, n = nrf_rt_workers(rt);

	for (i = 0; i < n; i++) {
		struct nrf_rt_worker_info wi;
		struct nrf_rt_dp_stats d;
		double us = 0.0;

		if (nrf_rt_worker_get(rt, i, &wi) != 0)
			continue;
		if (nrf_rt_dp_stats_worker(rt, i, &d) == 0 && d.polled && d.tsc_hz > 0 &&
			wi.requests > 0)
			us = (double)d.lc.busy_cycles / (double)d.tsc_hz * 1e6 /
				(double)wi.requests;
		NRF_LOG(INFO, MOD, "worker %u (lcore %d): %llu requests, %.2f us busy per request, "
			"%u restart(s)", i, d.lcore, (unsigned long long)wi.requests, us, wi.restarts);
	}
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

struct nrfwd_args {
	const char *config;
	const char *level_name;  /* --log-level as given (passed on to workers) */
	enum nrf_log_level level;
	unsigned int workers;    /* --workers */
	int mp_worker;           /* --mp-worker K, -1: not a worker process */
	struct mgmt_opts mgmt;
	struct nrfwd_tp_opts tp;
};

/* @return -1 to go on, or the exit status (help, version, usage error). */
static int
parse_args(int argc, char **argv, struct nrfwd_args *a)
{
	static const struct option opts[] = {
		NRFWD_LONGOPTS,
		{"mp-worker", required_argument, NULL, 1002},
		NRFWD_SRC_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int i, c;

	memset(a, 0, sizeof(*a));
	a->level = NRF_LOG_INFO;
	a->workers = 1;
	a->mp_worker = -1;
	a->tp.eal_argc = 1;
	a->tp.eal_argv = argv;
	a->tp.role = NRF_DP_AUTO;
	/* Everything up to a "--" is EAL arguments (DPDK transport): kept for
	 * nrfwd_tp_start(); our own options follow, after the program name. */
	i = nrfwd_eal_split(&argc, &argv);
	if (i > 0)
		a->tp.eal_argc = i;
	while ((c = getopt_long(argc, argv, "c:w:l:M:T:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config = optarg;
			break;
		case 'w':
			if (nrfwd_opt_workers("nrfwd", optarg, &a->workers) != 0)
				return 2;
			break;
		case 'l':
			/* -l is the EAL's lcore list (DPDK's own meaning of it,
			 * before "--"); nrfwd has no short form of its own. */
			fprintf(stderr, "nrfwd: -l is the EAL's lcore list: put EAL options "
					"before \"--\"; nrfwd's log level is --log-level\n");
			return 2;
		case NRFWD_OPT_LOG_LEVEL:
			if (nrfwd_opt_level(optarg, &a->level) != 0) {
				fprintf(stderr, "nrfwd: --log-level: unknown level \"%s\"\n", optarg);
				return 2;
			}
			a->level_name = optarg;
			break;
		case 'M':
			a->mgmt.listen = optarg;
			break;
		case 'T':
			a->mgmt.token_file = optarg;
			break;
		case NRFWD_OPT_PCI_NIC:
			a->tp.pci_nic = true;
			break;
		case NRFWD_OPT_DPDK_PROCESSES:
			a->tp.role = NRF_DP_PRIMARY;
			break;
		case 1002: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 0 || v >= NRF_DP_MAX_WORKERS) {
				fprintf(stderr, "nrfwd: --mp-worker: expected 0..%d, got \"%s\"\n",
					NRF_DP_MAX_WORKERS - 1, optarg);
				return 2;
			}
			a->mp_worker = (int)v;
			a->tp.role = NRF_DP_SECONDARY;
			a->tp.queue = (unsigned int)v;
			break;
		}
		case NRFWD_SRC_OPT_FIRST ... NRFWD_SRC_OPT_LAST:
			if (nrfwd_src_opt(c, optarg) != 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("nrfwd " NRF_VERSION " (transports: kernel%s)\n",
				nrfwd_tp_dpdk_built() ? ", dpdk" : "");
			if (nrfwd_tp_dpdk_built()) {
				struct nrf_tp_dpdk_caps cap;

				/* What the DPDK transport of this build carries
				 * (also nrfwd_dpdk_capability in /metrics). */
				nrf_tp_dpdk_caps(&cap);
				printf("dpdk: lwip %s, max mtu %u, ipv6 %s, vlan %s\n", cap.lwip,
					cap.max_mtu, cap.ipv6 ? "yes" : "no", cap.vlan ? "yes" : "no");
			}
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nrfwd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (a->config == NULL) {
		fprintf(stderr, "nrfwd: --config is required\n");
		usage(stderr);
		return 2;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* What every role starts from                                               */

struct nrfwd_base {
	const struct nrf_tp_ops *tp;  /* the transport started */
	struct nrf_rt_snap *snap;     /* first snapshot (the runtime takes it) */
	const struct nrf_cfg *cfg;    /* its configuration */
	sigset_t sigs;                /* blocked here, waited for by the role */
};

/*
 * Configuration loaded (every problem printed), transport started, a
 * worker process attached to its primary's shared memory (which may bring
 * a newer document), signals blocked, first snapshot built.
 * @return 0, or the exit status after logging (transport stopped).
 */
static int
prepare(const struct nrfwd_args *a, struct nrfwd_base *b)
{
	struct nrf_cfg_problems problems = {0};
	struct nrf_cfg *cfg;
	int rc, err;

	cfg = nrfwd_src_active() ? nrfwd_src_load(a->config, &problems, &err)
				 : nrf_cfg_load_file(a->config, 1, &problems, &err);
	if (cfg == NULL) {
		size_t k;

		NRF_LOG(ERR, MOD, "configuration %s rejected (%s): %zu problem(s)", a->config,
			nrf_strerror(err), problems.n);
		nrfwd_src_free();
		/* One log line per problem (timestamp, level): journald and
		 * log collectors keep each one whole. The root is "/". */
		for (k = 0; k < problems.n; k++)
			NRF_LOG(ERR, MOD, "configuration %s: %s: %s", a->config,
				problems.v[k].pointer[0] != '\0' ? problems.v[k].pointer : "/",
				problems.v[k].reason);
		nrf_cfg_problems_fini(&problems);
		return 1;
	}
	nrf_cfg_problems_fini(&problems);
	/* Command-line files and addresses before any listener opens. */
	if (a->mp_worker < 0 && mgmt_check(&a->mgmt) != 0) {
		nrf_cfg_free(cfg);
		nrfwd_src_free();
		return 1;
	}
	/* Transport: kernel sockets, or the DPDK port (EAL start-up problems
	 * end here with one line and a non-zero status). */
	rc = nrfwd_tp_start(cfg, &a->tp, a->workers, &b->tp);
	if (rc != 0) {
		nrf_cfg_free(cfg);
		return rc;
	}
	(void)nrf_raise_nofile(); /* maxConnections + peer connections */
	if (a->mp_worker >= 0) {
		if (cfg->rt.transport != NRF_TRANSPORT_DPDK)
			NRF_LOG(ERR, MOD, "--mp-worker needs runtime.transport \"dpdk\"");
		if (cfg->rt.transport != NRF_TRANSPORT_DPDK ||
			nrfwd_mp_worker_attach((unsigned int)a->mp_worker, &cfg) != 0)
			goto fail_cfg;
	}

	/* Signals are handled by the control thread only; workers inherit
	 * the mask. */
	sigemptyset(&b->sigs);
	sigaddset(&b->sigs, SIGTERM);
	sigaddset(&b->sigs, SIGINT);
	sigaddset(&b->sigs, SIGHUP);
	sigaddset(&b->sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &b->sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	b->snap = nrf_rt_snap_create(cfg, &err); /* takes cfg, also on failure */
	if (b->snap == NULL) {
		NRF_LOG(ERR, MOD, "cannot build the forwarding data from %s: %s", a->config,
			start_why(err));
		goto fail_tp;
	}
	b->cfg = nrf_rt_snap_cfg(b->snap);
	return 0;

fail_cfg:
	nrf_cfg_free(cfg);
fail_tp:
	nrfwd_tp_stop();
	return 1;
}

/* What the control thread's wait needs besides its tick: the runtime (the
 * watchdog's liveness, SIGHUP's publish) and the REST API (NULL: none). */
struct ctl_wait {
	struct nrf_rt *rt;
	struct nrf_api *api;
	const char *config;
	struct nrfwd_mp *mp;  /* a DPDK primary's workers (SIGUSR1); else NULL */
};

/* Wait for SIGTERM or SIGINT, calling @p tick(@p arg, n) every @p period_ms
 * meanwhile (and the service manager's watchdog, nrfwd_sd.h); SIGHUP
 * reloads the configuration file. READY=1 first, STOPPING=1 last.
 * @return the signal. */
static int
wait_stop(const sigset_t *sigs, const struct ctl_wait *w, unsigned int period_ms,
	void (*tick)(void *, unsigned int), void *arg)
{
	struct timespec ts = {period_ms / 1000u, (long)(period_ms % 1000u) * 1000000L};
	unsigned int n;
	int sig;

	nrfwd_sd_ready(w->rt);
	for (n = 0;; n++) {
		sig = sigtimedwait(sigs, NULL, &ts);
		if (sig < 0) {
			if (errno != EAGAIN && errno != EINTR)
				NRF_LOG(ERR, MOD, "sigtimedwait: %s", strerror(errno));
			tick(arg, n);
			nrfwd_sd_tick(w->rt);
			continue;
		}
		if (sig == SIGHUP) {
			nrfwd_sd_reload(w->api, w->rt, w->config);
			continue;
		}
		if (sig == SIGUSR1) {
			(void)nrf_rt_alog_reopen(); /* logrotate (docs/access-log.md) */
			if (w->mp != NULL)
				nrfwd_mp_alog_reopen(w->mp); /* and every worker process */
			continue;
		}
		nrfwd_sd_stopping();
		return sig;
	}
}

/* Control-thread tick of a runtime with its workers here: free retired
 * snapshots (once a second). */
static void
tick_reclaim(void *arg, unsigned int n)
{
	(void)n;
	(void)nrf_rt_reclaim(arg);
}

/* The workers of this process: runtime created and started, one line
 * saying so, the bound listeners. NULL after logging why (the runtime
 * took the snapshot either way). */
static struct nrf_rt *
start_local(const struct nrfwd_args *a, const struct nrfwd_base *b)
{
	struct nrf_rt_params params = {.workers = a->workers, .tp = b->tp};
	const struct nrf_cfg *cfg = b->cfg;
	struct nrf_rt *rt;
	unsigned int i;
	int err;

	(void)nrf_err_why_take(); /* nothing stale in the report below */
	rt = nrf_rt_create(&params, b->snap, &err);
	if (rt == NULL) {
		NRF_LOG(ERR, MOD, "cannot start: %s", start_why(err));
		return NULL;
	}
	if (nrf_rt_start(rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start worker threads");
		nrf_rt_free(rt);
		return NULL;
	}
	if (nrf_rt_dns_start(rt) != 0) /* peer names; without it they stay as resolved */
		NRF_LOG(WARN, MOD, "peer names will not be re-resolved: no resolver thread");
	NRF_LOG(INFO, MOD, "nrfwd %s:%u started: %u worker(s), transport %s, %u peer(s), "
		"local NRF %s", cfg->general.host, cfg->general.port, params.workers,
		nrfwd_tp_name(), cfg->n_peers,
		cfg->rt.local_nrf.present ? cfg->rt.local_nrf.address : "none");
	for (i = 0; i < cfg->rt.n_listen; i++) {
		struct nrf_tp_addr addr;
		char buf[80];

		if (nrf_rt_listen_addr(rt, i, &addr) == 0)
			NRF_LOG(INFO, MOD, "nrfwd listening on %s",
				nrf_tp_addr_format(&addr, buf, sizeof(buf)));
	}
	return rt;
}

static void
log_stopping(int sig, uint32_t drain_ms)
{
	NRF_LOG(INFO, MOD, "nrfwd stopping (%s): draining for up to %u ms", strsignal(sig),
		drain_ms);
}

/* runtime.timeouts.unreadyMs: /readyz answers 503 (nrf_api_drain() came
 * first) while the listeners still accept, so a load balancer polling it
 * stops sending before they close. A second SIGTERM/SIGINT cuts it short;
 * SIGUSR1 still reopens the access log; SIGHUP is not taken while
 * draining (it stays pending). */
static void
wait_unready(struct nrf_rt *rt, struct nrfwd_mp *mp)
{
	uint32_t ms = nrf_rt_unready_ms(rt);
	uint64_t end = nrf_now_ns() + (uint64_t)ms * 1000000ull;
	sigset_t stop;

	if (ms == 0)
		return;
	NRF_LOG(INFO, MOD, "not ready: still accepting for %u ms before the listeners close", ms);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGUSR1);
	for (;;) {
		uint64_t now = nrf_now_ns(), left;
		struct timespec ts;
		int sig;

		if (now >= end)
			return;
		left = NRF_MIN(end - now, 100000000ull);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		sig = sigtimedwait(&stop, NULL, &ts);
		if (sig == SIGUSR1) {
			(void)nrf_rt_alog_reopen();
			if (mp != NULL)
				nrfwd_mp_alog_reopen(mp);
		} else if (sig == SIGTERM || sig == SIGINT) {
			NRF_LOG(INFO, MOD, "second %s: closing the listeners now", strsignal(sig));
			return;
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Roles                                                                     */

/* One process: worker threads on kernel sockets, or the one worker of the
 * DPDK transport on its lcore; the REST API here. */
static int
run_single(const struct nrfwd_args *a, const struct nrfwd_base *b)
{
	struct nrf_api *api = NULL;
	struct nrf_rt *rt;
	int sig;

	rt = start_local(a, b);
	if (rt == NULL)
		return 1;
	/* Management listener: after the workers, before the first signal. */
	if (mgmt_start(&a->mgmt, rt, b->cfg, a->config, &api) != 0)
		goto fail_rt;
	/* The configuration source's watch (etcd; nothing for a file). */
	if (nrfwd_src_start(rt) != 0)
		goto fail_api;

	sig = wait_stop(&b->sigs, &(struct ctl_wait){rt, api, a->config, NULL}, 1000, tick_reclaim,
		rt);
	log_stopping(sig, nrf_rt_drain_ms(rt));
	/* /readyz says "draining" and configuration changes are refused until
	 * the workers are done; the API goes only after they are. */
	nrf_api_drain(api);
	nrfwd_src_stop();
	wait_unready(rt, NULL);
	nrf_rt_stop(rt, nrf_rt_drain_ms(rt));
	nrf_rt_join(rt);
	nrf_api_free(api);
	nrfwd_src_free();
	log_stats(rt);
	nrfwd_tp_report(rt);
	nrf_rt_free(rt);
	return 0;

fail_api:
	nrf_api_drain(api);
	nrfwd_src_stop();
	nrf_api_free(api);
	nrfwd_src_free();
fail_rt:
	nrf_rt_stop(rt, 0);
	nrf_rt_free(rt);
	return 1;
}

/* A worker process of a DPDK primary (--mp-worker K): a single-worker
 * nrfwd on its queue pair whose agent thread talks to the primary through
 * the shared memory; no REST API (the primary's). */
static int
run_worker(const struct nrfwd_args *a, const struct nrfwd_base *b)
{
	struct nrf_rt *rt;
	int sig;

	rt = start_local(a, b);
	if (rt == NULL)
		return 1;
	if (nrfwd_mp_worker_agent_start(rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start the worker's agent thread");
		goto fail_rt;
	}

	sig = wait_stop(&b->sigs, &(struct ctl_wait){rt, NULL, a->config, NULL}, 1000,
		tick_reclaim, rt);
	log_stopping(sig, nrf_rt_drain_ms(rt));
	nrf_rt_stop(rt, nrf_rt_drain_ms(rt));
	nrf_rt_join(rt);
	log_stats(rt);
	nrfwd_tp_report(rt);
	nrfwd_mp_worker_agent_stop();
	nrf_rt_free(rt);
	return 0;

fail_rt:
	nrf_rt_stop(rt, 0);
	nrf_rt_free(rt);
	return 1;
}

/* The primary's control-thread tick (every 100 ms): reap and restart
 * worker processes; free retired snapshots once a second. */
struct primary_tick {
	struct nrfwd_mp *mp;
	struct nrf_rt *rt;
};

static void
tick_primary(void *arg, unsigned int n)
{
	struct primary_tick *t = arg;

	nrfwd_mp_supervise(t->mp);
	if (n % 10 == 0)
		(void)nrf_rt_reclaim(t->rt);
}

/* The primary of one worker process per worker lcore (DPDK): the port, the
 * configuration and the REST API here, workers in processes of their own. */
static int
run_primary(const struct nrfwd_args *a, const struct nrfwd_base *b)
{
	struct nrf_rt_params params = {.workers = 0};
	struct nrfwd_mp_params mpp = {0};
	const struct nrf_cfg *cfg = b->cfg;
	struct primary_tick tick;
	struct nrf_api *api = NULL;
	struct nrfwd_mp *mp;
	struct nrf_rt *rt;
	static char exe[4096];
	ssize_t n;
	int sig, err;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	mpp.exe = exe;
	mpp.eal_argc = a->tp.eal_argc;
	mpp.eal_argv = a->tp.eal_argv;
	mpp.config_path = a->config;
	mpp.log_level = a->level_name;
	mp = n > 0 ? nrfwd_mp_primary_create(&mpp, cfg, cfg->generation) : NULL;
	if (mp == NULL) {
		nrf_rt_snap_free(b->snap);
		return 1;
	}
	params.remote = nrfwd_mp_remote_ops();
	params.remote_arg = mp;
	rt = nrf_rt_create(&params, b->snap, &err);
	if (rt == NULL) {
		NRF_LOG(ERR, MOD, "cannot start: %s", start_why(err));
		goto fail_mp;
	}
	if (nrf_rt_start(rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start worker threads");
		goto fail_rt;
	}
	if (nrf_rt_dns_start(rt) != 0)
		NRF_LOG(WARN, MOD, "peer names will not be re-resolved: no resolver thread");
	NRF_LOG(INFO, MOD, "nrfwd %s:%u started: %u worker process(es), transport %s, "
		"%u peer(s), local NRF %s", cfg->general.host, cfg->general.port,
		nrf_rt_workers(rt), nrfwd_tp_name(), cfg->n_peers,
		cfg->rt.local_nrf.present ? cfg->rt.local_nrf.address : "none");
	if (mgmt_start(&a->mgmt, rt, cfg, a->config, &api) != 0)
		goto fail_started;
	if (nrfwd_mp_start(mp) != 0) {
		NRF_LOG(ERR, MOD, "no worker process could be started");
		goto fail_workers;
	}
	if (nrfwd_src_start(rt) != 0)
		goto fail_src;

	tick.mp = mp;
	tick.rt = rt;
	sig = wait_stop(&b->sigs, &(struct ctl_wait){rt, api, a->config, mp}, 100, tick_primary,
		&tick);
	log_stopping(sig, nrf_rt_drain_ms(rt));
	nrf_api_drain(api);
	nrfwd_src_stop();
	wait_unready(rt, mp);
	nrfwd_mp_stop(mp, nrf_rt_drain_ms(rt));
	nrf_rt_stop(rt, nrf_rt_drain_ms(rt));
	nrf_rt_join(rt);
	nrf_api_free(api);
	nrfwd_src_free();
	log_stats(rt);
	log_workers(rt);
	nrf_rt_free(rt);
	nrfwd_mp_free(mp);
	return 0;

fail_src:
	nrf_api_drain(api);
	nrfwd_src_stop();
	nrf_api_free(api);
	nrfwd_src_free();
	nrfwd_mp_stop(mp, 0);
	goto fail_started;
fail_workers:
	nrf_api_free(api);
	nrfwd_mp_stop(mp, 0);
fail_started:
	nrf_rt_stop(rt, 0);
fail_rt:
	nrf_rt_free(rt);
fail_mp:
	nrfwd_mp_free(mp);
	return 1;
}

int
main(int argc, char **argv)
{
	struct nrfwd_args a;
	struct nrfwd_base b;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	nrf_log_set_level(a.level);
	if (a.mp_worker >= 0) {
		char tag[16];

		snprintf(tag, sizeof(tag), "w%d", a.mp_worker);
		nrf_log_set_tag(tag);
	}
	nrfwd_sd_init(a.mp_worker < 0);
	rc = prepare(&a, &b);
	if (rc != 0)
		return rc;
	if (a.mp_worker >= 0)
		rc = run_worker(&a, &b);
	else if (nrfwd_tp_primary())
		rc = run_primary(&a, &b);
	else
		rc = run_single(&a, &b);
	nrfwd_tp_stop();
	if (rc == 0)
		NRF_LOG(INFO, MOD, "nrfwd stopped");
	return rc;
}
