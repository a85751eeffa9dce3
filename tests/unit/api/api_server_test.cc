/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/api/api.c: a runtime with one worker and the management
 * listener on a free loopback port, driven over HTTP/1.1 from the test.
 * Every resource, every method and error of docs/rest-api.md, persistence
 * to the file, and a change that cannot be persisted.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api_int.h"
#include "nrf_err.h"

#include "unit/test_net.h"

namespace {

std::string
Doc(uint16_t port)
{
	return "{\"generalOptions\":{\"ocnrfHost\":\"nrf-a.test\",\"ocnrfPort\":" +
		std::to_string(port) +
		"},\"forwardingOptions\":{\"featureStatus\":\"ENABLED\",\"nrfHostConfig\":["
		"{\"scheme\":\"http\",\"fqdn\":\"nrf-e.test\",\"ipv4Address\":\"127.0.0.1\","
		"\"port\":9}]},\"runtime\":{\"listen\":[{\"address\":\"127.0.0.1\",\"port\":" +
		std::to_string(port) + "}],\"management\":{\"port\":0}}}";
}

std::string
Slurp(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

struct Reply {
	int status = 0;
	std::string head;
	std::string body;
	std::string Header(const std::string &name) const
	{
		std::string h = "\r\n" + name + ": ";
		size_t p = head.find(h);
		if (p == std::string::npos)
			return "";
		p += h.size();
		return head.substr(p, head.find("\r\n", p) - p);
	}
};

class ApiServer : public ::testing::Test {
protected:
	void SetUp() override
	{
		char t[] = "/tmp/nrf-api-srv-XXXXXX";
		dir_ = mkdtemp(t);
		path_ = dir_ + "/nrfwd.json";
		uint16_t port = FreePort();
		std::string doc = Doc(port);
		{
			std::ofstream f(path_);
			f << doc;
		}
		nrf_cfg_problems probs = {};
		int err = 0;
		nrf_cfg *cfg = nrf_cfg_load(doc.data(), doc.size(), 1, &probs, &err);
		nrf_cfg_problems_fini(&probs);
		ASSERT_NE(cfg, nullptr);
		nrf_rt_snap *snap = nrf_rt_snap_create(cfg, &err);
		ASSERT_NE(snap, nullptr);
		nrf_rt_params p = {1, nullptr, nullptr, nullptr};
		rt_ = nrf_rt_create(&p, snap, &err);
		ASSERT_NE(rt_, nullptr) << nrf_strerror(err);
		ASSERT_EQ(nrf_rt_start(rt_), 0);
	}

	void TearDown() override
	{
		nrf_api_free(api_);
		if (rt_ != nullptr) {
			nrf_rt_stop(rt_, 100);
			nrf_rt_join(rt_);
			nrf_rt_free(rt_);
		}
		(void)system(("rm -rf '" + dir_ + "'").c_str());
	}

	void Start(const char *token = nullptr, size_t max_body = 0)
	{
		nrf_api_params ap = {};
		int err = 0;

		ap.address = "127.0.0.1";
		ap.port = 0;
		ap.config_path = path_.c_str();
		ap.token = token;
		ap.max_body = max_body;
		api_ = nrf_api_create(&ap, rt_, &err);
		ASSERT_NE(api_, nullptr) << nrf_strerror(err);
		nrf_tp_addr a;
		ASSERT_EQ(nrf_api_addr(api_, &a), 0);
		ASSERT_NE(a.port, 0);
		port_ = a.port;
	}

	Reply Http(const std::string &method, const std::string &path,
		const std::string &body = "", const std::string &headers = "",
		bool chunked = false)
	{
		Reply r;
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		sockaddr_in a = {};

		a.sin_family = AF_INET;
		a.sin_port = htons(port_);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		EXPECT_EQ(connect(fd, (sockaddr *)&a, sizeof(a)), 0);
		std::string req = method + " " + path + " HTTP/1.1\r\nHost: x\r\n"
			"Connection: close\r\n" + headers;
		if (chunked) {
			char hex[32];

			snprintf(hex, sizeof(hex), "%zx", body.size());
			req += "Transfer-Encoding: chunked\r\n\r\n" + std::string(hex) + "\r\n" +
				body + "\r\n0\r\n\r\n";
		} else {
			if (!body.empty() || method == "PUT" || method == "PATCH")
				req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
			req += "\r\n" + body;
		}
		size_t off = 0;
		while (off < req.size()) {
			ssize_t n = send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
			if (n <= 0)
				break; /* the server may answer (413) and close early */
			off += (size_t)n;
		}
		std::string all;
		char buf[65536];
		ssize_t n;
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			all.append(buf, (size_t)n);
		close(fd);
		size_t he = all.find("\r\n\r\n");
		if (he == std::string::npos)
			return r;
		r.head = all.substr(0, he + 2);
		r.body = all.substr(he + 4);
		r.status = std::stoi(all.substr(9, 3));
		return r;
	}

	json_t *Json(const Reply &r)
	{
		json_error_t e;
		json_t *j = json_loads(r.body.c_str(), 0, &e);
		EXPECT_NE(j, nullptr) << r.body;
		return j;
	}

	std::string dir_, path_;
	nrf_rt *rt_ = nullptr;
	nrf_api *api_ = nullptr;
	uint16_t port_ = 0;
};

const char *const kMerge = "Content-Type: application/merge-patch+json\r\n";
const char *const kJson = "Content-Type: application/json\r\n";

} // namespace

TEST_F(ApiServer, GetServesEveryGroupAndTheWholeDocument)
{
	Start();
	Reply r = Http("GET", "/nrf-configuration/v1/");
	ASSERT_EQ(r.status, 200);
	EXPECT_EQ(r.Header("Content-Type"), "application/json");
	json_t *doc = Json(r);
	for (const char *k : {"generalOptions", "forwardingOptions", "nrfGrowth", "runtime"})
		EXPECT_NE(json_object_get(doc, k), nullptr) << k;
	json_decref(doc);

	r = Http("GET", "/nrf-configuration/v1/generalOptions");
	ASSERT_EQ(r.status, 200);
	doc = Json(r);
	EXPECT_STREQ(json_string_value(json_object_get(doc, "ocnrfHost")), "nrf-a.test");
	json_decref(doc);
	EXPECT_EQ(Http("GET", "/nrf-configuration/v1/forwardingOptions").status, 200);
	EXPECT_EQ(Http("GET", "/nrf-configuration/v1/nrfGrowth/nrfForwardingOptions/").status, 200);
	EXPECT_EQ(Http("GET", "/nrf-configuration/v1/runtime").status, 200);
	r = Http("HEAD", "/nrf-configuration/v1/runtime");
	EXPECT_EQ(r.status, 200);
	EXPECT_EQ(r.body, "");
}

TEST_F(ApiServer, PatchAppliesPersistsAndAnswersTheStoredGroup)
{
	Start();
	Reply r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions",
		"{\"maxViaMembers\":7}", kMerge);
	ASSERT_EQ(r.status, 200) << r.body;
	json_t *doc = Json(r);
	EXPECT_EQ(json_integer_value(json_object_get(doc, "maxViaMembers")), 7);
	EXPECT_EQ(json_integer_value(json_object_get(doc, "maxForwardAttempts")), 2);
	json_decref(doc);
	EXPECT_EQ(nrf_rt_generation(rt_), 2u);
	EXPECT_TRUE(nrf_rt_generation_seen(rt_, 2));

