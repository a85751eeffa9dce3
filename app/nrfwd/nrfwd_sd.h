/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_SD_H
#define NRFWD_SD_H

/*
 * nrfwd as a service: the systemd notification protocol (sd_notify(3):
 * READY, RELOADING, STOPPING, STATUS, WATCHDOG), the watchdog fed from the
 * data path's liveness, the reload on SIGHUP, and journal-style log lines
 * when stderr is the journal. Spoken directly over the datagram socket
 * systemd names in $NOTIFY_SOCKET, no libsystemd (docs/decisions/
 * 0024-service-notify-without-libsystemd.md). Without $NOTIFY_SOCKET every
 * notification is a no-op, so nrfwd behaves the same under a shell, a
 * container runtime or the test harness.
 *
 * Threads: every function is for nrfwd's main thread (the one that waits
 * for signals); none blocks beyond one non-blocking sendto().
 */

#include <stdbool.h>

struct nrf_api;
struct nrf_rt;

/*
 * Read the service manager's environment once and take it out of the
 * environment ($NOTIFY_SOCKET, $WATCHDOG_USEC, $WATCHDOG_PID), so the worker
 * processes nrfwd starts never speak for the service. With
 * $JOURNAL_STREAM naming stderr, log lines get syslog priority prefixes
 * (nrf_log_set_journal()). @p main_process false (a DPDK worker process):
 * nothing is ever sent. Call first in main(), before any thread starts.
 */
void nrfwd_sd_init(bool main_process);

/* True when a notification socket was given (tests, logs). */
bool nrfwd_sd_enabled(void);

/* The service is up (listeners bound, workers started): READY=1 with a
 * STATUS line and MAINPID. */
void nrfwd_sd_ready(const struct nrf_rt *rt);

/*
 * Called at every wake-up of the main loop (at least once a second): sends
 * WATCHDOG=1 every half watchdog interval, but only while every worker is
 * running and its loop iterated within the liveness bound
 * (NRFWD_SD_STALE_MS, or half the watchdog interval when shorter, never
 * under 2 s). A stuck
 * or dead worker stops the pings, and systemd acts on the unit's
 * WatchdogSec= (restart, with Restart=on-failure). Logs once when liveness
 * is lost and once when it is back.
 */
void nrfwd_sd_tick(const struct nrf_rt *rt);

/*
 * SIGHUP: RELOADING=1, the configuration file reloaded through
 * nrf_api_reload_file() (the REST API's validate, compile, publish path;
 * all or nothing), then READY=1 with a STATUS line naming the generation
 * in use or why the reload was refused. @p api may be NULL (no management
 * listener). In a worker process (nrfwd_sd_init(false)) SIGHUP is logged
 * and ignored: its primary owns the configuration.
 */
void nrfwd_sd_reload(struct nrf_api *api, struct nrf_rt *rt, const char *config_path);

/* SIGTERM/SIGINT: STOPPING=1 (the drain begins). */
void nrfwd_sd_stopping(void);

/* Liveness bound of a worker's loop (an idle worker iterates every second). */
#define NRFWD_SD_STALE_MS 5000u

#endif /* NRFWD_SD_H */
