// SPDX-License-Identifier: GPL-2.0
/*
 * validate.c - the one check of a trace database's own values, run by
 * db_open() once the tables are there: meta ranges, the cgroup hierarchy and
 * the ring-buffer counters of cpu_stats.
 *
 * Contract: reads meta, cgroups, cpu_stats and gaps only; returns 0 or
 * -MCR_E_BAD_INPUT with a sentence naming the row and the value in @why.
 * Events are too many to check at open: db_event_check() is the check of one
 * event's fields, which db_iter_next() runs on every event it returns.  What passes here needs no range check downstream:
 * TH = batch_size * nr_cpus_online fits an int, every parent walk ends at a
 * root within nr_cgroups steps, capture_end_ns - capture_start_ns is a
 * non-negative int64, and the lost-event sums (db_trace_lost()) fit an int64.
 * Never prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

/*
 * Ranges: NR_CPUS is at most 8192 in every kernel config (arch/x86/Kconfig
 * MAXSMP); MEMCG_CHARGE_BATCH is 64 (include/linux/memcontrol.h) and a
 * tuned kernel keeps it small; pages are 4 KiB to 256 KiB (hexagon).
 */
#define DB_MAX_CPUS		8192
#define DB_MAX_BATCH		65536
#define DB_MIN_PAGE		1024
#define DB_MAX_PAGE		(1 << 20)

/*
 * Ring-buffer counters and gap counts are events (or bytes) of one CPU.  An
 * event costs a CPU at least ~100 ns to write, so 2^48 is about a year of a
 * CPU doing nothing else; a counter above it is damage, not a count.  And
 * nr_cpus_possible (at most DB_MAX_CPUS = 2^13) CPUs of 2^48 sum to 2^61:
 * every total over CPUs fits an int64.
 */
#define DB_MAX_COUNT		(INT64_C(1) << 48)

static int db_bad(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int db_bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -MCR_E_BAD_INPUT;
}

/* meta KEY as an integer in [lo, hi] into *@v; absent is fine (*@v unchanged). */
static int db_meta_range(struct db *db, const char *key, int64_t lo, int64_t hi, int64_t *v,
			 char *why, size_t len)
{
	char *text = NULL;
	int err = db_meta_get_int(db, key, v);

	if (err == -ENOENT)
		return 0;
	if (err == -EINVAL) {
		db_meta_get(db, key, &text);
		err = db_bad(why, len, "meta %s = '%.40s': not an integer", key,
			     text ? text : "NULL");
		free(text);
		return err;
	}
	if (err)
		return err;
	if (*v < lo || *v > hi)
		return db_bad(why, len, "meta %s = %" PRId64 ": out of range [%" PRId64 ", %" PRId64
			      "]", key, *v, lo, hi);
	return 0;
}

/*
 * Required: what TH = batch_size * nr_cpus_online and every page figure are
 * made of, and the bound of every CPU an event names.  memcg-capture, synth
 * and import always write them; a file without one is damaged.
 */
static const char *const db_meta_required[] = {
	"nr_cpus_possible", "nr_cpus_online", "batch_size", "page_size",
};

/* Optional: read as their default when missing or empty, which the readers say once. */
static const struct {
	const char	*key;
	const char	*dflt;
} db_meta_optional[] = {
	{ "kernel_release", "unknown (validate then needs --policy)" },
	{ "trace_clock", "unknown" },
	{ "memory_hierarchy_id", "unknown (-1)" },
};

/* 1: present with a non-empty value, 0: not, or the error reading it (a damaged page). */
static int db_meta_has(struct db *db, const char *key)
{
	char *text = NULL;
	int err = db_meta_get(db, key, &text);
	int has = !err && text && *text;

	free(text);
	return err && err != -ENOENT ? err : has;
}

/*
 * The capture window: trace-clock ns, which count up from boot (or from 0:
 * synth), so never negative, and the end not before the start.  Then
 * end - start never overflows.  Either may be absent (readers fall back to
 * the events' span).
 */
static int db_validate_window(struct db *db, char *why, size_t len)
{
	int64_t start = -1, end = -1;
	int err;

	err = db_meta_range(db, "capture_start_ns", 0, INT64_MAX, &start, why, len);
	if (!err)
		err = db_meta_range(db, "capture_end_ns", 0, INT64_MAX, &end, why, len);
	if (!err && start >= 0 && end >= 0 && end < start)
		err = db_bad(why, len, "meta capture_end_ns = %" PRId64
			     ": before capture_start_ns %" PRId64, end, start);
	return err;
}

