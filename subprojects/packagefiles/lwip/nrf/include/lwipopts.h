/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lwIP options of nrfwd's own lwIP build (decision 0010): one polling
 * thread per process, no OS layer (NO_SYS=1), raw TCP API over IPv4 and
 * IPv6 (dual stack, decision 0065) and Ethernet only, fixed pools instead of malloc, larger windows, checksums
 * per netif so the DPDK port's offloads can take them over.
 *
 * Sizes follow nrfwd's limits: runtime.maxConnections (default 10000) plus
 * peer connections and TIME_WAIT; segments of up to MTU - 40 bytes: 1460 on
 * a 1500-byte MTU, 8960 with runtime.dpdk.mtu 9000 (decision 0048).
 */
#ifndef NRF_LWIPOPTS_H
#define NRF_LWIPOPTS_H

/* Tells tp_lwip.c which lwIP it is compiled against. */
#define NRF_LWIP_OWN 1

/* ---- system ---------------------------------------------------------- */
#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0       /* one thread owns the stack */
#define LWIP_TIMERS 1
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_NETIF_API 0
#define LWIP_STATS 0
#define LWIP_PROVIDE_ERRNO 0

/* ---- memory: pools, no malloc per segment ---------------------------- */
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0
#define MEM_ALIGNMENT 8
/* mem_malloc() (PBUF_RAM: TCP segments written with TCP_WRITE_FLAG_COPY,
 * ACKs, ARP) takes the smallest fitting pool of lwippools.h. */
#define MEM_USE_POOLS 1
#define MEM_USE_POOLS_TRY_BIGGER_POOL 1
#define MEMP_USE_CUSTOM_POOLS 1
#define MEMP_OVERFLOW_CHECK 0
#define MEMP_SANITY_CHECK 0

#define MEMP_NUM_TCP_PCB 12288       /* maxConnections + peers + TIME_WAIT */
#define MEMP_NUM_TCP_PCB_LISTEN 16
#define MEMP_NUM_TCP_SEG 32768       /* unsent + unacked + out-of-order, all pcbs */
#define MEMP_NUM_ARP_QUEUE 64
#define MEMP_NUM_SYS_TIMEOUT 8
#define MEMP_NUM_PBUF 256            /* PBUF_REF/ROM: unused by nrfwd */
/* RX frames referenced in place (tp_lwip.c: pbuf_custom over the mbuf). */
#define LWIP_SUPPORT_CUSTOM_PBUF 1
#define MEMP_NUM_UDP_PCB 1
#define MEMP_NUM_RAW_PCB 1
/* RX frames: one pool element per Ethernet frame (1514 bytes, single
 * pbuf), held until the owner reads or lwIP drops it (out of order). */
#define PBUF_POOL_SIZE 8192
#define PBUF_POOL_BUFSIZE 1536

/* ---- protocols ------------------------------------------------------- */
#define LWIP_IPV4 1
/* IPv6 (decision 0065): static addresses only (no SLAAC, no DHCPv6, no
 * router solicitation), neighbour discovery with lwIP's nd6, ICMPv6 echo;
 * TCP only, so no fragmentation or reassembly. No MLD: ip6_input accepts
 * the all-nodes and our solicited-node groups without joining them. The
 * gateway is the transport's (LWIP_HOOK_ND6_GET_GW), not learned from
 * router advertisements. */
#ifdef NRF_LWIP_NO_IPV6
#define LWIP_IPV6 0                  /* meson -Dlwip_ipv6=false */
#else
#define LWIP_IPV6 1
#endif
#define LWIP_IPV6_NUM_ADDRESSES 2    /* link-local + the configured one */
#define LWIP_IPV6_AUTOCONFIG 0
#define LWIP_IPV6_ADDRESS_LIFETIMES 0
#define LWIP_IPV6_DHCP6 0
#define LWIP_IPV6_MLD 0
#define LWIP_IPV6_FRAG 0
#define LWIP_IPV6_REASS 0
#define LWIP_IPV6_SEND_ROUTER_SOLICIT 0
#define LWIP_IPV6_DUP_DETECT_ATTEMPTS 0 /* static addresses are valid at once */
#define LWIP_ICMP6 1
#define LWIP_ND6 1
#define LWIP_ND6_QUEUEING 1
#define MEMP_NUM_ND6_QUEUE 64
#define LWIP_ND6_NUM_NEIGHBORS 64
#define LWIP_ND6_NUM_DESTINATIONS 64
#define LWIP_ND6_NUM_PREFIXES 2
#define LWIP_ND6_NUM_ROUTERS 2
#define LWIP_ND6_ALLOW_RA_UPDATES 0
#define LWIP_ND6_TCP_REACHABILITY_HINTS 1
#define LWIP_IPV6_SCOPES 0
#define CHECKSUM_GEN_ICMP6 1
#define CHECKSUM_CHECK_ICMP6 1
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define ETHARP_SUPPORT_STATIC_ENTRIES 0
#define ARP_TABLE_SIZE 64
#define ARP_QUEUEING 1
#define ARP_QUEUE_LEN 16
#define ETH_PAD_SIZE 0
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 0              /* TCP with DF: no fragments expected */
#define IP_FRAG 0
#define IP_OPTIONS_ALLOWED 0
#define IP_SOF_BROADCAST 0
/* No loopback netif: lwIP's loopback path needs the tcpip thread (the
 * Debian build's assert hazard). tp_lwip.c refuses loopback anyway. */
