// SPDX-License-Identifier: BSD-3-Clause
// runtime.transport and runtime.dpdk (lib/cfg/nrf_cfg.c): defaults, bounds,
// the rules across fields, emit and compare.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

// kMinimal on the DPDK transport with a port address.
std::string
Dpdk(const char *ip = R"("10.10.1.2")")
{
	std::string d = With(kMinimal, "/runtime/transport", R"("dpdk")");
	return ip != nullptr ? With(d, "/runtime/dpdk/ipv4Address", ip) : d;
}

std::string
Emit(const nrf_cfg *cfg, nrf_cfg_group g)
{
	int err = 1;
	char *s = nrf_cfg_emit(cfg, g, 0, &err);
	EXPECT_EQ(err, 0);
	std::string out = s != nullptr ? s : "";
	free(s);
	return out;
}

} // namespace

TEST(CfgDpdk, TransportDefaultsToKernelWithEveryPortDefault)
{
	Loaded l = Load(kMinimal);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_runtime &rt = l.cfg->rt;
	EXPECT_EQ(rt.transport, NRF_TRANSPORT_KERNEL);
	EXPECT_STREQ(rt.dpdk.ipv4_address, "");
	EXPECT_EQ(rt.dpdk.prefix_length, 24);
	EXPECT_STREQ(rt.dpdk.gateway, "");
	EXPECT_EQ(rt.dpdk.port_id, -1);
	EXPECT_EQ(rt.dpdk.rx_descriptors, 1024u);
	EXPECT_EQ(rt.dpdk.tx_descriptors, 1024u);
	EXPECT_EQ(rt.dpdk.mbufs, 8191u);
	EXPECT_EQ(rt.dpdk.mbuf_cache, 256u);
	EXPECT_EQ(rt.dpdk.burst, 32u);
	EXPECT_EQ(rt.dpdk.idle_spin, 512u);
	EXPECT_EQ(rt.dpdk.idle_sleep_us, 100u);
	EXPECT_EQ(rt.dpdk.idle_sleep_max_us, 1000u);
	EXPECT_EQ(rt.dpdk.arp_probe_ms, 300u);
	EXPECT_EQ(rt.dpdk.link_wait_ms, 2000u);
	EXPECT_EQ(rt.dpdk.arp_rate, 200u);
	EXPECT_EQ(rt.dpdk.arp_stranger_rate, 20u);
	EXPECT_EQ(rt.dpdk.stray_rst_rate, 200u);
	EXPECT_EQ(rt.dpdk.challenge_ack_rate, 1000u);
	EXPECT_EQ(rt.dpdk.syn_cookie_from, 128u);
	EXPECT_EQ(rt.dpdk.syn_rcvd_timeout_ms, 20000u);
	EXPECT_EQ(rt.dpdk.synack_retries, 5u);
}

