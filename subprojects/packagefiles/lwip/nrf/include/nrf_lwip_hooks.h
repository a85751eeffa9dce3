/* SPDX-License-Identifier: BSD-3-Clause */
/* lwIP hooks of nrfwd's own build (LWIP_HOOK_FILENAME, decision 0010). */
#ifndef NRF_LWIP_HOOKS_H
#define NRF_LWIP_HOOKS_H

#include <string.h>

#include "lwip/arch.h"
#include "lwip/def.h"
#include "lwip/ip_addr.h"

/*
 * RFC 6528 initial sequence numbers: a 4 µs clock plus a keyed hash
 * (SipHash-2-4, key from getrandom() at the first call) of the connection's
 * addresses and ports, instead of lwIP's predictable counter.
 */
u32_t nrf_lwip_tcp_isn(const ip_addr_t *local_ip, u16_t local_port,
	const ip_addr_t *remote_ip, u16_t remote_port);

/*
 * SYN cookies (the transport, decision 0057): the next call of
 * nrf_lwip_tcp_isn() returns nrf_lwip_isn_next once when
 * nrf_lwip_isn_next_set is non-zero (it clears it): the connection lwIP
 * creates from a cookie's ACK keeps the cookie as its ISN. Stack thread.
 */
extern u32_t nrf_lwip_isn_next;
extern int nrf_lwip_isn_next_set;

/*
 * Called by nrf_lwip_tcp_isn() with the pcb it numbers, when set: every
 * pcb that enters lwIP's active list (a connect, or a SYN to a listener,
 * also one a SYN cookie stands for) passes there first, with its addresses
 * and ports already set. The transport's index of pcbs (lib/tp) learns of
 * them here. Stack thread.
 */
struct tcp_pcb;
extern void (*nrf_lwip_pcb_new)(struct tcp_pcb *pcb);

/*
 * LWIP_HOOK_TCP_INPACKET_PCB: a segment for @p pcb (of any list, LISTEN
 * included) after lwIP found it, header fields in host order, @p p past
 * the TCP header (p->tot_len: the payload). Returns what
 * nrf_lwip_tcp_in_fn returns when set, else ERR_OK; anything but ERR_OK
 * makes lwIP drop the segment. Stack thread.
 */
struct tcp_hdr;
struct pbuf;
extern s8_t (*nrf_lwip_tcp_in_fn)(struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
	const struct pbuf *p);
s8_t nrf_lwip_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen,
	u16_t opt1len, u8_t *opt2, struct pbuf *p);

/*
 * LWIP_HOOK_ND6_GET_GW: the next hop of IPv6 destination @p dest, which
 * lwIP found off-link (not link-local, not in the /64 of a static
 * address): the destination itself when it is inside the configured
 * prefix, the configured gateway otherwise, NULL when there is none (lwIP
 * then fails the send with ERR_RTE). Set by the transport (tp_lwip.c).
 * Stack thread.
 */
struct netif;
struct ip6_addr;
const struct ip6_addr *nrf_lwip_nd6_get_gw(struct netif *netif, const struct ip6_addr *dest);

/* SipHash-2-4 of @p len bytes at @p in with the 128-bit key @p k. */
u64_t nrf_lwip_siphash24(const u8_t *in, size_t len, const u64_t k[2]);

/*
 * IPv4/TCP checksums of whole packets, for the transport (tp_lwip.c) when
 * it checks and fills them in place of lwIP (decision 0044): one pass over
 * a contiguous packet, without lwIP's walk over a pbuf chain and its
 * per-call folding. Inline: the transport calls them once per frame.
 * Pure functions of the bytes; any thread.
 */

/* 64-bit partial sum of memory-order 16-bit words, folded to 16 bits. */
static inline u16_t
nrf_lwip_fold64(u64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (u16_t)s;
}

