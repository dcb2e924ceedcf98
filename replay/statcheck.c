// SPDX-License-Identifier: GPL-2.0
/*
 * statcheck.c - every logged memory.stat read (stat_reads) against the
 * simulated read error of validate's run: does printed = truth + error hold?
 *
 * Truth before the trace is unknown: each cgroup's first read matched to its
 * traced flush request is the anchor, and every later read k is compared as
 *   printed(k) - printed(0) = sum v over (req(0), req(k)] + error(k) - error(0)
 * per hierarchical line of a traced item (sim/statlines.c), in the traced
 * unit.  The sums are taken at the flush requests; the simulated error at the
 * end of the read's flush: updates to the item in the subtree between the two
 * (on other CPUs, inside the deciding flush's lock window) may or may not be
 * in what the kernel printed, so a difference within their sum has that
 * window as its cause.  A read the kernel did not flush printed what the last
 * flush of its cgroup or of an ancestor (the periodic root flush, another
 * reader's) left there: on a recording, its deciding flush is that one, and
 * the updates that may or may not be in it are the subtree's made on CPU c
 * inside that flush's lock window of CPU c's tree (the order of the visit and
 * of those updates is not traced).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "db.h"
#include "idmap.h"
#include "results.h"
#include "replay-local.h"
#include "statlines.h"

#define SC_MAX_CGROUPS	64	/* read cgroups: one bit each in a subtree mask */
#define SC_ITEMS	4096	/* items looked up directly; others by the list */

struct sc_target {		/* one (cgroup, line) */
	uint64_t	cgroup;
	unsigned int	cg;		/* its bit */
	int		cls;		/* 1 state (kinds 1, 2), 3 events */
	int		item;
	int64_t		per;		/* printed units per traced unit */
	int64_t		cum;		/* sum of v in the subtree so far */
	uint64_t	abs;		/* sum of |v| */
	uint64_t	last_win;	/* sum of |v| inside the cgroup's last flush's windows */
	size_t		line;		/* index into out->lines */
};

/*
 * The last flush that covered a read cgroup (of it or of an ancestor, forced or
 * needs_flush): its task, and the CPU whose per-CPU tree it has locked now.
 */
struct sc_last_flush {
	int32_t		pid;
	int32_t		tree_cpu;	/* -1: outside its lock windows */
	bool		open;		/* its lock events may still come */
	uint64_t	seq;		/* the flush's number (sc.flush_seq), 0 none yet */
	size_t		win;		/* its open window in sc.win, SIZE_MAX none */
};

/* An update of a read cgroup's subtree made on the CPU of its last flush's open window. */
struct sc_upd {
	uint64_t	tag;		/* replay_tag() */
	int		cls;		/* 1 state, 3 events */
	int		item;
	int64_t		val;
};

/* A lock window of the last flush of read cgroup @cg: the updates made inside it on its CPU. */
struct sc_win {
	uint64_t	lock_ts;
	int		cpu;
	unsigned int	cg;
	uint64_t	flush;		/* sc_last_flush.seq */
	struct sc_upd	*u;
	size_t		nu, cap_u;
};

/* A read the kernel flushed, until its flush (by task @pid) ends. */
struct sc_end {
	size_t		rd;
	int32_t		pid;
};

struct sc_val {
	size_t		target;
	int64_t		printed;
	int64_t		err;		/* simulated read error, traced units */
	int64_t		truth;		/* target's cum at the request */
	uint64_t	abs_req, abs_end;	/* target's abs at the request, at ts_after */
	uint64_t	last_win;	/* target's last_win at the request */
	int64_t		diff;		/* sc_compare(): printed - expected, traced units */
	bool		cmp;		/* compared (not an anchor's) */
};

struct sc_read {
	int64_t		read;
	uint64_t	cgroup;
	uint64_t	ts_before, ts_after;
	uint64_t	req_ts;
	int64_t		read_id;
	bool		matched, snap_req, snap_end;
	bool		decision_differs;	/* the run's flush decision is not the kernel's */
	bool		deciding_differs;	/* so, or of the logged read whose flush it printed */
	bool		kernel_flushed;		/* the kernel flushed at this read, as traced */
	bool		placed;			/* its flush's visit placed by printed values */
	uint64_t	flush;			/* what it printed: that flush's (sc_last_flush.seq) */
	struct sc_val	*v;
	size_t		nr_v, cap_v;
};

struct sc {
	struct db		*db;
	struct replay_statcheck	*out;
	const struct replay_trace *t;
	struct sc_target	*tg;
	size_t			nr_tg, cap_tg, cap_lines;
	bool			want[2][SC_ITEMS];	/* (state, events) items of a target */
	struct sc_read		*rd;
	size_t			nr_rd, cap_rd;
	uint64_t		cgs[SC_MAX_CGROUPS];
	unsigned int		nr_cgs;
	struct idmap		parent;		/* cgroup id -> parent id */
	struct idmap		mask;		/* cgroup id -> subtree mask of read cgroups */
	struct sc_last_flush	lf[SC_MAX_CGROUPS];
	bool			last_flush;	/* track lf: a recording */
	uint64_t		flush_seq;
	/* the windows of the last flushes, kept for the placement by printed values */
	bool			windows;
	struct sc_win		*win;
	size_t			nr_win, cap_win;
	size_t			anchor[SC_MAX_CGROUPS];	/* index in rd, SIZE_MAX none */
	struct sc_end		*wait;		/* flushed reads until their flush's end */
	size_t			nr_wait, cap_wait;
	const struct idmap	*placed;	/* tag -> enum replay_placed, of the run compared */
	const struct replay_pin	*pins;		/* the run's pins: its reads to mark */
	size_t			nr_pins;
	int			err;
};

static int sc_cg_find(const struct sc *sc, uint64_t cgroup)
{
	unsigned int i;

	for (i = 0; i < sc->nr_cgs; i++)
		if (sc->cgs[i] == cgroup)
			return (int)i;
	return -1;
}

static int sc_cg_bit(struct sc *sc, uint64_t cgroup)
{
	unsigned int i;

	for (i = 0; i < sc->nr_cgs; i++)
		if (sc->cgs[i] == cgroup)
			return (int)i;
	if (sc->nr_cgs == SC_MAX_CGROUPS)
		return -E2BIG;
	sc->cgs[sc->nr_cgs] = cgroup;
	return (int)sc->nr_cgs++;
}

/* The target of (@cgroup, line @name), made on first sight; -ENOENT for a line not compared. */
static int sc_target(struct sc *sc, uint64_t cgroup, const char *name, size_t *out)
{
	struct replay_statcheck *o = sc->out;
	struct statline_ref ref;
	struct sc_target *t;
	int kind, item, bit, ret;
	size_t i;

	for (i = 0; i < sc->nr_tg; i++)
		if (sc->tg[i].cgroup == cgroup && !strcmp(o->lines[sc->tg[i].line].name, name)) {
			*out = i;
			return 0;
		}
	if (statline_lookup(o->version, name, &ref) || !ref.hierarchical ||
	    ref.line->kind == STATLINE_NONE || strlen(name) >= REPLAY_STATCHECK_NAME)
		return -ENOENT;
	ret = db_item_by_name(sc->db, ref.line->item, &kind, &item);
	if (ret < 0)
		return ret == -ENOENT ? -ENOENT : ret;
	/* the table's kind and the trace's must agree: a state line is not an event */
	if ((kind == 3) != (ref.line->kind == STATLINE_EVENT))
		return -ENOENT;
	bit = sc_cg_bit(sc, cgroup);
	if (bit < 0)
		return bit;
	if (mcr_grow((void **)&sc->tg, &sc->cap_tg, sc->nr_tg + 1, sizeof(*sc->tg)) ||
	    mcr_grow((void **)&o->lines, &sc->cap_lines, o->nr_lines + 1, sizeof(*o->lines)))
		return -ENOMEM;
	t = &sc->tg[sc->nr_tg];
	*t = (struct sc_target){ .cgroup = cgroup, .cg = (unsigned int)bit, .cls = kind,
				 .item = item, .line = o->nr_lines,
				 .per = ref.line->per_page ? o->page_size : 1 };
	o->lines[o->nr_lines] = (struct replay_statcheck_line){ .cgroup = cgroup,
								 .rounded = ref.line->rounded,
								 .per = t->per };
	strcpy(o->lines[o->nr_lines].name, name);
	if (item >= 0 && item < SC_ITEMS)
		sc->want[kind == 3][item] = true;
	o->nr_lines++;
	*out = sc->nr_tg++;
	return 0;
}

