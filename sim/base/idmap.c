// SPDX-License-Identifier: GPL-2.0
/*
 * idmap.c - growing, resetting, copying and filtering an idmap (idmap.h);
 * lookups are inline in the header.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

#define IDMAP_MIN	16U

/* At most half full: keeps a miss near two probes. */
static inline bool idmap_fits(uint32_t cap, size_t n)
{
	return 2 * n <= cap;
}

/* The smallest table that holds @n keys at most half full (at least IDMAP_MIN slots); 0: none. */
static uint32_t idmap_size_for(size_t n)
{
	size_t c;

	for (c = IDMAP_MIN; !idmap_fits(c, n); c *= 2)
		if (c > UINT32_MAX / 2)
			return 0;
	return (uint32_t)c;
}

/* A fresh table of @cap slots (a power of two) holding the same entries. */
static int idmap_rebuild(struct idmap *m, uint32_t cap)
{
	struct idmap_ent *old = m->e, *ne = malloc(sizeof(*ne) * cap);
	uint32_t i, old_cap = old ? m->mask + 1 : 0;

	if (!ne)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		ne[i].key = IDMAP_EMPTY;
	m->e = ne;
	m->mask = cap - 1;
	m->used = 0;
	m->gen++;
	for (i = 0; i < old_cap; i++) {
		if (old[i].key == IDMAP_EMPTY)
			continue;
		m->e[idmap_slot(m, old[i].key)] = old[i];
		m->used++;
	}
	free(old);
	return 0;
}

/**
 * idmap_put() - set @key to @val, growing the table if needed
 *
 * Return: 0, -EINVAL for IDMAP_EMPTY, -ENOMEM (the map is unchanged).
 */
int idmap_put(struct idmap *m, uint64_t key, int64_t val)
{
	uint32_t i;

	if (key == IDMAP_EMPTY)
		return -EINVAL;
	if (!m->e || !idmap_fits(m->mask + 1, m->used + 1)) {
		struct idmap_ent *e = idmap_find(m, key);
		int ret;

		if (e) {
			e->val = val;
			return 0;
		}
		if (m->e && m->mask + 1 > UINT32_MAX / 2)
			return -ENOMEM;
		ret = idmap_rebuild(m, m->e ? 2 * (m->mask + 1) : IDMAP_MIN);
		if (ret)
			return ret;
	}
	i = idmap_slot(m, key);
	if (m->e[i].key == IDMAP_EMPTY) {
		m->e[i].key = key;
		m->used++;
	}
	m->e[i].val = val;
	return 0;
}

/**
 * idmap_reset() - empty @m, with room for @n keys before it grows
 *
 * Keeps the table when it already has the size @n asks for, so a map refilled
 * again and again with about as many keys allocates once; a map that held far
 * more is shrunk, so clearing it stays proportional to @n.
 *
 * Return: 0 or -ENOMEM (the map is then empty and unallocated).
 */
int idmap_reset(struct idmap *m, size_t n)
{
	uint32_t cap = idmap_size_for(n);

	if (!cap)
		return -ENOMEM;
	if (m->e && m->mask + 1 == cap) {
		uint32_t i;

		for (i = 0; i < cap; i++)
			m->e[i].key = IDMAP_EMPTY;
		m->used = 0;
		m->gen++;
		return 0;
	}
	idmap_free(m);
	return idmap_rebuild(m, cap);
}

/**
 * idmap_fit() - a table far larger than its keys is rebuilt to their size
 *
 * Deletes never shrink a table, and a copy or a walk of every entry costs
 * its slots, not its keys: a map at most an eighth full takes the smallest
 * table that holds its keys, at most half full as always.  Entries move.
 *
 * Return: 0 or -ENOMEM (the map is then unchanged).
 */
int idmap_fit(struct idmap *m)
{
	uint32_t cap;

	if (!m->e || 8 * (size_t)m->used > (size_t)m->mask + 1)
		return 0;
	cap = idmap_size_for(m->used);	/* never 0: fewer keys than the table has slots */
	return cap < m->mask + 1 ? idmap_rebuild(m, cap) : 0;
}

/**
 * idmap_clone() - make @dst a copy of @src, slot for slot
 *
 * Return: 0 or -ENOMEM (@dst is then an empty map).
 */
int idmap_clone(struct idmap *dst, const struct idmap *src)
{
	size_t sz = src->e ? sizeof(*src->e) * (src->mask + 1) : 0;

	*dst = (struct idmap){ .mask = src->mask, .used = src->used, .gen = 1 };
	if (!sz)
		return 0;
	dst->e = malloc(sz);
	if (!dst->e) {
		*dst = (struct idmap){ 0 };
		return -ENOMEM;
	}
	memcpy(dst->e, src->e, sz);
	return 0;
}

/**
 * idmap_filter() - keep only the entries @keep says yes to
 *
 * Asks @keep once per entry.  The table is rebuilt at the same capacity from
 * the first entry that goes (those before it all stay), and freed when
 * nothing stays; when everything stays it is left as it is.
 *
 * Return: 0 or -ENOMEM (the map is then unchanged).
 */
int idmap_filter(struct idmap *m, bool (*keep)(const struct idmap_ent *e, void *ctx), void *ctx)
{
	struct idmap n = { .mask = m->mask, .gen = m->gen + 1 };
	uint32_t pos = 0, first, i;
	struct idmap_ent *e;

	while ((e = idmap_next(m, &pos)) && keep(e, ctx))
		;
	if (!e)
		return 0;
	first = pos - 1;	/* the first entry that goes */
	n.e = malloc(sizeof(*n.e) * (m->mask + 1));
	if (!n.e)
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++)
		n.e[i].key = IDMAP_EMPTY;
	for (pos = 0; (e = idmap_next(m, &pos)); ) {
		if (pos - 1 == first || (pos - 1 > first && !keep(e, ctx)))
			continue;
		n.e[idmap_slot(&n, e->key)] = *e;
		n.used++;
	}
	free(m->e);
	*m = n;
	if (!m->used)
		idmap_free(m);
	return 0;
}

/**
 * idmap_del() - remove @key, moving later entries of its probe run back
 *
 * Backward-shift deletion keeps every key reachable from its home slot with
 * no tombstones, so lookups stay as short as in a table that never held it.
 *
 * Return: true if @key was there.
 */
bool idmap_del(struct idmap *m, uint64_t key)
{
	uint32_t i, j, home;

	if (!m->used)
		return false;
	i = idmap_slot(m, key);
	if (m->e[i].key != key)
		return false;
	for (j = (i + 1) & m->mask; m->e[j].key != IDMAP_EMPTY; j = (j + 1) & m->mask) {
		home = (uint32_t)mcr_hash64(m->e[j].key) & m->mask;
		/* e[j] may fill the hole unless its home lies cyclically in (i, j] */
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].key = IDMAP_EMPTY;
	m->used--;
	m->gen++;
	return true;
}

void idmap_free(struct idmap *m)
{
	free(m->e);
	m->e = NULL;
	m->mask = 0;
	m->used = 0;
	m->gen++;
}
