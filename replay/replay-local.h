/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay-local.h - the engine's private state, shared by engine.c (the pass
 * and a model's prepass), cgroup.c (per-cgroup state), window.c (lock
 * windows), reads.c (the readers' values), workers.c (the runs' threads)
 * and rows.c (the rows they make), the flush models (model_*.c, through
 * flush_model.h's hooks), order.c (the inferred order) and validate.c
 * (comparison with the kernel).  Not for use outside replay/.
 */
#ifndef MCR_REPLAY_LOCAL_H
#define MCR_REPLAY_LOCAL_H

#include <time.h>

#include "evq.h"
#include "flush_model.h"
#include "hash.h"
#include "hist.h"
#include "infer.h"
#include "replay.h"

#define RCG_MAX_DEPTH	4096	/* deeper than any cgroup tree: a parent loop in the table */
#define RCG_RING	8	/* recent updates kept per cgroup for mismatch context */
#define RCG_DIRECT	(1U << 16)	/* ids below this: replay.direct */
#define RCG_SER_PATH	8	/* series cgroups on a path that rcg.ser_path holds */
#define WIN_MAX_PEND	64	/* flushes waiting for their lock windows, by pid */

/* A memory.stat line: the first member of a per-line array's elements (lines.c). */
struct line_key {
	int		item;
	uint8_t		kind;	/* enum sim_item_kind */
};
void *line_find(const void *items, size_t nr, size_t size, enum sim_item_kind kind, int item,
		size_t *pos);
void *line_get(void **items, size_t *nr, size_t *cap, size_t size, enum sim_item_kind kind,
	       int item);

/* |read error| of one line over a cgroup's reads, for its quantiles (reads.c). */
struct rcg_item {
	struct line_key	key;
	struct hist	h;
};

/* One (cgroup, run). */
struct rcg_pol {
	uint64_t	flushed_reads;
	struct rcg_item	*items;		/* sorted by (kind, item) */
	size_t		nr_items, cap_items;
};

/*
 * Run p's view of a series line: min and max since the last sample, and its
 * sim line.  The line's key is the run's own copy: the series cgroup's
 * (rser.items) is the pass's, which may move it while the run reads.
 */
struct rser_run {
	int64_t		min, max;
	int32_t		line;		/* sim_line_handle(), < 0 until the sim knows it */
	struct line_key	key;
};

/*
 * Run p's view of a series cgroup: its simulator's node, and the lines the
 * run was shown, each with its minimum and maximum between samples (what
 * the simulator's range does not hold: the line's value before it existed
 * and at the update that made it).
 */
struct rser_pol {
	int32_t		node;		/* sim_node_handle(), < 0 until known */
	bool		watched;	/* the run's simulator watches it (series_show()) */
	/*
	 * By slot (rser_item.slot): the lines the run has been shown, each
	 * at the update that made it (series_show()), so that a line made
	 * by the pass while the run applies earlier updates is not yet among
	 * them, as one thread would have it.  The run's own: grown on its
	 * thread.
	 */
	struct rser_run	*lines;
	uint32_t	nr_lines, cap_lines;
};

/* A run's values at a sample (series_sample_run()): each series cgroup's, then its lines'. */
struct series_val {
	int64_t		error, min, max;
};
struct series_cg_val {
	struct sim_stale st;
	size_t		v0;		/* its lines' values from here */
	uint32_t	nr_lines;	/* the run's lines then */
	bool		known;		/* the simulator knows it: st is its state */
};
struct series_vals {
	struct series_cg_val	*cg;
	struct series_val	*v;
	size_t			nr_cg, cap_cg, nr_v, cap_v;
};

/* A series line of one series cgroup (series.c). */
struct rser_item {
	struct line_key	key;
	uint32_t	slot;		/* its place in each run's lines: the order lines were made */
	uint64_t	emitted;	/* samples written for it */
};

#define RSER_DIRECT	128	/* items below this are found without a search */

struct rser {
	/*
	 * What an update reads of a series cgroup on its path, in its first
	 * cache line (the struct is aligned to one): that the line exists
	 * (series_path_new()).  Bit item of have[kind == EVENT]: the line
	 * of (kind, item) is among items.
	 */
	uint64_t	have[2][RSER_DIRECT / 64];
	struct rser_pol	pol[REPLAY_MAX_RUNS];
	struct rcg	*c;
	/*
	 * The pass's (or the single run's, with own_series): sorted by (kind,
	 * item); a line's slot never changes, so the runs' threads can go on
	 * with lines made after the updates they apply (workers.c).
	 */
	struct rser_item *items;
	size_t		nr_items, cap_items;
	uint64_t	emitted;	/* cgroup_series samples written */
};

/* A series line one update made, for every run to be shown (series_show()). */
struct rser_hit {
	struct rser		*s;
	size_t			i;	/* the line's slot (rser_item.slot) */
};

struct rser_hits {
	struct rser_hit		*v;
	size_t			nr, cap;
};

/* A read whose value is not fixed yet (reads.c). */
struct read_wait {
	struct replay_read	rd;
	uint64_t		seq;	/* its request's, in the trace's order (replay_stats.flush_events) */
	unsigned int		pol;
};

/*
 * One run's reads waiting for their value, in the order they came, and the
 * errors of the one being ended: the run's own, so that its thread may
 * request and end reads (workers.c) while another run's does.
 */
struct reads_run {
	struct read_wait		*w;
	size_t				nr, cap;
	struct replay_read_error	*errs;
	size_t				nr_errs, cap_errs;
};

struct rcg_upd {
	uint64_t	ts;
	int64_t		val;
	int32_t		cpu;
};

#define RCG_CREDIT_NOTES	4	/* validation: requests back a credit can be counted from */

/* One cgroup: what the engine keeps besides the simulators' state. */
struct rcg {
	uint64_t	id;
	uint64_t	parent_id;	/* from the cgroups table; 0 unknown */
	struct rcg	*parent;	/* NULL for root or before it is known */
	const char	*path;
	char		*own_path;	/* path, when replay_cgroup_learn() gave it */
	struct rcg	*hnext;
	struct rser	*ser;		/* a series cgroup; NULL if not */
	uint64_t	last_flush_ts;	/* validation: last flush of it that went ahead */
	uint64_t	last_flush_capped;	/* validation: infer_capped() then */
	uint64_t	cap_miss_ts;	/* validation: last mismatch in its subtree the cap explains */
	uint64_t	cap_own_ts;	/* validation: its own last mismatch the cap explains */
	uint64_t	window_ts;	/* last update in its subtree inside a lock window */
	uint64_t	late_ts;	/* validation: last update in its subtree val_late() names */
	/*
	 * Validation, val_untraced()'s bound: the request of its last flush
	 * that went ahead in the kernel (flush_req_ts) and of the last the
	 * trace saw complete (done_req_ts); |val| summed over every update in
	 * its subtree (credit), and what that sum was at the first update
	 * after each of the last RCG_CREDIT_NOTES such requests of it or an
	 * ancestor (credit_req[0] the latest).
	 */
	uint64_t	flush_req_ts;
	uint64_t	done_req_ts;
	uint64_t	credit;
	uint64_t	credit_req[RCG_CREDIT_NOTES];
	uint64_t	credit_at[RCG_CREDIT_NOTES];
	struct rcg_upd	ring[RCG_RING];	/* validation only: updates to it */
	/*
	 * series.c: the series cgroups on its path, itself first, while
	 * ser_gen is replay.ser_gen; nr_ser_path > RCG_SER_PATH: walk instead
	 */
	uint64_t	ser_gen;
	/*
	 * Bit item of ser_full[kind == EVENT]: every series cgroup of the
	 * path has the line, as of ser_gen (series_path_new())
	 */
	uint64_t	ser_full[2][RSER_DIRECT / 64];
	struct rser	*ser_path[RCG_SER_PATH];
	unsigned int	nr_ser_path;
	unsigned int	ring_n;
	int		table_idx;	/* index in replay_trace.cgroups, -1 */
	bool		added;		/* known to the simulators */
	bool		parent_unknown;
	/*
	 * It or an ancestor below the root has an unknown parent: set as it
	 * is added, after its ancestors, whose flags are final by then (the
	 * root's is read where it is needed: the table may set it later)
	 */
	bool		under_unknown;
	bool		has_child;
	struct rcg_pol	pol[];		/* [nr_runs] */
};

/* A flush request whose lock windows may follow, on one pid. */
struct win_pend {
	uint64_t	id;
	uint64_t	req_ts;
	int32_t		pid;
	int		last_cpu;	/* the last window's CPU; -2 before the first */
	bool		used;
	bool		unlocked;	/* its last window's unlock happened (traced or implied) */
	bool		lock_only;
	bool		root_forced;	/* a forced root flush: its end syncs validation */
	/* the runs that flush at its windows have a flush in progress (pend_progress()) */
	bool		progress;
};

/*
 * A lock, unlock or flush request event's per-run half (window_take(),
 * window_op_run(); reads_take(), reads_request_run()): kind 0 for an
 * update.
 */
struct win_op {
	uint64_t	req_ts;		/* lock, last unlock: its flush request's */
	uint64_t	unlock_ts;	/* lock: the unlock the lookahead found */
	uint64_t	seq;		/* request: its place among the trace's (replay_stats.flush_events) */
	/*
	 * lock: its flush's win_pend, the runs that flush at it open one
	 * (last unlock: end it);
	 * request: the win_pend it made, WIN_SLOT_NONE if none (its runs that
	 * go ahead flush at once)
	 */
	uint32_t	slot;
	/* 0, MCR_EV_LOCKED, MCR_EV_UNLOCK, MCR_EV_FLUSH, or workers.c's sample entry */
	uint8_t		kind;
	/* lock: the flush's first, sim_flush_progress_begin(); last unlock: its end */
	bool		progress;
	bool		last;		/* unlock: the flush's last, which ends its request */
};
#define WIN_SLOT_NONE	UINT32_MAX

/* One policy's simulated window: the engine opens and closes it, the model places its visits. */
struct win_pol {
	struct model_window	m;
	bool			open;
	bool			explicit_visits;	/* VISIT events place them, not the model */
	/* the flush whose window it is (win_pend's id, req_ts, pid): its reads wait for it */
	uint64_t		id;
	uint64_t		req_ts;
	int32_t			pid;
};

/*
 * Flushes of one run that went ahead while its lock window was open: the
 * kernel's css_rstat_flush() would wait for the rstat lock, so they happen,
 * in order, when the window ends (win_end_policy()).
 */
struct win_defer {
	uint64_t	*id;
	size_t		nr, cap;
};

struct win {
	struct win_pend	pend[WIN_MAX_PEND];
	/*
	 * Bit k of rgo[p]: run p flushes at pend[k]'s windows (it went ahead
	 * at the request).  Run p's own word: set by the run that decides
	 * (window_flush_request_run()), on whichever thread applies it; read
	 * and cleared for every run only with the runs drained.
	 */
	uint64_t	rgo[REPLAY_MAX_RUNS];
	/*
	 * Some waiting read is not held by its request alone (win_waits_held()):
	 * as the runs were last drained (window_reads_note()).  A request the
	 * runs take leaves it so: each of its reads is held or ended at once.
	 */
	bool		waits_unheld;
	struct win_pol	pol[REPLAY_MAX_RUNS];
	struct win_defer defer[REPLAY_MAX_RUNS];
	/* The kernel's own open window (any model): updates inside it have unknown order. */
	uint64_t	kwin_id;
	int32_t		kwin_pid;
	int		kwin_cpu;
	bool		kwin_open;
	/*
	 * The open window's unlock is not in the trace: it closes at
	 * lost_end_ts (window.c, win_lost()).  max_win_ns: the longest window
	 * whose unlock the trace had so far.
	 */
	bool		kwin_lost;
	uint64_t	lost_end_ts;
	uint64_t	max_win_ns;
	uint64_t	lost_ts;	/* the lock of the last window without unlock, 0 none */
};

/*
 * The inference's answer at one traced memcg_flush_stats (infer_check()), and
 * its counts right after it.
 */
struct val_check {
	bool		su_ok, nf_ok;
	uint64_t	capped;		/* infer_capped() */
	uint64_t	max_kept;	/* infer_max_kept() */
	uint64_t	lowered;	/* infer_cap_lowered() */
	uint64_t	exact_max;	/* infer_exact_max() */
	uint64_t	given_up;	/* infer_exact_given_up() */
	uint64_t	work;		/* infer_work() */
};
struct val_check val_check_of(const struct infer *in, bool su_ok, bool nf_ok);

struct val_state {
	struct replay_validation v;
	uint64_t	capped_mark;	/* infer_capped() at the last mismatch */
	uint64_t	unknown_upd_ts;	/* last update under a cgroup of unknown parent */
	/*
	 * The last lock window inference was given an unlock of (subtree
	 * late_id, unlocked at late_unl_ts, 0 none), and whether inference
	 * still holds it open for late updates (infer_unlock()'s rule,
	 * followed here from the events alone: val_late()).
	 */
	uint64_t	late_unl_ts;
	uint64_t	late_id;
	bool		late_open;
	/*
	 * The inference runs beside the pass (beside.c, r->inf NULL): its
	 * answers at the flush events, in their order, queued [head, tail);
	 * cur: the last one taken.
	 */
	bool		beside;
	struct val_check *q;
	size_t		head, tail, cap;
	struct val_check cur;
	/*
	 * Per CPU, the largest |val| it traced, and their sum: an update made
	 * just before a read and traced just after it (val_untraced()).
	 */
	uint64_t	*cpu_max_abs;	/* [nr_possible] */
	uint64_t	in_flight;
};

struct rows_cursor;
struct replay_ep_ctx {
	struct replay	*r;
	struct rows_cursor *buf; /* set while the run applies a block on its thread (rows.c) */
	unsigned int	pol;
};

/* An inference's infer_miss_at() and infer_work_at(), kept past it. */
struct replay_checks {
	uint64_t	*miss_at, *work_at;
	size_t		nr_miss, nr_checks;
};
int replay_checks_copy(struct replay_checks *to, const struct infer *in);
void replay_checks_free(struct replay_checks *c);

struct replay {
	struct replay_params		p;
	const struct replay_trace	*t;
	const struct replay_order	*order;		/* p.order, or the prepass's */
	struct replay_order		*order_own;	/* the prepass's, freed with the replay */
	struct replay_order		*order_kept;	/* validate's inference's (p.keep_order) */
	struct replay_checks		inf_checks;	/* the inference's, where it ran apart */
	struct replay_prepass		prep;		/* prep.policy NULL: no prepass ran */
	bool				prepared;	/* replay_prepare() done */
	struct sim			*sims[REPLAY_MAX_RUNS];	/* one per run */
	/*
	 * Each run's sim_update_prepare() of the event being applied
	 * ([prep_cur]) and of the next ([!prep_cur]), engine_prefetch()'s;
	 * prep_set[i]: upd_prep[][i] were prepared for that event.
	 */
	struct sim_prep			upd_prep[REPLAY_MAX_RUNS][2];
	unsigned int			prep_cur;
	bool				prep_set[2];
	struct evq			q;
	struct mcr_event		cur;	/* the event replay_run() is on: q.got - 1 */
	struct win			win;
	struct replay_stats		st;
	struct val_state		*val;
	struct infer			*inf;		/* validation with windows traced */
	/*
	 * A forced flush of the root has completed (win_pend_done()): every
	 * counter is known from sync_ts on, the trace's and the simulators'.
	 */
	bool				synced;
	uint64_t			sync_ts;
	struct rcg			**cg;		/* first-seen order */
	size_t				nr_cg, cap_cg;
	struct rcg			**htab;
	size_t				hmask;
	/* ids below RCG_DIRECT (cgroup ids are small counters) also here: one load */
	struct rcg			**direct;
	uint8_t				*direct_added;	/* [cap_direct]: rcg.added */
	size_t				cap_direct;
	struct rser			**ser;		/* series cgroups, as they became known */
	size_t				nr_ser, cap_ser;
	struct rser_hits		hits;		/* series_update()'s, serial */
	uint64_t			ser_gen;	/* bumped when a series or parent link is made */
	uint64_t			nr_samples;	/* samples taken */
	uint64_t			sample_due;	/* the next one's ts, once one was taken */
	struct series_vals		svals[REPLAY_MAX_RUNS];	/* a serial sample's (series_sample()) */
	struct reads_run		rr[REPLAY_MAX_RUNS];	/* reads waiting for their flush */
	size_t				nr_waits;	/* in all rr[]: atomic, runs' threads add and end */
	struct replay_ep_ctx		ep[REPLAY_MAX_RUNS];	/* episode sink contexts */
	uint64_t			now;
	uint64_t			*cpu_prev_ts;	/* [nr_possible]: last event's ts per CPU */
	struct rcg			*root;
	struct workers			*wk;		/* the runs' threads; NULL: serial */
	/* a prepass beside a pass (beside.c): called every REPLAY_BESIDE_EVERY events */
	int				(*settled)(void *ctx, struct infer *in, uint64_t done);
	void				*settled_ctx;
	/* ... and after each flush event it checked (engine_infer.checked) */
	int				(*checked)(void *ctx, struct infer *in, bool su_ok,
						   bool nf_ok);
	void				*checked_ctx;
};

/*
 * cgroup.c; rcg_find() is the lookup of its flat table or hash, inline for every
 * event's cgroup (engine.c, workers.c, reads.c, series.c).
 */
static inline struct rcg *rcg_find(struct replay *r, uint64_t id)
{
	struct rcg *c;

	if (id < r->cap_direct)
		return r->direct[id];
	for (c = r->htab[mcr_hash64(id) & r->hmask]; c; c = c->hnext)
		if (c->id == id)
			return c;
	return NULL;
}

/*
 * rcg_find() of a cgroup known to the simulators (rcg.added), or NULL:
 * without a look at the cgroup itself for an id in the flat table, a
 * cache miss on every update where the pass does nothing else with it.
 */
static inline struct rcg *rcg_find_added(struct replay *r, uint64_t id)
{
	struct rcg *c;

	if (id < r->cap_direct)
		return r->direct_added[id] ? r->direct[id] : NULL;
	c = rcg_find(r, id);
	return c && c->added ? c : NULL;
}

/* rcg_get() (cgroup.c) adds; a hot caller tries rcg_find_added() first. */
struct rcg *rcg_get(struct replay *r, uint64_t ts, uint64_t id, bool via_update);
int rcg_add_initial(struct replay *r);
int rcg_mkdir(struct replay *r, uint64_t ts, uint64_t id);
void rcg_free_all(struct replay *r);

/* series.c */
int series_mark(struct replay *r, struct rcg *c);
int series_update(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item);
int series_update_run(struct replay *r, const struct rser_hit *hit, size_t nr, unsigned int p,
		      enum sim_item_kind kind, int item);
int series_update_one(struct replay *r, struct rcg *c, enum sim_item_kind kind, int item,
		      struct rser_hits *hits);
int series_lines_resolve(struct replay *r, struct rcg *c, enum sim_item_kind kind,
			 int item, struct rser_hits *out);
/*
 * The next sample's ts: kept from the last sample, as every event asks;
 * the first is due at the first event (the first ts is set by then).
 */
static inline uint64_t series_next_ts(const struct replay *r)
{
	return r->nr_samples ? r->sample_due : r->st.first_ts;
}

/* Is a sample due before an event at @ts (series_until() would write rows)?  Inline: every event asks. */
static inline bool series_due(const struct replay *r, uint64_t ts)
{
	return r->p.sample_ns && ts >= series_next_ts(r);
}
int series_after_event(struct replay *r);
int series_after_event_run(struct replay *r, unsigned int p);
int series_sample(struct replay *r);
int series_sample_run(struct replay *r, unsigned int p, struct series_vals *out);
int series_sample_emit(struct replay *r, uint64_t k, const struct series_vals *v);
uint64_t series_sample_take(struct replay *r);
void series_vals_free(struct series_vals *v);
int series_until(struct replay *r, uint64_t ts);
int series_finish(struct replay *r);
void series_free(struct replay *r);

/* reads.c */
int reads_request(struct replay *r, const struct mcr_event *ev, struct rcg *c, unsigned int p,
		  bool go, const struct sim_stale *st, uint64_t seq);
int reads_settle(struct replay *r, bool all);
int reads_decide(struct replay *r, unsigned int p, const struct mcr_event *ev, struct rcg *c,
		 uint64_t seq);
int reads_take(struct replay *r, const struct mcr_event *ev, struct win_op *op);
int reads_request_run(struct replay *r, unsigned int p, const struct mcr_event *ev, struct rcg *c,
		      const struct win_op *op);
int reads_end_new(struct replay *r, unsigned int p, uint64_t ts);
/* Are reads waiting?  The pass asks after every event it does itself. */
static inline bool reads_waiting(const struct replay *r)
{
	return __atomic_load_n(&r->nr_waits, __ATOMIC_RELAXED);
}
int reads_end_flush(struct replay *r, unsigned int p, uint64_t id, uint64_t req_ts, int32_t pid,
		    uint64_t ts);
void reads_free(struct replay *r);

/* window.c */
int window_flush_request(struct replay *r, const struct mcr_event *ev, const bool *go);
int window_locked(struct replay *r, const struct mcr_event *ev);
int window_unlock(struct replay *r, const struct mcr_event *ev);
int window_visit(struct replay *r, const struct mcr_event *ev);
int window_before_event(struct replay *r, const struct mcr_event *ev);
int window_before_event_run(struct replay *r, unsigned int p, const struct mcr_event *ev);
int window_before_update(struct replay *r, const struct mcr_event *ev);
/*
 * window_update_shared() - an update is about to be applied: the model's
 * half of it on the pass's thread, into @u.  Return: 1 if the runs' halves
 * (window_update_run()) have something to do (@u then filled), 0 if not,
 * -errno.  Inline: most models have no before_update, and the pass asks at
 * every update it queues.
 */
static inline int window_update_shared(struct replay *r, const struct mcr_event *ev,
				       struct model_upd *u)
{
	return r->p.model->before_update ? r->p.model->before_update(r, ev, u) : 0;
}
int window_update_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
		      const struct model_upd *u);
