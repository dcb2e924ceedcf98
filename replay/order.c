// SPDX-License-Identifier: GPL-2.0
/*
 * The inferred order inside the trace's lock windows: for every update that
 * landed in a window before some visit of its own path, how many of the
 * window's visits came before it, keyed by the update's replay_tag().  The
 * engine's prepass fills it (order_add() as inference's order sink); the
 * inferred flush model reads it (replay/model_inferred.c).  A table only: it
 * never drives a pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "error.h"
#include "idmap.h"
#include "replay-local.h"

#define ORDER_SEEN_BITS	16	/* 8 KiB: stays in cache beside the replay */

/*
 * Update tag -> visits before it; a zeroed struct is an empty order.  The
 * replay asks about every update and almost none is in the table: a bit per
 * hash of the tags held (seen) answers most of them without the table.
 */
struct replay_order {
	struct idmap	tab;
	uint64_t	seen[(1u << ORDER_SEEN_BITS) / 64];
};

static inline uint32_t order_seen_bit(uint64_t tag)
{
	return (uint32_t)((tag * 0x9e3779b97f4a7c15ull) >> (64 - ORDER_SEEN_BITS));
}

/* The inference's order sink; a later decision for the same tag replaces it. */
int order_add(void *ctx, uint64_t tag, size_t p)
{
	struct replay_order *o = ctx;
	uint32_t b = order_seen_bit(tag);

	if (p > UINT32_MAX)
		return -MCR_E_BAD_INPUT;
	o->seen[b / 64] |= 1ull << (b % 64);
	return idmap_put(&o->tab, tag, (int64_t)p);
}

bool replay_order_lookup(const struct replay_order *o, uint64_t tag, size_t *p)
{
	const struct idmap_ent *e;
	uint32_t b = order_seen_bit(tag);

	if (!o || !(o->seen[b / 64] & (1ull << (b % 64))))
		return false;
	e = idmap_find(&o->tab, tag);
	if (e)
		*p = (size_t)e->val;
	return e != NULL;
}

size_t replay_order_size(const struct replay_order *o)
{
	return o ? idmap_count(&o->tab) : 0;
}

void replay_order_free(struct replay_order *o)
{
	if (!o)
		return;
	idmap_free(&o->tab);
	free(o);
}

struct replay_order *order_create(void)
{
	return calloc(1, sizeof(struct replay_order));
}
