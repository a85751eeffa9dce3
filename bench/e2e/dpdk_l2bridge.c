/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk_l2bridge: two DPDK ports joined at layer 2, for benchmarks only.
 *
 * Every frame received on port 0 leaves on port 1 and the other way round,
 * unchanged (the ports are put in promiscuous mode). bench/e2e/dpdk_bench.py
 * --device memif runs it between a net_memif port (the DPDK nrfwd is the
 * memif's other end) and a net_af_packet port on the veth of the benchmark's
 * namespaces. The kernel's work for the veth (skb copies, the other end's
 * IP/TCP receive, the ACKs back into the packet ring) then runs in this
 * process, on its own core, and no longer inside the DPDK nrfwd's device
 * calls: the nrfwd's port is a device with no kernel side, which is what
 * the DPDK path's own cost to be measured on (decision 0050).
 *
 * --vlan N: an 802.1Q switch port pair instead (a VLAN access port for
 * kernels without 802.1Q; tests/dpdk/test_nrfwd_dpdk_vlan.py): port 0 is
 * the trunk, port 1 the access port of VLAN N. Frames from port 1 leave on
 * port 0 tagged with N; frames from port 0 tagged with N leave on port 1
 * untagged; untagged and other-VLAN frames from port 0 are dropped.
 *
 * Usage: dpdk_l2bridge <EAL options with exactly two ports>
 *        [-- --idle-us N --vlan N]
 * On SIGINT/SIGTERM it stops and prints one line of frame counts.
 * Idle: after 64 empty polls of both ports it sleeps --idle-us (default 20)
 * microseconds, so that a bridge sharing a core with the load generator
 * gives the core back between bursts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ether.h>

#define BURST 32
#define RING 1024
#define NB_MBUF 8191
#define IDLE_POLLS 64

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
port_up(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nrx = RING, ntx = RING;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc != 0)
		return rc;
	rc = rte_eth_rx_queue_setup(port, 0, nrx, rte_eth_dev_socket_id(port), NULL, mp);
	if (rc != 0)
		return rc;
	rc = rte_eth_tx_queue_setup(port, 0, ntx, rte_eth_dev_socket_id(port), NULL);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc;
	/* Frames for the other side's MAC addresses must come in too. Some
	 * virtual devices (memif) have no such switch and take every frame. */
	rc = rte_eth_promiscuous_enable(port);
	if (rc != 0 && rc != -ENOTSUP)
		return rc;
	printf("dpdk_l2bridge: port %u (%s) up\n", port, info.driver_name);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"idle-us", required_argument, NULL, 'i'},
		{"vlan", required_argument, NULL, 'v'}, {NULL, 0, NULL, 0}};
	long vlan = 0;
	uint64_t moved[2] = {0, 0}, dropped[2] = {0, 0};
	struct rte_mbuf *bufs[BURST];
	struct rte_mempool *mp;
	struct timespec nap = {0, 20000};
	unsigned int empty = 0;
	uint16_t p;
	int n, c;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "dpdk_l2bridge: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'v') {
			vlan = strtol(optarg, NULL, 10);
			if (vlan < 1 || vlan > 4094) {
				fprintf(stderr, "dpdk_l2bridge: --vlan 1..4094\n");
				return 2;
			}
			continue;
		}
		if (c != 'i') {
			fprintf(stderr, "usage: dpdk_l2bridge <EAL options> "
				"[-- --idle-us N --vlan N]\n");
			return 2;
		}
		nap.tv_nsec = strtol(optarg, NULL, 10) * 1000L;
	}
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr, "dpdk_l2bridge: needs exactly two ports, has %u\n",
			rte_eth_dev_count_avail());
		return 2;
	}
	mp = rte_pktmbuf_pool_create("bridge", NB_MBUF, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "dpdk_l2bridge: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (p = 0; p < 2; p++) {
		int rc = port_up(p, mp);

		if (rc != 0) {
			fprintf(stderr, "dpdk_l2bridge: port %u: %s\n", p, rte_strerror(-rc));
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("dpdk_l2bridge: forwarding\n");
	fflush(stdout);
	while (!stop) {
		unsigned int got = 0;

		for (p = 0; p < 2; p++) {
			uint16_t rx = rte_eth_rx_burst(p, 0, bufs, BURST), tx;

			if (rx == 0)
				continue;
			got += rx;
			if (vlan != 0) {
				uint16_t i, k = 0;

				for (i = 0; i < rx; i++) {
					struct rte_mbuf *m = bufs[i];
					int bad;

					if (p == 1) {
						m->vlan_tci = (uint16_t)vlan;
						bad = rte_vlan_insert(&m);
					} else {
						bad = m->data_len < RTE_ETHER_HDR_LEN + 4 ||
							rte_vlan_strip(m) != 0 ||
							(m->vlan_tci & 0xfff) != vlan;
					}
					if (bad) {
						rte_pktmbuf_free(m);
						dropped[p]++;
						continue;
					}
					bufs[k++] = m;
				}
				rx = k;
			}
			tx = rte_eth_tx_burst(p ^ 1, 0, bufs, rx);
			moved[p] += tx;
			if (tx < rx) {
				dropped[p] += rx - tx;
				rte_pktmbuf_free_bulk(bufs + tx, rx - tx);
			}
		}
		if (got != 0) {
			empty = 0;
		} else if (++empty >= IDLE_POLLS && nap.tv_nsec > 0) {
			nanosleep(&nap, NULL);
		}
	}
	printf("dpdk_l2bridge: 0->1 %" PRIu64 " frames (%" PRIu64 " dropped), 1->0 %" PRIu64
	       " frames (%" PRIu64 " dropped)\n",
	       moved[0], dropped[0], moved[1], dropped[1]);
	for (p = 0; p < 2; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	rte_eal_cleanup();
	return 0;
}
