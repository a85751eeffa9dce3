// SPDX-License-Identifier: BSD-3-Clause
// The configuration table (lib/cfg/cfg_table.c) as a whole: every key is
// classified live or restart-only, the restart diff (nrf_cfg_restart_diff())
// refuses each restart-only key under its pointer and accepts each live
// key, and docs/config.md says what the table says. Every case walks
// nrf_cfg_keys(): nothing here lists keys by hand, so a key added to the
// table is covered the day it is added.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <jansson.h>

#include "nrf_cfg.h"
#include "nrf_cfg_test_util.h"

using namespace cfgtest;

namespace {

std::string
EmitAll(const nrf_cfg *c)
{
	int err = 1;
	char *s = nrf_cfg_emit(c, NRF_CFG_ALL, 0, &err);
	EXPECT_NE(s, nullptr);
	EXPECT_EQ(err, 0);
	std::string out = s != nullptr ? s : "";
	free(s);
	return out;
}

// Every default filled in, as the REST API sees the running document, plus
// what some changes need next to them: a DPDK address (transport "dpdk"), a
// CA bundle (tls.verifyClient), a client certificate (tlsClient.keyFile) and
// a per-client rate (limits.perClient.burst).
std::string
BaseDocument()
{
	std::string d = With(kMinimal, "/runtime/dpdk/ipv4Address", R"("192.0.2.10")");
	d = With(d, "/runtime/limits/perClient", R"({"ratePerSecond": 100})");
	d = With(d, "/runtime/tls/caFile", R"("ca.pem")");
	d = With(d, "/runtime/tlsClient/certFile", R"("client.pem")");
	Loaded l = Load(d);
	EXPECT_NE(l.cfg, nullptr) << l.Dump();
	return l.cfg != nullptr ? EmitAll(l.cfg.get()) : d;
}

// The value at a JSON pointer (no escapes: table names are plain words).
const json_t *
At(const json_t *root, const std::string &ptr)
{
	const json_t *cur = root;
	size_t pos = 1;
	while (cur != nullptr && pos <= ptr.size()) {
		size_t end = ptr.find('/', pos);
		std::string seg = ptr.substr(pos, end == std::string::npos ? std::string::npos
									  : end - pos);
		cur = json_object_get(cur, seg.c_str());
		if (end == std::string::npos)
			break;
		pos = end + 1;
	}
	return cur;
}

std::string
Quote(const std::string &s)
{
	json_t *j = json_string(s.c_str());
	char *t = json_dumps(j, JSON_ENCODE_ANY);
	std::string out = t;
	free(t);
	json_decref(j);
	return out;
}

// Values other than @p cur that the key's type, range or names allow, best
// first. Whether one is valid in the document is for the loader to say.
std::vector<std::string>
Candidates(const nrf_cfg_key &k, const json_t *cur)
{
	std::vector<std::string> v;
	if (k.example != nullptr) {
		v.push_back(k.example);
	} else if (k.names != nullptr) {
		for (const char *const *n = k.names; *n != nullptr; n++)
			if (!json_is_string(cur) || std::string(*n) != json_string_value(cur))
				v.push_back(Quote(*n));
	} else if (json_is_boolean(cur)) {
		v.push_back(json_is_true(cur) ? "false" : "true");
	} else if (json_is_integer(cur)) {
		long long c = json_integer_value(cur);
		for (long long x : {c + 1, c - 1, k.min, k.max, c * 2, c / 2})
			if (x >= k.min && x <= k.max && x != c)
				v.push_back(std::to_string(x));
	} else if (json_is_string(cur)) {
		for (const char *s : {"192.0.2.11", "127.0.0.2", "nrf9.example.com", "^40[0-9]$",
			     "v2", "/pfx", "file.pem"})
			if (std::string(s) != json_string_value(cur))
				v.push_back(Quote(s));
	}
	return v;
}

// The document with @p k changed to a valid other value; "" when no
// candidate loads (the failure names the key and the last problems).
std::string
Changed(const std::string &base, const nrf_cfg_key &k, Loaded *out)
{
	json_error_t e;
	json_t *root = json_loads(base.c_str(), 0, &e);
	const json_t *cur = root != nullptr ? At(root, k.pointer) : nullptr;
	std::string last;
	if (cur == nullptr) {
		ADD_FAILURE() << k.pointer << " is not in the emitted document";
		json_decref(root);
		return "";
	}
	for (const std::string &c : Candidates(k, cur)) {
		std::string d = With(base, k.pointer, c.c_str());
		Loaded l = Load(d);
		if (l.cfg != nullptr) {
			*out = std::move(l);
			json_decref(root);
			return c;
		}
		last = c + ":\n" + l.Dump();
	}
	json_decref(root);
	ADD_FAILURE() << k.pointer << ": no valid other value found (give it an .example in "
		      << "the table?); last tried " << last;
	return "";
}

// The restart-only part of docs/config.md as the table says it.
std::string
AppliedSection()
{
	const nrf_cfg_key *keys;
	size_t n = nrf_cfg_keys(&keys);
	std::string s = "| key | applied |\n|---|---|\n";
	std::string last;
	for (size_t i = 0; i < n; i++) {
		if (keys[i].decided_at == nullptr || last == keys[i].decided_at)
			continue;
		last = keys[i].decided_at;
		bool group = last != keys[i].pointer;
		s += "| `" + last + "`";
		if (group)
			s += keys[i].apply == NRF_CFG_APPLY_RESTART
				? " (all of it, named as one)" : " (all of it)";
		s += keys[i].apply == NRF_CFG_APPLY_RESTART ? " | restart-only |\n" : " | live |\n";
	}
	return s;
}

} // namespace