	/* The file holds the whole new document, and it loads. */
	std::string text = Slurp(path_);
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *cfg = nrf_cfg_load(text.data(), text.size(), 1, &probs, &err);
	nrf_cfg_problems_fini(&probs);
	ASSERT_NE(cfg, nullptr) << text;
	EXPECT_EQ(cfg->fwd.max_via_members, 7u);
	nrf_cfg_free(cfg);

	nrf_api_stats s;
	nrf_api_stats_get(api_, &s);
	EXPECT_EQ(s.reloads, 1u);
	EXPECT_EQ(s.reload_failures, 0u);
}

TEST_F(ApiServer, PutReplacesTheGroupWithDefaultsForWhatIsLeftOut)
{
	Start();
	Reply r = Http("PUT", "/nrf-configuration/v1/forwardingOptions",
		"{\"featureStatus\":\"ENABLED\",\"maxForwardAttempts\":4}", kJson);
	ASSERT_EQ(r.status, 200) << r.body;
	json_t *doc = Json(r);
	EXPECT_EQ(json_integer_value(json_object_get(doc, "maxForwardAttempts")), 4);
	EXPECT_EQ(json_array_size(json_object_get(doc, "nrfHostConfig")), 0u);
	json_decref(doc);
}

TEST_F(ApiServer, InvalidChangesListEveryProblemAndChangeNothing)
{
	Start();
	std::string before = Slurp(path_);
	Reply r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions",
		"{\"maxViaMembers\":0,\"maxForwardAttempts\":99}", kMerge);
	ASSERT_EQ(r.status, 400);
	EXPECT_EQ(r.Header("Content-Type"), "application/problem+json");
	json_t *doc = Json(r);
	json_t *inv = json_object_get(doc, "invalidParams");
	ASSERT_EQ(json_array_size(inv), 2u) << r.body;
	std::string all = r.body;
	EXPECT_NE(all.find("/forwardingOptions/maxViaMembers"), std::string::npos);
	EXPECT_NE(all.find("/forwardingOptions/maxForwardAttempts"), std::string::npos);
	json_decref(doc);
	EXPECT_EQ(nrf_rt_generation(rt_), 1u);
	EXPECT_EQ(Slurp(path_), before);

	/* Not JSON */
	r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions", "{nope", kMerge);
	EXPECT_EQ(r.status, 400);
	EXPECT_NE(r.body.find("INVALID_MSG_FORMAT"), std::string::npos);
	/* PUT of an array */
	r = Http("PUT", "/nrf-configuration/v1/generalOptions", "[1]", kJson);
	EXPECT_EQ(r.status, 400);
	EXPECT_NE(r.body.find("\"param\":\"/generalOptions\""), std::string::npos) << r.body;
	/* Restart-only */
	r = Http("PATCH", "/nrf-configuration/v1/runtime",
		"{\"management\":{\"port\":1},\"limits\":{\"maxBodyBytes\":5}}", kMerge);
	EXPECT_EQ(r.status, 400);
	EXPECT_NE(r.body.find("/runtime/management/port"), std::string::npos) << r.body;
	EXPECT_NE(r.body.find("/runtime/limits/maxBodyBytes"), std::string::npos) << r.body;
	EXPECT_EQ(nrf_rt_generation(rt_), 1u);
	EXPECT_EQ(Slurp(path_), before);

	nrf_api_stats s;
	nrf_api_stats_get(api_, &s);
	EXPECT_EQ(s.reload_failures, 4u);
	EXPECT_EQ(s.reloads, 0u);
}

