/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_DP_H
#define NRF_DP_H

/**
 * @file
 * The DPDK platform of nrfwd: everything about running on DPDK that is not
 * a port or a packet. lib/tp's DPDK back-end (nrf_tp_dpdk.h) puts a port
 * and lwIP on top of it; lib/rt launches its worker on an lcore with it;
 * app/nrfwd starts worker processes and shares state with them through it.
 * No lwIP and no nghttp2 here; no DPDK header in this file either (lwIP
 * translation units include it through nrf_tp_dpdk.h, and the two sets of
 * headers clash).
 *
 * Parts:
 * - The EAL option table (DPDK 22.11): the one place that knows which EAL
 *   options exist and which take values. Pure C, usable before the EAL
 *   starts and without DPDK (unit-tested in tests/unit/dp/).
 * - Sequence locks for memory shared between processes: one writer, any
 *   number of readers that retry. Pure C.
 * - The EAL: safety checks before rte_eal_init() (it cannot be retried in
 *   a process), the process role (single, primary of worker processes, or
 *   a worker process), lcores, launching a function on the data-path
 *   lcore, the shared memzone, and the worker rings (ARP copies and frames
 *   steered to the worker that owns their connection). Without DPDK
 *   (libdpdk not found at build time) these fail with NRF_ENOENT.
 *
 * Threads: the EAL functions on the main thread (the EAL main lcore) unless
 * noted; the option table and sequence locks on any thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* EAL options                                                              */

/** How an EAL option takes its value. */
enum nrf_dp_eal_arg {
	NRF_DP_EAL_ARG_NONE = 0, /**< a flag: "--no-pci" ("--no-pci=x" is bad) */
	NRF_DP_EAL_ARG_REQUIRED, /**< "--vdev=X", "--vdev X", "-l0", "-l 0" */
	NRF_DP_EAL_ARG_OPTIONAL, /**< only attached: "--huge-unlink[=never]" */
};

/** The option limits PCI probing (--no-pci, -a/--allow). */
#define NRF_DP_EAL_F_PCI_LIMIT 0x1u
/** A worker process takes the option over from its primary as given
 *  (memory, logging, PCI limits); the rest it gets from the primary. */
#define NRF_DP_EAL_F_WORKER 0x2u

/** One EAL option of DPDK 22.11. */
struct nrf_dp_eal_opt {
	const char *name;        /**< long form with dashes, "--allow" */
	char short_name;         /**< 'a' for "-a", 0: long form only */
	enum nrf_dp_eal_arg arg;
	unsigned int flags;      /**< NRF_DP_EAL_F_* */
};

/**
 * The option @p arg names: "--vdev=net_tap0" and "--vdev" give "--vdev",
 * "-l0" and "-l" give "-l" (short options take their value attached or as
 * the next argument). NULL: not an EAL option of DPDK 22.11 (also "-",
 * "--", a non-option, a flag given a value is still found: see
 * nrf_dp_eal_scan()). Any thread.
 */
const struct nrf_dp_eal_opt *nrf_dp_eal_opt_find(const char *arg);

/**
 * How many arguments the option at argv[@p i] occupies: 2 when its value is
 * the next argument ("--vdev X", "-l 0"), else 1 (also for arguments that
 * are not EAL options). Never runs past @p argc. Any thread.
 */
int nrf_dp_eal_opt_span(int argc, char *const *argv, int i);

/** Why nrf_dp_eal_scan() refused an argument. */
enum nrf_dp_eal_bad {
	NRF_DP_EAL_OK = 0,
	NRF_DP_EAL_NOT_OPTION,  /**< not an option at all ("foo", "-") */
	NRF_DP_EAL_UNKNOWN,     /**< not a DPDK 22.11 EAL option, or a flag with "=" */
	NRF_DP_EAL_NO_VALUE,    /**< the option's value is missing */
};

/** What the EAL part of a command line asks for. */
struct nrf_dp_eal_args {
	bool pci_limited; /**< --no-pci, -a or --allow */
	bool no_huge;
	bool in_memory;
	bool no_shconf;
	bool log_level;   /**< --log-level given */
	bool vdev;        /**< --vdev given */
	bool help;        /**< -h / --help */
	int end;          /**< index of the first "--", or argc */
	int bad;          /**< index of the first refused argument, or -1 */
	enum nrf_dp_eal_bad why; /**< why argv[bad] was refused */
};

