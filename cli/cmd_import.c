// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-replay import: a trace-cmd recording (trace.dat) -> trace database.
 * The work is capture/import.c; this file parses options and talks to the user.
 */
#include <argp.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "db_file.h"
#include "import.h"
#include "outfile.h"
#include "statlog.h"

struct import_args {
	const char	*trace;
	const char	*out;
	const char	*cgroupfs;
	const char	*stat_log;
	bool		quiet;
	bool		force;
	enum import_plain plain;
};

static const char import_doc[] =
"Import a trace-cmd recording (trace.dat: file version 6 or 7, compressed or "
"not) into a trace database, the same kind of file memcg-capture writes.\n"
"\n"
"Keeps the memcg events and the rstat lock / mkdir / rmdir events of the memory "
"hierarchy, in replay order (by timestamp, then CPU; ring-buffer order within a "
"CPU), with per-CPU sequence numbers, missed-event gaps, the kernel's ring-buffer "
"stats, trace clock, CPU count and kernel release.  Events recorded into a named "
"buffer (trace-cmd record -B NAME) are found too.\n"
"\n"
"The memory hierarchy id is inferred from the trace (rstat lock events that follow "
"a flushing memcg_flush_stats on the same task); with --cgroupfs, /proc/cgroups is "
"the fallback.  Cgroups created before the recording have no path in a trace.dat: "
"run the import on the recording host with --cgroupfs so they get one; otherwise "
"they hang under the root and are counted in a warning.\n"
"\n"
"Recording on Linux 6.13+ (trace-cmd 3.1 needs -d --no-filter on kernels where "
"set_ftrace_filter is not writable; it then exits 1 and leaves tracing_on=0 and "
"buffer_size_kb changed, restore them); it records until its command exits "
"(here: sleep 10), or until ^C without one:\n"
"  trace-cmd record -d --no-filter -C mono -b 16384 -o trace.dat \\\n"
"      -e memcg -e cgroup:cgroup_rstat_locked -e cgroup:cgroup_rstat_unlock \\\n"
"      -e cgroup:cgroup_mkdir -e cgroup:cgroup_rmdir sleep 10\n"
"  memcg-replay import trace.dat -o host.db --cgroupfs /sys/fs/cgroup/memory\n"
"\v"
"--decompress WHEN: a compressed trace.dat (trace-cmd 3's default) of 8 MiB "
"or more (auto; any size: always) is first decompressed by libtracecmd into a "
"plain copy beside FILE (its temporary name with -plain appended, about 15 "
"times the trace.dat's size), read, then removed: libtracecmd reads a "
"compressed file in time that grows with the square of its length, and holds "
"all of it decompressed in memory.  Under auto, a copy that fails (a full "
"disk) is named in a warning and the file is read as it is.\n"
"\n"
"--stat-log FILE: the memory.stat reads another reader logged during the "
"recording (the log of memcg-statlog(1), run beside the recorder), stored as "
"the reader of memcg-capture's --read stores its own (table stat_reads), for "
"validate to compare each printed line with the simulation.  The log, format 1, "
"is text, one record a line, fields separated by one blank, times in ns of the "
"trace clock:\n"
"  memcg-statlog 1               the format and its version\n"
"  clock NAME                    the trace clock, the trace.dat's own\n"
"                                (trace-cmd record's default is local:\n"
"                                record with -C mono)\n"
"  cgroup ID VERSION PATH        a cgroup read: the inode of its directory\n"
"                                (the tracepoints' cgroup id), version 1\n"
"                                or 2, path\n"
"  read N ID BEFORE AFTER LINES  read N (from 0, increasing) of cgroup ID:\n"
"                                the clock just before and after its first\n"
"                                read(), then LINES lines, each:\n"
"  <TAB>LINE                     a line of memory.stat as printed\n"
"A log that is not one, truncated, or with a garbled line exits 15; one whose "
"values cannot be (a read ending before it begins, reads out of order, an "
"undeclared cgroup or one the trace does not know, another clock or cgroup "
"version than the trace's) exits 17; either names the log's line or value.  "
"Import on the recording host with --cgroupfs so that the read cgroups are known.\n"
"\n"
"FILE defaults to TRACE with its extension replaced by .db.  It is written under a "
"temporary name and renamed at the end, so a failed import leaves no file behind "
"and never replaces an existing one.  FILE is never the input, nor a device or FIFO; "
"a file that is not a memcg-replay database is replaced only with --force.";

