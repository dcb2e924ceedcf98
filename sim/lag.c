// SPDX-License-Identifier: GPL-2.0
/*
 * lag.c - staleness as a reader of memory.stat sees it (definitions in
 * sim.h): per (memcg, line) the signed error, the visible error over time and
 * the read errors; per memcg the stranded state, its time and its episodes.
 *
 * It owns no counter of the kernel model: it reads what stale.c keeps (the
 * pending volume, the part of it since the memcg's last flush, and the
 * signed missing value per line, all O(1) to query) and the flushable flag,
 * and is told when they change.  It never walks a
 * subtree on the update path.
 *
 * The visible error of line k of M is error(M,k) while M is not flushable.
 * Instead of touching every line of M when M's flushable state flips, each
 * node keeps a clock of its non-flushable time (sim_nf()); a line only
 * remembers that clock at its last change, so the area it adds when it next
 * changes is |error| * (clock now - clock then).  A state held for no time
 * adds nothing and does not count for the maximum.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lag.h"

enum sim_unit sim_item_unit(enum sim_item_kind kind)
{
	return kind == SIM_ITEM_EVENT ? SIM_UNIT_EVENTS : SIM_UNIT_PAGES;
}

uint64_t sim_stranded_threshold(const struct sim *s)
{
	return s->strand_th;
}

static enum sim_item_kind sim_line_kind(const struct sim *s, uint32_t k)
{
	return (enum sim_item_kind)(s->item_key[k] >> 32);
}

static int sim_line_item(const struct sim *s, uint32_t k)
{
	return (int)(uint32_t)s->item_key[k];
}

/*
 * Lazy settling.  An update is applied at once to the memcg it changes and
 * to each ancestor on its path below the calm top of it: the nodes that
 * are calm (flushable and not stranded, sim_node_calm()) with only calm
 * ancestors.  The calm top's share is deferred, summed in its lowest node
 * (owe_*), and applied here, lowest first, each node handing what it
 * applied to its parent, so an ancestor many updates reach applies their
 * sum once.  It is exact, as at a calm node each part of an update's share
 * is:
 *  - missing, fresh and the line's miss: sums;
 *  - the integral of missing: each term is |v| times the node's clock after
 *    the update's touch, which is the update's ts, since no update is
 *    deferred below the clocks' high mark (ts_hi);
 *  - the clock: a maximum;
 *  - oldest: set only by the first update (the smallest ts) after missing
 *    was 0, and the age settled then saw no age;
 *  - the line's touch: the non-flushable clocks stand still while the node
 *    is flushable, so only the first update of a line adds its area and
 *    maximum, with the error it had before any of them; the others held
 *    states for no counted time;
 *  - stuck, stranded and the episode: nothing, at a flushable node.
 * A node stops being calm only when it stops being flushable
 * (sim_flushable_update(), sim_set_online()), which settles first; every
 * call that reads or visits what may be deferred settles first too
 * (sim_lazy_sync(), sim_lazy_settle_read()).  A node that is not calm, or
 * has an ancestor that is not, has nothing deferred.
 */