TEST(CfgDpdk, LoadsEveryPortSetting)
{
	std::string d = Dpdk(R"("192.0.2.10")");
	d = With(d, "/runtime/dpdk/prefixLength", "28");
	d = With(d, "/runtime/dpdk/gateway", R"("192.0.2.1")");
	d = With(d, "/runtime/dpdk/portId", "3");
	d = With(d, "/runtime/dpdk/rxDescriptors", "2048");
	d = With(d, "/runtime/dpdk/txDescriptors", "512");
	d = With(d, "/runtime/dpdk/mbufs", "16383");
	d = With(d, "/runtime/dpdk/mbufCache", "128");
	d = With(d, "/runtime/dpdk/mtu", "9000");
	d = With(d, "/runtime/dpdk/burst", "64");
	d = With(d, "/runtime/dpdk/idleSpin", "0");
	d = With(d, "/runtime/dpdk/idleSleepUs", "0");
	d = With(d, "/runtime/dpdk/idleSleepMaxUs", "0");
	d = With(d, "/runtime/dpdk/arpProbeMs", "0");
	d = With(d, "/runtime/dpdk/linkWaitMs", "100");
	d = With(d, "/runtime/dpdk/arpRequestsPerSecond", "50");
	d = With(d, "/runtime/dpdk/arpStrangerRequestsPerSecond", "5");
	d = With(d, "/runtime/dpdk/strayResetsPerSecond", "10");
	d = With(d, "/runtime/dpdk/challengeAcksPerSecond", "100");
	d = With(d, "/runtime/dpdk/synCookieThreshold", "1");
	d = With(d, "/runtime/dpdk/synRcvdTimeoutMs", "3000");
	d = With(d, "/runtime/dpdk/synAckRetries", "1");
	Loaded l = Load(d);
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	const nrf_cfg_dpdk &p = l.cfg->rt.dpdk;
	EXPECT_EQ(l.cfg->rt.transport, NRF_TRANSPORT_DPDK);
	EXPECT_STREQ(p.ipv4_address, "192.0.2.10");
	EXPECT_EQ(p.prefix_length, 28);
	EXPECT_STREQ(p.gateway, "192.0.2.1");
	EXPECT_EQ(p.port_id, 3);
	EXPECT_EQ(p.rx_descriptors, 2048u);
	EXPECT_EQ(p.tx_descriptors, 512u);
	EXPECT_EQ(p.mbufs, 16383u);
	EXPECT_EQ(p.mbuf_cache, 128u);
	EXPECT_EQ(p.burst, 64u);
	EXPECT_EQ(p.idle_spin, 0u);
	EXPECT_EQ(p.idle_sleep_us, 0u);
	EXPECT_EQ(p.idle_sleep_max_us, 0u);
	EXPECT_EQ(p.arp_probe_ms, 0u);
	EXPECT_EQ(p.link_wait_ms, 100u);
	EXPECT_EQ(p.arp_rate, 50u);
	EXPECT_EQ(p.arp_stranger_rate, 5u);
	EXPECT_EQ(p.stray_rst_rate, 10u);
	EXPECT_EQ(p.challenge_ack_rate, 100u);
	EXPECT_EQ(p.syn_cookie_from, 1u);
	EXPECT_EQ(p.syn_rcvd_timeout_ms, 3000u);
	EXPECT_EQ(p.synack_retries, 1u);
	EXPECT_EQ(p.mtu, 9000u);
}

TEST(CfgDpdk, MtuIsTheDevicesOrFrom576To9000)
{
	EXPECT_EQ(Load(Dpdk()).cfg->rt.dpdk.mtu, 0u);
	for (const char *ok : {"0", "576", "1500", "9000"}) {
		Loaded l = Load(With(Dpdk(), "/runtime/dpdk/mtu", ok));
		EXPECT_NE(l.cfg, nullptr) << ok << "\n" << l.Dump();
	}
	for (const char *bad : {"1", "575", "9001", "-1", "65536"}) {
		Loaded l = Load(With(Dpdk(), "/runtime/dpdk/mtu", bad));
		EXPECT_EQ(l.cfg, nullptr) << bad;
		EXPECT_TRUE(l.Has("/runtime/dpdk/mtu", "out of range")) << bad << "\n" << l.Dump();
	}
}

TEST(CfgDpdk, NullPortIdMeansTheOnlyPort)
{
	Loaded l = Load(With(Dpdk(), "/runtime/dpdk/portId", "null"));
	ASSERT_NE(l.cfg, nullptr) << l.Dump();
	EXPECT_EQ(l.cfg->rt.dpdk.port_id, -1);
}

TEST(CfgDpdk, RejectsAnUnknownTransport)
{
	Loaded l = Load(With(kMinimal, "/runtime/transport", R"("xdp")"));
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_ECONFIG);
	EXPECT_TRUE(l.Has("/runtime/transport", "expected kernel, dpdk")) << l.Dump();
}

TEST(CfgDpdk, DpdkTransportRequiresThePortAddress)
{
	Loaded l = Load(Dpdk(nullptr));
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_TRUE(l.Has("/runtime/dpdk/ipv4Address", "missing required field")) << l.Dump();
	// the rules that need no port address are still checked
	Loaded lo = Load(With(Dpdk(nullptr), "/runtime/localNrf", R"({"address": "127.0.0.1"})"));
	EXPECT_TRUE(lo.Has("/runtime/dpdk/ipv4Address", "missing")) << lo.Dump();
	EXPECT_TRUE(lo.Has("/runtime/localNrf/address", "not reachable")) << lo.Dump();
	// the kernel transport does not need it
	EXPECT_NE(Load(kMinimal).cfg, nullptr);
}

