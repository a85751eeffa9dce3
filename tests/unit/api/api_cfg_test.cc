/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/api/api_cfg.c: routing, methods, media types, bearer
 * token, RFC 7396 merge patch, group replacement, ProblemDetails, the atomic
 * file rewrite and the token file.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api_int.h"
#include "nrf_err.h"

namespace {

struct JsonDel {
	void operator()(json_t *j) const { json_decref(j); }
};
using Json = std::unique_ptr<json_t, JsonDel>;

Json
J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
	EXPECT_NE(j, nullptr) << text << ": " << e.text;
	return Json(j);
}

std::string
Dump(const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	std::string out = s != nullptr ? s : "(null)";
	free(s);
	return out;
}

std::string
Slurp(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

/* A temporary directory removed (with what the tests leave) at the end. */
struct TmpDir {
	std::string path;
	TmpDir()
	{
		char t[] = "/tmp/nrf-api-test-XXXXXX";
		path = mkdtemp(t);
	}
	~TmpDir() { (void)system(("rm -rf '" + path + "'").c_str()); }
};

} // namespace

TEST(ApiRoute, PathsMapToResourcesWithOrWithoutTrailingSlash)
{
	EXPECT_EQ(api_route("/nrf-configuration/v1/"), API_RES_ALL);
	EXPECT_EQ(api_route("/nrf-configuration/v1"), API_RES_ALL);
	EXPECT_EQ(api_route("/nrf-configuration/v1/generalOptions"), API_RES_GENERAL);
	EXPECT_EQ(api_route("/nrf-configuration/v1/forwardingOptions/"), API_RES_FORWARDING);
	EXPECT_EQ(api_route("/nrf-configuration/v1/nrfGrowth/nrfForwardingOptions"),
		API_RES_GROWTH);
	EXPECT_EQ(api_route("/nrf-configuration/v1/runtime"), API_RES_RUNTIME);
	EXPECT_EQ(api_route("/metrics"), API_RES_METRICS);
	EXPECT_EQ(api_route("/healthz"), API_RES_HEALTHZ);
	EXPECT_EQ(api_route("/readyz"), API_RES_READYZ);
}

TEST(ApiRoute, UnknownPathsAreNotFound)
{
	EXPECT_EQ(api_route("/"), API_RES_NONE);
	EXPECT_EQ(api_route("/nrf-configuration/v1/nrfGrowth"), API_RES_NONE);
	EXPECT_EQ(api_route("/nrf-configuration/v1/forwardingOptionsX"), API_RES_NONE);
	EXPECT_EQ(api_route("/nrf-configuration/v2/generalOptions"), API_RES_NONE);
	EXPECT_EQ(api_route("/nrf-configuration/v1/generalOptions//"), API_RES_NONE);
	EXPECT_EQ(api_route("/metricsx"), API_RES_NONE);
	EXPECT_EQ(api_route(nullptr), API_RES_NONE);
}

TEST(ApiRoute, GroupsAllowChangesOtherResourcesOnlyReads)
{
	EXPECT_STREQ(api_allow(API_RES_FORWARDING), "GET, HEAD, PUT, PATCH");
	EXPECT_STREQ(api_allow(API_RES_ALL), "GET, HEAD");
	EXPECT_STREQ(api_allow(API_RES_METRICS), "GET, HEAD");
	EXPECT_TRUE(api_method_allowed(API_RES_GROWTH, "PATCH"));
	EXPECT_TRUE(api_method_allowed(API_RES_GENERAL, "PUT"));
	EXPECT_FALSE(api_method_allowed(API_RES_GENERAL, "DELETE"));
	EXPECT_FALSE(api_method_allowed(API_RES_GENERAL, "POST"));
	EXPECT_FALSE(api_method_allowed(API_RES_ALL, "PUT"));
	EXPECT_FALSE(api_method_allowed(API_RES_METRICS, "PATCH"));
	EXPECT_TRUE(api_method_allowed(API_RES_HEALTHZ, "HEAD"));
	EXPECT_EQ(api_group_by_name("nrfGrowth/nrfForwardingOptions")->res, API_RES_GROWTH);
	EXPECT_EQ(api_group_by_name("nope"), nullptr);
	EXPECT_EQ(api_group_of(API_RES_ALL), nullptr);
}

TEST(ApiMediaType, ParametersCaseAndSpacesAreIgnored)
{
	char mt[64];

	api_media_type("Application/Merge-Patch+JSON; charset=utf-8", mt, sizeof(mt));
	EXPECT_STREQ(mt, "application/merge-patch+json");
	api_media_type("  application/json ;x=y", mt, sizeof(mt));
	EXPECT_STREQ(mt, "application/json");
	api_media_type(nullptr, mt, sizeof(mt));
	EXPECT_STREQ(mt, "");
	api_media_type("application/json-patch+json", mt, 8);
	EXPECT_STREQ(mt, "applica");
}