/* The words of an IPv4 header of @p ihl bytes (20..60, a multiple of 4). */
static inline u64_t
nrf_lwip_ip4_hdr_sum(const u8_t *ip, unsigned int ihl)
{
	u32_t w[5];
	u64_t s;
	unsigned int i;

	memcpy(w, ip, 20);
	s = (u64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	for (i = 20; i < ihl; i += 4) {
		memcpy(w, ip + i, 4);
		s += w[0];
	}
	return s;
}

/* The pseudo header of the TCP segment (@p tcp_len bytes) of IPv4 packet
 * @p ip: its addresses as they lie in memory, protocol and length in
 * network order, like every other word of the sum. */
static inline u64_t
nrf_lwip_tcp_pseudo_sum(const u8_t *ip, unsigned int tcp_len)
{
	u32_t a, b;

	memcpy(&a, ip + 12, 4);
	memcpy(&b, ip + 16, 4);
	return (u64_t)a + b + lwip_htons(6) + lwip_htons((u16_t)tcp_len);
}

/*
 * @p packet: an IPv4 packet of which @p len bytes are present (a frame
 * after its Ethernet header). Returns 0 when a checksum asked for is wrong:
 * the header's (@p check_ip), or the TCP segment's with its pseudo header
 * (@p check_tcp; the segment's length is the header's total length minus
 * the header). Returns 1 otherwise, also for what it cannot check and
 * lwIP drops anyway (not IPv4, truncated, inconsistent lengths,
 * fragments: lwIP does not reassemble).
 */
static inline int
nrf_lwip_ip4_rx_csum_ok(const void *packet, u16_t len, int check_ip, int check_tcp)
{
	const u8_t *ip = (const u8_t *)packet;
	unsigned int ihl, tot;

	if (len < 20 || (ip[0] >> 4) != 4)
		return 1;
	ihl = (ip[0] & 0x0fu) * 4u;
	if (ihl < 20 || ihl > len)
		return 1;
	if (check_ip && nrf_lwip_fold64(nrf_lwip_ip4_hdr_sum(ip, ihl)) != 0xffff)
		return 0;
	tot = (unsigned int)ip[2] << 8 | ip[3];
	if (!check_tcp || ip[9] != 6 || (ip[6] & 0x3fu) != 0 || ip[7] != 0 ||
		tot < ihl + 20 || tot > len)
		return 1;
	return nrf_lwip_fold64(nrf_lwip_tcp_pseudo_sum(ip, tot - ihl) +
		LWIP_CHKSUM(ip + ihl, (int)(tot - ihl))) == 0xffff;
}

/*
 * Writes the TCP checksum of IPv4/TCP packet @p packet (@p len bytes
 * present). Anything else (not IPv4 or TCP, a fragment, lengths that do
 * not fit) is left as it is.
 */
static inline void
nrf_lwip_ip4_tcp_csum_fill(void *packet, u16_t len)
{
	u8_t *ip = (u8_t *)packet;
	unsigned int ihl, tot;
	u16_t c;

	if (len < 40 || (ip[0] >> 4) != 4 || ip[9] != 6)
		return;
	ihl = (ip[0] & 0x0fu) * 4u;
	tot = (unsigned int)ip[2] << 8 | ip[3];
	if (ihl < 20 || tot < ihl + 20 || tot > len || (ip[6] & 0x3fu) != 0 || ip[7] != 0)
		return;
	memset(ip + ihl + 16, 0, 2);
	c = (u16_t)~nrf_lwip_fold64(nrf_lwip_tcp_pseudo_sum(ip, tot - ihl) +
		LWIP_CHKSUM(ip + ihl, (int)(tot - ihl)));
	memcpy(ip + ihl + 16, &c, 2);
}

/*
 * IPv6/TCP (decision 0065): the same for an IPv6 packet whose next header
 * is TCP (no extension headers: lwIP's TCP gets nothing else from
 * nrfwd's peers; what is not TCP right after the fixed header is left to
 * lwIP). The pseudo header: both addresses, the upper-layer length and
 * the next header (RFC 8200 section 8.1).
 */
static inline u64_t
nrf_lwip_tcp6_pseudo_sum(const u8_t *ip, unsigned int tcp_len)
{
	u32_t w[8];
	u64_t s = 0;
	unsigned int i;

	memcpy(w, ip + 8, 32);
	for (i = 0; i < 8; i++)
		s += w[i];
	return s + lwip_htonl(tcp_len) + lwip_htonl(6);
}

/* 1 unless @p packet is IPv6/TCP with a wrong TCP checksum. */
static inline int
nrf_lwip_ip6_rx_csum_ok(const void *packet, u16_t len)
{
	const u8_t *ip = (const u8_t *)packet;
	unsigned int pl;

	if (len < 60 || (ip[0] >> 4) != 6 || ip[6] != 6)
		return 1;
	pl = (unsigned int)ip[4] << 8 | ip[5];
	if (pl < 20 || pl + 40 > len)
		return 1;
	return nrf_lwip_fold64(nrf_lwip_tcp6_pseudo_sum(ip, pl) +
		LWIP_CHKSUM(ip + 40, (int)pl)) == 0xffff;
}

/* Writes the TCP checksum of IPv6/TCP packet @p packet (else nothing). */
static inline void
nrf_lwip_ip6_tcp_csum_fill(void *packet, u16_t len)
{
	u8_t *ip = (u8_t *)packet;
	unsigned int pl;
	u16_t c;

	if (len < 60 || (ip[0] >> 4) != 6 || ip[6] != 6)
		return;
	pl = (unsigned int)ip[4] << 8 | ip[5];
	if (pl < 20 || pl + 40 > len)
		return;
	memset(ip + 40 + 16, 0, 2);
	c = (u16_t)~nrf_lwip_fold64(nrf_lwip_tcp6_pseudo_sum(ip, pl) +
		LWIP_CHKSUM(ip + 40, (int)pl));
	memcpy(ip + 40 + 16, &c, 2);
}

#endif /* NRF_LWIP_HOOKS_H */
