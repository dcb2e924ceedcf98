/* SPDX-License-Identifier: GPL-2.0 */
/*
 * db_file.h - an output file's life on disk: written under a temporary name
 * beside its final one, then published there or discarded.  Trace
 * databases (db_create() on the temporary name) and the tool's other
 * outputs (reports, calibration files) alike.
 *
 * Contract: db_file_create() creates the temporary file (empty, 0600) in
 * the final name's directory, so that the rename at the end is atomic.
 * db_file_publish() puts it in place unless another process got there
 * first; the caller says whether the final name held a file when it began,
 * one it may replace, and which (its inode):
 *  - nothing there at begin: renameat2(RENAME_NOREPLACE) (link(2) where the
 *    file system lacks it): a file another process put there meanwhile is
 *    left as it is, and publish fails with -EEXIST;
 *  - a file there at begin: it must still be that inode (else -EEXIST), and
 *    no process may hold an SQLite lock on it or on its -shm (a replay
 *    writing its results, a reader of the trace: -EBUSY).  Publish takes
 *    SQLite's exclusive lock itself while it replaces the file, so no SQLite
 *    connection can start using the old file meanwhile.
 * Only then are the final name's -journal, -wal and -shm removed (no file
 * at begin: sidecars left without their database, unless a connection
 * holds the -shm): with no lock on them they belong to no live process, and
 * an interrupted writer's journal would otherwise be played into the new
 * file (one that cannot be removed fails the publish, @why says so).
 * Sidecars of a database in use are never touched.  A -wal its writer could
 * not checkpoint (a full disk) moves with the new file.
 *
 * Until publish the final name is never touched.  db_file_discard() removes
 * the temporary file and everything beside it (db_file_sfx[]); a failed
 * publish leaves them to the caller, to discard or keep (a capture keeps
 * what it recorded).  Never prints, never handles signals (the caller holds
 * them around create and publish, and removes db_file_sfx[] beside the
 * temporary name on one); returns negative errno, with @why for -EEXIST
 * and -EBUSY.
 */
#ifndef MCR_DB_FILE_H
#define MCR_DB_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* PRAGMA application_id of a trace database: what tells it from other SQLite files. */
#define DB_APPLICATION_ID	0x6d637270	/* "mcrp" */

/*
 * What lies beside a file written under a temporary name: the file itself
 * (""), SQLite's sidecars; then what only ever lies beside the temporary
 * name, never the final one: a writer's scratch copy (DB_FILE_SCRATCH:
 * import's decompressed trace.dat).
 */
#define DB_FILE_SCRATCH		"-plain"
extern const char *const db_file_sfx[];
enum db_file_sfx_idx {
	DB_FILE_SFX_WAL = 1,
	DB_FILE_SFX_SHM,
	DB_FILE_SFX_JOURNAL,
	DB_FILE_SFX_SCRATCH,	/* from here on, never beside a final name */
	DB_FILE_SFX_ALL,
	/* db_file_sfx[0 .. DB_FILE_SFX_DB): a database's own */
	DB_FILE_SFX_DB = DB_FILE_SFX_SCRATCH,
};

/* The file at the final name when the writer began: publish replaces only it. */
struct db_file_was {
	bool	existed;	/* else publish replaces nothing */
	dev_t	dev;
	ino_t	ino;
};

/*
 * Create *@tmp (malloc'd) for @path: .NAME.tmp-PID in @path's directory
 * (another name, .NAME.tmp-PID-N, where a killed run of our pid left one).
 * -ENAMETOOLONG, -errno of the directory.
 */
int db_file_create(const char *path, char **tmp);
/*
 * Publish @tmp at @path, as above; on failure *@why says what of @path, or
 * "", and @tmp is left as it was.  Once it succeeded, db_file_published()
 * moves @tmp's -wal after it and removes the rest beside @tmp (an error:
 * the -wal could not follow).
 */
int db_file_publish(const char *tmp, const char *path, const struct db_file_was *was, char *why,
		    size_t len);
int db_file_published(const char *tmp, const char *path);
void db_file_discard(const char *tmp);	/* remove @tmp and all beside it */
/* Unlink @base plus db_file_sfx[@first .. @end); the first errno other than ENOENT. */
int db_file_unlink(const char *base, size_t first, size_t end);

/*
 * What @path's header says, without SQLite: 0 a memcg-replay database (the
 * SQLite magic and our application_id, which SQLite keeps at offset 68),
 * -MCR_E_NOT_OURS SQLite with another or no application_id yet (or too
 * short to hold one), -MCR_E_NOT_SQLITE not SQLite or not a regular file,
 * -EISDIR, or -errno when it cannot be opened.  Never blocks on a FIFO.
 */
int db_file_identify(const char *path);

#endif
