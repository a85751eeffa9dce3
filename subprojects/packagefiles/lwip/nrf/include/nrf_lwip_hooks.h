/* SPDX-License-Identifier: BSD-3-Clause */
/* lwIP hooks of nrfwd's own build (LWIP_HOOK_FILENAME, decision 0010). */
#ifndef NRF_LWIP_HOOKS_H
#define NRF_LWIP_HOOKS_H

#include "lwip/arch.h"
#include "lwip/ip_addr.h"

/*
 * RFC 6528 initial sequence numbers: a 4 µs clock plus a keyed hash
 * (SipHash-2-4, key from getrandom() at the first call) of the connection's
 * addresses and ports, instead of lwIP's predictable counter.
 */
u32_t nrf_lwip_tcp_isn(const ip_addr_t *local_ip, u16_t local_port,
	const ip_addr_t *remote_ip, u16_t remote_port);

#endif /* NRF_LWIP_HOOKS_H */
