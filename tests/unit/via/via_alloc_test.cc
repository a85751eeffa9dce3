/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Allocation failures inside Hyperscan, the Hyperscan way
 * (unit/hyperscan/allocators.cpp): an allocator that fails on the N-th
 * call, looped over a whole scenario until the scenario gets through.
 * Every step must either work or fail cleanly with NRF_ENOMEM or
 * NRF_EMATCHER, leave what it was given usable, and leak nothing
 * (run under valgrind, see docs/via.md).
 */
#include <gtest/gtest.h>

#include <hs/hs.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

namespace {

int alloc_calls;
int fail_at; /* 0: never */

void *
failing_malloc(size_t n)
{
	if (fail_at != 0 && ++alloc_calls == fail_at)
		return nullptr;
	return malloc(n);
}

void
plain_free(void *p)
{
	free(p);
}

/* Puts Hyperscan's default allocator back whatever the test does. */
struct FailingAllocator {
	explicit FailingAllocator(int n)
	{
		alloc_calls = 0;
		fail_at = n;
		EXPECT_EQ(hs_set_allocator(failing_malloc, plain_free), HS_SUCCESS);
	}
	~FailingAllocator()
	{
		fail_at = 0;
		EXPECT_EQ(hs_set_allocator(nullptr, nullptr), HS_SUCCESS);
	}
};

bool
CleanFailure(int err)
{
	return err == NRF_ENOMEM || err == NRF_EMATCHER;
}

} /* namespace */

TEST(ViaAlloc, EveryHyperscanAllocationFailureIsReportedAndLeavesStateUsable)
{
	std::vector<std::string> hosts;
	std::vector<nrf_via_identity> small_ids = {Self("nrf-a.seg1.example.com", 8080)};
	std::vector<nrf_via_identity> big_ids;

	for (int i = 0; i < 100; i++)
		hosts.push_back("nrf-" + std::to_string(i) + ".seg2.example.com");
	for (int i = 0; i < 100; i++)
		big_ids.push_back(Peer(hosts[i].c_str(), 8080, (uint16_t)i));

	bool completed = false;
	int n;
	for (n = 1; n < 200 && !completed; n++) {
		FailingAllocator fa(n);
		int err = 0;

		nrf_via_db *small = nrf_via_db_create(small_ids.data(), small_ids.size(), &err);
		if (small == nullptr) {
			EXPECT_TRUE(CleanFailure(err)) << n << " " << nrf_errname(err);
			continue;
		}
		DbPtr small_owner(small);
		nrf_via_scratch *s = nrf_via_scratch_create(small, &err);
		if (s == nullptr) {
			EXPECT_TRUE(CleanFailure(err)) << n << " " << nrf_errname(err);
			continue;
		}
		ScratchPtr s_owner(s);
		nrf_via_db *big = nrf_via_db_create(big_ids.data(), big_ids.size(), &err);
		if (big == nullptr) {
			EXPECT_TRUE(CleanFailure(err)) << n << " " << nrf_errname(err);
			continue;
		}
		DbPtr big_owner(big);
		int rc = nrf_via_scratch_update(s, big);
		if (rc != 0) {
			EXPECT_TRUE(CleanFailure(rc)) << n << " " << nrf_errname(rc);
			/* The failed update left the scratch as it was. */
			Scan r = DoScan(small, s, {"2.0 nrf-a.seg1.example.com:8080"});
			EXPECT_EQ(r.rc, 0) << n;
			EXPECT_TRUE(r.res.self) << n;
			continue;
		}
		Scan r = DoScan(big, s, {"2.0 nrf-99.seg2.example.com:8080"});
		EXPECT_EQ(r.rc, 0) << n;
		EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 99)) << n;
		completed = true;
	}
	EXPECT_TRUE(completed);
	/* Two databases, scratch and its update: several Hyperscan
	 * allocations, each of which was made to fail once. */
	EXPECT_GE(n, 6);
	RecordProperty("allocation_that_got_through", n - 1);
}