bool window_runs_may_queue(const struct replay *r);
void window_update_hook(struct replay *r, const struct mcr_event *ev, struct rcg *c);
int window_finish(struct replay *r);
/* Frees what the windows hold (the flushes deferred to a window's end). */
void window_free(struct replay *r);
/* For a model's before_update: policy @pol's open window whose visits the model places, or NULL. */
struct model_window *window_placed(struct replay *r, unsigned int pol);
bool window_flush_waiting(const struct replay *r, uint64_t id, uint64_t req_ts, int32_t pid,
			  unsigned int pol);
int window_take(struct replay *r, const struct mcr_event *ev, struct win_op *op);
int window_op_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
		  const struct win_op *op);
int window_flush_take(struct replay *r, const struct mcr_event *ev, struct win_op *op);
int window_flush_request_run(struct replay *r, unsigned int p, const struct mcr_event *ev,
			     const struct win_op *op, bool go);
void window_reads_note(struct replay *r);

/* workers.c */
int workers_start(struct replay *r);
int workers_take(struct replay *r, const struct mcr_event *ev);
int workers_drain(struct replay *r);
void workers_stop(struct replay *r);

/*
 * rows.c: a run's rows made on a runs' thread, kept per block and delivered
 * in one thread's order: event by event, phase by phase, runs in order in
 * each.  Where in an event a row comes:
 */
