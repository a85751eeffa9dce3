/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK side of the DPDK + lwIP transport: the one port and its packet
 * pool, RX bursts, batched TX, the idle backoff and the per-lcore
 * accounting. The EAL, lcores, the shared memzone and the worker rings are
 * lib/dp's (nrf_dp.h). No lwIP header may appear here (they clash with
 * DPDK's): tp_lwip.c is reached only through tp_dpdk_shim.h.
 *
 * A single process and the primary of worker processes start the port; a
 * worker process attaches to the primary's. Both go through port_open(),
 * so what a worker sees (offloads, MTU, address) is what the primary set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "nrf_common.h"
#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_dpdk.h"
#include "tp_dpdk_shim.h"

#define MOD "tp-dpdk"
#define POOL_NAME "nrf_tp_pool"
#define BURST_MAX 64
#define TX_RETRIES 3
#define ETH_MIN_FRAME 60
#define STD_MTU 1500
#define MIN_MTU 576
#define MAX_MTU 9000 /* lwIP's TCP_MSS is 8960 (lwipopts.h) */
#define LINK_HDR 22  /* Ethernet header, one VLAN tag, FCS */
#define MAX_VLAN 4094
#define EPHEMERAL_FIRST 49152u

/* Accounting slot of one lcore; the last slot takes threads without one. */
struct acct {
	struct nrf_tp_dpdk_lcore_stats st;
	uint64_t last_entry;
	uint64_t iter_rx;  /* RX-call cycles of the running iteration */
	uint8_t last_busy;
	uint8_t used;
} __rte_cache_aligned;

static struct acct acct[RTE_MAX_LCORE + 1];
static __thread struct acct *my_acct;

static struct {
	bool ready;
	bool port_started;
	bool port_owner;      /* SINGLE/PRIMARY: this process configured the port */
	enum nrf_dp_role role;
	uint16_t port;
	uint16_t queue;       /* the queue pair this process polls */
	uint16_t nq;          /* queue pairs of the port */
	uint32_t ip_be;       /* own address (ARP sharing) */
	struct rte_ring *ring[NRF_TP_DPDK_MAX_QUEUES]; /* per worker: frames for it (lib/dp's) */
	int poll_lcore;
	uint64_t hz;
	struct rte_mempool *pool;
	struct nrf_tp_dpdk_conf conf;
	uint16_t ntx;
	unsigned int csum;    /* NRF_TP_DP_CSUM_* the port offloads */
	uint16_t vlan;        /* runtime.dpdk.vlan, 0: untagged */
	unsigned int vlan_ol; /* NRF_TP_DPDK_VLAN_* the device does */
	bool tx_lend;         /* the PMD copies in tx_burst: frames may be lent */
	struct rte_mbuf *txb[BURST_MAX];
	struct lend *lend_free;
	/* RX frames the stack gave back (nrf_tp_dp_rx_release()): returned to
	 * the pool in bulk at the end of the iteration (decision 0042). */
	uint16_t nrel;
	struct rte_mbuf *rel[BURST_MAX];
} pt = {
	.poll_lcore = -1,
};

/*
 * A frame lent by the stack (nrf_tp_dp_tx_lend()): the mbuf's external
 * buffer info. The PMDs that lending is offered on copy the frame inside
 * rte_eth_tx_burst() and free the mbuf there, so at most a TX batch plus
 * the frames of one retried burst are out at once; 2 x BURST_MAX slots.
 */
struct lend {
	struct rte_mbuf_ext_shared_info sh;
	void *cookie;
	struct lend *next;
};

static struct lend lends[2 * BURST_MAX];

/* ------------------------------------------------------------------------ */
/* Start-up checks                                                           */

/* Leading bits of @p a and @p b equal, up to @p bits. */
static bool
prefix_eq(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int i;

	for (i = 0; bits >= 8; i++, bits -= 8)
		if (a[i] != b[i])
			return false;
	return bits == 0 || ((a[i] ^ b[i]) >> (8 - bits)) == 0;
}

/* The IPv6 address and gateway (decision 0065); lib/cfg checks the same
 * with messages per field. */
static int
check_conf6(const struct nrf_tp_dpdk_conf *c)
{
	const uint8_t *a = c->ip6.ip, *g = c->gateway6.ip;
	static const uint8_t zero[16];

	if (c->ip6.family != 6 || c->prefix6_len < 1 || c->prefix6_len > 64) {
		NRF_LOG(ERR, MOD, "DPDK port IPv6 address needs a prefix length 1..64");
		return NRF_EINVAL;
	}
	if (memcmp(a, zero, 15) == 0 || a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) ||
		(memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)) {
		NRF_LOG(ERR, MOD, "DPDK port IPv6 address is not a global or unique-local unicast "
			"address");
		return NRF_EINVAL;
	}
	if (c->gateway6.family == 0)
		return 0;
	if (c->gateway6.family != 6 || memcmp(g, a, 16) == 0 ||
		!((g[0] == 0xfe && (g[1] & 0xc0) == 0x80) || prefix_eq(g, a, c->prefix6_len))) {
		NRF_LOG(ERR, MOD, "DPDK port IPv6 gateway is not on the port's network "
			"(its prefix or link-local)");
		return NRF_EINVAL;
	}
	return 0;
}

/* "192.0.2.1/24", "2001:db8::1/64" or both, for the start-up line. */
static const char *
addrs_str(const struct nrf_tp_dpdk_conf *c, char *buf, size_t cap)
{
	char a4[INET_ADDRSTRLEN] = "", a6[INET6_ADDRSTRLEN] = "";

	if (c->ip.family == 4)
		(void)inet_ntop(AF_INET, c->ip.ip, a4, sizeof(a4));
	if (c->ip6.family == 6)
		(void)inet_ntop(AF_INET6, c->ip6.ip, a6, sizeof(a6));
	if (a4[0] != '\0' && a6[0] != '\0')
		snprintf(buf, cap, "%s/%u and %s/%u", a4, c->prefix_len, a6, c->prefix6_len);
	else if (a4[0] != '\0')
		snprintf(buf, cap, "%s/%u", a4, c->prefix_len);
	else
		snprintf(buf, cap, "%s/%u", a6, c->prefix6_len);
	return buf;
}

