/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/h2/h2_conn.c: a peer (client) connection and a front
 * (server) connection of one context talking over loopback, driven by the
 * kernel transport as a worker would drive them.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_tp.h"

namespace {

struct Fixture;
Fixture *cur; /* callbacks are C function pointers */

struct Got {
	int status = 0;
	std::string ctype;
	std::string body;
	bool end = false;
	int closes = 0;
	uint32_t code = 0;
	int err = 0;
};

struct Fixture {
	const nrf_tp_ops *tp = nrf_tp_kern_ops();
	nrf_tp_loop *loop = nullptr;
	nrf_h2_ctx *ctx = nullptr;
	nrf_tp_listener *lst = nullptr;
	nrf_tp_addr addr = {};
	nrf_h2_conn *server = nullptr;
	nrf_h2_conn *client = nullptr;
	bool ready = false;
	int conn_closes = 0;
	int client_close_err = 1;
	int gone = 0;

	/* server side */
	int requests = 0;
	int request_err = 0;
	uint32_t request_flags = 0;
	std::string req_method, req_path, req_body;
	std::vector<std::string> req_via;
	int respond_status = 200;
	std::string respond_body = "ok";
	bool respond_in_parts = false;
	bool respond_inline = false;
	bool close_server_on_request = false;
	bool refuse_next = false; /* on_listen refuses the next connection */
	nrf_h2_stream *front = nullptr;

	/* client side */
	Got got;
	nrf_h2_body req_body_src = {};

	/* PING ACKs received, by side */
	std::vector<uint64_t> client_acks, server_acks;
	/* further client connections of a test (extra_cbs) */
	int extra_ready = 0;
	int extra_closes = 0;
};

void
on_request(nrf_h2_stream *st, int err)
{
	Fixture *f = cur;
	f->requests++;
	f->request_err = err;
	f->front = st;
	if (err == 0) {
		f->req_method.assign(st->msg.method.p, st->msg.method.len);
		f->req_path.assign(st->msg.path.p, st->msg.path.len);
		nrf_slice s = nrf_h2_body_flat(&st->msg.body, nullptr, 0);
		std::string b;
		for (const nrf_h2_chunk *c = st->msg.body.head; c; c = c->next)
			b.append(c->data + c->off, c->len - c->off);
		(void)s;
		f->req_body = b;
		nrf_slice via[8];
		size_t n = nrf_h2_msg_via(&st->msg, via, 8);
		for (size_t i = 0; i < n && i < 8; i++)
			f->req_via.emplace_back(via[i].p, via[i].len);
	}
	if (f->close_server_on_request) {
		nrf_h2_conn_close(st->conn, NRF_ECLOSED);
		return;
	}
	nrf_h2_hdr h[1] = {{nrf_slice_str("content-type"), nrf_slice_str("text/plain")}};
	f->request_flags = st->flags;
	int status = (st->flags & NRF_H2_SF_HDR_OVER) ? 431
		: err == NRF_ETOOBIG ? 413
		: err == NRF_EFULL ? 503
		: err ? 400 : f->respond_status;
	if (f->respond_inline) {
		ASSERT_EQ(nrf_h2_respond_inline(st, status, h, 1, f->respond_body.data(),
				  f->respond_body.size()), 0);
		return;
	}
	if (!f->respond_in_parts) {
		ASSERT_EQ(nrf_h2_respond(st, status, h, 1, f->respond_body.data(),
				  f->respond_body.size(), false), 0);
		return;
	}
	ASSERT_EQ(nrf_h2_respond(st, status, h, 1, nullptr, 0, true), 0);
}

void
on_server_conn_close(nrf_h2_conn *, int)
{
	cur->server = nullptr;
	cur->conn_closes++;
}

void
on_server_ping_ack(nrf_h2_conn *, uint64_t token)
{
	cur->server_acks.push_back(token);
}

const nrf_h2_cbs server_cbs = {
	on_request, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
	on_server_conn_close, on_server_ping_ack, nullptr,
};

void
on_response(nrf_h2_stream *st)
{
	cur->got.status = st->msg.status;
	nrf_slice ct = nrf_h2_msg_get(&st->msg, "content-type");
	cur->got.ctype.assign(ct.p != nullptr ? ct.p : "", ct.len);
}

void
on_data(nrf_h2_stream *st)
{
	Got &g = cur->got;
	for (const nrf_h2_chunk *c = st->msg.body.head; c; c = c->next)
		g.body.append(c->data + c->off, c->len - c->off);
	nrf_h2_consume(st, st->unconsumed);
	nrf_h2_body_release(cur->ctx, &st->msg.body);
	if (st->flags & NRF_H2_SF_END)
		g.end = true;
}

void
on_close(nrf_h2_stream *, uint32_t code, int err)
{
	cur->got.closes++;
	cur->got.code = code;
	cur->got.err = err;
}

void
on_ready(nrf_h2_conn *)
{
	cur->ready = true;
}

void
on_gone(nrf_h2_conn *)
{
	cur->gone++;
}

void
on_client_close(nrf_h2_conn *, int err)
{
	cur->client = nullptr;
	cur->client_close_err = err;
}

void
on_client_ping_ack(nrf_h2_conn *, uint64_t token)
{
	cur->client_acks.push_back(token);
}

const nrf_h2_cbs client_cbs = {
	nullptr, nullptr, on_response, on_data, on_close, on_ready, on_gone, nullptr,
	on_client_close, on_client_ping_ack, nullptr,
};

const nrf_h2_cbs extra_cbs = {
	nullptr, nullptr, nullptr, nullptr, nullptr,
	[](nrf_h2_conn *) { cur->extra_ready++; }, nullptr, nullptr,
	[](nrf_h2_conn *, int) { cur->extra_closes++; }, on_client_ping_ack, nullptr,
};

void
on_listen(void *arg, unsigned)
{
	Fixture *f = static_cast<Fixture *>(arg);
	int err;
	nrf_tp_conn *tc = f->tp->accept(f->lst, &err);
	if (tc == nullptr)
		return;
	f->server = nrf_h2_conn_server(f->ctx, tc, &server_cbs, f, &err);
	if (f->refuse_next && f->server != nullptr) {
		f->refuse_next = false;
		nrf_h2_conn_refuse(f->server, NRF_H2_NO_ERROR, "full");
	}
}

class H2Loop : public ::testing::Test {
protected:
	void SetUp() override { Start(1 << 20, 16384); }