TEST_F(ApiServer, ProtocolErrorsAreProblemDetails)
{
	Start(nullptr, 64);
	Reply r = Http("GET", "/nrf-configuration/v1/nothing");
	EXPECT_EQ(r.status, 404);
	EXPECT_EQ(r.Header("Content-Type"), "application/problem+json");

	r = Http("DELETE", "/nrf-configuration/v1/generalOptions");
	EXPECT_EQ(r.status, 405);
	EXPECT_EQ(r.Header("Allow"), "GET, HEAD, PUT, PATCH");
	r = Http("PUT", "/metrics", "{}", kJson);
	EXPECT_EQ(r.status, 405);
	EXPECT_EQ(r.Header("Allow"), "GET, HEAD");

	r = Http("PATCH", "/nrf-configuration/v1/generalOptions", "{}", kJson);
	EXPECT_EQ(r.status, 415);
	EXPECT_EQ(r.Header("Accept-Patch"), "application/merge-patch+json");
	r = Http("PUT", "/nrf-configuration/v1/generalOptions", "{}", kMerge);
	EXPECT_EQ(r.status, 415);
	r = Http("PUT", "/nrf-configuration/v1/generalOptions", "{}");
	EXPECT_EQ(r.status, 415);

	r = Http("PUT", "/nrf-configuration/v1/generalOptions", std::string(100, ' '), kJson);
	EXPECT_EQ(r.status, 413);
	EXPECT_EQ(r.Header("Content-Type"), "application/problem+json");
	/* Chunked upload (no Content-Length) over the limit: found while reading. */
	r = Http("PATCH", "/nrf-configuration/v1/generalOptions",
		"{\"ocnrfHost\":\"" + std::string(100, 'x') + "\"}", kMerge, true);
	EXPECT_EQ(r.status, 413);
	/* ... and within it, it works. */
	r = Http("PATCH", "/nrf-configuration/v1/generalOptions", "{\"nrfSetId\":\"s1\"}",
		kMerge, true);
	EXPECT_EQ(r.status, 200) << r.body;
	EXPECT_EQ(nrf_rt_generation(rt_), 2u);
}

