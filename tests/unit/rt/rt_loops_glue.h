/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RT_LOOPS_GLUE_H
#define RT_LOOPS_GLUE_H

/* A C window on a worker's loop table for rt_loops_test.cc (rt_int.h uses
 * C11 atomics, which C++17 cannot include). */

#include <stddef.h>
#include <stdint.h>

#include "nrf_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rt_worker;

/* A worker with only its loop table. NULL: no memory. */
struct rt_worker *rtl_worker(void);
void rtl_free(struct rt_worker *w);
/* rt_loop_note() with Via field lines @p lines[0..n) (at most 64). */
void rtl_note(struct rt_worker *w, int kind, const char *const *lines, size_t n, int peer);
/* The tables of @p w[0..n_w) merged, as nrf_rt_loops_get() reads them. */
int rtl_read(const struct rt_worker *const *w, size_t n_w, struct nrf_rt_loop **v, size_t *n,
	uint64_t *drops);
/* Bytes one worker's table takes (allocated once, with the worker). */
size_t rtl_table_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* RT_LOOPS_GLUE_H */
