// SPDX-License-Identifier: GPL-2.0
/*
 * statchecks.c - the stat_read_checks table: validate's verdict on each
 * logged memory.stat line, written once per validate run and read back,
 * every row checked by its rules here, for the report's summary and worst
 * printed error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results.h"
#include "results_local.h"

static const char *const verdict_names[] = { "anchor", "exact", "within2", "off" };
static const char *const cause_names[] = { NULL, "decision", "window" };

int db_stat_verdict_parse(const char *s, enum db_stat_verdict *v)
{
	unsigned int i;

	for (i = 0; s && i < sizeof(verdict_names) / sizeof(verdict_names[0]); i++)
		if (!strcmp(s, verdict_names[i])) {
			*v = (enum db_stat_verdict)i;
			return 0;
		}
	return -EINVAL;
}

int db_stat_cause_parse(const char *s, enum db_stat_cause *c)
{
	unsigned int i;

	*c = DB_STAT_CAUSE_NONE;
	if (!s)
		return 0;
	for (i = 1; i < sizeof(cause_names) / sizeof(cause_names[0]); i++)
		if (!strcmp(s, cause_names[i])) {
			*c = (enum db_stat_cause)i;
			return 0;
		}
	return -EINVAL;
}

/* The rules a row must keep, on the way in (db_stat_check_put()) and out. */
int db_stat_check_rules(const struct db_stat_check *r)
{
	__int128 d = (__int128)r->printed - r->shown - (__int128)r->diff * r->per;
	int64_t ad = r->diff < 0 ? -r->diff : r->diff;

	if (r->per < 1 || !r->name || !r->unit || (strcmp(r->unit, "bytes") && strcmp(r->unit, "count")))
		return -EINVAL;
	if ((unsigned int)r->verdict > DB_STAT_OFF || (unsigned int)r->cause > DB_STAT_CAUSE_WINDOW)
		return -EINVAL;
	if ((r->verdict == DB_STAT_ANCHOR && (r->diff || r->shown != r->printed)) ||
	    (r->verdict == DB_STAT_EXACT && r->diff) ||
	    (r->verdict == DB_STAT_WITHIN2 && (ad < 1 || ad > 2)) ||
	    (r->verdict == DB_STAT_OFF && ad <= 2))
		return -EINVAL;
	if (r->cause && r->verdict != DB_STAT_OFF)
		return -EINVAL;
	if (d < -(__int128)(r->per / 2) || d > (__int128)(r->per / 2))
		return -EINVAL;
	return 0;
}

int db_stat_check_row(struct db *db, sqlite3_stmt *st, struct db_stat_check *r)
{
	static const char *const cols[] = {
		"run_id", "read", "cgroup_id", "name", "unit", "per", "request_ts", "printed",
		"shown", "truth", "printed_error", "diff", "verdict", "cause",
	};
	static const int ints[] = { 0, 1, 2, 5, 6, 7, 8, 9, 10, 11 };
	int64_t run = sqlite3_column_int64(st, 0), read = sqlite3_column_int64(st, 1);
	const char *name = (const char *)sqlite3_column_text(st, 3);
	unsigned int i;

#define DB_SC_BAD(col, fmt, ...)						\
	db_res_bad(db, "stat_read_checks row (run %" PRId64 ", read %" PRId64 ", %.64s): %s "\
		   fmt, run, read, name ? name : "NULL", cols[col], __VA_ARGS__)

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (sqlite3_column_type(st, ints[i]) != SQLITE_INTEGER)
			return DB_SC_BAD(ints[i], "'%.24s': not an integer",
					 sqlite3_column_text(st, ints[i]) ?
					 (const char *)sqlite3_column_text(st, ints[i]) : "NULL");
	*r = (struct db_stat_check){
		.read = read, .cgroup_id = (uint64_t)sqlite3_column_int64(st, 2), .name = name,
		.unit = (const char *)sqlite3_column_text(st, 4),
		.per = sqlite3_column_int64(st, 5),
		.request_ts = (uint64_t)sqlite3_column_int64(st, 6),
		.printed = sqlite3_column_int64(st, 7), .shown = sqlite3_column_int64(st, 8),
		.truth = sqlite3_column_int64(st, 9), .diff = sqlite3_column_int64(st, 11),
	};
	if (!name)
		return DB_SC_BAD(3, "%s", "NULL");
	if (!r->unit || (strcmp(r->unit, "bytes") && strcmp(r->unit, "count")))
		return DB_SC_BAD(4, "'%.24s': not 'bytes' or 'count'", r->unit ? r->unit : "NULL");
	if (r->per < 1)
		return DB_SC_BAD(5, "%" PRId64 ": below 1", r->per);
	if (db_stat_verdict_parse((const char *)sqlite3_column_text(st, 12), &r->verdict))
		return DB_SC_BAD(12, "'%.24s': not anchor, exact, within2 or off",
				 sqlite3_column_text(st, 12) ?
				 (const char *)sqlite3_column_text(st, 12) : "NULL");
	if (db_stat_cause_parse((const char *)sqlite3_column_text(st, 13), &r->cause))
		return DB_SC_BAD(13, "'%.24s': not decision, window or NULL",
				 (const char *)sqlite3_column_text(st, 13));
	if ((__int128)sqlite3_column_int64(st, 10) != (__int128)r->printed - r->truth)
		return DB_SC_BAD(10, "%" PRId64 ": not printed %" PRId64 " - truth %" PRId64,
				 (int64_t)sqlite3_column_int64(st, 10), r->printed, r->truth);
	if (db_stat_check_rules(r))
		return DB_SC_BAD(12, "'%s' with diff %" PRId64 ", printed %" PRId64 ", shown %"
				 PRId64 ", per %" PRId64 "%s: they disagree",
				 (const char *)sqlite3_column_text(st, 12), r->diff, r->printed,
				 r->shown, r->per, r->cause ? " and a cause" : "");
#undef DB_SC_BAD
	return 0;
}

