/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State-machine tests of the peer (client) engine alone: the test is the
 * upstream NRF, byte arrays in, the frames nrfwd writes out
 * (h2_sm_fixture.h). nrfwd's own server is not involved.
 */
#include "h2_sm_fixture.h"

using namespace sm;

namespace {

class Cli : public SmFixture {
protected:
	void SetUp() override
	{
		SmFixture::SetUp();
		lim_.max_header_bytes = 4096;
		lim_.max_body_bytes = 64 * 1024;
		lim_.max_concurrent_streams = 8;
		lim_.peer_stream_window = 65535;
		lim_.conn_window = 1 << 20;
	}

	static fake_connect on_connect(void *arg, fake_conn *c, const nrf_tp_addr *)
	{
		static_cast<Cli *>(arg)->far_ = c;
		return FAKE_ACCEPT;
	}

	/* nrfwd connects; its preface and SETTINGS are taken and checked. */
	void start()
	{
		int err;
		make_ctx();
		fake_tp_set_connect(on_connect, this);
		nrf_tp_addr a = {};
		a.family = 4;
		a.ip[0] = 192;
		a.ip[1] = 0;
		a.ip[2] = 2;
		a.ip[3] = 10;
		a.port = 8000;
		conn_ = nrf_h2_conn_client(ctx_, &a, &cbs_, this, &err);
		ASSERT_NE(conn_, nullptr);
		ASSERT_NE(far_, nullptr);
		pump();
		ASSERT_TRUE(ready_);
		std::string out = take_bytes();
		/* RFC 9113 §3.4: the client preface, then SETTINGS. */
		ASSERT_GE(out.size(), kPreface.size());
		ASSERT_EQ(out.substr(0, kPreface.size()), kPreface);
		auto v = parse(out.substr(kPreface.size()));
		ASSERT_GE(v.size(), 1u);
		EXPECT_EQ(v[0].type, SETTINGS);
		EXPECT_EQ(v[0].flags, 0);
		EXPECT_EQ(v[0].setting(0x2), 0) << "push must be off";
		EXPECT_EQ(v[0].setting(0x4), int64_t(lim_.peer_stream_window));
		for (size_t i = 1; i < v.size(); i++)
			EXPECT_EQ(v[i].type, WINDOW_UPDATE) << describe(v);
	}

	/* start(), then the upstream's SETTINGS and its ACK of ours. */
	void open(const Bytes &server_settings = settings())
	{
		start();
		feed(server_settings + settings_ack());
		ASSERT_EQ(describe(take()), "SETTINGS+ACK");
		ASSERT_TRUE(nrf_h2_conn_usable(conn_));
	}

	/* A request; its HEADERS (and DATA) are taken and returned. */
	nrf_h2_stream *request(const std::string &method = "GET",
		const nrf_h2_body *body = nullptr, std::vector<Frame> *out = nullptr)
	{
		std::vector<nrf_h2_hdr> h;
		static const char *n[] = {":method", ":scheme", ":authority", ":path",
			"accept"};
		const char *v[] = {method.c_str(), "http", "nrf.test",
			"/nnrf-disc/v1/nf-instances?target-nf-type=AMF", "application/json"};
		for (int i = 0; i < 5; i++)
			h.push_back({nrf_slice_str(n[i]), nrf_slice_str(v[i])});
		int err = 0;
		nrf_h2_stream *st = nrf_h2_request(conn_, h.data(), h.size(), body, this, &err);
		EXPECT_NE(st, nullptr) << err;
		pump();
		auto f = take();
		if (out != nullptr)
			*out = f;
		return st;
	}

	/* The connection ended with GOAWAY(@p code) as nrfwd's last frame. */
	void expect_goaway(const std::vector<Frame> &v, uint32_t code)
	{
		ASSERT_FALSE(v.empty()) << "no GOAWAY";
		EXPECT_EQ(v.back().type, GOAWAY) << describe(v);
		EXPECT_EQ(v.back().code(), code) << describe(v);
		fake_conn_shutdown(far_);
		pump();
		EXPECT_TRUE(closed());
		EXPECT_EQ(conn_closes_, 1);
		EXPECT_EQ(conn_err_, NRF_EPROTO) << "the owner is told why";
	}

	static void on_ready(nrf_h2_conn *) { static_cast<Cli *>(cur_)->ready_ = true; }

