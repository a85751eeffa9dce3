/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_RT_DNS_H
#define NRF_RT_DNS_H

/*
 * Peer names re-resolved off the data path (internal to lib/rt; the
 * public part is nrf_rt_dns_start() and friends in nrf_rt.h).
 *
 * Names: the fqdn of every peer configured with an fqdn and neither an
 * ipv4Address nor an ipv6Address, and runtime.localNrf.address when it is
 * not an IP literal. One table per runtime (struct rt_dns), keyed by the
 * name; its resolver thread resolves each name when it is due, at most
 * once at a time, and compiles and publishes a new snapshot when the
 * address a name is used at changes (rt_dns.c).
 *
 * The pure parts below are what the unit tests check
 * (tests/unit/rt/rt_dns_test.cc).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrf_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nrf_rt;
struct nrf_rt_snap;

/*
 * Which of the @p n addresses of a fresh answer @p v the name is used at
 * from now on: the current one (@p cur, when @p have) when it is still
 * among them, whatever their order (a DNS server rotating its records
 * must not move every connection), else the first of the answer (the
 * order getaddrinfo() sorted them in, RFC 6724). Ports are ignored.
 * @return an index into @p v, or -1 when @p n is 0.
 */
int rt_dns_pick(const struct nrf_tp_addr *cur, bool have, const struct nrf_tp_addr *v,
	size_t n);

/* Same family and IP (the port is not part of a name's answer). */
bool rt_dns_addr_same(const struct nrf_tp_addr *a, const struct nrf_tp_addr *b);

/*
 * Milliseconds until the next resolution of a name.
 * @p has_ttl: the answer came from DNS with TTL @p ttl_s seconds → the TTL
 * clamped to [@p min_ms, @p max_ms]; no TTL (/etc/hosts, another NSS
 * source, the TTL query failed) or a failed resolution → @p refresh_ms,
 * clamped the same way. @p refresh_ms 0 (no periodic resolution) → 0.
 */
uint64_t rt_dns_interval_ms(bool has_ttl, uint32_t ttl_s, uint32_t refresh_ms, uint32_t min_ms,
	uint32_t max_ms);

/*
 * The smallest TTL (seconds) of the answer records of a DNS response
 * @p msg (@p len bytes, as res_nquery() returns it) whose type is @p type
 * (ns_t_a or ns_t_aaaa) or CNAME (a chain is only as fresh as its
 * shortest link). @return 0 and *@p ttl_s, or -1: not parseable, or no
 * such record.
 */
int rt_dns_answer_ttl(const unsigned char *msg, size_t len, int type, uint32_t *ttl_s);

/* Control side of nrf_rt (rt.c), ctl_lock held. */

/* The names of @p s into the table (new ones are due at once, names no
 * longer used are dropped), and the table's last good address of each
 * name onto @p s's endpoints: a snapshot never loses an address because
 * its own lookup failed. A name the table does not know yet takes the
 * address @p s resolved. No-op when the resolver is not started. */
void rt_dns_sync(struct nrf_rt *rt, struct nrf_rt_snap *s);
/* The resolver's view of @p host into @p u's dns_* fields (unchanged
 * when the table does not know it). ctl_lock held. */
struct nrf_rt_upstream;
void rt_dns_describe(struct nrf_rt *rt, const char *host, struct nrf_rt_upstream *u);
/* Does the resolver have a good address for @p host? Takes ctl_lock (so
 * not with it held): for snapshot builds outside the lock. */
bool rt_dns_known(struct nrf_rt *rt, const char *host);
/* Stop and join the resolver thread, free the table. NULL-safe. */
void rt_dns_free(struct nrf_rt *rt);

#ifdef __cplusplus
}
#endif

#endif /* NRF_RT_DNS_H */
