/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary and the worker processes of nrfwd on DPDK (nrfwd_mp.h).
 *
 * Why processes and not threads: lwIP keeps its state in globals, so a
 * process holds one TCP/IP stack. One worker process per poll-mode core is
 * the F-Stack way of scaling such a stack, and it isolates faults: a worker
 * that dies takes its own connections with it and nothing else.
 *
 * Everything the processes share is in one memzone (nrf_dp_shm()) and is
 * written by one side only under lib/dp's sequence locks (no mutex): the
 * configuration document by the primary, each slot by its worker, the
 * restart count by the primary.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nrf_common.h"
#include "nrf_dp.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "nrf_tp_dpdk.h"
#include "nrfwd_mp.h"

#define MOD "nrfwd"
#define MP_SHM_NAME "nrfwd_mp"
#define MP_MAGIC 0x6e72666du      /* "nrfm" */
#define MP_MAX_PEERS 128          /* upstream counters a slot carries */
#define MP_MAX_LOOPS 32           /* loop paths a slot carries: the most frequent */
#define MP_CFG_MAX (2u << 20)     /* largest configuration document */
#define MP_TICK_MS 20u            /* agent period */
/* A worker's descriptor of the primary's document (cfg_fd) and its path. */
#define MP_CFG_FD 3
#define MP_CFG_ARG "/proc/self/fd/3"
#define MP_STALE_NS (2000ull * 1000000ull) /* a slot older than this: down */
#define MP_CTL_LCORE_TOP 127u     /* workers' control lcores count down from here */
#define MP_MAX_ARGS 64

enum mp_state {
	MP_W_EMPTY = 0,
	MP_W_STARTING,  /* forked, not yet serving */
	MP_W_RUNNING,   /* its runtime serves */
	MP_W_STOPPED,   /* exited cleanly */
	MP_W_DEAD,      /* died; a restart is scheduled */
};

struct mp_slot {
	uint32_t seq;               /* odd while the worker writes */
	int32_t pid;
	uint32_t state;
	uint32_t restarts;          /* written by the primary only */
	uint64_t beat_ns;           /* CLOCK_MONOTONIC of the last write */
	struct nrf_rt_worker_info wi;
	struct nrf_rt_stats st;
	struct nrf_rt_dp_stats dp;
	uint32_t n_peers;
	struct nrf_rt_peer_stats peers[MP_MAX_PEERS];
	uint32_t n_loops;
	struct nrf_rt_loop loops[MP_MAX_LOOPS];
} __attribute__((aligned(64)));

struct mp_shm {
	uint32_t magic;
	uint32_t n_workers;
	uint32_t stopping;          /* the primary is stopping: drain and exit */
	int32_t primary_pid;
	uint32_t cfg_seq;           /* odd while the primary writes the document */
	uint32_t cfg_len;
	uint64_t cfg_gen;
	uint64_t alog_gen;          /* bumped by the primary on SIGUSR1 */
	struct mp_slot slot[NRF_DP_MAX_WORKERS];
	char cfg_text[MP_CFG_MAX];
};

struct mp_child {
	pid_t pid;
	uint64_t started_ns;
	uint64_t restart_at_ns;     /* 0: none scheduled */
	uint64_t backoff_ms;
	char *argv[MP_MAX_ARGS];
	char lcores[192];
	char main_lcore[32];
	char index[16];
};

struct nrfwd_mp {
	struct mp_shm *shm;
	unsigned int n;
	bool stopping;
	/* The primary's document when it started, the workers' --config
	 * (MP_CFG_ARG); -1: they read the primary's --config file. */
	int cfg_fd;
	struct mp_child w[NRF_DP_MAX_WORKERS];
};

/* ------------------------------------------------------------------------ */
/* Primary: configuration and remote operations                              */

