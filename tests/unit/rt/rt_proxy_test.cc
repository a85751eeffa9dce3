/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the request pipeline, lib/rt/rt_proxy.c with rt_pool.c
 * (docs/behaviour.md, docs/failures.md): a real lib/rt worker on the in-memory
 * transport (tests/unit/rt/fake_tp.c), driven by tests/fuzz/rt_world.c,
 * whose upstreams are nghttp2 servers with canned behaviours: the local
 * NRF (10.0.0.1:8000), nrf-b (priority 1), nrf-c (priority 2, apiPrefix
 * /c). The client here is nghttp2's client session on the front
 * connection. Time is virtual (world_settle()): a per-try or request
 * timeout costs nothing.
 *
 * Every test also checks the rule "every request is answered exactly
 * once": each stream gets one HEADERS (or a reset), the world ends with no
 * transaction open, and nrfwd_answer_violations_total stays 0 (a breach
 * inside lib/rt aborts this binary first: assert).
 */
#include <gtest/gtest.h>

#include <nghttp2/nghttp2.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nrf_rt.h"
#include "rt_world.h"

namespace {

struct Answer {
	int headers = 0;      /* response HEADERS frames */
	int status = 0;
	std::string upstream; /* x-fake-upstream: who answered */
	std::string cause;
	std::string retry_after;
	std::string body;
	bool end = false;
	bool reset = false;
};

/* The client: nghttp2's client session over the front fake_conn. */
class Client {
public:
	explicit Client(fake_conn *c) : c_(c)
	{
		nghttp2_session_callbacks *cbs;

		nghttp2_session_callbacks_new(&cbs);
		nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, OnBeginHeaders);
		nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnData);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrame);
		nghttp2_session_callbacks_set_on_stream_close_callback(cbs, OnClose);
		nghttp2_session_client_new(&s_, cbs, this);
		nghttp2_session_callbacks_del(cbs);
		nghttp2_submit_settings(s_, NGHTTP2_FLAG_NONE, nullptr, 0);
	}
	~Client() { nghttp2_session_del(s_); }

	/* A GET of @p path with the given extra fields. @return the stream id. */
	int32_t
	Get(const std::string &path, const std::vector<std::pair<std::string, std::string>> &extra = {})
	{
		std::vector<std::pair<std::string, std::string>> f = {{":method", "GET"},
			{":scheme", "http"}, {":authority", "nrf-a.fuzz.example:8080"},
			{":path", path}};
		std::vector<nghttp2_nv> nv;

		f.insert(f.end(), extra.begin(), extra.end());
		for (auto &p : f)
			nv.push_back({(uint8_t *)p.first.data(), (uint8_t *)p.second.data(),
				p.first.size(), p.second.size(), NGHTTP2_NV_FLAG_NONE});
		int32_t id = nghttp2_submit_request(s_, nullptr, nv.data(), nv.size(), nullptr,
			nullptr);
		EXPECT_GT(id, 0);
		answers[id];
		return id;
	}

	/* One pump, world_turn()'s extra. */
	static bool
	Io(void *arg)
	{
		Client *cl = static_cast<Client *>(arg);
		bool moved = false;
		const uint8_t *data;
		ssize_t n;
		size_t len;

		while ((n = nghttp2_session_mem_send(cl->s_, &data)) > 0) {
			EXPECT_EQ(fake_conn_push(cl->c_, data, (size_t)n), 0);
			moved = true;
		}
		const uint8_t *out = fake_conn_out(cl->c_, &len);
		if (len > 0) {
			EXPECT_EQ(nghttp2_session_mem_recv(cl->s_, out, len), (ssize_t)len);
			fake_conn_take(cl->c_, len);
			moved = true;
		}
		return moved;
	}

	std::map<int32_t, Answer> answers;

