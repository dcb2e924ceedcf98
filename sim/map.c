// SPDX-License-Identifier: GPL-2.0
/*
 * map.c - the open-addressing hash map the simulator uses, so that per
 * (memcg, cpu) and per item state exists only where it occurred.
 * Linear probing, power-of-two capacity, grown at 3/4 load; nothing is ever
 * deleted (memcgs, slots and item indexes live as long as the sim).  Key and
 * value share an entry: a lookup costs one cache miss.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim-local.h"

#define SIM_MAP_MIN	16U

static inline uint32_t sim_hash(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

int32_t sim_map_get(const struct sim_map *m, uint64_t key)
{
	uint32_t i;

	if (!m->e)
		return SIM_NONE;
	for (i = sim_hash(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->e[i].key == key)
			return (int32_t)m->e[i].val;
		if (m->e[i].key == SIM_KEY_EMPTY)
			return SIM_NONE;
	}
}

static void sim_map_insert(struct sim_map *m, uint64_t key, int32_t val)
{
	uint32_t i = sim_hash(key, m->mask);

	while (m->e[i].key != SIM_KEY_EMPTY && m->e[i].key != key)
		i = (i + 1) & m->mask;
	if (m->e[i].key == SIM_KEY_EMPTY)
		m->used++;
	m->e[i].key = key;
	m->e[i].val = val;
}

static int sim_map_grow(struct sim_map *m)
{
	uint32_t cap = m->e ? (m->mask + 1) * 2 : SIM_MAP_MIN;
	struct sim_map n = { .mask = cap - 1 };
	uint32_t i;

	n.e = malloc(sizeof(*n.e) * cap);
	if (!n.e)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		n.e[i].key = SIM_KEY_EMPTY;
	for (i = 0; m->e && i <= m->mask; i++)
		if (m->e[i].key != SIM_KEY_EMPTY)
			sim_map_insert(&n, m->e[i].key, (int32_t)m->e[i].val);
	sim_map_free(m);
	*m = n;
	return 0;
}

/* Sets @key to @val; @key must not be SIM_KEY_EMPTY. */
int sim_map_put(struct sim_map *m, uint64_t key, int32_t val)
{
	if (!m->e || (m->used + 1) * 4 > (m->mask + 1) * 3) {
		int ret = sim_map_grow(m);

		if (ret)
			return ret;
	}
	sim_map_insert(m, key, val);
	return 0;
}

void sim_map_free(struct sim_map *m)
{
	free(m->e);
	m->e = NULL;
	m->mask = 0;
	m->used = 0;
}
