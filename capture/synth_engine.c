// SPDX-License-Identifier: GPL-2.0
/*
 * synth_engine.c - the synthetic kernel: events in replay order, the BREAK
 * ground truth kept in step with them, and the flush machine that turns each
 * flush that goes ahead into per-CPU rstat lock windows (css_rstat_flush() of
 * 6.15+: for every possible CPU, lock, visit that CPU's updated list children
 * first, unlock).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "synth-local.h"

/* FNV-1a, one 64-bit word at a time: fast enough for 20 M events. */
static inline uint64_t hash_word(uint64_t h, uint64_t w)
{
	return (h ^ w) * 0x100000001b3ull;
}

static uint64_t hash_event(uint64_t h, const struct mcr_event *ev)
{
	h = hash_word(h, ev->ts);
	h = hash_word(h, ev->seq);
	h = hash_word(h, ev->id);
	h = hash_word(h, (uint64_t)ev->val);
	h = hash_word(h, (uint64_t)(uint32_t)ev->cpu << 32 | (uint32_t)ev->item);
	h = hash_word(h, (uint64_t)(uint32_t)ev->aux << 32 | (uint32_t)ev->pid);
	return hash_word(h, (uint64_t)(uint16_t)ev->level << 16 | (uint64_t)ev->kind << 8 | ev->flags);
}

/* Appends one event in replay order: the caller has advanced the flush machine to it. */
static int emit(struct synth *s, struct mcr_event *ev)
{
	struct synth_stats *st = s->st;
	int err;

	if (ev->ts < s->now)
		return -EINVAL;		/* a scenario out of order: a bug, not input */
	s->now = ev->ts;
	ev->seq = s->seq[ev->cpu]++;
	if (!st->events)
		st->first_ts = ev->ts;
	st->last_ts = ev->ts;
	st->events++;
	st->by_kind[ev->kind]++;
	st->hash = hash_event(st->hash, ev);
	if (s->out->db) {
		err = db_events_append(s->out->db, ev);
		if (err < 0)
			return err;
	}
	if (s->out->event) {
		err = s->out->event(s->out->ctx, ev);
		if (err < 0)
			return err;
	}
	return 0;
}

int synth_machine(struct synth *s, unsigned int nr_cpus, uint64_t flush_ns, bool explicit_visits)
{
	struct sim_params sp = { .policy = sim_policy_find("break"), .nr_possible = nr_cpus,
				 .nr_online = nr_cpus, .batch = SIM_CHARGE_BATCH };

	if (s->sim || !nr_cpus)
		return -EINVAL;
	s->sim = sim_create(&sp);
	s->seq = calloc(nr_cpus, sizeof(*s->seq));
	if (!s->sim || !s->seq)
		return -ENOMEM;
	s->nr_possible = s->nr_online = nr_cpus;
	s->flush_ns = flush_ns;
	s->explicit_visits = explicit_visits;
	return 0;
}

int synth_cgroup(struct synth *s, uint64_t id, uint64_t parent, const char *path)
{
	struct db_cgroup cg = {
		.id = id, .parent = parent, .path = path, .created_ts = -1, .removed_ts = -1,
	};
	int err;

	if (id != SIM_ROOT_ID) {
		err = sim_cgroup_add(s->sim, 0, id, parent);
		if (err < 0)
			return err;
	}
	cg.level = sim_cgroup_level(s->sim, id);
	return s->out->db ? db_cgroup_put(s->out->db, &cg) : 0;
}

int synth_item(struct synth *s, int kind, int item, const char *name, const char *unit)
{
	return s->out->db ? db_item_put(s->out->db, kind, item, name, unit) : 0;
}

/*
 * Ground truth: the first moment the root is stuck: not flushable, missing
 * pages, a flushable descendant whose updates the break (60cada258dfe) keeps
 * from it.
 */
static void note_stuck(struct synth *s, uint64_t ts)
{
	struct sim_stale st;

	if (s->st->first_stuck_ts)
		return;
	if (!sim_stale_get(s->sim, SIM_ROOT_ID, &st) && st.stuck)
		s->st->first_stuck_ts = ts;
}

static void flush_start(struct synth *s, const struct synth_flush *f)
{
	s->fl = *f;
	if (s->fl.start <= s->now)
		s->fl.start = s->now + 1;
	s->fl_active = true;
	s->fl_phase = SYNTH_LOCK;
	s->fl_win = 0;
	s->fl_next = s->fl.start;
	s->fl_win_len = s->flush_ns / s->nr_possible;
	if (s->fl_win_len < 2)
		s->fl_win_len = 2;
}

