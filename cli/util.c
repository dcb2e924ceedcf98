// SPDX-License-Identifier: GPL-2.0
/* Helpers every subcommand shares: opening a trace, progress, option values. */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "utf8.h"
#include "num.h"
#include "outfile.h"

/* A trace-cmd recording (trace.dat) starts with "\x17\x08\x44tracing". */
static bool is_tracecmd_file(const char *path)
{
	static const char magic[] = "\x17\x08\x44tracing";
	char head[sizeof(magic) - 1];
	struct stat stb;
	ssize_t n = -1;
	int fd;

	/* O_NONBLOCK and regular files only: a FIFO must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (!fstat(fd, &stb) && S_ISREG(stb.st_mode))
		n = pread(fd, head, sizeof(head), 0);
	close(fd);
	return n == (ssize_t)sizeof(head) && !memcmp(head, magic, sizeof(head));
}

struct db *cli_open_db(const char *path, bool writable, int *exit_code)
{
	struct db *db = NULL;
	char why[256];
	int err = db_open_why(path, writable, &db, why, sizeof(why));

	if (err < 0) {
		if (err == -MCR_E_NOT_SQLITE && is_tracecmd_file(path)) {
			cli_msg("%s is a trace-cmd recording, not a trace database: import it first: "
				"memcg-replay import %s -o %s.db", path, path, path);
			*exit_code = mcr_exit_code(err);
		} else if (*why) {
			cli_msg("%s: %s: %s", path, mcr_strerror(err), why);
			*exit_code = mcr_exit_code(err);
		} else
			*exit_code = cli_fail(err, "%s", path);
		return NULL;
	}
	if (db_meta_defaults(db, why, sizeof(why)))
		cli_msg("warning: %s: %s", path, why);
	/* one line, so that every result of a partial capture says so */
	if (cli_capture_incomplete(db, why, sizeof(why)))
		cli_msg("warning: %s is an incomplete capture (%s): what follows covers only what "
			"it recorded", path, why);
	return db;
}

void cli_warn_unlock_lost(const char *path, uint64_t lost, uint64_t windows)
{
	if (!lost)
		return;
	cli_msg("warning: %s: %" PRIu64 " of %" PRIu64 " rstat lock windows have no "
		"cgroup_rstat_unlock event (lost from the trace): each was closed at the next lock "
		"of its CPU or task, or after the trace's longest whole window (at its lock if none), "
		"so the order of updates and flush visits around them is a guess and results near "
		"them are inexact", path, lost, windows);
}

int cli_fail_db(struct db *db, int err, const char *path)
{
	const char *why = db ? db_why(db) : "";

	if (!*why)
		return cli_fail(err, "%s", path);
	cli_msg("%s: %s: %s", path, mcr_strerror(err), why);
	return mcr_exit_code(err);
}

/*
 * memcg-capture writes meta capture_complete "0" when it starts and "1" at a
 * clean end, with capture_incomplete the reason when it could still write
 * one.  A capture made before that key is judged by capture_end_ns, which it
 * wrote only at its end.
 */
bool cli_capture_incomplete(struct db *db, char *why, size_t len)
{
	char *src = NULL, *reason = NULL;
	bool capture, incomplete;
	int64_t v;

	capture = !db_meta_get(db, "source", &src) && !strcmp(src, "memcg-capture");
	free(src);
	if (!capture)
		return false;
	if (!db_meta_get_int(db, "capture_complete", &v))
		incomplete = v != 1;
	else
		incomplete = db_meta_get_int(db, "capture_end_ns", &v) < 0;
	if (!incomplete)
		return false;
	if (!db_meta_get(db, "capture_incomplete", &reason) && *reason)
		snprintf(why, len, "%s", reason);
	else
		snprintf(why, len, "it never reached its end: killed, crashed or out of disk space");
	free(reason);
	return true;
}

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cli_progress_init(struct cli_progress *p, const char *what, uint64_t total)
{
	const char *env;
	unsigned long ms;
	char *end;

	p->what = what;
	p->total = total;
	p->start_ns = p->last_ns = cli_now_ns();
	p->rate_set = false;
	p->tty = isatty(STDERR_FILENO);
	/*
	 * A run shorter than the period shows no line.  The tests set
	 * MCR_PROGRESS_MS=0 so that they do not depend on the machine's speed.
	 */
	env = getenv("MCR_PROGRESS_MS");
	ms = env ? strtoul(env, &end, 10) : 200;
	if (!env || *end || end == env)
		ms = 200;
	p->every_ns = ms * 1000000ull;
}

