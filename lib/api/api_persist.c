/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a REST change writes into the configuration file (docs/rest-api.md,
 * "What is written to the file").
 *
 * Two rules, both so that the file stays the operator's:
 *  - nrfwd remembers the bytes of the file as it last loaded or wrote it
 *    (a hash and the length, api_file_mark). When the file on disk is no
 *    longer those bytes, somebody edited it by hand and has not reloaded
 *    it: writing the running configuration over it would silently revert
 *    that edit. The change is refused (409) and nothing is applied.
 *  - The change is applied to the document as it is on disk, not to the
 *    running configuration emitted with every default: a PATCH touches
 *    only the keys it names, a PUT replaces its group with the body as
 *    sent; keys the operator left out stay out, the order of the keys
 *    stays the file's (jansson keeps insertion order). Comments do not
 *    exist in JSON; spacing is rewritten with an indent of 2.
 * With a configuration source (etcd) the file holds runtime only and the
 * same two rules apply to it (decision 0037): the document written is
 * checked with the running shared groups around it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api_int.h"
#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_log.h"

#define PERSIST_MAX (64u * 1024 * 1024)

/* FNV-1a, 64 bits: a change detector, not a security check. */
static uint64_t
text_hash(const char *t, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)t[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

char *
api_file_read(const char *path, size_t *len, int *err)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb;

			cap = cap == 0 ? 65536 : cap * 2;
			if (cap > PERSIST_MAX + 1 || (nb = realloc(buf, cap)) == NULL) {
				free(buf);
				close(fd);
				*err = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

void
api_file_mark_text(struct api_file_mark *m, const char *text, size_t len)
{
	m->set = true;
	m->len = len;
	m->hash = text_hash(text, len);
}

int
api_file_mark_path(struct api_file_mark *m, const char *path)
{
	size_t len;
	int err = 0;
	char *t = api_file_read(path, &len, &err);

	if (t == NULL) {
		/* unreadable: the next change finds out and says why */
		m->set = false;
		return NRF_EIO;
	}
	api_file_mark_text(m, t, len);
	free(t);
	return 0;
}

bool
api_file_mark_same(const struct api_file_mark *m, const char *text, size_t len)
{
	return m->set && m->len == len && m->hash == text_hash(text, len);
}

char *
api_compose_runtime(const char *whole, const char *local, size_t local_len,
	struct nrf_cfg_problems *probs)
{
	json_t *doc = json_loads(whole, 0, NULL), *file, *rt;
	json_error_t je;
	const char *k;
	json_t *v;
	char *out = NULL;
	bool bad = false;

	file = json_loadb(local, local_len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(doc) || !json_is_object(file)) {
		if (!json_is_object(file))
			api_problem_add(probs, "", "the configuration file is not a JSON object: %s",
				file == NULL ? je.text : "another JSON value");
		goto out;
	}
	json_object_foreach(file, k, v) {
		if (strcmp(k, "runtime") == 0)
			continue;
		char ptr[300];

		snprintf(ptr, sizeof(ptr), "/%s", k);
		api_problem_add(probs, ptr, "with a configuration source only runtime belongs in "
			"this file; remove it");
		bad = true;
	}
	if (bad)
		goto out;
	rt = json_object_get(file, "runtime");
	if (rt == NULL)
		(void)json_object_del(doc, "runtime"); /* every runtime default */
	else if (json_object_set(doc, "runtime", rt) != 0)
		goto out;
	out = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(doc);
	json_decref(file);
	return out;
}

/* @p shared with the runtime group of @p whole: how the source puts a
 * stored document together with this instance's runtime. */
static char *
compose_shared(const char *shared, const char *whole)
{
	json_t *doc = json_loads(shared, 0, NULL), *w = json_loads(whole, 0, NULL);
	json_t *rt = json_object_get(w, "runtime");
	char *out = NULL;

	if (json_is_object(doc) && json_object_get(doc, "runtime") == NULL &&
		(rt == NULL || json_object_set(doc, "runtime", rt) == 0))
		out = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	json_decref(w);
	return out;
}

static char *
persist(const char *disk, const struct api_group *g, bool merge, const json_t *body,
	const char *whole, uint64_t generation, size_t *len)
{
	struct nrf_cfg_problems probs = {0};
	char *compact = NULL, *out = NULL, *text, *check = NULL;
	struct nrf_cfg *cfg;
	json_t *doc;
	int err = 0;

	*len = 0;
	if (api_doc_apply(disk, g, merge, body, &compact, &probs) != 0)
		goto out;
	doc = json_loads(compact, 0, NULL);
	if (doc == NULL)
		goto out;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (text == NULL)
		goto out;
	/* What is written must load: otherwise the next start would fail.
	 * A runtime-only file loads with the rest of the running document
	 * around it, as the configuration source puts them together. */
	if (whole != NULL && g->cfg != NRF_CFG_RUNTIME) {
		check = compose_shared(text, whole);
		if (check == NULL) {
			free(text);
			goto out;
		}
	} else if (whole != NULL) {
		check = api_compose_runtime(whole, text, strlen(text), &probs);
		if (check == NULL) {
			free(text);
			goto out;
		}
	}
	cfg = check != NULL ? nrf_cfg_load(check, strlen(check), generation, &probs, &err)
			    : nrf_cfg_load(text, strlen(text), generation, &probs, &err);
	free(check);
	if (cfg == NULL) {
		free(text);
		goto out;
	}
	nrf_cfg_free(cfg);
	*len = strlen(text);
	out = realloc(text, *len + 2);
	if (out == NULL) {
		free(text);
		*len = 0;
		goto out;
	}
	out[(*len)++] = '\n';
	out[*len] = '\0';
out:
	nrf_cfg_problems_fini(&probs);
	free(compact);
	return out;
}

char *
api_persist_doc(const char *disk, const struct api_group *g, bool merge, const json_t *body,
	uint64_t generation, size_t *len)
{
	return persist(disk, g, merge, body, NULL, generation, len);
}

char *
api_persist_shared_doc(const char *stored, const struct api_group *g, bool merge,
	const json_t *body, const char *whole, uint64_t generation, size_t *len)
{
	return persist(stored, g, merge, body, whole, generation, len);
}

char *
api_persist_runtime_doc(const char *disk, const struct api_group *g, bool merge,
	const json_t *body, const char *whole, uint64_t generation, size_t *len)
{
	return persist(disk, g, merge, body, whole, generation, len);
}
