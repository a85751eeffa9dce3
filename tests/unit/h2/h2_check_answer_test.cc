/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the answer half of lib/h2/h2_check.c: the HTTP rules of
 * answers on peer (client) streams, which replace nghttp2's own (peer
 * sessions run with no_http_messaging).
 *
 * The reference is the installed nghttp2 itself: the same answer bytes
 * (header blocks, interim 1xx blocks, DATA, trailers, valid and broken)
 * from one nghttp2 server session go to a plain nghttp2 client session
 * (HTTP messaging on) and to one with messaging off driven through
 * h2_check_answer_*() the way lib/h2/h2_conn.c drives it (on_header2 with
 * rcbufs, client_frame_recv(), the peer branch of on_data_chunk(),
 * malformed()); both must reset the same streams with the same code and
 * deliver the same header blocks, fields, body bytes and ends for the
 * others.
 */
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <map>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "h2_int.h"
}

namespace {

typedef std::vector<std::pair<std::string, std::string>> Fields;

struct Out {
	std::vector<Fields> blocks; /* header blocks delivered (on_frame_recv) */
	Fields pending;             /* fields of the block being received */
	bool end = false;
	size_t body = 0;
	bool reset = false;
	uint32_t code = 0;          /* the first RST_STREAM this side sent */
	bool closed = false;        /* on_stream_close: what the owner sees */
	uint32_t close_code = 0;
	/* ours, as h2_conn.c keeps it in the stream */
	nrf_h2_reqchk chk = {};
	int phase = 0;              /* st->hdr_phase */
	bool bad = false;           /* NRF_H2_SF_MALFORMED */
	bool rst = false;           /* NRF_H2_SF_RESET */
	bool mrst = false;          /* H2_SF_MAL_RST */
};

struct Client {
	bool ours = false;
	nghttp2_session *s = nullptr;
	std::map<int32_t, Out> out;
};

/* h2_conn.c malformed(): reset once with PROTOCOL_ERROR. */
void
malformed(Client *cl, int32_t id, Out &o)
{
	o.bad = true;
	if (o.rst)
		return;
	o.rst = o.mrst = true;
	nghttp2_submit_rst_stream(cl->s, NGHTTP2_FLAG_NONE, id, NGHTTP2_PROTOCOL_ERROR);
}

int
begin_headers(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	static_cast<Client *>(ud)->out[f->hd.stream_id].pending.clear();
	return 0;
}

int
on_header2(nghttp2_session *, const nghttp2_frame *f, nghttp2_rcbuf *nrc, nghttp2_rcbuf *vrc,
	uint8_t, void *ud)
{
	auto *cl = static_cast<Client *>(ud);
	Out &o = cl->out[f->hd.stream_id];
	nghttp2_vec n = nghttp2_rcbuf_get_buf(nrc), v = nghttp2_rcbuf_get_buf(vrc);

	if (cl->ours) {
		unsigned int known = 0;
		if (nghttp2_rcbuf_is_static(nrc)) {
			known |= H2_KNOWN_NAME;
			if (nghttp2_rcbuf_is_static(vrc))
				known |= H2_KNOWN_VALUE;
		}
		if (o.bad)
			return 0;
		int rc = h2_check_answer_field(&o.chk, n.base, n.len, v.base, v.len, o.phase != 0,
			known);
		if (rc == H2_CHK_DROP)
			return 0;
		if (rc != H2_CHK_OK) {
			malformed(cl, f->hd.stream_id, o);
			return 0;
		}
	}
	o.pending.emplace_back(std::string((const char *)n.base, n.len),
		std::string((const char *)v.base, v.len));
	return 0;
}

int
frame_recv(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	auto *cl = static_cast<Client *>(ud);
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	Out &o = cl->out[f->hd.stream_id];
	bool end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
	int chk = H2_CHK_OK;
	if (cl->ours) {
		if (o.bad)
			return 0;
		if (f->hd.type == NGHTTP2_HEADERS)
			chk = o.phase == 0 ? h2_check_answer_head(&o.chk)
				: end ? H2_CHK_OK : H2_CHK_BAD;
		if (chk == H2_CHK_BAD || (end && h2_check_answer_end(&o.chk) != H2_CHK_OK)) {
			malformed(cl, f->hd.stream_id, o);
			return 0;
		}
		if (f->hd.type == NGHTTP2_HEADERS && o.phase == 0 && chk != H2_CHK_INTERIM)
			o.phase = 1;
	}
	if (f->hd.type == NGHTTP2_HEADERS)
		o.blocks.push_back(o.pending);
	if (end)
		o.end = true;
	return 0;
}

int
data_chunk(nghttp2_session *, uint8_t, int32_t id, const uint8_t *, size_t len, void *ud)
{
	auto *cl = static_cast<Client *>(ud);
	Out &o = cl->out[id];
	if (cl->ours) {
		if (!o.bad && h2_check_answer_data(&o.chk, len) != H2_CHK_OK)
			malformed(cl, id, o);
		if (o.bad)
			return 0;
	}
	o.body += len;
	return 0;
}

int
frame_send(nghttp2_session *, const nghttp2_frame *f, void *ud)
{
	auto *cl = static_cast<Client *>(ud);
	if (f->hd.type == NGHTTP2_RST_STREAM) {
		Out &o = cl->out[f->hd.stream_id];
		if (!o.reset)
			o.code = f->rst_stream.error_code;
		o.reset = true;
	}
	return 0;
}

int
stream_close(nghttp2_session *, int32_t id, uint32_t code, void *ud)
{
	auto *cl = static_cast<Client *>(ud);
	Out &o = cl->out[id];
	o.closed = true;
	o.close_code = code;
	/* as h2_conn.c on_stream_close(): H2_SF_MAL_RST */
	if (cl->ours && o.mrst && code == NGHTTP2_NO_ERROR)
		o.close_code = NGHTTP2_PROTOCOL_ERROR;
	return 0;
}

/* One step of an answer: a header block, or DATA of @c n bytes. */
struct Step {
	bool data = false;
	Fields nv;
	size_t n = 0;
	bool end = false;
};

struct Answer {
	bool head = false; /* the request is HEAD */
	std::vector<Step> steps;
};

std::vector<nghttp2_nv>
to_nva(const Fields &v)
{
	std::vector<nghttp2_nv> nva;
	for (auto &kv : v)
		/* NO_COPY: nghttp2 would lower-case copied names; the bytes
		 * must reach the clients as written */
		nva.push_back({(uint8_t *)kv.first.data(), (uint8_t *)kv.second.data(),
			kv.first.size(), kv.second.size(),
			NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
	return nva;
}

struct Src {
	size_t left;
	bool end;
};

ssize_t
body_read(nghttp2_session *, int32_t, uint8_t *buf, size_t len, uint32_t *fl,
	nghttp2_data_source *src, void *)
{
	Src *x = static_cast<Src *>(src->ptr);
	size_t n = std::min(len, x->left);
	memset(buf, 'b', n);
	x->left -= n;
	if (x->left == 0) {
		*fl |= NGHTTP2_DATA_FLAG_EOF;
		if (!x->end)
			*fl |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return (ssize_t)n;
}

std::string
Describe(const Answer &a)
{
	std::string s = a.head ? "HEAD: " : "GET: ";
	for (auto &st : a.steps) {
		if (st.data) {
			s += "DATA " + std::to_string(st.n);
		} else {
			s += "[";
			for (auto &kv : st.nv)
				s += testing::PrintToString(kv.first) + "=" +
					testing::PrintToString(kv.second) + " ";
			s += "]";
		}
		s += st.end ? " END; " : "; ";
	}
	return s;
}

/* Send @p answers from one server connection to a plain nghttp2 client
 * and to ours; compare stream by stream. */
void
Compare(const std::vector<Answer> &answers, std::vector<bool> *resets = nullptr)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers);
	nghttp2_session_callbacks_set_on_header_callback2(cb, on_header2);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, data_chunk);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close);
	nghttp2_option *plain, *off;
	nghttp2_option_new(&plain);
	nghttp2_option_new(&off);
	nghttp2_option_set_no_http_messaging(off, 1);
	Client a, b;
	b.ours = true;
	ASSERT_EQ(nghttp2_session_client_new2(&a.s, cb, &a, plain), 0);
	ASSERT_EQ(nghttp2_session_client_new2(&b.s, cb, &b, off), 0);
	nghttp2_submit_settings(a.s, NGHTTP2_FLAG_NONE, nullptr, 0);
	nghttp2_submit_settings(b.s, NGHTTP2_FLAG_NONE, nullptr, 0);

