/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parse and scan agree: on generated Via values (fixed seed), whenever the
 * parser accepts the value the scan succeeds with the same member count and
 * reports exactly the (identity, member) pairs a plain reference matcher
 * finds in the parsed members; whenever the scan rejects a value, so does
 * the parser. tests/fuzz/fuzz_via.c checks the same on fuzzed input.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

namespace {

bool
EqualNoCase(nrf_slice a, const char *b)
{
	size_t n = strlen(b);

	if (a.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)a.p[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c != (unsigned char)b[i])
			return false;
	}
	return true;
}

/* docs/via.md's matching rule read literally, on one parsed member. */
bool
ReferenceMatch(const nrf_via_member &m, const nrf_via_identity &id)
{
	bool v6 = strchr(id.host, ':') != nullptr;
	bool bracketed = m.received_by.len > 0 && m.received_by.p[0] == '[';
	nrf_slice host = m.host;

	if (m.port != id.port || v6 != bracketed)
		return false;
	if (!v6 && host.len > 0 && host.p[host.len - 1] == '.')
		host.len--;
	return EqualNoCase(host, id.host);
}

class Generator {
public:
	explicit Generator(uint32_t seed) : rng_(seed) {}

	std::vector<std::string> value()
	{
		std::vector<std::string> lines(1 + pick(3));
		size_t members = pick(8);

		for (size_t i = 0; i < members; i++) {
			std::string &l = lines[pick(lines.size())];

			if (!l.empty() || pick(4) == 0)
				l += pick_of({",", ", ", " ,", ",,", ", ,\t", ",\t"});
			l += member();
		}
		if (pick(6) == 0)
			lines[0] += pick_of({",", " ", ", ,"});
		if (pick(12) == 0) {
			std::string &l = lines[pick(lines.size())];
			static const char odd[] = {'\0', '\r', '\x7f', '(', ')', ',', '\\', '\xc3', '\xff', '[', ':'};

			l.insert(l.begin() + (long)pick(l.size() + 1), odd[pick(sizeof(odd))]);
		}
		return lines;
	}

private:
	size_t pick(size_t n) { return n == 0 ? 0 : rng_() % n; }

	std::string pick_of(std::initializer_list<const char *> l)
	{
		return *(l.begin() + (long)pick(l.size()));
	}

	/* Three in four members are well-formed, so accepted values with
	 * several members are common; the rest may break any rule. */
	std::string member()
	{
		bool ok = pick(4) != 0;
		std::string m = pick_of({"", " ", "\t", "  "});

		if (ok)
			m += pick_of({"2.0", "HTTP/2.0", "1.1"}) + pick_of({" ", "\t", "  "});
		else
			m += pick_of({"2.0", "HTTP/", "h2/1", "nrf-a.example.com:8080", ""}) +
				pick_of({" ", ""});
		m += received_by(ok);
		if (ok)
			m += pick_of({"", "", " (c)", "(c)", " (x, 2.0 nrf-a.example.com:8080)",
				" (a (b, nrf-e:1) \\) 10.0.0.1:80)", " (\\(, nrf-a.example.com:8080)"});
		else
			m += pick_of({" (open", " x", " (c) y", ")", ""});
		m += pick_of({"", " ", "\t"});
		return m;
	}

	std::string received_by(bool ok)
	{
		std::string host = pick_of({"nrf-a.example.com", "NRF-A.Example.COM", "nrf-a.example.com.",
			"nrf-a.example.com..", "xnrf-a.example.com", "nrf-a.example.co", "nrf-a", "nrf-e",
			"NRF-E.", "10.0.0.1", "10.0.0.12", "10.0.0.1.", "[2001:db8::1]", "[2001:DB8::1]",
			"[2001:db8:0::1]", "[2001:db8::1.]", "fred", "h\xc3\xa9", "[nrf-e]", "nrf-a\\"});
		std::string port = pick_of({":8080", ":08080", ":0008080", ":80801", ":808", ":1", ":01",
			":80", "", ":0"});

		if (!ok && pick(2) == 0) {
			host = pick_of({"", "2001:db8::1", "[2001:db8::1", "nrf-a"});
			port = pick_of({":", ":65536", ":8o80", ":8080"});
		}
		return host + port;
	}

	std::mt19937 rng_;
};

} /* namespace */

TEST(ViaConsistency, ScanFindsExactlyWhatTheParserSeesOnGeneratedValues)
{
	DbPtr db = MakeDb({Self("nrf-a.example.com", 8080), Peer("nrf-e", 1, 1), Peer("NRF-E", 80, 2),
		Peer("10.0.0.1", 80, 3), Peer("10.0.0.12", 80, 4), Peer("[2001:db8::1]", 8080, 1023),
		Peer("nrf-a.example.com", 8080, 5), Peer("nrf-a", 8080, 6), Self("fred", 1)});
	ScratchPtr s = MakeScratch(db.get());
	Generator gen(20240611);
	size_t accepted = 0, matched = 0;

	for (int iter = 0; iter < 50000; iter++) {
		std::vector<std::string> lines = gen.value();
		auto sl = Slices(lines);
		std::vector<nrf_via_member> m(64);
		size_t n = 0;
		int prc = nrf_via_parse(sl.data(), sl.size(), m.data(), m.size(), &n);
		Scan sc = DoScan(db.get(), s.get(), lines);
		Each ea = DoScanEach(db.get(), s.get(), lines);
		std::string shown = lines[0] + (lines.size() > 1 ? " | " + lines[1] : "");

		ASSERT_EQ(sc.rc, ea.rc) << shown;
		ASSERT_TRUE(SameResult(sc.res, ea.res)) << shown;
		if (sc.rc != 0) {
			ASSERT_EQ(prc, sc.rc) << shown;
			continue;
		}
		if (prc != 0)
			continue;
		accepted++;
		ASSERT_EQ(sc.res.members, n) << shown;
		ASSERT_LE(n, m.size());

		std::vector<Hit> want;
		for (size_t i = 0; i < n; i++)
			for (uint32_t id = 0; id < nrf_via_db_count(db.get()); id++)
				if (ReferenceMatch(m[i], *nrf_via_db_identity(db.get(), id)))
					want.emplace_back(id, (uint32_t)i);
		std::vector<Hit> got = ea.hits;
		std::sort(got.begin(), got.end(), [](const Hit &a, const Hit &b) {
			return a.second != b.second ? a.second < b.second : a.first < b.first;
		});
		std::sort(want.begin(), want.end(), [](const Hit &a, const Hit &b) {
			return a.second != b.second ? a.second < b.second : a.first < b.first;
		});
		ASSERT_EQ(got, want) << shown;
		ASSERT_EQ(sc.res.hits, want.size()) << shown;
		matched += !want.empty();
	}
	RecordProperty("accepted", (int)accepted);
	RecordProperty("matched", (int)matched);
	/* The generator must reach both sides of every rule. */
	EXPECT_GT(accepted, 10000u);
	EXPECT_GT(matched, 2500u);
}
