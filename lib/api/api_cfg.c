/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration resources: which path is which group, how a PUT or PATCH
 * becomes a whole new document (so validation always sees the complete
 * document, exactly as a file would be loaded), ProblemDetails bodies, and
 * the atomic rewrite of the configuration file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_int.h"
#include "nrf_err.h"
#include "nrf_sys.h"

/* ------------------------------------------------------------------------ */
/* Resources                                                                 */

static const struct api_group groups[] = {
	{API_RES_GENERAL, "generalOptions", "/generalOptions", NRF_CFG_GENERAL, "",
		"generalOptions"},
	{API_RES_FORWARDING, "forwardingOptions", "/forwardingOptions", NRF_CFG_FORWARDING,
		"", "forwardingOptions"},
	{API_RES_GROWTH, "nrfGrowth/nrfForwardingOptions", "/nrfGrowth/nrfForwardingOptions",
		NRF_CFG_GROWTH, "nrfGrowth", "nrfForwardingOptions"},
	{API_RES_RUNTIME, "runtime", "/runtime", NRF_CFG_RUNTIME, "", "runtime"},
};

/* Compare a path with @p want, ignoring one trailing '/'. */
static bool
path_is(const char *path, const char *want)
{
	size_t n = strlen(want);

	return strncmp(path, want, n) == 0 && (path[n] == '\0' ||
		(path[n] == '/' && path[n + 1] == '\0'));
}

enum api_res
api_route(const char *path)
{
	size_t i;

	if (path == NULL)
		return API_RES_NONE;
	if (path_is(path, API_ROOT))
		return API_RES_ALL;
	if (strncmp(path, API_ROOT "/", sizeof(API_ROOT)) == 0) {
		const char *rel = path + sizeof(API_ROOT);

		for (i = 0; i < NRF_ARRAY_SIZE(groups); i++)
			if (path_is(rel, groups[i].name))
				return groups[i].res;
		return API_RES_NONE;
	}
	if (path_is(path, "/metrics"))
		return API_RES_METRICS;
	if (path_is(path, "/healthz"))
		return API_RES_HEALTHZ;
	if (path_is(path, "/readyz"))
		return API_RES_READYZ;
	if (path_is(path, "/peers"))
		return API_RES_PEERS;
	if (path_is(path, "/loops"))
		return API_RES_LOOPS;
	if (path_is(path, "/dpdk"))
		return API_RES_DPDK;
	return API_RES_NONE;
}

const struct api_group *
api_group_of(enum api_res res)
{
	size_t i;

	for (i = 0; i < NRF_ARRAY_SIZE(groups); i++)
		if (groups[i].res == res)
			return &groups[i];
	return NULL;
}

const struct api_group *
api_group_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NRF_ARRAY_SIZE(groups); i++)
		if (strcmp(groups[i].name, name) == 0)
			return &groups[i];
	return NULL;
}

const char *
api_allow(enum api_res res)
{
	return api_group_of(res) != NULL ? "GET, HEAD, PUT, PATCH" : "GET, HEAD";
}

bool
api_method_allowed(enum api_res res, const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return true;
	return api_group_of(res) != NULL &&
		(strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0);
}

void
api_media_type(const char *ct, char *out, size_t cap)
{
	size_t n = 0;

	if (cap == 0)
		return;
	if (ct != NULL) {
		while (*ct == ' ' || *ct == '\t')
			ct++;
		for (; *ct != '\0' && *ct != ';' && *ct != ' ' && *ct != '\t' && n + 1 < cap; ct++)
			out[n++] = (char)(*ct >= 'A' && *ct <= 'Z' ? *ct + 32 : *ct);
	}
	out[n] = '\0';
}

bool
api_auth_ok(const char *authorization, const char *token)
{
	size_t tl, al, i;
	unsigned char diff = 0;

	if (token == NULL || token[0] == '\0')
		return true;
	if (authorization == NULL || strncasecmp(authorization, "Bearer ", 7) != 0)
		return false;
	authorization += 7;
	while (*authorization == ' ')
		authorization++;
	al = strlen(authorization);
	while (al > 0 && (authorization[al - 1] == ' ' || authorization[al - 1] == '\t'))
		al--;
	tl = strlen(token);
	/* Time depends on the token's length only, not on where they differ. */
	for (i = 0; i < tl; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < al ? authorization[i] : 0);
	return diff == 0 && al == tl;
}

