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

/*
 * What stays fixed while a visit moves @n's deltas: nothing in the move
 * changes @n's flushable flag, its non-flushable clocks or its stranded
 * state, so the line touch's time and the episode test are read once.
 * @scan: the episode's lines are not scanned yet (sim_item_touch()); the
 * first move scans them, before any line changes.
 */
struct sim_move {
	struct sim_node	*n, *p;
	uint64_t	nf;		/* sim_nf(n, ts) */
	uint64_t	sn;		/* sim_sn(s, n, ts) */
	bool		stranded;
	bool		scan;
};

/* One delta of a visit: line @k of @n loses @d, which waits in @p's pending. */
static inline __attribute__((always_inline))
void sim_item_move(struct sim *s, struct sim_move *m, uint16_t k, int64_t d)
{
	struct sim_node *n = m->n, *p = m->p;

	if (m->scan) {
		sim_lag_scan(s, n);
		m->scan = false;
	}
	sim_line_touch(&n->lines[k], m->nf, m->sn);
	n->lines[k].miss -= d;
	if (m->stranded)
		sim_lag_worst(s, n, k);
	if (p) {
		p->pend_it[k] += d;
		p->pend_bits[k / 64] |= UINT64_C(1) << (k % 64);
	}
}

/*
 * The signed half of a visit: the slot's deltas and @n's pending leave @n's
 * missing and wait in @p's pending (@p NULL: the root aggregates them for
 * good).  @n and @p must cover every item index (sim_node_items_reserve()).
 * The deltas go newest chunk first, items of a chunk in the order they came.
 * Inline in the visit (sim_stale_visit()), its only caller.
 */
static inline __attribute__((always_inline))
void sim_slot_items_move(struct sim *s, uint64_t ts, struct sim_pcpu *sl, struct sim_node *n,
			 struct sim_node *p)
{
	struct sim_move m = { .n = n, .p = p, .nf = sim_nf(n, ts), .sn = sim_sn(s, n, ts),
			      .stranded = n->stranded, .scan = n->ep_scan };
	int32_t c, last = SIM_NONE;
	unsigned int i;
	uint32_t k, w, words = SIM_PEND_WORDS(n->cap_it);

	for (c = sl->chunks; c != SIM_NONE; c = s->chunks[c].next) {
		struct sim_chunk *ch = &s->chunks[c];

		for (i = 0; i < ch->nr; i++)
			sim_item_move(s, &m, ch->k[i], ch->d[i]);
		last = c;
	}
	if (last != SIM_NONE) {
		s->chunks[last].next = s->free_chunk;
		s->free_chunk = sl->chunks;
		sl->chunks = SIM_NONE;
	}
	/* the slot's own keys are one chunk's worth, taken as one */
	_Static_assert(SIM_SLOT_ITEMS == SIM_CHUNK_ITEMS, "a slot's own keys are one chunk");
	for (i = 0; i < sl->nr; i++)
		sim_item_move(s, &m, sl->k[i], sl->d[i]);
	if (sl->nr) {
		memset(sl->k, 0xff, sizeof(sl->k));
		sl->nr = 0;
	}
	/*
	 * The pending items in index order, as a scan of every index would
	 * meet them (the episode's worst line keeps the first of equals), but
	 * only where a child's visit added something: a memcg's pending holds
	 * a few of the items seen anywhere.
	 */
	for (w = 0; w < words; w++) {
		uint64_t bits = n->pend_bits[w];

		if (!bits)
			continue;
		n->pend_bits[w] = 0;
		for (; bits; bits &= bits - 1) {
			int64_t d;

			k = w * 64 + (uint32_t)__builtin_ctzll(bits);
			d = n->pend_it[k];
			if (!d)
				continue;
			n->pend_it[k] = 0;
			sim_item_move(s, &m, (uint16_t)k, d);
		}
	}
}

#endif
