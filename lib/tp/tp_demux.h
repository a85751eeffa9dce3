/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_DEMUX_H
#define NRF_TP_DEMUX_H

/*
 * lwIP's pcbs by address and ports (the transport's own index; lwIP finds
 * the pcb of a received segment by walking its lists, one pcb after the
 * other).
 *
 * With nrfwd's own lwIP build every pcb that enters lwIP's active list is
 * reported by the ISN hook (nrf_lwip_pcb_new) and every pcb lwIP frees by
 * the destroy callback of its extended argument, so the index holds every
 * pcb of the active and TIME_WAIT lists (and perhaps a pcb whose connect
 * failed, in no list until it is freed). tp_demux_input() hands a TCP
 * segment to lwIP while lwIP's lists seem to hold only its pcb (or none,
 * when the index has none): lwIP's walk takes one step whatever the number
 * of connections, and the lists are put back together after.
 * With Debian's liblwip (no ISN hook) there is no index: tp_demux_input()
 * is netif->input and tp_demux_find() walks lwIP's lists.
 *
 * Stack thread only (the DPDK worker's lcore), like lwIP itself.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lwip/err.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"

struct tcp_pcb;

/* Start the index, before the first pcb. NRF_ENOMEM. */
int tp_demux_init(void);
void tp_demux_fini(void);

/*
 * Hand @p p (an Ethernet frame whose IPv4 packet starts at @p ip, @p len
 * bytes from there) to @p nif's input. What input() returns; @p p is
 * lwIP's from here on, as with netif->input.
 */
err_t tp_demux_input(struct netif *nif, struct pbuf *p, const uint8_t *ip, uint16_t len);

/*
 * Unlink the pcbs lwIP freed during tp_demux_input() calls ("zombies":
 * kept linked, their next pointing on, so that a burst of resets costs
 * one walk of the list, not one per reset). Zombies may stay while lwIP
 * only finds pcbs through tp_demux_input() and the owner writes, reads or
 * closes connections (lwIP's own removals walk through them unharmed);
 * this must run before anything that may take a pcb from the pool
 * (tcp_new(), a SYN to a listener: tp_demux_input() does it), before
 * lwIP's timers (sys_check_timeouts()), before a walk of the lists of the
 * transport's own, and before netif_remove(). Cheap when there is none.
 */
void tp_demux_repair(void);

/* Zombies to unlink (tp_demux_repair())? */
bool tp_demux_pending(void);

/*
 * The pcb of the active or TIME_WAIT lists for remote @p rip:@p rport and
 * local port @p lport (addresses in network order, ports in host order),
 * or NULL.
 */
struct tcp_pcb *tp_demux_find(uint32_t rip, uint16_t rport, uint16_t lport);

/* pcbs in the index (the own build; 0 with Debian's). */
uint32_t tp_demux_count(void);

#endif
