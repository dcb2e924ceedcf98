// SPDX-License-Identifier: GPL-2.0
/*
 * vfs.c - read-ahead for SQLite's reads of a trace: a VFS shim over the
 * default one (sqlite3_vfs_register(), as SQLite's own test_vfstrace.c).
 *
 * A chunk's BLOB spans its overflow pages, which SQLite reads one page a
 * pread() each, straight into the BLOB's buffer: 30 000 system calls for
 * the 125 MB of a 20 M-event trace.  Under this machine's hypervisor a
 * call costs microseconds: reading the store spent 10-20 % of its time in
 * them.  Larger pages would cut the calls but waste half a page per chunk
 * (28 % of the file at 64 KiB).  So a read that follows the last one
 * directly (the next overflow page) fills a buffer of DB_VFS_AHEAD bytes
 * with one call, and the reads it covers are copied from it.
 *
 * The buffer lives only while SQLite holds its lock on the file: it is
 * filled under a lock and forgotten when the lock is dropped, and on every
 * write or truncate through the file.  A lock keeps every other writer out
 * of a rollback-journal database, so within it the buffer is the file.  A
 * database in WAL mode can change under a lock (checkpoints), so a file
 * that maps the WAL index gets no read-ahead from then on.  Only main
 * database files have it; journals and WAL files pass straight through.
 * A chunk is read under a lock of its own, so a buffer larger than the
 * 100 KB of a chunk would be read for nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db_local.h"

#define DB_VFS_AHEAD	(128 * 1024)

struct db_vfs_file {
	sqlite3_file	base;
	sqlite3_file	*real;		/* the default VFS's file, right after this */
	bool		ahead;		/* a main database not in WAL mode */
	bool		locked;		/* SQLite holds a lock on it */
	uint8_t		*buf;		/* file bytes [off, off + len) */
	sqlite3_int64	off, next;	/* next: where the last read ended */
	int		len;
};

static sqlite3_vfs db_vfs;
static sqlite3_vfs *db_vfs_root;

static inline sqlite3_file *db_vfs_real(sqlite3_file *f)
{
	return ((struct db_vfs_file *)f)->real;
}

static void db_vfs_forget(struct db_vfs_file *p)
{
	p->len = 0;
}

static int db_vfs_close(sqlite3_file *f)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;
	int rc = p->real->pMethods->xClose(p->real);

	free(p->buf);
	p->buf = NULL;
	return rc;
}

/*
 * Fill the buffer from @off, up to the end of the file; false if it could
 * not.  SQLite reads under a lock that keeps writers out (WAL mode has no
 * read-ahead), so the file's size cannot change between the two calls.
 */
static bool db_vfs_fill(struct db_vfs_file *p, sqlite3_int64 off)
{
	sqlite3_int64 size;
	int rc;

	if (!p->buf) {
		p->buf = malloc(DB_VFS_AHEAD);
		if (!p->buf)
			return false;
	}
	p->len = 0;
	rc = p->real->pMethods->xRead(p->real, p->buf, DB_VFS_AHEAD, off);
	if (rc == SQLITE_IOERR_SHORT_READ) {
		if (p->real->pMethods->xFileSize(p->real, &size) != SQLITE_OK || size <= off)
			return false;
		p->len = size - off < DB_VFS_AHEAD ? (int)(size - off) : DB_VFS_AHEAD;
	} else if (rc == SQLITE_OK) {
		p->len = DB_VFS_AHEAD;
	} else {
		return false;
	}
	p->off = off;
	return true;
}

static int db_vfs_read(sqlite3_file *f, void *b, int amt, sqlite3_int64 off)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;
	bool seq = off == p->next;

	p->next = off + amt;
	if (p->ahead && p->locked) {
		if (p->len && off >= p->off && off + amt <= p->off + p->len) {
			memcpy(b, p->buf + (off - p->off), (size_t)amt);
			return SQLITE_OK;
		}
		if (seq && amt <= DB_VFS_AHEAD / 4 && db_vfs_fill(p, off) && amt <= p->len) {
			memcpy(b, p->buf, (size_t)amt);
			return SQLITE_OK;
		}
	}
	return p->real->pMethods->xRead(p->real, b, amt, off);
}