static int
check_conf(const struct nrf_tp_dpdk_conf *c)
{
	uint32_t ip, mask, gw;
	char why[256];

	if (c == NULL) {
		NRF_LOG(ERR, MOD, "no DPDK port configuration given");
		return NRF_EINVAL;
	}
	if (c->ip.family == 0 && c->ip6.family == 0) {
		NRF_LOG(ERR, MOD, "DPDK port needs an IPv4 or an IPv6 address");
		return NRF_EINVAL;
	}
	if (c->ip6.family != 0 && check_conf6(c) != 0)
		return NRF_EINVAL;
	if (c->ip.family == 0) {
		if (c->gateway.family != 0) {
			NRF_LOG(ERR, MOD, "DPDK port gateway without an IPv4 address");
			return NRF_EINVAL;
		}
		goto port;
	}
	if (c->ip.family != 4 || c->prefix_len < 1 || c->prefix_len > 32) {
		NRF_LOG(ERR, MOD, "DPDK port needs an IPv4 address and a prefix length 1..32");
		return NRF_EINVAL;
	}
	memcpy(&ip, c->ip.ip, 4);
	ip = rte_be_to_cpu_32(ip);
	mask = c->prefix_len == 32 ? UINT32_MAX : ~(UINT32_MAX >> c->prefix_len);
	if (ip == 0 || (ip >> 24) == 127 || (ip >> 28) >= 14 ||
		(c->prefix_len < 31 && ((ip & ~mask) == 0 || (ip | mask) == UINT32_MAX))) {
		NRF_LOG(ERR, MOD, "DPDK port address is not a usable host address");
		return NRF_EINVAL;
	}
	if (c->gateway.family == 4) {
		memcpy(&gw, c->gateway.ip, 4);
		gw = rte_be_to_cpu_32(gw);
		if ((gw & mask) != (ip & mask) || gw == ip) {
			NRF_LOG(ERR, MOD, "DPDK port gateway is not on the port's network");
			return NRF_EINVAL;
		}
	} else if (c->gateway.family != 0) {
		NRF_LOG(ERR, MOD, "DPDK port gateway must be IPv4");
		return NRF_EINVAL;
	}
port:
	if (c->mtu != 0 && (c->mtu < MIN_MTU || c->mtu > MAX_MTU)) {
		NRF_LOG(ERR, MOD, "DPDK port MTU %u: must be 0 (the device's) or %u..%u", c->mtu,
			MIN_MTU, MAX_MTU);
		return NRF_EINVAL;
	}
	if (c->vlan > MAX_VLAN) {
		NRF_LOG(ERR, MOD, "DPDK port VLAN %u: must be 0 (untagged) or 1..%u", c->vlan,
			MAX_VLAN);
		return NRF_EINVAL;
	}
	if (nrf_tp_dpdk_caps_check(c->mtu, c->vlan, c->ip.family == 6, NULL, why,
		    sizeof(why)) != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %s", why);
		return NRF_EINVAL;
	}
	if (c->burst < 1 || c->burst > BURST_MAX || c->rx_desc == 0 || c->tx_desc == 0) {
		NRF_LOG(ERR, MOD, "DPDK burst must be 1..%d and descriptor counts non-zero",
			BURST_MAX);
		return NRF_EINVAL;
	}
	if (c->mbufs < (uint32_t)c->rx_desc + c->tx_desc + 2u * c->burst + c->mbuf_cache) {
		NRF_LOG(ERR, MOD, "DPDK pool of %u mbufs cannot fill %u RX + %u TX descriptors "
			"plus bursts and cache", c->mbufs, c->rx_desc, c->tx_desc);
		return NRF_EINVAL;
	}
	if (c->arp_rate < 1 || c->arp_stranger_rate < 1 || c->stray_rst_rate < 1 ||
		c->challenge_ack_rate < 1 || c->syn_cookie_from < 1 || c->syn_cookie_from > 254 ||
		c->syn_rcvd_timeout_ms < 1000 || c->syn_rcvd_timeout_ms > 20000 ||
		c->synack_retries < 1 || c->synack_retries > 12) {
		NRF_LOG(ERR, MOD, "DPDK flood settings out of range: budgets must be at least 1, "
			"the SYN cookie threshold 1..254, the SYN_RCVD timeout 1000..20000 ms and "
			"SYN-ACK retries 1..12");
		return NRF_EINVAL;
	}
	if (c->mbuf_cache > RTE_MEMPOOL_CACHE_MAX_SIZE || c->mbuf_cache * 3u > c->mbufs * 2u) {
		NRF_LOG(ERR, MOD, "DPDK mbuf cache %u too large (max %d and 2/3 of the pool)",
			c->mbuf_cache, RTE_MEMPOOL_CACHE_MAX_SIZE);
		return NRF_EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Port                                                                      */

static void
rel_flush(void)
{
	if (pt.nrel > 0) {
		rte_pktmbuf_free_bulk(pt.rel, pt.nrel);
		pt.nrel = 0;
	}
}

/*
 * A tagged port's received frames (runtime.dpdk.vlan): those of our VLAN
 * are kept untagged (the device stripped the tag, or it is stripped here:
 * the MAC addresses move 4 bytes up), the rest (untagged, another VLAN,
 * priority-tagged VLAN 0, stacked tags left in the frame) are freed and
 * counted in @p other. @return the frames kept, at the front of @p pkts.
 */
static uint16_t
vlan_rx(struct rte_mbuf **pkts, uint16_t n, uint64_t *other)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (!(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) &&
			(m->data_len < RTE_ETHER_HDR_LEN + sizeof(struct rte_vlan_hdr) ||
				rte_vlan_strip(m) != 0)) {
			rte_pktmbuf_free(m); /* untagged */
			(*other)++;
			continue;
		}
		if ((m->vlan_tci & 0x0fffu) != pt.vlan) {
			rte_pktmbuf_free(m);
			(*other)++;
			continue;
		}
		pkts[k++] = m;
	}
	return k;
}

/* Tags on the TX batch of a tagged port: the device inserts them (flag and
 * TCI in the mbuf), or they are inserted here, in the mbuf's headroom (the
 * MAC addresses move 4 bytes down; frames are never lent on a tagged port,
 * so every mbuf is a direct one with DPDK's headroom). A frame that cannot
 * take one (not expected) is dropped and counted: untagged it would be
 * lost anyway. @return the frames left, at the front of @p pkts. */
static uint16_t
vlan_tx(struct rte_mbuf **pkts, uint16_t n, struct acct *a)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		m->vlan_tci = pt.vlan;
		if (pt.vlan_ol & NRF_TP_DPDK_VLAN_TX_INSERT) {
			m->ol_flags |= RTE_MBUF_F_TX_VLAN;
		} else if (unlikely(rte_vlan_insert(&m) != 0)) {
			rte_pktmbuf_free(m);
			a->st.tx_dropped++;
			continue;
		}
		pkts[k++] = m;
	}
	return k;
}

static void
port_release(void)
{
	unsigned int i;

	rel_flush(); /* frames the stack gave back while it stopped */
	for (i = 0; i < pt.ntx; i++)
		rte_pktmbuf_free(pt.txb[i]); /* lent frames go back to the stack */
	pt.ntx = 0;
	pt.tx_lend = false;
	nrf_dp_rings_release(); /* freed by the primary, forgotten by a worker */
	memset(pt.ring, 0, sizeof(pt.ring));
	if (!pt.port_owner) {
		/* A worker: port and pool are the primary's. */
		pt.port_started = false;
		pt.pool = NULL;
		return;
	}
	if (pt.port_started) {
		(void)rte_eth_dev_stop(pt.port);
		(void)rte_eth_dev_close(pt.port);
		pt.port_started = false;
	}
	if (pt.pool != NULL) {
		rte_mempool_free(pt.pool);
		pt.pool = NULL;
	}
}

static int
choose_port(int want, bool vdev, uint16_t *out)
{
	uint16_t n = rte_eth_dev_count_avail();
	uint16_t pid;

	if (want >= 0) {
		if (want > UINT16_MAX || !rte_eth_dev_is_valid_port((uint16_t)want)) {
			NRF_LOG(ERR, MOD, "DPDK port %d does not exist (%u available)", want, n);
			return NRF_ENOENT;
		}
		*out = (uint16_t)want;
		return 0;
	}
	if (n == 0 && vdev) {
		NRF_LOG(ERR, MOD, "no DPDK port: the --vdev device did not start (see the EAL "
			"lines above; e.g. its iface= does not exist in this network namespace)");
		return NRF_ENOENT;
	}
	if (n == 0) {
		NRF_LOG(ERR, MOD, "no DPDK port: add one to the EAL arguments, e.g. "
			"--vdev=net_af_packet0,iface=<veth> or --vdev=net_tap0 (with --no-pci), "
			"or -a <pci-address>");
		return NRF_ENOENT;
	}
	if (n > 1) {
		NRF_LOG(ERR, MOD, "%u DPDK ports available and none chosen (set the port id)", n);
		return NRF_EINVAL;
	}
	RTE_ETH_FOREACH_DEV(pid) {
		*out = pid;
		break;
	}
	return 0;
}

