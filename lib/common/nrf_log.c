/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "nrf_common.h"
#include "nrf_log.h"

static volatile int log_level = NRF_LOG_INFO;
static char log_tag[24];
static bool log_journal;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void
nrf_log_set_level(enum nrf_log_level level)
{
	log_level = level;
}

void
nrf_log_set_tag(const char *tag)
{
	snprintf(log_tag, sizeof(log_tag), "%s", tag != NULL ? tag : "");
}

void
nrf_log_set_journal(bool on)
{
	log_journal = on;
}

enum nrf_log_level
nrf_log_get_level(void)
{
	return (enum nrf_log_level)log_level;
}

static void __attribute__((format(printf, 3, 0)))
vlog(enum nrf_log_level level, const char *module, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	/* sd-daemon(3) priority prefixes: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
	static const char prio[] = {'3', '4', '6', '7'};

	if (log_journal) {
		n = snprintf(line, sizeof(line), "<%c>%s %s%s%s: ", prio[level],
			level_names[level], log_tag, log_tag[0] != '\0' ? "/" : "", module);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s%s%s: ",
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			tm.tm_sec, ts.tv_nsec / 1000000, level_names[level], log_tag,
			log_tag[0] != '\0' ? "/" : "", module);
	}
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One fputs per line so lines from several threads never interleave. */
	fprintf(stderr, "%s\n", line);
}

void
nrf_log(enum nrf_log_level level, const char *module, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level)
		return;
	va_start(ap, fmt);
	vlog(level, module, fmt, ap);
	va_end(ap);
}

void
nrf_log_rl(struct nrf_log_rl *rl, enum nrf_log_level level, const char *module,
	const char *fmt, ...)
{
	uint64_t now, start;
	uint32_t suppressed;
	va_list ap;

	if ((int)level > log_level)
		return;
	/* Relaxed atomics: several workers may share one call site. The budget
	 * is approximate by design; what matters is no torn state and no lock. */
	now = nrf_now_ns();
	start = __atomic_load_n(&rl->window_start_ns, __ATOMIC_RELAXED);
	if (now - start >= 1000000000ull &&
		__atomic_compare_exchange_n(&rl->window_start_ns, &start, now, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		suppressed = __atomic_exchange_n(&rl->suppressed, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&rl->in_window, 0, __ATOMIC_RELAXED);
		if (suppressed > 0)
			nrf_log(level, module, "%u similar messages suppressed", suppressed);
	}
	if (__atomic_fetch_add(&rl->in_window, 1, __ATOMIC_RELAXED) >= NRF_LOG_RL_BURST) {
		__atomic_fetch_add(&rl->suppressed, 1, __ATOMIC_RELAXED);
		return;
	}
	va_start(ap, fmt);
	vlog(level, module, fmt, ap);
	va_end(ap);
}
