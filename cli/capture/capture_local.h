/* SPDX-License-Identifier: GPL-2.0 */
/*
 * capture_local.h - private to cli/capture/, memcg-capture's program: the
 * state of one capture and what its files share.
 *
 * Contract: main.c runs a capture through preflight.c (the host and every
 * option checked before -o FILE is touched), prepare.c (the database before
 * tracing), then traces, ending COMMAND through command.c; signals.c holds the
 * signals that stop it; with --rotate, rotate.c names and publishes the files
 * of the series and moves the capture from one to the next.  The functions below that return int print their own
 * message and return an exit code from enum mcr_exit (sim/base/error.h), or 0 to
 * go on; capture_args_parse() returns argp_parse()'s result.
 */
#ifndef MCR_CAPTURE_LOCAL_H
#define MCR_CAPTURE_LOCAL_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cgroupfs.h"
#include "cgtrack.h"
#include "db.h"
#include "live.h"
#include "msg.h"
#include "outfile.h"

#define PROG			"memcg-capture"

/* --read: at most this many targets */
#define MAX_READS		16

struct capture_args {
	const char	*output;
	const char	*clock;
	const char	*cgroup;
	char		**command;
	const char	*read_path[MAX_READS];	/* --read PATH[:MS], PATH part */
	unsigned int	read_ms[MAX_READS];
	int		nr_reads;
	double		duration;
	uint64_t	rotate_ns;	/* --rotate period, or 0 */
	uint64_t	rotate_bytes;	/* --rotate size, or 0 */
	unsigned int	keep;		/* --keep: 0 keeps all */
	unsigned int	buffer_kb;
	bool		force_clock;
	bool		force;
	bool		cleanup;
	bool		watch;		/* --watch, or --prom */
	const char	*prom;		/* --prom FILE */
};

/*
 * --rotate: -o PREFIX names a series of files, PREFIX-YYYYmmddTHHMMSSZ.db by
 * each one's UTC start (rotate.c).
 */
struct capture_rot {
	char		base[PATH_MAX];		/* the current file's name less ".db" */
	char		prev[PATH_MAX];		/* the previous file's basename, "" for none */
	unsigned int	index;			/* the current file's, from 0 */
	uint64_t	start_ns;		/* its start in the trace clock */
	uint64_t	due;			/* CLOCK_MONOTONIC when its period ends (a size: the next try) */
	uint64_t	stored;			/* events in the files published */
	unsigned int	files;			/* published */
	int		rc;			/* the exit code of the first file that failed */
};

struct capture {
	struct capture_args	args;
	int			argc;
	char			**argv;
	struct capture_rot	rot;
	struct cgroupfs		cg;
	char			scope[PATH_MAX];
	char			instance[64];
	char			warnings[2048];
	struct outfile		of;	/* the database's temporary name until the end */
	struct db		*db;
	struct cgtrack		*cgt;
	struct live		*lv;
	struct live_statreads	*reads;		/* --read's threads while tracing */
	struct watch		*watch;		/* --watch's replay while tracing */
	struct live_statread_opts read_opts[MAX_READS];
	char			read_file[MAX_READS][PATH_MAX];
	pid_t			child;
	int			child_status;	/* -1: none or not exited */
	bool			child_ended;	/* on its own, before we stopped */
	bool			started;	/* tracing ran: the output is kept */
	bool			interrupted;	/* a signal ended the tracing */
};

/* The tool layer's messages, shared with memcg-replay (cli/msg.c). */
#define msg(...)	cli_msg(__VA_ARGS__)

/* One line for @err and its exit code. */
static inline int fail(int err, const char *what)
{
	return what ? cli_fail(err, "%s", what) : cli_fail_bare(err);
}

/* CLOCK_MONOTONIC in ns, for the capture's waits and progress */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* args.c: the options, with their defaults (argp exits 2 on a bad one) */
int capture_args_parse(int argc, char **argv, struct capture_args *a);

/* signals.c */
extern volatile sig_atomic_t stop_signal;
extern volatile sig_atomic_t stop_count;	/* signals received: each is passed on */
void stop_signals_set(sigset_t *set);
void stop_signals_catch(void);
const char *sig_name(int sig);

/* preflight.c */
int capture_cleanup(void);
int capture_preflight(struct capture *c, const char **tdir);

/* prepare.c */
int capture_prepare_db(struct capture *c);
int fail_output(const struct capture *c, int err);
int output_refused(const struct capture *c, int err, const char *why);

/*
 * rotate.c: --rotate.  rotate_first() names the first file and creates its
 * temporary file (*@tmp); rotate_due() says whether the current file is due
 * to end (its period, its size); capture_rotate() ends it and goes on in the
 * next (a failure is said, and the capture goes on where it can);
 * rotate_publish() publishes a file under the first free name of @base
 * (c->rot.base: the last one's, from main()); rotate_keep() applies --keep.
 */
int rotate_first(struct capture *c, char **tmp);
bool rotate_due(struct capture *c, uint64_t now);
void capture_rotate(struct capture *c);
int rotate_publish(struct capture *c, const char *tmp, const char *base, char *path, size_t len);
void rotate_keep(struct capture *c);
/*
 * The output as messages name it: -o FILE; with --rotate the current file
 * (its usual name, PREFIX-STAMP.db), or with @series the series, PREFIX-*.db.
 */
const char *rotate_output_name(const struct capture *c, bool series, char *buf, size_t len);
/* Meta rotation_* of @db at its end (rotation_seq from @seq, live_nr_cpus() rows). */
int rotate_meta_end(struct capture *c, struct db *db, const struct live_seq *seq);

/* prepare.c: a rotated file's database before it is used: meta, item names */
int capture_db_fill(struct capture *c, struct db *db);

/*
 * watch.c: --watch's replay.  watch_args_check() before anything is touched
 * (the clock is one it can read, FILE.tmp can be made beside --prom FILE);
 * watch_start() after live_open()
 * and before live_start(); watch_stop() after live_stop(): the last output,
 * then free.  Each prints its own message; watch_stop() returns the
 * replay's error (a database's file is unaffected by it).
 */
int watch_args_check(const struct capture_args *a);
int watch_start(struct capture *c);
int watch_stop(struct capture *c);

/* command.c: COMMAND's pid (-1: fork failed); SIGCHLD's no-op handler; end it */
pid_t run_command(char **command);
void on_child(int sig);
void command_end(struct capture *c);

#endif /* MCR_CAPTURE_LOCAL_H */
