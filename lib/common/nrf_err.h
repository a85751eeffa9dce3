/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_ERR_H
#define NRF_ERR_H

/**
 * @file
 * The one list of error codes used by every nrfwd module.
 *
 * Functions return 0 on success or a negative NRF_E* code. Constructors
 * return NULL and store the code through an `int *err` out-parameter.
 * Verdicts (loop detected, forward to X) are results, never errors.
 * Codes at or below NRF_ERR_FATAL mean the process cannot go on safely.
 */

#ifdef __cplusplus
extern "C" {
#endif

#define NRF_ERRNO_MAP(X)                                                      \
	X(NRF_EINVAL, -1, "invalid argument")                                 \
	X(NRF_ENOMEM, -2, "out of memory")                                    \
	X(NRF_ERANGE, -3, "value out of range")                               \
	X(NRF_EPARSE, -4, "malformed input")                                  \
	X(NRF_ENOENT, -5, "not found")                                        \
	X(NRF_EEXIST, -6, "already exists")                                   \
	X(NRF_ETOOBIG, -7, "input exceeds a limit")                           \
	X(NRF_EIO, -8, "input/output error")                                  \
	X(NRF_EAGAIN, -9, "try again")                                        \
	X(NRF_ECONFIG, -10, "invalid configuration")                          \
	X(NRF_EMATCHER, -11, "pattern matcher failure")                       \
	X(NRF_ECLOSED, -12, "connection closed")                              \
	X(NRF_ETIMEDOUT, -13, "timed out")                                    \
	X(NRF_EPROTO, -14, "protocol error")                                  \
	X(NRF_EFULL, -15, "queue full")                                       \
	X(NRF_EADDRINUSE, -16, "address already in use")                      \
	X(NRF_EADDRNOTAVAIL, -17, "address not available")                   \
	X(NRF_ECONNREFUSED, -18, "connection refused")                        \
	X(NRF_EACCES, -19, "permission denied")                               \
	X(NRF_EUNREACH, -20, "network unreachable")                           \
	X(NRF_ECONNRESET, -21, "connection reset by peer")                    \
	X(NRF_EINTERNAL, -100, "internal error (fatal)")

enum nrf_err {
#define NRF_ERR_ENUM(name, val, msg) name = val,
	NRF_ERRNO_MAP(NRF_ERR_ENUM)
#undef NRF_ERR_ENUM
};

/** Codes at or below this value are fatal. */
#define NRF_ERR_FATAL NRF_EINTERNAL

/**
 * Human-readable text for an error code.
 *
 * @param err  0 or a negative NRF_E* code; anything else gives "unknown error".
 * @return a static string; never NULL. Any thread.
 */
const char *nrf_strerror(int err);

/**
 * Symbolic name of an error code ("NRF_EINVAL"); "OK" for 0,
 * "NRF_E?" for an unknown code. Static string; any thread.
 */
const char *nrf_errname(int err);

/**
 * The reason behind the last error code of this thread when the code alone
 * does not say it (the errno text and the file or address it was about):
 * set by the module that failed (control plane only, never per request),
 * taken by the caller that reports the failure, e.g. "cannot start: <why>"
 * instead of "cannot start: input/output error".
 *
 * nrf_err_why_set(): printf-style, at most 255 bytes kept; the last call
 * wins. nrf_err_why_take(): the reason set since the last take (a
 * thread-local buffer, valid until the next set on this thread), or NULL
 * when none was set; clears it.
 */
void nrf_err_why_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *nrf_err_why_take(void);

#ifdef __cplusplus
}
#endif
#endif /* NRF_ERR_H */
