/* SPDX-License-Identifier: BSD-3-Clause */
/* A GoogleTest fixture with one lib/h2 context on a kernel-transport loop,
 * for the tests of lib/h2's internals (h2_msg_test.cc, h2_oq_test.cc). */
#ifndef NRF_H2_CTX_FIXTURE_H
#define NRF_H2_CTX_FIXTURE_H

#include <gtest/gtest.h>

#include "nrf_tp.h"
extern "C" {
#include "h2_int.h"
}

class H2CtxTest : public ::testing::Test {
protected:
	/* A context with a 1 KiB header list, 1 MiB bodies, 8 streams. */
	void SetUp() override
	{
		int err;
		nrf_h2_limits lim = {};

		tp_ = nrf_tp_kern_ops();
		loop_ = tp_->loop_create(&err);
		ASSERT_NE(loop_, nullptr);
		lim.max_header_bytes = 1024;
		lim.max_body_bytes = 1 << 20;
		lim.max_concurrent_streams = 8;
		ctx_ = nrf_h2_ctx_create(tp_, loop_, &lim, &err);
		ASSERT_NE(ctx_, nullptr);
	}
	void TearDown() override
	{
		nrf_h2_ctx_free(ctx_);
		tp_->loop_free(loop_);
	}

	const nrf_tp_ops *tp_ = nullptr;
	nrf_tp_loop *loop_ = nullptr;
	nrf_h2_ctx *ctx_ = nullptr;
};

#endif /* NRF_H2_CTX_FIXTURE_H */