private:
	static int
	OnBeginHeaders(nghttp2_session *, const nghttp2_frame *f, void *ud)
	{
		Client *cl = static_cast<Client *>(ud);

		if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_RESPONSE)
			cl->answers[f->hd.stream_id].headers++;
		return 0;
	}
	static int
	OnHeader(nghttp2_session *, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		const uint8_t *value, size_t vlen, uint8_t, void *ud)
	{
		Answer &a = static_cast<Client *>(ud)->answers[f->hd.stream_id];
		std::string n((const char *)name, nlen), v((const char *)value, vlen);

		if (n == ":status")
			a.status = std::stoi(v);
		else if (n == "x-fake-upstream")
			a.upstream = v;
		else if (n == "retry-after")
			a.retry_after = v;
		return 0;
	}
	static int
	OnData(nghttp2_session *, uint8_t, int32_t id, const uint8_t *d, size_t len, void *ud)
	{
		static_cast<Client *>(ud)->answers[id].body.append((const char *)d, len);
		return 0;
	}
	static int
	OnFrame(nghttp2_session *, const nghttp2_frame *f, void *ud)
	{
		Client *cl = static_cast<Client *>(ud);

		if (f->hd.stream_id != 0 && (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
			(f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA))
			cl->answers[f->hd.stream_id].end = true;
		if (f->hd.type == NGHTTP2_RST_STREAM)
			cl->answers[f->hd.stream_id].reset = true;
		return 0;
	}
	static int
	OnClose(nghttp2_session *, int32_t id, uint32_t code, void *ud)
	{
		if (code != NGHTTP2_NO_ERROR)
			static_cast<Client *>(ud)->answers[id].reset = true;
		return 0;
	}

	fake_conn *c_;
	nghttp2_session *s_ = nullptr;
};

const char kDiscover[] = "/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF";
const char kProfile[] = "/nnrf-nfm/v1/nf-instances/4947a69a-f61b-4bc1-b9da-47c9c5d14b64";

class Pipeline : public ::testing::Test {
protected:
	void
	TearDown() override
	{
		if (w_ != nullptr) {
			nrf_rt_stats st;

			nrf_rt_stats_get(world_rt(w_), &st);
			EXPECT_EQ(st.answer_violations, 0u);
			cl_.reset();
			world_free(w_);
		}
	}

	/* The world with a local NRF (@p local: its mode; -1: none) and the
	 * modes of nrf-b, nrf-c; then the client connected. */
	void
	Start(int local, int b, int c, uint32_t per_try_ms = 0, uint32_t request_ms = 0,
		const char *per_client = nullptr)
	{
		world_params p = {};

		p.per_client = per_client;
		p.local = local >= 0;
		p.up[UP_LOCAL] = (uint8_t)(local >= 0 ? local : UP_DATA);
		p.up[UP_B] = (uint8_t)b;
		p.up[UP_C] = (uint8_t)c;
		p.up[UP_G] = UP_REFUSE;
		p.per_try_ms = per_try_ms;
		p.request_ms = request_ms;
		w_ = world_create(&p);
		cl_.reset(new Client(world_front_open(w_)));
	}

	/* Run until nothing moves and no transaction is open; then every
	 * stream the client opened has exactly one answer. */
	void
	Settle()
	{
		ASSERT_TRUE(world_settle_check(w_, Client::Io, cl_.get()))
			<< "a request nobody answers";
		EXPECT_EQ(world_open_xacts(w_), 0u);
		/* The request timer is a backstop: an answer it gives (late)
		 * where the pipeline should have answered is a bug too. */
		EXPECT_EQ(Stats().request_timeouts, request_timeouts_);
		for (auto &kv : cl_->answers) {
			const Answer &a = kv.second;

			/* One answer, whole: no second HEADERS, no reset after it
			 * (no test here has an answer that breaks off). */
			EXPECT_EQ(a.headers, 1) << "stream " << kv.first;
			EXPECT_TRUE(a.end) << "stream " << kv.first << " never ended";
			EXPECT_FALSE(a.reset) << "stream " << kv.first << " was reset";
		}
	}

	/* Upstreams that received requests, in order ("local", "b", "c"). */
	std::string
	Log()
	{
		static const char *const names[UP_N] = {"local", "b", "c", "g"};
		const uint8_t *ups;
		size_t n = world_up_log(w_, &ups);
		std::string s;

		for (size_t i = 0; i < n; i++)
			s += std::string(i > 0 ? "," : "") + names[ups[i]];
		return s;
	}

	nrf_rt_stats
	Stats()
	{
		nrf_rt_stats st;

		nrf_rt_stats_get(world_rt(w_), &st);
		return st;
	}

	const Answer &
	Only(int32_t id)
	{
		EXPECT_EQ(cl_->answers.size(), 1u);
		return cl_->answers[id];
	}

	world *w_ = nullptr;
	std::unique_ptr<Client> cl_;
	uint64_t request_timeouts_ = 0; /* expected */
};

/* Step 5: the local NRF is asked first; an answer that claims nothing
 * absent is relayed and nothing is forwarded. */
TEST_F(Pipeline, LocalAnswerIsRelayedAndNothingIsForwarded)
{
	Start(UP_DATA, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "local");
	EXPECT_NE(Only(id).body.find("4947a69a"), std::string::npos);
	EXPECT_EQ(Log(), "local");
	EXPECT_EQ(Stats().answered_local, 1u);
	EXPECT_EQ(Stats().forwards, 0u);
}