TEST(CfgTable, EveryKeyIsClassifiedLiveOrRestartOnly)
{
	const nrf_cfg_key *keys = nullptr;
	size_t n = nrf_cfg_keys(&keys);
	ASSERT_NE(keys, nullptr);
	EXPECT_GT(n, 70u);
	size_t live = 0, restart = 0;
	for (size_t i = 0; i < n; i++) {
		const nrf_cfg_key &k = keys[i];
		ASSERT_NE(k.pointer, nullptr);
		EXPECT_NE(k.type, nullptr) << k.pointer << " has no JSON type";
		EXPECT_TRUE(k.apply == NRF_CFG_APPLY_LIVE || k.apply == NRF_CFG_APPLY_RESTART)
			<< k.pointer << " is not classified live or restart-only (.apply in "
			<< "lib/cfg/cfg_table.c, on it or on an object around it)";
		if (k.decided_at == nullptr) {
			ADD_FAILURE() << k.pointer << ": no entry decides how it applies";
			continue;
		}
		// decided by the key itself or by an object around it
		std::string p = k.pointer, at = k.decided_at;
		EXPECT_TRUE(p == at || p.compare(0, at.size() + 1, at + "/") == 0)
			<< k.pointer << " decided at " << at;
		live += k.apply == NRF_CFG_APPLY_LIVE;
		restart += k.apply == NRF_CFG_APPLY_RESTART;
	}
	EXPECT_GT(live, 0u);
	EXPECT_GT(restart, 0u);
	// the same array every time, from any caller
	const nrf_cfg_key *again = nullptr;
	EXPECT_EQ(nrf_cfg_keys(&again), n);
	EXPECT_EQ(again, keys);
	EXPECT_EQ(nrf_cfg_keys(nullptr), n);
}

TEST(CfgTable, ListsEveryValueOfAnEmittedDocumentOnce)
{
	json_error_t e;
	json_t *root = json_loads(BaseDocument().c_str(), 0, &e);
	ASSERT_NE(root, nullptr);
	// every value that is not an object is one key (arrays and null whole)
	std::set<std::string> emitted;
	std::vector<std::pair<const json_t *, std::string>> todo{{root, ""}};
	while (!todo.empty()) {
		auto [j, p] = todo.back();
		todo.pop_back();
		const char *k;
		json_t *v;
		json_object_foreach(const_cast<json_t *>(j), k, v) {
			if (json_is_object(v))
				todo.emplace_back(v, p + "/" + k);
			else
				emitted.insert(p + "/" + k);
		}
	}
	json_decref(root);
	const nrf_cfg_key *keys;
	size_t n = nrf_cfg_keys(&keys);
	std::set<std::string> listed;
	for (size_t i = 0; i < n; i++)
		EXPECT_TRUE(listed.insert(keys[i].pointer).second) << keys[i].pointer << " twice";
	EXPECT_EQ(listed, emitted);
}

TEST(CfgTable, EachRestartOnlyKeyIsRefusedUnderItsPointerAndEachLiveKeyIsAccepted)
{
	std::string base = BaseDocument();
	Loaded a = Load(base);
	ASSERT_NE(a.cfg, nullptr) << a.Dump();
	EXPECT_EQ(nrf_cfg_restart_diff(a.cfg.get(), a.cfg.get(), nullptr, 0), 0u);

	const nrf_cfg_key *keys;
	size_t n = nrf_cfg_keys(&keys);
	size_t tried = 0;
	for (size_t i = 0; i < n; i++) {
		const nrf_cfg_key &k = keys[i];
		Loaded b;
		std::string value = Changed(base, k, &b);
		if (value.empty())
			continue;
		tried++;
		EXPECT_FALSE(nrf_cfg_equal(a.cfg.get(), b.cfg.get()))
			<< k.pointer << " = " << value << " changed nothing";
		const char *ptrs[4] = {nullptr};
		unsigned got = nrf_cfg_restart_diff(a.cfg.get(), b.cfg.get(), ptrs, 4);
		if (k.apply == NRF_CFG_APPLY_RESTART) {
			ASSERT_EQ(got, 1u) << k.pointer << " = " << value;
			EXPECT_STREQ(ptrs[0], k.decided_at) << k.pointer << " = " << value;
			// and back: the diff is symmetric
			EXPECT_EQ(nrf_cfg_restart_diff(b.cfg.get(), a.cfg.get(), nullptr, 0), 1u);
		} else {
			EXPECT_EQ(got, 0u) << k.pointer << " = " << value << " is live, refused as "
					   << (ptrs[0] != nullptr ? ptrs[0] : "?");
		}
	}
	EXPECT_EQ(tried, n);
}

