/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Splitting and joining the two halves of a fleet instance's document.
 * The split is by top-level member: what every instance of one NRF must
 * agree on is in the store, what is bound to a machine (addresses, ports,
 * files, DPDK) is in the local file. Keeping each group wholly on one side
 * means a pointer in a problem ("/forwardingOptions/maxViaMembers") says
 * at once where to fix it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_cfgsrc.h"

static const char *const shared_groups[] = {"generalOptions", "forwardingOptions",
	"nrfGrowth"};

static void
problem(struct nrf_cfg_problems *probs, const char *pointer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
problem(struct nrf_cfg_problems *probs, const char *pointer, const char *fmt, ...)
{
	struct nrf_cfg_problem *p;
	va_list ap;

	if (probs == NULL)
		return;
	if (probs->n == probs->cap) {
		size_t nc = probs->cap == 0 ? 4 : probs->cap * 2;
		struct nrf_cfg_problem *v = realloc(probs->v, nc * sizeof(*v));

		if (v == NULL)
			return;
		probs->v = v;
		probs->cap = nc;
	}
	p = &probs->v[probs->n++];
	snprintf(p->pointer, sizeof(p->pointer), "%s", pointer);
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

static json_t *
load_object(const char *text, size_t len, struct nrf_cfg_problems *probs, const char *what)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);

	if (doc == NULL) {
		problem(probs, "", "%s is not JSON: line %d, column %d: %s", what, je.line,
			je.column, je.text);
		return NULL;
	}
	if (!json_is_object(doc)) {
		problem(probs, "", "%s must be a JSON object", what);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

char *
nrf_cfgsrc_local_runtime(const char *text, size_t len, struct nrf_cfg_problems *problems,
	int *err)
{
	json_t *doc = load_object(text, len, problems, "the configuration file");
	json_t *rt;
	bool bad = false;
	size_t i;
	char *out;

	if (doc == NULL) {
		*err = NRF_EPARSE;
		return NULL;
	}
	for (i = 0; i < NRF_ARRAY_SIZE(shared_groups); i++) {
		char ptr[64];

		if (json_object_get(doc, shared_groups[i]) == NULL)
			continue;
		snprintf(ptr, sizeof(ptr), "/%s", shared_groups[i]);
		problem(problems, ptr, "shared by the fleet: with --config-etcd it is read "
			"from etcd, remove it from this file");
		bad = true;
	}
	if (bad) {
		json_decref(doc);
		*err = NRF_ECONFIG;
		return NULL;
	}
	rt = json_object_get(doc, "runtime");
	out = rt != NULL ? json_dumps(rt, JSON_COMPACT | JSON_PRESERVE_ORDER |
		JSON_ENCODE_ANY) : strdup("{}");
	json_decref(doc);
	*err = out != NULL ? 0 : NRF_ENOMEM;
	return out;
}

char *
nrf_cfgsrc_compose(const char *shared, size_t len, const char *runtime_json,
	struct nrf_cfg_problems *problems, int *err)
{
	json_t *doc = load_object(shared, len, problems, "the shared document");
	json_t *rt;
	char *out;

	if (doc == NULL) {
		*err = NRF_EPARSE;
		return NULL;
	}
	if (json_object_get(doc, "runtime") != NULL) {
		problem(problems, "/runtime", "per instance: it belongs in each instance's "
			"local file, not in the shared document");
		json_decref(doc);
		*err = NRF_ECONFIG;
		return NULL;
	}
	rt = json_loads(runtime_json, JSON_DECODE_ANY, NULL);
	if (rt == NULL || json_object_set_new(doc, "runtime", rt) != 0) {
		json_decref(doc);
		*err = NRF_ENOMEM;
		return NULL;
	}
	out = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	*err = out != NULL ? 0 : NRF_ENOMEM;
	return out;
}

char *
nrf_cfgsrc_shared_of(const struct nrf_cfg *cfg, int *err)
{
	char *all = nrf_cfg_emit(cfg, NRF_CFG_ALL, 0, err);
	json_t *doc;
	char *out;

	if (all == NULL)
		return NULL;
	doc = json_loads(all, 0, NULL);
	free(all);
	if (doc == NULL) {
		*err = NRF_ENOMEM;
		return NULL;
	}
	json_object_del(doc, "runtime");
	out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	*err = out != NULL ? 0 : NRF_ENOMEM;
	return out;
}

char *
nrf_cfgsrc_instances_prefix(const char *key)
{
	const char *slash = key != NULL ? strrchr(key, '/') : NULL;
	char *out;

	if (slash == NULL || slash[1] == '\0')
		return NULL;
	if (asprintf(&out, "%.*sinstances/", (int)(slash - key + 1), key) < 0)
		return NULL;
	return out;
}
