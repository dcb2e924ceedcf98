// SPDX-License-Identifier: GPL-2.0
/*
 * statlines.c - which traced stat item each memory.stat line prints, and in
 * which unit.
 *
 * The tables follow the kernel's own format code, line for line:
 *
 *   cgroup v1: memcg1_stat_format() in mm/memcontrol-v1.c prints
 *     memcg1_stats[] under memcg1_stat_names[] (memcg_page_state_local_output()),
 *     memcg1_events[] (memcg_events_local()), the LRU lists (pages * PAGE_SIZE),
 *     hierarchical_memory_limit and hierarchical_memsw_limit, then the same
 *     three groups again as "total_<name>" from the hierarchical counters
 *     (memcg_page_state_output(), memcg_events(), memcg_page_state()).
 *   cgroup v2: memcg_stat_format() in mm/memcontrol.c prints memory_stats[]
 *     (memcg_page_state_output(); "slab" after slab_unreclaimable as the sum
 *     of both), "pgscan" and "pgsteal" as sums of their per-source events,
 *     then memcg_vm_event_stat[] under vm_event_name() (PGPGIN/PGPGOUT
 *     skipped), every one hierarchical.
 *
 * memcg_page_state_output_unit() decides the printed unit of a state item:
 * the workingset and demotion/promotion items print as a count (1), the *_B
 * items in bytes (1), NR_KERNEL_STACK_KB in kB (SZ_1K), everything else in
 * pages (PAGE_SIZE).  The tracepoints carry every state item in pages (the
 * byte and kB ones rounded, items.unit): so a *_B or _KB line prints bytes
 * exactly while the traced sum is only near it ("rounded" below).
 */
#include <errno.h>
#include <string.h>

#include "statlines.h"

#define STATE_PAGES(n, it, v1)	{ n, STATLINE_STATE, it, STATLINE_BYTES, true, false, v1 }
#define STATE_ROUND(n, it)	{ n, STATLINE_STATE, it, STATLINE_BYTES, true, true, false }
#define STATE_COUNT(n, it, v1)	{ n, STATLINE_STATE, it, STATLINE_COUNT, false, false, v1 }
#define EVENT(n, it, v1)	{ n, STATLINE_EVENT, it, STATLINE_COUNT, false, false, v1 }
#define NONE(n, u)		{ n, STATLINE_NONE, NULL, u, false, false, false }

/* memcg1_stat_format(): local names; v1_total: a total_<name> line follows too. */
static const struct statline statlines_v1[] = {
	/* memcg1_stats[] / memcg1_stat_names[] */
	STATE_PAGES("cache", "NR_FILE_PAGES", true),
	STATE_PAGES("rss", "NR_ANON_MAPPED", true),
	/* CONFIG_TRANSPARENT_HUGEPAGE */
	STATE_PAGES("rss_huge", "NR_ANON_THPS", true),
	STATE_PAGES("shmem", "NR_SHMEM", true),
	STATE_PAGES("mapped_file", "NR_FILE_MAPPED", true),
	STATE_PAGES("dirty", "NR_FILE_DIRTY", true),
	STATE_PAGES("writeback", "NR_WRITEBACK", true),
	STATE_COUNT("workingset_refault_anon", "WORKINGSET_REFAULT_ANON", true),
	STATE_COUNT("workingset_refault_file", "WORKINGSET_REFAULT_FILE", true),
	/* CONFIG_SWAP */
	STATE_PAGES("swap", "MEMCG_SWAP", true),
	STATE_PAGES("swapcached", "NR_SWAPCACHE", true),
	/* memcg1_events[] */
	EVENT("pgpgin", "PGPGIN", true),
	EVENT("pgpgout", "PGPGOUT", true),
	EVENT("pgfault", "PGFAULT", true),
	EVENT("pgmajfault", "PGMAJFAULT", true),
	/* lru_list_name(i), NR_LRU_BASE + i */
	STATE_PAGES("inactive_anon", "NR_INACTIVE_ANON", true),
	STATE_PAGES("active_anon", "NR_ACTIVE_ANON", true),
	STATE_PAGES("inactive_file", "NR_INACTIVE_FILE", true),
	STATE_PAGES("active_file", "NR_ACTIVE_FILE", true),
	STATE_PAGES("unevictable", "NR_UNEVICTABLE", true),
	/* page counters, not rstat */
	NONE("hierarchical_memory_limit", STATLINE_BYTES),
	NONE("hierarchical_memsw_limit", STATLINE_BYTES),
	/* CONFIG_DEBUG_VM: lruvec reclaim costs */
	NONE("anon_cost", STATLINE_COUNT),
	NONE("file_cost", STATLINE_COUNT),
};

