/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TP_DPDK_H
#define NRF_TP_DPDK_H

/**
 * @file
 * DPDK + lwIP back-end of the transport (nrf_tp.h): one DPDK Ethernet port,
 * one userspace TCP/IP stack (lwIP raw API) on top of it, driven in poll
 * mode by the thread that calls ops->poll().
 *
 * One per process. lwIP keeps global state, so a process has one port, one
 * IPv4 and/or one IPv6 address (dual stack), one loop and one data-path thread; scaling out is one
 * process per core (docs/architecture.md): a primary process owns the port
 * with one queue pair per worker and runs no stack (role PRIMARY), and every
 * worker is a DPDK secondary process polling its own queue pair with its own
 * lwIP (role SECONDARY). docs/decisions/0011-mp-workers.md.
 *
 * Which worker owns a frame: the workers share the port's address, so each
 * opens its outgoing connections from local ports of its own share of the
 * ephemeral range (49152..65535, port % workers == worker). A TCP frame to
 * such a port that the device put on another worker's queue is handed to
 * its owner through a ring (no copy); every other TCP frame belongs to the
 * worker that received it (the device keeps a client's flow on one queue).
 * ARP frames are copied to every other worker (except a request for our
 * own address, which the receiving worker answers). Listen ports must be
 * below 49152 with several workers.
 *
 * Start-up, on the control thread, before any worker exists:
 *
 *     struct nrf_tp_dpdk_conf conf;
 *     nrf_tp_dpdk_conf_defaults(&conf);
 *     nrf_tp_addr_parse("192.0.2.10", 0, &conf.ip);
 *     conf.prefix_len = 24;
 *     n = nrf_tp_dpdk_init(argc, argv, &conf);   // EAL args, up to "--"
 *     if (n < 0) exit(1);                        // one line was logged
 *     argc -= n; argv += n;                      // argv[0] = program name
 *     tp = nrf_tp_dpdk_ops();                    // then loop_create() etc.
 *     ...
 *     nrf_tp_dpdk_fini();                        // after loop_free()
 *
 * Differences from the kernel back-end (the ops contract is the same):
 * - loop_create(): at most one loop per process (NRF_EEXIST for a second,
 *   NRF_EINVAL before nrf_tp_dpdk_init() succeeded).
 * - poll(): one poll-mode iteration (send what earlier writes queued, one RX
 *   burst into lwIP, lwIP timers, handlers, TX burst). It does not wait for
 *   events: callers loop. After conf.idle_spin empty iterations in a row it
 *   sleeps conf.idle_sleep_us, growing to conf.idle_sleep_max_us while the
 *   loop stays idle (never longer than @p timeout_ms; never with timeout 0),
 *   so an idle process does not burn its core. Only one thread
 *   may poll; on its first poll the thread is registered with
 *   rte_thread_register() when it is not an EAL lcore (mempool cache,
 *   statistics) and its timer slack is set to 1 µs (exact idle sleeps).
 * - listen(): @p addr is 0.0.0.0 (IPv4), :: (IPv4 and IPv6, as a kernel
 *   socket without IPV6_V6ONLY) or one of the port's own addresses (else
 *   NRF_EIO; also for a family the port has no address of). Port 0 picks a
 *   free port. Connections beyond @p backlog
 *   that wait for accept() are reset. Two listeners on one address and port:
 *   NRF_EIO (there is only one loop to spread them over).
 * - connect(): IPv4 or IPv6 (a family the port has an address of); the
 *   port's own addresses, 127/8 and ::1 (lwIP's loopback path needs its
 *   tcpip thread), unspecified, IPv4-mapped, multicast/broadcast, and an
 *   off-link address without a gateway of its family fail at once with
 *   NRF_EIO. A refused,
 *   reset or unanswered connect (lwIP gives up after its SYN retries, about
 *   a minute) ends with NRF_TP_EV_ERR and connect_result() == NRF_EIO.
 * - read(): after a reset, data already received is returned first, then
 *   NRF_EIO. read_ref() returns one received segment in place (the mbuf's
 *   data under lwIP's pbuf), kept until the next read of the connection.
 * - writev(): copies (lwIP TCP_WRITE_FLAG_COPY) as much as lwIP's send
 *   buffer takes (64 KiB, at most 180 queued segments); NRF_EAGAIN when
 *   none fits, then NRF_TP_EV_OUT once the peer acknowledged data.
 *   Segments leave at the end of the running poll(), or at the start of the
 *   next one when written outside poll().
 * - close(): FIN (tcp_close); received data not yet read makes it a reset,
 *   as with kernel sockets. The memory is freed at once: no handler of it
 *   runs afterwards.
 * - loop_wake(): an atomic flag, seen by the next iteration (at most one
 *   idle sleep later).
 * - peer_name(): the address recorded at accept/connect time.
 *
 * The EAL itself, lcores, the memory shared with worker processes and the
 * worker rings are lib/dp's (nrf_dp.h); this back-end is the port and its
 * packets.
 *
 * Threads: nrf_tp_dpdk_init(), nrf_tp_dpdk_fini(), nrf_tp_dpdk_launch() and
 * nrf_tp_dpdk_join() on the main thread (the EAL main lcore); the statistics
 * getters on any thread; the ops as nrf_tp.h says.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_dp.h"
#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most queue pairs (workers) of one port in the multi-process roles. */
#define NRF_TP_DPDK_MAX_QUEUES NRF_DP_MAX_WORKERS

