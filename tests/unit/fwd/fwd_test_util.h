/* Shared helpers of the fwd unit tests. */
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "nrf_cfg.h"
#include "nrf_err.h"
#include "nrf_fwd.h"
#include "nrf_via.h"

struct CfgDeleter {
	void operator()(nrf_cfg *c) const { nrf_cfg_free(c); }
};
struct TableDeleter {
	void operator()(nrf_fwd_table *t) const { nrf_fwd_table_free(t); }
};
struct DbDeleter {
	void operator()(nrf_via_db *d) const { nrf_via_db_free(d); }
};
struct ScratchDeleter {
	void operator()(nrf_via_scratch *s) const { nrf_via_scratch_free(s); }
};
using CfgPtr = std::unique_ptr<nrf_cfg, CfgDeleter>;
using TablePtr = std::unique_ptr<nrf_fwd_table, TableDeleter>;
using DbPtr = std::unique_ptr<nrf_via_db, DbDeleter>;
using ScratchPtr = std::unique_ptr<nrf_via_scratch, ScratchDeleter>;

inline CfgPtr
LoadCfg(const std::string &json)
{
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *c = nrf_cfg_load(json.data(), json.size(), 1, &probs, &err);
	std::string all;
	for (size_t i = 0; i < probs.n; i++)
		all += std::string(probs.v[i].pointer) + ": " + probs.v[i].reason + "\n";
	nrf_cfg_problems_fini(&probs);
	EXPECT_NE(c, nullptr) << "load failed (" << err << "):\n" << all;
	return CfgPtr(c);
}

inline CfgPtr
LoadCfgFile(const std::string &path)
{
	nrf_cfg_problems probs = {};
	int err = 0;
	nrf_cfg *c = nrf_cfg_load_file(path.c_str(), 1, &probs, &err);
	nrf_cfg_problems_fini(&probs);
	EXPECT_NE(c, nullptr) << path << ": " << err;
	return CfgPtr(c);
}

inline TablePtr
MakeTable(const nrf_cfg *c)
{
	int err = 0;
	nrf_fwd_table *t = nrf_fwd_table_create(c, &err);
	EXPECT_NE(t, nullptr) << err;
	return TablePtr(t);
}

/* A scan result with the given peers present. */
inline nrf_via_result
ViaWith(std::initializer_list<int> peers, uint32_t members = 1, bool self = false)
{
	nrf_via_result r = {};
	r.members = members;
	r.self = self;
	for (int p : peers)
		r.peers[p >> 6] |= 1ull << (p & 63);
	return r;
}

inline std::string
PeerName(const nrf_cfg *c, uint16_t p)
{
	return c->peers[p].name;
}
