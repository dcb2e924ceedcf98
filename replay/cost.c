// SPDX-License-Identifier: GPL-2.0
/*
 * cost.c - the calibration: user-space proxies of the operations of
 * memcg_rstat_updated() (mm/memcontrol.c), timed on this host (cost.h).
 *
 *   plain_add		an add to a register: the loop's own cost, the baseline
 *   pcpu_add		this_cpu_add() of stats_updates: a read-modify-write of a
 *			line only this thread touches (a __thread counter)
 *   atomic_add		atomic_add() into vmstats->stats_updates: a lock add on a
 *			line in shared memory that no other CPU writes meanwhile
 *   atomic_add_contended  the same with one thread on each online CPU adding
 *			in turn (a token ring on the value): every add takes the
 *			line from another CPU's cache
 *   flushable_check	memcg_vmstats_needs_flush(): load the shared atomic, compare
 *			with the threshold
 *   walk_step		parent_mem_cgroup() and the parent's per-CPU counter: the
 *			parent pointer's load chained through a random cycle of 64
 *			nodes (in cache), and the counter it points to
 *   walk_step_cold	the same through a cycle four times the last-level cache
 *			(16 to 128 MiB) on huge pages, as the kernel's direct map
 *
 * Every figure is the median over the samples of (elapsed / operations), one
 * sample being a timed loop of many operations on a thread pinned to one CPU.
 * What a proxy is not: the kernel's per-CPU add is one instruction on a %gs
 * offset, preemption and interrupts stay on, and the kernel's structures
 * share the cache with everything else the kernel does.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cost.h"

#define COST_LINE		64
#define COST_HOT_NODES		64
#define COST_COLD_MIN		(16ull << 20)
#define COST_COLD_MAX		(128ull << 20)
#define COST_COLD_DEFAULT	(64ull << 20)
#define COST_MAX_SAMPLES	1000

struct cost_line {
	_Alignas(COST_LINE) uint64_t	v;
};

/* A memcg as the walk sees it: its parent and its per-CPU counter, one line. */
struct cost_node {
	_Alignas(COST_LINE) struct cost_node	*parent;
	uint64_t				*pcpu;
};

static __thread struct cost_line cost_pcpu;

struct cost_ctx {
	struct cost_line	*shared;	/* the atomic every CPU adds to */
	struct cost_node	*hot, *cold;	/* the chains: where each walk has got to */
	volatile uint64_t	th;		/* not a constant the compiler could fold */
	uint64_t		sink;
	int			stop;		/* helpers: __atomic */
	int			started;
	int			cpu;		/* the measuring thread's CPU */
	uint64_t		ring;		/* threads of the contended add */
	cpu_set_t		allowed;
	const struct cost_opts	*o;
	struct sim_cost_calib	*out;
	int			err;
};

static uint64_t cost_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cost_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* The loops: one operation per iteration, nothing the compiler may fold or hoist. */
static void loop_plain(struct cost_ctx *c, uint64_t n)
{
	uint64_t x = 0, i;

	for (i = 0; i < n; i++) {
		x += i;
		__asm__ volatile("" : "+r"(x));
	}
	c->sink += x;
}

static void loop_pcpu(struct cost_ctx *c, uint64_t n)
{
	volatile uint64_t *v = &cost_pcpu.v;
	uint64_t i;

	for (i = 0; i < n; i++)
		*v += i;
}

static void loop_atomic(struct cost_ctx *c, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		__atomic_fetch_add(&c->shared->v, 1, __ATOMIC_RELAXED);
}

/*
 * The contended add: the measuring thread and one thread on each other
 * online CPU add to the line in turn (a token ring on its value), so every
 * add finds the line in another CPU's cache, as a batch does whose memcg was
 * last updated from another CPU.  One iteration here is a whole turn of the
 * ring; cost_contended() divides by the threads.
 */