/** Port, address and poll-mode settings. Fill with nrf_tp_dpdk_conf_defaults(). */
struct nrf_tp_dpdk_conf {
	/** Role of this process (nrf_dp.h; default SINGLE). PRIMARY owns
	 *  the port with one queue pair per worker lcore, the packet pool and
	 *  the workers' rings and runs no TCP/IP stack and no loop
	 *  (loop_create() fails with NRF_EINVAL); SECONDARY polls queue pair
	 *  @c queue of the primary's port with its own lwIP. */
	enum nrf_dp_role role;
	/** SECONDARY: the queue pair this worker polls. */
	uint16_t queue;
	/** DPDK port id; -1: the only available port (several: NRF_EINVAL). */
	int port_id;
	/** IPv4 address of the port (family 4, port number ignored), or
	 *  family 0: no IPv4 (then @c ip6 is required). */
	struct nrf_tp_addr ip;
	/** Network prefix length of @p ip, 1..32. */
	uint8_t prefix_len;
	/** Default gateway (family 4), or family 0: on-link peers only. */
	struct nrf_tp_addr gateway;
	/** IPv6 address of the port (family 6; a global or unique-local
	 *  unicast address), or family 0: no IPv6 (decision 0065). The port
	 *  also gets its link-local address (fe80::/64 from the MAC, EUI-64);
	 *  neighbours are found with neighbour discovery (lwIP's nd6), no
	 *  duplicate-address detection is run. */
	struct nrf_tp_addr ip6;
	/** Prefix length of @p ip6, 1..64: destinations inside it are on-link
	 *  (lwIP also treats the address's whole /64 as on-link). */
	uint8_t prefix6_len;
	/** IPv6 default gateway (family 6, on-link: inside @p ip6's prefix or
	 *  link-local), or family 0: on-link peers only. */
	struct nrf_tp_addr gateway6;
	/** RX / TX descriptors of the one queue pair (default 1024 each). */
	uint16_t rx_desc;
	uint16_t tx_desc;
	/** Mbufs in the packet pool (default 8191) and per-lcore cache (256). */
	uint32_t mbufs;
	uint32_t mbuf_cache;
	/** IP MTU of the port, 0 or 576..9000 (default 0). 0: the device's MTU,
	 *  at most 1500, as DPDK reports it (1500 unless something set it).
	 *  Above 1500 (jumbo frames): the packet pool's buffers are sized for a
	 *  whole frame (data room RTE_PKTMBUF_HEADROOM + the MTU plus 22 bytes
	 *  of link header, rounded up to 1 KiB: 9216 for 9000), the MTU is set
	 *  on the device (rte_eth_dev_set_mtu()), and lwIP sends and announces
	 *  segments of up to MTU - 40 bytes. A device that refuses the MTU is
	 *  an error (NRF_EINVAL), except net_af_packet, which DPDK 22.11 says
	 *  stops at 1500 while it passes whatever its kernel interface and
	 *  its framesz devarg allow: accepted when the interface's MTU is at
	 *  least @c mtu (framesz must then hold a frame: at least mtu + 46,
	 *  and at most the data room above; e.g. framesz=9216,blocksz=36864
	 *  for 9000). Every host on the link must use the same MTU. */
	uint16_t mtu;
	/** 802.1Q VLAN of the port, 1..4094, or 0: untagged (default).
	 *  Every frame sent carries the tag; received frames without it
	 *  (untagged, or of another VLAN) are dropped and counted
	 *  (rx_vlan_other). The device strips, filters and inserts tags where
	 *  it offers that (RTE_ETH_RX_OFFLOAD_VLAN_STRIP / _VLAN_FILTER,
	 *  RTE_ETH_TX_OFFLOAD_VLAN_INSERT), the transport does otherwise; the
	 *  IP MTU is unchanged (the tag is link overhead: a frame is @c mtu +
	 *  18 bytes). Frames are not lent to the device (zero-copy TX) on a
	 *  tagged port. */
	uint16_t vlan;
	/** Frames per RX burst and per TX batch, 1..64 (default 32). */
	uint16_t burst;
	/** Empty iterations spun with rte_pause() before sleeping (default 512). */
	uint32_t idle_spin;
	/** Sleep per further empty iteration in µs; 0: never sleep, pure poll
	 * mode for a dedicated core (default 100). */
	uint32_t idle_sleep_us;
	/** The sleep doubles after every 16 sleeps of one idle spell, up to this
	 * (default 1000 µs): a long-idle process wakes ~1000 times a second. */
	uint32_t idle_sleep_max_us;
	/** Duplicate-address probe (ARP, RFC 5227 style) before the stack starts,
	 * in ms; 0: skip (default 300). */
	uint32_t arp_probe_ms;
	/** How long to wait for link up after the port starts (default 2000 ms);
	 * a link still down is logged, not an error. */
	uint32_t link_wait_ms;
	/** Floods (docs/tuning.md "Floods"); budgets are per second, each also
	 * its burst, 1..1000000. ARP requests for destinations nrfwd has
	 * connections to, the gateway and the local NRF (default 200), and for
	 * any other (default 20). */
	uint32_t arp_rate;
	uint32_t arp_stranger_rate;
	/** RSTs in answer to a segment for no connection or out of window
	 * (default 200). */
	uint32_t stray_rst_rate;
	/** ACKs in answer to an unacceptable segment of a live connection
	 * (RFC 5961 challenge ACKs; default 1000; own lwIP build only). */
	uint32_t challenge_ack_rate;
	/** Half-open connections of a listener from which SYNs are answered with
	 * SYN cookies, 1..254 (default 128; own lwIP build only). */
	uint32_t syn_cookie_from;
	/** A half-open connection (SYN_RCVD) is dropped once this old,
	 * 1000..20000 ms (default 20000, lwIP's own limit), or once it sent
	 * this many SYN-ACK retransmissions unanswered, 1..12 (default 5);
	 * checked once a second. */
	uint32_t syn_rcvd_timeout_ms;
	uint32_t synack_retries;
	/** Allow EAL arguments without --no-pci / -a / --allow: a real PCI NIC is
	 * meant to be probed. Without it such arguments are refused. */
	bool pci_nic_intended;
};

