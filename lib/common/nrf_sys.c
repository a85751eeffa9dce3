/* SPDX-License-Identifier: BSD-3-Clause */
/* Process set-up helpers (nrf_sys.h): once in nrfwd and nrfstub each before;
 * file names. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "nrf_err.h"
#include "nrf_sys.h"

int
nrf_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return NRF_EIO;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : NRF_EIO;
}

const char *
nrf_path_split(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, cap, ".");
	else if (slash == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
	return slash != NULL ? slash + 1 : path;
}
