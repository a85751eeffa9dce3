// SPDX-License-Identifier: BSD-3-Clause
// nrf_fwd_links_*: Location values and HAL "href" members of an
// upstream's answers pointed at the apiRoot the client used (decision 0013).
#include <gtest/gtest.h>

#include <jansson.h>

#include <string>
#include <vector>

#include "fwd_test_util.h"

namespace {

/* The upstream of the examples: an NRF at 10.0.0.3:8080 (and its fqdn),
 * seen by the client through nrfwd at nrf-a.example.com:8080. */
const char *kDoc = R"({"generalOptions": {"ocnrfHost": "nrf-a.example.com", "ocnrfPort": 8080},
  "forwardingOptions": {"featureStatus": "ENABLED", "nrfHostConfig": [
    {"fqdn": "nrf-e.seg2.example.com", "ipv4Address": "10.0.0.3", "port": 8080, "rewriteLinks": true},
    {"scheme": "https", "ipv6Address": "2001:db8::e", "apiPrefix": "/nrf/e"},
    {"fqdn": "nrf-h.example.com"}]},
  "runtime": {"localNrf": {"address": "10.0.0.9", "port": 8081}}})";

struct Links {
	CfgPtr cfg;
	nrf_fwd_links l = {};

	explicit Links(int peer, const char *to_auth = "nrf-a.example.com:8080",
		const char *to_scheme = "http")
	{
		cfg = LoadCfg(kDoc);
		if (peer >= 0)
			nrf_fwd_links_peer(&l, &cfg->peers[peer]);
		else
			nrf_fwd_links_local(&l, &cfg->rt.local_nrf);
		l.to_scheme = nrf_slice_str(to_scheme);
		l.to_authority = nrf_slice_str(to_auth);
	}
};

/* Result of nrf_fwd_links_uri(): the new value, or the input when 0. */
struct Out {
	int rc;
	std::string s;
};

Out
Uri(const nrf_fwd_links &l, const std::string &in, size_t cap = 4096)
{
	std::vector<char> buf(cap + 1, '#');
	size_t n = 12345;
	int rc = nrf_fwd_links_uri(&l, in.data(), in.size(), buf.data(), cap, &n);
	if (rc == 1) {
		EXPECT_LE(n, cap);
		EXPECT_EQ(buf[cap], '#') << "wrote past cap";
		return {rc, std::string(buf.data(), n)};
	}
	EXPECT_EQ(n, 12345u) << "out_len written without a rewrite";
	return {rc, in};
}

Out
Json(const nrf_fwd_links &l, const std::string &in, size_t cap = 1 << 16)
{
	std::vector<char> buf(cap + 1, '#');
	size_t n = 12345;
	int rc = nrf_fwd_links_json(&l, in.data(), in.size(), buf.data(), cap, &n);
	if (rc > 0) {
		EXPECT_LE(n, cap);
		EXPECT_EQ(buf[cap], '#') << "wrote past cap";
		return {rc, std::string(buf.data(), n)};
	}
	EXPECT_EQ(n, 12345u) << "out_len written without a rewrite";
	if (rc == 0) {
		EXPECT_EQ(buf[0], '#') << "output written although nothing changed";
	}
	return {rc, in};
}

/* Both texts as JSON must be equal values. */
void
ExpectJsonEq(const std::string &got, const std::string &want)
{
	json_error_t e;
	json_t *a = json_loadb(got.data(), got.size(), 0, &e);
	ASSERT_NE(a, nullptr) << "not JSON: " << e.text << "\n" << got;
	json_t *b = json_loadb(want.data(), want.size(), 0, &e);
	ASSERT_NE(b, nullptr) << "bad expectation: " << e.text;
	EXPECT_TRUE(json_equal(a, b)) << got << "\nwant\n" << want;
	json_decref(a);
	json_decref(b);
}

} // namespace

/* ------------------------------------------------------------------------ */
/* Origins from the configuration                                             */