	static void on_response(nrf_h2_stream *st)
	{
		StreamLog &l = static_cast<Cli *>(cur_)->log(st);
		l.response = true;
		l.status = st->msg.status;
	}

	static void on_data(nrf_h2_stream *st)
	{
		StreamLog &l = static_cast<Cli *>(cur_)->log(st);
		size_t n = 0;
		for (const nrf_h2_chunk *c = st->msg.body.head; c; c = c->next) {
			l.body.append(c->data + c->off, c->len - c->off);
			n += c->len - c->off;
		}
		nrf_h2_body_release(static_cast<Cli *>(cur_)->ctx_, &st->msg.body);
		nrf_h2_consume(st, n);
	}

	static void on_goaway(nrf_h2_conn *) { static_cast<Cli *>(cur_)->goaways_++; }

	nrf_h2_cbs cbs_ = {
		.on_request = nullptr,
		.on_sent = nullptr,
		.on_response = on_response,
		.on_data = on_data,
		.on_close = on_close,
		.on_conn_ready = on_ready,
		.on_conn_stream_gone = nullptr,
		.on_conn_goaway = on_goaway,
		.on_conn_close = on_conn_close,
		.on_conn_ping_ack = on_ping_ack,
		.on_conn_idle = nullptr,
	};
	bool ready_ = false;
	int goaways_ = 0;
};

Bytes
answer_headers(uint32_t sid, const std::string &status, uint8_t flags = END_HEADERS)
{
	return headers(sid, {{":status", status}, {"content-type", "application/json"}},
		flags);
}

/* ---- preface and SETTINGS --------------------------------------------- */

TEST_F(Cli, PrefaceSettingsAndAck)
{
	open();
	EXPECT_FALSE(closed());
}

TEST_F(Cli, UpstreamMaxConcurrentStreamsIsKept)
{
	open(settings({{0x3, 1}}));
	EXPECT_EQ(nrf_h2_conn_remote_max_streams(conn_), 1u);
}

TEST_F(Cli, SettingsLengthNotMultipleOfSix)
{
	start();
	feed(frame(SETTINGS, 0, 0, Bytes("\x00\x03\x00", 3)));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Cli, InitialWindowAboveMaximum)
{
	start();
	feed(settings({{0x4, 0x80000000u}}));
	expect_goaway(take(), FLOW_CONTROL_ERROR);
}

TEST_F(Cli, PingIsAnswered)
{
	open();
	feed(ping("upstream"));
	auto v = take();
	ASSERT_EQ(describe(v), "PING+ACK");
	EXPECT_EQ(v[0].payload, "upstream");
}

TEST_F(Cli, OwnPingAckReachesTheOwner)
{
	open();
	ASSERT_EQ(nrf_h2_conn_ping(conn_, 42), 0);
	pump();
	auto v = take();
	ASSERT_EQ(describe(v), "PING");
	feed(ping(v[0].payload, ACK));
	ASSERT_EQ(ping_acks_.size(), 1u);
	EXPECT_EQ(ping_acks_[0], 42u);
}

/* ---- requests and answers --------------------------------------------- */

TEST_F(Cli, RequestHeadersAreWellFormed)
{
	open();
	std::vector<Frame> out;
	nrf_h2_stream *st = request("GET", nullptr, &out);
	ASSERT_NE(st, nullptr);
	EXPECT_EQ(st->id, 1);
	ASSERT_EQ(describe(out), "HEADERS/1+ES");
	EXPECT_TRUE(out[0].flags & END_HEADERS);
	Fields f = inf_.decode(out[0].payload);
	ASSERT_GE(f.size(), 4u);
	EXPECT_EQ(f[0].first, ":method");
	EXPECT_EQ(f[0].second, "GET");
	EXPECT_EQ(field(f, ":path"), "/nnrf-disc/v1/nf-instances?target-nf-type=AMF");
	EXPECT_EQ(field(f, ":authority"), "nrf.test");
	EXPECT_EQ(field(f, "accept"), "application/json");
	/* Pseudo-header fields first (§8.3). */
	bool regular = false;
	for (auto &kv : f) {
		if (kv.first[0] != ':')
			regular = true;
		else
			EXPECT_FALSE(regular) << kv.first << " after a regular field";
	}
}

TEST_F(Cli, AnswerWithBody)
{
	open();
	request();
	feed(answer_headers(1, "200") + frame(DATA, 0, 1, "{\"nfInstances\":") +
		frame(DATA, END_STREAM, 1, "[]}"));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_TRUE(l->response);
	EXPECT_EQ(l->status, 200);
	EXPECT_EQ(l->body, "{\"nfInstances\":[]}");
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, NO_ERROR);
	EXPECT_EQ(l->close_err, 0);
	/* Nothing owed but window updates. */
	for (auto &f : take())
		EXPECT_EQ(f.type, WINDOW_UPDATE);
}

