/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State-machine tests of the front (server) engine alone: a client's byte
 * arrays in, the frames nrfwd writes out (h2_sm_fixture.h). Each case is
 * one rule of RFC 9113 and the answer it requires; nrfwd's own client is
 * not involved.
 */
#include "h2_sm_fixture.h"

using namespace sm;

namespace {

class Srv : public SmFixture {
protected:
	void SetUp() override
	{
		SmFixture::SetUp();
		lim_.max_header_bytes = 4096;
		lim_.max_body_bytes = 64 * 1024;
		lim_.max_concurrent_streams = 4;
		lim_.stream_window = 65535;
		lim_.conn_window = 1 << 20;
	}

	/* The connection is accepted; nrfwd's SETTINGS (and any first
	 * WINDOW_UPDATE) are taken and checked. */
	void start()
	{
		int err;
		make_ctx();
		nrf_tp_addr a = {};
		a.family = 4;
		a.ip[0] = 127;
		a.ip[3] = 1;
		lst_ = tp_->listen(loop_, &a, 16, [](void *, unsigned int) {}, nullptr, &err);
		ASSERT_NE(lst_, nullptr);
		nrf_tp_addr la;
		ASSERT_EQ(tp_->listener_addr(lst_, &la), 0);
		far_ = fake_tp_dial(la.port);
		ASSERT_NE(far_, nullptr);
		nrf_tp_conn *tc = tp_->accept(lst_, &err);
		ASSERT_NE(tc, nullptr);
		conn_ = nrf_h2_conn_server(ctx_, tc, &cbs_, this, &err);
		ASSERT_NE(conn_, nullptr);
		pump();
		auto v = take();
		ASSERT_GE(v.size(), 1u) << "no server preface";
		/* RFC 9113 §3.4: the server preface is a SETTINGS frame, first. */
		EXPECT_EQ(v[0].type, SETTINGS);
		EXPECT_EQ(v[0].flags, 0);
		EXPECT_EQ(v[0].setting(0x3), int64_t(lim_.max_concurrent_streams));
		EXPECT_EQ(v[0].setting(0x4), int64_t(lim_.stream_window));
		for (size_t i = 1; i < v.size(); i++)
			EXPECT_EQ(v[i].type, WINDOW_UPDATE) << describe(v);
		ASSERT_FALSE(closed());
	}

	/* start(), then the client's preface and SETTINGS; nrfwd ACKs them. */
	void open(const Bytes &client_settings = settings())
	{
		start();
		feed(kPreface + client_settings + settings_ack());
		auto v = take();
		ASSERT_EQ(describe(v), "SETTINGS+ACK");
	}

	/* The connection ended with GOAWAY(@p code) as its last frame; what
	 * the client sends after it is read and dropped, and the connection
	 * is gone once the client closes its end (nrfwd lingers until then,
	 * so that its GOAWAY is not lost to a reset). */
	void expect_goaway(const std::vector<Frame> &v, uint32_t code)
	{
		ASSERT_FALSE(v.empty()) << "no GOAWAY";
		EXPECT_EQ(v.back().type, GOAWAY) << describe(v);
		EXPECT_EQ(v.back().code(), code) << describe(v);
		feed(ping("after-it") + headers(101, get_request()));
		EXPECT_EQ(describe(take()), "") << "answered after its GOAWAY";
		fake_conn_shutdown(far_);
		pump();
		EXPECT_TRUE(closed());
		EXPECT_EQ(conn_closes_, 1);
		/* The error went out with the GOAWAY; the close that ends the
		 * lingering is the client's, an orderly one. */
		EXPECT_EQ(conn_err_, 0);
	}

	static void on_request(nrf_h2_stream *st, int err)
	{
		auto *t = static_cast<Srv *>(cur_);
		StreamLog &l = t->log(st);
		st->user = t; /* on_close follows only for streams with a user */
		l.request_err = err;
		l.method.assign(st->msg.method.p, st->msg.method.len);
		l.path.assign(st->msg.path.p, st->msg.path.len);
		for (const nrf_h2_chunk *c = st->msg.body.head; c; c = c->next)
			l.body.append(c->data + c->off, c->len - c->off);
		if (!t->answer_) {
			t->held_ = st;
			return;
		}
		nrf_h2_hdr h[1] = {{nrf_slice_str("content-type"),
			nrf_slice_str("application/json")}};
		int status = err == 0 ? 200 : err == NRF_ETOOBIG ? 413 : 400;
		ASSERT_EQ(nrf_h2_respond(st, status, h, 1, t->answer_body_.data(),
				  t->answer_body_.size(), false), 0);
	}

