/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Comparing snapshots: nrf_cfg_equal() (emit -> load round trips, tests)
 * and the restart diff of a live change (nrf_cfg_restart_diff()).
 *
 * Both walk the tables of cfg_table.c: a scalar is compared by its type, an
 * F_CUSTOM key by its .eq hook. The restart diff compares only the restart
 * units the table marks (cfg_restart_units()), so a key is classified where
 * it is declared and nowhere else; lib/rt asks before it publishes, the
 * REST API before it persists.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cfg_int.h"
#include "nrf_cfg.h"

static bool
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool eq_object(const struct field *fields, const void *a, const void *b);

/* The values of @p f in the structs at @p a and @p b. */
static bool
eq_value(const struct field *f, const void *a, const void *b)
{
	const char *pa = (const char *)a + f->off;
	const char *pb = (const char *)b + f->off;

	switch (f->type) {
	case F_OBJECT:
		return eq_object(f->sub, pa, pb);
	case F_PATTERN:
		if (memcmp((const char *)a + f->off2, (const char *)b + f->off2,
			    sizeof(struct nrf_cfg_status_set)) != 0)
			return false;
		/* fall through */
	case F_STR:
		return str_eq(*(const char *const *)pa, *(const char *const *)pb);
	case F_STATUS:
	case F_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case F_U16:
		return *(const uint16_t *)pa == *(const uint16_t *)pb;
	case F_U32:
		return *(const uint32_t *)pa == *(const uint32_t *)pb;
	case F_ENUM:
		return *(const int *)pa == *(const int *)pb;
	case F_CUSTOM:
		return f->eq == NULL || f->eq(pa, pb);
	}
	return true;
}

static bool
eq_object(const struct field *fields, const void *a, const void *b)
{
	for (const struct field *f = fields; f->name != NULL; f++)
		if (!eq_value(f, a, b))
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* .eq hooks of F_CUSTOM keys.                                         */

static bool
hostport_eq(const struct nrf_cfg_hostport *a, const struct nrf_cfg_hostport *b)
{
	return a->port == b->port && str_eq(a->host, b->host);
}

bool
cfg_eq_aliases(const void *a, const void *b)
{
	const struct nrf_cfg_general *ga = a, *gb = b;

	if (ga->n_aliases != gb->n_aliases)
		return false;
	for (size_t i = 0; i < ga->n_aliases; i++)
		if (!hostport_eq(&ga->aliases[i], &gb->aliases[i]))
			return false;
	return true;
}

bool
cfg_eq_listen(const void *a, const void *b)
{
	const struct nrf_cfg_runtime *ra = a, *rb = b;

	if (ra->n_listen != rb->n_listen)
		return false;
	for (size_t i = 0; i < ra->n_listen; i++)
		if (!eq_object(cfg_listen_fields, &ra->listen[i], &rb->listen[i]))
			return false;
	return true;
}

bool
cfg_eq_local_nrf(const void *a, const void *b)
{
	const struct nrf_cfg_endpoint *ea = a, *eb = b;

	if (ea->present != eb->present)
		return false;
	return !ea->present || eq_object(cfg_endpoint_fields, ea, eb);
}

bool
cfg_eq_port_id(const void *a, const void *b)
{
	return *(const int32_t *)a == *(const int32_t *)b;
}

/* ------------------------------------------------------------------ */
/* Whole snapshots.                                                    */

static bool
peer_eq(const struct nrf_cfg_peer *a, const struct nrf_cfg_peer *b)
{
	if (!eq_object(cfg_peer_fields, a, b) || a->index != b->index ||
		a->mode != b->mode || a->set != b->set || a->n_ids != b->n_ids ||
		!str_eq(a->name, b->name) || !str_eq(a->pointer, b->pointer))
		return false;
	for (int i = 0; i < a->n_ids && i < 3; i++)
		if (!hostport_eq(&a->ids[i], &b->ids[i]))
			return false;
	return true;
}

static bool
error_eq(const struct nrf_cfg_error_response *a, const struct nrf_cfg_error_response *b)
{
	return a->status == b->status && a->configured == b->configured &&
		str_eq(a->cause, b->cause) && str_eq(a->title, b->title) &&
		str_eq(a->detail, b->detail) && str_eq(a->retry_after, b->retry_after) &&
		str_eq(a->redirect_url, b->redirect_url);
}

bool
nrf_cfg_equal(const struct nrf_cfg *a, const struct nrf_cfg *b)
{
	if (a == b)
		return true;
	if (a == NULL || b == NULL)
		return false;
	/* every key with a type or an .eq hook: aliases, listen, localNrf,
	 * dpdk.portId included */
	if (!eq_object(cfg_root_fields, a, b))
		return false;

	/* what the final pass derives, and the peer, set and error arrays
	 * (F_CUSTOM keys without .eq: they live outside their struct) */
	if (!str_eq(a->general.self_name, b->general.self_name))
		return false;
	for (int m = 0; m < NRF_MODE_COUNT; m++)
		for (int k = 0; k < NRF_COND_COUNT; k++)
			if (!error_eq(&a->errors[m][k], &b->errors[m][k]))
				return false;

	if (a->n_peers != b->n_peers || a->n_sets != b->n_sets ||
		a->fwd.first_peer != b->fwd.first_peer ||
		a->fwd.n_peers != b->fwd.n_peers ||
		a->growth.first_peer != b->growth.first_peer ||
		a->growth.n_peers != b->growth.n_peers)
		return false;
	for (size_t i = 0; i < a->n_peers; i++)
		if (!peer_eq(&a->peers[i], &b->peers[i]))
			return false;
	for (size_t i = 0; i < a->n_sets; i++)
		if (!str_eq(a->sets[i].nrf_set_id, b->sets[i].nrf_set_id) ||
			a->sets[i].first_peer != b->sets[i].first_peer ||
			a->sets[i].n_peers != b->sets[i].n_peers)
			return false;
	return true;
}

bool
nrf_cfg_dpdk_equal(const struct nrf_cfg_dpdk *a, const struct nrf_cfg_dpdk *b)
{
	return eq_object(cfg_dpdk_fields, a, b);
}

/* ------------------------------------------------------------------ */
/* The restart diff.                                                   */

unsigned int
nrf_cfg_restart_diff(const struct nrf_cfg *a, const struct nrf_cfg *b, const char **ptrs,
	unsigned int max)
{
	const struct cfg_unit *u;
	size_t n_units = cfg_restart_units(&u);
	unsigned int n = 0;

	if (a == NULL || b == NULL)
		return 0;
	for (size_t i = 0; i < n_units; i++) {
		if (eq_value(u[i].f, (const char *)a + u[i].base_off,
			    (const char *)b + u[i].base_off))
			continue;
		if (ptrs != NULL && n < max)
			ptrs[n] = u[i].pointer;
		n++;
	}
	return n;
}