static int flush_queue(struct synth *s, const struct synth_flush *f)
{
	struct synth_flush *q;
	size_t i, cap;

	if (!s->fl_active) {
		flush_start(s, f);
		return 0;
	}
	if (s->q_len == s->q_cap) {
		cap = s->q_cap ? 2 * s->q_cap : 16;
		q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		for (i = 0; i < s->q_len; i++)
			q[i] = s->queue[(s->q_head + i) % s->q_cap];
		free(s->queue);
		s->queue = q;
		s->q_cap = cap;
		s->q_head = 0;
	}
	s->queue[(s->q_head + s->q_len++) % s->q_cap] = *f;
	return 0;
}

/*
 * Visit i of n sits at (i + 1) / (n + 1) of the window: spread in visit
 * order; with a hidden order, at its drawn time.
 */
static uint64_t visit_time(const struct synth *s, size_t i)
{
	if (s->hidden)
		return s->fl_vt[i];
	return s->fl_win_start + (uint64_t)(i + 1) * (s->fl_win_len - 1) / (uint64_t)(s->fl_n + 1);
}

void synth_hidden_order(struct synth *s)
{
	s->hidden = true;
	synth_rng_seed(&s->hrng, s->args->seed ^ 0x68696464656eull);	/* "hidden" */
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The hidden order of the window just begun: its visits at sorted random
 * times strictly inside it, and each visit's place, for the truth.
 */
static int hidden_window(struct synth *s)
{
	uint64_t span = s->fl_win_len > 2 ? s->fl_win_len - 2 : 1;
	size_t i;
	int err;

	if (s->fl_n > s->cap_vt) {
		uint64_t *vt = realloc(s->fl_vt, s->fl_n * sizeof(*vt));

		if (!vt)
			return -ENOMEM;
		s->fl_vt = vt;
		s->cap_vt = s->fl_n;
	}
	for (i = 0; i < s->fl_n; i++)
		s->fl_vt[i] = s->fl_win_start + 1 + synth_rng_below(&s->hrng, span);
	qsort(s->fl_vt, s->fl_n, sizeof(*s->fl_vt), u64_cmp);
	err = idmap_reset(&s->fl_idx, s->fl_n);
	for (i = 0; i < s->fl_n && !err; i++)
		err = idmap_put(&s->fl_idx, sim_window_peek(s->sim, i), (int64_t)i);
	return err;
}

int synth_truth_flush(struct synth *s)
{
	int err = s->out->db ? db_true_order_put(s->out->db, s->truth, s->nr_truth) : 0;

	s->nr_truth = 0;
	return err;
}

/*
 * Update @ev, made in the open window after s->fl_i of its visits: where it
 * fell, if a visit of its own path is in the window (else the order does not
 * matter for it).
 */
static int hidden_truth(struct synth *s, const struct mcr_event *ev)
{
	struct db_true_order t = { .cpu = ev->cpu, .seq = ev->seq, .visits = (uint32_t)s->fl_i,
				   .lo = 0, .hi = (uint32_t)s->fl_n };
	bool any = false;
	uint64_t x;

	for (x = ev->id; x; x = sim_cgroup_parent(s->sim, x)) {
		int64_t v = idmap_get(&s->fl_idx, x, -1);

		if (v < 0)
			continue;
		any = true;
		if ((size_t)v < s->fl_i && (uint32_t)v + 1 > t.lo)
			t.lo = (uint32_t)v + 1;
		else if ((size_t)v >= s->fl_i && (uint32_t)v < t.hi)
			t.hi = (uint32_t)v;
	}
	if (!any)
		return 0;
	if (s->nr_truth == s->cap_truth) {
		size_t cap = s->cap_truth ? 2 * s->cap_truth : 4096;
		struct db_true_order *n = realloc(s->truth, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->truth = n;
		s->cap_truth = cap;
	}
	s->truth[s->nr_truth++] = t;
	return s->nr_truth >= 65536 ? synth_truth_flush(s) : 0;
}

static int lock_event(struct synth *s, uint64_t ts, int kind)
{
	struct mcr_event ev = {
		.ts = ts, .cpu = s->fl.cpu, .pid = s->fl.pid, .kind = (uint8_t)kind,
		.id = s->fl.id, .item = (int32_t)s->fl_win, .aux = SYNTH_HIERARCHY_ID,
		.level = s->fl.level,
	};

	return emit(s, &ev);
}

static int flush_visit(struct synth *s, uint64_t ts)
{
	struct mcr_event ev = {
		.ts = ts, .cpu = s->fl.cpu, .pid = s->fl.pid, .kind = MCR_EV_VISIT,
		.item = (int32_t)s->fl_win,
	};
	uint64_t id;
	int err;

	if (!s->explicit_visits) {
		err = sim_window_visit_next(s->sim, ts, &id);
		return err < 0 ? err : 0;
	}
	ev.id = sim_window_peek(s->sim, 0);
	err = emit(s, &ev);
	return err ?: sim_window_visit(s->sim, ts, ev.id);
}

/* One action of the running flush, at s->fl_next. */
static int flush_step(struct synth *s)
{
	uint64_t ts = s->fl_next;
	int err;

	switch (s->fl_phase) {
	case SYNTH_LOCK:
		err = lock_event(s, ts, MCR_EV_LOCKED);
		err = err ?: sim_window_begin(s->sim, ts, s->fl.id, s->fl_win);
		if (err < 0)
			return err;
		s->fl_win_start = ts;
		s->fl_n = sim_window_remaining(s->sim);
		s->fl_i = 0;
		if (s->hidden) {
			err = hidden_window(s);
			if (err < 0)
				return err;
		}
		s->fl_phase = s->fl_n ? SYNTH_VISIT : SYNTH_UNLOCK;
		s->fl_next = s->fl_n ? visit_time(s, 0) : ts + s->fl_win_len - 1;
		return 0;
	case SYNTH_VISIT:
		s->now = ts;
		err = flush_visit(s, ts);
		if (err < 0)
			return err;
		if (++s->fl_i < s->fl_n) {
			s->fl_next = visit_time(s, s->fl_i);
		} else {
			s->fl_phase = SYNTH_UNLOCK;
			s->fl_next = s->fl_win_start + s->fl_win_len - 1;
		}
		return 0;
	case SYNTH_UNLOCK:
		err = sim_window_end(s->sim, ts);
		err = err < 0 ? err : lock_event(s, ts, MCR_EV_UNLOCK);
		if (err < 0)
			return err;
		note_stuck(s, ts);
		if (++s->fl_win < s->nr_possible) {
			s->fl_phase = SYNTH_LOCK;
			s->fl_next = s->fl_win_start + s->fl_win_len;
			return 0;
		}
		s->fl_active = false;
		if (s->q_len) {
			flush_start(s, &s->queue[s->q_head]);
			s->q_head = (s->q_head + 1) % s->q_cap;
			s->q_len--;
		}
		return 0;
	}
	return -EINVAL;
}

int synth_advance(struct synth *s, uint64_t ts, int cpu)
{
	int err;

	while (s->fl_active && (s->fl_next < ts || (s->fl_next == ts && s->fl.cpu < cpu))) {
		err = flush_step(s);
		if (err < 0)
			return err;
	}
	return 0;
}

int synth_drain(struct synth *s)
{
	int err;

	while (s->fl_active) {
		err = flush_step(s);
		if (err < 0)
			return err;
	}
	return 0;
}

static enum sim_item_kind item_kind(int kind)
{
	return kind == MCR_EV_STATE ? SIM_ITEM_STATE :
	       kind == MCR_EV_LRUVEC ? SIM_ITEM_LRUVEC : SIM_ITEM_EVENT;
}

int synth_update(struct synth *s, uint64_t ts, int cpu, int pid, int kind, uint64_t id,
		 int item, int64_t val)
{
	struct mcr_event ev = {
		.ts = ts, .cpu = cpu, .pid = pid, .kind = (uint8_t)kind, .id = id,
		.item = item, .val = val,
	};
	int err;

	if (cpu < 0 || (unsigned int)cpu >= s->nr_possible || kind < MCR_EV_STATE || kind > MCR_EV_EVENTS)
		return -EINVAL;
	err = synth_advance(s, ts, cpu);
	err = err ?: emit(s, &ev);
	/* the window is open from its lock step on, until its unlock step */
	if (!err && s->hidden && s->fl_active && s->fl_phase != SYNTH_LOCK)
		err = hidden_truth(s, &ev);
	err = err ?: sim_update(s->sim, ts, (unsigned int)cpu, id, item_kind(kind), item, val);
	if (err < 0)
		return err;
	note_stuck(s, ts);
	return 0;
}

int synth_read(struct synth *s, uint64_t ts, int cpu, int pid, uint64_t id, bool force)
{
	struct mcr_event ev = {
		.ts = ts, .cpu = cpu, .pid = pid, .kind = MCR_EV_FLUSH, .id = id,
	};
	struct synth_flush f = {
		.id = id, .start = ts + SYNTH_LOCK_NS, .cpu = cpu, .pid = pid,
	};
	int err;

	if (cpu < 0 || (unsigned int)cpu >= s->nr_possible)
		return -EINVAL;
	err = synth_advance(s, ts, cpu);
	if (err < 0)
		return err;
	/* memcg_flush_stats fires before the decision, with the counters as they are now */
	ev.val = sim_stats_updates(s->sim, id);
	ev.flags = (force ? MCR_FLUSH_FORCE : 0) | (sim_needs_flush(s->sim, id) ? MCR_FLUSH_NEEDS : 0);
	err = emit(s, &ev);
	if (err < 0)
		return err;
	s->st->flush_requests++;
	err = sim_flush_request(s->sim, ts, id, force);
	if (err <= 0)
		return err;
	s->st->flushes++;
	f.level = (int16_t)sim_cgroup_level(s->sim, id);
	return flush_queue(s, &f);
}