static void
cfg_store(struct mp_shm *shm, const struct nrf_cfg *cfg, uint64_t gen)
{
	int err = 0;
	char *text = nrf_cfg_emit(cfg, NRF_CFG_ALL, 0, &err);
	size_t len;

	if (text == NULL) {
		NRF_LOG(ERR, MOD, "cannot hand generation %llu to the workers: %s",
			(unsigned long long)gen, nrf_strerror(err));
		return;
	}
	len = strlen(text);
	if (len >= MP_CFG_MAX) {
		NRF_LOG(ERR, MOD, "configuration of %zu bytes exceeds the %u bytes the workers "
			"can take: generation %llu stays on the primary", len, MP_CFG_MAX,
			(unsigned long long)gen);
		free(text);
		return;
	}
	nrf_dp_seq_write_begin(&shm->cfg_seq);
	memcpy(shm->cfg_text, text, len + 1);
	shm->cfg_len = (uint32_t)len;
	shm->cfg_gen = gen;
	nrf_dp_seq_write_end(&shm->cfg_seq);
	free(text);
}

static void
r_published(void *arg, const struct nrf_cfg *cfg, uint64_t gen)
{
	struct nrfwd_mp *mp = arg;

	cfg_store(mp->shm, cfg, gen);
}

/* A stable copy of slot @p i; false when it cannot be had. */
static bool
slot_get(const struct nrfwd_mp *mp, unsigned int i, struct mp_slot *out)
{
	const struct mp_slot *s = &mp->shm->slot[i];

	return nrf_dp_seq_copy(&s->seq, out, s, sizeof(*out));
}

static bool
slot_live(const struct mp_slot *s)
{
	return s->state == MP_W_RUNNING && nrf_now_ns() - s->beat_ns < MP_STALE_NS &&
		s->pid > 0 && kill(s->pid, 0) == 0;
}

static struct mp_slot *
slot_tmp(void)
{
	static __thread struct mp_slot *tmp;

	if (tmp == NULL)
		tmp = malloc(sizeof(*tmp)); /* ~100 KiB: not on the stack */
	return tmp;
}

static bool
r_generation_seen(void *arg, uint64_t gen)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();
	unsigned int i;

	if (s == NULL)
		return false;
	for (i = 0; i < mp->n; i++) {
		if (!slot_get(mp, i, s))
			return false;
		if (slot_live(s) && s->wi.generation < gen)
			return false;
	}
	return true;
}

static unsigned int
r_workers(void *arg)
{
	return ((struct nrfwd_mp *)arg)->n;
}

static int
r_worker_get(void *arg, unsigned int i, struct nrf_rt_worker_info *out)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();

	memset(out, 0, sizeof(*out));
	if (i >= mp->n)
		return NRF_ENOENT;
	if (s != NULL && slot_get(mp, i, s)) {
		*out = s->wi;
		out->running = slot_live(s);
		out->pid = s->pid;
		if (!out->running)
			out->conns_open = 0;
	}
	out->restarts = __atomic_load_n(&mp->shm->slot[i].restarts, __ATOMIC_RELAXED);
	return 0;
}

static void
r_stats_get(void *arg, struct nrf_rt_stats *out)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();
	size_t k, n = sizeof(*out) / sizeof(uint64_t);
	unsigned int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; s != NULL && i < mp->n; i++) {
		const uint64_t *src = (const uint64_t *)(const void *)&s->st;
		uint64_t *dst = (uint64_t *)(void *)out;

		if (!slot_get(mp, i, s))
			continue;
		for (k = 0; k < n; k++)
			dst[k] += src[k];
	}
}

static int
r_peer_stats_get(void *arg, struct nrf_rt_peer_stats **out, size_t *n_out)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();
	struct nrf_rt_peer_stats *v = NULL;
	size_t cnt = 0, cap = 0;
	unsigned int i, k;

	if (s == NULL)
		return NRF_ENOMEM;
	for (i = 0; i < mp->n; i++) {
		if (!slot_get(mp, i, s))
			continue;
		for (k = 0; k < s->n_peers && k < MP_MAX_PEERS; k++) {
			if (nrf_rt_peer_stats_merge(&v, &cnt, &cap, &s->peers[k]) != 0) {
				free(v);
				return NRF_ENOMEM;
			}
		}
	}
	*out = v;
	*n_out = cnt;
	return 0;
}