TEST_F(Cli, InformationalThenFinalAnswer)
{
	open();
	request();
	feed(answer_headers(1, "103") + answer_headers(1, "404", END_HEADERS | END_STREAM));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_EQ(l->status, 404) << "1xx are skipped";
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, NO_ERROR);
}

TEST_F(Cli, AnswerHeaderBlockInContinuation)
{
	open();
	request();
	Bytes blk = block({{":status", "200"}, {"content-type", "application/json"}});
	feed(frame(HEADERS, END_STREAM, 1, blk.substr(0, 3)) +
		frame(CONTINUATION, END_HEADERS, 1, blk.substr(3)));
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->status, 200);
	EXPECT_TRUE(find(1)->closed);
}

TEST_F(Cli, AnswerFramesInPiecesOfOneByte)
{
	open();
	request();
	feed(answer_headers(1, "200") + frame(DATA, END_STREAM, 1, "{}"), 1);
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->body, "{}");
	EXPECT_TRUE(find(1)->closed);
}

TEST_F(Cli, AnswerWithoutStatusIsMalformed)
{
	open();
	request();
	feed(headers(1, {{"content-type", "application/json"}}));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_FALSE(l->response);
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, PROTOCOL_ERROR);
	/* §8.1.1: a stream error of PROTOCOL_ERROR. */
	auto v = take();
	ASSERT_EQ(describe(v), "RST_STREAM/1(1)");
	EXPECT_FALSE(closed());
}

TEST_F(Cli, ContentLengthDisagreesWithTheBody)
{
	open();
	request();
	feed(headers(1, {{":status", "200"}, {"content-length", "10"}}, END_HEADERS) +
		frame(DATA, END_STREAM, 1, "short"));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, PROTOCOL_ERROR);
	std::vector<Frame> v;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			v.push_back(f);
	EXPECT_EQ(describe(v), "RST_STREAM/1(1)");
}

TEST_F(Cli, UpstreamResetsTheStream)
{
	open();
	request();
	feed(rst_stream(1, REFUSED_STREAM));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, REFUSED_STREAM);
	EXPECT_FALSE(closed());
	EXPECT_EQ(describe(take()), "");
}

TEST_F(Cli, CancelResetsTheStream)
{
	open();
	nrf_h2_stream *st = request();
	nrf_h2_cancel(st);
	pump();
	EXPECT_EQ(describe(take()), "RST_STREAM/1(8)");
	/* The answer that was on its way is dropped, not delivered. */
	feed(answer_headers(1, "200", END_HEADERS | END_STREAM));
	EXPECT_FALSE(find(1) != nullptr && find(1)->response);
	EXPECT_FALSE(closed());
}

TEST_F(Cli, AnswerOnAStreamNeverOpened)
{
	open();
	request();
	feed(answer_headers(3, "200", END_HEADERS | END_STREAM));
	/* §5.1 idle: HEADERS from a server on an odd id it was never sent is
	 * a connection error of PROTOCOL_ERROR. */
	expect_goaway(take(), PROTOCOL_ERROR);
	ASSERT_NE(find(1), nullptr);
	EXPECT_TRUE(find(1)->closed);
}

TEST_F(Cli, DataOnAStreamNeverOpened)
{
	open();
	feed(frame(DATA, END_STREAM, 5, "x"));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Cli, PushPromiseWithPushOff)
{
	open();
	request();
	Bytes p;
	put32(p, 2);
	feed(frame(PUSH_PROMISE, END_HEADERS, 1, p + block(get_request())));
	/* §8.4: push was disabled in our SETTINGS: PROTOCOL_ERROR. */
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Cli, ContinuationWithoutHeaders)
{
	open();
	request();
	feed(frame(CONTINUATION, END_HEADERS, 1, block({{":status", "200"}})));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Cli, OtherFrameInsideAHeaderBlock)
{
	open();
	request();
	Bytes blk = block({{":status", "200"}});
	feed(frame(HEADERS, END_STREAM, 1, blk.substr(0, 1)) + ping("12345678"));
	expect_goaway(take(), PROTOCOL_ERROR);
}