int db_stat_checks_put(struct db *db, int64_t run_id, const char *flush_model,
		       const struct db_stat_check *rows, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		if (db_stat_check_rules(&rows[i]))
			return -EINVAL;
	err = db_prepare(db, "DELETE FROM stat_read_checks WHERE run_id = ?", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, run_id);
	err = db_step_reset(st);
	sqlite3_finalize(st);
	if (err)
		return err;
	err = db_prepare(db, "INSERT INTO stat_read_checks (run_id, flush_model, read, cgroup_id,"
			 " name, unit, per, request_ts, printed, shown, truth, printed_error, diff,"
			 " verdict, cause, placed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			 &st);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		const struct db_stat_check *r = &rows[i];

		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, flush_model, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, r->read);
		sqlite3_bind_int64(st, 4, (int64_t)r->cgroup_id);
		sqlite3_bind_text(st, 5, r->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, r->unit, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, r->per);
		sqlite3_bind_int64(st, 8, (int64_t)r->request_ts);
		sqlite3_bind_int64(st, 9, r->printed);
		sqlite3_bind_int64(st, 10, r->shown);
		sqlite3_bind_int64(st, 11, r->truth);
		sqlite3_bind_int64(st, 12, r->printed - r->truth);
		sqlite3_bind_int64(st, 13, r->diff);
		sqlite3_bind_text(st, 14, verdict_names[r->verdict], -1, SQLITE_STATIC);
		if (cause_names[r->cause])
			sqlite3_bind_text(st, 15, cause_names[r->cause], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 15);
		sqlite3_bind_int(st, 16, r->placed);
		err = db_step_reset(st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	return err;
}

/* The columns every reader selects, in the order db_stat_check_row() reads them. */
#define STAT_CHECK_COLS \
	"k.run_id, k.read, k.cgroup_id, k.name, k.unit, k.per, k.request_ts, k.printed, k.shown," \
	" k.truth, k.printed_error, k.diff, k.verdict, k.cause, k.flush_model," \
	" coalesce(c.path, '#' || k.cgroup_id)"

struct sum_ctx {
	struct db			*db;
	struct db_stat_check_summary	*out;
};

static int sum_row(sqlite3_stmt *st, void *arg)
{
	struct sum_ctx *c = arg;
	struct db_stat_check r;
	int err = db_stat_check_row(c->db, st, &r);

	if (err)
		return err;
	if (r.verdict == DB_STAT_ANCHOR)
		return 0;
	c->out->pairs++;
	c->out->exact += r.verdict == DB_STAT_EXACT;
	c->out->within2 += r.verdict == DB_STAT_EXACT || r.verdict == DB_STAT_WITHIN2;
	c->out->off += r.verdict == DB_STAT_OFF;
	c->out->off_decision += r.cause == DB_STAT_CAUSE_DECISION;
	c->out->off_window += r.cause == DB_STAT_CAUSE_WINDOW;
	return 0;
}

/* The latest validate run with rows into @run_id and its model; -ENOENT if none. */
static int stat_check_latest(struct db *db, int64_t *run_id, char *model, size_t len)
{
	sqlite3_stmt *st;
	int rc, err;

	if (!db_schema_has(db, "stat_read_checks"))
		return -ENOENT;
	err = db_prepare(db, "SELECT run_id, flush_model, (SELECT count(DISTINCT read) FROM"
			 " stat_read_checks k WHERE k.run_id = s.run_id) FROM stat_read_checks s"
			 " ORDER BY run_id DESC LIMIT 1", &st);
	if (err)
		return err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 1);

		*run_id = sqlite3_column_int64(st, 0);
		snprintf(model, len, "%s", m ? m : "");
		err = sqlite3_column_int(st, 2);
	} else {
		err = rc == SQLITE_DONE ? -ENOENT : db_err(rc);
	}
	sqlite3_finalize(st);
	return err;
}

