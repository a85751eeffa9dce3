/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/h2/h2_tmo.c: the timeouts of a context, driven by
 * nrf_h2_ctx_sweep() with a made-up clock, against a raw HTTP/2 client on a
 * loopback socket (what a careless or hostile client sends, frame by frame)
 * and against a peer connection of the same context.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_tp.h"

namespace {

const uint64_t T0 = 1000000000000ull; /* the made-up clock starts here (ns) */

enum : uint8_t { DATA = 0, HEADERS = 1, RST_STREAM = 3, SETTINGS = 4, GOAWAY = 7, WINDOW_UPDATE = 8 };
enum : uint8_t { END_STREAM = 1, ACK = 1, END_HEADERS = 4 };

struct Frame {
	uint8_t type, flags;
	uint32_t sid;
	std::string payload;

	uint32_t u32(size_t at) const
	{
		const auto *p = reinterpret_cast<const uint8_t *>(payload.data()) + at;
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	}
};

std::string
frame(uint8_t type, uint8_t flags, uint32_t sid, const std::string &payload = "")
{
	std::string f;
	uint32_t n = (uint32_t)payload.size();
	f += (char)(n >> 16);
	f += (char)(n >> 8);
	f += (char)n;
	f += (char)type;
	f += (char)flags;
	f += (char)(sid >> 24 & 0x7f);
	f += (char)(sid >> 16);
	f += (char)(sid >> 8);
	f += (char)sid;
	return f + payload;
}

std::string
be32(uint32_t v)
{
	return std::string{(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
}

/* HPACK: every field a literal without indexing, new name (RFC 7541 §6.2.2). */
std::string
header_block(const std::vector<std::pair<std::string, std::string>> &fields)
{
	std::string b;
	for (const auto &kv : fields) {
		b += '\0';
		b += (char)kv.first.size();
		b += kv.first;
		b += (char)kv.second.size();
		b += kv.second;
	}
	return b;
}

std::string
post_head(const char *clen)
{
	return header_block({{":method", "POST"}, {":scheme", "http"}, {":authority", "t:1"},
		{":path", "/oauth2/token"}, {"content-length", clen}});
}

std::string
get_head()
{
	return header_block({{":method", "GET"}, {":scheme", "http"}, {":authority", "t:1"},
		{":path", "/nnrf-nfm/v1/nf-instances/x"}});
}

const std::string PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct Fixture;
Fixture *cur;

struct Fixture {
	const nrf_tp_ops *tp = nrf_tp_kern_ops();
	nrf_tp_loop *loop = nullptr;
	nrf_h2_ctx *ctx = nullptr;
	nrf_tp_listener *lst = nullptr;
	nrf_tp_addr addr = {};
	nrf_h2_conn *server = nullptr;
	int server_closes = 0;
	int requests = 0;
	int request_err = 0;
	int stream_closes = 0;
	uint32_t stream_code = 0;
	std::string answer = "0123456789";
	bool more = false; /* the answer's body goes on (deferred) */
	uint64_t counts[NRF_H2_TMO_COUNT] = {};
	/* peer connection of the same context */
	nrf_h2_conn *client = nullptr;
	bool client_ready = false;
	int client_close_err = 1;
	bool client_goaway = false;
	bool keep_idle = false;
	int idle_asked = 0;
};

void
on_request(nrf_h2_stream *st, int err)
{
	Fixture *f = cur;
	f->requests++;
	f->request_err = err;
	st->user = f; /* on_close wanted */
	int status = err == NRF_ETIMEDOUT ? 408 : err == NRF_ETOOBIG ? 413 : err ? 400 : 200;
	ASSERT_EQ(nrf_h2_respond(st, status, nullptr, 0, f->answer.data(), f->answer.size(),
			  f->more), 0);
}

void
on_stream_close(nrf_h2_stream *, uint32_t code, int)
{
	cur->stream_closes++;
	cur->stream_code = code;
}

void
on_server_close(nrf_h2_conn *, int)
{
	cur->server = nullptr;
	cur->server_closes++;
}

nrf_h2_cbs
server_cbs()
{
	nrf_h2_cbs c = {};
	c.on_request = on_request;
	c.on_close = on_stream_close;
	c.on_conn_close = on_server_close;
	return c;
}

nrf_h2_cbs
client_cbs()
{
	nrf_h2_cbs c = {};
	c.on_conn_ready = [](nrf_h2_conn *) { cur->client_ready = true; };
	c.on_conn_goaway = [](nrf_h2_conn *) { cur->client_goaway = true; };
	c.on_conn_close = [](nrf_h2_conn *, int err) {
		cur->client = nullptr;
		cur->client_close_err = err;
	};
	c.on_conn_idle = [](nrf_h2_conn *) {
		cur->idle_asked++;
		return !cur->keep_idle;
	};
	return c;
}

const nrf_h2_cbs kServerCbs = server_cbs();
const nrf_h2_cbs kClientCbs = client_cbs();

void
on_listen(void *arg, unsigned)
{
	Fixture *f = static_cast<Fixture *>(arg);
	int err;
	nrf_tp_conn *tc = f->tp->accept(f->lst, &err);
	if (tc != nullptr)
		f->server = nrf_h2_conn_server(f->ctx, tc, &kServerCbs, f, &err);
}

/* A client that speaks raw frames. */
struct Raw {
	int fd = -1;
	std::string in;
	std::vector<Frame> got;
	bool closed = false;
	bool ack = true; /* acknowledge the server's SETTINGS */

	~Raw()
	{
		if (fd >= 0)
			close(fd);
	}
	void Send(const std::string &b) { ASSERT_EQ(send(fd, b.data(), b.size(), 0), (ssize_t)b.size()); }
	void Read()
	{
		char buf[65536];
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno == ECONNRESET)) {
				closed = true;
				break;
			}
			if (n < 0)
				break;
			in.append(buf, (size_t)n);
		}
		while (in.size() >= 9) {
			const auto *p = reinterpret_cast<const uint8_t *>(in.data());
			size_t len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
			if (in.size() < 9 + len)
				break;
			Frame fr{p[3], p[4],
				((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]) &
					0x7fffffffu,
				in.substr(9, len)};
			in.erase(0, 9 + len);
			if (fr.type == SETTINGS && !(fr.flags & ACK) && ack)
				Send(frame(SETTINGS, ACK, 0));
			got.push_back(fr);
		}
	}
	const Frame *Find(uint8_t type, uint32_t sid = UINT32_MAX) const
	{
		for (const Frame &f : got)
			if (f.type == type && (sid == UINT32_MAX || f.sid == sid))
				return &f;
		return nullptr;
	}
	/* :status of the first HEADERS on @p sid (0: none). */
	int Status(uint32_t sid) const
	{
		const Frame *f = Find(HEADERS, sid);
		if (f == nullptr)
			return 0;
		nghttp2_hd_inflater *inf;
		if (nghttp2_hd_inflate_new(&inf) != 0)
			return -1;
		int status = 0;
		const auto *p = reinterpret_cast<const uint8_t *>(f->payload.data());
		size_t left = f->payload.size();
		for (;;) {
			nghttp2_nv nv;
			int fl = 0;
			ssize_t n = nghttp2_hd_inflate_hd2(inf, &nv, &fl, p, left, 1);
			if (n < 0)
				break;
			p += n;
			left -= (size_t)n;
			if (fl & NGHTTP2_HD_INFLATE_EMIT) {
				std::string name((const char *)nv.name, nv.namelen);
				if (name == ":status")
					status = std::stoi(std::string((const char *)nv.value, nv.valuelen));
			}
			if (fl & NGHTTP2_HD_INFLATE_FINAL)
				break;
			if (n == 0 && left == 0)
				break;
		}
		nghttp2_hd_inflate_del(inf);
		return status;
	}
};

