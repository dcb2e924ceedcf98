// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture - record the memcg rstat tracepoints of this host into a
 * trace database for memcg-replay.  The program: it parses the options
 * (args.c), checks the host (preflight.c), prepares the database (prepare.c),
 * traces until -d, COMMAND (command.c) or a stop signal (signals.c) ends it,
 * then prints the summary and publishes -o FILE; it returns the exit code.
 * With --rotate the wait moves the capture on to the next file of the series
 * whenever one is due (rotate.c), and the last one is published here.
 * Capturing itself is capture/live.c and its siblings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture_local.h"
#include "error.h"
#include "outfile.h"

const char *cli_prog = PROG;

static void capture_close_live(struct capture *c)
{
	struct live_statread_totals t;
	char name[64];

	/* a failure after --read's threads started: they read into the database */
	live_statreads_stop(c->reads, &t);
	c->reads = NULL;
	if (!c->lv)
		return;
	if (c->watch) {
		/* the watch's thread ends once the readers did */
		live_stop(c->lv);
		watch_stop(c);
	}
	if (live_close(c->lv, name, sizeof(name)) < 0)
		msg("could not remove tracefs instance %s (still busy); the next memcg-capture "
		    "removes it, or: rmdir /sys/kernel/tracing/instances/%s", name, name);
	c->lv = NULL;
}

static void progress(struct capture *c, uint64_t start, bool final)
{
	struct live_totals t;
	double secs = (double)(now_ns() - start) / 1e9;

	live_totals(c->lv, &t);
	fprintf(stderr, "\r" PROG ": %.1f s, %llu events, %.0f events/s, lost %llu%s", secs,
		(unsigned long long)t.records, secs > 0 ? (double)t.records / secs : 0.0,
		(unsigned long long)(t.kernel_lost > t.missed ? t.kernel_lost : t.missed),
		final ? "\n" : "   ");
}

/*
 * Wait for the duration, the command or a signal; the capture runs
 * meanwhile.  Each wakeup costs CPU the capture is measured by, so this
 * thread sleeps WAIT_NS at a time: a signal or the command's end cuts the
 * sleep short, and the duration bounds it.
 */
#define WAIT_NS		200000000ull
static void wait_for_end(struct capture *c)
{
	uint64_t start = now_ns(), last_poll = start, last_print = 0, end = 0;
	bool tty = isatty(STDERR_FILENO);
	struct sigaction sa = { .sa_handler = on_child };
	struct live_totals t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	if (c->args.duration > 0)
		end = start + (uint64_t)(c->args.duration * 1e9);
	for (;;) {
		struct timespec ts;
		uint64_t now, nap = WAIT_NS;
		int status;

		if (stop_signal)
			break;
		if (c->child > 0 && waitpid(c->child, &status, WNOHANG) == c->child) {
			c->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			c->child = 0;
			c->child_ended = true;
			break;
		}
		now = now_ns();
		if (end && now >= end)
			break;
		live_totals(c->lv, &t);
		if (t.write_error)
			break;
		if (now - last_poll >= 1000000000ull) {
			live_poll_loss(c->lv);
			last_poll = now;
		}
		if (tty && now - last_print >= 200000000ull) {
			progress(c, start, false);
			last_print = now;
		}
		if ((c->args.rotate_ns || c->args.rotate_bytes) && rotate_due(c, now)) {
			capture_rotate(c);
			continue;
		}
		if (end && end - now < nap)
			nap = end - now;
		if (c->args.rotate_ns && c->rot.due - now < nap)
			nap = c->rot.due - now;
		ts.tv_sec = (time_t)(nap / 1000000000);
		ts.tv_nsec = (long)(nap % 1000000000);
		nanosleep(&ts, NULL);
	}
	signal(SIGCHLD, SIG_DFL);
	if (tty && last_print)
		progress(c, start, true);
}

/* Events in the database now: committed chunks, not what was handed to the writer. */
static int64_t stored_in_file(struct db *db)
{
	struct db_iter *it;
	uint64_t n;

	if (db_iter_open(db, &it) < 0)
		return -1;
	n = db_iter_count(it);
	db_iter_close(it);
	return (int64_t)n;
}

/*
 * The summary line, from what the file holds: events read but not stored (a
 * full disk) are lost events, with @why.  1 if anything was lost.
 */
