// SPDX-License-Identifier: GPL-2.0
/*
 * infer_ahead.c - hypotheses merged exactly by looking ahead in the trace.
 *
 * A memcg's per-CPU stats_updates changes what the kernel does next only
 * when an update on that CPU takes it to MEMCG_CHARGE_BATCH: the batch then
 * moves into the memcg's atomic, which the walks, the flushes and the traced
 * values read (sim_step_charge()).  A flush's visit of (memcg, CPU) sets it
 * to 0 whatever it was.  So hypotheses that differ only in per-CPU counters
 * which no update can take to the batch, in any of them, before the
 * counter's next visit are alike to every later decision and traced value:
 * such a counter is inert.  Each hypothesis's entry for it goes (it reads
 * the base's value, or 0 past its visit), and those that differed only there
 * are twins, merged as any twins are (infer_cap.c).  Nothing is dropped: it
 * is what the cap would otherwise do to them.
 *
 * The bound: the greatest value a hypothesis or the base holds, plus |val|
 * of every update to come on that CPU in the memcg's subtree, whether its
 * walk would reach the memcg or not, until the counter's next visit.  That
 * is the unlock (and INF_LATE_NS after it, for the updates it may take
 * late) of the first window to come on that CPU flushing a cgroup at or
 * above the memcg with the memcg linked on the base's updated tree at its
 * lock: the visit lists are the base's (sim_window_peek()), and a
 * hypothesis visits the memcg before that unlock whatever its order.  In
 * the open window of that CPU, a memcg on its visit list: for the
 * hypotheses that have not visited it yet, its close (inf_inert_pre());
 * those past the visit keep what came after, and the base, visiting it at
 * the close, has it linked again only by an update after that.  An update
 * to a memcg the base does not know yet counts, and links nothing.  Below
 * the batch, the counter is inert.  The lookahead reads INF_AHEAD_EVENTS
 * events past the one being fed (that one included: a close may come
 * before its update is taken), and no further: a counter whose visit is not
 * within them is not inert.  What it reads, and so what it merges, is the
 * same for any thread count.
 *
 * Only for the table's policies, whose steps read the per-CPU counter only
 * through sim_step_charge() (in->agg); only where the cap would drop
 * hypotheses (inf_compact()), so that below the cap every answer and order
 * is what it was without it.  Verdicts are kept: an inert counter stays
 * inert until the window that visits it opens (a hypothesis's value can
 * only have grown by the updates the bound counted; inside that window, one
 * past the visit keeps what comes after), a counter that is not is asked again
 * INF_AHEAD_AGAIN events later; after a look that found nothing inert, the
 * next comes INF_CANON_WAIT events later, twice as long after each such
 * look (INF_CANON_WAIT_MAX at most), since the look walks every table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer-local.h"

#define INF_AHEAD_AGAIN		512
/* Events between looks that found nothing inert: the first, and the most */
#define INF_CANON_WAIT		16
#define INF_CANON_WAIT_MAX	4096

void infer_set_ahead(struct infer *in, const struct infer_ahead *a)
{
	in->ahead = *a;
}

uint64_t infer_inert_keys(const struct infer *in)
{
	return in->canon_keys;
}

void inf_ahead_free(struct infer *in)
{
	unsigned int c;

	if (in->alog)
		for (c = 0; c < in->nr_possible; c++)
			free(in->alog[c].r);
	free(in->alog);
	in->alog = NULL;
	idmap_free(&in->canon);
	idmap_free(&in->canon_pre);
	idmap_free(&in->canon_memo);
}

/* Append; never moves what is logged (inf_canon() compacts, between scans). */
static int inf_alog_push(struct inf_alog *l, const struct inf_arec *rec)
{
	if (inf_grow(&l->r, &l->cap, l->n + 1, sizeof(*l->r)))
		return -ENOMEM;
	l->r[l->n++] = *rec;
	return 0;
}

/*
 * Log the trace's events up to @limit (not included): 1 while there are
 * more to read, 0 when the lookahead can see no further, or -errno.
 */