TEST_F(Cli, FrameOverMaxFrameSize)
{
	open();
	feed(frame(0x42, 0, 0, Bytes(16385, 'x')));
	expect_goaway(take(), FRAME_SIZE_ERROR);
}

TEST_F(Cli, UnknownFrameTypeIsIgnored)
{
	open();
	request();
	feed(frame(0x42, 0, 1, "abc") + answer_headers(1, "200", END_HEADERS | END_STREAM));
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->status, 200);
	EXPECT_FALSE(closed());
}

/* ---- flow control ------------------------------------------------------ */

TEST_F(Cli, DataBeyondTheStreamWindow)
{
	lim_.peer_stream_window = 16;
	open();
	nrf_h2_stream *st = request();
	(void)st;
	feed(answer_headers(1, "200") + frame(DATA, 0, 1, std::string(17, 'a')));
	const StreamLog *l = find(1);
	ASSERT_NE(l, nullptr);
	EXPECT_TRUE(l->closed);
	EXPECT_EQ(l->close_code, FLOW_CONTROL_ERROR);
	std::vector<Frame> v;
	for (auto &f : take())
		if (f.type != WINDOW_UPDATE)
			v.push_back(f);
	ASSERT_FALSE(v.empty());
	EXPECT_EQ(v.back().code(), FLOW_CONTROL_ERROR) << describe(v);
}

TEST_F(Cli, RequestBodyWaitsForTheUpstreamsWindow)
{
	/* The upstream allows 8 bytes per stream: a 20-byte body goes out
	 * 8, 8, 4, one step per WINDOW_UPDATE. */
	open(settings({{0x4, 8}}));
	std::string body = "{\"nfType\":\"AMF\"}XXXX";
	ASSERT_EQ(body.size(), 20u);
	nrf_h2_body b = {};
	ASSERT_EQ(nrf_h2_body_append(ctx_, &b, body.data(), body.size()), 0);
	std::vector<Frame> out;
	request("POST", &b, &out);
	ASSERT_EQ(describe(out), "HEADERS/1 DATA/1");
	std::string got = out[1].payload;
	EXPECT_EQ(got.size(), 8u);
	feed(window_update(1, 8));
	out = take();
	ASSERT_EQ(describe(out), "DATA/1");
	got += out[0].payload;
	feed(window_update(1, 8));
	out = take();
	ASSERT_EQ(describe(out), "DATA/1+ES");
	got += out[0].payload;
	EXPECT_EQ(got, body);
	feed(answer_headers(1, "201", END_HEADERS | END_STREAM));
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->status, 201);
	nrf_h2_body_release(ctx_, &b);
}

TEST_F(Cli, ConnectionWindowOverflow)
{
	open();
	feed(window_update(0, 0x7fffffffu));
	expect_goaway(take(), FLOW_CONTROL_ERROR);
}

TEST_F(Cli, WindowUpdateOfZeroOnTheConnection)
{
	open();
	feed(window_update(0, 0));
	expect_goaway(take(), PROTOCOL_ERROR);
}

/* ---- GOAWAY ----------------------------------------------------------- */

TEST_F(Cli, GoawayRefusesStreamsAboveItsLastId)
{
	open();
	request();
	request();
	request();
	/* Streams 1, 3, 5; the upstream processes 1 only. */
	feed(goaway(1, NO_ERROR));
	EXPECT_EQ(goaways_, 1);
	EXPECT_FALSE(nrf_h2_conn_usable(conn_)) << "no new streams after GOAWAY";
	ASSERT_NE(find(3), nullptr);
	ASSERT_NE(find(5), nullptr);
	EXPECT_TRUE(find(3)->closed);
	EXPECT_EQ(find(3)->close_code, REFUSED_STREAM) << "never processed: may go again";
	EXPECT_TRUE(find(5)->closed);
	EXPECT_EQ(find(5)->close_code, REFUSED_STREAM);
	EXPECT_TRUE(find(1) == nullptr || !find(1)->closed);
	/* Stream 1 is still answered. */
	feed(answer_headers(1, "200", END_HEADERS | END_STREAM));
	ASSERT_NE(find(1), nullptr);
	EXPECT_EQ(find(1)->status, 200);
	EXPECT_EQ(find(1)->close_code, NO_ERROR);
}

} // namespace