class H2Tmo : public ::testing::Test {
protected:
	void SetUp() override
	{
		int err;
		nrf_h2_limits lim = {};

		cur = &f_;
		f_.loop = f_.tp->loop_create(&err);
		ASSERT_NE(f_.loop, nullptr);
		lim.max_header_bytes = 16384;
		lim.max_body_bytes = 100;
		lim.max_concurrent_streams = 16;
		f_.ctx = nrf_h2_ctx_create(f_.tp, f_.loop, &lim, &err);
		ASSERT_NE(f_.ctx, nullptr);
		nrf_tp_addr a;
		nrf_tp_addr_parse("127.0.0.1", 0, &a);
		f_.lst = f_.tp->listen(f_.loop, &a, 16, on_listen, &f_, &err);
		ASSERT_NE(f_.lst, nullptr);
		f_.tp->listener_addr(f_.lst, &f_.addr);
		Set(1000, 1000, 1000, 1000, 1000, 1000);
	}

	void TearDown() override
	{
		if (f_.client)
			nrf_h2_conn_close(f_.client, NRF_ECLOSED);
		if (f_.server)
			nrf_h2_conn_close(f_.server, NRF_ECLOSED);
		nrf_h2_ctx_run(f_.ctx);
		f_.tp->listener_close(f_.lst);
		nrf_h2_ctx_free(f_.ctx);
		f_.tp->loop_free(f_.loop);
		cur = nullptr;
	}

