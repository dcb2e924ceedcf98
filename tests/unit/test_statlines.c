// SPDX-License-Identifier: GPL-2.0
/*
 * test_statlines.c - the memory.stat line table (sim/statlines.c) against a
 * memory.stat captured from a cgroup v1 kernel and one written from the v2
 * format code: every line parses, every line has an entry and a unit, and
 * the lines a staleness check compares map to the right item and scale.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../harness.h"
#include "statlines.h"

/* Every line of @path: parses, is known, and is hierarchical or not as named. */
static int check_file(struct test_ctx *t, const char *path, int version, int *hier)
{
	char buf[256], name[128];
	struct statline_ref ref;
	uint64_t v;
	FILE *f = fopen(path, "r");
	int n = 0;

	*hier = 0;
	if (!f) {
		printf("FAIL %s: cannot open %s\n", t->name, path);
		t->failed = 1;
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strcspn(buf, "\n");

		if (statline_parse(buf, len, name, sizeof(name), &v) ||
		    statline_lookup(version, name, &ref) || !ref.line) {
			printf("FAIL %s: %s: line '%.*s' not parsed or not in the table\n",
			       t->name, path, (int)len, buf);
			t->failed = 1;
			fclose(f);
			return -1;
		}
		*hier += ref.hierarchical;
		n++;
	}
	fclose(f);
	return n;
}

TEST(v1_captured_file_every_line_known)
{
	int hier, n = check_file(t, "tests/data/memory.stat.v1", 1, &hier);

	if (n < 0)
		return;
	ASSERT(n >= 40);
	/* the total_ lines: each memcg1_stats[], memcg1_events[] and LRU line again */
	ASSERT(hier >= 19);
	ASSERT(hier < n);
}

TEST(v2_sample_file_every_line_known)
{
	int hier, n = check_file(t, "tests/data/memory.stat.v2", 2, &hier);

	if (n < 0)
		return;
	ASSERT(n >= 60);
	ASSERT_EQ(hier, n);
}