static int sc_row(const struct db_stat_read *r, const struct db_stat_line *l, void *ctx)
{
	struct sc *sc = ctx;
	struct sc_read *rd;
	size_t tgt;
	int ret;

	if (!sc->nr_rd || sc->rd[sc->nr_rd - 1].read != r->read) {
		if (mcr_grow((void **)&sc->rd, &sc->cap_rd, sc->nr_rd + 1, sizeof(*sc->rd)))
			return -ENOMEM;
		sc->rd[sc->nr_rd++] = (struct sc_read){ .read = r->read, .cgroup = r->cgroup,
							.ts_before = r->ts_before,
							.ts_after = r->ts_after };
		sc->out->reads++;
	}
	rd = &sc->rd[sc->nr_rd - 1];
	if (!l->has_value) {
		sc->out->lines_skipped++;
		return 0;
	}
	ret = sc_target(sc, r->cgroup, l->name, &tgt);
	if (ret == -ENOENT) {
		sc->out->lines_skipped++;
		return 0;
	}
	if (ret < 0)
		return ret;
	if (mcr_grow((void **)&rd->v, &rd->cap_v, rd->nr_v + 1, sizeof(*rd->v)))
		return -ENOMEM;
	rd->v[rd->nr_v++] = (struct sc_val){ .target = tgt, .printed = l->value };
	return 0;
}

static int sc_err_row(int kind, int item, int64_t error, void *ctx)
{
	void **a = ctx;
	struct sc *sc = a[0];
	struct sc_read *rd = a[1];
	size_t j;

	if (kind == 2)
		kind = 1;
	for (j = 0; j < rd->nr_v; j++) {
		const struct sc_target *t = &sc->tg[rd->v[j].target];

		if (t->cls == kind && t->item == item)
			rd->v[j].err = error;
	}
	return 0;
}

/* Bit i set: @id is in the subtree of read cgroup i. */
static uint64_t sc_mask(struct sc *sc, uint64_t id)
{
	int64_t m = idmap_get(&sc->mask, id, -1);
	uint64_t mask = 0, cur = id;
	unsigned int depth, i;

	if (m >= 0)
		return (uint64_t)m;
	for (depth = 0; cur && depth < 4096; depth++) {
		for (i = 0; i < sc->nr_cgs; i++)
			if (sc->cgs[i] == cur)
				mask |= 1ull << i;
		cur = (uint64_t)idmap_get(&sc->parent, cur, 0);
	}
	if (idmap_put(&sc->mask, id, (int64_t)(mask & INT64_MAX)) < 0)
		sc->err = -ENOMEM;
	return mask;
}

static void sc_snap(struct sc *sc, struct sc_read *rd, bool end)
{
	size_t j;

	for (j = 0; j < rd->nr_v; j++) {
		const struct sc_target *t = &sc->tg[rd->v[j].target];

		if (end) {
			rd->v[j].abs_end = t->abs;
		} else {
			rd->v[j].truth = t->cum;
			rd->v[j].abs_req = t->abs;
			rd->v[j].last_win = t->last_win;
		}
	}
	if (end) {
		rd->snap_end = true;
	} else {
		int bit = sc_cg_find(sc, rd->cgroup);

		rd->snap_req = true;
		rd->flush = bit < 0 ? 0 : sc->lf[bit].seq;
	}
}

/*
 * On a recording, a read the kernel flushed is fixed, in the simulation as in
 * the kernel, once its flush's windows are over: its truth is taken there
 * (the unlock of its flush's last CPU), where its simulated error is, not at
 * its request; updates the subtree made meanwhile are in both.  A flush
 * whose end the trace lacks keeps the request's.
 */
static void sc_end_wait(struct sc *sc, size_t rd, int32_t pid)
{
	if (mcr_grow((void **)&sc->wait, &sc->cap_wait, sc->nr_wait + 1, sizeof(*sc->wait))) {
		sc->err = -ENOMEM;
		return;
	}
	sc->wait[sc->nr_wait++] = (struct sc_end){ .rd = rd, .pid = pid };
}

static void sc_end_event(struct sc *sc, const struct mcr_event *ev)
{
	size_t i = 0, j;

	while (i < sc->nr_wait) {
		struct sc_read *rd = &sc->rd[sc->wait[i].rd];

		if (sc->wait[i].pid != ev->pid || (ev->kind == MCR_EV_FLUSH &&
		    ev->ts == rd->req_ts && ev->id == rd->cgroup) ||
		    (ev->kind == MCR_EV_UNLOCK && ev->item != -1 &&
		     ev->item != (int)sc->t->nr_possible - 1)) {
			i++;
			continue;
		}
		/* its last unlock, or its task's next flush: the end unknown */
		for (j = 0; ev->kind == MCR_EV_UNLOCK && j < rd->nr_v; j++)
			rd->v[j].truth = sc->tg[rd->v[j].target].cum;
		sc->wait[i] = sc->wait[--sc->nr_wait];
	}
}

static struct sc *sc_sorting;

static int sc_by_req(const void *a, const void *b)
{
	const struct sc_read *x = sc_sorting->rd + *(const size_t *)a;
	const struct sc_read *y = sc_sorting->rd + *(const size_t *)b;

	return x->req_ts < y->req_ts ? -1 : x->req_ts > y->req_ts;
}

static int sc_by_end(const void *a, const void *b)
{
	const struct sc_read *x = sc_sorting->rd + *(const size_t *)a;
	const struct sc_read *y = sc_sorting->rd + *(const size_t *)b;

	return x->ts_after < y->ts_after ? -1 : x->ts_after > y->ts_after;
}

/* Is read cgroup @bit in the subtree of @id? */
static bool sc_under(struct sc *sc, unsigned int bit, uint64_t id)
{
	uint64_t cur = sc->cgs[bit];
	unsigned int depth;

	for (depth = 0; cur && depth < 4096; depth++) {
		if (cur == id)
			return true;
		cur = (uint64_t)idmap_get(&sc->parent, cur, 0);
	}
	return false;
}

/*
 * A flush request, or a lock event of the rstat lock: the last flush of each
 * read cgroup, and whether it holds a per-CPU tree's lock now.
 */
static void sc_last_flush_event(struct sc *sc, const struct mcr_event *ev)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < sc->nr_cgs; i++) {
		struct sc_last_flush *lf = &sc->lf[i];

		if (ev->kind == MCR_EV_FLUSH) {
			if ((ev->flags & 3) && sc_under(sc, i, ev->id)) {
				*lf = (struct sc_last_flush){ .pid = ev->pid, .tree_cpu = -1,
							      .open = true, .seq = ++sc->flush_seq,
							      .win = SIZE_MAX };
				for (j = 0; j < sc->nr_tg; j++)
					if (sc->tg[j].cg == i)
						sc->tg[j].last_win = 0;
			} else if (ev->pid == lf->pid) {
				/* its task asks another flush: the last one is over */
				lf->open = false;
				lf->tree_cpu = -1;
				lf->win = SIZE_MAX;
			}
			continue;
		}
		if (!lf->open || ev->pid != lf->pid)
			continue;
		lf->tree_cpu = ev->kind == MCR_EV_LOCKED ? ev->item : -1;
		lf->win = SIZE_MAX;
		if (!sc->windows || lf->tree_cpu < 0)
			continue;
		if (mcr_grow((void **)&sc->win, &sc->cap_win, sc->nr_win + 1, sizeof(*sc->win))) {
			sc->err = -ENOMEM;
			continue;
		}
		sc->win[sc->nr_win] = (struct sc_win){ .lock_ts = ev->ts, .cpu = ev->item, .cg = i,
						       .flush = lf->seq };
		lf->win = sc->nr_win++;
	}
}

