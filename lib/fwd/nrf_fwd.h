/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_FWD_H
#define NRF_FWD_H

/**
 * @file
 * The forwarding decision: operation classes (docs/behaviour.md §3 step 4), the verdict
 * for one request from its Via scan (steps 3 and 6), the handling of the
 * local NRF's answer (step 5) and of a peer's answer (step 7), and the
 * ProblemDetails bodies of the error conditions.
 *
 * Build side (control thread): nrf_fwd_table_create() derives from a
 * configuration snapshot everything the request path needs — candidate
 * groups in priority order, pre-rendered error bodies — and
 * nrf_fwd_via_db_create() compiles the snapshot's identities for via.
 * Request side (any worker, concurrently): nrf_fwd_classify(),
 * nrf_fwd_decide(), nrf_fwd_local_action(), nrf_fwd_peer_action() read the
 * immutable table; they never allocate, lock, block or log.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_cfg.h"
#include "nrf_common.h"
#include "nrf_via.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Operations                                                                */

enum nrf_fwd_op {
	NRF_OP_OTHER = 0,               /**< not forwardable: local only */
	NRF_OP_NF_DISCOVER,             /**< GET /nnrf-disc/v1/nf-instances */
	NRF_OP_NF_PROFILE_RETRIEVAL,    /**< GET /nnrf-nfm/v1/nf-instances/{id} */
	NRF_OP_NF_STATUS_SUBSCRIBE,     /**< POST /nnrf-nfm/v1/subscriptions */
	NRF_OP_NF_STATUS_SUBSCRIBE_UPDATE, /**< PATCH /nnrf-nfm/v1/subscriptions/{id} */
	NRF_OP_NF_STATUS_UNSUBSCRIBE,   /**< DELETE /nnrf-nfm/v1/subscriptions/{id} */
	NRF_OP_ACCESS_TOKEN,            /**< POST /oauth2/token */
	NRF_OP_COUNT
};

/**
 * Classify a request. @p path is the :path pseudo-header (a query after '?'
 * is ignored); @p api_prefix ("" or "/prefix") is stripped first when the
 * path starts with it at a segment boundary. Method is case-sensitive as in
 * HTTP. A trailing '/' after the resource is tolerated; an empty {id} is not.
 * Any thread; no allocation.
 */
enum nrf_fwd_op nrf_fwd_classify(struct nrf_slice method, struct nrf_slice path,
	struct nrf_slice api_prefix);

/** "NFDiscover", "NFProfileRetrieval", …, "other". Never NULL. */
const char *nrf_fwd_op_name(enum nrf_fwd_op op);

/**
 * True when @p op may be forwarded under @p cfg: a forwardable operation
 * whose status switch (discoveryStatus, …) is ENABLED, and at least one
 * forwarding mode ENABLED.
 */
bool nrf_fwd_op_enabled(const struct nrf_cfg *cfg, enum nrf_fwd_op op);

/* ------------------------------------------------------------------------ */
/* Build side                                                                */

/**
 * A pre-rendered error response (ProblemDetails, application/problem+json).
 * Strings are owned by the table.
 */
struct nrf_fwd_problem {
	uint16_t status;
	const char *body;         /**< JSON text */
	size_t body_len;
	const char *retry_after;  /**< "" = no Retry-After header */
	const char *location;     /**< "" = no Location header (set for 3xx only) */
};

struct nrf_fwd_table;

/**
 * Derive the request-path table from a snapshot. The table keeps a pointer
 * to @p cfg, which must outlive it. Control thread.
 * @return NULL with @p err = NRF_ENOMEM or NRF_EINVAL (cfg NULL).
 */
struct nrf_fwd_table *nrf_fwd_table_create(const struct nrf_cfg *cfg, int *err);

/** Free a table. NULL-safe. */
void nrf_fwd_table_free(struct nrf_fwd_table *t);

/** The snapshot the table was built from. */
const struct nrf_cfg *nrf_fwd_table_cfg(const struct nrf_fwd_table *t);

/** Pre-rendered response for @p cond in the error group of @p mode. */
const struct nrf_fwd_problem *nrf_fwd_table_problem(const struct nrf_fwd_table *t,
	enum nrf_cfg_mode mode, enum nrf_cfg_cond cond);

/**
 * Fill @p out with every identity of @p cfg for nrf_via_db_create(): own
 * host:port and aliases as NRF_VIA_SELF, each peer's fqdn:port, ipv4:port
 * and [ipv6]:port as NRF_VIA_PEER with the peer's index. Strings point into
 * @p cfg.
 * @return the number written, or NRF_ETOOBIG when more than @p max.
 */
