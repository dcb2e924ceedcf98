// SPDX-License-Identifier: GPL-2.0
/*
 * load.c - the report's model loaded once from its databases (model.h): each
 * host's runs, lines and validation here, its costs (costs.c) and its verdict
 * (verdict.c) through their loaders, and the whole freed again.  The top of
 * cli/report/'s loading: model.c, costs.c and verdict.c never call back here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

static int add_row(const struct db_lag_row *row, void *ctx)
{
	struct report_host *h = ctx;
	struct report_run *ru = report_run_by_id(h, row->run_id);
	struct report_line *l;
	int i;

	if (!ru) {
		ru = report_host_add_run(h);
		if (!ru)
			return -ENOMEM;
		ru->id = row->run_id;
		ru->rank = sim_policy_rank(row->policy);
		ru->batch = row->batch_size;
		ru->cpus = row->nr_cpus;
		ru->policy = strdup(row->policy);
		ru->flush_model = strdup(row->flush_model ? row->flush_model : "-");
		if (!ru->policy || !ru->flush_model)
			return -ENOMEM;
	}
	l = report_host_add_line(h);
	if (!l)
		return -ENOMEM;
	*l = (struct report_line){
		.cgroup = strdup(row->cgroup), .item = strdup(row->item), .run_id = row->run_id,
		.cgroup_id = row->cgroup_id, .level = row->level,
		.events = !strcmp(row->unit, "events"), .reads = row->reads,
		.stale_reads = row->stale_reads, .stranded_episodes = row->stranded_episodes,
		.max_pending = row->max_pending, .max_read = row->max_read_error,
		.p99_read = row->p99_read_error, .max_visible = row->max_visible_error,
		.mean_read = row->mean_read_error, .mean_visible = row->mean_visible_error,
		.age_ms = row->max_error_age_ms, .stranded_ms = row->stranded_ms,
		.split = row->has_settled,
		.max_settled = row->has_settled ? row->max_settled_error : row->max_visible_error,
		.max_flush = row->max_flush_error,
		.noticeable = row->has_settled ? row->noticeable_episodes : row->stranded_episodes,
	};
	if (!l->cgroup || !l->item)
		return -ENOMEM;
	statline_names(l->item, &l->names);	/* -ENOENT: none, NULLs */
	if (!(h->need & REPORT_NEED_TEXT))
		return 0;
	for (i = 0; i < DB_LAG_NR_COLS; i++)
		if (row->text[i] && !(l->text[i] = strdup(row->text[i])))
			return -ENOMEM;
	if (row->batch_text && !(l->text[REPORT_TEXT_BATCH] = strdup(row->batch_text)))
		return -ENOMEM;
	if (row->cpus_text && !(l->text[REPORT_TEXT_CPUS] = strdup(row->cpus_text)))
		return -ENOMEM;
	return 0;
}

/* ---- validation ---- */

static int find_validate(const struct db_run_info *r, void *ctx)
{
	struct report_validation *v = ctx;

	if (!strcmp(r->kind, "validate")) {
		v->run_id = r->run_id;
		snprintf(v->policy, sizeof(v->policy), "%s", r->policy);
		snprintf(v->flush_model, sizeof(v->flush_model), "%s", r->flush_model);
	}
	return 0;
}

static int count_cause(const struct db_mismatch *mm, void *ctx)
{
	struct report_validation *v = ctx;
	const char *name = mm->cause ? mm->cause : "(none named)";
	int i;

	v->total++;
	for (i = 0; i < REPORT_MAX_CAUSES && v->cause[i]; i++)
		if (!strcmp(v->cause[i], name)) {
			v->nr_cause[i]++;
			return 0;
		}
	if (i == REPORT_MAX_CAUSES) {
		v->other++;
		return 0;
	}
	v->cause[i] = strdup(name);
	if (!v->cause[i])
		return -ENOMEM;
	v->nr_cause[i] = 1;
	return 0;
}

static int validation_load(struct report_host *h)
{
	struct report_validation *v = &h->val;
	char *hist = NULL;
	int err;

	err = db_runs_foreach(h->db, find_validate, v);
	if (err || !v->run_id)
		return err;
	err = db_validation_get(h->db, v->run_id, &v->v, &hist);
	free(hist);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	v->stored = true;
	return db_mismatches_foreach(h->db, v->run_id, 100000, count_cause, v);
}

