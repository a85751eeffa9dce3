/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire helpers for the state-machine tests of lib/h2 (h2_sm_srv_test.cc,
 * h2_sm_cli_test.cc): frames written byte by byte, as a client or an
 * upstream would send them, and frames read back from what nrfwd wrote.
 * Header blocks are encoded here as HPACK literals without indexing (raw
 * strings, RFC 7541 §6.2.2), so the test does not depend on nrfwd's
 * encoder; blocks nrfwd writes are decoded with nghttp2's inflater, a
 * decoder nobody here wrote.
 */
#ifndef NRF_H2_SM_WIRE_H
#define NRF_H2_SM_WIRE_H

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sm {

enum : uint8_t {
	DATA = 0x0,
	HEADERS = 0x1,
	PRIORITY = 0x2,
	RST_STREAM = 0x3,
	SETTINGS = 0x4,
	PUSH_PROMISE = 0x5,
	PING = 0x6,
	GOAWAY = 0x7,
	WINDOW_UPDATE = 0x8,
	CONTINUATION = 0x9,
};

enum : uint8_t {
	END_STREAM = 0x1,
	ACK = 0x1,
	END_HEADERS = 0x4,
	PADDED = 0x8,
	PRIO = 0x20,
};

enum : uint32_t {
	NO_ERROR = 0x0,
	PROTOCOL_ERROR = 0x1,
	INTERNAL_ERROR = 0x2,
	FLOW_CONTROL_ERROR = 0x3,
	STREAM_CLOSED = 0x5,
	FRAME_SIZE_ERROR = 0x6,
	REFUSED_STREAM = 0x7,
	CANCEL = 0x8,
	COMPRESSION_ERROR = 0x9,
	ENHANCE_YOUR_CALM = 0xb,
};

using Bytes = std::string;
using Fields = std::vector<std::pair<std::string, std::string>>;

inline const Bytes kPreface("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);

inline void
put32(Bytes &b, uint32_t v)
{
	b.push_back(char(v >> 24));
	b.push_back(char(v >> 16));
	b.push_back(char(v >> 8));
	b.push_back(char(v));
}

inline uint32_t
get32(const std::string &s, size_t at)
{
	const auto *p = reinterpret_cast<const uint8_t *>(s.data() + at);
	return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

/* One frame, header and payload. */
inline Bytes
frame(uint8_t type, uint8_t flags, uint32_t sid, const Bytes &payload)
{
	Bytes b;
	size_t n = payload.size();
	b.push_back(char(n >> 16));
	b.push_back(char(n >> 8));
	b.push_back(char(n));
	b.push_back(char(type));
	b.push_back(char(flags));
	put32(b, sid);
	return b + payload;
}

inline Bytes
settings(const std::vector<std::pair<uint16_t, uint32_t>> &kv = {})
{
	Bytes p;
	for (auto &e : kv) {
		p.push_back(char(e.first >> 8));
		p.push_back(char(e.first));
		put32(p, e.second);
	}
	return frame(SETTINGS, 0, 0, p);
}

inline Bytes
settings_ack()
{
	return frame(SETTINGS, ACK, 0, "");
}

inline Bytes
ping(const Bytes &opaque8, uint8_t flags = 0)
{
	return frame(PING, flags, 0, opaque8);
}

inline Bytes
window_update(uint32_t sid, uint32_t inc)
{
	Bytes p;
	put32(p, inc);
	return frame(WINDOW_UPDATE, 0, sid, p);
}

inline Bytes
rst_stream(uint32_t sid, uint32_t code)
{
	Bytes p;
	put32(p, code);
	return frame(RST_STREAM, 0, sid, p);
}

inline Bytes
goaway(uint32_t last, uint32_t code)
{
	Bytes p;
	put32(p, last);
	put32(p, code);
	return frame(GOAWAY, 0, 0, p);
}

/* An HPACK integer with an N-bit prefix (RFC 7541 §5.1). */
inline void
hpack_int(Bytes &b, uint8_t first, unsigned prefix, size_t v)
{
	size_t max = (1u << prefix) - 1;
	if (v < max) {
		b.push_back(char(first | v));
		return;
	}
	b.push_back(char(first | max));
	v -= max;
	while (v >= 128) {
		b.push_back(char(0x80 | (v & 0x7f)));
		v >>= 7;
	}
	b.push_back(char(v));
}

/* A header block of literals without indexing, new names, raw strings. */
inline Bytes
block(const Fields &f)
{
	Bytes b;
	for (auto &kv : f) {
		b.push_back(0x00);
		hpack_int(b, 0, 7, kv.first.size());
		b += kv.first;
		hpack_int(b, 0, 7, kv.second.size());
		b += kv.second;
	}
	return b;
}

inline Fields
get_request(const std::string &path = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF")
{
	return {{":method", "GET"}, {":scheme", "http"}, {":authority", "nrf.test"},
		{":path", path}};
}

inline Bytes
headers(uint32_t sid, const Fields &f, uint8_t flags = END_HEADERS | END_STREAM)
{
	return frame(HEADERS, flags, sid, block(f));
}

/* One frame nrfwd wrote. */
struct Frame {
	uint8_t type = 0;
	uint8_t flags = 0;
	uint32_t sid = 0;
	std::string payload;

	uint32_t code() const /* RST_STREAM / GOAWAY error code */
	{
		return type == GOAWAY ? get32(payload, 4) : get32(payload, 0);
	}
	uint32_t last_sid() const { return get32(payload, 0) & 0x7fffffffu; }
	/* SETTINGS: the value of @p id, or -1 when absent. */
	int64_t setting(uint16_t id) const
	{
		int64_t v = -1;
		for (size_t i = 0; i + 6 <= payload.size(); i += 6) {
			uint16_t k = uint16_t(uint8_t(payload[i]) << 8 | uint8_t(payload[i + 1]));
			if (k == id)
				v = get32(payload, i + 2);
		}
		return v;
	}
};

/* Splits @p out into frames; @p rest keeps an incomplete tail. */
inline std::vector<Frame>
parse(const std::string &out, std::string *rest = nullptr)
{
	std::vector<Frame> v;
	size_t at = 0;
	while (out.size() - at >= 9) {
		const auto *p = reinterpret_cast<const uint8_t *>(out.data() + at);
		size_t n = size_t(p[0]) << 16 | size_t(p[1]) << 8 | p[2];
		if (out.size() - at < 9 + n)
			break;
		Frame f;
		f.type = p[3];
		f.flags = p[4];
		f.sid = get32(out, at + 5) & 0x7fffffffu;
		f.payload = out.substr(at + 9, n);
		v.push_back(f);
		at += 9 + n;
	}
	if (rest != nullptr)
		*rest = out.substr(at);
	else
		EXPECT_EQ(at, out.size()) << "nrfwd wrote an incomplete frame";
	return v;
}

inline std::string
type_name(uint8_t t)
{
	static const char *n[] = {"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS",
		"PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"};
	return t < 10 ? n[t] : "type" + std::to_string(t);
}

/* "HEADERS/1 DATA/1+ES GOAWAY(PROTOCOL_ERROR)": a frame list in one line,
 * for the failure messages. */
inline std::string
describe(const std::vector<Frame> &v)
{
	std::string s;
	for (auto &f : v) {
		if (!s.empty())
			s += ' ';
		s += type_name(f.type);
		if (f.sid)
			s += "/" + std::to_string(f.sid);
		if ((f.type == DATA || f.type == HEADERS) && (f.flags & END_STREAM))
			s += "+ES";
		if ((f.type == SETTINGS || f.type == PING) && (f.flags & ACK))
			s += "+ACK";
		if (f.type == RST_STREAM || f.type == GOAWAY)
			s += "(" + std::to_string(f.code()) + ")";
	}
	return s;
}

/* Decodes header blocks with one nghttp2 inflater (its dynamic table
 * lives as long as the connection being read). */
class Inflater {
public:
	Inflater() { nghttp2_hd_inflate_new(&inf_); }
	~Inflater() { nghttp2_hd_inflate_del(inf_); }
	Inflater(const Inflater &) = delete;
	Inflater &operator=(const Inflater &) = delete;

	Fields decode(const std::string &blk)
	{
		Fields f;
		const auto *in = reinterpret_cast<const uint8_t *>(blk.data());
		size_t left = blk.size();
		for (;;) {
			nghttp2_nv nv;
			int fl = 0;
			ssize_t n = nghttp2_hd_inflate_hd2(inf_, &nv, &fl, in, left, 1);
			if (n < 0) {
				ADD_FAILURE() << "nrfwd wrote a header block nghttp2 cannot decode";
				return f;
			}
			in += n;
			left -= size_t(n);
			if (fl & NGHTTP2_HD_INFLATE_EMIT)
				f.emplace_back(std::string((const char *)nv.name, nv.namelen),
					std::string((const char *)nv.value, nv.valuelen));
			if (fl & NGHTTP2_HD_INFLATE_FINAL) {
				nghttp2_hd_inflate_end_headers(inf_);
				return f;
			}
			if (n == 0 && left == 0)
				return f;
		}
	}

private:
	nghttp2_hd_inflater *inf_ = nullptr;
};

/* The value of @p name in @p f ("" when absent). */
inline std::string
field(const Fields &f, const std::string &name)
{
	for (auto &kv : f)
		if (kv.first == name)
			return kv.second;
	return "";
}

} // namespace sm

#endif /* NRF_H2_SM_WIRE_H */