	nghttp2_session_callbacks *scb;
	nghttp2_session_callbacks_new(&scb);
	nghttp2_session *sv;
	/* The origin checks nothing: it sends every answer as written. */
	ASSERT_EQ(nghttp2_session_server_new2(&sv, scb, nullptr, off), 0);
	nghttp2_submit_settings(sv, NGHTTP2_FLAG_NONE, nullptr, 0);

	std::vector<int32_t> ids;
	for (const Answer &an : answers) {
		Fields req = {{":method", an.head ? "HEAD" : "GET"}, {":scheme", "http"},
			{":authority", "nrf:8080"}, {":path", "/nnrf-disc/v1/nf-instances"}};
		std::vector<nghttp2_nv> nva = to_nva(req);
		for (auto &nv : nva)
			nv.flags = NGHTTP2_NV_FLAG_NONE; /* copied: req is gone when sent */
		int32_t id = nghttp2_submit_request(a.s, nullptr, nva.data(), nva.size(), nullptr,
			nullptr);
		int32_t id2 = nghttp2_submit_request(b.s, nullptr, nva.data(), nva.size(), nullptr,
			nullptr);
		ASSERT_GT(id, 0);
		ASSERT_EQ(id, id2);
		ids.push_back(id);
		h2_anschk_init(&b.out[id].chk, an.head); /* as nrf_h2_request() */
	}
	/* Both clients send the same requests; the server hears a's. */
	auto pump = [&]() {
		for (int k = 0; k < 8; k++) {
			const uint8_t *p;
			ssize_t n;
			bool any = false;
			while ((n = nghttp2_session_mem_send(a.s, &p)) > 0) {
				any = true;
				ASSERT_EQ(nghttp2_session_mem_recv(sv, p, (size_t)n), n);
			}
			while ((n = nghttp2_session_mem_send(b.s, &p)) > 0)
				any = true;
			while ((n = nghttp2_session_mem_send(sv, &p)) > 0) {
				any = true;
				ASSERT_EQ(nghttp2_session_mem_recv(a.s, p, (size_t)n), n);
				ASSERT_EQ(nghttp2_session_mem_recv(b.s, p, (size_t)n), n);
			}
			if (!any)
				break;
		}
	};
	pump();
	/* One step of every answer per round, each round written out before
	 * the next (a DATA step must leave before the next header block). */
	std::vector<Src> srcs(answers.size());
	size_t most = 0;
	for (auto &an : answers)
		most = std::max(most, an.steps.size());
	for (size_t k = 0; k < most; k++) {
		for (size_t i = 0; i < answers.size(); i++) {
			if (k >= answers[i].steps.size())
				continue;
			const Step &st = answers[i].steps[k];
			if (st.data) {
				nghttp2_data_provider prd;
				srcs[i] = {st.n, st.end};
				prd.source.ptr = &srcs[i];
				prd.read_callback = body_read;
				/* END_STREAM only if asked here too */
				nghttp2_submit_data(sv,
					st.end ? NGHTTP2_FLAG_END_STREAM : NGHTTP2_FLAG_NONE, ids[i], &prd);
			} else {
				std::vector<nghttp2_nv> nva = to_nva(st.nv);
				/* nghttp2 packs the list into the frame when it is
				 * written: flushed below, while nva lives */
				nghttp2_submit_headers(sv,
					st.end ? NGHTTP2_FLAG_END_STREAM : NGHTTP2_FLAG_NONE, ids[i],
					nullptr, nva.data(), nva.size(), nullptr);
				pump();
			}
		}
		pump();
	}
	int compared = 0;
	for (size_t i = 0; i < answers.size(); i++) {
		const Out &x = a.out[ids[i]], &y = b.out[ids[i]];
		std::string what = Describe(answers[i]);
		ASSERT_EQ(x.reset, y.reset) << what;
		EXPECT_EQ(x.closed, y.closed) << what;
		EXPECT_EQ(x.close_code, y.close_code) << what;
		compared++;
		if (resets != nullptr)
			resets->push_back(x.reset);
		if (x.reset) {
			EXPECT_EQ(x.code, y.code) << what;
			continue;
		}
		EXPECT_EQ(x.blocks, y.blocks) << what;
		EXPECT_EQ(x.end, y.end) << what;
		EXPECT_EQ(x.body, y.body) << what;
	}
	EXPECT_EQ(compared, (int)answers.size());
	nghttp2_session_del(a.s);
	nghttp2_session_del(b.s);
	nghttp2_session_del(sv);
	nghttp2_option_del(plain);
	nghttp2_option_del(off);
	nghttp2_session_callbacks_del(cb);
	nghttp2_session_callbacks_del(scb);
}