/* -q: no line even on a terminal. */
void cli_progress_quiet(struct cli_progress *p)
{
	p->tty = false;
}

/* "1m05s", "12s": short enough that the line keeps its width as time goes on. */
static void progress_secs(char *buf, size_t len, double secs)
{
	unsigned long s = secs > 0 ? (unsigned long)(secs + 0.5) : 0;

	if (s >= 3600)
		snprintf(buf, len, "%luh%02lum", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
}

/*
 * One line, rewritten in place: \r goes back to its start and \033[K clears
 * what a longer earlier line left, so the line never wraps into a second one.
 */
static void progress_print(struct cli_progress *p, uint64_t done, uint64_t now, const char *end)
{
	double secs = (double)(now - p->start_ns) / 1e9;
	double rate = secs > 0 ? (double)done / secs : 0;
	char el[32], eta[32];

	if (p->rate_set && now > p->rate_ns && done >= p->rate_done)
		rate = (double)(done - p->rate_done) / ((double)(now - p->rate_ns) / 1e9);

	progress_secs(el, sizeof(el), secs);
	if (p->total && done <= p->total) {
		if (rate > 0)
			progress_secs(eta, sizeof(eta), (double)(p->total - done) / rate);
		else
			snprintf(eta, sizeof(eta), "?");
		fprintf(stderr, "\r%s: %llu/%llu events (%.0f%%), %.0f events/s, %s, ETA %s\033[K%s",
			p->what, (unsigned long long)done, (unsigned long long)p->total,
			100.0 * (double)done / (double)p->total, rate, el, eta, end);
	} else {
		fprintf(stderr, "\r%s: %llu events, %.0f events/s, %s\033[K%s", p->what,
			(unsigned long long)done, rate, el, end);
	}
	fflush(stderr);
}

void cli_progress_update(struct cli_progress *p, uint64_t done)
{
	uint64_t now;

	if (!p->tty)
		return;
	now = cli_now_ns();
	if (!p->rate_set) {	/* the rate's start: no line, it has no interval yet */
		p->rate_set = true;
		p->rate_ns = now;
		p->rate_done = done;
		return;
	}
	if (now - p->last_ns < p->every_ns)
		return;
	p->last_ns = now;
	progress_print(p, done, now, "");
}

void cli_progress_done(struct cli_progress *p, uint64_t done)
{
	/* a line was shown (the run outlived the period): end it with its final figures */
	if (!p->tty || cli_now_ns() - p->start_ns < p->every_ns)
		return;
	progress_print(p, done, cli_now_ns(), "\n");
}

void cli_progress_pass(void *ctx, const char *pass, uint64_t done)
{
	struct cli_progress_passes *pp = ctx;

	if (!pp->started || pass != pp->pass) {
		if (pp->started)
			cli_progress_done(&pp->line, pp->done);
		if (!pass)
			snprintf(pp->label, sizeof(pp->label), "%s", pp->what);
		else if (!strcmp(pass, "search"))
			snprintf(pp->label, sizeof(pp->label), "wider search");
		else if (!strcmp(pass, "again"))
			snprintf(pp->label, sizeof(pp->label), "%s again", pp->what);
		else
			snprintf(pp->label, sizeof(pp->label), "%s", pass);
		cli_progress_init(&pp->line, pp->label, pp->total);
		if (pp->quiet)
			cli_progress_quiet(&pp->line);
		pp->pass = pass;
		pp->started = true;
	}
	pp->done = done;
	cli_progress_update(&pp->line, done);
}

void cli_progress_passes_done(struct cli_progress_passes *pp, uint64_t done)
{
	if (pp->started)
		cli_progress_done(&pp->line, done ? done : pp->done);
}

unsigned int cli_arg_max_hyp(struct argp_state *state, const char *arg)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || *end || end == arg || n < 1 || n > 1 << 20)
		argp_error(state, "--max-hypotheses: not a count in [1, 1048576]: '%s'", arg);
	return (unsigned int)n;
}

