/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_TEST_NET_H
#define NRF_TEST_NET_H

/*
 * Sockets for unit tests that start real listeners (lib/rt workers, the
 * management API): included as "unit/test_net.h" by tests whose include
 * path has tests/.
 */

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP port on 127.0.0.1 that was free a moment ago (bound, read, closed:
 * another process may take it meanwhile, as with any such helper). */
static inline uint16_t
FreePort()
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a = {};
	socklen_t len = sizeof(a);

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (sockaddr *)&a, sizeof(a));
	getsockname(fd, (sockaddr *)&a, &len);
	close(fd);
	return ntohs(a.sin_port);
}

#endif /* NRF_TEST_NET_H */
