/* SPDX-License-Identifier: GPL-2.0 */
/*
 * statlines.h - the lines of a cgroup's memory.stat, mapped to the stat items
 * the memcg tracepoints carry.
 *
 * Contract: one table per cgroup version says, for each line name the kernel
 * prints, which traced item it shows (the event kind and the enumerator name
 * as the items table stores it), whether it is the subtree's value (what the
 * rstat flush makes readable) or the cgroup's own, and how the printed number
 * relates to the traced one:
 *
 *   printed = traced sum * per_unit, per_unit = page_size or 1.
 *
 * Lines of no single traced item (limits, sums of several items) are listed
 * with kind STATLINE_NONE so that every line a reader sees has a unit.  Pure
 * data and string parsing: no I/O, no allocation.
 */
#ifndef MCR_STATLINES_H
#define MCR_STATLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum statline_kind {
	STATLINE_NONE,		/* no single traced item: a limit or a sum of items */
	STATLINE_STATE,		/* mod_memcg_state / mod_memcg_lruvec_state (kinds 1, 2) */
	STATLINE_EVENT,		/* count_memcg_events (kind 3) */
};

/* What the printed number counts. */
enum statline_unit {
	STATLINE_BYTES,		/* bytes */
	STATLINE_COUNT,		/* events (or pages, printed as a scalar count) */
};

struct statline {
	const char		*name;		/* as printed; v1: the local line ("rss") */
	enum statline_kind	kind;
	const char		*item;		/* enumerator name (items.name); NULL for NONE */
	enum statline_unit	unit;		/* of the printed number */
	bool			per_page;	/* printed = traced * page_size; else traced * 1 */
	/*
	 * The kernel keeps the item in bytes or kB and traces it rounded to
	 * whole pages (items.unit): the printed number is exact, the traced
	 * sum only near it.
	 */
	bool			rounded;
	bool			v1_total;	/* v1 prints a total_<name> line for it too */
};

/* What statline_lookup() says about one printed line. */
struct statline_ref {
	const struct statline	*line;		/* NULL: a line the table does not know */
	bool			hierarchical;	/* the subtree's value (v2 lines, v1 total_*) */
};

/*
 * statline_lookup - the table entry of line @name of a cgroup v@version
 * memory.stat.  v1 names its hierarchical lines "total_<name>".  Returns 0,
 * or -ENOENT (ref->line NULL) for a name the table does not list, -EINVAL for
 * a version other than 1 or 2.
 */
int statline_lookup(int version, const char *name, struct statline_ref *ref);

/*
 * The reverse of statline_lookup(), from the same tables: the memory.stat
 * lines that print traced item @item (its enumerator name, items.name).
 */
struct statline_names {
	const char	*v1;		/* v1's local line ("rss"); NULL if v1 prints none */
	bool		v1_total;	/* v1 prints "total_<v1>" (the subtree's) too */
	const char	*v2;		/* v2's line ("anon"); NULL if v2 prints none */
};

/*
 * statline_names - fill @out with the v1 and v2 lines of @item.  Returns 0
 * if either version prints it, -ENOENT (both NULL) if neither does.
 */
int statline_names(const char *item, struct statline_names *out);

/*
 * statline_item - the traced item a memory.stat line name shows, whichever
 * version prints it: a v2 name ("anon"), a v1 local name ("rss") or a v1
 * total ("total_rss").  *@item is its enumerator name.  Returns 0, or
 * -ENOENT for a name no version prints or a line of no single item ("slab").
 * No name means two items: where v1 and v2 both print a name, it is the
 * same item (checked by tests/unit/test_statlines.c).
 */
int statline_item(const char *name, const char **item);

/* The table of @version (1 or 2) and its length into *@n; NULL for another version. */
const struct statline *statline_table(int version, size_t *n);

/* "bytes" or "count". */
const char *statline_unit_name(enum statline_unit unit);

/*
 * statline_parse - split one line "name value" as the kernel prints it
 * (without its newline).  @name gets the name (at most @len - 1 bytes);
 * *@value the decimal value.  Returns 0, -EINVAL for a line not of that form
 * (no blank, an empty name, a value that is not decimal digits), -ERANGE for
 * a value above UINT64_MAX or a name too long for @name.
 */
int statline_parse(const char *line, size_t line_len, char *name, size_t len, uint64_t *value);

#endif