/* Forwarding trigger 404: the first candidate by priority answers. */
TEST_F(Pipeline, Local404IsForwardedToTheFirstCandidateByPriority)
{
	Start(UP_404, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-b");
	EXPECT_EQ(Log(), "local,b");
	EXPECT_EQ(Stats().answered_peer, 1u);
	EXPECT_EQ(Stats().forwards, 1u);
}

/* Forwarding trigger: a 200 NFDiscover answer with empty nfInstances. */
TEST_F(Pipeline, EmptyDiscoveryResultIsForwarded)
{
	Start(UP_EMPTY, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-b");
	EXPECT_EQ(Log(), "local,b");
}

/* An empty result of an operation that is not NFDiscover is no trigger. */
TEST_F(Pipeline, EmptyResultOfAnotherOperationIsRelayed)
{
	Start(UP_EMPTY, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "local");
	EXPECT_EQ(Log(), "local");
}

/* A reroute status (5xx) moves on to the next candidate in order. */
TEST_F(Pipeline, PeerRerouteStatusMovesToTheNextCandidate)
{
	Start(UP_404, UP_503, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-c");
	EXPECT_EQ(Log(), "local,b,c");
	EXPECT_EQ(Stats().reroutes, 1u);
	EXPECT_EQ(world_up_status(w_, UP_B, 503), 1u);
}

/* Rule 2: the first peer answer that is not a reroute status is relayed,
 * absence included. */
TEST_F(Pipeline, PeerAbsenceIsRelayedWhenTheLocalNrfClaimedAbsenceToo)
{
	Start(UP_404, UP_404, UP_DATA);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 404);
	EXPECT_EQ(Only(id).upstream, "nrf-b");
	EXPECT_EQ(Log(), "local,b");
}

/* Loop prevention: a candidate whose identity is in Via is skipped. */
TEST_F(Pipeline, CandidateInViaIsSkipped)
{
	Start(UP_404, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover, {{"via", "2.0 nrf-b.fuzz.example:8000"}});
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-c");
	EXPECT_EQ(Log(), "local,c");
	EXPECT_EQ(Stats().loop_prevented, 1u);
}

/* Loop detection: nrfwd's own identity in Via, answered at once (508). */
TEST_F(Pipeline, OwnIdentityInViaIsALoopAnsweredAtOnce)
{
	Start(UP_DATA, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover, {{"via", "2.0 nrf-a.fuzz.example:8080"}});
	Settle();
	EXPECT_EQ(Only(id).status, 508);
	EXPECT_EQ(Log(), "");
	EXPECT_EQ(Stats().loop_detected, 1u);
}

/* docs/failures.md table: no local NRF, every candidate in Via, nothing
 * failed: NRF_Forwarding_Loop_Prevention (508). */
TEST_F(Pipeline, EveryCandidateInViaWithoutLocalNrfIsLoopPrevention)
{
	Start(-1, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover,
		{{"via", "2.0 nrf-b.fuzz.example:8000, 2.0 nrf-c.fuzz.example:8000"}});
	Settle();
	EXPECT_EQ(Only(id).status, 508);
	EXPECT_NE(Only(id).body.find("LOOP_PREVENTED"), std::string::npos);
	EXPECT_EQ(Log(), "");
}

/* docs/failures.md table: local claimed absence, every candidate in Via:
 * the local answer. */
TEST_F(Pipeline, EveryCandidateInViaGivesTheLocalAnswer)
{
	Start(UP_404, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kProfile,
		{{"via", "2.0 nrf-b.fuzz.example:8000, 2.0 nrf-c.fuzz.example:8000"}});
	Settle();
	EXPECT_EQ(Only(id).status, 404);
	EXPECT_EQ(Log(), "local");
	EXPECT_EQ(Stats().answered_local, 1u);
}

/* A silent candidate is cut short by perTryMs; the next one answers. */
TEST_F(Pipeline, PerTryTimeoutMovesToTheNextCandidate)
{
	Start(UP_404, UP_SILENT, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-c");
	EXPECT_EQ(Log(), "local,b,c");
	EXPECT_EQ(Stats().try_timeouts, 1u);
	EXPECT_EQ(Stats().request_timeouts, 0u);
}

/* requestMs bounds the whole request: the silent local NRF fails by
 * perTryMs (600), the silent nrf-b is cut short by requestMs (1000), a
 * failed try too; nrf-c is never asked, and the rule answers
 * NRF_Local_Unavailable (503). */
TEST_F(Pipeline, RequestTimeoutAnswersWithTheFailureRule)
{
	Start(UP_SILENT, UP_SILENT, UP_DATA, 600, 1000);
	request_timeouts_ = 1;
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 503);
	EXPECT_NE(Only(id).body.find("NF_SERVICE_FAILURE"), std::string::npos);
	EXPECT_EQ(Log(), "local,b");
	EXPECT_EQ(Stats().try_timeouts, 1u);
	EXPECT_EQ(Stats().local_unavailable, 1u);
}

/* A stream reset by a candidate is a failed try: the next one answers. */
TEST_F(Pipeline, ResetByACandidateMovesToTheNext)
{
	Start(UP_404, UP_RESET, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-c");
	EXPECT_EQ(Log(), "local,b,c");
	EXPECT_GE(Stats().try_failures, 1u);
}

/* Rule 4: local absence, then every candidate failed: 504 Not Reachable. */
TEST_F(Pipeline, EveryCandidateFailedAfterLocalAbsenceIsNotReachable)
{
	Start(UP_404, UP_RESET, UP_RESET);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 504);
	EXPECT_NE(Only(id).body.find("TARGET_NF_NOT_REACHABLE"), std::string::npos);
	EXPECT_EQ(Stats().not_reachable, 1u);
}

/* Rule 3: the local NRF failed (its stream reset, and again when sent
 * once more) and a peer claims absence: not relayed, NRF_Local_Unavailable. */
TEST_F(Pipeline, PeerAbsenceAfterLocalFailureIsLocalUnavailable)
{
	Start(UP_RESET, UP_404, UP_404);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 503);
	EXPECT_NE(Only(id).body.find("NF_SERVICE_FAILURE"), std::string::npos);
	EXPECT_EQ(Stats().local_unavailable, 1u);
}

/* Rule 3: the local NRF failed, a peer's positive answer is relayed. */
TEST_F(Pipeline, PeerDataAfterLocalFailureIsRelayed)
{
	Start(UP_REFUSE, UP_DATA, UP_DATA);
	int32_t id = cl_->Get(kDiscover);
	Settle();
	EXPECT_EQ(Only(id).status, 200);
	EXPECT_EQ(Only(id).upstream, "nrf-b");
}

/* No local NRF: a pure forwarder relays the first candidate's answer. */
TEST_F(Pipeline, WithoutLocalNrfTheFirstCandidateAnswers)
{
	Start(-1, UP_404, UP_DATA);
	int32_t id = cl_->Get(kProfile);
	Settle();
	EXPECT_EQ(Only(id).status, 404);
	EXPECT_EQ(Only(id).upstream, "nrf-b");
	EXPECT_EQ(Log(), "b");
}

/* Many requests at once, over every kind of ending: each one answered
 * exactly once, none left open. */
TEST_F(Pipeline, ManyRequestsAreEachAnsweredExactlyOnce)
{
	Start(UP_404, UP_SILENT, UP_503, 0, 0);
	std::vector<int32_t> ids;

	for (int i = 0; i < 40; i++)
		ids.push_back(cl_->Get(i % 3 == 0 ? kDiscover : kProfile,
			i % 4 == 0 ? std::vector<std::pair<std::string, std::string>>{{"via",
					     "2.0 nrf-a.fuzz.example:8080"}}
				   : std::vector<std::pair<std::string, std::string>>{}));
	Settle();
	ASSERT_EQ(cl_->answers.size(), ids.size());
	for (int32_t id : ids) {
		const Answer &a = cl_->answers[id];

		EXPECT_EQ(a.headers, 1) << "stream " << id;
		EXPECT_TRUE(a.status == 508 || a.status == 504) << "stream " << id << ": "
								 << a.status;
	}
	nrf_rt_stats st = Stats();
	EXPECT_EQ(st.requests, ids.size());
}

} // namespace

