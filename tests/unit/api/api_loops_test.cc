/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of GET /loops' document (lib/api/api_loops.c): most frequent
 * first, ?limit, the fields of each path, wall-clock times from the
 * monotonic ones, null for what an event does not have.
 */
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <jansson.h>

#include "api_int.h"

namespace {

constexpr uint64_t kSec = 1000000000ull;

nrf_rt_loop
Loop(int kind, const char *path, uint64_t count, uint64_t first_s, uint64_t last_s)
{
	nrf_rt_loop e = {};

	e.kind = (uint8_t)kind;
	snprintf(e.path, sizeof(e.path), "%s", path);
	e.count = count;
	e.first_ns = first_s * kSec;
	e.last_ns = last_s * kSec;
	return e;
}

TEST(LoopsDoc, SortedLimitedAndComplete)
{
	nrf_rt_loop v[3] = {
		Loop(NRF_RT_LOOP_HOP_LIMIT, "a:1", 2, 100, 101),
		Loop(NRF_RT_LOOP_PREVENTED, "a:1 b:2", 50, 90, 110),
		Loop(NRF_RT_LOOP_DETECTED, "a:1 b:2 c:3", 7, 100, 119),
	};
	snprintf(v[1].skipped, sizeof(v[1].skipped), "a:1");
	snprintf(v[1].entry, sizeof(v[1].entry), "/forwardingOptions/nrfHostConfig/0");
	snprintf(v[1].client, sizeof(v[1].client), "10.0.0.9:4242");
	snprintf(v[1].rid, sizeof(v[1].rid), "rid-1");
	/* now: 120 s on the monotonic clock, 2026-12-07T00:00:00Z on the wall */
	const uint64_t real = 1796601600ull * kSec;
	json_t *o = api_loops_doc(v, 3, 4, "c:3", 2, 2, 120 * kSec, real);

	ASSERT_NE(o, nullptr);
	EXPECT_STREQ(json_string_value(json_object_get(o, "identity")), "c:3");
	EXPECT_EQ(json_integer_value(json_object_get(o, "distinctPaths")), 3);
	EXPECT_EQ(json_integer_value(json_object_get(o, "dropped")), 4);
	EXPECT_EQ(json_integer_value(json_object_get(o, "entriesPerWorker")), NRF_RT_LOOP_ENTRIES);
	json_t *paths = json_object_get(o, "paths");
	ASSERT_EQ(json_array_size(paths), 2u); /* limit */
	json_t *p = json_array_get(paths, 0);
	EXPECT_STREQ(json_string_value(json_object_get(p, "kind")), "prevented");
	json_t *path = json_object_get(p, "path");
	ASSERT_EQ(json_array_size(path), 2u);
	EXPECT_STREQ(json_string_value(json_array_get(path, 1)), "b:2");
	EXPECT_STREQ(json_string_value(json_object_get(p, "skipped")), "a:1");
	EXPECT_STREQ(json_string_value(json_object_get(p, "entry")),
		"/forwardingOptions/nrfHostConfig/0");
	EXPECT_EQ(json_integer_value(json_object_get(p, "count")), 50);
	EXPECT_STREQ(json_string_value(json_object_get(p, "firstSeen")), "2026-12-06T23:59:30.000Z");
	EXPECT_STREQ(json_string_value(json_object_get(p, "lastSeen")), "2026-12-06T23:59:50.000Z");
	EXPECT_DOUBLE_EQ(json_real_value(json_object_get(p, "lastSeenSecondsAgo")), 10.0);
	EXPECT_DOUBLE_EQ(json_real_value(json_object_get(p, "ratePerSecond")), 50.0 / 30.0);
	EXPECT_STREQ(json_string_value(json_object_get(p, "client")), "10.0.0.9:4242");
	EXPECT_STREQ(json_string_value(json_object_get(p, "requestId")), "rid-1");
	p = json_array_get(paths, 1);
	EXPECT_STREQ(json_string_value(json_object_get(p, "kind")), "detected");
	EXPECT_TRUE(json_is_null(json_object_get(p, "skipped")));
	EXPECT_TRUE(json_is_null(json_object_get(p, "requestId")));
	json_decref(o);
}

TEST(LoopsDoc, EmptyAndRendered)
{
	char *t = api_loops_render(nullptr, 0, 0, "a:1", 1, SIZE_MAX, kSec, kSec);

	ASSERT_NE(t, nullptr);
	json_t *o = json_loads(t, 0, nullptr);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(json_array_size(json_object_get(o, "paths")), 0u);
	EXPECT_EQ(json_integer_value(json_object_get(o, "distinctPaths")), 0);
	json_decref(o);
	free(t);
}

} /* namespace */