	void Start(uint32_t max_body, uint32_t max_hdr)
	{
		int err;
		nrf_h2_limits lim = {};

		cur = &f_;
		f_.loop = f_.tp->loop_create(&err);
		ASSERT_NE(f_.loop, nullptr);
		lim.max_header_bytes = max_hdr;
		lim.max_body_bytes = max_body;
		lim.max_concurrent_streams = 16;
		f_.ctx = nrf_h2_ctx_create(f_.tp, f_.loop, &lim, &err);
		ASSERT_NE(f_.ctx, nullptr);
		nrf_tp_addr a;
		nrf_tp_addr_parse("127.0.0.1", 0, &a);
		f_.lst = f_.tp->listen(f_.loop, &a, 16, on_listen, &f_, &err);
		ASSERT_NE(f_.lst, nullptr);
		f_.tp->listener_addr(f_.lst, &f_.addr);
		f_.client = nrf_h2_conn_client(f_.ctx, &f_.addr, &client_cbs, &f_, &err);
		ASSERT_NE(f_.client, nullptr) << nrf_strerror(err);
		ASSERT_TRUE(Run([&] { return f_.ready && f_.server != nullptr; }));
	}

	void TearDown() override
	{
		if (f_.client)
			nrf_h2_conn_close(f_.client, NRF_ECLOSED);
		if (f_.server)
			nrf_h2_conn_close(f_.server, NRF_ECLOSED);
		/* and whatever else a test opened (f_.server is only the last
		 * server connection accepted) */
		nrf_h2_ctx_close_all(f_.ctx);
		nrf_h2_ctx_run(f_.ctx);
		nrf_h2_body_release(f_.ctx, &f_.req_body_src);
		f_.tp->listener_close(f_.lst);
		nrf_h2_ctx_free(f_.ctx);
		f_.tp->loop_free(f_.loop);
		cur = nullptr;
	}

	template <typename F>
	bool Run(F done)
	{
		uint64_t end = nrf_now_ns() + 3000000000ull;
		bool busy = false;
		while (!done()) {
			if (nrf_now_ns() > end)
				return false;
			f_.tp->poll(f_.loop, busy ? 0 : 5);
			busy = nrf_h2_ctx_run(f_.ctx);
		}
		return true;
	}