enum rows_phase {
	ROWS_VISITS,	/* the visits before it (the model's visit hook) */
	ROWS_MODEL,	/* those the model puts before an update (window_update_run()) */
	ROWS_EVENT,	/* the update, lock or unlock; a flush request's decision */
	ROWS_FLUSH,	/* a request's flushes that go ahead at once; a last unlock's end of it */
	ROWS_READS,	/* the reads that end at the event */
	ROWS_PHASES
};

/*
 * A row a run made during event @at of a block, in its @phase: a stranded
 * episode that ended, or a read whose value was fixed (its errors in its
 * list's errs from err0).
 */
struct rows_row {
	union {
		struct sim_episode	ep;
		struct replay_read	rd;
	};
	size_t			err0;
	uint32_t		at;
	uint8_t			phase;	/* enum rows_phase */
	bool			read;
};

/* One run's rows of one block. */
struct rows_list {
	struct rows_row		*v;
	size_t			nr, cap;
	struct replay_read_error *errs;
	size_t			nr_errs, cap_errs;
};

/*
 * Where run p is in the block it applies (replay_ep_ctx.buf points here
 * meanwhile): written at every event, so each run's on a cache line of its
 * own; beside another run's, applied on the other core, every event's write
 * missed.
 */
struct rows_cursor {
	struct rows_list	*list;	/* the block's, for run p */
	uint32_t		at;	/* the block's event being applied */
	uint8_t			phase;	/* enum rows_phase */
} __attribute__((aligned(64)));