	void Set(uint32_t hs, uint32_t hdr, uint32_t body, uint32_t idle, uint32_t stalled,
		uint32_t up_idle)
	{
		nrf_h2_timeouts t = {hs, hdr, body, idle, stalled, up_idle};
		nrf_h2_ctx_set_timeouts(f_.ctx, &t);
	}

	/* Run the loop for about @p ms of real time, reading the raw client. */
	void Pump(int ms = 30)
	{
		uint64_t end = nrf_now_ns() + (uint64_t)ms * 1000000ull;
		bool busy = false;
		while (nrf_now_ns() < end) {
			f_.tp->poll(f_.loop, busy ? 0 : 2);
			busy = nrf_h2_ctx_run(f_.ctx);
			if (raw_.fd >= 0)
				raw_.Read();
		}
	}

	/* A sweep at made-up time T0 + @p ms, and what it set off. */
	void Sweep(uint64_t ms)
	{
		nrf_h2_ctx_sweep(f_.ctx, T0 + ms * 1000000ull, f_.counts);
		Pump();
	}

	/* TCP connect, @p first sent at once (before the server's SETTINGS
	 * are read: an ACK must not come before the preface). */
	void Connect(bool ack, const std::string &first = "")
	{
		raw_.ack = ack;
		raw_.fd = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_GE(raw_.fd, 0);
		sockaddr_in sa = {};
		sa.sin_family = AF_INET;
		sa.sin_port = htons(f_.addr.port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ASSERT_EQ(connect(raw_.fd, (sockaddr *)&sa, sizeof(sa)), 0);
		if (!first.empty())
			raw_.Send(first);
		Pump();
		ASSERT_NE(f_.server, nullptr);
	}

	/* Preface, SETTINGS (@p settings payload), and wait for the server's. */
	void Handshake(const std::string &settings = "")
	{
		Connect(true, PREFACE + frame(SETTINGS, 0, 0, settings));
		ASSERT_NE(raw_.Find(SETTINGS), nullptr);
	}

	uint64_t Total() const
	{
		uint64_t n = 0;
		for (uint64_t c : f_.counts)
			n += c;
		return n;
	}

	Fixture f_;
	Raw raw_;
};

} // namespace

TEST(H2TmoPeriod, IsAQuarterOfTheShortestTimeoutWithinBounds)
{
	int err;
	const nrf_tp_ops *tp = nrf_tp_kern_ops();
	nrf_tp_loop *loop = tp->loop_create(&err);
	nrf_h2_limits lim = {};
	lim.max_header_bytes = 1024;
	lim.max_concurrent_streams = 1;
	nrf_h2_ctx *ctx = nrf_h2_ctx_create(tp, loop, &lim, &err);
	ASSERT_NE(ctx, nullptr);
	EXPECT_EQ(nrf_h2_ctx_sweep_period_ms(ctx), 250u); /* all off */
	nrf_h2_timeouts t = {5000, 5000, 10000, 60000, 10000, 60000};
	nrf_h2_ctx_set_timeouts(ctx, &t);
	EXPECT_EQ(nrf_h2_ctx_sweep_period_ms(ctx), 250u);
	t.stalled_ms = 300;
	nrf_h2_ctx_set_timeouts(ctx, &t);
	EXPECT_EQ(nrf_h2_ctx_sweep_period_ms(ctx), 75u);
	t.upstream_idle_ms = 0; /* off: not the shortest */
	t.header_ms = 20;
	nrf_h2_ctx_set_timeouts(ctx, &t);
	EXPECT_EQ(nrf_h2_ctx_sweep_period_ms(ctx), 10u);
	nrf_h2_ctx_free(ctx);
	tp->loop_free(loop);
}

TEST_F(H2Tmo, SilentConnectionIsClosedAtTheHandshakeTimeoutNotBefore)
{
	Connect(false);
	Sweep(0);     /* first seen waiting */
	Sweep(999);
	EXPECT_NE(f_.server, nullptr);
	EXPECT_FALSE(raw_.closed);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_HANDSHAKE], 1u);
	EXPECT_EQ(Total(), 1u);
	EXPECT_EQ(f_.server, nullptr);
	EXPECT_TRUE(raw_.closed);
	const Frame *g = raw_.Find(GOAWAY);
	ASSERT_NE(g, nullptr); /* cleartext: the GOAWAY goes out before the close */
	EXPECT_EQ(g->u32(0), 0u);
	EXPECT_EQ(g->u32(4), NRF_H2_NO_ERROR);
}