static int summarize(struct capture *c, uint64_t start_ns, uint64_t end_ns, int64_t in_file,
		     const char *why)
{
	struct live_totals t;
	uint64_t lost, unread, stored, unstored;
	double secs = (double)(end_ns - start_ns) / 1e9;

	live_totals(c->lv, &t);
	stored = in_file >= 0 ? (uint64_t)in_file : t.stored;
	/* the --cgroup filter drops events on purpose: those are not lost */
	unstored = t.records > stored + t.filtered ? t.records - stored - t.filtered : 0;
	unread = t.kernel_read > t.records ? t.kernel_read - t.records : 0;
	/* the stats and the in-band markers count the same overwritten events */
	lost = (t.kernel_lost > t.missed ? t.kernel_lost : t.missed) + unread;
	printf(PROG ": %llu events in %.1f s (%.0f/s) from %d CPUs, %llu stored in %s",
	       (unsigned long long)t.records, secs, secs > 0 ? (double)t.records / secs : 0.0,
	       live_nr_cpus(c->lv), (unsigned long long)stored, c->args.output);
	if (c->args.rotate_ns || c->args.rotate_bytes)
		printf("-*.db (%u files)", c->rot.index + 1);
	if (t.filtered)
		printf(" (%llu outside --cgroup)", (unsigned long long)t.filtered);
	if (!lost && !unstored && !t.missed_unknown) {
		printf("; lost: none\n");
		return 0;
	}
	if (unstored)
		printf("; LOST: %llu events read but not stored (%s)",
		       (unsigned long long)unstored, why ? why : "the writer stopped");
	if (!lost && !t.missed_unknown) {
		printf("\n");
		return 1;
	}
	printf("; LOST: %llu events (ring-buffer stats: overrun/dropped %llu; in-band markers:"
	       " %llu + %llu sub-buffers of unknown count; read by another consumer: %llu);"
	       " see the gaps and cpu_stats tables; a larger -b helps\n",
	       (unsigned long long)lost, (unsigned long long)t.kernel_lost,
	       (unsigned long long)t.missed, (unsigned long long)t.missed_unknown,
	       (unsigned long long)unread);
	return 1;
}

/* Stopped by a signal before tracing ran: nothing is published. */
static int stopped_before_start(struct capture *c)
{
	msg("stopped by %s before the capture started: nothing recorded, %s not written (an "
	    "existing file is left as it was); exit 16, no events", sig_name(stop_signal),
	    c->args.output);
	return MCR_EXIT_NO_EVENTS;
}

/* --read: stop its threads and say what they logged. */
static void stop_reads(struct capture *c)
{
	struct live_statread_totals t;

	if (!c->reads)
		return;
	live_statreads_stop(c->reads, &t);
	c->reads = NULL;
	msg("--read: %llu reads of memory.stat logged, %llu lines (table stat_reads)",
	    (unsigned long long)t.reads, (unsigned long long)t.lines);
	if (t.error)
		msg("warning: --read %s stopped after %llu reads: %s", t.failed,
		    (unsigned long long)t.failed_reads, mcr_strerror(t.error));
}

/*
 * Trace until the duration, the command or a signal ends it.  Returns an
 * exit code for a failure to start, else 0 with *@err the capture's own
 * result (negative: a database error, what was committed stays).
 */
static int capture_record(struct capture *c, const char *tdir, uint64_t *start_ns,
			  uint64_t *end_ns, int *err)
{
	struct live_opts lo = { 0 };
	char name[PATH_MAX + 16];
	int ret;

	if (stop_signal)
		return stopped_before_start(c);
	lo.instance = c->instance;
	lo.clock = c->args.clock;
	lo.buffer_kb = c->args.buffer_kb;
	lo.hierarchy_id = c->cg.hierarchy_id;
	lo.cgroups = c->cgt;
	lo.scoped = c->args.cgroup && strcmp(c->scope, "/");
	ret = live_open(&lo, c->db, &c->lv);
	if (ret == -MCR_E_BAD_INPUT) {
		msg("-C %s: not a trace clock of this kernel (see %s/trace_clock)", c->args.clock, tdir);
		return MCR_EXIT_BAD_INPUT;
	}
	if (ret < 0)
		return fail(ret, "setting up the tracefs instance");
	ret = db_meta_set_int(c->db, "subbuf_size", live_subbuf_size(c->lv));
	if (ret < 0)
		return fail_output(c, ret);
	/* --watch reads the meta and cgroups before the threads share the database */
	if (c->args.watch) {
		ret = watch_start(c);
		if (ret)
			return ret;
	}
	/* from here on the capture's threads share the database under their lock */
	ret = db_events_commit(c->db);
	if (ret < 0)
		return fail_output(c, ret);
	/* setting the instance up takes a while: a signal meanwhile ends it here */
	if (stop_signal)
		return stopped_before_start(c);
	live_clock_now(c->lv, start_ns);
	c->rot.start_ns = *start_ns;
	ret = live_start(c->lv);
	if (ret < 0)
		return fail(ret, "starting the capture");
	c->started = true;
	/* the first period counts from here, not from the file's creation */
	c->rot.due = now_ns() + c->args.rotate_ns;
	ret = live_statreads_start(c->lv, c->read_opts, (size_t)c->args.nr_reads, &c->reads);
	if (ret < 0)
		msg("--read: cannot start its reader threads: %s; tracing without",
		    mcr_strerror(ret));
	if (c->args.command) {
		c->child = run_command(c->args.command);
		if (c->child < 0)
			return fail(-errno, "fork");
	}
	wait_for_end(c);
	c->interrupted = stop_signal != 0;
	/* every logged read ends before tracing does: its flush is in the trace */
	stop_reads(c);
	live_clock_now(c->lv, end_ns);
	*err = live_stop(c->lv);
	/* its last output has every event the readers took */
	watch_stop(c);
	if (stop_signal)
		msg("stopping on %s", strsignal(stop_signal));
	/* we stop before the command: it gets our signal, and we reap it */
	if (c->child > 0)
		command_end(c);
	if (*err < 0)
		msg("writing %s: %s (what was committed stays readable)",
		    rotate_output_name(c, false, name, sizeof(name)), mcr_strerror(*err));
	return 0;
}

