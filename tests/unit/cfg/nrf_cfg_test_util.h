// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the lib/cfg unit tests: load with RAII, patch a
// document at a JSON pointer, and the reference documents.
#ifndef NRF_CFG_TEST_UTIL_H
#define NRF_CFG_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <jansson.h>

#include "nrf_cfg.h"
#include "nrf_err.h"

namespace cfgtest {

struct CfgDeleter {
	void operator()(nrf_cfg *c) const { nrf_cfg_free(c); }
};
using CfgPtr = std::unique_ptr<nrf_cfg, CfgDeleter>;

struct Loaded {
	CfgPtr cfg;
	int err = 1;
	std::vector<std::pair<std::string, std::string>> problems;

	// True when a problem sits at exactly @p ptr and its reason holds @p needle.
	bool Has(const std::string &ptr, const std::string &needle) const
	{
		for (const auto &p : problems)
			if (p.first == ptr && p.second.find(needle) != std::string::npos)
				return true;
		return false;
	}

	std::string Dump() const
	{
		std::string s;
		for (const auto &p : problems)
			s += "  " + p.first + ": " + p.second + "\n";
		return s;
	}
};

inline Loaded
Load(const std::string &text, uint64_t gen = 7)
{
	Loaded l;
	nrf_cfg_problems p{};

	l.cfg.reset(nrf_cfg_load(text.data(), text.size(), gen, &p, &l.err));
	for (size_t i = 0; i < p.n; i++)
		l.problems.emplace_back(p.v[i].pointer, p.v[i].reason);
	nrf_cfg_problems_fini(&p);
	return l;
}

// Set (or delete, value == nullptr) the value at a JSON pointer; missing
// objects on the way are created, "-" appends to an array.
inline std::string
With(const std::string &doc, const std::string &ptr, const char *value)
{
	json_error_t e;
	json_t *root = json_loads(doc.c_str(), 0, &e);
	std::vector<std::string> segs;

	if (root == nullptr) {
		ADD_FAILURE() << "bad test document: " << e.text;
		return doc;
	}
	for (size_t pos = 1; pos <= ptr.size();) {
		size_t end = ptr.find('/', pos);
		std::string seg = ptr.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
		for (size_t k; (k = seg.find("~1")) != std::string::npos;)
			seg.replace(k, 2, "/");
		for (size_t k; (k = seg.find("~0")) != std::string::npos;)
			seg.replace(k, 2, "~");
		segs.push_back(seg);
		if (end == std::string::npos)
			break;
		pos = end + 1;
	}
	json_t *cur = root;
	for (size_t i = 0; i + 1 < segs.size(); i++) {
		json_t *next;
		if (json_is_array(cur)) {
			next = json_array_get(cur, std::stoul(segs[i]));
		} else {
			next = json_object_get(cur, segs[i].c_str());
			if (next == nullptr) {
				next = json_object();
				json_object_set_new(cur, segs[i].c_str(), next);
			}
		}
		cur = next;
	}
	const std::string &last = segs.back();
	if (value == nullptr) {
		if (json_is_array(cur))
			json_array_remove(cur, std::stoul(last));
		else
			json_object_del(cur, last.c_str());
	} else {
		json_t *v = json_loads(value, JSON_DECODE_ANY, &e);
		if (v == nullptr)
			ADD_FAILURE() << "bad test value: " << value;
		else if (json_is_array(cur) && last == "-")
			json_array_append_new(cur, v);
		else if (json_is_array(cur))
			json_array_set_new(cur, std::stoul(last), v);
		else
			json_object_set_new(cur, last.c_str(), v);
	}
	char *s = json_dumps(root, JSON_COMPACT);
	std::string out(s);
	free(s);
	json_decref(root);
	return out;
}

inline const char *kMinimal =
	R"({"generalOptions": {"ocnrfHost": "nrf-a.seg1.example.com", "ocnrfPort": 8080}})";

// A full configuration document: every section, as docs/config.md shows them.
inline const char *kSpec = R"({
  "generalOptions": {
    "ocnrfHost": "nrf-a.seg1.example.com", "ocnrfPort": 8080,
    "nrfSetId": "set1.nrfset.5gc.mnc001.mcc001",
    "aliases": ["10.10.1.2:8080"]
  },
  "forwardingOptions": {
    "featureStatus": "ENABLED",
    "discoveryStatus": "ENABLED", "profileRetrievalStatus": "ENABLED",
    "subscriptionStatus": "ENABLED", "accessTokenStatus": "ENABLED",
    "forwardingTriggers": { "statusCodes": { "pattern": "^404$" }, "emptyDiscoveryResult": true },
    "nrfRerouteOnResponseHttpStatusCodes": { "pattern": "^5[0-9]{2}$" },
    "maxForwardAttempts": 2, "maxViaMembers": 16,
    "nrfHostConfig": [
      { "apiVersion": "v1", "scheme": "http", "fqdn": "nrf-e.seg2.example.com",
        "ipv4Address": "10.10.2.2", "port": 8080, "apiPrefix": "", "priority": 1 }
    ],
    "errorResponses": [
      { "errorCondition": "NRF_Forwarding_Loop_Detection", "errorCode": 508,
        "errorCause": "LOOP_DETECTED", "errorTitle": "Loop Detected",
        "errorDetail": "request already passed through this NRF", "retryAfter": "", "redirectUrl": "" }
    ]
  },
  "nrfGrowth": {
    "nrfForwardingOptions": {
      "featureStatus": "ENABLED", "loopPreventionScope": "HOST",
      "nrfHostConfig": { "staticNrfConfigList": [
        { "nrfSetId": "set2.nrfset.5gc.mnc001.mcc001",
          "nrfHostConfigList": [ { "scheme": "http", "fqdn": "nrf-g.set2.example.com", "port": 8080, "priority": 1 } ] }
      ] },
      "errorResponses": []
    }
  },
  "runtime": {
    "listen": [ { "address": "10.10.1.2", "port": 8080, "tls": false } ],
    "localNrf": { "scheme": "http", "address": "10.10.1.3", "port": 8080 },
    "management": { "address": "127.0.0.1", "port": 9090 },
    "timeouts": { "connectMs": 1000, "perTryMs": 2000, "requestMs": 5000 },
    "limits": { "maxConnections": 10000, "maxConcurrentStreams": 128, "maxHeaderBytes": 16384,
                "maxBodyBytes": 1048576, "peerQueueDepth": 1024 }
  }
})";

// Two forwarding peers, then two growth sets of two and one hosts.
inline const char *kPeers = R"({
  "generalOptions": {"ocnrfHost": "nrf-a.example.com", "ocnrfPort": 8080},
  "forwardingOptions": {"nrfHostConfig": [
    {"fqdn": "f0.example.com", "port": 8080, "priority": 2},
    {"ipv6Address": "2001:db8::5", "scheme": "https"}
  ]},
  "nrfGrowth": {"nrfForwardingOptions": {"nrfHostConfig": {"staticNrfConfigList": [
    {"nrfSetId": "set2", "nrfHostConfigList": [
      {"fqdn": "g0.set2.example.com", "ipv4Address": "10.0.2.1", "port": 8081},
      {"ipv4Address": "10.0.2.2", "ipv6Address": "2001:db8::22", "port": 8082}
    ]},
    {"nrfSetId": "set3", "nrfHostConfigList": [
      {"fqdn": "g0.set3.example.com", "port": 8083, "apiPrefix": "/pfx/"}
    ]}
  ]}}}
})";

} // namespace cfgtest

#endif // NRF_CFG_TEST_UTIL_H
