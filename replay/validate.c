// SPDX-License-Identifier: GPL-2.0
/*
 * Validation: at every traced memcg_flush_stats after the first completed
 * forced root flush (flush_memcg_stats_dwork() in mm/memcontrol.c: after it
 * every counter is 0 but for in-flight races), the simulated atomic of
 * runs[0] (the trace's own batch and CPUs) against the kernel's
 * stats_updates, and the simulated needs_flush against the kernel's.
 * Mismatches get their context (recent updates in the subtree, from a small
 * ring per cgroup) and a cause where one can be named.
 *
 * "plain" counts are the flush model alone; the other counts are with
 * hypothesis inference of the order inside lock windows (infer.h).  They stay
 * separate here and in every output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "replay-local.h"

#define VAL_CONTEXT_MAX		16	/* updates listed in one mismatch's context */
#define VAL_CONTEXT_BYTES	1024
#define VAL_CREDIT_DEPTH	64	/* deepest path val_credit() bounds */

static const char *const val_cause_names[] = {
	[REPLAY_CAUSE_NONE]		= NULL,
	[REPLAY_CAUSE_LOST]		= "lost events nearby",
	[REPLAY_CAUSE_UNKNOWN_PARENT]	= "cgroup of unknown parent",
	[REPLAY_CAUSE_OUTSIDE]		= "flush outside the trace",
	[REPLAY_CAUSE_WINDOW_ORDER]	= "window order unknown",
	[REPLAY_CAUSE_LATE]		= "late update taken as after its window",
	[REPLAY_CAUSE_CAPPED]		= "orders dropped by the cap",
	[REPLAY_CAUSE_UNTRACED]		= "more than the traced updates can add",
};
_Static_assert(sizeof(((struct replay_validation *)0)->causes) / sizeof(uint64_t) ==
	       REPLAY_CAUSE_COUNT, "a count for every cause");

const char *replay_cause_name(enum replay_cause c)
{
	return (unsigned int)c < sizeof(val_cause_names) / sizeof(val_cause_names[0]) ?
	       val_cause_names[c] : NULL;
}

/* Buckets of sim - kernel: 0, then +-1, +-2..3, ... +-2048..4095, +-4096.. */
#define VAL_MID		(REPLAY_DIFF_BUCKETS / 2)

static unsigned int val_bucket(int64_t d)
{
	uint64_t m = d < 0 ? -(uint64_t)d : (uint64_t)d;
	unsigned int b;

	if (!d)
		return VAL_MID;
	b = 64 - (unsigned int)__builtin_clzll(m);
	if (b > VAL_MID)
		b = VAL_MID;
	return d > 0 ? VAL_MID + b : VAL_MID - b;
}

const char *replay_diff_bucket_name(unsigned int b)
{
	static char names[REPLAY_DIFF_BUCKETS][24];
	static int ready;
	unsigned int i;

	if (b >= REPLAY_DIFF_BUCKETS)
		return NULL;
	if (!ready) {
		for (i = 0; i < REPLAY_DIFF_BUCKETS; i++) {
			unsigned int k = i > VAL_MID ? i - VAL_MID : VAL_MID - i;
			char sign = i > VAL_MID ? '+' : '-';
			uint64_t lo = k ? 1ull << (k - 1) : 0, hi = k ? (1ull << k) - 1 : 0;

			if (!k)
				snprintf(names[i], sizeof(names[i]), "0");
			else if (lo == hi)
				snprintf(names[i], sizeof(names[i]), "%c%" PRIu64, sign, lo);
			else if (k == VAL_MID)
				snprintf(names[i], sizeof(names[i]), "%c%" PRIu64 "..", sign, lo);
			else
				snprintf(names[i], sizeof(names[i]), "%c%" PRIu64 "..%" PRIu64,
					 sign, lo, hi);
		}
		ready = 1;
	}
	return names[b];
}

int val_create(struct replay *r)
{
	r->val = calloc(1, sizeof(*r->val));
	if (!r->val)
		return -ENOMEM;
	r->val->cpu_max_abs = calloc(r->t->nr_possible, sizeof(*r->val->cpu_max_abs));
	if (!r->val->cpu_max_abs) {
		val_free(r);
		return -ENOMEM;
	}
	return 0;
}

