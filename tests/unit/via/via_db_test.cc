/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "via_test_util.h"

using namespace via_test;

namespace {

int
CreateErr(const std::vector<nrf_via_identity> &ids)
{
	int err = 0;
	nrf_via_db *db = nrf_via_db_create(ids.data(), ids.size(), &err);

	EXPECT_EQ(db, nullptr);
	nrf_via_db_free(db);
	return err;
}

std::vector<std::string>
Hosts(size_t n, const char *fmt = "nrf-%04zu.seg%zu.example.com")
{
	std::vector<std::string> h;

	for (size_t i = 0; i < n; i++) {
		char buf[96];

		snprintf(buf, sizeof(buf), fmt, i, i % 4 + 1);
		h.push_back(buf);
	}
	return h;
}

std::vector<nrf_via_identity>
Peers(const std::vector<std::string> &hosts)
{
	std::vector<nrf_via_identity> ids;

	for (size_t i = 0; i < hosts.size(); i++)
		ids.push_back(Peer(hosts[i].c_str(), 8080, (uint16_t)(i % NRF_VIA_MAX_PEERS)));
	return ids;
}

} /* namespace */

TEST(ViaDb, StoresIdentitiesNormalisedInTheirOrder)
{
	DbPtr db = MakeDb({Self("NRF-A.Example.COM.", 8080), Peer("[2001:DB8::1]", 443, 7),
		Peer("10.10.2.2", 8080, 7), Peer("2001:db8::2", 1, 1023)});

	ASSERT_EQ(nrf_via_db_count(db.get()), 4u);
	const nrf_via_identity *a = nrf_via_db_identity(db.get(), 0);
	ASSERT_NE(a, nullptr);
	EXPECT_STREQ(a->host, "nrf-a.example.com");
	EXPECT_EQ(a->port, 8080);
	EXPECT_EQ(a->kind, NRF_VIA_SELF);
	EXPECT_STREQ(nrf_via_db_identity(db.get(), 1)->host, "2001:db8::1");
	EXPECT_EQ(nrf_via_db_identity(db.get(), 1)->kind, NRF_VIA_PEER);
	EXPECT_EQ(nrf_via_db_identity(db.get(), 1)->peer, 7);
	EXPECT_STREQ(nrf_via_db_identity(db.get(), 2)->host, "10.10.2.2");
	EXPECT_STREQ(nrf_via_db_identity(db.get(), 3)->host, "2001:db8::2");
	EXPECT_EQ(nrf_via_db_identity(db.get(), 3)->peer, 1023);
	EXPECT_EQ(nrf_via_db_identity(db.get(), 4), nullptr);
	EXPECT_EQ(nrf_via_db_identity(db.get(), UINT32_MAX), nullptr);
}

TEST(ViaDb, CopiesTheCallersStrings)
{
	std::string host = "nrf-a.example.com";
	DbPtr db = MakeDb({Self(host.c_str(), 8080)});

	host.assign(host.size(), 'x');
	EXPECT_STREQ(nrf_via_db_identity(db.get(), 0)->host, "nrf-a.example.com");
	ScratchPtr s = MakeScratch(db.get());
	Scan r = DoScan(db.get(), s.get(), {"2.0 nrf-a.example.com:8080"});
	EXPECT_EQ(r.rc, 0);
	EXPECT_TRUE(r.res.self);
}

TEST(ViaDb, AnswersForNoDatabase)
{
	EXPECT_EQ(nrf_via_db_count(nullptr), 0u);
	EXPECT_EQ(nrf_via_db_identity(nullptr, 0), nullptr);
	nrf_via_db_free(nullptr);
}

