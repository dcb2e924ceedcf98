// SPDX-License-Identifier: GPL-2.0
/*
 * items.c - signed per-item staleness storage.
 *
 * Every line of memory.stat seen (STATE and LRUVEC of one idx are one line)
 * gets a dense index, so each memcg keeps its signed
 * missing and pending values in plain arrays (one add per ancestor on the
 * update path).  Slots, of which there can be millions, keep only the items
 * updated since their last visit, in chunks from one pool that visits give
 * back: after warm-up nothing here allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "items.h"

/* Where (@kind, @item) has a direct entry, or NULL: every traced item the kernel has today. */
static int16_t *sim_item_slot(struct sim *s, enum sim_item_kind kind, int item)
{
	if (item < 0 || item >= SIM_ITEM_DIRECT)
		return NULL;
	return &s->item_direct[kind == SIM_ITEM_EVENT][item];
}

/* sim_item_index() past the direct entries: the map, and a new index on first sight. */
int sim_item_index_new(struct sim *s, enum sim_item_kind kind, int item)
{
	int16_t *direct = sim_item_slot(s, kind, item);
	uint64_t key;
	int32_t k;
	int ret;

	key = sim_item_key(kind, item);
	k = (int32_t)idmap_get(&s->item_idx, key, SIM_NONE);
	if (k != SIM_NONE)
		return k;
	if (s->nr_items >= SIM_ITEM_FREE)
		return -ENOSPC;
	if (s->nr_items == s->cap_items) {
		uint32_t cap = s->cap_items ? s->cap_items * 2 : 64;
		uint64_t *keys = realloc(s->item_key, sizeof(*keys) * cap);

		if (!keys)
			return -ENOMEM;
		s->item_key = keys;
		s->cap_items = cap;
	}
	k = (int32_t)s->nr_items;
	ret = idmap_put(&s->item_idx, key, k);
	if (ret)
		return ret;
	s->item_key[k] = key;
	s->nr_items++;
	if (direct && k < INT16_MAX)
		*direct = (int16_t)(k + 1);
	return k;
}

/*
 * Make @n's arrays cover every item index that exists.  Sized to the items
 * seen, not to s->cap_items: the lines of every memcg are the update path's
 * working set, and what fits in cache decides its speed.
 */
static int sim_node_items_grow(struct sim *s, struct sim_node *n)
{
	uint32_t cap = (s->nr_items + 7) & ~7U;
	uint32_t words = SIM_PEND_WORDS(cap), old_words = SIM_PEND_WORDS(n->cap_it);
	struct sim_line *lines;
	uint64_t *bits;
	int64_t *pend;

	if (n->cap_it >= s->nr_items)
		return 0;
	pend = realloc(n->owe_it, sizeof(*pend) * cap);
	if (!pend)
		return -ENOMEM;
	memset(pend + n->cap_it, 0, sizeof(*pend) * (cap - n->cap_it));
	n->owe_it = pend;
	pend = realloc(n->pend_it, sizeof(*pend) * cap);
	if (!pend)
		return -ENOMEM;
	n->pend_it = pend;
	if (words > old_words) {
		bits = realloc(n->pend_bits, sizeof(*bits) * words);
		if (!bits)
			return -ENOMEM;
		memset(bits + old_words, 0, sizeof(*bits) * (words - old_words));
		n->pend_bits = bits;
		bits = realloc(n->owe_bits, sizeof(*bits) * words);
		if (!bits)
			return -ENOMEM;
		memset(bits + old_words, 0, sizeof(*bits) * (words - old_words));
		n->owe_bits = bits;
	}
	lines = realloc(n->lines, sizeof(*lines) * cap);
	if (!lines)
		return -ENOMEM;
	n->lines = lines;
	memset(pend + n->cap_it, 0, sizeof(*pend) * (cap - n->cap_it));
	/* an error of 0 so far: nothing to integrate, whatever nf_at says */
	memset(lines + n->cap_it, 0, sizeof(*lines) * (cap - n->cap_it));
	n->cap_it = cap;
	return 0;
}

/*
 * sim_node_items_grow() for @n and each ancestor up to the first that
 * covers every item: a memcg's lines never end before its descendants'
 * (a parent never changes), so the update path tests the updated memcg's
 * length alone, not each ancestor's.  A line made early is all zeros,
 * what its first update would have found: nothing to integrate.
 */
int sim_node_items_reserve(struct sim *s, struct sim_node *n)
{
	int ret;

	for (; n && n->cap_it < s->nr_items; n = sim_parent(s, n)) {
		ret = sim_node_items_grow(s, n);
		if (ret)
			return ret;
	}
	return 0;
}

static int32_t sim_chunk_alloc(struct sim *s)
{
	int32_t c = s->free_chunk;

	if (c != SIM_NONE) {
		s->free_chunk = s->chunks[c].next;
		return c;
	}
	if (s->nr_chunks == s->cap_chunks) {
		uint32_t cap = s->cap_chunks ? s->cap_chunks * 2 : 256;
		struct sim_chunk *chunks;

		if (cap > INT32_MAX)
			return -ENOMEM;
		chunks = realloc(s->chunks, sizeof(*chunks) * cap);
		if (!chunks)
			return -ENOMEM;
		s->chunks = chunks;
		s->cap_chunks = cap;
	}
	return (int32_t)s->nr_chunks++;
}

/*
 * sim_slot_item_add() past the slot's own keys: a full slot's chunks, newest
 * first, then a new key in the newest chunk (a new chunk when it is full).
 */
int sim_slot_item_add_chunk(struct sim *s, struct sim_pcpu *sl, uint16_t k, int64_t d)
{
	sim_keys_v kv = (sim_keys_v){ 0 } + k;
	struct sim_chunk *ch;
	int32_t c;
	int i;

	for (c = sl->chunks; c != SIM_NONE; c = ch->next) {
		ch = &s->chunks[c];
		i = sim_keys_find(ch->k, kv);
		if (i >= 0) {
			ch->d[i] += d;
			return 0;
		}
	}
	if (sl->chunks == SIM_NONE || s->chunks[sl->chunks].nr == SIM_CHUNK_ITEMS) {
		c = sim_chunk_alloc(s);
		if (c < 0)
			return c;
		ch = &s->chunks[c];
		memset(ch->k, 0xff, sizeof(ch->k));
		ch->next = sl->chunks;
		ch->nr = 0;
		sl->chunks = c;
	}
	ch = &s->chunks[sl->chunks];
	ch->k[ch->nr] = k;
	ch->d[ch->nr] = d;
	ch->nr++;
	return 0;
}

void sim_items_destroy(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_nodes; i++) {
		free(s->nodes[i].pend_it);
		free(s->nodes[i].pend_bits);
		free(s->nodes[i].owe_it);
		free(s->nodes[i].owe_bits);
		free(s->nodes[i].lines);
		free(s->nodes[i].read_it);
	}
	free(s->chunks);
	free(s->item_key);
	idmap_free(&s->item_idx);
}
