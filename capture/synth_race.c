// SPDX-License-Identifier: GPL-2.0
/*
 * synth_race.c - the seed-race scenario: the interleaving of the patch
 * "memcg: keep propagating stats updates to ancestors", with explicit VISIT
 * events so that no flush model is needed to replay it.
 *
 * 4 CPUs, TH = 64 x 4 = 256, root (id 1) -> leaf (id 100).  Every update is
 * one mod_memcg_lruvec_state(NR_FILE_PAGES) of leaf; a "batch" is ONE event
 * of +64 (a 64-page folio), which fills a per-CPU counter to exactly
 * MEMCG_CHARGE_BATCH so it moves into the atomics at once.  Flushes last
 * 40 us: four 10 us windows, locked at start + 10 us x cpu, unlocked 9.999 us
 * later, n visits at (i + 1) / (n + 1) of the window (synth_engine.c).
 * Flushes run on CPU 0 (kworker, pid 130); the reader runs on CPU 3.
 *
 * Counters (BREAK, the ground truth; "pend" = leaf pages root is missing):
 *
 *   t (us)    cpu  event                          leaf   root   pend
 *   1000      2    leaf +1                           0      0      1
 *                  (pcpu leaf/root on CPU 2 = 1; links leaf, root on CPU 2)
 *   2000      0    flush root force=1: traced stats_updates=0 needs_flush=0
 *   2001/2011 0    windows 0 and 1: nothing linked on CPUs 0, 1
 *   2021      0    window 2 locked: list = leaf, root
 *   2024.333  0    VISIT leaf (cpu 2): atomic already 0   0      0      1
 *   2025      1    leaf +64: pcpu 64 -> atomics        64     64     65
 *                  (links leaf, root on CPU 1 - already passed)
 *   2027.666  0    VISIT root (cpu 2): stores 0        64      0     64
 *                  (the +1 reaches root; the +64 stays on CPU 1)
 *   2031      0    window 3: nothing linked
 *   3000..3300 1   four more batches of +64 (leaf is never > 256 before
 *                  the add: 64, 128, 192, 256)      320    256    320
 *   3400      1    leaf +64: leaf 320 > 256, break  320    256    384
 *                  (CONTINUE: skips leaf, root 256 -> 320, flushable)
 *   4000      3    read root force=0: traced stats_updates=256 needs_flush=0
 *                  BREAK skips, missing 384 > TH: a stale read.
 *                  CONTINUE: 320 > 256, flushes; everything aggregated.
 *   4500, 4600 2   leaf +64 twice: BREAK stops at leaf 320 256    512
 *                  (CONTINUE after its flush: leaf 128, root 128, pend 128)
 *   5000      3    read root force=0: traced 256, needs_flush=0
 *                  BREAK: stale again (512).  CONTINUE: 128 <= TH, skips,
 *                  missing 128: not stale.
 *   7000      0    flush root force=1: traced stats_updates=256 needs_flush=0
 *                  windows: CPU 1 visits leaf, root; CPU 2 visits leaf, root
 *                  after it                          0      0      0
 *
 * So under BREAK the root is stuck at 256 from 3.3 ms (leaf flushable, root
 * not, root missing pages) until the final flush visits leaf on CPU 1 at
 * 7014.333 us (leaf's atomic stored 0): 3.714333 ms; max missing 512, 2
 * stale reads (384 and 512 pages).  Under CONTINUE it is stuck only from 3.3
 * to 3.4 ms (0.1 ms), max missing 384, no stale read.
 */
#include "synth-local.h"

#define RACE_LEAF	100ull
#define RACE_FLUSHER	130	/* kworker pid of the periodic flush */
#define RACE_READER	4100
#define RACE_WRITER	4000	/* + cpu */

const struct synth_param synth_seed_race_params[] = {
	{ .name = NULL },
};

static int leaf_add(struct synth *s, uint64_t us, int cpu, int64_t pages)
{
	return synth_update(s, us * SYNTH_NS_PER_US, cpu, RACE_WRITER + cpu, MCR_EV_LRUVEC,
			    RACE_LEAF, SYNTH_NR_FILE_PAGES, pages);
}

static int root_read(struct synth *s, uint64_t us, int cpu, bool force)
{
	return synth_read(s, us * SYNTH_NS_PER_US, cpu, force ? RACE_FLUSHER : RACE_READER,
			  SIM_ROOT_ID, force);
}

int synth_seed_race(struct synth *s)
{
	static const uint64_t batches_us[] = { 3000, 3100, 3200, 3300, 3400 };
	size_t i;
	int err;

	err = synth_machine(s, 4, 40 * SYNTH_NS_PER_US, true);
	err = err ?: synth_cgroup(s, SIM_ROOT_ID, 0, "/");
	err = err ?: synth_cgroup(s, RACE_LEAF, SIM_ROOT_ID, "/leaf");
	err = err ?: synth_item(s, MCR_EV_LRUVEC, SYNTH_NR_FILE_PAGES, "NR_FILE_PAGES", "pages");
	err = err ?: leaf_add(s, 1000, 2, 1);
	err = err ?: root_read(s, 2000, 0, true);
	/* 2025 us: inside window 2, between the leaf's visit and the root's */
	err = err ?: leaf_add(s, 2025, 1, 64);
	for (i = 0; !err && i < sizeof(batches_us) / sizeof(batches_us[0]); i++)
		err = leaf_add(s, batches_us[i], 1, 64);
	err = err ?: root_read(s, 4000, 3, false);
	err = err ?: leaf_add(s, 4500, 2, 64);
	err = err ?: leaf_add(s, 4600, 2, 64);
	err = err ?: root_read(s, 5000, 3, false);
	err = err ?: root_read(s, 7000, 0, true);
	return err;
}