	nrf_h2_stream *Request(const char *method, const char *path,
		std::vector<std::pair<std::string, std::string>> extra = {})
	{
		std::vector<nrf_h2_hdr> h;
		names_.clear(); /* nghttp2 copied the previous request's fields */
		values_.clear();
		auto add = [&](const std::string &n, const std::string &v) {
			names_.push_back(n);
			values_.push_back(v);
		};
		add(":method", method);
		add(":scheme", "http");
		add(":authority", "test:1");
		add(":path", path);
		for (auto &kv : extra)
			add(kv.first, kv.second);
		for (size_t i = 0; i < names_.size(); i++)
			h.push_back({{names_[i].data(), names_[i].size()},
				{values_[i].data(), values_[i].size()}});
		int err;
		nrf_h2_stream *st = nrf_h2_request(f_.client, h.data(), h.size(),
			&f_.req_body_src, &f_, &err);
		EXPECT_NE(st, nullptr) << nrf_strerror(err);
		return st;
	}

	Fixture f_;
	std::vector<std::string> names_, values_;
};

} // namespace

TEST_F(H2Loop, RequestAndAnswerRoundTripWithBodiesAndViaLines)
{
	std::string body(40000, 'q');
	for (size_t i = 0; i < body.size(); i++)
		body[i] = (char)('a' + i % 26);
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &f_.req_body_src, body.data(), body.size()), 0);
	f_.respond_body = std::string(300000, 'r'); /* over the 256 KiB stream window */
	Request("POST", "/oauth2/token", {{"via", "2.0 a:1"}, {"x", "y"}, {"via", "2.0 b:2"},
		{"connection", "close"}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, 0);
	EXPECT_EQ(f_.req_method, "POST");
	EXPECT_EQ(f_.req_path, "/oauth2/token");
	EXPECT_EQ(f_.req_body, body);
	EXPECT_EQ(f_.req_via, (std::vector<std::string>{"2.0 a:1", "2.0 b:2"}));
	EXPECT_EQ(f_.got.status, 200);
	EXPECT_TRUE(f_.got.end);
	EXPECT_EQ(f_.got.body.size(), f_.respond_body.size());
	EXPECT_EQ(f_.got.code, NRF_H2_NO_ERROR);
	EXPECT_EQ(f_.got.err, 0);
	EXPECT_GE(f_.gone, 1);
}

TEST_F(H2Loop, DeferredAnswerBodyResumesWhenAppended)
{
	f_.respond_in_parts = true;
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.front != nullptr && f_.got.status == 200; }));
	EXPECT_FALSE(f_.got.end);
	nrf_h2_body b = {};
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, "hello ", 6), 0);
	ASSERT_EQ(nrf_h2_append(f_.front, &b), 0);
	ASSERT_TRUE(Run([&] { return f_.got.body == "hello "; }));
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, "world", 5), 0);
	ASSERT_EQ(nrf_h2_append(f_.front, &b), 0);
	ASSERT_EQ(nrf_h2_end(f_.front), 0);
	ASSERT_TRUE(Run([&] { return f_.got.end; }));
	EXPECT_EQ(f_.got.body, "hello world");
	EXPECT_EQ(nrf_h2_respond(f_.front, 200, nullptr, 0, nullptr, 0, false), NRF_EINVAL);
}

TEST_F(H2Loop, ServerGoneFailsTheClientStreamAndConnection)
{
	f_.close_server_on_request = true;
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1 && f_.client == nullptr; }));
	EXPECT_EQ(f_.got.status, 0);
	EXPECT_NE(f_.client_close_err, 0);
}

TEST_F(H2Loop, CancelledStreamGetsNoMoreCallbacks)
{
	f_.respond_in_parts = true;
	nrf_h2_stream *st = Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.requests == 1; }));
	nrf_h2_cancel(st);
	int gone = f_.gone;
	ASSERT_TRUE(Run([&] { return f_.gone > gone; }));
	EXPECT_EQ(f_.got.closes, 0);
	EXPECT_EQ(nrf_h2_conn_streams(f_.client), 0u);
}

TEST_F(H2Loop, GracefulShutdownClosesAnIdleFrontConnection)
{
	nrf_h2_conn_shutdown(f_.server, false);
	nrf_h2_conn_shutdown(f_.server, true);
	ASSERT_TRUE(Run([&] { return f_.server == nullptr && f_.client == nullptr; }));
	EXPECT_EQ(f_.conn_closes, 1);
}

class H2LoopLimits : public H2Loop {
protected:
	void SetUp() override { Start(1000, 1024); }
};

TEST_F(H2LoopLimits, BodyOverTheLimitIsReportedOnceAsTooBig)
{
	std::string body(5000, 'b');
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &f_.req_body_src, body.data(), body.size()), 0);
	Request("POST", "/oauth2/token");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, NRF_ETOOBIG);
	EXPECT_EQ(f_.got.status, 413);
}

