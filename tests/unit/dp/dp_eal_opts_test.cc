// Tests of lib/dp/dp_eal_opts.c: the one EAL option table (DPDK 22.11).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nrf_dp.h"
#include "nrf_err.h"

namespace {

// argv for the scan: argv[0] is the program name, as rte_eal_init() wants.
struct Argv {
	std::vector<std::string> s;
	std::vector<char *> p;

	explicit Argv(std::vector<std::string> args) : s(std::move(args))
	{
		s.insert(s.begin(), "nrfwd");
		for (auto &a : s)
			p.push_back(&a[0]);
		p.push_back(nullptr);
	}
	int argc() const { return (int)s.size(); }
	char *const *argv() const { return p.data(); }
};

struct nrf_dp_eal_args
Scan(std::vector<std::string> args, int *rc = nullptr)
{
	Argv a(std::move(args));
	struct nrf_dp_eal_args sc;
	int r = nrf_dp_eal_scan(a.argc(), a.argv(), &sc);

	if (rc != nullptr)
		*rc = r;
	return sc;
}

} // namespace

TEST(DpEalOpts, FindsLongAndShortFormsWithAndWithoutValues)
{
	const nrf_dp_eal_opt *o = nrf_dp_eal_opt_find("--vdev=net_tap0");
	ASSERT_NE(o, nullptr);
	EXPECT_STREQ(o->name, "--vdev");
	EXPECT_EQ(o->arg, NRF_DP_EAL_ARG_REQUIRED);
	EXPECT_EQ(nrf_dp_eal_opt_find("--vdev"), o);

	o = nrf_dp_eal_opt_find("-a");
	ASSERT_NE(o, nullptr);
	EXPECT_STREQ(o->name, "--allow");
	EXPECT_EQ(nrf_dp_eal_opt_find("-a0000:00:04.0"), o);
	EXPECT_EQ(nrf_dp_eal_opt_find("--allow=0000:00:04.0"), o);
	EXPECT_TRUE(o->flags & NRF_DP_EAL_F_PCI_LIMIT);

	o = nrf_dp_eal_opt_find("-l0-1");
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->short_name, 'l');
	EXPECT_EQ(o->arg, NRF_DP_EAL_ARG_REQUIRED);
}

TEST(DpEalOpts, KnowsWhichOptionsTakeValues)
{
	struct Case {
		const char *arg;
		enum nrf_dp_eal_arg want;
	} cases[] = {
		{"--lcores", NRF_DP_EAL_ARG_REQUIRED},
		{"--file-prefix", NRF_DP_EAL_ARG_REQUIRED},
		{"--log-level", NRF_DP_EAL_ARG_REQUIRED},
		{"--proc-type", NRF_DP_EAL_ARG_REQUIRED},
		{"--socket-mem", NRF_DP_EAL_ARG_REQUIRED},
		{"-m", NRF_DP_EAL_ARG_REQUIRED},
		{"-S", NRF_DP_EAL_ARG_REQUIRED},
		{"--huge-unlink", NRF_DP_EAL_ARG_OPTIONAL},
		{"--huge-worker-stack", NRF_DP_EAL_ARG_OPTIONAL},
		{"--no-pci", NRF_DP_EAL_ARG_NONE},
		{"--in-memory", NRF_DP_EAL_ARG_NONE},
		{"--no-telemetry", NRF_DP_EAL_ARG_NONE},
		{"-h", NRF_DP_EAL_ARG_NONE},
		{"-v", NRF_DP_EAL_ARG_NONE},
	};

	for (const auto &c : cases) {
		const nrf_dp_eal_opt *o = nrf_dp_eal_opt_find(c.arg);

		ASSERT_NE(o, nullptr) << c.arg;
		EXPECT_EQ(o->arg, c.want) << c.arg;
	}
}

