/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_NEIGH_H
#define NRF_TP_NEIGH_H

/*
 * Neighbours of the DPDK + lwIP transport (decision 0056): the link-layer
 * side of IPv4 output in place of lwIP's etharp, so that what strangers
 * send cannot take the table from the addresses nrfwd talks to.
 *
 * - Answers go where the question came from: while a received frame is
 *   being processed (tp_neigh_rx_begin() .. tp_neigh_rx_end()), a packet to
 *   that frame's source IPv4 address goes to the frame's source MAC, with no
 *   table lookup, no ARP query and no table entry (SYN-ACKs, RSTs, ACKs).
 * - Pinned entries: addresses nrfwd has connections to (tp_neigh_pin() per
 *   connection) and the gateway are never evicted; other ("stranger")
 *   entries are evicted least recently used first, among themselves only.
 * - Unresolved destinations queue a few packets each, strangers' together
 *   at most NEIGH_Q_STRANGERS; ARP requests are rate-limited (a budget per
 *   second for pinned and one for stranger destinations).
 * - RSTs sent in answer to a received segment are rate-limited (a budget
 *   per second, RFC 5961 section 7): a flood of stray segments costs at
 *   most that many answers.
 * - ARP frames are handled here, not by lwIP: requests for the own address
 *   are answered, requests and replies update entries that exist (they
 *   never create one).
 *
 * Only IPv4 today; the interface takes the address family's key in one
 * place per call so that IPv6 neighbours (NDP) can join the same table.
 * Everything runs on the thread that owns the lwIP stack. Counters go into
 * the polling lcore's nrf_tp_dpdk_lcore_stats (nrf_tp_dp_lcore_stats()).
 * Needs lwIP's headers (include after lwip/netif.h and lwip/pbuf.h).
 */

#include <stdbool.h>
#include <stdint.h>

/* Budgets per second (each also the burst): runtime.dpdk in docs/config.md. */
struct tp_neigh_budgets {
	uint32_t arp_pinned;    /* ARP requests for pinned destinations */
	uint32_t arp_stranger;  /* ... for the others */
	uint32_t stray_rst;     /* RSTs in answer to a received segment */
	uint32_t challenge_ack; /* ACKs lwIP sends in answer to an unacceptable
				 * segment of a connection (own lwIP build) */
};

/*
 * Set up for @p nif (own address @p ip, @p mask, @p gw: network byte order,
 * gw 0 = none; the gateway is pinned) with budgets @p b (each at least 1).
 * @p nif's output must be tp_neigh_output. @return 0 or NRF_ENOMEM.
 */
int tp_neigh_init(struct netif *nif, uint32_t ip, uint32_t mask, uint32_t gw,
	const struct tp_neigh_budgets *b);

/* Free the table and the packets it queues. */
void tp_neigh_fini(void);

/* netif->output: @p p (an IPv4 packet) to @p dst. Queued, sent or dropped
 * (counted); lwIP keeps its own reference. */
err_t tp_neigh_output(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst);

/*
 * A received IPv4 frame from @p src_ip (network order) and @p src_mac is
 * being handed to lwIP: until tp_neigh_rx_end(), packets to @p src_ip go to
 * @p src_mac (the frame's memory must stay valid until then).
 */
void tp_neigh_rx_begin(uint32_t src_ip, const uint8_t *src_mac);
void tp_neigh_rx_end(void);

#if LWIP_IPV6
/*
 * IPv6 output (decision 0065): neighbours are lwIP's nd6 (ethip6_output);
 * only the stray-reset budget applies here: between tp_neigh_rx6_begin()
 * and tp_neigh_rx6_end() (an IPv6 frame being handed to lwIP) a TCP RST is
 * an answer to it and spends runtime.dpdk.strayResetsPerSecond like an
 * IPv4 one (over budget: not sent, counted). @p nif's output_ip6.
 */
err_t tp_neigh_output6(struct netif *nif, struct pbuf *p, const ip6_addr_t *dst);
void tp_neigh_rx6_begin(void);
void tp_neigh_rx6_end(void);
#endif

/*
 * An ARP frame (@p len bytes from its Ethernet header). Answers a request
 * for the own address, updates the sender's entry if it exists.
 */
void tp_neigh_arp_input(const uint8_t *frame, uint16_t len);

/*
 * A connection to @p ip (network order) begins / ends: while any does, the
 * entry of its next hop (itself on-link, else the gateway) is pinned. A pin
 * made while a frame from @p ip is being processed takes that frame's MAC
 * when the entry has none. Pins that find no room are counted as refusals;
 * the connection then works through the stranger entries.
 */
void tp_neigh_pin(uint32_t ip);
void tp_neigh_unpin(uint32_t ip);

/* While @p on, answers to the frame being processed are not sent (a SYN
 * built from a SYN cookie, decision 0057). */
void tp_neigh_mute(bool on);

/* The neighbour @p ip (network order) may have moved (a connect to it
 * timed out): ask again (rate-limited). */
void tp_neigh_probe(uint32_t ip);

/* Retries, expiry and the budgets' refill: call about every millisecond
 * with the current time in ms (cheap when nothing is due). */
void tp_neigh_tick(uint64_t now_ms);

#endif /* NRF_TP_NEIGH_H */