/**
 * What this build's DPDK transport can carry, fixed when nrfwd was compiled
 * (by the lwIP it was built with: the own build of subprojects/lwip, or
 * Debian's liblwip, whose options are compiled into the library).
 */
struct nrf_tp_dpdk_caps {
	/** "own" (subprojects/lwip), "debian" (liblwip) or "none" (built
	 *  without the DPDK transport). */
	const char *lwip;
	/** lwIP's TCP_MSS: the largest segment it sends and announces. */
	uint16_t tcp_mss;
	/** Largest runtime.dpdk.mtu: TCP_MSS + 40, at least 1500 and at most
	 *  9000 (1500 with Debian's liblwip, TCP_MSS 1460; 9000 with the own
	 *  build); 0 without the DPDK transport. */
	uint16_t max_mtu;
	/** lwIP built with IPv6 (LWIP_IPV6). */
	bool ipv6;
	/** 802.1Q VLAN tags (runtime.dpdk.vlan): added and removed on the DPDK
	 *  side of the transport, so with either lwIP. */
	bool vlan;
};

/** This build's capabilities. Any thread, any time (no EAL needed). */
void nrf_tp_dpdk_caps(struct nrf_tp_dpdk_caps *out);

/**
 * Whether this build can carry a port with IP MTU @p mtu (0: the device's,
 * at most 1500), VLAN @p vlan (0: untagged) and, when @p ipv6, an IPv6
 * address. Called by nrf_tp_dpdk_init() (refused before the EAL starts),
 * by `nrfwd-ctl check` and wherever a configuration is judged.
 * @param field set to the configuration field at fault (a JSON pointer,
 *   e.g. "/runtime/dpdk/mtu"), may be NULL
 * @param why   one sentence naming the limit and the fix, NUL-terminated,
 *   cut to @p n bytes; may be NULL when @p n is 0
 * @return 0, or NRF_EINVAL (this build cannot; @p field and @p why set).
 * Any thread.
 */