	nrf_h2_cbs cbs_ = {
		.on_request = on_request,
		.on_sent = nullptr,
		.on_response = nullptr,
		.on_data = nullptr,
		.on_close = on_close,
		.on_conn_ready = nullptr,
		.on_conn_stream_gone = nullptr,
		.on_conn_goaway = nullptr,
		.on_conn_close = on_conn_close,
		.on_conn_ping_ack = on_ping_ack,
		.on_conn_idle = nullptr,
	};
	bool answer_ = true;
	nrf_h2_stream *held_ = nullptr; /* the last request left unanswered */
	std::string answer_body_ = "{\"nfInstances\":[]}";
};

/* ---- preface and SETTINGS (RFC 9113 §3.4, §6.5) ------------------------ */

TEST_F(Srv, PrefaceThenSettingsIsAcked)
{
	open();
	EXPECT_FALSE(closed());
}

TEST_F(Srv, PrefaceInPiecesOfOneByte)
{
	start();
	feed(kPreface + settings({{0x4, 100000}}), 1);
	EXPECT_EQ(describe(take()), "SETTINGS+ACK");
	EXPECT_FALSE(closed());
}

TEST_F(Srv, WrongPrefaceEndsTheConnection)
{
	start();
	feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	/* RFC 9113 §3.4: an invalid preface is a connection error of type
	 * PROTOCOL_ERROR; a GOAWAY may be omitted, the close may not. */
	auto v = take();
	EXPECT_TRUE(closed());
	if (!v.empty()) {
		EXPECT_EQ(v.back().type, GOAWAY);
		EXPECT_EQ(v.back().code(), PROTOCOL_ERROR);
	}
}

TEST_F(Srv, FirstFrameNotSettings)
{
	start();
	feed(kPreface + ping("12345678"));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, SettingsLengthNotMultipleOfSix)
{
	start();
	feed(kPreface + frame(SETTINGS, 0, 0, Bytes("\x00\x03\x00\x00\x00", 5)));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Srv, SettingsAckWithPayload)
{
	open();
	feed(frame(SETTINGS, ACK, 0, Bytes("\x00\x03\x00\x00\x00\x01", 6)));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Srv, SettingsOnAStream)
{
	open();
	feed(frame(SETTINGS, 0, 1, ""));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, EnablePushOtherThanZeroOrOne)
{
	start();
	feed(kPreface + settings({{0x2, 2}}));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, InitialWindowAboveMaximum)
{
	start();
	feed(kPreface + settings({{0x4, 0x80000000u}}));
	expect_goaway(take(), FLOW_CONTROL_ERROR);
}

TEST_F(Srv, MaxFrameSizeOutOfRange)
{
	start();
	feed(kPreface + settings({{0x5, 16383}}));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, UnknownSettingIsIgnored)
{
	start();
	feed(kPreface + settings({{0xfe, 7}}));
	EXPECT_EQ(describe(take()), "SETTINGS+ACK");
	EXPECT_FALSE(closed());
}

/* ---- PING (§6.7) ------------------------------------------------------- */

TEST_F(Srv, PingIsAnsweredWithTheSameOpaqueData)
{
	open();
	feed(ping("nrf-ping"));
	auto v = take();
	ASSERT_EQ(describe(v), "PING+ACK");
	EXPECT_EQ(v[0].payload, "nrf-ping");
}

TEST_F(Srv, PingAckIsNotAnswered)
{
	open();
	feed(ping("nrf-ping", ACK));
	EXPECT_EQ(describe(take()), "");
	EXPECT_FALSE(closed());
}

TEST_F(Srv, PingOfSevenBytes)
{
	open();
	feed(frame(PING, 0, 0, "1234567"));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Srv, PingOnAStream)
{
	open();
	feed(frame(PING, 0, 1, "12345678"));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, OwnPingAckReachesTheOwner)
{
	open();
	ASSERT_EQ(nrf_h2_conn_ping(conn_, 0x1122334455667788ull), 0);
	pump();
	auto v = take();
	ASSERT_EQ(describe(v), "PING");
	feed(ping(v[0].payload, ACK));
	ASSERT_EQ(ping_acks_.size(), 1u);
	EXPECT_EQ(ping_acks_[0], 0x1122334455667788ull);
}

/* ---- streams (§5.1, §8.1) --------------------------------------------- */

TEST_F(Srv, GetIsDeliveredAndAnswered)
{
	open();
	feed(headers(1, get_request("/nnrf-disc/v1/nf-instances?target-nf-type=SMF")));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_EQ(l->request_err, 0);
	EXPECT_EQ(l->method, "GET");
	EXPECT_EQ(l->path, "/nnrf-disc/v1/nf-instances?target-nf-type=SMF");
	auto v = take();
	ASSERT_EQ(describe(v), "HEADERS/1 DATA/1+ES");
	Fields f = inf_.decode(v[0].payload);
	EXPECT_EQ(field(f, ":status"), "200");
	EXPECT_EQ(field(f, "content-type"), "application/json");
	EXPECT_EQ(v[1].payload, answer_body_);
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, NO_ERROR);
}