/*
 * After tracing: the closing meta, the summary, the exit code.  @ret is the
 * capture's own result: negative when the writer stopped (a full disk), and
 * then the file is kept, marked incomplete with the reason.
 */
static int capture_finish(struct capture *c, uint64_t start_ns, uint64_t end_ns, int ret)
{
	bool rotating = c->args.rotate_ns || c->args.rotate_bytes;
	char name[PATH_MAX + 16];
	char why[160] = "";
	int64_t in_file;
	int lost;

	/* --rotate: this file's start, its sequence numbers */
	db_meta_set_int(c->db, "capture_start_ns", (int64_t)(rotating ? c->rot.start_ns : start_ns));
	if (rotating) {
		struct live_seq *seq = calloc((size_t)live_nr_cpus(c->lv), sizeof(*seq));
		int r = -ENOMEM;

		if (seq) {
			live_seq_current(c->lv, seq);
			r = rotate_meta_end(c, c->db, seq);
			free(seq);
		}
		if (r < 0 && ret >= 0)
			ret = r;
	}
	db_meta_set_int(c->db, "capture_end_ns", (int64_t)end_ns);
	if (c->args.command)
		db_meta_set_int(c->db, "command_exit_status", c->child_status);
	if (c->warnings[0])
		db_meta_set(c->db, "warnings", c->warnings);
	if (c->args.command && c->child_ended && c->child_status != 0)
		msg("%s exited with status %d", c->args.command[0], c->child_status);
	else if (c->args.command && c->child_status > 128)
		msg("%s ended by %s after the capture stopped (status %d)", c->args.command[0],
		    sig_name(c->child_status - 128), c->child_status);
	else if (c->args.command && c->child_status > 0)	/* -1: said in command_end() */
		msg("%s ended with status %d after the capture stopped", c->args.command[0],
		    c->child_status);
	if (ret >= 0) {
		ret = db_events_finish(c->db);
		if (ret < 0)
			msg("finishing %s: %s", rotate_output_name(c, false, name, sizeof(name)),
			    mcr_strerror(ret));
	}
	if (ret < 0) {
		snprintf(why, sizeof(why), "writing the database failed: %s", mcr_strerror(ret));
		/* best effort: on a full disk even this may not fit; "0" stays then */
		db_meta_set(c->db, "capture_incomplete", why);
	} else if (db_meta_set(c->db, "capture_complete", "1") < 0) {
		snprintf(why, sizeof(why), "could not mark it complete");
	}
	in_file = stored_in_file(c->db);
	if (c->interrupted && in_file == 0 && !c->rot.index) {
		/* stopped before anything was stored: an empty file replaces nothing */
		msg("stopped by %s before any event was stored: %s not written (an existing file "
		    "is left as it was); exit 16, no events", sig_name(stop_signal),
		    c->args.output);
		c->started = false;
		capture_close_live(c);
		return MCR_EXIT_NO_EVENTS;
	}
	if (in_file >= 0)
		in_file += (int64_t)c->rot.stored;
	lost = summarize(c, start_ns, end_ns, in_file, why[0] ? why : NULL);
	capture_close_live(c);
	if (ret < 0) {
		msg("%s is incomplete: %s; it reads up to there",
		    rotate_output_name(c, false, name, sizeof(name)), why);
		/* events the kernel gave us and the file does not hold are lost */
		return MCR_EXIT_LOST;
	}
	if (lost)
		return MCR_EXIT_LOST;
	/* a script must see its workload fail; one we ended ourselves did not */
	return c->child_ended && c->child_status ? MCR_EXIT_COMMAND : MCR_EXIT_OK;
}