static char *import_help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_IMPORT);
}

static const struct argp_option import_options[] = {
	{ "output",	'o', "FILE", 0, "trace database to write (a memcg-replay database there is "
	  "replaced once the import is complete; any other file only with --force)", 0 },
	{ "cgroupfs",	'c', "PATH", 0, "walk this live cgroup tree (e.g. /sys/fs/cgroup/memory) "
					"for cgroups that existed before the recording", 0 },
	{ "decompress",	'd', "WHEN", 0, "auto (default), always or never", 0 },
	{ "stat-log",	's', "FILE", 0, "store the memory.stat reads of this log (memcg-statlog's, "
	  "in the trace's clock) in table stat_reads, for validate", 0 },
	{ "quiet",	'q', NULL,   0, "print nothing but errors", 0 },
	{ "force",	'f', NULL,   0, "replace FILE even if it is not a memcg-replay database "
					"(never the input, a device, FIFO or directory)", 0 },
	{ 0 }
};

static error_t import_parse(int key, char *arg, struct argp_state *state)
{
	struct import_args *a = state->input;

	switch (key) {
	case 'o':
		a->out = arg;
		break;
	case 'c':
		a->cgroupfs = arg;
		break;
	case 'd':
		if (!strcmp(arg, "auto"))
			a->plain = IMPORT_PLAIN_AUTO;
		else if (!strcmp(arg, "always"))
			a->plain = IMPORT_PLAIN_ALWAYS;
		else if (!strcmp(arg, "never"))
			a->plain = IMPORT_PLAIN_NEVER;
		else
			argp_error(state, "--decompress %s: auto, always or never", arg);
		break;
	case 's':
		a->stat_log = arg;
		break;
	case 'q':
		a->quiet = true;
		break;
	case 'f':
		a->force = true;
		break;
	case ARGP_KEY_ARG:
		if (a->trace)
			argp_error(state, "one TRACE file only");
		a->trace = arg;
		break;
	case ARGP_KEY_END:
		if (!a->trace)
			argp_error(state, "which trace.dat? (memcg-replay import TRACE.dat -o FILE)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void import_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_progress *p = ctx;

	p->total = total;	/* the kernel's own count of what the file holds, when known */
	cli_progress_update(p, done);
}

static char *import_options_json(const struct import_args *a)
{
	const char *base = strrchr(a->trace, '/');
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("{\"command\":\"import\",\"trace\":", f);
	db_json_string(f, base ? base + 1 : a->trace);
	if (a->cgroupfs) {
		fputs(",\"cgroupfs\":", f);
		db_json_string(f, a->cgroupfs);
	}
	if (a->stat_log) {
		fputs(",\"stat_log\":", f);
		db_json_string(f, a->stat_log);
	}
	fputc('}', f);
	fclose(f);
	return buf;
}

static char *import_default_out(const char *trace)
{
	const char *slash = strrchr(trace, '/'), *dot = strrchr(trace, '.');
	size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - trace) : strlen(trace);
	char *out = malloc(stem + 4);

	if (out) {
		memcpy(out, trace, stem);
		strcpy(out + stem, ".db");
	}
	return out;
}

static void import_summary(const struct import_args *a, const struct import_result *r)
{
	unsigned int k;

	printf("imported %llu events of %llu records from %s%s%s%s into %s\n",
	       (unsigned long long)r->events, (unsigned long long)r->records, a->trace,
	       *r->buffer ? " (buffer " : "", r->buffer, *r->buffer ? ")" : "", a->out);
	for (k = 1; k <= MCR_EV_KIND_MAX; k++)
		if (r->per_kind[k])
			printf("  %-28s %llu\n", mcr_event_kind_name(k),
			       (unsigned long long)r->per_kind[k]);
	printf("  cpus %d, trace.dat v%d%s, memory hierarchy %d (%s)\n", r->nr_cpus,
	       r->file_version, r->plain ? " (read from a decompressed copy)" : "",
	       r->hierarchy_id, r->hierarchy_how);
	printf("  cgroups %llu (%llu of unknown parent); rstat/mkdir/rmdir of other hierarchies "
	       "dropped: %llu\n", (unsigned long long)r->cgroups,
	       (unsigned long long)r->parent_unknown, (unsigned long long)r->other_hierarchy);
}

/* The one-line warnings the import's findings deserve; the import itself succeeded. */
static void import_warnings(const struct import_args *a, const struct import_result *r)
{
	if (r->plain_err)
		cli_msg("warning: could not decompress %s into a plain copy beside the output (%s): "
			"read it compressed, which takes longer the larger the file", a->trace,
			mcr_strerror(r->plain_err));
	if (r->parent_unknown)
		cli_msg("warning: %llu cgroup ids have no known parent and were attached under "
			"the root%s", (unsigned long long)r->parent_unknown,
			a->cgroupfs ? "" : " (import on the recording host with --cgroupfs PATH)");
	if (r->gaps)
		cli_msg("warning: events were lost while recording: %llu sub-buffers flagged, "
			"%llu events counted, %llu of unknown count", (unsigned long long)r->gaps,
			(unsigned long long)r->missed, (unsigned long long)r->gaps_unknown);
	if (r->overrun > 0)
		cli_msg("warning: the kernel overwrote %lld events before trace-cmd read them",
			(long long)r->overrun);
	if (r->unaccounted > 0)
		cli_msg("warning: %lld events the kernel delivered are not in the file (another "
			"reader of the same buffer, e.g. an orphaned trace-cmd recorder?)",
			(long long)r->unaccounted);
	if (r->hierarchy_id < 0 && (r->per_kind[MCR_EV_LOCKED] || r->per_kind[MCR_EV_UNLOCK] ||
				    r->per_kind[MCR_EV_CONTENDED] || r->per_kind[MCR_EV_MKDIR] ||
				    r->per_kind[MCR_EV_RMDIR]))
		cli_msg("warning: memory hierarchy id unknown; rstat/mkdir/rmdir events of every "
			"hierarchy were kept (use --cgroupfs on the recording host)");
}

/* above which malloc() maps: below libtracecmd's decompressed chunks */
#define IMPORT_MMAP_THRESHOLD	(32 * 1024)

/* Errors of writing, not of reading: the input was opened before the output grew. */
static bool import_output_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EROFS || err == -EFBIG;
}