TEST(ViaDb, RejectsNoIdentitiesAndTooMany)
{
	int err = 0;
	nrf_via_identity one = Self("a", 1);

	EXPECT_EQ(nrf_via_db_create(nullptr, 1, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	err = 0;
	EXPECT_EQ(nrf_via_db_create(&one, 0, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);

	auto hosts = Hosts(NRF_VIA_MAX_IDENTITIES + 1);
	EXPECT_EQ(CreateErr(Peers(hosts)), NRF_EINVAL);
}

TEST(ViaDb, AcceptsTheMaximumNumberOfIdentities)
{
	auto hosts = Hosts(NRF_VIA_MAX_IDENTITIES);
	DbPtr db = MakeDb(Peers(hosts));
	ScratchPtr s = MakeScratch(db.get());

	ASSERT_EQ(nrf_via_db_count(db.get()), (size_t)NRF_VIA_MAX_IDENTITIES);
	Each r = DoScanEach(db.get(), s.get(), {"2.0 nrf-4095.seg4.example.com:8080"});
	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.hits, (std::vector<Hit>{{4095, 0}}));
}

TEST(ViaDb, RejectsPortZeroAndBadPeers)
{
	EXPECT_EQ(CreateErr({Self("a", 0)}), NRF_EINVAL);
	EXPECT_EQ(CreateErr({Peer("a", 1, NRF_VIA_MAX_PEERS)}), NRF_EINVAL);
	EXPECT_EQ(CreateErr({nrf_via_identity{"a", 1, (nrf_via_kind)2, 0}}), NRF_EINVAL);
	/* One bad identity fails the whole database. */
	EXPECT_EQ(CreateErr({Self("a", 1), Peer("b", 0, 1)}), NRF_EINVAL);
}

TEST(ViaDb, RejectsEmptyHosts)
{
	EXPECT_EQ(CreateErr({Self(nullptr, 1)}), NRF_EINVAL);
	EXPECT_EQ(CreateErr({Self("", 1)}), NRF_EINVAL);
	EXPECT_EQ(CreateErr({Self(".", 1)}), NRF_EINVAL);
	EXPECT_EQ(CreateErr({Self("[]", 1)}), NRF_EINVAL);
}

TEST(ViaDb, RejectsHostsThatCannotAppearInReceivedBy)
{
	const char *bad[] = {"nrf a", "nrf,a", "nrf(a)", "nrf)", "a/b", "a\tb", "a\nb",
		"a\x01", "a\x7f", "h\xc3\xa9", "a@b", "a\"b", "a\\b", "[a]", "[::1",
		"::1]", "nrf-a:8080", "a[b]", "2001:db8::g", "[2001:db8::1]:80", "a..b",
		".a", "a..", "..", "a.:"};

	for (const char *h : bad)
		EXPECT_EQ(CreateErr({Self(h, 1)}), NRF_EINVAL) << h;
}

TEST(ViaDb, AcceptsUnreservedAndSafeSubDelimiters)
{
	DbPtr db = MakeDb({Self("a-b_c~d.e", 1), Self("x%41!$&'*+;=", 2), Self("::ffff:10.0.0.1", 3)});

	EXPECT_EQ(nrf_via_db_count(db.get()), 3u);
}

TEST(ViaDb, RejectsHostsLongerThanADnsName)
{
	std::string ok(255, 'a'), longer(256, 'a');

	EXPECT_NE(MakeDb({Self(ok.c_str(), 1)}), nullptr);
	EXPECT_EQ(CreateErr({Self(longer.c_str(), 1)}), NRF_EINVAL);
	/* The one trailing dot does not count. */
	std::string dotted = ok + ".";
	EXPECT_NE(MakeDb({Self(dotted.c_str(), 1)}), nullptr);
}

TEST(ViaDb, AllowsTheSameIdentityTwice)
{
	DbPtr db = MakeDb({Self("nrf-a", 8080), Peer("nrf-a", 8080, 3)});
	ScratchPtr s = MakeScratch(db.get());

	Each r = DoScanEach(db.get(), s.get(), {"2.0 nrf-a:8080"});
	ASSERT_EQ(r.rc, 0);
	EXPECT_TRUE(r.res.self);
	EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 3));
	EXPECT_EQ(r.res.hits, 2u);
	EXPECT_EQ(r.hits.size(), 2u);
}

TEST(ViaDb, WorksWithoutAnErrorPointer)
{
	nrf_via_identity id = Self("a", 1);
	nrf_via_db *db = nrf_via_db_create(&id, 1, nullptr);

	EXPECT_NE(db, nullptr);
	nrf_via_db_free(db);
	EXPECT_EQ(nrf_via_db_create(&id, 0, nullptr), nullptr);
}