TEST_F(Srv, PostBodyInSeveralDataFrames)
{
	open();
	Fields req = get_request("/nnrf-nfm/v1/subscriptions");
	req[0].second = "POST";
	feed(headers(1, req, END_HEADERS) + frame(DATA, 0, 1, "{\"a\":") +
		frame(DATA, 0, 1, "1") + frame(DATA, END_STREAM, 1, "}"));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_EQ(l->request_err, 0);
	EXPECT_EQ(l->body, "{\"a\":1}");
	auto v = take();
	/* Request bodies are credited back (connection and stream windows
	 * may be updated); the answer follows. */
	std::vector<Frame> ans;
	for (auto &f : v)
		if (f.type != WINDOW_UPDATE)
			ans.push_back(f);
	EXPECT_EQ(describe(ans), "HEADERS/1 DATA/1+ES");
}

TEST_F(Srv, HeaderBlockInContinuationFrames)
{
	open();
	Bytes blk = block(get_request());
	feed(frame(HEADERS, END_STREAM, 1, blk.substr(0, 5)) +
		frame(CONTINUATION, 0, 1, blk.substr(5, 7)) +
		frame(CONTINUATION, END_HEADERS, 1, blk.substr(12)));
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->request_err, 0);
	EXPECT_EQ(describe(take()), "HEADERS/1 DATA/1+ES");
}

TEST_F(Srv, OtherFrameInsideAHeaderBlock)
{
	open();
	Bytes blk = block(get_request());
	feed(frame(HEADERS, END_STREAM, 1, blk.substr(0, 5)) + ping("12345678"));
	expect_goaway(take(), PROTOCOL_ERROR);
	EXPECT_EQ(find(1) == nullptr ? 1 : find(1)->request_err, 1) << "never delivered";
}

TEST_F(Srv, ContinuationOfAnotherStream)
{
	open();
	Bytes blk = block(get_request());
	feed(frame(HEADERS, END_STREAM, 1, blk.substr(0, 5)) +
		frame(CONTINUATION, END_HEADERS, 3, blk.substr(5)));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, ContinuationWithoutHeaders)
{
	open();
	feed(frame(CONTINUATION, END_HEADERS, 1, block(get_request())));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, EvenStreamIdFromAClient)
{
	open();
	feed(headers(2, get_request()));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, StreamIdsMustIncrease)
{
	open();
	feed(headers(5, get_request()));
	EXPECT_EQ(describe(take()), "HEADERS/5 DATA/5+ES");
	feed(headers(3, get_request()));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, DataOnAnIdleStream)
{
	open();
	feed(frame(DATA, END_STREAM, 1, "x"));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, DataAfterEndStreamIsStreamClosed)
{
	open();
	answer_ = false; /* the stream stays half-closed (remote) */
	feed(headers(1, get_request()));
	ASSERT_EQ(describe(take()), "");
	feed(frame(DATA, 0, 1, "late"));
	/* §5.1 half-closed (remote): STREAM_CLOSED. nghttp2 makes it a
	 * connection error, and the front does as nghttp2 does. */
	expect_goaway(take(), STREAM_CLOSED);
}

