/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd: the forwarding data path of an NRF.
 *
 *   nrfwd [EAL args --] --config FILE [--workers N] [--log-level L]
 *         [--management ADDR:PORT] [--api-token-file FILE]
 *
 * The control thread (this one) loads and validates the configuration,
 * builds the first snapshot, binds the listeners, starts the workers and
 * then only waits for signals: SIGTERM/SIGINT drain and stop (exit 0).
 * Anything before a "--" is for the DPDK EAL (runtime.transport "dpdk",
 * nrfwd_tp.c); the kernel transport ignores it.
 *
 * On DPDK with two or more worker lcores this process becomes the primary
 * of one worker process per worker lcore (nrfwd_mp.h): it keeps the port,
 * the REST API and the configuration, and runs no worker itself; each
 * worker is this program again, started with --mp-worker K.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "nrf_api.h"
#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_rt.h"
#include "nrf_tp.h"
#include "nrfwd_mp.h"
#include "nrfwd_tp.h"

#define MOD "nrfwd"
#define DRAIN_MAX_MS 5000u

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nrfwd [EAL-ARGS --] --config FILE [--workers N] [--log-level LEVEL]\n"
		"  -c, --config FILE      configuration document (JSON, SPEC section 5)\n"
		"  -w, --workers N        worker threads, 1..%d (default 1)\n"
		"  -l, --log-level LEVEL  error, warn, info (default) or debug\n"
		"  -M, --management ADDR:PORT  management listener (REST API, metrics,\n"
		"                         health) instead of runtime.management; port 0\n"
		"                         picks a free port (logged)\n"
		"  -T, --api-token-file FILE  bearer token required for PUT/PATCH\n"
		"      --pci-nic          DPDK: allow EAL arguments without --no-pci / -a\n"
		"      --dpdk-processes   DPDK: run the worker in a process of its own even\n"
		"                         with one worker lcore (as with two or more)\n"
		"      --mp-worker K      (internal) run as worker process K of a primary\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n",
		NRF_RT_MAX_WORKERS);
	nrfwd_tp_usage(f);
}

static int
parse_level(const char *s, enum nrf_log_level *out)
{
	static const struct {
		const char *name;
		enum nrf_log_level level;
	} names[] = {
		{"error", NRF_LOG_ERR}, {"err", NRF_LOG_ERR}, {"warn", NRF_LOG_WARN},
		{"warning", NRF_LOG_WARN}, {"info", NRF_LOG_INFO}, {"debug", NRF_LOG_DEBUG},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].level;
			return 0;
		}
	}
	return -1;
}

/* maxConnections plus peer connections need more than the usual 1024. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ------------------------------------------------------------------------ */
/* Management listener (lib/api): REST configuration API, metrics, health.   */

struct mgmt_opts {
	const char *listen;      /* --management ADDR:PORT, NULL: runtime.management */
	const char *token_file;  /* --api-token-file */
};