TEST(ViaScratch, RejectsNoDatabase)
{
	int err = 0;

	EXPECT_EQ(nrf_via_scratch_create(nullptr, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	EXPECT_EQ(nrf_via_scratch_create(nullptr, nullptr), nullptr);
	nrf_via_scratch_free(nullptr);
}

TEST(ViaScratch, UpdateMakesScratchFitABiggerDatabase)
{
	DbPtr small = MakeDb({Self("nrf-a", 8080)});
	auto hosts = Hosts(1024);
	DbPtr big = MakeDb(Peers(hosts));
	ScratchPtr s = MakeScratch(small.get());

	ASSERT_EQ(nrf_via_scratch_update(s.get(), big.get()), 0);
	Each r = DoScanEach(big.get(), s.get(), {"2.0 nrf-1023.seg4.example.com:8080"});
	ASSERT_EQ(r.rc, 0);
	EXPECT_EQ(r.hits, (std::vector<Hit>{{1023, 0}}));
	/* Still good for the database it was made for. */
	Scan a = DoScan(small.get(), s.get(), {"2.0 nrf-a:8080"});
	ASSERT_EQ(a.rc, 0);
	EXPECT_TRUE(a.res.self);
}

TEST(ViaScratch, UpdateWithTheSameOrASmallerDatabaseIsHarmless)
{
	auto hosts = Hosts(64);
	DbPtr big = MakeDb(Peers(hosts));
	DbPtr small = MakeDb({Self("nrf-a", 8080)});
	ScratchPtr s = MakeScratch(big.get());

	EXPECT_EQ(nrf_via_scratch_update(s.get(), big.get()), 0);
	EXPECT_EQ(nrf_via_scratch_update(s.get(), small.get()), 0);
	EXPECT_TRUE(DoScan(small.get(), s.get(), {"2.0 nrf-a:8080"}).res.self);
	EXPECT_EQ(DoScan(big.get(), s.get(), {"2.0 nrf-0063.seg4.example.com:8080"}).res.hits, 1u);
}

TEST(ViaScratch, UpdateRejectsNullArguments)
{
	DbPtr db = MakeDb({Self("nrf-a", 8080)});
	ScratchPtr s = MakeScratch(db.get());

	EXPECT_EQ(nrf_via_scratch_update(nullptr, db.get()), NRF_EINVAL);
	EXPECT_EQ(nrf_via_scratch_update(s.get(), nullptr), NRF_EINVAL);
}

/*
 * A Hyperscan failure during the scan is NRF_EMATCHER with the members
 * counted so far. Hyperscan refuses a scratch that is already scanning:
 * here one shared with the scan whose callback is running.
 */
struct Reenter {
	const nrf_via_db *db;
	nrf_via_scratch *s;
	Scan inner;
};

static int
ScanAgain(void *ctx, uint32_t, uint32_t)
{
	Reenter *r = static_cast<Reenter *>(ctx);

	r->inner = DoScan(r->db, r->s, {"2.0 nrf-a:8080, 2.0 nrf-b:8080"});
	return 0;
}

TEST(ViaScratch, ScanWithAScratchInUseIsAMatcherError)
{
	DbPtr db = MakeDb({Self("nrf-a", 8080)});
	ScratchPtr s = MakeScratch(db.get());
	Reenter re = {db.get(), s.get(), {}};
	std::vector<std::string> lines = {"2.0 nrf-a:8080"};
	auto sl = Slices(lines);
	nrf_via_result res;

	re.inner.rc = 1;
	ASSERT_EQ(nrf_via_scan_each(db.get(), s.get(), sl.data(), sl.size(), &res,
		ScanAgain, &re), 0);
	EXPECT_TRUE(res.self);
	EXPECT_EQ(re.inner.rc, NRF_EMATCHER);
	EXPECT_EQ(re.inner.res.members, 2u);
	EXPECT_EQ(re.inner.res.hits, 0u);
	EXPECT_FALSE(re.inner.res.self);
}

/*
 * A scratch made for another database: Hyperscan either refuses it
 * (NRF_EMATCHER) or, when it already has all the new database needs (every
 * identity database is a pure-literal one of the same shape, decision
 * 0008), scans correctly. Never anything else.
 */
TEST(ViaScratch, ScanWithScratchNotMadeForTheDatabaseFailsCleanlyOrIsRight)
{
	DbPtr small = MakeDb({Self("nrf-a", 8080)});
	auto hosts = Hosts(1024);
	DbPtr big = MakeDb(Peers(hosts));
	ScratchPtr s = MakeScratch(small.get());

	Scan r = DoScan(big.get(), s.get(), {"2.0 nrf-1023.seg4.example.com:8080"});
	EXPECT_EQ(r.res.members, 1u);
	if (r.rc == NRF_EMATCHER) {
		EXPECT_EQ(r.res.hits, 0u);
	} else {
		ASSERT_EQ(r.rc, 0);
		EXPECT_EQ(r.res.hits, 1u);
		EXPECT_TRUE(nrf_via_result_has_peer(&r.res, 1023));
	}
}