static int db_validate_meta(struct db *db, int64_t *nr_possible, char *why, size_t len)
{
	int64_t possible = 0, online = 0, v = 0;
	size_t i;
	int err;

	for (i = 0; i < sizeof(db_meta_required) / sizeof(db_meta_required[0]); i++) {
		err = db_meta_has(db, db_meta_required[i]);
		if (err < 0)
			return err;
		if (!err)
			return db_bad(why, len, "meta %s missing or empty: required",
				      db_meta_required[i]);
	}
	err = db_meta_range(db, "nr_cpus_possible", 1, DB_MAX_CPUS, &possible, why, len);
	if (!err)
		err = db_meta_range(db, "nr_cpus_online", 1, possible, &online, why, len);
	if (!err)
		err = db_meta_range(db, "batch_size", 1, DB_MAX_BATCH, &v, why, len);
	v = 0;
	if (!err)
		err = db_meta_range(db, "page_size", DB_MIN_PAGE, DB_MAX_PAGE, &v, why, len);
	if (!err && v & (v - 1))
		err = db_bad(why, len, "meta page_size = %" PRId64 ": not a power of two", v);
	if (!err)
		err = db_validate_window(db, why, len);
	*nr_possible = possible;
	return err;
}

int db_meta_defaults(struct db *db, char *buf, size_t len)
{
	size_t i, used = 0;
	int n = 0;

	if (len)
		*buf = '\0';
	for (i = 0; i < sizeof(db_meta_optional) / sizeof(db_meta_optional[0]); i++) {
		if (db_meta_has(db, db_meta_optional[i].key))
			continue;	/* or unreadable: the reader says so */
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%smeta %s missing: taken as %s",
						 n ? "; " : "", db_meta_optional[i].key,
						 db_meta_optional[i].dflt);
		n++;
	}
	return n;
}

struct db_vcg {
	int64_t	id, parent, level;
	bool	unknown;
	int	color;		/* cycle search: 0 unseen, 1 on the current path, 2 done */
};

struct db_vcgs {
	struct db_vcg	*v;
	size_t		n, cap;
};

static int db_vcg_row(sqlite3_stmt *st, void *ctx)
{
	struct db_vcgs *c = ctx;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct db_vcg *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct db_vcg){
		.id = sqlite3_column_int64(st, 0), .parent = sqlite3_column_int64(st, 1),
		.level = sqlite3_column_int64(st, 2), .unknown = sqlite3_column_int64(st, 3),
	};
	return 0;
}

