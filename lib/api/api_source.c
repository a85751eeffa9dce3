/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The management API with a configuration source other than the file
 * (the fleet's etcd, wired by app/nrfwd). Kept apart from api.c so the
 * file path stays as it was: api.c calls these hooks, which do nothing
 * without a source.
 *
 * Why a change of a shared group is not published here: every instance
 * must apply the same document at the same revision, so this instance
 * applies it from the watch like every other one, and "200" means this
 * instance runs it (decision 0030). The validation and compilation here
 * only spare the store a document this very instance would refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "nrf_err.h"

bool
api_source_lock(const struct nrf_api_source *src)
{
	if (src == NULL || src->lock == NULL)
		return false;
	src->lock(src->arg);
	return true;
}

void
api_source_unlock(const struct nrf_api_source *src)
{
	if (src != NULL && src->unlock != NULL)
		src->unlock(src->arg);
}

void
api_source_change(const struct nrf_api_source *src, struct nrf_rt_snap *snap,
	const char *doc, size_t doc_len, int64_t base, uint32_t settle_ms, bool *locked,
	struct api_src_out *out)
{
	char why[512];
	int64_t ticket = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = doc != NULL && src->write_text != NULL
		? src->write_text(src->arg, doc, doc_len, base, &ticket, why, sizeof(why))
		: src->write(src->arg, nrf_rt_snap_cfg(snap), &ticket, why, sizeof(why));
	nrf_rt_snap_free(snap);
	if (*locked) {
		api_source_unlock(src);
		*locked = false;
	}
	switch (rc) {
	case 0:
		break;
	case NRF_EAGAIN:
		out->status = 409;
		out->title = "Conflict";
		out->cause = "CONFIGURATION_CONFLICT";
		snprintf(out->detail, sizeof(out->detail), "%s", why);
		return;
	case NRF_EIO:
		out->status = 503;
		out->title = "Service Unavailable";
		out->cause = "CONFIGURATION_SOURCE_UNAVAILABLE";
		snprintf(out->detail, sizeof(out->detail), "the configuration source cannot be "
			"reached; nothing was changed (%s)", why);
		return;
	default:
		out->status = 500;
		out->title = "Internal Server Error";
		out->cause = "SYSTEM_FAILURE";
		snprintf(out->detail, sizeof(out->detail), "the configuration source refused the "
			"write: %s", why[0] != '\0' ? why : nrf_strerror(rc));
		return;
	}
	rc = src->wait(src->arg, ticket, settle_ms, &out->probs);
	if (rc == 0) {
		out->status = 200;
		snprintf(out->detail, sizeof(out->detail), "written to the configuration source "
			"at revision %lld and applied here", (long long)ticket);
	} else if (rc == NRF_ECONFIG) {
		out->status = 400;
		out->title = "Bad Request";
		out->cause = "MANDATORY_IE_INCORRECT";
		snprintf(out->detail, sizeof(out->detail), "written to the configuration source at "
			"revision %lld but refused by this instance", (long long)ticket);
	} else {
		out->status = 202;
		snprintf(out->detail, sizeof(out->detail), "written to the configuration source "
			"at revision %lld, not yet applied here after %u ms", (long long)ticket,
			settle_ms);
	}
}

int
api_source_persist(const struct nrf_api_source *src, struct nrf_rt_snap *snap, char *why,
	size_t why_cap)
{
	if (src == NULL || src->persist == NULL)
		return 0;
	return src->persist(src->arg, nrf_rt_snap_cfg(snap), why, why_cap);
}

void
api_source_metrics(const struct nrf_api_source *src, struct api_buf *b)
{
	char *t;

	if (src == NULL || src->metrics == NULL)
		return;
	t = src->metrics(src->arg);
	if (t == NULL) {
		b->oom = true;
		return;
	}
	api_buf_printf(b, "%s", t);
	free(t);
}

void
api_source_ready(const struct nrf_api_source *src, json_t *doc)
{
	char *t;
	json_t *o;

	if (src == NULL || src->status_json == NULL)
		return;
	t = src->status_json(src->arg);
	o = t != NULL ? json_loads(t, 0, NULL) : NULL;
	free(t);
	if (o != NULL)
		json_object_set_new(doc, "configSource", o);
}