/* Update @ev of read cgroup @cg's subtree, made on its last flush's open window's CPU. */
static void sc_win_add(struct sc *sc, unsigned int cg, const struct mcr_event *ev, int cls)
{
	struct sc_win *w = &sc->win[sc->lf[cg].win];

	if (mcr_grow((void **)&w->u, &w->cap_u, w->nu + 1, sizeof(*w->u))) {
		sc->err = -ENOMEM;
		return;
	}
	w->u[w->nu++] = (struct sc_upd){ .tag = replay_tag(ev), .cls = cls, .item = ev->item,
					 .val = ev->val };
}

/* One pass over the events: the truth at each request, the |v| up to each read's end. */
static int sc_events(struct sc *sc)
{
	const struct mcr_event *const *evs;
	size_t i, nm = 0, cr = 0, ce = 0, *by_req, *by_end;
	struct db_iter *it;
	int n, k, ret;

	by_req = malloc((sc->nr_rd + 1) * sizeof(*by_req));
	by_end = malloc((sc->nr_rd + 1) * sizeof(*by_end));
	if (!by_req || !by_end) {
		free(by_req);
		free(by_end);
		return -ENOMEM;
	}
	for (i = 0; i < sc->nr_rd; i++)
		if (sc->rd[i].matched) {
			by_req[nm] = i;
			by_end[nm++] = i;
		}
	sc_sorting = sc;
	qsort(by_req, nm, sizeof(*by_req), sc_by_req);
	qsort(by_end, nm, sizeof(*by_end), sc_by_end);
	ret = db_iter_open(sc->db, &it);
	if (ret < 0) {
		free(by_req);
		free(by_end);
		return ret;
	}
	while ((n = db_iter_next_batch(it, &evs)) > 0) {
		for (k = 0; k < n; k++) {
			const struct mcr_event *ev = evs[k];

			/*
			 * The truth at a request: at its own flush event, or at the
			 * first event past it; the |v| of a read's end: at the first
			 * event past ts_after.
			 */
			size_t cr0 = cr;

			while (cr < nm) {
				struct sc_read *rd = &sc->rd[by_req[cr]];

				if (rd->req_ts > ev->ts || (rd->req_ts == ev->ts &&
				    (ev->kind != MCR_EV_FLUSH || ev->id != rd->cgroup)))
					break;
				sc_snap(sc, rd, false);
				cr++;
			}
			while (ce < nm && sc->rd[by_end[ce]].ts_after < ev->ts)
				sc_snap(sc, &sc->rd[by_end[ce++]], true);
			if (sc->last_flush && (ev->kind == MCR_EV_FLUSH ||
					       ev->kind == MCR_EV_LOCKED ||
					       ev->kind == MCR_EV_UNLOCK))
				sc_last_flush_event(sc, ev);
			/* a read the kernel flushed printed what its own flush left */
			for (i = cr0; sc->last_flush && i < cr; i++) {
				struct sc_read *rd = &sc->rd[by_req[i]];
				int bit = sc_cg_find(sc, rd->cgroup);

				if (rd->kernel_flushed && bit >= 0 && ev->kind == MCR_EV_FLUSH &&
				    ev->id == rd->cgroup && rd->req_ts == ev->ts) {
					rd->flush = sc->lf[bit].seq;
					sc_end_wait(sc, by_req[i], ev->pid);
				}
			}
			if (sc->nr_wait && (ev->kind == MCR_EV_FLUSH || ev->kind == MCR_EV_UNLOCK))
				sc_end_event(sc, ev);
			if (mcr_event_is_update(ev)) {
				int cls = ev->kind == MCR_EV_EVENTS ? 3 : 1;
				uint64_t mask = 0, rec = 0;
				bool masked = false;

				if (ev->item >= 0 && ev->item < SC_ITEMS &&
				    !sc->want[cls == 3][ev->item])
					continue;
				for (i = 0; i < sc->nr_tg; i++) {
					struct sc_target *t = &sc->tg[i];

					if (t->cls != cls || t->item != ev->item)
						continue;
					if (!masked) {
						mask = sc_mask(sc, ev->id);
						masked = true;
					}
					if (!(mask >> t->cg & 1))
						continue;
					uint64_t a = ev->val < 0 ? -(uint64_t)ev->val :
						     (uint64_t)ev->val;

					t->cum += ev->val;
					t->abs += a;
					if (sc->lf[t->cg].tree_cpu != ev->cpu)
						continue;
					t->last_win += a;
					if (sc->lf[t->cg].win != SIZE_MAX && !(rec >> t->cg & 1)) {
						rec |= 1ull << t->cg;
						sc_win_add(sc, t->cg, ev, cls);
					}
				}
			}
		}
	}
	db_iter_close(it);
	free(by_req);
	free(by_end);
	if (n < 0)
		return n;
	for (i = 0; i < sc->nr_rd; i++) {
		if (sc->rd[i].matched && !sc->rd[i].snap_req)
			sc_snap(sc, &sc->rd[i], false);
		if (sc->rd[i].matched && !sc->rd[i].snap_end)
			sc_snap(sc, &sc->rd[i], true);
	}
	return sc->err;
}

static const struct sc_val *sc_val_of(const struct sc_read *rd, size_t target)
{
	size_t j;

	for (j = 0; j < rd->nr_v; j++)
		if (rd->v[j].target == target)
			return &rd->v[j];
	return NULL;
}