static void
send_arp_probe(const struct rte_ether_addr *mac, rte_be32_t ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pt.pool);
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *ah;
	char *p;

	if (m == NULL)
		return;
	p = rte_pktmbuf_append(m, ETH_MIN_FRAME);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(p, 0, ETH_MIN_FRAME);
	eh = (struct rte_ether_hdr *)p;
	memset(&eh->dst_addr, 0xff, sizeof(eh->dst_addr));
	rte_ether_addr_copy(mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	ah = (struct rte_arp_hdr *)(eh + 1);
	if (pt.vlan != 0) {
		/* Tagged here, in the frame: the TX offload is set up for the
		 * data path (vlan_tx()), not for this lone frame. */
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(pt.vlan);
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
		ah = (struct rte_arp_hdr *)(vh + 1);
	}
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = RTE_ETHER_ADDR_LEN;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(mac, &ah->arp_data.arp_sha);
	ah->arp_data.arp_sip = 0; /* probe: "who has ip?" without claiming it */
	ah->arp_data.arp_tip = ip;
	if (rte_eth_tx_burst(pt.port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

/* Another host answers for, announces or probes for @p ip. */
static bool
arp_conflict(struct rte_mbuf *m, const struct rte_ether_addr *mac, rte_be32_t ip,
	struct rte_ether_addr *who)
{
	const struct rte_ether_hdr *eh;
	const struct rte_arp_hdr *ah;
	rte_be32_t sip, tip;

	if (m->nb_segs != 1 || m->data_len < sizeof(*eh) + sizeof(*ah))
		return false;
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return false;
	ah = (const struct rte_arp_hdr *)(eh + 1);
	if (ah->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		ah->arp_hlen != RTE_ETHER_ADDR_LEN || ah->arp_plen != 4 ||
		rte_is_same_ether_addr(&ah->arp_data.arp_sha, mac))
		return false;
	sip = ah->arp_data.arp_sip;
	tip = ah->arp_data.arp_tip;
	if (sip == ip || (sip == 0 && tip == ip &&
		ah->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))) {
		rte_ether_addr_copy(&ah->arp_data.arp_sha, who);
		return true;
	}
	return false;
}

/* Duplicate address detection: two probes, answers watched for @p ms. */
static bool
arp_probe(const struct rte_ether_addr *mac, rte_be32_t ip, uint32_t ms,
	struct rte_ether_addr *who)
{
	uint64_t start = rte_rdtsc();
	uint64_t end = start + pt.hz * ms / 1000;
	uint64_t next = start;
	uint64_t other = 0;
	int sent = 0;
	bool hit = false;

	while (!hit && rte_rdtsc() < end) {
		struct rte_mbuf *pkts[BURST_MAX];
		uint16_t n, i;

		if (sent < 2 && rte_rdtsc() >= next) {
			send_arp_probe(mac, ip);
			sent++;
			next += pt.hz * ms / 2000;
		}
		n = rte_eth_rx_burst(pt.port, 0, pkts, BURST_MAX);
		if (pt.vlan != 0)
			n = vlan_rx(pkts, n, &other);
		for (i = 0; i < n; i++) {
			if (!hit)
				hit = arp_conflict(pkts[i], mac, ip, who);
		}
		rte_pktmbuf_free_bulk(pkts, n);
		if (n == 0)
			rte_delay_us_sleep(1000);
	}
	return hit;
}

/* Checksum offloads: those of IPv4 and TCP the device has (decision 0010). */
static void
csum_offloads(const struct rte_eth_dev_info *info, struct rte_eth_conf *pc)
{
	pt.csum = 0;
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		pc->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		pt.csum |= NRF_TP_DP_CSUM_RX_IP;
	}
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TCP_CKSUM) {
		pc->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
		pt.csum |= NRF_TP_DP_CSUM_RX_TCP;
	}
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		pc->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		pt.csum |= NRF_TP_DP_CSUM_TX_IP;
	}
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) {
		pc->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
		pt.csum |= NRF_TP_DP_CSUM_TX_TCP;
	}
}

/* VLAN offloads of a tagged port: those the device has (the rest is done
 * in vlan_rx() and vlan_tx()). Same capabilities, same bits: the primary
 * and its workers agree, as for checksums. */
static void
vlan_offloads(const struct rte_eth_dev_info *info, struct rte_eth_conf *pc)
{
	pt.vlan_ol = 0;
	if (pt.vlan == 0)
		return;
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP) {
		pc->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
		pt.vlan_ol |= NRF_TP_DPDK_VLAN_RX_STRIP;
	}
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_FILTER) {
		pc->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_FILTER;
		pt.vlan_ol |= NRF_TP_DPDK_VLAN_RX_FILTER;
	}
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT) {
		pc->txmode.offloads |= RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
		pt.vlan_ol |= NRF_TP_DPDK_VLAN_TX_INSERT;
	}
}

/* For the start-up line: "" untagged, else " vlan N (rx ..., tx ...)". */
static void
vlan_describe(char *buf, size_t n)
{
	if (pt.vlan == 0) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, n, ", vlan %u (tags: rx %s%s, tx %s)", pt.vlan,
		pt.vlan_ol & NRF_TP_DPDK_VLAN_RX_STRIP ? "device" : "software",
		pt.vlan_ol & NRF_TP_DPDK_VLAN_RX_FILTER ? " + device filter" : "",
		pt.vlan_ol & NRF_TP_DPDK_VLAN_TX_INSERT ? "device" : "software");
}

static const char *
csum_name(unsigned int bits)
{
	if (bits == 0)
		return "none";
	if (bits & (NRF_TP_DP_CSUM_RX_IP | NRF_TP_DP_CSUM_TX_IP))
		return bits & (NRF_TP_DP_CSUM_RX_TCP | NRF_TP_DP_CSUM_TX_TCP) ? "ip+tcp" : "ip";
	return "tcp";
}

/* Data room of the pool's buffers: DPDK's default (2048 bytes of data)
 * up to a 1500-byte MTU, else a whole frame of the configured MTU rounded
 * up to 1 KiB (jumbo frames in one buffer: lwIP reads RX frames in place
 * and lends TX frames as one piece, decisions 0010 and 0036). */
static uint16_t
pool_room(const struct nrf_tp_dpdk_conf *c)
{
	if (c->mtu <= STD_MTU)
		return RTE_MBUF_DEFAULT_BUF_SIZE;
	return (uint16_t)(RTE_PKTMBUF_HEADROOM + RTE_ALIGN_CEIL(c->mtu + LINK_HDR, 1024));
}

/* The kernel interface's MTU of a net_af_packet port (0: unknown). */
static unsigned int
kernel_mtu(const struct rte_eth_dev_info *info)
{
	char name[IF_NAMESIZE], path[64 + IF_NAMESIZE];
	unsigned int mtu = 0;
	FILE *f;

	if (info->if_index == 0 || if_indextoname(info->if_index, name) == NULL)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%u", &mtu) != 1)
		mtu = 0;
	fclose(f);
	return mtu;
}

/* The largest MTU the device takes. */
static unsigned int
max_mtu(const struct rte_eth_dev_info *info)
{
	/* As rte_eth_dev_set_mtu() checks it: the MTU plus the link overhead
	 * (the driver's, else Ethernet header and CRC) within max_rx_pktlen. */
	uint32_t over = info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu ?
		info->max_rx_pktlen - info->max_mtu : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	return info->max_rx_pktlen > over ? NRF_MIN(info->max_mtu, info->max_rx_pktlen - over) : 0;
}

