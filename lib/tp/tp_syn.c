/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN cookies in front of lwIP's listen path: see tp_syn.h and decision
 * 0057. The cookie is Linux's (net/ipv4/syncookies.c):
 *   cookie = H0(addrs, ports) + their ISN + (slot << 24)
 *            + ((H1(addrs, ports, slot) + data) mod 2^24)
 * with slot = minutes of 64 s (a cookie is valid in its slot and the next),
 * data = the MSS index (3 bits), window scaling offered (1 bit) and its
 * shift (4 bits); H0, H1 = SipHash-2-4 under two random keys.
 */
#include <string.h>
#include <sys/random.h>

#include "lwip/err.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "nrf_tp_dpdk.h"
#include "tp_demux.h"
#include "tp_dpdk_shim.h"
#include "tp_neigh.h"
#include "tp_syn.h"

#ifdef NRF_LWIP_OWN
#include "nrf_lwip_hooks.h"

#define ETH_HLEN 14
#define SLOT_MS 64000u
#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_ACK 0x10

static const uint16_t msstab[] = {536, 1300, 1440, 1460, 8960};

static struct {
	uint64_t key[2][2];
	uint32_t ip;
	uint8_t mac[6];
	uint16_t mss;          /* announced */
	uint64_t now_ms;
	uint64_t last_sent_ms; /* a cookie was sent (0: never) */
	uint32_t cookie_from;  /* half-open connections from which cookies answer */
} sy;

static uint32_t
hash(int k, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t slot)
{
	uint8_t in[16];

	memcpy(in, &saddr, 4);
	memcpy(in + 4, &daddr, 4);
	memcpy(in + 8, &sport, 2);
	memcpy(in + 10, &dport, 2);
	memcpy(in + 12, &slot, 4);
	return (uint32_t)nrf_lwip_siphash24(in, sizeof(in), sy.key[k]);
}

static uint32_t
cookie_make(uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t sseq,
	uint32_t data)
{
	uint32_t slot = (uint32_t)(sy.now_ms / SLOT_MS);

	return hash(0, saddr, daddr, sport, dport, 0) + sseq + (slot << 24) +
		((hash(1, saddr, daddr, sport, dport, slot) + data) & 0xffffffu);
}

/* The data of a valid cookie, or -1. */
static int
cookie_check(uint32_t cookie, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
	uint32_t sseq)
{
	uint32_t slot = (uint32_t)(sy.now_ms / SLOT_MS);
	uint32_t c = cookie - hash(0, saddr, daddr, sport, dport, 0) - sseq;
	uint32_t diff = (slot - (c >> 24)) & 0xffu;
	uint32_t data;

	if (diff > 1)
		return -1; /* older than the previous slot */
	data = (c - hash(1, saddr, daddr, sport, dport, slot - diff)) & 0xffffffu;
	return data < 256 && (data & 7u) < sizeof(msstab) / sizeof(msstab[0]) ? (int)data : -1;
}

static struct tcp_pcb_listen *
listener(uint16_t port, uint32_t dst)
{
	struct tcp_pcb_listen *l;

	for (l = tcp_listen_pcbs.listen_pcbs; l != NULL; l = l->next)
		if (l->local_port == port && !IP_IS_V6_VAL(l->local_ip) &&
			(ip_addr_isany(&l->local_ip) ||
				ip4_addr_get_u32(ip_2_ip4(&l->local_ip)) == dst))
			return l;
	return NULL;
}

/* MSS and window scale options of a SYN (@p th, header of @p thl bytes). */
static void
syn_options(const uint8_t *th, unsigned int thl, uint16_t *mss, int *ws)
{
	unsigned int i = 20;

	*mss = 536;
	*ws = -1;
	while (i < thl) {
		uint8_t kind = th[i];

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= thl || th[i + 1] < 2 || i + th[i + 1] > thl)
			break;
		if (kind == 2 && th[i + 1] == 4)
			*mss = (uint16_t)(th[i + 2] << 8 | th[i + 3]);
		else if (kind == 3 && th[i + 1] == 3)
			*ws = th[i + 2] > 14 ? 14 : th[i + 2];
		i += th[i + 1];
	}
}

static uint16_t
ip_sum(const uint8_t *ip)
{
	return (uint16_t)~nrf_lwip_fold64(nrf_lwip_ip4_hdr_sum(ip, 20));
}

