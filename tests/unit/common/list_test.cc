/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/common/nrf_list.h and nrf_container_of(). */
#include <gtest/gtest.h>

#include <vector>

#include "nrf_common.h"
#include "nrf_list.h"

namespace {

struct Item {
	int v;
	nrf_list link;
};

std::vector<int>
Values(nrf_list *head)
{
	std::vector<int> out;
	nrf_list *l;

	NRF_LIST_FOREACH(l, head)
		out.push_back(nrf_container_of(l, Item, link)->v);
	return out;
}

TEST(List, TailAndHeadInsertionsKeepTheirOrder)
{
	nrf_list head;
	Item a{1, {}}, b{2, {}}, c{3, {}};

	nrf_list_init(&head);
	EXPECT_TRUE(nrf_list_empty(&head));
	EXPECT_EQ(nrf_list_first(&head), nullptr);
	nrf_list_add_tail(&head, &a.link);
	nrf_list_add_tail(&head, &b.link);
	nrf_list_add_head(&head, &c.link);
	EXPECT_EQ(Values(&head), (std::vector<int>{3, 1, 2}));
	EXPECT_EQ(nrf_container_of(nrf_list_first(&head), Item, link), &c);
	EXPECT_TRUE(nrf_list_linked(&a.link));
}

TEST(List, DeletedElementIsOnNoListAndDeletingAgainIsANoOp)
{
	nrf_list head;
	Item a{1, {}}, b{2, {}};

	nrf_list_init(&head);
	nrf_list_add_tail(&head, &a.link);
	nrf_list_add_tail(&head, &b.link);
	nrf_list_del(&a.link);
	EXPECT_FALSE(nrf_list_linked(&a.link));
	nrf_list_del(&a.link);
	EXPECT_EQ(Values(&head), (std::vector<int>{2}));
	nrf_list_del(&b.link);
	EXPECT_TRUE(nrf_list_empty(&head));
}

TEST(List, ZeroedElementIsOnNoList)
{
	Item z{};

	EXPECT_FALSE(nrf_list_linked(&z.link));
	nrf_list_del(&z.link); /* no-op, no crash */
	EXPECT_EQ(z.link.next, nullptr);
}

TEST(List, SafeIterationMayRemoveEveryElement)
{
	nrf_list head, *l, *nx;
	Item it[4] = {{0, {}}, {1, {}}, {2, {}}, {3, {}}};
	int seen = 0;

	nrf_list_init(&head);
	for (Item &i : it)
		nrf_list_add_tail(&head, &i.link);
	NRF_LIST_FOREACH_SAFE(l, nx, &head)
	{
		EXPECT_EQ(nrf_container_of(l, Item, link)->v, seen++);
		nrf_list_del(l);
	}
	EXPECT_EQ(seen, 4);
	EXPECT_TRUE(nrf_list_empty(&head));
}

} // namespace
