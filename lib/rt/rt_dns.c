/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peer names re-resolved off the data path (decision 0031).
 *
 * Why a thread of its own: getaddrinfo() blocks for as long as the
 * resolver configuration lets it (5 s x 2 attempts by default), and
 * neither the workers (data path) nor the REST API thread nor the control
 * thread (signals, watchdog, reclaim) may wait for it. The resolver
 * thread waits instead, and even it waits at most timeoutMs per name:
 * lookups go through getaddrinfo_a() and gai_suspend(); a lookup that is
 * not done in time counts as failed and is left to finish in glibc's
 * helper thread (kept as the name's pending request, so a name never has
 * two in flight).
 *
 * Why getaddrinfo() for the address and res_nquery() only for the TTL:
 * getaddrinfo() follows nsswitch.conf (/etc/hosts first, as every other
 * program on the host), but says nothing of how long its answer holds. A
 * name found in /etc/hosts has no TTL (refreshMs applies, and glibc
 * re-reads the file at every lookup); any other name is asked once more,
 * straight to DNS, for its A or AAAA records, and their smallest TTL
 * schedules the next lookup. Both are clamped to [minTtlMs, maxTtlMs].
 *
 * Why the resolver publishes under ctl_lock: a new address is a new
 * snapshot of the same configuration. Building it from the running one
 * and swapping it in under the lock every other publisher takes means a
 * REST change or a SIGHUP reload can never be overwritten by a DNS
 * change built from an older configuration, and every snapshot published
 * by anyone takes the table's addresses (rt_dns_sync(), called by the
 * publish path). The build does no lookup (the table has the addresses),
 * so the lock is held for the compile only (milliseconds).
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_log.h"
#include "rt_dns.h"
#include "rt_int.h"

#define DNS_MAX_ADDRS 16
/* A failing name is logged when it starts failing, then at most this
 * often while it keeps failing. */
#define DNS_FAIL_LOG_NS (60ull * 1000000000ull)

/* The IP of @p a without port (log lines). */
static char *
ip_text(const struct nrf_tp_addr *a, char *buf, size_t cap)
{
	if (inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->ip, buf, (socklen_t)cap) == NULL)
		snprintf(buf, cap, "?");
	return buf;
}

/* A lookup handed to getaddrinfo_a(): glibc reads cb.ar_request and
 * writes cb.ar_result until gai_error() is no longer EAI_INPROGRESS, so
 * it lives until then, even after the name is gone (orphans). */
struct dns_req {
	struct gaicb cb;
	struct addrinfo hints;
	char host[256];
	struct dns_req *next; /* in rt_dns.orphans */
};

struct dns_name {
	char host[256];
	bool have;                 /* a good address is known */
	struct nrf_tp_addr addr;   /* the one the name is used at (port 0) */
	uint64_t resolved_ns;      /* last good answer */
	uint64_t next_ns;          /* next lookup due (UINT64_MAX: none) */
	bool ttl;                  /* next_ns came from a DNS TTL */
	bool busy;                 /* the resolver thread works on it */
	bool used;                 /* rt_dns_sync(): still configured */
	char error[128];           /* last failure, "" after a success */
	uint64_t fail_logged_ns;   /* 0: not failing (or not logged yet) */
	struct dns_req *pending;   /* abandoned after a timeout, still running */
};

struct rt_dns {
	struct nrf_rt *rt;
	pthread_mutex_t lock;      /* the table; taken inside ctl_lock, never
				    * the other way round */
	pthread_cond_t cond;
	pthread_t th;
	bool stop;
	/* runtime.dns of the snapshot published last */
	uint32_t refresh_ms, min_ms, max_ms, timeout_ms;
	struct dns_name *v;
	size_t n, cap;
	struct dns_req *orphans;
	_Atomic uint64_t changed, unchanged, failed;
};

/* ------------------------------------------------------------------------ */
/* Pure parts (rt_dns.h)                                                     */

bool
rt_dns_addr_same(const struct nrf_tp_addr *a, const struct nrf_tp_addr *b)
{
	return a->family == b->family &&
		memcmp(a->ip, b->ip, a->family == 4 ? 4 : sizeof(a->ip)) == 0;
}

