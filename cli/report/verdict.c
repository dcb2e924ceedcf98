// SPDX-License-Identifier: GPL-2.0
/*
 * verdict.c - the report's verdict (model.h): did readers of a host's
 * memory.stat get stale numbers under the walk policy its traced kernel runs
 * (replay_policy_for_trace(): synthetic traces break, 6.16+ break, 6.8-6.15
 * legacy), in which cgroups, how often and how far off; what continue would
 * have given them, and at what cost.  Read from the model's lines and cost
 * rows (nothing more from the database than the trace's source and kernel
 * release), and said in plain sentences that the text and HTML ops share.
 *
 * The run judged is the traced policy's at the trace's own batch and CPUs
 * (a grid's other points are what-ifs), the latest one reported; continue's
 * is taken at the same point.  A cgroup is flagged when a read of it was
 * stale (skipped while stranded) under that run: a stranded episode no
 * reader met raises no flag.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "model.h"
#include "replay.h"

/* The latest run of @policy at the trace's own batch and CPUs; NULL none. */
static const struct report_run *own_run(const struct report_host *h, const char *policy)
{
	const struct report_run *best = NULL;
	int i;

	for (i = 0; i < h->nr_runs; i++) {
		const struct report_run *r = &h->runs[i];

		if (!strcmp(r->policy, policy) &&
		    !report_is_grid_point(r->batch, r->cpus, h->batch, h->online) &&
		    (!best || r->id > best->id))
			best = r;
	}
	return best;
}

static const struct report_cost *cost_of(const struct report_host *h,
					 const struct report_run *r)
{
	size_t i;

	for (i = 0; r && i < h->costs.nr; i++)
		if (h->costs.rows[i].r.run_id == r->id)
			return &h->costs.rows[i];
	return NULL;
}

/* Lines [from, to) of one cgroup: @r's worst, a page line before an event line. */
static const struct report_line *worst_line(const struct report_host *h, size_t from, size_t to,
					    const struct report_run *r)
{
	const struct report_line *w = NULL;
	size_t i;

	for (i = from; r && i < to; i++) {
		const struct report_line *l = &h->lines[i];

		if (l->run != r)
			continue;
		if (!w || (w->events && !l->events) ||
		    (w->events == l->events && (l->max_read > w->max_read ||
						(l->max_read == w->max_read &&
						 l->max_settled > w->max_settled))))
			w = l;
	}
	return w;
}

int report_verdict_load(struct report_host *h)
{
	struct report_verdict *v = &h->verdict;
	struct replay_trace t = { 0 };
	const struct sim_policy *pol;
	char *source = NULL;
	size_t i, j;

	if (db_meta_get(h->db, "source", &source) < 0) {
		free(source);
		source = NULL;
	}
	if (db_meta_get(h->db, "kernel_release", &v->kernel) < 0) {
		free(v->kernel);
		v->kernel = NULL;
	}
	t.source = source;
	t.kernel_release = v->kernel;
	pol = replay_policy_for_trace(&t);
	free(source);
	if (!pol)
		return 0;
	v->policy = pol->name;
	v->run = own_run(h, v->policy);
	v->cont = own_run(h, "continue");
	v->run_cost = cost_of(h, v->run);
	v->cont_cost = cost_of(h, v->cont);
	if (!v->run)
		return 0;
	v->flags = calloc(h->nr_lines ? h->nr_lines : 1, sizeof(*v->flags));
	if (!v->flags)
		return -ENOMEM;
	/* lines come in tree order: a cgroup's lines are adjacent */
	for (i = 0; i < h->nr_lines; i = j) {
		const struct report_line *w;

		for (j = i; j < h->nr_lines && h->lines[j].cgroup_id == h->lines[i].cgroup_id &&
		     !strcmp(h->lines[j].cgroup, h->lines[i].cgroup); j++)
			;
		w = worst_line(h, i, j, v->run);
		if (w && w->stale_reads)
			v->flags[v->nr_flags++] = (struct report_flag){
				.worst = w, .cont = worst_line(h, i, j, v->cont),
			};
	}
	return 0;
}

void report_run_sum(const struct report_host *h, const struct report_run *r, bool whole,
		    struct report_run_sum *s)
{
	const struct report_cost *c = cost_of(h, r);
	size_t i, j;

	memset(s, 0, sizeof(*s));
	if (!r)
		return;
	for (i = 0; i < h->nr_lines; i = j) {
		const struct report_line *w;

		for (j = i; j < h->nr_lines && h->lines[j].cgroup_id == h->lines[i].cgroup_id &&
		     !strcmp(h->lines[j].cgroup, h->lines[i].cgroup); j++)
			;
		w = worst_line(h, i, j, r);
		if (!w)
			continue;
		/* a cgroup's reads are repeated on each of its lines */
		s->stale_cgroups += w->stale_reads > 0;
		s->stale_reads += w->stale_reads;
		s->reads += w->reads;
		if (!s->worst || (s->worst->events && !w->events) ||
		    (s->worst->events == w->events && w->max_read > s->worst->max_read))
			s->worst = w;
	}
	if (whole && c) {
		s->stale_reads = c->r.stale_reads;
		s->reads = c->r.reads;
	}
}