TEST_F(H2LoopLimits, ContentLengthOverTheLimitIsRefusedBeforeTheBody)
{
	std::string body(2000, 'b');
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &f_.req_body_src, body.data(), body.size()), 0);
	Request("POST", "/oauth2/token", {{"content-length", "2000"}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.request_err, NRF_ETOOBIG);
	EXPECT_EQ(f_.got.status, 413);
}

TEST_F(H2LoopLimits, HeaderListOverTheLimitIsReportedAsTooBigWithItsFlag)
{
	Request("GET", "/x", {{"x-big", std::string(2000, 'h')}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, NRF_ETOOBIG);
	EXPECT_TRUE(f_.request_flags & NRF_H2_SF_HDR_OVER);
	EXPECT_EQ(f_.got.status, 431);
	/* The connection still serves the next request. */
	f_.got = Got();
	Request("GET", "/y");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.request_err, 0);
	EXPECT_EQ(f_.got.status, 200);
}

TEST_F(H2Loop, ShutdownNoticeIsFollowedByGoawayOnceThePingIsAnswered)
{
	nrf_h2_conn_shutdown(f_.server, false);
	ASSERT_TRUE(Run([&] { return f_.server == nullptr && f_.client == nullptr; }));
	EXPECT_EQ(f_.conn_closes, 1);
}

TEST_F(H2Loop, StreamsInFlightFinishAfterTheShutdownNotice)
{
	f_.respond_in_parts = true;
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.requests == 1; }));
	nrf_h2_conn_shutdown(f_.server, false);
	uint64_t until = nrf_now_ns() + 100000000ull; /* notice, PING, GOAWAY */
	ASSERT_TRUE(Run([&] { return nrf_now_ns() > until; }));
	ASSERT_NE(f_.server, nullptr); /* kept open for the stream */
	nrf_h2_body b = {};
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, "late", 4), 0);
	ASSERT_EQ(nrf_h2_append(f_.front, &b), 0);
	ASSERT_EQ(nrf_h2_end(f_.front), 0);
	ASSERT_TRUE(Run([&] { return f_.got.end && f_.server == nullptr; }));
	EXPECT_EQ(f_.got.body, "late");
	EXPECT_EQ(f_.got.status, 200);
}

TEST_F(H2Loop, InlineAnswerCarriesStatusFieldsAndBody)
{
	f_.respond_inline = true;
	f_.respond_status = 508;
	f_.respond_body = std::string(300, 'p');
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.status, 508);
	EXPECT_EQ(f_.got.ctype, "text/plain");
	EXPECT_EQ(f_.got.body, f_.respond_body);
	EXPECT_TRUE(f_.got.end);
	EXPECT_EQ(f_.got.code, NRF_H2_NO_ERROR);
	EXPECT_NE(f_.front->flags & NRF_H2_SF_INLINE, 0u);
	EXPECT_EQ(nrf_h2_respond_inline(f_.front, 200, nullptr, 0, nullptr, 0), NRF_EINVAL);
}

TEST_F(H2Loop, InlineAnswerTooBigForTheStreamGoesThroughBodyChunks)
{
	f_.respond_inline = true;
	f_.respond_body = std::string(NRF_H2_INLINE_BYTES + 1, 'q');
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.status, 200);
	EXPECT_EQ(f_.got.body, f_.respond_body);
	EXPECT_TRUE(f_.got.end);
	EXPECT_EQ(f_.front->flags & NRF_H2_SF_INLINE, 0u);
}

TEST_F(H2Loop, MalformedRequestsAreResetWithProtocolErrorAndNeverDelivered)
{
	/* a space in a field name (RFC 9113 §8.2.1; nghttp2's client would
	 * lower-case an upper-case name: h2_check_test sends those raw) */
	Request("GET", "/x", {{"x upper", "1"}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.code, NRF_H2_PROTOCOL_ERROR);
	/* content-length larger than the body (§8.1.1) */
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &f_.req_body_src, "abc", 3), 0);
	Request("POST", "/x", {{"content-length", "10"}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 2; }));
	EXPECT_EQ(f_.got.code, NRF_H2_PROTOCOL_ERROR);
	EXPECT_EQ(f_.requests, 0);
	/* and the connection goes on serving */
	nrf_h2_body_release(f_.ctx, &f_.req_body_src);
	Request("GET", "/ok");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 3; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.got.status, 200);
}

