/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL side of the DPDK platform (nrf_dp.h): start-up with its safety
 * checks, the process role, lcores, launch/join, the shared memzone and the
 * worker rings. No lwIP header may appear here (they clash with DPDK's).
 *
 * Start-up checks run before rte_eal_init() wherever possible, because the
 * EAL cannot be initialised a second time in a process: a refused start can
 * be corrected and retried, a failed rte_eal_init() cannot.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "nrf_common.h"
#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define MOD "dpdk"
#define WORKER_RING_NAME "nrf_wk_%u"
#define WORKER_RING_SIZE 4096

static struct {
	bool tried;           /* rte_eal_init() was called */
	bool up;              /* ... and succeeded */
	enum nrf_dp_role role;
	unsigned int workers;
	int launched;         /* lcore running nrf_dp_launch()'s function, or -1 */
	uint64_t hz;
	bool rings_owned;     /* PRIMARY: the rings are ours to free */
	struct rte_ring *ring[NRF_DP_MAX_WORKERS];
} eal = {
	.launched = -1,
	.workers = 1,
};

/* Free hugepages of every size; -1 when the kernel does not say. */
static long
free_hugepages(void)
{
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;
	long sum = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[512];
		FILE *f;
		long v;

		if (strncmp(e->d_name, "hugepages-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/free_hugepages",
			e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
		fclose(f);
	}
	closedir(d);
	return sum;
}

static bool
hugetlbfs_mounted(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[1024];
	bool found = false;

	if (f == NULL)
		return true; /* cannot tell: let the EAL decide */
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	return found;
}

static const char *
eal_hint(int e)
{
	switch (e) {
	case EINVAL:
		return " (bad EAL option?)";
	case ENOMEM:
		return " (not enough hugepage memory: reserve more, lower --socket-mem/-m, "
		       "or use --no-huge --no-shconf)";
	case EACCES:
		return " (no permission, or no usable hugepages: run as root, or --no-huge "
		       "--no-shconf)";
	case EALREADY:
		return " (EAL already initialised in this process)";
	case ENOTSUP:
		return " (a device could not be probed: check the --vdev arguments, e.g. "
		       "that iface= exists in this network namespace)";
	case ENODEV:
		return " (no usable device)";
	default:
		return " (is another DPDK process using the same --file-prefix?)";
	}
}

/* What can be refused before rte_eal_init(): 0 or the error (logged). */
static int
precheck(const struct nrf_dp_eal_args *f, const struct nrf_dp_conf *conf)
{
	if (!f->pci_limited && !conf->pci_nic_intended) {
		NRF_LOG(ERR, MOD, "refusing to start DPDK: the EAL arguments have neither --no-pci "
			"nor -a/--allow, so every PCI NIC of this machine would be probed "
			"(use --no-pci with a --vdev, or -a <pci-address> for the NIC meant)");
		return NRF_EINVAL;
	}
	if (f->no_huge && f->in_memory) {
		NRF_LOG(ERR, MOD, "refusing to start DPDK: --no-huge cannot be combined with "
			"--in-memory (use --no-huge --no-shconf)");
		return NRF_EINVAL;
	}
	if (conf->role == NRF_DP_PRIMARY && (f->in_memory || f->no_huge || f->no_shconf)) {
		NRF_LOG(ERR, MOD, "refusing to start DPDK: worker processes share the primary's "
			"memory, which --in-memory, --no-huge and --no-shconf turn off (use "
			"hugepages with a hugetlbfs mount and a unique --file-prefix)");
		return NRF_EINVAL;
	}
	if (!f->no_huge && !f->help && conf->role != NRF_DP_SECONDARY) {
		long fh = free_hugepages();

		if (fh == 0) {
			NRF_LOG(ERR, MOD, "no free hugepages: reserve some (echo 512 > "
				"/proc/sys/vm/nr_hugepages) or run with --no-huge --no-shconf");
			return NRF_ENOMEM;
		}
		if (!f->in_memory && !hugetlbfs_mounted()) {
			NRF_LOG(ERR, MOD, "hugepages are reserved but no hugetlbfs is mounted: add "
				"--in-memory, or mount hugetlbfs");
			return NRF_ENOMEM;
		}
	}
	return 0;
}

/* AUTO resolved, and what PRIMARY needs checked: 0 or the error (logged). */
static int
take_role(const struct nrf_dp_eal_args *f, const struct nrf_dp_conf *conf)
{
	unsigned int nw;

	eal.role = conf->role;
	eal.workers = 1;
	if (eal.role == NRF_DP_AUTO)
		eal.role = rte_lcore_count() >= 3 ? NRF_DP_PRIMARY : NRF_DP_SINGLE;
	if (eal.role != NRF_DP_PRIMARY)
		return 0;
	nw = rte_lcore_count() - 1;
	eal.workers = NRF_MAX(nw, 1u);
	if (conf->role == NRF_DP_AUTO && (f->in_memory || f->no_huge || f->no_shconf)) {
		NRF_LOG(ERR, MOD, "%u worker lcores run as worker processes, which share the "
			"primary's memory: --in-memory, --no-huge and --no-shconf turn that off (use "
			"hugepages with a hugetlbfs mount and a unique --file-prefix)", nw);
		return NRF_EINVAL;
	}
	if (eal.workers > NRF_DP_MAX_WORKERS) {
		NRF_LOG(ERR, MOD, "%u workers: at most " RTE_STR(NRF_DP_MAX_WORKERS) " per port",
			eal.workers);
		return NRF_ETOOBIG;
	}
	return 0;
}

int
nrf_dp_eal_init(int argc, char **argv, const struct nrf_dp_conf *conf)
{
	struct nrf_dp_eal_args f;
	int n, rc;

	if (eal.tried) {
		NRF_LOG(ERR, MOD, "DPDK start-up was already attempted in this process");
		return NRF_EINVAL;
	}
	/* Unknown options are the EAL's to refuse; the flags are complete. */
	(void)nrf_dp_eal_scan(argc, argv, &f);
	rc = precheck(&f, conf);
	if (rc != 0)
		return rc;
	if (!f.log_level)
		rte_log_set_global_level(RTE_LOG_WARNING);

	eal.tried = true;
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		int e = rte_errno;

		NRF_LOG(ERR, MOD, "DPDK EAL initialisation failed: %s%s", rte_strerror(e),
			eal_hint(e));
		return e == EINVAL ? NRF_EINVAL : e == ENOMEM ? NRF_ENOMEM : NRF_EIO;
	}
	eal.up = true;
	eal.hz = rte_get_tsc_hz();
	rc = take_role(&f, conf);
	if (rc != 0) {
		(void)rte_eal_cleanup();
		eal.up = false;
		return rc;
	}
	return n;
}

bool
nrf_dp_up(void)
{
	return eal.up;
}

enum nrf_dp_role
nrf_dp_role(void)
{
	return eal.role;
}

unsigned int
nrf_dp_workers(void)
{
	return eal.workers;
}

void
nrf_dp_eal_fini(void)
{
	if (!eal.up)
		return;
	if (eal.launched >= 0)
		(void)nrf_dp_join();
	nrf_dp_rings_release();
	(void)rte_eal_cleanup();
	eal.up = false;
}

unsigned int
nrf_dp_worker_lcores(unsigned int *out, unsigned int max)
{
	unsigned int lc, n = 0;

	if (!eal.up)
		return 0;
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (n < max)
			out[n] = lc;
		n++;
	}
	return n;
}

