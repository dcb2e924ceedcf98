// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_events.c - memcg-replay events FILE: the events of a trace as rows.
 * The store keeps them compressed in chunks (db/store.h); this is the one
 * step between it and SQL: rows as CSV/TSV on stdout for a time range, CPU
 * or cgroup, or the whole trace as the table `events` in FILE (--table).
 * --convert turns a file of the previous format (rows only) into the store.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "num.h"
#include "results.h"

static const char events_doc[] =
	"Print the events of a trace database as rows (CSV by default), in replay order: "
	"columns ts,cpu,seq,kind,id,item,val,aux,level,flags,pid as documented in "
	"'sqlite3 FILE .schema events'.  --table writes them all into FILE as the table "
	"'events' instead, for SQL (the views update_events, flush_events, rstat_lock_events, "
	"cgroup_events and visit_events read it).  --convert rewrites a file of the previous "
	"format (one row per event) into the compact store.\v"
	"Times: --from and --to are seconds from the start of the trace (meta "
	"capture_start_ns, else its first event), as report's charts count them: 2, 1.5, "
	"or with a unit, 250ms, 20us, 123456789ns.  The ts column is the trace's own clock "
	"(ns), not from the start.  --cgroup takes a path (/ or /a/b, as report and "
	"memcg-capture take it) or a numeric id (cgroups.id).  --line takes a stat item's "
	"kernel name (NR_ANON_MAPPED) or its memory.stat line, v1 (rss, total_rss) or v2 "
	"(anon): all name the same update events.";

static char *events_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_EVENTS);
}

struct events_opts {
	const char	*file;
	uint64_t	from, to;	/* ns from the start of the trace */
	bool		has_from, has_to;
	int64_t		cgroup;		/* -1 all */
	const char	*cgroup_path;	/* --cgroup PATH: its id once the trace is open */
	const char	*line;		/* --line NAME */
	int		line_kind, line_item;
	int		cpu;		/* -1 all */
	char		sep;
	bool		table, convert, quiet;
};

/*
 * The bounds of what an event holds: ts below 2^63 and a cgroup id in
 * [1, 2^63) as the readers check them (db_event_check()), a CPU an int.  A
 * number beyond them selects no event and is a mistake: refused, where it
 * was cut to the field (--cpu 4294967296 gave CPU 0's events, 4294967295
 * every CPU's, as did --cgroup 18446744073709551615).
 */
static uint64_t events_num(struct argp_state *state, const char *arg, const char *what,
			   uint64_t lo, uint64_t hi)
{
	uint64_t v = 0;

	if (cli_num_u64(arg, lo, hi, &v))
		argp_error(state, "%s: not an integer in [%" PRIu64 ", %" PRIu64 "]: '%s'", what, lo,
			   hi, arg);
	return v;
}

/* --from/--to: seconds from the start, or with a unit (cli_num_time_ns()). */
static uint64_t events_time(struct argp_state *state, const char *arg, const char *what)
{
	uint64_t ns = 0;

	if (cli_num_time_ns(arg, INT64_MAX, &ns))
		argp_error(state, "%s: not a time from the start of the trace (seconds, or a "
			   "number with ns, us, ms or s, at most %" PRId64 " ns): '%s'", what,
			   INT64_MAX, arg);
	return ns;
}

static error_t events_parse(int key, char *arg, struct argp_state *state)
{
	struct events_opts *o = state->input;

	switch (key) {
	case 'f':
		o->from = events_time(state, arg, "--from");
		o->has_from = true;
		return 0;
	case 't':
		o->to = events_time(state, arg, "--to");
		o->has_to = true;
		return 0;
	case 'l':
		if (!*arg)
			argp_error(state, "--line: an empty name");
		o->line = arg;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'c':
		o->cpu = (int)events_num(state, arg, "--cpu", 0, INT32_MAX);
		return 0;
	case 'g':
		/* a path as report and memcg-capture take it, or the id */
		if (arg[0] == '/') {
			o->cgroup_path = arg;
			o->cgroup = -1;
		} else {
			o->cgroup = (int64_t)events_num(state, arg, "--cgroup (a path or an id)", 1,
							INT64_MAX);
			o->cgroup_path = NULL;
		}
		return 0;
	case 'F':
		if (!strcmp(arg, "csv"))
			o->sep = ',';
		else if (!strcmp(arg, "tsv"))
			o->sep = '\t';
		else
			argp_error(state, "--format: csv or tsv, not '%s'", arg);
		return 0;
	case 'T':
		o->table = true;
		return 0;
	case 'C':
		o->convert = true;
		return 0;
	default:
		return cli_arg_file(key, arg, state, &o->file);
	}
}