Step
H(Fields nv, bool end = false)
{
	Step s;
	s.nv = std::move(nv);
	s.end = end;
	return s;
}

Step
D(size_t n, bool end = false)
{
	Step s;
	s.data = true;
	s.n = n;
	s.end = end;
	return s;
}

Answer
A(std::vector<Step> steps, bool head = false)
{
	Answer a;
	a.head = head;
	a.steps = std::move(steps);
	return a;
}

/* Every rule once, valid and invalid side by side; how many streams
 * each side resets is checked too, so the cases do bite. */
TEST(H2CheckAnswer, EveryRuleAsNghttp2)
{
	h2_check_init();
	const size_t n_valid = 17;
	std::vector<Answer> v = {
		/* valid */
		A({H({{":status", "200"}, {"content-type", "application/json"}}, true)}),
		A({H({{":status", "200"}, {"content-length", "5"}}), D(5, true)}),
		A({H({{":status", "200"}}), D(3), D(4, true)}),
		A({H({{":status", "100"}}), H({{":status", "200"}}), D(2, true)}),
		A({H({{":status", "103"}, {"link", "</a>"}}), H({{":status", "103"}}),
			H({{":status", "201"}}, true)}),
		A({H({{":status", "200"}}), D(2), H({{"x-t", "1"}}, true)}),
		A({H({{":status", "200"}, {"te", "Trailers"}}), D(1, true)}),
		A({H({{":status", "204"}, {"content-length", "0"}}, true)}),
		A({H({{":status", "304"}, {"content-length", "100"}}, true)}),
		A({H({{":status", "200"}, {"content-length", "100"}}, true)}, true),
		A({H({{":status", "200"}, {"content-length", "100"}}), D(0, true)}, true),
		A({H({{":status", "099"}}, true)}),
		A({H({{":status", "200"}, {"host", "x"}, {"via", "2.0 a, 2.0 b"}}, true)}),
		A({H({{":status", "200"}, {"x-e", ""}}, true)}),
		A({H({{":status", "200"}, {"x-a", "a\tb"}, {"x-b", "\x80\xff"}}, true)}),
		A({H({{":status", "200"}, {"x_b", "a"}}, true)}),
		/* content-length in trailers counts (nghttp2 parses it there too) */
		A({H({{":status", "200"}}), D(2), H({{"content-length", "2"}}, true)}),
		/* :status */
		A({H({{"x-a", "1"}}, true)}),
		A({H({{":status", "200"}, {":status", "200"}}, true)}),
		A({H({{"x-a", "1"}, {":status", "200"}}, true)}),
		A({H({{":status", "20"}}, true)}),
		A({H({{":status", "2000"}}, true)}),
		A({H({{":status", "2x0"}}, true)}),
		A({H({{":status", "+20"}}, true)}),
		A({H({{":status", " 20"}}, true)}),
		A({H({{":status", "101"}}, true)}),
		A({H({{":status", "100"}}, true)}),
		A({H({{":status", "100"}}), D(1, true)}),
		A({H({{":status", "100"}}), H({{"x-a", "1"}}, true)}),
		/* request pseudo-headers and others */
		A({H({{":status", "200"}, {":path", "/"}}, true)}),
		A({H({{":method", "GET"}, {":status", "200"}}, true)}),
		A({H({{":status", "200"}, {":foo", "x"}}, true)}),
		A({H({{":status", "200"}, {":", "x"}}, true)}),
		/* connection-specific */
		A({H({{":status", "200"}, {"connection", "close"}}, true)}),
		A({H({{":status", "200"}, {"keep-alive", "1"}}, true)}),
		A({H({{":status", "200"}, {"proxy-connection", "x"}}, true)}),
		A({H({{":status", "200"}, {"transfer-encoding", "chunked"}}, true)}),
		A({H({{":status", "200"}, {"upgrade", "h2c"}}, true)}),
		A({H({{":status", "200"}, {"te", "gzip"}}, true)}),
		/* names and values */
		A({H({{":status", "200"}, {"Content-Type", "a"}}, true)}),
		A({H({{":status", "200"}, {"x b", "a"}}, true)}),
		A({H({{":status", "200"}, {"", "a"}}, true)}),
		A({H({{":status", "200"}, {"x-a", std::string("a\0b", 3)}}, true)}),
		A({H({{":status", "200"}, {"x-a", "a\rb"}}, true)}),
		A({H({{":status", "200"}, {"x-a", "a\nb"}}, true)}),
		A({H({{":status", "200"}, {"x-a", " a"}}, true)}),
		A({H({{":status", "200"}, {"x-a", "a\t"}}, true)}),
		A({H({{":status", "200"}, {"x-a", "a\x7f"}}, true)}),
		/* content-length */
		A({H({{":status", "200"}, {"content-length", "5"}}), D(4, true)}),
		A({H({{":status", "200"}, {"content-length", "5"}}), D(6, true)}),
		A({H({{":status", "200"}, {"content-length", "5"}}), D(3), D(3, true)}),
		A({H({{":status", "200"}, {"content-length", "5"}, {"content-length", "5"}}),
			D(5, true)}),
		A({H({{":status", "200"}, {"content-length", "-1"}}, true)}),
		A({H({{":status", "200"}, {"content-length", "+5"}}), D(5, true)}),
		A({H({{":status", "200"}, {"content-length", "99999999999999999999"}}, true)}),
		A({H({{":status", "200"}, {"content-length", ""}}, true)}),
		A({H({{":status", "200"}, {"content-length", "1"}}, true)}),
		A({H({{":status", "204"}, {"content-length", "1"}}, true)}),
		A({H({{":status", "204"}, {"content-length", "0"}, {"content-length", "0"}},
			true)}),
		A({H({{":status", "204"}}), D(1, true)}),
		A({H({{":status", "304"}}), D(1, true)}),
		A({H({{":status", "200"}}), D(1, true)}, true),
		A({H({{":status", "100"}, {"content-length", "0"}}), H({{":status", "200"}}, true)}),
		/* trailers */
		A({H({{":status", "200"}}), D(2), H({{":status", "200"}}, true)}),
		A({H({{":status", "200"}}), D(2), H({{"x-t", "1"}})}),
		A({H({{":status", "200"}}), D(2), H({{"X-T", "1"}}, true)}),
		A({H({{":status", "200"}, {"content-length", "2"}}), D(2),
			H({{"content-length", "2"}}, true)}),
	};
	std::vector<bool> resets;
	Compare(v, &resets);
	ASSERT_EQ(resets.size(), v.size());
	for (size_t i = 0; i < v.size(); i++)
		EXPECT_EQ(resets[i], i >= n_valid) << Describe(v[i]);
}

