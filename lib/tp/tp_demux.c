/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lwIP's pcbs by address and ports (tp_demux.h).
 *
 * lwIP 2.1.3 finds the pcb of a segment by walking tcp_active_pcbs, then
 * tcp_tw_pcbs, then the listeners, one pcb at a time (a cache miss each
 * once there are thousands). It moves the pcb it found to the front, so
 * the connections that talk stay near the head; but a SYN, a segment for
 * no connection and a segment of a connection that was quiet for a while
 * walk thousands of them: with 10 000 open connections, a flood of new
 * connections (each SYN walks both lists, each close walks to the pcb)
 * kept the loop busy walking while the established clients' frames
 * waited behind in the ring.
 *
 * Here the index says which pcb a segment is for, and lwIP is shown lists
 * that start with it:
 *  - a pcb of the active list: tcp_active_pcbs is set to the pcb (its
 *    successors follow as they are); lwIP finds it in one step. If lwIP
 *    took it out of the list (closed, freed, moved to TIME_WAIT), lwIP made
 *    the view start at its successor: the pcb's predecessor in the real
 *    list is pointed there (a walk to the pcb, as lwIP's own removal does).
 *  - a pcb of the TIME_WAIT list: the same with tcp_tw_pcbs, and an empty
 *    active list (lwIP walks it first).
 *  - none: both lists empty; lwIP goes on to the listeners at once. A pcb
 *    lwIP creates for a SYN then heads the view and is put in front of the
 *    real list. When the pcb pool is nearly used up lwIP's own walk is
 *    kept: tcp_alloc() then frees pcbs it finds in the lists.
 * Nothing else of lwIP walks the lists inside tcp_input() (lwIP callbacks
 * only record events here: tp_lwip.c), and the timers, connects and
 * closes run outside, on the real lists.
 *
 * The index is open addressing with linear probing over a keyed hash of
 * (remote address, remote port, local port): one local address. IPv4 pcbs
 * only: IPv6 segments go to lwIP's own walk of the real lists (decision
 * 0065), which the views here never hide from them (they are restored
 * before input returns). It never
 * misses a pcb of the lists (a miss would make lwIP answer a live
 * connection's segment with a reset): pcbs enter it before lwIP links
 * them (the ISN hook runs first, in tcp_connect() and for a SYN to a
 * listener) and leave it when lwIP frees them (tcp_free() calls the
 * extended argument's destroy callback).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lwip/err.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "nrf_err.h"
#include "tp_dpdk_shim.h"
#include "tp_demux.h"

#ifdef NRF_LWIP_OWN
#include "nrf_lwip_hooks.h"

#if !defined(LWIP_HOOK_TCP_INPACKET_PCB) || LWIP_TCP_PCB_NUM_EXT_ARGS < 1
#error "subprojects/lwip has an older overlay than subprojects/packagefiles/lwip: run scripts/fetch_lwip.sh"
#endif

#define DM_SLOTS 32768u /* a power of two above 2 x MEMP_NUM_TCP_PCB */
#define DM_NEAR_FULL 16u /* pcbs left in the pool: lwIP's own walk */

#if MEMP_NUM_TCP_PCB * 2 > DM_SLOTS
#error "tp_demux: DM_SLOTS must be at least twice MEMP_NUM_TCP_PCB"
#endif
/* Zombies (tp_demux_repair()) are read after lwIP freed them: the pool
 * must write only its free-list link, at the element's start, before
 * next and state. */
#if MEMP_OVERFLOW_CHECK || MEMP_MEM_MALLOC
#error "tp_demux: freed pcbs must stay as lwIP left them (no overflow check, pools)"
#endif
_Static_assert(offsetof(struct tcp_pcb, next) >= sizeof(void *) &&
	offsetof(struct tcp_pcb, state) >= sizeof(void *),
	"a freed pcb's next and state must lie past the pool's link");

struct slot {
	uint64_t key;          /* remote address << 32 | remote port << 16 | local port */
	struct tcp_pcb *pcb;   /* NULL: free */
};

static struct {
	struct slot *tab;
	uint64_t salt;
	uint32_t n;
	u8_t ext_id;
	bool on;
	struct tcp_pcb *watched; /* the pcb of the segment lwIP has */
	bool watched_gone;       /* ... and lwIP freed it */
	uint32_t zombies;        /* freed pcbs still linked in tcp_active_pcbs */
} dm;

#define DM_ZOMBIES_MAX 1024 /* unlinked in one walk at the latest then */

static inline uint64_t
key_of(uint32_t rip, uint16_t rport, uint16_t lport)
{
	return (uint64_t)rip << 32 | (uint64_t)rport << 16 | lport;
}

static inline uint32_t
home(uint64_t key)
{
	uint64_t h = (key ^ dm.salt) * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(h >> 32) & (DM_SLOTS - 1);
}

static inline uint64_t
pcb_key(const struct tcp_pcb *pcb)
{
	return key_of(ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)), pcb->remote_port,
		pcb->local_port);
}

