/* Shared helpers of the topo unit tests: small hand-written topologies. */
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_topo.h"

struct TopoDeleter {
	void operator()(nrf_topo *t) const { nrf_topo_free(t); }
};
using TopoPtr = std::unique_ptr<nrf_topo, TopoDeleter>;

/* One peer entry as JSON. An empty fqdn or ipv4 is left out. */
inline std::string
Peer(const std::string &fqdn, const std::string &ipv4, int port, int priority = 1)
{
	std::string s = "{\"scheme\":\"http\",\"port\":" + std::to_string(port) +
		",\"priority\":" + std::to_string(priority);
	if (!fqdn.empty())
		s += ",\"fqdn\":\"" + fqdn + "\"";
	if (!ipv4.empty())
		s += ",\"ipv4Address\":\"" + ipv4 + "\"";
	return s + "}";
}

/* One NRF's configuration, built from a few fields. */
struct Nrf {
	std::string host;
	int port = 0;
	std::string set_id;
	std::vector<std::string> aliases;
	std::string listen = "127.0.0.1";
	bool local = true;
	std::vector<std::string> fwd;                                        /* Peer()s */
	std::vector<std::pair<std::string, std::vector<std::string>>> sets;  /* id, Peer()s */
	std::string scope = "HOST";
	int max_via = 16;
	int attempts = 2;
	std::string trigger = "^404$";
	std::string reroute = "^5[0-9]{2}$";
	std::string api_prefix_note;

	std::string Json() const
	{
		std::string s = "{\"generalOptions\":{\"ocnrfHost\":\"" + host +
			"\",\"ocnrfPort\":" + std::to_string(port);
		if (!set_id.empty())
			s += ",\"nrfSetId\":\"" + set_id + "\"";
		if (!aliases.empty()) {
			s += ",\"aliases\":[";
			for (size_t i = 0; i < aliases.size(); i++)
				s += (i ? ",\"" : "\"") + aliases[i] + "\"";
			s += "]";
		}
		s += "},\"forwardingOptions\":{\"featureStatus\":\"" +
			std::string(fwd.empty() ? "DISABLED" : "ENABLED") +
			"\",\"maxViaMembers\":" + std::to_string(max_via) +
			",\"maxForwardAttempts\":" + std::to_string(attempts) +
			",\"forwardingTriggers\":{\"statusCodes\":{\"pattern\":\"" + trigger +
			"\"}},\"nrfRerouteOnResponseHttpStatusCodes\":{\"pattern\":\"" + reroute +
			"\"},\"nrfHostConfig\":[";
		for (size_t i = 0; i < fwd.size(); i++)
			s += (i ? "," : "") + fwd[i];
		s += "]},\"nrfGrowth\":{\"nrfForwardingOptions\":{\"featureStatus\":\"" +
			std::string(sets.empty() ? "DISABLED" : "ENABLED") +
			"\",\"loopPreventionScope\":\"" + scope +
			"\",\"nrfHostConfig\":{\"staticNrfConfigList\":[";
		for (size_t i = 0; i < sets.size(); i++) {
			s += std::string(i ? "," : "") + "{\"nrfSetId\":\"" + sets[i].first +
				"\",\"nrfHostConfigList\":[";
			for (size_t k = 0; k < sets[i].second.size(); k++)
				s += (k ? "," : "") + sets[i].second[k];
			s += "]}";
		}
		s += "]}}},\"runtime\":{\"listen\":[{\"address\":\"" + listen +
			"\",\"port\":" + std::to_string(port) + "}]";
		if (local)
			s += ",\"localNrf\":{\"address\":\"127.0.0.1\",\"port\":" +
				std::to_string(port + 100) + "}";
		return s + "}}";
	}
};

inline nrf_cfg *
LoadNrf(const std::string &json)
{
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *c = nrf_cfg_load(json.data(), json.size(), 1, &probs, &err);
	std::string all;
	for (size_t i = 0; i < probs.n; i++)
		all += std::string(probs.v[i].pointer) + ": " + probs.v[i].reason + "\n";
	nrf_cfg_problems_fini(&probs);
	EXPECT_NE(c, nullptr) << "load failed (" << err << "):\n" << all << json;
	return c;
}

