// SPDX-License-Identifier: GPL-2.0
/*
 * synth_fleet.c - a host with many cgroups, for benchmarks and scale tests:
 * a random tree of bounded depth, Zipf-skewed activity across cgroups (the
 * hot ones scattered over the tree), mixed item kinds and THP-sized updates,
 * non-forced readers at every level, the periodic forced root flush.
 * Memory is O(cgroups): events go straight out, so 20 M events cost no more
 * memory than 1 M.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "synth-local.h"

#define FL_T0		SYNTH_NS_PER_S
#define FL_ID0		1000ull		/* cgroup i (i >= 1) has id FL_ID0 + i */
#define FL_FLUSHER	130
#define FL_READER	4100
#define FL_WRITER	10000		/* + cgroup index */
#define FL_GUIDE	4096		/* slices of [0, 1) in pick_cgroup()'s guide: a power of two */

const struct synth_param synth_fleet_params[] = {
	{ "cgroups", "cgroups", "cgroups including the root", 1000, 1, 1e7, true },
	{ "depth", "levels", "deepest level below the root", 4, 1, 64, true },
	{ "cpus", "CPUs", "possible = online CPUs", 8, 1, 1024, true },
	{ "events", "events", "stop after this many events", 1e6, 1, 1e11, true },
	{ "rate", "updates/s", "update rate of the whole host", 1e6, 1, 1e9, false },
	{ "zipf", "exponent", "skew of activity across cgroups (0: uniform)", 1.0, 0, 4, false },
	{ "reader-ms", "ms", "a non-forced reader of a random cgroup at a random level, every",
	  10, 0.01, 1e6, false },
	{ "period-ms", "ms", "periodic forced root flush, every", 2000, 1, 1e6, false },
	{ "flush-us", "us", "length of a flush that goes ahead, all CPU windows", 2000, 1, 1e7, false },
	{ "window-updates", "updates", "if not 0: each CPU window lasts as long as this many updates "
	  "take at --rate (sets --flush-us)", 0, 0, 1e7, false },
	{ "hidden-order", "0|1", "1: each window's visits at hidden random times instead of evenly "
	  "spaced; where each update fell goes to the true_order table", 0, 0, 1, true },
	{ .name = NULL },
};

struct fleet {
	struct synth	*s;
	unsigned int	n;		/* cgroups, index 0 = root */
	unsigned int	cpus;
	double		*cdf;		/* by activity rank */
	uint32_t	*guide;		/* FL_GUIDE + 1 rank bounds, see pick_cgroup() */
	uint32_t	*by_rank;	/* cgroup index of each rank */
	uint32_t	*by_level;	/* cgroup indexes sorted by level */
	uint32_t	level_start[66];/* by_level[level_start[l] .. level_start[l+1]) */
	unsigned int	max_level;
	uint64_t	events;
	double		update_ns;
	uint64_t	k;
	uint64_t	reader_ns;
	uint64_t	period_ns;
	/* the next update, drawn ahead so it can be merged by (ts, cpu) */
	uint64_t	u_ts;
	uint64_t	u_x;
	unsigned int	u_cg;
	int		u_cpu;
};

static uint64_t fleet_id(unsigned int i)
{
	return i ? FL_ID0 + i : SIM_ROOT_ID;
}

/* Each new cgroup goes under a random earlier one that is not at the deepest level. */
static int build_tree(struct fleet *f, unsigned int depth)
{
	struct synth *s = f->s;
	uint32_t *eligible = malloc(f->n * sizeof(*eligible));
	uint8_t *level = calloc(f->n, 1);
	uint32_t *parent = calloc(f->n, sizeof(*parent));
	char **path = calloc(f->n, sizeof(*path));
	unsigned int i, ne = 0, l, count[66] = { 0 };
	int err = -ENOMEM;

	if (!eligible || !level || !parent || !path)
		goto out;
	err = synth_cgroup(s, SIM_ROOT_ID, 0, "/");
	eligible[ne++] = 0;
	count[0] = 1;
	for (i = 1; !err && i < f->n; i++) {
		uint32_t p = eligible[synth_rng_below(&s->rng, ne)];
		const char *pp = p ? path[p] : "";

		parent[i] = p;
		level[i] = (uint8_t)(level[p] + 1);
		count[level[i]]++;
		if (level[i] > f->max_level)
			f->max_level = level[i];
		if (level[i] < depth)
			eligible[ne++] = i;
		if (asprintf(&path[i], "%s/cg%u", pp, i) < 0) {
			path[i] = NULL;
			err = -ENOMEM;
			break;
		}
		err = synth_cgroup(s, fleet_id(i), fleet_id(p), path[i]);
	}
	if (err)
		goto out;
	/* readers pick a level, then a cgroup of it */
	f->level_start[0] = 0;
	for (l = 0; l <= f->max_level; l++)
		f->level_start[l + 1] = f->level_start[l] + count[l];
	memset(count, 0, sizeof(count));
	for (i = 0; i < f->n; i++)
		f->by_level[f->level_start[level[i]] + count[level[i]]++] = i;
out:
	if (path)
		for (i = 0; i < f->n; i++)
			free(path[i]);
	free(path);
	free(parent);
	free(level);
	free(eligible);
	return err;
}