TEST(CfgDpdk, RejectsOutOfRangeAndWrongTypesEachAtItsPointer)
{
	std::string d = Dpdk();
	d = With(d, "/runtime/dpdk/prefixLength", "33");
	d = With(d, "/runtime/dpdk/portId", "1024");
	d = With(d, "/runtime/dpdk/rxDescriptors", "32");
	d = With(d, "/runtime/dpdk/txDescriptors", "20000");
	d = With(d, "/runtime/dpdk/burst", "0");
	d = With(d, "/runtime/dpdk/mbufCache", "513");
	d = With(d, "/runtime/dpdk/idleSleepUs", "100001");
	d = With(d, "/runtime/dpdk/arpProbeMs", R"("300")");
	d = With(d, "/runtime/dpdk/gateway", R"("gw.example.com")");
	d = With(d, "/runtime/dpdk/speed", "10");
	Loaded l = Load(d);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_EQ(l.err, NRF_ECONFIG);
	EXPECT_TRUE(l.Has("/runtime/dpdk/prefixLength", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/portId", "not in 0..1023")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/rxDescriptors", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/txDescriptors", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/burst", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/mbufCache", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/idleSleepUs", "out of range")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/arpProbeMs", "wrong type")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/gateway", "invalid IPv4")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/speed", "unknown field")) << l.Dump();
}

TEST(CfgDpdk, RejectsAPortAddressThatIsNoUsableHost)
{
	for (const char *ip : {R"("10.10.1.0")", R"("10.10.1.255")", R"("127.0.0.5")",
		     R"("0.0.0.0")", R"("224.0.0.1")", R"("::1")"}) {
		Loaded l = Load(Dpdk(ip));
		EXPECT_EQ(l.cfg, nullptr) << ip;
		EXPECT_TRUE(l.Has("/runtime/dpdk/ipv4Address", "")) << ip << "\n" << l.Dump();
	}
	// a /31 has no network or broadcast address (RFC 3021)
	std::string d = With(Dpdk(R"("10.10.1.0")"), "/runtime/dpdk/prefixLength", "31");
	EXPECT_NE(Load(d).cfg, nullptr) << Load(d).Dump();
}

TEST(CfgDpdk, GatewayMustBeOnThePortNetworkAndNotThePortItself)
{
	Loaded off = Load(With(Dpdk(), "/runtime/dpdk/gateway", R"("10.10.2.1")"));
	EXPECT_EQ(off.cfg, nullptr);
	EXPECT_TRUE(off.Has("/runtime/dpdk/gateway", "not on the port's network 10.10.1.2/24"))
		<< off.Dump();
	Loaded self = Load(With(Dpdk(), "/runtime/dpdk/gateway", R"("10.10.1.2")"));
	EXPECT_EQ(self.cfg, nullptr);
	EXPECT_TRUE(self.Has("/runtime/dpdk/gateway", "not on the port's network")) << self.Dump();
	Loaded ok = Load(With(Dpdk(), "/runtime/dpdk/gateway", R"("10.10.1.1")"));
	EXPECT_NE(ok.cfg, nullptr) << ok.Dump();
}

TEST(CfgDpdk, PoolMustCoverTheRingsBurstsAndCache)
{
	Loaded l = Load(With(Dpdk(), "/runtime/dpdk/mbufs", "2047"));
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_TRUE(l.Has("/runtime/dpdk/mbufs", "cannot fill 1024 RX + 1024 TX descriptors"))
		<< l.Dump();
	// exactly enough: 1024 + 1024 + 2 * 32 + 256
	Loaded ok = Load(With(Dpdk(), "/runtime/dpdk/mbufs", "2368"));
	EXPECT_NE(ok.cfg, nullptr) << ok.Dump();
	// the largest cache (512) is within 2/3 of the smallest pool (1023)
	std::string d = With(Dpdk(), "/runtime/dpdk/mbufs", "1023");
	d = With(d, "/runtime/dpdk/rxDescriptors", "64");
	d = With(d, "/runtime/dpdk/txDescriptors", "64");
	d = With(d, "/runtime/dpdk/mbufCache", "512");
	EXPECT_NE(Load(d).cfg, nullptr) << Load(d).Dump();
}

TEST(CfgDpdk, IdleSleepMaxMayNotBeBelowTheFirstSleep)
{
	std::string d = With(Dpdk(), "/runtime/dpdk/idleSleepUs", "500");
	d = With(d, "/runtime/dpdk/idleSleepMaxUs", "200");
	Loaded l = Load(d);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_TRUE(l.Has("/runtime/dpdk/idleSleepMaxUs", "below idleSleepUs 500")) << l.Dump();
}

