/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TOPO_H
#define NRF_TOPO_H

/**
 * @file
 * A topology: the configurations of every NRF that forward to each other,
 * resolved into one forwarding graph, and two tools on it.
 *
 *  - Trace (nrf_topo_trace()): one request simulated hop by hop with the
 *    data path's own decision code — nrf_via_scan() on the Via built hop by
 *    hop (each hop appends nrf_via_member_format() of its ocnrfHost:ocnrfPort
 *    as one more field line, as lib/rt does), nrf_fwd_classify(),
 *    nrf_fwd_decide(), nrf_fwd_local_action(), nrf_fwd_peer_answer(),
 *    nrf_fwd_peer_needs_body(), nrf_fwd_ledger_fail() and nrf_fwd_final() —
 *    called in the order lib/rt calls them (rt_proxy.c: the local NRF first,
 *    then the candidates one at a time, then the rule). What an NRF's local
 *    NRF answers is assumed from its holdings (nrf_topo_hold()).
 *  - Lint (nrf_topo_lint()): findings with stable codes, severities, files
 *    and JSON pointers: peer entries that name no NRF or that loop prevention
 *    cannot recognise, NRFs listed as their own peer, forwarding cycles and
 *    how they end, growth sets the NRFs disagree about, patterns that match
 *    nothing, identities used twice, paths longer than maxViaMembers.
 *
 * Resolution of a peer entry (struct nrf_topo_edge): the NRF it *reaches* is
 * the one its connect address belongs to — ipv4Address, else ipv6Address,
 * else fqdn (with its port), as lib/rt connects — matched against every
 * NRF's addresses: ocnrfHost:ocnrfPort, its aliases, and its listen
 * addresses other than 0.0.0.0 / ::. Hosts compare case-insensitively with
 * one trailing dot ignored, IPv6 addresses as addresses. A name is assumed
 * to resolve to the NRF that uses it. Whether loop prevention *recognises*
 * the NRF it reaches is decided by the real scan: the member that NRF
 * appends ("2.0 ocnrfHost:ocnrfPort") scanned with the identity database of
 * the NRF holding the entry must set the entry's peer bit.
 *
 * Threads: a topology is used by one thread at a time (a tool). Everything
 * here allocates; nothing is for the request path.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_fwd.h"
#include "nrf_via.h"

#ifdef __cplusplus
extern "C" {
#endif

/** NRFs in one topology. */
#define NRF_TOPO_MAX_NRFS 4096
/** Hops one trace may take (a trace that would take more fails). */
#define NRF_TOPO_MAX_HOPS 65536

struct nrf_topo;

/* ------------------------------------------------------------------------ */
/* Building a topology                                                       */

/** @return an empty topology, or NULL with @p err = NRF_ENOMEM. */
struct nrf_topo *nrf_topo_create(int *err);

/** Free a topology and every configuration it holds. NULL-safe. */
void nrf_topo_free(struct nrf_topo *t);

/**
 * Add one NRF. The topology takes @p cfg (it frees it, also when this
 * fails); @p source (a file name or URL, for findings and --at) is copied.
 * Only before nrf_topo_resolve().
 * @return the NRF's index (0, 1, ... in the order added), or NRF_EINVAL
 *   (NULL argument, or already resolved), NRF_ETOOBIG (more than
 *   NRF_TOPO_MAX_NRFS), NRF_ENOMEM.
 */
int nrf_topo_add(struct nrf_topo *t, struct nrf_cfg *cfg, const char *source);

/**
 * Record a configuration that did not load (@p err from nrf_cfg_load(),
 * every problem in @p problems, may be NULL). It is not an NRF of the
 * topology; lint reports it as finding "config-invalid", one reference per
 * problem. @return 0, NRF_EINVAL, NRF_ENOMEM.
 */
int nrf_topo_add_invalid(struct nrf_topo *t, const char *source, int err,
	const struct nrf_cfg_problems *problems);