// DPDK 22.11 has no -L (its short options are "a:b:c:s:d:hl:S:m:n:r:v"): one
// old copy thought -L took a value and skipped the argument after it.
TEST(DpEalOpts, DashCapitalLIsNotAnOptionOf2211)
{
	int rc;

	EXPECT_EQ(nrf_dp_eal_opt_find("-L"), nullptr);
	struct nrf_dp_eal_args sc = Scan({"--no-pci", "-L", "--in-memory"}, &rc);
	EXPECT_EQ(rc, NRF_EINVAL);
	EXPECT_EQ(sc.bad, 2);
	EXPECT_EQ(sc.why, NRF_DP_EAL_UNKNOWN);
	// The argument after it is not swallowed as a value.
	EXPECT_TRUE(sc.in_memory);
	EXPECT_TRUE(sc.pci_limited);
}

// --syslog requires a value in 22.11, also as the next argument: one old copy
// refused "--syslog daemon" ("daemon" was taken for a stray argument).
TEST(DpEalOpts, SyslogTakesTheNextArgumentAsItsValue)
{
	int rc;
	struct nrf_dp_eal_args sc = Scan({"--syslog", "daemon", "--no-pci"}, &rc);

	EXPECT_EQ(rc, 0);
	EXPECT_EQ(sc.bad, -1);
	EXPECT_TRUE(sc.pci_limited);

	sc = Scan({"--no-pci", "--syslog=daemon"}, &rc);
	EXPECT_EQ(rc, 0);

	sc = Scan({"--no-pci", "--syslog"}, &rc);
	EXPECT_EQ(rc, NRF_EINVAL);
	EXPECT_EQ(sc.bad, 2);
	EXPECT_EQ(sc.why, NRF_DP_EAL_NO_VALUE);
}

TEST(DpEalOpts, ValuesAreSkippedNotScanned)
{
	int rc;
	// "--no-huge" here is the value of --file-prefix, not a flag.
	struct nrf_dp_eal_args sc = Scan({"--file-prefix", "--no-huge", "-l", "0,1", "--no-pci"}, &rc);

	EXPECT_EQ(rc, 0);
	EXPECT_FALSE(sc.no_huge);
	EXPECT_TRUE(sc.pci_limited);

	Argv a({"--vdev", "net_tap0", "-l0", "-l", "1", "--vdev=x", "--no-pci"});
	EXPECT_EQ(nrf_dp_eal_opt_span(a.argc(), a.argv(), 1), 2);
	EXPECT_EQ(nrf_dp_eal_opt_span(a.argc(), a.argv(), 3), 1);
	EXPECT_EQ(nrf_dp_eal_opt_span(a.argc(), a.argv(), 4), 2);
	EXPECT_EQ(nrf_dp_eal_opt_span(a.argc(), a.argv(), 6), 1);
	EXPECT_EQ(nrf_dp_eal_opt_span(a.argc(), a.argv(), 7), 1);
}

TEST(DpEalOpts, ScanStopsAtTheFirstDoubleDash)
{
	int rc;
	struct nrf_dp_eal_args sc = Scan({"--no-pci", "--", "--no-huge", "--config", "x.json"}, &rc);

	EXPECT_EQ(rc, 0);
	EXPECT_EQ(sc.end, 2);
	EXPECT_FALSE(sc.no_huge);
	EXPECT_EQ(sc.bad, -1);

	sc = Scan({"--no-pci"}, &rc);
	EXPECT_EQ(sc.end, 2); // argc
	EXPECT_EQ(nrf_dp_eal_opt_find("--"), nullptr);
}