double cli_arg_retry(struct argp_state *state, const char *arg)
{
	double k;

	if (cli_num_double(arg, 0, 1000, &k))
		argp_error(state, "--retry: not a factor in [0, 1000]: '%s'", arg);
	return k;
}

int cli_arg_file(int key, char *arg, struct argp_state *state, const char **file)
{
	switch (key) {
	case ARGP_KEY_ARG:
		if (*file)
			argp_error(state, "one FILE only");
		*file = arg;
		return 0;
	case ARGP_KEY_END:
		if (!*file)
			argp_error(state, "FILE missing");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int cli_outfile_fail(const char *cmd, const char *path, int err, const char *why)
{
	if (why && *why)
		cli_msg("%s: output %s %s", cmd, path, why);
	else
		cli_msg("%s: output %s: %s", cmd, path, mcr_strerror(err));
	return outfile_exit_code(err);
}

int cli_outfile_check(const char *cmd, const char *path, const struct outfile_policy *p)
{
	const char *why;
	int err = outfile_check(path, p, &why);

	return err ? cli_outfile_fail(cmd, path, err, why) : MCR_EXIT_OK;
}

int cli_outfile_begin(const char *cmd, struct outfile *of, const char *path,
		      const struct outfile_policy *p)
{
	const char *why;
	int err = outfile_begin(of, path, p, &why);

	return err ? cli_outfile_fail(cmd, path, err, why) : MCR_EXIT_OK;
}

int cli_outfile_commit(const char *cmd, struct outfile *of)
{
	int err = outfile_commit(of);

	if (!err)
		return MCR_EXIT_OK;
	if (*of->why)
		return cli_outfile_fail(cmd, of->path, err, of->why);
	cli_msg("%s: cannot write the output %s: %s", cmd, of->path, mcr_strerror(err));
	return outfile_exit_code(err);
}

int cli_input_check(const char *what, const char *path)
{
	const char *why;
	int err = outfile_input_check(path, &why);

	if (!err)
		return MCR_EXIT_OK;
	if (why)
		cli_msg("%s%s %s", what, path, why);
	else
		cli_msg("%s%s: %s", what, path, mcr_strerror(err));
	return outfile_exit_code(err);
}

void cli_trace_own(struct db *db, int64_t *batch, int64_t *online)
{
	*batch = 64;
	*online = 0;
	db_meta_get_int(db, "batch_size", batch);
	if (db_meta_get_int(db, "nr_cpus_online", online) < 0)
		db_meta_get_int(db, "nr_cpus_possible", online);
}

/* U+FFFD, the replacement character, in UTF-8 */
static const char cli_utf8_replacement[] = "\xef\xbf\xbd";

void cli_csv_field(FILE *f, const char *s)
{
	bool quote;
	size_t n;

	if (!s)
		return;
	quote = strpbrk(s, ",\"\r\n");
	if (quote)
		fputc('"', f);
	for (; *s; s += n ? n : 1) {
		n = mcr_utf8_len(s);
		if (!n)
			fputs(cli_utf8_replacement, f);
		else if (*s == '"')
			fputs("\"\"", f);
		else
			fwrite(s, 1, n, f);
	}
	if (quote)
		fputc('"', f);
}