TEST_F(H2Tmo, UnacknowledgedSettingsEndWithSettingsTimeout)
{
	Connect(false, PREFACE + frame(SETTINGS, 0, 0));
	Sweep(0);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_HANDSHAKE], 1u);
	const Frame *g = raw_.Find(GOAWAY);
	ASSERT_NE(g, nullptr);
	EXPECT_EQ(g->u32(4), NRF_H2_SETTINGS_TIMEOUT);
	EXPECT_TRUE(raw_.closed);
}

TEST_F(H2Tmo, CompletedHandshakeIsNotTimedOut)
{
	Set(1000, 0, 0, 0, 0, 0); /* only the handshake */
	Handshake();
	Sweep(0);
	Sweep(5000);
	EXPECT_EQ(Total(), 0u);
	EXPECT_NE(f_.server, nullptr);
	EXPECT_FALSE(raw_.closed);
}

TEST_F(H2Tmo, IdleConnectionGetsGoawayNoErrorWithItsLastStream)
{
	Handshake();
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 1, get_head()));
	Pump();
	ASSERT_EQ(raw_.Status(1), 200);
	Sweep(0);
	Sweep(999);
	EXPECT_EQ(raw_.Find(GOAWAY), nullptr);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_IDLE], 1u);
	const Frame *g = raw_.Find(GOAWAY);
	ASSERT_NE(g, nullptr);
	EXPECT_EQ(g->u32(0), 1u);
	EXPECT_EQ(g->u32(4), NRF_H2_NO_ERROR);
	EXPECT_TRUE(raw_.closed);
	EXPECT_EQ(f_.server, nullptr);
}

TEST_F(H2Tmo, StreamsBetweenTwoSweepsRestartTheIdleClock)
{
	Handshake();
	Sweep(0);
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 1, get_head()));
	Pump();
	ASSERT_EQ(raw_.Status(1), 200); /* came and went between two sweeps */
	Sweep(1000);
	EXPECT_EQ(Total(), 0u);
	EXPECT_EQ(raw_.Find(GOAWAY), nullptr);
	Sweep(2000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_IDLE], 1u);
	EXPECT_NE(raw_.Find(GOAWAY), nullptr);
}

TEST_F(H2Tmo, OpenStreamKeepsTheConnectionFromIdling)
{
	Set(1000, 1000, 0, 1000, 0, 0); /* no body timeout: the stream stays */
	Handshake();
	raw_.Send(frame(HEADERS, END_HEADERS, 1, post_head("10")));
	Pump();
	Sweep(0);
	Sweep(5000);
	EXPECT_EQ(Total(), 0u);
	EXPECT_EQ(raw_.Find(GOAWAY), nullptr);
}

TEST_F(H2Tmo, BodyThatNeverArrivesGets408ThenResetNoError)
{
	Handshake();
	raw_.Send(frame(HEADERS, END_HEADERS, 1, post_head("50")) +
		frame(DATA, 0, 1, std::string(10, 'b')));
	Pump();
	EXPECT_EQ(f_.requests, 0);
	Sweep(0);
	Sweep(999);
	EXPECT_EQ(f_.requests, 0);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_BODY], 1u);
	EXPECT_EQ(f_.requests, 1);
	EXPECT_EQ(f_.request_err, NRF_ETIMEDOUT);
	EXPECT_EQ(raw_.Status(1), 408);
	EXPECT_EQ(raw_.Find(RST_STREAM, 1), nullptr); /* the answer first */
	Sweep(1250);
	const Frame *r = raw_.Find(RST_STREAM, 1);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->u32(0), NRF_H2_NO_ERROR);
	EXPECT_EQ(f_.stream_closes, 1);
	EXPECT_EQ(Total(), 1u);
	EXPECT_NE(f_.server, nullptr); /* the connection goes on */
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 3, get_head()));
	Pump();
	EXPECT_EQ(raw_.Status(3), 200);
}

TEST_F(H2Tmo, UploadLeftHangingAfterAnEarlyAnswerIsReset)
{
	Handshake();
	/* over max_body_bytes (100): 413 at once, then nothing more comes */
	raw_.Send(frame(HEADERS, END_HEADERS, 1, post_head("5000")));
	Pump();
	ASSERT_EQ(raw_.Status(1), 413);
	Sweep(0);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_BODY], 1u);
	const Frame *r = raw_.Find(RST_STREAM, 1);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->u32(0), NRF_H2_NO_ERROR);
	EXPECT_EQ(f_.requests, 1); /* answered once */
}