/* memcg_stat_format(): memory_stats[], the two sums, memcg_vm_event_stat[]. */
static const struct statline statlines_v2[] = {
	STATE_PAGES("anon", "NR_ANON_MAPPED", false),
	STATE_PAGES("file", "NR_FILE_PAGES", false),
	STATE_PAGES("kernel", "MEMCG_KMEM", false),
	STATE_ROUND("kernel_stack", "NR_KERNEL_STACK_KB"),
	STATE_PAGES("pagetables", "NR_PAGETABLE", false),
	STATE_PAGES("sec_pagetables", "NR_SECONDARY_PAGETABLE", false),
	STATE_ROUND("percpu", "MEMCG_PERCPU_B"),
	STATE_PAGES("sock", "MEMCG_SOCK", false),
	STATE_PAGES("vmalloc", "MEMCG_VMALLOC", false),
	STATE_PAGES("shmem", "NR_SHMEM", false),
	/* CONFIG_ZSWAP */
	STATE_ROUND("zswap", "MEMCG_ZSWAP_B"),
	STATE_PAGES("zswapped", "MEMCG_ZSWAPPED", false),
	STATE_PAGES("file_mapped", "NR_FILE_MAPPED", false),
	STATE_PAGES("file_dirty", "NR_FILE_DIRTY", false),
	STATE_PAGES("file_writeback", "NR_WRITEBACK", false),
	/* CONFIG_SWAP */
	STATE_PAGES("swapcached", "NR_SWAPCACHE", false),
	/* CONFIG_TRANSPARENT_HUGEPAGE */
	STATE_PAGES("anon_thp", "NR_ANON_THPS", false),
	STATE_PAGES("file_thp", "NR_FILE_THPS", false),
	STATE_PAGES("shmem_thp", "NR_SHMEM_THPS", false),
	/* the LRU lists */
	STATE_PAGES("inactive_anon", "NR_INACTIVE_ANON", false),
	STATE_PAGES("active_anon", "NR_ACTIVE_ANON", false),
	STATE_PAGES("inactive_file", "NR_INACTIVE_FILE", false),
	STATE_PAGES("active_file", "NR_ACTIVE_FILE", false),
	STATE_PAGES("unevictable", "NR_UNEVICTABLE", false),
	STATE_ROUND("slab_reclaimable", "NR_SLAB_RECLAIMABLE_B"),
	STATE_ROUND("slab_unreclaimable", "NR_SLAB_UNRECLAIMABLE_B"),
	/* the two above, summed */
	NONE("slab", STATLINE_BYTES),
	/* memory_hugetlb_accounting */
	STATE_PAGES("hugetlb", "NR_HUGETLB", false),
	/* the memory events: pages, printed as counts */
	STATE_COUNT("workingset_refault_anon", "WORKINGSET_REFAULT_ANON", false),
	STATE_COUNT("workingset_refault_file", "WORKINGSET_REFAULT_FILE", false),
	STATE_COUNT("workingset_activate_anon", "WORKINGSET_ACTIVATE_ANON", false),
	STATE_COUNT("workingset_activate_file", "WORKINGSET_ACTIVATE_FILE", false),
	STATE_COUNT("workingset_restore_anon", "WORKINGSET_RESTORE_ANON", false),
	STATE_COUNT("workingset_restore_file", "WORKINGSET_RESTORE_FILE", false),
	STATE_COUNT("workingset_nodereclaim", "WORKINGSET_NODERECLAIM", false),
	STATE_COUNT("pgdemote_kswapd", "PGDEMOTE_KSWAPD", false),
	STATE_COUNT("pgdemote_direct", "PGDEMOTE_DIRECT", false),
	STATE_COUNT("pgdemote_khugepaged", "PGDEMOTE_KHUGEPAGED", false),
	STATE_COUNT("pgdemote_proactive", "PGDEMOTE_PROACTIVE", false),
	/* CONFIG_NUMA_BALANCING */
	STATE_COUNT("pgpromote_success", "PGPROMOTE_SUCCESS", false),
	/* the PGSCAN_* and PGSTEAL_* events, summed */
	NONE("pgscan", STATLINE_COUNT),
	NONE("pgsteal", STATLINE_COUNT),
	/* memcg_vm_event_stat[] under vm_event_name() */
	EVENT("pswpin", "PSWPIN", false),
	EVENT("pswpout", "PSWPOUT", false),
	EVENT("pgscan_kswapd", "PGSCAN_KSWAPD", false),
	EVENT("pgscan_direct", "PGSCAN_DIRECT", false),
	EVENT("pgscan_khugepaged", "PGSCAN_KHUGEPAGED", false),
	EVENT("pgscan_proactive", "PGSCAN_PROACTIVE", false),
	EVENT("pgsteal_kswapd", "PGSTEAL_KSWAPD", false),
	EVENT("pgsteal_direct", "PGSTEAL_DIRECT", false),
	EVENT("pgsteal_khugepaged", "PGSTEAL_KHUGEPAGED", false),
	EVENT("pgsteal_proactive", "PGSTEAL_PROACTIVE", false),
	EVENT("pgfault", "PGFAULT", false),
	EVENT("pgmajfault", "PGMAJFAULT", false),
	EVENT("pgrefill", "PGREFILL", false),
	EVENT("pgactivate", "PGACTIVATE", false),
	EVENT("pgdeactivate", "PGDEACTIVATE", false),
	EVENT("pglazyfree", "PGLAZYFREE", false),
	EVENT("pglazyfreed", "PGLAZYFREED", false),
	EVENT("swpin_zero", "SWPIN_ZERO", false),
	EVENT("swpout_zero", "SWPOUT_ZERO", false),
	EVENT("zswpin", "ZSWPIN", false),
	EVENT("zswpout", "ZSWPOUT", false),
	EVENT("zswpwb", "ZSWPWB", false),
	EVENT("thp_fault_alloc", "THP_FAULT_ALLOC", false),
	EVENT("thp_collapse_alloc", "THP_COLLAPSE_ALLOC", false),
	EVENT("thp_swpout", "THP_SWPOUT", false),
	EVENT("thp_swpout_fallback", "THP_SWPOUT_FALLBACK", false),
	EVENT("numa_pages_migrated", "NUMA_PAGE_MIGRATE", false),
	EVENT("numa_pte_updates", "NUMA_PTE_UPDATES", false),
	EVENT("numa_hint_faults", "NUMA_HINT_FAULTS", false),
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

const struct statline *statline_table(int version, size_t *n)
{
	if (version == 1) {
		*n = ARRAY_LEN(statlines_v1);
		return statlines_v1;
	}
	if (version == 2) {
		*n = ARRAY_LEN(statlines_v2);
		return statlines_v2;
	}
	*n = 0;
	return NULL;
}

static const struct statline *statline_find(const struct statline *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

int statline_lookup(int version, const char *name, struct statline_ref *ref)
{
	const struct statline *t, *l;
	size_t n;

	ref->line = NULL;
	ref->hierarchical = false;
	t = statline_table(version, &n);
	if (!t)
		return -EINVAL;
	if (version == 2) {
		ref->line = statline_find(t, n, name);
		ref->hierarchical = true;
		return ref->line ? 0 : -ENOENT;
	}
	/* v1: a local line, or total_<a line that has one> */
	l = statline_find(t, n, name);
	if (l) {
		ref->line = l;
		return 0;
	}
	if (strncmp(name, "total_", 6))
		return -ENOENT;
	l = statline_find(t, n, name + 6);
	if (!l || !l->v1_total)
		return -ENOENT;
	ref->line = l;
	ref->hierarchical = true;
	return 0;
}

/* The entry of @t that prints @item, or NULL. */
static const struct statline *statline_of_item(const struct statline *t, size_t n,
					       const char *item)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].item && !strcmp(t[i].item, item))
			return &t[i];
	return NULL;
}