/*
 * runtime.dpdk.mtu on the port (the owner, before the pool is made): the
 * device's maximum allows it, or, for net_af_packet, its kernel interface
 * already has it (DPDK 22.11's af_packet reports a 1518-byte maximum frame
 * and refuses rte_eth_dev_set_mtu() above 1500, while it carries frames up
 * to its framesz; the interface's MTU is the operator's: ip link).
 * @return 0, or NRF_EINVAL (logged).
 */
static int
mtu_usable(const struct nrf_tp_dpdk_conf *c, const struct rte_eth_dev_info *info,
	const char *drv)
{
	unsigned int kmtu;

	if (c->mtu == 0 || (c->mtu >= info->min_mtu && c->mtu <= max_mtu(info)))
		return 0;
	if (strcmp(drv, "net_af_packet") != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s) cannot take MTU %u (it allows %u..%u)",
			pt.port, drv, c->mtu, info->min_mtu, max_mtu(info));
		return NRF_EINVAL;
	}
	kmtu = kernel_mtu(info);
	if (kmtu < c->mtu) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s): MTU %u needs the interface's MTU at least "
			"as large (it is %u: ip link set <iface> mtu %u) and a framesz devarg that "
			"holds the frames", pt.port, drv, c->mtu, kmtu, c->mtu);
		return NRF_EINVAL;
	}
	NRF_LOG(INFO, MOD, "DPDK port %u (%s): MTU %u as its interface's (%u); its framesz "
		"must hold %u-byte frames", pt.port, drv, c->mtu, kmtu,
		c->mtu + 14 + (c->vlan != 0 ? 4 : 0));
	return 0;
}

/* The configured MTU on the device (after configure), where the device
 * takes it (mtu_usable() accepted af_packet's interface instead). */
static int
port_mtu(const struct nrf_tp_dpdk_conf *c, const struct rte_eth_dev_info *info, const char *drv)
{
	int rc;

	if (c->mtu == 0 || c->mtu > max_mtu(info))
		return 0;
	rc = rte_eth_dev_set_mtu(pt.port, c->mtu);
	if (rc != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s) refuses MTU %u: %s", pt.port, drv, c->mtu,
			rte_strerror(-rc));
		return NRF_EINVAL;
	}
	return 0;
}

/* The port's owner (single process, primary): packet pool, queues (one
 * pair per worker), offloads, start. */
static int
port_configure(const struct nrf_tp_dpdk_conf *c, const struct rte_eth_dev_info *info,
	const char *drv, int socket, uint16_t *rxd, uint16_t *txd)
{
	struct rte_eth_conf pc;
	uint16_t q, room = pool_room(c);
	int rc;

	rc = mtu_usable(c, info, drv);
	if (rc != 0)
		return rc;
	pt.pool = rte_pktmbuf_pool_create(POOL_NAME, c->mbufs, c->mbuf_cache, 0, room, socket);
	if (pt.pool == NULL) {
		NRF_LOG(ERR, MOD, "cannot create the packet pool (%u mbufs of %u bytes): %s; "
			"reserve more hugepages, raise -m/--socket-mem or lower the pool size",
			c->mbufs, (unsigned int)room, rte_strerror(rte_errno));
		return NRF_ENOMEM;
	}
	memset(&pc, 0, sizeof(pc));
	csum_offloads(info, &pc);
	vlan_offloads(info, &pc);
	if (pt.nq > info->max_rx_queues || pt.nq > info->max_tx_queues) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s) has %u RX / %u TX queues, %u workers need "
			"one pair each", pt.port, drv, info->max_rx_queues, info->max_tx_queues, pt.nq);
		return NRF_EINVAL;
	}
	/* Several queues: a NIC spreads flows with RSS. The key is the
	 * symmetric one (0x6d5a repeated), so both directions of a flow hash
	 * alike. net_tap is left without RSS: an RSS program on the tap would
	 * replace the kernel's own flow steering, which sends every flow back
	 * to the queue that last transmitted on it (decision 0011). */
	if (pt.nq > 1 && strcmp(drv, "net_tap") != 0 && info->flow_type_rss_offloads != 0) {
		static uint8_t key[40];
		unsigned int k;

		for (k = 0; k < sizeof(key); k += 2) {
			key[k] = 0x6d;
			key[k + 1] = 0x5a;
		}
		pc.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		pc.rx_adv_conf.rss_conf.rss_key = key;
		pc.rx_adv_conf.rss_conf.rss_key_len =
			info->hash_key_size > 0 && info->hash_key_size <= sizeof(key) ?
			info->hash_key_size : sizeof(key);
		pc.rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads &
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
	}
	rc = rte_eth_dev_configure(pt.port, pt.nq, pt.nq, &pc);
	if (rc == 0) {
		int mrc = port_mtu(c, info, drv);

		if (mrc != 0) {
			(void)rte_eth_dev_close(pt.port);
			return mrc;
		}
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(pt.port, rxd, txd);
	}
	if (rc == 0 && (pt.vlan_ol & NRF_TP_DPDK_VLAN_RX_FILTER)) {
		int frc = rte_eth_dev_vlan_filter(pt.port, pt.vlan, 1);

		if (frc != 0) {
			/* vlan_rx() drops the other VLANs anyway. */
			NRF_LOG(WARN, MOD, "DPDK port %u (%s): VLAN filter %u refused (%s): "
				"filtering in software", pt.port, drv, pt.vlan, rte_strerror(-frc));
			pt.vlan_ol &= ~NRF_TP_DPDK_VLAN_RX_FILTER;
		}
	}
	for (q = 0; rc == 0 && q < pt.nq; q++) {
		rc = rte_eth_rx_queue_setup(pt.port, q, *rxd, (unsigned int)socket, NULL, pt.pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(pt.port, q, *txd, (unsigned int)socket, NULL);
	}
	if (rc != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s): queue setup failed: %s", pt.port, drv,
			rte_strerror(-rc));
		return NRF_EIO;
	}
	rc = rte_eth_dev_start(pt.port);
	if (rc != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s) does not start: %s", pt.port, drv,
			rte_strerror(-rc));
		(void)rte_eth_dev_close(pt.port);
		return NRF_EIO;
	}
	pt.port_started = true;
	/* IPv6 neighbour discovery is multicast (solicited-node groups): a
	 * NIC filters it out unless told otherwise. No MLD is sent, so the
	 * port takes all multicast; virtual devices pass it anyway. */
	if (c->ip6.family == 6 && rte_eth_allmulticast_get(pt.port) != 1 &&
		rte_eth_allmulticast_enable(pt.port) != 0)
		NRF_LOG(WARN, MOD, "DPDK port %u (%s): cannot receive all multicast; IPv6 "
			"neighbour discovery may not see solicitations", pt.port, drv);
	return 0;
}

/* A worker process: the primary's pool, and its queue pair of the port the
 * primary started. */
static int
port_join(const struct nrf_tp_dpdk_conf *c, const struct rte_eth_dev_info *info)
{
	struct rte_eth_conf pc;

	pt.nq = info->nb_rx_queues;
	if (c->queue >= pt.nq || pt.nq > NRF_TP_DPDK_MAX_QUEUES) {
		NRF_LOG(ERR, MOD, "DPDK port %u has %u queue pairs: no queue %u for this worker",
			pt.port, pt.nq, c->queue);
		return NRF_EINVAL;
	}
	pt.queue = c->queue;
	/* The checksum offloads the primary configured on the port: it enables
	 * every one the device offers (csum_offloads() in port_configure()),
	 * so the same capabilities give the same bits here. */
	memset(&pc, 0, sizeof(pc));
	csum_offloads(info, &pc);
	vlan_offloads(info, &pc);
	pt.port_started = true;
	return 0;
}

