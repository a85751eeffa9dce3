// Tests of lib/dp/dp_seq.c: the sequence locks of the memory shared by the
// primary and its worker processes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "nrf_dp.h"

namespace {

struct Block {
	uint32_t seq;
	uint64_t a[8]; // every word equal when consistent
};

} // namespace

TEST(DpSeq, ReaderNeverSeesAHalfWrittenBlock)
{
	Block b{};
	std::atomic<bool> stop{false};
	std::thread w([&] {
		for (uint64_t v = 1; !stop.load(); v++) {
			nrf_dp_seq_write_begin(&b.seq);
			for (auto &x : b.a)
				__atomic_store_n(&x, v, __ATOMIC_RELAXED);
			nrf_dp_seq_write_end(&b.seq);
		}
	});
	int stable = 0;

	for (int i = 0; i < 20000; i++) {
		uint64_t copy[8];

		if (!nrf_dp_seq_copy(&b.seq, copy, b.a, sizeof(copy)))
			continue;
		stable++;
		for (auto x : copy)
			ASSERT_EQ(x, copy[0]);
	}
	stop = true;
	w.join();
	EXPECT_GT(stable, 0);
	EXPECT_EQ(b.seq % 2, 0u);
}

TEST(DpSeq, AStuckWriterMakesTheReadFailAndIsRepaired)
{
	Block b{};
	uint64_t copy[8];

	nrf_dp_seq_write_begin(&b.seq); // a writer that died here
	EXPECT_FALSE(nrf_dp_seq_copy(&b.seq, copy, b.a, sizeof(copy)));
	nrf_dp_seq_write_abandoned(&b.seq);
	EXPECT_EQ(b.seq % 2, 0u);
	EXPECT_TRUE(nrf_dp_seq_copy(&b.seq, copy, b.a, sizeof(copy)));
	uint32_t even = b.seq;
	nrf_dp_seq_write_abandoned(&b.seq); // nothing to repair: unchanged
	EXPECT_EQ(b.seq, even);
}

TEST(DpSeq, ACopyFunctionMayStopEarly)
{
	Block b{};
	int calls = 0;
	auto fn = [](void *arg) -> bool {
		++*static_cast<int *>(arg);
		return false;
	};

	EXPECT_TRUE(nrf_dp_seq_read(&b.seq, fn, &calls));
	EXPECT_EQ(calls, 1);
}