/* Take the entry of @p key out. lwIP has reset the pcb's local port by the
 * time it frees it, so the key comes from the pcb's extended argument.
 * Two entries cannot share a key (lwIP keeps 4-tuples unique in its
 * lists); if one ever did, the pcb lwIP is freeing is the CLOSED one. */
static void
dm_remove(uint64_t key)
{
	uint32_t i = home(key), j, k, hit = DM_SLOTS;

	for (j = i; dm.tab[j].pcb != NULL; j = (j + 1) & (DM_SLOTS - 1)) {
		if (dm.tab[j].key != key)
			continue;
		if (hit == DM_SLOTS || dm.tab[j].pcb->state == CLOSED)
			hit = j;
	}
	if (hit == DM_SLOTS)
		return;
	if (dm.tab[hit].pcb == dm.watched)
		dm.watched_gone = true;
	/* Backward shift: no tombstones, probes stay short. */
	i = j = hit;
	for (;;) {
		dm.tab[i].pcb = NULL;
		for (;;) {
			j = (j + 1) & (DM_SLOTS - 1);
			if (dm.tab[j].pcb == NULL) {
				dm.n--;
				return;
			}
			k = home(dm.tab[j].key);
			/* j's entry may move to i if its home is not in (i, j]. */
			if (i <= j ? (i >= k || k > j) : (i >= k && k > j))
				break;
		}
		dm.tab[i] = dm.tab[j];
		i = j;
	}
}

static void
on_destroyed(u8_t id, void *data)
{
	(void)id;
	if (dm.on)
		dm_remove((uint64_t)(uintptr_t)data);
}

static const struct tcp_ext_arg_callbacks dm_cbs = {
	.destroy = on_destroyed,
};

static void
on_pcb_new(struct tcp_pcb *pcb)
{
	uint64_t key;
	uint32_t i;

	if (!dm.on)
		return;
#if LWIP_IPV6
	/* The index is IPv4's: lwIP finds IPv6 pcbs by its own walk
	 * (tp_lwip.c feeds IPv6 segments to it directly). */
	if (IP_IS_V6_VAL(pcb->remote_ip))
		return;
#endif
	if (pcb->ext_args[dm.ext_id].callbacks == &dm_cbs) /* numbered again */
		dm_remove((uint64_t)(uintptr_t)pcb->ext_args[dm.ext_id].data);
	key = pcb_key(pcb);
	i = home(key);
	while (dm.tab[i].pcb != NULL)
		i = (i + 1) & (DM_SLOTS - 1);
	dm.tab[i].key = key;
	dm.tab[i].pcb = pcb;
	dm.n++;
	tcp_ext_arg_set_callbacks(pcb, dm.ext_id, &dm_cbs);
	tcp_ext_arg_set(pcb, dm.ext_id, (void *)(uintptr_t)key);
}