static int64_t div_round(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

static int sc_row_add(struct sc *sc, size_t *cap, const struct sc_read *rd, size_t line,
		      int64_t printed, int64_t shown, int64_t truth, int64_t diff, int verdict,
		      enum replay_statcheck_cause cause)
{
	struct replay_statcheck *o = sc->out;

	if (mcr_grow((void **)&o->rows, cap, o->nr_rows + 1, sizeof(*o->rows)))
		return -ENOMEM;
	o->rows[o->nr_rows++] = (struct replay_statcheck_row){
		.read = rd->read, .cgroup = rd->cgroup, .req_ts = rd->req_ts, .line = line,
		.printed = printed, .shown = shown, .truth = truth, .diff = diff,
		.verdict = verdict, .cause = cause, .placed = rd->placed,
	};
	return 0;
}

/*
 * A read the kernel did not flush printed what an earlier flush left; where
 * that flush was a logged read's whose decision the run made otherwise, the
 * run's value differs from what it printed by that flush's updates, though
 * this read's own decision agrees: it inherits the difference.  Reads come
 * in the order they began, so the deciding read is seen first.
 */
static int sc_deciding(struct sc *sc)
{
	struct idmap by_flush = { 0 };	/* flush seq -> its read's decision_differs */
	size_t i;
	int ret = 0;

	for (i = 0; i < sc->nr_rd && !ret; i++) {
		struct sc_read *rd = &sc->rd[i];

		rd->deciding_differs = rd->decision_differs;
		if (!rd->matched || !rd->flush)
			continue;
		if (rd->kernel_flushed)
			ret = idmap_put(&by_flush, rd->flush, rd->decision_differs);
		else if (idmap_get(&by_flush, rd->flush, 0))
			rd->deciding_differs = true;
	}
	idmap_free(&by_flush);
	return ret;
}

/* Each matched read against its cgroup's anchor. */
static int sc_compare(struct sc *sc)
{
	struct replay_statcheck *o = sc->out;
	const struct sc_read *anchor[SC_MAX_CGROUPS] = { NULL };
	size_t i, j, cap = 0, cap_rows = 0;

	for (i = 0; i < sc->nr_rd; i++) {
		struct sc_read *rd = &sc->rd[i];
		int bit;

		if (!rd->matched || (bit = sc_cg_bit(sc, rd->cgroup)) < 0)
			continue;
		/* its printed value, left by a flush the run decided otherwise, is no anchor */
		if (!anchor[bit] && ((o->anchor_forced && rd->req_ts <= o->forced_ts) ||
				     (o->anchor_forced && rd->deciding_differs))) {
			o->before_anchor++;
			continue;
		}
		if (!anchor[bit]) {
			anchor[bit] = rd;
			sc->anchor[bit] = i;
			o->anchors++;
			/* its truth: what it printed less the simulated error */
			for (j = 0; j < rd->nr_v; j++) {
				const struct sc_val *v = &rd->v[j];
				const struct sc_target *t = &sc->tg[v->target];

				if (sc_row_add(sc, &cap_rows, rd, t->line, v->printed, v->printed,
					       v->printed - v->err * t->per, 0, DB_STAT_ANCHOR,
					       REPLAY_SC_NONE))
					return -ENOMEM;
			}
			continue;
		}
		for (j = 0; j < rd->nr_v; j++) {
			struct sc_val *v = &rd->v[j];
			const struct sc_val *a = sc_val_of(anchor[bit], v->target);
			const struct sc_target *t = &sc->tg[v->target];
			struct replay_statcheck_line *ln = &o->lines[t->line];
			enum replay_statcheck_cause cause;
			int64_t dp, de, diff, truth;
			uint64_t win, ad;

			if (!a)
				continue;
			dp = v->printed - a->printed;
			de = v->truth - a->truth + v->err - a->err;
			diff = div_round(dp - de * t->per, t->per);
			ad = diff < 0 ? -(uint64_t)diff : (uint64_t)diff;
			v->diff = diff;
			v->cmp = true;
			o->placed_pairs += rd->placed;
			/* the anchor's truth plus the traced updates between the requests */
			truth = a->printed - a->err * t->per + (v->truth - a->truth) * t->per;
			o->pairs++;
			if (ad <= 2) {
				if (sc_row_add(sc, &cap_rows, rd, t->line, v->printed,
					       truth + v->err * t->per, truth, diff,
					       diff ? DB_STAT_WITHIN2 : DB_STAT_EXACT, REPLAY_SC_NONE))
					return -ENOMEM;
			}
			if (!diff) {
				o->exact++;
				ln->exact++;
				continue;
			}
			if (ad <= 2) {
				o->within2++;
				ln->within2++;
				continue;
			}
			o->off++;
			ln->off++;
			win = (v->abs_end - v->abs_req) + (a->abs_end - a->abs_req);
			/* a read not flushed printed what its last flush left */
			if (!rd->kernel_flushed)
				win += v->last_win;
			if (!anchor[bit]->kernel_flushed)
				win += a->last_win;
			if (rd->deciding_differs || anchor[bit]->deciding_differs)
				cause = REPLAY_SC_DECISION;
			else if (ad <= win)
				cause = REPLAY_SC_WINDOW;
			else
				cause = REPLAY_SC_NONE;
			o->off_decision += cause == REPLAY_SC_DECISION;
			o->off_in_window += cause == REPLAY_SC_WINDOW;
			if (sc_row_add(sc, &cap_rows, rd, t->line, v->printed,
				       truth + v->err * t->per, truth, diff, DB_STAT_OFF, cause))
				return -ENOMEM;
			if (mcr_grow((void **)&o->mism, &cap, o->nr_mism + 1, sizeof(*o->mism)))
				return -ENOMEM;
			o->mism[o->nr_mism++] = (struct replay_statcheck_mismatch){
				.read = rd->read, .cgroup = rd->cgroup, .ts = rd->req_ts,
				.line = t->line, .printed_delta = dp, .expected_delta = de,
				.diff = diff, .window = win, .cause = cause, .placed = rd->placed,
			};
		}
	}
	return 0;
}

/*
 * The visit placement by printed values.  A read cgroup P's stale reads that
 * printed what one flush F left (until P is flushed again) show where, inside
 * each lock window of F, the flusher visited P's subtree: the subtree's
 * updates made on the window's CPU before the visit are in what P printed,
 * those after are not.  One cut of each window must explain every such read
 * and every line at once (largest |printed - shown| at most 2 units), else
 * none is taken and the pairs keep their cause; the first pass's placement of
 * each update (replay_params.placed) gives what a cut changes.  F's own read
 * is compared, not fitted: its truth is taken at its flush's last unlock,
 * where an update traced late may still belong to the window.  With several
 * windows and few lines the cut is not
 * unique: the cuts that move the fewest updates from the inferred order win.
 * The anchor's flush is placed only as every later read's (sc_fit_anchored()):
 * the reads that printed it are compared with it, whatever its cut.
 */
#define SC_FIT_WINDOWS	64	/* windows of one flush: one per CPU */
#define SC_FIT_ROUNDS	16	/* passes over a flush's windows, each cut in turn */

/*
 * Pins, each beside the flush its group printed (the pass reads the pins as
 * one array).
 */
struct sc_pins {
	struct replay_pin	*v;
	uint64_t		*flush;		/* [i]: the flush v[i]'s group printed */
	size_t			nr, cap, cap_flush;
};

#define SC_RULED_OUT	UINT64_MAX	/* sc_pins_drop(): the pins ruled out, of any cgroup */

/* Room for @n more pins in @p. */
static int sc_pins_room(struct sc_pins *p, size_t n)
{
	if (mcr_grow((void **)&p->v, &p->cap, p->nr + n, sizeof(*p->v)) ||
	    mcr_grow((void **)&p->flush, &p->cap_flush, p->nr + n, sizeof(*p->flush)))
		return -ENOMEM;
	return 0;
}

/* @pin, for @flush, at the end of @p (which has room). */
static void sc_pins_put(struct sc_pins *p, const struct replay_pin *pin, uint64_t flush)
{
	p->flush[p->nr] = flush;
	p->v[p->nr++] = *pin;
}

/* @from's pins [@i, @j) move to the end of @to, the rest of @from closing up. */
static int sc_pins_move(struct sc_pins *to, struct sc_pins *from, size_t i, size_t j)
{
	size_t k;

	if (sc_pins_room(to, j - i))
		return -ENOMEM;
	for (k = i; k < j; k++)
		sc_pins_put(to, &from->v[k], from->flush[k]);
	memmove(from->v + i, from->v + j, (from->nr - j) * sizeof(*from->v));
	memmove(from->flush + i, from->flush + j, (from->nr - j) * sizeof(*from->flush));
	from->nr -= j - i;
	return 0;
}

/*
 * The pins of read cgroup @cgroup go (SC_RULED_OUT: those ruled out, lock_ts
 * 0, of any cgroup), the others closing up in order.  Return: how many of
 * those that went were ruled out.
 */
static size_t sc_pins_drop(struct sc_pins *p, uint64_t cgroup)
{
	size_t i, n = 0, out = 0;

	for (i = 0; i < p->nr; i++) {
		if (cgroup == SC_RULED_OUT ? !p->v[i].lock_ts : p->v[i].cgroup == cgroup) {
			out += !p->v[i].lock_ts;
			continue;
		}
		p->flush[n] = p->flush[i];
		p->v[n++] = p->v[i];
	}
	p->nr = n;
	return out;
}

static void sc_pins_free(struct sc_pins *p)
{
	free(p->v);
	free(p->flush);
}

struct sc_fit {
	struct sc_pins		pins;
	uint64_t		groups, unplaced, rejected;
	/*
	 * Per read (sc.rd order, the same in every pass): the first pass's run
	 * decided its flush unlike the kernel (dd1); a pass with pins did (bad).
	 */
	bool			*dd1;
	bool			*bad;
	size_t			nr_rd;
	/*
	 * The read cgroups whose pins hold the anchor's (sc_fit_anchored()),
	 * and the pins they had without it, taken instead if one of theirs is
	 * ruled out (sc_fit_fall_back()).
	 */
	uint64_t		alt_cg[SC_MAX_CGROUPS];
	unsigned int		nr_alt_cg;
	struct sc_pins		alt;
};

/* One window of a group: per cut x (0..nu) and target j, what it takes more than the pass. */
struct sc_fit_win {
	const struct sc_win	*w;
	int64_t			*delta;		/* [(nu + 1) * nt] */
	uint64_t		*moved;		/* [nu + 1]: updates placed otherwise than the pass */
};

/*
 * What cuts @x leave: over targets, the largest |printed - shown| of the
 * group's reads and the sum of each target's two extremes, and how many
 * updates they place otherwise than the pass.  Taking more makes the run
 * show more: printed - shown falls by as much.
 */
static void sc_fit_score(const struct sc_fit_win *fw, size_t m, const size_t *x, size_t nt,
			 const int64_t *mind, const int64_t *maxd, uint64_t *mx, uint64_t *sum,
			 uint64_t *moved)
{
	size_t j, c;

	*mx = *sum = *moved = 0;
	for (j = 0; j < nt; j++) {
		int64_t dl = 0;
		uint64_t a, b;

		for (c = 0; c < m; c++)
			dl += fw[c].delta[x[c] * nt + j];
		a = (uint64_t)(maxd[j] - dl < 0 ? dl - maxd[j] : maxd[j] - dl);
		b = (uint64_t)(mind[j] - dl < 0 ? dl - mind[j] : mind[j] - dl);
		*mx = a > *mx ? a : *mx;
		*mx = b > *mx ? b : *mx;
		*sum += a + b;
	}
	for (c = 0; c < m; c++)
		*moved += fw[c].moved[x[c]];
}

/*
 * The anchor's flush's windows in a group's fit.  The anchor's truth is its
 * printed value less its simulated error, so where that flush's visit was
 * shifts every later read of the cgroup alike: a cut that takes one more
 * update there makes each later read show less by as much.  Free: fitted
 * with the group's own cuts (nothing pinned); held: at @cut.
 */
struct sc_fit_anchor {
	size_t		win[SC_FIT_WINDOWS];	/* into sc->win */
	size_t		cut[SC_FIT_WINDOWS];
	size_t		m;
	bool		held;
};

/*
 * What each cut of window @w takes more than the pass, per target (@sign: 1 a
 * window of the reads' flush, -1 of the anchor's), and how many updates it
 * places otherwise.  -ENOENT: the pass had no window there.
 */
static int sc_fit_win_fill(struct sc *sc, struct sc_fit_win *fw, const struct sc_win *w,
			   const size_t *tj, size_t nt, int sign)
{
	size_t i, j, k;

	*fw = (struct sc_fit_win){ .w = w };
	fw->delta = calloc((w->nu + 1) * nt + 1, sizeof(*fw->delta));
	fw->moved = calloc(w->nu + 1, sizeof(*fw->moved));
	if (!fw->delta || !fw->moved)
		return -ENOMEM;
	/*
	 * Cut 0 takes none: less what the pass took.  Cut k + 1 takes update k
	 * too, unless its cgroup is not on the list.
	 */
	for (i = 0; i < w->nu; i++) {
		int64_t how = idmap_get(sc->placed, w->u[i].tag, -1);

		if (how < 0)
			return -ENOENT;
		for (j = 0; how == REPLAY_PLACED_TAKEN && j < nt; j++)
			if (sc->tg[tj[j]].cls == w->u[i].cls && sc->tg[tj[j]].item == w->u[i].item)
				fw->delta[j] -= sign * w->u[i].val;
		fw->moved[0] += how == REPLAY_PLACED_TAKEN;
	}
	for (k = 1; k <= w->nu; k++) {
		int64_t how = idmap_get(sc->placed, w->u[k - 1].tag, -1);
		bool listed = how != REPLAY_PLACED_UNLISTED;

		fw->moved[k] = fw->moved[k - 1];
		if (listed && how == REPLAY_PLACED_TAKEN)
			fw->moved[k]--;	/* taken as the pass took it */
		else if (listed)
			fw->moved[k]++;
		for (j = 0; j < nt; j++)
			fw->delta[k * nt + j] = fw->delta[(k - 1) * nt + j] +
				(listed && sc->tg[tj[j]].cls == w->u[k - 1].cls &&
				 sc->tg[tj[j]].item == w->u[k - 1].item ? sign * w->u[k - 1].val : 0);
	}
	return 0;
}

static void sc_fit_free(struct sc_fit_win *fw, size_t m)
{
	size_t c;

	for (c = 0; c < m; c++) {
		free(fw[c].delta);
		free(fw[c].moved);
	}
}

/* Pin window @w of read cgroup @cg's flush @flush at cut @x (@f has room). */
static void sc_fit_pin(struct sc *sc, struct sc_fit *f, unsigned int cg, uint64_t flush,
		       const struct sc_win *w, size_t x)
{
	struct replay_pin pin = {
		.lock_ts = w->lock_ts, .cpu = w->cpu, .cgroup = sc->cgs[cg],
		.cut = x < w->nu, .cut_tag = x < w->nu ? w->u[x].tag : 0,
	};

	sc_pins_put(&f->pins, &pin, flush);
}

/*
 * What a fit leaves: over targets and reads, the largest |printed - shown|
 * and the sum of each target's two extremes, and the updates its cuts place
 * otherwise than the pass.  Fits compare by these, in this order.
 */
struct sc_fit_res {
	uint64_t	max, sum, moved;
};

static void sc_fit_res_add(struct sc_fit_res *to, uint64_t max, uint64_t sum, uint64_t moved)
{
	to->max = max > to->max ? max : to->max;
	to->sum += sum;
	to->moved += moved;
}

static bool sc_fit_res_less(const struct sc_fit_res *a, const struct sc_fit_res *b)
{
	return a->max != b->max ? a->max < b->max : a->sum != b->sum ? a->sum < b->sum :
	       a->moved < b->moved;
}

/*
 * The reads @reads[0..@nr-1] of read cgroup @cg, all printing what flush
 * @flush left: 1 if one cut of each of its windows explains them (pins
 * added to @f), 0 if nothing needs one, -ENOENT if none does.  With @an,
 * the anchor's windows too: where it holds them, or, free, fitted with the
 * group's windows (1: their cuts in @an, no pin added).  @res takes what
 * the fit leaves (free: what the anchor's cuts move), or, unfitted, what
 * the pass's own placement leaves.
 */
static int sc_fit_group(struct sc *sc, unsigned int cg, uint64_t flush, const size_t *reads,
			size_t nr, struct sc_fit *f, struct sc_fit_anchor *an, struct sc_fit_res *res)
{
	size_t tj[64], nt = 0, i, j, k, m = 0, c, round, am = an ? an->m : 0;
	size_t first = an && an->held ? am : 0;	/* the first window whose cut is fitted */
	int64_t mind[64], maxd[64];
	struct sc_fit_win fw[SC_FIT_WINDOWS];
	size_t x[SC_FIT_WINDOWS], best[SC_FIT_WINDOWS];
	uint64_t best_max = UINT64_MAX, best_sum = UINT64_MAX, best_moved = UINT64_MAX, mv;
	uint64_t max0 = 0, sum0 = 0, hi, lo;	/* what the pass's own placement leaves */
	bool changed;
	int ret;

	for (i = 0; i < sc->nr_tg && nt < 64; i++)
		if (sc->tg[i].cg == cg)
			tj[nt++] = i;
	for (c = 0; c < am; c++) {
		ret = sc_fit_win_fill(sc, &fw[m++], &sc->win[an->win[c]], tj, nt, -1);
		x[c] = an->cut[c];
		if (ret)
			goto out;
	}
	for (j = 0; j < nt; j++) {
		int64_t held = 0;	/* what the held anchor's cuts change */

		for (c = 0; an && an->held && c < am; c++)
			held += fw[c].delta[x[c] * nt + j];
		mind[j] = INT64_MAX;
		maxd[j] = INT64_MIN;
		for (k = 0; k < nr; k++) {
			const struct sc_val *v = sc_val_of(&sc->rd[reads[k]], tj[j]);

			if (!v || !v->cmp)
				continue;
			mind[j] = v->diff < mind[j] ? v->diff : mind[j];
			maxd[j] = v->diff > maxd[j] ? v->diff : maxd[j];
		}
		if (mind[j] > maxd[j]) {
			mind[j] = maxd[j] = held;	/* no read of it: no constraint */
			continue;
		}
		hi = (uint64_t)(maxd[j] > held ? maxd[j] - held : held - maxd[j]);
		lo = (uint64_t)(mind[j] > held ? mind[j] - held : held - mind[j]);
		max0 = hi > max0 ? hi : max0;
		max0 = lo > max0 ? lo : max0;
		sum0 += hi + lo;
	}
	ret = 0;
	if (max0 <= 2)
		goto out;	/* nothing off */
	ret = -ENOENT;
	for (i = 0; i < sc->nr_win; i++) {
		const struct sc_win *w = &sc->win[i];

		if (w->cg != cg || w->flush != flush || !w->nu)
			continue;
		if (m == SC_FIT_WINDOWS)
			goto out;
		ret = sc_fit_win_fill(sc, &fw[m++], w, tj, nt, 1);
		if (ret)
			goto out;
		ret = -ENOENT;
	}
	if (m == first)
		goto out;	/* no cut to fit */
	/*
	 * The cuts that leave the least (largest residual, then their sum), then
	 * move the fewest updates: from the pass's own placement (each window's
	 * cut that moves the fewest), one window at a time, the others held,
	 * until no window's cut changes.
	 */
	for (c = first; c < m; c++) {
		x[c] = 0;
		for (k = 1; k <= fw[c].w->nu; k++)
			if (fw[c].moved[k] < fw[c].moved[x[c]])
				x[c] = k;
	}
	sc_fit_score(fw, m, x, nt, mind, maxd, &best_max, &best_sum, &best_moved);
	memcpy(best, x, sizeof(x));
	for (round = 0, changed = true; changed && round < SC_FIT_ROUNDS; round++) {
		changed = false;
		for (c = first; c < m; c++) {
			memcpy(x, best, sizeof(x));
			for (k = 0; k <= fw[c].w->nu; k++) {
				uint64_t mx, sum, moved;

				x[c] = k;
				sc_fit_score(fw, m, x, nt, mind, maxd, &mx, &sum, &moved);
				if (mx < best_max || (mx == best_max && (sum < best_sum ||
				    (sum == best_sum && moved < best_moved)))) {
					best_max = mx;
					best_sum = sum;
					best_moved = moved;
					best[c] = k;
					changed = true;
				}
			}
		}
	}
	/* updates the fitted windows place otherwise than the pass */
	for (c = first, mv = 0; c < m; c++)
		mv += fw[c].moved[best[c]];
	if (best_max > 2 || !mv)
		goto out;
	if (an && !an->held) {
		memcpy(an->cut, best, am * sizeof(*best));
		for (c = 0; c < am; c++)	/* the anchor's own, for its pins */
			res->moved += fw[c].moved[best[c]];
		ret = 1;
		goto out;
	}
	ret = sc_pins_room(&f->pins, m - am);
	for (c = am; !ret && c < m; c++)
		sc_fit_pin(sc, f, cg, flush, fw[c].w, best[c]);
	if (!ret) {
		sc_fit_res_add(res, best_max, best_sum, mv);
		ret = 1;
	}
out:
	if (ret == 0 || ret == -ENOENT)
		sc_fit_res_add(res, max0, sum0, 0);
	sc_fit_free(fw, m);
	return ret;
}

/* The groups of one read cgroup: reads by the flush they printed. */
struct sc_groups {
	size_t		*rd;		/* read indices, group after group */
	size_t		*start;		/* [g]: the first of group g in rd; [nr]: the end */
	uint64_t	*flush;
	size_t		nr;
};

/* What fitting one read cgroup's groups gave. */
struct sc_fit_sum {
	uint64_t		placed, unplaced;
	struct sc_fit_res	res;	/* over every group */
	size_t			first;	/* the first group off: unexplained, else placed */
};

/* Fit every group of @gs, with @an if given. */
static int sc_fit_groups(struct sc *sc, unsigned int cg, const struct sc_groups *gs,
			 struct sc_fit *f, struct sc_fit_anchor *an, struct sc_fit_sum *sum)
{
	size_t g, first_placed = gs->nr;
	int ret;

	*sum = (struct sc_fit_sum){ .first = gs->nr };
	for (g = 0; g < gs->nr; g++) {
		ret = sc_fit_group(sc, cg, gs->flush[g], gs->rd + gs->start[g],
				   gs->start[g + 1] - gs->start[g], f, an, &sum->res);
		if (ret < 0 && ret != -ENOENT)
			return ret;
		sum->placed += ret == 1;
		sum->unplaced += ret == -ENOENT;
		if (ret == -ENOENT && sum->first == gs->nr)
			sum->first = g;
		if (ret == 1 && first_placed == gs->nr)
			first_placed = g;
	}
	if (sum->first == gs->nr)
		sum->first = first_placed;
	return 0;
}

/*
 * Reads of several flushes off alike may all be the anchor's: where its
 * flush's visit was, placed otherwise by the pass, is in every later read's
 * truth.  The anchor's cuts that explain the first group off (unexplained,
 * else placed) together with that group's own are held, and every group is
 * fitted again.  They stand, pinned too, if fewer groups are then left
 * unexplained, or as many and the fits leave less (sc_fit_res_less(), the
 * rule between the cuts of one group).  @sum: the fit without them,
 * replaced where they stand (1; their pins and the groups' added to @f,
 * else @f as it was).
 */
static int sc_fit_anchored(struct sc *sc, unsigned int cg, const struct sc_groups *gs,
			   struct sc_fit *f, struct sc_fit_sum *sum)
{
	uint64_t af = sc->rd[sc->anchor[cg]].flush;
	struct sc_fit_anchor an = { .m = 0 };
	struct sc_fit_res own = { 0 };	/* the anchor's cuts' */
	size_t nr0 = f->pins.nr, i, c, g = sum->first;
	struct sc_fit_sum with;
	int ret;

	for (i = 0; i < sc->nr_win && an.m < SC_FIT_WINDOWS / 2; i++)
		if (sc->win[i].cg == cg && sc->win[i].flush == af && sc->win[i].nu)
			an.win[an.m++] = i;
	if (!an.m || g == gs->nr)
		return 0;
	ret = sc_fit_group(sc, cg, gs->flush[g], gs->rd + gs->start[g],
			   gs->start[g + 1] - gs->start[g], f, &an, &own);
	if (ret != 1)
		return ret == -ENOENT ? 0 : ret;
	an.held = true;
	ret = sc_pins_room(&f->pins, an.m);
	for (c = 0; !ret && c < an.m; c++)
		sc_fit_pin(sc, f, cg, af, &sc->win[an.win[c]], an.cut[c]);
	if (!ret)
		ret = sc_fit_groups(sc, cg, gs, f, &an, &with);
	if (ret) {
		f->pins.nr = nr0;
		return ret;
	}
	with.res.moved += own.moved;
	with.placed++;	/* the anchor's flush is placed too */
	if (with.unplaced < sum->unplaced ||
	    (with.unplaced == sum->unplaced && sc_fit_res_less(&with.res, &sum->res))) {
		*sum = with;
		return 1;
	}
	f->pins.nr = nr0;
	return 0;
}

/*
 * After the first pass's comparison: the groups of reads by the flush they
 * printed (the anchor's own left out: its reads are compared with it), each
 * fitted.  A read the run decided unlike the kernel printed another flush's
 * result than the run's, and so did a read that printed the flush of such a
 * read (sc_deciding()): the run made no such flush, no cut of its windows
 * explains them, and their pairs' cause is the decision.  Not in any group.
 */
static int sc_fit(struct sc *sc, struct sc_fit *f)
{
	struct sc_groups gs = {
		.rd = malloc((sc->nr_rd + 1) * sizeof(*gs.rd)),
		.start = malloc((sc->nr_rd + 2) * sizeof(*gs.start)),
		.flush = malloc((sc->nr_rd + 1) * sizeof(*gs.flush)),
	};
	unsigned int cg;
	int ret = 0;

	if (!gs.rd || !gs.start || !gs.flush)
		ret = -ENOMEM;
	for (cg = 0; cg < sc->nr_cgs && !ret; cg++) {
		struct sc_fit_sum sum;
		size_t i, n = 0, nr0 = f->pins.nr;
		bool open = false;	/* this cgroup's read before is in a group */
		uint64_t af;

		if (sc->anchor[cg] == SIZE_MAX)
			continue;
		af = sc->rd[sc->anchor[cg]].flush;
		gs.nr = 0;
		for (i = 0; i < sc->nr_rd; i++) {
			const struct sc_read *rd = &sc->rd[i];
			bool in = rd->matched && rd->snap_req && i > sc->anchor[cg] &&
				  !rd->deciding_differs && rd->flush && rd->flush != af &&
				  !rd->kernel_flushed;

			if (rd->cgroup != sc->cgs[cg])
				continue;
			if (in && (!open || rd->flush != gs.flush[gs.nr - 1])) {
				gs.start[gs.nr] = n;
				gs.flush[gs.nr++] = rd->flush;
			}
			if (in)
				gs.rd[n++] = i;
			open = in;
		}
		gs.start[gs.nr] = n;
		ret = sc_fit_groups(sc, cg, &gs, f, NULL, &sum);
		if (!ret && (sum.placed || sum.unplaced)) {
			size_t nr1 = f->pins.nr;

			/* with the anchor's cuts: their pins and the groups' replace those without */
			ret = sc_fit_anchored(sc, cg, &gs, f, &sum);
			if (ret == 1) {
				ret = sc_pins_move(&f->alt, &f->pins, nr0, nr1);
				if (!ret)
					f->alt_cg[f->nr_alt_cg++] = sc->cgs[cg];
			}
		}
		f->groups += sum.placed;
		f->unplaced += sum.unplaced;
	}
	free(gs.rd);
	free(gs.start);
	free(gs.flush);
	return ret;
}

/*
 * The run's flush decisions per read: the first pass's, or which reads a
 * pass with pins decided unlike the kernel where the first pass did not (a
 * cut that moves the updates' stats_updates past the kernel's own).
 */
static int sc_fit_decisions(struct sc *sc, struct sc_fit *f, bool first)
{
	bool **to = first ? &f->dd1 : &f->bad;
	size_t i;

	free(*to);
	*to = calloc(sc->nr_rd + 1, sizeof(**to));
	if (!*to)
		return -ENOMEM;
	if (first)
		f->nr_rd = sc->nr_rd;
	for (i = 0; i < sc->nr_rd && i < f->nr_rd; i++) {
		const struct sc_read *rd = &sc->rd[i];

		(*to)[i] = first ? rd->decision_differs :
			   rd->matched && rd->decision_differs && !f->dd1[i];
		/* the pins of the last flush before it that has some go */
		if (!first && (*to)[i]) {
			uint64_t last = 0;
			size_t p;

			for (p = 0; p < f->pins.nr; p++)
				if (f->pins.v[p].cgroup == rd->cgroup && f->pins.flush[p] <= rd->flush &&
				    f->pins.flush[p] > last)
					last = f->pins.flush[p];
			for (p = 0; p < f->pins.nr; p++)
				if (f->pins.v[p].cgroup == rd->cgroup && f->pins.flush[p] == last)
					f->pins.v[p].lock_ts = 0;	/* rejected */
		}
	}
	return 0;
}

/*
 * A read cgroup whose pins hold the anchor's and lost one (lock_ts 0) takes
 * the pins it had without the anchor's instead, once: the anchor's cut moved
 * every later read, so its groups' cuts stand or fall with it.  The pins
 * ruled out are counted.  Return: how many read cgroups fell back, -ENOMEM.
 */
static int sc_fit_fall_back(struct sc_fit *f)
{
	unsigned int a;
	size_t i;
	int fell = 0;

	for (a = 0; a < f->nr_alt_cg; a++) {
		uint64_t cg = f->alt_cg[a];
		bool lost = false;

		for (i = 0; i < f->pins.nr; i++)
			lost |= f->pins.v[i].cgroup == cg && !f->pins.v[i].lock_ts;
		if (!lost)
			continue;
		f->rejected += sc_pins_drop(&f->pins, cg);
		for (i = 0; i < f->alt.nr; i++) {
			if (f->alt.v[i].cgroup != cg)
				continue;
			if (sc_pins_room(&f->pins, 1))
				return -ENOMEM;
			sc_pins_put(&f->pins, &f->alt.v[i], f->alt.flush[i]);
		}
		f->alt_cg[a--] = f->alt_cg[--f->nr_alt_cg];
		fell++;
	}
	return fell;
}

/* Second pass: the reads that printed what a pinned window's flush left. */
static void sc_mark_placed(struct sc *sc)
{
	size_t i, k, p;

	for (i = 0; i < sc->nr_win; i++) {
		const struct sc_win *w = &sc->win[i];

		for (p = 0; p < sc->nr_pins; p++)
			if (sc->pins[p].lock_ts == w->lock_ts && sc->pins[p].cpu == w->cpu &&
			    sc->pins[p].cgroup == sc->cgs[w->cg])
				break;
		if (p == sc->nr_pins)
			continue;
		for (k = 0; k < sc->nr_rd; k++)
			if (sc->rd[k].cgroup == sc->cgs[w->cg] && sc->rd[k].flush == w->flush &&
			    sc->rd[k].matched && !sc->rd[k].deciding_differs &&
			    !sc->rd[k].kernel_flushed)
				sc->rd[k].placed = true;
	}
}

void replay_statcheck_free(struct replay_statcheck *o)
{
	free(o->lines);
	free(o->mism);
	free(o->rows);
	memset(o, 0, sizeof(*o));
}

/*
 * The comparison of run @run_id; with @placed (the run's placement of the
 * updates inside windows), also the pins the printed values settle, into
 * @f; with @pins (the run's), the reads they placed marked.
 */
static int sc_check(struct db *db, const struct replay_trace *t, int64_t run_id,
		    struct replay_statcheck *out, const struct idmap *placed,
		    const struct replay_pin *pins, size_t nr_pins, struct sc_fit *f)
{
	struct sc sc = { .db = db, .out = out, .t = t, .placed = placed, .pins = pins,
			 .nr_pins = nr_pins };
	int64_t v;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!db_has_stat_reads(db))
		return -ENOENT;
	ret = db_meta_get_int(db, "cgroup_version", &v);
	out->version = ret < 0 ? 1 : (int)v;
	ret = db_meta_get_int(db, "page_size", &out->page_size);
	if (ret < 0 || out->page_size <= 0)
		out->page_size = 4096;
	ret = db_stat_reads_foreach(db, sc_row, &sc);
	if (!ret && !out->reads)
		ret = -ENOENT;
	out->synthetic = replay_trace_is_synth(t);
	if (!ret && !out->synthetic) {
		ret = db_first_forced_read(db, run_id, &out->forced_ts);
		out->anchor_forced = !ret;
		if (ret == -ENOENT)
			ret = 0;
	}
	for (i = 0; !ret && i < t->nr_cgroups; i++)
		if (idmap_put(&sc.parent, t->cgroups[i].id, (int64_t)(t->cgroups[i].parent &
								       INT64_MAX)) < 0)
			ret = -ENOMEM;
	for (i = 0; !ret && i < sc.nr_rd; i++) {
		struct sc_read *rd = &sc.rd[i];
		void *a[2] = { &sc, rd };
		struct db_read_match m;

		ret = db_read_in_window(db, run_id, rd->cgroup, rd->ts_before, rd->ts_after, &m);
		rd->read_id = m.read_id;
		rd->req_ts = m.ts;
		rd->decision_differs = m.flushed != m.kernel_needs_flush;
		rd->kernel_flushed = m.kernel_needs_flush;
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (!ret)
			ret = db_read_errors_foreach(db, rd->read_id, sc_err_row, a);
		rd->matched = !ret;
		out->reads_matched += rd->matched;
	}
	/* a synthetic trace's visits are where its flush model puts them: no unknown order */
	sc.last_flush = !out->synthetic;
	sc.windows = sc.last_flush && (placed || nr_pins);
	for (i = 0; i < SC_MAX_CGROUPS; i++) {
		sc.lf[i].tree_cpu = -1;
		sc.lf[i].win = SIZE_MAX;
		sc.anchor[i] = SIZE_MAX;
	}
	if (!ret)
		ret = sc_events(&sc);
	if (!ret)
		ret = sc_deciding(&sc);
	if (!ret && nr_pins)
		sc_mark_placed(&sc);
	if (!ret)
		ret = sc_compare(&sc);
	if (!ret && placed && sc.windows)
		ret = sc_fit(&sc, f);
	if (!ret && f && sc.windows)
		ret = sc_fit_decisions(&sc, f, !nr_pins);
	free(sc.wait);
	for (i = 0; i < sc.nr_win; i++)
		free(sc.win[i].u);
	free(sc.win);
	for (i = 0; i < sc.nr_rd; i++)
		free(sc.rd[i].v);
	free(sc.rd);
	free(sc.tg);
	idmap_free(&sc.parent);
	idmap_free(&sc.mask);
	if (ret < 0)
		replay_statcheck_free(out);
	return ret;
}

