/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `check`: validate a configuration the way nrfwd does at start, with the
 * same command line as nrfwd (the units run both with the same options):
 *
 *   nrfwd-ctl check FILE
 *   nrfwd-ctl check [EAL-ARGS --] --config FILE [nrfwd's options]
 *
 * With --config-etcd the file holds runtime only and the shared groups are
 * read from etcd (or nrfwd's cached copy), exactly as nrfwd reads them
 * (app/nrfwd/nrfwd_src.c, compiled in here too), but no cached copy is
 * written. Beyond what nrfwd validates when it loads the document, check
 * looks for what would make the start fail: TLS files that do not load,
 * listeners and the management listener on the same port, an access log
 * that cannot be created, a token file that cannot be read. EAL arguments
 * (before "--") are the EAL's and are not checked here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nrf_addr.h"
#include "ctl.h"
#include "nrf_api.h"
#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_fwd.h"
#include "nrf_rt.h"
#include "nrf_sys.h"
#include "nrf_tp_dpdk.h"
#include "nrf_via.h"
#include "nrfwd_opts.h"
#include "nrfwd_src.h"

#define MAX_PROBLEMS 16

static void
check_usage(FILE *f)
{
	fprintf(f,
		"usage: nrfwd-ctl check FILE\n"
		"       nrfwd-ctl check [EAL-ARGS --] --config FILE [NRFWD-OPTIONS]\n"
		"\n"
		"Validates FILE as nrfwd would load it with the same options, and what\n"
		"would make nrfwd's start fail: TLS files, port clashes between the\n"
		"listeners and the management listener, the access log's directory,\n"
		"the --api-token-file. With --config-etcd (and its options) FILE holds\n"
		"runtime only; the shared groups are read from etcd or the cached copy\n"
		"(read only: nothing is written). EAL-ARGS are not checked.\n"
		"Every problem is printed as '<json-pointer>: <reason>' on stderr.\n"
		"Exit status: 0 valid (warnings allowed), 1 invalid, 2 usage error.\n");
}

void
ctl_problems_list(const struct nrf_cfg_problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		fprintf(stderr, "  %s: %s\n", p->v[i].pointer[0] != '\0' ? p->v[i].pointer : "/",
			p->v[i].reason);
}

void
ctl_problems_print(const char *file, int err, const struct nrf_cfg_problems *p)
{
	size_t n = p->n;

	if (err == NRF_ECONFIG || err == 0)
		fprintf(stderr, "%s: invalid configuration, %zu problem%s:\n", file, n,
			n == 1 ? "" : "s");
	else
		fprintf(stderr, "%s: invalid configuration (%s), %zu problem%s:\n", file,
			nrf_strerror(err), n, n == 1 ? "" : "s");
	ctl_problems_list(p);
}

/* Problems found after the document loaded, printed at the end. */
struct found {
	struct nrf_cfg_problem v[MAX_PROBLEMS];
	size_t n;
};

static void
found_add(struct found *f, const char *pointer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
found_add(struct found *f, const char *pointer, const char *fmt, ...)
{
	va_list ap;

	if (f->n >= MAX_PROBLEMS) {
		f->n++;
		return;
	}
	snprintf(f->v[f->n].pointer, sizeof(f->v[f->n].pointer), "%s", pointer);
	va_start(ap, fmt);
	vsnprintf(f->v[f->n].reason, sizeof(f->v[f->n].reason), fmt, ap);
	va_end(ap);
	f->n++;
}

/* Peer names that nrfwd resolves (fqdn without ipv4/ipv6, a localNrf
 * address that is a name) and that do not resolve here now: a warning
 * each, with the resolver's reason. Not a failure: DNS may know the name
 * by the time nrfwd runs, and nrfwd keeps trying (runtime.dns). */
static unsigned int
check_names(const char *path, const struct nrf_cfg *cfg)
{
	struct addrinfo hints, *res;
	unsigned int warned = 0, i;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	for (i = 0; i <= cfg->n_peers; i++) {
		const char *name, *where;
		struct nrf_tp_addr x;

		if (i < cfg->n_peers) {
			const struct nrf_cfg_peer *p = &cfg->peers[i];

			if (p->fqdn[0] == '\0' || p->ipv4[0] != '\0' || p->ipv6[0] != '\0')
				continue;
			name = p->fqdn;
			where = p->pointer;
		} else {
			if (!cfg->rt.local_nrf.present ||
					nrf_tp_addr_parse(cfg->rt.local_nrf.address, 0, &x) == 0)
				continue;
			name = cfg->rt.local_nrf.address;
			where = "/runtime/localNrf/address";
		}
		res = NULL;
		rc = getaddrinfo(name, NULL, &hints, &res);
		if (res != NULL)
			freeaddrinfo(res);
		if (rc == 0)
			continue;
		fprintf(stderr, "%s: warning: %s: \"%s\" does not resolve (%s); tries to it "
			"fail until it does\n", path, where, name,
			rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		warned++;
	}
	return warned;
}

/* ------------------------------------------------------------------------ */
/* Port clashes                                                              */

struct endpoint {
	const char *address;
	uint16_t port;
	bool dual_stack;   /* "::" of a kernel listener takes IPv4 too */
	char where[64];    /* pointer or option */
};

static bool
wildcard(const struct nrf_tp_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->ip, zero, a->family == 4 ? 4 : 16) == 0;
}

/* Would a connection to one of them possibly reach the other? */
static bool
overlap(const struct endpoint *x, const struct endpoint *y)
{
	struct nrf_tp_addr a, b;

	if (x->port == 0 || y->port == 0 || x->port != y->port)
		return false;
	if (nrf_tp_addr_parse(x->address, x->port, &a) != 0 ||
		nrf_tp_addr_parse(y->address, y->port, &b) != 0)
		return strcmp(x->address, y->address) == 0;
	if (a.family != b.family)
		return (a.family == 6 && x->dual_stack && wildcard(&a)) ||
			(b.family == 6 && y->dual_stack && wildcard(&b));
	return wildcard(&a) || wildcard(&b) ||
		memcmp(a.ip, b.ip, a.family == 4 ? 4 : 16) == 0;
}

static void
check_ports(const struct nrf_cfg *cfg, const char *mgmt_opt, struct found *f)
{
	struct endpoint e[NRF_CFG_MAX_LISTEN + 1];
	char maddr[128];
	size_t n = 0, i, j;

	for (i = 0; i < cfg->rt.n_listen; i++) {
		e[n].address = cfg->rt.listen[i].address;
		e[n].port = cfg->rt.listen[i].port;
		e[n].dual_stack = true;
		snprintf(e[n].where, sizeof(e[n].where), "/runtime/listen/%zu", i);
		n++;
	}
	if (mgmt_opt != NULL) {
		if (nrf_hostport_split(mgmt_opt, maddr, sizeof(maddr), &e[n].port) != 0) {
			found_add(f, "--management", "expected ADDR:PORT, got \"%s\"", mgmt_opt);
			return;
		}
		e[n].address = maddr;
		e[n].dual_stack = false;
		snprintf(e[n].where, sizeof(e[n].where), "--management");
		n++;
	} else if (cfg->rt.mgmt_port != 0) {
		e[n].address = cfg->rt.mgmt_address;
		e[n].port = cfg->rt.mgmt_port;
		e[n].dual_stack = false;
		snprintf(e[n].where, sizeof(e[n].where), "/runtime/management");
		n++;
	}
	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (!overlap(&e[j], &e[i]))
				continue;
			found_add(f, e[i].where, "%s port %u clashes with %s (%s port %u): "
				"the second listener cannot open, or the two share connections",
				e[i].address, e[i].port, e[j].where, e[j].address, e[j].port);
			break;
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Files nrfwd opens at start                                                */

/* runtime.accessLog.path: opened with O_CREAT|O_APPEND by the user that
 * runs check (ExecStartPre runs as the unit's User=, in its sandbox). */
/* What runtime.dpdk asks of this build's DPDK transport (nrfwd refuses to
 * start otherwise): an MTU above what its lwIP carries, a VLAN. */
static void
check_dpdk_caps(const struct nrf_cfg *cfg, struct found *f)
{
	const struct nrf_cfg_dpdk *d = &cfg->rt.dpdk;
	const char *field = "/runtime/dpdk";
	char why[256];

	if (cfg->rt.transport != NRF_TRANSPORT_DPDK)
		return;
	if (nrf_tp_dpdk_caps_check(d->mtu, d->vlan, false, &field, why, sizeof(why)) != 0)
		found_add(f, field, "%s", why);
}

static void
check_access_log(const struct nrf_cfg *cfg, struct found *f)
{
	const char *path = cfg->rt.access_log.path;
	const char *ptr = "/runtime/accessLog/path";
	char dir[4096];
	struct stat st;

	if (path == NULL || path[0] == '\0')
		return;
	if (access(path, F_OK) == 0) {
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			found_add(f, ptr, "%s is a directory", path);
		else if (access(path, W_OK) != 0)
			found_add(f, ptr, "%s cannot be written by this user: %s", path,
				strerror(errno));
		return;
	}
	(void)nrf_path_split(path, dir, sizeof(dir));
	if (stat(dir, &st) != 0)
		found_add(f, ptr, "directory %s of %s: %s", dir, path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		found_add(f, ptr, "%s of %s is not a directory", dir, path);
	else if (access(dir, W_OK | X_OK) != 0)
		found_add(f, ptr, "%s cannot be created in %s by this user: %s", path, dir,
			strerror(errno));
}

static void
check_token(const char *file, struct found *f)
{
	char *token;
	int err;

	if (file == NULL)
		return;
	errno = 0;
	token = nrf_api_token_read(file, &err);
	if (token == NULL) {
		found_add(f, "--api-token-file", "%s: %s", file,
			err == NRF_EIO && errno != 0 ? strerror(errno)
			: err == NRF_EINVAL ? "empty, or not a token (spaces or control characters)"
			: nrf_strerror(err));
		return;
	}
	memset(token, 0, strlen(token));
	free(token);
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

struct check_args {
	const char *config;
	const char *management;
	const char *token_file;
};

/* nrfwd's own options (app/nrfwd/main.c), parsed as nrfwd parses them.
 * @return -1 to go on, or the exit status. */
static int
parse(int argc, char **argv, struct check_args *a)
{
	static const struct option opts[] = {
		NRFWD_LONGOPTS,
		NRFWD_SRC_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum nrf_log_level level;
	unsigned int workers;
	int c;

	memset(a, 0, sizeof(*a));
	/* EAL arguments up to a "--" (nrfwd@.service passes them): skipped. */
	(void)nrfwd_eal_split(&argc, &argv);
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:w:M:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config = optarg;
			break;
		case 'w':
			if (nrfwd_opt_workers("nrfwd-ctl check", optarg, &workers) != 0)
				return EXIT_USAGE;
			break;
		case NRFWD_OPT_LOG_LEVEL:
			if (nrfwd_opt_level(optarg, &level) != 0) {
				fprintf(stderr, "nrfwd-ctl check: --log-level: unknown level \"%s\"\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'M':
			a->management = optarg;
			break;
		case 'T':
			a->token_file = optarg;
			break;
		case NRFWD_OPT_PCI_NIC:
		case NRFWD_OPT_DPDK_PROCESSES:
			break;
		case NRFWD_SRC_OPT_FIRST ... NRFWD_SRC_OPT_LAST:
			if (nrfwd_src_opt(c, optarg) != 0)
				return EXIT_USAGE;
			break;
		case 'h':
			check_usage(stdout);
			return 0;
		default:
			check_usage(stderr);
			return EXIT_USAGE;
		}
	}
	/* The short form: one FILE, no --config. */
	if (a->config == NULL && optind == argc - 1) {
		a->config = argv[optind++];
	}
	if (optind < argc) {
		fprintf(stderr, "nrfwd-ctl check: unexpected argument \"%s\"\n", argv[optind]);
		check_usage(stderr);
		return EXIT_USAGE;
	}
	if (a->config == NULL) {
		check_usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

static struct nrf_cfg *
load(const char *file)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_cfg *cfg;
	int err;

	if (!nrfwd_src_active())
		return ctl_load(file);
	nrfwd_src_check_only();
	cfg = nrfwd_src_load(file, &probs, &err);
	if (cfg == NULL)
		ctl_problems_print(file, err, &probs);
	nrf_cfg_problems_fini(&probs);
	return cfg;
}

int
ctl_check(int argc, char **argv)
{
	struct nrf_cfg_problem tls[4];
	struct check_args a;
	struct nrf_fwd_table *t = NULL;
	struct nrf_via_db *db = NULL;
	struct nrf_cfg *cfg;
	struct found f = {.n = 0};
	size_t n, i;
	int rc = 1, err;

	rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = 1;
	cfg = load(a.config);
	if (cfg == NULL)
		goto out;
	db = nrf_fwd_via_db_create(cfg, &err);
	if (db == NULL) {
		fprintf(stderr, "%s: identities cannot be compiled: %s\n", a.config,
			nrf_strerror(err));
		goto out;
	}
	t = nrf_fwd_table_create(cfg, &err);
	if (t == NULL) {
		fprintf(stderr, "%s: %s\n", a.config, nrf_strerror(err));
		goto out;
	}
	n = nrf_rt_tls_check(cfg, tls, 4);
	for (i = 0; i < n && i < 4; i++)
		found_add(&f, tls[i].pointer, "%s", tls[i].reason);
	check_ports(cfg, a.management, &f);
	check_access_log(cfg, &f);
	check_dpdk_caps(cfg, &f);
	check_token(a.token_file, &f);
	if (f.n > 0) {
		fprintf(stderr, "%s: nrfwd would not start, %zu problem%s:\n", a.config, f.n,
			f.n == 1 ? "" : "s");
		for (i = 0; i < f.n && i < MAX_PROBLEMS; i++)
			fprintf(stderr, "  %s: %s\n", f.v[i].pointer, f.v[i].reason);
		goto out;
	}
	(void)check_names(a.config, cfg);
	printf("%s: OK: self %s, %u forwarding peer%s (%s), %u growth set%s with %u "
	       "peer%s (%s), %zu identities\n",
		a.config, cfg->general.self_name, cfg->fwd.n_peers,
		cfg->fwd.n_peers == 1 ? "" : "s", cfg->fwd.enabled ? "ENABLED" : "DISABLED",
		cfg->n_sets, cfg->n_sets == 1 ? "" : "s", cfg->growth.n_peers,
		cfg->growth.n_peers == 1 ? "" : "s",
		cfg->growth.enabled ? "ENABLED" : "DISABLED", nrf_via_db_count(db));
	rc = 0;
out:
	nrf_fwd_table_free(t);
	nrf_via_db_free(db);
	nrf_cfg_free(cfg);
	nrfwd_src_free();
	return rc;
}