/* Random answers: fields, order, interim blocks, bodies, trailers. */
void
RandomAnswers(unsigned seed_, int rounds)
{
	h2_check_init();
	static const char *names[] = {":status", ":path", ":method", ":authority", ":scheme",
		":protocol", ":foo", ":", "content-length", "te", "connection", "keep-alive",
		"upgrade", "proxy-connection", "transfer-encoding", "host", "via", "x-a",
		"Content-Type", "x_b", "x b", "x\x01y", "server", "content-type", "date",
		"3gpp-sbi-producer-id", "x{}", "location", "cache-control"};
	static const char *values[] = {"200", "204", "304", "100", "103", "101", "199", "099",
		"2000", "20", "2x0", " 20", "404", "500", "000", "0", "5", "12", "-1", "01", "+3",
		"99999999999999999999", "trailers", "TRAILERS", "gzip", " a", "a ", "a\tb", "",
		" ", "application/json", "application/problem+json", "no-cache", "/index.html",
		"2.0 nrf-a.seg1.example.com:8080, 2.0 nrf-b.seg2.example.com:8080",
		"2.0 nrf-a.seg1.example.com:8080,\x01 2.0 nrf-b.seg2.example.com:8080",
		"abcdefghij\x01kl", "abcdefg\x7f", "abcdefghijklmnopq\x0d", "a\nb"};
	static const char *statuses[] = {"200", "200", "200", "201", "204", "304", "404", "500",
		"100", "103"};
	const size_t nn = sizeof(names) / sizeof(names[0]), nvv = sizeof(values) / sizeof(values[0]);
	const size_t ns = sizeof(statuses) / sizeof(statuses[0]);
	std::mt19937 rng(seed_);
	auto val = [&]() -> std::string {
		if (rng() % 6 == 0) {
			std::string v(rng() % 20, 'x');
			for (auto &ch : v)
				ch = (char)(rng() % 256);
			return v;
		}
		return values[rng() % nvv];
	};
	auto block = [&](bool status) {
		Fields f;
		if (status)
			f.push_back({":status", rng() % 8 ? statuses[rng() % ns] : val()});
		int extra = rng() % 4;
		for (int e = 0; e < extra; e++) {
			std::pair<std::string, std::string> kv{names[rng() % nn], val()};
			if (rng() % 4 != 0)
				kv = {rng() % 2 ? "content-type" : "x-a", "application/json"};
			size_t at = f.empty() ? 0 : rng() % (f.size() + 1);
			if (rng() % 3)
				at = f.size(); /* mostly after :status */
			f.insert(f.begin() + at, kv);
		}
		return f;
	};
	size_t n_reset = 0, n_all = 0;
	for (int round = 0; round < rounds; round++) {
		std::vector<Answer> v;
		for (int k = 0; k < 24; k++) {
			Answer an;
			an.head = rng() % 6 == 0;
			int interim = rng() % 5 == 0 ? 1 + rng() % 2 : 0;
			for (int i = 0; i < interim; i++) {
				an.steps.push_back(H(block(true), rng() % 10 == 0));
				if (rng() % 10 == 0)
					an.steps.push_back(D(rng() % 3));
			}
			Fields fin = block(rng() % 12 != 0);
			int body = rng() % 3 == 0 ? -1 : (int)(rng() % 7);
			if (rng() % 3 == 0) {
				int cl = body < 0 ? 0 : body;
				if (rng() % 3 == 0)
					cl += (int)(rng() % 3) - 1;
				fin.push_back({"content-length", std::to_string(cl)});
			}
			if (body < 0) {
				an.steps.push_back(H(fin, rng() % 8 != 0));
			} else {
				an.steps.push_back(H(fin));
				int chunks = 1 + rng() % 2;
				bool trailers = rng() % 4 == 0;
				for (int c = 0; c < chunks; c++) {
					size_t n = c + 1 < chunks ? (size_t)body / 2 : (size_t)body - (size_t)body / 2;
					an.steps.push_back(D(n, c + 1 == chunks && !trailers));
				}
				if (trailers)
					an.steps.push_back(H(block(rng() % 8 == 0), rng() % 8 != 0));
			}
			v.push_back(an);
		}
		std::vector<bool> resets;
		Compare(v, &resets);
		if (::testing::Test::HasFailure())
			return;
		for (bool r : resets)
			n_reset += r;
		n_all += resets.size();
	}
	/* Both outcomes are common, or the comparison proves little. */
	EXPECT_GT(n_reset, n_all / 5);
	EXPECT_LT(n_reset, n_all * 4 / 5);
}

} // namespace

TEST(H2CheckAnswer, AnswersAreResetOrDeliveredExactlyAsNghttp2Would)
{
	RandomAnswers(4321, 300);
}

TEST(H2CheckAnswer, AnswersAreResetOrDeliveredExactlyAsNghttp2WouldOtherSeed)
{
	RandomAnswers(56789, 300);
}