#define LWIP_NETIF_LOOPBACK 0
#define LWIP_HAVE_LOOPIF 0
#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_NETIF_TX_SINGLE_PBUF 0
#define LWIP_SINGLE_NETIF 1

/* ---- TCP ------------------------------------------------------------- */
#define LWIP_TCP 1
/* The largest segment, for a 9000-byte MTU: lwIP sends and announces
 * (SYN MSS option) min(TCP_MSS, netif MTU - 40) (TCP_CALCULATE_EFF_SEND_MSS),
 * so a 1500-byte port keeps 1460. Queue lengths below count 1460-byte
 * segments, the smallest a full send buffer is made of. */
#define TCP_MSS 8960
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 3
#define TCP_WND (256 * 1024)
#define TCP_SND_BUF (256 * 1024)
#define TCP_SND_QUEUELEN (2 * TCP_SND_BUF / 1460 + 8)
#define TCP_SNDLOWAT (24 * 1024)        /* lwIP: at most 0xffff - 4 * TCP_MSS */
#define TCP_SNDQUEUELOWAT (TCP_SND_QUEUELEN / 2)
#define TCP_WND_UPDATE_THRESHOLD (TCP_WND / 4)
#define TCP_OVERSIZE TCP_MSS
#define TCP_QUEUE_OOSEQ 1
#define TCP_OOSEQ_MAX_PBUFS 64
#define TCP_LISTEN_BACKLOG 1
#define TCP_DEFAULT_LISTEN_BACKLOG 255
#define LWIP_TCP_TIMESTAMPS 0
#define LWIP_TCP_SACK_OUT 0
#define TCP_MAXRTX 12
#define TCP_SYNMAXRTX 6
#define LWIP_TCP_KEEPALIVE 0
#define LWIP_CALLBACK_API 1
#define LWIP_RANDOMIZE_INITIAL_LOCAL_PORTS 1
#define SO_REUSE 1

/* ---- checksums: per netif (LWIP_CHECKSUM_CTRL_PER_NETIF) ------------- */
/* Compiled in; tp_lwip.c switches generation and checking off on the
 * netif where the DPDK port offloads them (tp_dpdk.c then sets the mbuf
 * offload flags, and checks in software what the device left unknown). */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_TCP 1
#define CHECKSUM_GEN_ICMP 1
#define CHECKSUM_CHECK_IP 1
#define CHECKSUM_CHECK_TCP 1
#define CHECKSUM_CHECK_ICMP 1
#define LWIP_CHECKSUM_ON_COPY 0
/* The IPv4 header checksum summed from the fields as ip4_output writes
 * them, not by a second pass over the header (lwIP turns this off by
 * default with per-netif control; its code honours the netif's flag
 * either way: 0 where the device computes it). Decision 0042. */
#define LWIP_INLINE_IP_CHKSUM 1
/* 8 bytes per load (nrf/nrf_sys_arch.c) instead of lwIP's 2. */
unsigned short nrf_lwip_chksum(const void *dataptr, int len);
#define LWIP_CHKSUM nrf_lwip_chksum
/* Non-zero: nrf_lwip_chksum() as on a CPU without AVX2 (unit tests). */
extern int nrf_lwip_chksum_scalar_only;

/* ---- hooks ----------------------------------------------------------- */
#define LWIP_HOOK_FILENAME "nrf_lwip_hooks.h"
#define LWIP_HOOK_TCP_ISN nrf_lwip_tcp_isn
/* One extended argument per pcb: the transport's index of connections by
 * address and ports learns through it when lwIP frees a pcb (lib/tp). */
#define LWIP_TCP_PCB_NUM_EXT_ARGS 1
/* Every segment of a known pcb passes the transport first (it limits the
 * ACKs lwIP sends to unacceptable segments of a connection, RFC 5961). */
#define LWIP_HOOK_TCP_INPACKET_PCB nrf_lwip_tcp_inpacket
/* The IPv6 next hop of an off-link destination: the configured gateway
 * (tp_lwip.c); on-link (the address's prefix) is the destination itself. */
#define LWIP_HOOK_ND6_GET_GW nrf_lwip_nd6_get_gw

/* ---- debugging: off; assertions per arch/cc.h ------------------------- */
/* Assertions compiled out unless the build asks for them (meson
 * -Dlwip_asserts, which defines NRF_LWIP_ASSERTS): some 400 instructions
 * per forwarded request (decision 0044). */
#ifndef NRF_LWIP_ASSERTS
#define LWIP_NOASSERT 1
#endif
#define LWIP_DEBUG 0
#define LWIP_DBG_TYPES_ON 0

#endif /* NRF_LWIPOPTS_H */