TEST(CfgDpdk, ListenersMustBeTheAnyAddressOrThePortAddress)
{
	std::string d = With(Dpdk(), "/runtime/listen",
		R"([{"address": "0.0.0.0", "port": 8080}, {"address": "10.10.1.2", "port": 8081},)"
		R"( {"address": "10.10.1.3", "port": 8082}, {"address": "::", "port": 8083},)"
		R"( {"address": "2001:db8::5", "port": 8084}])");
	Loaded l = Load(d);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_FALSE(l.Has("/runtime/listen/0/address", "")) << l.Dump();
	EXPECT_FALSE(l.Has("/runtime/listen/1/address", "")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/listen/2/address",
		"only 0.0.0.0, :: or its own address 10.10.1.2"))
		<< l.Dump();
	// "::" takes IPv4 too, as a kernel socket without IPV6_V6ONLY does
	EXPECT_FALSE(l.Has("/runtime/listen/3/address", "")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/listen/4/address", "only 0.0.0.0")) << l.Dump();
	// the same listeners are fine on kernel sockets
	EXPECT_NE(Load(With(d, "/runtime/transport", R"("kernel")")).cfg, nullptr);
}

TEST(CfgDpdk, LocalNrfMustBeReachableOverThePort)
{
	for (const char *addr : {"127.0.0.1", "localhost", "::1", "10.10.1.2", "2001:db8::3"}) {
		std::string d = With(Dpdk(), "/runtime/localNrf",
			(std::string(R"({"address": ")") + addr + R"(", "port": 8080})").c_str());
		Loaded l = Load(d);
		EXPECT_EQ(l.cfg, nullptr) << addr;
		EXPECT_TRUE(l.Has("/runtime/localNrf/address", "")) << addr << "\n" << l.Dump();
	}
	std::string ok = With(Dpdk(), "/runtime/localNrf", R"({"address": "10.10.1.3", "port": 8080})");
	EXPECT_NE(Load(ok).cfg, nullptr) << Load(ok).Dump();
	std::string name = With(Dpdk(), "/runtime/localNrf",
		R"({"address": "nrf-a-local.example.com", "port": 8080})");
	EXPECT_NE(Load(name).cfg, nullptr) << Load(name).Dump();
}

TEST(CfgDpdk, EveryProblemIsListedAtOnce)
{
	std::string d = With(Dpdk(R"("10.10.1.0")"), "/runtime/dpdk/gateway", R"("10.9.9.9")");
	d = With(d, "/runtime/dpdk/mbufs", "1023");
	d = With(d, "/runtime/localNrf", R"({"address": "127.0.0.1"})");
	d = With(d, "/generalOptions/ocnrfPort", "0");
	Loaded l = Load(d);
	EXPECT_EQ(l.cfg, nullptr);
	EXPECT_TRUE(l.Has("/runtime/dpdk/ipv4Address", "not a usable host")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/gateway", "")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/dpdk/mbufs", "")) << l.Dump();
	EXPECT_TRUE(l.Has("/runtime/localNrf/address", "")) << l.Dump();
	EXPECT_TRUE(l.Has("/generalOptions/ocnrfPort", "out of range")) << l.Dump();
}

TEST(CfgDpdk, EmitsTransportAndPortAndReloadsToAnEqualSnapshot)
{
	std::string d = With(Dpdk(R"("192.0.2.10")"), "/runtime/dpdk/gateway", R"("192.0.2.1")");
	d = With(d, "/runtime/dpdk/idleSleepUs", "0");
	Loaded a = Load(d);
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	std::string rt = Emit(a.cfg.get(), NRF_CFG_RUNTIME);
	EXPECT_NE(rt.find(R"("transport":"dpdk")"), std::string::npos) << rt;
	EXPECT_NE(rt.find(R"("dpdk":{"ipv4Address":"192.0.2.10","prefixLength":24,)"
			  R"("gateway":"192.0.2.1","ipv6Address":"","ipv6PrefixLength":64,)"
			  R"("ipv6Gateway":"","portId":null,)"),
		std::string::npos)
		<< rt;
	EXPECT_NE(rt.find(R"("idleSleepUs":0,)"), std::string::npos) << rt;
	Loaded b = Load(Emit(a.cfg.get(), NRF_CFG_ALL));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_TRUE(nrf_cfg_equal(a.cfg.get(), b.cfg.get()));

	Loaded c = Load(With(d, "/runtime/dpdk/portId", "2"));
	ASSERT_NE(c.cfg, nullptr) << c.Dump();
	EXPECT_NE(Emit(c.cfg.get(), NRF_CFG_RUNTIME).find(R"("portId":2,)"), std::string::npos);
	Loaded c2 = Load(Emit(c.cfg.get(), NRF_CFG_ALL));
	ASSERT_NE(c2.cfg, nullptr);
	EXPECT_EQ(c2.cfg->rt.dpdk.port_id, 2);
}