/* Zipf over a random permutation: the hottest cgroups are anywhere in the tree. */
static unsigned int rank_search(const struct fleet *f, double u, unsigned int lo, unsigned int hi);

static void build_activity(struct fleet *f, double zipf)
{
	double total = 0;
	unsigned int i, j;
	uint32_t t;

	for (i = 0; i < f->n; i++)
		f->by_rank[i] = i;
	for (i = f->n - 1; i > 0; i--) {
		j = (unsigned int)synth_rng_below(&f->s->rng, i + 1);
		t = f->by_rank[i];
		f->by_rank[i] = f->by_rank[j];
		f->by_rank[j] = t;
	}
	for (i = 0; i < f->n; i++) {
		total += 1.0 / pow(i + 1.0, zipf);
		f->cdf[i] = total;
	}
	for (i = 0; i < f->n; i++)
		f->cdf[i] /= total;
	for (i = 0; i <= FL_GUIDE; i++)
		f->guide[i] = rank_search(f, (double)i / FL_GUIDE, 0, f->n - 1);
}

/*
 * The first rank in [lo, hi] whose cdf is above @u (hi if none).  Searched
 * over all ranks, a binary search costs ~10 mispredicted branches an event;
 * the guide table narrows it first to the ranks of u's 1/FL_GUIDE slice:
 * guide[j] = the rank of u = j / FL_GUIDE, and u * FL_GUIDE is exact (a
 * power of two), so the rank of u lies in [guide[j], guide[j + 1]] and the
 * result is the full search's, draw for draw.
 */
static unsigned int rank_search(const struct fleet *f, double u, unsigned int lo, unsigned int hi)
{
	unsigned int mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (f->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static unsigned int pick_cgroup(struct fleet *f)
{
	double u = synth_rng_unit(&f->s->rng);
	unsigned int j = (unsigned int)(u * FL_GUIDE);

	return f->by_rank[rank_search(f, u, f->guide[j], f->guide[j + 1])];
}

/*
 * Page cache and anon (sometimes a THP of 512 pages, signed: memory comes and
 * goes), kernel memory and sockets, and event counters.
 */
static void fleet_draw(struct fleet *f)
{
	struct synth_rng *r = &f->s->rng;

	f->u_ts = FL_T0 + (uint64_t)(((double)f->k + synth_rng_unit(r) / 2) * f->update_ns);
	f->u_x = synth_rng_next(r);	/* one draw, split into fields */
	f->u_cg = pick_cgroup(f);
	f->u_cpu = (int)(((f->u_x & 0xffffffff) * f->cpus) >> 32);
	f->k++;
}

static int fleet_update(struct fleet *f)
{
	static const int lru_items[] = {
		SYNTH_NR_FILE_PAGES, SYNTH_NR_ANON_MAPPED, SYNTH_NR_INACTIVE_FILE,
		SYNTH_NR_ACTIVE_ANON, SYNTH_NR_FILE_DIRTY, SYNTH_NR_SHMEM,
	};
	static const int state_items[] = { SYNTH_MEMCG_KMEM, SYNTH_MEMCG_SOCK };
	static const int event_items[] = { SYNTH_PGFAULT, SYNTH_PGPGIN, SYNTH_PGPGOUT };
	uint64_t x = f->u_x, ts = f->u_ts, id = fleet_id(f->u_cg);
	unsigned int kind = (unsigned int)((x >> 32) % 100);
	int64_t v = 1 + (int64_t)((x >> 40) & 3);
	int cpu = f->u_cpu, pid = FL_WRITER + (int)f->u_cg;

	fleet_draw(f);
	if (kind < 55) {
		if (((x >> 48) & 31) == 0)
			v = 512;
		if (((x >> 53) & 3) == 0)
			v = -v;
		return synth_update(f->s, ts, cpu, pid, MCR_EV_LRUVEC, id, lru_items[(x >> 56) % 6], v);
	}
	if (kind < 85)
		return synth_update(f->s, ts, cpu, pid, MCR_EV_STATE, id, state_items[(x >> 56) & 1],
				    ((x >> 53) & 1) ? -v : v);
	return synth_update(f->s, ts, cpu, pid, MCR_EV_EVENTS, id, event_items[(x >> 56) % 3], v);
}

static int fleet_reader(struct fleet *f, uint64_t ts, int cpu)
{
	struct synth_rng *r = &f->s->rng;
	unsigned int l = (unsigned int)synth_rng_below(r, f->max_level + 1);
	uint32_t n = f->level_start[l + 1] - f->level_start[l];
	unsigned int i = f->by_level[f->level_start[l] + synth_rng_below(r, n)];

	return synth_read(f->s, ts, cpu, FL_READER, fleet_id(i), false);
}

static int fleet_items(struct synth *s)
{
	int err = 0;

	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_FILE_PAGES, "NR_FILE_PAGES", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_ANON_MAPPED, "NR_ANON_MAPPED", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_INACTIVE_FILE, "NR_INACTIVE_FILE", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_ACTIVE_ANON, "NR_ACTIVE_ANON", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_FILE_DIRTY, "NR_FILE_DIRTY", "pages");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_SHMEM, "NR_SHMEM", "pages");
	err = err ?: synth_item(s, MCR_EV_STATE, SYNTH_MEMCG_KMEM, "MEMCG_KMEM", "pages");
	err = err ?: synth_item(s, MCR_EV_STATE, SYNTH_MEMCG_SOCK, "MEMCG_SOCK", "pages");
	err = err ?: synth_item(s, MCR_EV_EVENTS, SYNTH_PGFAULT, "PGFAULT", "events");
	err = err ?: synth_item(s, MCR_EV_EVENTS, SYNTH_PGPGIN, "PGPGIN", "events");
	err = err ?: synth_item(s, MCR_EV_EVENTS, SYNTH_PGPGOUT, "PGPGOUT", "events");
	return err;
}