int nrf_tp_dpdk_caps_check(uint16_t mtu, uint16_t vlan, bool ipv6, const char **field,
	char *why, size_t n);

/** Fill @p conf with the defaults above (no address: the caller sets ip). */
void nrf_tp_dpdk_conf_defaults(struct nrf_tp_dpdk_conf *conf);

/**
 * Initialise the EAL from @p argv (up to the first "--") with
 * nrf_dp_eal_init(), start the port, probe the address and start lwIP on
 * it. Everything that can go wrong before traffic flows is reported here
 * with one log line naming the cause.
 *
 * Refused before the EAL is touched (so the caller may fix and call again):
 * a bad @p conf, and what nrf_dp_eal_init() refuses (EAL arguments without
 * --no-pci, -a/--allow unless conf->pci_nic_intended, no free hugepages
 * without --no-huge, hugepages but no hugetlbfs mount without --in-memory,
 * --no-huge together with --in-memory).
 * After rte_eal_init() was called, a failure is final for the process
 * (DPDK cannot initialise twice): exit.
 *
 * PRIMARY (also when AUTO turns into it): the process-shared EAL state
 * is required (NRF_EINVAL after the EAL started with --in-memory,
 * --no-shconf or --no-huge), the port gets one RX/TX queue pair per worker
 * and the duplicate-address probe runs; no stack is started.
 * SECONDARY: the EAL must come up as a secondary process of a running
 * primary; the pool, the port and the ARP rings are the primary's
 * (NRF_ENOENT when one is missing, NRF_EINVAL for a queue the port does
 * not have); no probe (the primary did it).
 *
 * @return the number of arguments the EAL consumed (>= 0; argv[return] is
 *   then the program name, as with rte_eal_init()), or
 *   NRF_EINVAL    refused by the safety check, bad @p conf, bad EAL option,
 *                 several ports and conf->port_id == -1, second call;
 *   NRF_ENOMEM    no hugepages / not enough memory for the EAL or the pool;
 *   NRF_ENOENT    no DPDK port (no --vdev, allow list matched nothing);
 *   NRF_EEXIST    another host answered for conf->ip (address conflict);
 *   NRF_EIO       any other EAL, device or port start failure;
 *   NRF_ENOENT    also: built without DPDK.
 * Main thread, once.
 */
int nrf_tp_dpdk_init(int argc, char **argv, const struct nrf_tp_dpdk_conf *conf);

/**
 * The ops table of this back-end (name "dpdk"). Static; any thread. Its
 * loop_create() fails until nrf_tp_dpdk_init() succeeded. NULL when nrfwd
 * was built without libdpdk/lwIP (then nrf_tp_dpdk_init() fails with
 * NRF_ENOENT and says so).
 */
const struct nrf_tp_ops *nrf_tp_dpdk_ops(void);