int db_stat_check_summary(struct db *db, struct db_stat_check_summary *out)
{
	struct sum_ctx c = { db, out };
	sqlite3_stmt *st;
	int err;

	memset(out, 0, sizeof(*out));
	if (db->older)
		return -MCR_E_OLDER;
	err = stat_check_latest(db, &out->run_id, out->flush_model, sizeof(out->flush_model));
	if (err < 0)
		return err;
	out->reads = (uint64_t)err;
	err = db_prepare(db, "SELECT " STAT_CHECK_COLS " FROM stat_read_checks k LEFT JOIN cgroups c"
			 " ON c.id = k.cgroup_id WHERE k.run_id = ? ORDER BY k.read, k.name", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, out->run_id);
	return db_stmt_rows(st, sum_row, &c);
}

struct worst_ctx {
	struct db			*db;
	int				(*fn)(const struct db_stat_check_worst *w, void *ctx);
	void				*ctx;
	struct db_stat_check_worst	w;
	char				*cgroup, *name, *unit;
	bool				have, have_err;
};

static int worst_emit(struct worst_ctx *c)
{
	int err = 0;

	if (c->have)
		err = c->fn(&c->w, c->ctx);
	free(c->cgroup);
	free(c->name);
	free(c->unit);
	c->cgroup = c->name = c->unit = NULL;
	c->have = c->have_err = false;
	return err;
}

static int worst_row(sqlite3_stmt *st, void *arg)
{
	struct worst_ctx *c = arg;
	struct db_stat_check r;
	int64_t pe;
	int err = db_stat_check_row(c->db, st, &r);

	if (err)
		return err;
	if (!c->have || c->w.cgroup_id != r.cgroup_id || strcmp(c->name, r.name)) {
		err = worst_emit(c);
		if (err)
			return err;
		c->cgroup = strdup((const char *)sqlite3_column_text(st, 15));
		c->name = strdup(r.name);
		c->unit = strdup(r.unit);
		if (!c->cgroup || !c->name || !c->unit)
			return -ENOMEM;
		c->w = (struct db_stat_check_worst){ .cgroup_id = r.cgroup_id, .cgroup = c->cgroup,
						     .name = c->name, .unit = c->unit,
						     .per = r.per };
		c->have = true;
	}
	if (r.verdict == DB_STAT_ANCHOR)
		return 0;
	c->w.pairs++;
	c->w.within2 += r.verdict != DB_STAT_OFF;
	pe = r.printed - r.truth;
	if (!c->have_err || llabs(pe) > llabs(c->w.printed_error)) {
		c->w.printed_error = pe;
		c->w.read = r.read;
		c->w.request_ts = r.request_ts;
		c->have_err = true;
	}
	return 0;
}

int db_stat_check_worst_foreach(struct db *db, int64_t run_id,
				int (*fn)(const struct db_stat_check_worst *w, void *ctx),
				void *ctx)
{
	struct worst_ctx c = { .db = db, .fn = fn, .ctx = ctx };
	sqlite3_stmt *st;
	int err, ret;

	if (db->older)
		return -MCR_E_OLDER;
	if (!db_schema_has(db, "stat_read_checks"))
		return -ENOENT;
	err = db_prepare(db, "SELECT " STAT_CHECK_COLS " FROM stat_read_checks k LEFT JOIN cgroups c"
			 " ON c.id = k.cgroup_id WHERE k.run_id = ?"
			 " ORDER BY coalesce(c.path, '#' || k.cgroup_id), k.cgroup_id, k.name, k.read",
			 &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, run_id);
	err = db_stmt_rows(st, worst_row, &c);
	if (err)
		c.have = false;	/* nothing half-read is handed over */
	ret = worst_emit(&c);
	return err ?: ret;
}

struct each_ctx {
	struct db	*db;
	int		(*fn)(const struct db_stat_check *r, void *ctx);
	void		*ctx;
};

static int each_row(sqlite3_stmt *st, void *arg)
{
	struct each_ctx *c = arg;
	struct db_stat_check r;
	int err = db_stat_check_row(c->db, st, &r);

	return err ?: c->fn(&r, c->ctx);
}

int db_stat_checks_foreach(struct db *db, int64_t run_id, uint64_t cgroup_id,
			   int (*fn)(const struct db_stat_check *r, void *ctx), void *ctx)
{
	struct each_ctx c = { db, fn, ctx };
	sqlite3_stmt *st;
	int err;

	if (db->older)
		return -MCR_E_OLDER;
	if (!db_schema_has(db, "stat_read_checks"))
		return -ENOENT;
	if (cgroup_id > INT64_MAX)
		return -EINVAL;
	err = db_prepare(db, "SELECT " STAT_CHECK_COLS " FROM stat_read_checks k LEFT JOIN cgroups c"
			 " ON c.id = k.cgroup_id WHERE k.run_id = ? AND (? = 0 OR k.cgroup_id = ?)"
			 " ORDER BY k.read, k.name", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (int64_t)cgroup_id);
	sqlite3_bind_int64(st, 3, (int64_t)cgroup_id);
	return db_stmt_rows(st, each_row, &c);
}