static int db_vfs_write(sqlite3_file *f, const void *b, int amt, sqlite3_int64 off)
{
	db_vfs_forget((struct db_vfs_file *)f);
	return db_vfs_real(f)->pMethods->xWrite(db_vfs_real(f), b, amt, off);
}

static int db_vfs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	db_vfs_forget((struct db_vfs_file *)f);
	return db_vfs_real(f)->pMethods->xTruncate(db_vfs_real(f), size);
}

static int db_vfs_sync(sqlite3_file *f, int flags)
{
	return db_vfs_real(f)->pMethods->xSync(db_vfs_real(f), flags);
}

static int db_vfs_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return db_vfs_real(f)->pMethods->xFileSize(db_vfs_real(f), size);
}

static int db_vfs_lock(sqlite3_file *f, int level)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;
	int rc = p->real->pMethods->xLock(p->real, level);

	if (rc == SQLITE_OK && level > SQLITE_LOCK_NONE)
		p->locked = true;
	return rc;
}

/* Unlocked, the file may change: what the buffer holds is no longer it. */
static int db_vfs_unlock(sqlite3_file *f, int level)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;

	if (level == SQLITE_LOCK_NONE) {
		p->locked = false;
		db_vfs_forget(p);
	}
	return p->real->pMethods->xUnlock(p->real, level);
}

static int db_vfs_check_lock(sqlite3_file *f, int *out)
{
	return db_vfs_real(f)->pMethods->xCheckReservedLock(db_vfs_real(f), out);
}

static int db_vfs_file_control(sqlite3_file *f, int op, void *arg)
{
	return db_vfs_real(f)->pMethods->xFileControl(db_vfs_real(f), op, arg);
}

static int db_vfs_sector_size(sqlite3_file *f)
{
	return db_vfs_real(f)->pMethods->xSectorSize(db_vfs_real(f));
}

static int db_vfs_device(sqlite3_file *f)
{
	return db_vfs_real(f)->pMethods->xDeviceCharacteristics(db_vfs_real(f));
}

/* WAL mode: pages change under a lock without the change counter; no read-ahead from now on. */
static int db_vfs_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;

	p->ahead = false;
	db_vfs_forget(p);
	return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, pp);
}

static int db_vfs_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return db_vfs_real(f)->pMethods->xShmLock(db_vfs_real(f), offset, n, flags);
}

static void db_vfs_shm_barrier(sqlite3_file *f)
{
	db_vfs_real(f)->pMethods->xShmBarrier(db_vfs_real(f));
}

static int db_vfs_shm_unmap(sqlite3_file *f, int del)
{
	return db_vfs_real(f)->pMethods->xShmUnmap(db_vfs_real(f), del);
}

static int db_vfs_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	return db_vfs_real(f)->pMethods->xFetch(db_vfs_real(f), off, amt, pp);
}

static int db_vfs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *pg)
{
	return db_vfs_real(f)->pMethods->xUnfetch(db_vfs_real(f), off, pg);
}

static const sqlite3_io_methods db_vfs_io = {
	.iVersion		= 3,
	.xClose			= db_vfs_close,
	.xRead			= db_vfs_read,
	.xWrite			= db_vfs_write,
	.xTruncate		= db_vfs_truncate,
	.xSync			= db_vfs_sync,
	.xFileSize		= db_vfs_file_size,
	.xLock			= db_vfs_lock,
	.xUnlock		= db_vfs_unlock,
	.xCheckReservedLock	= db_vfs_check_lock,
	.xFileControl		= db_vfs_file_control,
	.xSectorSize		= db_vfs_sector_size,
	.xDeviceCharacteristics	= db_vfs_device,
	.xShmMap		= db_vfs_shm_map,
	.xShmLock		= db_vfs_shm_lock,
	.xShmBarrier		= db_vfs_shm_barrier,
	.xShmUnmap		= db_vfs_shm_unmap,
	.xFetch			= db_vfs_fetch,
	.xUnfetch		= db_vfs_unfetch,
};