void val_free(struct replay *r)
{
	if (r->val) {
		free(r->val->q);
		free(r->val->cpu_max_abs);
	}
	free(r->val);
	r->val = NULL;
}

/* Inference's counts are compared: inline (r->inf) or beside the pass. */
static bool val_inferred(const struct replay *r)
{
	return r->inf || r->val->beside;
}

/* The inference's answer at a traced memcg_flush_stats, and its counts then. */
struct val_check val_check_of(const struct infer *in, bool su_ok, bool nf_ok)
{
	return (struct val_check){
		.su_ok = su_ok, .nf_ok = nf_ok, .capped = infer_capped(in),
		.max_kept = infer_max_kept(in), .lowered = infer_cap_lowered(in),
		.exact_max = infer_exact_max(in), .given_up = infer_exact_given_up(in),
		.work = infer_work(in),
	};
}

/* infer_capped() at the flush event the pass is at (val_infer_check()'s). */
static uint64_t val_capped(const struct replay *r)
{
	return r->val->cur.capped;
}

/* beside.c: the inference's answers at the next @n flush events, in their order. */
int val_checks_put(struct replay *r, const struct val_check *c, size_t n)
{
	struct val_state *vs = r->val;

	if (vs->head && vs->tail + n > vs->cap) {	/* what was taken makes room */
		memmove(vs->q, vs->q + vs->head, (vs->tail - vs->head) * sizeof(*vs->q));
		vs->tail -= vs->head;
		vs->head = 0;
	}
	if (mcr_grow((void **)&vs->q, &vs->cap, vs->tail + n, sizeof(*vs->q)))
		return -ENOMEM;
	memcpy(vs->q + vs->tail, c, n * sizeof(*c));
	vs->tail += n;
	return 0;
}

/*
 * The inference's answer at flush event @ev: asked now (r->inf), or taken
 * from beside.c's queue, which has it by the time the pass reads @ev.
 */
static int val_infer_check(struct replay *r, const struct mcr_event *ev, bool k_nf,
			   bool *isu, bool *inf_nf)
{
	struct val_state *vs = r->val;
	int ret;

	if (r->inf) {
		ret = infer_check(r->inf, ev->id, ev->val, k_nf, isu, inf_nf);
		if (ret < 0)
			return ret;
		vs->cur = val_check_of(r->inf, *isu, *inf_nf);
		return 0;
	}
	if (vs->head == vs->tail)
		return -EPROTO;	/* beside.c lets no flush event through before its answer */
	vs->cur = vs->q[vs->head++];
	*isu = vs->cur.su_ok;
	*inf_nf = vs->cur.nf_ok;
	return 0;
}

const struct replay_validation *replay_validation(const struct replay *r)
{
	return r->val ? &r->val->v : NULL;
}

static bool val_in_subtree(const struct rcg *x, const struct rcg *top)
{
	for (; x; x = x->parent)
		if (x == top)
			return true;
	return false;
}

/*
 * Inference was given the unlock of a window over subtree(@id) at @ts: it
 * holds the window open for updates traced late (infer_unlock()).
 */
void val_unlocked(struct replay *r, uint64_t id, uint64_t ts)
{
	if (!r->val)
		return;
	r->val->late_unl_ts = ts;
	r->val->late_id = id;
	r->val->late_open = true;
}

/* A lock or a flush event: inference closes a window it held open for late updates. */
void val_window_closed(struct replay *r)
{
	if (r->val)
		r->val->late_open = false;
}

/*
 * Update @ev of @c against the last window unlocked: traced within
 * INFER_LATE_NS of its unlock with nothing on its CPU between, it may have
 * been made inside the window (the tracepoint fires after the change).
 * While inference holds the window open, it tries those orders; once
 * another event closed it, it takes the update as made after the window,
 * and a mismatch in a subtree holding the update may be that: mark the
 * path.  Only an update under the window's cgroup: the window's visits
 * touch no other counter of its path.  Any other update closes the window.
 */
