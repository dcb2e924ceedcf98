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
 */
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
