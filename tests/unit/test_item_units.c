// SPDX-License-Identifier: GPL-2.0
/*
 * test_item_units.c - the unit of each stat item's traced val (sim/base/event.c),
 * pinned to the kernel's conversion: mod_memcg_state and mod_memcg_lruvec_state
 * trace memcg_state_val_in_pages(idx, val) (mm/memcontrol.c), so every state
 * item is in pages, the ones the kernel counts in bytes (*_B) or kB
 * (NR_KERNEL_STACK_KB) rounded; count_memcg_events counts events.  Then the
 * units capture stores for the running kernel's BTF items (capture/btf.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "../harness.h"
#include "btf.h"
#include "event.h"

#define KPAGE	4096L

/* memcg_page_state_unit() of mm/memcontrol.c: the kernel's own unit of an item */
static const struct {
	const char	*name;
	long		unit;
} kernel_units[] = {
	{ "MEMCG_PERCPU_B", 1 },		{ "MEMCG_ZSWAP_B", 1 },
	{ "NR_SLAB_RECLAIMABLE_B", 1 },		{ "NR_SLAB_UNRECLAIMABLE_B", 1 },
	{ "NR_KERNEL_STACK_KB", 1024 },
	{ "NR_FILE_PAGES", KPAGE },		{ "NR_ANON_MAPPED", KPAGE },
	{ "NR_FILE_MAPPED", KPAGE },		{ "NR_SHMEM", KPAGE },
	{ "NR_INACTIVE_ANON", KPAGE },		{ "NR_ACTIVE_FILE", KPAGE },
	{ "NR_PAGETABLE", KPAGE },		{ "NR_SECONDARY_PAGETABLE", KPAGE },
	{ "NR_ANON_THPS", KPAGE },		{ "WORKINGSET_REFAULT_FILE", KPAGE },
	{ "MEMCG_KMEM", KPAGE },		{ "MEMCG_SWAP", KPAGE },
	{ "MEMCG_SOCK", KPAGE },		{ "MEMCG_ZSWAPPED", KPAGE },
	/* not in memcg_page_state_unit()'s list: kB, but never rounded */
	{ "NR_KERNEL_SCS_KB", KPAGE },
};

/* memcg_state_val_in_pages(): the val the state tracepoints carry */
static long kernel_val_in_pages(long unit, long val)
{
	long res;

	if (!val || unit == KPAGE)
		return val;
	res = labs(val) * unit / KPAGE;
	res = res ? res : 1;
	return val < 0 ? -res : res;
}

TEST(state_items_are_pages)
{
	static const unsigned int kinds[] = { MCR_EV_STATE, MCR_EV_LRUVEC };
	size_t i, k;

	for (k = 0; k < 2; k++) {
		ASSERT_STR(mcr_item_unit(kinds[k]), "pages");
		for (i = 0; i < sizeof(kernel_units) / sizeof(kernel_units[0]); i++) {
			const char *name = kernel_units[i].name, *from;
			long unit = kernel_units[i].unit;

			/* three pages' worth in the kernel's unit is traced as 3 */
			if (kernel_val_in_pages(unit, 3 * KPAGE / unit) != 3)
				FAILF("%s: 3 pages not traced as 3", name);
			from = mcr_item_rounded_from(kinds[k], name);
			if (unit == KPAGE && from)
				FAILF("%s kind %u: rounded from '%s', but the kernel traces it as kept",
				      name, kinds[k], from);
			if (unit == 1 && (!from || strcmp(from, "bytes")))
				FAILF("%s kind %u: rounded from '%s', not bytes", name, kinds[k],
				      from ? from : "(null)");
			if (unit == 1024 && (!from || strcmp(from, "kB")))
				FAILF("%s kind %u: rounded from '%s', not kB", name, kinds[k],
				      from ? from : "(null)");
		}
	}
	/* the rounding the report's notes describe: whole pages, a nonzero update at least one */
	ASSERT_EQ(kernel_val_in_pages(1, 12288), 3);
	ASSERT_EQ(kernel_val_in_pages(1, 100), 1);
	ASSERT_EQ(kernel_val_in_pages(1, -100), -1);
	ASSERT_EQ(kernel_val_in_pages(1, 8191), 1);
	ASSERT_EQ(kernel_val_in_pages(1024, 16), 4);
	ASSERT_EQ(kernel_val_in_pages(1024, -5), -1);
}

TEST(events_and_other_kinds)
{
	static const char *const events[] = { "PGFAULT", "PGMAJFAULT", "PGPGIN", "PGPGOUT",
					       "PGSCAN_KSWAPD", "ZSWPOUT", "THP_FAULT_ALLOC" };
	unsigned int k;
	size_t i;

	ASSERT_STR(mcr_item_unit(MCR_EV_EVENTS), "events");
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		ASSERT(!mcr_item_rounded_from(MCR_EV_EVENTS, events[i]));
	/* an event kind never converts, whatever its name */
	ASSERT(!mcr_item_rounded_from(MCR_EV_EVENTS, "MEMCG_PERCPU_B"));
	for (k = MCR_EV_FLUSH; k <= MCR_EV_KIND_MAX + 1; k++) {
		ASSERT(!mcr_item_unit(k));
		ASSERT(!mcr_item_rounded_from(k, "NR_SLAB_RECLAIMABLE_B"));
	}
	ASSERT(!mcr_item_unit(0));
	ASSERT(!mcr_item_rounded_from(MCR_EV_STATE, NULL));
	ASSERT(!mcr_item_rounded_from(MCR_EV_STATE, "_B"));
	ASSERT(!mcr_item_rounded_from(MCR_EV_STATE, ""));
}

struct walk {
	int	items, rounded, bad;
	char	first_bad[160];
};

static int walk_item(void *ctx, int kind, int item, const char *name, const char *unit)
{
	struct walk *w = ctx;
	const char *want = kind == MCR_EV_EVENTS ? "events" : "pages";

	w->items++;
	if (mcr_item_rounded_from((unsigned int)kind, name))
		w->rounded++;
	if (!unit || strcmp(unit, want)) {
		if (!w->bad++)
			snprintf(w->first_bad, sizeof(w->first_bad), "%s (kind %d, item %d): '%s'",
				 name, kind, item, unit ? unit : "(null)");
	}
	return 0;
}

/* What capture and import store in items.unit for this kernel's BTF. */
TEST(btf_item_units)
{
	struct walk w = { 0 };
	int n = btf_items_walk(walk_item, &w);

	if (n < 0)
		SKIP("no kernel BTF: %s", strerror(-n));
	ASSERT_EQ(n, w.items);
	if (w.bad)
		FAILF("%d items not in the unit their updates are traced in, first %s", w.bad,
		      w.first_bad);
	if (!w.rounded)
		SKIP("this kernel's BTF has no *_B or NR_KERNEL_STACK_KB item");
}

TEST_MAIN(state_items_are_pages, events_and_other_kinds, btf_item_units)