/** Queue pairs of the port (PRIMARY: one per worker; else 1). Any thread. */
unsigned int nrf_tp_dpdk_queues(void);

/**
 * Stop the port and release the EAL. The loop must be freed and no thread
 * may poll any more. No-op when init did not succeed. Main thread.
 */
void nrf_tp_dpdk_fini(void);

/**
 * nrf_dp_launch() once the transport is ready: run @p fn(@p arg) on the
 * data-path lcore (the first worker lcore of the EAL core list).
 * @return the lcore id used, NRF_EINVAL (transport not ready), NRF_ENOENT
 *   (no worker lcore in -l), NRF_EIO (that lcore is already running
 *   something). Main thread.
 */
int nrf_tp_dpdk_launch(int (*fn)(void *), void *arg);

/** nrf_dp_join(): wait for the function started by nrf_tp_dpdk_launch(). */
int nrf_tp_dpdk_join(void);

/**
 * Poll-mode accounting of one lcore, written only by the thread polling on
 * it. An iteration runs from one poll() entry to the next, so the caller's
 * own work after poll() (h2 pumps) is counted with the iteration that
 * caused it. Busy: the iteration received, sent or dispatched something.
 */
struct nrf_tp_dpdk_lcore_stats {
	uint64_t iterations;
	uint64_t busy_iterations;
	uint64_t cycles;           /**< TSC cycles of all iterations */
	uint64_t busy_cycles;      /**< ... of busy iterations */
	uint64_t poll_busy_cycles; /**< inside poll() of busy iterations */
	uint64_t tx_cycles;        /**< inside rte_eth_tx_burst() (virtual devices:
	                            * includes the kernel's work on the frames) */
	uint64_t rx_cycles;        /**< inside rte_eth_rx_burst() of busy iterations
	                            * (net_af_packet: the copy out of the packet
	                            * ring). busy - tx - rx = the path's own cost,
	                            * the device's excluded (decision 0035) */
	uint64_t idle_sleeps;      /**< idle backoff sleeps taken */
	uint64_t rx_frames;
	uint64_t tx_frames;
	uint64_t tx_dropped;       /**< TX queue full after retries */
	uint64_t tx_nombuf;        /**< no mbuf for a frame lwIP sent */
	uint64_t rx_dropped;       /**< frames not given to lwIP: not IPv4/ARP,
	                            * a loopback/own source address, no memory */
	uint64_t arp_shared;       /**< ARP frames copied to the other workers */
	uint64_t steered;          /**< frames of another worker's connection
	                            * handed to it (see nrf_tp_dpdk_conf.role) */
	uint64_t from_workers;     /**< frames other workers handed here */
	/* Neighbours and stray answers (decision 0056). */
	uint64_t neigh_entries;    /**< gauge: neighbour entries in use */
	uint64_t neigh_pinned;     /**< gauge: ... of them pinned (connections,
	                            * the gateway): never evicted */
	uint64_t neigh_direct;     /**< packets sent to the MAC of the frame they
	                            * answer, without the table */
	uint64_t neigh_evicted;    /**< stranger entries evicted for another */
	uint64_t neigh_refused;    /**< entries or pins refused: no room left
	                            * that a stranger holds */
	uint64_t neigh_queue_drops; /**< packets to unresolved neighbours
	                            * dropped (queue share full, no answer) */
	uint64_t arp_requests;     /**< ARP requests sent */
	uint64_t arp_limited;      /**< ARP requests not sent: over budget */
	uint64_t arp_replies;      /**< ARP replies sent */
	uint64_t rst_sent;         /**< RSTs sent in answer to a segment */
	uint64_t rst_limited;      /**< ... not sent: over the per-second budget */
	uint64_t challenge_acks;   /**< ACKs to unacceptable segments of a live
	                            * connection (RFC 5961 challenge ACKs; own lwIP
	                            * build) */
	uint64_t challenge_limited; /**< ... not sent (segment dropped): over the
	                            * per-second budget */
	/* SYN cookies (decision 0057). */
	uint64_t syn_cookies_sent; /**< SYN-ACKs with a cookie (listener under
	                            * pressure: no state kept) */
	uint64_t syn_cookies_ok;   /**< ACKs with a valid cookie: connections made */
	uint64_t listen_overflows; /**< connections refused: listen queue full */
	uint64_t half_open_expired; /**< half-open pcbs (SYN_RCVD) dropped: older
	                            * than synRcvdTimeoutMs or synAckRetries
	                            * SYN-ACKs unanswered */
	uint64_t orphans_reset;    /**< closed connections lwIP still held (FIN
	                            * exchange) reset to free pcbs for new ones:
	                            * the pool was nearly used up */
	/* lwIP's use, sampled once a second (gauges). */
	uint64_t pcb_syn_rcvd;     /**< TCP pcbs half-open (SYN_RCVD) */
	uint64_t pcb_established;  /**< ... ESTABLISHED */
	uint64_t pcb_closing;      /**< ... other active states (SYN_SENT, FIN_WAIT,
	                            * CLOSE_WAIT, CLOSING, LAST_ACK) */
	uint64_t pcb_time_wait;    /**< ... TIME_WAIT */
	uint64_t rx_held;          /**< received frames lwIP or unread data hold
	                            * in place (zero-copy; at most a quarter of
	                            * the mbuf pool) */
	/* 802.1Q (nrf_tp_dpdk_conf.vlan). */
	uint64_t rx_vlan_other;    /**< frames dropped on a tagged port: untagged
	                            * or of another VLAN (also in rx_frames) */
	uint64_t vlan;             /**< gauge: the port's VLAN, 0: untagged */
	uint64_t vlan_offloads;    /**< gauge: NRF_TP_DPDK_VLAN_* the device does
	                            * (the rest is done in software) */
};