TEST_F(H2Loop, PingAcksCarryTheirTokensBackInEitherRole)
{
	ASSERT_EQ(nrf_h2_conn_ping(f_.client, 0x0102030405060708ull), 0);
	ASSERT_EQ(nrf_h2_conn_ping(f_.client, 7), 0);
	ASSERT_EQ(nrf_h2_conn_ping(f_.server, UINT64_MAX), 0);
	ASSERT_TRUE(Run([&] { return f_.client_acks.size() == 2 && f_.server_acks.size() == 1; }));
	EXPECT_EQ(f_.client_acks, (std::vector<uint64_t>{0x0102030405060708ull, 7}));
	EXPECT_EQ(f_.server_acks, (std::vector<uint64_t>{UINT64_MAX}));
}

TEST_F(H2Loop, PingOfAConnectingClientIsAnsweredOnceConnected)
{
	int err;
	nrf_h2_conn *second = nrf_h2_conn_client(f_.ctx, &f_.addr, &extra_cbs, &f_, &err);
	ASSERT_NE(second, nullptr) << nrf_strerror(err);
	ASSERT_EQ(nrf_h2_conn_ping(second, 42), 0); /* before on_conn_ready */
	EXPECT_EQ(f_.extra_ready, 0);
	ASSERT_TRUE(Run([&] { return !f_.client_acks.empty(); }));
	EXPECT_EQ(f_.extra_ready, 1);
	EXPECT_EQ(f_.client_acks, (std::vector<uint64_t>{42}));
	nrf_h2_conn_close(second, NRF_ECLOSED);
	ASSERT_TRUE(Run([&] { return f_.extra_closes == 1; }));
}

TEST_F(H2Loop, TheShutdownNoticePingIsNotReportedAsAPingAck)
{
	nrf_h2_conn_shutdown(f_.server, false);
	ASSERT_TRUE(Run([&] { return f_.server == nullptr && f_.client == nullptr; }));
	EXPECT_TRUE(f_.server_acks.empty());
	EXPECT_TRUE(f_.client_acks.empty());
}

TEST_F(H2Loop, PingOnAClosingConnectionIsRefused)
{
	nrf_h2_conn_close(f_.client, NRF_ECLOSED);
	EXPECT_EQ(nrf_h2_conn_ping(f_.client, 1), NRF_EINVAL);
	EXPECT_EQ(nrf_h2_conn_ping(nullptr, 1), NRF_EINVAL);
}

/* A server that accepts TCP connections and never speaks HTTP/2: the
 * connect succeeds, the PING is never answered (what a health probe must
 * not take for an upstream that is up). */
TEST_F(H2Loop, ASilentServerNeverAnswersThePing)
{
	int err;
	nrf_tp_addr a;
	nrf_tp_addr_parse("127.0.0.1", 0, &a);
	nrf_tp_conn *held = nullptr;
	struct Silent {
		const nrf_tp_ops *tp;
		nrf_tp_listener *l;
		nrf_tp_conn **held;
	} sl = {f_.tp, nullptr, &held};
	sl.l = f_.tp->listen(f_.loop, &a, 4,
		[](void *arg, unsigned) {
			Silent *s = static_cast<Silent *>(arg);
			int e;
			nrf_tp_conn *tc = s->tp->accept(s->l, &e);
			if (tc != nullptr)
				*s->held = tc; /* accepted, never read, never answered */
		},
		&sl, &err);
	ASSERT_NE(sl.l, nullptr);
	f_.tp->listener_addr(sl.l, &a);
	nrf_h2_conn *c = nrf_h2_conn_client(f_.ctx, &a, &extra_cbs, &f_, &err);
	ASSERT_NE(c, nullptr) << nrf_strerror(err);
	ASSERT_EQ(nrf_h2_conn_ping(c, 9), 0);
	ASSERT_TRUE(Run([&] { return f_.extra_ready == 1 && held != nullptr; })); /* TCP is up */
	uint64_t until = nrf_now_ns() + 300000000ull;
	Run([&] { return nrf_now_ns() > until; });
	EXPECT_TRUE(f_.client_acks.empty());
	nrf_h2_conn_close(c, NRF_ECLOSED);
	ASSERT_TRUE(Run([&] { return f_.extra_closes == 1; }));
	f_.tp->close(held);
	f_.tp->listener_close(sl.l);
}

/* RFC 9110 §9.3.2: the answer to HEAD is its headers, END_STREAM on HEADERS,
 * whichever way the front gives it; the peer stream ends with them. */