/* The SYN-ACK of a cookie, to the frame's source (MAC included). */
static void
send_synack(const uint8_t *f, const uint8_t *ip, const uint8_t *th, uint32_t cookie,
	uint32_t sseq, int ws)
{
	unsigned int olen = ws >= 0 ? 8 : 4, tot = 20 + 20 + olen;
	uint8_t *o = nrf_tp_dp_tx_reserve((uint16_t)(ETH_HLEN + tot));
	uint8_t *oi, *ot;
	uint32_t v;
	uint16_t s;

	if (o == NULL)
		return;
	memcpy(o, f + 6, 6);
	memcpy(o + 6, sy.mac, 6);
	o[12] = 0x08;
	o[13] = 0x00;
	oi = o + ETH_HLEN;
	memset(oi, 0, tot);
	oi[0] = 0x45;
	oi[2] = (uint8_t)(tot >> 8);
	oi[3] = (uint8_t)tot;
	oi[6] = 0x40; /* DF */
	oi[8] = TCP_TTL;
	oi[9] = 6;
	memcpy(oi + 12, ip + 16, 4);
	memcpy(oi + 16, ip + 12, 4);
	s = ip_sum(oi);
	memcpy(oi + 10, &s, 2);
	ot = oi + 20;
	memcpy(ot, th + 2, 2);
	memcpy(ot + 2, th, 2);
	v = lwip_htonl(cookie);
	memcpy(ot + 4, &v, 4);
	v = lwip_htonl(sseq + 1);
	memcpy(ot + 8, &v, 4);
	ot[12] = (uint8_t)(((20 + olen) / 4) << 4);
	ot[13] = F_SYN | F_ACK;
	ot[14] = 0xff;
	ot[15] = 0xff;
	ot[20] = 2;
	ot[21] = 4;
	ot[22] = (uint8_t)(sy.mss >> 8);
	ot[23] = (uint8_t)sy.mss;
	if (ws >= 0) {
		ot[24] = 1;
		ot[25] = 3;
		ot[26] = 3;
		ot[27] = TCP_RCV_SCALE;
	}
	nrf_lwip_ip4_tcp_csum_fill(oi, (u16_t)tot);
}

/* Is there a connection of this 4-tuple already (a retransmitted ACK)? */
static bool
known(uint32_t src, uint16_t sport, uint16_t dport)
{
	const struct tcp_pcb *p = tp_demux_find(src, sport, dport);

	return p != NULL && p->state != TIME_WAIT;
}

/* The SYN the cookie stands for, handed to lwIP (its answer muted). */
static void
inject_syn(struct netif *nif, const uint8_t *f, const uint8_t *ip, const uint8_t *th,
	uint32_t sseq, uint32_t cookie, int data)
{
	unsigned int olen = (data & 8) ? 8 : 4, tot = 20 + 20 + olen;
	uint16_t mss = msstab[data & 7], s;
	struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(ETH_HLEN + tot), PBUF_RAM);
	uint8_t *o, *oi, *ot;
	uint32_t v;

	if (p == NULL)
		return;
	o = p->payload;
	memcpy(o, f, ETH_HLEN);
	oi = o + ETH_HLEN;
	memset(oi, 0, tot);
	oi[0] = 0x45;
	oi[2] = (uint8_t)(tot >> 8);
	oi[3] = (uint8_t)tot;
	oi[8] = 64;
	oi[9] = 6;
	memcpy(oi + 12, ip + 12, 8);
	s = ip_sum(oi);
	memcpy(oi + 10, &s, 2);
	ot = oi + 20;
	memcpy(ot, th, 4);
	v = lwip_htonl(sseq);
	memcpy(ot + 4, &v, 4);
	ot[12] = (uint8_t)(((20 + olen) / 4) << 4);
	ot[13] = F_SYN;
	memcpy(ot + 14, th + 14, 2); /* their window */
	ot[20] = 2;
	ot[21] = 4;
	ot[22] = (uint8_t)(mss >> 8);
	ot[23] = (uint8_t)mss;
	if (data & 8) {
		ot[24] = 1;
		ot[25] = 3;
		ot[26] = 3;
		ot[27] = (uint8_t)((unsigned int)data >> 4);
	}
	nrf_lwip_ip4_tcp_csum_fill(oi, (u16_t)tot);
	nrf_lwip_isn_next = cookie;
	nrf_lwip_isn_next_set = 1;
	tp_neigh_mute(true);
	if (tp_demux_input(nif, p, oi, (uint16_t)tot) != ERR_OK)
		pbuf_free(p);
	tp_neigh_mute(false);
	nrf_lwip_isn_next_set = 0;
}