/* Does @ev update the line --line named? */
static bool events_line_match(const struct events_opts *o, const struct mcr_event *ev)
{
	if (!o->line)
		return true;
	if (ev->item != o->line_item)
		return false;
	if (o->line_kind == MCR_EV_EVENTS)
		return ev->kind == MCR_EV_EVENTS;
	return ev->kind == MCR_EV_STATE || ev->kind == MCR_EV_LRUVEC;
}

/*
 * The start of the trace: meta capture_start_ns (report's charts count from
 * it), else the first event.  0 for a trace with neither.
 */
static int events_origin(struct db *db, uint64_t *t0)
{
	int64_t v = -1, last = 0;
	int err;

	*t0 = 0;
	/* db_open() checked the capture window: a value there is an integer >= 0 */
	if (!db_meta_get_int(db, "capture_start_ns", &v) && v >= 0) {
		*t0 = (uint64_t)v;
		return 0;
	}
	v = -1;
	err = db_events_span(db, &v, &last);
	if (!err && v >= 0)
		*t0 = (uint64_t)v;
	return err;
}

static int events_print(struct db *db, const struct events_opts *o)
{
	struct mcr_event ev;
	struct db_iter *it;
	uint64_t t0, from, to;
	char s = o->sep;
	int err;

	err = events_origin(db, &t0);
	if (err)
		return err;
	/* ns from the start to the trace's clock; past its end: nothing, or everything */
	from = o->has_from ? (o->from > UINT64_MAX - t0 ? UINT64_MAX : t0 + o->from) : 0;
	to = o->has_to ? (o->to > UINT64_MAX - t0 ? UINT64_MAX : t0 + o->to) : UINT64_MAX;
	err = db_iter_open_range(db, from, to, &it);
	if (err)
		return err;
	printf("ts%ccpu%cseq%ckind%cid%citem%cval%caux%clevel%cflags%cpid\n",
	       s, s, s, s, s, s, s, s, s, s);
	while ((err = db_iter_next(it, &ev)) > 0) {
		if ((o->cpu >= 0 && ev.cpu != o->cpu) ||
		    (o->cgroup >= 0 && ev.id != (uint64_t)o->cgroup) || !events_line_match(o, &ev))
			continue;
		/* as SQLite stores them: uint64 fields bit for bit as int64 */
		printf("%" PRId64 "%c%d%c%" PRId64 "%c%u%c%" PRId64 "%c%d%c%" PRId64 "%c%d%c%d%c%u%c%d\n",
		       (int64_t)ev.ts, s, ev.cpu, s, (int64_t)ev.seq, s, ev.kind, s, (int64_t)ev.id, s,
		       ev.item, s, ev.val, s, ev.aux, s, ev.level, s, ev.flags, s, ev.pid);
	}
	db_iter_close(it);
	if (fflush(stdout) || ferror(stdout))
		return -EIO;
	return err;
}

