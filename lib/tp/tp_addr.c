/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address helpers shared by every back-end. Resolution is the only blocking
 * call of the module, which is why the header keeps it off the workers.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nrf_addr.h"
#include "nrf_err.h"
#include "nrf_tp.h"

int
nrf_tp_addr_parse(const char *host, uint16_t port, struct nrf_tp_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (host == NULL || host[0] == '\0')
		return NRF_EINVAL;
	if (inet_pton(AF_INET, host, out->ip) == 1) {
		out->family = 4;
	} else if (inet_pton(AF_INET6, host, out->ip) == 1) {
		out->family = 6;
	} else {
		return NRF_EINVAL;
	}
	out->port = port;
	return 0;
}

int
nrf_tp_addr_resolve(const char *host, uint16_t port, struct nrf_tp_addr *out)
{
	struct addrinfo hints, *res = NULL, *ai;
	int rc = NRF_ENOENT;

	if (host == NULL || host[0] == '\0')
		return NRF_EINVAL;
	if (nrf_tp_addr_parse(host, port, out) == 0)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return NRF_ENOENT;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		memset(out, 0, sizeof(*out));
		out->port = port;
		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;

			out->family = 4;
			memcpy(out->ip, &sin->sin_addr, 4);
			rc = 0;
			break;
		}
		if (ai->ai_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ai->ai_addr;

			out->family = 6;
			memcpy(out->ip, &sin6->sin6_addr, 16);
			rc = 0;
			break;
		}
	}
	freeaddrinfo(res);
	return rc;
}

char *
nrf_tp_addr_format(const struct nrf_tp_addr *a, char *buf, size_t cap)
{
	return nrf_addr_format(a->family, a->ip, a->port, buf, cap);
}