TEST(CfgTable, RestartDiffNamesEveryDifferenceInDocumentOrderAndCountsPastMax)
{
	std::string base = BaseDocument(), all = base;
	const nrf_cfg_key *keys;
	size_t n = nrf_cfg_keys(&keys);
	std::vector<std::string> want;
	for (size_t i = 0; i < n; i++) {
		if (keys[i].apply != NRF_CFG_APPLY_RESTART)
			continue;
		// one key of each restart unit (one of runtime.dpdk, named once)
		if (!want.empty() && want.back() == keys[i].decided_at)
			continue;
		want.push_back(keys[i].decided_at);
		Loaded tmp;
		std::string v = Changed(all, keys[i], &tmp);
		if (!v.empty())
			all = With(all, keys[i].pointer, v.c_str());
	}
	ASSERT_GE(want.size(), 2u);
	Loaded a = Load(base), b = Load(all);
	ASSERT_NE(a.cfg, nullptr);
	ASSERT_NE(b.cfg, nullptr) << b.Dump();
	std::vector<const char *> ptrs(want.size() + 2, nullptr);
	ASSERT_EQ(nrf_cfg_restart_diff(a.cfg.get(), b.cfg.get(), ptrs.data(), ptrs.size()),
		want.size());
	for (size_t i = 0; i < want.size(); i++)
		EXPECT_EQ(ptrs[i], want[i]) << i;
	EXPECT_EQ(ptrs[want.size()], nullptr);

	// fewer slots than differences: the first ones, and the whole count
	const char *two[2] = {nullptr, nullptr};
	EXPECT_EQ(nrf_cfg_restart_diff(a.cfg.get(), b.cfg.get(), two, 2), want.size());
	EXPECT_EQ(two[0], want[0]);
	EXPECT_EQ(two[1], want[1]);
	EXPECT_EQ(nrf_cfg_restart_diff(a.cfg.get(), b.cfg.get(), nullptr, 8), want.size());
	EXPECT_EQ(nrf_cfg_restart_diff(nullptr, b.cfg.get(), two, 2), 0u);
	EXPECT_EQ(nrf_cfg_restart_diff(a.cfg.get(), nullptr, two, 2), 0u);
}

TEST(CfgTable, RestartOnlyKeysAreTheOnesBakedInAtStart)
{
	// The classification itself, as decision 0007 and docs/rest-api.md
	// state it: the pointers REST names when it refuses a change.
	const nrf_cfg_key *keys;
	size_t n = nrf_cfg_keys(&keys);
	std::vector<std::string> units;
	for (size_t i = 0; i < n; i++)
		if (keys[i].apply == NRF_CFG_APPLY_RESTART &&
			(units.empty() || units.back() != keys[i].decided_at))
			units.push_back(keys[i].decided_at);
	EXPECT_EQ(units, (std::vector<std::string>{"/runtime/listen", "/runtime/management/address",
				 "/runtime/management/port", "/runtime/limits/maxConcurrentStreams",
				 "/runtime/limits/maxHeaderBytes", "/runtime/limits/maxBodyBytes",
				 "/runtime/accessLog/path", "/runtime/transport",
				 "/runtime/dpdk"}));
}

TEST(CfgDocs, ConfigReferenceSaysWhichKeysAreLiveAsTheTableDoes)
{
	std::ifstream f("docs/config.md");
	ASSERT_TRUE(f.good()) << "run from the project root";
	std::stringstream ss;
	ss << f.rdbuf();
	std::string doc = ss.str();
	const std::string begin = "<!-- applied: begin -->\n", end = "<!-- applied: end -->";
	size_t b = doc.find(begin), e = doc.find(end);
	ASSERT_NE(b, std::string::npos) << "docs/config.md has no " << begin;
	ASSERT_NE(e, std::string::npos) << "docs/config.md has no " << end;
	ASSERT_LT(b, e);
	std::string have = doc.substr(b + begin.size(), e - b - begin.size());
	EXPECT_EQ(have, AppliedSection())
		<< "docs/config.md, between the applied markers, should read:\n"
		<< AppliedSection();
}