/* The pcb of @p key in a list (SYN_SENT .. TIME_WAIT), or NULL. */
static struct tcp_pcb *
lookup(uint64_t key)
{
	uint32_t i = home(key);

	for (; dm.tab[i].pcb != NULL; i = (i + 1) & (DM_SLOTS - 1))
		if (dm.tab[i].key == key && dm.tab[i].pcb->state >= SYN_SENT)
			return dm.tab[i].pcb;
	return NULL;
}

int
tp_demux_init(void)
{
	static bool have_id;

	if (!have_id) { /* lwIP hands out ids once per process */
		dm.ext_id = tcp_ext_arg_alloc_id();
		have_id = true;
	}
	if (dm.tab == NULL) {
		dm.tab = calloc(DM_SLOTS, sizeof(*dm.tab));
		if (dm.tab == NULL)
			return NRF_ENOMEM;
	}
	if (getrandom(&dm.salt, sizeof(dm.salt), 0) != sizeof(dm.salt))
		dm.salt = nrf_tp_dp_tsc() * 0x9e3779b97f4a7c15ULL;
	dm.n = 0;
	dm.on = true;
	nrf_lwip_pcb_new = on_pcb_new;
	return 0;
}

void
tp_demux_fini(void)
{
	nrf_lwip_pcb_new = NULL;
	dm.on = false;
	free(dm.tab);
	dm.tab = NULL;
	dm.n = 0;
}

uint32_t
tp_demux_count(void)
{
	return dm.n;
}

struct tcp_pcb *
tp_demux_find(uint32_t rip, uint16_t rport, uint16_t lport)
{
	return dm.on ? lookup(key_of(rip, rport, lport)) : NULL;
}

/* Put @p view (what lwIP's list @p head holds after input) in front of
 * @p rest, the part lwIP did not see. */
static void
splice(struct tcp_pcb **head, struct tcp_pcb *rest)
{
	struct tcp_pcb *q = *head;

	if (q == NULL) {
		*head = rest;
		return;
	}
	while (q->next != NULL)
		q = q->next;
	q->next = rest;
}

/*
 * Unlink the zombies: pcbs lwIP freed while it was shown a list starting
 * at them (tp_demux_input()), left in tcp_active_pcbs with their next
 * pointing where lwIP's list went on. lwIP set their state to CLOSED
 * (tcp_pcb_remove()), which no pcb of the list has otherwise; the pool
 * does not write there (memp keeps its link at the element's start) and
 * the pcbs cannot be handed out again before this runs (tp_demux.h says
 * when it must). One walk for many resets at once, where unlinking each
 * one would walk to it.
 */
bool
tp_demux_pending(void)
{
	return dm.zombies > 0;
}

void
tp_demux_repair(void)
{
	struct tcp_pcb *p, *prev = NULL;

	if (dm.zombies == 0)
		return;
	for (p = tcp_active_pcbs; p != NULL && dm.zombies > 0;) {
		if (p->state == CLOSED) {
			p = p->next;
			if (prev != NULL)
				prev->next = p;
			else
				tcp_active_pcbs = p;
			dm.zombies--;
			continue;
		}
		prev = p;
		p = p->next;
	}
	dm.zombies = 0;
}

/*
 * lwIP saw the list @p head starting at @p pcb (the real list starts at
 * @p real). Put the real list back: unchanged if @p pcb is still the
 * view's head; if lwIP took @p pcb out of the list, lwIP made the view
 * start at what followed it: a freed pcb (@p freed) of the active list
 * stays linked as a zombie pointing there (tp_demux_repair()); otherwise
 * its predecessor in the real list is pointed there.
 */