/* Wait for the link, then make sure nobody else has our address. */
static int
port_claim(const struct nrf_tp_dpdk_conf *c, const struct rte_ether_addr *mac, const char *drv)
{
	struct rte_ether_addr who;
	struct rte_eth_link link;
	uint64_t until;
	rte_be32_t ip;

	until = rte_rdtsc() + pt.hz * c->link_wait_ms / 1000;
	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(pt.port, &link) != 0 ||
			link.link_status == RTE_ETH_LINK_UP || rte_rdtsc() >= until)
			break;
		rte_delay_us_sleep(10000);
	}
	if (link.link_status != RTE_ETH_LINK_UP)
		NRF_LOG(WARN, MOD, "DPDK port %u (%s): link is down, going on", pt.port, drv);

	memcpy(&ip, c->ip.ip, 4);
	if (c->ip.family == 4 && c->arp_probe_ms > 0 && arp_probe(mac, ip, c->arp_probe_ms, &who)) {
		char whos[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(whos, sizeof(whos), &who);
		NRF_LOG(ERR, MOD, "address %u.%u.%u.%u is already in use on DPDK port %u "
			"(answered by %s)", c->ip.ip[0], c->ip.ip[1], c->ip.ip[2], c->ip.ip[3],
			pt.port, whos);
		return NRF_EEXIST;
	}
	return 0;
}

/*
 * Lending (zero-copy TX) only where the PMD copies the frame inside
 * rte_eth_tx_burst() and frees the mbuf there: net_af_packet (into the
 * packet ring) and net_tap (writev). A NIC would DMA from the buffer,
 * which lwIP's memory is not registered for, and free it later.
 */
static void
lend_setup(const char *drv)
{
	unsigned int i;

	/* Not on a tagged port: the tag goes in front of the frame, which a
	 * lent buffer has no room for (vlan_tx()). */
	pt.tx_lend = pt.vlan == 0 &&
		(strcmp(drv, "net_af_packet") == 0 || strcmp(drv, "net_tap") == 0);
	pt.lend_free = NULL;
	for (i = 0; i < RTE_DIM(lends); i++) {
		lends[i].next = pt.lend_free;
		pt.lend_free = &lends[i];
	}
}

/*
 * The one way to a usable port, for every role: the owner (single process,
 * primary) configures and starts it and probes the address; a worker takes
 * the primary's pool and its own queue pair. Then both look at the same
 * device the same way (MAC, MTU, offloads), share the worker rings
 * (lib/dp) when there are workers, and start lwIP unless this is the
 * primary, which runs no stack.
 */
static int
port_open(const struct nrf_tp_dpdk_conf *c, bool vdev)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t rxd = c->rx_desc, txd = c->tx_desc, mtu = STD_MTU, q;
	char macs[RTE_ETHER_ADDR_FMT_SIZE], vl[96];
	char addrs[128];
	const char *drv;
	int socket, rc;

	if (!pt.port_owner) {
		if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
			NRF_LOG(ERR, MOD, "a DPDK worker must start as an EAL secondary process "
				"(--proc-type=secondary with the primary's --file-prefix)");
			return NRF_EINVAL;
		}
		pt.pool = rte_mempool_lookup(POOL_NAME);
		if (pt.pool == NULL) {
			NRF_LOG(ERR, MOD, "no packet pool from the primary process (is it running "
				"with the same --file-prefix?)");
			return NRF_ENOENT;
		}
	}
	rc = choose_port(c->port_id, pt.port_owner && vdev, &pt.port);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_info_get(pt.port, &info);
	if (rc != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u: no device info: %s", pt.port, rte_strerror(-rc));
		return NRF_EIO;
	}
	drv = info.driver_name != NULL ? info.driver_name : "?";
	socket = rte_eth_dev_socket_id(pt.port);
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = pt.port_owner ? port_configure(c, &info, drv, socket, &rxd, &txd) :
		port_join(c, &info);
	if (rc != 0)
		return rc;
	if (rte_eth_macaddr_get(pt.port, &mac) != 0) {
		NRF_LOG(ERR, MOD, "DPDK port %u (%s): no MAC address", pt.port, drv);
		return NRF_EIO;
	}
	rte_ether_format_addr(macs, sizeof(macs), &mac);
	/* Set on the device by the owner (port_mtu()); a worker takes the same
	 * configuration, and the primary's pool was sized for it. */
	if (c->mtu != 0)
		mtu = c->mtu;
	else if (rte_eth_dev_get_mtu(pt.port, &mtu) != 0 || mtu > STD_MTU)
		mtu = STD_MTU; /* the device's: beyond 1500 only when configured */
	if (pt.port_owner) {
		if (mtu < 576) {
			NRF_LOG(ERR, MOD, "DPDK port %u (%s): MTU %u too small", pt.port, drv, mtu);
			return NRF_EIO;
		}
		rc = port_claim(c, &mac, drv);
		if (rc != 0)
			return rc;
	}
	/* Worker rings (ARP copies, steered frames): the primary makes them,
	 * its workers find them. */
	if (pt.role == NRF_DP_PRIMARY || pt.role == NRF_DP_SECONDARY) {
		rc = pt.role == NRF_DP_PRIMARY ? nrf_dp_rings_create(pt.nq, socket) :
			nrf_dp_rings_lookup(pt.nq);
		if (rc != 0)
			return rc;
		for (q = 0; q < pt.nq; q++)
			pt.ring[q] = nrf_dp_ring(q);
	}
	vlan_describe(vl, sizeof(vl));
	if (pt.role == NRF_DP_PRIMARY) {
		/* No stack here: the workers bring theirs. */
		NRF_LOG(INFO, MOD, "DPDK port %u (%s) up for %u workers: mac %s, "
			"%s, mtu %u, %u/%u descriptors per queue%s", pt.port, drv, pt.nq,
			macs, addrs_str(c, addrs, sizeof(addrs)), mtu, rxd, txd, vl);
		return 0;
	}
	lend_setup(drv);
	rc = nrf_tp_lw_start(c, mac.addr_bytes, mtu);
	if (rc != 0) {
		NRF_LOG(ERR, MOD, "cannot start the TCP/IP stack: %s", nrf_strerror(rc));
		return rc;
	}
	(void)nrf_tp_dp_tx_flush(); /* the gratuitous ARP of netif_set_up() */
	if (pt.role == NRF_DP_SECONDARY)
		NRF_LOG(INFO, MOD, "worker on DPDK port %u queue %u of %u (%s), lcore %u, checksum "
			"offload rx %s tx %s%s", pt.port, pt.queue, pt.nq, drv, rte_lcore_id(),
			csum_name(pt.csum & (NRF_TP_DP_CSUM_RX_IP | NRF_TP_DP_CSUM_RX_TCP)),
			csum_name(pt.csum & (NRF_TP_DP_CSUM_TX_IP | NRF_TP_DP_CSUM_TX_TCP)), vl);
	else
		NRF_LOG(INFO, MOD, "DPDK port %u (%s) up: mac %s, %s, mtu %u, "
			"%u/%u descriptors, checksum offload rx %s tx %s%s", pt.port, drv, macs,
			addrs_str(c, addrs, sizeof(addrs)), mtu, rxd,
			txd, csum_name(pt.csum & (NRF_TP_DP_CSUM_RX_IP | NRF_TP_DP_CSUM_RX_TCP)),
			csum_name(pt.csum & (NRF_TP_DP_CSUM_TX_IP | NRF_TP_DP_CSUM_TX_TCP)), vl);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Public start/stop                                                         */