TEST_F(Srv, RstStreamOnAnIdleStream)
{
	open();
	feed(rst_stream(1, CANCEL));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, ClientResetBeforeTheAnswer)
{
	open();
	answer_ = false;
	Fields req = get_request();
	req[0].second = "POST";
	feed(headers(1, req, END_HEADERS) + frame(DATA, 0, 1, "{") + rst_stream(1, CANCEL));
	/* The request never completed: the owner never saw it. */
	EXPECT_EQ(find(1), nullptr);
	/* §5.1 closed: a frame other than PRIORITY after the client's own
	 * RST_STREAM is a stream error of STREAM_CLOSED; the connection goes
	 * on. */
	answer_ = true;
	feed(frame(DATA, END_STREAM, 1, "}") + headers(3, get_request()));
	std::vector<Frame> rest;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			rest.push_back(f);
	EXPECT_EQ(describe(rest), "RST_STREAM/1(5) HEADERS/3 DATA/3+ES");
	EXPECT_EQ(find(1), nullptr);
}

static Bytes
priority_on(uint32_t sid, uint32_t dep)
{
	Bytes p;
	put32(p, dep);
	p.push_back(16);
	return frame(PRIORITY, 0, sid, p);
}

TEST_F(Srv, PriorityOnItselfResetsAnOpenStream)
{
	open();
	Fields req = get_request();
	req[0].second = "POST";
	feed(headers(1, req, END_HEADERS) + priority_on(1, 1));
	/* §5.3.1: a stream error of PROTOCOL_ERROR; the request is reset
	 * unanswered and never reaches the owner. */
	std::vector<Frame> v;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			v.push_back(f);
	ASSERT_EQ(describe(v), "RST_STREAM/1(1)");
	EXPECT_EQ(find(1), nullptr);
	EXPECT_FALSE(closed());
}

TEST_F(Srv, PriorityOnItselfOnAnIdleStream)
{
	open();
	/* No stream to reset: nghttp2 ends the connection, so does the front. */
	feed(priority_on(1, 1));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, PriorityOfWrongLength)
{
	open();
	feed(frame(PRIORITY, 0, 1, "1234"));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Srv, UnknownFrameTypeIsIgnored)
{
	open();
	feed(frame(0x42, 0xff, 0, "whatever") + frame(0x42, 0, 7, "") +
		headers(1, get_request()));
	EXPECT_EQ(describe(take()), "HEADERS/1 DATA/1+ES");
}

static Bytes
five_requests()
{
	Bytes b;
	for (uint32_t i = 0; i < 5; i++)
		b += headers(1 + 2 * i, get_request());
	return b;
}

TEST_F(Srv, MoreStreamsThanAnnouncedBeforeTheAck)
{
	start();
	answer_ = false;
	/* The client has not acknowledged SETTINGS_MAX_CONCURRENT_STREAMS
	 * = 4 yet: §5.1.2 lets it be unaware; the fifth stream alone is
	 * refused, and may be sent again. */
	feed(kPreface + settings() + five_requests());
	ASSERT_EQ(describe(take()), "SETTINGS+ACK RST_STREAM/9(7)");
	EXPECT_FALSE(closed());
	EXPECT_EQ(streams_.size(), 4u);
}

TEST_F(Srv, MoreStreamsThanAnnouncedAfterTheAck)
{
	open();
	answer_ = false;
	/* Acknowledged, then broken: PROTOCOL_ERROR (§5.1.2), which nghttp2
	 * and the front make a connection error. */
	feed(five_requests());
	expect_goaway(take(), PROTOCOL_ERROR);
	EXPECT_EQ(streams_.size(), 4u);
}

