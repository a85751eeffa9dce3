/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lwIP side of the DPDK + lwIP transport: the netif on the DPDK port and
 * the TCP raw API mapped onto the nrf_tp ops (nrf_tp.h, nrf_tp_dpdk.h).
 * No DPDK header may appear here (they clash with lwIP's): tp_dpdk.c is
 * reached only through tp_dpdk_shim.h.
 *
 * lwIP runs without its tcpip thread: lwip_init() only, frames fed to
 * netif->input from poll(), sys_check_timeouts() about every millisecond,
 * frames out through linkoutput into the DPDK TX batch. Everything lwIP
 * does therefore happens on the polling thread, inside poll() or inside an
 * op the owner calls (read, writev, close, connect, listen).
 *
 * lwIP callbacks never run a handler. They only record event bits on the
 * connection or listener and put it on the loop's pending list; poll()
 * dispatches that list after lwIP is done with the burst. A handler may
 * therefore close any connection: close() unlinks it from the pending list
 * and frees it at once, so no handler of it can run afterwards, and no
 * lwIP callback can reach it because its pcb's arg and callbacks are
 * cleared first. Entries raised while the list is being dispatched wait for
 * the next poll(), so a handler cannot keep one poll() running forever.
 *
 * ACKs are coalesced with what the owner writes. lwIP acknowledges every
 * second received segment at once and opens the window with an immediate
 * ACK whenever a read frees more than TCP_WND_UPDATE_THRESHOLD: pure ACKs,
 * each one a frame (on virtual ports a whole trip through the kernel's
 * receive path). Both are deferred to the end of the loop iteration (the
 * next poll() entry, or a writev() before it, whose data segment then
 * carries them): a request/response peer sees one segment where it saw
 * two. Out-of-order segments, FINs and timers still ACK at once.
 *
 * Two lwIPs (decision 0010): our own build (NRF_LWIP_OWN, NO_SYS=1, pools,
 * checksums per netif) and Debian's liblwip. With the own build received
 * frames are read in place (a pbuf_custom over the mbuf, given back when
 * the pbuf is freed) up to a quarter of the mbuf pool, then copied into
 * PBUF_POOL pbufs; lwIP leaves out the checksums the port offloads, and
 * those the port does not are computed here, on the whole frame, instead of
 * by lwIP (IPv4 header and TCP checks in rx_frame(), the TCP checksum in
 * link_out(); decision 0044): one pass over contiguous bytes where lwIP
 * walks a pbuf chain per checksum. With Debian's, every frame is copied
 * into a PBUF_RAM pbuf and every checksum is lwIP's.
 *
 * Loopback traffic is impossible here on purpose: lwIP's netif loopback
 * path (Debian's build; ours has none) hands packets to the tcpip thread
 * (an assertion abort without one),
 * so connects to the own address or 127/8 fail at once and frames that
 * claim such a source are dropped before lwIP sees them (one spoofed SYN
 * would otherwise abort the process). Only IPv4 and ARP frames reach lwIP.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "lwip/err.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/ip_addr.h"
#if LWIP_IPV6
#include "lwip/ip6_addr.h"
#endif
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#ifdef NRF_LWIP_OWN
#include "nrf_lwip_hooks.h"
#endif

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp.h"
#include "nrf_tp_dpdk.h"
#include "tp_demux.h"
#include "tp_dpdk_shim.h"
#include "tp_neigh.h"
#include "tp_syn.h"

#define MOD "tp-dpdk"
#define DEFAULT_BACKLOG 1024
#define POLL_TICKS 2   /* lwIP poll callback every 2 x 500 ms */
#define ETH_HLEN 14
#define ETHTYPE_IPV4_HI 0x08
#define ETHTYPE_IPV4_LO 0x00
#define ETHTYPE_ARP_HI 0x08
#define ETHTYPE_ARP_LO 0x06
#define ETHTYPE_IPV6_HI 0x86
#define ETHTYPE_IPV6_LO 0xdd

enum conn_state {
	CS_CONNECTING = 0,
	CS_OPEN,
	CS_FAILED,
};

/* What a connection and a listener share: handler and pending events. */
struct src {
	TAILQ_ENTRY(src) pend;
	unsigned int ev;
	uint32_t gen;     /* dispatch pass that queued it */
	uint8_t queued;
	nrf_tp_event_fn fn;
	void *ctx;
};

TAILQ_HEAD(src_list, src);

struct nrf_tp_conn {
	struct src s; /* first member */
	struct nrf_tp_loop *loop;
	struct tcp_pcb *pcb;          /* NULL once lwIP freed it (error) */
	struct nrf_tp_listener *lst;  /* while waiting for accept() */
	STAILQ_ENTRY(nrf_tp_conn) acq;
	struct pbuf *rx_head;         /* received, not yet read (own list: ->next) */
	struct pbuf *rx_tail;
	struct pbuf *rx_lent;         /* its bytes returned by read_ref(): freed
				       * by the next read/read_ref/close */
	uint16_t rx_off;              /* bytes of rx_head already read */
	uint8_t state;
	uint8_t eof;
	uint8_t want_out;
	uint8_t owed;                 /* on loop->owed */
	uint8_t ack_owed;             /* an immediate ACK was deferred */
	uint32_t recved;              /* read, window not yet opened by it */
	TAILQ_ENTRY(nrf_tp_conn) owe;
	int err;
	struct nrf_tp_addr peer;
	uint8_t pinned;               /* tp_neigh_pin() of peer taken */
};

TAILQ_HEAD(conn_list, nrf_tp_conn);

STAILQ_HEAD(conn_fifo, nrf_tp_conn);

struct nrf_tp_listener {
	struct src s; /* first member */
	struct nrf_tp_loop *loop;
	struct tcp_pcb *pcb;
	struct conn_fifo acq;
	unsigned int n_acq;
	unsigned int backlog;
};

struct nrf_tp_loop {
	struct src_list pending;
	struct conn_list owed;   /* ACKs / window updates deferred this iteration */
	uint32_t gen;
	uint32_t empty;          /* empty iterations in a row */
	uint64_t next_tmr;       /* TSC of the next sys_check_timeouts() */
	uint64_t tmr_period;
	uint64_t next_sample_ms; /* sample_use() */
	atomic_uint wake;
	nrf_tp_wake_fn wake_fn;
	void *wake_ctx;
};

/* Checksums done by the transport instead of lwIP: own build only (it has
 * per-netif checksum control and nrf_lwip_ip4_*_csum*()). */
#if defined(NRF_LWIP_OWN) && LWIP_CHECKSUM_CTRL_PER_NETIF
#define TP_SW_CSUM 1
#else
#define TP_SW_CSUM 0
#endif

#ifdef NRF_LWIP_OWN
/* A received frame lwIP reads in place: a custom pbuf over the mbuf's data
 * (decision 0010). */
struct rx_ref {
	struct pbuf_custom pc; /* first member: lwIP frees it by its pbuf */
	void *frame;
	struct rx_ref *next;   /* free list */
};
#endif

static struct {
	struct netif netif;
	bool up;
	bool tx_offload;         /* the port fills checksums lwIP leaves out */
	bool sw_rx_ip;           /* rx_frame() checks IPv4 header checksums */
	bool sw_rx_tcp;          /* rx_frame() checks TCP checksums */
	bool sw_tx_tcp;          /* link_out() fills TCP checksums */
#ifdef NRF_LWIP_OWN
	struct rx_ref *refs;     /* hold_max of them */
	struct rx_ref *ref_free;
	uint32_t hold_max;       /* frames lwIP and unread data may keep */
	uint32_t held;
#endif
	uint8_t mac[6];
	uint16_t mtu;
	uint32_t ip;             /* network byte order; 0: no IPv4 */
#if LWIP_IPV6
	bool v6;                 /* an IPv6 address is configured */
	uint8_t prefix6;         /* its on-link prefix length */
	ip6_addr_t ip6;
	ip6_addr_t gw6;          /* zero: none */
#endif
	struct nrf_tp_loop *loop;
	uint32_t syn_rcvd_ticks; /* runtime.dpdk.synRcvdTimeoutMs in lwIP's slow ticks */
	uint32_t synack_retries; /* runtime.dpdk.synAckRetries */
	uint64_t next_reap_ms;   /* orphans: not before (the walk costs) */
} lw;

/* ------------------------------------------------------------------------ */
/* Netif                                                                     */

void
nrf_tp_lw_tx_release(void *cookie)
{
	pbuf_free(cookie);
}

/*
 * A frame in one pbuf (the usual case: lwIP builds a segment's headers in
 * front of its data, TCP_OVERSIZE appends in place) is lent to the device
 * where the port allows it (decision 0036): the segment's pbuf, which lwIP
 * keeps for retransmission anyway, is the frame; one reference more keeps
 * it until the device is done. Nothing lwIP does to a sent segment changes
 * the lent bytes before that, except rewriting the same headers for a
 * retransmission within the same iteration, which sends the same frame
 * twice. Chained frames are copied.
 */
/* An IPv4 or IPv6 frame of @p len bytes at @p f: its TCP checksum, where
 * neither lwIP nor the port computes it. */
static inline void
tx_csum(uint8_t *f, uint16_t len)
{
#if TP_SW_CSUM
	if (lw.sw_tx_tcp && len >= ETH_HLEN + 40 && f[12] == ETHTYPE_IPV4_HI &&
		f[13] == ETHTYPE_IPV4_LO)
		nrf_lwip_ip4_tcp_csum_fill(f + ETH_HLEN, (u16_t)(len - ETH_HLEN));
#if LWIP_IPV6
	/* IPv6: always here (the port's TX offload is set up for IPv4 only;
	 * lwIP leaves TCP checksums out on this netif). */
	else if (f[12] == ETHTYPE_IPV6_HI && f[13] == ETHTYPE_IPV6_LO)
		nrf_lwip_ip6_tcp_csum_fill(f + ETH_HLEN, (u16_t)(len - ETH_HLEN));
#endif
#else
	(void)f;
	(void)len;
#endif
}

static err_t
link_out(struct netif *nif, struct pbuf *p)
{
	void *d;

	(void)nif;
	if (p->next == NULL && nrf_tp_dp_tx_lends()) {
		/* The checksum goes into lwIP's segment, where lwIP itself
		 * would write it (it rewrites the field on a retransmission). */
		tx_csum(p->payload, p->len);
		pbuf_ref(p);
		if (nrf_tp_dp_tx_lend(p->payload, p->len, p) == 0) {
			if (lw.tx_offload)
				nrf_tp_dp_tx_offload();
			return ERR_OK;
		}
		pbuf_free(p); /* the reference just taken */
	}
	d = nrf_tp_dp_tx_reserve(p->tot_len);
	if (d == NULL)
		return ERR_MEM;
	(void)pbuf_copy_partial(p, d, p->tot_len, 0);
	tx_csum(d, p->tot_len);
	if (lw.tx_offload)
		nrf_tp_dp_tx_offload();
	return ERR_OK;
}

#if TP_SW_CSUM
/*
 * Who computes which checksum. The port: those it offloads (decision
 * 0010). The rest of IPv4 and TCP: this file, on whole frames (rx_frame(),
 * link_out(); decision 0044), never lwIP, whose per-pbuf-chain checksum
 * costs more per call (measured); lwIP keeps the IPv4 header
 * checksum it writes (inline from the fields, LWIP_INLINE_IP_CHKSUM) and
 * ICMP (no device offloads it).
 */
static void
netif_checksums(struct netif *nif)
{
	unsigned int ol = nrf_tp_dp_csum_offloads();
	u16_t fl = NETIF_CHECKSUM_ENABLE_ALL;

	fl &= (u16_t)~(NETIF_CHECKSUM_GEN_TCP | NETIF_CHECKSUM_CHECK_IP |
		NETIF_CHECKSUM_CHECK_TCP);
	if (ol & NRF_TP_DP_CSUM_TX_IP)
		fl &= (u16_t)~NETIF_CHECKSUM_GEN_IP;
	NETIF_SET_CHECKSUM_CTRL(nif, fl);
	lw.tx_offload = (ol & (NRF_TP_DP_CSUM_TX_IP | NRF_TP_DP_CSUM_TX_TCP)) != 0;
	lw.sw_tx_tcp = !(ol & NRF_TP_DP_CSUM_TX_TCP);
	lw.sw_rx_ip = !(ol & NRF_TP_DP_CSUM_RX_IP);
	lw.sw_rx_tcp = !(ol & NRF_TP_DP_CSUM_RX_TCP);
}
#else
/* Debian's liblwip: checksums always in software, the port's offloads
 * unused (tp_dpdk.c still checks what the device reports bad or unknown). */
static void
netif_checksums(struct netif *nif)
{
	(void)nif;
	lw.tx_offload = false;
}
#endif

static err_t
netif_setup(struct netif *nif)
{
	nif->name[0] = 'd';
	nif->name[1] = 'p';
	nif->output = tp_neigh_output; /* not etharp_output (decision 0056) */
#if LWIP_IPV6
	nif->output_ip6 = tp_neigh_output6; /* lwIP's nd6 (decision 0065) */
#endif
	nif->linkoutput = link_out;
	nif->mtu = lw.mtu;
	nif->hwaddr_len = ETH_HWADDR_LEN;
	memcpy(nif->hwaddr, lw.mac, ETH_HWADDR_LEN);
	nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
	netif_checksums(nif);
	return ERR_OK;
}

/* Loopback would reach lwIP's tcpip-thread path (see the top of the file). */
static bool
bad_source(uint32_t src_be)
{
	const uint8_t *b = (const uint8_t *)&src_be;

	return src_be == lw.ip || b[0] == 127 || src_be == 0;
}

#if LWIP_IPV6
/* The same for IPv6 (@p a: 16 bytes in network order): one of our own
 * addresses, ::1, ::, multicast, or IPv4-mapped. */
static bool
bad_source6(const uint8_t *a)
{
	static const uint8_t zero[16];
	int i;

	if (a[0] == 0xff)
		return true;
	if (memcmp(a, zero, 10) == 0 && ((a[10] == 0xff && a[11] == 0xff) ||
		    (memcmp(a + 10, zero, 5) == 0 && a[15] <= 1)))
		return true; /* ::ffff:0:0/96, ::, ::1 */
	for (i = 0; i < LWIP_IPV6_NUM_ADDRESSES; i++)
		if (!ip6_addr_isinvalid(netif_ip6_addr_state(&lw.netif, i)) &&
			memcmp(netif_ip6_addr(&lw.netif, i)->addr, a, 16) == 0)
			return true;
	return false;
}

#ifndef NRF_LWIP_OWN
/* Debian's liblwip has no such hook: only lw_connect() asks. */
const struct ip6_addr *nrf_lwip_nd6_get_gw(struct netif *netif, const struct ip6_addr *dest);
#endif

const struct ip6_addr *
nrf_lwip_nd6_get_gw(struct netif *netif, const struct ip6_addr *dest)
{
	const uint8_t *d = (const uint8_t *)dest->addr, *m = (const uint8_t *)lw.ip6.addr;
	unsigned int bits = lw.prefix6, i;

	(void)netif;
	for (i = 0; bits >= 8; i++, bits -= 8)
		if (d[i] != m[i])
			goto off_link;
	if (bits == 0 || ((d[i] ^ m[i]) >> (8 - bits)) == 0)
		return dest; /* inside the configured prefix: on-link */
off_link:
	return ip6_addr_isany_val(lw.gw6) ? NULL : &lw.gw6;
}
#endif

#ifdef NRF_LWIP_OWN
static void
rx_ref_free(struct pbuf *p)
{
	struct rx_ref *r = (struct rx_ref *)(void *)p;

	/* After nrf_tp_dpdk_fini() began the pool is going away with its
	 * mbufs: nothing to give back. */
	if (nrf_tp_dp_ready())
		nrf_tp_dp_rx_release(r->frame);
	r->frame = NULL;
	r->next = lw.ref_free;
	lw.ref_free = r;
	lw.held--;
}

/*
 * Zero-copy while the pool has room: lwIP and unread connection data keep
 * at most hold_max mbufs (a quarter of the pool), so a peer that does not
 * read, or out-of-order queues, cannot starve the RX ring; beyond that,
 * frames are copied into PBUF_POOL pbufs and the mbuf goes back at once.
 */
static struct pbuf *
rx_ref(void *data, uint16_t len, void *frame)
{
	struct rx_ref *r = lw.ref_free;
	struct pbuf *p;

	if (r == NULL)
		return NULL;
	r->pc.custom_free_function = rx_ref_free;
	p = pbuf_alloced_custom(PBUF_RAW, len, PBUF_REF, &r->pc, data, len);
	if (p != NULL) {
		lw.ref_free = r->next;
		lw.held++;
		r->frame = frame;
	}
	return p;
}
#endif

/*
 * A new SYN for a 4-tuple lwIP still holds in TIME_WAIT (nrfwd closed the
 * client's previous connection first). lwIP answers it with an ACK of the
 * old connection and ignores the client's RST (RFC 1337), so the client
 * could not connect from that port again for 2 MSL (two minutes) - and
 * clients reuse ports sooner under load. Linux's own TIME_WAIT accepts a
 * SYN whose sequence number is past the old connection's (RFC 6191 without
 * timestamps): do the same by dropping the TIME_WAIT pcb before lwIP sees
 * the SYN.
 */
static void
tw_reuse(const uint8_t *ip, uint16_t len, uint32_t src)
{
	const uint8_t *th;
	unsigned int ihl = (ip[0] & 0x0fu) * 4u;
	uint16_t sport, dport;
	uint32_t seq;
	struct tcp_pcb *pcb;

	if (ip[9] != 6 || ihl < 20 || len < ihl + 20u || (ip[6] & 0x3fu) != 0 || ip[7] != 0)
		return; /* not TCP, or a fragment */
	th = ip + ihl;
	if ((th[13] & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN || tcp_tw_pcbs == NULL)
		return;
	sport = (uint16_t)(th[0] << 8 | th[1]);
	dport = (uint16_t)(th[2] << 8 | th[3]);
	seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	pcb = tp_demux_find(src, sport, dport);
	if (pcb != NULL && pcb->state == TIME_WAIT && TCP_SEQ_GT(seq, pcb->rcv_nxt))
		tcp_abort(pcb); /* TIME_WAIT: removed, no RST sent */
}

/*
 * A received frame as a pbuf for lwIP: the mbuf lent (zero copy: @p kept
 * set, the mbuf goes back when lwIP frees the pbuf) or copied. NULL: no
 * memory (nothing to free).
 */
static inline struct pbuf *
rx_pbuf(void *data, uint16_t len, void *frame, bool *kept)
{
	struct pbuf *p;

	*kept = false;
#ifdef NRF_LWIP_OWN
	p = rx_ref(data, len, frame);
	if (p != NULL) {
		*kept = true;
		return p;
	}
	/* Held frames at the limit: one PBUF_POOL element per frame
	 * (lwipopts.h sizes them for a full Ethernet frame). */
	p = pbuf_alloc(PBUF_RAW, len, PBUF_POOL);
#else
	/* PBUF_RAM, not PBUF_POOL: Debian's liblwip 2.1.3 sizes its PBUF_POOL
	 * elements for 592 payload bytes while pbuf_alloc() fills them up to
	 * the 1536 of the shipped lwipopts.h (heap overflow; decision 0006). */
	(void)frame;
	p = pbuf_alloc(PBUF_RAW, len, PBUF_RAM);
#endif
	if (p != NULL && pbuf_take(p, data, len) != ERR_OK) {
		pbuf_free(p);
		p = NULL;
	}
	return p;
}

/* What rx_frame() returns once lwIP's input took @p p with result @p e. */
static inline int
rx_done(struct pbuf *p, err_t e, bool kept)
{
	int rc = kept ? NRF_TP_DP_RX_KEPT : 0;

	if (e != ERR_OK) {
		pbuf_free(p);
		rc |= NRF_TP_DP_RX_DROP;
	}
	return rc;
}

#if LWIP_IPV6
/*
 * An IPv6 frame (decision 0065). No SYN cookies, no TIME_WAIT reuse and
 * no answer-to-the-source-MAC here: those are IPv4's (tp_syn.c,
 * tp_neigh.c); neighbours are lwIP's nd6. The pcb index is IPv4's too:
 * lwIP finds the pcb of an IPv6 segment by its own walk of its lists
 * (repaired first). The TCP checksum is checked here whatever the port
 * offloads: its RX offload is set up for IPv4.
 */
static int
rx_frame6(struct netif *nif, void *data, uint16_t len, void *frame)
{
	const uint8_t *f = data;
	struct pbuf *p;
	bool kept;
	err_t e;

	if (!lw.v6 || len < ETH_HLEN + 40 || bad_source6(f + ETH_HLEN + 8))
		return NRF_TP_DP_RX_DROP;
#if TP_SW_CSUM
	if (!nrf_lwip_ip6_rx_csum_ok(f + ETH_HLEN, (u16_t)(len - ETH_HLEN)))
		return NRF_TP_DP_RX_DROP;
#endif
	tp_demux_repair(); /* lwIP walks the real lists */
	p = rx_pbuf(data, len, frame, &kept);
	if (p == NULL)
		return NRF_TP_DP_RX_DROP;
	tp_neigh_rx6_begin(); /* RSTs answering it: on the budget */
	e = nif->input(p, nif);
	tp_neigh_rx6_end();
	return rx_done(p, e, kept);
}
#endif

static int
rx_frame(void *arg, void *data, uint16_t len, void *frame)
{
	struct netif *nif = arg;
	const uint8_t *f = data;
	struct pbuf *p;
	bool kept;
	err_t e;

	if (len < ETH_HLEN)
		return NRF_TP_DP_RX_DROP;
	if (f[12] == ETHTYPE_IPV4_HI && f[13] == ETHTYPE_IPV4_LO) {
		uint32_t src;

		if (len < ETH_HLEN + 20)
			return NRF_TP_DP_RX_DROP;
		memcpy(&src, f + ETH_HLEN + 12, 4);
		if (bad_source(src))
			return NRF_TP_DP_RX_DROP;
#if TP_SW_CSUM
		/* Before tw_reuse(): a forged SYN must not end a TIME_WAIT. */
		if ((lw.sw_rx_ip || lw.sw_rx_tcp) &&
			!nrf_lwip_ip4_rx_csum_ok(f + ETH_HLEN, (u16_t)(len - ETH_HLEN),
				lw.sw_rx_ip, lw.sw_rx_tcp))
			return NRF_TP_DP_RX_DROP;
#endif
		tw_reuse(f + ETH_HLEN, (uint16_t)(len - ETH_HLEN), src);
		/* Answers to this frame go to its source MAC (decision 0056). */
		tp_neigh_rx_begin(src, f + 6);
		if (tp_syn_input(nif, f, len)) {
			tp_neigh_rx_end(); /* answered with a SYN cookie */
			return 0;
		}
	} else if (f[12] == ETHTYPE_ARP_HI && f[13] == ETHTYPE_ARP_LO) {
		if (lw.ip == 0)
			return NRF_TP_DP_RX_DROP; /* no IPv4 on the port */
		tp_neigh_arp_input(f, len); /* lwIP's etharp is not used */
		return 0;
	} else {
#if LWIP_IPV6
		if (f[12] == ETHTYPE_IPV6_HI && f[13] == ETHTYPE_IPV6_LO)
			return rx_frame6(nif, data, len, frame);
#endif
		return NRF_TP_DP_RX_DROP; /* VLAN, ...: nothing here speaks them */
	}
	p = rx_pbuf(data, len, frame, &kept);
	if (p == NULL) {
		tp_neigh_rx_end();
		return NRF_TP_DP_RX_DROP;
	}
	/* lwIP owns p now (and through it a lent mbuf) unless input() fails:
	 * then freeing p gives the mbuf back (rx_ref_free()). */
	e = tp_demux_input(nif, p, f + ETH_HLEN, (uint16_t)(len - ETH_HLEN));
	tp_neigh_rx_end();
	return rx_done(p, e, kept);
}

/* nrf_tp_dpdk.h: what the lwIP this file is compiled against can carry. */
void
nrf_tp_dpdk_caps(struct nrf_tp_dpdk_caps *out)
{
	unsigned int mtu = TCP_MSS + 40u;

	memset(out, 0, sizeof(*out));
#ifdef NRF_LWIP_OWN
	out->lwip = "own";
#else
	out->lwip = "debian";
#endif
	out->tcp_mss = TCP_MSS;
	out->max_mtu = (uint16_t)(mtu < 1500u ? 1500u : mtu > 9000u ? 9000u : mtu);
	out->ipv6 = LWIP_IPV6 != 0;
	out->vlan = true; /* tags are tp_dpdk.c's */
}

int
nrf_tp_lw_start(const struct nrf_tp_dpdk_conf *conf, const uint8_t mac[6], uint16_t mtu)
{
	struct tp_neigh_budgets budgets;
	ip4_addr_t ip, mask, gw;
	uint32_t m;

	/* Random initial local ports (LWIP_RANDOMIZE_INITIAL_LOCAL_PORTS uses
	 * rand()), different in every process. */
	srand((unsigned int)(nrf_tp_dp_tsc() ^ (nrf_tp_dp_tsc() >> 32)));
#ifdef NRF_LWIP_OWN
	if (lw.refs == NULL) {
		uint32_t i;

		lw.hold_max = conf->mbufs / 4;
		lw.refs = calloc(lw.hold_max > 0 ? lw.hold_max : 1, sizeof(*lw.refs));
		if (lw.refs == NULL)
			return NRF_ENOMEM;
		for (i = 0; i < lw.hold_max; i++) {
			lw.refs[i].next = lw.ref_free;
			lw.ref_free = &lw.refs[i];
		}
	}
#endif
#if !LWIP_IPV6
	if (conf->ip6.family != 0) {
		NRF_LOG(ERR, MOD, "runtime.dpdk.ipv6Address: this build's lwIP has no IPv6 "
			"(own build: meson -Dlwip_ipv6=true)");
		return NRF_EINVAL;
	}
#endif
	lwip_init();
	memcpy(lw.mac, mac, 6);
	lw.mtu = mtu;
	lw.ip = 0;
	m = 0;
	if (conf->ip.family == 4) {
		memcpy(&lw.ip, conf->ip.ip, 4);
		m = conf->prefix_len >= 32 ? UINT32_MAX : ~(UINT32_MAX >> conf->prefix_len);
	}
	ip4_addr_set_u32(&ip, lw.ip);
	ip4_addr_set_u32(&mask, lwip_htonl(m));
	ip4_addr_set_zero(&gw);
	if (conf->gateway.family == 4) {
		uint32_t g;

		memcpy(&g, conf->gateway.ip, 4);
		ip4_addr_set_u32(&gw, g);
	}
	if (netif_add(&lw.netif, &ip, &mask, &gw, NULL, netif_setup, ethernet_input) == NULL)
		return NRF_ENOMEM;
#if LWIP_IPV6
	lw.v6 = conf->ip6.family == 6;
	ip6_addr_set_zero(&lw.gw6);
	if (lw.v6) {
		s8_t idx;

		memcpy(lw.ip6.addr, conf->ip6.ip, 16);
		ip6_addr_clear_zone(&lw.ip6);
		lw.prefix6 = conf->prefix6_len;
		if (conf->gateway6.family == 6) {
			memcpy(lw.gw6.addr, conf->gateway6.ip, 16);
			ip6_addr_clear_zone(&lw.gw6);
		}
		/* Link-local (EUI-64 of the MAC) in slot 0, the configured
		 * address after it; both valid at once (no DAD). */
		netif_create_ip6_linklocal_address(&lw.netif, 1);
		netif_ip6_addr_set_state(&lw.netif, 0, IP6_ADDR_PREFERRED);
		if (netif_add_ip6_address(&lw.netif, &lw.ip6, &idx) != ERR_OK) {
			netif_remove(&lw.netif);
			return NRF_ENOMEM;
		}
		netif_ip6_addr_set_state(&lw.netif, idx, IP6_ADDR_PREFERRED);
	}
#endif
	budgets.arp_pinned = conf->arp_rate;
	budgets.arp_stranger = conf->arp_stranger_rate;
	budgets.stray_rst = conf->stray_rst_rate;
	budgets.challenge_ack = conf->challenge_ack_rate;
	lw.syn_rcvd_ticks = conf->syn_rcvd_timeout_ms / TCP_SLOW_INTERVAL;
	lw.synack_retries = conf->synack_retries;
	if (tp_neigh_init(&lw.netif, lw.ip, ip4_addr_get_u32(&mask), ip4_addr_get_u32(&gw),
		    &budgets) != 0) {
		netif_remove(&lw.netif);
		return NRF_ENOMEM;
	}
	if (tp_demux_init() != 0) {
		tp_neigh_fini();
		netif_remove(&lw.netif);
		return NRF_ENOMEM;
	}
	tp_syn_init(lw.ip, mac, mtu, conf->syn_cookie_from);
	netif_set_default(&lw.netif);
	netif_set_link_up(&lw.netif);
	netif_set_up(&lw.netif); /* sends a gratuitous ARP */
	lw.up = true;
	return 0;
}

#ifdef NRF_LWIP_OWN
/* nrf_sys_arch.c of the own build: lwIP assertions that failed. */
extern unsigned long nrf_lwip_assert_count;
#endif

void
nrf_tp_lw_stop(void)
{
	if (!lw.up)
		return;
#ifdef NRF_LWIP_OWN
	if (nrf_lwip_assert_count > 0)
		NRF_LOG(WARN, "tp-lwip", "%lu lwIP assertion(s) failed while running (see the "
			"\"lwip: assertion\" lines)", nrf_lwip_assert_count);
#endif
	tp_demux_repair(); /* netif_remove() walks the pcbs */
	netif_set_down(&lw.netif);
	netif_remove(&lw.netif);
	tp_neigh_fini();
	tp_demux_fini();
	lw.up = false;
}

bool
nrf_tp_lw_busy(void)
{
	return lw.loop != NULL;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

static void
src_queue(struct nrf_tp_loop *loop, struct src *s)
{
	if (s->queued || s->fn == NULL || s->ev == 0)
		return;
	s->queued = 1;
	s->gen = loop->gen;
	TAILQ_INSERT_TAIL(&loop->pending, s, pend);
}

static void
src_raise(struct nrf_tp_loop *loop, struct src *s, unsigned int ev)
{
	s->ev |= ev;
	src_queue(loop, s);
}

static void
src_unqueue(struct nrf_tp_loop *loop, struct src *s)
{
	if (s->queued) {
		TAILQ_REMOVE(&loop->pending, s, pend);
		s->queued = 0;
	}
	s->ev = 0;
	s->fn = NULL;
}

/* Run the handlers of everything queued before this pass began. */
static int
dispatch(struct nrf_tp_loop *loop)
{
	uint32_t gen = ++loop->gen;
	struct src *s;
	int n = 0;

	while ((s = TAILQ_FIRST(&loop->pending)) != NULL && s->gen != gen) {
		unsigned int ev = s->ev;

		TAILQ_REMOVE(&loop->pending, s, pend);
		s->queued = 0;
		if (s->fn == NULL) {
			s->ev = ev; /* handler taken away: keep them for the next one */
			continue;
		}
		s->ev = 0;
		/* s may be freed by its handler: not touched afterwards. */
		s->fn(s->ctx, ev);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Deferred ACKs and window updates                                          */

static void
owe(struct nrf_tp_conn *c)
{
	if (!c->owed) {
		c->owed = 1;
		TAILQ_INSERT_TAIL(&c->loop->owed, c, owe);
	}
}

static void
unowe(struct nrf_tp_conn *c)
{
	if (c->owed) {
		TAILQ_REMOVE(&c->loop->owed, c, owe);
		c->owed = 0;
	}
}

/* Open the window by what was read (tcp_recved() ACKs at once when that
 * crosses lwIP's update threshold; queued data then carries it). */
static void
apply_recved(struct nrf_tp_conn *c, struct tcp_pcb *pcb)
{
	while (c->recved > 0) {
		u16_t k = (u16_t)NRF_MIN(c->recved, 0xffffu);

		c->recved -= k;
		if (pcb != NULL)
			tcp_recved(pcb, k);
	}
}

/* Settle what this iteration owes: window updates, and the ACKs no data
 * segment took along. */
static void
flush_owed(struct nrf_tp_loop *loop)
{
	struct nrf_tp_conn *c;

	while ((c = TAILQ_FIRST(&loop->owed)) != NULL) {
		unowe(c);
		apply_recved(c, c->pcb);
		if (c->ack_owed && c->pcb != NULL && tcp_is_flag_set(c->pcb, TF_ACK_DELAY)) {
			tcp_set_flags(c->pcb, TF_ACK_NOW);
			(void)tcp_output(c->pcb);
		}
		c->ack_owed = 0;
	}
}

/* ------------------------------------------------------------------------ */
/* lwIP callbacks: record, never call a handler                             */

static err_t
on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct nrf_tp_conn *c = arg;
	struct pbuf *q;

	(void)err; /* always ERR_OK in lwIP 2.1 */
	if (c == NULL) {
		/* Not ours any more: behave like tcp_recv_null(). */
		if (p != NULL) {
			tcp_recved(pcb, p->tot_len);
			pbuf_free(p);
		}
		return ERR_OK;
	}
	if (p == NULL) {
		c->eof = 1;
		src_raise(c->loop, &c->s, NRF_TP_EV_IN);
		return ERR_OK;
	}
	for (q = p; q->next != NULL; q = q->next)
		;
	if (c->rx_tail != NULL)
		c->rx_tail->next = p;
	else
		c->rx_head = p;
	c->rx_tail = q;
	/* "Every second segment": tcp_input() would send a pure ACK right
	 * after this callback. Owe it to the end of the iteration instead. */
	if (tcp_is_flag_set(pcb, TF_ACK_NOW)) {
		tcp_clear_flags(pcb, TF_ACK_NOW);
		tcp_set_flags(pcb, TF_ACK_DELAY);
		c->ack_owed = 1;
		owe(c);
	}
	src_raise(c->loop, &c->s, NRF_TP_EV_IN);
	return ERR_OK;
}

static bool
can_write(const struct tcp_pcb *pcb)
{
	return tcp_sndbuf(pcb) > 0 && tcp_sndqueuelen(pcb) < TCP_SND_QUEUELEN;
}

static err_t
on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	struct nrf_tp_conn *c = arg;

	(void)len;
	if (c != NULL && c->want_out && can_write(pcb)) {
		c->want_out = 0;
		src_raise(c->loop, &c->s, NRF_TP_EV_OUT);
	}
	return ERR_OK;
}

/* Safety net for a writer blocked by ERR_MEM with nothing in flight. */
static err_t
on_poll(void *arg, struct tcp_pcb *pcb)
{
	return on_sent(arg, pcb, 0);
}

static void
on_err(void *arg, err_t err)
{
	struct nrf_tp_conn *c = arg;

	(void)err; /* ERR_RST, ERR_ABRT (timeouts), ERR_CLSD: all "the connection is gone" */
	if (c == NULL)
		return;
	c->pcb = NULL; /* already freed by lwIP */
	c->err = NRF_EIO;
	if (c->state == CS_CONNECTING)
		c->state = CS_FAILED;
	/* As epoll reports a broken socket: readable, writable and in error. */
	src_raise(c->loop, &c->s, NRF_TP_EV_ERR | NRF_TP_EV_IN | NRF_TP_EV_OUT);
}

static err_t
on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct nrf_tp_conn *c = arg;

	(void)pcb;
	(void)err; /* always ERR_OK in lwIP 2.1: failures go to on_err() */
	if (c != NULL && c->state == CS_CONNECTING) {
		c->state = CS_OPEN;
		src_raise(c->loop, &c->s, NRF_TP_EV_OUT);
	}
	return ERR_OK;
}

static void
conn_attach(struct nrf_tp_conn *c, struct tcp_pcb *pcb)
{
	c->pcb = pcb;
	tcp_arg(pcb, c);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_err);
	tcp_poll(pcb, on_poll, POLL_TICKS);
	tcp_nagle_disable(pcb); /* small request/response frames: never wait */
}

/* Make the pcb forget us before it is closed or aborted. */
static struct tcp_pcb *
conn_detach(struct nrf_tp_conn *c)
{
	struct tcp_pcb *pcb = c->pcb;

	if (pcb != NULL) {
		tcp_arg(pcb, NULL);
		tcp_recv(pcb, NULL);
		tcp_sent(pcb, NULL);
		tcp_err(pcb, NULL);
		tcp_poll(pcb, NULL, 0);
		c->pcb = NULL;
	}
	return pcb;
}

static void
rx_lent_free(struct nrf_tp_conn *c)
{
	if (c->rx_lent != NULL) {
		pbuf_free(c->rx_lent);
		c->rx_lent = NULL;
	}
}

static void
rx_free(struct nrf_tp_conn *c)
{
	rx_lent_free(c);
	while (c->rx_head != NULL) {
		struct pbuf *p = c->rx_head;

		c->rx_head = p->next;
		p->next = NULL;
		pbuf_free(p);
	}
	c->rx_tail = NULL;
	c->rx_off = 0;
}

/* While the connection exists its peer's neighbour entry stays. */
static void
conn_pin(struct nrf_tp_conn *c)
{
	uint32_t a;

	if (c->peer.family != 4)
		return; /* IPv6 neighbours: lwIP's nd6 */
	memcpy(&a, c->peer.ip, 4);
	tp_neigh_pin(a);
	c->pinned = 1;
}

static void
conn_free(struct nrf_tp_conn *c)
{
	if (c->pinned) {
		uint32_t a;

		memcpy(&a, c->peer.ip, 4);
		tp_neigh_unpin(a);
	}
	free(c);
}

/* Free a connection nobody accepted (listener closed). */
static void
conn_drop(struct nrf_tp_conn *c)
{
	struct tcp_pcb *pcb = conn_detach(c);

	src_unqueue(c->loop, &c->s);
	unowe(c);
	rx_free(c);
	if (pcb != NULL)
		tcp_abort(pcb);
	conn_free(c);
}

static void
addr_from_ip(struct nrf_tp_addr *a, const ip_addr_t *ip, u16_t port)
{
	uint32_t v;

	memset(a, 0, sizeof(*a));
	a->port = port;
#if LWIP_IPV6
	if (IP_IS_V6(ip)) {
		a->family = 6;
		memcpy(a->ip, ip_2_ip6(ip)->addr, 16);
		return;
	}
#endif
	v = ip4_addr_get_u32(ip_2_ip4(ip));
	a->family = 4;
	memcpy(a->ip, &v, 4);
}

static err_t
on_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
	struct nrf_tp_listener *l = arg;
	struct nrf_tp_conn *c;

	if (l == NULL || newpcb == NULL || err != ERR_OK)
		return ERR_VAL;
	if (l->n_acq >= l->backlog) {
		nrf_tp_dp_lcore_stats()->listen_overflows++;
		return ERR_MEM; /* lwIP resets it */
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return ERR_MEM;
	c->loop = l->loop;
	c->state = CS_OPEN;
	c->lst = l;
	addr_from_ip(&c->peer, &newpcb->remote_ip, newpcb->remote_port);
	conn_pin(c);
	conn_attach(c, newpcb);
	STAILQ_INSERT_TAIL(&l->acq, c, acq);
	l->n_acq++;
	src_raise(l->loop, &l->s, NRF_TP_EV_IN);
	return ERR_OK;
}

/* ------------------------------------------------------------------------ */
/* Loop                                                                      */

static struct nrf_tp_loop *
lw_loop_create(int *err)
{
	struct nrf_tp_loop *loop;

	if (!nrf_tp_dp_ready()) {
		*err = NRF_EINVAL;
		return NULL;
	}
	if (lw.loop != NULL) {
		*err = NRF_EEXIST;
		return NULL;
	}
	loop = calloc(1, sizeof(*loop));
	if (loop == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	TAILQ_INIT(&loop->pending);
	TAILQ_INIT(&loop->owed);
	atomic_init(&loop->wake, 0);
	loop->tmr_period = nrf_tp_dp_hz() / 1000;
	if (loop->tmr_period == 0)
		loop->tmr_period = 1;
	lw.loop = loop;
	*err = 0;
	return loop;
}

static void
lw_loop_free(struct nrf_tp_loop *loop)
{
	if (loop == NULL)
		return;
	if (lw.loop == loop)
		lw.loop = NULL;
	free(loop);
}

/*
 * Take @p pcb, whose predecessor in tcp_active_pcbs is @p prev (NULL: it is
 * the head), out of lwIP: tcp_abandon() with an RST to the peer when
 * @p rst. lwIP's own removal would walk the list from its head to find
 * the predecessor; the caller's walk knows it, so lwIP is shown the list
 * from @p pcb on and the predecessor is linked past it here.
 * @return the pcb that followed @p pcb.
 */
static struct tcp_pcb *
abandon_at(struct tcp_pcb *prev, struct tcp_pcb *pcb, int rst)
{
	struct tcp_pcb *next = pcb->next, *head = tcp_active_pcbs;

	tcp_active_pcbs = pcb;
	tcp_abandon(pcb, rst); /* tcp_active_pcbs = next */
	if (prev != NULL) {
		prev->next = next;
		tcp_active_pcbs = head;
	}
	return next;
}

/* A connection nrfwd closed that lwIP still holds for the FIN exchange. */
static inline bool
orphan(const struct tcp_pcb *p)
{
	return p->callback_arg == NULL && p->state >= FIN_WAIT_1 && p->state <= LAST_ACK &&
		p->state != CLOSE_WAIT;
}

/*
 * Once a second: lwIP's use for the counters (pcbs by state, frames held
 * in place), and half-open pcbs (SYN_RCVD) past runtime.dpdk.synRcvdTimeoutMs
 * or synAckRetries are dropped (silently: the peer may be a spoofed
 * address; lwIP's own limit, 20 s, stays behind it).
 */
static void
sample_use(void)
{
	struct nrf_tp_dpdk_lcore_stats *st = nrf_tp_dp_lcore_stats();
	struct tcp_pcb *p, *prev = NULL;
	uint64_t syn = 0, est = 0, other = 0, tw = 0, v6 = 0;

	for (p = tcp_active_pcbs; p != NULL;) {
		if (p->state == SYN_RCVD &&
			((u32_t)(tcp_ticks - p->tmr) >= lw.syn_rcvd_ticks ||
				p->nrtx >= lw.synack_retries)) {
			p = abandon_at(prev, p, 0);
			st->half_open_expired++;
			continue;
		}
		if (p->state == SYN_RCVD)
			syn++;
		else if (p->state == ESTABLISHED)
			est++;
		else
			other++;
		v6 += IP_IS_V6_VAL(p->remote_ip);
		prev = p;
		p = p->next;
	}
	for (p = tcp_tw_pcbs; p != NULL; p = p->next) {
		tw++;
		v6 += IP_IS_V6_VAL(p->remote_ip);
	}
	st->pcb_syn_rcvd = syn;
	st->pcb_established = est;
	st->pcb_closing = other;
	st->pcb_time_wait = tw;
#ifdef NRF_LWIP_OWN
	st->rx_held = lw.held;
	/* Every IPv4 pcb of lwIP's lists is in the index and the other way
	 * round (tp_demux.c; IPv6 pcbs are not indexed): a difference would
	 * be a pcb lost from a list (no timers: no retransmission) or a stale
	 * entry. */
	if (syn + est + other + tw - v6 != tp_demux_count())
		NRF_LOG_RL(WARN, "tp-lwip", "lwIP lists hold %llu IPv4 pcbs, the index %u",
			(unsigned long long)(syn + est + other + tw - v6), tp_demux_count());
#endif
}

#ifdef NRF_LWIP_OWN
/*
 * lwIP's pcb pool nearly used up (7/8: a flood of connections beyond
 * runtime.limits.maxConnections, each one nrfwd closes kept by lwIP in
 * FIN_WAIT for up to 20 s): reset the connections nrfwd already closed
 * (orphans), those quiet the longest first, until a quarter of the pool is
 * free, as Linux resets orphans beyond tcp_max_orphans. Otherwise lwIP
 * would make room only when a pcb is needed, by resetting the connection
 * idle the longest, live or not, after up to three walks of every pcb per
 * SYN. At most every 50 ms (a walk of the active list) and 256 resets at a
 * time (the TX ring takes them in one go).
 */
static void
reap_orphans(uint64_t ms)
{
	uint32_t used = tp_demux_count(), goal = MEMP_NUM_TCP_PCB - MEMP_NUM_TCP_PCB / 4;
	struct tcp_pcb *p, *prev;
	u32_t quiet;
	int pass;

	if (used < MEMP_NUM_TCP_PCB - MEMP_NUM_TCP_PCB / 8 || ms < lw.next_reap_ms)
		return;
	lw.next_reap_ms = ms + 50;
	tp_demux_repair();
	if (used - goal > 256)
		goal = used - 256;
	/* First those quiet for 2 s or more, then any. */
	for (pass = 0; pass < 2 && used > goal; pass++) {
		quiet = pass == 0 ? 2000 / TCP_SLOW_INTERVAL : 0;
		prev = NULL;
		for (p = tcp_active_pcbs; p != NULL && used > goal;) {
			if (orphan(p) && (u32_t)(tcp_ticks - p->tmr) >= quiet) {
				p = abandon_at(prev, p, 1);
				nrf_tp_dp_lcore_stats()->orphans_reset++;
				used--;
				continue;
			}
			prev = p;
			p = p->next;
		}
	}
}
#endif

static int
lw_poll(struct nrf_tp_loop *loop, int timeout_ms)
{
	uint64_t t0 = nrf_tp_dp_iter_begin();
	unsigned int io;
	int n = 0;

	/* What handlers and the owner wrote since the last poll() leaves
	 * first, with the ACKs and window updates nothing took along. */
	flush_owed(loop);
	io = nrf_tp_dp_tx_flush();
	io += nrf_tp_dp_rx(rx_frame, &lw.netif);
	if (t0 >= loop->next_tmr) {
		uint64_t ms = sys_now();

		/* lwIP's TCP timers walk its lists: never with pcbs freed in
		 * them (tp_demux.h). With some, the timers run only after the
		 * walk that unlinks them, and only when one is due: a burst of
		 * resets costs a walk per timer tick, not per RX burst. */
		if (!tp_demux_pending() || sys_timeouts_sleeptime() <= 1) {
			tp_demux_repair();
			sys_check_timeouts();
		}
		tp_neigh_tick(ms);
		tp_syn_tick(ms);
		if (ms >= loop->next_sample_ms) {
			tp_demux_repair();
			sample_use();
			loop->next_sample_ms = ms + 1000;
		}
#ifdef NRF_LWIP_OWN
		reap_orphans(ms);
#endif
		loop->next_tmr = t0 + loop->tmr_period;
	}
	if (atomic_exchange_explicit(&loop->wake, 0, memory_order_acquire) != 0) {
		if (loop->wake_fn != NULL)
			loop->wake_fn(loop->wake_ctx);
		n++;
	}
	n += dispatch(loop);
	io += nrf_tp_dp_tx_flush();
	nrf_tp_dp_iter_end(t0, io > 0 || n > 0);
	if (io > 0 || n > 0)
		loop->empty = 0;
	else
		nrf_tp_dp_idle(loop->empty < UINT32_MAX ? ++loop->empty : loop->empty, timeout_ms);
	return n;
}

static void
lw_set_wake(struct nrf_tp_loop *loop, nrf_tp_wake_fn fn, void *ctx)
{
	loop->wake_fn = fn;
	loop->wake_ctx = ctx;
}

static void
lw_loop_wake(struct nrf_tp_loop *loop)
{
	atomic_store_explicit(&loop->wake, 1, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* Listeners                                                                 */

static struct nrf_tp_listener *
lw_listen(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int backlog,
	nrf_tp_event_fn fn, void *ctx, int *err)
{
	struct nrf_tp_listener *l;
	struct tcp_pcb *pcb, *lpcb;
	ip_addr_t ip;
	uint32_t a = 0;
	u8_t type = IPADDR_TYPE_V4;
	err_t e;

	if (addr->family == 4) {
		memcpy(&a, addr->ip, 4);
		if (lw.ip == 0 || (a != 0 && a != lw.ip)) {
			errno = EADDRNOTAVAIL;
			*err = NRF_EIO;
			return NULL;
		}
		ip_addr_set_ip4_u32_val(ip, a);
#if LWIP_IPV6
	} else if (addr->family == 6) {
		static const uint8_t any[16];

		if (memcmp(addr->ip, any, 16) == 0) {
			/* "::": both families, as a kernel socket without
			 * IPV6_V6ONLY (what the kernel back-end opens). */
			type = lw.ip != 0 ? IPADDR_TYPE_ANY : IPADDR_TYPE_V6;
			ip = type == IPADDR_TYPE_V6 ? *IP6_ADDR_ANY : *IP_ANY_TYPE;
		} else if (lw.v6 && memcmp(addr->ip, lw.ip6.addr, 16) == 0) {
			type = IPADDR_TYPE_V6;
			ip_addr_copy_from_ip6(ip, lw.ip6);
		} else {
			errno = EADDRNOTAVAIL;
			*err = NRF_EIO;
			return NULL;
		}
		if (!lw.v6 && type == IPADDR_TYPE_V6) {
			errno = EADDRNOTAVAIL;
			*err = NRF_EIO;
			return NULL;
		}
#endif
	} else {
		errno = EAFNOSUPPORT;
		*err = NRF_EIO;
		return NULL;
	}
	/* Worker processes split the ephemeral ports between them (frames to
	 * them are steered by port): a listener cannot live there. */
	if (nrf_tp_dp_next_port() != 0 && (addr->port == 0 || addr->port >= 49152)) {
		NRF_LOG(ERR, MOD, "listen port %u: with several DPDK workers listen ports must "
			"be 1..49151 (49152..65535 are split between the workers)", addr->port);
		errno = EADDRNOTAVAIL;
		*err = NRF_EIO;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	tp_demux_repair(); /* tcp_new() may take a pcb lwIP freed */
	pcb = l != NULL ? tcp_new_ip_type(type) : NULL;
	if (pcb == NULL) {
		free(l);
		errno = ENOMEM;
		*err = NRF_ENOMEM;
		return NULL;
	}
	ip_set_option(pcb, SOF_REUSEADDR); /* listen again despite TIME_WAIT */
	e = tcp_bind(pcb, &ip, addr->port);
	lpcb = NULL;
	if (e == ERR_OK)
		lpcb = tcp_listen_with_backlog_and_err(pcb, 255, &e);
	if (lpcb == NULL) {
		(void)tcp_close(pcb); /* never opened: frees it */
		free(l);
		errno = e == ERR_USE ? EADDRINUSE : e == ERR_MEM ? ENOMEM : EINVAL;
		*err = e == ERR_MEM ? NRF_ENOMEM : NRF_EIO;
		return NULL;
	}
	l->loop = loop;
	l->pcb = lpcb;
	l->s.fn = fn;
	l->s.ctx = ctx;
	l->backlog = backlog > 0 ? (unsigned int)backlog : DEFAULT_BACKLOG;
	STAILQ_INIT(&l->acq);
	tcp_arg(lpcb, l);
	tcp_accept(lpcb, on_accept);
	*err = 0;
	return l;
}

static int
lw_listener_addr(struct nrf_tp_listener *l, struct nrf_tp_addr *out)
{
	addr_from_ip(out, &l->pcb->local_ip, l->pcb->local_port);
	return 0;
}

static void
lw_listener_close(struct nrf_tp_listener *l)
{
	struct nrf_tp_conn *c;

	if (l == NULL)
		return;
	tcp_arg(l->pcb, NULL);
	tcp_accept(l->pcb, NULL);
	(void)tcp_close(l->pcb); /* a listening pcb closes at once */
	while ((c = STAILQ_FIRST(&l->acq)) != NULL) {
		STAILQ_REMOVE_HEAD(&l->acq, acq);
		conn_drop(c);
	}
	src_unqueue(l->loop, &l->s);
	free(l);
}

static struct nrf_tp_conn *
lw_accept(struct nrf_tp_listener *l, int *err)
{
	struct nrf_tp_conn *c = STAILQ_FIRST(&l->acq);

	if (c == NULL) {
		*err = NRF_EAGAIN;
		return NULL;
	}
	STAILQ_REMOVE_HEAD(&l->acq, acq);
	l->n_acq--;
	c->lst = NULL;
	*err = 0;
	return c;
}

/* ------------------------------------------------------------------------ */
/* Connections                                                               */

static struct nrf_tp_conn *
lw_connect(struct nrf_tp_loop *loop, const struct nrf_tp_addr *addr, int *err)
{
	struct nrf_tp_conn *c;
	struct tcp_pcb *pcb;
	ip4_addr_t dst;
	ip_addr_t ip;
	uint32_t a;
	uint16_t lport;
	unsigned int tries;
	u8_t type = IPADDR_TYPE_V4;
	const ip_addr_t *any = IP4_ADDR_ANY;
	err_t e;

	if (addr->port == 0) {
		*err = NRF_EIO;
		return NULL;
	}
	if (addr->family == 4) {
		memcpy(&a, addr->ip, 4);
		ip4_addr_set_u32(&dst, a);
		if (lw.ip == 0 || bad_source(a) || ip4_addr_ismulticast(&dst) || a == UINT32_MAX) {
			*err = NRF_EIO;
			return NULL;
		}
		if (!ip4_addr_netcmp(&dst, netif_ip4_addr(&lw.netif),
			    netif_ip4_netmask(&lw.netif)) &&
			ip4_addr_isany_val(*netif_ip4_gw(&lw.netif))) {
			*err = NRF_EIO; /* off-link and no gateway: would only time out */
			return NULL;
		}
		ip_addr_set_ip4_u32_val(ip, a);
#if LWIP_IPV6
	} else if (addr->family == 6) {
		ip6_addr_t d6;

		memcpy(d6.addr, addr->ip, 16);
		ip6_addr_clear_zone(&d6);
		if (!lw.v6 || bad_source6(addr->ip)) {
			*err = NRF_EIO;
			return NULL;
		}
		/* Off-link without a gateway: would only time out. */
		if (!ip6_addr_islinklocal(&d6) && !ip6_addr_netcmp(&d6, &lw.ip6) &&
			nrf_lwip_nd6_get_gw(&lw.netif, &d6) == NULL) {
			*err = NRF_EIO;
			return NULL;
		}
		type = IPADDR_TYPE_V6;
		ip_addr_copy_from_ip6(ip, d6);
#endif
	} else {
		*err = NRF_EIO;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	tp_demux_repair(); /* tcp_new() may take a pcb lwIP freed */
	pcb = c != NULL ? tcp_new_ip_type(type) : NULL;
	if (pcb == NULL) {
		free(c);
		*err = NRF_ENOMEM;
		return NULL;
	}
	c->loop = loop;
	c->state = CS_CONNECTING;
	c->peer = *addr;
	conn_pin(c); /* before the SYN: the entry is asked for as pinned */
	conn_attach(c, pcb);
#if LWIP_IPV6
	any = type == IPADDR_TYPE_V4 ? IP4_ADDR_ANY : IP6_ADDR_ANY;
#endif
	/* Worker processes sharing one address bind to ports of their own. */
	for (tries = 0; (lport = nrf_tp_dp_next_port()) != 0; tries++) {
		if (tcp_bind(pcb, any, lport) == ERR_OK)
			break;
		if (tries == 256) {
			tcp_abort(conn_detach(c));
			conn_free(c);
			*err = NRF_EIO; /* this worker's ports are all in use */
			return NULL;
		}
	}
	e = tcp_connect(pcb, &ip, addr->port, on_connected);
	if (e != ERR_OK) {
		/* ERR_RTE: no route; ERR_MEM; ERR_USE: no local port. */
		tcp_abort(conn_detach(c));
		conn_free(c);
		*err = e == ERR_MEM ? NRF_ENOMEM : NRF_EIO;
		return NULL;
	}
	*err = 0;
	return c;
}

static int
lw_connect_result(struct nrf_tp_conn *c)
{
	if (c->state == CS_OPEN)
		return 0;
	return c->state == CS_FAILED ? NRF_EIO : NRF_EAGAIN;
}

static void
lw_set_handler(struct nrf_tp_conn *c, nrf_tp_event_fn fn, void *ctx)
{
	c->s.fn = fn;
	c->s.ctx = ctx;
	/* Events that came while nobody listened (e.g. data before accept()). */
	src_queue(c->loop, &c->s);
}

/* What read() and read_ref() return when no byte is there. */
static ssize_t
read_none(const struct nrf_tp_conn *c)
{
	if (c->err != 0)
		return c->err;
	if (c->eof)
		return NRF_ECLOSED;
	return NRF_EAGAIN;
}

/* Open the window by what the reader took, at the end of the iteration
 * (flush_owed()) or with the next write. */
static void
took(struct nrf_tp_conn *c, size_t n)
{
	if (c->pcb != NULL) {
		c->recved += (uint32_t)n;
		owe(c);
	}
}

/* The next received segment's bytes in place (zero-copy RX, decision
 * 0010: the mbuf's data under a custom pbuf): no copy into the reader's
 * buffer (decision 0048). The pbuf is kept until the next call. */
static ssize_t
lw_read_ref(struct nrf_tp_conn *c, const void **data)
{
	struct pbuf *p;
	size_t k;

	rx_lent_free(c);
	while ((p = c->rx_head) != NULL) {
		c->rx_head = p->next;
		if (c->rx_head == NULL)
			c->rx_tail = NULL;
		p->next = NULL;
		k = (size_t)(p->len - c->rx_off);
		if (k == 0) { /* an empty pbuf of a chain */
			pbuf_free(p);
			c->rx_off = 0;
			continue;
		}
		*data = (const uint8_t *)p->payload + c->rx_off;
		c->rx_off = 0;
		c->rx_lent = p;
		took(c, k);
		return (ssize_t)k;
	}
	return read_none(c);
}

static ssize_t
lw_read(struct nrf_tp_conn *c, void *buf, size_t cap)
{
	uint8_t *out = buf;
	size_t n = 0;

	rx_lent_free(c);
	while (n < cap && c->rx_head != NULL) {
		struct pbuf *p = c->rx_head;
		size_t k = NRF_MIN((size_t)(p->len - c->rx_off), cap - n);

		memcpy(out + n, (const uint8_t *)p->payload + c->rx_off, k);
		n += k;
		c->rx_off = (uint16_t)(c->rx_off + k);
		if (c->rx_off == p->len) {
			c->rx_head = p->next;
			if (c->rx_head == NULL)
				c->rx_tail = NULL;
			p->next = NULL;
			pbuf_free(p);
			c->rx_off = 0;
		}
	}
	if (n > 0) {
		took(c, n);
		return (ssize_t)n;
	}
	return read_none(c);
}

static ssize_t
lw_writev(struct nrf_tp_conn *c, const struct iovec *iov, int iovcnt)
{
	struct tcp_pcb *pcb = c->pcb;
	size_t total = 0, want = 0;
	bool full = false;
	int i;

	if (pcb == NULL)
		return c->err != 0 ? c->err : NRF_EIO;
	for (i = 0; i < iovcnt; i++)
		want += iov[i].iov_len;
	if (c->state == CS_CONNECTING) {
		c->want_out = 1;
		return NRF_EAGAIN;
	}
	for (i = 0; i < iovcnt && !full; i++) {
		const uint8_t *base = iov[i].iov_base;
		size_t off = 0;

		while (off < iov[i].iov_len) {
			size_t room = can_write(pcb) ? tcp_sndbuf(pcb) : 0;
			size_t k = NRF_MIN(iov[i].iov_len - off, room);
			u8_t fl = TCP_WRITE_FLAG_COPY;
			err_t e;

			if (k == 0) {
				full = true;
				break;
			}
			if (total + k < want)
				fl |= TCP_WRITE_FLAG_MORE;
			e = tcp_write(pcb, base + off, (u16_t)k, fl);
			if (e == ERR_MEM && k > tcp_mss(pcb)) {
				/* The segment queue is nearly full: one segment may still fit. */
				k = tcp_mss(pcb);
				e = tcp_write(pcb, base + off, (u16_t)k, fl | TCP_WRITE_FLAG_MORE);
			}
			if (e == ERR_MEM) {
				full = true;
				break;
			}
			if (e != ERR_OK) {
				if (total > 0)
					goto out;
				return NRF_EIO; /* ERR_CONN: not in a state to send */
			}
			off += k;
			total += k;
		}
	}
out:
	if (total < want)
		c->want_out = 1;
	if (total == 0)
		return NRF_EAGAIN;
	/* The window update owed rides on this data (tcp_recved() outputs the
	 * queued segments itself when it must ACK). */
	apply_recved(c, pcb);
	(void)tcp_output(pcb);
	return (ssize_t)total;
}

static void
lw_close(struct nrf_tp_conn *c)
{
	struct tcp_pcb *pcb;

	if (c == NULL)
		return;
	src_unqueue(c->loop, &c->s);
	unowe(c);
	pcb = conn_detach(c);
	/* What was read opens the window; unread data stays un-acknowledged in
	 * it: tcp_close() then sends a reset, as a kernel socket closed with
	 * unread data does. */
	apply_recved(c, pcb);
	rx_free(c);
	/* Closed before the handshake finished (a connect timeout): the MAC
	 * lwIP holds for the peer may be stale (a neighbour that changed its
	 * MAC keeps a STABLE entry for ARP_MAXAGE, minutes), so ask again; a
	 * reply updates the entry before the next connect. Cheap: one frame
	 * per failed connect. */
	if (pcb != NULL && pcb->state == SYN_SENT && IP_IS_V4(&pcb->remote_ip))
		tp_neigh_probe(ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)));
	if (pcb != NULL && tcp_close(pcb) != ERR_OK)
		tcp_abort(pcb); /* no memory for the FIN */
	conn_free(c);
}

/* The FIN goes after the queued data (tcp_shutdown() outputs it); lwIP
 * keeps taking data in FIN_WAIT_1/2, so reading goes on. No memory for
 * the FIN: nothing is sent, lw_close() tries again. */
static void
lw_shutdown_write(struct nrf_tp_conn *c)
{
	struct tcp_pcb *pcb = c->pcb;

	if (pcb == NULL || (pcb->state != ESTABLISHED && pcb->state != CLOSE_WAIT))
		return;
	apply_recved(c, pcb);
	(void)tcp_shutdown(pcb, 0, 1);
}

static void
lw_peer_name(struct nrf_tp_conn *c, char *buf, size_t cap)
{
	nrf_tp_addr_format(&c->peer, buf, cap);
}

static const struct nrf_tp_ops lw_ops = {
	.name = "dpdk",
	.loop_create = lw_loop_create,
	.loop_free = lw_loop_free,
	.poll = lw_poll,
	.set_wake = lw_set_wake,
	.loop_wake = lw_loop_wake,
	.listen = lw_listen,
	.listener_addr = lw_listener_addr,
	.listener_close = lw_listener_close,
	.accept = lw_accept,
	.connect = lw_connect,
	.connect_result = lw_connect_result,
	.set_handler = lw_set_handler,
	.read = lw_read,
	.read_ref = lw_read_ref,
	.writev = lw_writev,
	.close = lw_close,
	.shutdown_write = lw_shutdown_write,
	.peer_name = lw_peer_name,
};

const struct nrf_tp_ops *
nrf_tp_dpdk_ops(void)
{
	return &lw_ops;
}
