/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/h2/h2_check.c, the HTTP rules of front requests that
 * replace nghttp2's own (front sessions run with no_http_messaging).
 *
 * The reference is the installed nghttp2 itself: byte checks against its
 * exported nghttp2_check_* functions, and whole requests differentially —
 * the same client bytes go to a plain nghttp2 server session (HTTP
 * messaging on) and to one with messaging off driven through h2_check the
 * way lib/h2/h2_conn.c drives it; both must reset the same streams and
 * deliver the same fields, heads, ends and body bytes for the others.
 */
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "h2_int.h"
}

namespace {

const uint8_t *
u8(const std::string &s)
{
	return reinterpret_cast<const uint8_t *>(s.data());
}

TEST(H2Check, ByteChecksAgreeWithNghttp2OnEveryByte)
{
	h2_check_init();
	for (int c = 0; c < 256; c++) {
		uint8_t b[3] = {'a', (uint8_t)c, 'b'};
		EXPECT_EQ(h2_check_name(b, 3), nghttp2_check_header_name(b, 3) != 0) << c;
		EXPECT_EQ(h2_check_name(b + 1, 1), nghttp2_check_header_name(b + 1, 1) != 0) << c;
		EXPECT_EQ(h2_check_value(b, 3), nghttp2_check_header_value(b, 3) != 0) << c;
	}
	EXPECT_FALSE(h2_check_name(u8(""), 0));
	EXPECT_FALSE(h2_check_name(u8(":"), 1));
	EXPECT_TRUE(h2_check_name(u8(":path"), 5));
}

TEST(H2Check, LongValuesAndPathsAgreeWithNghttp2WhereverTheBadByteIs)
{
	std::mt19937 rng(7);
	h2_check_init();
	for (int n = 0; n < 20000; n++) {
		size_t len = rng() % 70;
		std::string v(len, 'a');
		for (auto &ch : v)
			ch = (char)(0x20 + rng() % 0x5f);
		if (len > 0 && rng() % 2) {
			static const uint8_t bad[] = {0x00, 0x01, 0x08, 0x0a, 0x0d, 0x1f, 0x7f};
			v[rng() % len] = (char)bad[rng() % sizeof(bad)];
		}
		if (len > 0 && rng() % 4 == 0)
			v[rng() % len] = (char)(0x80 + rng() % 0x80);
		if (len > 0 && rng() % 8 == 0)
			v[rng() % len] = '\t';
		EXPECT_EQ(h2_check_value(u8(v), len), nghttp2_check_header_value(u8(v), len) != 0)
			<< testing::PrintToString(v);
		/* :path goes through the 16-byte path check */
		nrf_h2_reqchk rc;
		h2_reqchk_init(&rc);
		EXPECT_EQ(h2_check_field(&rc, u8(":path"), 5, u8(v), len, false, 0) == H2_CHK_OK,
			len > 0 && nghttp2_check_path(u8(v), len) != 0)
			<< testing::PrintToString(v);
	}
}

/* Values and paths are tried 16 bytes at a time (the flags of all vectors
 * OR-ed, the table deciding a value that holds HT or any byte up to 0x1f),
 * and a regular field's value ends are one compare each: every byte value
 * at every position of values and paths of 1 to 40 bytes gives nghttp2's
 * answer, HT anywhere in the middle too. */
TEST(H2Check, ValuesAndPathsAgreeWithNghttp2ForEveryByteAtEveryPosition)
{
	h2_check_init();
	for (size_t len = 1; len <= 40; len++) {
		for (size_t pos = 0; pos < len; pos++) {
			for (int c = 0; c < 256; c++) {
				for (int ht = 0; ht < 2; ht++) {
					std::string v(len, 'x');
					for (size_t i = 0; i < len; i++)
						v[i] = "aZ/.~9%"[i % 7];
					if (ht && len > 2)
						v[(pos + len / 2) % (len - 2) + 1] = '\t';
					v[pos] = (char)c;
					ASSERT_EQ(h2_check_value(u8(v), len),
						nghttp2_check_header_value(u8(v), len) != 0)
						<< testing::PrintToString(v);
					nrf_h2_reqchk rc;
					h2_reqchk_init(&rc);
					ASSERT_EQ(h2_check_field(&rc, u8("x-v"), 3, u8(v), len, false, 0) ==
							H2_CHK_OK,
						nghttp2_check_header_value_rfc9113(u8(v), len) != 0)
						<< testing::PrintToString(v);
					h2_reqchk_init(&rc);
					ASSERT_EQ(h2_check_field(&rc, u8(":path"), 5, u8(v), len, false,
							  0) == H2_CHK_OK,
						nghttp2_check_path(u8(v), len) != 0)
						<< testing::PrintToString(v);
				}
			}
		}
	}
}

/* te and :scheme values are compared with "trailers", "http" and "https"
 * in any case as OR-ed words: every byte at every position of them (and
 * their upper-case forms) gives the answer of an ASCII case-insensitive
 * compare (nghttp2's lstrieq()). */
TEST(H2Check, TeAndSchemeLiteralsMatchInAnyCaseAndNothingElse)
{
	auto ieq = [](const std::string &v, const char *lit) {
		size_t n = strlen(lit);
		if (v.size() != n)
			return false;
		for (size_t i = 0; i < n; i++) {
			char c = v[i] >= 'A' && v[i] <= 'Z' ? (char)(v[i] + 32) : v[i];
			if (c != lit[i])
				return false;
		}
		return true;
	};
	h2_check_init();
	for (const char *lit : {"trailers", "http", "https"}) {
		std::string base(lit);
		for (int up = 0; up < 2; up++) {
			for (size_t pos = 0; pos < base.size(); pos++) {
				for (int c = 1; c < 256; c++) {
					std::string v = base;
					if (up)
						for (auto &ch : v)
							ch = (char)(ch - 32);
					v[pos] = (char)c;
					nrf_h2_reqchk rc;
					h2_reqchk_init(&rc);
					bool te = base == "trailers";
					int r = h2_check_field(&rc, u8(te ? "te" : ":scheme"), te ? 2 : 7,
						u8(v), v.size(), false, 0);
					bool ok = nghttp2_check_header_value_rfc9113(u8(v), v.size()) != 0;
					if (te) {
						ASSERT_EQ(r == H2_CHK_OK, ok && ieq(v, lit))
							<< testing::PrintToString(v);
						continue;
					}
					if (r != H2_CHK_OK)
						continue; /* not a scheme at all */
					ASSERT_EQ((rc.fl & H2_HF_SCHEME_HTTP) != 0,
						ieq(v, "http") || ieq(v, "https"))
						<< testing::PrintToString(v);
				}
			}
		}
	}
}

/* Names and authorities are tried 16 bytes at a time, the table deciding
 * for uncommon bytes: every byte value at every position of names and
 * authorities of 1 to 40 bytes gives nghttp2's answer. */
TEST(H2Check, LongNamesAndAuthoritiesAgreeWithNghttp2WhereverTheOddByteIs)
{
	h2_check_init();
	for (size_t len = 1; len <= 40; len++) {
		for (size_t pos = 0; pos < len; pos++) {
			for (int c = 0; c < 256; c++) {
				std::string v(len, 'x');
				for (size_t i = 0; i < len; i++)
					v[i] = "abz09-"[i % 6];
				v[pos] = (char)c;
				ASSERT_EQ(h2_check_name(u8(v), len),
					nghttp2_check_header_name(u8(v), len) != 0)
					<< testing::PrintToString(v);
				for (size_t i = 0; i < len; i++)
					if (i != pos)
						v[i] = "a.:9-"[i % 5];
				nrf_h2_reqchk rc;
				h2_reqchk_init(&rc);
				ASSERT_EQ(h2_check_field(&rc, u8(":authority"), 10, u8(v), len, false, 0) ==
						H2_CHK_OK,
					nghttp2_check_authority(u8(v), len) != 0)
					<< testing::PrintToString(v);
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Whole requests, differentially                                            */

struct Out {
	std::vector<std::pair<std::string, std::string>> fields;
	bool head = false;
	bool end = false;
	size_t body = 0;
	bool reset = false;
	uint32_t code = 0;
	/* ours */
	nrf_h2_reqchk chk = {};
	int phase = 0;
	bool bad = false;
};

struct Server {
	bool ours = false;
	bool rcbufs = false; /* ours, fed as h2_conn.c feeds it (on_header2) */
	nghttp2_session *s = nullptr;
	std::map<int32_t, Out> out;
};

int
begin_headers(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		h2_reqchk_init(&sv->out[f->hd.stream_id].chk);
	return 0;
}

int
on_header(nghttp2_session *, const nghttp2_frame *f, const uint8_t *n, size_t nl,
	const uint8_t *v, size_t vl, uint8_t, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	Out &o = sv->out[f->hd.stream_id];
	if (sv->ours) {
		if (o.bad)
			return 0;
		int rc = h2_check_field(&o.chk, n, nl, v, vl, o.phase != 0, 0);
		if (rc != H2_CHK_OK) {
			o.bad = true;
			return 0;
		}
	}
	if (o.phase == 0)
		o.fields.emplace_back(std::string((const char *)n, nl), std::string((const char *)v, vl));
	return 0;
}

/* As h2_conn.c: the bytes nghttp2's static table vouches for are known. */
int
on_header2(nghttp2_session *, const nghttp2_frame *f, nghttp2_rcbuf *nrc, nghttp2_rcbuf *vrc,
	uint8_t, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	Out &o = sv->out[f->hd.stream_id];
	nghttp2_vec n = nghttp2_rcbuf_get_buf(nrc), v = nghttp2_rcbuf_get_buf(vrc);
	unsigned int known = 0;
	if (nghttp2_rcbuf_is_static(nrc))
		known |= H2_KNOWN_NAME;
	if (nghttp2_rcbuf_is_static(vrc))
		known |= H2_KNOWN_VALUE;
	if (o.bad)
		return 0;
	if (h2_check_field(&o.chk, n.base, n.len, v.base, v.len, o.phase != 0, known) !=
		H2_CHK_OK) {
		o.bad = true;
		return 0;
	}
	if (o.phase == 0)
		o.fields.emplace_back(std::string((const char *)n.base, n.len),
			std::string((const char *)v.base, v.len));
	return 0;
}

void
reset_bad(Server *sv, int32_t id, Out &o)
{
	if (o.reset)
		return;
	o.reset = true; /* ours: as h2_conn.c malformed() */
	nghttp2_submit_rst_stream(sv->s, NGHTTP2_FLAG_NONE, id, NGHTTP2_PROTOCOL_ERROR);
}

int
frame_recv(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	Out &o = sv->out[f->hd.stream_id];
	bool end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
	if (sv->ours) {
		if (!o.bad && f->hd.type == NGHTTP2_HEADERS)
			o.bad = o.phase == 0 ? h2_check_head(&o.chk) != H2_CHK_OK : !end;
		if (!o.bad && end && h2_check_end(&o.chk) != H2_CHK_OK)
			o.bad = true;
		if (o.bad) {
			reset_bad(sv, f->hd.stream_id, o);
			return 0;
		}
	}
	if (f->hd.type == NGHTTP2_HEADERS && o.phase == 0) {
		o.phase = 1;
		o.head = true;
	}
	if (end)
		o.end = true;
	return 0;
}

int
data_chunk(nghttp2_session *, uint8_t, int32_t id, const uint8_t *, size_t len, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	Out &o = sv->out[id];
	if (sv->ours) {
		if (o.bad)
			return 0;
		if (h2_check_data(&o.chk, len) != H2_CHK_OK) {
			o.bad = true;
			reset_bad(sv, id, o);
			return 0;
		}
	}
	o.body += len;
	return 0;
}

int
frame_send(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	auto *sv = static_cast<Server *>(ud);
	if (f->hd.type == NGHTTP2_RST_STREAM) {
		Out &o = sv->out[f->hd.stream_id];
		o.reset = true;
		o.code = f->rst_stream.error_code;
	}
	return 0;
}

struct Req {
	std::vector<std::pair<std::string, std::string>> nv;
	int body = -1; /* -1: END_STREAM on HEADERS; -2: no END_STREAM at all */
	bool trailers = false; /* after the body: a trailer block */
	std::vector<std::pair<std::string, std::string>> tnv;
};

struct Src {
	size_t left;
	const Req *r;
	std::vector<nghttp2_nv> tnva;
};

std::vector<nghttp2_nv>
to_nva(const std::vector<std::pair<std::string, std::string>> &v)
{
	std::vector<nghttp2_nv> nva;
	for (auto &kv : v)
		/* NO_COPY: nghttp2 would lower-case copied names; the bytes
		 * must reach the servers as written */
		nva.push_back({(uint8_t *)kv.first.data(), (uint8_t *)kv.second.data(),
			kv.first.size(), kv.second.size(),
			NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
	return nva;
}

ssize_t
body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *fl,
	nghttp2_data_source *src, void *)
{
	Src *x = static_cast<Src *>(src->ptr);
	if (x->r->body == -2)
		return NGHTTP2_ERR_DEFERRED;
	size_t n = std::min(len, x->left);
	memset(buf, 'b', n);
	x->left -= n;
	if (x->left == 0) {
		*fl |= NGHTTP2_DATA_FLAG_EOF;
		if (x->r->trailers) {
			*fl |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			x->tnva = to_nva(x->r->tnv);
			nghttp2_submit_trailer(s, id, x->tnva.data(), x->tnva.size());
		}
	}
	return (ssize_t)n;
}

/* Send @p reqs from one client connection to a plain nghttp2 server and
 * to ours; compare stream by stream. */
void
Compare(const std::vector<Req> &reqs)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, data_chunk);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, frame_send);
	nghttp2_session_callbacks *cb2;
	nghttp2_session_callbacks_new(&cb2);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb2, begin_headers);
	nghttp2_session_callbacks_set_on_header_callback2(cb2, on_header2);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb2, frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb2, data_chunk);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb2, frame_send);
	nghttp2_option *plain, *off;
	nghttp2_option_new(&plain);
	nghttp2_option_new(&off);
	nghttp2_option_set_no_http_messaging(off, 1);
	Server a, b, z;
	a.ours = false;
	b.ours = true;
	z.ours = z.rcbufs = true;
	ASSERT_EQ(nghttp2_session_server_new2(&a.s, cb, &a, plain), 0);
	ASSERT_EQ(nghttp2_session_server_new2(&b.s, cb, &b, off), 0);
	ASSERT_EQ(nghttp2_session_server_new2(&z.s, cb2, &z, off), 0);

