/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_OPTS_H
#define NRFWD_OPTS_H

/*
 * nrfwd's own command-line options that `nrfwd-ctl check` parses too, so
 * that check accepts exactly what nrfwd does: getopt_long() entries for
 * app/nrfwd/main.c and app/nrfwd-ctl/ctl_check.c (each handles the codes;
 * the configuration source's options are NRFWD_SRC_LONGOPTS), and the
 * checks of their values (nrfwd_opts.c).
 */

#include <getopt.h>

#include "nrf_log.h"

#define NRFWD_OPT_PCI_NIC 1000
#define NRFWD_OPT_DPDK_PROCESSES 1001
#define NRFWD_OPT_LOG_LEVEL 1003

#define NRFWD_LONGOPTS                                                       \
	{"config", required_argument, NULL, 'c'},                            \
	{"workers", required_argument, NULL, 'w'},                           \
	{"log-level", required_argument, NULL, NRFWD_OPT_LOG_LEVEL},         \
	{"management", required_argument, NULL, 'M'},                        \
	{"api-token-file", required_argument, NULL, 'T'},                    \
	{"pci-nic", no_argument, NULL, NRFWD_OPT_PCI_NIC},                   \
	{"dpdk-processes", no_argument, NULL, NRFWD_OPT_DPDK_PROCESSES}

/*
 * Everything before a "--" is EAL arguments (DPDK transport): when there
 * is one, *@p argv moves to it, which then holds the program name, and
 * *@p argc shrinks to what follows. @return the index of the "--" in the
 * original argv (the number of EAL arguments with the program name), 0
 * when there is none.
 */
int nrfwd_eal_split(int *argc, char ***argv);

/* --workers @p arg: 1..NRF_RT_MAX_WORKERS into *@p out. @return 0, or -1
 * after "WHO: --workers: expected ..." on stderr. */
int nrfwd_opt_workers(const char *who, const char *arg, unsigned int *out);

/* --log-level @p s (error, err, warn, warning, info, debug) into *@p out.
 * @return 0, or -1 when it is none of them. */
int nrfwd_opt_level(const char *s, enum nrf_log_level *out);

#endif /* NRFWD_OPTS_H */