TEST(FwdLinks, APeerHasOneOriginPerConfiguredIdentity)
{
	Links e(0);
	ASSERT_EQ(e.l.n_from, 2);
	EXPECT_STREQ(e.l.from[0].host, "nrf-e.seg2.example.com");
	EXPECT_STREQ(e.l.from[1].host, "10.0.0.3");
	EXPECT_EQ(e.l.from[1].port, 8080);
	EXPECT_EQ(e.l.from[1].scheme, NRF_SCHEME_HTTP);
	EXPECT_STREQ(e.l.from[1].api_prefix, "");
	Links v6(1);
	ASSERT_EQ(v6.l.n_from, 1);
	EXPECT_STREQ(v6.l.from[0].host, "2001:db8::e");
	EXPECT_EQ(v6.l.from[0].port, 443);
	EXPECT_EQ(v6.l.from[0].scheme, NRF_SCHEME_HTTPS);
	EXPECT_STREQ(v6.l.from[0].api_prefix, "/nrf/e");
}

TEST(FwdLinks, TheLocalNrfHasItsAddressAsOriginAndNoneWhenAbsent)
{
	Links loc(-1);
	ASSERT_EQ(loc.l.n_from, 1);
	EXPECT_STREQ(loc.l.from[0].host, "10.0.0.9");
	EXPECT_EQ(loc.l.from[0].port, 8081);
	nrf_cfg_endpoint none = {};
	none.address = "";
	nrf_fwd_links_local(&loc.l, &none);
	EXPECT_EQ(loc.l.n_from, 0);
	EXPECT_EQ(Uri(loc.l, "http://10.0.0.9:8081/x").rc, 0);
}

/* ------------------------------------------------------------------------ */
/* Location                                                                   */

TEST(FwdLinks, RewritesTheLocationOfANfRegisterAnswer)
{
	Links e(0);
	Out o = Uri(e.l, "http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/"
			 "4947a69a-f61b-4bc1-b9da-47c9c5d14b64");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, "http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances/"
		       "4947a69a-f61b-4bc1-b9da-47c9c5d14b64");
	o = Uri(e.l, "http://nrf-e.seg2.example.com:8080/nnrf-nfm/v1/subscriptions/s-1");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, "http://nrf-a.example.com:8080/nnrf-nfm/v1/subscriptions/s-1");
}

TEST(FwdLinks, TheClientSchemeAndAuthorityAreUsedAsGiven)
{
	Links e(0, "[2001:db8::a]:443", "https");
	Out o = Uri(e.l, "http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/x?y=1#f");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, "https://[2001:db8::a]:443/nnrf-nfm/v1/nf-instances/x?y=1#f");
}

TEST(FwdLinks, SchemeAndHostMatchCaseInsensitivelyAndATrailingDotIsIgnored)
{
	Links e(0);
	EXPECT_EQ(Uri(e.l, "HTTP://NRF-E.Seg2.Example.COM:8080/a").s,
		"http://nrf-a.example.com:8080/a");
	EXPECT_EQ(Uri(e.l, "http://nrf-e.seg2.example.com.:8080/a").s,
		"http://nrf-a.example.com:8080/a");
}

TEST(FwdLinks, ThePathIsCaseSensitiveAndKeptByteForByte)
{
	Links e(0);
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080/NNRF-NFM/v1/%41b").s,
		"http://nrf-a.example.com:8080/NNRF-NFM/v1/%41b");
}

TEST(FwdLinks, TheOriginMustEndAtAPathQueryFragmentOrTheEnd)
{
	Links e(0);
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080").s, "http://nrf-a.example.com:8080");
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080?q").s, "http://nrf-a.example.com:8080?q");
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080#f").s, "http://nrf-a.example.com:8080#f");
	/* a prefix of the upstream's own origin is not enough */
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:80801/nnrf-nfm/v1/nf-instances").rc, 0);
	EXPECT_EQ(Uri(e.l, "http://10.0.0.33:8080/nnrf-nfm/v1/nf-instances").rc, 0);
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080.evil/x").rc, 0);
	EXPECT_EQ(Uri(e.l, "http://xnrf-e.seg2.example.com:8080/x").rc, 0);
}

