/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrf_tp_dpdk.h when the build found no libdpdk or no lwIP: the kernel
 * transport still works, and asking for DPDK says clearly why it cannot.
 */
#include <string.h>

#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_dpdk.h"

void
nrf_tp_dpdk_conf_defaults(struct nrf_tp_dpdk_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->port_id = -1;
}

int
nrf_tp_dpdk_init(int argc, char **argv, const struct nrf_tp_dpdk_conf *conf)
{
	(void)argc;
	(void)argv;
	(void)conf;
	NRF_LOG(ERR, "tp-dpdk", "this nrfwd was built without DPDK/lwIP (libdpdk-dev, "
		"liblwip-dev): only the kernel transport is available");
	return NRF_ENOENT;
}

const struct nrf_tp_ops *
nrf_tp_dpdk_ops(void)
{
	return NULL;
}

void
nrf_tp_dpdk_fini(void)
{
}

int
nrf_tp_dpdk_launch(int (*fn)(void *), void *arg)
{
	(void)fn;
	(void)arg;
	return NRF_EINVAL;
}

int
nrf_tp_dpdk_join(void)
{
	return 0;
}

int
nrf_tp_dpdk_lcore_stats(unsigned int lcore_id, struct nrf_tp_dpdk_lcore_stats *out)
{
	(void)lcore_id;
	(void)out;
	return NRF_ENOENT;
}

int
nrf_tp_dpdk_poll_lcore(void)
{
	return -1;
}

uint64_t
nrf_tp_dpdk_tsc_hz(void)
{
	return 0;
}

int
nrf_tp_dpdk_port_stats(struct nrf_tp_dpdk_port_stats *out)
{
	(void)out;
	return NRF_EINVAL;
}

int
nrf_tp_dpdk_port_xstats(struct nrf_tp_dpdk_xstat *out, unsigned int max)
{
	(void)out;
	(void)max;
	return NRF_EINVAL;
}

unsigned int
nrf_tp_dpdk_queues(void)
{
	return 1;
}

void
nrf_tp_dpdk_caps(struct nrf_tp_dpdk_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->lwip = "none";
}