static void val_late(struct replay *r, const struct mcr_event *ev, struct rcg *c)
{
	struct val_state *vs = r->val;
	uint64_t t_min = r->cpu_prev_ts[ev->cpu];
	struct rcg *a;

	if (!vs->late_unl_ts || t_min >= vs->late_unl_ts || ev->ts < vs->late_unl_ts ||
	    ev->ts - vs->late_unl_ts > INFER_LATE_NS) {
		vs->late_open = false;
		return;
	}
	/* without inference, the flush model takes it after the window too */
	if (vs->late_open && val_inferred(r))
		return;
	if (!val_in_subtree(c, rcg_find(r, vs->late_id)))
		return;
	for (a = c; a; a = a->parent)
		a->late_ts = ev->ts;
}

/*
 * An update of @abs in subtree(@c): each of @c and its ancestors counts it
 * (credit), having first noted its count at the latest flush request that
 * went ahead of it or an ancestor, if new to it (val_untraced()).
 */
static void val_credit(struct rcg *c, uint64_t abs)
{
	struct rcg *path[VAL_CREDIT_DEPTH], *a;
	uint64_t req = 0;
	size_t n = 0;

	for (a = c; a && n < VAL_CREDIT_DEPTH; a = a->parent)
		path[n++] = a;
	if (a)
		return;	/* deeper than that: no bound for this path (val_credit_since()) */
	while (n--) {
		a = path[n];
		if (a->flush_req_ts > req)
			req = a->flush_req_ts;
		if (a->credit_req[0] != req) {
			memmove(a->credit_req + 1, a->credit_req,
				(RCG_CREDIT_NOTES - 1) * sizeof(a->credit_req[0]));
			memmove(a->credit_at + 1, a->credit_at,
				(RCG_CREDIT_NOTES - 1) * sizeof(a->credit_at[0]));
			a->credit_req[0] = req;
			a->credit_at[0] = a->credit;
		}
		a->credit += abs;
	}
}

void val_update(struct replay *r, const struct mcr_event *ev, struct rcg *c)
{
	struct rcg_upd *u = &c->ring[c->ring_n++ % RCG_RING];
	struct val_state *vs = r->val;
	uint64_t abs;

	val_late(r, ev, c);

	u->ts = ev->ts;
	u->cpu = ev->cpu;
	u->val = ev->kind == MCR_EV_EVENTS ? mcr_event_walk_val(ev) : ev->val;
	/* an update under a cgroup of unknown parent, on its path to the root */
	if (c->under_unknown || r->root->parent_unknown)
		r->val->unknown_upd_ts = ev->ts;
	abs = sim_walk_abs(u->val);
	if (!abs)
		return;
	if (abs > vs->cpu_max_abs[ev->cpu]) {
		vs->in_flight += abs - vs->cpu_max_abs[ev->cpu];
		vs->cpu_max_abs[ev->cpu] = abs;
	}
	val_credit(c, abs);
}

void val_went_ahead(struct replay *r, struct rcg *c, uint64_t ts)
{
	c->last_flush_ts = ts;
	c->last_flush_capped = val_inferred(r) ? val_capped(r) : 0;
}

void val_flush_done(struct replay *r, const struct win_pend *pd)
{
	struct rcg *c;

	if (!r->val)
		return;
	/* a window with no request traced is no zero for the credit (no flush_req_ts) */
	c = pd->lock_only ? NULL : rcg_find(r, pd->id);
	if (c && pd->req_ts > c->done_req_ts)
		c->done_req_ts = pd->req_ts;
}

void val_synced(struct replay *r)
{
	if (r->val)
		r->val->v.sync_ts = r->sync_ts;
}

/*
 * Since when a mismatch of @c can have built up: its or an ancestor's last
 * flush, or sync (which reset every counter of subtree(@c), the only ones its
 * stats_updates depends on).  *@capped: infer_capped() at the request of the
 * last of those flushes (sync's is the root's): orders dropped in its own
 * lock windows come after it.
 */
