/*
 * The seed's four figures as decision tests, on the demo configurations in
 * conf/demo and with the real Via scan: at NRF-A a request carrying A's
 * identity is a loop; at NRF-E a request carrying A's identity does not go
 * back to A — in NRF forwarding and in NRF Growth forwarding.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fwd_test_util.h"

namespace {

struct Nrf {
	explicit Nrf(const std::string &file)
	{
		cfg = LoadCfgFile(file);
		if (cfg == nullptr)
			return;
		int err = 0;
		db.reset(nrf_fwd_via_db_create(cfg.get(), &err));
		EXPECT_NE(db, nullptr) << err;
		scratch.reset(nrf_via_scratch_create(db.get(), &err));
		EXPECT_NE(scratch, nullptr) << err;
		table = MakeTable(cfg.get());
	}

	nrf_fwd_plan Request(std::vector<std::string> via_lines,
		const char *path = "/nnrf-disc/v1/nf-instances?target-nf-type=UDM")
	{
		std::vector<nrf_slice> lines;
		for (auto &l : via_lines)
			lines.push_back({l.data(), l.size()});
		nrf_via_result res;
		EXPECT_EQ(nrf_via_scan(db.get(), scratch.get(), lines.data(), lines.size(), &res), 0);
		nrf_fwd_op op = nrf_fwd_classify(nrf_slice_str("GET"), nrf_slice_str(path),
			nrf_slice_str(""));
		nrf_fwd_plan plan;
		EXPECT_EQ(nrf_fwd_decide(table.get(), &res, op, 0, nullptr, &plan), 0);
		return plan;
	}

	std::vector<std::string> Cands(const nrf_fwd_plan &p)
	{
		std::vector<std::string> v;
		for (uint16_t i = 0; i < p.n_cand; i++)
			v.push_back(cfg->peers[p.cand[i]].fqdn);
		return v;
	}

	CfgPtr cfg;
	DbPtr db;
	ScratchPtr scratch;
	TablePtr table;
};

const std::string kA = "nrf-a.seg1.example.com:18080";
const std::string kE = "nrf-e.seg2.example.com:18081";

} // namespace

/* Figure I-1: A -> E -> back to A; A finds its own host:port in Via. */
TEST(SeedFigures, LoopDetectionInNrfForwarding)
{
	Nrf a("conf/demo/forwarding/nrf-a.json");
	ASSERT_NE(a.table, nullptr);
	nrf_fwd_plan p = a.Request({"2.0 " + kA, "2.0 " + kE});
	EXPECT_EQ(p.verdict, NRF_FWD_LOOP_DETECTED);
	const nrf_fwd_problem *pb = nrf_fwd_table_problem(a.table.get(), p.error_mode, p.error);
	EXPECT_EQ(pb->status, 508);
	EXPECT_NE(std::string(pb->body, pb->body_len).find("LOOP_DETECTED"), std::string::npos);
	/* A request that has not been through A is forwarded to E. */
	p = a.Request({});
	EXPECT_EQ(p.verdict, NRF_FWD_FORWARD);
	EXPECT_EQ(a.Cands(p), std::vector<std::string>{"nrf-e.seg2.example.com"});
}

/* Figure I-2: growth: A (set 1) -> E (set 2) -> back to A. */
TEST(SeedFigures, LoopDetectionInNrfGrowthForwarding)
{
	Nrf a("conf/demo/growth/nrf-a.json");
	ASSERT_NE(a.table, nullptr);
	nrf_fwd_plan p = a.Request({"2.0 " + kA + ", 2.0 " + kE});
	EXPECT_EQ(p.verdict, NRF_FWD_LOOP_DETECTED);
	EXPECT_EQ(p.error, NRF_COND_LOOP_DETECTION);
	/* Case and a trailing dot do not hide A's identity. */
	EXPECT_EQ(a.Request({"HTTP/2.0 NRF-A.Seg1.Example.COM.:18080 (comment, x)"}).verdict,
		NRF_FWD_LOOP_DETECTED);
	/* A's identity only inside a comment is not a loop. */
	EXPECT_EQ(a.Request({"2.0 " + kE + " (from " + kA + ")"}).verdict, NRF_FWD_FORWARD);
}

/* Figure I-3: E's next destination is A, which is already in Via: skipped. */
TEST(SeedFigures, LoopPreventionInNrfForwarding)
{
	Nrf e("conf/demo/forwarding/nrf-e.json");
	ASSERT_NE(e.table, nullptr);
	nrf_fwd_plan p = e.Request({"2.0 " + kA});
	EXPECT_EQ(p.verdict, NRF_FWD_FORWARD);
	EXPECT_EQ(p.n_cand, 0);
	ASSERT_EQ(p.n_skip, 1);
	EXPECT_STREQ(e.cfg->peers[p.skip[0].peer].fqdn, "nrf-a.seg1.example.com");
	EXPECT_EQ(p.skip[0].reason, NRF_FWD_SKIP_VIA_HOST);
	EXPECT_EQ(p.error, NRF_COND_LOOP_PREVENTION);
	/* Without A in Via, E would forward to A. */
	EXPECT_EQ(e.Cands(e.Request({})), std::vector<std::string>{"nrf-a.seg1.example.com"});
}

/* Figure I-4: growth: E (set 2) skips A (set 1) found in Via, and tries B. */
TEST(SeedFigures, LoopPreventionInNrfGrowthForwarding)
{
	Nrf e("conf/demo/growth/nrf-e.json");
	ASSERT_NE(e.table, nullptr);
	nrf_fwd_plan p = e.Request({"2.0 " + kA});
	EXPECT_EQ(p.verdict, NRF_FWD_FORWARD);
	EXPECT_EQ(e.Cands(p), std::vector<std::string>{"nrf-b.seg1.example.com"});
	ASSERT_EQ(p.n_skip, 1);
	EXPECT_STREQ(e.cfg->peers[p.skip[0].peer].fqdn, "nrf-a.seg1.example.com");
	/* Both hosts of set 1 in Via: nothing left, loop prevented. */
	p = e.Request({"2.0 " + kA, "2.0 nrf-b.seg1.example.com:18083"});
	EXPECT_EQ(p.n_cand, 0);
	EXPECT_EQ(p.error, NRF_COND_LOOP_PREVENTION);
	EXPECT_EQ(p.error_mode, NRF_MODE_GROWTH);
}