TEST_F(Srv, UppercaseFieldNameIsMalformed)
{
	open();
	Fields req = get_request();
	req.emplace_back("Accept", "application/json");
	feed(headers(1, req));
	auto v = take();
	/* §8.2.1: a malformed request is a stream error of PROTOCOL_ERROR;
	 * it never reaches the owner. */
	ASSERT_EQ(describe(v), "RST_STREAM/1(1)");
	EXPECT_TRUE(find(1) == nullptr || find(1)->request_err == 1);
	EXPECT_FALSE(closed());
}

TEST_F(Srv, ConnectionSpecificFieldIsMalformed)
{
	open();
	Fields req = get_request();
	req.emplace_back("connection", "keep-alive");
	feed(headers(1, req));
	EXPECT_EQ(describe(take()), "RST_STREAM/1(1)");
}

TEST_F(Srv, MissingMethodIsMalformed)
{
	open();
	Fields req = get_request();
	req.erase(req.begin());
	feed(headers(1, req));
	EXPECT_EQ(describe(take()), "RST_STREAM/1(1)");
}

TEST_F(Srv, ContentLengthDisagreesWithTheBody)
{
	open();
	Fields req = get_request();
	req[0].second = "POST";
	req.emplace_back("content-length", "5");
	feed(headers(1, req, END_HEADERS) + frame(DATA, END_STREAM, 1, "abc"));
	std::vector<Frame> v;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			v.push_back(f);
	EXPECT_EQ(describe(v), "RST_STREAM/1(1)");
	EXPECT_FALSE(closed());
}

TEST_F(Srv, FrameOverMaxFrameSize)
{
	open();
	feed(frame(0x42, 0, 0, Bytes(16385, 'x')));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Srv, PushPromiseFromAClient)
{
	open();
	Bytes p;
	put32(p, 2);
	feed(frame(PUSH_PROMISE, END_HEADERS, 1, p + block(get_request())));
	expect_goaway(take(), PROTOCOL_ERROR);
}

/* ---- flow control (§5.2, §6.9) ---------------------------------------- */

TEST_F(Srv, WindowUpdateOfZeroOnTheConnection)
{
	open();
	feed(window_update(0, 0));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, WindowUpdateOfZeroOnAStream)
{
	open();
	answer_ = false;
	feed(headers(1, get_request()));
	feed(window_update(1, 0));
	/* §6.9: a stream error, which nghttp2 and the front make a
	 * connection error. */
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, WindowUpdateOnAnIdleStream)
{
	open();
	feed(window_update(3, 100));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Srv, ConnectionWindowOverflow)
{
	open();
	feed(window_update(0, 0x7fffffffu));
	expect_goaway(take(), FLOW_CONTROL_ERROR);
}

TEST_F(Srv, StreamWindowOverflow)
{
	open();
	answer_ = false;
	feed(headers(1, get_request()));
	feed(window_update(1, 0x7fffffffu));
	ASSERT_EQ(describe(take()), "RST_STREAM/1(3)");
	EXPECT_FALSE(closed());
}

TEST_F(Srv, AnswerWaitsForTheClientsStreamWindow)
{
	/* The client allows 10 bytes per stream: the 40-byte answer goes
	 * out in 10-byte steps, one per WINDOW_UPDATE. */
	open(settings({{0x4, 10}}));
	answer_body_ = std::string(40, 'n');
	feed(headers(1, get_request()));
	auto v = take();
	ASSERT_EQ(describe(v), "HEADERS/1 DATA/1");
	EXPECT_EQ(v[1].payload.size(), 10u);
	std::string got = v[1].payload;
	for (int i = 0; i < 3; i++) {
		feed(window_update(1, 10));
		v = take();
		ASSERT_EQ(v.size(), 1u) << describe(v);
		EXPECT_EQ(v[0].type, DATA);
		got += v[0].payload;
	}
	EXPECT_EQ(got, answer_body_);
	EXPECT_TRUE(v[0].flags & END_STREAM);
}

