/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_OPTS_H
#define NRFWD_OPTS_H

/*
 * nrfwd's own command-line options that `nrfwd-ctl check` parses too, so
 * that check accepts exactly what nrfwd does: getopt_long() entries for
 * app/nrfwd/main.c and app/nrfwd-ctl/ctl_check.c (each handles the codes;
 * the configuration source's options are NRFWD_SRC_LONGOPTS).
 */

#include <getopt.h>

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

#endif /* NRFWD_OPTS_H */
