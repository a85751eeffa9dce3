/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fleet's shared configuration in etcd, without a running nrfwd
 * (docs/fleet.md):
 *   fleet status --etcd URLS --config-key KEY [--json]
 *   get [GROUP] --etcd URLS --config-key KEY
 *   put GROUP|all FILE --etcd URLS --config-key KEY
 *   patch GROUP FILE --etcd URLS --config-key KEY
 * A change is validated with the loader nrfwd uses (lib/cfg) before it is
 * written, and written with a compare-and-swap on the revision it was
 * based on: two operators never overwrite each other silently.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "nrf_cfg.h"
#include "nrf_cfgsrc.h"
#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_etcd.h"

struct fleet_opts {
	struct nrf_etcd_params ep;
	const char *key;
	bool json;
	const char *user_file;
	char user[256], password[768];
};

static int
parse_opts(int argc, char **argv, int first, struct fleet_opts *o, char **pos, int *npos)
{
	static const struct option opts[] = {
		{"etcd", required_argument, NULL, 'e'},
		{"config-key", required_argument, NULL, 'k'},
		CTL_OPT_JSON,
		CTL_OPTS_ETCD_TLS,
		{"etcd-user-file", required_argument, NULL, 4},
		CTL_OPTS_END,
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = first;
	while ((c = getopt_long(argc, argv, "e:k:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->ep.endpoints = optarg;
			break;
		case 'k':
			o->key = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 1:
		case 2:
		case 3:
			ctl_etcd_tls_opt(&o->ep, c, optarg);
			break;
		case 4:
			o->user_file = optarg;
			break;
		case 'h':
			ctl_usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (o->ep.endpoints == NULL || o->key == NULL) {
		fprintf(stderr, "nrfwd-ctl: --etcd URLS and --config-key KEY are required\n");
		return -1;
	}
	if (o->user_file != NULL) {
		size_t n = 0;
		char *t = ctl_read_all(o->user_file, &n), *colon;

		if (t == NULL || (colon = strchr(t, ':')) == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: expected user:password\n", o->user_file);
			free(t);
			return -1;
		}
		while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r'))
			t[--n] = '\0';
		*colon = '\0';
		snprintf(o->user, sizeof(o->user), "%s", t);
		snprintf(o->password, sizeof(o->password), "%s", colon + 1);
		memset(t, 0, n);
		free(t);
		o->ep.user = o->user;
		o->ep.password = o->password;
	}
	*npos = 0;
	while (optind < argc && *npos < 3)
		pos[(*npos)++] = argv[optind++];
	return optind < argc ? -1 : 0;
}

static struct nrf_etcd *
connect_etcd(struct fleet_opts *o)
{
	int err = 0;
	struct nrf_etcd *e;

	nrf_etcd_global_init();
	e = nrf_etcd_create(&o->ep, &err);
	if (e == NULL)
		fprintf(stderr, "nrfwd-ctl: --etcd %s: %s\n", o->ep.endpoints, nrf_strerror(err));
	return e;
}

/* ------------------------------------------------------------------------ */
/* fleet status                                                              */

static const char *
str_or(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : dflt;
}

int
ctl_fleet(int argc, char **argv)
{
	struct fleet_opts o;
	struct nrf_etcd_kvs cfg = {0}, inst = {0};
	struct nrf_etcd *e;
	char *pos[3], *prefix;
	int npos = 0, rc, status = 0;
	int64_t cur = 0;
	json_t *all = NULL;
	size_t i;

	if (argc < 3 || strcmp(argv[2], "status") != 0) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	if (parse_opts(argc, argv, 3, &o, pos, &npos) != 0 || npos != 0) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	prefix = nrf_cfgsrc_instances_prefix(o.key);
	if (prefix == NULL) {
		fprintf(stderr, "nrfwd-ctl: --config-key %s: expected /<path>/config\n", o.key);
		return EXIT_USAGE;
	}
	e = connect_etcd(&o);
	if (e == NULL) {
		free(prefix);
		return EXIT_USAGE;
	}
	rc = nrf_etcd_get(e, o.key, false, &cfg);
	if (rc == 0)
		rc = nrf_etcd_get(e, prefix, true, &inst);
	if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: etcd: %s\n", nrf_etcd_last_error(e));
		status = rc == NRF_EIO ? EXIT_UNREACHABLE : 1;
		goto out;
	}
	cur = cfg.n > 0 ? cfg.v[0].mod_revision : 0;
	if (o.json)
		all = json_pack("{s:s, s:I, s:[]}", "key", o.key, "revision", (json_int_t)cur,
			"instances");
	else
		printf("key %s: revision %lld%s; %zu instance(s)\n\n%-16s %-8s %8s %8s %6s %-4s "
			"%-14s %s\n", o.key, (long long)cur, cfg.n == 0 ? " (absent)" : "", inst.n,
			"INSTANCE", "STATE", "APPLIED", "SEEN", "GEN", "UP", "VERSION", "UPDATED");
	for (i = 0; i < inst.n; i++) {
		json_t *s = json_loadb(inst.v[i].value, inst.v[i].value_len, 0, NULL);
		const json_t *le = json_object_get(s, "lastError");
		const char *state = str_or(s, "state", "?");
		json_int_t applied = json_integer_value(json_object_get(s, "appliedRevision"));
		size_t k;
		json_t *p;

		if (strcmp(state, "applied") != 0 || applied != cur)
			status = 1;
		if (o.json) {
			if (s != NULL)
				json_array_append(json_object_get(all, "instances"), s);
			json_decref(s);
			continue;
		}
		printf("%-16s %-8s %8lld %8lld %6lld %-4s %-14s %s\n",
			str_or(s, "id", inst.v[i].key + strlen(prefix)), state, (long long)applied,
			(long long)json_integer_value(json_object_get(s, "seenRevision")),
			(long long)json_integer_value(json_object_get(s, "generation")),
			json_is_true(json_object_get(s, "sourceUp")) ? "yes" : "no",
			str_or(s, "version", "?"), str_or(s, "updatedAt", "?"));
		if (json_is_object(le)) {
			printf("  refused revision %lld: %s\n",
				(long long)json_integer_value(json_object_get(le, "revision")),
				str_or(le, "detail", ""));
			json_array_foreach(json_object_get(le, "invalidParams"), k, p)
				printf("    %s: %s\n", str_or(p, "param", "/"), str_or(p, "reason", ""));
		}
		json_decref(s);
	}
	if (o.json) {
		ctl_print_json(all);
		json_decref(all);
	} else if (inst.n == 0) {
		printf("(no instance reports under %s)\n", prefix);
	}
out:
	nrf_etcd_kvs_fini(&cfg);
	nrf_etcd_kvs_fini(&inst);
	nrf_etcd_free(e);
	free(prefix);
	return status;
}

/* ------------------------------------------------------------------------ */
/* get / put / patch --etcd                                                  */

/* RFC 7396 */
static json_t *
merge_patch(const json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v, *out;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	json_object_foreach((json_t *)(uintptr_t)patch, k, v) {
		if (json_is_null(v))
			json_object_del(out, k);
		else
			json_object_set_new(out, k, merge_patch(json_object_get(out, k), v));
	}
	return out;
}

/* The object holding a group and the group's member name. */
static int
group_slot(json_t *doc, const char *g, json_t **parent, const char **key)
{
	if (strcmp(g, "generalOptions") == 0 || strcmp(g, "forwardingOptions") == 0) {
		*parent = doc;
		*key = g;
		return 0;
	}
	if (strcmp(g, "nrfGrowth") == 0 || strcmp(g, "nrfGrowth/nrfForwardingOptions") == 0) {
		*parent = json_object_get(doc, "nrfGrowth");
		if (*parent == NULL) {
			*parent = json_object();
			json_object_set_new(doc, "nrfGrowth", *parent);
		}
		*key = "nrfForwardingOptions";
		return 0;
	}
	return -1;
}

/* Validate @p shared as nrfwd would (with an empty runtime: its defaults). */
static bool
valid(const char *shared)
{
	struct nrf_cfg_problems pr = {0};
	struct nrf_cfg *cfg = NULL;
	char *doc;
	int err = 0;

	doc = nrf_cfgsrc_compose(shared, strlen(shared), "{}", &pr, &err);
	if (doc != NULL)
		cfg = nrf_cfg_load(doc, strlen(doc), 1, &pr, &err);
	free(doc);
	if (cfg == NULL) {
		fprintf(stderr, "nrfwd-ctl: the document is invalid (%s); nothing was written\n",
			nrf_strerror(err));
		ctl_problems_list(&pr);
	}
	nrf_cfg_problems_fini(&pr);
	nrf_cfg_free(cfg);
	return cfg != NULL;
}

int
ctl_fleet_doc(int argc, char **argv)
{
	const char *cmd = argv[1];
	struct fleet_opts o;
	struct nrf_etcd_kvs kvs = {0};
	struct nrf_etcd *e;
	json_t *doc = NULL, *body = NULL, *parent, *next;
	const char *gkey;
	char *pos[3], *text = NULL, *in = NULL;
	int npos = 0, rc, status = 0;
	int64_t base = 0, rev = 0;
	size_t len = 0;

	if (parse_opts(argc, argv, 2, &o, pos, &npos) != 0 ||
		(strcmp(cmd, "get") == 0 ? npos > 1 : npos != 2)) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	if (npos >= 1 && strcmp(pos[0], "runtime") == 0) {
		fprintf(stderr, "nrfwd-ctl: runtime is per instance: it is in each instance's "
			"local file, not in etcd\n");
		return EXIT_USAGE;
	}
	if (npos >= 1 && strcmp(pos[0], "all") != 0 && strcmp(pos[0], "generalOptions") != 0 &&
		strcmp(pos[0], "forwardingOptions") != 0 && strncmp(pos[0], "nrfGrowth", 9) != 0) {
		fprintf(stderr, "nrfwd-ctl: unknown group '%s'\n", pos[0]);
		return EXIT_USAGE;
	}
	if (npos == 2) {
		json_error_t je;

		in = ctl_read_all(pos[1], &len);
		if (in == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", pos[1], strerror(errno));
			return EXIT_USAGE;
		}
		body = json_loadb(in, len, JSON_REJECT_DUPLICATES, &je);
		free(in);
		if (body == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: not JSON: line %d: %s\n", pos[1], je.line,
				je.text);
			return 1;
		}
	}
	e = connect_etcd(&o);
	if (e == NULL) {
		json_decref(body);
		return EXIT_USAGE;
	}
	rc = nrf_etcd_get(e, o.key, false, &kvs);
	if (rc != 0) {
		/* unreachable, or refused (authentication, permission) */
		fprintf(stderr, "nrfwd-ctl: etcd: %s\n", nrf_etcd_last_error(e));
		status = rc == NRF_EIO ? EXIT_UNREACHABLE : 1;
		goto out;
	}
	if (kvs.n == 1) {
		base = kvs.v[0].mod_revision;
		doc = json_loadb(kvs.v[0].value, kvs.v[0].value_len, 0, NULL);
	}
	if (strcmp(cmd, "get") == 0) {
		json_t *what = doc;

		if (doc == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", o.key, kvs.n == 0 ? "absent" :
				"not JSON");
			status = 1;
			goto out;
		}
		if (npos == 1 && strcmp(pos[0], "all") != 0) {
			group_slot(doc, pos[0], &parent, &gkey);
			what = json_object_get(parent, gkey);
		}
		text = what != NULL ? json_dumps(what, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			JSON_ENCODE_ANY) : NULL;
		printf("%s\n", text != NULL ? text : "null");
		fprintf(stderr, "revision %lld\n", (long long)base);
		goto out;
	}
	if (strcmp(pos[0], "all") == 0) {
		if (strcmp(cmd, "patch") == 0) {
			next = merge_patch(doc, body);
		} else {
			next = json_incref(body);
		}
	} else {
		if (doc == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s is absent: put the whole document first "
				"(put all FILE)\n", o.key);
			status = 1;
			goto out;
		}
		next = json_deep_copy(doc);
		group_slot(next, pos[0], &parent, &gkey);
		json_object_set_new(parent, gkey, strcmp(cmd, "patch") == 0
			? merge_patch(json_object_get(parent, gkey), body) : json_incref(body));
	}
	text = json_dumps(next, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(next);
	if (text == NULL || !valid(text)) {
		status = 1;
		goto out;
	}
	rc = nrf_etcd_put_if(e, o.key, text, strlen(text), base, &rev);
	if (rc == NRF_EAGAIN) {
		fprintf(stderr, "nrfwd-ctl: conflict: %s changed since revision %lld; nothing "
			"was written (read it again and retry)\n", o.key, (long long)base);
		status = 1;
	} else if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: etcd: %s\n", nrf_etcd_last_error(e));
		status = rc == NRF_EIO ? EXIT_UNREACHABLE : 1;
	} else {
		printf("%s written at revision %lld (based on %lld); see: nrfwd-ctl fleet status\n",
			o.key, (long long)rev, (long long)base);
	}
out:
	free(text);
	json_decref(doc);
	json_decref(body);
	nrf_etcd_kvs_fini(&kvs);
	nrf_etcd_free(e);
	return status;
}
