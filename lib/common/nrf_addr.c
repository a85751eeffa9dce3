/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address conversions (nrf_addr.h). They were written twice before (lib/tp
 * and lib/api to sockaddr, lib/tp and nrfstub to text): one copy keeps the
 * IPv6 bracket form and the byte order rules in one place.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrf_addr.h"
#include "nrf_err.h"

socklen_t
nrf_addr_to_sockaddr(uint8_t family, const uint8_t *ip, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip, 16);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	memcpy(&s4->sin_addr, ip, 4);
	return sizeof(*s4);
}

int
nrf_addr_from_sockaddr(const struct sockaddr *sa, uint8_t *family, uint8_t *ip, uint16_t *port)
{
	*family = 0;
	*port = 0;
	memset(ip, 0, 16);
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;

		*family = 6;
		*port = ntohs(s6->sin6_port);
		memcpy(ip, &s6->sin6_addr, 16);
		return 0;
	}
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;

		*family = 4;
		*port = ntohs(s4->sin_port);
		memcpy(ip, &s4->sin_addr, 4);
		return 0;
	}
	return NRF_EINVAL;
}

int
nrf_hostport_split(const char *s, char *addr, size_t cap, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	size_t n;
	char *end;
	long v;

	if (colon == NULL)
		return -1;
	v = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || v < 0 || v > 65535)
		return -1;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= cap)
		return -1;
	memcpy(addr, s, n);
	addr[n] = '\0';
	*port = (uint16_t)v;
	return 0;
}

char *
nrf_addr_format(uint8_t family, const uint8_t *ip, uint16_t port, char *buf, size_t cap)
{
	char t[INET6_ADDRSTRLEN];

	if (cap == 0)
		return buf;
	if (family == 4 && inet_ntop(AF_INET, ip, t, sizeof(t)) != NULL)
		snprintf(buf, cap, "%s:%u", t, port);
	else if (family == 6 && inet_ntop(AF_INET6, ip, t, sizeof(t)) != NULL)
		snprintf(buf, cap, "[%s]:%u", t, port);
	else
		snprintf(buf, cap, "?:%u", port);
	return buf;
}

char *
nrf_sockaddr_format(const struct sockaddr *sa, char *buf, size_t cap)
{
	uint8_t family, ip[16];
	uint16_t port;

	nrf_addr_from_sockaddr(sa, &family, ip, &port);
	return nrf_addr_format(family, ip, port, buf, cap);
}