static int
r_loops_get(void *arg, struct nrf_rt_loop **out, size_t *n_out, uint64_t *drops)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();
	struct nrf_rt_loop *v = NULL;
	size_t cnt = 0, cap = 0;
	unsigned int i, k;

	if (s == NULL)
		return NRF_ENOMEM;
	for (i = 0; i < mp->n; i++) {
		if (!slot_get(mp, i, s))
			continue;
		if (drops != NULL)
			*drops += s->st.loop_drops;
		for (k = 0; k < s->n_loops && k < MP_MAX_LOOPS; k++) {
			if (nrf_rt_loops_merge(&v, &cnt, &cap, &s->loops[k]) != 0) {
				free(v);
				return NRF_ENOMEM;
			}
		}
	}
	*out = v;
	*n_out = cnt;
	return 0;
}

static int
r_dp_stats_get(void *arg, unsigned int i, struct nrf_rt_dp_stats *out)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();

	if (i >= mp->n || s == NULL)
		return NRF_ENOENT;
	if (!slot_get(mp, i, s))
		return 0;
	*out = s->dp;
	return 0;
}

static bool
r_running(void *arg)
{
	struct nrfwd_mp *mp = arg;
	struct mp_slot *s = slot_tmp();
	unsigned int i;

	for (i = 0; s != NULL && i < mp->n; i++) {
		if (slot_get(mp, i, s) && slot_live(s))
			return true;
	}
	return false;
}

static const struct nrf_rt_remote_ops remote_ops = {
	.published = r_published,
	.generation_seen = r_generation_seen,
	.workers = r_workers,
	.worker_get = r_worker_get,
	.stats_get = r_stats_get,
	.peer_stats_get = r_peer_stats_get,
	.dp_stats_get = r_dp_stats_get,
	.running = r_running,
	.loops_get = r_loops_get,
};

const struct nrf_rt_remote_ops *
nrfwd_mp_remote_ops(void)
{
	return &remote_ops;
}

/* ------------------------------------------------------------------------ */
/* Primary: worker processes                                                 */

/* EAL options of the primary a worker takes over as they are (memory,
 * logging, the PCI limits: a worker attaches to the primary's PCI devices
 * by probing the same allow list; virtual devices it gets from the primary
 * without asking): the NRF_DP_EAL_F_WORKER options of lib/dp's table. */
static bool
passed_on(const char *a)
{
	const struct nrf_dp_eal_opt *o = nrf_dp_eal_opt_find(a);

	return o != NULL && (o->flags & NRF_DP_EAL_F_WORKER) != 0;
}

/*
 * The document a worker starts from: the primary's own, whatever its
 * source. The primary's --config file alone may not load: with the fleet's
 * etcd source it holds runtime only (docs/fleet.md). An anonymous memory
 * file, inherited as MP_CFG_FD: nothing is left on disk, and a worker
 * restarted later reads the same bytes, then takes the running document
 * from the shared memory when its generation differs
 * (nrfwd_mp_worker_attach()). -1 when it cannot be made: the workers read
 * the file, as before.
 */
static int
cfg_memfd(const struct nrf_cfg *cfg)
{
	int err = 0, fd = -1;
	char *text = nrf_cfg_emit(cfg, NRF_CFG_ALL, 0, &err);
	const char *why = NULL;
	size_t len, off = 0;

	if (text == NULL) {
		NRF_LOG(WARN, MOD, "cannot hand the configuration to the workers in memory (%s): "
			"they read the --config file", nrf_strerror(err));
		return -1;
	}
	len = strlen(text);
	fd = memfd_create("nrfwd-config", MFD_CLOEXEC);
	if (fd < 0)
		why = strerror(errno);
	while (fd >= 0 && off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w <= 0) {
			why = w < 0 ? strerror(errno) : "short write";
			close(fd);
			fd = -1;
		} else {
			off += (size_t)w;
		}
	}
	free(text);
	if (fd < 0)
		NRF_LOG(WARN, MOD, "cannot hand the configuration to the workers in memory (%s): "
			"they read the --config file", why);
	return fd;
}

