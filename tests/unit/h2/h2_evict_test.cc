/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of nrf_h2_ctx_evict() (lib/h2/h2_conn.c): which front
 * connection gives way to a newcomer, on both fronts (nrfwd's own server
 * and nghttp2's), against raw HTTP/2 clients on loopback sockets.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_h2.h"
#include "nrf_tp.h"

namespace {

enum : uint8_t { DATA = 0, HEADERS = 1, SETTINGS = 4, GOAWAY = 7 };
enum : uint8_t { END_STREAM = 1, ACK = 1, END_HEADERS = 4 };

const std::string PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::string
frame(uint8_t type, uint8_t flags, uint32_t sid, const std::string &payload = "")
{
	uint32_t n = (uint32_t)payload.size();
	std::string f{(char)(n >> 16), (char)(n >> 8), (char)n, (char)type, (char)flags,
		(char)(sid >> 24 & 0x7f), (char)(sid >> 16), (char)(sid >> 8), (char)sid};
	return f + payload;
}

/* HPACK: literals without indexing, new names (RFC 7541 §6.2.2). */
std::string
head(const char *method, bool body)
{
	std::string b;
	const std::vector<std::pair<std::string, std::string>> fields = {{":method", method},
		{":scheme", "http"}, {":authority", "t:1"}, {":path", "/x"}};
	for (const auto &kv : fields) {
		b += '\0';
		b += (char)kv.first.size();
		b += kv.first;
		b += (char)kv.second.size();
		b += kv.second;
	}
	if (body)
		b += std::string("\0\x0e" "content-length\x01" "5", 18);
	return b;
}

struct Fixture;
Fixture *cur;

struct Fixture {
	const nrf_tp_ops *tp = nrf_tp_kern_ops();
	nrf_tp_loop *loop = nullptr;
	nrf_h2_ctx *ctx = nullptr;
	nrf_tp_listener *lst = nullptr;
	nrf_tp_addr addr = {};
	std::vector<nrf_h2_conn *> accepted; /* in accept order; nullptr once gone */
	int owner_closes = 0;   /* on_conn_close of the owner's callbacks */
	int evicted_closes = 0; /* on_conn_close of the evicted callbacks */
	int requests = 0;
	bool hold = false;      /* leave requests unanswered */
	std::vector<nrf_h2_stream *> held;
};

void
forget(nrf_h2_conn *c)
{
	for (auto &a : cur->accepted)
		if (a == c)
			a = nullptr;
}

nrf_h2_cbs
owner_cbs()
{
	nrf_h2_cbs c = {};
	c.on_request = [](nrf_h2_stream *st, int) {
		cur->requests++;
		if (cur->hold) {
			cur->held.push_back(st);
			return;
		}
		nrf_h2_respond(st, 200, nullptr, 0, "ok", 2, false);
	};
	c.on_conn_close = [](nrf_h2_conn *c, int) {
		cur->owner_closes++;
		forget(c);
	};
	return c;
}

nrf_h2_cbs
evicted_cbs()
{
	nrf_h2_cbs c = {};
	c.on_conn_close = [](nrf_h2_conn *c, int) {
		cur->evicted_closes++;
		forget(c);
	};
	return c;
}

const nrf_h2_cbs kOwner = owner_cbs();
const nrf_h2_cbs kEvicted = evicted_cbs();

void
on_listen(void *arg, unsigned)
{
	Fixture *f = static_cast<Fixture *>(arg);
	int err;
	nrf_tp_conn *tc;

	while ((tc = f->tp->accept(f->lst, &err)) != nullptr)
		f->accepted.push_back(nrf_h2_conn_server(f->ctx, tc, &kOwner, f, &err));
}

struct Raw {
	int fd = -1;
	std::string in;
	bool closed = false;
	bool got_goaway = false;
	uint32_t goaway_last = UINT32_MAX, goaway_code = UINT32_MAX;
	std::string goaway_why;
	int answers = 0;

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
			ssize_t n = fd < 0 ? 0 : recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
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
			if (p[3] == GOAWAY && len >= 8) {
				got_goaway = true;
				goaway_last = ((uint32_t)p[9] << 24 | (uint32_t)p[10] << 16 |
					(uint32_t)p[11] << 8 | p[12]) & 0x7fffffffu;
				goaway_code = (uint32_t)p[13] << 24 | (uint32_t)p[14] << 16 |
					(uint32_t)p[15] << 8 | p[16];
				goaway_why = in.substr(17, len - 8);
			}
			if (p[3] == HEADERS)
				answers++;
			in.erase(0, 9 + len);
		}
	}
};