TEST_F(Srv, SmallerInitialWindowMidStreamHoldsTheAnswer)
{
	open(settings({{0x4, 20}}));
	answer_body_ = std::string(30, 'n');
	feed(headers(1, get_request()));
	auto v = take();
	ASSERT_EQ(describe(v), "HEADERS/1 DATA/1");
	EXPECT_EQ(v[1].payload.size(), 20u);
	/* §6.9.2: the new size applies to open streams; the window goes to
	 * 5 - 20 = -15, nothing may be sent until it is positive again. */
	feed(settings({{0x4, 5}}));
	EXPECT_EQ(describe(take()), "SETTINGS+ACK");
	feed(window_update(1, 15));
	EXPECT_EQ(describe(take()), "");
	feed(window_update(1, 10));
	v = take();
	ASSERT_EQ(describe(v), "DATA/1+ES");
	EXPECT_EQ(v[0].payload.size(), 10u);
}

TEST_F(Srv, DataBeyondTheStreamWindow)
{
	lim_.stream_window = 16;
	lim_.max_body_bytes = 64;
	open();
	Fields req = get_request();
	req[0].second = "POST";
	answer_ = false;
	feed(headers(1, req, END_HEADERS) + frame(DATA, 0, 1, std::string(17, 'b')));
	std::vector<Frame> v;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			v.push_back(f);
	/* §6.9.1: a stream error of FLOW_CONTROL_ERROR at least. */
	ASSERT_FALSE(v.empty());
	EXPECT_EQ(v.back().code(), FLOW_CONTROL_ERROR) << describe(v);
}

/* ---- GOAWAY (§6.8) ---------------------------------------------------- */

TEST_F(Srv, ClientGoawayLetsOpenStreamsFinish)
{
	open();
	answer_ = false;
	feed(headers(1, get_request()));
	feed(goaway(0, NO_ERROR));
	EXPECT_FALSE(closed());
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->request_err, 0);
	ASSERT_NE(held_, nullptr);
	ASSERT_EQ(nrf_h2_respond(held_, 200, nullptr, 0, "ok", 2, false), 0);
	pump();
	EXPECT_EQ(describe(take()), "HEADERS/1 DATA/1+ES");
}

TEST_F(Srv, GracefulShutdownAnnouncesTheLastStream)
{
	open();
	feed(headers(1, get_request()));
	take();
	nrf_h2_conn_shutdown(conn_, true);
	pump();
	auto v = take();
	ASSERT_FALSE(v.empty());
	EXPECT_EQ(v.back().type, GOAWAY) << describe(v);
	EXPECT_EQ(v.back().last_sid(), 1u);
	EXPECT_EQ(v.back().code(), NO_ERROR);
}

/* ---- the same bytes in any pieces give the same frames ------------------ */

class SrvPieces : public Srv, public ::testing::WithParamInterface<size_t> {};

TEST_P(SrvPieces, ExchangeDoesNotDependOnReadBoundaries)
{
	start();
	Fields req = get_request("/nnrf-nfm/v1/nf-instances/4947a69a-f61b-4bc1-b9da-47c9c5d14b64");
	req[0].second = "PUT";
	Bytes blk = block(req);
	Bytes in = kPreface + settings({{0x4, 1000}}) + settings_ack() + ping("abcdefgh") +
		frame(HEADERS, 0, 1, blk.substr(0, 9)) +
		frame(CONTINUATION, END_HEADERS, 1, blk.substr(9)) +
		frame(DATA, 0, 1, "{\"nfStatus\":") + frame(DATA, END_STREAM, 1, "\"REGISTERED\"}") +
		headers(3, get_request());
	feed(in, GetParam());
	/* Per stream the order is fixed; between streams it depends on what
	 * one read held (HEADERS go out before any DATA of that write). */
	std::vector<Frame> c0, s1, s3;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			(f.sid == 0 ? c0 : f.sid == 1 ? s1 : s3).push_back(f);
	EXPECT_EQ(describe(c0), "SETTINGS+ACK PING+ACK");
	EXPECT_EQ(describe(s1), "HEADERS/1 DATA/1+ES");
	EXPECT_EQ(describe(s3), "HEADERS/3 DATA/3+ES");
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->body, "{\"nfStatus\":\"REGISTERED\"}");
}

INSTANTIATE_TEST_SUITE_P(Pieces, SrvPieces, ::testing::Values(0, 1, 2, 7, 9, 10, 64));

} // namespace