int nrf_fwd_identities(const struct nrf_cfg *cfg, struct nrf_via_identity *out,
	size_t max);

/** nrf_fwd_identities() + nrf_via_db_create(). Control thread. */
struct nrf_via_db *nrf_fwd_via_db_create(const struct nrf_cfg *cfg, int *err);

/* ------------------------------------------------------------------------ */
/* Request side                                                              */

enum nrf_fwd_verdict {
	/** Own identity in Via: answer NRF_Forwarding_Loop_Detection. */
	NRF_FWD_LOOP_DETECTED = 0,
	/** More Via members than maxViaMembers: NRF_Forwarding_Hop_Limit. */
	NRF_FWD_HOP_LIMIT,
	/** Not forwardable (operation or switch): local NRF only. */
	NRF_FWD_LOCAL_ONLY,
	/**
	 * Forwardable: local NRF first when there is one, then plan.cand[] in
	 * order. With plan.n_cand == 0, plan.error says what to answer when
	 * the local NRF does not.
	 */
	NRF_FWD_FORWARD,
};

/** "loop-detected", "hop-limit", "local-only", "forward" (the names
 *  nrfwd-ctl explain and trace print); "unknown" for anything else. */
const char *nrf_fwd_verdict_name(enum nrf_fwd_verdict v);

enum nrf_fwd_skip_reason {
	NRF_FWD_SKIP_VIA_HOST = 0, /**< the peer's identity is in Via */
	NRF_FWD_SKIP_VIA_SET,      /**< another host of its set is in Via (scope SET) */
	NRF_FWD_SKIP_DOWN,         /**< held down by health tracking, and not
				    *   needed as a last resort (see decide) */
};

/** "via-host", "via-set", "down". */
const char *nrf_fwd_skip_reason_name(enum nrf_fwd_skip_reason r);

#define NRF_FWD_MAX_SKIPS 32

struct nrf_fwd_skip {
	uint16_t peer;
	uint8_t reason; /**< enum nrf_fwd_skip_reason */
};

/**
 * The decision for one request. Fixed size, no pointers into the table, so
 * it can live in a stream for the request's lifetime.
 */
struct nrf_fwd_plan {
	enum nrf_fwd_verdict verdict;
	enum nrf_fwd_op op;
	/** Error to answer for LOOP_DETECTED / HOP_LIMIT, and for FORWARD when
	 *  no candidate answers (LOOP_PREVENTION if every candidate was
	 *  skipped by Via, else NOT_REACHABLE). */
	enum nrf_cfg_cond error;
	enum nrf_cfg_mode error_mode;  /**< whose errorResponses apply */
	uint16_t n_cand;               /**< <= maxForwardAttempts */
	uint16_t cand[NRF_CFG_MAX_ATTEMPTS]; /**< peer indices, try in order */
	uint16_t cand_down;            /**< bit i: cand[i] is held down, tried
					*   anyway as a last resort */
	uint16_t cand_covered;         /**< bit i: cand[i] is a host of a growth
					*   set another host of which is in Via
					*   (scope HOST): its set has already
					*   answered, so its failure leaves no
					*   hole (nrf_fwd_ledger_fail()) */
	uint16_t n_skip;               /**< recorded skips (<= NRF_FWD_MAX_SKIPS) */
	struct nrf_fwd_skip skip[NRF_FWD_MAX_SKIPS];
	uint32_t n_skip_via;           /**< all loop-prevention skips, incl. unrecorded */
	uint32_t n_skip_down;          /**< all health skips, incl. unrecorded */
	uint32_t via_members;          /**< Via members of the request (access log) */
};

/**
 * Decide for one request (docs/behaviour.md §3 steps 3, 4 and 6).
 *
 * Order: own identity in Via → LOOP_DETECTED; members > maxViaMembers →
 * HOP_LIMIT; operation not enabled → LOCAL_ONLY; else FORWARD with the
 * candidates: growth sets (if growth is enabled) in document order, each by
 * ascending priority, then forwarding peers (if enabled) by ascending
 * priority; peers of equal priority in one list rotated by @p rotation.
 * Peers whose identity is in Via are skipped (with SET scope, every host of
 * a set one of whose hosts is in Via). Peers marked in @p down are a hint,
 * not a verdict: they go after every healthy candidate, as a last resort
 * (their bit set in cand_down), and are recorded as NRF_FWD_SKIP_DOWN only
 * when maxForwardAttempts leaves no room for them. The walk stops after
 * maxForwardAttempts healthy candidates; skips are recorded only up to that
 * point. plan.error is the answer when no candidate is left at all:
 * LOOP_PREVENTION when every one was skipped by Via, else NOT_REACHABLE
 * (the request path uses nrf_fwd_final(), which also knows what failed).
 *
 * @param via       scan result of the request's Via lines.
 * @param op        from nrf_fwd_classify().
 * @param rotation  per-request counter (e.g. a per-core request count).
 * @param down      bitset over peer indices (NULL: none down).
 * @param plan      fully written.
 * @return 0, or NRF_EINVAL on NULL arguments.
 */