int replay_statcheck(struct db *db, const struct replay_trace *t, int64_t run_id,
		     struct replay_statcheck *out)
{
	return sc_check(db, t, run_id, out, NULL, NULL, 0, NULL);
}

int replay_statcheck_store(struct db *db, int64_t run_id, const struct replay_statcheck *sc)
{
	static const enum db_stat_cause causes[] = {
		[REPLAY_SC_NONE] = DB_STAT_CAUSE_NONE,
		[REPLAY_SC_DECISION] = DB_STAT_CAUSE_DECISION,
		[REPLAY_SC_WINDOW] = DB_STAT_CAUSE_WINDOW,
	};
	struct db_stat_check *rows = calloc(sc->nr_rows + 1, sizeof(*rows));
	size_t i;
	int err;

	if (!rows)
		return -ENOMEM;
	for (i = 0; i < sc->nr_rows; i++) {
		const struct replay_statcheck_row *r = &sc->rows[i];
		const struct replay_statcheck_line *l = &sc->lines[r->line];

		rows[i] = (struct db_stat_check){
			.read = r->read, .cgroup_id = r->cgroup, .name = l->name,
			.unit = l->per > 1 ? "bytes" : "count", .per = l->per,
			.request_ts = r->req_ts, .printed = r->printed, .shown = r->shown,
			.truth = r->truth, .diff = r->diff,
			.verdict = (enum db_stat_verdict)r->verdict, .cause = causes[r->cause],
			.placed = r->placed,
		};
	}
	err = db_stat_checks_put(db, run_id, sc->model ? sc->model : "", rows, sc->nr_rows);
	free(rows);
	return err;
}