TEST_F(H2Tmo, HeaderBlockThatNeverEndsClosesTheConnection)
{
	Handshake();
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 1, get_head()));
	Pump();
	ASSERT_EQ(raw_.Status(1), 200);
	std::string block = get_head();
	raw_.Send(frame(HEADERS, END_STREAM, 3, block.substr(0, 10))); /* no END_HEADERS */
	Pump();
	Sweep(0);
	Sweep(999);
	EXPECT_EQ(raw_.Find(GOAWAY), nullptr);
	Sweep(1000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_HEADER], 1u);
	EXPECT_EQ(Total(), 1u);
	const Frame *g = raw_.Find(GOAWAY);
	ASSERT_NE(g, nullptr);
	EXPECT_EQ(g->u32(0), 1u); /* stream 1 was processed, 3 never was */
	EXPECT_EQ(g->u32(4), NRF_H2_NO_ERROR);
	EXPECT_TRUE(raw_.closed);
	EXPECT_EQ(f_.requests, 1);
}

TEST_F(H2Tmo, ReaderThatTakesNothingIsResetWithCancel)
{
	/* SETTINGS_INITIAL_WINDOW_SIZE 0: no DATA can be sent on any stream */
	Handshake(std::string("\x00\x04", 2) + be32(0));
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 1, get_head()));
	Pump();
	ASSERT_EQ(raw_.Status(1), 200);
	ASSERT_EQ(raw_.Find(DATA, 1), nullptr);
	Sweep(0);
	/* one byte of window: progress, the stall clock starts again */
	raw_.Send(frame(WINDOW_UPDATE, 0, 1, be32(1)));
	Pump();
	ASSERT_NE(raw_.Find(DATA, 1), nullptr);
	Sweep(1000);
	EXPECT_EQ(Total(), 0u);
	EXPECT_EQ(raw_.Find(RST_STREAM, 1), nullptr);
	Sweep(1999);
	EXPECT_EQ(Total(), 0u);
	Sweep(2000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_STALLED_READER], 1u);
	const Frame *r = raw_.Find(RST_STREAM, 1);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->u32(0), NRF_H2_CANCEL);
	EXPECT_EQ(f_.stream_closes, 1); /* the owner hears of it (cancels upstream) */
	EXPECT_EQ(Total(), 1u);
}

TEST_F(H2Tmo, AnswerWaitingForItsUpstreamIsNotAStalledReader)
{
	Handshake();
	raw_.Send(frame(HEADERS, END_HEADERS | END_STREAM, 1, get_head()));
	f_.answer.clear(); /* headers only, body to follow: deferred, not stalled */
	f_.more = true;
	Pump();
	Sweep(0);
	Sweep(5000);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_STALLED_READER], 0u);
}

class H2TmoPeer : public H2Tmo {
protected:
	void SetUp() override
	{
		H2Tmo::SetUp();
		Set(0, 0, 0, 0, 0, 1000); /* the front connection is not checked */
		int err;
		f_.client = nrf_h2_conn_client(f_.ctx, &f_.addr, &kClientCbs, &f_, &err);
		ASSERT_NE(f_.client, nullptr);
		Pump(50);
		ASSERT_TRUE(f_.client_ready);
		ASSERT_NE(f_.server, nullptr);
	}
};

TEST_F(H2TmoPeer, IdlePeerConnectionIsClosedWithGoawayUnlessKept)
{
	f_.keep_idle = true;
	Sweep(0);
	Sweep(1000);
	EXPECT_EQ(f_.idle_asked, 1);
	EXPECT_NE(f_.client, nullptr);
	EXPECT_EQ(Total(), 0u);
	f_.keep_idle = false;
	Sweep(1500); /* asked again: a new note was taken */
	EXPECT_NE(f_.client, nullptr);
	Sweep(2500);
	EXPECT_EQ(f_.idle_asked, 2);
	EXPECT_EQ(f_.counts[NRF_H2_TMO_UPSTREAM_IDLE], 1u);
	EXPECT_EQ(f_.client, nullptr);
	EXPECT_EQ(f_.client_close_err, 0); /* an orderly close */
	Pump(50);
	EXPECT_EQ(f_.server, nullptr); /* the other end saw the GOAWAY and closed */
}

TEST_F(H2TmoPeer, UpstreamIdleOffKeepsTheConnection)
{
	Set(0, 0, 0, 0, 0, 0);
	Sweep(0);
	Sweep(3600000);
	EXPECT_EQ(f_.idle_asked, 0);
	EXPECT_NE(f_.client, nullptr);
}
