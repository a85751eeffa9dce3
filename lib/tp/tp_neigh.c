/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbours of the DPDK + lwIP transport: see tp_neigh.h and decision
 * 0056. A set-associative table (NEIGH_SETS sets of NEIGH_WAYS entries,
 * the set chosen by a keyed hash of the address): a lookup reads one set,
 * a new entry takes a free way of its set or the least recently used
 * stranger's, never a pinned one's.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lwip/err.h"
#include "lwip/ip4_addr.h"
#if LWIP_IPV6
#include "lwip/ethip6.h"
#endif
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ethernet.h"
#include "netif/ethernet.h"
#ifdef NRF_LWIP_OWN
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/tcp.h"
#include "lwip/tcp.h"
#include "nrf_lwip_hooks.h"
#endif

#include "nrf_err.h"
#include "nrf_tp_dpdk.h"
#include "tp_dpdk_shim.h"
#include "tp_neigh.h"

#define NEIGH_SETS 512
#define NEIGH_WAYS 8
#define NEIGH_QLEN 16          /* packets queued per unresolved pinned entry
				* (a burst of connects to a new peer: a SYN
				* each, as lwIP's ARP_QUEUE_LEN) */
#define NEIGH_QLEN_STRANGER 3  /* ... per stranger entry */
#define NEIGH_Q_STRANGERS 32   /* ... by all stranger entries together */
#define NEIGH_RETRY_MS 1000    /* ARP request again after */
#define NEIGH_TRIES 3          /* requests before an entry fails */
#define NEIGH_REFRESH_MS 120000 /* a used entry confirmed longer ago is asked again */
#define NEIGH_STALE_MS 300000  /* a stranger entry unconfirmed this long is freed */
#define NEIGH_TICK_MS 100

#define ETH_HLEN 14
#define ARP_LEN 28

enum nstate {
	NS_FREE = 0,
	NS_PENDING,  /* ARP asked, packets may wait */
	NS_RESOLVED,
	NS_FAILED,   /* no answer: packets dropped until the next try */
};

struct neigh {
	uint32_t ip;           /* network order; 0 = free */
	uint32_t pins;
	uint8_t mac[6];
	uint8_t state;
	uint8_t tries;
	uint8_t nq;
	uint8_t used;          /* sent through since the last tick */
	uint64_t stamp_ms;     /* last use (LRU) */
	uint64_t confirmed_ms; /* the MAC was last learnt */
	uint64_t next_ms;      /* next ARP request (PENDING, FAILED) */
	struct pbuf *q[NEIGH_QLEN];
};

struct bucket {
	uint32_t tokens;
	uint32_t rate;  /* per second, also the burst */
	uint32_t milli; /* thousandths of a token carried to the next refill */
};

static struct {
	struct neigh *tab;     /* NEIGH_SETS * NEIGH_WAYS */
	struct netif *nif;
	uint32_t key;
	uint32_t ip, mask, gw;
	uint64_t now_ms;
	uint64_t next_tick_ms;
	uint64_t refill_ms;
	uint32_t q_strangers;
	bool rx;               /* a received frame is being processed */
	bool mute;             /* ... and answers to it are not sent */
	bool rx6;              /* an IPv6 frame is being processed */
	uint32_t rx_ip;
	const uint8_t *rx_mac;
	struct bucket arp_pinned, arp_stranger, rst, challenge;
	struct nrf_tp_dpdk_lcore_stats *st;
	struct nrf_tp_dpdk_lcore_stats before; /* counters before the first poll */
} nb;

static const struct eth_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

static inline struct neigh *
set_of(uint32_t ip)
{
	uint32_t h = (ip ^ nb.key) * 0x9e3779b1u;

	return &nb.tab[(h >> 16) % NEIGH_SETS * NEIGH_WAYS];
}

static inline struct neigh *
find(uint32_t ip)
{
	struct neigh *s = set_of(ip);
	unsigned int i;

	for (i = 0; i < NEIGH_WAYS; i++)
		if (s[i].ip == ip)
			return &s[i];
	return NULL;
}

static bool
spend(struct bucket *b)
{
	if (b->tokens == 0)
		return false;
	b->tokens--;
	return true;
}

static void
q_drop(struct neigh *n)
{
	unsigned int i;

	for (i = 0; i < n->nq; i++)
		pbuf_free(n->q[i]);
	if (n->pins == 0)
		nb.q_strangers -= n->nq;
	n->nq = 0;
}

static void
entry_free(struct neigh *n)
{
	q_drop(n);
	if (n->pins > 0)
		nb.st->neigh_pinned--;
	memset(n, 0, sizeof(*n));
	nb.st->neigh_entries--;
}

/* An entry for @p ip in its set: a free way, else the least recently used
 * stranger (evicted). NULL: every way is pinned. */
static struct neigh *
entry_new(uint32_t ip)
{
	struct neigh *s = set_of(ip), *lru = NULL;
	unsigned int i;

	for (i = 0; i < NEIGH_WAYS; i++) {
		if (s[i].ip == 0) {
			lru = &s[i];
			break;
		}
		if (s[i].pins == 0 && (lru == NULL || s[i].stamp_ms < lru->stamp_ms))
			lru = &s[i];
	}
	if (lru == NULL) {
		nb.st->neigh_refused++;
		return NULL;
	}
	if (lru->ip != 0) {
		entry_free(lru);
		nb.st->neigh_evicted++;
	}
	lru->ip = ip;
	lru->state = NS_PENDING;
	lru->stamp_ms = nb.now_ms;
	nb.st->neigh_entries++;
	return lru;
}

/* One ARP frame: @p op to @p dst_mac (@p tha in the payload), asking for or
 * telling about @p tip. */
static void
arp_send(uint16_t op, const uint8_t *dst_mac, const uint8_t *tha, uint32_t tip)
{
	uint8_t *f = nrf_tp_dp_tx_reserve(ETH_HLEN + ARP_LEN);
	const uint8_t *own = nb.nif->hwaddr;

	if (f == NULL)
		return;
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, own, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[14] = 0;
	f[15] = 1;    /* Ethernet */
	f[16] = 0x08;
	f[17] = 0x00; /* IPv4 */
	f[18] = 6;
	f[19] = 4;
	f[20] = (uint8_t)(op >> 8);
	f[21] = (uint8_t)op;
	memcpy(f + 22, own, 6);
	memcpy(f + 28, &nb.ip, 4);
	memcpy(f + 32, tha, 6);
	memcpy(f + 38, &tip, 4);
	if (op == 1)
		nb.st->arp_requests++;
	else
		nb.st->arp_replies++;
}

/* Ask for @p n's MAC (broadcast, or unicast to the MAC it has when
 * @p refresh), within the budget of its kind. */
static bool
ask(struct neigh *n, bool refresh)
{
	static const uint8_t zero[6];

	if (!spend(n->pins > 0 ? &nb.arp_pinned : &nb.arp_stranger)) {
		nb.st->arp_limited++;
		return false;
	}
	arp_send(1, refresh ? n->mac : bcast.addr, zero, n->ip);
	return true;
}

static err_t
send_to(struct netif *nif, struct pbuf *p, const uint8_t *mac)
{
	return ethernet_output(nif, p, (const struct eth_addr *)(const void *)nif->hwaddr,
		(const struct eth_addr *)(const void *)mac, ETHTYPE_IP);
}

static void
flush_q(struct neigh *n)
{
	unsigned int i, nq = n->nq;

	if (n->pins == 0)
		nb.q_strangers -= nq;
	n->nq = 0;
	for (i = 0; i < nq; i++) {
		(void)send_to(nb.nif, n->q[i], n->mac);
		pbuf_free(n->q[i]);
	}
}

static void
learn(struct neigh *n, const uint8_t *mac)
{
	memcpy(n->mac, mac, 6);
	n->state = NS_RESOLVED;
	n->tries = 0;
	n->confirmed_ms = nb.now_ms;
	flush_q(n);
}

static void
enqueue(struct neigh *n, struct pbuf *p)
{
	struct pbuf *q;

	if (n->nq >= NEIGH_QLEN || (n->pins == 0 && (n->nq >= NEIGH_QLEN_STRANGER ||
		nb.q_strangers >= NEIGH_Q_STRANGERS))) {
		nb.st->neigh_queue_drops++;
		return;
	}
	/* As etharp_query(): pbufs whose data may change before the answer
	 * comes are copied, the others referenced. */
	for (q = p; q != NULL; q = q->next)
		if (PBUF_NEEDS_COPY(q))
			break;
	if (q != NULL) {
		q = pbuf_clone(PBUF_LINK, PBUF_RAM, p);
		if (q == NULL) {
			nb.st->neigh_queue_drops++;
			return;
		}
	} else {
		q = p;
		pbuf_ref(q);
	}
	n->q[n->nq++] = q;
	if (n->pins == 0)
		nb.q_strangers++;
}

/* An RST in answer to the segment being processed: within the budget? */
static bool
rst_ok(const struct pbuf *p)
{
	const uint8_t *ip = p->payload;
	unsigned int ihl;

	if (p->len < 20 || ip[9] != 6)
		return true;
	ihl = (ip[0] & 0x0fu) * 4u;
	if (p->len < ihl + 14u || !(ip[ihl + 13] & 0x04))
		return true;
	if (!spend(&nb.rst)) {
		nb.st->rst_limited++;
		return false;
	}
	nb.st->rst_sent++;
	return true;
}

#if LWIP_IPV6
void
tp_neigh_rx6_begin(void)
{
	nb.rx6 = true;
}

void
tp_neigh_rx6_end(void)
{
	nb.rx6 = false;
}

err_t
tp_neigh_output6(struct netif *nif, struct pbuf *p, const ip6_addr_t *dst)
{
	const uint8_t *ip = p->payload;

	/* A TCP RST (next header TCP, RST flag) answering the frame being
	 * processed: the same budget as IPv4's (rst_ok()). */
	if (nb.rx6 && p->len >= 40 + 14 && ip[6] == 6 && (ip[40 + 13] & 0x04)) {
		if (nb.mute)
			return ERR_OK;
		if (!spend(&nb.rst)) {
			nb.st->rst_limited++;
			return ERR_OK;
		}
		nb.st->rst_sent++;
	}
	return ethip6_output(nif, p, dst);
}
#endif

err_t
tp_neigh_output(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst)
{
	uint32_t d = ip4_addr_get_u32(dst), hop;
	struct neigh *n;

	if (nb.rx && d == nb.rx_ip) {
		/* An answer to the frame being processed. */
		if (nb.mute || !rst_ok(p))
			return ERR_OK;
		nb.st->neigh_direct++;
		return send_to(nif, p, nb.rx_mac);
	}
	if (d == UINT32_MAX || (d | nb.mask) == UINT32_MAX)
		return send_to(nif, p, bcast.addr);
	if (ip4_addr_ismulticast(dst))
		return ERR_RTE; /* nothing here sends multicast */
	if (((d ^ nb.ip) & nb.mask) == 0)
		hop = d;
	else if (nb.gw != 0)
		hop = nb.gw;
	else
		return ERR_RTE;
	n = find(hop);
	if (n != NULL && n->state == NS_RESOLVED) {
		n->stamp_ms = nb.now_ms;
		n->used = 1;
		return send_to(nif, p, n->mac);
	}
	if (n == NULL) {
		n = entry_new(hop);
		if (n == NULL) {
			nb.st->neigh_queue_drops++;
			return ERR_OK;
		}
	}
	n->stamp_ms = nb.now_ms;
	if (n->state == NS_FAILED) {
		if (nb.now_ms < n->next_ms) {
			nb.st->neigh_queue_drops++;
			return ERR_OK;
		}
		n->state = NS_PENDING;
		n->tries = 0;
	}
	if (n->tries == 0 && ask(n, false)) {
		n->tries = 1;
		n->next_ms = nb.now_ms + NEIGH_RETRY_MS;
	}
	enqueue(n, p);
	return ERR_OK;
}

void
tp_neigh_rx_begin(uint32_t src_ip, const uint8_t *src_mac)
{
	nb.rx = true;
	nb.rx_ip = src_ip;
	nb.rx_mac = src_mac;
}

void
tp_neigh_mute(bool on)
{
	nb.mute = on;
}

void
tp_neigh_rx_end(void)
{
	nb.rx = false;
}

void
tp_neigh_arp_input(const uint8_t *f, uint16_t len)
{
	uint32_t sip, tip;
	uint16_t op;
	struct neigh *n;

	if (len < ETH_HLEN + ARP_LEN || f[14] != 0 || f[15] != 1 || f[16] != 0x08 ||
		f[17] != 0x00 || f[18] != 6 || f[19] != 4)
		return;
	op = (uint16_t)(f[20] << 8 | f[21]);
	memcpy(&sip, f + 28, 4);
	memcpy(&tip, f + 38, 4);
	/* Not the sender MAC: a tap's kernel side may share the port's MAC. */
	if (sip == nb.ip || (f[22] & 1))
		return; /* ours, or a conflict tp_dpdk.c's probe deals with */
	if (sip != 0) {
		n = find(sip);
		if (n != NULL)
			learn(n, f + 22);
	}
	if (op == 1 && tip == nb.ip && sip != 0)
		arp_send(2, f + 22, f + 22, sip);
}

void
tp_neigh_pin(uint32_t ip)
{
	struct neigh *n;
	uint32_t hop = ((ip ^ nb.ip) & nb.mask) == 0 ? ip : nb.gw;

	if (hop == 0 || nb.tab == NULL)
		return;
	n = find(hop);
	if (n == NULL) {
		n = entry_new(hop);
		if (n == NULL)
			return;
	}
	if (n->pins++ == 0) {
		nb.st->neigh_pinned++;
		nb.q_strangers -= n->nq; /* its queue no longer counts there */
	}
	if (n->state != NS_RESOLVED && nb.rx && nb.rx_ip == hop)
		learn(n, nb.rx_mac);
}

void
tp_neigh_unpin(uint32_t ip)
{
	struct neigh *n;
	uint32_t hop = ((ip ^ nb.ip) & nb.mask) == 0 ? ip : nb.gw;

	if (hop == 0 || nb.tab == NULL)
		return;
	n = find(hop);
	if (n == NULL || n->pins == 0)
		return; /* the pin was refused */
	if (--n->pins == 0) {
		nb.st->neigh_pinned--;
		nb.q_strangers += n->nq;
	}
}

void
tp_neigh_probe(uint32_t ip)
{
	struct neigh *n = find(((ip ^ nb.ip) & nb.mask) == 0 ? ip : nb.gw);

	if (n != NULL && n->state == NS_RESOLVED)
		(void)ask(n, false);
}

static void
refill(struct bucket *b, uint64_t ms)
{
	uint64_t m = (uint64_t)b->rate * ms + b->milli;
	uint64_t t = b->tokens + m / 1000;

	b->milli = (uint32_t)(m % 1000);
	if (t >= b->rate) {
		t = b->rate;
		b->milli = 0;
	}
	b->tokens = (uint32_t)t;
}

static struct bucket
bucket(uint32_t rate)
{
	rate = rate > 0 ? rate : 1;
	return (struct bucket){rate, rate, 0};
}

void
tp_neigh_tick(uint64_t now_ms)
{
	unsigned int i;

	nb.st = nrf_tp_dp_lcore_stats();
	if (nb.st != &nb.before && nb.before.neigh_entries + nb.before.neigh_pinned > 0) {
		/* The first poll on this thread: carry over the gauges. */
		nb.st->neigh_entries += nb.before.neigh_entries;
		nb.st->neigh_pinned += nb.before.neigh_pinned;
		memset(&nb.before, 0, sizeof(nb.before));
	}
	nb.now_ms = now_ms;
	if (now_ms < nb.next_tick_ms || nb.tab == NULL)
		return;
	nb.next_tick_ms = now_ms + NEIGH_TICK_MS;
	refill(&nb.arp_pinned, now_ms - nb.refill_ms);
	refill(&nb.arp_stranger, now_ms - nb.refill_ms);
	refill(&nb.rst, now_ms - nb.refill_ms);
	refill(&nb.challenge, now_ms - nb.refill_ms);
	nb.refill_ms = now_ms;
	for (i = 0; i < NEIGH_SETS * NEIGH_WAYS; i++) {
		struct neigh *n = &nb.tab[i];

		if (n->ip == 0)
			continue;
		switch (n->state) {
		case NS_PENDING:
			if (now_ms < n->next_ms)
				break;
			if (n->tries >= NEIGH_TRIES) {
				q_drop(n);
				if (n->pins == 0) {
					entry_free(n);
				} else {
					n->state = NS_FAILED;
					n->next_ms = now_ms + NEIGH_RETRY_MS;
				}
				break;
			}
			if (ask(n, false))
				n->tries++;
			n->next_ms = now_ms + NEIGH_RETRY_MS;
			break;
		case NS_RESOLVED:
			if (now_ms - n->confirmed_ms < NEIGH_REFRESH_MS)
				break;
			if (n->pins == 0 && now_ms - n->confirmed_ms >= NEIGH_STALE_MS) {
				entry_free(n);
				break;
			}
			if (n->used && now_ms >= n->next_ms) {
				/* Still the same neighbour? The answer confirms it;
				 * until then the MAC it has is used. Unicast first,
				 * broadcast once that went unanswered for 30 s (the
				 * neighbour may have a new MAC). */
				(void)ask(n, now_ms - n->confirmed_ms < NEIGH_REFRESH_MS + 30000);
				n->next_ms = now_ms + NEIGH_RETRY_MS * 10;
			}
			n->used = 0;
			break;
		case NS_FAILED:
			if (n->pins == 0)
				entry_free(n);
			break;
		default:
			break;
		}
	}
}

#ifdef NRF_LWIP_OWN
/*
 * A segment of a connection lwIP would answer with nothing but an ACK
 * (RFC 5961: a challenge ACK; RFC 793: an unacceptable segment): an RST
 * inside the window but not at its left edge, a SYN, an ACK of data never
 * sent, a segment wholly outside the receive window. Such ACKs are on the
 * challenge budget; without a token the segment is dropped unanswered
 * (dropping is what lwIP does with it after the ACK anyway). As lwIP
 * itself decides (tcp_process(), tcp_receive()); TIME_WAIT and the
 * handshake states are left to lwIP.
 */
static s8_t
tcp_in(struct tcp_pcb *pcb, const struct tcp_hdr *h, const struct pbuf *p)
{
	u8_t fl;
	u32_t seq, len;
	bool challenge;

	if (pcb->state < ESTABLISHED || pcb->state > LAST_ACK)
		return ERR_OK;
	fl = TCPH_FLAGS(h);
	seq = h->seqno; /* host order by now */
	if (fl & TCP_RST) {
		challenge = seq != pcb->rcv_nxt &&
			TCP_SEQ_BETWEEN(seq, pcb->rcv_nxt, pcb->rcv_nxt + pcb->rcv_wnd);
	} else if (fl & TCP_SYN) {
		challenge = true;
	} else if ((fl & TCP_ACK) && TCP_SEQ_GT(h->ackno, pcb->snd_nxt)) {
		challenge = true;
	} else {
		len = p->tot_len + ((fl & TCP_FIN) ? 1u : 0u);
		if (len == 0)
			challenge = !TCP_SEQ_BETWEEN(seq, pcb->rcv_nxt,
				pcb->rcv_nxt + pcb->rcv_wnd - 1);
		else
			challenge = TCP_SEQ_LT(seq + len - 1, pcb->rcv_nxt) ||
				TCP_SEQ_GEQ(seq, pcb->rcv_nxt + pcb->rcv_wnd);
	}
	if (!challenge)
		return ERR_OK;
	if (!spend(&nb.challenge)) {
		nb.st->challenge_limited++;
		return ERR_ABRT;
	}
	nb.st->challenge_acks++;
	return ERR_OK;
}
#endif

int
tp_neigh_init(struct netif *nif, uint32_t ip, uint32_t mask, uint32_t gw,
	const struct tp_neigh_budgets *b)
{
	if (nb.tab == NULL) {
		nb.tab = calloc(NEIGH_SETS * NEIGH_WAYS, sizeof(*nb.tab));
		if (nb.tab == NULL)
			return NRF_ENOMEM;
	}
	if (getrandom(&nb.key, sizeof(nb.key), 0) != sizeof(nb.key))
		nb.key = (uint32_t)nrf_tp_dp_tsc();
	nb.nif = nif;
	nb.ip = ip;
	nb.mask = mask;
	nb.gw = ((gw ^ ip) & mask) == 0 ? gw : 0;
	nb.st = &nb.before;
	nb.now_ms = nb.refill_ms = sys_now();
	nb.arp_pinned = bucket(b->arp_pinned);
	nb.arp_stranger = bucket(b->arp_stranger);
	nb.rst = bucket(b->stray_rst);
	nb.challenge = bucket(b->challenge_ack);
#ifdef NRF_LWIP_OWN
	nrf_lwip_tcp_in_fn = tcp_in;
#endif
	if (nb.gw != 0)
		tp_neigh_pin(nb.gw);
	return 0;
}

void
tp_neigh_fini(void)
{
	unsigned int i;

#ifdef NRF_LWIP_OWN
	nrf_lwip_tcp_in_fn = NULL;
#endif
	if (nb.tab == NULL)
		return;
	for (i = 0; i < NEIGH_SETS * NEIGH_WAYS; i++)
		q_drop(&nb.tab[i]);
	free(nb.tab);
	nb.tab = NULL;
	nb.st = &nb.before;
}