/* runtime.limits.perClient (decision 0055). The fake transport tells no
 * address, so these clients are NF instances named by their User-Agent. */
const char kAmf[] = "AMF-54804518-4191-46b3-955c-ac631f953ed8";
const char kSmf[] = "SMF-0b3c1d2e-0000-4000-8000-000000000001";

/* maxStreams 2: the third request of one client while two are in progress
 * (the local NRF is silent until perTryMs) is answered 429 at once, another
 * client is not affected, and once the two are over the client has its
 * streams back. */
TEST_F(Pipeline, MaxStreamsRefusesTheExcessAndGivesStreamsBackWhenTheyClose)
{
	Start(UP_SILENT, UP_DATA, UP_DATA, 0, 0, R"({"maxStreams": 2, "keyBy": "nfInstance"})");
	int32_t a1 = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	int32_t a2 = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	int32_t a3 = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	int32_t s1 = cl_->Get(kDiscover, {{"user-agent", kSmf}});
	Settle();
	EXPECT_EQ(cl_->answers[a1].status, 200);
	EXPECT_EQ(cl_->answers[a2].status, 200);
	EXPECT_EQ(cl_->answers[a3].status, 429);
	EXPECT_EQ(cl_->answers[a3].retry_after, "1");
	EXPECT_NE(cl_->answers[a3].body.find("NF_CONGESTION_RISK"), std::string::npos);
	EXPECT_EQ(cl_->answers[s1].status, 200);
	EXPECT_EQ(Stats().client_limited[NRF_RT_LIMIT_STREAMS], 1u);
	EXPECT_EQ(Stats().client_limited[NRF_RT_LIMIT_RATE], 0u);
	EXPECT_EQ(Stats().req[NRF_OP_NF_DISCOVER][NRF_RT_OUT_CLIENT_LIMITED], 1u);
	EXPECT_EQ(Stats().clients_tracked, 2u);
	/* both streams closed: two more at once are fine */
	int32_t a4 = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	int32_t a5 = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	Settle();
	EXPECT_EQ(cl_->answers[a4].status, 200);
	EXPECT_EQ(cl_->answers[a5].status, 200);
	EXPECT_EQ(Stats().client_limited[NRF_RT_LIMIT_STREAMS], 1u);
}