static inline void cost_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("pause");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Add when the count says it is @me's turn of @nr; false if told to stop first. */
static inline bool cost_turn(struct cost_ctx *c, uint64_t me, uint64_t nr)
{
	while (__atomic_load_n(&c->shared->v, __ATOMIC_RELAXED) % nr != me)
		if (__atomic_load_n(&c->stop, __ATOMIC_RELAXED))
			return false;
		else
			cost_relax();
	__atomic_fetch_add(&c->shared->v, 1, __ATOMIC_RELAXED);
	return true;
}

static void loop_ring(struct cost_ctx *c, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		cost_turn(c, 0, c->ring);
}

static void loop_check(struct cost_ctx *c, uint64_t n)
{
	uint64_t i, th = c->th, hits = 0;

	for (i = 0; i < n; i++) {
		if (__atomic_load_n(&c->shared->v, __ATOMIC_RELAXED) > th)
			hits++;
		__asm__ volatile("" ::: "memory");
	}
	c->sink += hits;
}

/* From *@at on, where the previous loop stopped: no sample walks nodes another just cached. */
static void loop_walk(struct cost_node **at, struct cost_ctx *c, uint64_t n)
{
	struct cost_node *p = *at;
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++) {
		p = p->parent;
		sum += *p->pcpu;
	}
	c->sink += sum;
	*at = p;
}

static void loop_hot(struct cost_ctx *c, uint64_t n)
{
	loop_walk(&c->hot, c, n);
}

static void loop_cold(struct cost_ctx *c, uint64_t n)
{
	loop_walk(&c->cold, c, n);
}

static const struct {
	void		(*loop)(struct cost_ctx *c, uint64_t n);
	uint64_t	iters;		/* per sample at scale 1 */
} cost_ops[SIM_COST_NR_OPS] = {
	/*
	 * Samples of tens of us: on a shared machine a sample the scheduler
	 * interrupts is an outlier the median ignores, where long samples would
	 * all carry some of it.  The cold walk goes on through its chain from
	 * sample to sample and never comes back to a node within a calibration
	 * at the default samples (COST_COLD_MIN / 128 B > 201 x 500).
	 */
	[SIM_COST_PLAIN_ADD]		= { loop_plain, 100000 },
	[SIM_COST_PCPU_ADD]		= { loop_pcpu, 100000 },
	[SIM_COST_ATOMIC_ADD]		= { loop_atomic, 20000 },
	[SIM_COST_ATOMIC_CONTENDED]	= { loop_ring, 1000 },
	[SIM_COST_FLUSHABLE_CHECK]	= { loop_check, 100000 },
	[SIM_COST_WALK_STEP]		= { loop_hot, 40000 },
	[SIM_COST_WALK_STEP_COLD]	= { loop_cold, 500 },
};

static int cost_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Samples of @loop: median and 10th/90th percentiles into @fig, ns per
 * operation.  Returns the operations done, warm-up included.
 */
static uint64_t cost_measure_fn(struct cost_ctx *c, void (*loop)(struct cost_ctx *c, uint64_t n),
				uint64_t iters, double *buf, struct sim_cost_figure *fig)
{
	uint64_t n = (uint64_t)((double)iters * c->o->scale);
	unsigned int i, ns = c->o->samples;

	if (n < 100)
		n = 100;
	loop(c, n / 10);	/* warm the lines and the branch predictor */
	for (i = 0; i < ns; i++) {
		uint64_t t0 = cost_now();

		loop(c, n);
		buf[i] = (double)(cost_now() - t0) / (double)n;
	}
	qsort(buf, ns, sizeof(*buf), cost_dbl_cmp);
	fig->ns = ns % 2 ? buf[ns / 2] : (buf[ns / 2 - 1] + buf[ns / 2]) / 2;
	fig->lo_ns = buf[(ns - 1) / 10];
	fig->hi_ns = buf[ns - 1 - (ns - 1) / 10];
	return n / 10 + (uint64_t)ns * n;
}

