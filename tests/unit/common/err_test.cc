#include <gtest/gtest.h>

#include <string>

#include "nrf_err.h"
#include "nrf_common.h"

TEST(Err, EveryCodeHasANameAndAText)
{
	const int codes[] = {NRF_EINVAL, NRF_ENOMEM, NRF_ERANGE, NRF_EPARSE, NRF_ENOENT,
		NRF_EEXIST, NRF_ETOOBIG, NRF_EIO, NRF_EAGAIN, NRF_ECONFIG, NRF_EMATCHER,
		NRF_ECLOSED, NRF_ETIMEDOUT, NRF_EPROTO, NRF_EFULL, NRF_EADDRINUSE, NRF_EADDRNOTAVAIL,
		NRF_ECONNREFUSED, NRF_EACCES, NRF_EUNREACH, NRF_ECONNRESET, NRF_EINTERNAL};
	for (int c : codes) {
		EXPECT_STRNE(nrf_strerror(c), "unknown error") << c;
		EXPECT_EQ(std::string(nrf_errname(c)).rfind("NRF_E", 0), 0u) << c;
	}
	EXPECT_STREQ(nrf_errname(0), "OK");
	EXPECT_STREQ(nrf_strerror(12345), "unknown error");
	EXPECT_STREQ(nrf_errname(-999), "NRF_E?");
}

TEST(Err, FatalThresholdIsTheInternalError)
{
	EXPECT_LE(NRF_EINTERNAL, NRF_ERR_FATAL);
	EXPECT_GT(NRF_EINVAL, NRF_ERR_FATAL);
}

TEST(Slice, ComparesWholeBytes)
{
	struct nrf_slice s = nrf_slice_str("abc");
	EXPECT_TRUE(nrf_slice_eq(s, "abc"));
	EXPECT_FALSE(nrf_slice_eq(s, "ab"));
	EXPECT_FALSE(nrf_slice_eq(s, "abcd"));
	EXPECT_TRUE(nrf_slice_eq(nrf_slice_str(NULL), ""));
}