static int inf_ahead_read(struct infer *in, uint64_t limit)
{
	while (in->ahead_at < limit && !in->ahead_end) {
		const struct mcr_event *ev;
		struct inf_arec rec = { .at = in->ahead_at };
		int cpu = -1;
		int ret = in->ahead.peek(in->ahead.ctx, in->ahead_at, &ev);

		if (ret < 0)
			return ret;
		if (!ret) {
			in->ahead_end = true;
			break;
		}
		in->ahead_at++;
		rec.ts = ev->ts;
		rec.id = ev->id;
		if (mcr_event_is_update(ev)) {
			rec.kind = INF_AREC_UPDATE;
			rec.val = sim_walk_abs(mcr_event_walk_val(ev));
			cpu = rec.val ? ev->cpu : -1;	/* no walk, no link */
		} else if (ev->kind == MCR_EV_LOCKED || ev->kind == MCR_EV_UNLOCK) {
			rec.kind = ev->kind == MCR_EV_LOCKED ? INF_AREC_LOCKED : INF_AREC_UNLOCK;
			cpu = ev->item;	/* the CPU whose trees the window flushes */
		}
		if (cpu >= 0 && (unsigned int)cpu < in->nr_possible) {
			ret = inf_alog_push(&in->alog[cpu], &rec);
			if (ret < 0)
				return ret;
		}
	}
	return !in->ahead_end && in->ahead_at < limit;
}

/* Node @nd at or below node @anc (handles of the base); @nd < 0: not known. */
static bool inf_below(const struct infer *in, int32_t anc, int32_t nd)
{
	uint32_t la = sim_node_level_at(in->s, anc);

	while (nd >= 0 && sim_node_level_at(in->s, nd) > la)
		nd = sim_node_parent_at(in->s, nd);
	return nd == anc;
}

/*
 * Record @i of @cpu's log, read ahead as far as @limit if it is not yet:
 * 1 and *@rec, 0 where the lookahead sees no further, or -errno.
 */
static int inf_alog_at(struct infer *in, unsigned int cpu, size_t i, uint64_t limit,
		       const struct inf_arec **rec)
{
	struct inf_alog *l = &in->alog[cpu];
	int ret;

	while (i == l->n) {
		ret = inf_ahead_read(in, limit);
		if (ret < 0)
			return ret;
		if (i == l->n && !ret)
			return 0;
	}
	*rec = &l->r[i];
	return (*rec)->at < limit;
}

/*
 * Does update @rec count toward node @nd's per-CPU counter: its memcg is at
 * or below @nd, or the base does not know it yet?  Its node in *@m (< 0:
 * not known).
 */
static bool inf_arec_below(const struct infer *in, int32_t nd, const struct inf_arec *rec,
			   int32_t *m)
{
	*m = sim_node_handle(in->s, rec->id);
	return *m < 0 || inf_below(in, nd, *m);
}

/*
 * Is (@id, @cpu) inert, no hypothesis holding more than @vmax (the top of
 * this file)?  @done: the events fed so far.  The verdict, and until when
 * it holds, in *@memo (inf_canon()).
 */
static int inf_inert(struct infer *in, uint64_t id, unsigned int cpu, int64_t vmax,
		     uint64_t done, int64_t *memo)
{
	uint64_t batch = sim_batch(in->s), acc = (uint64_t)vmax, until = UINT64_MAX, quiet = 0;
	uint64_t lock_ts = 0;
	uint64_t limit = done + INF_AHEAD_EVENTS;
	int32_t nd = sim_node_handle(in->s, id);
	bool on, open = false, covers = false;
	size_t i;
	int ret;

	*memo = -(int64_t)(done + INF_AHEAD_AGAIN);
	if (nd < 0 || vmax < 0 || acc >= batch)
		return 0;
	on = sim_pcpu_on_tree_at(in->s, nd, cpu);
	if (in->win && cpu == in->wcpu && inf_list_idx(in, id) != INF_NONE) {
		/*
		 * The open window visits it, but a hypothesis past that visit
		 * keeps what came after; the base visits it at the close, so
		 * no update before that links it for the next window.
		 */
		on = false;
		quiet = in->closing ? in->unlock_ts + INF_LATE_NS : UINT64_MAX;
	}
	for (i = in->alog[cpu].head; ; i++) {
		const struct inf_arec *rec;
		int32_t m;

		ret = inf_alog_at(in, cpu, i, limit, &rec);
		if (ret <= 0)
			return ret;	/* 0: its visit is past what the lookahead sees */
		if (until != UINT64_MAX && rec->ts > until) {
			/* until that window opens: past its visit, a hypothesis keeps what came after */
			*memo = (int64_t)(lock_ts < INT64_MAX ? lock_ts : INT64_MAX);
			return 1;
		}
		switch (rec->kind) {
		case INF_AREC_UPDATE:
			if (!inf_arec_below(in, nd, rec, &m))
				break;
			acc += rec->val;
			if (acc >= batch)
				return 0;
			if (m >= 0 && rec->ts > quiet)
				on = true;
			break;
		case INF_AREC_LOCKED:
			if (quiet == UINT64_MAX)
				quiet = rec->ts;	/* the open window's unlock was lost */
			if (until != UINT64_MAX)
				break;
			/* an earlier window of this CPU without its unlock: not counted on */
			m = sim_node_handle(in->s, rec->id);
			open = true;
			covers = on && m >= 0 && inf_below(in, m, nd);
			lock_ts = rec->ts;
			break;
		case INF_AREC_UNLOCK:
			if (quiet == UINT64_MAX) {	/* the open window's */
				quiet = rec->ts + INF_LATE_NS;
				break;
			}
			if (until == UINT64_MAX && open && covers)
				until = rec->ts + INF_LATE_NS;
			open = false;
			break;
		}
	}
}