/* Sorted by id (the query's order): the index of @id, or -1. */
static ssize_t db_vcg_find(const struct db_vcgs *c, int64_t id)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].id == id)
			return (ssize_t)mid;
		if (c->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int db_validate_cgroups(struct db *db, char *why, size_t len)
{
	struct db_vcgs c = { 0 };
	size_t i;
	int err;

	err = db_rows_foreach(db, "SELECT id, parent, level, parent_unknown FROM cgroups "
			      "ORDER BY id", db_vcg_row, &c);
	for (i = 0; !err && i < c.n; i++) {
		struct db_vcg *g = &c.v[i];
		ssize_t p;

		if (g->id <= 0)
			err = db_bad(why, len, "cgroups row id %" PRId64 ": not a cgroup id (> 0)",
				     g->id);
		else if (g->parent == g->id)
			err = db_bad(why, len, "cgroups row id %" PRId64 ": its own parent", g->id);
		else if (g->level < -1 || g->level > 65535)
			err = db_bad(why, len, "cgroups row id %" PRId64 ": level %" PRId64
				     " out of range [-1, 65535]", g->id, g->level);
		if (err || !g->parent)
			continue;
		p = db_vcg_find(&c, g->parent);
		/*
		 * A parent_unknown row hangs under the root for lack of its
		 * parent (import without the recording host's cgroup tree) and
		 * keeps the level its cgroup_mkdir traced: no relation to check.
		 */
		if (p < 0)
			err = db_bad(why, len, "cgroups row id %" PRId64 ": parent %" PRId64
				     " is not in the table", g->id, g->parent);
		else if (!g->unknown && g->level >= 0 && c.v[p].level >= 0 &&
			 g->level != c.v[p].level + 1)
			err = db_bad(why, len, "cgroups row id %" PRId64 ": level %" PRId64
				     ", but its parent %" PRId64 " is at level %" PRId64, g->id,
				     g->level, g->parent, c.v[p].level);
	}
	/* every parent exists now: follow each chain until a root or a node seen before */
	for (i = 0; !err && i < c.n; i++) {
		size_t j = i;

		while (!err && c.v[j].color == 0) {
			ssize_t p;

			c.v[j].color = 1;
			if (!c.v[j].parent)
				break;
			p = db_vcg_find(&c, c.v[j].parent);
			if (c.v[p].color == 1)
				err = db_bad(why, len, "cgroups row id %" PRId64 ": parent %" PRId64
					     " closes a cycle", c.v[j].id, c.v[j].parent);
			j = (size_t)p;
		}
		for (j = i; !err && c.v[j].color == 1; ) {
			c.v[j].color = 2;
			if (!c.v[j].parent)
				break;
			j = (size_t)db_vcg_find(&c, c.v[j].parent);
		}
	}
	free(c.v);
	return err;
}

struct db_vstat {
	char	*why;
	size_t	len;
};

static int db_vstat_row(sqlite3_stmt *st, void *ctx)
{
	struct db_vstat *v = ctx;

	return db_bad(v->why, v->len, "cpu_stats row cpu %" PRId64 " phase %s: %s %" PRId64 "%s",
		      (int64_t)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
		      (const char *)sqlite3_column_text(st, 2), (int64_t)sqlite3_column_int64(st, 3),
		      (const char *)sqlite3_column_text(st, 4));
}

static const char *const db_vstat_cols[] = {
	"entries", "overrun", "commit_overrun", "bytes", "dropped", "read",
};

struct db_vcpu {
	int64_t	possible;
	char	*why;
	size_t	len;
};

/* One row of cpu_stats: its CPU and each counter, by name. */
static int db_vcpu_row(sqlite3_stmt *st, void *ctx)
{
	const struct db_vcpu *v = ctx;
	int64_t cpu = sqlite3_column_int64(st, 0), n;
	const char *phase = (const char *)sqlite3_column_text(st, 1);
	size_t i;

	if (cpu < 0 || cpu >= v->possible)
		return db_bad(v->why, v->len, "cpu_stats row cpu %" PRId64 " phase %s: cpu is not"
			      " below nr_cpus_possible %" PRId64, cpu, phase, v->possible);
	for (i = 0; i < sizeof(db_vstat_cols) / sizeof(db_vstat_cols[0]); i++) {
		n = sqlite3_column_int64(st, (int)i + 2);
		if (n < -1)
			return db_bad(v->why, v->len, "cpu_stats row cpu %" PRId64
				      " phase %s: %s %" PRId64 " below -1 (unknown)", cpu, phase,
				      db_vstat_cols[i], n);
		if (n > DB_MAX_COUNT)
			return db_bad(v->why, v->len, "cpu_stats row cpu %" PRId64
				      " phase %s: %s %" PRId64 " above %" PRId64
				      ", not a count of one CPU", cpu, phase, db_vstat_cols[i], n,
				      DB_MAX_COUNT);
	}
	return 0;
}

/* An overrun or dropped counter lower at the end than at the start. */
static const char db_vstat_down_sql[] =
	"SELECT e.cpu, e.phase, 'overrun', e.overrun, ' below its start ' || s.overrun"
	" FROM cpu_stats e JOIN cpu_stats s ON s.cpu = e.cpu AND s.phase = 'start'"
	" WHERE e.phase = 'end' AND s.overrun >= 0 AND e.overrun >= 0"
	" AND e.overrun < s.overrun"
	" UNION ALL SELECT e.cpu, e.phase, 'dropped', e.dropped, ' below its start ' || s.dropped"
	" FROM cpu_stats e JOIN cpu_stats s ON s.cpu = e.cpu AND s.phase = 'start'"
	" WHERE e.phase = 'end' AND s.dropped >= 0 AND e.dropped >= 0"
	" AND e.dropped < s.dropped LIMIT 1";

/*
 * Ring-buffer counters are -1 (unknown) or counts up to DB_MAX_COUNT, of a
 * CPU below nr_cpus_possible (one ring buffer each), and never go down from
 * start to end (tracefs per_cpu/cpuN/stats only grow while the buffer is not
 * reset): a lower end would show as negative lost events.
 */
static int db_validate_cpu_stats(struct db *db, int64_t possible, char *why, size_t len)
{
	struct db_vcpu c = { possible, why, len };
	struct db_vstat v = { why, len };
	int err;

	err = db_rows_foreach(db,
		"SELECT cpu, phase, 'phase', 0, ' is not start or end' FROM cpu_stats"
		" WHERE phase NOT IN ('start', 'end') LIMIT 1", db_vstat_row, &v);
	if (!err)
		err = db_rows_foreach(db, "SELECT cpu, phase, entries, overrun, commit_overrun,"
				      " bytes, dropped, read FROM cpu_stats ORDER BY cpu, phase",
				      db_vcpu_row, &c);
	if (!err)
		err = db_rows_foreach(db, db_vstat_down_sql, db_vstat_row, &v);
	return err;
}

static int db_vgap_row(sqlite3_stmt *st, void *ctx)
{
	struct db_vstat *v = ctx;

	return db_bad(v->why, v->len, "gaps row cpu %" PRId64 " ts %" PRId64 ": %s %" PRId64
		      "%s", (int64_t)sqlite3_column_int64(st, 0),
		      (int64_t)sqlite3_column_int64(st, 1),
		      (const char *)sqlite3_column_text(st, 2),
		      (int64_t)sqlite3_column_int64(st, 3),
		      (const char *)sqlite3_column_text(st, 4));
}

/*
 * A gap is a place one CPU's buffer lost events: its CPU is a possible one,
 * its count -1 (unknown) or at most DB_MAX_COUNT, and so is the sum of one
 * CPU's counts (the events one CPU can have lost; total() is a float sum,
 * which cannot overflow).  Then the sum over every gap fits an int64.
 */
static int db_validate_gaps(struct db *db, int64_t possible, char *why, size_t len)
{
	struct db_vstat v = { why, len };
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db_sqlite(db),
		"SELECT cpu, ts, 'cpu', cpu, ' is not below nr_cpus_possible ' || ?1 FROM gaps"
		" WHERE cpu < 0 OR cpu >= ?1"
		" UNION ALL SELECT cpu, ts, 'count', count,"
		" ' is neither -1 (unknown) nor a count in [0, ' || ?2 || ']'"
		" FROM gaps WHERE count < -1 OR count > ?2"
		" UNION ALL SELECT cpu, max(ts), 'the counts of this CPU sum to', CAST(total(count)"
		" AS INTEGER), ', more than ' || ?2 || ' (not a count)' FROM gaps WHERE count > 0"
		" GROUP BY cpu HAVING total(count) > ?2"
		" LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_err(rc);
	sqlite3_bind_int64(st, 1, possible);
	sqlite3_bind_int64(st, 2, DB_MAX_COUNT);
	return db_stmt_rows(st, db_vgap_row, &v);
}

int db_validate(struct db *db, char *why, size_t len)
{
	int64_t possible = 0;
	int err;

	if (why && len)
		*why = '\0';
	err = db_validate_meta(db, &possible, why, len);
	if (!err)
		err = db_validate_cgroups(db, why, len);
	if (!err)
		err = db_validate_cpu_stats(db, possible, why, len);
	if (!err)
		err = db_validate_gaps(db, possible, why, len);
	return err;
}

/* Trace clocks whose ts are not ns (kernel/trace/trace.c, trace_clocks[]: in_ns 0). */
static const char *const db_clocks_not_ns[] = { "uptime", "counter", "x86-tsc" };

void db_event_window(struct db *db, int64_t *start, int64_t *end)
{
	char *clock = NULL;
	size_t i;

	*start = *end = -1;
	if (db_meta_get_int(db, "capture_start_ns", start) < 0 ||
	    db_meta_get_int(db, "capture_end_ns", end) < 0 || *start < 0 || *end < *start) {
		*end = -1;
		return;
	}
	if (db_meta_get(db, "trace_clock", &clock) < 0)
		return;
	for (i = 0; i < sizeof(db_clocks_not_ns) / sizeof(db_clocks_not_ns[0]); i++)
		if (clock && !strcmp(clock, db_clocks_not_ns[i]))
			*end = -1;
	free(clock);
}

void db_event_bounds(struct db_event_bounds *b, unsigned int nr_possible, int64_t win_start,
		     int64_t win_end)
{
	unsigned int k;
	uint64_t hi = INT64_MAX;

	memset(b, 0, sizeof(*b));
	for (k = 0; k < 256; k++) {
		b->k[k].val_lo = INT64_MIN;		/* any */
		b->k[k].val_span = UINT64_MAX;
	}
	for (k = 1; k <= MCR_EV_KIND_MAX; k++) {
		struct db_kind_bounds *kb = &b->k[k];

		switch (k) {
		case MCR_EV_STATE:
		case MCR_EV_LRUVEC:
			kb->val_lo = INT32_MIN;		/* the tracepoint's int val */
			kb->val_span = UINT32_MAX;
			/* fall through */
		case MCR_EV_EVENTS:
			kb->item_lim = DB_MAX_ITEM + 1;	/* [0, DB_MAX_ITEM] */
			break;
		case MCR_EV_LOCKED:
		case MCR_EV_UNLOCK:
		case MCR_EV_CONTENDED:
		case MCR_EV_VISIT:
			kb->item_lo = -1;		/* -1 or a possible CPU */
			kb->item_lim = (uint64_t)nr_possible + 1;
			break;
		case MCR_EV_FLUSH:
			kb->val_lo = 0;			/* stats_updates: never below 0 */
			kb->val_span = INT64_MAX;
			/* fall through */
		default:
			kb->item_lim = (uint64_t)1 << 32;	/* item unused */
		}
	}
	b->win_start = win_start;
	b->win_end = win_end;
	if (win_end >= 0 && win_start >= 0 && win_start <= win_end) {
		b->ts_lo = win_start > DB_TS_SLACK_NS ? (uint64_t)(win_start - DB_TS_SLACK_NS) : 0;
		if (win_end < INT64_MAX - DB_TS_SLACK_NS)
			hi = (uint64_t)(win_end + DB_TS_SLACK_NS);
	} else {
		b->win_end = -1;
	}
	b->ts_span = hi - b->ts_lo;
}

/* The refusal of db_event_check(): which field, in a sentence naming the event. */
int db_event_refuse(const struct mcr_event *ev, const struct db_event_bounds *b, char *why,
		    size_t len)
{
	const struct db_kind_bounds *k = &b->k[ev->kind];
	const char *name = mcr_event_kind_name(ev->kind);
	char at[96];

	snprintf(at, sizeof(at), "event cpu %d seq %" PRIu64 " ts %" PRIu64, ev->cpu, ev->seq,
		 ev->ts);
	if (!k->item_lim)
		return db_bad(why, len, "%s: kind %u is not a known kind [1, %d]", at, ev->kind,
			      MCR_EV_KIND_MAX);
	if (ev->ts - b->ts_lo > b->ts_span) {
		if (b->win_end < 0)
			return db_bad(why, len, "%s (%s): ts beyond 2^63 - 1 ns (SQLite's INTEGER)",
				      at, name);
		return db_bad(why, len, "%s (%s): ts more than %d s outside the capture window [%"
			      PRId64 ", %" PRId64 "] of meta capture_start_ns, capture_end_ns", at,
			      name, (int)(DB_TS_SLACK_NS / 1000000000), b->win_start, b->win_end);
	}
	if (ev->seq > (uint64_t)INT64_MAX)
		return db_bad(why, len, "%s (%s): seq beyond 2^63 - 1 (SQLite's INTEGER)", at, name);
	if (ev->id - 1 >= (uint64_t)INT64_MAX)
		return db_bad(why, len, "%s (%s): cgroup id %" PRId64 " is not a cgroup id (> 0)",
			      at, name, (int64_t)ev->id);
	if ((uint64_t)ev->val - (uint64_t)k->val_lo > k->val_span)
		return db_bad(why, len, "%s (%s): %s %" PRId64 " out of range [%" PRId64 ", %" PRId64
			      "]%s", at, name, ev->kind == MCR_EV_FLUSH ? "stats_updates" : "val",
			      ev->val, k->val_lo, (int64_t)((uint64_t)k->val_lo + k->val_span),
			      ev->kind == MCR_EV_FLUSH ? "" : " (the tracepoint's int)");
	if (!k->item_lo)
		return db_bad(why, len, "%s (%s): item %d out of range [0, %d]", at, name, ev->item,
			      DB_MAX_ITEM);
	db_bad(why, len, "%s (%s): target cpu %d is neither -1 nor below nr_cpus_possible %" PRIu64,
	       at, name, ev->item, k->item_lim - 1);
	return -MCR_E_CPU;
}
