/* SPDX-License-Identifier: GPL-2.0 */
/*
 * event.h - the one event record shared by capture, import, synth, db and replay.
 *
 * Contract: a struct mcr_event is one traced kernel event (or one explicit flush
 * visit of a synthetic trace), already decoded.  Producers fill it; db/ stores it
 * one row per event; replay/ consumes it.  Nothing here allocates or does I/O.
 */
#ifndef MCR_EVENT_H
#define MCR_EVENT_H

#include <stdint.h>

/* Values are stored in the database: never renumber, only append. */
enum mcr_event_kind {
	MCR_EV_STATE		= 1,	/* memcg:mod_memcg_state */
	MCR_EV_LRUVEC		= 2,	/* memcg:mod_memcg_lruvec_state */
	MCR_EV_EVENTS		= 3,	/* memcg:count_memcg_events */
	MCR_EV_FLUSH		= 4,	/* memcg:memcg_flush_stats */
	MCR_EV_LOCKED		= 5,	/* cgroup:cgroup_rstat_locked */
	MCR_EV_UNLOCK		= 6,	/* cgroup:cgroup_rstat_unlock */
	MCR_EV_CONTENDED	= 7,	/* cgroup:cgroup_rstat_lock_contended */
	MCR_EV_MKDIR		= 8,	/* cgroup:cgroup_mkdir */
	MCR_EV_RMDIR		= 9,	/* cgroup:cgroup_rmdir */
	MCR_EV_VISIT		= 10,	/* explicit flush visit (synthetic traces only) */
	MCR_EV_KIND_MAX		= 10,
};

/* mcr_event.flags */
#define MCR_FLUSH_FORCE		0x1	/* memcg_flush_stats.force */
#define MCR_FLUSH_NEEDS		0x2	/* memcg_flush_stats.needs_flush */
#define MCR_LOCK_CONTENDED	0x1	/* cgroup_rstat_*.contended */

/*
 * Field use by kind:
 *   STATE/LRUVEC: id = memcg cgroup id, item = enum value, val = traced val (pages, signed)
 *   EVENTS:       id, item, val = traced unsigned long count stored bit for bit;
 *                 the kernel's walk sees (int)val
 *   FLUSH:        id, val = traced stats_updates, flags = FORCE|NEEDS
 *   LOCKED/UNLOCK/CONTENDED: id = cgroup being flushed, item = the cpu field (the
 *                 CPU whose tree is flushed, -1 = none), aux = hierarchy id (root),
 *                 level, flags = CONTENDED
 *   MKDIR/RMDIR:  id, aux = hierarchy id, level (path lives in the cgroups table)
 *   VISIT:        id = memcg visited, item = CPU whose tree it was on
 * cpu is always the ring-buffer CPU the event was recorded on.
 */
struct mcr_event {
	uint64_t	ts;	/* ns in the trace clock */
	uint64_t	seq;	/* per-CPU sequence number, from 0, in ring-buffer order */
	uint64_t	id;
	int64_t		val;
	int32_t		cpu;
	int32_t		item;
	int32_t		aux;
	int32_t		pid;
	int16_t		level;
	uint8_t		kind;
	uint8_t		flags;
};

static inline int mcr_event_is_update(const struct mcr_event *ev)
{
	return ev->kind >= MCR_EV_STATE && ev->kind <= MCR_EV_EVENTS;
}

/*
 * The int memcg_rstat_updated() is called with, from a traced val: the state
 * events trace that int already; count_memcg_events() passes its unsigned
 * long count, truncated to int (mm/memcontrol.c).  The one place the
 * truncation is written.
 */
static inline int32_t mcr_walk_val(int64_t val)
{
	return (int32_t)(uint32_t)(uint64_t)val;
}

static inline int32_t mcr_event_walk_val(const struct mcr_event *ev)
{
	return mcr_walk_val(ev->val);
}

const char *mcr_event_kind_name(unsigned int kind);	/* "mod_memcg_state", ...; NULL if unknown */
int mcr_event_kind_parse(const char *name);		/* inverse; -EINVAL if unknown */

/*
 * The unit of the val an update of @kind carries, whatever its item: "events"
 * for count_memcg_events, "pages" for every item of mod_memcg_state and
 * mod_memcg_lruvec_state; NULL for a kind that is not an update.  Both
 * state tracepoints trace memcg_state_val_in_pages(idx, val) (mm/memcontrol.c),
 * so the items the kernel keeps in bytes (*_B) or kB (NR_KERNEL_STACK_KB)
 * arrive in pages too, rounded by the kernel to whole pages, a nonzero update
 * to at least one page of its sign.
 */
const char *mcr_item_unit(unsigned int kind);

/*
 * What such an item is counted in before the kernel turns it into pages:
 * "bytes" (*_B) or "kB" (NR_KERNEL_STACK_KB); NULL when its traced val is not
 * rounded (page items, events, other kinds).
 */
const char *mcr_item_rounded_from(unsigned int kind, const char *name);

#endif