/* A primary that did not start: its memory file, then itself. */
static void
mp_discard(struct nrfwd_mp *mp)
{
	if (mp->cfg_fd >= 0)
		close(mp->cfg_fd);
	free(mp);
}

static int
child_args(struct nrfwd_mp *mp, unsigned int k, unsigned int lcore, unsigned int ctl,
	const char *main_cpus, const char *prefix, const struct nrfwd_mp_params *p)
{
	struct mp_child *c = &mp->w[k];
	struct nrf_dp_eal_args sc;
	char cpus[64];
	int n = 0, i;

	if (nrf_dp_lcore_cpus(lcore, cpus, sizeof(cpus)) != 0)
		return -1;
	(void)nrf_dp_eal_scan(p->eal_argc, p->eal_argv, &sc);
	snprintf(c->lcores, sizeof(c->lcores), "--lcores=%u@%s,%u@%s", ctl, main_cpus, lcore,
		cpus);
	snprintf(c->main_lcore, sizeof(c->main_lcore), "--main-lcore=%u", ctl);
	snprintf(c->index, sizeof(c->index), "%u", k);
#define ARG(s)                                                                 \
	do {                                                                   \
		if (n >= MP_MAX_ARGS - 1)                                      \
			return -1;                                             \
		c->argv[n++] = (char *)(s);                                    \
	} while (0)
	ARG(p->exe);
	ARG("--proc-type=secondary");
	ARG(strdup(prefix));
	ARG(c->lcores);
	ARG(c->main_lcore);
	for (i = 1; i < p->eal_argc; i += nrf_dp_eal_opt_span(p->eal_argc, p->eal_argv, i)) {
		if (!passed_on(p->eal_argv[i]))
			continue;
		ARG(p->eal_argv[i]);
		if (nrf_dp_eal_opt_span(p->eal_argc, p->eal_argv, i) == 2)
			ARG(p->eal_argv[i + 1]);
	}
	ARG("--");
	if (!sc.pci_limited)
		ARG("--pci-nic"); /* the primary was started with it */
	ARG("--config");
	ARG(mp->cfg_fd >= 0 ? MP_CFG_ARG : p->config_path);
	ARG("--mp-worker");
	ARG(c->index);
	if (p->log_level != NULL) {
		ARG("--log-level");
		ARG(p->log_level);
	}
#undef ARG
	c->argv[n] = NULL;
	return 0;
}

