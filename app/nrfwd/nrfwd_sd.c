/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The systemd notification protocol, spoken directly (decision 0024): one
 * AF_UNIX datagram per notification, newline-separated VAR=value
 * assignments, to the path in $NOTIFY_SOCKET ('@' first: an abstract
 * socket). That is the whole of what nrfwd needs of libsystemd, and it
 * keeps a network daemon's address space free of libsystemd's own
 * dependencies (compression libraries among them).
 *
 * Why the watchdog looks at worker loops and not at this thread: this
 * thread only waits for signals, so it would keep pinging while every
 * worker is stuck. A worker stamps nrf_now_ns() at every loop iteration
 * (nrf_rt_worker_info.loop_ns, also for DPDK worker processes through
 * their reports), and an idle worker iterates at least once a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "nrf_api.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_rt.h"
#include "nrfwd_sd.h"

#define MOD "nrfwd"

static struct {
	bool main_process;
	int fd;                    /* -1: no notification socket */
	struct sockaddr_un addr;
	socklen_t addr_len;
	uint64_t wd_usec;          /* 0: no watchdog */
	uint64_t wd_last_ns;       /* last WATCHDOG=1 sent */
	bool wd_stale;             /* liveness lost (logged once) */
} sd = {.fd = -1};

/* $NOTIFY_SOCKET into sd.addr: "/path" or "@abstract". */
static int
sd_addr(const char *e)
{
	size_t n = strlen(e);

	if (n == 0 || n >= sizeof(sd.addr.sun_path) || (e[0] != '/' && e[0] != '@'))
		return -1;
	memset(&sd.addr, 0, sizeof(sd.addr));
	sd.addr.sun_family = AF_UNIX;
	memcpy(sd.addr.sun_path, e, n);
	if (e[0] == '@')
		sd.addr.sun_path[0] = '\0';
	sd.addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
		(e[0] == '/' ? 1 : 0));
	return 0;
}

/* stderr is the journal when $JOURNAL_STREAM is its "device:inode". */
static bool
stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void
nrfwd_sd_init(bool main_process)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	const char *wu = getenv("WATCHDOG_USEC");
	const char *wp = getenv("WATCHDOG_PID");

	sd.main_process = main_process;
	if (stderr_is_journal())
		nrf_log_set_journal(true);
	if (main_process && ns != NULL && sd_addr(ns) == 0) {
		sd.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (sd.fd < 0)
			NRF_LOG(WARN, MOD, "notification socket: %s", strerror(errno));
	} else if (main_process && ns != NULL) {
		NRF_LOG(WARN, MOD, "NOTIFY_SOCKET \"%s\" not supported (a path or @name is)", ns);
	}
	if (sd.fd >= 0 && wu != NULL) {
		char *end;
		unsigned long long v = strtoull(wu, &end, 10);
		bool ours = wp == NULL || strtol(wp, NULL, 10) == (long)getpid();

		if (*end == '\0' && v > 0 && ours)
			sd.wd_usec = v;
	}
	/* Children (DPDK worker processes, anything exec'd) must not speak
	 * for the service. */
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

bool
nrfwd_sd_enabled(void)
{
	return sd.fd >= 0;
}

static void __attribute__((format(printf, 1, 2)))
sd_send(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	if (sd.fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	if (sendto(sd.fd, msg, (size_t)n, MSG_NOSIGNAL, (const struct sockaddr *)&sd.addr,
			sd.addr_len) < 0)
		NRF_LOG_RL(WARN, MOD, "notification to the service manager: %s", strerror(errno));
}

static uint64_t
mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void
nrfwd_sd_ready(const struct nrf_rt *rt)
{
	sd_send("READY=1\nMAINPID=%ld\nSTATUS=serving, configuration generation %" PRIu64
		", %u worker(s)", (long)getpid(), nrf_rt_generation(rt), nrf_rt_workers(rt));
	sd.wd_last_ns = nrf_now_ns();
	if (sd.fd >= 0)
		NRF_LOG(INFO, MOD, "service manager notified: ready%s", sd.wd_usec > 0 ?
			", watchdog on" : "");
}

/* Every worker running, its loop within the bound. The first that is not
 * goes into @p who/@p age_ms. */
static bool
workers_alive(const struct nrf_rt *rt, uint64_t bound_ns, unsigned int *who,
	uint64_t *age_ms)
{
	unsigned int i, n = nrf_rt_workers(rt);
	uint64_t now = nrf_now_ns();

	for (i = 0; i < n; i++) {
		struct nrf_rt_worker_info wi;

		if (nrf_rt_worker_get(rt, i, &wi) != 0 || !wi.running) {
			*who = i;
			*age_ms = UINT64_MAX;
			return false;
		}
		if (wi.loop_ns < now && now - wi.loop_ns > bound_ns) {
			*who = i;
			*age_ms = (now - wi.loop_ns) / 1000000u;
			return false;
		}
	}
	return true;
}

void
nrfwd_sd_tick(const struct nrf_rt *rt)
{
	uint64_t now = nrf_now_ns(), bound, age = 0;
	unsigned int who = 0;

	if (sd.fd < 0 || sd.wd_usec == 0)
		return;
	/* Ping twice per interval; judge liveness on half an interval at most
	 * (but 2 s at least) so a stall is caught before systemd's own
	 * deadline. */
	if (now - sd.wd_last_ns < sd.wd_usec * 1000u / 2)
		return;
	bound = NRF_MIN((uint64_t)NRFWD_SD_STALE_MS * 1000000u, sd.wd_usec * 1000u / 2);
	/* never below two idle iterations: an idle worker loops once a second */
	bound = NRF_MAX(bound, 2000000000ull);
	if (!workers_alive(rt, bound, &who, &age)) {
		if (!sd.wd_stale) {
			if (age == UINT64_MAX)
				NRF_LOG(ERR, MOD, "watchdog: worker %u is not running; not telling "
					"the service manager we are alive", who);
			else
				NRF_LOG(ERR, MOD, "watchdog: worker %u has not looped for %" PRIu64
					" ms; not telling the service manager we are alive", who, age);
			sd_send("STATUS=worker %u not alive: watchdog pings withheld", who);
		}
		sd.wd_stale = true;
		return;
	}
	if (sd.wd_stale) {
		NRF_LOG(INFO, MOD, "watchdog: every worker loops again");
		sd_send("STATUS=serving, configuration generation %" PRIu64,
			nrf_rt_generation(rt));
		sd.wd_stale = false;
	}
	sd_send("WATCHDOG=1");
	sd.wd_last_ns = now;
}

void
nrfwd_sd_reload(struct nrf_api *api, struct nrf_rt *rt, const char *config_path)
{
	char why[400];
	uint64_t gen = 0;
	int rc;

	if (!sd.main_process) {
		NRF_LOG(INFO, MOD, "SIGHUP ignored in a worker process (send it to the primary)");
		return;
	}
	/* MONOTONIC_USEC: what systemd 253+ expects with RELOADING=1. */
	sd_send("RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading %s", mono_usec(),
		config_path);
	rc = nrf_api_reload_file(api, rt, config_path, &gen, why, sizeof(why));
	if (rc == 0)
		sd_send("READY=1\nSTATUS=serving, configuration generation %" PRIu64, gen);
	else
		sd_send("READY=1\nSTATUS=serving generation %" PRIu64 "; reload refused: %.300s",
			gen, why);
}

void
nrfwd_sd_stopping(void)
{
	sd_send("STOPPING=1\nSTATUS=draining");
}