int statline_names(const char *item, struct statline_names *out)
{
	const struct statline *l1, *l2;

	l1 = statline_of_item(statlines_v1, ARRAY_LEN(statlines_v1), item);
	l2 = statline_of_item(statlines_v2, ARRAY_LEN(statlines_v2), item);
	*out = (struct statline_names){
		.v1 = l1 ? l1->name : NULL, .v1_total = l1 && l1->v1_total,
		.v2 = l2 ? l2->name : NULL,
	};
	return l1 || l2 ? 0 : -ENOENT;
}

int statline_item(const char *name, const char **item)
{
	struct statline_ref ref;

	*item = NULL;
	if ((statline_lookup(2, name, &ref) && statline_lookup(1, name, &ref)) ||
	    !ref.line->item)
		return -ENOENT;
	*item = ref.line->item;
	return 0;
}

const char *statline_unit_name(enum statline_unit unit)
{
	return unit == STATLINE_BYTES ? "bytes" : "count";
}

int statline_parse(const char *line, size_t line_len, char *name, size_t len, uint64_t *value)
{
	const char *sp = memchr(line, ' ', line_len), *p;
	uint64_t v = 0;

	if (!sp || sp == line || sp + 1 == line + line_len)
		return -EINVAL;
	for (p = sp + 1; p < line + line_len; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if ((size_t)(sp - line) >= len)
		return -ERANGE;
	memcpy(name, line, (size_t)(sp - line));
	name[sp - line] = '\0';
	*value = v;
	return 0;
}
