/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/tp: the kernel back-end on loopback sockets. */
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "nrf_common.h"
#include "nrf_err.h"
#include "nrf_tp.h"

namespace {

const nrf_tp_ops *tp = nrf_tp_kern_ops();

struct LoopDeleter {
	void operator()(nrf_tp_loop *l) const { tp->loop_free(l); }
};
using LoopPtr = std::unique_ptr<nrf_tp_loop, LoopDeleter>;

LoopPtr
NewLoop()
{
	int err = 0;
	nrf_tp_loop *l = tp->loop_create(&err);
	EXPECT_NE(l, nullptr) << nrf_strerror(err);
	return LoopPtr(l);
}

/* Poll until @p done or ~2 s. */
template <typename F>
bool
PollUntil(nrf_tp_loop *l, F done)
{
	uint64_t end = nrf_now_ns() + 2000000000ull;
	while (!done()) {
		if (nrf_now_ns() > end)
			return false;
		tp->poll(l, 10);
	}
	return true;
}

struct Side {
	nrf_tp_conn *c = nullptr;
	std::string in;
	unsigned events = 0;
	bool eof = false;
	bool close_in_handler = false;
};

void
on_conn(void *arg, unsigned ev)
{
	Side *s = static_cast<Side *>(arg);
	char buf[4096];

	s->events |= ev;
	if (s->close_in_handler) {
		tp->close(s->c);
		s->c = nullptr;
		return;
	}
	for (;;) {
		ssize_t n = tp->read(s->c, buf, sizeof(buf));
		if (n > 0) {
			s->in.append(buf, (size_t)n);
			continue;
		}
		if (n == NRF_ECLOSED)
			s->eof = true;
		break;
	}
}

struct Acceptor {
	nrf_tp_listener *l = nullptr;
	Side side;
	int accepted = 0;
};

void
on_listen(void *arg, unsigned)
{
	Acceptor *a = static_cast<Acceptor *>(arg);
	int err;
	nrf_tp_conn *c = tp->accept(a->l, &err);

	if (c == nullptr)
		return;
	a->accepted++;
	a->side.c = c;
	tp->set_handler(c, on_conn, &a->side);
}

/* A listener on a free loopback port, accepting into @p acc; its address
 * in *bound. */
void
Listen(nrf_tp_loop *l, Acceptor *acc, nrf_tp_addr *bound)
{
	nrf_tp_addr a;
	int err = 0;

	ASSERT_EQ(nrf_tp_addr_parse("127.0.0.1", 0, &a), 0);
	acc->l = tp->listen(l, &a, 16, on_listen, acc, &err);
	ASSERT_NE(acc->l, nullptr) << nrf_strerror(err);
	ASSERT_EQ(tp->listener_addr(acc->l, bound), 0);
	ASSERT_NE(bound->port, 0);
}

/* A connection to @p bound, handled by on_conn() with @p side. */
void
Dial(nrf_tp_loop *l, const nrf_tp_addr *bound, Side *side)
{
	int err = 0;

	side->c = tp->connect(l, bound, &err);
	ASSERT_NE(side->c, nullptr) << nrf_strerror(err);
	tp->set_handler(side->c, on_conn, side);
}

} // namespace

TEST(TpAddr, ParsesNumericAddressesOnly)
{
	nrf_tp_addr a;
	char buf[64];

	ASSERT_EQ(nrf_tp_addr_parse("127.0.0.1", 8080, &a), 0);
	EXPECT_EQ(a.family, 4);
	EXPECT_STREQ(nrf_tp_addr_format(&a, buf, sizeof(buf)), "127.0.0.1:8080");
	ASSERT_EQ(nrf_tp_addr_parse("::1", 443, &a), 0);
	EXPECT_EQ(a.family, 6);
	EXPECT_STREQ(nrf_tp_addr_format(&a, buf, sizeof(buf)), "[::1]:443");
	EXPECT_EQ(nrf_tp_addr_parse("nrf.example.com", 1, &a), NRF_EINVAL);
	EXPECT_EQ(nrf_tp_addr_parse("", 1, &a), NRF_EINVAL);
	EXPECT_EQ(nrf_tp_addr_resolve("", 1, &a), NRF_EINVAL);
	ASSERT_EQ(nrf_tp_addr_resolve("10.1.2.3", 7, &a), 0);
	EXPECT_EQ(a.port, 7);
}

TEST(TpKern, ConnectAcceptAndExchangeBytesBothWays)
{
	LoopPtr loop = NewLoop();
	Acceptor acc;
	Side cli;
	nrf_tp_addr bound;

	ASSERT_NO_FATAL_FAILURE(Listen(loop.get(), &acc, &bound));
	ASSERT_NO_FATAL_FAILURE(Dial(loop.get(), &bound, &cli));
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return (cli.events & NRF_TP_EV_OUT) && acc.accepted; }));
	EXPECT_EQ(tp->connect_result(cli.c), 0);

	std::string big(300000, 'x');
	size_t off = 0;
	ASSERT_TRUE(PollUntil(loop.get(), [&] {
		while (off < big.size()) {
			iovec iov = {&big[off], big.size() - off};
			ssize_t n = tp->writev(cli.c, &iov, 1);
			if (n == NRF_EAGAIN)
				break;
			EXPECT_GT(n, 0);
			off += (size_t)n;
		}
		return acc.side.in.size() == big.size();
	}));
	iovec back = {const_cast<char *>("pong"), 4};
	ASSERT_EQ(tp->writev(acc.side.c, &back, 1), 4);
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return cli.in == "pong"; }));
	char peer[64];
	tp->peer_name(cli.c, peer, sizeof(peer));
	EXPECT_EQ(std::string(peer).rfind("127.0.0.1:", 0), 0u);

	tp->close(acc.side.c);
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return cli.eof; }));
	tp->close(cli.c);
	tp->listener_close(acc.l);
	tp->poll(loop.get(), 0);
}