static void sim_owe_apply(struct sim *s, struct sim_node *n, int32_t parent)
{
	struct sim_node *p = parent == SIM_NONE ? NULL : &s->nodes[parent];
	uint64_t first = n->owe_first;
	uint32_t w, k;

	/* sim_oldest_set() at the first of them: its clock was first, no age */
	if (first < n->oldest) {
		n->age_from = first;
		n->oldest = first;
	}
	n->missing += n->owe_mag;
	n->missing_ts += n->owe_mts;
	n->fresh += n->owe_walk;
	if (n->owe_last > n->last_ts)
		n->last_ts = n->owe_last;
	for (w = 0; w < SIM_PEND_WORDS(n->cap_it); w++) {
		uint64_t bits = n->owe_bits[w];

		if (!bits)
			continue;
		n->owe_bits[w] = 0;
		if (p)
			p->owe_bits[w] |= bits;
		for (; bits; bits &= bits - 1) {
			int64_t d;

			k = w * 64 + (uint32_t)__builtin_ctzll(bits);
			d = n->owe_it[k];
			n->owe_it[k] = 0;
			sim_line_touch(&n->lines[k], n->nf_ns, n->sn_ns);
			n->lines[k].miss += d;
			if (p)
				p->owe_it[k] += d;
		}
	}
	if (p) {
		if (p->owe_first == SIM_TS_NONE)
			s->owe_dirty[parent / 64] |= UINT64_C(1) << (parent % 64);
		p->owe_mag += n->owe_mag;
		p->owe_mts += n->owe_mts;
		p->owe_walk += n->owe_walk;
		if (first < p->owe_first)
			p->owe_first = first;
		if (n->owe_last > p->owe_last)
			p->owe_last = n->owe_last;
	}
	n->owe_mag = 0;
	n->owe_mts = 0;
	n->owe_walk = 0;
	n->owe_first = SIM_TS_NONE;
	n->owe_last = 0;
}

/* Every deferred update applied: children come after their parent in the array. */
void sim_lazy_settle(struct sim *s)
{
	uint32_t w;

	s->owe_any = false;
	for (w = (s->nr_nodes + 63) / 64; w-- > 0;) {
		while (s->owe_dirty[w]) {
			uint32_t b = 63 - (uint32_t)__builtin_clzll(s->owe_dirty[w]);
			int32_t idx = (int32_t)(w * 64 + b);

			s->owe_dirty[w] &= ~(UINT64_C(1) << b);
			sim_owe_apply(s, &s->nodes[idx], s->nodes[idx].parent);
		}
	}
}

/*
 * After @n's flushable or stranded flag changed: sim.calm_up of @n and of
 * each descendant whose value follows.  A subtree whose root keeps its
 * value is skipped; no recursion, for trees of any depth.
 */
void sim_calm_sync(struct sim *s, const struct sim_node *n)
{
	int32_t top = (int32_t)(n - s->nodes), c;
	bool up = n->flushable && !n->stranded &&
		  (n->parent == SIM_NONE || s->calm_up[n->parent]);

	if (up == s->calm_up[top])
		return;
	s->calm_up[top] = up;
	c = n->first_child;
	while (c != SIM_NONE) {
		const struct sim_node *x = &s->nodes[c];
		bool v = x->flushable && !x->stranded && s->calm_up[x->parent];

		if (v != s->calm_up[c]) {
			s->calm_up[c] = v;
			if (x->first_child != SIM_NONE) {
				c = x->first_child;
				continue;
			}
		}
		while (c != top && s->nodes[c].next_sibling == SIM_NONE)
			c = s->nodes[c].parent;
		if (c == top)
			break;
		c = s->nodes[c].next_sibling;
	}
}

/* The node's non-flushable clocks, brought up to @ts before its flushable flag flips. */
void sim_lag_flushable(struct sim *s, struct sim_node *n, uint64_t ts)
{
	n->sn_ns = sim_sn(s, n, ts);
	n->sn_g = sim_settled(s, ts);
	n->nf_ns = sim_nf(n, ts);
	if (ts > n->nf_last)
		n->nf_last = ts;
}

/* Could a reader have noticed it: it skipped a read, or lasted SIM_EPISODE_NOTICE_NS. */
static bool sim_episode_noticeable(const struct sim_node *n, uint64_t ts)
{
	return n->ep_skipped || (ts > n->ep_start && ts - n->ep_start >= SIM_EPISODE_NOTICE_NS);
}

/* Pages outrank events: their |error| is not comparable, and pages are what a user sizes. */
static bool sim_line_worse(const struct sim *s, const struct sim_node *n, uint32_t k,
			   uint64_t e)
{
	bool pages, worst_pages;

	if (!e)
		return false;
	if (n->ep_worst_k == SIM_NONE)
		return true;
	pages = sim_line_kind(s, k) != SIM_ITEM_EVENT;
	worst_pages = sim_line_kind(s, (uint32_t)n->ep_worst_k) != SIM_ITEM_EVENT;
	if (pages != worst_pages)
		return pages;
	return e > n->ep_worst_abs;
}

