/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd: the forwarding data path of an NRF.
 *
 *   nrfwd [EAL args --] --config FILE [--workers N] [--log-level L]
 *
 * The control thread (this one) loads and validates the configuration,
 * builds the first snapshot, binds the listeners, starts the workers and
 * then only waits for signals: SIGTERM/SIGINT drain and stop (exit 0).
 * Anything before a "--" is for the DPDK EAL of a later transport; the
 * kernel transport ignores it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_rt.h"
#include "nrf_tp.h"

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
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n",
		NRF_RT_MAX_WORKERS);
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"workers", required_argument, NULL, 'w'},
		{"log-level", required_argument, NULL, 'l'},
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
	sigset_t sigs;
	uint32_t drain_ms;
	int i, c, err, sig = 0;

	/* Everything up to a "--" is EAL arguments (DPDK transport, later):
	 * drop them, keep the program name. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			if (i > 1)
				fprintf(stderr, "nrfwd: kernel transport: ignoring %d EAL "
					"argument(s)\n", i - 1);
			argv[i] = argv[0];
			argv += i;
			argc -= i;
			break;
		}
	}
	while ((c = getopt_long(argc, argv, "c:w:l:hV", opts, NULL)) != -1) {
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
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("nrfwd 0.1.0 (transport: %s)\n", nrf_tp_kern_ops()->name);
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

	cfg = nrf_cfg_load_file(config, 1, &problems, &err);
	if (cfg == NULL) {
		size_t k;

		NRF_LOG(ERR, MOD, "configuration %s rejected (%s): %zu problem(s)", config,
			nrf_strerror(err), problems.n);
		for (k = 0; k < problems.n; k++)
			fprintf(stderr, "%s: %s\n",
				problems.v[k].pointer[0] != '\0' ? problems.v[k].pointer : "(root)",
				problems.v[k].reason);
		nrf_cfg_problems_fini(&problems);
		return 1;
	}
	nrf_cfg_problems_fini(&problems);
	raise_nofile();
	drain_ms = cfg->rt.request_ms < DRAIN_MAX_MS ? cfg->rt.request_ms : DRAIN_MAX_MS;

	/* Signals are handled here only; workers inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	snap = nrf_rt_snap_create(cfg, &err);
	if (snap == NULL) {
		NRF_LOG(ERR, MOD, "cannot build the forwarding data from %s: %s", config,
			nrf_strerror(err));
		return 1;
	}
	cfg = (struct nrf_cfg *)nrf_rt_snap_cfg(snap);
	rt = nrf_rt_create(&params, snap, &err);
	if (rt == NULL) {
		NRF_LOG(ERR, MOD, "cannot start: %s", nrf_strerror(err));
		return 1;
	}
	if (nrf_rt_start(rt) != 0) {
		NRF_LOG(ERR, MOD, "cannot start worker threads");
		nrf_rt_free(rt);
		return 1;
	}
	NRF_LOG(INFO, MOD, "nrfwd %s:%u started: %u worker(s), transport %s, %u peer(s), "
		"local NRF %s", cfg->general.host, cfg->general.port, params.workers,
		nrf_tp_kern_ops()->name, cfg->n_peers,
		cfg->rt.local_nrf.present ? cfg->rt.local_nrf.address : "none");
	for (i = 0; i < cfg->rt.n_listen; i++) {
		struct nrf_tp_addr a;
		char buf[80];

		if (nrf_rt_listen_addr(rt, (unsigned int)i, &a) == 0)
			NRF_LOG(INFO, MOD, "nrfwd listening on %s", nrf_tp_addr_format(&a, buf, sizeof(buf)));
	}

	for (;;) {
		struct timespec ts = {1, 0};

		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig < 0) {
			if (errno != EAGAIN && errno != EINTR)
				NRF_LOG(ERR, MOD, "sigtimedwait: %s", strerror(errno));
			nrf_rt_reclaim(rt);
			continue;
		}
		if (sig == SIGHUP) {
			NRF_LOG(INFO, MOD, "SIGHUP ignored (use the REST API to reconfigure)");
			continue;
		}
		break;
	}
	NRF_LOG(INFO, MOD, "nrfwd stopping (%s): draining for up to %u ms", strsignal(sig),
		drain_ms);
	nrf_rt_stop(rt, drain_ms);
	nrf_rt_join(rt);
	log_stats(rt);
	nrf_rt_free(rt);
	NRF_LOG(INFO, MOD, "nrfwd stopped");
	return 0;
}
