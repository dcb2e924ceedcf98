// SPDX-License-Identifier: GPL-2.0
/*
 * lines.c - per-line arrays: a cgroup's memory.stat lines kept sorted by
 * (kind, item), for the read quantiles (reads.c) and the series (series.c).
 * Every element begins with its struct line_key; the arrays are small (the
 * lines a cgroup's subtree ever updated), so a binary search and a memmove
 * on insert beat a hash.
 */
#include <stdlib.h>
#include <string.h>

#include "replay-local.h"

static int64_t line_key_of(enum sim_item_kind kind, int item)
{
	return ((int64_t)kind << 32) | (uint32_t)item;
}

static const struct line_key *line_at(const void *items, size_t size, size_t i)
{
	return (const struct line_key *)((const char *)items + i * size);
}

/* The element of (@kind, @item), or NULL; *@pos is where it is or would go. */
void *line_find(const void *items, size_t nr, size_t size, enum sim_item_kind kind, int item,
		size_t *pos)
{
	int64_t key = line_key_of(kind, item);
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct line_key *k = line_at(items, size, mid);
		int64_t km = line_key_of(k->kind, k->item);

		if (km == key) {
			lo = mid;
			break;
		}
		if (km < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	if (lo < nr && line_key_of(line_at(items, size, lo)->kind, line_at(items, size, lo)->item) == key)
		return (void *)line_at(items, size, lo);
	return NULL;
}

/* The element of (@kind, @item), inserted zeroed with its key if new; NULL on ENOMEM. */
void *line_get(void **items, size_t *nr, size_t *cap, size_t size, enum sim_item_kind kind,
	       int item)
{
	struct line_key *k;
	size_t pos;
	char *base;
	void *e = line_find(*items, *nr, size, kind, item, &pos);

	if (e)
		return e;
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		void *n = realloc(*items, ncap * size);

		if (!n)
			return NULL;
		*items = n;
		*cap = ncap;
	}
	base = *items;
	memmove(base + (pos + 1) * size, base + pos * size, (*nr - pos) * size);
	(*nr)++;
	memset(base + pos * size, 0, size);
	k = (struct line_key *)(base + pos * size);
	k->kind = (uint8_t)kind;
	k->item = item;
	return k;
}
