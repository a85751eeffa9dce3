/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/cfgsrc/cfgsrc_doc.c: which half of the document lives
 * where (the local file holds runtime only, the shared document never
 * holds runtime), how the two are put together, and the status key prefix.
 */
#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>

#include <string>

#include <jansson.h>

#include "nrf_cfgsrc.h"
#include "nrf_err.h"

namespace {

const char *kShared = R"({"generalOptions":{"ocnrfHost":"nrf-a.test","ocnrfPort":18080},
	"forwardingOptions":{"featureStatus":"DISABLED","maxViaMembers":9}})";
const char *kRuntime = R"({"listen":[{"address":"127.0.0.1","port":18080,"tls":false}],
	"management":{"address":"127.0.0.1","port":0}})";

struct Probs {
	struct nrf_cfg_problems p = {};
	~Probs() { nrf_cfg_problems_fini(&p); }
};

} // namespace

TEST(CfgsrcLocalRuntime, ReturnsTheRuntimeGroupOfAFileWithNothingElse)
{
	Probs pr;
	int err = 1;
	std::string file = std::string("{\"runtime\":") + kRuntime + "}";
	char *rt = nrf_cfgsrc_local_runtime(file.data(), file.size(), &pr.p, &err);

	ASSERT_NE(rt, nullptr);
	EXPECT_EQ(err, 0);
	EXPECT_NE(strstr(rt, "\"listen\""), nullptr);
	EXPECT_EQ(pr.p.n, 0u);
	free(rt);
}

TEST(CfgsrcLocalRuntime, NamesEverySharedGroupFoundInTheFile)
{
	Probs pr;
	int err = 0;
	const char *file = R"({"generalOptions":{},"nrfGrowth":{},"runtime":{}})";

	EXPECT_EQ(nrf_cfgsrc_local_runtime(file, strlen(file), &pr.p, &err), nullptr);
	EXPECT_EQ(err, NRF_ECONFIG);
	ASSERT_EQ(pr.p.n, 2u);
	EXPECT_STREQ(pr.p.v[0].pointer, "/generalOptions");
	EXPECT_STREQ(pr.p.v[1].pointer, "/nrfGrowth");
	EXPECT_NE(strstr(pr.p.v[0].reason, "etcd"), nullptr);
}

TEST(CfgsrcLocalRuntime, AFileWithoutRuntimeGivesAnEmptyGroupAndGarbageIsAParseError)
{
	Probs pr;
	int err = 1;
	char *rt = nrf_cfgsrc_local_runtime("{}", 2, &pr.p, &err);

	ASSERT_NE(rt, nullptr);
	EXPECT_STREQ(rt, "{}");
	free(rt);
	EXPECT_EQ(nrf_cfgsrc_local_runtime("[1]", 3, &pr.p, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
	EXPECT_EQ(nrf_cfgsrc_local_runtime("{", 1, &pr.p, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
}

TEST(CfgsrcCompose, PutsTheLocalRuntimeUnderTheSharedGroupsAndTheResultLoads)
{
	Probs pr;
	int err = 1;
	char *doc = nrf_cfgsrc_compose(kShared, strlen(kShared), kRuntime, &pr.p, &err);

	ASSERT_NE(doc, nullptr) << (pr.p.n ? pr.p.v[0].reason : "");
	struct nrf_cfg *cfg = nrf_cfg_load(doc, strlen(doc), 1, &pr.p, &err);
	ASSERT_NE(cfg, nullptr) << (pr.p.n ? pr.p.v[0].pointer : "") << " "
				<< (pr.p.n ? pr.p.v[0].reason : "");
	EXPECT_STREQ(cfg->general.host, "nrf-a.test");
	EXPECT_EQ(cfg->fwd.max_via_members, 9u);
	EXPECT_EQ(cfg->rt.n_listen, 1u);

	/* and back: the shared half of the snapshot has no runtime */
	char *shared = nrf_cfgsrc_shared_of(cfg, &err);
	ASSERT_NE(shared, nullptr);
	json_t *j = json_loads(shared, 0, nullptr);
	ASSERT_NE(j, nullptr);
	EXPECT_EQ(json_object_get(j, "runtime"), nullptr);
	EXPECT_NE(json_object_get(j, "generalOptions"), nullptr);
	EXPECT_NE(json_object_get(j, "forwardingOptions"), nullptr);
	json_decref(j);
	free(shared);
	nrf_cfg_free(cfg);
	free(doc);
}

TEST(CfgsrcCompose, RefusesASharedDocumentThatCarriesRuntime)
{
	Probs pr;
	int err = 0;
	const char *bad = R"({"generalOptions":{},"runtime":{}})";

	EXPECT_EQ(nrf_cfgsrc_compose(bad, strlen(bad), "{}", &pr.p, &err), nullptr);
	EXPECT_EQ(err, NRF_ECONFIG);
	ASSERT_EQ(pr.p.n, 1u);
	EXPECT_STREQ(pr.p.v[0].pointer, "/runtime");
	EXPECT_EQ(nrf_cfgsrc_compose("\"x\"", 3, "{}", &pr.p, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
}

TEST(CfgsrcInstancesPrefix, IsTheKeysFolderPlusInstances)
{
	char *p = nrf_cfgsrc_instances_prefix("/nrfwd/site1/config");

	ASSERT_NE(p, nullptr);
	EXPECT_STREQ(p, "/nrfwd/site1/instances/");
	free(p);
	EXPECT_EQ(nrf_cfgsrc_instances_prefix("config"), nullptr);
	EXPECT_EQ(nrf_cfgsrc_instances_prefix("/nrfwd/"), nullptr);
}