static int db_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
		       int *out_flags)
{
	struct db_vfs_file *p = (struct db_vfs_file *)f;
	int rc;

	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)(p + 1);
	p->next = -1;
	rc = db_vfs_root->xOpen(db_vfs_root, name, p->real, flags, out_flags);
	if (!p->real->pMethods)
		return rc;
	/* every method forwards, those of version 3 included: the default VFS has them */
	if (p->real->pMethods->iVersion < 3) {
		p->real->pMethods->xClose(p->real);
		return SQLITE_CANTOPEN;
	}
	p->ahead = flags & SQLITE_OPEN_MAIN_DB;
	p->base.pMethods = &db_vfs_io;
	return rc;
}

static int db_vfs_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	return db_vfs_root->xDelete(db_vfs_root, name, sync);
}

static int db_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	return db_vfs_root->xAccess(db_vfs_root, name, flags, out);
}

static int db_vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	return db_vfs_root->xFullPathname(db_vfs_root, name, n, out);
}

static void *db_vfs_dlopen(sqlite3_vfs *vfs, const char *name)
{
	return db_vfs_root->xDlOpen(db_vfs_root, name);
}

static void db_vfs_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
	db_vfs_root->xDlError(db_vfs_root, n, msg);
}

static void (*db_vfs_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	return db_vfs_root->xDlSym(db_vfs_root, h, sym);
}

static void db_vfs_dlclose(sqlite3_vfs *vfs, void *h)
{
	db_vfs_root->xDlClose(db_vfs_root, h);
}

static int db_vfs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	return db_vfs_root->xRandomness(db_vfs_root, n, out);
}

static int db_vfs_sleep(sqlite3_vfs *vfs, int us)
{
	return db_vfs_root->xSleep(db_vfs_root, us);
}

static int db_vfs_current_time(sqlite3_vfs *vfs, double *t)
{
	return db_vfs_root->xCurrentTime(db_vfs_root, t);
}

static int db_vfs_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
	return db_vfs_root->xGetLastError(db_vfs_root, n, msg);
}

static int db_vfs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	return db_vfs_root->xCurrentTimeInt64(db_vfs_root, t);
}

static int db_vfs_registered;

static void db_vfs_init(void)
{
	db_vfs_root = sqlite3_vfs_find(NULL);
	/* the shim forwards every method of version 2 (xCurrentTimeInt64); xSetSystemCall is not needed */
	if (!db_vfs_root || db_vfs_root->iVersion < 2) {
		db_vfs_registered = -ENOSYS;
		return;
	}
	db_vfs = (sqlite3_vfs){
		.iVersion		= 2,
		.szOsFile		= (int)sizeof(struct db_vfs_file) + db_vfs_root->szOsFile,
		.mxPathname		= db_vfs_root->mxPathname,
		.zName			= DB_VFS_NAME,
		.xOpen			= db_vfs_open,
		.xDelete		= db_vfs_delete,
		.xAccess		= db_vfs_access,
		.xFullPathname		= db_vfs_full_pathname,
		.xDlOpen		= db_vfs_dlopen,
		.xDlError		= db_vfs_dlerror,
		.xDlSym			= db_vfs_dlsym,
		.xDlClose		= db_vfs_dlclose,
		.xRandomness		= db_vfs_randomness,
		.xSleep			= db_vfs_sleep,
		.xCurrentTime		= db_vfs_current_time,
		.xGetLastError		= db_vfs_last_error,
		.xCurrentTimeInt64	= db_vfs_current_time64,
	};
	db_vfs_registered = sqlite3_vfs_register(&db_vfs, 0) == SQLITE_OK ? 1 : -ENOMEM;
}

const char *db_vfs_name(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, db_vfs_init);
	return db_vfs_registered > 0 ? DB_VFS_NAME : NULL;
}