static uint64_t cost_measure(struct cost_ctx *c, unsigned int op, double *buf)
{
	return cost_measure_fn(c, cost_ops[op].loop, cost_ops[op].iters, buf, &c->out->t.op[op]);
}

/* xorshift64*: a fixed sequence, so every calibration walks the same chain shape. */
static uint64_t cost_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/*
 * A cyclic chain through @n nodes in random order, each node's counter at a
 * random line of its own array, so that neither the next parent nor the next
 * counter is where a prefetcher would look.  *@mem, *@len: what to munmap.
 */
static struct cost_node *cost_chain(size_t n, void **mem, size_t *len)
{
	struct cost_node *nodes;
	struct cost_line *ctr;
	size_t *perm, i, j;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	*len = n * (sizeof(*nodes) + sizeof(*ctr));
	nodes = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nodes == MAP_FAILED)
		return NULL;
	/*
	 * The kernel reaches memcgs through its direct map, mapped with huge
	 * pages: ask for them too, so that the cold step costs cache misses and
	 * not mostly TLB misses of 4 KiB pages.
	 */
	madvise(nodes, *len, MADV_HUGEPAGE);
	perm = malloc(n * sizeof(*perm));
	if (!perm) {
		munmap(nodes, *len);
		return NULL;
	}
	ctr = (struct cost_line *)(nodes + n);
	for (i = 0; i < n; i++) {
		perm[i] = i;
		ctr[i].v = i;
	}
	for (i = n - 1; i > 0; i--) {
		size_t t;

		j = (size_t)(cost_rand(&seed) % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < n; i++) {
		nodes[perm[i]].parent = &nodes[perm[(i + 1) % n]];
		nodes[perm[i]].pcpu = &ctr[perm[(i + n / 2) % n]].v;
	}
	free(perm);
	*mem = nodes;
	return nodes;
}

/* One cache's size from sysfs ("32768K"), 0 if unknown. */
static uint64_t cost_sysfs_cache(int index, int *level)
{
	char path[96], buf[32];
	unsigned long long v = 0;
	char unit = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", level) != 1)
		*level = 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu%c", &v, &unit) < 1)
		v = 0;
	fclose(f);
	return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
}

/*
 * The last-level cache: sysfs first (glibc's sysconf reports a multiple of
 * the L3 on some virtual machines), sysconf otherwise.
 */
static uint64_t cost_llc(void)
{
	uint64_t best = 0, sz;
	int i, level, best_level = 0;
	long v;

	for (i = 0; i < 8; i++) {
		sz = cost_sysfs_cache(i, &level);
		if (sz && level >= best_level) {
			best = sz;
			best_level = level;
		}
	}
	if (best)
		return best;
	v = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (v <= 0)
		v = sysconf(_SC_LEVEL2_CACHE_SIZE);
	return v > 0 ? (uint64_t)v : 0;
}

struct cost_helper {
	struct cost_ctx	*c;
	pthread_t	thr;
	uint64_t	slot;	/* its turn in the ring: 1 .. ring - 1 */
	int		cpu;
};

/* Another online CPU taking its turns at the shared line until told to stop. */
static void *cost_hammer(void *arg)
{
	struct cost_helper *h = arg;
	struct cost_ctx *c = h->c;

	cost_pin(h->cpu);
	__atomic_fetch_add(&c->started, 1, __ATOMIC_RELEASE);
	while (cost_turn(c, h->slot, c->ring))
		;
	return NULL;
}

