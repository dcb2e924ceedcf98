/* SPDX-License-Identifier: GPL-2.0 */
/*
 * outfile.h - the one policy for the files memcg-replay writes (synth -o,
 * import -o, report -o, calibrate -o) and memcg-capture -o.
 *
 * Contract: outfile_check() decides, before anything is written, whether
 * @path may be replaced: only a regular file (or nothing) that is none of
 * the inputs (same inode: even with force), and, unless forced, empty or of
 * the kind the command writes (a trace database for synth, import and
 * capture; policy->ours() for a report or a calibration file, which never
 * replace a trace database unforced).  outfile_begin() checks again,
 * remembers whether @path existed and which file it was, and creates a
 * temporary file in the same directory (so the final rename is atomic), armed
 * for SIGINT/SIGTERM/SIGHUP to remove it and what lies beside it (its SQLite
 * sidecars, import's decompressed copy: db_file_sfx[]); a signal ignored at begin (nohup's
 * SIGHUP) stays ignored.
 *
 * outfile_commit(), once the writer has closed the temporary file, publishes
 * it under @path unless another process got there first, by db/'s rules
 * (db/db_file.h: a new @path never replaces another's file; an existing one
 * is replaced only while it is the file checked and no SQLite connection
 * uses it), with the signals held.
 *
 * Until commit the old @path is never touched, so a failed, full-disk or
 * interrupted run leaves the old output as it was and no file of its own
 * behind.  outfile_abort() removes the temporary file and its sidecars; a
 * failed commit has done so, except that with of->keep set a failed commit
 * (lost to another process: of->why set; or an errno) leaves the file under
 * of->tmp, for the caller to name and free (a capture keeps what it
 * recorded).  Never prints: returns negative errno and a reason.  One
 * outfile at a time per process (the signal handler has one slot).
 */
#ifndef MCR_CLI_OUTFILE_H
#define MCR_CLI_OUTFILE_H

#include <stdbool.h>

#include "db_file.h"

/* What a command may replace at its output path. */
struct outfile_policy {
	const char *const	*inputs;	/* NULL-terminated, or NULL: never replaced */
	bool			force;		/* --force: a non-empty file not of its kind too */
	/*
	 * NULL: the command writes trace databases, and one may be replaced.
	 * Else true for a file of the command's own kind (a report, a
	 * calibration file); a trace database is then refused with @is_db,
	 * any other non-empty file with @not_ours (static phrases).
	 */
	bool			(*ours)(const char *path);
	const char		*not_ours;
	const char		*is_db;
};

struct outfile {
	const char	*path;	/* the final name */
	char		*tmp;	/* where the writer writes; NULL once committed or aborted */
	struct db_file_was was;	/* the file at @path at begin: commit replaces only it */
	char		why[96];	/* commit's reason for -EEXIST or -EBUSY, else "" */
	bool		keep;		/* the caller's: keep of->tmp when commit fails */
};

/*
 * 0 if @path may be written; else a negative errno and *@why, a static
 * phrase naming the reason ("is a device or FIFO, not a regular file", ...),
 * or NULL when the errno says it (a directory that does not exist, ...).
 */
int outfile_check(const char *path, const struct outfile_policy *p, const char **why);

/*
 * Creates of->tmp (empty, 0600) for the writer to replace, after checking
 * @path again (*@why as outfile_check()); -errno if it cannot.
 */
int outfile_begin(struct outfile *of, const char *path, const struct outfile_policy *p,
		  const char **why);
int outfile_commit(struct outfile *of);	/* publish at path; abort on failure */
void outfile_abort(struct outfile *of);		/* remove tmp and its sidecars */

/*
 * An input the command reads whole (a trace.dat, a calibration file): 0 if
 * it is a regular file, else -EISDIR, or -ENXIO with *@why ("is a FIFO, not
 * a regular file") for what would block or never end; -errno when it cannot
 * be opened.  Never blocks (O_NONBLOCK).
 */
int outfile_input_check(const char *path, const char **why);

/*
 * The exit code of an output path outfile_*() refused or could not use, or
 * of an input outfile_input_check() refused: 3 (NOFILE, "the output cannot
 * be created") for the path's own trouble (refused, lost to another process,
 * too long, not a directory, no permission), else mcr_exit_code().
 */
int outfile_exit_code(int err);

#endif
