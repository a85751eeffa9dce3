/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_VIA_H
#define NRF_VIA_H

/**
 * @file
 * The Via header (RFC 9110 §7.6.3): parsing, the identity database, the
 * one-pass scan used on every request, and the member nrfwd appends.
 *
 *   Via = #( received-protocol RWS received-by [ RWS comment ] )
 *   received-protocol = [ protocol-name "/" ] protocol-version
 *   received-by = pseudonym [ ":" port ]   (host, host:port, [v6]:port)
 *   comment = "(" *( ctext / quoted-pair / comment ) ")"
 *
 * Several field lines equal one comma-joined line. Text inside a comment is
 * never an identity.
 *
 * Matching rule (docs/behaviour.md §4): a member's received-by matches an identity
 * host:port when the hosts are equal ignoring ASCII case and one trailing
 * dot, and the ports are numerically equal (leading zeros allowed). Whole
 * member only: "xnrf-a:8080" and "nrf-a:80801" do not match "nrf-a:8080".
 * A received-by without a port never matches (every identity has a port).
 *
 * Threads: the database is immutable once created and shared read-only by
 * every thread; each thread scans with its own scratch. This module does not
 * depend on the configuration: callers pass identities as parameters.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Total Via bytes over all field lines accepted by a scan. */
#define NRF_VIA_MAX_BYTES 65536
/** Identities in one database. */
#define NRF_VIA_MAX_IDENTITIES 4096
/** Peer references an identity may carry (size of the result bitset). */
#define NRF_VIA_MAX_PEERS 1024

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */

/** One parsed Via member. Slices point into the caller's field lines. */
struct nrf_via_member {
	struct nrf_slice proto_name;    /**< "HTTP" in "HTTP/2.0"; empty if absent */
	struct nrf_slice proto_version; /**< "2.0" */
	struct nrf_slice received_by;   /**< "host:port" text as received */
	struct nrf_slice host;          /**< host without brackets and port */
	int32_t port;                   /**< 0..65535, or -1 when absent */
	struct nrf_slice comment;       /**< "(...)" with its parentheses; empty if none */
	uint16_t line;                  /**< index of the field line it came from */
};

/**
 * Parse Via field lines into members.
 *
 * Bounded: reads exactly lines[i].len bytes of each line, never more; no
 * allocation. Empty list elements ("a, , b") are skipped as RFC 9110 §5.6.1
 * requires and are not counted.
 *
 * @param lines      the field lines, in the order received.
 * @param n_lines    number of lines (0 gives 0 members).
 * @param out        receives up to @p max_out members (may be NULL if 0).
 * @param n_members  receives the number of members, counting those beyond
 *                   @p max_out.
 * @return 0, or
 *   NRF_EPARSE  a NUL or other control byte (except HTAB), an unbalanced
 *               comment, a member without received-by, or a bad port
 *               ("host:" or "host:99999x"); @p n_members holds the members
 *               counted before the error.
 *   NRF_ETOOBIG more than NRF_VIA_MAX_BYTES in all lines, or more than
 *               65536 lines (nrf_via_member.line is 16 bits).
 *   NRF_EINVAL  @p lines NULL with n_lines > 0, a line with a NULL pointer
 *               and a length, or @p n_members NULL.
 */
int nrf_via_parse(const struct nrf_slice *lines, size_t n_lines,
	struct nrf_via_member *out, size_t max_out, size_t *n_members);

/**
 * The received-by of @p m normalised as the matching rule compares it
 * (docs/behaviour.md §4): host in lower case without one trailing dot
 * (an IPv6 literal in brackets), then ":port" in decimal without leading
 * zeros; no port when the member has none. A host the identity rules
 * refuse (e.g. a pseudonym with odd characters) is written as received, in
 * lower case, so two spellings that match the same identity give the same
 * text and anything else stays recognisable.
 *
 * @param buf  receives the text, NUL-terminated.
 * @return its length, or NRF_ETOOBIG when @p cap is too small (@p buf
 *   then holds "" when @p cap > 0), NRF_EINVAL on NULL arguments.
 * Any thread; no allocation (for the loop table on the request path).
 */
int nrf_via_member_identity(const struct nrf_via_member *m, char *buf, size_t cap);

/* ------------------------------------------------------------------------ */
/* Identity database                                                         */

enum nrf_via_kind {
	NRF_VIA_SELF = 0, /**< this NRF (ocnrfHost:ocnrfPort or an alias) */
	NRF_VIA_PEER = 1, /**< a peer NRF; see nrf_via_identity.peer */
};

/** An identity to recognise; the caller's strings are copied. */
struct nrf_via_identity {
	const char *host;   /**< fqdn, IPv4 text, or IPv6 text (with or without brackets) */
	uint16_t port;      /**< 1..65535 */
	enum nrf_via_kind kind;
	uint16_t peer;      /**< NRF_VIA_PEER: peer index < NRF_VIA_MAX_PEERS */
};

struct nrf_via_db;

