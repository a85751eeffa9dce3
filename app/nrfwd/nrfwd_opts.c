/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks of nrfwd's own options (nrfwd_opts.h), shared with
 * `nrfwd-ctl check`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_rt.h"
#include "nrfwd_opts.h"

int
nrfwd_eal_split(int *argc, char ***argv)
{
	for (int i = 1; i < *argc; i++) {
		if (strcmp((*argv)[i], "--") == 0) {
			(*argv)[i] = (*argv)[0];
			*argv += i;
			*argc -= i;
			return i;
		}
	}
	return 0;
}

int
nrfwd_opt_workers(const char *who, const char *arg, unsigned int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end != '\0' || v < 1 || v > NRF_RT_MAX_WORKERS) {
		fprintf(stderr, "%s: --workers: expected 1..%d, got \"%s\"\n", who,
			NRF_RT_MAX_WORKERS, arg);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

int
nrfwd_opt_level(const char *s, enum nrf_log_level *out)
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
