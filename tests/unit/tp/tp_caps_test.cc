/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/tp: what this build's DPDK transport can carry
 * (nrf_tp_dpdk_caps(), nrf_tp_dpdk_caps_check()). */
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nrf_err.h"
#include "nrf_tp_dpdk.h"

namespace {

TEST(TpCaps, AgreeWithTheBuild)
{
	struct nrf_tp_dpdk_caps c;

	nrf_tp_dpdk_caps(&c);
	ASSERT_NE(c.lwip, nullptr);
	if (nrf_tp_dpdk_ops() == nullptr) {
		EXPECT_STREQ(c.lwip, "none");
		EXPECT_EQ(c.max_mtu, 0);
		EXPECT_FALSE(c.vlan);
		return;
	}
	EXPECT_TRUE(strcmp(c.lwip, "own") == 0 || strcmp(c.lwip, "debian") == 0) << c.lwip;
	EXPECT_GE(c.max_mtu, 1500);
	EXPECT_LE(c.max_mtu, 9000);
	/* The MTU follows the compiled TCP_MSS: the own build 8960, Debian's 1460. */
	EXPECT_EQ(c.max_mtu, c.tcp_mss + 40 > 9000 ? 9000 : c.tcp_mss + 40 < 1500 ? 1500 :
		c.tcp_mss + 40);
	EXPECT_TRUE(c.vlan);
}

TEST(TpCaps, CheckNamesFieldAndLimit)
{
	struct nrf_tp_dpdk_caps c;
	const char *field = "untouched";
	char why[256];

	nrf_tp_dpdk_caps(&c);
	if (c.max_mtu == 0)
		GTEST_SKIP() << "built without the DPDK transport";
	/* What every build carries. */
	EXPECT_EQ(nrf_tp_dpdk_caps_check(0, 0, false, &field, why, sizeof(why)), 0);
	EXPECT_EQ(nrf_tp_dpdk_caps_check(1500, 100, false, &field, why, sizeof(why)), 0);
	EXPECT_EQ(nrf_tp_dpdk_caps_check(c.max_mtu, 4094, false, &field, why, sizeof(why)), 0);
	EXPECT_STREQ(field, "untouched");
	/* One more than it carries: the field and the limit are named. */
	ASSERT_EQ(nrf_tp_dpdk_caps_check(c.max_mtu + 1, 0, false, &field, why, sizeof(why)),
		NRF_EINVAL);
	EXPECT_STREQ(field, "/runtime/dpdk/mtu");
	EXPECT_NE(std::string(why).find("carries at most MTU " + std::to_string(c.max_mtu)),
		std::string::npos) << why;
	/* IPv6 as the lwIP in use was built. */
	field = "untouched";
	EXPECT_EQ(nrf_tp_dpdk_caps_check(0, 0, true, &field, why, sizeof(why)),
		c.ipv6 ? 0 : NRF_EINVAL);
	if (!c.ipv6) {
		EXPECT_STREQ(field, "/runtime/dpdk");
	}
	/* A short buffer is cut, NUL-terminated; no buffer at all is allowed. */
	ASSERT_EQ(nrf_tp_dpdk_caps_check(9001, 0, false, nullptr, why, 8), NRF_EINVAL);
	EXPECT_EQ(strlen(why), 7u);
	EXPECT_EQ(nrf_tp_dpdk_caps_check(9001, 0, false, nullptr, nullptr, 0), NRF_EINVAL);
}

} // namespace