/**
 * Compile identities into one Hyperscan database. Slow (milliseconds):
 * control thread only, never on the request path.
 *
 * Identity ids are the positions in @p ids. The same identity twice is
 * allowed (both ids match). Host text is matched as given (after removing
 * one trailing dot and brackets), so an IPv6 address matches only in the
 * spelling configured (see docs/via.md).
 *
 * @return the database, or NULL with @p err set to NRF_EINVAL (empty host,
 *   port 0, peer out of range, n == 0 or > NRF_VIA_MAX_IDENTITIES, host with
 *   characters that cannot appear in received-by), NRF_EMATCHER (Hyperscan
 *   refused the patterns) or NRF_ENOMEM.
 */
struct nrf_via_db *nrf_via_db_create(const struct nrf_via_identity *ids,
	size_t n, int *err);

/** Free a database. NULL-safe. Only when no scratch scans with it. */
void nrf_via_db_free(struct nrf_via_db *db);

/** Number of identities. */
size_t nrf_via_db_count(const struct nrf_via_db *db);

/**
 * Identity @p id as stored (host normalised: lower case, no trailing dot,
 * no brackets). NULL when @p id is out of range. Valid while @p db lives.
 */
const struct nrf_via_identity *nrf_via_db_identity(const struct nrf_via_db *db,
	uint32_t id);

/** Per-thread scan state. */
struct nrf_via_scratch;

/**
 * Allocate scratch for scanning @p db (and every database passed to
 * nrf_via_scratch_update() later). One per thread; never shared.
 * @return NULL with @p err = NRF_ENOMEM or NRF_EMATCHER (NRF_EINVAL when
 *   @p db is NULL).
 */
struct nrf_via_scratch *nrf_via_scratch_create(const struct nrf_via_db *db,
	int *err);

/**
 * Make @p s usable with a new database as well (grows it if needed). Call on
 * the owning thread when it picks up a new snapshot, or on the control
 * thread before publishing it while the owner cannot be using @p s.
 * @return 0, NRF_ENOMEM or NRF_EMATCHER (scratch unchanged then), or
 *   NRF_EINVAL when either argument is NULL.
 */
int nrf_via_scratch_update(struct nrf_via_scratch *s, const struct nrf_via_db *db);

/** Free scratch. NULL-safe. */
void nrf_via_scratch_free(struct nrf_via_scratch *s);

/* ------------------------------------------------------------------------ */
/* Scan (request path)                                                       */

/** What one scan found. 144 bytes; lives on the caller's stack or stream. */
struct nrf_via_result {
	uint32_t members;   /**< Via members in all lines */
	uint32_t hits;      /**< identity matches (an identity may match twice) */
	bool self;          /**< an NRF_VIA_SELF identity is present */
	/** Bit p set: an identity of peer p is present. */
	uint64_t peers[NRF_VIA_MAX_PEERS / 64];
};

/** True when an identity of @p peer was found. */
static inline bool
nrf_via_result_has_peer(const struct nrf_via_result *r, uint16_t peer)
{
	return peer < NRF_VIA_MAX_PEERS && ((r->peers[peer >> 6] >> (peer & 63)) & 1);
}

/**
 * Callback for nrf_via_scan_each(): identity @p id was found in member
 * @p member (0-based over all lines). Return 0 to go on, non-zero to stop.
 */
typedef int (*nrf_via_match_fn)(void *ctx, uint32_t id, uint32_t member);

/**
 * Scan all Via field lines once: member count, and every identity present
 * outside comments. Lines without a '(' are scanned in place; lines with
 * comments are copied into the scratch with comments blanked. No allocation,
 * no lock, no log.
 *
 * @param res  always fully written (zeroed first), also on error.
 * @return 0, or NRF_EPARSE / NRF_ETOOBIG / NRF_EINVAL as nrf_via_parse(),
 *   or NRF_EMATCHER (Hyperscan failed; scratch not made for @p db);
 *   NRF_EINVAL also when @p db, @p s or @p res is NULL. The scan checks
 *   only bytes and comments: NRF_EPARSE means a control byte or an
 *   unbalanced comment; a member without received-by or with a bad port
 *   is counted and never matches (docs/via.md). On every value
 *   nrf_via_parse() accepts, the scan returns 0 and the same count.
 *   On error @p res holds what was found before the error; callers treat
 *   the request as malformed.
 */
int nrf_via_scan(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res);

/**
 * nrf_via_scan() that also reports each match with its member index, in
 * order of members. For tools and tests (nrfwd-ctl explain), not the data
 * path. @p fn may be NULL.
 */
int nrf_via_scan_each(const struct nrf_via_db *db, struct nrf_via_scratch *s,
	const struct nrf_slice *lines, size_t n_lines, struct nrf_via_result *res,
	nrf_via_match_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Append                                                                    */

/**
 * Write the member this NRF appends when forwarding: "2.0 host:port"
 * ("2.0 [v6]:port" when @p host holds a ':'), NUL-terminated.
 *
 * @return its length (without the NUL), or NRF_ETOOBIG when @p cap is too
 *   small (nothing useful written), NRF_EINVAL on empty host or port 0, or
 *   on a host nrf_via_db_create() would refuse (a space or a comma would
 *   inject members into the next hop's Via).
 * Any thread; no allocation.
 */
int nrf_via_member_format(char *buf, size_t cap, const char *host, uint16_t port);

#ifdef __cplusplus
}
#endif
#endif /* NRF_VIA_H */
