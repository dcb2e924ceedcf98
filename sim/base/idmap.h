/* SPDX-License-Identifier: GPL-2.0 */
/*
 * idmap.h - the one open-addressing table from a 64-bit id to a 64-bit value.
 *
 * Contract: a struct idmap maps keys (cgroup ids, (id, cpu) pairs, update
 * tags) to int64_t values.  Linear probing from mcr_hash64(key), power-of-two
 * capacity, at most half full: a miss, the common lookup of the inference's
 * walk, costs about two probes.  A key is deleted by backward shift (no
 * tombstones), or the whole map is reset, filtered or freed.  Entry slots
 * only move on a delete or a rebuild (grow, reset, filter, free), and each
 * bumps @gen, so a
 * caller may keep slot numbers while @gen is unchanged.  IDMAP_EMPTY is the
 * one key a map cannot hold.  No global state, no I/O; functions return 0 or
 * -ENOMEM / -EINVAL.  A zeroed struct idmap is an empty map.
 */
#ifndef MCR_IDMAP_H
#define MCR_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define IDMAP_EMPTY	UINT64_MAX	/* the key of a free entry */

/* Key and value share an entry: a lookup costs one cache miss. */
struct idmap_ent {
	uint64_t	key;
	int64_t		val;
};

struct idmap {
	struct idmap_ent	*e;
	uint32_t		mask;	/* capacity - 1; 0 when e == NULL */
	uint32_t		used;
	uint32_t		gen;	/* bumped whenever entries move or go */
};

/* The slot holding @key, or the free one where it would go; @m->e must be set. */
static inline uint32_t idmap_slot(const struct idmap *m, uint64_t key)
{
	uint32_t i = (uint32_t)mcr_hash64(key) & m->mask;

	while (m->e[i].key != key && m->e[i].key != IDMAP_EMPTY)
		i = (i + 1) & m->mask;
	return i;
}

static inline struct idmap_ent *idmap_find(const struct idmap *m, uint64_t key)
{
	uint32_t i;

	if (!m->used)
		return NULL;
	i = idmap_slot(m, key);
	return m->e[i].key == key ? &m->e[i] : NULL;
}

/* The value of @key, or @none if the map does not hold it. */
static inline int64_t idmap_get(const struct idmap *m, uint64_t key, int64_t none)
{
	const struct idmap_ent *e = idmap_find(m, key);

	return e ? e->val : none;
}

static inline size_t idmap_count(const struct idmap *m)
{
	return m->used;
}

/*
 * The next entry at or after slot *@pos, advancing *@pos past it; NULL at the
 * end.  Iterate with: for (pos = 0; (e = idmap_next(m, &pos)); ).  Slot order:
 * callers that need a stable order must not depend on it.
 */
static inline struct idmap_ent *idmap_next(const struct idmap *m, uint32_t *pos)
{
	for (; m->e && *pos <= m->mask; (*pos)++)
		if (m->e[*pos].key != IDMAP_EMPTY)
			return &m->e[(*pos)++];
	return NULL;
}

int idmap_put(struct idmap *m, uint64_t key, int64_t val);	/* insert or replace */
int idmap_reset(struct idmap *m, size_t n);	/* empty, room for @n keys without a rebuild */
int idmap_fit(struct idmap *m);	/* at most an eighth full: a table of its size */
int idmap_clone(struct idmap *dst, const struct idmap *src);	/* @dst: uninitialized */
int idmap_filter(struct idmap *m, bool (*keep)(const struct idmap_ent *e, void *ctx), void *ctx);
bool idmap_del(struct idmap *m, uint64_t key);	/* true if it was there */
void idmap_free(struct idmap *m);

#endif