TEST(DpEalOpts, CollectsTheFlagsTheStartUpChecksNeed)
{
	int rc;
	struct nrf_dp_eal_args sc = Scan({"-a", "0000:00:04.0", "--no-huge", "--no-shconf",
		"--log-level=debug", "--vdev=net_tap0", "--help"}, &rc);

	EXPECT_EQ(rc, 0);
	EXPECT_TRUE(sc.pci_limited);
	EXPECT_TRUE(sc.no_huge);
	EXPECT_TRUE(sc.no_shconf);
	EXPECT_TRUE(sc.log_level);
	EXPECT_TRUE(sc.vdev);
	EXPECT_TRUE(sc.help);
	EXPECT_FALSE(sc.in_memory);

	sc = Scan({"--allow=0000:00:04.0"});
	EXPECT_TRUE(sc.pci_limited);
	sc = Scan({"--in-memory", "-l", "0"});
	EXPECT_FALSE(sc.pci_limited);
	EXPECT_TRUE(sc.in_memory);
}

TEST(DpEalOpts, RefusesWhatTheEalWouldRefuse)
{
	struct Case {
		std::vector<std::string> args;
		int bad;
		enum nrf_dp_eal_bad why;
	} cases[] = {
		{{"--no-pci", "--no-such-eal-option"}, 2, NRF_DP_EAL_UNKNOWN},
		{{"--no-pci=1"}, 1, NRF_DP_EAL_UNKNOWN},       // a flag given a value
		{{"-hx"}, 1, NRF_DP_EAL_UNKNOWN},              // not a flag of 22.11
		{{"--master-lcore", "0"}, 1, NRF_DP_EAL_UNKNOWN}, // gone before 22.11
		{{"-w", "0000:00:04.0"}, 1, NRF_DP_EAL_UNKNOWN},  // gone in 22.11
		{{"stray"}, 1, NRF_DP_EAL_NOT_OPTION},
		{{"-"}, 1, NRF_DP_EAL_NOT_OPTION},
		{{"--no-pci", "-l"}, 2, NRF_DP_EAL_NO_VALUE},
		{{"--vdev"}, 1, NRF_DP_EAL_NO_VALUE},
	};

	for (const auto &c : cases) {
		int rc;
		struct nrf_dp_eal_args sc = Scan(c.args, &rc);

		EXPECT_EQ(rc, NRF_EINVAL) << c.args[0];
		EXPECT_EQ(sc.bad, c.bad) << c.args[0];
		EXPECT_EQ(sc.why, c.why) << c.args[0];
	}
	// The optional value is only ever attached.
	int rc;
	Scan({"--no-pci", "--huge-unlink=never"}, &rc);
	EXPECT_EQ(rc, 0);
	struct nrf_dp_eal_args sc = Scan({"--no-pci", "--huge-unlink", "never"}, &rc);
	EXPECT_EQ(rc, NRF_EINVAL);
	EXPECT_EQ(sc.bad, 3);
	EXPECT_EQ(sc.why, NRF_DP_EAL_NOT_OPTION);
}

// What a worker process takes over from its primary's EAL arguments.
TEST(DpEalOpts, WorkerOptionsAreMemoryLoggingAndPciLimits)
{
	for (const char *a : {"--no-pci", "-a", "--allow=x", "-b", "--huge-dir", "--log-level",
		"--iova-mode", "--base-virtaddr", "--trace", "--trace-dir", "--no-telemetry",
		"--legacy-mem", "--single-file-segments", "--no-hpet", "--huge-unlink"}) {
		const nrf_dp_eal_opt *o = nrf_dp_eal_opt_find(a);

		ASSERT_NE(o, nullptr) << a;
		EXPECT_TRUE(o->flags & NRF_DP_EAL_F_WORKER) << a;
	}
	// Its own: lcores, file prefix, process type, devices, memory mode.
	for (const char *a : {"-l", "--lcores", "--main-lcore", "--file-prefix", "--proc-type",
		"--vdev", "--in-memory", "--no-huge", "--no-shconf", "-m", "--socket-mem"}) {
		const nrf_dp_eal_opt *o = nrf_dp_eal_opt_find(a);

		ASSERT_NE(o, nullptr) << a;
		EXPECT_FALSE(o->flags & NRF_DP_EAL_F_WORKER) << a;
	}
}