/* Line @k of stranded @n changed: is it the episode's worst now? */
void sim_lag_worst(struct sim *s, struct sim_node *n, uint32_t k)
{
	uint64_t e = sim_abs64(n->lines[k].miss);

	if (!sim_line_worse(s, n, k, e))
		return;
	n->ep_worst_k = (int32_t)k;
	n->ep_worst_abs = e;
	n->ep_worst_err = -n->lines[k].miss;
}

/*
 * The worst of the lines as the episode found them.  Deferred until one of
 * them is about to change or the episode is delivered: until then they are
 * what they were at the start, and an episode that ends at once (a large
 * update strands a memcg for the instant before its own walk makes it
 * flushable) costs no scan.
 */
void sim_lag_scan(struct sim *s, struct sim_node *n)
{
	uint32_t k;

	n->ep_scan = false;
	for (k = 0; k < n->cap_it && k < s->nr_items; k++)
		sim_lag_worst(s, n, k);
}

static void sim_episode_start(struct sim *s, struct sim_node *n, uint64_t ts)
{
	n->ep_start = ts;
	n->ep_skipped = 0;
	n->ep_max_pending = n->missing;
	n->ep_worst_k = SIM_NONE;
	n->ep_worst_abs = 0;
	n->ep_worst_err = 0;
	n->ep_scan = true;
}

/* An episode that lasted no time and skipped no read: an instant before a walk's batch. */
static bool sim_episode_counts(const struct sim_node *n, uint64_t ts)
{
	return ts > n->ep_start || n->ep_skipped;
}

static void sim_episode_deliver(struct sim *s, struct sim_node *n, uint64_t ts, bool open)
{
	struct sim_episode ep;
	int ret;

	if (ts > n->ep_start)
		n->strand_ns += ts - n->ep_start;
	if (!sim_episode_counts(n, ts)) {
		n->ep_scan = false;
		return;
	}
	if (n->ep_scan)
		sim_lag_scan(s, n);
	n->episodes++;
	if (sim_episode_noticeable(n, ts))
		n->episodes_noticeable++;
	if (!s->ep_fn)
		return;
	ep = (struct sim_episode){
		.id		= n->id,
		.start		= n->ep_start,
		.end		= ts > n->ep_start ? ts : n->ep_start,
		.reads_skipped	= n->ep_skipped,
		.max_pending	= n->ep_max_pending,
		.worst_error	= n->ep_worst_err,
		.worst_item	= n->ep_worst_k == SIM_NONE ? -1 :
				  sim_line_item(s, (uint32_t)n->ep_worst_k),
		.worst_kind	= n->ep_worst_k == SIM_NONE ? SIM_ITEM_STATE :
				  sim_line_kind(s, (uint32_t)n->ep_worst_k),
		.open		= open,
		.noticeable	= sim_episode_noticeable(n, ts),
	};
	ret = s->ep_fn(&ep, s->ep_ctx);
	if (ret < 0 && !s->ep_err)
		s->ep_err = ret;
}

/* Start or end @n's stranded episode; its largest pending volume. */
void sim_lag_change(struct sim *s, struct sim_node *n, uint64_t ts)
{
	bool st = !n->flushable && n->fresh > s->strand_th;

	if (st != n->stranded) {
		if (st) {
			n->stranded = true;
			sim_episode_start(s, n, ts);
		} else {
			n->stranded = false;
			sim_episode_deliver(s, n, ts, false);
		}
		sim_calm_sync(s, n);
	}
	if (n->stranded && n->missing > n->ep_max_pending)
		n->ep_max_pending = n->missing;
}

/**
 * sim_episode_sink() - where stranded episodes go when they end
 * @s: the simulator
 * @fn: called with each episode that counts; a negative return is returned
 *	by the sim call that ended the episode.  NULL delivers nothing.
 * @ctx: passed to @fn
 */