static int cost_contended(struct cost_ctx *c, double *buf)
{
	struct sim_cost_figure *fig = &c->out->t.op[SIM_COST_ATOMIC_CONTENDED];
	struct cost_helper h[CPU_SETSIZE];
	int cpu, n = 0, i, err = 0;

	c->ring = (uint64_t)CPU_COUNT(&c->allowed);
	__atomic_store_n(&c->shared->v, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->started, 0, __ATOMIC_RELAXED);
	for (cpu = 0; cpu < CPU_SETSIZE && (uint64_t)n + 1 < c->ring; cpu++) {
		if (cpu == c->cpu || !CPU_ISSET(cpu, &c->allowed))
			continue;
		h[n] = (struct cost_helper){ .c = c, .cpu = cpu, .slot = (uint64_t)n + 1 };
		err = -pthread_create(&h[n].thr, NULL, cost_hammer, &h[n]);
		if (err)
			break;
		n++;
	}
	c->ring = (uint64_t)n + 1;	/* fewer if a thread could not start */
	while (!err && __atomic_load_n(&c->started, __ATOMIC_ACQUIRE) < n)
		sched_yield();
	if (!err)
		cost_measure(c, SIM_COST_ATOMIC_CONTENDED, buf);
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		pthread_join(h[i].thr, NULL);
	c->out->cpus = (unsigned int)c->ring;
	/* a turn of the ring is one add per thread */
	fig->ns /= (double)c->ring;
	fig->lo_ns /= (double)c->ring;
	fig->hi_ns /= (double)c->ring;
	return err;
}

static void *cost_main(void *arg)
{
	struct cost_ctx *c = arg;
	double *buf = calloc(c->o->samples, sizeof(*buf));
	unsigned int op;

	if (!buf) {
		c->err = -ENOMEM;
		return NULL;
	}
	c->err = cost_pin(c->cpu);
	for (op = 0; !c->err && op < SIM_COST_NR_OPS; op++) {
		if (op == SIM_COST_ATOMIC_CONTENDED)
			c->err = cost_contended(c, buf);
		else
			cost_measure(c, op, buf);
	}
	free(buf);
	return NULL;
}

int cost_calibrate(const struct cost_opts *o, struct sim_cost_calib *out)
{
	struct cost_ctx c = { .o = o, .out = out, .th = 256 };
	void *hot_mem = NULL, *cold_mem = NULL;
	size_t hot_len = 0, cold_len = 0;
	struct utsname un;
	pthread_t thr;
	time_t now;
	int err;

	if (!o || o->samples < 3 || o->samples > COST_MAX_SAMPLES || !(o->scale > 0) ||
	    o->scale > 100)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->samples = o->samples;
	out->llc_bytes = cost_llc();
	out->tree_bytes = out->llc_bytes ? 4 * out->llc_bytes : COST_COLD_DEFAULT;
	if (out->tree_bytes < COST_COLD_MIN)
		out->tree_bytes = COST_COLD_MIN;
	if (out->tree_bytes > COST_COLD_MAX)
		out->tree_bytes = COST_COLD_MAX;
	if (sched_getaffinity(0, sizeof(c.allowed), &c.allowed))
		return -errno;
	for (c.cpu = 0; c.cpu < CPU_SETSIZE && !CPU_ISSET(c.cpu, &c.allowed); c.cpu++)
		;
	if (c.cpu == CPU_SETSIZE)
		return -EINVAL;
	c.shared = aligned_alloc(COST_LINE, sizeof(*c.shared));
	c.hot = cost_chain(COST_HOT_NODES, &hot_mem, &hot_len);
	c.cold = cost_chain(out->tree_bytes / (2 * COST_LINE), &cold_mem, &cold_len);
	if (!c.shared || !c.hot || !c.cold) {
		err = -ENOMEM;
		goto out;
	}
	c.shared->v = 0;
	/* a thread of its own, so the caller's affinity stays as it was */
	err = -pthread_create(&thr, NULL, cost_main, &c);
	if (err)
		goto out;
	pthread_join(thr, NULL);
	err = c.err;
	if (err)
		goto out;
	now = time(NULL);
	strftime(out->measured_at, sizeof(out->measured_at), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (!uname(&un))
		snprintf(out->host, sizeof(out->host), "%.63s", un.nodename);
	snprintf(out->tool_version, sizeof(out->tool_version), "%.15s", MCR_VERSION);
out:
	free(c.shared);
	if (hot_mem)
		munmap(hot_mem, hot_len);
	if (cold_mem)
		munmap(cold_mem, cold_len);
	return err;
}