/**
 * Build what trace and lint need, once every NRF is added: each NRF's
 * identity database (nrf_fwd_via_db_create()) and forwarding table
 * (nrf_fwd_table_create()), the address index, and every peer entry
 * resolved (struct nrf_topo_edge). Called once.
 * @return 0; NRF_EINVAL (NULL, or called twice); NRF_ENOMEM; or the error
 *   of an NRF whose identities do not compile (NRF_EMATCHER, NRF_EINVAL:
 *   nrfwd would refuse that configuration too).
 */
int nrf_topo_resolve(struct nrf_topo *t);

/** One NRF of a topology. Owned by the topology. */
struct nrf_topo_nrf {
	uint16_t index;
	const char *source;        /**< file name or URL it came from */
	const struct nrf_cfg *cfg; /**< its configuration */
	const char *name;          /**< cfg->general.self_name: what it appends to Via */
};

/** Number of NRFs. */
size_t nrf_topo_count(const struct nrf_topo *t);

/** NRF @p i, or NULL when out of range. */
const struct nrf_topo_nrf *nrf_topo_at(const struct nrf_topo *t, size_t i);

/**
 * A peer entry resolved (after nrf_topo_resolve()). One per entry of every
 * NRF's cfg->peers, in NRF order then peer order.
 */
struct nrf_topo_edge {
	uint16_t from;    /**< the NRF whose configuration holds the entry */
	uint16_t peer;    /**< its index in that NRF's cfg->peers */
	int32_t to;       /**< the NRF its connect address reaches; -1: none
			   *   of the topology (nothing answers there) */
	int32_t named;    /**< an NRF one of its identities names that is not
			   *   @c to (a second NRF); -1 when none */
	bool recognised;  /**< @c to's own Via member, scanned with @c from's
			   *   identity database, sets this peer's bit: loop
			   *   prevention at @c from skips @c to once @c to has
			   *   processed the request. False when @c to is -1. */
	bool active;      /**< its forwarding mode is ENABLED at @c from and
			   *   some operation may be forwarded there */
};

/** Every edge; @p n receives the count. Valid while @p t lives. */
const struct nrf_topo_edge *nrf_topo_edges(const struct nrf_topo *t, size_t *n);

/** The edge of peer @p peer of NRF @p from, or NULL. */
const struct nrf_topo_edge *nrf_topo_peer_edge(const struct nrf_topo *t, size_t from,
	size_t peer);

/**
 * Find an NRF by what an operator types: its ocnrfHost, one of its
 * addresses as host:port (ocnrfHost:ocnrfPort, an alias, a listen address),
 * or its source as given, by base name, or by base name without ".json".
 * @return its index; NRF_ENOENT when none matches; NRF_EEXIST when several
 *   do (say host:port or the file).
 */
int nrf_topo_find(const struct nrf_topo *t, const char *ref);

/* ------------------------------------------------------------------------ */
/* What trace assumes                                                        */

enum nrf_topo_holding {
	NRF_TOPO_NF_TYPE = 0,     /**< an NF type discovery finds (case-insensitive) */
	NRF_TOPO_NF_INSTANCE,     /**< an nfInstanceId profile retrieval finds */
	NRF_TOPO_SUBSCRIPTION,    /**< a subscription id PATCH / DELETE find */
};

/**
 * The local NRF of NRF @p nrf holds @p value. Without holdings a local NRF
 * holds nothing. What it then answers (the model of nrfstub, docs/nrfstub.md):
 *  - NFDiscover: 200 with the held type's instance, or 200 with an empty
 *    "nfInstances"; no target-nf-type in the query: 400;
 *  - NFProfileRetrieval: 200 with the profile, or 404;
 *  - NFStatusSubscribe: 201; update / unsubscribe: 200 / 204, or 404;
 *  - AccessToken: 200; any other request: 200.
 * @return 0, NRF_EINVAL (NULL, @p nrf out of range), NRF_ENOMEM.
 */