static int sc_placed_add(void *ctx, uint64_t tag, int how)
{
	return idmap_put(ctx, tag, how) < 0 ? -ENOMEM : 0;
}

/*
 * A pass of @p's runs[0] with model @m (and @order, @pins if given), its
 * reads compared, and nothing kept; with @placed, the run's placement of
 * the updates inside windows recorded there and the pins fitted into @f.
 * *@rp: the pass's replay (its order), for the caller to destroy.
 */
static int sc_pass(struct db *db, const struct replay_trace *t, const char *file,
		   const struct replay_params *base, const struct replay_model *m,
		   const struct replay_order *order, const struct sc_fit *pins,
		   struct idmap *placed, struct sc_fit *f, struct replay_statcheck *out,
		   struct replay **rp)
{
	struct replay_params p = {
		.runs = { base->runs[0] }, .nr_runs = 1, .model = m,
		.max_hypotheses = base->max_hypotheses, .threads = 1, .order = order,
		.pins = pins ? pins->pins.v : NULL, .nr_pins = pins ? pins->pins.nr : 0,
		.placed = placed ? sc_placed_add : NULL, .placed_ctx = placed,
	};
	struct replay_source src = { 0 };
	struct replay_store *st = NULL;
	struct replay *r = NULL;
	int ret, rret;