TEST(ApiAuth, BearerTokenMustMatchExactly)
{
	EXPECT_TRUE(api_auth_ok("Bearer s3cret", "s3cret"));
	EXPECT_TRUE(api_auth_ok("bearer s3cret ", "s3cret"));
	EXPECT_FALSE(api_auth_ok("Bearer s3cre", "s3cret"));
	EXPECT_FALSE(api_auth_ok("Bearer s3cret2", "s3cret"));
	EXPECT_FALSE(api_auth_ok("Basic s3cret", "s3cret"));
	EXPECT_FALSE(api_auth_ok("Bearer ", "s3cret"));
	EXPECT_FALSE(api_auth_ok(nullptr, "s3cret"));
	/* No token configured: nothing to check. */
	EXPECT_TRUE(api_auth_ok(nullptr, nullptr));
	EXPECT_TRUE(api_auth_ok(nullptr, ""));
}

/* RFC 7396 Appendix A, every example. */
TEST(ApiMergePatch, Rfc7396AppendixAExamples)
{
	static const char *const cases[][3] = {
		{"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
		{"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
		{"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
		{"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
		{"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
		{"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
		{"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
		{"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
		{"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
		{"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
		{"{\"a\":\"foo\"}", "null", "null"},
		{"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
		{"{\"e\":null}", "{\"a\":1}", "{\"a\":1,\"e\":null}"},
		{"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
		{"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
	};
	for (const auto &c : cases) {
		Json target = J(c[0]), patch = J(c[1]), want = J(c[2]);
		Json got(api_merge_patch(target.get(), patch.get()));

		ASSERT_NE(got, nullptr);
		EXPECT_EQ(Dump(got.get()), Dump(want.get())) << c[0] << " + " << c[1];
		EXPECT_EQ(Dump(target.get()), Dump(J(c[0]).get())) << "target changed";
	}
}

TEST(ApiMergePatch, AbsentTargetIsAnEmptyObject)
{
	Json patch = J("{\"a\":{\"b\":null,\"c\":1}}");
	Json got(api_merge_patch(nullptr, patch.get()));

	EXPECT_EQ(Dump(got.get()), "{\"a\":{\"c\":1}}");
}

TEST(ApiDocApply, PutReplacesTheGroupAndKeepsTheOthers)
{
	const char *running = "{\"generalOptions\":{\"ocnrfHost\":\"a\",\"ocnrfPort\":1},"
			      "\"forwardingOptions\":{\"maxForwardAttempts\":2,\"maxViaMembers\":9}}";
	Json body = J("{\"maxViaMembers\":3}");
	nrf_cfg_problems probs = {};
	char *out = nullptr;

	ASSERT_EQ(api_doc_apply(running, api_group_by_name("forwardingOptions"), false,
		body.get(), &out, &probs), 0);
	EXPECT_EQ(Dump(J(out).get()),
		"{\"forwardingOptions\":{\"maxViaMembers\":3},"
		"\"generalOptions\":{\"ocnrfHost\":\"a\",\"ocnrfPort\":1}}");
	free(out);
	EXPECT_EQ(probs.n, 0u);
}

TEST(ApiDocApply, PatchMergesIntoTheGroup)
{
	const char *running = "{\"forwardingOptions\":{\"maxForwardAttempts\":2,"
			      "\"maxViaMembers\":9,\"nrfHostConfig\":[{\"fqdn\":\"x\"}]}}";
	Json body = J("{\"maxViaMembers\":null,\"nrfHostConfig\":[]}");
	nrf_cfg_problems probs = {};
	char *out = nullptr;

	ASSERT_EQ(api_doc_apply(running, api_group_by_name("forwardingOptions"), true,
		body.get(), &out, &probs), 0);
	EXPECT_EQ(Dump(J(out).get()),
		"{\"forwardingOptions\":{\"maxForwardAttempts\":2,\"nrfHostConfig\":[]}}");
	free(out);
}

TEST(ApiDocApply, GrowthGroupIsCreatedUnderNrfGrowth)
{
	Json body = J("{\"featureStatus\":\"ENABLED\"}");
	nrf_cfg_problems probs = {};
	char *out = nullptr;

	ASSERT_EQ(api_doc_apply("{\"nrfGrowth\":7}",
		api_group_by_name("nrfGrowth/nrfForwardingOptions"), true, body.get(), &out, &probs),
		0);
	EXPECT_EQ(Dump(J(out).get()),
		"{\"nrfGrowth\":{\"nrfForwardingOptions\":{\"featureStatus\":\"ENABLED\"}}}");
	free(out);
}

TEST(ApiDocApply, PutOfSomethingElseThanAnObjectIsAProblemAtTheGroup)
{
	Json body = J("[1,2]");
	nrf_cfg_problems probs = {};
	char *out = nullptr;

	EXPECT_EQ(api_doc_apply("{}", api_group_by_name("generalOptions"), false, body.get(),
		&out, &probs), NRF_EINVAL);
	EXPECT_EQ(out, nullptr);
	ASSERT_EQ(probs.n, 1u);
	EXPECT_STREQ(probs.v[0].pointer, "/generalOptions");
	nrf_cfg_problems_fini(&probs);
}

TEST(ApiProblem, ProblemDetailsCarryInvalidParams)
{
	nrf_cfg_problems probs = {};

	api_problem_add(&probs, "/forwardingOptions/maxViaMembers", "out of range: %d", 0);
	api_problem_add(&probs, "", "root \"problem\"");
	char *text = api_problem_json(400, "Bad Request", "MANDATORY_IE_INCORRECT", "bad",
		&probs);
	Json doc = J(text);
	free(text);
	EXPECT_EQ(Dump(doc.get()),
		"{\"cause\":\"MANDATORY_IE_INCORRECT\",\"detail\":\"bad\",\"invalidParams\":["
		"{\"param\":\"/forwardingOptions/maxViaMembers\",\"reason\":\"out of range: 0\"},"
		"{\"param\":\"\",\"reason\":\"root \\\"problem\\\"\"}],"
		"\"status\":400,\"title\":\"Bad Request\"}");
	nrf_cfg_problems_fini(&probs);

	text = api_problem_json(404, "Not Found", "X", nullptr, nullptr);
	EXPECT_EQ(Dump(J(text).get()), "{\"cause\":\"X\",\"status\":404,\"title\":\"Not Found\"}");
	free(text);
}

TEST(ApiFile, AtomicWriteReplacesTheFileAndKeepsItsMode)
{
	TmpDir d;
	std::string path = d.path + "/nrfwd.json";
	char why[256];

	{
		std::ofstream f(path);
		f << "old";
	}
	chmod(path.c_str(), 0600);
	ASSERT_EQ(api_file_write_atomic(path.c_str(), "{\"new\":1}\n", 10, why, sizeof(why)), 0)
		<< why;
	EXPECT_EQ(Slurp(path), "{\"new\":1}\n");
	struct stat st;
	ASSERT_EQ(stat(path.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600u);
	EXPECT_NE(access((d.path + "/.nrfwd.json.nrfwd-tmp").c_str(), F_OK), 0);

	/* A new file is created too. */
	ASSERT_EQ(api_file_write_atomic((d.path + "/other.json").c_str(), "x", 1, why,
		sizeof(why)), 0);
	EXPECT_EQ(Slurp(d.path + "/other.json"), "x");
}

TEST(ApiFile, FailedWriteLeavesTheFileAsItWas)
{
	TmpDir d;
	std::string path = d.path + "/nrfwd.json";
	char why[256];

	{
		std::ofstream f(path);
		f << "old";
	}
	/* The temp file's name is taken by a directory: cannot be created (also
	 * as root, where permissions would not stop it). */
	ASSERT_EQ(mkdir((d.path + "/.nrfwd.json.nrfwd-tmp").c_str(), 0700), 0);
	EXPECT_EQ(api_file_write_atomic(path.c_str(), "new", 3, why, sizeof(why)), NRF_EIO);
	EXPECT_NE(std::string(why).find("nrfwd-tmp"), std::string::npos) << why;
	EXPECT_EQ(Slurp(path), "old");

	/* A missing directory. */
	EXPECT_EQ(api_file_write_atomic((d.path + "/no/such.json").c_str(), "new", 3, why,
		sizeof(why)), NRF_EIO);
}

TEST(ApiToken, TokenFileIsTrimmedAndChecked)
{
	TmpDir d;
	std::string path = d.path + "/token";
	int err = 0;

	{
		std::ofstream f(path);
		f << "abc.DEF-123\n\n";
	}
	char *t = nrf_api_token_read(path.c_str(), &err);
	ASSERT_NE(t, nullptr);
	EXPECT_STREQ(t, "abc.DEF-123");
	free(t);
	{
		std::ofstream f(path);
		f << "two words\n";
	}
	EXPECT_EQ(nrf_api_token_read(path.c_str(), &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	{
		std::ofstream f(path);
		f << "\n";
	}
	EXPECT_EQ(nrf_api_token_read(path.c_str(), &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	{
		std::ofstream f(path);
		f << std::string(5000, 'x');
	}
	EXPECT_EQ(nrf_api_token_read(path.c_str(), &err), nullptr);
	EXPECT_EQ(err, NRF_ETOOBIG);
	EXPECT_EQ(nrf_api_token_read((d.path + "/none").c_str(), &err), nullptr);
	EXPECT_EQ(err, NRF_EIO);
}
