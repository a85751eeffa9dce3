/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/api/api_persist.c: the file's mark (a hand edit is
 * seen) and the document a change writes (the file's own keys and order,
 * plus the change; no default filled in).
 */
#include <gtest/gtest.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "api_int.h"
#include "nrf_err.h"

namespace {

/* The operator's file: generalOptions before forwardingOptions, host
 * after port, most keys left to their defaults. */
const char *kDisk = "{\"generalOptions\": {\"ocnrfPort\": 8080, \"ocnrfHost\": \"nrf-a.test\"},\n"
		    " \"forwardingOptions\": {\"maxViaMembers\": 7}}\n";

json_t *
Body(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	EXPECT_NE(j, nullptr) << e.text;
	return j;
}

TEST(ApiPersist, APatchChangesOnlyWhatItNamesInTheFileAsWritten)
{
	json_t *b = Body("{\"aliases\": [\"10.9.8.7:8080\"]}");
	size_t len = 0;
	char *out = api_persist_doc(kDisk, api_group_by_name("generalOptions"), true, b, 2, &len);

	json_decref(b);
	ASSERT_NE(out, nullptr);
	EXPECT_EQ(len, strlen(out));
	EXPECT_EQ(std::string(out),
		"{\n"
		"  \"generalOptions\": {\n"
		"    \"ocnrfPort\": 8080,\n"
		"    \"ocnrfHost\": \"nrf-a.test\",\n"
		"    \"aliases\": [\n"
		"      \"10.9.8.7:8080\"\n"
		"    ]\n"
		"  },\n"
		"  \"forwardingOptions\": {\n"
		"    \"maxViaMembers\": 7\n"
		"  }\n"
		"}\n");
	free(out);
}

TEST(ApiPersist, APutReplacesItsGroupAndANullRemovesAKey)
{
	json_t *b = Body("{\"maxViaMembers\": 5}");
	size_t len = 0;
	char *out = api_persist_doc(kDisk, api_group_by_name("forwardingOptions"), false, b, 2,
		&len);

	json_decref(b);
	ASSERT_NE(out, nullptr);
	EXPECT_NE(std::string(out).find("\"maxViaMembers\": 5"), std::string::npos);
	free(out);
	b = Body("{\"maxViaMembers\": null}");
	out = api_persist_doc(kDisk, api_group_by_name("forwardingOptions"), true, b, 2, &len);
	json_decref(b);
	ASSERT_NE(out, nullptr);
	EXPECT_EQ(std::string(out).find("maxViaMembers"), std::string::npos);
	free(out);
}

TEST(ApiPersist, NothingWhenTheResultWouldNotLoadOrTheFileIsNotJson)
{
	json_t *b = Body("{\"maxViaMembers\": 0}"); /* below its minimum */
	size_t len = 7;

	EXPECT_EQ(api_persist_doc(kDisk, api_group_by_name("forwardingOptions"), true, b, 2, &len),
		nullptr);
	EXPECT_EQ(len, 0u);
	EXPECT_EQ(api_persist_doc("not json", api_group_by_name("forwardingOptions"), true, b, 2,
			  &len),
		nullptr);
	json_decref(b);
}

TEST(ApiPersist, TheMarkSeesAnyChangeOfTheBytes)
{
	char path[] = "/tmp/nrfwd-persist-XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, kDisk, strlen(kDisk)), (ssize_t)strlen(kDisk));
	close(fd);

	struct api_file_mark m = {};
	EXPECT_FALSE(api_file_mark_same(&m, kDisk, strlen(kDisk))); /* unset */
	ASSERT_EQ(api_file_mark_path(&m, path), 0);
	size_t len = 0;
	int err = 0;
	char *t = api_file_read(path, &len, &err);
	ASSERT_NE(t, nullptr);
	EXPECT_TRUE(api_file_mark_same(&m, t, len));
	free(t);

	std::string edited(kDisk);
	edited[edited.find('7')] = '8'; /* same length, one byte differs */
	EXPECT_FALSE(api_file_mark_same(&m, edited.data(), edited.size()));
	EXPECT_FALSE(api_file_mark_same(&m, kDisk, strlen(kDisk) - 1));
	api_file_mark_text(&m, edited.data(), edited.size());
	EXPECT_TRUE(api_file_mark_same(&m, edited.data(), edited.size()));

	unlink(path);
	EXPECT_EQ(api_file_read(path, &len, &err), nullptr);
	EXPECT_EQ(err, ENOENT);
	EXPECT_EQ(api_file_mark_path(&m, path), NRF_EIO);
	EXPECT_FALSE(api_file_mark_same(&m, edited.data(), edited.size()));
}

} // namespace

/* With a configuration source: the file holds runtime only, the running
 * document the rest (decision 0037). */
const char *kWhole = "{\"generalOptions\": {\"ocnrfHost\": \"nrf-a.test\", \"ocnrfPort\": 8080},"
		     " \"runtime\": {\"timeouts\": {\"perTryMs\": 900}}}";
const char *kRuntimeFile = "{\"runtime\": {\"timeouts\": {\"connectMs\": 400}}}\n";

TEST(ApiPersist, ARuntimeOnlyFileTakesTheChangeAndIsCheckedWithTheRunningRest)
{
	json_t *b = Body("{\"timeouts\": {\"perTryMs\": 1500}}");
	size_t len = 0;
	char *out = api_persist_runtime_doc(kRuntimeFile, api_group_by_name("runtime"), true, b,
		kWhole, 2, &len);

	ASSERT_NE(out, nullptr);
	EXPECT_EQ(std::string(out),
		"{\n"
		"  \"runtime\": {\n"
		"    \"timeouts\": {\n"
		"      \"connectMs\": 400,\n"
		"      \"perTryMs\": 1500\n"
		"    }\n"
		"  }\n"
		"}\n");
	free(out);
	/* Loaded alone it would miss ocnrfHost: the plain rule refuses it. */
	EXPECT_EQ(api_persist_doc(kRuntimeFile, api_group_by_name("runtime"), true, b, 2, &len),
		nullptr);
	json_decref(b);
}

TEST(ApiPersist, ComposeTakesTheFilesRuntimeAndRefusesASharedGroupInTheFile)
{
	struct nrf_cfg_problems probs = {};
	char *t = api_compose_runtime(kWhole, kRuntimeFile, strlen(kRuntimeFile), &probs);

	ASSERT_NE(t, nullptr);
	json_t *j = Body(t);
	EXPECT_STREQ(json_string_value(json_object_get(json_object_get(j, "generalOptions"),
			     "ocnrfHost")),
		"nrf-a.test");
	json_t *to = json_object_get(json_object_get(j, "runtime"), "timeouts");
	EXPECT_EQ(json_integer_value(json_object_get(to, "connectMs")), 400);
	EXPECT_EQ(json_object_get(to, "perTryMs"), nullptr); /* the file's, not the running one */
	json_decref(j);
	free(t);
	EXPECT_EQ(probs.n, 0u);

	const char *bad = "{\"runtime\": {}, \"forwardingOptions\": {\"maxViaMembers\": 3}}";
	EXPECT_EQ(api_compose_runtime(kWhole, bad, strlen(bad), &probs), nullptr);
	ASSERT_EQ(probs.n, 1u);
	EXPECT_STREQ(probs.v[0].pointer, "/forwardingOptions");
	nrf_cfg_problems_fini(&probs);
	EXPECT_EQ(api_compose_runtime(kWhole, "[1]", 3, &probs), nullptr);
	EXPECT_EQ(probs.n, 1u);
	nrf_cfg_problems_fini(&probs);
}