int nrf_topo_hold(struct nrf_topo *t, size_t nrf, enum nrf_topo_holding kind,
	const char *value);

/**
 * What NRF @p nrf's local NRF holds of @p kind, in the order given:
 * @p out receives the array (valid until the next nrf_topo_hold()).
 * @return the count.
 */
size_t nrf_topo_holdings(const struct nrf_topo *t, size_t nrf, enum nrf_topo_holding kind,
	const char *const **out);

/**
 * NRF @p nrf is down (its nrfwd does not run): every try to it fails, and
 * health tracking at every NRF holds the peer entries that reach it down
 * (nrf_fwd_decide() puts them after every healthy candidate; they are
 * tried as a last resort, and fail).
 */
void nrf_topo_set_down(struct nrf_topo *t, size_t nrf, bool down);

/** The local NRF of @p nrf is down: its try fails (held down at once). */
void nrf_topo_set_local_down(struct nrf_topo *t, size_t nrf, bool down);

/** True when nrf_topo_set_down() / nrf_topo_set_local_down() said so. */
bool nrf_topo_is_down(const struct nrf_topo *t, size_t nrf);
bool nrf_topo_is_local_down(const struct nrf_topo *t, size_t nrf);

/*
 * The state one nrfwd worker keeps between requests, which changes what it
 * decides: the rotation counter (nrf_fwd_decide()'s @c rotation; one per
 * request whose Via scanned) and the peers health tracking holds down (a
 * try that failed to connect holds its peer down; with nothing listening
 * it stays down). Trace starts from this state and leaves it as the
 * simulated requests would (so successive traces follow successive
 * requests to single-worker nrfwd processes). Starts at zero.
 */
uint32_t nrf_topo_rotation(const struct nrf_topo *t, size_t nrf);
void nrf_topo_set_rotation(struct nrf_topo *t, size_t nrf, uint32_t rotation);
bool nrf_topo_held_down(const struct nrf_topo *t, size_t nrf, size_t peer);
void nrf_topo_set_held_down(struct nrf_topo *t, size_t nrf, size_t peer, bool down);

/* ------------------------------------------------------------------------ */
/* Trace                                                                     */

/** One request, as the client sends it to the first NRF. */
struct nrf_topo_request {
	size_t at;                    /**< the NRF the client sends it to */
	const char *method;           /**< e.g. "GET" */
	const char *path;             /**< :path, query included */
	const struct nrf_slice *via;  /**< the client's Via field lines (may be NULL if 0) */
	size_t n_via;
	int64_t max_forward_hops;     /**< 3gpp-Sbi-Max-Forward-Hops, -1: absent */
};

/** What an answer is. */
enum nrf_topo_kind {
	NRF_TOPO_ANS_NONE = 0, /**< no answer: the NRF is down, or the entry
				*   reaches none of the topology (a failed try) */
	NRF_TOPO_ANS_LOCAL,    /**< a local NRF's answer, relayed */
	NRF_TOPO_ANS_ERROR,    /**< an error condition (errorResponses) */
	NRF_TOPO_ANS_REJECT,   /**< nrfwd's fixed answers: 400 malformed Via,
				*   501 local-only operation and no local NRF */
};

/** The answer one hop gives back. Strings live as long as the trace. */
struct nrf_topo_answer {
	enum nrf_topo_kind kind;
	uint16_t status;
	int32_t origin;          /**< the NRF that made it (whose local NRF
				  *   answered, or that answered itself); -1: NONE */
	int32_t origin_hop;      /**< the hop that made it; -1: NONE */
	enum nrf_cfg_cond cond;  /**< ERROR: the condition */
	enum nrf_cfg_mode mode;  /**< ERROR: whose errorResponses */
	const char *cause;       /**< ProblemDetails cause of ERROR / REJECT
				  *   ("" when none); "" for LOCAL */
	const char *body;        /**< LOCAL: the assumed answer; ERROR /
				  *   REJECT: the ProblemDetails, byte for byte */
	size_t body_len;
};

