/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Emitting: a snapshot -> JSON text with every default filled in.
 *
 * The walk reads the tables of cfg_table.c, so the key order of the text is
 * the order of the tables (jansson keeps insertion order) and loading the
 * text gives an equal snapshot. What a table cannot say is in the F_CUSTOM
 * emitters below.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cfg_int.h"
#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_err.h"

static void
set_err(int *err, int v)
{
	if (err != NULL)
		*err = v;
}

static json_t *emit_object(const struct nrf_cfg *cfg, const struct field *fields,
	const void *base);

static json_t *
emit_value(const struct nrf_cfg *cfg, const struct field *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	int v;

	switch (f->type) {
	case F_OBJECT:
		return emit_object(cfg, f->sub, p);
	case F_STR:
	case F_PATTERN:
		return json_string(*(const char *const *)p);
	case F_STATUS:
		return json_string(cfg_status_names[*(const bool *)p ? 1 : 0]);
	case F_BOOL:
		return json_boolean(*(const bool *)p);
	case F_U16:
		return json_integer(*(const uint16_t *)p);
	case F_U32:
		return json_integer(*(const uint32_t *)p);
	case F_ENUM:
		v = *(const int *)p;
		for (int i = 0; f->names[i] != NULL; i++)
			if (i == v)
				return json_string(f->names[i]);
		return NULL;
	case F_CUSTOM:
		return f->emit(cfg, p, f->arg);
	}
	return NULL;
}

/* jansson keeps insertion order, so the table order is the key order. */
static json_t *
emit_object(const struct nrf_cfg *cfg, const struct field *fields, const void *base)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	for (const struct field *f = fields; f->name != NULL; f++) {
		if (json_object_set_new(o, f->name, emit_value(cfg, f, base)) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *
emit_peer_range(const struct nrf_cfg *cfg, size_t first, size_t n)
{
	json_t *a = json_array();

	for (size_t i = first; a != NULL && i < first + n; i++) {
		if (json_array_append_new(a, emit_object(cfg, cfg_peer_fields,
				&cfg->peers[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
cfg_emit_fwd_peers(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_forwarding *fwd = p;

	(void)arg;
	return emit_peer_range(cfg, fwd->first_peer, fwd->n_peers);
}

json_t *
cfg_emit_set_hosts(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_set *s = p;

	(void)arg;
	return emit_peer_range(cfg, s->first_peer, s->n_peers);
}

json_t *
cfg_emit_sets(const struct nrf_cfg *cfg, const void *p, int arg)
{
	json_t *a = json_array();

	(void)p;
	(void)arg;
	for (size_t i = 0; a != NULL && i < cfg->n_sets; i++) {
		if (json_array_append_new(a, emit_object(cfg, cfg_set_fields,
				&cfg->sets[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * Only configured responses are written: the defaults stay defaults, so a
 * reloaded document keeps `configured` as it was.
 */
json_t *
cfg_emit_errors(const struct nrf_cfg *cfg, const void *p, int mode)
{
	json_t *a = json_array();

	(void)p;
	for (int k = 0; a != NULL && k < NRF_COND_COUNT; k++) {
		const struct nrf_cfg_error_response *r = &cfg->errors[mode][k];
		struct err_entry e = {k, r->status, r->cause, r->title, r->detail,
			r->retry_after, r->redirect_url};

		if (!r->configured)
			continue;
		if (json_array_append_new(a, emit_object(cfg, cfg_error_fields, &e)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *
emit_hostport(const struct nrf_cfg_hostport *hp)
{
	if (strchr(hp->host, ':') != NULL)
		return json_sprintf("[%s]:%u", hp->host, hp->port);
	return json_sprintf("%s:%u", hp->host, hp->port);
}

json_t *
cfg_emit_aliases(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_general *g = p;
	json_t *a = json_array();

	(void)cfg;
	(void)arg;
	for (size_t i = 0; a != NULL && i < g->n_aliases; i++) {
		if (json_array_append_new(a, emit_hostport(&g->aliases[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
cfg_emit_listen(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_runtime *rt = p;
	json_t *a = json_array();

	(void)arg;
	for (size_t i = 0; a != NULL && i < rt->n_listen; i++) {
		if (json_array_append_new(a, emit_object(cfg, cfg_listen_fields,
				&rt->listen[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
cfg_emit_port_id(const struct nrf_cfg *cfg, const void *p, int arg)
{
	int32_t id = *(const int32_t *)p;

	(void)cfg;
	(void)arg;
	return id < 0 ? json_null() : json_integer(id);
}

json_t *
cfg_emit_local_nrf(const struct nrf_cfg *cfg, const void *p, int arg)
{
	const struct nrf_cfg_endpoint *ep = p;

	(void)arg;
	if (!ep->present)
		return json_null();
	return emit_object(cfg, cfg_endpoint_fields, ep);
}

char *
nrf_cfg_emit(const struct nrf_cfg *cfg, enum nrf_cfg_group group, int indent,
	int *err)
{
	const struct field *fields;
	const void *base;
	size_t flags, n;
	json_t *j;
	char *out;

	if (cfg == NULL) {
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	switch (group) {
	case NRF_CFG_ALL:
		fields = cfg_root_fields;
		base = cfg;
		break;
	case NRF_CFG_GENERAL:
		fields = cfg_general_fields;
		base = &cfg->general;
		break;
	case NRF_CFG_FORWARDING:
		fields = cfg_fwd_fields;
		base = &cfg->fwd;
		break;
	case NRF_CFG_GROWTH:
		fields = cfg_growth_fields;
		base = &cfg->growth;
		break;
	case NRF_CFG_RUNTIME:
		fields = cfg_runtime_fields;
		base = &cfg->rt;
		break;
	default:
		set_err(err, NRF_EINVAL);
		return NULL;
	}
	flags = indent > 0 ? JSON_INDENT(NRF_MIN(indent, 31)) : JSON_COMPACT;
	j = emit_object(cfg, fields, base);
	if (j == NULL) {
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	/* dump into our own malloc'd buffer: the caller free()s it */
	n = json_dumpb(j, NULL, 0, flags);
	out = n != 0 ? malloc(n + 1) : NULL;
	if (out == NULL || json_dumpb(j, out, n, flags) != n) {
		free(out);
		json_decref(j);
		set_err(err, NRF_ENOMEM);
		return NULL;
	}
	out[n] = '\0';
	json_decref(j);
	set_err(err, 0);
	return out;
}