/* A resolved topology of @p nrfs, sources "nrf-<i>.json". */
inline TopoPtr
Topo(const std::vector<Nrf> &nrfs)
{
	int err = 0;
	TopoPtr t(nrf_topo_create(&err));
	EXPECT_NE(t, nullptr);
	for (size_t i = 0; i < nrfs.size(); i++) {
		nrf_cfg *c = LoadNrf(nrfs[i].Json());
		if (c == nullptr)
			return nullptr;
		EXPECT_EQ(nrf_topo_add(t.get(), c, ("nrf-" + std::to_string(i) + ".json").c_str()),
			(int)i);
	}
	EXPECT_EQ(nrf_topo_resolve(t.get()), 0);
	return t;
}

/* A resolved topology of configuration files. */
inline TopoPtr
TopoFiles(const std::vector<std::string> &files)
{
	int err = 0;
	TopoPtr t(nrf_topo_create(&err));
	for (const auto &f : files) {
		nrf_cfg_problems probs = {};
		nrf_cfg *c = nrf_cfg_load_file(f.c_str(), 1, &probs, &err);
		nrf_cfg_problems_fini(&probs);
		EXPECT_NE(c, nullptr) << f;
		if (c == nullptr)
			return nullptr;
		EXPECT_GE(nrf_topo_add(t.get(), c, f.c_str()), 0);
	}
	EXPECT_EQ(nrf_topo_resolve(t.get()), 0);
	return t;
}

/* RAII lint result. */
struct Lint {
	explicit Lint(nrf_topo *t, uint32_t budget = 0)
	{
		nrf_topo_lint_opts o = {};
		o.path_budget = budget;
		rc = nrf_topo_lint(t, &o, &l);
	}
	~Lint() { nrf_topo_findings_fini(&l); }
	std::vector<const nrf_topo_finding *> Code(const std::string &code) const
	{
		std::vector<const nrf_topo_finding *> v;
		for (size_t i = 0; i < l.n; i++)
			if (code == l.v[i].code)
				v.push_back(&l.v[i]);
		return v;
	}
	std::string All() const
	{
		std::string s;
		for (size_t i = 0; i < l.n; i++)
			s += std::string(l.v[i].code) + ": " + l.v[i].message + "\n";
		return s;
	}
	struct nrf_topo_findings l = {};
	int rc;
};

/* RAII trace result. */
struct Trace {
	Trace(nrf_topo *t, size_t at, const std::string &path, std::vector<std::string> via = {},
		int64_t max_hops = -1, const char *method = "GET")
		: via_lines(std::move(via))
	{
		std::vector<nrf_slice> lines;
		for (auto &v : via_lines)
			lines.push_back({v.data(), v.size()});
		nrf_topo_request r = {};
		r.at = at;
		r.method = method;
		r.path = path.c_str();
		r.via = lines.data();
		r.n_via = lines.size();
		r.max_forward_hops = max_hops;
		rc = nrf_topo_trace(t, &r, &tr);
	}
	~Trace() { nrf_topo_hops_fini(&tr); }
	const nrf_topo_answer &Answer() const { return tr.hops[0].answer; }
	std::vector<std::string> ViaBack(nrf_topo *t) const
	{
		uint16_t who[64];
		size_t n = nrf_topo_answer_via(t, &tr, 0, who, 64);
		std::vector<std::string> v;
		for (size_t i = 0; i < n; i++)
			v.push_back(nrf_topo_at(t, who[i])->name);
		return v;
	}
	std::vector<std::string> via_lines;
	struct nrf_topo_hops tr = {};
	int rc;
};

inline std::string
Disc(const std::string &type)
{
	return "/nnrf-disc/v1/nf-instances?target-nf-type=" + type;
}