/* --stat-log: the log read and parsed; its trouble said, as an exit code. */
static int import_stat_log_load(const struct import_args *a, struct statlog *log, char *why,
				size_t len)
{
	int err = statlog_load(a->stat_log, log, why, len);

	if (!err)
		return 0;
	if (err == -MCR_E_CORRUPT || err == -MCR_E_BAD_INPUT)
		cli_msg("import: --stat-log %s: %s", a->stat_log, why);
	else
		cli_msg("import: --stat-log %s: %s", a->stat_log, mcr_strerror(err));
	return err == -MCR_E_CORRUPT || err == -MCR_E_BAD_INPUT ? mcr_exit_code(err) :
	       err == -ENOMEM ? MCR_EXIT_FAILURE : MCR_EXIT_NOFILE;
}

/* --stat-log: the parsed log into the database just written, checked against its trace. */
static int import_stat_log_store(const struct import_args *a, struct outfile *of,
				 const struct statlog *log)
{
	char why[256] = "";
	struct db *db;
	int err, cerr;

	err = db_open(of->tmp, true, &db);
	if (err < 0) {
		cli_msg("import: cannot reopen the output %s: %s", a->out, mcr_strerror(err));
		return mcr_exit_code(err);
	}
	err = statlog_store(db, log, why, sizeof(why));
	cerr = db_close(db);
	if (!err && cerr < 0)
		err = cerr;
	if (!err)
		return 0;
	if (err == -MCR_E_BAD_INPUT || err == -MCR_E_CORRUPT)
		cli_msg("import: --stat-log %s: %s", a->stat_log, why);
	else if (import_output_error(err))
		cli_msg("import: cannot write the output %s: %s", a->out, mcr_strerror(err));
	else
		cli_msg("import: --stat-log %s: %s", a->stat_log, mcr_strerror(err));
	return mcr_exit_code(err);
}

