/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli.h - the memcg-replay tool layer: subcommands and the helpers they share.
 *
 * Contract: only cli/ (memcg-capture's cli/capture/ included) prints to the
 * user and chooses exit codes.  Each subcommand is one file cli/cmd_<name>.c exporting
 * int cmd_<name>(int argc, char **argv) that parses its own options with argp
 * and returns an exit code from enum mcr_exit (sim/base/error.h).
 */
#ifndef MCR_CLI_H
#define MCR_CLI_H

/* A numeric macro as a string, for --help texts that must not drift from the code. */
#define CLI_STR_(x)	#x
#define CLI_STR(x)	CLI_STR_(x)

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db.h"
#include "error.h"
#include "exit.h"
#include "msg.h"

/* --max-hypotheses, shared by replay and validate: a count in [1, 2^20], else argp_error(). */
#define CLI_OPTION_MAX_HYP \
	{ "max-hypotheses", 'H', "N", 0, "orders inside lock windows the inference keeps at " \
	  "once (default " CLI_STR(REPLAY_MAX_HYP_DEFAULT) ")", 0 }
/* --retry, shared by replay and validate: a factor in [0, 1000], else argp_error(). */
#define CLI_OPT_RETRY	0x1f0
#define CLI_OPTION_RETRY \
	{ "retry", CLI_OPT_RETRY, "K", 0, "where the inference missed values the kernel " \
	  "recorded after its cap had dropped orders, search again from the start, wider: " \
	  CLI_STR(REPLAY_WIDER_CAP) " times the cap, never halved, over the " \
	  CLI_STR(REPLAY_WIDER_AHEAD) " traced flushes up to each value missed, where the " \
	  "order is kept or no diagram is held; else " CLI_STR(REPLAY_WIDER_BUDGET) " times " \
	  "the exact diagram's budget there.  It is given up once its work (orders walked " \
	  "and diagram steps: the same on any machine) passes K times the first pass's by " \
	  "the same flush plus an eighth of its whole, or once it has missed more than " \
	  "three quarters as many values as the first pass by the same flush (from a " \
	  "quarter of its misses on).  What it finds replaces the first pass only where it " \
	  "misses fewer (default " CLI_STR(REPLAY_RETRY_DEFAULT) "; 0: never)", 0 }
struct argp_state;
double cli_arg_retry(struct argp_state *state, const char *arg);

/*
 * @s as one CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break; a byte that belongs to no well-formed UTF-8 sequence is written as
 * U+FFFD, as JSON does, so that the file is UTF-8 text.  NULL: empty.
 */
void cli_csv_field(FILE *f, const char *s);

unsigned int cli_arg_max_hyp(struct argp_state *state, const char *arg);
/*
 * The one FILE operand of replay, validate, report and info: handles
 * ARGP_KEY_ARG and ARGP_KEY_END into *@file; ARGP_ERR_UNKNOWN for other keys,
 * so a parser's default case can return it.
 */
int cli_arg_file(int key, char *arg, struct argp_state *state, const char **file);

/*
 * Opens a trace database, printing the reason and setting *exit_code on
 * failure; warns (one line) when it holds an incomplete capture.
 */
struct db *cli_open_db(const char *path, bool writable, int *exit_code);

/*
 * cli_fail() for an error reading @db's events: the line also names the
 * event and the value refused (db_why()) when the reader said which.
 */
int cli_fail_db(struct db *db, int err, const char *path);

/*
 * The warning for @lost of the trace's @windows rstat lock windows whose
 * unlock event is missing (replay_window_stats.unlock_lost); nothing if none.
 */
void cli_warn_unlock_lost(const char *path, uint64_t lost, uint64_t windows);
/* True, with *@why, for a memcg-capture that did not reach its clean end. */
bool cli_capture_incomplete(struct db *db, char *why, size_t len);
/*
 * The trace's own MEMCG_CHARGE_BATCH (default 64) and online CPUs (else the
 * possible ones; 0 if neither), as replay takes them: a run at other values
 * is a point of a grid.
 */
void cli_trace_own(struct db *db, int64_t *batch, int64_t *online);

/*
 * The output policy (cli/outfile.h) for @cmd's output @path: MCR_EXIT_OK, or
 * the reason printed ("CMD: output PATH is the input file") and its exit code,
 * 3 for a path refused, unusable or lost to another process.  check: before
 * anything is read or measured; begin and commit around the writing.
 */
struct outfile;
struct outfile_policy;
int cli_outfile_check(const char *cmd, const char *path, const struct outfile_policy *p);
int cli_outfile_begin(const char *cmd, struct outfile *of, const char *path,
		      const struct outfile_policy *p);
int cli_outfile_commit(const char *cmd, struct outfile *of);
/*
 * An input read whole (a trace.dat, a calibration file) must be a regular
 * file: else "WHATPATH is a FIFO, not a regular file" and exit 3, without
 * blocking.  @what prefixes the path ("--calibration ", or "").
 */
int cli_input_check(const char *what, const char *path);

/*
 * A progress line on stderr, only when it is a TTY (never into a file or a
 * pipe) and not after cli_progress_quiet(): events done / total, rate,
 * elapsed time and ETA, rewritten in place at most ~5 times per second; the
 * final line stays (with a newline) only for runs longer than the period.
 * The rate (and the ETA from it) counts from the first update on: a pass
 * whose line begins at its first call has events done before the line's
 * clock started, which counted from the start gave billions of events/s.
 */
struct cli_progress {
	const char	*what;
	uint64_t	total;		/* 0: unknown */
	uint64_t	last_ns;
	uint64_t	start_ns;
	uint64_t	every_ns;	/* refresh period; MCR_PROGRESS_MS overrides 200 ms */
	uint64_t	rate_ns;	/* the first update: the rate's start */
	uint64_t	rate_done;	/* events done then */
	bool		rate_set;	/* an update has come */
	bool		tty;
};
void cli_progress_init(struct cli_progress *p, const char *what, uint64_t total);
void cli_progress_update(struct cli_progress *p, uint64_t done);
void cli_progress_quiet(struct cli_progress *p);
void cli_progress_done(struct cli_progress *p, uint64_t done);

/*
 * The lines of a command whose library runs several passes over the trace
 * (struct replay_params.progress): a line of its own for each, named after
 * the pass ("replay", "infer", "wider search", "replay again"), the one
 * before ended with its final figures.  Zero it, set what (the command's
 * name), total and quiet, and hand cli_progress_pass() as the callback.
 */
struct cli_progress_passes {
	struct cli_progress	line;
	const char		*what;	/* the pass itself: the command's name */
	uint64_t		total, done;
	const char		*pass;	/* the line's */
	char			label[48];
	bool			started, quiet;
};
void cli_progress_pass(void *ctx, const char *pass, uint64_t done);
/* The last line's final figures: @done events (0: the last count it was given). */
void cli_progress_passes_done(struct cli_progress_passes *pp, uint64_t done);

uint64_t cli_now_ns(void);	/* CLOCK_MONOTONIC */

int cmd_synth(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif
