/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef VIA_TEST_UTIL_H
#define VIA_TEST_UTIL_H

/*
 * Shared helpers of the lib/via unit tests: RAII owners whose deleters
 * check the object is still sound before freeing it, field lines built
 * from strings, a page-guarded buffer that faults on any read past a line,
 * and a small scan wrapper.
 */

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nrf_err.h"
#include "nrf_via.h"
/* The deleters look at the Hyperscan objects inside; nothing else does. */
#include "nrf_via_internal.h"

namespace via_test {

/*
 * Deleters in the Hyperscan unit-test way: before freeing, check that what
 * is freed is still sound (Hyperscan's own size queries fail on a
 * corrupted or in-use object), so a test that broke an object fails here
 * rather than in some later test. Leaks are valgrind's job (docs/via.md).
 */
struct DbDeleter {
	void operator()(nrf_via_db *db) const
	{
		size_t size = 0;

		EXPECT_GT(nrf_via_db_count(db), 0u);
		EXPECT_EQ(hs_database_size(db->hs, &size), HS_SUCCESS);
		EXPECT_GT(size, 0u);
		nrf_via_db_free(db);
	}
};
using DbPtr = std::unique_ptr<nrf_via_db, DbDeleter>;

struct ScratchDeleter {
	void operator()(nrf_via_scratch *s) const
	{
		size_t size = 0;

		EXPECT_EQ(hs_scratch_size(s->hs, &size), HS_SUCCESS);
		EXPECT_GT(size, 0u);
		nrf_via_scratch_free(s);
	}
};
using ScratchPtr = std::unique_ptr<nrf_via_scratch, ScratchDeleter>;

inline nrf_via_identity
Self(const char *host, uint16_t port)
{
	return nrf_via_identity{host, port, NRF_VIA_SELF, 0};
}

inline nrf_via_identity
Peer(const char *host, uint16_t port, uint16_t peer)
{
	return nrf_via_identity{host, port, NRF_VIA_PEER, peer};
}

inline DbPtr
MakeDb(const std::vector<nrf_via_identity> &ids)
{
	int err = 1;
	nrf_via_db *db = nrf_via_db_create(ids.data(), ids.size(), &err);

	EXPECT_NE(db, nullptr) << nrf_errname(err);
	EXPECT_EQ(err, 0);
	return DbPtr(db);
}

inline ScratchPtr
MakeScratch(const nrf_via_db *db)
{
	int err = 1;
	nrf_via_scratch *s = nrf_via_scratch_create(db, &err);

	EXPECT_NE(s, nullptr) << nrf_errname(err);
	EXPECT_EQ(err, 0);
	return ScratchPtr(s);
}

/* Field lines that point into strings the caller keeps alive. */
inline std::vector<nrf_slice>
Slices(const std::vector<std::string> &lines)
{
	std::vector<nrf_slice> out;

	for (const auto &l : lines)
		out.push_back(nrf_slice{l.data(), l.size()});
	return out;
}

inline std::string
Str(nrf_slice s)
{
	return std::string(s.p != nullptr ? s.p : "", s.len);
}

/* One scan, its return code and its result. */
struct Scan {
	int rc;
	nrf_via_result res;
};

/* (identity id, member index) as nrf_via_scan_each() reports them. */
using Hit = std::pair<uint32_t, uint32_t>;

struct Each {
	int rc;
	nrf_via_result res;
	std::vector<Hit> hits;
};

inline Scan
DoScan(const nrf_via_db *db, nrf_via_scratch *s, const std::vector<std::string> &lines)
{
	Scan r;
	auto sl = Slices(lines);

	memset(&r.res, 0xa5, sizeof(r.res));
	r.rc = nrf_via_scan(db, s, sl.data(), sl.size(), &r.res);
	return r;
}

inline int
CollectHit(void *ctx, uint32_t id, uint32_t member)
{
	static_cast<std::vector<Hit> *>(ctx)->emplace_back(id, member);
	return 0;
}

inline Each
DoScanEach(const nrf_via_db *db, nrf_via_scratch *s, const std::vector<std::string> &lines)
{
	Each r;
	auto sl = Slices(lines);

	memset(&r.res, 0xa5, sizeof(r.res));
	r.rc = nrf_via_scan_each(db, s, sl.data(), sl.size(), &r.res, CollectHit, &r.hits);
	return r;
}

inline bool
SameResult(const nrf_via_result &a, const nrf_via_result &b)
{
	return a.members == b.members && a.hits == b.hits && a.self == b.self &&
		memcmp(a.peers, b.peers, sizeof(a.peers)) == 0;
}

inline bool
NoPeers(const nrf_via_result &r)
{
	for (uint64_t w : r.peers)
		if (w != 0)
			return false;
	return true;
}

/*
 * Bytes placed against an inaccessible page: by default the last byte is
 * the last of a readable page (any read past the end faults); with
 * Guard::Before the first byte is the first of a readable page (any read
 * before the start faults).
 */
enum class Guard { After, Before };

class GuardedBytes {
public:
	explicit GuardedBytes(const std::string &bytes, Guard where = Guard::After)
	{
		page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
		size_t pages = (bytes.size() + page_ - 1) / page_ + 1;

		size_ = pages * page_ + page_;
		base_ = static_cast<char *>(mmap(nullptr, size_, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		EXPECT_NE(base_, MAP_FAILED);
		if (where == Guard::After) {
			EXPECT_EQ(mprotect(base_ + pages * page_, page_, PROT_NONE), 0);
			data_ = base_ + pages * page_ - bytes.size();
		} else {
			EXPECT_EQ(mprotect(base_, page_, PROT_NONE), 0);
			data_ = base_ + page_;
		}
		if (!bytes.empty())
			memcpy(data_, bytes.data(), bytes.size());
		len_ = bytes.size();
	}
	~GuardedBytes()
	{
		EXPECT_EQ(munmap(base_, size_), 0);
	}
	GuardedBytes(const GuardedBytes &) = delete;
	GuardedBytes &operator=(const GuardedBytes &) = delete;

	nrf_slice slice() const { return nrf_slice{data_, len_}; }

private:
	size_t page_ = 0, size_ = 0, len_ = 0;
	char *base_ = nullptr;
	char *data_ = nullptr;
};

} /* namespace via_test */

#endif /* VIA_TEST_UTIL_H */
