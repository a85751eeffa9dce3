/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/common/nrf_addr.c and nrf_sys.c. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include <cstring>

#include "nrf_addr.h"
#include "nrf_err.h"
#include "nrf_sys.h"

namespace {

TEST(Addr, Ipv4RoundTripsThroughSockaddr)
{
	uint8_t ip[16] = {127, 0, 0, 1}, fam, out[16];
	uint16_t port;
	sockaddr_storage ss;
	socklen_t len = nrf_addr_to_sockaddr(4, ip, 8080, &ss);

	EXPECT_EQ(len, sizeof(sockaddr_in));
	EXPECT_EQ(ss.ss_family, AF_INET);
	EXPECT_EQ(ntohs(((sockaddr_in *)&ss)->sin_port), 8080);
	ASSERT_EQ(nrf_addr_from_sockaddr((sockaddr *)&ss, &fam, out, &port), 0);
	EXPECT_EQ(fam, 4);
	EXPECT_EQ(port, 8080);
	EXPECT_EQ(memcmp(out, ip, 4), 0);
}

TEST(Addr, Ipv6IsBracketedInText)
{
	uint8_t ip[16];
	char buf[NRF_ADDR_TEXT_MAX];
	sockaddr_storage ss;

	ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::1", ip), 1);
	EXPECT_EQ(nrf_addr_to_sockaddr(6, ip, 443, &ss), sizeof(sockaddr_in6));
	EXPECT_STREQ(nrf_sockaddr_format((sockaddr *)&ss, buf, sizeof(buf)), "[2001:db8::1]:443");
	EXPECT_STREQ(nrf_addr_format(6, ip, 443, buf, sizeof(buf)), "[2001:db8::1]:443");
}

TEST(Addr, TextOfIpv4AndOfAnUnsetFamily)
{
	uint8_t ip[16] = {10, 0, 0, 2};
	char buf[NRF_ADDR_TEXT_MAX], small[6];

	EXPECT_STREQ(nrf_addr_format(4, ip, 8000, buf, sizeof(buf)), "10.0.0.2:8000");
	EXPECT_STREQ(nrf_addr_format(0, ip, 8000, buf, sizeof(buf)), "?:8000");
	EXPECT_STREQ(nrf_addr_format(4, ip, 8000, small, sizeof(small)), "10.0.");
}

TEST(Addr, OtherFamiliesAreRefused)
{
	sockaddr_storage ss = {};
	uint8_t fam = 9, ip[16];
	uint16_t port = 9;

	ss.ss_family = AF_UNIX;
	EXPECT_EQ(nrf_addr_from_sockaddr((sockaddr *)&ss, &fam, ip, &port), NRF_EINVAL);
	EXPECT_EQ(fam, 0);
	EXPECT_EQ(port, 0);
}

TEST(Sys, RaiseNofileReachesTheHardLimit)
{
	rlimit rl;

	ASSERT_EQ(nrf_raise_nofile(), 0);
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	EXPECT_EQ(rl.rlim_cur, rl.rlim_max);
}

} // namespace

TEST(Addr, HostPortSplitsIpv4Ipv6AndRefusesMalformed)
{
	char a[64];
	uint16_t port = 0;

	ASSERT_EQ(nrf_hostport_split("127.0.0.1:9090", a, sizeof(a), &port), 0);
	EXPECT_STREQ(a, "127.0.0.1");
	EXPECT_EQ(port, 9090);
	ASSERT_EQ(nrf_hostport_split("[::1]:0", a, sizeof(a), &port), 0);
	EXPECT_STREQ(a, "::1");
	EXPECT_EQ(port, 0);
	for (const char *bad : {"127.0.0.1", "127.0.0.1:", ":80", "[]:80", "h:65536", "h:-1", "h:8x"})
		EXPECT_EQ(nrf_hostport_split(bad, a, sizeof(a), &port), -1) << bad;
	EXPECT_EQ(nrf_hostport_split("abcdef:1", a, 6, &port), -1); /* no room for the NUL */
}