	nghttp2_session_callbacks *ccb;
	nghttp2_session_callbacks_new(&ccb);
	nghttp2_session *cl;
	ASSERT_EQ(nghttp2_session_client_new(&cl, ccb, nullptr), 0);
	nghttp2_submit_settings(cl, NGHTTP2_FLAG_NONE, nullptr, 0);
	std::vector<Src> srcs(reqs.size());
	std::vector<int32_t> ids;
	for (size_t i = 0; i < reqs.size(); i++) {
		std::vector<nghttp2_nv> nva = to_nva(reqs[i].nv);
		nghttp2_data_provider prd;
		srcs[i].left = reqs[i].body < 0 ? 0 : (size_t)reqs[i].body;
		srcs[i].r = &reqs[i];
		prd.source.ptr = &srcs[i];
		prd.read_callback = body_read;
		int32_t id = nghttp2_submit_request(cl, nullptr, nva.data(), nva.size(),
			reqs[i].body != -1 ? &prd : nullptr, nullptr);
		ASSERT_GT(id, 0);
		ids.push_back(id);
	}
	for (;;) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(cl, &p);
		ASSERT_GE(n, 0);
		if (n == 0)
			break;
		ASSERT_EQ(nghttp2_session_mem_recv(a.s, p, (size_t)n), n);
		ASSERT_EQ(nghttp2_session_mem_recv(b.s, p, (size_t)n), n);
		ASSERT_EQ(nghttp2_session_mem_recv(z.s, p, (size_t)n), n);
	}
	for (Server *sv : {&a, &b, &z}) {
		const uint8_t *p;
		while (nghttp2_session_mem_send(sv->s, &p) > 0) {
		}
	}
	for (size_t i = 0; i < reqs.size(); i++) {
		const Out &x = a.out[ids[i]], &y = b.out[ids[i]], &w = z.out[ids[i]];
		std::string what;
		for (auto &kv : reqs[i].nv)
			what += testing::PrintToString(kv.first) + "=" + testing::PrintToString(kv.second) + " ";
		what += "body " + std::to_string(reqs[i].body);
		for (const Out *o : {&y, &w}) {
			const char *who = o == &y ? "plain fields: " : "rcbufs: ";
			ASSERT_EQ(x.reset, o->reset) << who << what;
			if (x.reset) {
				EXPECT_EQ(x.code, o->code) << who << what;
				continue;
			}
			EXPECT_EQ(x.head, o->head) << who << what;
			EXPECT_EQ(x.end, o->end) << who << what;
			EXPECT_EQ(x.body, o->body) << who << what;
			EXPECT_EQ(x.fields, o->fields) << who << what;
		}
	}
	nghttp2_session_del(cl);
	nghttp2_session_del(a.s);
	nghttp2_session_del(b.s);
	nghttp2_session_del(z.s);
	nghttp2_session_callbacks_del(cb2);
	nghttp2_option_del(plain);
	nghttp2_option_del(off);
	nghttp2_session_callbacks_del(cb);
	nghttp2_session_callbacks_del(ccb);
}

