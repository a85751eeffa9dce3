/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport selection for nrfwd: runtime.transport "kernel" or "dpdk".
 *
 * rte_eal_init() can run once per process and prints its whole usage text
 * for an unknown option, so what can be checked is checked before it runs:
 * every EAL option is one DPDK 22.11 knows, PCI probing is limited (--no-pci
 * or -a) unless --pci-nic says a PCI NIC is meant, one worker (lib/cfg has
 * checked runtime.dpdk and what the port can serve). Each refusal is one
 * line naming the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_dpdk.h"
#include "nrfwd_tp.h"

#define MOD "nrfwd"

static bool dpdk_up;
static const char *tp_name = "kernel";

/* ------------------------------------------------------------------------ */
/* EAL arguments                                                             */

/* lib/dp's option table says what is an EAL option of DPDK 22.11 and
 * which take values. 0, or -1 after logging the one bad argument. */
static int
eal_check(int argc, char **argv, struct nrf_dp_eal_args *sc)
{
	const char *a;

	if (nrf_dp_eal_scan(argc, argv, sc) == 0)
		return 0;
	a = argv[sc->bad];
	switch (sc->why) {
	case NRF_DP_EAL_NOT_OPTION:
		NRF_LOG(ERR, MOD, "unexpected EAL argument \"%s\" (EAL options go before "
			"\"--\", nrfwd's own after it; see nrfwd --help)", a);
		break;
	case NRF_DP_EAL_NO_VALUE:
		NRF_LOG(ERR, MOD, "EAL option \"%s\" needs a value", a);
		break;
	default:
		NRF_LOG(ERR, MOD, "unknown EAL option \"%s\" (EAL options go before \"--\"; "
			"see nrfwd --help and docs/tuning.md)", a);
		break;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Port settings                                                             */

/* runtime.dpdk (validated by lib/cfg: address, gateway, pool sizes,
 * listeners, local NRF) into the back-end's settings. */
static void
dpdk_settings(const struct nrf_cfg *cfg, const struct nrfwd_tp_opts *o,
	struct nrf_tp_dpdk_conf *c)
{
	const struct nrf_cfg_dpdk *d = &cfg->rt.dpdk;

	nrf_tp_dpdk_conf_defaults(c);
	if (d->ipv4_address[0] != '\0')
		(void)nrf_tp_addr_parse(d->ipv4_address, 0, &c->ip);
	c->prefix_len = (uint8_t)d->prefix_length;
	if (d->gateway[0] != '\0')
		(void)nrf_tp_addr_parse(d->gateway, 0, &c->gateway);
	if (d->ipv6_address[0] != '\0')
		(void)nrf_tp_addr_parse(d->ipv6_address, 0, &c->ip6);
	c->prefix6_len = (uint8_t)d->ipv6_prefix_length;
	if (d->ipv6_gateway[0] != '\0')
		(void)nrf_tp_addr_parse(d->ipv6_gateway, 0, &c->gateway6);
	c->port_id = d->port_id;
	c->rx_desc = (uint16_t)d->rx_descriptors;
	c->tx_desc = (uint16_t)d->tx_descriptors;
	c->mbufs = d->mbufs;
	c->mbuf_cache = d->mbuf_cache;
	c->mtu = d->mtu;
	c->vlan = d->vlan;
	c->burst = (uint16_t)d->burst;
	c->idle_spin = d->idle_spin;
	c->idle_sleep_us = d->idle_sleep_us;
	c->idle_sleep_max_us = d->idle_sleep_max_us;
	c->arp_probe_ms = d->arp_probe_ms;
	c->link_wait_ms = d->link_wait_ms;
	c->arp_rate = d->arp_rate;
	c->arp_stranger_rate = d->arp_stranger_rate;
	c->stray_rst_rate = d->stray_rst_rate;
	c->challenge_ack_rate = d->challenge_ack_rate;
	c->syn_cookie_from = d->syn_cookie_from;
	c->syn_rcvd_timeout_ms = d->syn_rcvd_timeout_ms;
	c->synack_retries = d->synack_retries;
	c->pci_nic_intended = o->pci_nic;
	c->role = o->role;
	c->queue = (uint16_t)o->queue;
}

/*
 * Output of the EAL start-up. rte_eal_init() prints its usage on stdout for
 * a bad option, and the EAL and drivers print their own lines on stderr
 * next to the back-end's one line naming the cause. While
 * nrf_tp_dpdk_init() runs, stdout goes to /dev/null and stderr into a
 * temporary file; afterwards a success replays stderr as it was, and a
 * failure prints the back-end's last line with the first line DPDK printed
 * (usually the cause; the rest follows from it) appended: one line
 * (everything at --log-level debug).
 */
struct capture {
	int out;    /* saved stdout, -1: not redirected */
	int err;    /* saved stderr */
	FILE *tmp;  /* what stderr received */
};

static void
capture_begin(struct capture *cp, bool help)
{
	int null;

	cp->out = cp->err = -1;
	cp->tmp = NULL;
	if (help)
		return;
	fflush(stdout);
	fflush(stderr);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cp->out = dup(STDOUT_FILENO);
	if (null >= 0 && cp->out >= 0)
		(void)dup2(null, STDOUT_FILENO);
	if (null >= 0)
		close(null);
	cp->tmp = tmpfile();
	cp->err = cp->tmp != NULL ? dup(STDERR_FILENO) : -1;
	if (cp->err >= 0)
		(void)dup2(fileno(cp->tmp), STDERR_FILENO);
}

static void
rstrip(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static void
capture_end(struct capture *cp, bool failed)
{
	char line[1024], ours[1024] = "", theirs[512] = "";
	bool all = !failed || nrf_log_get_level() >= NRF_LOG_DEBUG;

	fflush(stdout);
	fflush(stderr);
	if (cp->out >= 0) {
		(void)dup2(cp->out, STDOUT_FILENO);
		close(cp->out);
	}
	if (cp->err < 0)
		return;
	(void)dup2(cp->err, STDERR_FILENO);
	close(cp->err);
	rewind(cp->tmp);
	while (fgets(line, sizeof(line), cp->tmp) != NULL) {
		if (all) {
			fputs(line, stderr);
			continue;
		}
		rstrip(line);
		/* lib/dp logs as "dpdk", the transport as "tp-dpdk" */
		if (strstr(line, "dpdk: ") != NULL || strstr(line, MOD ": ") != NULL)
			snprintf(ours, sizeof(ours), "%s", line);
		else if (line[0] != '\0' && theirs[0] == '\0' &&
			strncmp(line, "TELEMETRY:", 10) != 0)
			snprintf(theirs, sizeof(theirs), "%s", line); /* the first: the cause */
	}
	fclose(cp->tmp);
	if (all)
		return;
	if (ours[0] == '\0')
		NRF_LOG(ERR, MOD, "DPDK start-up failed%s%s", theirs[0] != '\0' ? ": " : "",
			theirs);
	else if (theirs[0] != '\0')
		fprintf(stderr, "%s [DPDK: %s]\n", ours, theirs);
	else
		fprintf(stderr, "%s\n", ours);
}

int
nrfwd_tp_start(const struct nrf_cfg *cfg, const struct nrfwd_tp_opts *o, unsigned int workers,
	const struct nrf_tp_ops **tp)
{
	struct nrf_tp_dpdk_conf conf;
	struct capture cp;
	struct nrf_dp_eal_args sc;
	sigset_t sigs;
	int n;

	if (cfg->rt.transport != NRF_TRANSPORT_DPDK) {
		if (o->eal_argc > 1)
			NRF_LOG(INFO, MOD, "kernel transport: ignoring %d EAL argument(s)",
				o->eal_argc - 1);
		*tp = nrf_tp_kern_ops();
		tp_name = (*tp)->name;
		return 0;
	}
	if (nrf_tp_dpdk_ops() == NULL) {
		(void)nrf_tp_dpdk_init(o->eal_argc, o->eal_argv, NULL); /* logs why */
		return 1;
	}
	if (workers != 1) {
		NRF_LOG(ERR, MOD, "--workers %u: the DPDK transport runs one worker per process "
			"(one lwIP stack, one port); run one nrfwd per core instead", workers);
		return 2;
	}
	if (eal_check(o->eal_argc, o->eal_argv, &sc) != 0)
		return 2;
	if (!sc.pci_limited && !o->pci_nic) {
		NRF_LOG(ERR, MOD, "refusing to start DPDK: the EAL arguments (before \"--\") have "
			"neither --no-pci nor -a <pci-address>, so every PCI NIC of this machine "
			"would be probed; use --no-pci with a --vdev, -a for the NIC meant, or "
			"--pci-nic (after \"--\") if probing every NIC is intended");
		return 2;
	}
	dpdk_settings(cfg, o, &conf);
	/* EAL threads are created inside rte_eal_init() and inherit this
	 * thread's signal mask: block what the control thread waits for now,
	 * or a SIGTERM could land on an EAL thread and kill the process. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	capture_begin(&cp, sc.help);
	n = nrf_tp_dpdk_init(o->eal_argc, o->eal_argv, &conf);
	capture_end(&cp, n < 0);
	if (n < 0)
		return 1;
	dpdk_up = true;
	*tp = nrf_tp_dpdk_ops();
	tp_name = (*tp)->name;
	return 0;
}

bool
nrfwd_tp_primary(void)
{
	return dpdk_up && nrf_dp_role() == NRF_DP_PRIMARY;
}

bool
nrfwd_tp_dpdk_built(void)
{
	return nrf_tp_dpdk_ops() != NULL;
}

const char *
nrfwd_tp_name(void)
{
	return tp_name;
}

void
nrfwd_tp_report(const struct nrf_rt *rt)
{
	struct nrf_rt_dp_stats d;
	struct nrf_rt_stats s;
	const struct nrf_tp_dpdk_lcore_stats *l = &d.lc;
	char per[96];
	double hz, req;

	if (nrf_rt_dp_stats_get(rt, &d) != 0 || !d.polled)
		return;
	nrf_rt_stats_get(rt, &s);
	hz = d.tsc_hz > 0 ? (double)d.tsc_hz : 1.0;
	req = (double)s.requests;
	if (s.requests > 0)
		snprintf(per, sizeof(per), "%.0f busy cycles per request (%.2f us)",
			(double)l->busy_cycles / req, (double)l->busy_cycles / req / hz * 1e6);
	else
		snprintf(per, sizeof(per), "no busy cycles per request (no requests)");
	NRF_LOG(INFO, MOD,
		"dpdk lcore %d: %llu requests, %s, busy %.1f%% "
		"of %.2f s; per busy iteration %.0f cycles, %.0f in poll() of which %.0f in the "
		"device TX call; frames rx %llu tx %llu, dropped rx %llu tx %llu, no mbuf %llu, "
		"imissed %llu, idle sleeps %llu",
		d.lcore, (unsigned long long)s.requests, per,
		l->cycles > 0 ? 100.0 * (double)l->busy_cycles / (double)l->cycles : 0.0,
		(double)l->cycles / hz,
		l->busy_iterations > 0 ? (double)l->busy_cycles / (double)l->busy_iterations : 0.0,
		l->busy_iterations > 0 ? (double)l->poll_busy_cycles / (double)l->busy_iterations : 0.0,
		l->busy_iterations > 0 ? (double)l->tx_cycles / (double)l->busy_iterations : 0.0,
		(unsigned long long)l->rx_frames, (unsigned long long)l->tx_frames,
		(unsigned long long)l->rx_dropped, (unsigned long long)l->tx_dropped,
		(unsigned long long)l->tx_nombuf, (unsigned long long)d.port.imissed,
		(unsigned long long)l->idle_sleeps);
}

void
nrfwd_tp_stop(void)
{
	if (dpdk_up) {
		nrf_tp_dpdk_fini();
		dpdk_up = false;
	}
}

void
nrfwd_tp_usage(FILE *f)
{
	fprintf(f,
		"\n"
		"Transport (runtime.transport in the configuration):\n"
		"  kernel (default)  kernel sockets; EAL arguments are ignored\n"
		"  dpdk              one DPDK port with a userspace TCP/IP stack (lwIP),\n"
		"                    polled by one worker on the data-path lcore; the\n"
		"                    port's address is runtime.dpdk.ipv4Address\n"
		"      --pci-nic     allow EAL arguments without --no-pci / -a: probing the\n"
		"                    machine's PCI NICs is intended\n"
		"\n"
		"EAL options that matter (before \"--\"; docs/tuning.md explains them):\n"
		"  --no-pci                 never probe PCI devices (virtual ports), or\n"
		"  -a <pci-address>         probe exactly the NIC meant for nrfwd; one of the\n"
		"                           two is required (else --pci-nic)\n"
		"  --vdev=net_af_packet0,iface=<veth>,qpairs=1,qdisc_bypass=1\n"
		"  --vdev=net_tap0,iface=<name>   virtual ports for tests and demos\n"
		"  -l <main>,<data>         two lcores: control thread, data-path worker\n"
		"  -l <main>,<w1>,<w2>...   three or more: a primary (port, REST API) and one\n"
		"                           worker process per worker lcore, each with its\n"
		"                           own queue pair and stack (needs hugepages, a\n"
		"                           hugetlbfs mount and a unique --file-prefix)\n"
		"  --in-memory              no hugepage files left behind (needs hugepages)\n"
		"  --no-huge --no-shconf    no hugepages reserved: plain memory (slower start)\n"
		"  --file-prefix=<unique>   per process, when files are wanted\n"
		"  -m <MB> / --socket-mem   memory to take (64-128 MB is plenty)\n"
		"  --no-telemetry           no telemetry socket\n"
		"e.g. nrfwd --no-pci --in-memory -l 0,1 \\\n"
		"       --vdev=net_af_packet0,iface=veth0,qpairs=1,qdisc_bypass=1 \\\n"
		"       -- --config nrfwd.json\n");
}