static void
restore(struct tcp_pcb **head, struct tcp_pcb *real, struct tcp_pcb *pcb, bool left,
	bool freed)
{
	struct tcp_pcb *view = *head, *q;

	if (!left) {
		if (view == pcb) {
			*head = real;
			return;
		}
		/* New pcbs were put before it (not expected here): they go
		 * in front of the real list, which still holds the pcb. */
		for (q = view; q->next != pcb; q = q->next)
			;
		q->next = real;
		return;
	}
	if (real == pcb) {
		/* It was the real head too: lwIP's view is the real list. */
		return;
	}
	if (freed && head == &tcp_active_pcbs) {
		pcb->next = view;
		dm.zombies++;
		*head = real;
		if (dm.zombies >= DM_ZOMBIES_MAX)
			tp_demux_repair();
		return;
	}
	for (q = real; q->next != pcb; q = q->next)
		;
	q->next = view;
	*head = real;
}

err_t
tp_demux_input(struct netif *nif, struct pbuf *p, const uint8_t *ip, uint16_t len)
{
	unsigned int ihl = (ip[0] & 0x0fu) * 4u;
	const uint8_t *th = ip + ihl;
	struct tcp_pcb *pcb, *act, *tw;
	uint32_t src, dst;
	uint16_t sport, dport;
	bool left;
	err_t e;

	if (!dm.on || ip[9] != 6 || ihl < 20 || len < ihl + 20u || (ip[6] & 0x3fu) != 0 ||
		ip[7] != 0) {
		tp_demux_repair();
		return nif->input(p, nif);
	}
	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	if (dst != ip4_addr_get_u32(netif_ip4_addr(nif))) {
		tp_demux_repair();
		return nif->input(p, nif);
	}
	sport = (uint16_t)(th[0] << 8 | th[1]);
	dport = (uint16_t)(th[2] << 8 | th[3]);
	pcb = lookup(key_of(src, sport, dport));
	if (pcb == NULL)
		tp_demux_repair(); /* lwIP may allocate a pcb: no zombie left */
	act = tcp_active_pcbs;
	tw = tcp_tw_pcbs;
	if (pcb == NULL) {
		if (dm.n + DM_NEAR_FULL >= MEMP_NUM_TCP_PCB)
			return nif->input(p, nif);
		tcp_active_pcbs = NULL;
		tcp_tw_pcbs = NULL;
		e = nif->input(p, nif);
		splice(&tcp_active_pcbs, act);
		splice(&tcp_tw_pcbs, tw);
		return e;
	}
	dm.watched = pcb;
	dm.watched_gone = false;
	if (pcb->state == TIME_WAIT) {
		tcp_active_pcbs = NULL;
		tcp_tw_pcbs = pcb;
		e = nif->input(p, nif);
		left = dm.watched_gone || pcb->state != TIME_WAIT;
		restore(&tcp_tw_pcbs, tw, pcb, left, dm.watched_gone);
		splice(&tcp_active_pcbs, act);
	} else {
		tcp_active_pcbs = pcb;
		e = nif->input(p, nif);
		left = dm.watched_gone || pcb->state == TIME_WAIT || pcb->state == CLOSED;
		restore(&tcp_active_pcbs, act, pcb, left, dm.watched_gone);
	}
	dm.watched = NULL;
	return e;
}

#else /* Debian's liblwip: no ISN hook, no index */

bool
tp_demux_pending(void)
{
	return false;
}

void
tp_demux_repair(void)
{
}

int
tp_demux_init(void)
{
	return 0;
}

void
tp_demux_fini(void)
{
}

uint32_t
tp_demux_count(void)
{
	return 0;
}

err_t
tp_demux_input(struct netif *nif, struct pbuf *p, const uint8_t *ip, uint16_t len)
{
	(void)ip;
	(void)len;
	return nif->input(p, nif);
}

struct tcp_pcb *
tp_demux_find(uint32_t rip, uint16_t rport, uint16_t lport)
{
	struct tcp_pcb *pcb;

	for (pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next)
		if (pcb->remote_port == rport && pcb->local_port == lport &&
			ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == rip)
			return pcb;
	for (pcb = tcp_tw_pcbs; pcb != NULL; pcb = pcb->next)
		if (pcb->remote_port == rport && pcb->local_port == lport &&
			ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == rip)
			return pcb;
	return NULL;
}
#endif