int cmd_import(int argc, char **argv)
{
	struct argp argp = { import_options, import_parse, "TRACE.dat", import_doc, 0,
			     import_help_filter, 0 };
	struct import_args a = { 0 };
	struct import_result res;
	struct cli_progress prog;
	const char *inputs[3] = { NULL, NULL, NULL };
	struct statlog log = { 0 };
	char why[256] = "";
	struct outfile_policy pol;
	struct import_opts o;
	struct outfile of;
	struct db *db = NULL;
	char *out = NULL, *opts;
	int err, cerr;

	argv[0] = "memcg-replay import";	/* what argp's messages name */
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return MCR_EXIT_USAGE;
	if (!a.out) {
		out = import_default_out(a.trace);
		if (!out)
			return cli_fail(-ENOMEM, "import");
		a.out = out;
	}
	pol = (struct outfile_policy){ .inputs = inputs, .force = a.force };
	inputs[0] = a.trace;
	err = cli_input_check("", a.trace);
	/* else its default output is itself: "is the input file" would puzzle */
	if (!err && !db_file_identify(a.trace)) {
		cli_msg("import: %s is a memcg-replay trace database already, not a trace-cmd "
			"recording: replay, report and info read it as it is", a.trace);
		err = MCR_EXIT_CORRUPT;
	}
	/* the log first: a bad one fails before the (long) import */
	if (!err && a.stat_log) {
		inputs[1] = a.stat_log;
		err = cli_input_check("--stat-log ", a.stat_log);
		if (!err)
			err = import_stat_log_load(&a, &log, why, sizeof(why));
	}
	if (!err)
		err = cli_outfile_begin("import", &of, a.out, &pol);
	if (err) {
		statlog_free(&log);
		free(out);
		return err;
	}
	/* scratch: no journal beside it, its size at the end the most it took on disk */
	err = db_create_scratch(of.tmp, &db);
	if (err) {
		outfile_abort(&of);
		cli_msg("import: cannot write the output %s: %s", a.out, mcr_strerror(err));
		free(out);
		return mcr_exit_code(err);
	}
	opts = import_options_json(&a);
	cli_progress_init(&prog, "import", 0);
	if (a.quiet)
		cli_progress_quiet(&prog);
	o = (struct import_opts){
		.trace_path = a.trace, .plain = a.plain, .cgroupfs = a.cgroupfs,
		.options = opts, .progress = import_progress, .progress_ctx = &prog,
	};
	/*
	 * libtracecmd 1.3.1 keeps the chunks of a compressed (v7) trace.dat
	 * it has decompressed in a list that grows with the file and that it
	 * walks at every page it frees: the walk is most of the import of a
	 * large file.  Its buffers, 32 to 64 KiB, mmapped instead of taken
	 * from the heap leave the list's nodes close together, and the walk
	 * twice as fast (README, Performance: bench/import.sh).
	 */
	mallopt(M_MMAP_THRESHOLD, IMPORT_MMAP_THRESHOLD);
	err = import_run(&o, db, &res);
	cerr = db_close(db);
	err = err ?: cerr;
	cli_progress_done(&prog, res.records);
	free(opts);
	if (err) {
		int code = mcr_exit_code(err);

		outfile_abort(&of);

		if (import_output_error(err))
			cli_msg("import: cannot write the output %s: %s", a.out, mcr_strerror(err));
		else if (res.refused)
			cli_msg("%s: %s: refused by the readers' check, nothing written%s%s", a.trace,
				mcr_strerror(err), res.why[0] ? ": " : "", res.why);
		else if (res.detail)
			cli_msg("%s: %s: %s", err == -MCR_E_BAD_INPUT && a.cgroupfs ? a.cgroupfs :
				a.trace, mcr_strerror(err), res.detail);
		else
			cli_msg("%s: %s", a.trace, mcr_strerror(err));
		statlog_free(&log);
		free(out);
		return code;
	}
	if (a.stat_log) {
		err = import_stat_log_store(&a, &of, &log);
		if (err) {
			outfile_abort(&of);
			statlog_free(&log);
			free(out);
			return err;
		}
	}
	err = cli_outfile_commit("import", &of);	/* names the output's trouble */
	if (err) {
		free(out);
		return err;
	}
	if (!a.quiet) {
		import_summary(&a, &res);
		if (a.stat_log)
			printf("  memory.stat reads logged in %s: %zu (%zu cgroup%s, %zu lines, "
			       "clock %s) into table stat_reads\n", a.stat_log, log.nr_rd,
			       log.nr_cg, log.nr_cg == 1 ? "" : "s", log.nr_ln, log.clock);
	}
	import_warnings(&a, &res);
	statlog_free(&log);
	free(out);
	return MCR_EXIT_OK;
}
