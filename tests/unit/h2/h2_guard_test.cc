/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/h2/h2_guard.c, the front connection's frame-header pass:
 * its verdicts on hand-made client byte streams, and that they do not
 * depend on how the stream is cut into reads. The pass with nghttp2 and a
 * real nrfwd behind it: tests/integration/test_h2_conformance.py.
 */
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

extern "C" {
#include "h2_int.h"
}

namespace {

const std::string kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::string
frame(uint8_t type, uint8_t flags, uint32_t sid, const std::string &payload = "")
{
	std::string f;
	size_t n = payload.size();

	f += (char)(n >> 16);
	f += (char)(n >> 8);
	f += (char)n;
	f += (char)type;
	f += (char)flags;
	f += (char)(sid >> 24);
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

/* The pass does not read header blocks: any bytes do. */
std::string
headers(uint32_t sid, bool end_stream, bool end_headers = true)
{
	return frame(NGHTTP2_HEADERS,
		(end_stream ? NGHTTP2_FLAG_END_STREAM : 0) |
			(end_headers ? NGHTTP2_FLAG_END_HEADERS : 0),
		sid, "\x82\x86\x84");
}

std::string
data(uint32_t sid, bool end_stream, const std::string &body = "body")
{
	return frame(NGHTTP2_DATA, end_stream ? NGHTTP2_FLAG_END_STREAM : 0, sid, body);
}

std::string
priority(uint32_t sid, uint32_t dep)
{
	return frame(NGHTTP2_PRIORITY, 0, sid, be32(dep) + "\x10");
}

std::string
rst(uint32_t sid)
{
	return frame(NGHTTP2_RST_STREAM, 0, sid, be32(NGHTTP2_CANCEL));
}

using Verdict = std::tuple<int, uint32_t, uint32_t, size_t>; /* kind, sid, code, at */

/* Every verdict on @p in (the preface, then whole frames, as the server's
 * frame loop hands them to h2_guard_frame()); "at": the frame's offset. */
std::vector<Verdict>
scan(const std::string &in, h2_guard *state = nullptr)
{
	h2_guard local{};
	h2_guard *g = state != nullptr ? state : &local;
	std::vector<Verdict> out;
	const uint8_t *p = reinterpret_cast<const uint8_t *>(in.data());
	size_t pos = kPreface.size();

	while (pos + 9 <= in.size()) {
		size_t flen = (size_t)p[pos] << 16 | (size_t)p[pos + 1] << 8 | p[pos + 2];
		h2_guard_verdict v;

		EXPECT_LE(pos + 9 + flen, in.size());
		if (h2_guard_frame(g, p + pos, &v)) {
			EXPECT_EQ(v.at, 0u);
			out.emplace_back(v.kind, v.sid, v.code, pos);
		}
		pos += 9 + flen;
	}
	EXPECT_EQ(pos, in.size());
	return out;
}

Verdict
goaway(uint32_t code, size_t at)
{
	return Verdict(H2_GV_GOAWAY, 0, code, at);
}

Verdict
reset(uint32_t sid, uint32_t code, size_t at)
{
	return Verdict(H2_GV_RST, sid, code, at);
}

TEST(H2Guard, RequestsInOrderPassUntouched)
{
	std::string in = kPreface + frame(NGHTTP2_SETTINGS, 0, 0);

	for (uint32_t sid = 1; sid < 2000; sid += 2) {
		in += headers(sid, sid % 3 == 0);
		if (sid % 3 != 0)
			in += data(sid, false) + data(sid, true);
		in += frame(NGHTTP2_WINDOW_UPDATE, 0, sid, be32(100));
		if (sid % 7 == 0)
			in += rst(sid) + priority(sid, 0);
	}
	EXPECT_TRUE(scan(in).empty());
}

TEST(H2Guard, AStreamIdBelowAnEarlierOneIsAProtocolError)
{
	std::string in = kPreface + headers(5, true);
	size_t at = in.size();

	in += headers(3, true);
	EXPECT_EQ(scan(in), std::vector<Verdict>{goaway(NGHTTP2_PROTOCOL_ERROR, at)});
}

TEST(H2Guard, DataOrHeadersAfterTheClientsEndStreamAreStreamClosed)
{
	for (const std::string &late : {data(1, true), headers(1, true)}) {
		std::string in = kPreface + headers(1, true);
		size_t at = in.size();

		in += late;
		EXPECT_EQ(scan(in), std::vector<Verdict>{goaway(NGHTTP2_STREAM_CLOSED, at)});
	}
	/* the end in the trailers counts too */
	std::string in = kPreface + headers(1, false) + data(1, false) + headers(1, true);
	size_t at = in.size();

	in += data(1, false);
	EXPECT_EQ(scan(in), std::vector<Verdict>{goaway(NGHTTP2_STREAM_CLOSED, at)});
}

TEST(H2Guard, DataAfterTheClientsResetIsResetOnce)
{
	std::string in = kPreface + headers(1, false) + rst(1);
	size_t at = in.size();

	in += data(1, false) + headers(1, true) + data(1, true) + headers(3, true);
	/* and the pass reads on, in step with the frames */
	size_t at3 = in.size();

	in += data(3, true);
	EXPECT_EQ(scan(in), (std::vector<Verdict>{reset(1, NGHTTP2_STREAM_CLOSED, at),
				    goaway(NGHTTP2_STREAM_CLOSED, at3)}));
}

TEST(H2Guard, FramesTheClientMaySendAfterOurResetAreLeftToNghttp2)
{
	/* nrfwd reset stream 1 (the pass does not know): its DATA and trailers
	 * may still come, and must be ignored, not answered */
	std::string in = kPreface + headers(1, false) + data(1, false) + data(1, false) +
		headers(1, true) + frame(NGHTTP2_WINDOW_UPDATE, 0, 1, be32(10)) + priority(1, 0);
	EXPECT_TRUE(scan(in).empty());
}

TEST(H2Guard, DataOnAStreamIdTheClientSkippedIsStreamClosed)
{
	std::string in = kPreface + headers(5, false);
	size_t at = in.size();

	in += data(3, true);
	EXPECT_EQ(scan(in), std::vector<Verdict>{goaway(NGHTTP2_STREAM_CLOSED, at)});
}

TEST(H2Guard, PriorityOnStream0IsAProtocolError)
{
	std::string in = kPreface;
	size_t at = in.size();

	in += priority(0, 0);
	EXPECT_EQ(scan(in), std::vector<Verdict>{goaway(NGHTTP2_PROTOCOL_ERROR, at)});
}

TEST(H2Guard, PriorityOnItselfResetsAKnownStreamOnceAndEndsAnIdleOne)
{
	std::string in = kPreface + headers(1, false);
	size_t at = in.size();

	in += priority(1, 1) + priority(1, 1) + priority(1, 3);
	EXPECT_EQ(scan(in), std::vector<Verdict>{reset(1, NGHTTP2_PROTOCOL_ERROR, at)});

	std::string idle = kPreface + headers(1, false);
	at = idle.size();
	idle += priority(3, 3);
	EXPECT_EQ(scan(idle), std::vector<Verdict>{goaway(NGHTTP2_PROTOCOL_ERROR, at)});
}

TEST(H2Guard, TrailersDependingOnTheirOwnStreamAreReset)
{
	std::string in = kPreface + headers(1, false) + data(1, false);
	size_t at = in.size();

	/* PADDED | PRIORITY: pad length, then the dependency */
	in += frame(NGHTTP2_HEADERS,
		NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_PADDED |
			NGHTTP2_FLAG_PRIORITY,
		1, std::string("\x01", 1) + be32(1) + "\x10" + "\x82" + std::string("\0", 1));
	EXPECT_EQ(scan(in), std::vector<Verdict>{reset(1, NGHTTP2_PROTOCOL_ERROR, at)});
}

TEST(H2Guard, AFrameBetweenHeadersAndContinuationTurnsThePassOff)
{
	/* nghttp2 ends the connection there; the pass stops judging */
	std::string in = kPreface + headers(5, true) + headers(7, false, false) + priority(0, 0) +
		headers(3, true);
	h2_guard g{};

	EXPECT_TRUE(scan(in, &g).empty());
	EXPECT_EQ(g.state, H2_GUARD_OFF);
}

TEST(H2Guard, ContinuationFramesOfABlockPass)
{
	std::string in = kPreface + headers(1, true, false) +
		frame(NGHTTP2_CONTINUATION, 0, 1, "x") +
		frame(NGHTTP2_CONTINUATION, NGHTTP2_FLAG_END_HEADERS, 1, "y") + headers(3, true);
	EXPECT_TRUE(scan(in).empty());
}

TEST(H2Guard, TheLastStreamsAreRememberedAndOlderOnesForgotten)
{
	std::string in = kPreface;
	uint32_t last = 2 * 300 - 1;

	for (uint32_t sid = 1; sid <= last; sid += 2)
		in += headers(sid, true);
	uint32_t oldest = last - 2 * (H2_GUARD_WIN - 1);
	size_t at = in.size();

	EXPECT_EQ(scan(in + data(oldest, true)),
		std::vector<Verdict>{goaway(NGHTTP2_STREAM_CLOSED, at)});
	EXPECT_TRUE(scan(in + data(oldest - 2, true)).empty());
	/* a jump past the whole window forgets everything behind it */
	std::string jump = kPreface + headers(1, true) + headers(1001, true) + data(1, true);
	EXPECT_TRUE(scan(jump).empty());
	jump = kPreface + headers(1, true) + headers(1001, true);
	at = jump.size();
	EXPECT_EQ(scan(jump + data(999, true)),
		std::vector<Verdict>{goaway(NGHTTP2_STREAM_CLOSED, at)});
}

/* Random frames on a few streams (PRIORITY payloads, padding and
 * self-dependencies included): the rules are checked on every one, the
 * verdicts are the same when the same frames come again to a fresh pass,
 * and the inputs do break rules. */
TEST(H2Guard, RandomFramesAreJudgedTheSameEveryTime)
{
	std::mt19937 rng(13);
	const uint8_t types[] = {NGHTTP2_DATA, NGHTTP2_HEADERS, NGHTTP2_PRIORITY,
		NGHTTP2_RST_STREAM, NGHTTP2_WINDOW_UPDATE, NGHTTP2_CONTINUATION, NGHTTP2_PING};
	int verdicts = 0;

	for (int round = 0; round < 2000; round++) {
		std::string in = kPreface;
		int n = 1 + (int)(rng() % 12);

		for (int i = 0; i < n; i++) {
			uint8_t t = types[rng() % sizeof(types)];
			uint32_t sid = rng() % 10;
			uint8_t fl = (uint8_t)(rng() & 0x2d);
			std::string p;

			if (t == NGHTTP2_PRIORITY || (fl & NGHTTP2_FLAG_PRIORITY))
				p = std::string(fl & NGHTTP2_FLAG_PADDED ? "\0" : "", fl & NGHTTP2_FLAG_PADDED ? 1 : 0) +
					be32(rng() % 10) + "\x10";
			p += std::string(rng() % 6, 'z');
			in += frame(t, fl, sid, p);
		}
		std::vector<Verdict> once = scan(in);
		ASSERT_EQ(once, scan(in)) << round;
		verdicts += (int)once.size();
	}
	EXPECT_GT(verdicts, 100); /* the inputs do break rules */
}

} // namespace