static bool before(uint64_t t1, int c1, uint64_t t2, int c2)
{
	return t1 < t2 || (t1 == t2 && c1 < c2);
}

/*
 * Updates come one every 1/rate s (up to half an interval late, on a random
 * CPU), so they are strictly ordered by ts; readers and the periodic flush
 * fire between them, merged by (ts, cpu).  Stops once --events events are out
 * (the flush running then still completes).
 */
static int fleet_run(struct fleet *f)
{
	struct synth *s = f->s;
	struct synth_rng *r = &s->rng;
	uint64_t t_read = FL_T0 + f->reader_ns / 2, t_period = FL_T0 + f->period_ns;
	int c_read = (int)synth_rng_below(r, f->cpus), c_period = (int)synth_rng_below(r, f->cpus);
	int err = 0;

	fleet_draw(f);
	while (!err && s->st->events < f->events) {
		if (before(t_period, c_period, f->u_ts, f->u_cpu) &&
		    before(t_period, c_period, t_read, c_read)) {
			err = synth_read(s, t_period, c_period, FL_FLUSHER, SIM_ROOT_ID, true);
			t_period += f->period_ns;
			c_period = (int)synth_rng_below(r, f->cpus);
		} else if (before(t_read, c_read, f->u_ts, f->u_cpu)) {
			err = fleet_reader(f, t_read, c_read);
			t_read += f->reader_ns;
			c_read = (int)synth_rng_below(r, f->cpus);
		} else {
			err = fleet_update(f);
		}
	}
	return err;
}

int synth_fleet(struct synth *s)
{
	struct fleet f = {
		.s = s,
		.n = (unsigned int)synth_arg(s, "cgroups"),
		.cpus = (unsigned int)synth_arg(s, "cpus"),
		.events = (uint64_t)synth_arg(s, "events"),
		.update_ns = SYNTH_NS_PER_S / synth_arg(s, "rate"),
		.reader_ns = (uint64_t)(synth_arg(s, "reader-ms") * SYNTH_NS_PER_MS),
		.period_ns = (uint64_t)(synth_arg(s, "period-ms") * SYNTH_NS_PER_MS),
	};
	double flush_ns = synth_arg(s, "flush-us") * SYNTH_NS_PER_US;
	int err;

	if (f.update_ns < 4)
		return -MCR_E_BAD_INPUT;
	if (synth_arg(s, "window-updates") > 0)
		flush_ns = synth_arg(s, "window-updates") * f.update_ns * f.cpus;
	if (flush_ns > 1e15)
		return -MCR_E_BAD_INPUT;
	f.cdf = malloc(f.n * sizeof(*f.cdf));
	f.by_rank = malloc(f.n * sizeof(*f.by_rank));
	f.by_level = malloc(f.n * sizeof(*f.by_level));
	f.guide = malloc((FL_GUIDE + 1) * sizeof(*f.guide));
	err = f.cdf && f.by_rank && f.by_level && f.guide ? 0 : -ENOMEM;
	err = err ?: synth_machine(s, f.cpus, (uint64_t)flush_ns, false);
	if (!err && synth_arg(s, "hidden-order") > 0)
		synth_hidden_order(s);
	err = err ?: build_tree(&f, (unsigned int)synth_arg(s, "depth"));
	err = err ?: fleet_items(s);
	if (!err) {
		build_activity(&f, synth_arg(s, "zipf"));
		err = fleet_run(&f);
	}
	free(f.cdf);
	free(f.by_rank);
	free(f.by_level);
	free(f.guide);
	return err;
}
