/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL option table of DPDK 22.11 (nrf_dp.h). Three copies of this
 * knowledge used to live in nrfwd (the safety scan before rte_eal_init(),
 * the check of nrfwd's command line, the options a worker process takes
 * over) and they had drifted apart: one thought "-L" takes a value (DPDK
 * 22.11 has no -L at all), another that "--syslog" takes its value only
 * attached (22.11 requires one, "--syslog daemon" included). Checked
 * against Debian's librte_eal.so.23: its short option string is
 * "a:b:c:s:d:hl:S:m:n:r:v", "--syslog" without a value is refused,
 * "--syslog daemon" consumes "daemon".
 *
 * Pure C on purpose: nrfwd checks its command line before the EAL starts
 * (rte_eal_init() cannot be retried), and the unit test needs no DPDK.
 */
#include <string.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_dp.h"

#define R NRF_DP_EAL_ARG_REQUIRED
#define O NRF_DP_EAL_ARG_OPTIONAL
#define N NRF_DP_EAL_ARG_NONE
#define PCI NRF_DP_EAL_F_PCI_LIMIT
#define WK NRF_DP_EAL_F_WORKER

/* Short-only options are named by their short form. */
static const struct nrf_dp_eal_opt opts[] = {
	/* devices */
	{"--allow", 'a', R, PCI | WK},
	{"--block", 'b', R, WK},
	{"--no-pci", 0, N, PCI | WK},
	{"--vdev", 0, R, 0},
	{"-d", 'd', R, 0},
	{"--create-uio-dev", 0, N, 0},
	{"--vfio-intr", 0, R, 0},
	{"--vfio-vf-token", 0, R, 0},
	{"--iova-mode", 0, R, WK},
	{"--mbuf-pool-ops-name", 0, R, 0},
	/* lcores */
	{"-c", 'c', R, 0},
	{"-l", 'l', R, 0},
	{"--lcores", 0, R, 0},
	{"-s", 's', R, 0},
	{"-S", 'S', R, 0},
	{"--main-lcore", 0, R, 0},
	{"--force-max-simd-bitwidth", 0, R, 0},
	/* memory */
	{"-m", 'm', R, 0},
	{"-n", 'n', R, 0},
	{"-r", 'r', R, 0},
	{"--socket-mem", 0, R, 0},
	{"--socket-limit", 0, R, 0},
	{"--no-huge", 0, N, 0},
	{"--in-memory", 0, N, 0},
	{"--no-shconf", 0, N, 0},
	{"--huge-dir", 0, R, WK},
	{"--huge-unlink", 0, O, WK},
	{"--huge-worker-stack", 0, O, 0},
	{"--file-prefix", 0, R, 0},
	{"--proc-type", 0, R, 0},
	{"--base-virtaddr", 0, R, WK},
	{"--legacy-mem", 0, N, WK},
	{"--single-file-segments", 0, N, WK},
	{"--match-allocations", 0, N, 0},
	/* timers */
	{"--no-hpet", 0, N, WK},
	{"--vmware-tsc-map", 0, N, 0},
	/* logging, tracing, telemetry */
	{"--log-level", 0, R, WK},
	{"--syslog", 0, R, 0},
	{"--trace", 0, R, WK},
	{"--trace-dir", 0, R, WK},
	{"--trace-bufsz", 0, R, 0},
	{"--trace-mode", 0, R, 0},
	{"--telemetry", 0, N, 0},
	{"--no-telemetry", 0, N, WK},
	/* information */
	{"--help", 'h', N, 0},
	{"-v", 'v', N, 0},
};

#undef R
#undef O
#undef N
#undef PCI
#undef WK

const struct nrf_dp_eal_opt *
nrf_dp_eal_opt_find(const char *arg)
{
	size_t i, n;

	if (arg == NULL || arg[0] != '-' || arg[1] == '\0')
		return NULL;
	if (arg[1] != '-') {
		for (i = 0; i < NRF_ARRAY_SIZE(opts); i++) {
			if (opts[i].short_name == arg[1])
				return &opts[i];
		}
		return NULL;
	}
	n = strcspn(arg, "=");
	if (n == 2)
		return NULL; /* "--" or "--=x" */
	for (i = 0; i < NRF_ARRAY_SIZE(opts); i++) {
		if (opts[i].name[1] == '-' && strlen(opts[i].name) == n &&
			strncmp(opts[i].name, arg, n) == 0)
			return &opts[i];
	}
	return NULL;
}

/* The value of argv[i] is the next argument. */
static bool
value_next(const struct nrf_dp_eal_opt *o, const char *a)
{
	if (o == NULL || o->arg != NRF_DP_EAL_ARG_REQUIRED)
		return false;
	if (a[1] == '-')
		return strchr(a, '=') == NULL;
	return a[2] == '\0';
}

int
nrf_dp_eal_opt_span(int argc, char *const *argv, int i)
{
	const char *a = argv[i];

	return value_next(nrf_dp_eal_opt_find(a), a) && i + 1 < argc ? 2 : 1;
}

/* Why @p a is refused when @p o is what it names. */
static enum nrf_dp_eal_bad
judge(const struct nrf_dp_eal_opt *o, const char *a, bool has_next)
{
	if (a[0] != '-' || a[1] == '\0')
		return NRF_DP_EAL_NOT_OPTION;
	if (o == NULL)
		return NRF_DP_EAL_UNKNOWN;
	if (a[1] == '-') {
		if (o->arg == NRF_DP_EAL_ARG_NONE && strchr(a, '=') != NULL)
			return NRF_DP_EAL_UNKNOWN;
	} else if (o->arg == NRF_DP_EAL_ARG_NONE && a[2] != '\0') {
		return NRF_DP_EAL_UNKNOWN; /* "-hx": not a flag of 22.11 */
	}
	if (value_next(o, a) && !has_next)
		return NRF_DP_EAL_NO_VALUE;
	return NRF_DP_EAL_OK;
}

int
nrf_dp_eal_scan(int argc, char *const *argv, struct nrf_dp_eal_args *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	out->bad = -1;
	out->end = argc;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct nrf_dp_eal_opt *o;
		enum nrf_dp_eal_bad why;

		if (strcmp(a, "--") == 0) {
			out->end = i;
			break;
		}
		o = nrf_dp_eal_opt_find(a);
		why = judge(o, a, i + 1 < argc);
		if (why != NRF_DP_EAL_OK && out->bad < 0) {
			out->bad = i;
			out->why = why;
		}
		if (o != NULL && why != NRF_DP_EAL_UNKNOWN) {
			if (o->flags & NRF_DP_EAL_F_PCI_LIMIT)
				out->pci_limited = true;
			if (strcmp(o->name, "--no-huge") == 0)
				out->no_huge = true;
			else if (strcmp(o->name, "--in-memory") == 0)
				out->in_memory = true;
			else if (strcmp(o->name, "--no-shconf") == 0)
				out->no_shconf = true;
			else if (strcmp(o->name, "--log-level") == 0)
				out->log_level = true;
			else if (strcmp(o->name, "--vdev") == 0)
				out->vdev = true;
			else if (strcmp(o->name, "--help") == 0)
				out->help = true;
		}
		i += nrf_dp_eal_opt_span(argc, argv, i) - 1;
	}
	return out->bad < 0 ? 0 : NRF_EINVAL;
}