/* --cgroup PATH and --line NAME, in the trace: exit 17 for what it does not have. */
static int events_resolve(struct db *db, struct events_opts *o)
{
	const char *kname;
	uint64_t id;
	int err;

	if (o->cgroup_path) {
		err = db_cgroup_by_path(db, o->cgroup_path, &id);
		if (err == -ENOENT) {
			cli_msg("%s: --cgroup: no cgroup '%s' in this trace", o->file, o->cgroup_path);
			return MCR_EXIT_BAD_INPUT;
		}
		if (err)
			return cli_fail_db(db, err, o->file);
		o->cgroup = (int64_t)id;
	}
	if (o->line) {
		err = db_item_by_line(db, o->line, &o->line_kind, &o->line_item, &kname);
		if (err == -ENOENT) {
			cli_msg("%s: --line: '%s' is neither a stat item of this trace nor a line of "
				"memory.stat (v1 or v2)", o->file, o->line);
			return MCR_EXIT_BAD_INPUT;
		}
		if (err == -ENODATA) {
			cli_msg("%s: --line: '%s' is memory.stat's line of %s, which this trace does "
				"not list (table items)", o->file, o->line, kname);
			return MCR_EXIT_BAD_INPUT;
		}
		if (err)
			return cli_fail_db(db, err, o->file);
	}
	return MCR_EXIT_OK;
}

int cmd_events(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "from", 'f', "TIME", 0, "only events at or after TIME: seconds from the start of "
		  "the trace (1.5), or with a unit (250ms, 123456789ns)", 0 },
		{ "to", 't', "TIME", 0, "only events at or before TIME (as --from)", 0 },
		{ "cpu", 'c', "N", 0, "only events recorded on CPU N", 0 },
		{ "cgroup", 'g', "CGROUP", 0, "only events whose id is this cgroup: its path (e.g. / "
		  "or /leaf) or its id (cgroups.id)", 0 },
		{ "line", 'l', "NAME", 0, "only the update events of one line: a kernel item name "
		  "(NR_ANON_MAPPED) or a memory.stat name (v1 rss, total_rss; v2 anon)", 0 },
		{ "quiet", 'q', NULL, 0, "print nothing on success (--table, --convert)", 0 },
		{ "format", 'F', "FMT", 0, "csv (default) or tsv", 0 },
		{ "table", 'T', NULL, 0, "write every event into FILE as the table 'events'", 0 },
		{ "convert", 'C', NULL, 0, "convert FILE from the previous format (rows) in place", 0 },
		{ 0 }
	};
	struct argp argp = { opts, events_parse, "FILE", events_doc, NULL, events_help_filter,
			     NULL };
	struct events_opts o = { .to = UINT64_MAX, .cgroup = -1, .cpu = -1, .sep = ',' };
	uint64_t n = 0;
	struct db *db;
	int rc = MCR_EXIT_OK, err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return MCR_EXIT_USAGE;
	if (o.table && o.convert) {
		cli_msg("--table and --convert exclude each other");
		return MCR_EXIT_USAGE;
	}
	if ((o.table || o.convert) && (o.line || o.cgroup_path || o.cgroup >= 0 || o.cpu >= 0 ||
					o.has_from || o.has_to)) {
		cli_msg("--table and --convert take the whole trace: no --from, --to, --cpu, "
			"--cgroup or --line");
		return MCR_EXIT_USAGE;
	}
	db = cli_open_db(o.file, o.table || o.convert, &rc);
	if (!db)
		return rc;
	rc = events_resolve(db, &o);
	if (rc != MCR_EXIT_OK) {
		db_close(db);
		return rc;
	}
	if (o.convert) {
		err = db_events_convert(db, &n);
		if (err == -EALREADY) {
			if (!o.quiet)
				printf("%s is of the current format already\n", o.file);
			err = 0;
		} else if (!err && !o.quiet) {
			printf("converted %" PRIu64 " events of %s into the compact store\n", n, o.file);
		}
	} else if (o.table) {
		err = db_events_table(db, &n);
		if (err == -EINVAL) {
			if (!o.quiet)
				printf("%s is of the previous format: its table events holds the trace "
				       "already\n", o.file);
			err = 0;
		} else if (!err && !o.quiet) {
			printf("wrote %" PRIu64 " events into the table events of %s\n", n, o.file);
		}
	} else {
		err = events_print(db, &o);
	}
	if (err)
		rc = cli_fail_db(db, err, o.file);
	err = db_close(db);
	if (err && rc == MCR_EXIT_OK)
		rc = cli_fail(err, "%s", o.file);
	return rc;
}