class H2Evict : public ::testing::Test {
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
		f_.lst = f_.tp->listen(f_.loop, &a, 64, on_listen, &f_, &err);
		ASSERT_NE(f_.lst, nullptr);
		f_.tp->listener_addr(f_.lst, &f_.addr);
	}

	void TearDown() override
	{
		raws_.clear();
		nrf_h2_ctx_close_all(f_.ctx);
		for (int i = 0; i < 10; i++)
			nrf_h2_ctx_run(f_.ctx);
		f_.tp->listener_close(f_.lst);
		nrf_h2_ctx_free(f_.ctx);
		f_.tp->loop_free(f_.loop);
		cur = nullptr;
	}

	void Pump(int ms = 30)
	{
		uint64_t end = nrf_now_ns() + (uint64_t)ms * 1000000ull;
		bool busy = false;
		while (nrf_now_ns() < end) {
			f_.tp->poll(f_.loop, busy ? 0 : 2);
			busy = nrf_h2_ctx_run(f_.ctx);
			for (auto &r : raws_)
				r->Read();
		}
	}

	/* A client connection sending @p first; its index (accept order). */
	size_t Connect(const std::string &first)
	{
		auto r = std::make_unique<Raw>();
		r->fd = socket(AF_INET, SOCK_STREAM, 0);
		EXPECT_GE(r->fd, 0);
		sockaddr_in sa = {};
		sa.sin_family = AF_INET;
		sa.sin_port = htons(f_.addr.port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		EXPECT_EQ(connect(r->fd, (sockaddr *)&sa, sizeof(sa)), 0);
		if (!first.empty())
			r->Send(first);
		raws_.push_back(std::move(r));
		Pump();
		EXPECT_EQ(f_.accepted.size(), raws_.size());
		return raws_.size() - 1;
	}

	/* Handshake done: preface, SETTINGS, and the ACK of ours. */
	static std::string Ready() { return PREFACE + frame(SETTINGS, 0, 0) + frame(SETTINGS, ACK, 0); }
	static std::string Get(uint32_t sid)
	{
		return frame(HEADERS, END_HEADERS | END_STREAM, sid, head("GET", false));
	}

	nrf_h2_evict Evict()
	{
		nrf_h2_evict e = nrf_h2_ctx_evict(f_.ctx, &kEvicted, "connection limit reached");
		Pump();
		return e;
	}

	Raw &R(size_t i) { return *raws_[i]; }
	/* Closed by this side: gone, or lingering after its GOAWAY (the write
	 * side shut: the client has its FIN) until the client closes. */
	bool Gone(size_t i) const { return f_.accepted[i] == nullptr || raws_[i]->closed; }
	/* The clients close what this side closed: lingering ends. */
	void Hangup()
	{
		for (auto &r : raws_)
			if (r->closed && r->fd >= 0) {
				close(r->fd);
				r->fd = -1;
			}
		Pump();
	}

	Fixture f_;
	std::vector<std::unique_ptr<Raw>> raws_;
};

