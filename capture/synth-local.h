/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth-local.h - what scenarios use inside the generator (capture/synth*.c).
 *
 * A scenario is straight-line code that calls synth_update() and synth_read()
 * in non-decreasing (ts, cpu) order.  The engine keeps the ground-truth BREAK
 * simulator in step, numbers events per CPU, and runs the flush machine: each
 * flush that goes ahead becomes, for every possible CPU in turn, a
 * locked(cpu) ... unlock(cpu) window on the flusher's CPU whose visits are
 * spread over the window in visit order (children first).  Updates the
 * scenario emits meanwhile land inside the windows by timestamp, which is
 * what lets the race happen: credit an ancestor gets after a child's last
 * visit is wiped when mem_cgroup_css_rstat_flush() sets the ancestor's
 * atomic to 0 at its own later visit.
 */
#ifndef MCR_SYNTH_LOCAL_H
#define MCR_SYNTH_LOCAL_H

#include "idmap.h"
#include "sim.h"
#include "synth.h"
#include "synth_rng.h"

#define SYNTH_NS_PER_US		1000ull
#define SYNTH_NS_PER_MS		1000000ull
#define SYNTH_NS_PER_S		1000000000ull
#define SYNTH_PAGES_PER_MIB	256u		/* 4 KiB pages */
#define SYNTH_HIERARCHY_ID	4		/* the memory controller's hierarchy on the v1 host */
#define SYNTH_LOCK_NS		1000ull		/* request -> rstat lock taken */

/* One flush that went ahead: css_rstat_flush(@id) by @pid, traced on @cpu. */
struct synth_flush {
	uint64_t	id;
	uint64_t	start;		/* first locked() */
	int32_t		cpu;
	int32_t		pid;
	int16_t		level;
};

enum synth_phase {
	SYNTH_LOCK,
	SYNTH_VISIT,
	SYNTH_UNLOCK,
};

struct synth {
	const struct synth_args		*args;
	const struct synth_out		*out;
	struct synth_stats		*st;
	struct sim			*sim;
	struct synth_rng		rng;
	uint64_t			*seq;		/* per CPU */
	uint64_t			now;		/* ts of the last action */
	uint64_t			flush_ns;	/* one flush: all its per-CPU windows */
	unsigned int			nr_possible;
	unsigned int			nr_online;
	bool				explicit_visits;
	char				options[512];	/* meta 'options', JSON */

	/* the running flush */
	bool				fl_active;
	struct synth_flush		fl;
	enum synth_phase		fl_phase;
	unsigned int			fl_win;		/* CPU whose tree is being flushed */
	uint64_t			fl_next;	/* when the next action happens */
	uint64_t			fl_win_start;
	uint64_t			fl_win_len;
	size_t				fl_n;		/* visits in this window */
	size_t				fl_i;		/* visits done */

	/*
	 * --hidden-order: each window's visits at sorted random times of
	 * their own PRNG (so the updates are those of the spread order), and
	 * where each update inside a window fell (table true_order)
	 */
	bool				hidden;
	struct synth_rng		hrng;
	uint64_t			*fl_vt;		/* the window's visit times */
	size_t				cap_vt;
	struct idmap			fl_idx;		/* id -> its place in the window's visits */
	struct db_true_order		*truth;
	size_t				nr_truth, cap_truth;

	/* flushes waiting for the rstat lock, FIFO */
	struct synth_flush		*queue;
	size_t				q_head;
	size_t				q_len;
	size_t				q_cap;
};

/* The value of scenario option @name (must exist in the scenario's table). */
double synth_arg(const struct synth *s, const char *name);

/*
 * Set up the synthetic machine: @nr_cpus possible and online (TH = 64 x
 * nr_cpus), each flush's windows lasting @flush_ns in total, VISIT events
 * emitted when @explicit_visits.  Must come first.
 */
int synth_machine(struct synth *s, unsigned int nr_cpus, uint64_t flush_ns, bool explicit_visits);

/*
 * Each window's visits at hidden random times instead of evenly spaced:
 * call after synth_machine().
 */
void synth_hidden_order(struct synth *s);
/* The true_order rows kept so far go to the database. */
int synth_truth_flush(struct synth *s);

/* A cgroup that exists before the trace; @parent 0 for the root. */
int synth_cgroup(struct synth *s, uint64_t id, uint64_t parent, const char *path);
/* A stat item's kernel name, for the items table. */
int synth_item(struct synth *s, int kind, int item, const char *name, const char *unit);

/* One traced update (kind MCR_EV_STATE, _LRUVEC or _EVENTS). */
int synth_update(struct synth *s, uint64_t ts, int cpu, int pid, int kind, uint64_t id,
		 int item, int64_t val);
/*
 * A flush request (memcg_flush_stats): traced with the ground truth's
 * stats_updates and needs_flush; if forced or flushable it goes ahead and its
 * windows start SYNTH_LOCK_NS later, or when the running flush ends.
 */
int synth_read(struct synth *s, uint64_t ts, int cpu, int pid, uint64_t id, bool force);
/* Run pending flush work up to (@ts, @cpu), exclusive. */
int synth_advance(struct synth *s, uint64_t ts, int cpu);
/* Finish every running and queued flush. */
int synth_drain(struct synth *s);

int synth_seed_race(struct synth *s);
int synth_pagecache(struct synth *s);
int synth_fleet(struct synth *s);

extern const struct synth_param synth_seed_race_params[];
extern const struct synth_param synth_pagecache_params[];
extern const struct synth_param synth_fleet_params[];

/*
 * Stat item numbers of the synthetic 6.18 kernel (x86-64 defconfig-like
 * numbering; a real trace takes them from BTF).  They only need to be
 * consistent within one trace.
 */
enum {
	SYNTH_NR_INACTIVE_FILE	= 2,	/* node_stat_item */
	SYNTH_NR_ACTIVE_ANON	= 1,
	SYNTH_NR_ANON_MAPPED	= 17,
	SYNTH_NR_FILE_PAGES	= 19,
	SYNTH_NR_FILE_DIRTY	= 20,
	SYNTH_NR_SHMEM		= 25,
	SYNTH_MEMCG_SOCK	= 47,	/* memcg_stat_item, after NR_VM_NODE_STAT_ITEMS */
	SYNTH_MEMCG_KMEM	= 50,
	SYNTH_PGPGIN		= 0,	/* vm_event_item */
	SYNTH_PGPGOUT		= 1,
	SYNTH_PGFAULT		= 24,
};

#endif