/* Requests nrfwd answers at once (a loop: 508) take no transaction and hold
 * no stream: with maxStreams 1, the next request of the client goes on. */
TEST_F(Pipeline, AnswersGivenAtOnceHoldNoStream)
{
	Start(UP_DATA, UP_DATA, UP_DATA, 0, 0, R"({"maxStreams": 1, "keyBy": "nfInstance"})");
	int32_t l1 = cl_->Get(kDiscover, {{"user-agent", kAmf}, {"via", "2.0 nrf-a.fuzz.example:8080"}});
	int32_t l2 = cl_->Get(kDiscover, {{"user-agent", kAmf}, {"via", "2.0 nrf-a.fuzz.example:8080"}});
	int32_t ok = cl_->Get(kDiscover, {{"user-agent", kAmf}});
	Settle();
	EXPECT_EQ(cl_->answers[l1].status, 508);
	EXPECT_EQ(cl_->answers[l2].status, 508);
	EXPECT_EQ(cl_->answers[ok].status, 200);
	EXPECT_EQ(Stats().client_limited[NRF_RT_LIMIT_STREAMS], 0u);
}

/* ratePerSecond 1, burst 2: a client that was quiet sends two at once, the
 * third is refused before its Via is read (a loop is limited too), with
 * Retry-After from its bucket; a request whose User-Agent names no NF
 * instance counts under its address (none here: not limited). */
TEST_F(Pipeline, RateLimitRefusesOverTheBurstBeforeTheLoopCheck)
{
	Start(UP_DATA, UP_DATA, UP_DATA, 0, 0,
		R"({"ratePerSecond": 1, "burst": 2, "keyBy": "nfInstance"})");
	int32_t a1 = cl_->Get(kProfile, {{"user-agent", kAmf}});
	int32_t a2 = cl_->Get(kProfile, {{"user-agent", kAmf}});
	int32_t a3 = cl_->Get(kProfile, {{"user-agent", kAmf}, {"via", "2.0 nrf-a.fuzz.example:8080"}});
	int32_t s1 = cl_->Get(kProfile, {{"user-agent", kSmf}});
	int32_t c1 = cl_->Get(kProfile, {{"user-agent", "curl/8.5.0"}});
	Settle();
	EXPECT_EQ(cl_->answers[a1].status, 200);
	EXPECT_EQ(cl_->answers[a2].status, 200);
	EXPECT_EQ(cl_->answers[a3].status, 429);
	EXPECT_EQ(cl_->answers[a3].retry_after, "1");
	EXPECT_EQ(cl_->answers[s1].status, 200);
	EXPECT_EQ(cl_->answers[c1].status, 200);
	EXPECT_EQ(Stats().client_limited[NRF_RT_LIMIT_RATE], 1u);
	EXPECT_EQ(Stats().loop_detected, 0u);
	EXPECT_EQ(Stats().req[NRF_OP_NF_PROFILE_RETRIEVAL][NRF_RT_OUT_CLIENT_LIMITED], 1u);
}