/** How one try at a candidate ended. */
enum nrf_topo_try_end {
	NRF_TOPO_TRY_FAILED = 0, /**< no answer: its NRF is down, or nothing
				  *   of the topology is there */
	NRF_TOPO_TRY_REROUTED,   /**< answered a reroute status: next one */
	NRF_TOPO_TRY_RELAYED,    /**< its answer goes back */
	NRF_TOPO_TRY_REFUSED,    /**< it claimed absence while the local NRF
				  *   had failed: NRF_Local_Unavailable instead */
};

struct nrf_topo_try {
	uint16_t cand;       /**< index in the hop's plan.cand[] */
	uint16_t peer;       /**< peer index at the hop's NRF */
	bool held_down;      /**< tried as a last resort (plan.cand_down) */
	int32_t to;          /**< the NRF reached, -1: none */
	int32_t hop;         /**< the hop it became, -1: none (failed at once) */
	enum nrf_topo_try_end end;
	uint16_t status;     /**< the status it answered (0 when FAILED) */
};

/** What the local NRF did at one hop. */
enum nrf_topo_local {
	NRF_TOPO_LOCAL_NOT_ASKED = 0, /**< none configured, or not reached */
	NRF_TOPO_LOCAL_ANSWERS,       /**< its answer is relayed */
	NRF_TOPO_LOCAL_ABSENT,        /**< it claimed absence: kept, forwarded */
	NRF_TOPO_LOCAL_FAILED,        /**< down: a failed local try */
};

/** One NRF's handling of the request. */
struct nrf_topo_hop {
	uint16_t nrf;
	int32_t parent;            /**< the hop that forwarded it here; -1: entry */
	uint16_t depth;            /**< 0 at the entry */
	struct nrf_slice *via;     /**< the Via field lines as received */
	size_t n_via;
	int64_t max_forward_hops;  /**< as received; -1 absent */
	int scan_rc;               /**< nrf_via_scan(): 0, or why the Via is
				    *   malformed (the hop answers 400);
				    *   NRF_ECLOSED: the NRF is down (the
				    *   client's own NRF only), no answer */
	struct nrf_via_result scan;
	enum nrf_fwd_op op;
	uint32_t rotation;         /**< passed to nrf_fwd_decide() */
	uint64_t down[NRF_CFG_MAX_PEERS / 64]; /**< held down, passed to it */
	struct nrf_fwd_plan plan;  /**< valid when scan_rc == 0 */
	enum nrf_topo_local local;
	uint16_t local_status;     /**< ANSWERS / ABSENT: its status */
	const char *local_body;    /**< ANSWERS / ABSENT: its body */
	size_t local_body_len;
	struct nrf_topo_try tries[NRF_CFG_MAX_ATTEMPTS];
	uint16_t n_tries;
	struct nrf_fwd_ledger lg;  /**< the ledger when the hop answered */
	struct nrf_topo_answer answer; /**< what it answered back */
	int32_t relayed_hop;       /**< the answer came from this child hop
				    *   (a relay); -1: made here */
};

/** A whole trace. hops[0] is the entry; answer = hops[0].answer. */
struct nrf_topo_hops {
	struct nrf_topo_hop *hops;
	size_t n_hops;
	size_t cap;
	void *priv;                /**< owned storage; do not touch */
};

/**
 * Simulate @p req (see the file comment). Reads and updates the state
 * (rotation counters, held-down peers). @p out is initialised here;
 * finish it with nrf_topo_hops_fini() whatever the result.
 * @return 0; NRF_EINVAL (NULL, not resolved, @c at out of range);
 *   NRF_ETOOBIG (more than NRF_TOPO_MAX_HOPS hops); NRF_ENOMEM.
 */
int nrf_topo_trace(struct nrf_topo *t, const struct nrf_topo_request *req,
	struct nrf_topo_hops *out);

/** Free what a trace holds. NULL-safe; the struct is zeroed. */
void nrf_topo_hops_fini(struct nrf_topo_hops *tr);