/* ---- memory.stat as printed ---- */

static int add_printed(const struct db_stat_check_worst *w, void *ctx)
{
	struct report_statlog *sl = ctx;
	struct report_printed *p;

	if (sl->nr == sl->cap) {
		size_t ncap = sl->cap ? sl->cap * 2 : 16;
		struct report_printed *n = realloc(sl->lines, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sl->lines = n;
		sl->cap = ncap;
	}
	p = &sl->lines[sl->nr++];
	*p = (struct report_printed){
		.cgroup_id = w->cgroup_id, .cgroup = strdup(w->cgroup), .name = strdup(w->name),
		.bytes = !strcmp(w->unit, "bytes"), .per = w->per,
		.printed_error = w->printed_error, .read = w->read, .pairs = w->pairs,
		.within2 = w->within2,
	};
	if (!p->cgroup || !p->name)
		return -ENOMEM;
	if (statline_item(p->name, &p->item))
		p->item = NULL;
	return 0;
}

/* The latest validate run's comparison of the logged reads; none: have false. */
static int statlog_load(struct report_host *h)
{
	struct report_statlog *sl = &h->statlog;
	int err = db_stat_check_summary(h->db, &sl->sum);

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	sl->have = true;
	err = db_stat_check_worst_foreach(h->db, sl->sum.run_id, add_printed, sl);
	return err == -ENOENT ? 0 : err;
}

static void statlog_free(struct report_statlog *sl)
{
	size_t i;

	for (i = 0; i < sl->nr; i++) {
		free(sl->lines[i].cgroup);
		free(sl->lines[i].name);
	}
	free(sl->lines);
	memset(sl, 0, sizeof(*sl));
}

/* ---- a host ---- */

static int host_load(struct report_host *h, const struct report_source *src,
		     const struct report_load *o)
{
	struct db_lag_filter f = {
		.runs = o->nr_runs ? o->runs : NULL, .nr_runs = o->nr_runs, .cgroup = o->cgroup,
		.worst_only = o->worst,
	};
	int64_t v;
	int i, err;

	h->db = src->db;
	h->file = src->file;
	h->need = o->need;
	h->page_size = 4096;
	h->host = report_host_name(h->db, h->file);
	if (!h->host)
		return -ENOMEM;
	db_meta_get_int(h->db, "page_size", &h->page_size);
	cli_trace_own(h->db, &h->batch, &h->online);
	h->have_t0 = db_meta_get_int(h->db, "capture_start_ns", &v) == 0;
	h->t0 = h->have_t0 ? v : 0;
	h->rot_index = db_meta_get_int(h->db, "rotation_index", &v) == 0 && v >= 0 ? v : -1;
	if (h->rot_index >= 0 && db_meta_get(h->db, "rotation_prefix", &h->rot_prefix) < 0)
		h->rot_prefix = NULL;
	/* db_open() saw 0 <= t0 <= t1 when both are there: t1 - t0 cannot overflow */
	if (db_meta_get_int(h->db, "capture_end_ns", &v) < 0)
		v = h->t0 > INT64_MAX - 1000000000 ? INT64_MAX : h->t0 + 1000000000;
	h->t1 = v;
	if ((!o->cost_only || (o->need & REPORT_NEED_VERDICT)) && (o->need & REPORT_NEED_LINES)) {
		err = db_lag_foreach(h->db, &f, add_row, h);
		if (err)
			return err;
	}
	err = report_host_finish(h);
	if (err)
		return err;
	for (i = 0; i < h->nr_runs && (o->need & REPORT_NEED_COUNTERS); i++) {
		err = db_run_counters_get(h->db, h->runs[i].id, &h->runs[i].counters);
		if (err && err != -ENOENT)
			return err;
		h->runs[i].have_counters = !err;
	}
	if (o->cost_only || (o->need & REPORT_NEED_COSTS)) {
		err = report_costs_load(h, o);
		if (err)
			return err;
	}
	if (o->need & REPORT_NEED_VALIDATION) {
		err = validation_load(h);
		if (err)
			return err;
	}
	if ((o->need & REPORT_NEED_STATLOG) && !o->cost_only) {
		err = statlog_load(h);
		if (err)
			return err;
	}
	if (o->need & REPORT_NEED_VERDICT)
		return report_verdict_load(h);
	return 0;
}

/* Each host's label: its name, with its file where another host has the same name. */
static int host_labels(struct report_model *m)
{
	int i, j;

	for (i = 0; i < m->nr_hosts; i++) {
		struct report_host *h = &m->hosts[i];
		bool same = false;

		for (j = 0; j < m->nr_hosts; j++)
			same |= j != i && !strcmp(m->hosts[j].host, h->host);
		if (same ? asprintf(&h->label, "%s (%s)", h->host, h->file) < 0 :
			   !(h->label = strdup(h->host))) {
			h->label = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The files of one --rotate series (one host, one rotation_prefix) read as
 * one timeline: where its first file stands, all of them by rotation_index
 * (then start); every other database keeps its place.
 */
struct host_order {
	int		group;		/* the place of its series' first file, or its own */
	int64_t		index, t0;
	int		pos;
};

static bool same_series(const struct report_host *a, const struct report_host *b)
{
	return a->rot_index >= 0 && b->rot_index >= 0 && !strcmp(a->host, b->host) &&
	       !strcmp(a->rot_prefix ? a->rot_prefix : "", b->rot_prefix ? b->rot_prefix : "");
}

static int host_order_cmp(const void *x, const void *y)
{
	const struct host_order *a = x, *b = y;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->pos - b->pos;
}

static int hosts_order(struct report_model *m)
{
	struct host_order *ord = calloc((size_t)m->nr_hosts, sizeof(*ord));
	struct report_host *sorted;
	int i, j;

	if (!ord)
		return -ENOMEM;
	for (i = 0; i < m->nr_hosts; i++) {
		ord[i] = (struct host_order){ i, 0, m->hosts[i].t0, i };
		if (m->hosts[i].rot_index < 0)
			continue;
		m->rotation = true;
		ord[i].index = m->hosts[i].rot_index;
		for (j = 0; j < i; j++)
			if (same_series(&m->hosts[j], &m->hosts[i])) {
				ord[i].group = ord[j].group;
				break;
			}
	}
	if (!m->rotation) {
		free(ord);
		return 0;
	}
	qsort(ord, (size_t)m->nr_hosts, sizeof(*ord), host_order_cmp);
	sorted = malloc((size_t)m->nr_hosts * sizeof(*sorted));
	if (!sorted) {
		free(ord);
		return -ENOMEM;
	}
	for (i = 0; i < m->nr_hosts; i++)
		sorted[i] = m->hosts[ord[i].pos];
	memcpy(m->hosts, sorted, (size_t)m->nr_hosts * sizeof(*sorted));
	free(sorted);
	free(ord);
	return 0;
}

int report_model_load(struct report_model *m, const struct report_source *src, int nr,
		      const struct report_load *o)
{
	int i, err = 0;

	memset(m, 0, sizeof(*m));
	m->o = *o;
	m->hosts = calloc(nr ? (size_t)nr : 1, sizeof(*m->hosts));
	if (!m->hosts)
		return -ENOMEM;
	m->nr_hosts = nr;
	for (i = 0; i < nr && !err; i++) {
		err = host_load(&m->hosts[i], &src[i], o);
		m->grid |= m->hosts[i].grid;
		m->statlog |= m->hosts[i].statlog.have;
		m->failed = i;
	}
	if (!err)
		err = hosts_order(m);
	return err ?: host_labels(m);
}

void report_host_free(struct report_host *h)
{
	size_t i;
	int j;

	for (i = 0; i < h->nr_lines; i++) {
		free(h->lines[i].cgroup);
		free(h->lines[i].item);
		for (j = 0; j < DB_LAG_NR_COLS + 2; j++)
			free(h->lines[i].text[j]);
	}
	free(h->lines);
	for (j = 0; j < h->nr_runs; j++) {
		free(h->runs[j].policy);
		free(h->runs[j].flush_model);
	}
	free(h->runs);
	for (j = 0; j < REPORT_MAX_CAUSES; j++)
		free(h->val.cause[j]);
	report_costs_free(&h->costs);
	report_verdict_free(&h->verdict);
	free(h->host);
	free(h->label);
	free(h->rot_prefix);
	statlog_free(&h->statlog);
	memset(h, 0, sizeof(*h));
}

void report_model_free(struct report_model *m)
{
	int i;

	for (i = 0; i < m->nr_hosts; i++)
		report_host_free(&m->hosts[i]);
	free(m->hosts);
	memset(m, 0, sizeof(*m));
}