void sim_episode_sink(struct sim *s, int (*fn)(const struct sim_episode *ep, void *ctx),
		      void *ctx)
{
	s->ep_fn = fn;
	s->ep_ctx = ctx;
}

/**
 * sim_episodes_close() - the end of the trace: deliver the open episodes
 * @s: the simulator
 * @ts: the end (earlier than an episode's start: ends there)
 *
 * Each memcg still stranded has its episode delivered with end = @ts and
 * .open set, and starts a new one at @ts, so calling it once, last, reports
 * every episode exactly once.
 * Return: 0 or what the sink returned.
 */
int sim_episodes_close(struct sim *s, uint64_t ts)
{
	uint32_t i;

	sim_lazy_sync(s, ts);
	for (i = 0; i < s->nr_nodes; i++) {
		struct sim_node *n = &s->nodes[i];

		if (!n->stranded)
			continue;
		sim_episode_deliver(s, n, ts, true);
		sim_episode_start(s, n, ts > n->ep_start ? ts : n->ep_start);
	}
	return sim_lag_err_take(s);
}

/* The node of @id for a query, what is deferred applied; NULL if unknown. */
static const struct sim_node *sim_lag_node(const struct sim *s, uint64_t id)
{
	int32_t idx = sim_node_lookup(s, id);

	if (idx == SIM_NONE)
		return NULL;
	sim_lazy_settle_read(s);
	return &s->nodes[idx];
}

/*
 * The node of @id and the line index of (@kind, @item) for the per-line
 * getters; *k < 0 is a line never updated anywhere, which reads as all zero.
 * The kind is checked first so a bad call is -EINVAL whatever the id.
 */
static int sim_lag_line(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
			const struct sim_node **n, int *k)
{
	if (kind > SIM_ITEM_EVENT)
		return -EINVAL;
	*n = sim_lag_node(s, id);
	if (!*n)
		return -ENOENT;
	*k = sim_item_find(s, kind, item);
	return 0;
}

/**
 * sim_item_error() - error of one line of a memcg now: shown - truth
 * @s: the simulator
 * @id: the memcg
 * @kind: namespace (LRUVEC is the STATE line of the same idx)
 * @item: the idx
 * @out: signed, in the line's unit; 0 if never updated in the subtree
 *
 * Return: 0, -ENOENT for an unknown id, -EINVAL for a bad kind.
 */
int sim_item_error(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		   int64_t *out)
{
	const struct sim_node *n;
	int k, err;

	err = sim_lag_line(s, id, kind, item, &n, &k);
	if (err)
		return err;
	*out = k >= 0 && (uint32_t)k < n->cap_it ? -n->lines[k].miss : 0;
	return 0;
}

/* Line @k of @n up to @now, without changing the simulator. */
static void sim_item_stats_fill(const struct sim *s, const struct sim_node *n, uint32_t k,
				uint64_t now,
				struct sim_item_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (k < n->cap_it) {
		const struct sim_line *a = &n->lines[k];
		uint64_t nf = sim_nf(n, now), sn = sim_sn(s, n, now);
		uint64_t e = sim_abs64(a->miss);

		out->error = -a->miss;
		out->max_visible_settled = a->max_settled;
		out->max_visible_flush = a->max_flush;
		out->visible_area = a->vis_area;
		if (nf > a->nf_at) {
			out->visible_area += (double)e * (double)(nf - a->nf_at);
			if (sn > a->sn_at && e > out->max_visible_settled)
				out->max_visible_settled = e;
			if (nf - a->nf_at > sn - a->sn_at && e > out->max_visible_flush)
				out->max_visible_flush = e;
		}
		out->max_visible = out->max_visible_settled > out->max_visible_flush ?
				   out->max_visible_settled : out->max_visible_flush;
	}
	if (k < n->cap_read) {
		const struct sim_item_reads *r = &n->read_it[k];

		out->max_read_error = r->max_err;
		out->read_error_sum = r->err_sum;
		out->reads_wrong = r->wrong;
		out->max_error_age_ns = r->max_age;
	}
}