struct nrfwd_mp *
nrfwd_mp_primary_create(const struct nrfwd_mp_params *p, const struct nrf_cfg *cfg,
	uint64_t gen)
{
	unsigned int lcores[NRF_DP_MAX_WORKERS], nl, k, main_lc;
	char main_cpus[64], prefix[160], fp[128];
	struct nrfwd_mp *mp;
	int err;

	nl = nrf_dp_worker_lcores(lcores, NRF_DP_MAX_WORKERS);
	mp = calloc(1, sizeof(*mp));
	if (mp == NULL)
		return NULL;
	mp->cfg_fd = -1;
	mp->n = nrf_tp_dpdk_queues();
	if (mp->n > nl || mp->n == 0) {
		NRF_LOG(ERR, MOD, "%u worker processes need as many worker lcores in the EAL core "
			"list (-l/--lcores), %u given", mp->n, nl);
		free(mp);
		return NULL;
	}
	/* Checked here, once, rather than by every worker that would then die
	 * and be restarted for ever (nrf_tp_dp_next_port(): the workers split
	 * 49152..65535 for their upstream connections). */
	for (k = 0; mp->n > 1 && k < cfg->rt.n_listen; k++) {
		if (cfg->rt.listen[k].port == 0 || cfg->rt.listen[k].port >= 49152) {
			NRF_LOG(ERR, MOD, "runtime.listen[%u].port %u: with %u DPDK workers listen "
				"ports must be 1..49151 (49152..65535 are split between the workers)",
				k, cfg->rt.listen[k].port, mp->n);
			free(mp);
			return NULL;
		}
	}
	main_lc = nrf_dp_main_lcore();
	if (nrf_dp_lcore_cpus(main_lc, main_cpus, sizeof(main_cpus)) != 0 ||
		nrf_dp_file_prefix(fp, sizeof(fp)) != 0) {
		NRF_LOG(ERR, MOD, "cannot read the EAL's core list or file prefix");
		free(mp);
		return NULL;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", fp);
	mp->cfg_fd = cfg_memfd(cfg);
	for (k = 0; k < mp->n; k++) {
		unsigned int ctl = MP_CTL_LCORE_TOP - k, j;

		for (j = 0; j < nl; j++) {
			if (lcores[j] == ctl || main_lc == ctl) {
				NRF_LOG(ERR, MOD, "lcore %u is kept for worker %u's control thread: use "
					"lcore ids below %u", ctl, k, MP_CTL_LCORE_TOP - mp->n + 1);
				mp_discard(mp);
				return NULL;
			}
		}
		if (child_args(mp, k, lcores[k], ctl, main_cpus, prefix, p) != 0) {
			NRF_LOG(ERR, MOD, "worker %u: command line too long", k);
			mp_discard(mp);
			return NULL;
		}
	}
	mp->shm = nrf_dp_shm(MP_SHM_NAME, sizeof(*mp->shm), &err);
	if (mp->shm == NULL) {
		NRF_LOG(ERR, MOD, "cannot reserve %zu bytes of shared memory for the workers: %s "
			"(reserve more hugepages)", sizeof(struct mp_shm), nrf_strerror(err));
		mp_discard(mp);
		return NULL;
	}
	mp->shm->n_workers = mp->n;
	mp->shm->primary_pid = (int32_t)getpid();
	cfg_store(mp->shm, cfg, gen);
	__atomic_store_n(&mp->shm->magic, MP_MAGIC, __ATOMIC_RELEASE);
	return mp;
}

static int
spawn(struct nrfwd_mp *mp, unsigned int k)
{
	struct mp_child *c = &mp->w[k];
	struct mp_slot *s = &mp->shm->slot[k];
	pid_t pid;

	/* The slot is the worker's to write; between its lives the primary
	 * resets it (no worker of this index runs now). */
	nrf_dp_seq_write_begin(&s->seq);
	s->pid = 0;
	s->state = MP_W_STARTING;
	s->beat_ns = nrf_now_ns();
	nrf_dp_seq_write_end(&s->seq);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		NRF_LOG(ERR, MOD, "cannot start worker %u: fork: %s", k, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;

		/* Die with the primary (its main thread, which forked us). */
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != (pid_t)mp->shm->primary_pid)
			_exit(70);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* The document as MP_CFG_FD, across exec; not the primary's
		 * sockets, hugepage and tap descriptors. */
		if (mp->cfg_fd >= 0) {
			if (mp->cfg_fd == MP_CFG_FD ? fcntl(MP_CFG_FD, F_SETFD, 0) != 0
						 : dup2(mp->cfg_fd, MP_CFG_FD) != MP_CFG_FD)
				_exit(72);
			(void)close_range(MP_CFG_FD + 1, ~0u, 0);
		} else {
			(void)close_range(3, ~0u, 0);
		}
		execv(c->argv[0], c->argv);
		_exit(71);
	}
	c->pid = pid;
	c->started_ns = nrf_now_ns();
	c->restart_at_ns = 0;
	NRF_LOG(INFO, MOD, "worker %u started: pid %d, %s", k, (int)pid, c->lcores + 9);
	return 0;
}

int
nrfwd_mp_start(struct nrfwd_mp *mp)
{
	unsigned int k, ok = 0;

	for (k = 0; k < mp->n; k++) {
		mp->w[k].backoff_ms = 100;
		if (spawn(mp, k) == 0)
			ok++;
		else
			mp->w[k].restart_at_ns = nrf_now_ns() + 1000000000ull;
	}
	return ok > 0 ? 0 : -1;
}

static void
describe(int status, char *buf, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(buf, cap, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "status %#x", status);
}