bool
tp_syn_input(struct netif *nif, const uint8_t *f, uint16_t len)
{
	const uint8_t *ip = f + ETH_HLEN, *th;
	unsigned int ihl = (ip[0] & 0x0fu) * 4u, thl;
	struct tcp_pcb_listen *l;
	uint32_t src, dst, seq, ack;
	uint16_t sport, dport;
	uint8_t fl;

	if (ip[9] != 6 || ihl < 20 || len < ETH_HLEN + ihl + 20u || (ip[6] & 0x3fu) != 0 ||
		ip[7] != 0)
		return false;
	th = ip + ihl;
	fl = th[13];
	if ((fl & (F_SYN | F_ACK | F_RST)) == F_SYN) {
		/* A SYN: lwIP's while the listener has room for half-open ones. */
	} else if ((fl & (F_SYN | F_ACK | F_RST)) == F_ACK && sy.last_sent_ms != 0 &&
		sy.now_ms - sy.last_sent_ms < 2 * SLOT_MS) {
		/* An ACK while cookies are out: maybe one of them. */
	} else {
		return false;
	}
	dport = (uint16_t)(th[2] << 8 | th[3]);
	memcpy(&dst, ip + 16, 4);
	l = listener(dport, dst);
	if (l == NULL)
		return false;
	memcpy(&src, ip + 12, 4);
	sport = (uint16_t)(th[0] << 8 | th[1]);
	seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	if (fl & F_SYN) {
		uint16_t mss;
		int ws;
		uint32_t i, data = 0;

		if (l->accepts_pending < sy.cookie_from)
			return false;
		thl = (th[12] >> 4) * 4u;
		if (thl < 20 || len < ETH_HLEN + ihl + thl)
			return true; /* malformed: lwIP would drop it too */
		syn_options(th, thl, &mss, &ws);
		for (i = 0; i < sizeof(msstab) / sizeof(msstab[0]); i++)
			if (msstab[i] <= mss)
				data = i;
		if (ws >= 0)
			data |= 8u | (uint32_t)ws << 4;
		send_synack(f, ip, th, cookie_make(src, dst, sport, dport, seq, data), seq, ws);
		sy.last_sent_ms = sy.now_ms != 0 ? sy.now_ms : 1;
		nrf_tp_dp_lcore_stats()->syn_cookies_sent++;
		return true;
	}
	{
		int data;

		ack = (uint32_t)th[8] << 24 | (uint32_t)th[9] << 16 | (uint32_t)th[10] << 8 | th[11];
		data = cookie_check(ack - 1, src, dst, sport, dport, seq - 1);
		if (data < 0 || known(src, sport, dport))
			return false;
		if (l->accepts_pending >= l->backlog) {
			nrf_tp_dp_lcore_stats()->listen_overflows++;
			return true;
		}
		inject_syn(nif, f, ip, th, seq - 1, ack - 1, data);
		nrf_tp_dp_lcore_stats()->syn_cookies_ok++;
		return false;
	}
}

void
tp_syn_init(uint32_t ip, const uint8_t mac[6], uint16_t mtu, uint32_t cookie_from)
{
	sy.cookie_from = cookie_from;
	if (getrandom(sy.key, sizeof(sy.key), 0) != (ssize_t)sizeof(sy.key)) {
		uint64_t t = nrf_tp_dp_tsc();

		sy.key[0][0] = t * 0x9e3779b97f4a7c15ULL;
		sy.key[0][1] = t ^ 0xa5a5a5a5a5a5a5a5ULL;
		sy.key[1][0] = sy.key[0][0] * 31 + 7;
		sy.key[1][1] = sy.key[0][1] * 131 + 3;
	}
	sy.ip = ip;
	memcpy(sy.mac, mac, 6);
	sy.mss = (uint16_t)(mtu - 40 < TCP_MSS ? mtu - 40 : TCP_MSS);
	sy.last_sent_ms = 0;
}

void
tp_syn_tick(uint64_t now_ms)
{
	sy.now_ms = now_ms;
}

#else /* Debian's liblwip: no ISN hook, no cookies */

void
tp_syn_init(uint32_t ip, const uint8_t mac[6], uint16_t mtu, uint32_t cookie_from)
{
	(void)cookie_from;
	(void)ip;
	(void)mac;
	(void)mtu;
}

bool
tp_syn_input(struct netif *nif, const uint8_t *frame, uint16_t len)
{
	(void)nif;
	(void)frame;
	(void)len;
	return false;
}

void
tp_syn_tick(uint64_t now_ms)
{
	(void)now_ms;
}
#endif
