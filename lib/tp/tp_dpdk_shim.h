/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_DPDK_SHIM_H
#define NRF_TP_DPDK_SHIM_H

/*
 * Private seam between tp_dpdk.c (DPDK headers) and tp_lwip.c (lwIP
 * headers): the two sets of headers cannot meet in one translation unit
 * (struct ip6_hdr, IP_DF, byte-order macros...). Plain C types only.
 * Everything here runs on the data-path thread unless noted.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nrf_tp_dpdk.h"

/* ---- DPDK side (tp_dpdk.c) ------------------------------------------- */

/* True once nrf_tp_dpdk_init() succeeded and until nrf_tp_dpdk_fini(). */
bool nrf_tp_dp_ready(void);

/*
 * One frame for the stack: @p data (@p len bytes) lies in the device's
 * buffer @p frame. Return flags: NRF_TP_DP_RX_DROP when the frame was not
 * taken (counted as rx_dropped); NRF_TP_DP_RX_KEPT when the stack keeps
 * @p frame (zero-copy: its data stays referenced) and hands it back with
 * nrf_tp_dp_rx_release(); without KEPT the buffer goes back to the pool
 * after the call (the stack copied what it needed).
 */
#define NRF_TP_DP_RX_DROP 0x1
#define NRF_TP_DP_RX_KEPT 0x2
typedef int (*nrf_tp_dp_rx_fn)(void *arg, void *data, uint16_t len, void *frame);

/* One RX burst: @p fn for every frame, then the buffers not kept go back
 * to the pool. @return frames received. */
unsigned int nrf_tp_dp_rx(nrf_tp_dp_rx_fn fn, void *arg);

/* Give back a frame kept by nrf_tp_dp_rx_fn. Data-path thread (or the main
 * thread once no loop exists). The buffer reaches the pool at the end of the
 * poll iteration (nrf_tp_dp_iter_end()), or at fini, in bulk. */
void nrf_tp_dp_rx_release(void *frame);

/*
 * Room for one outgoing frame of @p len bytes in the TX batch (the batch
 * is sent first when full). The caller writes the frame there before the
 * next call into this file. NULL: no mbuf or frame too long (counted).
 * Any thread that owns the stack at the time (init: main thread).
 */
void *nrf_tp_dp_tx_reserve(uint16_t len);

/*
 * Zero-copy TX (decision 0036): queue a frame of @p len bytes at @p data
 * in the TX batch without copying it. The memory is lent: it must stay
 * unchanged until nrf_tp_lw_tx_release(@p cookie) is called, on this
 * thread, once the device is done with it (inside a later tx_flush() or
 * tx_reserve(), or at fini). Offered only on untagged ports whose PMD copies the
 * frame inside rte_eth_tx_burst() (net_af_packet, net_tap): @p data is
 * not DMA-able memory.
 * @return 0, or -1: not offered on this port, or no mbuf / lending slot
 *   (the caller copies instead with nrf_tp_dp_tx_reserve()).
 */
int nrf_tp_dp_tx_lend(void *data, uint16_t len, void *cookie);

/* True when nrf_tp_dp_tx_lend() is offered on the started port. */
bool nrf_tp_dp_tx_lends(void);

/*
 * Checksums the started port computes (TX) or checks (RX) itself
 * (decision 0010): NRF_TP_DP_CSUM_* bits, 0 where the device offers none
 * (net_af_packet). With an RX bit set, nrf_tp_dp_rx() drops frames the
 * device found bad and checks in software those it left unknown, so lwIP
 * need not check them again.
 */
#define NRF_TP_DP_CSUM_RX_IP 0x1u
#define NRF_TP_DP_CSUM_RX_TCP 0x2u
#define NRF_TP_DP_CSUM_TX_IP 0x4u
#define NRF_TP_DP_CSUM_TX_TCP 0x8u
unsigned int nrf_tp_dp_csum_offloads(void);

/* The frame last reserved is written and leaves its IPv4 header and TCP
 * checksums (the ones the port offloads) to the device. */
void nrf_tp_dp_tx_offload(void);

/* Send the TX batch. @return frames handed to the device. */
unsigned int nrf_tp_dp_tx_flush(void);

/* Iteration accounting: call at poll() entry (returns the TSC) and exit. */
uint64_t nrf_tp_dp_iter_begin(void);
void nrf_tp_dp_iter_end(uint64_t t0, bool busy);

/* Idle backoff after @p empty empty iterations in a row; sleeps only when
 * @p timeout_ms != 0, and not longer than it. */
void nrf_tp_dp_idle(uint32_t empty, int timeout_ms);

/*
 * The next local port for an outgoing connection, or 0: let lwIP choose.
 * Several workers share the port's address, so each takes its ports from
 * its own share of the ephemeral range (port % queues == queue): two
 * workers never open the same 4-tuple.
 */
uint16_t nrf_tp_dp_next_port(void);

/* The counters of the lcore polling now (stable for the thread). */
struct nrf_tp_dpdk_lcore_stats *nrf_tp_dp_lcore_stats(void);

/* TSC now, and its frequency. */
uint64_t nrf_tp_dp_tsc(void);
uint64_t nrf_tp_dp_hz(void);

/* ---- lwIP side (tp_lwip.c) ------------------------------------------- */

/* lwip_init() and the netif on the started port. Main thread, once.
 * @return 0 or NRF_ENOMEM. */
int nrf_tp_lw_start(const struct nrf_tp_dpdk_conf *conf, const uint8_t mac[6], uint16_t mtu);

/* Take the netif down (no loop may exist). Main thread. */
void nrf_tp_lw_stop(void);

/* True while a loop exists. */
bool nrf_tp_lw_busy(void);

/* The device is done with a frame lent by nrf_tp_dp_tx_lend(). */
void nrf_tp_lw_tx_release(void *cookie);

#endif /* NRF_TP_DPDK_SHIM_H */