void
nrfwd_mp_supervise(struct nrfwd_mp *mp)
{
	uint64_t now = nrf_now_ns();
	unsigned int k;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		char why[96];

		for (k = 0; k < mp->n; k++)
			if (mp->w[k].pid == pid)
				break;
		if (k == mp->n)
			continue;
		describe(status, why, sizeof(why));
		mp->w[k].pid = 0;
		/* Killed while writing its slot: the count is odd; make it even
		 * before writing ourselves. */
		nrf_dp_seq_write_abandoned(&mp->shm->slot[k].seq);
		nrf_dp_seq_write_begin(&mp->shm->slot[k].seq);
		mp->shm->slot[k].state = mp->stopping ? MP_W_STOPPED : MP_W_DEAD;
		mp->shm->slot[k].wi.conns_open = 0;
		nrf_dp_seq_write_end(&mp->shm->slot[k].seq);
		if (mp->stopping)
			continue;
		/* Died soon after its start: back off, else restart at once. */
		if (now - mp->w[k].started_ns < 10000000000ull) {
			mp->w[k].restart_at_ns = now + mp->w[k].backoff_ms * 1000000ull;
			mp->w[k].backoff_ms = NRF_MIN(mp->w[k].backoff_ms * 2, 5000u);
		} else {
			mp->w[k].restart_at_ns = now;
			mp->w[k].backoff_ms = 100;
		}
		NRF_LOG(ERR, MOD, "worker %u (pid %d) died: %s; restarting it in %llu ms (the other "
			"workers keep serving)", k, (int)pid, why,
			(unsigned long long)((mp->w[k].restart_at_ns - now) / 1000000ull));
	}
	if (mp->stopping)
		return;
	for (k = 0; k < mp->n; k++) {
		struct mp_child *c = &mp->w[k];

		if (c->pid == 0 && c->restart_at_ns != 0 && now >= c->restart_at_ns) {
			__atomic_fetch_add(&mp->shm->slot[k].restarts, 1, __ATOMIC_RELAXED);
			if (spawn(mp, k) != 0)
				c->restart_at_ns = now + 1000000000ull;
		}
	}
}

void
nrfwd_mp_stop(struct nrfwd_mp *mp, uint32_t drain_ms)
{
	uint64_t end, hard;
	unsigned int k, left;

	mp->stopping = true;
	__atomic_store_n(&mp->shm->stopping, 1, __ATOMIC_RELEASE);
	for (k = 0; k < mp->n; k++)
		if (mp->w[k].pid > 0)
			(void)kill(mp->w[k].pid, SIGTERM);
	end = nrf_now_ns() + (uint64_t)drain_ms * 1000000ull + 2000000000ull;
	hard = end + 2000000000ull;
	for (;;) {
		struct timespec ts = {0, 20000000};

		nrfwd_mp_supervise(mp);
		for (k = 0, left = 0; k < mp->n; k++)
			left += mp->w[k].pid > 0;
		if (left == 0)
			break;
		if (nrf_now_ns() >= end) {
			for (k = 0; k < mp->n; k++) {
				if (mp->w[k].pid > 0) {
					NRF_LOG(WARN, MOD, "worker %u (pid %d) did not stop in time: "
						"killing it", k, (int)mp->w[k].pid);
					(void)kill(mp->w[k].pid, SIGKILL);
				}
			}
			end = hard;
			if (nrf_now_ns() >= hard)
				break;
		}
		nanosleep(&ts, NULL);
	}
	NRF_LOG(INFO, MOD, "all %u workers stopped", mp->n);
}

void
nrfwd_mp_alog_reopen(struct nrfwd_mp *mp)
{
	/* A generation, not a signal to each pid: a worker still starting
	 * (its SIGUSR1 not yet blocked, so the signal would kill it) or
	 * restarted later needs no message, and each agent thread already
	 * polls the memzone every MP_TICK_MS, off the data path. */
	__atomic_fetch_add(&mp->shm->alog_gen, 1, __ATOMIC_RELEASE);
}