void rows_begin(struct replay_ep_ctx *ec, struct rows_cursor *cur, struct rows_list *l);
int rows_episode(struct replay_ep_ctx *ec, const struct sim_episode *ep);
int rows_read(struct replay_ep_ctx *ec, const struct replay_read *rd);
void rows_phase(struct replay_ep_ctx *ec, enum rows_phase ph);
int rows_emit(const struct replay_sink *sk, struct rows_list *l, unsigned int nr_runs, uint32_t nr);
void rows_free(struct rows_list *l);

/* validate's infer_set_exact() budget: 0 with --cap-only, else 1 by default */
static inline unsigned int replay_exact_budget(const struct replay_params *p)
{
	return p->cap_only ? 0 : p->exact_budget ? p->exact_budget : 1;
}

/* order.c */
struct replay_order *order_create(void);
int order_add(void *ctx, uint64_t tag, size_t p);

/* engine.c: a pass of inference alone, its decisions to @fn */
struct engine_infer {
	const struct sim_policy	*policy;
	unsigned int		max_hyp;
	unsigned int		exact;		/* infer_set_exact()'s budget, 0 off */
	unsigned int		exact_wide;	/* infer_set_exact_wide()'s from the start, 0 none */
	int			(*order)(void *ctx, uint64_t tag, size_t p);
	void			*order_ctx;
	int			(*settled)(void *ctx, struct infer *in, uint64_t done);
	void			*settled_ctx;
	/* after each traced memcg_flush_stats the inference checked; may be NULL */
	int			(*checked)(void *ctx, struct infer *in, bool su_ok, bool nf_ok);
	void			*checked_ctx;
	void			(*progress)(void *ctx, const char *pass, uint64_t done);
	void			*progress_ctx;
	const char		*name;		/* the progress's @pass: NULL "infer" */
	uint64_t		*capped;	/* out: infer_capped() at the end; may be NULL */
	uint64_t		*missed;	/* out: infer_missed() at the end; may be NULL */
	uint64_t		*work;		/* out: infer_work() at the end; may be NULL */
	struct replay_checks	*checks;	/* out: at the end; may be NULL */
	bool			no_halving;	/* infer_set_patience(0) */
};
int engine_infer_pass(const struct replay_trace *t, const struct engine_infer *ei,
		      struct replay_source *src);

