/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_SYS_H
#define NRF_SYS_H

/**
 * @file
 * Process set-up helpers for programs (app/): called from main() before
 * any thread starts; and file names (any thread: no state).
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Raise the soft RLIMIT_NOFILE to the hard limit: a proxy's connections
 * (clients plus upstreams) need more than the usual 1024 descriptors.
 * @return 0 (raised, or already at the hard limit), or NRF_EIO when the
 *   limit could not be read or set (the old limit stays; callers go on).
 */
int nrf_raise_nofile(void);

/**
 * Split the file name @p path: its directory into @p dir (@p cap bytes
 * with the NUL, truncated beyond, as snprintf does): "." when @p path has
 * no '/', "/" for a name right under the root.
 * @return the base name: in @p path, after its last '/' ("" when @p path
 *   ends with one).
 */
const char *nrf_path_split(const char *path, char *dir, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* NRF_SYS_H */