void
nrf_tp_dpdk_conf_defaults(struct nrf_tp_dpdk_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->role = NRF_DP_SINGLE;
	conf->port_id = -1;
	conf->rx_desc = 1024;
	conf->tx_desc = 1024;
	conf->mbufs = 8191;
	conf->mbuf_cache = 256;
	conf->burst = 32;
	conf->idle_spin = 512;
	conf->idle_sleep_us = 100;
	conf->idle_sleep_max_us = 1000;
	conf->arp_probe_ms = 300;
	conf->link_wait_ms = 2000;
	conf->arp_rate = 200;
	conf->arp_stranger_rate = 20;
	conf->stray_rst_rate = 200;
	conf->challenge_ack_rate = 1000;
	conf->syn_cookie_from = 128;
	conf->syn_rcvd_timeout_ms = 20000;
	conf->synack_retries = 5;
	conf->pci_nic_intended = false;
}

int
nrf_tp_dpdk_init(int argc, char **argv, const struct nrf_tp_dpdk_conf *conf)
{
	struct nrf_dp_conf dc;
	struct nrf_dp_eal_args f;
	int n, rc;

	rc = check_conf(conf);
	if (rc != 0)
		return rc;
	/* Before the EAL: rte_eal_init() reorders argv. */
	(void)nrf_dp_eal_scan(argc, argv, &f);
	dc.role = conf->role;
	dc.pci_nic_intended = conf->pci_nic_intended;
	n = nrf_dp_eal_init(argc, argv, &dc);
	if (n < 0)
		return n;
	pt.hz = nrf_dp_tsc_hz();
	pt.conf = *conf;
	pt.vlan = conf->vlan;
	memcpy(&pt.ip_be, conf->ip.ip, 4);
	pt.role = nrf_dp_role();
	pt.nq = (uint16_t)(pt.role == NRF_DP_PRIMARY ? nrf_dp_workers() : 1);
	pt.port_owner = pt.role != NRF_DP_SECONDARY;
	rc = port_open(conf, f.vdev);
	if (rc != 0) {
		port_release();
		nrf_dp_eal_fini();
		return rc;
	}
	/* A primary runs no stack: no loop may be created on it. */
	pt.ready = pt.role != NRF_DP_PRIMARY;
	return n;
}

unsigned int
nrf_tp_dpdk_queues(void)
{
	return pt.nq;
}

void
nrf_tp_dpdk_fini(void)
{
	if (!nrf_dp_up())
		return;
	if (nrf_tp_lw_busy())
		NRF_LOG(WARN, MOD, "DPDK transport stopped while its loop still exists");
	(void)nrf_dp_join();
	if (pt.ready)
		nrf_tp_lw_stop();
	pt.ready = false;
	port_release();
	nrf_dp_eal_fini();
}

bool
nrf_tp_dp_ready(void)
{
	return pt.ready;
}

int
nrf_tp_dpdk_launch(int (*fn)(void *), void *arg)
{
	if (!pt.ready)
		return NRF_EINVAL;
	return nrf_dp_launch(fn, arg);
}

int
nrf_tp_dpdk_join(void)
{
	return nrf_dp_join();
}

/* ------------------------------------------------------------------------ */
/* Data path                                                                 */

static inline struct acct *
cur_acct(void)
{
	return my_acct != NULL ? my_acct : &acct[RTE_MAX_LCORE];
}

struct nrf_tp_dpdk_lcore_stats *
nrf_tp_dp_lcore_stats(void)
{
	return &cur_acct()->st;
}

/* First poll on this thread: an lcore id (registering a non-EAL thread, so
 * it gets a mempool cache) and the accounting slot that goes with it. */
static struct acct *
acct_attach(void)
{
	unsigned int lc = rte_lcore_id();

	if (lc == LCORE_ID_ANY && rte_thread_register() == 0)
		lc = rte_lcore_id();
	if (lc >= RTE_MAX_LCORE)
		lc = RTE_MAX_LCORE;
	/* Idle sleeps of this thread as short as configured, not 50 µs longer
	 * (the default timer slack). */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	my_acct = &acct[lc];
	my_acct->st.vlan = pt.vlan;
	my_acct->st.vlan_offloads = pt.vlan_ol;
	my_acct->used = 1;
	__atomic_store_n(&pt.poll_lcore, (int)lc, __ATOMIC_RELAXED);
	return my_acct;
}

uint64_t
nrf_tp_dp_iter_begin(void)
{
	uint64_t now = rte_rdtsc();
	struct acct *a = my_acct;

	if (unlikely(a == NULL))
		a = acct_attach();
	if (likely(a->last_entry != 0)) {
		uint64_t d = now - a->last_entry;

		a->st.cycles += d;
		if (a->last_busy)
			a->st.busy_cycles += d;
	}
	a->last_entry = now;
	return now;
}

void
nrf_tp_dp_iter_end(uint64_t t0, bool busy)
{
	struct acct *a = my_acct;

	rel_flush();
	a->st.iterations++;
	a->last_busy = busy;
	if (busy) {
		a->st.busy_iterations++;
		a->st.poll_busy_cycles += rte_rdtsc() - t0;
		/* Only busy iterations: busy_cycles is what rx_cycles is
		 * taken out of. */
		a->st.rx_cycles += a->iter_rx;
	}
	a->iter_rx = 0;
}

/* Spin first (a busy peer answers within microseconds), then sleep; the
 * longer the spell, the longer the sleep (doubling every 16 sleeps). */
void
nrf_tp_dp_idle(uint32_t empty, int timeout_ms)
{
	uint64_t us = pt.conf.idle_sleep_us;
	uint32_t shift;

	if (empty <= pt.conf.idle_spin || us == 0 || timeout_ms == 0) {
		rte_pause();
		return;
	}
	shift = (empty - pt.conf.idle_spin - 1) / 16;
	us <<= NRF_MIN(shift, 16u);
	if (us > pt.conf.idle_sleep_max_us)
		us = NRF_MAX(pt.conf.idle_sleep_max_us, pt.conf.idle_sleep_us);
	if (timeout_ms > 0 && (uint64_t)timeout_ms * 1000u < us)
		us = (uint64_t)timeout_ms * 1000u;
	rte_delay_us_sleep((unsigned int)us);
	cur_acct()->st.idle_sleeps++;
}

/*
 * Frames between workers (one ring per worker, many producers).
 *
 * ARP: an ARP reply answers whichever worker asked, and a gratuitous ARP or
 * a request from a neighbour teaches every worker. So each worker copies
 * the ARP frames it receives into the rings of the others, except a request
 * for our own address (it answers that itself; the others would only
 * answer again). Copies are marked in mbuf->port so they are not shared
 * twice.
 *
 * TCP: a worker's outgoing connections use local ports p with
 * p % queues == its queue (nrf_tp_dp_next_port()). The device may put the
 * answer on another queue: net_tap's kernel side records a flow's queue only
 * after it has delivered the flow's first frame, so the peer's SYN-ACK can
 * beat it; a NIC's RSS hash knows nothing of our port shares. Such a frame
 * goes to its owner's ring as it is; without this the wrong lwIP would
 * answer it with a reset.
 */
#define ARP_SHARED_MARK UINT16_MAX

/* The worker owning TCP frame @p m, or -1: this one (not TCP, or not to one
 * of the workers' outgoing ports). IPv4 or IPv6 (TCP right after the fixed
 * header) without VLAN: what lwIP takes. */
