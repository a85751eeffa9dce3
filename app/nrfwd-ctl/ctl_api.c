/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `get`, `put`, `patch` and `metrics`: a running nrfwd's management
 * listener (REST API, docs/rest-api.md) over HTTP/1.1 (ctl_http.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "ctl_http.h"
#include "nrf_common.h"

/* ------------------------------------------------------------------------ */
/* REST API client: get, put, patch, metrics                                 */

static const char *
group_path(const char *g)
{
	static const char *const groups[] = {"generalOptions", "forwardingOptions",
		"nrfGrowth/nrfForwardingOptions", "runtime"};

	if (strcmp(g, "nrfGrowth") == 0)
		return "nrfGrowth/nrfForwardingOptions";
	for (size_t i = 0; i < NRF_ARRAY_SIZE(groups); i++)
		if (strcmp(g, groups[i]) == 0)
			return groups[i];
	return NULL;
}

char *
ctl_read_all(const char *file, size_t *len)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
	}
	if (buf != NULL && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	if (buf != NULL) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Print a refused request readably: status, title, detail, then every
 * invalid parameter on its own line. */
static void
print_failure(const char *what, const struct ctl_http_resp *r)
{
	json_t *doc = json_loadb(r->body != NULL ? r->body : "", r->body_len, 0, NULL);
	const char *title = json_string_value(json_object_get(doc, "title"));
	const char *detail = json_string_value(json_object_get(doc, "detail"));
	json_t *inv = json_object_get(doc, "invalidParams");
	size_t i;
	json_t *p;

	fprintf(stderr, "nrfwd-ctl: %s: %d %s", what, r->status,
		title != NULL ? title : r->reason);
	if (detail != NULL)
		fprintf(stderr, ": %s", detail);
	fputc('\n', stderr);
	json_array_foreach(inv, i, p) {
		const char *param = json_string_value(json_object_get(p, "param"));
		const char *reason = json_string_value(json_object_get(p, "reason"));

		fprintf(stderr, "  %s: %s\n", param != NULL && param[0] != '\0' ? param : "/",
			reason != NULL ? reason : "");
	}
	if (doc == NULL && r->body_len > 0)
		fprintf(stderr, "%s\n", r->body);
	json_decref(doc);
}

/* `peers`: GET /peers as a table, one upstream a line. */
static void
print_peers(const char *body, size_t len)
{
	json_error_t je;
	json_t *doc = json_loadb(body, len, 0, &je), *ups, *u;
	size_t i;

	ups = json_object_get(doc, "upstreams");
	if (!json_is_array(ups)) {
		fwrite(body, 1, len, stdout);
		json_decref(doc);
		return;
	}
	printf("%-36s %-11s %-24s %-12s %5s %6s %8s %8s %8s %8s %8s  %s\n", "UPSTREAM", "ROLE",
		"ADDRESS", "STATE", "CONNS", "STREAMS", "TRIES", "FAILED", "P50_MS", "P90_MS",
		"P99_MS", "LAST FAILURE");
	json_array_foreach(ups, i, u) {
		json_t *f = json_object_get(u, "failures"), *v, *lf = json_object_get(u, "lastFailure");
		const char *k;
		json_t *lat = json_object_get(u, "latencySeconds"), *de;
		json_int_t failed = 0;
		char last[192] = "-", q[3][16], role[32];
		const char *mode;
		static const char *const qk[3] = {"p50", "p90", "p99"};

		json_object_foreach(f, k, v)
			failed += json_integer_value(v);
		if (json_is_object(lf))
			snprintf(last, sizeof(last), "%s, %.1f s ago",
				json_string_value(json_object_get(lf, "reason")),
				json_number_value(json_object_get(lf, "secondsAgo")));
		/* A name that stopped resolving keeps its last address (the
		 * peer may look healthy): say so in the same column. */
		de = json_object_get(json_object_get(u, "dns"), "lastError");
		if (json_is_string(de)) {
			size_t n = strcmp(last, "-") == 0 ? 0 : strlen(last);

			snprintf(last + n, sizeof(last) - n, "%sdns: %s", n > 0 ? "; " : "",
				json_string_value(de));
		}
		/* local, peer, or peer:growth (an NRF Growth peer) */
		mode = json_string_value(json_object_get(u, "mode"));
		snprintf(role, sizeof(role), "%s%s%s",
			json_is_string(json_object_get(u, "role"))
				? json_string_value(json_object_get(u, "role")) : "-",
			mode != NULL && strcmp(mode, "forwarding") != 0 ? ":" : "",
			mode != NULL && strcmp(mode, "forwarding") != 0 ? mode : "");
		for (int k = 0; k < 3; k++) {
			if (json_is_object(lat))
				snprintf(q[k], sizeof(q[k]), "%.1f",
					json_number_value(json_object_get(lat, qk[k])) * 1e3);
			else
				snprintf(q[k], sizeof(q[k]), "-");
		}
		printf("%-36s %-11s %-24s %-12s %5lld %6lld %8lld %8lld %8s %8s %8s  %s\n",
			json_string_value(json_object_get(u, "name")), role,
			json_is_string(json_object_get(u, "address"))
				? json_string_value(json_object_get(u, "address")) : "-",
			json_string_value(json_object_get(u, "state")),
			(long long)json_integer_value(json_object_get(u, "connections")),
			(long long)json_integer_value(json_object_get(u, "inFlight")),
			(long long)json_integer_value(json_object_get(u, "tries")), (long long)failed,
			q[0], q[1], q[2], last);
	}
	json_decref(doc);
}

int
ctl_api(int argc, char **argv)
{
	static const struct option opts[] = {
		CTL_OPT_API,
		{"token-file", required_argument, NULL, 't'},
		CTL_OPTS_END,
	};
	const char *cmd = argv[1], *api = DEFAULT_API, *token_file = NULL;
	const char *method = "GET", *ctype = NULL, *group = NULL;
	char path[256], what[320], err[512];
	char *body = NULL, *token = NULL;
	struct ctl_http_resp r;
	size_t len = 0, npos;
	int c, rc, status = 0;
	char *pos[3];

	optind = 2;
	while ((c = getopt_long(argc, argv, "a:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			api = optarg;
			break;
		case 't':
			token_file = optarg;
			break;
		default:
			return ctl_help_or_usage(c, EXIT_USAGE);
		}
	}
	npos = (size_t)(argc - optind);
	if (npos > 2) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < npos; i++)
		pos[i] = argv[optind + (int)i];
	if (strcmp(cmd, "metrics") == 0 || strcmp(cmd, "peers") == 0) {
		if (npos != 0) {
			ctl_usage(stderr);
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "/%s", cmd);
	} else if (strcmp(cmd, "get") == 0) {
		if (npos > 1) {
			ctl_usage(stderr);
			return EXIT_USAGE;
		}
		group = npos == 1 ? group_path(pos[0]) : "";
		if (group == NULL) {
			fprintf(stderr, "nrfwd-ctl: unknown group '%s'\n", pos[0]);
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "/nrf-configuration/v1/%s", group);
	} else {
		if (npos != 2) {
			ctl_usage(stderr);
			return EXIT_USAGE;
		}
		group = group_path(pos[0]);
		if (group == NULL) {
			fprintf(stderr, "nrfwd-ctl: unknown group '%s'\n", pos[0]);
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "/nrf-configuration/v1/%s", group);
		method = strcmp(cmd, "put") == 0 ? "PUT" : "PATCH";
		ctype = strcmp(cmd, "put") == 0 ? "application/json"
						: "application/merge-patch+json";
		body = ctl_read_all(pos[1], &len);
		if (body == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", pos[1], strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (token_file != NULL) {
		size_t tl = 0;

		token = ctl_read_all(token_file, &tl);
		if (token == NULL) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", token_file, strerror(errno));
			free(body);
			return EXIT_USAGE;
		}
		while (tl > 0 && (token[tl - 1] == '\n' || token[tl - 1] == '\r' ||
			token[tl - 1] == ' ' || token[tl - 1] == '\t'))
			token[--tl] = '\0';
	}
	snprintf(what, sizeof(what), "%s %s", method, path);
	rc = ctl_http_request(api, method, path, ctype, body, len, token, &r, err, sizeof(err));
	if (token != NULL)
		memset(token, 0, strlen(token));
	free(token);
	free(body);
	if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", what, err);
		return EXIT_UNREACHABLE;
	}
	if (r.status >= 200 && r.status < 300 && strcmp(cmd, "peers") == 0) {
		print_peers(r.body, r.body_len);
	} else if (r.status >= 200 && r.status < 300) {
		fwrite(r.body, 1, r.body_len, stdout);
		if (r.body_len > 0 && r.body[r.body_len - 1] != '\n')
			putchar('\n');
	} else {
		print_failure(what, &r);
		status = 1;
	}
	ctl_http_resp_fini(&r);
	return status;
}
