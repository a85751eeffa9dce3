/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/h2/h2_msg.c: header blocks, bodies, pools. */
#include <gtest/gtest.h>

#include <string>

#include "h2_ctx_fixture.h"
#include "nrf_err.h"

namespace {

class H2Msg : public H2CtxTest {
protected:
	int Store(nrf_h2_msg *m, const std::string &n, const std::string &v)
	{
		return h2_msg_store(ctx_, m, (const uint8_t *)n.data(), n.size(),
			(const uint8_t *)v.data(), v.size(), 0);
	}
	static std::string S(nrf_slice s) { return std::string(s.p ? s.p : "", s.len); }
};

} // namespace

TEST_F(H2Msg, KeepsPseudoHeadersApartAndFieldsInArrivalOrder)
{
	nrf_h2_msg m = {};

	ASSERT_EQ(Store(&m, ":method", "GET"), 0);
	ASSERT_EQ(Store(&m, ":path", "/nnrf-disc/v1/nf-instances?x=1"), 0);
	ASSERT_EQ(Store(&m, ":authority", "nrf.test:80"), 0);
	ASSERT_EQ(Store(&m, ":scheme", "http"), 0);
	ASSERT_EQ(Store(&m, "via", "2.0 a:1"), 0);
	ASSERT_EQ(Store(&m, "accept", "*/*"), 0);
	ASSERT_EQ(Store(&m, "via", "2.0 b:2, 2.0 c:3"), 0);
	EXPECT_EQ(S(m.method), "GET");
	EXPECT_EQ(S(m.path), "/nnrf-disc/v1/nf-instances?x=1");
	EXPECT_EQ(S(m.authority), "nrf.test:80");
	EXPECT_EQ(S(m.scheme), "http");
	ASSERT_EQ(m.n_hdrs, 3u);
	EXPECT_EQ(S(m.hdrs[0].name), "via");
	EXPECT_EQ(S(m.hdrs[1].value), "*/*");
	EXPECT_EQ(m.n_via, 2u);
	nrf_slice via[4];
	ASSERT_EQ(nrf_h2_msg_via(&m, via, 4), 2u);
	EXPECT_EQ(S(via[0]), "2.0 a:1");
	EXPECT_EQ(S(via[1]), "2.0 b:2, 2.0 c:3");
	EXPECT_EQ(nrf_h2_msg_via(&m, via, 1), 2u); /* count beyond max */
	EXPECT_EQ(S(nrf_h2_msg_get(&m, "accept")), "*/*");
	EXPECT_EQ(nrf_h2_msg_get(&m, "nope").p, nullptr);
	nrf_h2_msg_release(ctx_, &m);
	EXPECT_EQ(m.block, nullptr);
}

TEST_F(H2Msg, ParsesStatusOfAResponse)
{
	nrf_h2_msg m = {};

	ASSERT_EQ(Store(&m, ":status", "404"), 0);
	EXPECT_EQ(m.status, 404);
	h2_msg_reset_fields(ctx_, &m);
	EXPECT_EQ(m.status, 0);
	EXPECT_EQ(m.n_hdrs, 0u);
	nrf_h2_msg_release(ctx_, &m);
}

TEST_F(H2Msg, RefusesAFieldThatWouldPassTheHeaderListLimit)
{
	nrf_h2_msg m = {};
	int stored = 0;

	/* 1024 bytes: each field costs name + value + 32. */
	for (int i = 0; i < 100; i++) {
		int rc = Store(&m, "x-f", std::string(40, 'a' + i % 26));
		if (rc != 0) {
			EXPECT_EQ(rc, NRF_ETOOBIG);
			break;
		}
		stored++;
	}
	EXPECT_EQ(stored, 1024 / (3 + 40 + 32));
	EXPECT_LE(m.list_size, 1024u);
	for (int i = 0; i < stored; i++)
		EXPECT_EQ(S(m.hdrs[i].value), std::string(40, 'a' + i % 26));
	EXPECT_EQ(Store(&m, "x-huge", std::string(2000, 'z')), NRF_ETOOBIG);
	nrf_h2_msg_release(ctx_, &m);
}

TEST_F(H2Msg, BlocksAreReusedFromThePool)
{
	nrf_h2_msg m = {};
	struct nrf_h2_ctx_stats st;

	ASSERT_EQ(Store(&m, "a", "b"), 0);
	char *first = m.block;
	nrf_h2_msg_release(ctx_, &m);
	nrf_h2_ctx_stats_get(ctx_, &st);
	EXPECT_EQ(st.blocks_free, 1u);
	ASSERT_EQ(Store(&m, "c", "d"), 0);
	EXPECT_EQ(m.block, first);
	nrf_h2_msg_release(ctx_, &m);
}

TEST_F(H2Msg, BodyAppendSpansChunksAndFlattens)
{
	nrf_h2_body b = {}, c = {};
	std::string data;
	char scratch[100000];

	for (int i = 0; i < 50000; i++)
		data.push_back((char)('A' + i % 26));
	ASSERT_EQ(nrf_h2_body_append(ctx_, &b, data.data(), 100), 0);
	ASSERT_EQ(nrf_h2_body_append(ctx_, &b, data.data() + 100, data.size() - 100), 0);
	EXPECT_EQ(b.len, data.size());
	EXPECT_NE(b.head, b.tail);
	nrf_slice f = nrf_h2_body_flat(&b, scratch, sizeof(scratch));
	EXPECT_EQ(std::string(f.p, f.len), data);
	f = nrf_h2_body_flat(&b, scratch, 10); /* cut to the scratch size */
	EXPECT_EQ(std::string(f.p, f.len), data.substr(0, 10));

	ASSERT_EQ(nrf_h2_body_append(ctx_, &c, "xyz", 3), 0);
	f = nrf_h2_body_flat(&c, scratch, sizeof(scratch)); /* one chunk: no copy */
	EXPECT_NE(f.p, scratch);
	EXPECT_EQ(std::string(f.p, f.len), "xyz");
	nrf_h2_body_splice(&c, &b);
	EXPECT_EQ(b.len, 0u);
	EXPECT_EQ(b.head, nullptr);
	EXPECT_EQ(c.len, data.size() + 3);

	uint8_t out[7];
	EXPECT_EQ(h2_body_take(ctx_, &c, out, sizeof(out)), 7u);
	EXPECT_EQ(std::string((char *)out, 7), "xyzABCD");
	EXPECT_EQ(c.len, data.size() - 4);
	nrf_h2_body_release(ctx_, &c);
	EXPECT_EQ(c.len, 0u);
	nrf_h2_body_release(ctx_, &b);
}

TEST(H2HopByHop, DropsConnectionSpecificFieldsOnly)
{
	auto hop = [](const char *n, const char *v) {
		return nrf_h2_hop_by_hop(nrf_slice_str(n), nrf_slice_str(v));
	};
	EXPECT_TRUE(hop("connection", "close"));
	EXPECT_TRUE(hop("keep-alive", "5"));
	EXPECT_TRUE(hop("proxy-connection", "x"));
	EXPECT_TRUE(hop("transfer-encoding", "chunked"));
	EXPECT_TRUE(hop("upgrade", "h2c"));
	EXPECT_TRUE(hop("http2-settings", "AAA"));
	EXPECT_TRUE(hop("te", "gzip"));
	EXPECT_FALSE(hop("te", "trailers"));
	EXPECT_FALSE(hop("via", "2.0 a:1"));
	EXPECT_FALSE(hop("content-length", "3"));
	EXPECT_FALSE(hop("3gpp-sbi-target-apiroot", "http://a"));
}