/* "ADDR:PORT" or "[V6]:PORT" into @p addr (of @p cap bytes) and @p port. */
static int
mgmt_parse(const char *s, char *addr, size_t cap, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	size_t n;
	char *end;
	long v;

	if (colon == NULL)
		return -1;
	v = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || v < 0 || v > 65535)
		return -1;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= cap)
		return -1;
	memcpy(addr, s, n);
	addr[n] = '\0';
	*port = (uint16_t)v;
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
		if (mgmt_parse(o->listen, addr, sizeof(addr), &ap.port) != 0) {
			NRF_LOG(ERR, MOD, "--management: expected ADDR:PORT, got \"%s\"", o->listen);
			return -1;
		}
		ap.address = addr;
	} else {
		if (cfg->rt.mgmt_port == 0) {
			NRF_LOG(INFO, MOD, "management listener disabled (runtime.management.port 0)");
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
	*out = nrf_api_create(&ap, rt, &err);
	if (token != NULL) {
		memset(token, 0, strlen(token));
		free(token);
	}
	if (*out == NULL) {
		NRF_LOG(ERR, MOD, "cannot start the management listener: %s", nrf_strerror(err));
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"workers", required_argument, NULL, 'w'},
		{"log-level", required_argument, NULL, 'l'},
		{"management", required_argument, NULL, 'M'},
		{"api-token-file", required_argument, NULL, 'T'},
		{"pci-nic", no_argument, NULL, 1000},
		{"dpdk-processes", no_argument, NULL, 1001},
		{"mp-worker", required_argument, NULL, 1002},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct nrf_cfg_problems problems = {0};
	struct nrf_rt_params params = {.workers = 1, .tp = NULL};
	const char *config = NULL;
	enum nrf_log_level level = NRF_LOG_INFO;
	struct nrf_rt_snap *snap;
	struct nrf_cfg *cfg;
	struct nrf_rt *rt;
	struct mgmt_opts mopts = {NULL, NULL};
	struct nrf_api *api = NULL;
	struct nrfwd_tp_opts topts = {.eal_argc = 1, .eal_argv = argv,
		.role = NRF_TP_DPDK_AUTO};
	struct nrfwd_mp *mp = NULL;
	const char *level_name = NULL;
	int mp_worker = -1;
	bool primary = false;
	sigset_t sigs;
	uint32_t drain_ms;
	int i, c, err, sig = 0;

	/* Everything up to a "--" is EAL arguments (DPDK transport): kept for
	 * nrfwd_tp_start(); our own options follow, after the program name. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			topts.eal_argc = i;
			argv[i] = argv[0];
			argv += i;
			argc -= i;
			break;
		}
	}
	while ((c = getopt_long(argc, argv, "c:w:l:M:T:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'w': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 1 || v > NRF_RT_MAX_WORKERS) {
				fprintf(stderr, "nrfwd: --workers: expected 1..%d, got \"%s\"\n",
					NRF_RT_MAX_WORKERS, optarg);
				return 2;
			}
			params.workers = (unsigned int)v;
			break;
		}
		case 'l':
			if (parse_level(optarg, &level) != 0) {
				fprintf(stderr, "nrfwd: --log-level: unknown level \"%s\"\n", optarg);
				return 2;
			}
			level_name = optarg;
			break;
		case 'M':
			mopts.listen = optarg;
			break;
		case 'T':
			mopts.token_file = optarg;
			break;
		case 1000:
			topts.pci_nic = true;
			break;
		case 1001:
			topts.role = NRF_TP_DPDK_PRIMARY;
			break;
		case 1002: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 0 || v >= NRF_TP_DPDK_MAX_QUEUES) {
				fprintf(stderr, "nrfwd: --mp-worker: expected 0..%d, got \"%s\"\n",
					NRF_TP_DPDK_MAX_QUEUES - 1, optarg);
				return 2;
			}
			mp_worker = (int)v;
			topts.role = NRF_TP_DPDK_SECONDARY;
			topts.queue = (unsigned int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("nrfwd 0.1.0 (transports: kernel%s)\n",
				nrfwd_tp_dpdk_built() ? ", dpdk" : "");
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
	if (config == NULL) {
		fprintf(stderr, "nrfwd: --config is required\n");
		usage(stderr);
		return 2;
	}
	nrf_log_set_level(level);
	if (mp_worker >= 0) {
		char tag[16];

		snprintf(tag, sizeof(tag), "w%d", mp_worker);
		nrf_log_set_tag(tag);
	}

	cfg = nrf_cfg_load_file(config, 1, &problems, &err);
	if (cfg == NULL) {
		size_t k;

		NRF_LOG(ERR, MOD, "configuration %s rejected (%s): %zu problem(s)", config,
			nrf_strerror(err), problems.n);
		/* One log line per problem (timestamp, level): journald and
		 * log collectors keep each one whole. The root is "/". */
		for (k = 0; k < problems.n; k++)
			NRF_LOG(ERR, MOD, "configuration %s: %s: %s", config,
				problems.v[k].pointer[0] != '\0' ? problems.v[k].pointer : "/",
				problems.v[k].reason);
		nrf_cfg_problems_fini(&problems);
		return 1;
	}
	nrf_cfg_problems_fini(&problems);
	/* Transport: kernel sockets, or the DPDK port (EAL start-up problems
	 * end here with one line and a non-zero status). */
	c = nrfwd_tp_start(cfg, &topts, params.workers, &params.tp);
	if (c != 0) {
		nrf_cfg_free(cfg);
		return c;
	}
	raise_nofile();
	drain_ms = cfg->rt.request_ms < DRAIN_MAX_MS ? cfg->rt.request_ms : DRAIN_MAX_MS;
	primary = nrfwd_tp_primary();
	if (mp_worker >= 0 && (cfg->rt.transport != NRF_TRANSPORT_DPDK ||
		nrfwd_mp_worker_attach((unsigned int)mp_worker, &cfg) != 0)) {
		if (cfg->rt.transport != NRF_TRANSPORT_DPDK)
			NRF_LOG(ERR, MOD, "--mp-worker needs runtime.transport \"dpdk\"");
		nrf_cfg_free(cfg);
		nrfwd_tp_stop();
		return 1;
	}

	/* Signals are handled here only; workers inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	snap = nrf_rt_snap_create(cfg, &err);
	if (snap == NULL) {
		NRF_LOG(ERR, MOD, "cannot build the forwarding data from %s: %s", config,
			nrf_strerror(err));
		nrfwd_tp_stop();
		return 1;
	}
	cfg = (struct nrf_cfg *)nrf_rt_snap_cfg(snap);
	if (primary) {
		struct nrfwd_mp_params mpp = {0};
		static char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		mpp.exe = exe;
		mpp.eal_argc = topts.eal_argc;
		mpp.eal_argv = topts.eal_argv;
		mpp.config_path = config;
		mpp.log_level = level_name;
		mp = n > 0 ? nrfwd_mp_primary_create(&mpp, cfg, cfg->generation) : NULL;
		if (mp == NULL) {
			nrf_rt_snap_free(snap);
			nrfwd_tp_stop();
			return 1;
		}
		params.workers = 0;
		params.tp = NULL;
		params.remote = nrfwd_mp_remote_ops();
		params.remote_arg = mp;
	}
	rt = nrf_rt_create(&params, snap, &err);
	if (rt == NULL) {
		NRF_LOG(ERR, MOD, "cannot start: %s", nrf_strerror(err));
		nrfwd_tp_stop();
		return 1;
	}
	if (nrf_rt_start(rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start worker threads");
		nrf_rt_free(rt);
		nrfwd_tp_stop();
		return 1;
	}
	NRF_LOG(INFO, MOD, "nrfwd %s:%u started: %u worker%s, transport %s, %u peer(s), "
		"local NRF %s", cfg->general.host, cfg->general.port,
		primary ? nrf_rt_workers(rt) : params.workers,
		primary ? " process(es)" : "(s)", nrfwd_tp_name(), cfg->n_peers,
		cfg->rt.local_nrf.present ? cfg->rt.local_nrf.address : "none");
	for (i = 0; !primary && i < cfg->rt.n_listen; i++) {
		struct nrf_tp_addr a;
		char buf[80];

		if (nrf_rt_listen_addr(rt, (unsigned int)i, &a) == 0)
			NRF_LOG(INFO, MOD, "nrfwd listening on %s", nrf_tp_addr_format(&a, buf, sizeof(buf)));
	}
	/* Management listener: after the workers, before the first signal;
	 * worker processes leave it to their primary. */
	if (mp_worker < 0 && mgmt_start(&mopts, rt, cfg, config, &api) != 0) {
		nrf_rt_stop(rt, 0);
		nrf_rt_free(rt);
		nrfwd_mp_free(mp);
		nrfwd_tp_stop();
		return 1;
	}
	if ((primary && nrfwd_mp_start(mp) != 0) ||
		(mp_worker >= 0 && nrfwd_mp_worker_agent_start(rt) != 0)) {
		NRF_LOG(ERR, MOD, primary ? "no worker process could be started" :
			"cannot start the worker's agent thread");
		nrf_api_free(api);
		if (primary)
			nrfwd_mp_stop(mp, 0);
		nrf_rt_stop(rt, 0);
		nrf_rt_free(rt);
		nrfwd_mp_free(mp);
		nrfwd_tp_stop();
		return 1;
	}

	for (unsigned int tick = 0;; tick++) {
		struct timespec ts = {primary ? 0 : 1, primary ? 100000000 : 0};

		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig < 0) {
			if (errno != EAGAIN && errno != EINTR)
				NRF_LOG(ERR, MOD, "sigtimedwait: %s", strerror(errno));
			if (primary)
				nrfwd_mp_supervise(mp);
			if (!primary || tick % 10 == 0)
				nrf_rt_reclaim(rt);
			continue;
		}
		if (sig == SIGHUP) {
			NRF_LOG(INFO, MOD, "SIGHUP ignored (use the REST API to reconfigure)");
			continue;
		}
		if (sig == SIGUSR1) {
			(void)nrf_rt_alog_reopen(); /* logrotate (docs/access-log.md) */
			continue;
		}
		break;
	}
	NRF_LOG(INFO, MOD, "nrfwd stopping (%s): draining for up to %u ms", strsignal(sig),
		drain_ms);
	/* /readyz says "draining" and configuration changes are refused until
	 * the workers are done; the API goes only after they are. */
	nrf_api_drain(api);
	if (primary)
		nrfwd_mp_stop(mp, drain_ms);
	nrf_rt_stop(rt, drain_ms);
	nrf_rt_join(rt);
	nrf_api_free(api);
	log_stats(rt);
	if (primary)
		log_workers(rt);
	else
		nrfwd_tp_report(rt);
	if (mp_worker >= 0)
		nrfwd_mp_worker_agent_stop();
	nrf_rt_free(rt);
	nrfwd_mp_free(mp);
	nrfwd_tp_stop();
	NRF_LOG(INFO, MOD, "nrfwd stopped");
	return 0;
}
