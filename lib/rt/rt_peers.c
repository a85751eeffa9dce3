/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The upstreams of the running configuration as the data path uses them
 * (GET /peers, docs/rest-api.md): what the configuration names and the
 * address the snapshot resolved it to. Counters and health come from
 * nrf_rt_peer_stats_get(); the API joins the two by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_err.h"
#include "rt_dns.h"
#include "rt_int.h"

static void
fill(struct nrf_rt_upstream *u, const struct rt_ep *ep)
{
	snprintf(u->name, sizeof(u->name), "%s", ep->name);
	u->address[0] = '\0';
	if (ep->ok)
		nrf_tp_addr_format(&ep->addr, u->address, sizeof(u->address));
	u->tls = ep->tls;
}

int
nrf_rt_upstreams_get(struct nrf_rt *rt, struct nrf_rt_upstream **out, size_t *n)
{
	const struct nrf_rt_snap *s;
	const struct nrf_cfg *cfg;
	struct nrf_rt_upstream *v;
	size_t k = 0, i;

	pthread_mutex_lock(&rt->ctl_lock);
	s = rt->cur;
	cfg = s->cfg;
	v = calloc((size_t)cfg->n_peers + 1, sizeof(*v));
	if (v == NULL) {
		pthread_mutex_unlock(&rt->ctl_lock);
		return NRF_ENOMEM;
	}
	if (s->local.ok || cfg->rt.local_nrf.present) {
		struct nrf_rt_upstream *u = &v[k++];

		fill(u, &s->local);
		u->local = true;
		rt_dns_describe(rt, cfg->rt.local_nrf.address, u);
		snprintf(u->configured, sizeof(u->configured), "%s port %u",
			cfg->rt.local_nrf.address, cfg->rt.local_nrf.port);
	}
	for (i = 0; i < cfg->n_peers; i++) {
		const struct nrf_cfg_peer *p = &cfg->peers[i];
		struct nrf_rt_upstream *u = &v[k++];
		int len = 0;

		fill(u, &s->peers[i]);
		if (p->ipv4[0] == '\0' && p->ipv6[0] == '\0')
			rt_dns_describe(rt, p->fqdn, u);
		u->mode = p->mode;
		u->priority = p->priority;
		if (p->set < cfg->n_sets)
			snprintf(u->set_id, sizeof(u->set_id), "%s", cfg->sets[p->set].nrf_set_id);
		if (p->fqdn[0] != '\0')
			len += snprintf(u->configured + len, sizeof(u->configured) - (size_t)len,
				"fqdn %s ", p->fqdn);
		if (p->ipv4[0] != '\0' && len < (int)sizeof(u->configured))
			len += snprintf(u->configured + len, sizeof(u->configured) - (size_t)len,
				"ipv4Address %s ", p->ipv4);
		if (p->ipv6[0] != '\0' && len < (int)sizeof(u->configured))
			len += snprintf(u->configured + len, sizeof(u->configured) - (size_t)len,
				"ipv6Address %s ", p->ipv6);
		if (len < (int)sizeof(u->configured))
			snprintf(u->configured + len, sizeof(u->configured) - (size_t)len, "port %u",
				p->port);
	}
	pthread_mutex_unlock(&rt->ctl_lock);
	*out = v;
	*n = k;
	return 0;
}
