/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A topology for lint and trace: configuration files, directories of them,
 * running nrfwd's REST APIs; the holdings file trace assumes; the state file
 * that carries rotation counters and held-down peers from one trace to the
 * next (formats: docs/nrfwd-ctl.md).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>

#include "ctl.h"
#include "ctl_http.h"
#include "nrf_err.h"

static void
print_problems(const char *source, int err, const struct nrf_cfg_problems *p)
{
	fprintf(stderr, "nrfwd-ctl: %s: invalid configuration (%s), %zu problem%s; left out:\n",
		source, nrf_strerror(err), p->n, p->n == 1 ? "" : "s");
	ctl_problems_list(p);
}

/* Add the document @p text (from @p source); an invalid one is recorded. */
static int
add_text(struct nrf_topo *t, const char *source, const char *text, size_t len, bool quiet)
{
	struct nrf_cfg_problems probs = {0};
	struct nrf_cfg *cfg;
	int err = 0, rc;

	cfg = nrf_cfg_load(text, len, 1, &probs, &err);
	if (cfg == NULL) {
		if (!quiet)
			print_problems(source, err, &probs);
		rc = nrf_topo_add_invalid(t, source, err, &probs);
	} else {
		rc = nrf_topo_add(t, cfg, source);
		rc = rc < 0 ? rc : 0;
	}
	nrf_cfg_problems_fini(&probs);
	return rc;
}

static int
add_file(struct nrf_topo *t, const char *path, bool quiet)
{
	size_t len = 0;
	char *text = ctl_read_all(path, &len);
	int rc;

	if (text == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = add_text(t, path, text, len, quiet);
	free(text);
	if (rc != 0)
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", path, nrf_strerror(rc));
	return rc != 0 ? -1 : 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json of @p dir, sorted by name (not recursive). */
static int
add_dir(struct nrf_topo *t, const char *dir, bool quiet)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0 || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nv = realloc(names, (cap = cap * 2 + 16) * sizeof(*nv));

			if (nv == NULL) {
				rc = -1;
				break;
			}
			names = nv;
		}
		names[n] = malloc(strlen(dir) + l + 2);
		if (names[n] == NULL) {
			rc = -1;
			break;
		}
		sprintf(names[n], "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
			de->d_name);
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = add_file(t, names[i], quiet);
		free(names[i]);
	}
	free(names);
	if (rc == 0 && n == 0)
		fprintf(stderr, "nrfwd-ctl: %s: no *.json file\n", dir);
	return rc;
}

/* The running document of one nrfwd: GET {apiRoot}/nrf-configuration/v1/. */
static int
add_api(struct nrf_topo *t, const char *api, bool quiet)
{
	struct ctl_http_resp r;
	char err[512];
	int rc;

	if (ctl_http_request(api, "GET", "/nrf-configuration/v1/", NULL, NULL, 0, NULL, &r, err,
		    sizeof(err)) != 0) {
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", api, err);
		return EXIT_UNREACHABLE;
	}
	if (r.status != 200) {
		fprintf(stderr, "nrfwd-ctl: %s: GET /nrf-configuration/v1/: %d %s\n", api, r.status,
			r.reason);
		ctl_http_resp_fini(&r);
		return EXIT_UNREACHABLE;
	}
	rc = add_text(t, api, r.body != NULL ? r.body : "", r.body_len, quiet);
	ctl_http_resp_fini(&r);
	return rc != 0 ? EXIT_TOPO_USAGE : 0;
}

struct nrf_topo *
ctl_topo_load(const struct ctl_topo_src *src, bool quiet, int *exit_code)
{
	struct nrf_topo *t;
	int rc = 0;

	*exit_code = EXIT_TOPO_USAGE;
	if (src->n_paths + src->n_apis == 0) {
		fprintf(stderr, "nrfwd-ctl: no topology: give configuration files, directories or "
				"--api URLs\n");
		return NULL;
	}
	t = nrf_topo_create(&rc);
	if (t == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s\n", nrf_strerror(rc));
		return NULL;
	}
	for (size_t i = 0; i < src->n_paths; i++) {
		struct stat st;

		if (stat(src->paths[i], &st) != 0) {
			fprintf(stderr, "nrfwd-ctl: %s: %s\n", src->paths[i], strerror(errno));
			goto fail;
		}
		rc = S_ISDIR(st.st_mode) ? add_dir(t, src->paths[i], quiet)
					 : add_file(t, src->paths[i], quiet);
		if (rc != 0)
			goto fail;
	}
	for (size_t i = 0; i < src->n_apis; i++) {
		rc = add_api(t, src->apis[i], quiet);
		if (rc != 0) {
			*exit_code = rc;
			goto fail;
		}
	}
	rc = nrf_topo_resolve(t);
	if (rc != 0) {
		fprintf(stderr, "nrfwd-ctl: the topology does not build: %s\n", nrf_strerror(rc));
		*exit_code = 1;
		goto fail;
	}
	*exit_code = 0;
	return t;
fail:
	nrf_topo_free(t);
	return NULL;
}

