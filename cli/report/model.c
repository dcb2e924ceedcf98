// SPDX-License-Identifier: GPL-2.0
/*
 * model.c - the report's model (model.h): a host's runs and lines as they are
 * added and put in order, and report_write(), which walks a loaded model
 * through a format's ops.  load.c fills it from the databases.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grow.h"
#include "model.h"

char *report_host_name(struct db *db, const char *file)
{
	const char *base = strrchr(file, '/');
	char *v = NULL, *name = NULL;

	if (db_meta_get(db, "host", &v) >= 0 && v && *v)
		return v;
	free(v);
	v = NULL;
	if (db_meta_get(db, "uname", &v) >= 0 && v && sscanf(v, "%*s %ms", &name) == 1) {
		free(v);
		return name;
	}
	free(v);
	v = NULL;
	if (db_meta_get(db, "source", &v) >= 0 && v && !strncmp(v, "synth:", 6))
		return v;
	free(v);
	return strdup(base ? base + 1 : file);
}

/* ---- runs and lines ---- */

struct report_run *report_host_add_run(struct report_host *h)
{
	struct report_run *n = realloc(h->runs, (size_t)(h->nr_runs + 1) * sizeof(*n));

	if (!n)
		return NULL;
	h->runs = n;
	n = &h->runs[h->nr_runs++];
	memset(n, 0, sizeof(*n));
	return n;
}

struct report_line *report_host_add_line(struct report_host *h)
{
	struct report_line *l;

	if (mcr_grow((void **)&h->lines, &h->cap, h->nr_lines + 1, sizeof(*h->lines)))
		return NULL;
	l = &h->lines[h->nr_lines++];
	memset(l, 0, sizeof(*l));
	return l;
}

struct report_run *report_run_by_id(const struct report_host *h, int64_t id)
{
	int i;

	for (i = 0; i < h->nr_runs; i++)
		if (h->runs[i].id == id)
			return &h->runs[i];
	return NULL;
}

static int run_cmp(const void *a, const void *b)
{
	const struct report_run *x = a, *y = b;

	return report_rank_cmp(x->rank, x->id, y->rank, y->id);
}

int report_host_finish(struct report_host *h)
{
	size_t i;
	int j, k;

	if (h->nr_runs && !h->pass)	/* a pass's runs keep its order */
		qsort(h->runs, (size_t)h->nr_runs, sizeof(*h->runs), run_cmp);
	if (!h->pass)
		for (j = 0; j < h->nr_runs; j++)
			h->grid |= report_is_grid_point(h->runs[j].batch, h->runs[j].cpus, h->batch,
							h->online);
	for (j = 0; j < h->nr_runs; j++)
		report_run_name(h->runs[j].name, sizeof(h->runs[j].name), h->runs[j].policy,
				h->runs[j].batch, h->runs[j].cpus, h->grid);
	for (j = 0; j < h->nr_runs; j++)
		for (k = 0; k < h->nr_runs; k++)
			if (k != j && !strcmp(h->runs[k].name, h->runs[j].name))
				h->runs[j].repeated = true;
	for (i = 0; i < h->nr_lines; i++) {
		h->lines[i].run = report_run_by_id(h, h->lines[i].run_id);
		if (!h->lines[i].run)
			return -EINVAL;
	}
	return 0;
}

/* ---- writing ---- */

int report_write(FILE *f, const struct report_model *m, const struct report_ops *ops)
{
	struct report_out o = { .f = f, .m = m };
	int i, err = 0;

	if (ops->begin)
		err = ops->begin(&o);
	for (i = 0; i < m->nr_hosts && !err; i++) {
		const struct report_host *h = &m->hosts[i];

		if (ops->host)
			err = ops->host(&o, h, i);
		if (!err && ops->lines && !m->o.cost_only)
			err = ops->lines(&o, h, i);
		if (!err && ops->costs && (m->o.cost_only || ops->costs_always))
			err = ops->costs(&o, h, i);
		if (!err && ops->validation)
			err = ops->validation(&o, h, i);
		if (!err && ops->host_end)
			err = ops->host_end(&o, h, i);
	}
	if (!err && ops->end)
		err = ops->end(&o);
	return err;
}

/* ---- memory.stat's names ---- */

const char *report_v1_line(char *buf, size_t len, const struct report_line *l)
{
	if (!l->names.v1)
		return NULL;
	snprintf(buf, len, "%s%s", l->names.v1_total ? "total_" : "", l->names.v1);
	return buf;
}

char *report_line_names(char *buf, size_t len, const struct report_line *l)
{
	char v1[REPORT_NAME_LEN];

	if (l->names.v1 && l->names.v2)
		snprintf(buf, len, " (v1 %s, v2 %s)", report_v1_line(v1, sizeof(v1), l),
			 l->names.v2);
	else if (l->names.v1)
		snprintf(buf, len, " (v1 %s)", report_v1_line(v1, sizeof(v1), l));
	else if (l->names.v2)
		snprintf(buf, len, " (v2 %s)", l->names.v2);
	else
		*buf = '\0';
	return buf;
}

const struct report_printed *report_line_printed(const struct report_host *h,
						 const struct report_line *l)
{
	size_t i;

	for (i = 0; i < h->statlog.nr; i++) {
		const struct report_printed *p = &h->statlog.lines[i];

		if (p->cgroup_id == l->cgroup_id && p->item && !strcmp(p->item, l->item))
			return p;
	}
	return NULL;
}