int
rt_dns_pick(const struct nrf_tp_addr *cur, bool have, const struct nrf_tp_addr *v, size_t n)
{
	size_t i;

	if (n == 0)
		return -1;
	if (have)
		for (i = 0; i < n; i++)
			if (rt_dns_addr_same(cur, &v[i]))
				return (int)i;
	return 0;
}

uint64_t
rt_dns_interval_ms(bool has_ttl, uint32_t ttl_s, uint32_t refresh_ms, uint32_t min_ms,
	uint32_t max_ms)
{
	uint64_t ms;

	if (refresh_ms == 0)
		return 0;
	ms = has_ttl ? (uint64_t)ttl_s * 1000u : refresh_ms;
	if (max_ms < min_ms)
		max_ms = min_ms;
	if (ms < min_ms)
		ms = min_ms;
	if (ms > max_ms)
		ms = max_ms;
	return ms;
}

int
rt_dns_answer_ttl(const unsigned char *msg, size_t len, int type, uint32_t *ttl_s)
{
	ns_msg h;
	ns_rr rr;
	uint32_t best = UINT32_MAX;
	int i, n;

	if (msg == NULL || len > 65535 || ns_initparse(msg, (int)len, &h) != 0)
		return -1;
	n = ns_msg_count(h, ns_s_an);
	for (i = 0; i < n; i++) {
		if (ns_parserr(&h, ns_s_an, i, &rr) != 0)
			return -1;
		if (ns_rr_class(rr) != ns_c_in)
			continue;
		if ((int)ns_rr_type(rr) != type && ns_rr_type(rr) != ns_t_cname)
			continue;
		if (ns_rr_ttl(rr) < best)
			best = ns_rr_ttl(rr);
	}
	if (best == UINT32_MAX)
		return -1;
	*ttl_s = best;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Lookups (resolver thread, no lock held)                                   */

struct dns_answer {
	struct nrf_tp_addr v[DNS_MAX_ADDRS];
	size_t n;
	bool has_ttl;
	uint32_t ttl_s;
	char error[128];
};

static void
req_free(struct dns_req *r)
{
	if (r == NULL)
		return;
	if (r->cb.ar_result != NULL)
		freeaddrinfo(r->cb.ar_result);
	free(r);
}

static bool
req_running(struct dns_req *r)
{
	return gai_error(&r->cb) == EAI_INPROGRESS;
}

static void
answer_add(struct dns_answer *a, const struct addrinfo *ai)
{
	struct nrf_tp_addr x;
	size_t i;

	memset(&x, 0, sizeof(x));
	if (ai->ai_family == AF_INET) {
		x.family = 4;
		memcpy(x.ip, &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
	} else if (ai->ai_family == AF_INET6) {
		x.family = 6;
		memcpy(x.ip, &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
	} else {
		return;
	}
	for (i = 0; i < a->n; i++)
		if (rt_dns_addr_same(&a->v[i], &x))
			return;
	if (a->n < DNS_MAX_ADDRS)
		a->v[a->n++] = x;
}

/* Is @p host a name (or alias) of /etc/hosts (the "files" source)? */
static bool
in_hosts_file(const char *host)
{
	FILE *f = fopen("/etc/hosts", "re");
	char line[1024];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *save = NULL, *tok, *hash = strchr(line, '#');
		int k = 0;

		if (hash != NULL)
			*hash = '\0';
		for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
				tok = strtok_r(NULL, " \t\r\n", &save), k++)
			if (k > 0 && strcasecmp(tok, host) == 0) {
				found = true;
				break;
			}
	}
	fclose(f);
	return found;
}

/* The TTL of @p host's records of @p family, asked straight to DNS,
 * bounded by @p timeout_ms (rounded up to whole seconds: the resolver
 * library's unit). false: no TTL to be had. */
static bool
dns_ttl(const char *host, int family, uint32_t timeout_ms, uint32_t *ttl_s)
{
	struct __res_state st;
	unsigned char buf[4096];
	int n;
	bool ok = false;

	memset(&st, 0, sizeof(st));
	if (res_ninit(&st) != 0)
		return false;
	st.retrans = (int)((timeout_ms + 999) / 1000);
	st.retry = 1;
	n = res_nquery(&st, host, ns_c_in, family == 6 ? ns_t_aaaa : ns_t_a, buf, sizeof(buf));
	if (n > 0)
		ok = rt_dns_answer_ttl(buf, (size_t)n, family == 6 ? ns_t_aaaa : ns_t_a, ttl_s) == 0;
	res_nclose(&st);
	return ok;
}

/*
 * Look @p host up, waiting at most @p timeout_ms. *@p pending: the name's
 * lookup left running by an earlier timeout (reaped here when done). 0
 * with @p a filled, or -1 with a->error set.
 */
static int
lookup(const char *host, uint32_t timeout_ms, struct dns_req **pending, struct dns_answer *a)
{
	struct gaicb *list[1];
	struct dns_req *r;
	struct timespec ts;
	uint64_t deadline = nrf_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	const struct addrinfo *ai;
	int rc;

	memset(a, 0, sizeof(*a));
	if (*pending != NULL) {
		if (req_running(*pending)) {
			snprintf(a->error, sizeof(a->error), "the previous lookup has not "
				"returned yet");
			return -1;
		}
		req_free(*pending);
		*pending = NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		snprintf(a->error, sizeof(a->error), "%s", nrf_strerror(NRF_ENOMEM));
		return -1;
	}
	snprintf(r->host, sizeof(r->host), "%s", host);
	r->hints.ai_family = AF_UNSPEC;
	r->hints.ai_socktype = SOCK_STREAM;
	r->cb.ar_name = r->host;
	r->cb.ar_request = &r->hints;
	list[0] = &r->cb;
	rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (rc != 0) {
		snprintf(a->error, sizeof(a->error), "%s", gai_strerror(rc));
		free(r);
		return -1;
	}
	while ((rc = gai_error(&r->cb)) == EAI_INPROGRESS) {
		uint64_t now = nrf_now_ns();

		if (now >= deadline)
			break;
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ull);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ull);
		(void)gai_suspend((const struct gaicb *const *)list, 1, &ts);
	}
	if (rc == EAI_INPROGRESS) {
		/* glibc cannot cancel a lookup its thread has started. */
		if (gai_cancel(&r->cb) == EAI_CANCELED)
			req_free(r);
		else
			*pending = r;
		snprintf(a->error, sizeof(a->error), "timed out after %u ms", timeout_ms);
		return -1;
	}
	if (rc != 0) {
		snprintf(a->error, sizeof(a->error), "%s", rc == EAI_SYSTEM ? strerror(errno)
			: gai_strerror(rc));
		req_free(r);
		return -1;
	}
	for (ai = r->cb.ar_result; ai != NULL; ai = ai->ai_next)
		answer_add(a, ai);
	req_free(r);
	if (a->n == 0) {
		snprintf(a->error, sizeof(a->error), "no IPv4 or IPv6 address");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

static struct dns_name *
find(struct rt_dns *d, const char *host)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strcasecmp(d->v[i].host, host) == 0)
			return &d->v[i];
	return NULL;
}

