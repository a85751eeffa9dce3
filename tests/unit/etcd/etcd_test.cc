/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/etcd/etcd.c without a server: base64 as the JSON
 * gateway uses it, the messages of a watch stream (creation, events,
 * deletions, compaction, errors), and handle creation from endpoint lists.
 */
#include <gtest/gtest.h>

#include <stdlib.h>

#include <string>
#include <vector>

#include "nrf_err.h"
#include "nrf_etcd.h"

namespace {

std::string
Enc(const std::string &s)
{
	char *e = nrf_etcd_b64_encode(s.data(), s.size());
	std::string out(e);
	free(e);
	return out;
}

struct Seen {
	int calls = 0;
	int empty_calls = 0;
	std::vector<std::string> keys, values;
	std::vector<bool> deleted;
	std::vector<long long> revs;
};

int
Collect(void *arg, const struct nrf_etcd_event *ev, size_t n)
{
	Seen *s = static_cast<Seen *>(arg);

	s->calls++;
	if (n == 0)
		s->empty_calls++;
	for (size_t i = 0; i < n; i++) {
		s->keys.emplace_back(ev[i].kv.key);
		s->values.emplace_back(ev[i].kv.value, ev[i].kv.value_len);
		s->deleted.push_back(ev[i].deleted);
		s->revs.push_back(ev[i].kv.mod_revision);
	}
	return 0;
}

int
Message(const std::string &m, Seen *s, bool *created, int64_t *compact)
{
	return nrf_etcd_watch_message(m.data(), m.size(), Collect, s, created, compact);
}

} // namespace

TEST(EtcdBase64, EncodesEveryPaddingLength)
{
	EXPECT_EQ(Enc(""), "");
	EXPECT_EQ(Enc("f"), "Zg==");
	EXPECT_EQ(Enc("fo"), "Zm8=");
	EXPECT_EQ(Enc("foo"), "Zm9v");
	EXPECT_EQ(Enc("/nrfwd/x/config"), "L25yZndkL3gvY29uZmln");
}

TEST(EtcdBase64, DecodesWhatItEncodesIncludingBinary)
{
	std::string bin("\x00\xff\x10\x80 {}\n", 8);
	size_t n = 0;
	int err = 1;
	std::string e = Enc(bin);
	char *d = nrf_etcd_b64_decode(e.c_str(), &n, &err);

	ASSERT_NE(d, nullptr);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(std::string(d, n), bin);
	free(d);
}

TEST(EtcdBase64, RefusesTextThatIsNotBase64)
{
	size_t n = 0;
	int err = 0;

	EXPECT_EQ(nrf_etcd_b64_decode("abc", &n, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
	EXPECT_EQ(nrf_etcd_b64_decode("ab!d", &n, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
	EXPECT_EQ(nrf_etcd_b64_decode("a=bc", &n, &err), nullptr);
	EXPECT_EQ(err, NRF_EPARSE);
}

TEST(EtcdWatchMessage, CreationIsReportedAsAnEmptyBatch)
{
	Seen s;
	bool created = false;
	int64_t compact = 0;

	EXPECT_EQ(Message("{\"result\":{\"header\":{\"revision\":\"2\"},\"created\":true}}", &s,
		&created, &compact), 0);
	EXPECT_TRUE(created);
	EXPECT_EQ(s.calls, 1);
	EXPECT_EQ(s.empty_calls, 1);
	EXPECT_TRUE(s.keys.empty());
}

TEST(EtcdWatchMessage, EventsArriveInOrderWithDecodedKeysAndValues)
{
	Seen s;
	bool created = false;
	int64_t compact = 0;
	std::string m = "{\"result\":{\"header\":{\"revision\":\"9\"},\"events\":["
		"{\"kv\":{\"key\":\"" + Enc("/k") + "\",\"mod_revision\":\"8\",\"value\":\"" +
		Enc("{\"a\":1}") + "\"}},"
		"{\"type\":\"DELETE\",\"kv\":{\"key\":\"" + Enc("/k") + "\",\"mod_revision\":\"9\"}}"
		"]}}";

	EXPECT_EQ(Message(m, &s, &created, &compact), 0);
	EXPECT_FALSE(created);
	ASSERT_EQ(s.keys.size(), 2u);
	EXPECT_EQ(s.keys[0], "/k");
	EXPECT_EQ(s.values[0], "{\"a\":1}");
	EXPECT_FALSE(s.deleted[0]);
	EXPECT_EQ(s.revs[0], 8);
	EXPECT_TRUE(s.deleted[1]);
	EXPECT_EQ(s.values[1], "");
	EXPECT_EQ(s.revs[1], 9);
}

TEST(EtcdWatchMessage, CompactedStartIsNotAnEvent)
{
	Seen s;
	bool created = false;
	int64_t compact = 0;

	EXPECT_EQ(Message("{\"result\":{\"header\":{},\"created\":true,"
		"\"compact_revision\":\"40\"}}", &s, &created, &compact), NRF_EAGAIN);
	EXPECT_EQ(compact, 40);
	EXPECT_TRUE(s.keys.empty());
}

TEST(EtcdWatchMessage, ErrorsAndCancellationsEndTheWatch)
{
	Seen s;
	bool created = false;
	int64_t compact = 0;

	EXPECT_EQ(Message("{\"error\":{\"code\":14,\"message\":\"no leader\"}}", &s, &created,
		&compact), NRF_EPROTO);
	EXPECT_EQ(Message("{\"result\":{\"canceled\":true}}", &s, &created, &compact),
		NRF_EPROTO);
	EXPECT_EQ(Message("not json", &s, &created, &compact), NRF_EPROTO);
	EXPECT_EQ(s.calls, 0);
}

TEST(EtcdCreate, TakesAListOfHttpAndHttpsEndpoints)
{
	struct nrf_etcd_params p = {};
	int err = 1;

	p.endpoints = " http://127.0.0.1:2379/, https://h2:2379";
	struct nrf_etcd *e = nrf_etcd_create(&p, &err);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(nrf_etcd_endpoint(e), "http://127.0.0.1:2379");
	nrf_etcd_free(e);
}

TEST(EtcdCreate, RefusesOtherSchemesAndEmptyLists)
{
	struct nrf_etcd_params p = {};
	int err = 0;

	p.endpoints = "127.0.0.1:2379";
	EXPECT_EQ(nrf_etcd_create(&p, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	p.endpoints = " , ";
	EXPECT_EQ(nrf_etcd_create(&p, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
	p.endpoints = nullptr;
	EXPECT_EQ(nrf_etcd_create(&p, &err), nullptr);
	EXPECT_EQ(err, NRF_EINVAL);
}

TEST(EtcdCall, UnreachableEndpointsFailWithEioAndSayWhy)
{
	struct nrf_etcd_params p = {};
	struct nrf_etcd_kvs kvs;
	int err = 0;

	ASSERT_EQ(nrf_etcd_global_init(), 0);
	/* port 1 on loopback: refused at once */
	p.endpoints = "http://127.0.0.1:1,http://127.0.0.1:1";
	struct nrf_etcd *e = nrf_etcd_create(&p, &err);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(nrf_etcd_get(e, "/k", false, &kvs), NRF_EIO);
	EXPECT_NE(std::string(nrf_etcd_last_error(e)).find("127.0.0.1:1"), std::string::npos);
	nrf_etcd_free(e);
}
