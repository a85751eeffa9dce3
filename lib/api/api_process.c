/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd_build_info and the process_* series every Prometheus client library
 * exports (the names of the Go and Python clients, so the usual dashboards
 * and alerts work unchanged). Read from /proc/self on the scraping control
 * thread: nothing is kept, nothing runs on the data path.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api_int.h"
#include "nrf_tp_dpdk.h"

#ifndef NRF_VERSION
#define NRF_VERSION "unknown"
#endif

static void
gauge(struct api_buf *b, const char *name, const char *type, const char *help, double v)
{
	api_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	if (v == (double)(unsigned long long)v)
		api_buf_printf(b, "%s %llu\n", name, (unsigned long long)v);
	else
		api_buf_printf(b, "%s %.6f\n", name, v);
}

/* Seconds since the epoch at boot (the "btime" line of /proc/stat); 0 when
 * unreadable. */
static unsigned long long
boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	unsigned long long bt = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

/* Open descriptors: entries of /proc/self/fd less ".", ".." and the
 * directory's own descriptor. -1 when unreadable. */
static long
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0;
}

static void
build_info(struct api_buf *b)
{
	api_buf_printf(b, "# HELP nrfwd_build_info The build: version and compiler (always 1).\n"
		"# TYPE nrfwd_build_info gauge\n"
		"nrfwd_build_info{version=\"%s\",compiler=\"%s %d.%d.%d\"} 1\n", NRF_VERSION,
#if defined(__clang__)
		"clang", __clang_major__, __clang_minor__, __clang_patchlevel__
#elif defined(__GNUC__)
		"gcc", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__
#else
		"cc", 0, 0, 0
#endif
		);
}

/* What this build's DPDK transport can carry (nrf_tp_dpdk_caps()): known
 * without a port, the same on every transport. */
static void
dpdk_caps(struct api_buf *b)
{
	struct nrf_tp_dpdk_caps c;

	nrf_tp_dpdk_caps(&c);
	api_buf_printf(b, "# HELP nrfwd_dpdk_capability What this build's DPDK transport can "
		"carry (1) or not (0), fixed by the lwIP it was built with: jumbo_frames (an "
		"MTU above 1500), ipv6, vlan (802.1Q tags).\n"
		"# TYPE nrfwd_dpdk_capability gauge\n");
	api_buf_printf(b, "nrfwd_dpdk_capability{capability=\"jumbo_frames\",lwip=\"%s\"} %d\n",
		c.lwip, c.max_mtu > 1500);
	api_buf_printf(b, "nrfwd_dpdk_capability{capability=\"ipv6\",lwip=\"%s\"} %d\n", c.lwip,
		c.ipv6 && c.max_mtu > 0);
	api_buf_printf(b, "nrfwd_dpdk_capability{capability=\"vlan\",lwip=\"%s\"} %d\n", c.lwip,
		c.vlan);
	gauge(b, "nrfwd_dpdk_max_mtu", "gauge", "Largest runtime.dpdk.mtu this build's DPDK "
		"transport carries (0: built without it).", c.max_mtu);
}

void
api_metrics_process(struct api_buf *b)
{
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds;
	char buf[1024];
	FILE *f;
	struct rlimit rl;

	build_info(b);
	dpdk_caps(b);
	/* /proc/self/stat: fields after the command (which is in parentheses
	 * and may hold spaces): 14 utime, 15 stime, 22 starttime (ticks
	 * after boot), 24 rss (pages); proc(5). */
	f = fopen("/proc/self/stat", "re");
	if (f != NULL && tck > 0) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		char *p;

		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p != NULL) {
			unsigned long long ut, st, start;
			long rss;

			/* after ')': 3 state, 4..13 skipped, 14 utime ... */
			if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
				"%*d %*d %*d %*d %*d %*d %llu %*u %ld", &ut, &st, &start, &rss) == 4) {
				unsigned long long bt = boot_time();

				gauge(b, "process_cpu_seconds_total", "counter",
					"Total user and system CPU time spent in seconds.",
					(double)(ut + st) / (double)tck);
				if (page > 0)
					gauge(b, "process_resident_memory_bytes", "gauge",
						"Resident memory size in bytes.", (double)rss * (double)page);
				if (bt > 0)
					gauge(b, "process_start_time_seconds", "gauge",
						"Start time of the process since unix epoch in seconds.",
						(double)bt + (double)start / (double)tck);
			}
		}
	}
	if (f != NULL)
		fclose(f);
	f = fopen("/proc/self/statm", "re");
	if (f != NULL) {
		unsigned long long vsz;

		if (fscanf(f, "%llu", &vsz) == 1 && page > 0)
			gauge(b, "process_virtual_memory_bytes", "gauge",
				"Virtual memory size in bytes.", (double)vsz * (double)page);
		fclose(f);
	}
	fds = open_fds();
	if (fds >= 0)
		gauge(b, "process_open_fds", "gauge", "Number of open file descriptors.",
			(double)fds);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		gauge(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
			(double)rl.rlim_cur);
}
