/* SPDX-License-Identifier: GPL-2.0 */
/*
 * outfile.h - the one policy for the files memcg-replay writes (synth -o,
 * import -o) and memcg-capture -o.
 *
 * Contract: outfile_check() decides, before anything is written, whether
 * @path may be replaced: only a regular file (or nothing) that is not the
 * input (same inode) and, unless forced, is a memcg-replay database or empty.
 * outfile_begin() names a temporary file in the same directory (so the final
 * rename(2) is atomic) and arms SIGINT/SIGTERM/SIGHUP to remove it, its
 * SQLite sidecars and import's decompressed copy beside it (import.h);
 * outfile_commit() renames it (and a -wal its writer could not checkpoint)
 * over @path once the writer has closed it, and
 * outfile_abort() removes it.  Until commit the old @path is never touched,
 * so a failed, full-disk or interrupted run leaves the old output as it was
 * and no -wal/-shm behind.  Never prints: returns negative errno and a reason.
 * One outfile at a time per process (the signal handler has one slot).
 */
#ifndef MCR_CLI_OUTFILE_H
#define MCR_CLI_OUTFILE_H

#include <stdbool.h>

struct outfile {
	const char	*path;	/* the final name */
	char		*tmp;	/* where the writer writes; NULL once committed or aborted */
};

/*
 * 0 if @path may be written; else a negative errno and *@why, a static
 * phrase naming the reason ("is a device or FIFO, not a regular file", ...).
 * @input (may be NULL): the file being read, never to be replaced.
 */
int outfile_check(const char *path, const char *input, bool force, const char **why);

/* Creates of->tmp (empty, 0600) for the writer to replace; -errno if it cannot. */
int outfile_begin(struct outfile *of, const char *path);
int outfile_commit(struct outfile *of);	/* rename over path; abort on failure */
void outfile_abort(struct outfile *of);		/* remove tmp and its sidecars */

#endif