TEST_F(H2Evict, HandshakeNotDoneFirstInAcceptOrderThenIdleLongest)
{
	size_t a = Connect(Ready() + Get(1));  /* answered: idle, last stream 1 */
	ASSERT_EQ(R(a).answers, 1);
	size_t b = Connect("");                 /* bare TCP */
	size_t c = Connect(Ready());            /* idle after a */
	size_t d = Connect(PREFACE + frame(SETTINGS, 0, 0)); /* ours not acknowledged */

	EXPECT_EQ(Evict(), NRF_H2_EVICT_HANDSHAKE);
	EXPECT_TRUE(Gone(b));
	EXPECT_TRUE(R(b).closed);
	EXPECT_FALSE(R(b).got_goaway); /* nothing of HTTP/2 from it: just closed */
	EXPECT_FALSE(Gone(a) || Gone(c) || Gone(d));

	EXPECT_EQ(Evict(), NRF_H2_EVICT_HANDSHAKE);
	EXPECT_TRUE(Gone(d));
	EXPECT_TRUE(R(d).got_goaway);
	EXPECT_EQ(R(d).goaway_last, 0u);
	EXPECT_EQ(R(d).goaway_code, 0u);
	EXPECT_EQ(R(d).goaway_why, "connection limit reached");

	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(a));
	EXPECT_EQ(R(a).goaway_last, 1u); /* the last stream it processed */
	EXPECT_EQ(R(a).goaway_code, 0u);
	EXPECT_TRUE(R(a).closed);
	EXPECT_FALSE(Gone(c));

	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(c));
	EXPECT_EQ(Evict(), NRF_H2_EVICT_NONE);
	/* the owner's callbacks were swapped for the evicted ones */
	Hangup();
	EXPECT_EQ(f_.evicted_closes, 4);
	EXPECT_EQ(f_.owner_closes, 0);
}

TEST_F(H2Evict, ConnectionWithAnOpenStreamIsNeverChosen)
{
	f_.hold = true;
	size_t held = Connect(Ready() + Get(1));      /* oldest; its answer held */
	size_t upload = Connect(Ready() + frame(HEADERS, END_HEADERS, 1, head("POST", true)) +
		frame(DATA, 0, 1, "ab"));             /* its body still arriving */
	size_t hdr = Connect(Ready() + frame(HEADERS, 0, 1, head("GET", false).substr(0, 8)));
	/* header block not ended: a stream already */
	ASSERT_EQ(f_.requests, 1);
	EXPECT_EQ(Evict(), NRF_H2_EVICT_NONE);
	size_t idle = Connect(Ready());
	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(idle));
	EXPECT_FALSE(Gone(held) || Gone(upload) || Gone(hdr));
	/* the held answer goes out; then that connection is idle, the newest */
	f_.hold = false;
	ASSERT_EQ(nrf_h2_respond(f_.held[0], 200, nullptr, 0, "ok", 2, false), 0);
	Pump();
	EXPECT_EQ(R(held).answers, 1);
	size_t later = Connect(Ready());
	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(held));
	EXPECT_EQ(R(held).goaway_last, 1u);
	EXPECT_FALSE(Gone(later));
	/* the upload ends: answered, and that connection goes idle last */
	R(upload).Send(frame(DATA, END_STREAM, 1, "cde"));
	Pump();
	EXPECT_EQ(R(upload).answers, 1);
	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(later));
	EXPECT_FALSE(Gone(upload));
	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(upload));
	EXPECT_EQ(R(upload).goaway_last, 1u);
	EXPECT_FALSE(Gone(hdr));
	EXPECT_EQ(Evict(), NRF_H2_EVICT_NONE);
}

TEST_F(H2Evict, ConnectionsAlreadyLeavingAreSkipped)
{
	size_t refused = Connect("");
	nrf_h2_conn_refuse(f_.accepted[refused], 0, "full"); /* never a candidate */
	size_t told = Connect(Ready());
	nrf_h2_conn_shutdown(f_.accepted[told], true);       /* GOAWAY sent */
	size_t closing = Connect(Ready());
	nrf_h2_conn_close(f_.accepted[closing], NRF_ECLOSED);
	size_t idle = Connect(Ready());
	EXPECT_EQ(Evict(), NRF_H2_EVICT_IDLE);
	EXPECT_TRUE(Gone(idle));
	EXPECT_EQ(Evict(), NRF_H2_EVICT_NONE);
	Hangup();
	EXPECT_EQ(f_.evicted_closes, 1);
	EXPECT_TRUE(Gone(refused));
}


} // namespace