int
ctl_topo_find(const struct nrf_topo *t, const char *ref, const char *what)
{
	int i = nrf_topo_find(t, ref);

	if (i == NRF_EEXIST)
		fprintf(stderr, "nrfwd-ctl: %s %s: several NRFs match; give host:port or the "
				"file\n",
			what, ref);
	else if (i < 0)
		fprintf(stderr, "nrfwd-ctl: %s %s: no such NRF in the topology\n", what, ref);
	return i < 0 ? -1 : i;
}

/* ------------------------------------------------------------------------ */
/* Holdings                                                                  */

static int
hold_list(struct nrf_topo *t, int nrf, json_t *arr, enum nrf_topo_holding kind,
	const char *file, const char *key, const char *member)
{
	size_t i;
	json_t *v;

	if (arr == NULL)
		return 0;
	if (!json_is_array(arr)) {
		fprintf(stderr, "nrfwd-ctl: %s: /nrfs/%s/%s: not an array\n", file, key, member);
		return -1;
	}
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			fprintf(stderr, "nrfwd-ctl: %s: /nrfs/%s/%s/%zu: not a string\n", file, key,
				member, i);
			return -1;
		}
		if (nrf_topo_hold(t, (size_t)nrf, kind, json_string_value(v)) != 0)
			return -1;
	}
	return 0;
}

/* "profiles": an nrfstub profiles file; relative to the holdings file. */
static int
hold_profiles(struct nrf_topo *t, int nrf, const char *file, const char *prof)
{
	const char *slash = strrchr(file, '/');
	char path[4096];
	json_error_t je;
	json_t *doc, *arr, *p;
	size_t i;
	int rc = 0;

	if (prof[0] == '/' || slash == NULL)
		snprintf(path, sizeof(path), "%s", prof);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - file), file, prof);
	doc = json_load_file(path, 0, &je);
	arr = json_object_get(doc, "nfProfiles");
	if (doc == NULL || !json_is_array(arr)) {
		fprintf(stderr, "nrfwd-ctl: %s: %s\n", path,
			doc == NULL ? je.text : "no nfProfiles array");
		json_decref(doc);
		return -1;
	}
	json_array_foreach(arr, i, p) {
		const char *type = json_string_value(json_object_get(p, "nfType"));
		const char *id = json_string_value(json_object_get(p, "nfInstanceId"));
		const char *status = json_string_value(json_object_get(p, "nfStatus"));

		/* nrfstub discovers REGISTERED profiles only; retrieval finds any. */
		if (type != NULL && status != NULL && strcmp(status, "REGISTERED") == 0)
			rc |= nrf_topo_hold(t, (size_t)nrf, NRF_TOPO_NF_TYPE, type);
		if (id != NULL)
			rc |= nrf_topo_hold(t, (size_t)nrf, NRF_TOPO_NF_INSTANCE, id);
	}
	json_decref(doc);
	return rc != 0 ? -1 : 0;
}

int
ctl_holdings_load(struct nrf_topo *t, const char *file)
{
	json_error_t je;
	json_t *doc = json_load_file(file, 0, &je), *nrfs, *h;
	const char *key;
	int rc = 0;

	if (doc == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s: %d:%d: %s\n", file, je.line, je.column, je.text);
		return -1;
	}
	nrfs = json_object_get(doc, "nrfs");
	if (!json_is_object(nrfs)) {
		fprintf(stderr, "nrfwd-ctl: %s: /nrfs: missing, or not an object\n", file);
		json_decref(doc);
		return -1;
	}
	json_object_foreach(nrfs, key, h) {
		int nrf = ctl_topo_find(t, key, "holdings: /nrfs:");
		json_t *local = json_object_get(h, "localNrf");
		json_t *prof = json_object_get(h, "profiles");

		if (nrf < 0 || !json_is_object(h)) {
			if (nrf >= 0)
				fprintf(stderr, "nrfwd-ctl: %s: /nrfs/%s: not an object\n", file,
					key);
			rc = -1;
			break;
		}
		if (hold_list(t, nrf, json_object_get(h, "nfTypes"), NRF_TOPO_NF_TYPE, file, key,
			    "nfTypes") != 0 ||
			hold_list(t, nrf, json_object_get(h, "nfInstanceIds"), NRF_TOPO_NF_INSTANCE,
				file, key, "nfInstanceIds") != 0 ||
			hold_list(t, nrf, json_object_get(h, "subscriptionIds"),
				NRF_TOPO_SUBSCRIPTION, file, key, "subscriptionIds") != 0 ||
			(json_is_string(prof) &&
				hold_profiles(t, nrf, file, json_string_value(prof)) != 0)) {
			rc = -1;
			break;
		}
		if (local != NULL &&
			!(json_is_string(local) &&
				(strcmp(json_string_value(local), "up") == 0 ||
					strcmp(json_string_value(local), "down") == 0))) {
			fprintf(stderr, "nrfwd-ctl: %s: /nrfs/%s/localNrf: \"up\" or \"down\"\n",
				file, key);
			rc = -1;
			break;
		}
		if (local != NULL)
			nrf_topo_set_local_down(t, (size_t)nrf,
				strcmp(json_string_value(local), "down") == 0);
		if (json_is_true(json_object_get(h, "down")))
			nrf_topo_set_down(t, (size_t)nrf, true);
	}
	json_decref(doc);
	return rc;
}