/*
 * A search by inference alone (pass.c's wider one): its answer at every
 * traced memcg_flush_stats (for validate), its order (where one is kept)
 * and its misses.  Given up with -ETIME once its infer_work() passes
 * @limit, or @retry times the first pass's work at the same check and an
 * eighth of its whole; with -ERANGE once it has missed more values than
 * the first pass had by the same check, or more than three quarters as many
 * once that was a quarter of the first pass's.  Writes nothing.  Its caps
 * and budgets are @out's (narrow_*, wide_*, set by the caller); of @p only
 * the progress callback is used.
 */
struct replay_answers {
	struct val_check	*v;
	size_t			n, cap;
	struct replay_order	*order;
	uint64_t		missed;		/* infer_missed() */
	uint64_t		work;		/* infer_work() */
	uint64_t		limit;
	double			retry;
	double			first_whole;	/* the first pass's infer_work() */
	/* the first pass's infer_miss_at() and infer_work_at(), not owned */
	const uint64_t		*first_miss, *first_work;
	size_t			first_nr_miss, first_nr_checks;
	size_t			first_by;	/* of its misses, the ones at the checks so far */
	uint64_t		checks;
	bool			keep;		/* the answers (v, n) kept */
	/*
	 * Wide only for the REPLAY_WIDER_AHEAD checks up to each of the first
	 * pass's misses, as the first pass elsewhere: a list search's cap (and
	 * never halved), or with wide_budget the diagrams' budget.
	 */
	bool			wide;		/* now */
	unsigned int		narrow_hyp, wide_hyp;		/* alike for a diagram search */
	unsigned int		narrow_budget, wide_budget;	/* 0: a list search */
	uint64_t		wide_checks;	/* checks reached wide */
};
int engine_search(const struct replay_trace *t, const struct replay_params *p,
		  const struct sim_policy *pol, bool checks, bool order, struct replay_source *src,
		  struct replay_answers *out);