TEST(CfgDpdk, EqualSeesEveryPortDifference)
{
	std::string base = Dpdk();
	Loaded b = Load(base);
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	EXPECT_TRUE(nrf_cfg_dpdk_equal(&b.cfg->rt.dpdk, &b.cfg->rt.dpdk));
	const std::pair<const char *, const char *> changes[] = {
		{"/runtime/transport", R"("kernel")"},
		{"/runtime/dpdk/ipv4Address", R"("10.10.1.3")"},
		{"/runtime/dpdk/prefixLength", "16"},
		{"/runtime/dpdk/gateway", R"("10.10.1.1")"},
		{"/runtime/dpdk/portId", "0"},
		{"/runtime/dpdk/rxDescriptors", "512"},
		{"/runtime/dpdk/txDescriptors", "512"},
		{"/runtime/dpdk/mbufs", "4095"},
		{"/runtime/dpdk/mbufCache", "64"},
		{"/runtime/dpdk/mtu", "9000"},
		{"/runtime/dpdk/burst", "16"},
		{"/runtime/dpdk/idleSpin", "1"},
		{"/runtime/dpdk/idleSleepUs", "50"},
		{"/runtime/dpdk/idleSleepMaxUs", "2000"},
		{"/runtime/dpdk/arpProbeMs", "0"},
		{"/runtime/dpdk/linkWaitMs", "0"},
		{"/runtime/dpdk/arpRequestsPerSecond", "1"},
		{"/runtime/dpdk/arpStrangerRequestsPerSecond", "1"},
		{"/runtime/dpdk/strayResetsPerSecond", "1"},
		{"/runtime/dpdk/challengeAcksPerSecond", "1"},
		{"/runtime/dpdk/synCookieThreshold", "2"},
		{"/runtime/dpdk/synRcvdTimeoutMs", "1000"},
		{"/runtime/dpdk/synAckRetries", "2"},
	};
	for (const auto &ch : changes) {
		Loaded o = Load(With(base, ch.first, ch.second));
		ASSERT_NE(o.cfg, nullptr) << ch.first << "\n" << o.Dump();
		EXPECT_FALSE(nrf_cfg_equal(b.cfg.get(), o.cfg.get())) << ch.first;
		if (std::string(ch.first) != "/runtime/transport") {
			EXPECT_FALSE(nrf_cfg_dpdk_equal(&b.cfg->rt.dpdk, &o.cfg->rt.dpdk)) << ch.first;
		}
	}
}

TEST(CfgDpdk, TransportNames)
{
	EXPECT_STREQ(nrf_cfg_transport_name(NRF_TRANSPORT_KERNEL), "kernel");
	EXPECT_STREQ(nrf_cfg_transport_name(NRF_TRANSPORT_DPDK), "dpdk");
	EXPECT_EQ(nrf_cfg_transport_name(static_cast<nrf_cfg_transport>(7)), nullptr);
}