unsigned int
nrf_dp_main_lcore(void)
{
	return eal.up ? rte_get_main_lcore() : 0;
}

int
nrf_dp_lcore_cpus(unsigned int lcore, char *buf, size_t cap)
{
	rte_cpuset_t set;
	size_t len = 0;
	unsigned int cpu;
	int n;

	if (!eal.up || lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore))
		return NRF_EINVAL;
	set = rte_lcore_cpuset(lcore);
	if (cap < 3)
		return NRF_ETOOBIG;
	buf[len++] = '(';
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		n = snprintf(buf + len, cap - len, "%s%u", buf[len - 1] == '(' ? "" : ",", cpu);
		if (n < 0 || (size_t)n >= cap - len)
			return NRF_ETOOBIG;
		len += (size_t)n;
	}
	if (len + 2 > cap)
		return NRF_ETOOBIG;
	buf[len++] = ')';
	buf[len] = '\0';
	return 0;
}

int
nrf_dp_file_prefix(char *buf, size_t cap)
{
	const char *dir = rte_eal_get_runtime_dir();
	const char *base = dir != NULL ? strrchr(dir, '/') : NULL;
	int n;

	base = base != NULL ? base + 1 : (dir != NULL ? dir : "rte");
	n = snprintf(buf, cap, "%s", base);
	return n < 0 || (size_t)n >= cap ? NRF_ETOOBIG : 0;
}