void replay_answers_free(struct replay_answers *a);
int engine_prepare(struct replay *r, const struct sim_policy **pol);

#define REPLAY_BESIDE_EVERY	1024u	/* beside.c's prepass: events between its looks */

/* validate.c */
int val_create(struct replay *r);
void val_free(struct replay *r);
int val_flush_event(struct replay *r, const struct mcr_event *ev, struct rcg *c);
void val_update(struct replay *r, const struct mcr_event *ev, struct rcg *c);
void val_unlocked(struct replay *r, uint64_t id, uint64_t ts);
void val_window_closed(struct replay *r);
/* a flush the trace saw complete (its last window unlocked): the credit counts from its request */
void val_flush_done(struct replay *r, const struct win_pend *pd);
/* the pass synced (win_pend_done()): the validation reports when */
void val_synced(struct replay *r);
void val_went_ahead(struct replay *r, struct rcg *c, uint64_t ts);
int val_checks_put(struct replay *r, const struct val_check *c, size_t n);

static inline enum sim_item_kind replay_item_kind(unsigned int ev_kind)
{
	return ev_kind == MCR_EV_STATE ? SIM_ITEM_STATE :
	       ev_kind == MCR_EV_LRUVEC ? SIM_ITEM_LRUVEC : SIM_ITEM_EVENT;
}

/* An event's name across passes over the same trace: its CPU and per-CPU sequence. */
static inline uint64_t replay_tag(const struct mcr_event *ev)
{
	return ((uint64_t)(uint32_t)ev->cpu << 48) ^ ev->seq;
}

/* CLOCK_MONOTONIC in seconds: the wall time of a pass and of its prepass. */
static inline double replay_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The event's CPU, back from its tag; exact while seq < 2^48, else no CPU of the trace. */
static inline uint64_t replay_tag_cpu(uint64_t tag)
{
	return tag >> 48;
}

static inline uint64_t replay_tag_seq(uint64_t tag)
{
	return tag & ((1ull << 48) - 1);
}

#endif
