/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth.h - synthetic trace generator: scenarios chosen by name from one table.
 *
 * Contract: a scenario plays a synthetic "kernel" - a BREAK-policy simulator
 * (sim/sim.h) is the ground truth - and records what the 6.15+ kernel would
 * trace: updates, memcg_flush_stats with the simulator's own stats_updates and
 * needs_flush, and per-CPU cgroup_rstat_locked/unlock windows for every flush
 * that goes ahead, whose visits happen at chosen times inside the window.
 * Events stream straight to the database in replay order (no event array in
 * memory).  The output is a function of (scenario, options, seed) only: a
 * small PRNG lives in the generator state, no global state.  Never prints or
 * exits; returns 0 or a negative errno / -MCR_E_*.
 */
#ifndef MCR_SYNTH_H
#define MCR_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "event.h"

#define SYNTH_MAX_PARAMS	16

/* One scenario option, "--name=VALUE" on the command line. */
struct synth_param {
	const char	*name;
	const char	*unit;		/* for --help, e.g. "MiB/s" */
	const char	*help;
	double		def;
	double		min;
	double		max;
	bool		integer;
};

struct synth;

struct synth_scenario {
	const char			*name;
	const char			*summary;	/* one line for --help */
	const struct synth_param	*params;	/* ends with { .name = NULL } */
	int				(*run)(struct synth *s);
};

const struct synth_scenario *synth_scenario_find(const char *name);	/* NULL if unknown */
const struct synth_scenario *synth_scenario_at(size_t i);		/* NULL past the end */

/* A scenario and its option values; every value starts at its default. */
struct synth_args {
	const struct synth_scenario	*sc;
	uint64_t			seed;
	double				val[SYNTH_MAX_PARAMS];
};

void synth_args_init(struct synth_args *a, const struct synth_scenario *sc, uint64_t seed);
/*
 * Sets option @name from the string @value: -ENOENT if the scenario has no
 * such option, -EINVAL if @value is not a number, not an integer where one is
 * needed, or out of the option's range.
 */
int synth_args_set(struct synth_args *a, const char *name, const char *value);

/* Where the events go: the database, a tap (tests, hashing), both or neither. */
struct synth_out {
	struct db	*db;					/* NULL: write nothing */
	int		(*event)(void *ctx, const struct mcr_event *ev);	/* optional */
	void		*ctx;
};

struct synth_stats {
	uint64_t	events;
	uint64_t	by_kind[MCR_EV_KIND_MAX + 1];
	uint64_t	hash;		/* FNV-1a over every event's fields, in order */
	uint64_t	first_ts;
	uint64_t	last_ts;
	uint64_t	flush_requests;
	uint64_t	flushes;	/* requests that went ahead (ground truth: BREAK) */
	uint64_t	first_stuck_ts;	/* ground truth: first time the root was stuck; 0 never */
	unsigned int	nr_cpus;
	unsigned int	nr_cgroups;
};

/*
 * synth_run - generate the scenario of @a into @out.
 * With a database, writes meta, cgroups, items, per-CPU stats and events and
 * finishes the event load (db_events_finish); the caller closes it.
 */
int synth_run(const struct synth_args *a, const struct synth_out *out, struct synth_stats *st);

#endif
