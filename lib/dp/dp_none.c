/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp without DPDK (libdpdk not found at build time): the option table
 * and sequence locks work (they are plain C), the EAL does not.
 */
#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"

int
nrf_dp_eal_init(int argc, char **argv, const struct nrf_dp_conf *conf)
{
	(void)argc;
	(void)argv;
	(void)conf;
	NRF_LOG(ERR, "dpdk", "this nrfwd was built without DPDK (libdpdk not found)");
	return NRF_ENOENT;
}

bool
nrf_dp_up(void)
{
	return false;
}

enum nrf_dp_role
nrf_dp_role(void)
{
	return NRF_DP_SINGLE;
}

unsigned int
nrf_dp_workers(void)
{
	return 1;
}

void
nrf_dp_eal_fini(void)
{
}

unsigned int
nrf_dp_worker_lcores(unsigned int *out, unsigned int max)
{
	(void)out;
	(void)max;
	return 0;
}

unsigned int
nrf_dp_main_lcore(void)
{
	return 0;
}

int
nrf_dp_lcore_cpus(unsigned int lcore, char *buf, size_t cap)
{
	(void)lcore;
	(void)buf;
	(void)cap;
	return NRF_EINVAL;
}

int
nrf_dp_file_prefix(char *buf, size_t cap)
{
	(void)buf;
	(void)cap;
	return NRF_ETOOBIG;
}

uint64_t
nrf_dp_tsc_hz(void)
{
	return 0;
}

int
nrf_dp_launch(int (*fn)(void *), void *arg)
{
	(void)fn;
	(void)arg;
	return NRF_EINVAL;
}

int
nrf_dp_join(void)
{
	return 0;
}

void *
nrf_dp_shm(const char *name, size_t size, int *err)
{
	(void)name;
	(void)size;
	*err = NRF_EINVAL;
	return NULL;
}

int
nrf_dp_rings_create(unsigned int n, int socket)
{
	(void)n;
	(void)socket;
	return NRF_EINVAL;
}

int
nrf_dp_rings_lookup(unsigned int n)
{
	(void)n;
	return NRF_EINVAL;
}

struct rte_ring *
nrf_dp_ring(unsigned int q)
{
	(void)q;
	return NULL;
}

void
nrf_dp_rings_release(void)
{
}