void
RandomRequests(unsigned seed_, int rounds)
{
	h2_check_init();
	static const char *names[] = {":method", ":scheme", ":authority", ":path", ":status",
		":protocol", ":foo", ":", "host", "content-length", "te", "connection", "keep-alive",
		"upgrade", "proxy-connection", "transfer-encoding", "via", "x-a", "User-Agent",
		"x_b", "x b", "x\x01y", "priority", "3gpp-sbi-target-apiroot", "x{}",
		"accept-encoding"};
	static const char *values[] = {"GET", "POST", "CONNECT", "OPTIONS", "HEAD", "http", "https",
		"HTTP", "ftp", "1http", "h+t-.x", "/", "/a?b=c", "*", "a", "", " ", " a", "a ",
		"a\tb", "\ta", "trailers", "TRAILERS", "gzip", "0", "5", "-1", "01", "+3",
		"99999999999999999999", "example.com:80", "ex ample", "a/b", "[::1]:80", "u@h",
		"2.0 nrf-a.seg1.example.com:8080, 2.0 nrf-b.seg2.example.com:8080",
		"2.0 nrf-a.seg1.example.com:8080,\x01 2.0 nrf-b.seg2.example.com:8080",
		"2.0 nrf-a.seg1.example.com:8080, 2.0 nrf-b.seg2.example.com:8080\x7f",
		/* static table values (indexed with their names when they match) */
		"gzip, deflate", "/index.html",
		/* a bad byte in each part of the vector checks: 8-15 bytes in two
		 * halves, 16 and more with an overlapping last vector */
		"abcdefghij\x01kl", "abcdefg\x7f", "abcdefghijklmnopq\x01", "/abcdefghijklmnop q"};
	const size_t nn = sizeof(names) / sizeof(names[0]), nvv = sizeof(values) / sizeof(values[0]);
	std::mt19937 rng(seed_);
	auto val = [&]() -> std::string {
		if (rng() % 6 == 0) {
			std::string v(rng() % 40, 'x');
			for (auto &ch : v)
				ch = (char)(rng() % 256);
			return v;
		}
		return values[rng() % nvv];
	};
	for (int round = 0; round < rounds; round++) {
		std::vector<Req> reqs;
		for (int k = 0; k < 20; k++) {
			Req r;
			if (rng() % 5 != 0) {
				r.nv = {{":method", rng() % 4 ? "GET" : val()},
					{":scheme", rng() % 4 ? "http" : val()},
					{":authority", rng() % 4 ? "nrf:8080" : val()},
					{":path", rng() % 4 ? "/nnrf-disc/v1/nf-instances?x=1" : val()}};
				if (rng() % 5 == 0)
					r.nv.erase(r.nv.begin() + rng() % r.nv.size());
				if (rng() % 6 == 0)
					std::swap(r.nv[rng() % r.nv.size()], r.nv[rng() % r.nv.size()]);
			}
			int extra = rng() % 5;
			for (int e = 0; e < extra; e++) {
				std::pair<std::string, std::string> f{names[rng() % nn], val()};
				size_t at = r.nv.empty() ? 0 : rng() % (r.nv.size() + 1);
				r.nv.insert(r.nv.begin() + at, f);
			}
			if (rng() % 4 == 0)
				r.nv.push_back({"content-length", std::to_string(rng() % 6)});
			r.body = rng() % 3 == 0 ? (int)(rng() % 6) : rng() % 10 == 0 ? -2 : -1;
			if (r.body >= 0 && rng() % 3 == 0) {
				r.trailers = true;
				int nt = rng() % 3;
				for (int e = 0; e < nt; e++)
					r.tnv.push_back({names[rng() % nn], val()});
			}
			reqs.push_back(r);
		}
		Compare(reqs);
		if (::testing::Test::HasFailure())
			return;
	}
}

} // namespace

TEST(H2Check, RequestsAreResetOrDeliveredExactlyAsNghttp2Would)
{
	RandomRequests(1234, 300);
}

TEST(H2Check, RequestsAreResetOrDeliveredExactlyAsNghttp2WouldOtherSeed)
{
	RandomRequests(98765, 300);
}
