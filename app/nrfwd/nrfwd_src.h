/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_SRC_H
#define NRFWD_SRC_H

/*
 * nrfwd's configuration source options (--config-etcd and friends) and
 * the glue between lib/cfgsrc and main(): kept here so main.c only calls
 * hooks (docs/fleet.md). Everything here runs on the control thread.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "nrf_api.h"
#include "nrf_cfg.h"
#include "nrf_rt.h"

#define NRFWD_SRC_OPT_FIRST 1100
#define NRFWD_SRC_OPT_LAST 1108

/* Entries for main()'s getopt_long table. */
#define NRFWD_SRC_LONGOPTS                                                   \
	{"config-etcd", required_argument, NULL, 1100},                      \
	{"config-key", required_argument, NULL, 1101},                       \
	{"instance-id", required_argument, NULL, 1102},                      \
	{"config-cache", required_argument, NULL, 1103},                     \
	{"etcd-cacert", required_argument, NULL, 1104},                      \
	{"etcd-cert", required_argument, NULL, 1105},                        \
	{"etcd-key", required_argument, NULL, 1106},                         \
	{"etcd-user-file", required_argument, NULL, 1107},                   \
	{"etcd-lease-ttl", required_argument, NULL, 1108}

/* One of the options above. @return 0, or 2 after printing why. */
int nrfwd_src_opt(int code, const char *arg);

void nrfwd_src_usage(FILE *f);

/* Validation only (nrfwd-ctl check): nrfwd_src_load() writes no cached
 * copy. Before nrfwd_src_load(). */
void nrfwd_src_check_only(void);

/* True when --config-etcd was given. */
bool nrfwd_src_active(void);

/*
 * The first configuration from the file (runtime only) and etcd (or the
 * cached copy); problems as nrf_cfg_load_file() gives them. Creates the
 * source. @return NULL with @p err set (the problems say why).
 */
struct nrf_cfg *nrfwd_src_load(const char *config, struct nrf_cfg_problems *problems,
	int *err);

/* Hand the source's hooks to the management listener (no file rewrite of
 * shared groups: they live in etcd). No-op without a source. */
void nrfwd_src_api(struct nrf_api_params *ap);

/* Start the watcher and reporter. @return 0, or -1 after logging why. */
int nrfwd_src_start(struct nrf_rt *rt);

/* Stop the threads (status key revoked); free after the API is gone. */
void nrfwd_src_stop(void);
void nrfwd_src_free(void);

#endif /* NRFWD_SRC_H */