static int
str_casecmp(const void *a, const void *b)
{
	return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

size_t
ctl_holdings_types(const struct nrf_topo *t, const char ***out)
{
	const char **v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < nrf_topo_count(t); i++) {
		const char *const *types;
		size_t k = nrf_topo_holdings(t, i, NRF_TOPO_NF_TYPE, &types);
		const char **nv = realloc(v, (n + k + 1) * sizeof(*v));

		if (nv == NULL)
			break;
		v = nv;
		for (size_t j = 0; j < k; j++)
			v[n++] = types[j];
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), str_casecmp);
	/* unique, case-insensitively (discovery compares so) */
	for (size_t i = 0, k = 0; i < n; i++) {
		if (k == 0 || strcasecmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
		if (i + 1 == n)
			n = k;
	}
	if (n == 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	return n;
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */

int
ctl_state_load(struct nrf_topo *t, const char *file)
{
	json_error_t je;
	json_t *doc, *nrfs, *s;
	const char *key;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return errno == ENOENT ? 0 : (fprintf(stderr, "nrfwd-ctl: %s: %s\n", file,
						       strerror(errno)),
						      -1);
	doc = json_loadf(f, 0, &je);
	fclose(f);
	if (doc == NULL) {
		fprintf(stderr, "nrfwd-ctl: %s: %d:%d: %s\n", file, je.line, je.column, je.text);
		return -1;
	}
	nrfs = json_object_get(doc, "nrfs");
	json_object_foreach(nrfs, key, s) {
		int nrf = ctl_topo_find(t, key, "state: /nrfs:");
		const struct nrf_cfg *cfg;
		json_t *held, *v;
		size_t i;

		if (nrf < 0) {
			json_decref(doc);
			return -1;
		}
		cfg = nrf_topo_at(t, (size_t)nrf)->cfg;
		nrf_topo_set_rotation(t, (size_t)nrf,
			(uint32_t)json_integer_value(json_object_get(s, "rotation")));
		held = json_object_get(s, "heldDown");
		json_array_foreach(held, i, v) {
			const char *ptr = json_string_value(v);

			for (uint16_t p = 0; ptr != NULL && p < cfg->n_peers; p++)
				if (strcmp(cfg->peers[p].pointer, ptr) == 0)
					nrf_topo_set_held_down(t, (size_t)nrf, p, true);
		}
	}
	json_decref(doc);
	return 0;
}

int
ctl_state_save(const struct nrf_topo *t, const char *file)
{
	json_t *doc = json_object(), *nrfs = json_object();
	int rc;

	for (size_t i = 0; i < nrf_topo_count(t); i++) {
		const struct nrf_topo_nrf *n = nrf_topo_at(t, i);
		json_t *s = json_object(), *held = json_array();

		json_object_set_new(s, "rotation", json_integer(nrf_topo_rotation(t, i)));
		for (uint16_t p = 0; p < n->cfg->n_peers; p++)
			if (nrf_topo_held_down(t, i, p))
				json_array_append_new(held, json_string(n->cfg->peers[p].pointer));
		json_object_set_new(s, "heldDown", held);
		json_object_set_new(nrfs, n->name, s);
	}
	json_object_set_new(doc, "nrfs", nrfs);
	rc = json_dump_file(doc, file, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (rc != 0)
		fprintf(stderr, "nrfwd-ctl: %s: cannot write the state\n", file);
	return rc != 0 ? -1 : 0;
}
