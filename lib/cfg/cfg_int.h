/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_CFG_INT_H
#define NRF_CFG_INT_H

/*
 * Internals shared by the translation units of lib/cfg (not installed, not
 * included by other modules):
 *
 *   cfg_table.c  the field tables: every key, its type, bounds, default and
 *                whether it applies live or at restart (read this first)
 *   cfg_load.c   JSON text -> snapshot: the generic walk of the tables, the
 *                loaders of what a table cannot say, the final pass
 *   cfg_check.c  validation: text rules, status patterns, rules across
 *                fields (identities, sets, timeouts, DPDK, TLS)
 *   cfg_emit.c   snapshot -> JSON text
 *   cfg_diff.c   comparing snapshots: nrf_cfg_equal(), the restart diff
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "nrf_cfg.h"

/* ------------------------------------------------------------------ */
/* Load context (cfg_load.c owns it; cfg_check.c reads the candidate). */

/* Arena chunk: the snapshot's storage (nrf_cfg.priv). */
struct chunk {
	struct chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

/* One errorResponses[] entry as written, before defaults are resolved. */
struct err_entry {
	int cond;
	uint16_t code;
	const char *cause;
	const char *title;
	const char *detail;
	const char *retry_after;
	const char *redirect_url;
};

struct load_ctx {
	struct nrf_cfg *cfg;
	struct chunk *arena;
	struct nrf_cfg_problems *out;
	size_t n_problems;
	bool oom;
	/* inside a value already reported as the wrong type */
	int quiet;
	/* JSON pointer of the value being checked. */
	char path[512];
	size_t path_len;
	/* Peers and sets grow while walking; copied to the arena at the end. */
	struct nrf_cfg_peer *peers;
	size_t n_peers;
	size_t cap_peers;
	bool peer_limit_reported;
	struct nrf_cfg_set *sets;
	size_t n_sets;
	size_t cap_sets;
	size_t cur_set;
	/* Where each stored alias sits in the aliases array, for pointers. */
	size_t alias_index[NRF_CFG_MAX_ALIASES];
	bool err_set[NRF_MODE_COUNT][NRF_COND_COUNT];
	struct err_entry errs[NRF_MODE_COUNT][NRF_COND_COUNT];
};

/* A problem at @p ptr (counted even when the caller keeps no list). */
void cfg_problem_at(struct load_ctx *c, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ */
/* Field tables (cfg_table.c).                                         */

enum ftype {
	F_OBJECT,  /* nested JSON object; .sub walked on base + .off */
	F_STR,     /* const char * */
	F_STATUS,  /* "ENABLED" / "DISABLED" -> bool */
	F_BOOL,    /* true / false -> bool */
	F_U16,     /* integer in .min..max -> uint16_t */
	F_U32,     /* integer in .min..max -> uint32_t */
	F_ENUM,    /* one of .names -> enum (int-sized) */
	F_PATTERN, /* POSIX ERE -> const char * at .off, status set at .off2 */
	F_CUSTOM,  /* .load / .emit / .eq hooks */
};

typedef const char *(str_check_fn)(const char *s);
/* @p j is NULL when the field is absent. */
typedef void (load_fn)(struct load_ctx *c, const json_t *j, void *p, int arg);
typedef json_t *(emit_fn)(const struct nrf_cfg *cfg, const void *p, int arg);
/* True when the values at @p a and @p b (base + off) are the same. */
typedef bool (eq_fn)(const void *a, const void *b);

struct field {
	const char *name;
	enum ftype type;
	size_t off;
	size_t off2;
	bool required;
	long long min;
	long long max;
	long long def;
	const char *def_str; /* NULL: resolved after the walk */
	const char *const *names;
	str_check_fn *check;
	const struct field *sub;
	load_fn *load;
	emit_fn *emit;
	/* F_CUSTOM: compare two values; NULL: compared by nrf_cfg_equal()
	 * itself (arrays that live outside the struct, e.g. peers). A
	 * restart-only F_CUSTOM key needs one. */
	eq_fn *eq;
	int arg;
	/* Live or restart-only. Unset: the enclosing object's. Set on an
	 * object: the object is the unit (compared whole, named once). */
	enum nrf_cfg_apply apply;
	/* F_CUSTOM: the JSON type as docs/config.md writes it, and a valid
	 * value other than the default (JSON text) that tests change it to. */
	const char *jtype;
	const char *example;
};

extern const char *const cfg_status_names[];
extern const char *const cfg_cond_names[];

extern const struct field cfg_root_fields[];
extern const struct field cfg_general_fields[];
extern const struct field cfg_fwd_fields[];
extern const struct field cfg_growth_fields[];
extern const struct field cfg_runtime_fields[];
extern const struct field cfg_peer_fields[];
extern const struct field cfg_set_fields[];
extern const struct field cfg_error_fields[];
extern const struct field cfg_listen_fields[];
extern const struct field cfg_endpoint_fields[];
extern const struct field cfg_dpdk_fields[];

/*
 * The table as a flat list, built once: every key (struct nrf_cfg_key) and
 * every restart unit (an entry that carries NRF_CFG_APPLY_RESTART), with
 * where its containing struct sits in struct nrf_cfg.
 */
struct cfg_unit {
	const struct field *f;
	size_t base_off;     /* offset of the struct holding f in struct nrf_cfg */
	const char *pointer; /* static */
};

size_t cfg_restart_units(const struct cfg_unit **units);

/* ------------------------------------------------------------------ */
/* Hooks of F_CUSTOM entries.                                          */

/* cfg_load.c */
load_fn cfg_load_aliases, cfg_load_fwd_peers, cfg_load_sets, cfg_load_set_hosts,
	cfg_load_errors, cfg_load_listen, cfg_load_local_nrf, cfg_load_port_id;
/* cfg_emit.c */
emit_fn cfg_emit_aliases, cfg_emit_fwd_peers, cfg_emit_sets, cfg_emit_set_hosts,
	cfg_emit_errors, cfg_emit_listen, cfg_emit_local_nrf, cfg_emit_port_id;
/* cfg_diff.c */
eq_fn cfg_eq_aliases, cfg_eq_listen, cfg_eq_local_nrf, cfg_eq_port_id;

/* ------------------------------------------------------------------ */
/* Validation (cfg_check.c).                                           */

/* Text rules of F_STR fields: NULL or the reason. */
str_check_fn cfg_check_host, cfg_check_fqdn, cfg_check_ipv4, cfg_check_ipv6,
	cfg_check_bind_address, cfg_check_api_version, cfg_check_api_prefix,
	cfg_check_nonempty_set_id, cfg_check_header_value, cfg_check_retry_after;

/*
 * "host:port" or "[ipv6]:port". Writes the host span and the port; returns
 * NULL or the reason.
 */
const char *cfg_parse_hostport(const char *s, const char **host, size_t *host_len,
	uint16_t *port);

/*
 * Compile a status pattern (POSIX ERE matched against "100".."599") into
 * @p set. 0, or -1 with the reason in @p why.
 */
int cfg_compile_status_set(const char *pat, struct nrf_cfg_status_set *set, char *why,
	size_t whysz);

/*
 * Rules across fields, on the whole candidate once the walk is over:
 * identities, NRF sets, timeouts, DPDK port, TLS. Problems in this order.
 */
void cfg_check_document(struct load_ctx *c);

#endif /* NRF_CFG_INT_H */