/*
 * The open window's visit of (@id, @cpu) (the window's CPU, a memcg on its
 * visit list) erases what a hypothesis before that visit holds: is it inert
 * for those, no hypothesis among them holding more than @vmax?  Its updates
 * up to the close count, late ones included.
 */
static int inf_inert_pre(struct infer *in, uint64_t id, unsigned int cpu, int64_t vmax,
			 uint64_t done)
{
	uint64_t batch = sim_batch(in->s), acc = (uint64_t)vmax, limit = done + INF_AHEAD_EVENTS;
	uint64_t until = in->closing ? in->unlock_ts + INF_LATE_NS : UINT64_MAX;
	int32_t nd = sim_node_handle(in->s, id);
	size_t i;
	int ret;

	if (nd < 0 || vmax < 0 || acc >= batch)
		return 0;
	for (i = in->alog[cpu].head; ; i++) {
		const struct inf_arec *rec;
		int32_t m;

		ret = inf_alog_at(in, cpu, i, limit, &rec);
		if (ret <= 0)
			return ret;
		if (rec->ts > until)
			return 1;
		if (rec->kind == INF_AREC_UNLOCK && until == UINT64_MAX)
			until = rec->ts + INF_LATE_NS;
		else if (rec->kind == INF_AREC_LOCKED && until == UINT64_MAX)
			return 0;	/* the open window's unlock was lost */
		if (rec->kind != INF_AREC_UPDATE || !inf_arec_below(in, nd, rec, &m))
			continue;
		acc += rec->val;
		if (acc >= batch)
			return 0;
	}
}

/* Where the open window visits the counter @key (its own CPU's): a list index, or INF_NONE. */
static size_t inf_canon_vis(const struct infer *in, uint64_t key)
{
	return in->win && inf_key_cpu(key) == in->wcpu ? inf_list_idx(in, inf_key_id(key)) :
							  INF_NONE;
}

/*
 * Each per-CPU key some hypothesis holds into @m, with the greatest value
 * held: in in->canon by hypotheses whose entry lasts until a later window,
 * in in->canon_pre by those the open window has still to visit it for.
 */
static int inf_canon_keys(struct infer *in)
{
	struct idmap_ent *e;
	uint32_t pos;
	size_t i;
	int ret = idmap_reset(&in->canon, 64);

	if (!ret)
		ret = idmap_reset(&in->canon_pre, 64);
	for (i = 0; !ret && i < in->nr_h; i++)
		for (pos = 0; !ret && (e = idmap_next(&in->h[i].e, &pos)); ) {
			size_t v;
			struct idmap *m;

			if (inf_key_cpu(e->key) == INF_ATOMIC)
				continue;
			v = inf_canon_vis(in, e->key);
			m = v != INF_NONE && in->h[i].p <= v ? &in->canon_pre : &in->canon;
			if (e->val > idmap_get(m, e->key, INT64_MIN))
				ret = idmap_put(m, e->key, e->val);
		}
	return ret;
}

/*
 * Past the cap (or always, canon_always): every per-CPU counter some
 * hypothesis holds that is inert goes from every hypothesis that holds it
 * (from those the open window has still to visit it for, where only they
 * are bound).  The caller hashes them again and merges the twins.
 * Return: how many counters went, or -errno.
 */
