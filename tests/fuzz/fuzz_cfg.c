/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the configuration loader. Besides "no crash", it
 * checks the promises of nrf_cfg.h that hold for every input:
 *   - a failed load names its error and lists at least one problem, each at
 *     a JSON pointer ("" or starting with "/") with a reason;
 *   - a successful load lists no problem, every group emits, and the emitted
 *     document loads again into an equal snapshot that emits the same text.
 * A broken promise abort()s, which libFuzzer and the replay test report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_cfg.h"
#include "nrf_err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_problems(const struct nrf_cfg_problems *p, int err)
{
	if (err == NRF_ENOMEM)
		return;
	if (err != NRF_EPARSE && err != NRF_ECONFIG)
		abort();
	if (p->n == 0)
		abort();
	if (err == NRF_EPARSE && (p->n != 1 || p->v[0].pointer[0] != '\0'))
		abort();
	for (size_t i = 0; i < p->n; i++) {
		const struct nrf_cfg_problem *q = &p->v[i];

		if (q->pointer[0] != '\0' && q->pointer[0] != '/')
			abort();
		if (q->reason[0] == '\0')
			abort();
		if (memchr(q->pointer, '\0', sizeof(q->pointer)) == NULL ||
			memchr(q->reason, '\0', sizeof(q->reason)) == NULL)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum nrf_cfg_group groups[] = {NRF_CFG_GENERAL,
		NRF_CFG_FORWARDING, NRF_CFG_GROWTH, NRF_CFG_RUNTIME};
	struct nrf_cfg_problems p = {0};
	struct nrf_cfg *a, *b;
	char *text, *again;
	int err = 1;

	a = nrf_cfg_load((const char *)data, size, 1, &p, &err);
	if (a == NULL) {
		check_problems(&p, err);
		nrf_cfg_problems_fini(&p);
		return 0;
	}
	if (err != 0 || p.n != 0)
		abort();
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		char *g = nrf_cfg_emit(a, groups[i], 0, &err);

		if (g == NULL && err != NRF_ENOMEM)
			abort();
		free(g);
	}
	text = nrf_cfg_emit(a, NRF_CFG_ALL, (int)(size % 3), &err);
	if (text == NULL) {
		if (err != NRF_ENOMEM)
			abort();
		nrf_cfg_free(a);
		return 0;
	}
	b = nrf_cfg_load(text, strlen(text), 2, &p, &err);
	if (b == NULL) {
		if (err != NRF_ENOMEM)
			abort(); /* what we emit must load */
	} else {
		if (!nrf_cfg_equal(a, b) || !nrf_cfg_equal(b, a))
			abort();
		again = nrf_cfg_emit(b, NRF_CFG_ALL, (int)(size % 3), &err);
		if (again != NULL && strcmp(again, text) != 0)
			abort();
		free(again);
		nrf_cfg_free(b);
	}
	free(text);
	nrf_cfg_free(a);
	nrf_cfg_problems_fini(&p);
	return 0;
}