/* A name of the configuration: an fqdn-only peer, or a local NRF given by
 * name. NULL: a numeric address. */
static const char *
peer_name(const struct nrf_cfg_peer *p)
{
	return p->ipv4[0] == '\0' && p->ipv6[0] == '\0' && p->fqdn[0] != '\0' ? p->fqdn : NULL;
}

static const char *
local_name(const struct nrf_cfg *cfg)
{
	struct nrf_tp_addr x;

	if (!cfg->rt.local_nrf.present || cfg->rt.local_nrf.address[0] == '\0' ||
			nrf_tp_addr_parse(cfg->rt.local_nrf.address, 0, &x) == 0)
		return NULL;
	return cfg->rt.local_nrf.address;
}

/* d->lock held. */
static void
sync_one(struct rt_dns *d, const char *host, struct rt_ep *ep)
{
	struct dns_name *e = find(d, host);
	uint16_t port = ep->addr.port;

	if (e == NULL) {
		if (d->n == d->cap) {
			size_t cap = d->cap > 0 ? d->cap * 2 : 8;
			struct dns_name *v = realloc(d->v, cap * sizeof(*v));

			if (v == NULL)
				return; /* not re-resolved; the snapshot's address stays */
			d->v = v;
			d->cap = cap;
		}
		e = &d->v[d->n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->host, sizeof(e->host), "%s", host);
		e->next_ns = 0; /* due now: learn its TTL */
	}
	e->used = true;
	if (e->have) {
		ep->addr = e->addr;
		ep->addr.port = port;
		ep->ok = true;
	} else if (ep->ok) {
		e->have = true;
		e->addr = ep->addr;
		e->addr.port = 0;
		e->resolved_ns = nrf_now_ns();
	}
}