TEST(FwdLinks, OtherSchemesPortsHostsAndUserinfoAreLeftAlone)
{
	Links e(0);
	for (const char *u : {
		     "https://10.0.0.3:8080/x",           /* another scheme */
		     "http://10.0.0.3:8081/x",            /* another port */
		     "http://10.0.0.3/x",                 /* 80 is not 8080 */
		     "http://10.0.0.4:8080/x",            /* another host */
		     "http://user@10.0.0.3:8080/x",       /* userinfo */
		     "http://10.0.0.3:8080@evil:8080/x",  /* userinfo */
		     "http://10.0.0.3:80a/x",             /* not a port */
		     "http://10.0.0.3:99999999999/x",     /* port out of range */
		     "http:/10.0.0.3:8080/x",             /* not an authority */
		     "//10.0.0.3:8080/x",                 /* scheme-relative */
		     "/nnrf-nfm/v1/nf-instances/x",       /* relative */
		     "",
	     }) {
		Out o = Uri(e.l, u);
		EXPECT_EQ(o.rc, 0) << u << " -> " << o.s;
	}
}

TEST(FwdLinks, AnAbsentOrEmptyPortIsTheSchemeDefault)
{
	Links h(2); /* nrf-h.example.com, http, port 80 by default */
	EXPECT_EQ(Uri(h.l, "http://nrf-h.example.com/a").s, "http://nrf-a.example.com:8080/a");
	EXPECT_EQ(Uri(h.l, "http://nrf-h.example.com:/a").s, "http://nrf-a.example.com:8080/a");
	EXPECT_EQ(Uri(h.l, "http://nrf-h.example.com:80/a").s, "http://nrf-a.example.com:8080/a");
	EXPECT_EQ(Uri(h.l, "http://nrf-h.example.com:080/a").s, "http://nrf-a.example.com:8080/a");
	EXPECT_EQ(Uri(h.l, "http://nrf-h.example.com:443/a").rc, 0);
	Links v6(1); /* https [2001:db8::e], port 443 */
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]/nrf/e/x").s, "http://nrf-a.example.com:8080/x");
	EXPECT_EQ(Uri(v6.l, "https://[2001:DB8::E]:443/nrf/e/x").s,
		"http://nrf-a.example.com:8080/x");
}

TEST(FwdLinks, TheApiPrefixIsPartOfTheOriginAndIsReplacedWithIt)
{
	Links v6(1);
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/nrf/e/nnrf-nfm/v1/nf-instances/x").s,
		"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances/x");
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/nrf/e").s, "http://nrf-a.example.com:8080");
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/nrf/e?x").s,
		"http://nrf-a.example.com:8080?x");
	/* without the prefix, or with a longer segment, it is not this apiRoot */
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/nnrf-nfm/v1/nf-instances/x").rc, 0);
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/nrf/ee/x").rc, 0);
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e]:443/NRF/e/x").rc, 0);
	/* a bracketed IPv6 literal is compared as text */
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8:0::e]:443/nrf/e/x").rc, 0);
	EXPECT_EQ(Uri(v6.l, "https://[2001:db8::e/nrf/e/x").rc, 0);
}

TEST(FwdLinks, AValueThatIsAlreadyTheClientFacingOneNeedsNoCopy)
{
	Links e(0, "10.0.0.3:8080");
	EXPECT_EQ(Uri(e.l, "http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/x").rc, 0);
}

TEST(FwdLinks, LocationOutputTooSmallIsAnError)
{
	Links e(0);
	std::string in = "http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/x";
	std::string want = "http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances/x";
	EXPECT_EQ(Uri(e.l, in, want.size() - 1).rc, NRF_ETOOBIG);
	Out o = Uri(e.l, in, want.size());
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, want);
}