TEST_F(H2Loop, HeadAnswerIsItsHeadersAloneWhateverBodyIsGiven)
{
	for (int way = 0; way < 3; way++) {
		SCOPED_TRACE(way);
		f_.got = Got();
		f_.front = nullptr;
		f_.respond_inline = way == 1;
		f_.respond_in_parts = way == 2;
		f_.respond_body = std::string(way == 0 ? 40000 : 300, 'h');
		nrf_h2_stream *ps = Request("HEAD", "/nnrf-disc/v1/nf-instances");
		ASSERT_NE(ps, nullptr);
		EXPECT_NE(ps->flags & NRF_H2_SF_HEAD, 0u);
		ASSERT_TRUE(Run([&] { return f_.got.status != 0; }));
		EXPECT_EQ(f_.got.status, 200);
		EXPECT_NE(f_.front->flags & NRF_H2_SF_HEAD, 0u);
		if (way == 2) {
			/* more body after the headers: dropped, not an error */
			nrf_h2_body b = {};
			ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, "late", 4), 0);
			EXPECT_EQ(nrf_h2_append(f_.front, &b), 0);
			EXPECT_EQ(b.len, 0u);
			EXPECT_EQ(nrf_h2_end(f_.front), 0);
		}
		ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
		EXPECT_TRUE(f_.got.end);
		EXPECT_EQ(f_.got.body, "");
		EXPECT_EQ(f_.got.code, NRF_H2_NO_ERROR);
		EXPECT_EQ(f_.got.err, 0);
	}
	/* the connection is still good for a GET with its body */
	f_.got = Got();
	f_.respond_inline = f_.respond_in_parts = false;
	f_.respond_body = "body";
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.body, "body");
}

/* ------------------------------------------------------------------------ */
/* Memory: accounting, budget, giving back                                   */

static uint64_t
MemTotal(nrf_h2_ctx *ctx, nrf_h2_mem_stats *m = nullptr)
{
	nrf_h2_mem_stats s;
	nrf_h2_ctx_mem_get(ctx, &s);
	if (m != nullptr)
		*m = s;
	return s.total;
}

TEST_F(H2Loop, MemoryIsAccountedByKindAndComesBackWhenStreamsEnd)
{
	nrf_h2_mem_stats m;
	uint64_t base = MemTotal(f_.ctx, &m);
	EXPECT_GT(m.bytes[NRF_H2_MEM_HTTP2], 0u); /* two sessions */
	EXPECT_EQ(m.bytes[NRF_H2_MEM_BODIES], 0u);
	EXPECT_EQ(m.bytes[NRF_H2_MEM_WINDOW], 0u);

	f_.respond_in_parts = true;
	nrf_h2_stream *ps = Request("GET", "/x");
	ASSERT_NE(ps, nullptr);
	MemTotal(f_.ctx, &m);
	/* an open peer stream is charged the window its upstream may fill */
	EXPECT_EQ(m.bytes[NRF_H2_MEM_WINDOW], 64u * 1024u);
	ASSERT_TRUE(Run([&] { return f_.front != nullptr && f_.got.status == 200; }));
	nrf_h2_body b = {};
	std::string part(20000, 'p');
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, part.data(), part.size()), 0);
	MemTotal(f_.ctx, &m);
	EXPECT_EQ(m.bytes[NRF_H2_MEM_BODIES], 2 * sizeof(nrf_h2_chunk));
	ASSERT_EQ(nrf_h2_append(f_.front, &b), 0);
	ASSERT_EQ(nrf_h2_end(f_.front), 0);
	ASSERT_TRUE(Run([&] { return f_.got.end && f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.body.size(), part.size());
	/* nghttp2 keeps what its HPACK tables learnt; the rest comes back. */
	ASSERT_TRUE(Run([&] { return MemTotal(f_.ctx, &m) <= base + 4096; }))
		<< m.total << " vs " << base << " http2 " << m.bytes[NRF_H2_MEM_HTTP2];
	EXPECT_EQ(m.bytes[NRF_H2_MEM_BODIES], 0u);
	EXPECT_EQ(m.bytes[NRF_H2_MEM_HEADERS], 0u);
	EXPECT_EQ(m.bytes[NRF_H2_MEM_OUTPUT], 0u); /* nothing waits for the transport */
	EXPECT_EQ(m.bytes[NRF_H2_MEM_WINDOW], 0u);
	EXPECT_GT(m.pooled, 0u); /* kept for reuse ... */
}

TEST_F(H2Loop, PooledMemoryUnusedSinceTheLastTrimIsGivenBack)
{
	/* Fill the free lists: many streams at once, then none. */
	for (int i = 0; i < 200; i++)
		Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 200; }));
	nrf_h2_mem_stats m;
	MemTotal(f_.ctx, &m);
	uint64_t full = m.pooled;
	/* nghttp2's allocator counts what it holds, its free lists too */
	uint64_t held = m.pooled + m.total;
	ASSERT_GT(full, 200 * sizeof(nrf_h2_stream));
	nrf_h2_ctx_trim(f_.ctx); /* marks what is unused from now on */
	size_t freed = 0;
	for (int i = 0; i < 16; i++)
		freed += nrf_h2_ctx_trim(f_.ctx);
	MemTotal(f_.ctx, &m);
	EXPECT_GT(freed, 0u);
	EXPECT_EQ(m.pooled + m.total + freed, held);
	EXPECT_LT(m.pooled, full);
	/* down to the floors: nothing more to give */
	EXPECT_EQ(nrf_h2_ctx_trim(f_.ctx), 0u);
	EXPECT_GT(m.pooled, 0u);
	/* The context still serves. */
	f_.got = Got();
	Request("GET", "/y");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.got.status, 200);
}

