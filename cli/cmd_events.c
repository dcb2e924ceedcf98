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

static const char events_doc[] =
	"Print the events of a trace database as rows (CSV by default), in replay order: "
	"columns ts,cpu,seq,kind,id,item,val,aux,level,flags,pid as documented in "
	"'sqlite3 FILE .schema events'.  --table writes them all into FILE as the table "
	"'events' instead, for SQL (the views update_events, flush_events, rstat_lock_events, "
	"cgroup_events and visit_events read it).  --convert rewrites a file of the previous "
	"format (one row per event) into the compact store.";

static char *events_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_EVENTS);
}

struct events_opts {
	const char	*file;
	uint64_t	from, to;
	int64_t		cgroup;		/* -1 all */
	int		cpu;		/* -1 all */
	char		sep;
	bool		table, convert;
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

static error_t events_parse(int key, char *arg, struct argp_state *state)
{
	struct events_opts *o = state->input;

	switch (key) {
	case 'f':
		o->from = events_num(state, arg, "--from", 0, UINT64_MAX);
		return 0;
	case 't':
		o->to = events_num(state, arg, "--to", 0, UINT64_MAX);
		return 0;
	case 'c':
		o->cpu = (int)events_num(state, arg, "--cpu", 0, INT32_MAX);
		return 0;
	case 'g':
		o->cgroup = (int64_t)events_num(state, arg, "--cgroup", 1, INT64_MAX);
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

static int events_print(struct db *db, const struct events_opts *o)
{
	struct mcr_event ev;
	struct db_iter *it;
	char s = o->sep;
	int err;

	err = db_iter_open_range(db, o->from, o->to, &it);
	if (err)
		return err;
	printf("ts%ccpu%cseq%ckind%cid%citem%cval%caux%clevel%cflags%cpid\n",
	       s, s, s, s, s, s, s, s, s, s);
	while ((err = db_iter_next(it, &ev)) > 0) {
		if ((o->cpu >= 0 && ev.cpu != o->cpu) || (o->cgroup >= 0 && ev.id != (uint64_t)o->cgroup))
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

int cmd_events(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "from", 'f', "NS", 0, "only events with ts >= NS", 0 },
		{ "to", 't', "NS", 0, "only events with ts <= NS", 0 },
		{ "cpu", 'c', "N", 0, "only events recorded on CPU N", 0 },
		{ "cgroup", 'g', "ID", 0, "only events whose id is cgroup ID (cgroups.id)", 0 },
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
	db = cli_open_db(o.file, o.table || o.convert, &rc);
	if (!db)
		return rc;
	if (o.convert) {
		err = db_events_convert(db, &n);
		if (err == -EALREADY) {
			printf("%s is of the current format already\n", o.file);
			err = 0;
		} else if (!err) {
			printf("converted %" PRIu64 " events of %s into the compact store\n", n, o.file);
		}
	} else if (o.table) {
		err = db_events_table(db, &n);
		if (err == -EINVAL) {
			printf("%s is of the previous format: its table events holds the trace already\n",
			       o.file);
			err = 0;
		} else if (!err) {
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