void
nrfwd_mp_free(struct nrfwd_mp *mp)
{
	unsigned int k;

	if (mp == NULL)
		return;
	for (k = 0; k < mp->n; k++)
		free(mp->w[k].argv[2]); /* the strdup'd --file-prefix */
	if (mp->cfg_fd >= 0)
		close(mp->cfg_fd);
	free(mp); /* the memzone goes with the EAL */
}

/* ------------------------------------------------------------------------ */
/* Worker                                                                    */

static struct {
	struct mp_shm *shm;
	unsigned int index;
	struct nrf_rt *rt;
	pthread_t th;
	atomic_bool stop;
	bool started;
	uint64_t gen;               /* generation of the document applied last */
	uint64_t alog_gen;          /* shm->alog_gen the access log was opened at */
	char *text;                 /* scratch for the document */
} wk;

/* One read of the document under its sequence lock (nrf_dp_seq_read()). */
struct cfg_read {
	uint64_t have;  /* the generation the worker has */
	uint64_t gen;   /* what the shared memory has */
	uint32_t len;
};

static bool
cfg_copy(void *arg)
{
	struct cfg_read *r = arg;
	const struct mp_shm *shm = wk.shm;

	r->gen = shm->cfg_gen;
	r->len = shm->cfg_len;
	if (r->gen == r->have || r->gen == 0 || r->len >= MP_CFG_MAX) {
		r->len = 0;
		return false; /* nothing new (or nothing sane): no copy */
	}
	memcpy(wk.text, shm->cfg_text, r->len);
	return true;
}

/* The running document of the shared memory, if it differs from @p have. */
static struct nrf_cfg *
shm_cfg(uint64_t have, uint64_t *gen_out)
{
	struct nrf_cfg_problems problems = {0};
	struct cfg_read r = {.have = have};
	struct nrf_cfg *cfg;
	int err;

	if (!nrf_dp_seq_read(&wk.shm->cfg_seq, cfg_copy, &r) || r.len == 0)
		return NULL; /* busy (next tick), or nothing new */
	wk.text[r.len] = '\0';
	cfg = nrf_cfg_load(wk.text, r.len, r.gen, &problems, &err);
	if (cfg == NULL)
		NRF_LOG(ERR, MOD, "configuration generation %llu from the primary does not load "
			"here (%s, %zu problem(s)): keeping generation %llu",
			(unsigned long long)r.gen, nrf_strerror(err), problems.n,
			(unsigned long long)have);
	nrf_cfg_problems_fini(&problems);
	*gen_out = r.gen;
	return cfg;
}

int
nrfwd_mp_worker_attach(unsigned int index, struct nrf_cfg **cfg)
{
	struct nrf_cfg *c;
	uint64_t gen = 0;
	int err;

	wk.shm = nrf_dp_shm(MP_SHM_NAME, sizeof(*wk.shm), &err);
	if (wk.shm == NULL || __atomic_load_n(&wk.shm->magic, __ATOMIC_ACQUIRE) != MP_MAGIC) {
		NRF_LOG(ERR, MOD, "worker %u: no shared memory from an nrfwd primary (%s)", index,
			nrf_strerror(wk.shm == NULL ? err : NRF_ENOENT));
		return -1;
	}
	if (index >= wk.shm->n_workers) {
		NRF_LOG(ERR, MOD, "worker %u: the primary runs %u workers", index,
			wk.shm->n_workers);
		return -1;
	}
	wk.index = index;
	/* Before this process opens its access log (nrf_rt_snap_create()):
	 * a SIGUSR1 of the primary from now on is one this worker follows. */
	wk.alog_gen = __atomic_load_n(&wk.shm->alog_gen, __ATOMIC_ACQUIRE);
	wk.text = malloc(MP_CFG_MAX);
	if (wk.text == NULL)
		return -1;
	c = shm_cfg((*cfg)->generation, &gen);
	if (c != NULL) {
		nrf_cfg_free(*cfg);
		*cfg = c;
	}
	wk.gen = (*cfg)->generation;
	return 0;
}

static int
loop_by_count(const void *a, const void *b)
{
	const struct nrf_rt_loop *x = a, *y = b;

	return x->count != y->count ? (x->count > y->count ? -1 : 1) : 0;
}

