#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "nrf_log.h"

static size_t
CountLines(const std::string &s)
{
	size_t n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

TEST(LogRateLimit, OneSiteLogsAtMostTheBurstPerSecond)
{
	struct nrf_log_rl rl = {};
	testing::internal::CaptureStderr();
	for (int i = 0; i < 100; i++)
		nrf_log_rl(&rl, NRF_LOG_WARN, "test", "event %d", i);
	std::string out = testing::internal::GetCapturedStderr();
	EXPECT_EQ(CountLines(out), (size_t)NRF_LOG_RL_BURST);
	EXPECT_EQ(rl.suppressed, 100u - NRF_LOG_RL_BURST);
}

TEST(LogRateLimit, SeveralThreadsOnOneSiteStayWithinTheBurst)
{
	struct nrf_log_rl rl = {};
	testing::internal::CaptureStderr();
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([&rl] {
			for (int i = 0; i < 1000; i++)
				nrf_log_rl(&rl, NRF_LOG_WARN, "test", "event");
		});
	for (auto &t : ts)
		t.join();
	std::string out = testing::internal::GetCapturedStderr();
	/* One window (the loops take far less than a second): the burst only. */
	EXPECT_LE(CountLines(out), (size_t)NRF_LOG_RL_BURST);
	EXPECT_EQ(rl.in_window, 4000u);
}

TEST(LogRateLimit, LevelsAboveTheSetOneArePrintedNever)
{
	struct nrf_log_rl rl = {};
	enum nrf_log_level old = nrf_log_get_level();
	nrf_log_set_level(NRF_LOG_ERR);
	testing::internal::CaptureStderr();
	nrf_log_rl(&rl, NRF_LOG_INFO, "test", "hidden");
	nrf_log(NRF_LOG_WARN, "test", "hidden too");
	EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
	nrf_log_set_level(old);
}