/**
 * Scan argv[1..] up to the first "--" (argv[0] is the program name): the
 * flags above, and the first argument that is not an EAL option of DPDK
 * 22.11 or lacks its value. Arguments after a refused one are still
 * scanned (the flags are complete either way; values are skipped as the
 * EAL would skip them). Any thread.
 * @return 0, or NRF_EINVAL when an argument was refused (@p out->bad).
 */
int nrf_dp_eal_scan(int argc, char *const *argv, struct nrf_dp_eal_args *out);

/* ------------------------------------------------------------------------ */
/* Sequence locks (memory shared between processes)                          */

/**
 * Start a write of the data @p seq guards: the count becomes odd. One
 * writer at a time (the caller's design guarantees it); readers retry.
 */
void nrf_dp_seq_write_begin(uint32_t *seq);

/** End the write: the count becomes even again (release). */
void nrf_dp_seq_write_end(uint32_t *seq);

/**
 * A writer that died inside a write left the count odd: make it even so
 * the next write (by whoever owns the data now) is seen again. Only when
 * no writer can be running.
 */
void nrf_dp_seq_write_abandoned(uint32_t *seq);

/**
 * Copy under the lock: @p copy(@p arg) is called while no write is in
 * progress, and again when a write overlapped it, until a copy was stable.
 * @p copy returns false to stop early (e.g. nothing new to copy): the read
 * then succeeds without a copy. While a write is in progress the reader
 * sleeps 100 µs between tries.
 * @return true with a stable copy (or an early stop), false after 100 tries
 *   (the writer is stuck or very busy: try again later).
 */
bool nrf_dp_seq_read(const uint32_t *seq, bool (*copy)(void *arg), void *arg);

/** nrf_dp_seq_read() of @p n bytes from @p src to @p dst. */
bool nrf_dp_seq_copy(const uint32_t *seq, void *dst, const void *src, size_t n);

/* ------------------------------------------------------------------------ */
/* The EAL                                                                   */

/** Most worker processes (queue pairs of one port). */
#define NRF_DP_MAX_WORKERS 16

/** What this process is in a (possibly multi-process) DPDK deployment. */
enum nrf_dp_role {
	/** One process: port, stack and the one worker (the default). */
	NRF_DP_SINGLE = 0,
	/** Decide after the EAL started: PRIMARY when the core list has two or
	 *  more worker lcores, else SINGLE (see nrf_dp_role()). */
	NRF_DP_AUTO,
	/** The primary of one worker process per worker lcore of the EAL core
	 *  list (at least one; at most NRF_DP_MAX_WORKERS). Needs shared
	 *  memory: hugepages with a hugetlbfs mount and no --in-memory /
	 *  --no-shconf / --no-huge. */
	NRF_DP_PRIMARY,
	/** A worker process: EAL secondary (--proc-type=secondary, the
	 *  primary's --file-prefix). */
	NRF_DP_SECONDARY,
};

/** EAL start-up settings. */
struct nrf_dp_conf {
	enum nrf_dp_role role;
	/** Allow EAL arguments without --no-pci / -a / --allow: a real PCI NIC
	 *  is meant to be probed. Without it such arguments are refused. */
	bool pci_nic_intended;
};

/**
 * Start the EAL from @p argv (up to the first "--"). Refused before the EAL
 * is touched (the caller may fix and call again), one log line each: no
 * --no-pci / -a / --allow (unless conf->pci_nic_intended), --no-huge with
 * --in-memory, PRIMARY with --in-memory / --no-huge / --no-shconf, no free
 * hugepages without --no-huge, hugepages but no hugetlbfs mount without
 * --in-memory. Unknown options are left to the EAL (nrf_dp_eal_scan()
 * finds them first for callers that want one clear line). The EAL logs at
 * WARNING unless --log-level is given.
 * After rte_eal_init() was called a failure is final for the process.
 * AUTO becomes PRIMARY when the core list has two or more worker lcores
 * (NRF_EINVAL if shared memory is turned off), else SINGLE.
 * @return the number of arguments the EAL consumed (argv[return] is then
 *   the program name, as with rte_eal_init()), or
 *   NRF_EINVAL   refused, bad EAL option, second call;
 *   NRF_ENOMEM   no hugepages / not enough memory;
 *   NRF_ETOOBIG  PRIMARY with more than NRF_DP_MAX_WORKERS worker lcores;
 *   NRF_EIO      any other EAL failure;
 *   NRF_ENOENT   built without DPDK.
 * Main thread, once.
 */