	*rp = NULL;
	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = replay_store_open(db, "validate", file, &p, t, &st);
	if (!ret)
		ret = replay_create(&p, t, &r);
	if (!ret)
		ret = replay_source_db_open(db, &src);
	if (!ret)
		ret = replay_prepare(r, &src);
	if (!ret)
		ret = replay_run(r, &src);
	replay_source_db_close(&src);
	if (!ret)
		ret = replay_store_finish(st, r, 0);
	if (!ret)
		ret = sc_check(db, t, replay_store_run_id(st, 0), out, placed, p.pins, p.nr_pins, f);
	replay_store_close(st);
	*rp = r;
	rret = db_rollback(db);
	if (!ret && rret < 0) {
		replay_statcheck_free(out);
		ret = rret;
	}
	return ret;
}

/*
 * The comparison with model @m from passes not stored.  With an inferred
 * order on a recording, the printed values may settle where some windows'
 * visits were (sc_fit()): a second pass, pinned there, is the one compared.
 */
static int sc_scratch_pass(struct db *db, const struct replay_trace *t, const char *file,
			   const struct replay_params *base, const struct replay_model *m,
			   struct replay_statcheck *out)
{
	bool fit = m->prepare && !replay_trace_is_synth(t);
	struct replay *r1 = NULL, *r2 = NULL;
	struct replay_statcheck o2;
	struct idmap placed = { 0 };
	struct sc_fit f = { 0 };
	bool used = false;
	size_t i;
	int ret, round, rounds = 3;

