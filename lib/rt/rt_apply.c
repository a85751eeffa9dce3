/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one path of a live configuration change (nrf_rt.h): check, compile,
 * publish, wait for the workers. The REST API, SIGHUP and the etcd watch
 * differ only in where they read the document and where they keep it.
 */
#include <unistd.h>

#include "nrf_err.h"
#include "rt_int.h"

enum nrf_rt_refusal
nrf_rt_prepare(struct nrf_rt *rt, struct nrf_cfg *cfg, struct nrf_rt_change *ch)
{
	int err = 0;

	ch->snap = NULL;
	ch->err = 0;
	ch->n_restart = nrf_rt_restart_only(rt, cfg, ch->restart, NRF_ARRAY_SIZE(ch->restart));
	if (ch->n_restart > 0) {
		nrf_cfg_free(cfg);
		ch->err = NRF_ECONFIG;
		return NRF_RT_APPLY_RESTART_ONLY;
	}
	ch->snap = nrf_rt_snap_create_for(rt, cfg, &err);
	if (ch->snap == NULL) {
		ch->err = err;
		return err == NRF_ENOMEM ? NRF_RT_APPLY_NOMEM : NRF_RT_APPLY_UNUSABLE;
	}
	return NRF_RT_APPLY_OK;
}

int
nrf_rt_commit(struct nrf_rt *rt, struct nrf_rt_change *ch, uint32_t settle_ms, uint64_t *gen,
	bool *seen)
{
	struct nrf_rt_snap *snap = ch->snap;
	uint64_t t0, g;
	int rc;

	ch->snap = NULL;
	rc = nrf_rt_publish(rt, snap); /* frees it on failure */
	if (rc != 0) {
		ch->err = rc;
		return rc;
	}
	g = nrf_rt_generation(rt);
	t0 = nrf_now_ns();
	while (!nrf_rt_generation_seen(rt, g) &&
		nrf_now_ns() - t0 < (uint64_t)settle_ms * 1000000ull)
		usleep(100);
	if (gen != NULL)
		*gen = g;
	if (seen != NULL)
		*seen = nrf_rt_generation_seen(rt, g);
	return 0;
}

void
nrf_rt_change_drop(struct nrf_rt_change *ch)
{
	nrf_rt_snap_free(ch->snap);
	ch->snap = NULL;
}