static int
steer_owner(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ih;
	const struct rte_tcp_hdr *th;
	unsigned int ihl;
	uint16_t dport;

	if (m->data_len < sizeof(*eh) + sizeof(*ih) + sizeof(*th))
		return -1;
	if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv6_hdr *h6 = (const struct rte_ipv6_hdr *)(eh + 1);

		if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) ||
			m->data_len < sizeof(*eh) + sizeof(*h6) + sizeof(*th) ||
			h6->proto != IPPROTO_TCP)
			return -1;
		th = (const struct rte_tcp_hdr *)(h6 + 1);
		dport = rte_be_to_cpu_16(th->dst_port);
		return dport < EPHEMERAL_FIRST ? -1 : (int)(dport % pt.nq);
	}
	ih = (const struct rte_ipv4_hdr *)(eh + 1);
	ihl = (ih->version_ihl & 0x0fu) * 4u;
	if (ih->next_proto_id != IPPROTO_TCP || ihl < sizeof(*ih) ||
		m->data_len < sizeof(*eh) + ihl + sizeof(*th) ||
		(ih->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return -1;
	th = (const struct rte_tcp_hdr *)((const char *)ih + ihl);
	dport = rte_be_to_cpu_16(th->dst_port);
	if (dport < EPHEMERAL_FIRST)
		return -1;
	return (int)(dport % pt.nq);
}

static void
arp_share(struct rte_mbuf *m, struct acct *a)
{
	const struct rte_ether_hdr *eh;
	const struct rte_arp_hdr *ah;
	uint16_t q;

	if (m->port == ARP_SHARED_MARK || m->nb_segs != 1 ||
		m->data_len < sizeof(*eh) + sizeof(*ah))
		return;
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		/* IPv6: neighbour advertisements (ICMPv6 type 136, no extension
		 * header), the answers to a worker's solicitation; each lwIP
		 * takes one only for an entry of its own. Solicitations are
		 * answered by the worker that received them. */
		const struct rte_ipv6_hdr *h6 = (const struct rte_ipv6_hdr *)(eh + 1);

		if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) ||
			m->data_len < sizeof(*eh) + sizeof(*h6) + 24 || h6->proto != 58 ||
			((const uint8_t *)(h6 + 1))[0] != 136)
			return;
	} else {
		ah = (const struct rte_arp_hdr *)(eh + 1);
		if (ah->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
			ah->arp_data.arp_tip == pt.ip_be && ah->arp_data.arp_sip != pt.ip_be)
			return;
	}
	for (q = 0; q < pt.nq; q++) {
		struct rte_mbuf *c;

		if (q == pt.queue || pt.ring[q] == NULL)
			continue;
		c = rte_pktmbuf_copy(m, pt.pool, 0, UINT32_MAX);
		if (c == NULL)
			continue;
		c->port = ARP_SHARED_MARK;
		if (rte_ring_mp_enqueue(pt.ring[q], c) != 0)
			rte_pktmbuf_free(c);
		else
			a->st.arp_shared++;
	}
}

static uint16_t
arp_take(struct rte_mbuf **pkts, uint16_t room)
{
	unsigned int n;

	if (room == 0)
		return 0;
	n = rte_ring_sc_dequeue_burst(pt.ring[pt.queue], (void **)pkts, room, NULL);
	cur_acct()->st.from_workers += n;
	return (uint16_t)n;
}

unsigned int
nrf_tp_dp_csum_offloads(void)
{
	return pt.csum;
}

/*
 * With RX checksum offload lwIP does not check IPv4 or TCP checksums (its
 * netif says so), so this must: false for a frame the device found bad,
 * and for one it left unknown whose checksum is wrong.
 */
static bool
rx_csum_ok(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ih;
	uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	unsigned int hl;

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (m->data_len < sizeof(*eh) + sizeof(*ih) ||
		eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return true; /* ARP; short frames are lwIP's to drop */
	ih = (const struct rte_ipv4_hdr *)(eh + 1);
	hl = rte_ipv4_hdr_len(ih);
	if (hl < sizeof(*ih) || m->data_len < sizeof(*eh) + hl)
		return true; /* lwIP drops it */
	if (ip != RTE_MBUF_F_RX_IP_CKSUM_GOOD && ip != RTE_MBUF_F_RX_IP_CKSUM_NONE &&
		(pt.csum & NRF_TP_DP_CSUM_RX_IP) && rte_raw_cksum(ih, hl) != 0xffff)
		return false;
	if (ih->next_proto_id == IPPROTO_TCP && (pt.csum & NRF_TP_DP_CSUM_RX_TCP) &&
		l4 != RTE_MBUF_F_RX_L4_CKSUM_GOOD && l4 != RTE_MBUF_F_RX_L4_CKSUM_NONE) {
		uint16_t tot = rte_be_to_cpu_16(ih->total_length);
		uint32_t sum;

		if (tot < hl + 20 || m->data_len < sizeof(*eh) + tot ||
			(ih->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
				RTE_IPV4_HDR_OFFSET_MASK)) != 0)
			return true; /* lwIP drops it (no reassembly) */
		/* Pseudo header + segment, its checksum field included: all ones. */
		sum = (uint32_t)rte_ipv4_phdr_cksum(ih, 0) +
			rte_raw_cksum((const uint8_t *)ih + hl, tot - hl);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		return sum == 0xffff;
	}
	return true;
}

unsigned int
nrf_tp_dp_rx(nrf_tp_dp_rx_fn fn, void *arg)
{
	struct rte_mbuf *pkts[BURST_MAX];
	struct acct *a = cur_acct();
	uint16_t n, i, nfree = 0;
	uint64_t t0;
	int r;

	t0 = rte_rdtsc();
	n = rte_eth_rx_burst(pt.port, pt.queue, pkts, pt.conf.burst);
	a->iter_rx += rte_rdtsc() - t0;
	if (unlikely(pt.vlan != 0) && n > 0) {
		/* Before steering: the owner's port is behind the tag. */
		uint16_t k = vlan_rx(pkts, n, &a->st.rx_vlan_other);

		a->st.rx_frames += n - k; /* received, dropped */
		n = k;
	}
	if (pt.nq > 1 && pt.ring[pt.queue] != NULL) {
		uint16_t k = 0;

		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			int owner = steer_owner(m);

			if (owner >= 0 && owner != pt.queue) {
				if (rte_ring_mp_enqueue(pt.ring[owner], m) != 0) {
					rte_pktmbuf_free(m);
					a->st.rx_dropped++;
				} else {
					a->st.steered++;
				}
				continue;
			}
			if (owner < 0)
				arp_share(m, a);
			pkts[k++] = m;
		}
		a->st.rx_frames += n - k; /* received here, processed elsewhere */
		n = k;
		n += arp_take(pkts + n, (uint16_t)(pt.conf.burst - n));
	}
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		/* No scatter offload is configured and a standard frame fits
		 * one mbuf: a chained mbuf is not ours to handle. */
		if (m->nb_segs != 1 ||
			((pt.csum & (NRF_TP_DP_CSUM_RX_IP | NRF_TP_DP_CSUM_RX_TCP)) &&
				!rx_csum_ok(m)))
			r = NRF_TP_DP_RX_DROP;
		else
			r = fn(arg, rte_pktmbuf_mtod(m, void *), m->data_len, m);
		if (r & NRF_TP_DP_RX_DROP)
			a->st.rx_dropped++;
		if (!(r & NRF_TP_DP_RX_KEPT))
			pkts[nfree++] = m; /* i >= nfree: never overwrites one not yet seen */
	}
	if (nfree > 0)
		rte_pktmbuf_free_bulk(pkts, nfree);
	a->st.rx_frames += n;
	return n;
}

void
nrf_tp_dp_rx_release(void *frame)
{
	pt.rel[pt.nrel++] = frame;
	if (pt.nrel == BURST_MAX)
		rel_flush();
}