int nrf_fwd_decide(const struct nrf_fwd_table *t, const struct nrf_via_result *via,
	enum nrf_fwd_op op, uint32_t rotation, const uint64_t *down,
	struct nrf_fwd_plan *plan);

/** What to do with an answer. */
enum nrf_fwd_action {
	NRF_FWD_RELAY = 0,  /**< relay this answer to the client */
	NRF_FWD_NEXT,       /**< forward / try the next candidate */
};

/**
 * The local NRF answered @p status with @p body (may be partial or NULL; only
 * a 200 NFDiscover body is looked at): NEXT when it matches
 * forwardingTriggers (status pattern, or emptyDiscoveryResult and a 200
 * NFDiscover answer whose top-level "nfInstances" is an empty array) and
 * @p op is enabled; RELAY otherwise. No allocation.
 */
enum nrf_fwd_action nrf_fwd_local_action(const struct nrf_cfg *cfg,
	enum nrf_fwd_op op, int status, const char *body, size_t body_len);

/**
 * A peer answered @p status: NEXT when it matches
 * nrfRerouteOnResponseHttpStatusCodes (a 508 is always relayed), else RELAY.
 * The status-only part of nrf_fwd_peer_answer().
 */
enum nrf_fwd_action nrf_fwd_peer_action(const struct nrf_cfg *cfg, int status);

/* ------------------------------------------------------------------------ */
/* The answer rule: failures are never absence (docs/failures.md)           */

/** How the local NRF's try of one request ended. */
enum nrf_fwd_local {
	NRF_FWD_LOCAL_NONE = 0, /**< no local NRF configured */
	NRF_FWD_LOCAL_PENDING,  /**< being asked, no outcome yet */
	NRF_FWD_LOCAL_ABSENT,   /**< answered with a forwarding trigger (404, an
				 *   empty discovery result, …); answer kept */
	NRF_FWD_LOCAL_FAILED,   /**< no answer: refused, reset, connection lost,
				 *   per-try timeout, held down, not tried */
};

/**
 * What happened to one request so far: the input of the answer rule. Kept
 * by lib/rt per request; zero-initialise, then set @c local before the
 * first try.
 */
struct nrf_fwd_ledger {
	uint8_t local;      /**< enum nrf_fwd_local */
	bool hop_limit;     /**< a candidate was left, but
			     *   3gpp-Sbi-Max-Forward-Hops was 0 */
	uint16_t tried;     /**< candidate (peer) tries started */
	uint16_t failed;    /**< of those: no usable answer (connect, reset,
			     *   connection lost, timeout, reroute status, or
			     *   cut short by the request timeout) */
	uint16_t uncovered; /**< of those: candidates whose data nobody else
			     *   has given (not covered, see cand_covered) */
};

/**
 * Book a failed try into @p lg: @p cand is the index into plan.cand[] of
 * the candidate whose try failed, or -1 for the local NRF. Request side.
 */
void nrf_fwd_ledger_fail(const struct nrf_fwd_plan *plan, struct nrf_fwd_ledger *lg,
	int cand);

/** What to do next with a request (the rule's verdict). */
enum nrf_fwd_next {
	NRF_FWD_DO_RELAY = 0, /**< relay the answer at hand */
	NRF_FWD_DO_LOCAL,     /**< relay the kept local answer */
	NRF_FWD_DO_NEXT,      /**< try the next candidate */
	NRF_FWD_DO_ERROR,     /**< answer the error condition given */
};

/**
 * True when @p status (and, for a 200 NFDiscover answer, @p body) claims
 * absence under @p cfg: it matches forwardingTriggers (the status
 * pattern, or emptyDiscoveryResult and an empty "nfInstances"). Whether
 * the operation is enabled for forwarding does not matter here.
 */