/*
 * The output's temporary file: the first of a --rotate series, or -o FILE's.
 * outfile_begin() arms its own handler (remove the file, die by the signal);
 * a capture stops on a signal instead, and then removes or keeps the file
 * itself, so its handlers go back on at once.
 */
static int output_begin(struct capture *c)
{
	sigset_t stops, old;
	const char *why = NULL;
	int ret;

	stop_signals_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &old);
	if (c->args.rotate_ns || c->args.rotate_bytes)
		ret = rotate_first(c, &c->of.tmp);
	else
		ret = outfile_begin(&c->of, c->args.output,
				    &(struct outfile_policy){ .force = c->args.force }, &why);
	stop_signals_catch();
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret < 0 ? output_refused(c, ret, why) : 0;
}

static int capture_run(struct capture *c, int argc, char **argv)
{
	uint64_t start_ns = 0, end_ns = 0;
	const char *tdir = NULL;
	int rc, err = 0;

	c->argc = argc;
	c->argv = argv;
	rc = capture_preflight(c, &tdir);
	if (!rc && stop_signal)
		rc = stopped_before_start(c);
	if (!rc)
		rc = output_begin(c);
	if (!rc)
		rc = capture_prepare_db(c);
	if (!rc)
		rc = capture_record(c, tdir, &start_ns, &end_ns, &err);
	return rc ? rc : capture_finish(c, start_ns, end_ns, err);
}

int main(int argc, char **argv)
{
	struct capture c = { .child_status = -1 };
	char name[PATH_MAX + 16];
	int rc, ret;

	if (capture_args_parse(argc, argv, &c.args))
		return MCR_EXIT_USAGE;
	if (c.args.cleanup)
		return capture_cleanup();
	rc = watch_args_check(&c.args);
	if (rc)
		return rc;
	if (!strcmp(c.args.clock, "local") && !c.args.force_clock) {
		msg("-C local: the 'local' clock is per CPU and not synchronized across CPUs, so "
		    "the merged replay order could be wrong; use mono (default), or --force-clock");
		return MCR_EXIT_BAD_INPUT;
	}
	stop_signals_catch();

	rc = capture_run(&c, argc, argv);
	capture_close_live(&c);
	cgtrack_free(c.cgt);
	if (c.db) {
		ret = db_close(c.db);
		if (ret < 0 && rc == MCR_EXIT_OK)
			rc = fail(ret, rotate_output_name(&c, false, name, sizeof(name)));
	}
	/* what a capture recorded is kept even if it failed later; nothing else */
	if (c.of.tmp && c.started && (c.args.rotate_ns || c.args.rotate_bytes)) {
		char path[PATH_MAX + 16];

		ret = rotate_publish(&c, c.of.tmp, c.rot.base, path, sizeof(path));
		if (ret < 0) {
			msg("publishing %s.db: %s", c.rot.base, mcr_strerror(ret));
			msg("the recording is kept as %s", c.of.tmp);
			if (rc == MCR_EXIT_OK || rc == MCR_EXIT_LOST || rc == MCR_EXIT_COMMAND)
				rc = outfile_exit_code(ret);
		} else {
			rotate_keep(&c);
		}
		free(c.of.tmp);
		c.of.tmp = NULL;
		/* an earlier file of the series that failed */
		if (c.rot.rc && (rc == MCR_EXIT_OK || rc == MCR_EXIT_COMMAND))
			rc = c.rot.rc;
	} else if (c.of.tmp && c.started) {
		c.of.keep = true;
		ret = outfile_commit(&c.of);
		if (ret < 0) {
			msg("renaming the capture to %s: %s", c.args.output,
			    *c.of.why ? c.of.why : mcr_strerror(ret));
			if (c.of.tmp)
				msg("the recording is kept as %s", c.of.tmp);
			free(c.of.tmp);
			c.of.tmp = NULL;
			if (rc == MCR_EXIT_OK || rc == MCR_EXIT_LOST || rc == MCR_EXIT_COMMAND)
				rc = outfile_exit_code(ret);
		}
	} else {
		outfile_abort(&c.of);
	}
	return rc;
}