TEST_F(H2Loop, OverItsBudgetAContextRefusesNewRequestsWithoutKeepingThem)
{
	nrf_h2_ctx_set_budget(f_.ctx, 1);
	EXPECT_TRUE(nrf_h2_ctx_over_budget(f_.ctx));
	Request("GET", "/x", {{"x-a", std::string(500, 'a')}});
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, NRF_EFULL);
	EXPECT_TRUE(f_.request_flags & NRF_H2_SF_BUSY);
	EXPECT_EQ(f_.got.status, 503);
	EXPECT_TRUE(f_.req_method.empty()); /* nothing of it was kept */

	/* A body arriving over the budget: answered at once, body dropped. */
	nrf_h2_ctx_set_budget(f_.ctx, 0);
	f_.got = Got();
	f_.requests = 0;
	std::string body(100000, 'b');
	ASSERT_EQ(nrf_h2_body_append(f_.ctx, &f_.req_body_src, body.data(), body.size()), 0);
	nrf_h2_ctx_set_budget(f_.ctx, MemTotal(f_.ctx) + 1000); /* room for the headers */
	Request("POST", "/oauth2/token");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, NRF_EFULL);
	EXPECT_EQ(f_.got.status, 503);
	nrf_h2_body_release(f_.ctx, &f_.req_body_src);

	/* Within the budget again: served. */
	nrf_h2_ctx_set_budget(f_.ctx, 0);
	EXPECT_FALSE(nrf_h2_ctx_over_budget(f_.ctx));
	f_.got = Got();
	Request("GET", "/y");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1; }));
	EXPECT_EQ(f_.request_err, 0);
	EXPECT_EQ(f_.got.status, 200);
}

TEST_F(H2Loop, ABodyRelayedInSmallPiecesTakesOneChunkNotOneEach)
{
	f_.respond_in_parts = true;
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.front != nullptr && f_.got.status == 200; }));
	for (int i = 0; i < 1000; i++) {
		nrf_h2_body b = {};
		ASSERT_EQ(nrf_h2_body_append(f_.ctx, &b, "0123456789", 10), 0);
		ASSERT_EQ(nrf_h2_append(f_.front, &b), 0);
	}
	nrf_h2_mem_stats m;
	MemTotal(f_.ctx, &m);
	EXPECT_EQ(m.bytes[NRF_H2_MEM_BODIES], sizeof(nrf_h2_chunk));
	ASSERT_EQ(nrf_h2_end(f_.front), 0);
	ASSERT_TRUE(Run([&] { return f_.got.end; }));
	EXPECT_EQ(f_.got.body.size(), 10000u);
}

TEST_F(H2Loop, ARefusedConnectionGetsGoawayAndNoStreamIsDelivered)
{
	int err;
	f_.refuse_next = true;
	f_.ready = false;
	nrf_h2_conn *prev = f_.client;
	f_.client = nrf_h2_conn_client(f_.ctx, &f_.addr, &client_cbs, &f_, &err);
	ASSERT_NE(f_.client, nullptr);
	ASSERT_TRUE(Run([&] { return f_.ready; }));
	Request("GET", "/x");
	ASSERT_TRUE(Run([&] { return f_.got.closes == 1 && f_.client == nullptr; }));
	EXPECT_EQ(f_.requests, 0);
	EXPECT_EQ(f_.got.status, 0);
	EXPECT_EQ(f_.got.code, NRF_H2_REFUSED_STREAM) << f_.got.err; /* above last-stream-id 0 */
	nrf_h2_conn_close(prev, NRF_ECLOSED);
}