	ret = sc_pass(db, t, file, base, m, m->prepare ? base->order : NULL, NULL,
		      fit ? &placed : NULL, &f, out, &r1);
	/*
	 * A pass pinned there; a pinned flush after which the run decides a
	 * read's flush unlike the kernel, where the first pass did not, loses
	 * its pins (the kernel's needs_flush rules that cut out), or its read
	 * cgroup's pins fall back to those without the anchor's, and a pass
	 * without them follows.  Twice at most (a fall back adds one); else
	 * the first pass stands.
	 */
	for (round = 0; !ret && f.pins.nr && r1->order && round < rounds; round++) {
		bool bad = false;

		ret = sc_pass(db, t, file, base, m, r1->order, &f, NULL, &f, &o2, &r2);
		replay_destroy(r2);
		r2 = NULL;
		if (ret)
			break;
		for (i = 0; i < f.nr_rd; i++)
			bad |= f.bad[i];
		if (!bad) {
			replay_statcheck_free(out);
			*out = o2;
			used = true;
			break;
		}
		replay_statcheck_free(&o2);
		ret = sc_fit_fall_back(&f);
		if (ret > 0) {
			rounds++;
			ret = 0;
		}
		if (!ret)
			f.rejected += sc_pins_drop(&f.pins, SC_RULED_OUT);
		if (ret || round >= rounds - 1)
			f.pins.nr = 0;
	}
	if (!used) {
		f.rejected += f.pins.nr;
		f.pins.nr = 0;
	}
	if (!ret) {
		out->placed_windows = f.pins.nr;
		for (i = 0; i < f.pins.nr; i++)
			out->placed_groups += !i || f.pins.flush[i] != f.pins.flush[i - 1] ||
					      f.pins.v[i].cgroup != f.pins.v[i - 1].cgroup;
		out->unplaced_groups = f.unplaced;
		out->rejected_windows = f.rejected;
	}
	replay_destroy(r1);
	idmap_free(&placed);
	sc_pins_free(&f.pins);
	sc_pins_free(&f.alt);
	free(f.dd1);
	free(f.bad);
	return ret;
}

int replay_statcheck_model(struct db *db, const struct replay_trace *t, const char *file,
			   const struct replay_params *p, int64_t run_id,
			   const struct replay_model *m, struct replay_statcheck *out)
{
	int ret;

	memset(out, 0, sizeof(*out));	/* freed by the caller whatever the answer */
	if (m == p->model)
		ret = replay_statcheck(db, t, run_id, out);
	else if (!db_has_stat_reads(db))
		ret = -ENOENT;	/* no pass for nothing to compare */
	else
		ret = sc_scratch_pass(db, t, file, p, m, out);
	if (!ret)
		out->model = m->name;
	return ret;
}