TEST(CfgDpdk, Ipv6AddressDualStackAndIpv6Only)
{
	std::string dual = With(Dpdk(), "/runtime/dpdk/ipv6Address", R"("2001:db8:1::2")");
	dual = With(dual, "/runtime/dpdk/ipv6Gateway", R"("2001:db8:1::1")");
	dual = With(dual, "/runtime/listen",
		R"([{"address": "::", "port": 8080}, {"address": "2001:db8:1::2", "port": 8081},)"
		R"( {"address": "10.10.1.2", "port": 8082}])");
	dual = With(dual, "/runtime/localNrf", R"({"address": "2001:db8:1::3", "port": 8080})");
	Loaded a = Load(dual);
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	EXPECT_STREQ(a.cfg->rt.dpdk.ipv6_address, "2001:db8:1::2");
	EXPECT_EQ(a.cfg->rt.dpdk.ipv6_prefix_length, 64);
	Loaded b = Load(Emit(a.cfg.get(), NRF_CFG_ALL));
	ASSERT_NE(b.cfg, nullptr) << b.Dump();

	// IPv6 only: no ipv4Address; a link-local gateway is on-link
	std::string only = With(Dpdk(nullptr), "/runtime/dpdk/ipv6Address", R"("fd00:5::2")");
	only = With(only, "/runtime/dpdk/ipv6PrefixLength", "48");
	only = With(only, "/runtime/dpdk/ipv6Gateway", R"("fe80::1")");
	only = With(only, "/runtime/listen", R"([{"address": "::", "port": 8080}])");
	Loaded o = Load(only);
	ASSERT_NE(o.cfg, nullptr) << o.Dump();

	// ... where IPv4 listeners and an IPv4 local NRF cannot be served
	std::string v4 = With(only, "/runtime/listen", R"([{"address": "0.0.0.0", "port": 8080}])");
	v4 = With(v4, "/runtime/localNrf", R"({"address": "10.10.1.3", "port": 8080})");
	Loaded p = Load(v4);
	EXPECT_EQ(p.cfg, nullptr);
	EXPECT_TRUE(p.Has("/runtime/listen/0/address", "only 0.0.0.0, :: or its own address "
						   "fd00:5::2")) << p.Dump();
	EXPECT_TRUE(p.Has("/runtime/localNrf/address", "no ipv4Address")) << p.Dump();

	// neither family: the port has no address
	Loaded n = Load(Dpdk(nullptr));
	EXPECT_EQ(n.cfg, nullptr);
	EXPECT_TRUE(n.Has("/runtime/dpdk/ipv4Address", "ipv4Address or ipv6Address")) << n.Dump();
}

TEST(CfgDpdk, Ipv6AddressAndGatewayAreValidated)
{
	struct {
		const char *addr, *prefix, *gw, *ptr, *what;
	} bad[] = {
		{"2001:db8::g", "64", "", "/runtime/dpdk/ipv6Address", "invalid IPv6 address"},
		{"fe80::2", "64", "", "/runtime/dpdk/ipv6Address", "link-local"},
		{"ff02::1", "64", "", "/runtime/dpdk/ipv6Address", "not a usable host address"},
		{"::ffff:10.1.1.1", "64", "", "/runtime/dpdk/ipv6Address", "IPv4-mapped"},
		{"2001:db8::2", "65", "", "/runtime/dpdk/ipv6PrefixLength", "1..64"},
		{"2001:db8::2", "0", "", "/runtime/dpdk/ipv6PrefixLength", "out of range"},
		{"2001:db8::2", "64", "2001:db9::1", "/runtime/dpdk/ipv6Gateway",
			"not on the port's network 2001:db8::2/64"},
		{"2001:db8::2", "64", "2001:db8::2", "/runtime/dpdk/ipv6Gateway", "not on"},
		{"2001:db8::2", "64", "10.10.1.1", "/runtime/dpdk/ipv6Gateway", "invalid IPv6"},
		{"", "64", "2001:db8::1", "/runtime/dpdk/ipv6Gateway", "needs ipv6Address"},
	};
	for (const auto &b : bad) {
		std::string d = With(Dpdk(), "/runtime/dpdk/ipv6Address",
			(std::string("\"") + b.addr + "\"").c_str());
		d = With(d, "/runtime/dpdk/ipv6PrefixLength", b.prefix);
		d = With(d, "/runtime/dpdk/ipv6Gateway", (std::string("\"") + b.gw + "\"").c_str());
		Loaded l = Load(d);
		EXPECT_EQ(l.cfg, nullptr) << b.addr << " " << b.gw;
		EXPECT_TRUE(l.Has(b.ptr, b.what)) << b.addr << " " << b.gw << "\n" << l.Dump();
	}
	// an IPv6 local NRF needs an IPv6 address on the port
	std::string d = With(Dpdk(), "/runtime/localNrf",
		R"({"address": "2001:db8::3", "port": 8080})");
	Loaded l = Load(d);
	EXPECT_TRUE(l.Has("/runtime/localNrf/address", "no ipv6Address")) << l.Dump();
}
