/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd-ctl: the operator's tool (docs/nrfwd-ctl.md).
 *  - check, explain (ctl_explain.c): one configuration, one hop;
 *  - get, put, patch, metrics (ctl_api.c): a running nrfwd's REST API;
 *  - lint, trace (ctl_lint.c, ctl_trace.c; lib/topo): the whole topology,
 *    every NRF's configuration at once, with pictures (ctl_dot.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "nrf_etcd.h"

void
ctl_usage(FILE *f)
{
	fprintf(f,
		"usage: nrfwd-ctl check FILE\n"
		"       nrfwd-ctl check [EAL-ARGS --] --config FILE [NRFWD-OPTIONS]\n"
		"       nrfwd-ctl explain FILE [--method M] [--path P] [--via VALUE]...\n"
		"                              [--rotation N] [--down PEER]...\n"
		"                              [--max-forward-hops N]\n"
		"       nrfwd-ctl lint TOPOLOGY... [--api URL]... [--json] [--dot FILE]\n"
		"                              [--svg FILE] [--budget N] [--codes]\n"
		"       nrfwd-ctl trace TOPOLOGY... [--api URL]... --at NRF [--method M]\n"
		"                              [--path P] [--via VALUE]... [--holdings FILE]\n"
		"                              [--down NRF]... [--max-forward-hops N]\n"
		"                              [--rotation N] [--state FILE] [--all]\n"
		"                              [--json] [--dot FILE] [--svg FILE]\n"
		"       nrfwd-ctl get [GROUP] [--api URL]\n"
		"       nrfwd-ctl put GROUP FILE [--api URL] [--token-file F]\n"
		"       nrfwd-ctl patch GROUP FILE [--api URL] [--token-file F]\n"
		"       nrfwd-ctl metrics [--api URL]\n"
		"       nrfwd-ctl peers [--api URL]\n"
		"       nrfwd-ctl loops [--api URL]... [--json] [--dot FILE] [--svg FILE]\n"
		"       nrfwd-ctl fleet status --etcd URLS --config-key KEY [--json]\n"
		"       nrfwd-ctl fleet loops --etcd URLS --config-key KEY... [--json]\n"
		"                              [--dot FILE] [--svg FILE]\n"
		"       nrfwd-ctl get [GROUP|all] --etcd URLS --config-key KEY\n"
		"       nrfwd-ctl put GROUP|all FILE --etcd URLS --config-key KEY\n"
		"       nrfwd-ctl patch GROUP|all FILE --etcd URLS --config-key KEY\n"
		"       nrfwd-ctl --version | --help\n"
		"\n"
		"check    validate a configuration; prints every problem as\n"
		"         '<json-pointer>: <reason>'; exit 0 valid, 1 invalid;\n"
		"         peer names that do not resolve now are warnings; with\n"
		"         nrfwd's own options (--config FILE ...: the same command\n"
		"         line as nrfwd's, --config-etcd included) also what would\n"
		"         stop nrfwd's start: TLS files, port clashes, the access\n"
		"         log's directory, the token file (check --help)\n"
		"explain  print as JSON how nrfwd decides for a request carrying the\n"
		"         given Via field lines (one --via per line): members parsed,\n"
		"         identities matched, operation, verdict, candidates and skips,\n"
		"         and what the client gets when the local NRF or a candidate\n"
		"         answers, claims absence or is down (decision.branches)\n"
		"         --method   request method (default GET)\n"
		"         --path     request :path (default\n"
		"                    /nnrf-disc/v1/nf-instances?target-nf-type=AMF)\n"
		"         --rotation per-request rotation counter (default 0)\n"
		"         --down     treat this peer (name as in the output) as down\n"
		"         --max-forward-hops  the request's 3gpp-Sbi-Max-Forward-Hops\n"
		"lint     the forwarding graph of every NRF's configuration (FILEs,\n"
		"         DIRECTORYs of *.json, --api URLs of running nrfwd): peers that\n"
		"         name no NRF or that loop prevention cannot recognise, NRFs\n"
		"         listed as their own peer, cycles and how they end, growth\n"
		"         sets, patterns, paths over maxViaMembers; exit 0 nothing\n"
		"         above info, 1 warnings, 2 errors (--codes lists every code)\n"
		"trace    one request hop by hop through the topology with the data\n"
		"         path's decision code: at each NRF the Via it carries, the\n"
		"         local answer assumed from --holdings (none: every local NRF\n"
		"         holds nothing), candidates, skips, tries, and the answer\n"
		"         (status, cause, which NRF answered); --all: every NRF and\n"
		"         NF type of the holdings, summarised\n"
		"         --at     the NRF the client asks: ocnrfHost, host:port, file\n"
		"         --down   this NRF is down (its peers are held down, tried last)\n"
		"         --state  rotation counters and held-down peers, read and\n"
		"                  written back (successive requests)\n"
		"         --json   JSON instead of text; --dot / --svg: a picture\n"
		"get      print the running configuration of a nrfwd, or one GROUP:\n"
		"         generalOptions, forwardingOptions,\n"
		"         nrfGrowth/nrfForwardingOptions (or nrfGrowth), runtime\n"
		"put      replace GROUP with the JSON object in FILE ('-': stdin)\n"
		"patch    merge FILE into GROUP (JSON merge patch, RFC 7396)\n"
		"metrics  print the Prometheus metrics\n"
		"peers    every upstream: address, state, tries, last failure (GET /peers)\n"
		"loops    the loops running nrfwd saw (GET /loops of each --api), merged:\n"
		"         each cycle named once (A -> E -> A) with its counts and rate,\n"
		"         where it entered, the peer entries that make it and whether\n"
		"         lint predicted it; --dot / --svg: the configured topology\n"
		"         with the observed loop edges marked; exit 0 no 508 or hop\n"
		"         limit observed, 1 some, 3 a nrfwd not reachable\n"
		"fleet loops  the same from the loop summaries the instances of each\n"
		"         --config-key publish with their etcd status\n"
		"fleet status  every instance sharing the configuration KEY in etcd:\n"
		"         applied and seen revision, generation, etcd reachable, and\n"
		"         what each refused and why; exit 0 when every instance runs\n"
		"         the current revision, 1 otherwise, 3 etcd unreachable\n"
		"get/put/patch --etcd  the shared document in etcd itself (no nrfwd\n"
		"         needed): validated as nrfwd validates it, written with a\n"
		"         compare-and-swap on the revision read (a conflict exits 1);\n"
		"         'all' is the whole document; runtime is not in etcd\n"
		"         --etcd-cacert F --etcd-cert F --etcd-key F: TLS;\n"
		"         --etcd-user-file F: user:password\n"
		"         --api        management listener (default " DEFAULT_API ")\n"
		"         --token-file bearer token for put and patch\n"
		"         a refused change prints every problem as\n"
		"         '<json-pointer>: <reason>' on stderr\n"
		"exit status: 0 done, 1 invalid configuration or change refused,\n"
		"             2 usage error, 3 nrfwd not reachable;\n"
		"             lint: 0 / 1 / 2 by the worst finding, 4 usage error;\n"
		"             trace: 0 traced, 1 cannot trace, 4 usage error\n");
}