static void
slot_write(uint32_t state)
{
	struct mp_slot *s = &wk.shm->slot[wk.index];
	struct nrf_rt_peer_stats *peers = NULL;
	struct nrf_rt_loop *loops = NULL;
	size_t n = 0, n_loops = 0;

	if (wk.rt != NULL && nrf_rt_peer_stats_get(wk.rt, &peers, &n) != 0)
		n = 0;
	/* the loop paths (GET /loops): the most frequent, if more than fit */
	if (wk.rt != NULL && nrf_rt_loops_get(wk.rt, &loops, &n_loops, NULL) != 0)
		n_loops = 0;
	if (n_loops > MP_MAX_LOOPS)
		qsort(loops, n_loops, sizeof(*loops), loop_by_count);
	nrf_dp_seq_write_begin(&s->seq);
	s->pid = (int32_t)getpid();
	s->state = state;
	s->beat_ns = nrf_now_ns();
	if (wk.rt != NULL) {
		(void)nrf_rt_worker_get(wk.rt, 0, &s->wi);
		nrf_rt_stats_get(wk.rt, &s->st);
		(void)nrf_rt_dp_stats_get(wk.rt, &s->dp);
		s->n_peers = (uint32_t)NRF_MIN(n, (size_t)MP_MAX_PEERS);
		if (s->n_peers > 0)
			memcpy(s->peers, peers, s->n_peers * sizeof(*peers));
		s->n_loops = (uint32_t)NRF_MIN(n_loops, (size_t)MP_MAX_LOOPS);
		if (s->n_loops > 0)
			memcpy(s->loops, loops, s->n_loops * sizeof(*loops));
	}
	nrf_dp_seq_write_end(&s->seq);
	free(peers);
	free(loops);
}

static void *
agent(void *arg)
{
	struct timespec ts = {0, MP_TICK_MS * 1000000L};
	bool told = false;

	(void)arg;
	while (!atomic_load(&wk.stop)) {
		uint64_t gen = 0, alog_gen;
		struct nrf_cfg *cfg = shm_cfg(wk.gen, &gen);

		if (cfg != NULL) {
			int err = 0;
			struct nrf_rt_snap *snap = nrf_rt_snap_create(cfg, &err);

			if (snap == NULL || nrf_rt_publish(wk.rt, snap) != 0)
				NRF_LOG(ERR, MOD, "cannot apply configuration generation %llu: %s",
					(unsigned long long)gen, nrf_strerror(snap == NULL ? err :
					NRF_EINVAL));
			wk.gen = gen; /* tried: not again every tick */
		} else if (gen != 0) {
			wk.gen = gen;
		}
		(void)nrf_rt_reclaim(wk.rt);
		alog_gen = __atomic_load_n(&wk.shm->alog_gen, __ATOMIC_ACQUIRE);
		if (alog_gen != wk.alog_gen) {
			wk.alog_gen = alog_gen;
			(void)nrf_rt_alog_reopen(); /* the primary's SIGUSR1 */
		}
		slot_write(MP_W_RUNNING);
		if (!told && (__atomic_load_n(&wk.shm->stopping, __ATOMIC_ACQUIRE) ||
			kill(wk.shm->primary_pid, 0) != 0)) {
			NRF_LOG(WARN, MOD, "the primary is stopping or gone: draining");
			(void)kill(getpid(), SIGTERM);
			told = true;
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int
nrfwd_mp_worker_agent_start(struct nrf_rt *rt)
{
	wk.rt = rt;
	atomic_store(&wk.stop, false);
	slot_write(MP_W_RUNNING);
	if (pthread_create(&wk.th, NULL, agent, NULL) != 0)
		return -1;
	wk.started = true;
	return 0;
}

void
nrfwd_mp_worker_agent_stop(void)
{
	if (wk.started) {
		atomic_store(&wk.stop, true);
		pthread_join(wk.th, NULL);
		wk.started = false;
	}
	if (wk.shm != NULL)
		slot_write(MP_W_STOPPED);
	wk.rt = NULL;
	free(wk.text);
	wk.text = NULL;
}
