/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_ADDR_H
#define NRF_ADDR_H

/**
 * @file
 * IP endpoint conversions shared by every module that meets the socket
 * API: (family, address bytes, port) <-> struct sockaddr, and either to
 * text. lib/tp's struct nrf_tp_addr, lib/api's listener and nrfstub all
 * convert through here. No name lookup, no allocation; any thread.
 *
 * Family is 4 or 6 (0: unset), the address bytes are in network order
 * (IPv4 in the first 4 of 16), the port in host order.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Fill @p ss with the endpoint (@p family 6: sockaddr_in6; anything else:
 * sockaddr_in from ip[0..3]). @return its length for bind()/connect().
 */
socklen_t nrf_addr_to_sockaddr(
	uint8_t family, const uint8_t *ip, uint16_t port, struct sockaddr_storage *ss);

/**
 * The endpoint of @p sa (AF_INET or AF_INET6): @p family, @p ip (16
 * bytes, zeroed first) and @p port. @return 0, or NRF_EINVAL for another
 * address family (outputs zeroed).
 */
int nrf_addr_from_sockaddr(const struct sockaddr *sa, uint8_t *family, uint8_t *ip, uint16_t *port);

/** Longest text nrf_addr_format() writes, NUL included ("[v6]:65535"). */
#define NRF_ADDR_TEXT_MAX 56

/**
 * Split "ADDR:PORT" or "[V6]:PORT" (command-line options such as
 * --management) into @p addr (of @p cap bytes, NUL-terminated, brackets
 * removed) and @p port (0..65535). The address is not checked further.
 * @return 0, or -1 (no port, a bad port, an empty or too long address).
 * Any thread; no side effects on failure beyond @p addr.
 */
int nrf_hostport_split(const char *s, char *addr, size_t cap, uint16_t *port);

/**
 * "a.b.c.d:port", "[v6]:port", or "?:port" for another family, into
 * @p buf (@p cap bytes, truncated to fit, always NUL-terminated when
 * @p cap > 0). @return @p buf.
 */
char *nrf_addr_format(uint8_t family, const uint8_t *ip, uint16_t port, char *buf, size_t cap);

/** nrf_addr_format() of a socket address (AF_INET, AF_INET6). */
char *nrf_sockaddr_format(const struct sockaddr *sa, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* NRF_ADDR_H */