int
ctl_help_or_usage(int c, int usage_status)
{
	if (c == 'h') {
		ctl_usage(stdout);
		return 0;
	}
	ctl_usage(stderr);
	return usage_status;
}

void
ctl_etcd_tls_opt(struct nrf_etcd_params *ep, int c, const char *arg)
{
	if (c == 1)
		ep->cacert = arg;
	else if (c == 2)
		ep->cert = arg;
	else if (c == 3)
		ep->key = arg;
}

bool
ctl_output_opt(struct ctl_output *o, int c, const char *arg)
{
	if (c == 'j')
		o->json = true;
	else if (c == 'D')
		o->dot = arg;
	else if (c == 'S')
		o->svg = arg;
	else
		return false;
	return true;
}

int
ctl_via_add(struct nrf_slice *lines, size_t *n, size_t max, const char *arg)
{
	if (*n == max) {
		fprintf(stderr, "nrfwd-ctl: at most %zu --via lines\n", max);
		return -1;
	}
	lines[(*n)++] = nrf_slice_str(arg);
	return 0;
}

int
ctl_max_hops(const char *arg, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || *out < 0 || *out > 999999999) {
		fprintf(stderr, "nrfwd-ctl: --max-forward-hops %s: not a number in 0..999999999\n",
			arg);
		return -1;
	}
	return 0;
}

int
ctl_print_json(const json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (text == NULL)
		return -1;
	puts(text);
	free(text);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "check") == 0)
		return ctl_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "explain") == 0)
		return ctl_explain(argc, argv);
	if (strcmp(argv[1], "lint") == 0)
		return ctl_lint(argc, argv);
	if (strcmp(argv[1], "trace") == 0)
		return ctl_trace(argc, argv);
	if (strcmp(argv[1], "fleet") == 0 && argc > 2 && strcmp(argv[2], "loops") == 0)
		return ctl_fleet_loops(argc, argv);
	if (strcmp(argv[1], "fleet") == 0)
		return ctl_fleet(argc, argv);
	if (strcmp(argv[1], "loops") == 0)
		return ctl_loops(argc, argv);
	for (int i = 2; i < argc; i++)
		if ((strcmp(argv[1], "get") == 0 || strcmp(argv[1], "put") == 0 ||
			strcmp(argv[1], "patch") == 0) && strncmp(argv[i], "--etcd", 6) == 0)
			return ctl_fleet_doc(argc, argv);
	if (strcmp(argv[1], "get") == 0 || strcmp(argv[1], "put") == 0 ||
		strcmp(argv[1], "patch") == 0 || strcmp(argv[1], "metrics") == 0 ||
		strcmp(argv[1], "peers") == 0)
		return ctl_api(argc, argv);
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("nrfwd-ctl " NRF_VERSION "\n");
		return 0;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		ctl_usage(stdout);
		return 0;
	}
	fprintf(stderr, "nrfwd-ctl: unknown command '%s'\n", argv[1]);
	ctl_usage(stderr);
	return EXIT_USAGE;
}
