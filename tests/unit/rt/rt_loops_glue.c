/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C access to a worker's loop table (lib/rt/rt_loops.c) for
 * rt_loops_test.cc: a worker with nothing but its table (no snapshot, no
 * access log, no connection), driven as the request path drives it.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"
#include "rt_loops_glue.h"

struct rt_worker *
rtl_worker(void)
{
	struct rt_worker *w = calloc(1, sizeof(*w));

	if (w != NULL && rt_loops_create(w) != 0) {
		free(w);
		return NULL;
	}
	return w;
}

void
rtl_free(struct rt_worker *w)
{
	if (w == NULL)
		return;
	rt_loops_free(w);
	free(w);
}

void
rtl_note(struct rt_worker *w, int kind, const char *const *lines, size_t n, int peer)
{
	struct nrf_slice s[64];

	for (size_t i = 0; i < n && i < 64; i++)
		s[i] = nrf_slice_str(lines[i]);
	rt_loop_note(w, (enum nrf_rt_loop_kind)kind, s, n < 64 ? n : 64, peer, NULL, NULL);
}

int
rtl_read(const struct rt_worker *const *w, size_t n_w, struct nrf_rt_loop **v, size_t *n,
	uint64_t *drops)
{
	size_t cap = 0;
	int rc = 0;

	*v = NULL;
	*n = 0;
	*drops = 0;
	for (size_t i = 0; i < n_w && rc == 0; i++) {
		rc = rt_loops_read(w[i], v, n, &cap);
		*drops += __atomic_load_n(&w[i]->st.loop_drops, __ATOMIC_RELAXED);
	}
	return rc;
}

size_t
rtl_table_bytes(void)
{
	return rt_loops_bytes();
}
