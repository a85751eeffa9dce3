/* SPDX-License-Identifier: BSD-3-Clause */
/* Process set-up helpers (nrf_sys.h): once in nrfwd and nrfstub each before. */
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