TEST(v1_total_lines_map_to_items)
{
	struct statline_ref r;

	ASSERT_EQ(statline_lookup(1, "total_rss", &r), 0);
	ASSERT(r.hierarchical);
	ASSERT_STR(r.line->item, "NR_ANON_MAPPED");
	ASSERT_EQ(r.line->kind, STATLINE_STATE);
	ASSERT(r.line->per_page);
	ASSERT_STR(statline_unit_name(r.line->unit), "bytes");

	ASSERT_EQ(statline_lookup(1, "total_cache", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_PAGES");
	ASSERT_EQ(statline_lookup(1, "total_mapped_file", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_MAPPED");
	ASSERT_EQ(statline_lookup(1, "total_dirty", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_DIRTY");
	ASSERT_EQ(statline_lookup(1, "total_writeback", &r), 0);
	ASSERT_STR(r.line->item, "NR_WRITEBACK");
	ASSERT_EQ(statline_lookup(1, "total_shmem", &r), 0);
	ASSERT_STR(r.line->item, "NR_SHMEM");

	ASSERT_EQ(statline_lookup(1, "total_pgfault", &r), 0);
	ASSERT(r.hierarchical);
	ASSERT_EQ(r.line->kind, STATLINE_EVENT);
	ASSERT_STR(r.line->item, "PGFAULT");
	ASSERT(!r.line->per_page);
	ASSERT_STR(statline_unit_name(r.line->unit), "count");

	/* workingset refaults: kept in pages, printed as a count */
	ASSERT_EQ(statline_lookup(1, "total_workingset_refault_file", &r), 0);
	ASSERT_EQ(r.line->kind, STATLINE_STATE);
	ASSERT(!r.line->per_page);

	/* the local line is the cgroup's own value */
	ASSERT_EQ(statline_lookup(1, "rss", &r), 0);
	ASSERT(!r.hierarchical);
	ASSERT_STR(r.line->item, "NR_ANON_MAPPED");

	/* limits: no traced item, no total_ twin */
	ASSERT_EQ(statline_lookup(1, "hierarchical_memory_limit", &r), 0);
	ASSERT_EQ(r.line->kind, STATLINE_NONE);
	ASSERT_EQ(statline_lookup(1, "total_hierarchical_memory_limit", &r), -ENOENT);
	ASSERT(!r.line);
	/* a v2 name is not a v1 line */
	ASSERT_EQ(statline_lookup(1, "anon", &r), -ENOENT);
}

TEST(v2_lines_map_to_items)
{
	struct statline_ref r;

	ASSERT_EQ(statline_lookup(2, "anon", &r), 0);
	ASSERT(r.hierarchical);
	ASSERT_STR(r.line->item, "NR_ANON_MAPPED");
	ASSERT(r.line->per_page && !r.line->rounded);
	ASSERT_EQ(statline_lookup(2, "file", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_PAGES");
	ASSERT_EQ(statline_lookup(2, "file_mapped", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_MAPPED");
	ASSERT_EQ(statline_lookup(2, "file_dirty", &r), 0);
	ASSERT_STR(r.line->item, "NR_FILE_DIRTY");
	ASSERT_EQ(statline_lookup(2, "active_file", &r), 0);
	ASSERT_STR(r.line->item, "NR_ACTIVE_FILE");
	ASSERT_EQ(statline_lookup(2, "kernel_stack", &r), 0);
	ASSERT_STR(r.line->item, "NR_KERNEL_STACK_KB");
	ASSERT(r.line->rounded);
	ASSERT_EQ(statline_lookup(2, "slab_reclaimable", &r), 0);
	ASSERT_STR(r.line->item, "NR_SLAB_RECLAIMABLE_B");
	ASSERT(r.line->rounded);
	ASSERT_EQ(statline_lookup(2, "pgmajfault", &r), 0);
	ASSERT_EQ(r.line->kind, STATLINE_EVENT);
	ASSERT_STR(r.line->item, "PGMAJFAULT");
	ASSERT_EQ(statline_lookup(2, "slab", &r), 0);
	ASSERT_EQ(r.line->kind, STATLINE_NONE);
	ASSERT_STR(statline_unit_name(r.line->unit), "bytes");
	ASSERT_EQ(statline_lookup(2, "total_rss", &r), -ENOENT);
	ASSERT_EQ(statline_lookup(3, "anon", &r), -EINVAL);
}

TEST(parse_refuses_what_the_kernel_does_not_print)
{
	char name[8];
	uint64_t v;

	ASSERT_EQ(statline_parse("rss 4096", 8, name, sizeof(name), &v), 0);
	ASSERT_STR(name, "rss");
	ASSERT_EQU(v, 4096);
	ASSERT_EQ(statline_parse("x 18446744073709551615", 22, name, sizeof(name), &v), 0);
	ASSERT_EQU(v, UINT64_MAX);
	ASSERT_EQ(statline_parse("x 18446744073709551616", 22, name, sizeof(name), &v), -ERANGE);
	ASSERT_EQ(statline_parse("rss", 3, name, sizeof(name), &v), -EINVAL);
	ASSERT_EQ(statline_parse(" 1", 2, name, sizeof(name), &v), -EINVAL);
	ASSERT_EQ(statline_parse("rss ", 4, name, sizeof(name), &v), -EINVAL);
	ASSERT_EQ(statline_parse("rss -1", 6, name, sizeof(name), &v), -EINVAL);
	ASSERT_EQ(statline_parse("rss 1 2", 7, name, sizeof(name), &v), -EINVAL);
	ASSERT_EQ(statline_parse("longername 1", 12, name, sizeof(name), &v), -ERANGE);
}

TEST(every_entry_well_formed)
{
	int version;

	for (version = 1; version <= 2; version++) {
		size_t n, i, j;
		const struct statline *tb = statline_table(version, &n);

		ASSERT(tb && n > 20);
		for (i = 0; i < n; i++) {
			ASSERT(tb[i].name && tb[i].name[0]);
			ASSERT((tb[i].kind == STATLINE_NONE) == !tb[i].item);
			ASSERT(!(tb[i].kind == STATLINE_EVENT && tb[i].per_page));
			for (j = i + 1; j < n; j++)
				ASSERT(strcmp(tb[i].name, tb[j].name));
		}
	}
}

/*
 * The reverse, item -> names (memcg1_stat_format(): memcg1_stat_names[] over
 * memcg1_stats[], the LRU lists, memcg1_events[]; memcg_stat_format():
 * memory_stats[], memcg_vm_event_stat[]).
 */
TEST(item_names_both_versions)
{
	struct statline_names n;

	ASSERT_EQ(statline_names("NR_ANON_MAPPED", &n), 0);
	ASSERT_STR(n.v1, "rss");
	ASSERT(n.v1_total);
	ASSERT_STR(n.v2, "anon");
	ASSERT_EQ(statline_names("NR_FILE_PAGES", &n), 0);
	ASSERT_STR(n.v1, "cache");
	ASSERT_STR(n.v2, "file");
	ASSERT_EQ(statline_names("NR_FILE_DIRTY", &n), 0);
	ASSERT_STR(n.v1, "dirty");
	ASSERT_STR(n.v2, "file_dirty");
	ASSERT_EQ(statline_names("PGMAJFAULT", &n), 0);
	ASSERT_STR(n.v1, "pgmajfault");
	ASSERT_STR(n.v2, "pgmajfault");
	/* one version only */
	ASSERT_EQ(statline_names("MEMCG_SWAP", &n), 0);
	ASSERT_STR(n.v1, "swap");
	ASSERT(!n.v2);
	ASSERT_EQ(statline_names("NR_KERNEL_STACK_KB", &n), 0);
	ASSERT(!n.v1 && !n.v1_total);
	ASSERT_STR(n.v2, "kernel_stack");
	/* printed by neither: a traced item memory.stat does not show */
	ASSERT_EQ(statline_names("NR_SLAB_NONE_SUCH", &n), -ENOENT);
	ASSERT(!n.v1 && !n.v2 && !n.v1_total);
}

TEST(line_names_to_items)
{
	const char *it;

	ASSERT_EQ(statline_item("anon", &it), 0);
	ASSERT_STR(it, "NR_ANON_MAPPED");
	ASSERT_EQ(statline_item("rss", &it), 0);
	ASSERT_STR(it, "NR_ANON_MAPPED");
	ASSERT_EQ(statline_item("total_rss", &it), 0);
	ASSERT_STR(it, "NR_ANON_MAPPED");
	ASSERT_EQ(statline_item("total_cache", &it), 0);
	ASSERT_STR(it, "NR_FILE_PAGES");
	ASSERT_EQ(statline_item("file_dirty", &it), 0);
	ASSERT_STR(it, "NR_FILE_DIRTY");
	ASSERT_EQ(statline_item("total_pgfault", &it), 0);
	ASSERT_STR(it, "PGFAULT");
	/* no single item, or no line */
	ASSERT_EQ(statline_item("slab", &it), -ENOENT);
	ASSERT(!it);
	ASSERT_EQ(statline_item("hierarchical_memory_limit", &it), -ENOENT);
	ASSERT_EQ(statline_item("total_anon", &it), -ENOENT);
	ASSERT_EQ(statline_item("NR_ANON_MAPPED", &it), -ENOENT);
	ASSERT_EQ(statline_item("", &it), -ENOENT);
}

/* Both directions agree over both tables, and no name means two items. */
TEST(names_round_trip)
{
	int version;

	for (version = 1; version <= 2; version++) {
		size_t n, i;
		const struct statline *tb = statline_table(version, &n);

		for (i = 0; i < n; i++) {
			struct statline_names nm;
			const char *it;
			struct statline_ref r;

			if (!tb[i].item)
				continue;
			ASSERT_EQ(statline_item(tb[i].name, &it), 0);
			ASSERT_STR(it, tb[i].item);
			/* the same name in the other version is the same item */
			if (!statline_lookup(3 - version, tb[i].name, &r) && r.line->item)
				ASSERT_STR(r.line->item, tb[i].item);
			ASSERT_EQ(statline_names(tb[i].item, &nm), 0);
			ASSERT_STR(version == 1 ? nm.v1 : nm.v2, tb[i].name);
		}
	}
}

TEST_MAIN(item_names_both_versions, line_names_to_items, names_round_trip,
	  v1_captured_file_every_line_known, v2_sample_file_every_line_known,
	  v1_total_lines_map_to_items, v2_lines_map_to_items,
	  parse_refuses_what_the_kernel_does_not_print, every_entry_well_formed)