/** nrf_tp_dpdk_lcore_stats.vlan_offloads: the device strips the tag of
 * received frames, drops other VLANs' frames, inserts the tag on sent ones. */
#define NRF_TP_DPDK_VLAN_RX_STRIP 0x1u
#define NRF_TP_DPDK_VLAN_RX_FILTER 0x2u
#define NRF_TP_DPDK_VLAN_TX_INSERT 0x4u

/**
 * Counters of @p lcore_id (as reported by nrf_tp_dpdk_poll_lcore()).
 * @return 0, NRF_EINVAL (lcore id out of range), NRF_ENOENT (never polled).
 * Any thread; the values are read without a lock (each one is consistent).
 */
int nrf_tp_dpdk_lcore_stats(unsigned int lcore_id, struct nrf_tp_dpdk_lcore_stats *out);

/** Lcore id of the thread that polled last, or -1 before the first poll. Any thread. */
int nrf_tp_dpdk_poll_lcore(void);

/** TSC frequency in Hz (0 before init), to turn cycles into time. Any thread. */
uint64_t nrf_tp_dpdk_tsc_hz(void);

/** Port counters (rte_eth_stats_get()). */
struct nrf_tp_dpdk_port_stats {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t ibytes;
	uint64_t obytes;
	uint64_t imissed;   /**< dropped by the device: RX queue full */
	uint64_t ierrors;
	uint64_t oerrors;
	uint64_t rx_nombuf; /**< RX mbuf allocation failures */
};

/** @return 0, NRF_EINVAL (not initialised), NRF_EIO. Any thread. */
int nrf_tp_dpdk_port_stats(struct nrf_tp_dpdk_port_stats *out);

/** One extended counter of the port, as the PMD names it. */
struct nrf_tp_dpdk_xstat {
	char name[64];
	uint64_t value;
};

/**
 * The port's extended counters (rte_eth_xstats_get(): what the PMD offers;
 * net_af_packet has few, a NIC's PMD its drops by cause), up to @p max
 * into @p out in the PMD's order; names longer than 63 bytes are cut.
 * Allocates while it runs: not for the data path.
 * @return how many were written (>= 0), NRF_EINVAL (not initialised),
 *   NRF_EIO (the PMD failed), NRF_ENOMEM. Any thread.
 */
int nrf_tp_dpdk_port_xstats(struct nrf_tp_dpdk_xstat *out, unsigned int max);

#ifdef __cplusplus
}
#endif
#endif /* NRF_TP_DPDK_H */
