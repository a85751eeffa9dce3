/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NRF_LIST_H
#define NRF_LIST_H

/**
 * @file
 * The one list type of the tree: an intrusive, circular, doubly-linked
 * list with a sentinel head (the shape of the Linux kernel's list_head and
 * DPDK's TAILQ without the macros). An element embeds a struct nrf_list
 * and is found from it with nrf_container_of() (nrf_common.h). Every
 * operation is O(1), allocates nothing and cannot fail.
 *
 * A head and an element are both "empty" after nrf_list_init(): an element
 * is then on no list. A zeroed element (calloc) is on no list too, and
 * nrf_list_del() of it is a no-op, so objects from calloc() need no init
 * of their links before their first nrf_list_add_*().
 *
 * No locking: a list and its elements belong to one thread (nrfwd's
 * per-core objects); the caller serialises otherwise.
 */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nrf_list {
	struct nrf_list *prev;
	struct nrf_list *next;
};

/** Make @p l an empty head, or an element on no list. */
static inline void
nrf_list_init(struct nrf_list *l)
{
	l->prev = l;
	l->next = l;
}

/** True when head @p head has no element. */
static inline bool
nrf_list_empty(const struct nrf_list *head)
{
	return head->next == head;
}

/** True when element @p l is on some list (not self-linked, not zeroed). */
static inline bool
nrf_list_linked(const struct nrf_list *l)
{
	return l->next != NULL && l->next != l;
}

/** Append element @p l (on no list) at the tail of @p head. */
static inline void
nrf_list_add_tail(struct nrf_list *head, struct nrf_list *l)
{
	l->prev = head->prev;
	l->next = head;
	head->prev->next = l;
	head->prev = l;
}

/** Insert element @p l (on no list) at the front of @p head. */
static inline void
nrf_list_add_head(struct nrf_list *head, struct nrf_list *l)
{
	l->next = head->next;
	l->prev = head;
	head->next->prev = l;
	head->next = l;
}

/** Take @p l off its list; it is then on no list. No-op when it is on
 *  none (self-linked or zeroed). */
static inline void
nrf_list_del(struct nrf_list *l)
{
	if (l->next == NULL)
		return;
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l;
	l->next = l;
}

/** The first element of @p head, NULL when empty. */
static inline struct nrf_list *
nrf_list_first(const struct nrf_list *head)
{
	return head->next != head ? head->next : NULL;
}

/** Every element @p it of @p head, in order. @p it must stay on the list
 *  (use NRF_LIST_FOREACH_SAFE to take it off). */
#define NRF_LIST_FOREACH(it, head) for ((it) = (head)->next; (it) != (head); (it) = (it)->next)

/** Every element @p it of @p head, in order; @p it may be taken off the
 *  list (or freed) in the body; @p nx is scratch. */
#define NRF_LIST_FOREACH_SAFE(it, nx, head) \
	for ((it) = (head)->next, (nx) = (it)->next; (it) != (head); (it) = (nx), (nx) = (it)->next)

#ifdef __cplusplus
}
#endif
#endif /* NRF_LIST_H */