bool nrf_fwd_claims_absence(const struct nrf_cfg *cfg, enum nrf_fwd_op op, int status,
	const char *body, size_t body_len);

/**
 * True when nrf_fwd_peer_answer() for this @p status must see the whole
 * body before it can decide (a 200 NFDiscover answer after a failed local
 * try, with emptyDiscoveryResult on).
 */
bool nrf_fwd_peer_needs_body(const struct nrf_cfg *cfg, const struct nrf_fwd_plan *plan,
	const struct nrf_fwd_ledger *lg, int status);

/**
 * A peer answered (headers, and the body when nrf_fwd_peer_needs_body()):
 *  - 508: RELAY (a loop verdict of the peer is never rerouted);
 *  - a reroute status: NEXT (the caller counts the try as failed);
 *  - an answer claiming absence while the local NRF failed: ERROR with
 *    NRF_COND_LOCAL_UNAVAILABLE (the absence is not the whole truth);
 *  - anything else: RELAY.
 * @p cond is written for ERROR only.
 */
enum nrf_fwd_next nrf_fwd_peer_answer(const struct nrf_cfg *cfg,
	const struct nrf_fwd_plan *plan, const struct nrf_fwd_ledger *lg, int status,
	const char *body, size_t body_len, enum nrf_cfg_cond *cond);

/**
 * Nothing more will be tried (candidates exhausted, hop limit reached, or
 * the request timeout): the answer, from @p plan and @p lg.
 *  - local ABSENT and no candidate try failed but those of covered
 *    candidates (plan.cand_covered), no held-down peer left untried:
 *    LOCAL (every NRF that should have been asked was asked, or has
 *    already processed the request);
 *  - local FAILED: ERROR NRF_COND_LOCAL_UNAVAILABLE;
 *  - a candidate try failed: ERROR NRF_COND_NOT_REACHABLE;
 *  - the hop limit stopped forwarding: ERROR NRF_COND_HOP_LIMIT;
 *  - every candidate skipped by loop prevention and nothing failed:
 *    ERROR NRF_COND_LOOP_PREVENTION (local ABSENT: LOCAL, above);
 *  - otherwise ERROR NRF_COND_NOT_REACHABLE.
 * @p cond is written for ERROR only. Never RELAY or NEXT.
 */
enum nrf_fwd_next nrf_fwd_final(const struct nrf_fwd_plan *plan,
	const struct nrf_fwd_ledger *lg, enum nrf_cfg_cond *cond);

/**
 * True when @p body (JSON) has a top-level "nfInstances" member that is an
 * empty array. Tolerates whitespace and key order; bounded by @p len.
 */
bool nrf_fwd_discovery_empty(const char *body, size_t len);

/**
 * Render a ProblemDetails body (TS 29.571):
 * {"title":…,"status":…,"detail":…,"cause":…} — detail omitted when empty,
 * strings JSON-escaped. For answers without a pre-rendered body (400
 * INVALID_MSG_FORMAT, 501, …). No allocation.
 * @return the length written (NUL-terminated), or NRF_ETOOBIG.
 */
int nrf_fwd_problem_render(char *buf, size_t cap, int status, const char *title,
	const char *cause, const char *detail);

/* ------------------------------------------------------------------------ */
/* Links that point past nrfwd (docs/decisions/0013-links-past-nrfwd.md)     */

/** Upstream identities a link origin may name (fqdn, IPv4, IPv6). */
#define NRF_FWD_LINKS_MAX_FROM 3

/**
 * Longest decoded start of a JSON string that is looked at for a match:
 * "https://" + "[" + 253-byte host + "]" + ":65535" + a 255-byte apiPrefix
 * and the character after it fit. A string whose origin does not end
 * inside it is left alone.
 */
#define NRF_FWD_LINKS_WINDOW 640

/**
 * One apiRoot of an upstream: @c scheme :// @c host [: @c port]
 * @c api_prefix. Strings are borrowed (a configuration snapshot's).
 */
struct nrf_fwd_link_origin {
	enum nrf_cfg_scheme scheme;
	const char *host;        /**< fqdn, IPv4 text, or IPv6 text without brackets */
	uint16_t port;
	const char *api_prefix;  /**< "" or "/prefix" without trailing '/' */
};

/**
 * What to rewrite in one answer: links whose origin is one of @c from (the
 * upstream that answered) get that origin replaced by
 * @c to_scheme "://" @c to_authority (the apiRoot the client used). Fill
 * @c from with nrf_fwd_links_peer() or nrf_fwd_links_local(), then set the
 * @c to_* slices (borrowed: the client request's :scheme and :authority).
 */