TEST_F(ApiServer, TokenIsRequiredForChangesOnly)
{
	Start("s3cret");
	EXPECT_EQ(Http("GET", "/nrf-configuration/v1/generalOptions").status, 200);
	Reply r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions",
		"{\"maxViaMembers\":7}", kMerge);
	EXPECT_EQ(r.status, 401);
	EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer realm=\"nrfwd\"");
	EXPECT_EQ(r.body.find("s3cret"), std::string::npos);
	r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions", "{\"maxViaMembers\":7}",
		std::string(kMerge) + "Authorization: Bearer wrong\r\n");
	EXPECT_EQ(r.status, 401);
	r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions", "{\"maxViaMembers\":7}",
		std::string(kMerge) + "Authorization: Bearer s3cret\r\n");
	EXPECT_EQ(r.status, 200) << r.body;
	EXPECT_EQ(Http("GET", "/nrf-configuration/v1/").body.find("s3cret"), std::string::npos);
}

TEST_F(ApiServer, AChangeThatCannotBePersistedIsNotApplied)
{
	Start();
	std::string before = Slurp(path_);
	ASSERT_EQ(mkdir((dir_ + "/.nrfwd.json.nrfwd-tmp").c_str(), 0700), 0);
	Reply r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions",
		"{\"maxViaMembers\":7}", kMerge);
	EXPECT_EQ(r.status, 500);
	EXPECT_NE(r.body.find("SYSTEM_FAILURE"), std::string::npos);
	EXPECT_EQ(nrf_rt_generation(rt_), 1u);
	EXPECT_EQ(Slurp(path_), before);
	r = Http("GET", "/nrf-configuration/v1/forwardingOptions");
	EXPECT_NE(r.body.find("\"maxViaMembers\": 16"), std::string::npos) << r.body;

	rmdir((dir_ + "/.nrfwd.json.nrfwd-tmp").c_str());
	r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions", "{\"maxViaMembers\":7}",
		kMerge);
	EXPECT_EQ(r.status, 200);
	EXPECT_EQ(nrf_rt_generation(rt_), 2u);
}

TEST_F(ApiServer, HealthReadinessAndMetrics)
{
	Start();
	Reply r = Http("GET", "/healthz");
	EXPECT_EQ(r.status, 200);
	EXPECT_EQ(r.body, "{\"status\":\"alive\"}\n");
	r = Http("GET", "/readyz");
	EXPECT_EQ(r.status, 200) << r.body;
	EXPECT_NE(r.body.find("\"localNrf\":\"not configured\""), std::string::npos);

	/* A local NRF that refuses connections: the worker holds it down at
	 * once (it connects to a new local NRF without waiting for traffic),
	 * and readiness says so. */
	uint16_t dead = FreePort();
	std::string patch = "{\"localNrf\":{\"address\":\"127.0.0.1\",\"port\":" +
		std::to_string(dead) + "}}";
	ASSERT_EQ(Http("PATCH", "/nrf-configuration/v1/runtime", patch, kMerge).status, 200);
	for (uint64_t until = nrf_now_ns() + 3000000000ull;; usleep(20000)) {
		r = Http("GET", "/readyz");
		if (r.status != 200 || nrf_now_ns() > until)
			break;
	}
	EXPECT_EQ(r.status, 503) << r.body;
	EXPECT_NE(r.body.find("\"localNrf\":\"held down\""), std::string::npos) << r.body;
	EXPECT_NE(r.body.find("\"upstream\":\"127.0.0.1:" + std::to_string(dead) +
			      "\",\"role\":\"local\",\"workers\":1,\"of\":1,\"since\":\""),
		std::string::npos) << r.body;

	r = Http("GET", "/metrics");
	ASSERT_EQ(r.status, 200);
	EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
	EXPECT_NE(r.body.find("\nnrfwd_config_generation 2\n"), std::string::npos);
	EXPECT_NE(r.body.find("\nnrfwd_config_reloads_total 1\n"), std::string::npos);
	EXPECT_NE(r.body.find("nrfwd_worker_config_generation{worker=\"0\"} 2\n"),
		std::string::npos);
	EXPECT_NE(r.body.find("\nnrfwd_upstream_up{peer=\"127.0.0.1:" + std::to_string(dead) +
			      "\",role=\"local\"} 0\n"),
		std::string::npos) << r.body;

	/* Draining: not ready, and no configuration change. */
	nrf_api_drain(api_);
	r = Http("GET", "/readyz");
	EXPECT_EQ(r.status, 503);
	EXPECT_NE(r.body.find("\"status\":\"draining\""), std::string::npos) << r.body;
	r = Http("PATCH", "/nrf-configuration/v1/forwardingOptions", "{\"maxViaMembers\":7}",
		kMerge);
	EXPECT_EQ(r.status, 503) << r.body;
	EXPECT_EQ(nrf_rt_generation(rt_), 2u);
}
