/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cost_model.h - turn a run's operation counts into time: what the update
 * path of memcg_rstat_updated() (mm/memcontrol.c) costs per update and in
 * CPU-seconds per second of trace, from per-operation costs measured on a
 * host (memcg-replay calibrate).
 *
 * Contract: pure arithmetic on the caller's numbers; no I/O, no global state,
 * no allocation.  It owns the formula and the names of the measured
 * operations (the keys of a calibration file and the rows of the calibration
 * table); it never measures anything (replay/cost.c does) and never decides
 * what the trace looked like (the shared fraction is the caller's).
 *
 * What the estimate leaves out, said wherever it is shown: cache effects of
 * the real kernel (memcg structs, per-CPU areas and the rest of the kernel
 * competing for the cache), lock contention, that the figures are user-space
 * proxies of the kernel's operations (a thread-local add for this_cpu_add(),
 * a lock add on a shared line for atomic_add(), ...), interrupts, and the
 * flush side (visits, resets), which runs on readers' time, not updaters'.
 */
#ifndef MCR_SIM_COST_MODEL_H
#define MCR_SIM_COST_MODEL_H

#include <stdint.h>

/* Measured operations; values are stored by name, so the order may change. */
enum sim_cost_op {
	SIM_COST_PLAIN_ADD,		/* baseline: an add to a register, not a kernel operation */
	SIM_COST_PCPU_ADD,		/* this_cpu_add(): an add to a line private to the CPU */
	SIM_COST_ATOMIC_ADD,		/* atomic_add() on a shared line nobody else writes */
	SIM_COST_ATOMIC_CONTENDED,	/* the same while every online CPU adds to the line */
	SIM_COST_FLUSHABLE_CHECK,	/* memcg_vmstats_needs_flush(): read the atomic, compare */
	SIM_COST_WALK_STEP,		/* parent_mem_cgroup() and its per-CPU counter, tree in cache */
	SIM_COST_WALK_STEP_COLD,	/* the same on a tree larger than the last-level cache */
	SIM_COST_NR_OPS
};

/* "pcpu_add", ...; NULL past the end. */
const char *sim_cost_op_name(unsigned int op);
/* The op named @name, or -1. */
int sim_cost_op_find(const char *name);

/* One operation's cost as measured: median and spread over the samples, ns. */
struct sim_cost_figure {
	double	ns;		/* median */
	double	lo_ns, hi_ns;	/* 10th and 90th percentile of the samples */
};

struct sim_cost_table {
	struct sim_cost_figure	op[SIM_COST_NR_OPS];
};

/*
 * The most one measured operation may cost: each is an add, a compare or one
 * step up the cgroup tree, tens of ns, hundreds on a cache miss.  A
 * millisecond is no measurement of one (and keeps every estimate finite:
 * 2^64 operations of it are 1.8e25 ns).
 */
#define SIM_COST_NS_MAX		1e6

/*
 * sim_cost_table_check() - whether @t's figures are what a measurement gives:
 * each finite in [0, SIM_COST_NS_MAX], and the median between its 10th and
 * 90th percentile (lo_ns <= ns <= hi_ns).
 * Return: 0, or -EINVAL with *@op and *@field ("ns", "lo_ns" or "hi_ns")
 * naming the first figure that is not.
 */
int sim_cost_table_check(const struct sim_cost_table *t, unsigned int *op, const char **field);

/* A calibration: the table and where and how it was measured (memcg-replay calibrate). */
struct sim_cost_calib {
	struct sim_cost_table	t;
	uint64_t		tree_bytes;	/* the cold-step tree's size */
	uint64_t		llc_bytes;	/* last-level cache, as sysconf says (0 unknown) */
	unsigned int		samples;	/* per operation */
	unsigned int		cpus;		/* threads of the contended add: the online CPUs */
	char			measured_at[32];/* UTC ISO-8601 */
	char			host[64];	/* node name */
	char			tool_version[16];
};

/* A run's counts (runs table) and what the estimate needs of its trace. */
struct sim_cost_counts {
	uint64_t	updates, walk_steps, pcpu_adds, atomic_adds, dropped_batches;
	uint64_t	trace_ns;	/* first to last event; 0: unknown */
	double		shared;		/* fraction of atomic adds on a line another CPU wrote */
	int		legacy;		/* the walk checks flushable only at a full batch */
};

struct sim_cost_estimate {
	uint64_t	checks;			/* flushable checks the walk made */
	double		atomic_ns;		/* one atomic add, the trace's mix */
	double		ns;			/* the whole trace's update-path time */
	double		ns_max;			/* the same with cold steps and contended atomics */
	double		ns_per_update;		/* ns / updates; 0 without updates */
	double		ns_per_update_max;
	double		cpu_s_per_s;		/* ns / trace_ns; 0 when the span is unknown */
};

/*
 * sim_cost_estimate() - the update path's time for @c at the costs of @t.
 * Return: 0, or -EINVAL for a median (ns) outside [0, SIM_COST_NS_MAX] or
 * not finite, or a shared fraction outside [0, 1].
 */
int sim_cost_estimate(const struct sim_cost_counts *c, const struct sim_cost_table *t,
		      struct sim_cost_estimate *out);

/* Whether @policy's walk checks flushable only at a full batch (legacy, 6.8-6.15). */
int sim_cost_policy_legacy(const char *policy);

#endif
