/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/h2/h2_oq.c: the output queue of the own client and
 * server (order, partial takes, compaction, growth, the give-back of a
 * large emptied buffer, the context's HTTP/2 memory counter). */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "h2_ctx_fixture.h"
#include "nrf_err.h"
extern "C" {
#include "h2_frame.h"
}

namespace {

class H2Oq : public H2CtxTest {
protected:
	void SetUp() override
	{
		H2CtxTest::SetUp();
		c_.ctx = ctx_;
		http2_0_ = Http2();
	}
	void TearDown() override
	{
		h2_oq_fini(&c_);
		/* Every byte the queue took is given back. */
		EXPECT_EQ(Http2(), http2_0_);
		/* h2_mark_dirty() put the stack connection on the context's
		 * list: off it before the context goes. */
		if (nrf_list_linked(&c_.dirty))
			nrf_list_del(&c_.dirty);
		H2CtxTest::TearDown();
	}
	uint64_t Http2() const
	{
		nrf_h2_mem_stats m;

		nrf_h2_ctx_mem_get(ctx_, &m);
		return m.bytes[NRF_H2_MEM_HTTP2];
	}
	/* Everything queued, taken @p step bytes at a time. */
	std::string TakeAll(size_t step)
	{
		std::string out;
		std::vector<uint8_t> b(step);

		while (h2_oq_pending(&c_)) {
			size_t n = h2_oq_take(&c_, b.data(), step);

			EXPECT_GT(n, 0u);
			out.append((const char *)b.data(), n);
		}
		return out;
	}
	void Put(const std::string &s)
	{
		uint8_t *p = h2_oq_reserve(&c_, s.size());

		ASSERT_NE(p, nullptr);
		memcpy(p, s.data(), s.size());
		c_.oq.len += (uint32_t)s.size();
	}

	nrf_h2_conn c_ = {};
	uint64_t http2_0_ = 0;
};

} // namespace

TEST_F(H2Oq, FramesComeOutWholeAndInOrderAndMarkTheConnectionForWriting)
{
	const uint8_t ping[8] = {1, 2, 3, 4, 5, 6, 7, 8};

	EXPECT_FALSE(h2_oq_pending(&c_));
	ASSERT_TRUE(h2_oq_frame(&c_, FT_SETTINGS, FL_ACK, 0, nullptr, 0));
	EXPECT_TRUE(nrf_list_linked(&c_.dirty));
	ASSERT_TRUE(h2_oq_frame(&c_, FT_PING, 0, 0, ping, 8));
	h2_oq_rst(&c_, 3, NRF_H2_CANCEL);
	h2_oq_window_update(&c_, 0, 0x80001000u); /* the reserved bit is dropped */
	std::string got = TakeAll(4096);
	const uint8_t want[] = {
		0, 0, 0, FT_SETTINGS, FL_ACK, 0, 0, 0, 0,
		0, 0, 8, FT_PING, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
		0, 0, 4, FT_RST_STREAM, 0, 0, 0, 0, 3, 0, 0, 0, NRF_H2_CANCEL,
		0, 0, 4, FT_WINDOW_UPDATE, 0, 0, 0, 0, 0, 0, 0, 0x10, 0,
	};
	EXPECT_EQ(got, std::string((const char *)want, sizeof(want)));
	EXPECT_EQ(c_.oq.off, 0u);
	EXPECT_EQ(c_.oq.len, 0u);
}

TEST_F(H2Oq, PartialTakesKeepTheRestAndRoomIsMadeByMovingItToTheFront)
{
	std::string a(3000, 'a'), b(1000, 'b'), d(1500, 'd');
	std::vector<uint8_t> buf(2500);

	Put(a);
	Put(b);
	ASSERT_EQ(c_.oq.cap, 4096u);
	ASSERT_EQ(h2_oq_take(&c_, buf.data(), 2500), 2500u);
	EXPECT_TRUE(h2_oq_pending(&c_));
	/* 1 500 queued, 96 free at the end: the rest moves to the front
	 * instead of the buffer growing. */
	Put(d);
	EXPECT_EQ(c_.oq.cap, 4096u);
	EXPECT_EQ(c_.oq.off, 0u);
	EXPECT_EQ(TakeAll(700), std::string(500, 'a') + b + d);
}

TEST_F(H2Oq, GrowsByDoublingCountsItsBytesAndGivesBackALargeBufferOnceEmptied)
{
	std::string big(100 * 1024, 'x');

	Put("small");
	EXPECT_EQ(Http2() - http2_0_, 4096u);
	Put(big);
	EXPECT_EQ(c_.oq.cap, 128u * 1024);
	EXPECT_EQ(Http2() - http2_0_, 128u * 1024);
	EXPECT_EQ(TakeAll(16384), "small" + big);
	/* Past 64 KiB and empty: freed; the next frame starts small. */
	EXPECT_EQ(c_.oq.buf, nullptr);
	EXPECT_EQ(Http2(), http2_0_);
	Put("again");
	EXPECT_EQ(c_.oq.cap, 4096u);
	EXPECT_EQ(TakeAll(3), "again");
	/* 4 KiB is kept for the next frames. */
	EXPECT_NE(c_.oq.buf, nullptr);
}
