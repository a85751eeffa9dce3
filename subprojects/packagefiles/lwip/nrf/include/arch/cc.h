/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrfwd's lwIP port for Linux/glibc, NO_SYS=1 (decision 0010). Part of the
 * subprojects/packagefiles/lwip overlay that scripts/fetch_lwip.sh lays
 * over Debian's lwIP source.
 */
#ifndef NRF_LWIP_ARCH_CC_H
#define NRF_LWIP_ARCH_CC_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define LWIP_ERRNO_STDINCLUDE 1
#define LWIP_TIMEVAL_PRIVATE 0
/* glibc's htons() & co. are macros over bswap builtins */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

/* Random initial local ports; the process seeds rand() at start-up. */
#define LWIP_RAND() ((u32_t)rand())

/*
 * Assertions, where compiled in (NRF_LWIP_ASSERTS, meson -Dlwip_asserts;
 * lwipopts.h), never abort a production build (NDEBUG, buildtype=release):
 * they are logged (rate-limited) and counted, and lwIP goes on as its own
 * error handling allows. Other builds (the tests) abort, so a broken
 * invariant is found where it happens.
 */
void nrf_lwip_assert(const char *msg, const char *file, int line);
#define LWIP_PLATFORM_ASSERT(x) nrf_lwip_assert((x), __FILE__, __LINE__)
#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)

#endif /* NRF_LWIP_ARCH_CC_H */