void
rt_dns_sync(struct nrf_rt *rt, struct nrf_rt_snap *s)
{
	struct rt_dns *d = rt->dns;
	const struct nrf_cfg *cfg = s->cfg;
	const char *h;
	size_t i, k;

	if (d == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	d->refresh_ms = cfg->rt.dns_refresh_ms;
	d->min_ms = cfg->rt.dns_min_ttl_ms;
	d->max_ms = cfg->rt.dns_max_ttl_ms;
	d->timeout_ms = cfg->rt.dns_timeout_ms;
	for (i = 0; i < d->n; i++)
		d->v[i].used = d->v[i].busy; /* the thread holds its index */
	for (i = 0; i < cfg->n_peers; i++)
		/* an apiPrefix too long for the endpoint fails every try
		 * whatever its address (resolve_peer()) */
		if ((h = peer_name(&cfg->peers[i])) != NULL &&
				strlen(cfg->peers[i].api_prefix) < sizeof(s->peers[i].prefix))
			sync_one(d, h, &s->peers[i]);
	if ((h = local_name(cfg)) != NULL)
		sync_one(d, h, &s->local);
	for (i = 0, k = 0; i < d->n; i++) {
		if (!d->v[i].used) {
			if (d->v[i].pending != NULL) {
				d->v[i].pending->next = d->orphans;
				d->orphans = d->v[i].pending;
			}
			continue;
		}
		if (k != i)
			d->v[k] = d->v[i];
		k++;
	}
	d->n = k;
	for (i = 0; i < d->n; i++) {
		if (d->refresh_ms == 0 && d->v[i].next_ns != 0) /* a new name: once */
			d->v[i].next_ns = UINT64_MAX;
		else if (d->refresh_ms != 0 && d->v[i].next_ns == UINT64_MAX)
			d->v[i].next_ns = 0; /* periodic again: due now */
	}
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* ------------------------------------------------------------------------ */
/* Publishing a changed address                                              */

/*
 * The running configuration again, as a new generation, with the table's
 * addresses (rt_dns_sync() in publish). ctl_lock is taken here (the
 * resolver holds no other lock).
 */
static void
republish(struct rt_dns *d)
{
	struct nrf_rt *rt = d->rt;
	struct nrf_cfg_problems probs = {0};
	struct nrf_rt_snap *snap = NULL;
	struct nrf_cfg *cfg;
	uint64_t gen;
	char *text;
	int err = 0, rc = NRF_ENOMEM;

	pthread_mutex_lock(&rt->ctl_lock);
	if (!atomic_load(&rt->running)) {
		/* stopping (nrf_rt_stop()): the workers drain on what they have;
		 * the table keeps the address for nothing else to use */
		pthread_mutex_unlock(&rt->ctl_lock);
		return;
	}
	gen = rt->cur->gen;
	text = nrf_cfg_emit(rt->cur->cfg, NRF_CFG_ALL, 0, &err);
	cfg = text != NULL ? nrf_cfg_load(text, strlen(text), gen + 1, &probs, &err) : NULL;
	if (cfg != NULL)
		snap = rt_snap_build(cfg, rt, false, &err);
	if (snap != NULL)
		rc = rt_publish_locked(rt, snap);
	pthread_mutex_unlock(&rt->ctl_lock);
	free(text);
	nrf_cfg_problems_fini(&probs);
	if (rc != 0)
		NRF_LOG(ERR, MOD, "dns: a changed peer address could not be applied: %s",
			nrf_strerror(snap == NULL ? err : rc));
	else
		NRF_LOG(INFO, MOD, "dns: configuration generation %llu applied (peer address "
			"changed)", (unsigned long long)nrf_rt_generation(rt));
}

/* ------------------------------------------------------------------------ */
/* The resolver thread                                                       */

static void
reap_orphans(struct rt_dns *d)
{
	struct dns_req **pp = &d->orphans;

	while (*pp != NULL) {
		struct dns_req *r = *pp;

		if (req_running(r)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		req_free(r);
	}
}

/* d->lock held; the result of the lookup of @p e (busy). true: its
 * address changed. */
static bool
apply(struct rt_dns *d, struct dns_name *e, int rc, const struct dns_answer *a,
	struct dns_req *pending)
{
	uint64_t now = nrf_now_ns(), ms;
	char was[64], now_s[64];
	int k;

	e->busy = false;
	e->pending = pending;
	if (rc != 0) {
		atomic_fetch_add(&d->failed, 1);
		snprintf(e->error, sizeof(e->error), "%s", a->error);
		e->ttl = false;
		if (e->fail_logged_ns == 0 || now - e->fail_logged_ns >= DNS_FAIL_LOG_NS) {
			e->fail_logged_ns = now;
			if (e->have)
				NRF_LOG(WARN, MOD, "dns: peer %s: cannot be resolved (%s); it stays at "
					"%s", e->host, a->error,
					ip_text(&e->addr, was, sizeof(was)));
			else
				NRF_LOG(WARN, MOD, "dns: peer %s: cannot be resolved (%s); every try "
					"to it fails", e->host, a->error);
		}
		ms = rt_dns_interval_ms(false, 0, d->refresh_ms, d->min_ms, d->max_ms);
		e->next_ns = ms == 0 ? UINT64_MAX : now + ms * 1000000ull;
		return false;
	}
	if (e->fail_logged_ns != 0)
		NRF_LOG(INFO, MOD, "dns: peer %s: resolves again", e->host);
	e->fail_logged_ns = 0;
	e->error[0] = '\0';
	e->ttl = a->has_ttl;
	ms = rt_dns_interval_ms(a->has_ttl, a->ttl_s, d->refresh_ms, d->min_ms, d->max_ms);
	e->next_ns = ms == 0 ? UINT64_MAX : now + ms * 1000000ull;
	e->resolved_ns = now;
	k = rt_dns_pick(&e->addr, e->have, a->v, a->n);
	if (e->have && rt_dns_addr_same(&e->addr, &a->v[k])) {
		atomic_fetch_add(&d->unchanged, 1);
		return false;
	}
	atomic_fetch_add(&d->changed, 1);
	if (e->have)
		ip_text(&e->addr, was, sizeof(was));
	else
		snprintf(was, sizeof(was), "no address");
	ip_text(&a->v[k], now_s, sizeof(now_s));
	NRF_LOG(INFO, MOD, "dns: peer %s: %s -> %s", e->host, was, now_s);
	e->addr = a->v[k];
	e->have = true;
	return true;
}

/* d->lock held: the due name not being worked on, or NULL; *@p wait_ns:
 * until the next one is due. */
static struct dns_name *
next_due(struct rt_dns *d, uint64_t now, uint64_t *wait_ns)
{
	struct dns_name *best = NULL;
	size_t i;

	*wait_ns = UINT64_MAX;
	for (i = 0; i < d->n; i++) {
		struct dns_name *e = &d->v[i];

		if (e->busy)
			continue;
		if (e->next_ns <= now) {
			if (best == NULL || e->next_ns < best->next_ns)
				best = e;
		} else if (e->next_ns != UINT64_MAX && e->next_ns - now < *wait_ns) {
			*wait_ns = e->next_ns - now;
		}
	}
	return best;
}

static void *
resolver_main(void *arg)
{
	struct rt_dns *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		struct dns_answer a;
		struct dns_req *pending;
		struct dns_name *e;
		char host[256];
		uint32_t timeout_ms;
		uint64_t wait_ns;
		bool changed = false;
		int rc;

		reap_orphans(d);
		e = next_due(d, nrf_now_ns(), &wait_ns);
		if (e == NULL) {
			struct timespec ts;

			/* Wake at least once a second: orphans, and a clock
			 * that is not the condition variable's. */
			if (wait_ns > 1000000000ull)
				wait_ns = 1000000000ull;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(wait_ns / 1000000000ull);
			ts.tv_nsec += (long)(wait_ns % 1000000000ull);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&d->cond, &d->lock, &ts);
			continue;
		}
		e->busy = true;
		snprintf(host, sizeof(host), "%s", e->host);
		pending = e->pending;
		e->pending = NULL;
		timeout_ms = d->timeout_ms;
		pthread_mutex_unlock(&d->lock);

		rc = lookup(host, timeout_ms, &pending, &a);
		if (rc == 0 && !in_hosts_file(host)) {
			int k = rt_dns_pick(NULL, false, a.v, a.n);

			a.has_ttl = dns_ttl(host, a.v[k].family, timeout_ms, &a.ttl_s);
		}

		pthread_mutex_lock(&d->lock);
		e = find(d, host);
		if (e != NULL && e->busy) {
			changed = apply(d, e, rc, &a, pending);
		} else if (pending != NULL) { /* the name went away meanwhile */
			pending->next = d->orphans;
			d->orphans = pending;
		}
		if (changed && !d->stop) {
			pthread_mutex_unlock(&d->lock);
			republish(d);
			pthread_mutex_lock(&d->lock);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Public part (nrf_rt.h)                                                    */

int
nrf_rt_dns_start(struct nrf_rt *rt)
{
	struct rt_dns *d;

	if (rt == NULL || rt->dns != NULL)
		return NRF_EINVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NRF_ENOMEM;
	d->rt = rt;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	pthread_mutex_lock(&rt->ctl_lock);
	rt->dns = d;
	rt_dns_sync(rt, rt->cur);
	pthread_mutex_unlock(&rt->ctl_lock);
	if (pthread_create(&d->th, NULL, resolver_main, d) != 0) {
		pthread_mutex_lock(&rt->ctl_lock);
		rt->dns = NULL;
		pthread_mutex_unlock(&rt->ctl_lock);
		free(d->v);
		free(d);
		return NRF_EIO;
	}
	pthread_setname_np(d->th, "nrfwd-dns");
	return 0;
}

void
rt_dns_free(struct nrf_rt *rt)
{
	struct rt_dns *d = rt != NULL ? rt->dns : NULL;
	size_t i;

	if (d == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->th, NULL);
	pthread_mutex_lock(&rt->ctl_lock);
	rt->dns = NULL;
	pthread_mutex_unlock(&rt->ctl_lock);
	/* A lookup still in glibc's hands writes into its request: wait for
	 * it (bounded by the resolver configuration's own timeouts). */
	for (i = 0; i < d->n; i++)
		if (d->v[i].pending != NULL) {
			d->v[i].pending->next = d->orphans;
			d->orphans = d->v[i].pending;
		}
	while (d->orphans != NULL) {
		struct dns_req *r = d->orphans;

		d->orphans = r->next;
		if (req_running(r)) {
			const struct gaicb *list[1] = {&r->cb};

			(void)gai_suspend(list, 1, NULL);
		}
		req_free(r);
	}
	free(d->v);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void
nrf_rt_dns_stats_get(struct nrf_rt *rt, struct nrf_rt_dns_stats *out)
{
	struct rt_dns *d;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&rt->ctl_lock);
	d = rt->dns;
	if (d != NULL) {
		out->running = true;
		out->changed = atomic_load(&d->changed);
		out->unchanged = atomic_load(&d->unchanged);
		out->failed = atomic_load(&d->failed);
		pthread_mutex_lock(&d->lock);
		out->names = (unsigned int)d->n;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&rt->ctl_lock);
}

bool
rt_dns_known(struct nrf_rt *rt, const char *host)
{
	struct rt_dns *d;
	bool known = false;

	pthread_mutex_lock(&rt->ctl_lock);
	d = rt->dns;
	if (d != NULL) {
		const struct dns_name *e;

		pthread_mutex_lock(&d->lock);
		e = find(d, host);
		known = e != NULL && e->have;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&rt->ctl_lock);
	return known;
}

void
rt_dns_describe(struct nrf_rt *rt, const char *host, struct nrf_rt_upstream *u)
{
	struct rt_dns *d = rt->dns;
	const struct dns_name *e;

	if (d == NULL || host == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	e = find(d, host);
	if (e != NULL) {
		snprintf(u->dns_name, sizeof(u->dns_name), "%s", e->host);
		u->dns_resolved_ns = e->have ? e->resolved_ns : 0;
		u->dns_next_ns = e->next_ns == UINT64_MAX ? 0 : e->next_ns;
		u->dns_ttl = e->ttl;
		snprintf(u->dns_error, sizeof(u->dns_error), "%s", e->error);
	}
	pthread_mutex_unlock(&d->lock);
}