namespace {

/* An upstream that writes raw bytes: the test decides where reads end. */
struct RawUpstream {
	const nrf_tp_ops *tp = nullptr;
	nrf_tp_listener *lst = nullptr;
	nrf_tp_conn *c = nullptr;
	std::string in; /* what the client sent */

	void Write(const std::string &s)
	{
		iovec iov = {const_cast<char *>(s.data()), s.size()};
		ASSERT_EQ(tp->writev(c, &iov, 1), (ssize_t)s.size());
	}
};

void
raw_upstream_event(void *arg, unsigned)
{
	RawUpstream *r = static_cast<RawUpstream *>(arg);
	char buf[4096];
	ssize_t n;

	while ((n = r->tp->read(r->c, buf, sizeof(buf))) > 0)
		r->in.append(buf, (size_t)n);
}

void
raw_upstream_accept(void *arg, unsigned)
{
	RawUpstream *r = static_cast<RawUpstream *>(arg);
	int err;
	nrf_tp_conn *c = r->tp->accept(r->lst, &err);

	if (c == nullptr)
		return;
	r->c = c;
	r->tp->set_handler(c, raw_upstream_event, r);
}

std::string
raw_frame(uint8_t type, uint8_t flags, uint32_t sid, size_t len)
{
	std::string h(9, '\0');
	h[0] = (char)(len >> 16);
	h[1] = (char)(len >> 8);
	h[2] = (char)len;
	h[3] = (char)type;
	h[4] = (char)flags;
	h[5] = (char)(sid >> 24);
	h[6] = (char)(sid >> 16);
	h[7] = (char)(sid >> 8);
	h[8] = (char)sid;
	return h;
}

} // namespace

/* Decision 0048: a DATA frame of an answer cut by the end of a read goes to
 * its stream as it arrives, not once the whole frame is in. */
TEST_F(H2Loop, AnAnswerDataFrameCutByAReadReachesTheStreamPieceByPiece)
{
	RawUpstream up;
	int err;
	nrf_tp_addr a, ua;

	up.tp = f_.tp;
	nrf_tp_addr_parse("127.0.0.1", 0, &a);
	up.lst = f_.tp->listen(f_.loop, &a, 4, raw_upstream_accept, &up, &err);
	ASSERT_NE(up.lst, nullptr);
	f_.tp->listener_addr(up.lst, &ua);
	nrf_h2_conn *prev = f_.client;
	f_.ready = false;
	f_.client = nrf_h2_conn_client(f_.ctx, &ua, &client_cbs, &f_, &err);
	ASSERT_NE(f_.client, nullptr);
	ASSERT_TRUE(Run([&] { return up.c != nullptr && up.in.size() >= 24 + 9; }));
	up.Write(raw_frame(4, 0, 0, 0) + raw_frame(4, 1, 0, 0)); /* SETTINGS, ACK */
	ASSERT_TRUE(Run([&] { return f_.ready; }));
	Request("GET", "/x");
	/* the request's HEADERS (stream 1) after the client's preface */
	ASSERT_TRUE(Run([&] {
		for (size_t o = 24; o + 9 <= up.in.size();) {
			size_t len = (uint8_t)up.in[o] << 16 | (uint8_t)up.in[o + 1] << 8 |
				(uint8_t)up.in[o + 2];
			if (up.in[o + 3] == 1)
				return true;
			o += 9 + len;
		}
		return false;
	}));
	/* :status 200 (static index 8), then 4 000 of a 10 000-byte DATA frame */
	up.Write(raw_frame(1, 4, 1, 1) + std::string(1, '\x88') + raw_frame(0, 1, 1, 10000) +
		std::string(4000, 'a'));
	ASSERT_TRUE(Run([&] { return f_.got.body.size() == 4000; }))
		<< "got " << f_.got.body.size() << " bytes of the cut frame";
	EXPECT_EQ(f_.got.status, 200);
	EXPECT_FALSE(f_.got.end);
	up.Write(std::string(6000, 'b'));
	ASSERT_TRUE(Run([&] { return f_.got.end; }));
	EXPECT_EQ(f_.got.body, std::string(4000, 'a') + std::string(6000, 'b'));
	nrf_h2_conn_close(f_.client, NRF_ECLOSED);
	ASSERT_TRUE(Run([&] { return f_.client == nullptr; }));
	f_.client = prev;
	f_.tp->close(up.c);
	f_.tp->listener_close(up.lst);
}