static uint64_t val_since(struct replay *r, struct rcg *c, uint64_t *capped)
{
	uint64_t since = r->sync_ts;
	struct rcg *a;

	*capped = 0;
	for (a = c; a; a = a->parent) {
		if (a->last_flush_ts > since)
			since = a->last_flush_ts;
		/* infer_capped() only grows: the latest reset's is the largest */
		if (a->last_flush_capped > *capped)
			*capped = a->last_flush_capped;
	}
	return since;
}

static bool val_gap_between(const struct replay_trace *t, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = t->nr_gaps;

	while (lo < hi) {	/* first gap with ts >= from */
		size_t mid = (lo + hi) / 2;

		if (t->gaps[mid].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nr_gaps && t->gaps[lo].ts <= to;
}

/*
 * The credit in subtree(@c) since the request at @since: its count then is
 * the one noted at the first update after the oldest noted request at or
 * after @since with none noted between (no update came between @since and
 * it); UINT64_MAX if the notes do not reach back to @since.
 */
static uint64_t val_credit_since(const struct rcg *c, uint64_t since)
{
	size_t i;

	if (since > c->credit_req[0])
		return 0;	/* no update in the subtree since */
	for (i = 0; i + 1 < RCG_CREDIT_NOTES; i++)
		if (since > c->credit_req[i + 1] || since == c->credit_req[i])
			return c->credit - c->credit_at[i];
	return since == c->credit_req[i] ? c->credit - c->credit_at[i] : UINT64_MAX;
}

/* The bound, and in *@since the request it counts from (0: no flush completed, no bound). */
static uint64_t val_credit_bound(const struct replay *r, const struct rcg *c, uint64_t *since)
{
	const struct rcg *a;
	uint64_t credit;

	*since = 0;
	for (a = c; a; a = a->parent)
		if (a->done_req_ts > *since)
			*since = a->done_req_ts;
	credit = *since ? val_credit_since(c, *since) : UINT64_MAX;
	return credit > UINT64_MAX - r->val->in_flight ? UINT64_MAX : credit + r->val->in_flight;
}

/*
 * No order of the traced updates explains the kernel's stats_updates of @c:
 * it is more than they can have added.  A flush the trace saw complete,
 * of @c or an ancestor, zeroed every counter of subtree(@c) that was not
 * zero at its request: a (memcg, CPU) counter is non-zero only after an
 * update on that CPU in the memcg's subtree, which puts it on the CPU's
 * updated tree, and each CPU's window visits its tree and zeroes its
 * per-CPU counter and the atomic.  Since that request, @c's atomic takes
 * per-CPU counters that only updates in its subtree fill, each by its
 * |val| at most: the sum of those traced (credit) bounds it.  An update
 * made just before the read can be traced just after it (the tracepoint
 * fires after the change): one per CPU, counted at the largest |val| that
 * CPU traced.  The bound only holds for a kernel that traces every
 * update: 6.13 on, where each memcg_rstat_updated() has its tracepoint,
 * and not the NMI-safe accounting of architectures without NMI-safe
 * per-CPU operations (6.16 on), which adds with none.
 */
static bool val_untraced(const struct replay *r, const struct rcg *c, int64_t kernel)
{
	uint64_t since, bound = val_credit_bound(r, c, &since);

	return kernel > 0 && bound != UINT64_MAX && (uint64_t)kernel > bound;
}

static enum replay_cause val_cause(struct replay *r, struct rcg *c, uint64_t since,
				   uint64_t capped_since, const struct mcr_event *ev, int64_t sim_su)
{
	struct rcg *a;

	/* a gap, or a lock window whose unlock is not in the trace (window.c) */
	if (val_gap_between(r->t, since, ev->ts) || (r->win.lost_ts && r->win.lost_ts >= since))
		return REPLAY_CAUSE_LOST;
	for (a = c; a; a = a->parent)
		if (a->parent_unknown)
			return REPLAY_CAUSE_UNKNOWN_PARENT;
	/*
	 * Cgroups of unknown parent hang under the root in the simulator, so their
	 * updates reach the root without the ancestors that, in the kernel, may
	 * have stopped the walk (a dying memcg removed before the trace).
	 */
	if (c == r->root && r->val->unknown_upd_ts && r->val->unknown_upd_ts >= since)
		return REPLAY_CAUSE_UNKNOWN_PARENT;
	/* no order explains it: not the cap's, nor a window's, nor a late update's */
	if (val_untraced(r, c, ev->val))
		return REPLAY_CAUSE_UNTRACED;
	if (val_inferred(r) && val_capped(r) > r->val->capped_mark)
		return REPLAY_CAUSE_CAPPED;
	/*
	 * At a mismatch the cap explains, inference takes the kernel's value
	 * of the counter read and of no other: the dropped orders' error stays
	 * in the rest of that subtree (its per-CPU counters, an ancestor's
	 * atomic fed by the same window), until a flush of it resets them.  So
	 * a later mismatch of @c is the cap's too if the cap dropped orders
	 * since subtree(@c) was last reset, and a mismatch in subtree(@c)
	 * since then showed that the orders kept had lost the kernel's; or
	 * an ancestor's own such mismatch did, whose subtree holds @c's
	 * counters.
	 */
	if (val_inferred(r) && val_capped(r) > capped_since) {
		if (c->cap_miss_ts && c->cap_miss_ts >= since)
			return REPLAY_CAUSE_CAPPED;
		for (a = c->parent; a; a = a->parent)
			if (a->cap_own_ts && a->cap_own_ts >= since)
				return REPLAY_CAUSE_CAPPED;
	}
	/* with inference every order was tried: the window alone explains nothing */
	if (!val_inferred(r) && c->window_ts && c->window_ts >= since)
		return REPLAY_CAUSE_WINDOW_ORDER;
	/* Zero where we counted credit: the kernel reset it in a flush we did not see. */
	if (ev->val == 0 && sim_su != 0)
		return REPLAY_CAUSE_OUTSIDE;
	/*
	 * Marked also where inference held the window past the next lock and
	 * tried the orders (val_late()): the last cause asked.
	 */
	if (c->late_ts && c->late_ts >= since)
		return REPLAY_CAUSE_LATE;
	return REPLAY_CAUSE_NONE;
}

static int val_upd_cmp(const void *a, const void *b)
{
	const struct { const struct rcg_upd *u; uint64_t id; } *x = a, *y = b;

	return x->u->ts < y->u->ts ? 1 : x->u->ts > y->u->ts ? -1 : 0;
}

/* The most recent updates in subtree(@c) since @since, newest first. */
static void val_context(struct replay *r, struct rcg *c, uint64_t since, char *buf, size_t len)
{
	struct { const struct rcg_upd *u; uint64_t id; } *v;
	size_t i, n = 0, cap = 64, off;
	unsigned int k;

	off = (size_t)snprintf(buf, len, "updates in subtree since ts %" PRIu64 ":", since);
	v = malloc(cap * sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < r->nr_cg; i++) {
		struct rcg *x = r->cg[i];
		unsigned int nr = x->ring_n < RCG_RING ? x->ring_n : RCG_RING;

		if (!nr || !val_in_subtree(x, c))
			continue;
		for (k = 0; k < nr; k++) {
			if (x->ring[k].ts < since)
				continue;
			if (n == cap) {
				void *nv = realloc(v, 2 * cap * sizeof(*v));

				if (!nv)
					break;
				v = nv;
				cap *= 2;
			}
			v[n].u = &x->ring[k];
			v[n].id = x->id;
			n++;
		}
	}
	qsort(v, n, sizeof(*v), val_upd_cmp);
	for (i = 0; i < n && i < VAL_CONTEXT_MAX && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, " [ts %" PRIu64 " cpu %d id %" PRIu64
					" val %" PRId64 "]", v[i].u->ts, v[i].u->cpu, v[i].id,
					v[i].u->val);
	if (n > VAL_CONTEXT_MAX && off < len)
		snprintf(buf + off, len - off, " and %zu more (ring of %d per cgroup)",
			 n - VAL_CONTEXT_MAX, RCG_RING);
	if (!n && off < len)
		snprintf(buf + off, len - off, " none recorded");
	free(v);
}

/**
 * val_flush_event() - compare one traced memcg_flush_stats with runs[0]'s
 * counters, before the simulated request decides anything.
 */
int val_flush_event(struct replay *r, const struct mcr_event *ev, struct rcg *c)
{
	struct replay_validation *v = &r->val->v;
	struct sim *s = r->sims[0];
	int64_t sim_su, diff;
	bool sim_nf, k_nf = ev->flags & MCR_FLUSH_NEEDS, su_ok, nf_ok, isu = false, inf_nf = false;
	enum replay_cause cause;
	uint64_t since, capped_since;
	struct rcg *a;

	v->flush_events++;
	val_window_closed(r);
	if (ev->flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS))
		c->flush_req_ts = ev->ts;	/* the kernel flushes: the credit's zero if it completes */
	if (val_inferred(r)) {
		/* the kernel's values prune hypotheses before sync too */
		int ret = val_infer_check(r, ev, k_nf, &isu, &inf_nf);

		if (ret < 0)
			return ret;
	}
	if (!r->synced) {
		v->skipped_before_sync++;
		return 0;
	}
	v->compared++;
	sim_su = sim_stats_updates(s, ev->id);
	sim_nf = sim_needs_flush(s, ev->id);
	su_ok = sim_su == ev->val;
	nf_ok = sim_nf == k_nf;
	v->stats_updates_match_plain += su_ok;
	v->needs_flush_match_plain += nf_ok;
	if (val_inferred(r)) {
		v->stats_updates_match += isu;
		v->needs_flush_match += inf_nf;
		v->max_hypotheses = r->val->cur.max_kept;
		v->cap_lowered = r->val->cur.lowered;
		v->capped = r->val->cur.capped;
		v->exact_max = r->val->cur.exact_max;
		v->exact_given_up = r->val->cur.given_up;
	} else {
		/* no windows in the trace, nothing to infer: the plain counts */
		v->stats_updates_match += su_ok;
		v->needs_flush_match += nf_ok;
		if (v->max_hypotheses < 1)
			v->max_hypotheses = 1;
	}
	/* the traced stats_updates comes from a file: any int64; the last bucket is open */
	if (__builtin_sub_overflow(sim_su, ev->val, &diff))
		diff = ev->val < 0 ? INT64_MAX : INT64_MIN;
	v->diff_hist[val_bucket(diff)]++;
	if (val_inferred(r) ? isu && inf_nf : su_ok && nf_ok)
		return 0;
	v->mismatches++;
	since = val_since(r, c, &capped_since);
	cause = val_cause(r, c, since, capped_since, ev, sim_su);
	v->causes[cause]++;
	for (a = c; cause == REPLAY_CAUSE_CAPPED && a; a = a->parent)
		a->cap_miss_ts = ev->ts;
	if (cause == REPLAY_CAUSE_CAPPED)
		c->cap_own_ts = ev->ts;
	if (val_inferred(r))
		r->val->capped_mark = val_capped(r);	/* inference took the kernel's value */
	if (v->mismatches <= r->p.max_mismatches && r->p.sink.mismatch) {
		char ctx[VAL_CONTEXT_BYTES];
		struct replay_mismatch m = {
			.ts = ev->ts, .id = ev->id, .kernel_stats_updates = ev->val,
			.sim_stats_updates = sim_su, .cpu = ev->cpu, .kernel_needs_flush = k_nf,
			.sim_needs_flush = sim_nf, .cause = replay_cause_name(cause), .context = ctx,
		};

		size_t off = 0;

		if (cause == REPLAY_CAUSE_UNTRACED) {
			uint64_t from, bound = val_credit_bound(r, c, &from);
			int w = snprintf(ctx, sizeof(ctx), "the traced updates since the flush requested at ts %" PRIu64
					 " can add at most %" PRIu64 "; ", from, bound);

			off = w > 0 && (size_t)w < sizeof(ctx) ? (size_t)w : 0;
		}
		val_context(r, c, since, ctx + off, sizeof(ctx) - off);
		return r->p.sink.mismatch(r->p.sink.ctx, &m);
	}
	return 0;
}
