/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_SYN_H
#define NRF_TP_SYN_H

/*
 * SYN cookies in front of lwIP's listen path (decision 0057; RFC 4987,
 * Linux's encoding). While a listener has fewer half-open connections than
 * the threshold (runtime.dpdk.synCookieThreshold) lwIP handles SYNs as
 * before. From there on a SYN is
 * answered here with a SYN-ACK whose sequence number is a cookie (a keyed
 * SipHash of the addresses, ports and a 64-second slot, plus the MSS and
 * window scale the SYN offered) and nothing is kept. An ACK that carries a
 * valid cookie makes lwIP create the connection: a SYN built from the
 * cookie is handed to lwIP first (its SYN-ACK is not sent; its ISN is the
 * cookie), then the ACK, which completes the handshake.
 *
 * Own lwIP build only (the ISN hook); with Debian's liblwip tp_syn_input()
 * never takes a frame. Stack thread; counters in nrf_tp_dpdk_lcore_stats.
 * Needs lwIP's headers (include after lwip/netif.h).
 */

#include <stdbool.h>
#include <stdint.h>

/* Own address (network order), MAC and MTU of the port; @p cookie_from:
 * half-open connections of a listener from which SYN cookies answer
 * (1..254). */
void tp_syn_init(uint32_t ip, const uint8_t mac[6], uint16_t mtu, uint32_t cookie_from);

/*
 * An IPv4 frame (@p len bytes from its Ethernet header, checksums already
 * checked) before lwIP sees it, inside tp_neigh_rx_begin() for it.
 * @return true: taken (a cookie SYN-ACK was sent); false: give it to lwIP
 *   (for a valid cookie ACK, lwIP now holds the connection in SYN_RCVD).
 */
bool tp_syn_input(struct netif *nif, const uint8_t *frame, uint16_t len);

/* The current time in ms (cookie slots). */
void tp_syn_tick(uint64_t now_ms);

#endif /* NRF_TP_SYN_H */
