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
#include "replay-local.h"

struct ord_slot {
	uint64_t	tag;
	uint32_t	p;
	bool		used;
};

struct replay_order {
	struct ord_slot	*tab;
	size_t		mask, n;
};

static size_t ord_hash(uint64_t tag)
{
	return (size_t)((tag * 0x9e3779b97f4a7c15ull) >> 20);
}

static int ord_grow(struct replay_order *o)
{
	size_t cap = o->tab ? 2 * (o->mask + 1) : 1024, i;
	struct ord_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; o->tab && i <= o->mask; i++) {
		size_t j;

		if (!o->tab[i].used)
			continue;
		for (j = ord_hash(o->tab[i].tag) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = o->tab[i];
	}
	free(o->tab);
	o->tab = t;
	o->mask = cap - 1;
	return 0;
}

/* The inference's order sink; a later decision for the same tag replaces it. */
int order_add(void *ctx, uint64_t tag, size_t p)
{
	struct replay_order *o = ctx;
	size_t j;
	int ret;

	if (p > UINT32_MAX)
		return -MCR_E_BAD_INPUT;
	if (!o->tab || 2 * (o->n + 1) > o->mask + 1) {
		ret = ord_grow(o);
		if (ret)
			return ret;
	}
	for (j = ord_hash(tag) & o->mask; o->tab[j].used; j = (j + 1) & o->mask) {
		if (o->tab[j].tag == tag) {
			o->tab[j].p = (uint32_t)p;
			return 0;
		}
	}
	o->tab[j] = (struct ord_slot){ .tag = tag, .p = (uint32_t)p, .used = true };
	o->n++;
	return 0;
}

bool replay_order_lookup(const struct replay_order *o, uint64_t tag, size_t *p)
{
	size_t j;

	if (!o || !o->tab)
		return false;
	for (j = ord_hash(tag) & o->mask; o->tab[j].used; j = (j + 1) & o->mask) {
		if (o->tab[j].tag == tag) {
			*p = o->tab[j].p;
			return true;
		}
	}
	return false;
}

size_t replay_order_size(const struct replay_order *o)
{
	return o ? o->n : 0;
}

void replay_order_free(struct replay_order *o)
{
	if (!o)
		return;
	free(o->tab);
	free(o);
}

struct replay_order *order_create(void)
{
	return calloc(1, sizeof(struct replay_order));
}