int nrf_dp_eal_init(int argc, char **argv, const struct nrf_dp_conf *conf);

/** True after nrf_dp_eal_init() succeeded and until nrf_dp_eal_fini(). Any thread. */
bool nrf_dp_up(void);

/** The role this process took (AUTO resolved; SINGLE before init). Any thread. */
enum nrf_dp_role nrf_dp_role(void);

/** Worker processes the role asks for: PRIMARY: one per worker lcore;
 *  else 1. Any thread, after init. */
unsigned int nrf_dp_workers(void);

/**
 * Join what nrf_dp_launch() started, free the worker rings (PRIMARY) and
 * release the EAL. The users (port, memzones' readers) must be gone.
 * No-op when init did not succeed. Main thread.
 */
void nrf_dp_eal_fini(void);

/**
 * The EAL's worker lcores (all but the main lcore), in order, into @p out
 * (up to @p max). @return how many there are (0 before init). Any thread.
 */
unsigned int nrf_dp_worker_lcores(unsigned int *out, unsigned int max);

/** Main lcore id of the EAL (0 before init). */
unsigned int nrf_dp_main_lcore(void);

/**
 * CPUs of @p lcore in the EAL's --lcores syntax, e.g. "(0)" or "(0,1)",
 * into @p buf. @return 0, NRF_EINVAL (unknown lcore), NRF_ETOOBIG.
 */
int nrf_dp_lcore_cpus(unsigned int lcore, char *buf, size_t cap);

/** The EAL's --file-prefix in use (after init) into @p buf. @return 0 or
 *  NRF_ETOOBIG. */
int nrf_dp_file_prefix(char *buf, size_t cap);

/** TSC frequency in Hz (0 before init). Any thread. */
uint64_t nrf_dp_tsc_hz(void);

/**
 * Run @p fn(@p arg) on the data-path lcore: the first worker lcore of the
 * EAL core list (-l 0,1: lcore 1), pinned to its CPU, so a poll loop does
 * not share a core with the control thread (threads created with
 * pthread_create() after init inherit the main lcore's CPU set).
 * @return the lcore id used, NRF_EINVAL (no EAL), NRF_ENOENT (no worker
 *   lcore in -l), NRF_EIO (that lcore is already running something).
 *   Main thread.
 */
int nrf_dp_launch(int (*fn)(void *), void *arg);

/** Wait for the function started by nrf_dp_launch(); its return value
 *  (0 when nothing was launched). Main thread. */
int nrf_dp_join(void);

/**
 * Shared memory between the primary and its workers (an rte_memzone):
 * reserve @p size zeroed bytes named @p name (PRIMARY, SINGLE), or find the
 * one the primary reserved (SECONDARY; @p size is then the minimum
 * expected). Freed with the EAL (the last process of the file prefix).
 * @return the address, or NULL with @p err = NRF_ENOMEM, NRF_ENOENT (not
 *   found, or smaller than @p size), NRF_EINVAL (no EAL). Control thread.
 */
void *nrf_dp_shm(const char *name, size_t size, int *err);

/* ------------------------------------------------------------------------ */
/* Worker rings                                                              */

struct rte_ring;

/**
 * One ring per worker, many producers, its worker the one consumer: ARP
 * frames every worker should learn from, and frames of a connection another
 * worker owns (nrf_tp_dpdk.h). Created by the primary for @p n workers (on
 * NUMA socket @p socket, -1: any), looked up by each worker (@p n: the
 * queue pairs of the primary's port).
 * @return 0, NRF_ENOMEM (create: logged), NRF_ENOENT (lookup: a ring is
 *   missing, logged), NRF_EINVAL (no EAL, @p n over NRF_DP_MAX_WORKERS).
 *   Main thread, after init.
 */
int nrf_dp_rings_create(unsigned int n, int socket);
int nrf_dp_rings_lookup(unsigned int n);

/** The ring of worker @p q, or NULL (none, or @p q out of range). Any
 *  thread; the pointer stays valid until nrf_dp_rings_release(). */
struct rte_ring *nrf_dp_ring(unsigned int q);

/** Forget the rings (a worker), or free them (the primary). Main thread. */
void nrf_dp_rings_release(void);

#ifdef __cplusplus
}
#endif
#endif /* NRF_DP_H */