uint64_t
nrf_dp_tsc_hz(void)
{
	return eal.hz;
}

int
nrf_dp_launch(int (*fn)(void *), void *arg)
{
	unsigned int lc;

	if (!eal.up)
		return NRF_EINVAL;
	if (eal.launched >= 0)
		return NRF_EIO;
	lc = rte_get_next_lcore(-1, 1, 0);
	if (lc >= RTE_MAX_LCORE)
		return NRF_ENOENT;
	if (rte_eal_remote_launch(fn, arg, lc) != 0)
		return NRF_EIO;
	eal.launched = (int)lc;
	return (int)lc;
}

int
nrf_dp_join(void)
{
	int rc;

	if (eal.launched < 0)
		return 0;
	rc = rte_eal_wait_lcore((unsigned int)eal.launched);
	eal.launched = -1;
	return rc;
}

void *
nrf_dp_shm(const char *name, size_t size, int *err)
{
	const struct rte_memzone *mz;

	if (!eal.up) {
		*err = NRF_EINVAL;
		return NULL;
	}
	if (eal.role == NRF_DP_SECONDARY) {
		mz = rte_memzone_lookup(name);
		if (mz == NULL || mz->len < size) {
			*err = NRF_ENOENT;
			return NULL;
		}
	} else {
		mz = rte_memzone_reserve(name, size, SOCKET_ID_ANY, 0);
		if (mz == NULL) {
			*err = NRF_ENOMEM;
			return NULL;
		}
		memset(mz->addr, 0, size);
	}
	*err = 0;
	return mz->addr;
}

int
nrf_dp_rings_create(unsigned int n, int socket)
{
	unsigned int q;

	if (!eal.up || n > NRF_DP_MAX_WORKERS)
		return NRF_EINVAL;
	eal.rings_owned = true;
	for (q = 0; q < n; q++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), WORKER_RING_NAME, q);
		eal.ring[q] = rte_ring_create(name, WORKER_RING_SIZE,
			socket >= 0 ? socket : SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (eal.ring[q] == NULL) {
			NRF_LOG(ERR, MOD, "cannot create the ring of worker %u: %s", q,
				rte_strerror(rte_errno));
			return NRF_ENOMEM;
		}
	}
	return 0;
}

int
nrf_dp_rings_lookup(unsigned int n)
{
	unsigned int q;

	if (!eal.up || n > NRF_DP_MAX_WORKERS)
		return NRF_EINVAL;
	eal.rings_owned = false;
	for (q = 0; q < n; q++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), WORKER_RING_NAME, q);
		eal.ring[q] = rte_ring_lookup(name);
		if (eal.ring[q] == NULL) {
			NRF_LOG(ERR, MOD, "no worker ring %s from the primary process", name);
			return NRF_ENOENT;
		}
	}
	return 0;
}

struct rte_ring *
nrf_dp_ring(unsigned int q)
{
	return q < NRF_DP_MAX_WORKERS ? eal.ring[q] : NULL;
}

void
nrf_dp_rings_release(void)
{
	unsigned int q;

	for (q = 0; q < NRF_DP_MAX_WORKERS; q++) {
		if (eal.rings_owned)
			rte_ring_free(eal.ring[q]);
		eal.ring[q] = NULL;
	}
	eal.rings_owned = false;
}