void *
nrf_tp_dp_tx_reserve(uint16_t len)
{
	struct rte_mbuf *m;
	char *p;

	if (pt.ntx >= pt.conf.burst)
		(void)nrf_tp_dp_tx_flush();
	m = rte_pktmbuf_alloc(pt.pool);
	if (unlikely(m == NULL)) {
		cur_acct()->st.tx_nombuf++;
		return NULL;
	}
	p = rte_pktmbuf_append(m, len);
	if (unlikely(p == NULL)) {
		rte_pktmbuf_free(m);
		cur_acct()->st.tx_nombuf++;
		return NULL;
	}
	pt.txb[pt.ntx++] = m;
	return p;
}

/* The device is done with a lent frame (inside rte_pktmbuf_free()). */
static void
lend_free_cb(void *addr, void *opaque)
{
	struct lend *l = opaque;

	(void)addr;
	nrf_tp_lw_tx_release(l->cookie);
	l->cookie = NULL;
	l->next = pt.lend_free;
	pt.lend_free = l;
}

bool
nrf_tp_dp_tx_lends(void)
{
	return pt.tx_lend;
}

int
nrf_tp_dp_tx_lend(void *data, uint16_t len, void *cookie)
{
	struct lend *l = pt.lend_free;
	struct rte_mbuf *m;

	if (!pt.tx_lend || l == NULL)
		return -1;
	if (pt.ntx >= pt.conf.burst)
		(void)nrf_tp_dp_tx_flush(); /* may give slots back */
	l = pt.lend_free;
	if (l == NULL)
		return -1;
	m = rte_pktmbuf_alloc(pt.pool);
	if (unlikely(m == NULL)) {
		cur_acct()->st.tx_nombuf++;
		return -1;
	}
	pt.lend_free = l->next;
	l->cookie = cookie;
	l->sh.free_cb = lend_free_cb;
	l->sh.fcb_opaque = l;
	rte_mbuf_ext_refcnt_set(&l->sh, 1);
	/* No IO address: these PMDs only read the frame by its virtual one. */
	rte_pktmbuf_attach_extbuf(m, data, RTE_BAD_IOVA, len, &l->sh);
	m->data_len = len;
	m->pkt_len = len;
	pt.txb[pt.ntx++] = m;
	return 0;
}

void
nrf_tp_dp_tx_offload(void)
{
	struct rte_mbuf *m;
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ih;
	unsigned int hl;

	if (pt.ntx == 0)
		return;
	m = pt.txb[pt.ntx - 1];
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (m->data_len < sizeof(*eh) + sizeof(*ih) ||
		eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return;
	ih = (struct rte_ipv4_hdr *)(eh + 1);
	hl = rte_ipv4_hdr_len(ih);
	m->l2_len = sizeof(*eh);
	m->l3_len = hl;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	if (pt.csum & NRF_TP_DP_CSUM_TX_IP) {
		ih->hdr_checksum = 0;
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	}
	if ((pt.csum & NRF_TP_DP_CSUM_TX_TCP) && ih->next_proto_id == IPPROTO_TCP &&
		m->data_len >= sizeof(*eh) + hl + sizeof(struct rte_tcp_hdr)) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ih + hl);

		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		/* What devices expect there: the pseudo-header sum. */
		th->cksum = rte_ipv4_phdr_cksum(ih, m->ol_flags);
	}
}

unsigned int
nrf_tp_dp_tx_flush(void)
{
	struct acct *a;
	uint16_t n = pt.ntx, done = 0;
	uint64_t t0;
	int tries;

	if (n == 0)
		return 0;
	a = cur_acct();
	if (unlikely(pt.vlan != 0)) {
		n = vlan_tx(pt.txb, n, a);
		pt.ntx = n;
	}
	t0 = rte_rdtsc();
	for (tries = 0; done < n && tries <= TX_RETRIES; tries++)
		done += rte_eth_tx_burst(pt.port, pt.queue, pt.txb + done, (uint16_t)(n - done));
	a->st.tx_cycles += rte_rdtsc() - t0;
	if (unlikely(done < n)) {
		rte_pktmbuf_free_bulk(pt.txb + done, (unsigned int)(n - done));
		a->st.tx_dropped += (uint64_t)(n - done);
	}
	a->st.tx_frames += done;
	pt.ntx = 0;
	return done;
}

uint16_t
nrf_tp_dp_next_port(void)
{
	static uint32_t next;
	uint32_t p;

	if (pt.nq <= 1)
		return 0;
	/* The first port >= 49152 with port % queues == queue, then every
	 * queues-th one; round again after 65535. */
	if (next == 0)
		next = EPHEMERAL_FIRST + (pt.queue + pt.nq - EPHEMERAL_FIRST % pt.nq) % pt.nq;
	p = next;
	next += pt.nq;
	if (next > UINT16_MAX)
		next = 0;
	return (uint16_t)p;
}

uint64_t
nrf_tp_dp_tsc(void)
{
	return rte_rdtsc();
}

uint64_t
nrf_tp_dp_hz(void)
{
	return pt.hz;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

int
nrf_tp_dpdk_lcore_stats(unsigned int lcore_id, struct nrf_tp_dpdk_lcore_stats *out)
{
	const struct acct *a;

	if (lcore_id > RTE_MAX_LCORE)
		return NRF_EINVAL;
	a = &acct[lcore_id];
	if (!a->used)
		return NRF_ENOENT;
	*out = a->st;
	return 0;
}

int
nrf_tp_dpdk_poll_lcore(void)
{
	return __atomic_load_n(&pt.poll_lcore, __ATOMIC_RELAXED);
}

uint64_t
nrf_tp_dpdk_tsc_hz(void)
{
	return pt.hz;
}

int
nrf_tp_dpdk_port_stats(struct nrf_tp_dpdk_port_stats *out)
{
	struct rte_eth_stats s;

	if (!pt.port_started)
		return NRF_EINVAL;
	if (rte_eth_stats_get(pt.port, &s) != 0)
		return NRF_EIO;
	out->ipackets = s.ipackets;
	out->opackets = s.opackets;
	out->ibytes = s.ibytes;
	out->obytes = s.obytes;
	out->imissed = s.imissed;
	out->ierrors = s.ierrors;
	out->oerrors = s.oerrors;
	out->rx_nombuf = s.rx_nombuf;
	return 0;
}

int
nrf_tp_dpdk_port_xstats(struct nrf_tp_dpdk_xstat *out, unsigned int max)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *vals = NULL;
	int n, k, i, w = 0;

	if (!pt.port_started)
		return NRF_EINVAL;
	n = rte_eth_xstats_get_names(pt.port, NULL, 0);
	if (n < 0)
		return NRF_EIO;
	if (n == 0)
		return 0;
	names = calloc((size_t)n, sizeof(*names));
	vals = calloc((size_t)n, sizeof(*vals));
	if (names == NULL || vals == NULL) {
		free(names);
		free(vals);
		return NRF_ENOMEM;
	}
	k = rte_eth_xstats_get_names(pt.port, names, (unsigned int)n);
	n = k > 0 && k <= n ? rte_eth_xstats_get(pt.port, vals, (unsigned int)k) : -1;
	if (n > k)
		n = -1;
	for (i = 0; i < n && (unsigned int)w < max; i++) {
		if (vals[i].id >= (uint64_t)k)
			continue;
		snprintf(out[w].name, sizeof(out[w].name), "%s", names[vals[i].id].name);
		out[w].value = vals[i].value;
		w++;
	}
	free(names);
	free(vals);
	return n < 0 ? NRF_EIO : w;
}
