/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrf_tp_dpdk_caps_check(): what a configuration asks of the DPDK transport
 * against what this build can carry (nrf_tp_dpdk_caps(), from tp_lwip.c or
 * tp_dpdk_none.c). Built in every configuration: `nrfwd-ctl check` and the
 * metrics ask it whether or not DPDK was found.
 */
#include <stdio.h>
#include <string.h>

#include "nrf_err.h"
#include "nrf_tp_dpdk.h"

#define STD_MTU 1500

static const char *
lwip_name(const char *kind)
{
	if (strcmp(kind, "own") == 0)
		return "the own build";
	if (strcmp(kind, "debian") == 0)
		return "Debian's liblwip";
	return "no DPDK transport";
}

int
nrf_tp_dpdk_caps_check(uint16_t mtu, uint16_t vlan, bool ipv6, const char **field,
	char *why, size_t n)
{
	struct nrf_tp_dpdk_caps c;
	const char *f = NULL;
	int w = 0;

	nrf_tp_dpdk_caps(&c);
	if (c.max_mtu == 0)
		return 0; /* nrf_tp_dpdk_init() says there is no DPDK transport */
	if (mtu > c.max_mtu) {
		f = "/runtime/dpdk/mtu";
		/* Short enough for a configuration problem (192 bytes). */
		w = snprintf(why, n, "MTU %u: this build's lwIP (%s, TCP_MSS %u) carries at "
			"most MTU %u%s", mtu, lwip_name(c.lwip), c.tcp_mss, c.max_mtu,
			c.max_mtu <= STD_MTU ? "; jumbo frames need the own lwIP build "
			"(scripts/fetch_lwip.sh, -Dlwip=subproject)" : "");
	} else if (vlan != 0 && !c.vlan) {
		f = "/runtime/dpdk/vlan";
		w = snprintf(why, n, "VLAN %u: this nrfwd's DPDK transport cannot tag frames", vlan);
	} else if (ipv6 && !c.ipv6) {
		f = "/runtime/dpdk";
		w = snprintf(why, n, "IPv6: this nrfwd was built with %s without IPv6 (LWIP_IPV6 0)",
			lwip_name(c.lwip));
	}
	if (f == NULL)
		return 0;
	(void)w;
	if (field != NULL)
		*field = f;
	return NRF_EINVAL;
}