/**
 * sim_item_stats_get() - one line of a memcg, up to @now
 * @s: the simulator
 * @id: the memcg
 * @kind: namespace (LRUVEC is the STATE line of the same idx)
 * @item: the idx
 * @now: integrate up to here (before the line's last change: up to it)
 * @out: filled in; all zero for a line never updated in the subtree
 *
 * Return: 0, -ENOENT for an unknown id, -EINVAL for a bad kind.
 */
int sim_item_stats_get(const struct sim *s, uint64_t id, enum sim_item_kind kind, int item,
		       uint64_t now, struct sim_item_stats *out)
{
	const struct sim_node *n;
	int k, err;

	err = sim_lag_line(s, id, kind, item, &n, &k);
	if (err)
		return err;
	if (k < 0) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	sim_item_stats_fill(s, n, (uint32_t)k, now, out);
	return 0;
}

/**
 * sim_item_stats_foreach() - every line of a memcg whose stats are not all zero
 * @s: the simulator
 * @id: the memcg
 * @now: integrate up to here
 * @fn: called per line (STATE for merged lines); non-zero stops and is returned
 * @ctx: passed to @fn
 *
 * Return: 0, -ENOENT for an unknown id, or what @fn returned.
 */
int sim_item_stats_foreach(const struct sim *s, uint64_t id, uint64_t now,
			   int (*fn)(enum sim_item_kind kind, int item,
				     const struct sim_item_stats *st, void *ctx),
			   void *ctx)
{
	const struct sim_node *n = sim_lag_node(s, id);
	struct sim_item_stats st;
	uint32_t k;
	int ret;

	if (!n)
		return -ENOENT;
	for (k = 0; k < s->nr_items && (k < n->cap_it || k < n->cap_read); k++) {
		sim_item_stats_fill(s, n, k, now, &st);
		if (!st.error && !st.max_visible && !st.visible_area && !st.max_read_error &&
		    !st.reads_wrong)
			continue;
		ret = fn(sim_line_kind(s, k), sim_line_item(s, k), &st, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * sim_cgroup_stats_get() - one memcg, up to @now
 * @s: the simulator
 * @id: the memcg
 * @now: stranded time up to here
 * @out: filled in
 *
 * Return: 0, or -ENOENT for an unknown id.
 */
int sim_cgroup_stats_get(const struct sim *s, uint64_t id, uint64_t now,
			 struct sim_cgroup_stats *out)
{
	const struct sim_node *n = sim_lag_node(s, id);

	if (!n)
		return -ENOENT;
	*out = (struct sim_cgroup_stats){
		.pending	= n->missing,
		.pending_since_flush = n->fresh,
		.max_pending	= sim_max_missing(n),
		.oldest_ts	= n->missing && n->oldest != SIM_TS_NONE ? n->oldest : 0,
		.first_ts	= n->first_ts,
		.stranded_ns	= n->strand_ns,
		.episodes	= n->episodes,
		.episodes_noticeable = n->episodes_noticeable,
		.reads		= n->reads,
		.stale_reads	= n->stale_reads,
		.reads_ended	= n->reads_ended,
		.max_read_age_ns = n->max_read_age,
		.flushable	= n->flushable,
		.stranded	= n->stranded,
	};
	if (n->stranded) {
		out->stranded_since = n->ep_start;
		if (now > n->ep_start)
			out->stranded_ns += now - n->ep_start;
		if (sim_episode_counts(n, now))
			out->episodes++;
		if (sim_episode_noticeable(n, now))
			out->episodes_noticeable++;
	}
	return 0;
}

static void sim_read_fill(const struct sim_node *n, uint64_t ts, struct sim_read_info *out)
{
	out->pending = n->missing;
	out->pending_since_flush = n->fresh;
	out->age_ns = 0;
	if (n->missing && n->oldest != SIM_TS_NONE && ts > n->oldest)
		out->age_ns = ts - n->oldest;
	out->flushable = n->flushable;
	out->stranded = n->stranded;
	out->stale = false;
}

/**
 * sim_read_begin() - a traced read of a memcg, after its flush decision
 * @s: the simulator
 * @ts: the read
 * @id: the memcg read
 * @flushed: what sim_flush_request() decided
 * @out: the memcg's state at the read (may be NULL)
 *
 * Return: 0, or -ENOENT for an unknown id.
 */
int sim_read_begin(struct sim *s, uint64_t ts, uint64_t id, bool flushed,
		   struct sim_read_info *out)
{
	int32_t idx = sim_node_lookup(s, id);
	struct sim_read_info info;
	struct sim_node *n;

	if (idx == SIM_NONE)
		return -ENOENT;
	sim_clock(s, ts);
	sim_lazy_sync(s, ts);
	n = &s->nodes[idx];
	sim_read_fill(n, ts, &info);
	info.stale = !flushed && n->stranded;
	n->reads++;
	if (info.stale) {
		n->stale_reads++;
		n->ep_skipped++;
	}
	if (out)
		*out = info;
	return 0;
}

static int sim_read_reserve(struct sim_node *n)
{
	struct sim_item_reads *r;

	if (n->cap_read >= n->cap_it)
		return 0;
	r = realloc(n->read_it, sizeof(*r) * n->cap_it);
	if (!r)
		return -ENOMEM;
	memset(r + n->cap_read, 0, sizeof(*r) * (n->cap_it - n->cap_read));
	n->read_it = r;
	n->cap_read = n->cap_it;
	return 0;
}

/**
 * sim_read_end() - what a read got: the error of every line at this moment
 * @s: the simulator
 * @ts: now (the read itself if it skipped; after its flush's visits of @id if not)
 * @id: the memcg read
 * @fn: called for each line with a non-zero error (STATE for merged lines),
 *	with the memcg's age; may be NULL; non-zero stops the loop and is returned
 * @ctx: passed to @fn
 * @out: the memcg's state now, .stale false (may be NULL)
 *
 * Every line's read stats count this read.
 * Return: the number of wrong lines, -ENOENT for an unknown id, -ENOMEM, or
 * what @fn returned.
 */
int sim_read_end(struct sim *s, uint64_t ts, uint64_t id,
		 int (*fn)(enum sim_item_kind kind, int item, int64_t error, uint64_t age_ns,
			   void *ctx),
		 void *ctx, struct sim_read_info *out)
{
	int32_t idx = sim_node_lookup(s, id);
	struct sim_read_info info;
	int ret, fn_ret = 0, wrong = 0;
	struct sim_node *n;
	uint32_t k;

	if (idx == SIM_NONE)
		return -ENOENT;
	sim_clock(s, ts);
	sim_lazy_sync(s, ts);
	n = &s->nodes[idx];
	ret = sim_read_reserve(n);
	if (ret)
		return ret;
	sim_read_fill(n, ts, &info);
	if (out)
		*out = info;
	n->reads_ended++;
	if (info.age_ns > n->max_read_age)
		n->max_read_age = info.age_ns;
	for (k = 0; k < n->cap_it && k < s->nr_items; k++) {
		struct sim_item_reads *r = &n->read_it[k];
		uint64_t e = sim_abs64(n->lines[k].miss);

		if (!e)
			continue;
		wrong++;
		r->wrong++;
		r->err_sum += (double)e;
		if (e > r->max_err)
			r->max_err = e;
		if (info.age_ns > r->max_age)
			r->max_age = info.age_ns;
		/* after a stop the read still counts in every line's stats */
		if (fn && !fn_ret)
			fn_ret = fn(sim_line_kind(s, k), sim_line_item(s, k), -n->lines[k].miss,
				    info.age_ns, ctx);
	}
	return fn_ret ? fn_ret : wrong;
}
