/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One lib/h2 connection alone on the in-memory transport of
 * tests/unit/rt/fake_tp.c, for the state-machine tests: the test plays
 * the other end with byte arrays (h2_sm_wire.h), nrfwd's engine answers,
 * and the test reads the frames it wrote. No socket, no second engine of
 * nrfwd's: what one engine does with given bytes is the whole result, as
 * in nghttp2's own session tests.
 */
#ifndef NRF_H2_SM_FIXTURE_H
#define NRF_H2_SM_FIXTURE_H

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../rt/fake_tp.h"
#include "h2_sm_wire.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_tp.h"

namespace sm {

/* What a stream's callbacks saw. */
struct StreamLog {
	uint32_t id = 0;
	int request_err = 1;    /* front: on_request's err (1: not called) */
	std::string method, path, body;
	int status = 0;         /* peer: the answer's :status */
	bool response = false;  /* peer: on_response called */
	bool closed = false;
	uint32_t close_code = 0xffffffffu;
	int close_err = 1;
};

class SmFixture : public ::testing::Test {
protected:
	static SmFixture *cur_;

	void SetUp() override
	{
		fake_tp_reset();
		cur_ = this;
		tp_ = fake_tp_ops();
		int err;
		loop_ = tp_->loop_create(&err);
		ASSERT_NE(loop_, nullptr);
	}

	void make_ctx()
	{
		int err;
		ctx_ = nrf_h2_ctx_create(tp_, loop_, &lim_, &err);
		ASSERT_NE(ctx_, nullptr) << err;
	}

	void TearDown() override
	{
		if (conn_ != nullptr)
			nrf_h2_conn_close(conn_, NRF_ECLOSED);
		pump();
		if (ctx_ != nullptr)
			nrf_h2_ctx_free(ctx_);
		if (lst_ != nullptr)
			tp_->listener_close(lst_);
		tp_->loop_free(loop_);
		if (far_ != nullptr)
			fake_conn_release(far_);
		fake_tp_reset();
		cur_ = nullptr;
	}

	/* Runs the loop until nothing is left to do (bounded). */
	void pump()
	{
		for (int i = 0; i < 10000; i++) {
			int n = tp_->poll(loop_, 0);
			bool more = ctx_ != nullptr && nrf_h2_ctx_run(ctx_);
			if (n == 0 && !more)
				return;
		}
		ADD_FAILURE() << "the connection never settled";
	}

	/* The other end sends @p b (all at once, or @p piece bytes at a time
	 * with the loop run after each piece). */
	void feed(const Bytes &b, size_t piece = 0)
	{
		if (piece == 0)
			piece = b.size();
		for (size_t at = 0; at < b.size(); at += piece) {
			ASSERT_EQ(fake_conn_push(far_, b.data() + at,
					  std::min(piece, b.size() - at)), 0);
			pump();
		}
		if (b.empty())
			pump();
	}

	/* Every byte nrfwd wrote since the last call. */
	std::string take_bytes()
	{
		size_t n = 0;
		const uint8_t *p = fake_conn_out(far_, &n);
		std::string s(reinterpret_cast<const char *>(p), n);
		fake_conn_take(far_, n);
		return s;
	}

	/* Every frame nrfwd wrote since the last call. */
	std::vector<Frame> take() { return parse(take_bytes()); }

	bool closed() const { return far_ == nullptr || fake_conn_closed(far_); }

	StreamLog &log(nrf_h2_stream *st)
	{
		for (auto &l : streams_)
			if (l.id == uint32_t(st->id))
				return l;
		streams_.emplace_back();
		streams_.back().id = uint32_t(st->id);
		return streams_.back();
	}

	const StreamLog *find(uint32_t id) const
	{
		for (auto &l : streams_)
			if (l.id == id)
				return &l;
		return nullptr;
	}

	static void on_close(nrf_h2_stream *st, uint32_t code, int err)
	{
		StreamLog &l = cur_->log(st);
		l.closed = true;
		l.close_code = code;
		l.close_err = err;
	}

	static void on_conn_close(nrf_h2_conn *, int err)
	{
		cur_->conn_ = nullptr;
		cur_->conn_closes_++;
		cur_->conn_err_ = err;
	}

	static void on_ping_ack(nrf_h2_conn *, uint64_t token)
	{
		cur_->ping_acks_.push_back(token);
	}

	const nrf_tp_ops *tp_ = nullptr;
	nrf_tp_loop *loop_ = nullptr;
	nrf_h2_ctx *ctx_ = nullptr;
	nrf_tp_listener *lst_ = nullptr;
	nrf_h2_limits lim_ = {};
	fake_conn *far_ = nullptr; /* the test's end */
	nrf_h2_conn *conn_ = nullptr;
	std::vector<StreamLog> streams_;
	std::vector<uint64_t> ping_acks_;
	int conn_closes_ = 0;
	int conn_err_ = 1;
	Inflater inf_;
};

inline SmFixture *SmFixture::cur_ = nullptr;

} // namespace sm

#endif /* NRF_H2_SM_FIXTURE_H */
