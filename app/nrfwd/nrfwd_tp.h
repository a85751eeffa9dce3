/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRFWD_TP_H
#define NRFWD_TP_H

/*
 * nrfwd's choice of transport (runtime.transport): kernel sockets, or a
 * DPDK port with lwIP (nrf_tp_dpdk.h). Start-up problems of the DPDK
 * transport (bad EAL option, no --no-pci/-a, no hugepages, a port that
 * does not start, an address conflict) end here with one log line and a
 * non-zero exit status, before any worker exists. Control thread only.
 */

#include <stdbool.h>
#include <stdio.h>

#include "nrf_cfg.h"
#include "nrf_dp.h"
#include "nrf_rt.h"
#include "nrf_tp.h"
#include "nrf_tp_dpdk.h"

/* Command-line side of the choice. */
struct nrfwd_tp_opts {
	int eal_argc;        /* arguments before "--", argv[0] included */
	char **eal_argv;
	bool pci_nic;        /* --pci-nic: the EAL may probe PCI NICs */
	/* DPDK: SINGLE, AUTO (primary with worker processes when the core list
	 * has two or more worker lcores), PRIMARY (--dpdk-processes) or
	 * SECONDARY (a worker process, --mp-worker) ... */
	enum nrf_dp_role role;
	unsigned int queue;  /* ... of this queue pair */
};

/*
 * Start the transport @p cfg asks for (runtime.transport). Kernel: nothing
 * to do (EAL arguments are ignored with a note). DPDK: checks the EAL
 * arguments (known options, --no-pci or -a unless --pci-nic) and the worker
 * count (exactly 1), then nrf_tp_dpdk_init() with runtime.dpdk (lib/cfg
 * has validated it: address, gateway, pool sizes, listeners, local NRF).
 * @p tp receives the ops table for nrf_rt_params.tp.
 * @return 0, or the exit status after one line was logged.
 */
int nrfwd_tp_start(const struct nrf_cfg *cfg, const struct nrfwd_tp_opts *o,
	unsigned int workers, const struct nrf_tp_ops **tp);

/* True when the DPDK transport started as the primary of worker processes
 * (nrfwd_mp.h): then this process runs no worker of its own. */
bool nrfwd_tp_primary(void);

/* True when this nrfwd was built with the DPDK transport. */
bool nrfwd_tp_dpdk_built(void);

/* Name of the transport started ("kernel", "dpdk"). */
const char *nrfwd_tp_name(void);

/* After the workers stopped: the DPDK worker's busy cycles per request and
 * the lcore's load, one log line (nothing on kernel sockets). */
void nrfwd_tp_report(const struct nrf_rt *rt);

/* Release the transport (after nrf_rt_free()). */
void nrfwd_tp_stop(void);

/* The EAL part of --help. */
void nrfwd_tp_usage(FILE *f);

#endif /* NRFWD_TP_H */