TEST(FwdLinks, RefusesArgumentsAndAClientPrefixThatCannotBeWrittenAsIs)
{
	Links e(0);
	char buf[256];
	size_t n;
	std::string in = "http://10.0.0.3:8080/x";
	EXPECT_EQ(nrf_fwd_links_uri(nullptr, in.data(), in.size(), buf, sizeof(buf), &n), NRF_EINVAL);
	EXPECT_EQ(nrf_fwd_links_uri(&e.l, in.data(), in.size(), buf, sizeof(buf), nullptr),
		NRF_EINVAL);
	EXPECT_EQ(nrf_fwd_links_json(&e.l, nullptr, 3, buf, sizeof(buf), &n), NRF_EINVAL);
	for (const char *bad : {"", "a b", "a\"b", "a\\b", "a\r\nb", "\xc3\xa9"}) {
		Links x(0, bad);
		EXPECT_EQ(nrf_fwd_links_uri(&x.l, in.data(), in.size(), buf, sizeof(buf), &n), NRF_EINVAL)
			<< bad;
		EXPECT_EQ(nrf_fwd_links_json(&x.l, in.data(), in.size(), buf, sizeof(buf), &n),
			NRF_EINVAL)
			<< bad;
	}
	Links noscheme(0, "nrf-a:8080", "");
	EXPECT_EQ(nrf_fwd_links_uri(&noscheme.l, in.data(), in.size(), buf, sizeof(buf), &n),
		NRF_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* JSON bodies                                                                */

TEST(FwdLinks, RewritesAnNfListRetrievalAnswer)
{
	Links e(0);
	/* TS 29.510 NFListRetrieval, 200 application/json: a UriList (HAL). */
	std::string in = R"({"_links":{"self":{"href":"http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances?nf-type=AMF"},)"
			 R"("items":[{"href":"http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/a1"},)"
			 R"({"href":"http://nrf-e.seg2.example.com:8080/nnrf-nfm/v1/nf-instances/a2"}]},)"
			 R"("totalItemCount":2})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 3);
	EXPECT_EQ(o.s,
		R"({"_links":{"self":{"href":"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances?nf-type=AMF"},)"
		R"("items":[{"href":"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances/a1"},)"
		R"({"href":"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances/a2"}]},)"
		R"("totalItemCount":2})");
}

TEST(FwdLinks, NestedLinksWhitespaceAndKeyOrderDoNotMatter)
{
	Links e(0);
	std::string in = "{\n  \"totalItemCount\" : 1,\n  \"_links\" : {\n    \"items\" : [ {\n"
			 "      \"templated\" : false, \"href\"\t:\r\n \"http://10.0.0.3:8080/a\"\n"
			 "    } ],\n    \"self\" : { \"deep\" : { \"href\" : \"http://10.0.0.3:8080/b\" } }\n"
			 "  }\n}";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 2);
	ExpectJsonEq(o.s, R"({"totalItemCount":1,"_links":{"items":[{"templated":false,)"
			  R"("href":"http://nrf-a.example.com:8080/a"}],)"
			  R"("self":{"deep":{"href":"http://nrf-a.example.com:8080/b"}}}})");
	/* everything but the origins is byte for byte the input */
	std::string back = o.s;
	for (size_t at; (at = back.find("http://nrf-a.example.com:8080")) != std::string::npos;)
		back.replace(at, 29, "http://10.0.0.3:8080");
	EXPECT_EQ(back, in);
}

TEST(FwdLinks, NfAddressesAndOtherUrisAreNeverTouched)
{
	Links e(0);
	/* An NFProfile: its addresses are the NF's, even when they equal the
	 * upstream's; callback URIs and string values "href" are not links. */
	std::string in = R"({"nfInstanceId":"4947a69a","nfType":"AMF","nfStatus":"REGISTERED",)"
			 R"("fqdn":"10.0.0.3","ipv4Addresses":["10.0.0.3"],)"
			 R"("nfInstanceUri":"http://10.0.0.3:8080/nnrf-nfm/v1/nf-instances/4947a69a",)"
			 R"("nfServices":[{"serviceInstanceId":"s1","scheme":"http","fqdn":"10.0.0.3",)"
			 R"("ipEndPoints":[{"ipv4Address":"10.0.0.3","port":8080}],)"
			 R"("apiPrefix":"http://10.0.0.3:8080"}],)"
			 R"("nfStatusNotificationUri":"http://10.0.0.3:8080/notify",)"
			 R"("note":"href","list":["href", "http://10.0.0.3:8080/x"],)"
			 R"("HREF":"http://10.0.0.3:8080/upper","hrefs":"http://10.0.0.3:8080/plural"})";
	EXPECT_EQ(Json(e.l, in).rc, 0);
}

TEST(FwdLinks, AnHrefThatIsNotAStringIsSkippedAndTheScanGoesOn)
{
	Links e(0);
	std::string in = R"({"a":{"href":null},"b":{"href":{"href":"http://10.0.0.3:8080/x"}},)"
			 R"("c":{"href":["http://10.0.0.3:8080/in-array"]},"d":{"href":12}})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 1);
	ExpectJsonEq(o.s, R"({"a":{"href":null},"b":{"href":{"href":"http://nrf-a.example.com:8080/x"}},)"
			  R"("c":{"href":["http://10.0.0.3:8080/in-array"]},"d":{"href":12}})");
}

TEST(FwdLinks, EscapedSlashesMatchAndTheRestKeepsItsEscapes)
{
	Links e(0);
	/* what a JSON encoder that escapes '/' writes (PHP, some Java ones) */
	std::string in = R"({"_links":{"self":{"href":"http:\/\/10.0.0.3:8080\/nnrf-nfm\/v1\/nf-instances"}}})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"_links":{"self":{"href":"http://nrf-a.example.com:8080\/nnrf-nfm\/v1\/nf-instances"}}})");
	ExpectJsonEq(o.s, R"({"_links":{"self":{"href":"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances"}}})");
}

TEST(FwdLinks, UnicodeEscapesDecodeInTheOriginAndInTheMemberName)
{
	Links e(0);
	std::string in = R"({"hr\u0065f":"\u0068ttp://10.0.0.3\u003a8080\u002fa\"b"})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"hr\u0065f":"http://nrf-a.example.com:8080\u002fa\"b"})");
	ExpectJsonEq(o.s, R"({"href":"http://nrf-a.example.com:8080/a\"b"})");
}

TEST(FwdLinks, EscapesThatCannotBeInAnOriginAreLeftAlone)
{
	Links e(0);
	for (const char *in : {
		     R"({"href":"http://10.0.0.3\u00e98080/a"})",   /* non-ASCII */
		     R"({"href":"http://10.0.0.3:8080\u0000/a"})",  /* NUL */
		     R"({"href":"http://10.0.0.3:8080\q/a"})",      /* not an escape */
		     R"({"href":"http://10.0.0.3:8080\u00"})",      /* cut short */
		     R"({"href":"http://10.0.0.3:8080\"/a"})",      /* a quote in the port */
		     R"({"href":"http://10.0.0.3:8080\n/a"})",      /* a newline */
	     }) {
		Out o = Json(e.l, in);
		EXPECT_EQ(o.rc, 0) << in << " -> " << o.s;
	}
	/* an undecodable escape after the origin does not matter */
	Out o = Json(e.l, R"({"href":"http://10.0.0.3:8080/caf\u00e9"})");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"href":"http://nrf-a.example.com:8080/caf\u00e9"})");
}

TEST(FwdLinks, APrefixThatOnlyPartlyMatchesIsNotRewrittenInABody)
{
	Links e(0);
	std::string in = R"({"_links":{"self":{"href":"http://10.0.0.3:80801/nnrf-nfm/v1/nf-instances"},)"
			 R"("items":[{"href":"http://10.0.0.3:8080x/a"},{"href":"http://10.0.0.3:8080"},)"
			 R"({"href":"http://10.0.0.3:808"}]}})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"_links":{"self":{"href":"http://10.0.0.3:80801/nnrf-nfm/v1/nf-instances"},)"
		       R"("items":[{"href":"http://10.0.0.3:8080x/a"},{"href":"http://nrf-a.example.com:8080"},)"
		       R"({"href":"http://10.0.0.3:808"}]}})");
}

TEST(FwdLinks, AnOriginLongerThanTheWindowIsLeftAlone)
{
	Links e(0);
	std::string host(NRF_FWD_LINKS_WINDOW, 'h');
	std::string in = "{\"href\":\"http://" + host + ":8080/a\"}";
	EXPECT_EQ(Json(e.l, in).rc, 0);
	/* a long link whose origin fits is rewritten */
	std::string tail(3 * NRF_FWD_LINKS_WINDOW, 'p');
	Out o = Json(e.l, "{\"href\":\"http://10.0.0.3:8080/" + tail + "\"}");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, "{\"href\":\"http://nrf-a.example.com:8080/" + tail + "\"}");
}

TEST(FwdLinks, AnUnchangedBodyIsNotCopied)
{
	Links e(0);
	for (const char *in : {
		     R"({"_links":{"self":{"href":"http://nrf-a.example.com:8080/nnrf-nfm/v1/nf-instances"}}})",
		     R"({"nfInstances":[],"validityPeriod":3600})",
		     R"({"title":"Not Found","status":404,"cause":"DATA_NOT_FOUND"})",
		     "",
		     "not json at all \"href\":\"http://10.0.0.3:8080/",
		     R"({"href":"http://10.0.0.3:8080/unterminated)",
		     R"({"href")",
		     R"({"href" :  )",
		     R"("\\"href":"http://10.0.0.3:8080/a")",
	     }) {
		Out o = Json(e.l, in);
		EXPECT_EQ(o.rc, 0) << in << " -> " << o.s;
	}
	/* already the client-facing origin: counted as nothing to do */
	Links same(0, "10.0.0.3:8080");
	EXPECT_EQ(Json(same.l, R"({"href":"http://10.0.0.3:8080/a"})").rc, 0);
}

TEST(FwdLinks, AStringEndingInEscapedBackslashesEndsWhereItShould)
{
	Links e(0);
	std::string in = R"({"x":"a\\","href":"http://10.0.0.3:8080/a","y":"\\\"href\":\"http://10.0.0.3:8080/no"})";
	Out o = Json(e.l, in);
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"x":"a\\","href":"http://nrf-a.example.com:8080/a","y":"\\\"href\":\"http://10.0.0.3:8080/no"})");
}

TEST(FwdLinks, BodyOutputTooSmallIsAnErrorAtEveryCut)
{
	Links e(0);
	std::string in = R"({"_links":{"self":{"href":"http://10.0.0.3:8080/a"},"items":[{"href":"http://10.0.0.3:8080/b"}]},"n":1})";
	Out full = Json(e.l, in);
	ASSERT_EQ(full.rc, 2);
	for (size_t cap = 0; cap < full.s.size(); cap++)
		EXPECT_EQ(Json(e.l, in, cap).rc, NRF_ETOOBIG) << cap;
	Out exact = Json(e.l, in, full.s.size());
	EXPECT_EQ(exact.rc, 2);
	EXPECT_EQ(exact.s, full.s);
}

TEST(FwdLinks, ABodyCanShrink)
{
	Links e(0, "a:1");
	Out o = Json(e.l, R"({"href":"http://nrf-e.seg2.example.com:8080/x"})");
	EXPECT_EQ(o.rc, 1);
	EXPECT_EQ(o.s, R"({"href":"http://a:1/x"})");
}

TEST(FwdLinks, ReadsNoByteOutsideTheInput)
{
	/* Every prefix of an answer, in a buffer of exactly its size: ASan or
	 * valgrind would see a read past the end. */
	Links e(0);
	std::string in = R"({"_links":{"self":{"href":"http:\/\/10.0.0.3:8080\/a\u0041"},)"
			 R"("items":[{"hr\u0065f" : "http://10.0.0.3:8080/b\\"}]}})";
	for (size_t n = 0; n <= in.size(); n++) {
		std::vector<char> exact(in.begin(), in.begin() + n);
		std::vector<char> out(4096);
		size_t len;
		int rc = nrf_fwd_links_json(&e.l, exact.data(), n, out.data(), out.size(), &len);
		EXPECT_GE(rc, 0) << n;
		rc = nrf_fwd_links_uri(&e.l, exact.data(), n, out.data(), out.size(), &len);
		EXPECT_GE(rc, 0) << n;
	}
}

TEST(FwdLinks, JsonContentTypes)
{
	for (const char *ct : {"application/json", "Application/JSON", "application/json; charset=utf-8",
		     " application/json ", "application/problem+json", "application/hal+json;v=1",
		     "application/merge-patch+json"})
		EXPECT_TRUE(nrf_fwd_links_json_type(nrf_slice_str(ct))) << ct;
	for (const char *ct : {"", "text/html", "application/jsonx", "application/+json",
		     "text/json", "application/json-patch", "application/xml", "json"})
		EXPECT_FALSE(nrf_fwd_links_json_type(nrf_slice_str(ct))) << ct;
	EXPECT_FALSE(nrf_fwd_links_json_type(nrf_slice{nullptr, 0}));
}