/*
 * A read that returns less than asked marks the socket empty until epoll
 * reports it again (tp_kern.c, "drained"): no byte that arrives later may
 * be missed, and neither may an end that came with the last bytes.
 */
TEST(TpKern, AfterAShortReadEveryLaterByteAndTheEndStillArrive)
{
	LoopPtr loop = NewLoop();
	Acceptor acc;
	Side cli;
	nrf_tp_addr bound;

	ASSERT_NO_FATAL_FAILURE(Listen(loop.get(), &acc, &bound));
	ASSERT_NO_FATAL_FAILURE(Dial(loop.get(), &bound, &cli));
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return (cli.events & NRF_TP_EV_OUT) && acc.accepted; }));

	/* One byte at a time, each read short: each one still arrives. */
	std::string want;
	for (int i = 0; i < 500; i++) {
		char ch = (char)('a' + i % 26);
		iovec iov = {&ch, 1};
		ASSERT_EQ(tp->writev(cli.c, &iov, 1), 1);
		want += ch;
		ASSERT_TRUE(PollUntil(loop.get(), [&] { return acc.side.in == want; })) << i;
		/* Read again at once, as an event handler may: nothing, no hang. */
		char buf[16];
		EXPECT_EQ(tp->read(acc.side.c, buf, sizeof(buf)), NRF_EAGAIN);
	}
	/* The last bytes and the end together, before the reader polls: the
	 * read that returns them is short, and the end must still be seen. */
	iovec tail = {const_cast<char *>("END"), 3};
	ASSERT_EQ(tp->writev(cli.c, &tail, 1), 3);
	tp->close(cli.c);
	want += "END";
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return acc.side.eof; }));
	EXPECT_EQ(acc.side.in, want);
	tp->close(acc.side.c);
	tp->listener_close(acc.l);
	tp->poll(loop.get(), 0);
}

TEST(TpKern, CloseInsideItsOwnHandlerIsSafe)
{
	LoopPtr loop = NewLoop();
	Acceptor acc;
	Side cli;
	nrf_tp_addr bound;

	ASSERT_NO_FATAL_FAILURE(Listen(loop.get(), &acc, &bound));
	cli.close_in_handler = true;
	ASSERT_NO_FATAL_FAILURE(Dial(loop.get(), &bound, &cli));
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return cli.c == nullptr && acc.accepted; }));
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return acc.side.eof; }));
	tp->close(acc.side.c);
	tp->listener_close(acc.l);
}

TEST(TpKern, ConnectToAClosedPortFails)
{
	LoopPtr loop = NewLoop();
	nrf_tp_addr a, bound;
	Acceptor acc;
	Side cli;
	int err;

	/* Find a free port, then close the listener. */
	nrf_tp_addr_parse("127.0.0.1", 0, &a);
	acc.l = tp->listen(loop.get(), &a, 1, on_listen, &acc, &err);
	ASSERT_NE(acc.l, nullptr);
	tp->listener_addr(acc.l, &bound);
	tp->listener_close(acc.l);
	tp->poll(loop.get(), 0);

	cli.c = tp->connect(loop.get(), &bound, &err);
	if (cli.c == nullptr) {
		EXPECT_EQ(err, NRF_ECONNREFUSED); /* the reason is kept */
		return;
	}
	tp->set_handler(cli.c, on_conn, &cli);
	ASSERT_TRUE(PollUntil(loop.get(), [&] { return cli.events != 0; }));
	EXPECT_EQ(tp->connect_result(cli.c), NRF_ECONNREFUSED);
	tp->close(cli.c);
}

TEST(TpKern, BindingAnAddressNotOwnedFailsWithAddressNotAvailable)
{
	LoopPtr loop = NewLoop();
	nrf_tp_addr a;
	int err = 0;

	/* Port 1 needs privileges we may have; an address we do not own fails. */
	nrf_tp_addr_parse("192.0.2.1", 0, &a);
	nrf_tp_listener *l = tp->listen(loop.get(), &a, 1, on_listen, nullptr, &err);
	EXPECT_EQ(l, nullptr);
	EXPECT_EQ(err, NRF_EADDRNOTAVAIL);
}

TEST(TpKern, WakeFromAnotherThreadRunsTheWakeHandler)
{
	LoopPtr loop = NewLoop();
	std::atomic<int> woke{0};

	tp->set_wake(loop.get(), [](void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); },
		&woke);
	std::thread t([&] { tp->loop_wake(loop.get()); });
	t.join();
	uint64_t t0 = nrf_now_ns();
	while (woke.load() == 0 && nrf_now_ns() - t0 < 2000000000ull)
		tp->poll(loop.get(), 1000);
	EXPECT_EQ(woke.load(), 1);
	EXPECT_LT(nrf_now_ns() - t0, 900000000ull); /* did not wait for the timeout */
}