int inf_canon(struct infer *in)
{
	uint64_t done, gone[64];
	size_t i, k, nr = 0;
	struct idmap_ent *e;
	uint32_t pos;
	int ret;

	if (!in->ahead.peek || !in->agg)
		return 0;
	if (!in->alog) {
		in->alog = calloc(in->nr_possible, sizeof(*in->alog));
		if (!in->alog)
			return -ENOMEM;
	}
	/* the event being fed may not be taken yet (a close before its update): counted */
	done = in->ahead.done(in->ahead.ctx);
	if (done)
		done--;
	if (in->ahead_at < done)
		in->ahead_at = done;	/* events passed over unread: not asked about */
	for (i = 0; i < in->nr_possible; i++) {
		struct inf_alog *l = &in->alog[i];

		while (l->head < l->n && l->r[l->head].at < done)
			l->head++;
		if (l->head && l->head >= l->n / 2) {
			memmove(l->r, l->r + l->head, (l->n - l->head) * sizeof(*l->r));
			l->n -= l->head;
			l->head = 0;
		}
	}
	/* after a look that found nothing, the next waits, twice as long each time */
	if (done < in->canon_next)
		return 0;
	ret = inf_canon_keys(in);
	if (ret)
		return ret;
	if (idmap_count(&in->canon_memo) > (1u << 16) && idmap_reset(&in->canon_memo, 64))
		return -ENOMEM;
	/* the verdicts: each value becomes 1 for an inert key, 0 for another */
	for (pos = 0; (e = idmap_next(&in->canon, &pos)); ) {
		uint64_t id = inf_key_id(e->key);
		unsigned int cpu = inf_key_cpu(e->key);
		int32_t nd = sim_node_handle(in->s, id);
		int64_t vmax = e->val, memo = idmap_get(&in->canon_memo, e->key, INT64_MIN);

		if (memo != INT64_MIN && (memo >= 0 ? (uint64_t)memo > in->last_ts :
					  (uint64_t)-memo > done)) {
			e->val = memo >= 0;
			nr += memo >= 0;
			continue;
		}
		/* past the open window's visit, what a hypothesis reads without an entry is 0 */
		if (nd >= 0 && inf_canon_vis(in, e->key) == INF_NONE &&
		    (int64_t)sim_pcpu_stats_updates_at(in->s, nd, cpu) > vmax)
			vmax = sim_pcpu_stats_updates_at(in->s, nd, cpu);
		ret = inf_inert(in, id, cpu, vmax, done, &memo);
		if (ret < 0)
			return ret;
		e->val = ret;
		nr += (size_t)ret;
		if (idmap_put(&in->canon_memo, e->key, memo))
			return -ENOMEM;
	}
	for (pos = 0; (e = idmap_next(&in->canon_pre, &pos)); ) {
		uint64_t id = inf_key_id(e->key);
		unsigned int cpu = inf_key_cpu(e->key);
		int32_t nd = sim_node_handle(in->s, id);
		int64_t vmax = e->val;

		if (nd >= 0 && (int64_t)sim_pcpu_stats_updates_at(in->s, nd, cpu) > vmax)
			vmax = sim_pcpu_stats_updates_at(in->s, nd, cpu);
		ret = inf_inert_pre(in, id, cpu, vmax, done);
		if (ret < 0)
			return ret;
		e->val = ret;
		nr += (size_t)ret;
	}
	if (!nr) {
		in->canon_wait = in->canon_wait ? 2 * in->canon_wait : INF_CANON_WAIT;
		if (in->canon_wait > INF_CANON_WAIT_MAX)
			in->canon_wait = INF_CANON_WAIT_MAX;
		in->canon_next = done + in->canon_wait;
		return 0;
	}
	in->canon_wait = 0;
	for (i = 0; i < in->nr_h; i++) {
		struct inf_hyp *h = &in->h[i];

		do {	/* a full buffer: delete those and scan again */
			for (k = 0, pos = 0; k < 64 && (e = idmap_next(&h->e, &pos)); ) {
				size_t v;

				if (inf_key_cpu(e->key) == INF_ATOMIC)
					continue;
				v = inf_canon_vis(in, e->key);
				if (idmap_get(v != INF_NONE && h->p <= v ? &in->canon_pre : &in->canon,
					      e->key, 0))
					gone[k++] = e->key;
			}
			for (pos = 0; pos < k; pos++)
				inf_ent_del(h, gone[pos]);
		} while (k == 64);
	}
	in->canon_keys += nr;
	in->canon_runs++;
	return (int)(nr < INT32_MAX ? nr : INT32_MAX);
}