struct nrf_fwd_links {
	struct nrf_fwd_link_origin from[NRF_FWD_LINKS_MAX_FROM];
	uint8_t n_from;
	struct nrf_slice to_scheme;    /**< "http" or "https" */
	struct nrf_slice to_authority; /**< host[:port], as the client sent it */
};

/**
 * Set @p l->from to the identities of peer @p p: fqdn, ipv4Address and
 * ipv6Address (those configured), each with the peer's scheme, port and
 * apiPrefix. @p l->to_* are left as they are. Any thread; no allocation.
 */
void nrf_fwd_links_peer(struct nrf_fwd_links *l, const struct nrf_cfg_peer *p);

/**
 * Set @p l->from to the local NRF @p ep: its address, scheme and port, no
 * apiPrefix (requests to it keep their path). n_from is 0 when @p ep is
 * not present. Any thread; no allocation.
 */
void nrf_fwd_links_local(struct nrf_fwd_links *l, const struct nrf_cfg_endpoint *ep);

/**
 * True for a content-type whose body nrf_fwd_links_json() applies to:
 * application/json and any application/…+json (problem+json, hal+json),
 * case-insensitive, parameters after ';' ignored.
 */
bool nrf_fwd_links_json_type(struct nrf_slice content_type);

/**
 * Rewrite one URI (the value of a Location header).
 *
 * The URI matches an origin of @p l when its scheme equals the origin's
 * (case-insensitive), its authority has no userinfo, its host equals the
 * origin's host (case-insensitive, one trailing dot ignored; an IPv6
 * literal in brackets compared as text), its port equals the origin's (an
 * absent or empty port is 80 for http and 443 for https), and its path
 * starts with the origin's apiPrefix followed by '/', '?', '#' or the end.
 * That whole origin (scheme, authority, apiPrefix) is then replaced by the
 * client-facing prefix; the rest is copied unchanged. First matching
 * origin wins (they never differ in what they replace).
 *
 * @param l       origins and the client-facing prefix.
 * @param in      the URI, @p len bytes (need not be NUL-terminated).
 * @param out     receives the rewritten URI (not NUL-terminated) when the
 *                result is 1; not written otherwise, except with
 *                NRF_ETOOBIG (contents unspecified then).
 * @param cap     bytes available at @p out.
 * @param out_len receives the rewritten length when the result is 1.
 * @return 1 rewritten; 0 no origin matched (nothing written: use @p in as
 *   it is); NRF_ETOOBIG the result does not fit in @p cap; NRF_EINVAL a
 *   NULL argument, or a client-facing prefix that is empty or holds a
 *   byte outside 0x21..0x7e, '"' or '\\' (it must be usable as a header
 *   value and inside a JSON string without escaping).
 * Any thread; no allocation, no I/O.
 */
int nrf_fwd_links_uri(const struct nrf_fwd_links *l, const char *in, size_t len,
	char *out, size_t cap, size_t *out_len);

/**
 * Rewrite the links of a JSON body: the value of every member named
 * "href", at any depth (HAL `_links`, `items` arrays, nested objects),
 * that is a string matching an origin of @p l as in nrf_fwd_links_uri().
 *
 * Escapes are decoded before matching (`http:\/\/10.0.0.3:8080\/…` and
 * `\u0068ttp` match as what they mean; a member name written with escapes
 * counts too). Only the origin is replaced; the rest of the string is
 * copied byte for byte, escapes included, so the result is valid JSON
 * when the input is. A string whose origin holds an escape that decodes
 * to a non-ASCII character, or does not end within
 * NRF_FWD_LINKS_WINDOW decoded bytes, is left as it is. Other members
 * (nfInstanceUri, fqdn, ipEndPoints, callback URIs, …) are never touched.
 * Input that is not JSON is scanned the same way, never read past @p len,
 * and left unchanged where the scan finds no "href" string member.
 *
 * @param out, cap, out_len  as nrf_fwd_links_uri(): @p out is written only
 *   when at least one link was rewritten.
 * @return the number of links rewritten (0: nothing written, use @p in as
 *   it is), or NRF_ETOOBIG, NRF_EINVAL as nrf_fwd_links_uri().
 * Any thread; no allocation, no I/O; stack use about
 * NRF_FWD_LINKS_WINDOW bytes.
 */
int nrf_fwd_links_json(const struct nrf_fwd_links *l, const char *in, size_t len,
	char *out, size_t cap, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif /* NRF_FWD_H */
