/* SPDX-License-Identifier: GPL-2.0 */
/*
 * items.h - the signed per-item storage (items.c): dense item indexes, each
 * memcg's lines and pending values, each slot's unflushed deltas.
 */
#ifndef MCR_SIM_ITEMS_H
#define MCR_SIM_ITEMS_H

#include "lag.h"

int sim_item_index_new(struct sim *s, enum sim_item_kind kind, int item);
int sim_node_items_reserve(struct sim *s, struct sim_node *n);
int sim_slot_item_add_chunk(struct sim *s, struct sim_pcpu *sl, uint16_t k, int64_t d);
void sim_slot_items_move(struct sim *s, uint64_t ts, struct sim_pcpu *sl, struct sim_node *n,
			 struct sim_node *p);
void sim_items_destroy(struct sim *s);

typedef uint16_t sim_keys_v __attribute__((vector_size(16)));

/* Position of @kv's key among the 8 keys at @k, or -1: one vector compare. */
static inline int sim_keys_find(const uint16_t *k, sim_keys_v kv)
{
	sim_keys_v keys, eq;
	uint64_t half[2];

	memcpy(&keys, k, sizeof(keys));
	eq = (sim_keys_v)(keys == kv);
	memcpy(half, &eq, sizeof(half));
	if (half[0])
		return __builtin_ctzll(half[0]) / 16;
	if (half[1])
		return 4 + __builtin_ctzll(half[1]) / 16;
	return -1;
}

/*
 * Add @d to item @k of the slot's unflushed deltas: inline in the update
 * path for the slot's own keys.  A slot has chunks only once its own keys
 * are full (a visit empties both), so a key not among them goes in them
 * while there is room, and the chunks are searched only then.
 */
static inline int sim_slot_item_add(struct sim *s, struct sim_pcpu *sl, uint16_t k, int64_t d)
{
	sim_keys_v kv = (sim_keys_v){ 0 } + k;
	unsigned int j;
	int i;

	for (j = 0; j < SIM_SLOT_ITEMS; j += SIM_CHUNK_ITEMS) {
		i = sim_keys_find(&sl->k[j], kv);
		if (i >= 0) {
			sl->d[j + i] += d;
			return 0;
		}
	}
	if (sl->nr < SIM_SLOT_ITEMS) {
		sl->k[sl->nr] = k;
		sl->d[sl->nr] = d;
		sl->nr++;
		return 0;
	}
	return sim_slot_item_add_chunk(s, sl, k, d);
}

/*
 * The dense index of (@kind, @item), made on first sight; or -errno.  Every
 * item the kernel traces today has a direct entry (index + 1, 0: none yet),
 * so the update path reads one small array and calls nothing.
 */
static inline int sim_item_index(struct sim *s, enum sim_item_kind kind, int item)
{
	if (item >= 0 && item < SIM_ITEM_DIRECT) {
		int16_t d = s->item_direct[kind == SIM_ITEM_EVENT][item];

		if (d)
			return d - 1;
	}
	return sim_item_index_new(s, kind, item);
}

#endif
