// SPDX-License-Identifier: GPL-2.0
/*
 * synth.c - the scenario table, options, and synth_run(): sets up the
 * generator, runs one scenario, and writes what describes the trace (meta,
 * per-CPU stats) around the events.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "synth-local.h"

static const struct synth_scenario synth_scenarios[] = {
	{
		.name		= "seed-race",
		.summary	= "the patch's interleaving with explicit flush visits (4 CPUs, TH 256, root -> leaf)",
		.params		= synth_seed_race_params,
		.run		= synth_seed_race,
	},
	{
		.name		= "pagecache",
		.summary	= "the patch's example: a leaf under the root growing page cache; readers; periodic flushes",
		.params		= synth_pagecache_params,
		.run		= synth_pagecache,
	},
	{
		.name		= "fleet",
		.summary	= "a random tree with skewed activity, readers at several levels; for scale",
		.params		= synth_fleet_params,
		.run		= synth_fleet,
	},
};

const struct synth_scenario *synth_scenario_at(size_t i)
{
	return i < sizeof(synth_scenarios) / sizeof(synth_scenarios[0]) ? &synth_scenarios[i] : NULL;
}

const struct synth_scenario *synth_scenario_find(const char *name)
{
	const struct synth_scenario *sc;
	size_t i;

	for (i = 0; (sc = synth_scenario_at(i)); i++)
		if (!strcmp(sc->name, name))
			return sc;
	return NULL;
}

static int param_index(const struct synth_scenario *sc, const char *name)
{
	int i;

	for (i = 0; sc->params[i].name && i < SYNTH_MAX_PARAMS; i++)
		if (!strcmp(sc->params[i].name, name))
			return i;
	return -ENOENT;
}

/**
 * synth_args_init() - a scenario with every option at its default.
 * @a: filled in
 * @sc: the scenario
 * @seed: the PRNG seed
 */
void synth_args_init(struct synth_args *a, const struct synth_scenario *sc, uint64_t seed)
{
	int i;

	memset(a, 0, sizeof(*a));
	a->sc = sc;
	a->seed = seed;
	for (i = 0; sc->params[i].name && i < SYNTH_MAX_PARAMS; i++)
		a->val[i] = sc->params[i].def;
}

/**
 * synth_args_set() - set one scenario option from its command-line string.
 * @a: the arguments
 * @name: option name without the dashes
 * @value: a number
 *
 * Return: 0, -ENOENT if the scenario has no such option, -EINVAL if the value
 * is not a number, not an integer where one is needed, or out of range.
 */
int synth_args_set(struct synth_args *a, const char *name, const char *value)
{
	const struct synth_param *p;
	char *end;
	double v;
	int i = param_index(a->sc, name);

	if (i < 0)
		return i;
	p = &a->sc->params[i];
	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || !isfinite(v))
		return -EINVAL;
	if ((p->integer && v != floor(v)) || v < p->min || v > p->max)
		return -EINVAL;
	a->val[i] = v;
	return 0;
}

double synth_arg(const struct synth *s, const char *name)
{
	int i = param_index(s->args->sc, name);

	return i < 0 ? NAN : s->args->val[i];
}

/* What the run was asked for, as JSON: keys and numbers only, no user strings. */
static void options_json(struct synth *s)
{
	const struct synth_scenario *sc = s->args->sc;
	size_t n = sizeof(s->options), len;
	int i;

	len = (size_t)snprintf(s->options, n, "{\"scenario\":\"%s\",\"seed\":%llu", sc->name,
			       (unsigned long long)s->args->seed);
	for (i = 0; sc->params[i].name && len < n; i++)
		len += (size_t)snprintf(s->options + len, n - len, ",\"%s\":%.17g", sc->params[i].name,
					s->args->val[i]);
	if (len < n)
		snprintf(s->options + len, n - len, "}");
}

static int write_meta(struct synth *s)
{
	struct db *db = s->out->db;
	char source[64];
	int err = 0;

	snprintf(source, sizeof(source), "synth:%s", s->args->sc->name);
	err = err ?: db_meta_set(db, "source", source);
	err = err ?: db_meta_set(db, "kernel_release", "6.18.0-synth");
	err = err ?: db_meta_set_int(db, "nr_cpus_online", s->nr_online);
	err = err ?: db_meta_set_int(db, "nr_cpus_possible", s->nr_possible);
	err = err ?: db_meta_set_int(db, "page_size", 4096);
	err = err ?: db_meta_set_int(db, "batch_size", SIM_CHARGE_BATCH);
	err = err ?: db_meta_set(db, "trace_clock", "mono");
	err = err ?: db_meta_set_int(db, "capture_start_ns", (int64_t)s->st->first_ts);
	err = err ?: db_meta_set_int(db, "capture_end_ns", (int64_t)s->st->last_ts);
	err = err ?: db_meta_set_int(db, "memory_hierarchy_id", SYNTH_HIERARCHY_ID);
	err = err ?: db_meta_set_int(db, "cgroup_version", 1);
	err = err ?: db_meta_set(db, "options", s->options);
	err = err ?: db_meta_set(db, "tool_version", MCR_VERSION);
	return err;
}

/* The ring buffers of a synthetic trace lose nothing. */
static int write_cpu_stats(struct synth *s)
{
	static const char *const phases[] = { "start", "end" };
	unsigned int cpu, p;
	int err;

	for (cpu = 0; cpu < s->nr_possible; cpu++) {
		for (p = 0; p < 2; p++) {
			struct db_cpu_stats cs = { .cpu = (int)cpu, .phase = phases[p] };

			err = db_cpu_stats_put(s->out->db, &cs);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

/**
 * synth_run() - generate one scenario.
 * @a: scenario, options and seed
 * @out: database and/or event tap
 * @st: filled with what was generated
 *
 * Return: 0 or a negative errno / -MCR_E_*.
 */
int synth_run(const struct synth_args *a, const struct synth_out *out, struct synth_stats *st)
{
	struct synth s = { .args = a, .out = out, .st = st };
	int err;

	memset(st, 0, sizeof(*st));
	st->hash = 0xcbf29ce484222325ull;	/* FNV-1a offset basis */
	synth_rng_seed(&s.rng, a->seed);
	options_json(&s);
	err = a->sc->run(&s);
	if (!err && !s.sim)
		err = -EINVAL;		/* a scenario that never set up its machine */
	if (!err)
		err = synth_drain(&s);
	if (!err)
		err = synth_truth_flush(&s);	/* the table, empty unless --hidden-order */
	if (!err && out->db) {
		err = db_events_finish(out->db);
		err = err ?: write_meta(&s);
		err = err ?: write_cpu_stats(&s);
	}
	st->nr_cpus = s.nr_possible;
	if (s.sim)
		st->nr_cgroups = (unsigned int)sim_cgroup_count(s.sim);
	if (s.sim)
		sim_destroy(s.sim);
	free(s.seq);
	free(s.queue);
	free(s.fl_vt);
	free(s.truth);
	idmap_free(&s.fl_idx);
	return err;
}