/* ------------------------------------------------------------------------ */
/* Merge patch (RFC 7396 §2)                                                 */

json_t *
api_merge_patch(const json_t *target, const json_t *patch)
{
	json_t *out;
	const char *key;
	json_t *val;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	if (out == NULL)
		return NULL;
	json_object_foreach((json_t *)(uintptr_t)patch, key, val) {
		if (json_is_null(val)) {
			json_object_del(out, key);
		} else {
			json_t *merged = api_merge_patch(json_object_get(out, key), val);

			if (merged == NULL || json_object_set_new(out, key, merged) != 0) {
				json_decref(out);
				return NULL;
			}
		}
	}
	return out;
}

/* ------------------------------------------------------------------------ */
/* Problems                                                                  */

int
api_doc_apply(const char *running, const struct api_group *g, bool merge,
	const json_t *body, char **out, struct nrf_cfg_problems *probs)
{
	json_t *doc, *parent, *next;
	json_error_t je;

	*out = NULL;
	if (!merge && !json_is_object(body)) {
		api_problem_add(probs, g->pointer, "must be a JSON object");
		return NRF_EINVAL;
	}
	doc = json_loads(running, 0, &je);
	if (!json_is_object(doc)) {
		json_decref(doc);
		api_problem_add(probs, "", "running configuration unreadable: %s", je.text);
		return NRF_EINVAL;
	}
	parent = doc;
	if (g->parent[0] != '\0') {
		parent = json_object_get(doc, g->parent);
		if (!json_is_object(parent)) {
			parent = json_object();
			if (parent == NULL || json_object_set_new(doc, g->parent, parent) != 0) {
				json_decref(doc);
				return NRF_ENOMEM;
			}
		}
	}
	next = merge ? api_merge_patch(json_object_get(parent, g->key), body)
		     : json_deep_copy(body);
	if (next == NULL || json_object_set_new(parent, g->key, next) != 0) {
		json_decref(doc);
		return NRF_ENOMEM;
	}
	*out = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return *out != NULL ? 0 : NRF_ENOMEM;
}

char *
api_problem_json(int status, const char *title, const char *cause, const char *detail,
	const struct nrf_cfg_problems *invalid)
{
	json_t *o = json_object();
	char *text;
	size_t i;

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "title", json_string(title));
	json_object_set_new(o, "status", json_integer(status));
	if (detail != NULL && detail[0] != '\0')
		json_object_set_new(o, "detail", json_string(detail));
	json_object_set_new(o, "cause", json_string(cause));
	if (invalid != NULL && invalid->n > 0) {
		json_t *arr = json_array();

		for (i = 0; i < invalid->n; i++) {
			json_t *p = json_object();

			json_object_set_new(p, "param", json_string(invalid->v[i].pointer));
			json_object_set_new(p, "reason", json_string(invalid->v[i].reason));
			json_array_append_new(arr, p);
		}
		json_object_set_new(o, "invalidParams", arr);
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

/* ------------------------------------------------------------------------ */
/* Atomic file rewrite                                                       */

static int
fail(char *why, size_t cap, const char *what, const char *path)
{
	snprintf(why, cap, "%s %s: %s", what, path, strerror(errno));
	return NRF_EIO;
}

int
api_file_write_atomic(const char *path, const char *data, size_t len, char *why,
	size_t why_cap)
{
	char dir[4096], tmp[4096 + 64];
	const char *base = nrf_path_split(path, dir, sizeof(dir));
	mode_t mode = 0644;
	struct stat st;
	size_t off = 0;
	int fd, dfd, rc;

	if (*base == '\0' || strlen(path) >= sizeof(dir)) {
		errno = EINVAL;
		return fail(why, why_cap, "bad file name", path);
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.nrfwd-tmp", dir, base);
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return fail(why, why_cap, "cannot create", tmp);
	(void)fchmod(fd, mode); /* despite the umask */
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = fail(why, why_cap, "cannot write", tmp);
			goto undo;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0) {
		rc = fail(why, why_cap, "cannot fsync", tmp);
		goto undo;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = fail(why, why_cap, "cannot close", tmp);
		goto undo;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = fail(why, why_cap, "cannot rename over", path);
		goto undo;
	}
	/* The rename itself must survive a crash too. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
undo:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}