void report_verdict_free(struct report_verdict *v)
{
	free(v->flags);
	free(v->kernel);
	memset(v, 0, sizeof(*v));
}

size_t report_model_stale(const struct report_model *m)
{
	size_t n = 0;
	int i;

	for (i = 0; i < m->nr_hosts; i++)
		n += m->hosts[i].verdict.nr_flags;
	return n;
}

/* ---- sentences ---- */

char *report_verdict_head(char *buf, size_t len, const struct report_host *h, bool named)
{
	const struct report_verdict *v = &h->verdict;
	int n = named ? snprintf(buf, len, "Verdict for %s (%s): ", h->host, h->file) : 0;

	if (n < 0 || (size_t)n >= len)
		return buf;
	buf += n;
	len -= (size_t)n;
	if (!v->policy)
		snprintf(buf, len, "%che traced kernel's walk policy is unknown (kernel %s): no "
			 "verdict.", named ? 't' : 'T', v->kernel ? v->kernel : "unknown");
	else if (!v->run)
		snprintf(buf, len, "%co run of %s, the traced kernel's policy, at the trace's own "
			 "batch and CPUs in this report: no verdict.", named ? 'n' : 'N', v->policy);
	else if (!v->nr_flags)
		snprintf(buf, len, "%co stale read under %s, the traced kernel's policy.",
			 named ? 'n' : 'N', v->policy);
	else
		snprintf(buf, len, "%ceaders got stale memory.stat under %s, the traced kernel's "
			 "policy, in %zu cgroup%s:", named ? 'r' : 'R', v->policy, v->nr_flags,
			 v->nr_flags == 1 ? "" : "s");
	return buf - n;
}

/*
 * "1.94 GiB (508559 pages) of NR_FILE_PAGES (v1 total_cache, v2 file)",
 * "39 events of PGFAULT (v1 total_pgfault, v2 pgfault)"
 */
static const char *worst_str(char *buf, size_t len, const struct report_host *h,
			     const struct report_line *l)
{
	char a[REPORT_NUM_LEN], nm[2 * REPORT_NAME_LEN];

	report_line_names(nm, sizeof(nm), l);
	if (l->events)
		snprintf(buf, len, "%" PRIu64 " event%s of %s%s", l->max_read,
			 l->max_read == 1 ? "" : "s", l->item, nm);
	else
		snprintf(buf, len, "%s (%" PRIu64 " page%s) of %s%s",
			 report_pages_str(a, sizeof(a), (double)l->max_read, h->page_size),
			 l->max_read, l->max_read == 1 ? "" : "s", l->item, nm);
	return buf;
}

char *report_verdict_flag(char *buf, size_t len, const struct report_host *h,
			  const struct report_flag *fl)
{
	const struct report_line *w = fl->worst;
	char a[REPORT_SENTENCE_LEN / 2];

	snprintf(buf, len, "%s (id %" PRIu64 "): %" PRIu64 " of %" PRIu64 " reads stale; worst "
		 "read error %s", w->cgroup, w->cgroup_id, w->stale_reads, w->reads,
		 worst_str(a, sizeof(a), h, w));
	return buf;
}

char *report_verdict_cont(char *buf, size_t len, const struct report_host *h,
			  const struct report_flag *fl)
{
	const struct report_line *c = fl->cont;
	char a[REPORT_SENTENCE_LEN / 2];

	if (!h->verdict.cont)
		snprintf(buf, len, "under continue: not in this report (replay --policy continue)");
	else if (!c)
		snprintf(buf, len, "under continue: 0 of %" PRIu64 " reads stale; never wrong",
			 fl->worst->reads);
	else
		snprintf(buf, len, "under continue: %" PRIu64 " of %" PRIu64 " reads stale; worst "
			 "read error %s", c->stale_reads, c->reads, worst_str(a, sizeof(a), h, c));
	return buf;
}

char *report_verdict_cost(char *buf, size_t len, const struct report_host *h)
{
	const struct report_verdict *v = &h->verdict;
	const struct report_cost *r = v->run_cost, *c = v->cont_cost;
	double ur, uc;

	*buf = '\0';
	if (!v->nr_flags || !r || !c)
		return buf;
	ur = r->r.updates ? (double)r->r.updates : 1;
	uc = c->r.updates ? (double)c->r.updates : 1;
	if (h->costs.have_cal)
		snprintf(buf, len, "continue's cost: %+.2f ns per update against %s (%.2f against "
			 "%.2f), %.3g CPU s per s of trace against %.3g.",
			 c->e.ns_per_update - r->e.ns_per_update, v->policy, c->e.ns_per_update,
			 r->e.ns_per_update, c->e.cpu_s_per_s, r->e.cpu_s_per_s);
	else
		snprintf(buf, len, "continue's cost: %.2f walk steps per update against %s's %.2f, "
			 "%" PRIu64 " atomic adds against %" PRIu64 "; no calibration to price them "
			 "('memcg-replay calibrate --db FILE').", (double)c->r.walk_steps / uc,
			 v->policy, (double)r->r.walk_steps / ur, c->r.atomic_adds, r->r.atomic_adds);
	return buf;
}
