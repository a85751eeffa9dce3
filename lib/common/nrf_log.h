/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_LOG_H
#define NRF_LOG_H

/**
 * @file
 * Logging: one line per event on stderr, "<time> <level> <module>: <text>".
 *
 * Lifecycle events and errors outside the data path use NRF_LOG().
 * The data path uses NRF_LOG_RL(), which keeps a per-call-site budget
 * (NRF_LOG_RL_BURST lines per second, then one "suppressed N" summary), so a
 * flood of bad requests cannot turn into a flood of log lines. Any thread.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nrf_log_level {
	NRF_LOG_ERR = 0,
	NRF_LOG_WARN = 1,
	NRF_LOG_INFO = 2,
	NRF_LOG_DEBUG = 3,
};

/** Lines allowed per call site and second by NRF_LOG_RL(). */
#define NRF_LOG_RL_BURST 5

/** Set the most verbose level printed (default NRF_LOG_INFO). Any thread. */
void nrf_log_set_level(enum nrf_log_level level);

/** Current level. */
enum nrf_log_level nrf_log_get_level(void);

/**
 * A tag put before every module name ("w1" gives "INFO w1/rt: ..."), so the
 * lines of several processes sharing one stderr can be told apart; NULL or
 * "": none. At most 23 bytes are kept. Call before other threads log.
 */
void nrf_log_set_tag(const char *tag);

/**
 * Journal mode (stderr is a journald stream, systemd's JOURNAL_STREAM):
 * every line starts with its syslog priority in sd-daemon(3) form ("<3>"
 * error, "<4>" warning, "<6>" info, "<7>" debug) so journalctl filters by
 * priority, and carries no timestamp of its own (the journal stamps it).
 * Default off. Call before other threads log.
 */
void nrf_log_set_journal(bool on);

/** Print one line when @p level is enabled. */
void nrf_log(enum nrf_log_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Per-call-site rate limiter state (one static instance per site). */
struct nrf_log_rl {
	uint64_t window_start_ns;
	uint32_t in_window;
	uint32_t suppressed;
};

/**
 * Rate-limited nrf_log(). @p rl is the call site's state; lock-free and
 * approximate when several threads share one site (counts may race, lines
 * are never torn).
 */
void nrf_log_rl(struct nrf_log_rl *rl, enum nrf_log_level level,
	const char *module, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define NRF_LOG(level, module, ...) nrf_log(NRF_LOG_##level, module, __VA_ARGS__)
#define NRF_LOG_RL(level, module, ...)                                         \
	do {                                                                   \
		static struct nrf_log_rl nrf_rl_site_;                         \
		nrf_log_rl(&nrf_rl_site_, NRF_LOG_##level, module, __VA_ARGS__); \
	} while (0)

#ifdef __cplusplus
}
#endif
#endif /* NRF_LOG_H */