/**
 * The Via members an answer carries when it reaches the client of hop
 * @p hop: the NRFs that relayed it, innermost first, each that has
 * viaOnResponses on (nrfwd's own answers carry none of their maker's).
 * Writes up to @p max NRF indices to @p out. @return how many there are.
 */
size_t nrf_topo_answer_via(const struct nrf_topo *t, const struct nrf_topo_hops *tr,
	size_t hop, uint16_t *out, size_t max);

/** "failed", "rerouted", "relayed", "refused". */
const char *nrf_topo_try_end_name(enum nrf_topo_try_end e);

/** "not-asked", "answers", "claims-absence", "down". */
const char *nrf_topo_local_name(enum nrf_topo_local l);

/* ------------------------------------------------------------------------ */
/* Lint                                                                      */

enum nrf_topo_severity {
	NRF_TOPO_INFO = 0,
	NRF_TOPO_WARNING,
	NRF_TOPO_ERROR,
	NRF_TOPO_SEVERITY_COUNT
};

/** "info", "warning", "error". */
const char *nrf_topo_severity_name(enum nrf_topo_severity s);

/** A finding's code: stable, documented (docs/nrfwd-ctl.md). */
struct nrf_topo_code {
	const char *code;                /**< e.g. "peer-unrecognisable" */
	enum nrf_topo_severity severity;
	const char *summary;             /**< one line */
};

/** Every code lint can report; @p n receives the count. Static. */
const struct nrf_topo_code *nrf_topo_codes(size_t *n);

/** Where a finding points: a file (or URL) and a JSON pointer in it. */
struct nrf_topo_ref {
	int32_t nrf;          /**< the NRF, -1 for a configuration that did not load */
	const char *source;   /**< the file or URL */
	char *pointer;        /**< RFC 6901 pointer ("" = the whole document) */
	char *note;           /**< what is there, e.g. a validation reason ("" none) */
};

/** A peer entry a finding is about (for pictures). */
struct nrf_topo_entry {
	uint16_t from;
	uint16_t peer;
};

struct nrf_topo_finding {
	const char *code;                 /**< from nrf_topo_codes() */
	enum nrf_topo_severity severity;
	char *message;                    /**< one line for people */
	struct nrf_topo_ref *refs;
	size_t n_refs;
	uint16_t *path;                   /**< NRFs of a cycle (the first one
					   *   repeated last) or path, in order */
	size_t n_path;
	struct nrf_topo_entry *entries;   /**< peer entries involved */
	size_t n_entries;
};

struct nrf_topo_findings {
	struct nrf_topo_finding *v;   /**< in a stable order: by code, then NRF */
	size_t n;
	size_t cap;
	size_t count[NRF_TOPO_SEVERITY_COUNT];
	size_t longest_path;          /**< NRFs on the longest forwarding path found */
	size_t path_visits;           /**< hops the path search evaluated */
	bool path_search_complete;    /**< false: stopped at its budget */
};

struct nrf_topo_lint_opts {
	/** Hop evaluations the search for long paths may spend (it is
	 *  exponential in the worst case); 0: 50000. */
	uint32_t path_budget;
};

/**
 * Lint a resolved topology. Deterministic: the same topology gives the same
 * findings in the same order. @p opts may be NULL. @p out is initialised
 * here; finish it with nrf_topo_findings_fini() whatever the result.
 * Uses the Via scan and nrf_fwd_decide() with zeroed state (it does not
 * touch the trace state).
 * @return 0, NRF_EINVAL (NULL or not resolved), NRF_ENOMEM.
 */
int nrf_topo_lint(struct nrf_topo *t, const struct nrf_topo_lint_opts *opts,
	struct nrf_topo_findings *out);

/** Free what a lint result holds. NULL-safe; the struct is zeroed. */
void nrf_topo_findings_fini(struct nrf_topo_findings *l);

#ifdef __cplusplus
}
#endif
#endif /* NRF_TOPO_H */
