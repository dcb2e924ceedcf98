// SPDX-License-Identifier: GPL-2.0
/*
 * file.c - an output file written under a temporary name, published at its
 * final one unless another process got there first, or discarded; what
 * lies beside it; what its header says.  Contract: db/db_file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_file.h"
#include "error.h"

const char *const db_file_sfx[DB_FILE_SFX_ALL] = {
	[0] = "", [DB_FILE_SFX_WAL] = "-wal", [DB_FILE_SFX_SHM] = "-shm",
	[DB_FILE_SFX_JOURNAL] = "-journal", [DB_FILE_SFX_SCRATCH] = DB_FILE_SCRATCH,
};

/*
 * SQLite's unix locks (sqlite.org/lockingv3.html, os_unix.c): the database
 * file's PENDING, RESERVED and SHARED bytes from 2^30, held by a writer for
 * its transaction and by every connection of a WAL database while it is
 * open; and the -shm's "dead man switch" byte, held by every connection of
 * a WAL database.
 */
#define DB_FILE_LOCK		0x40000000
#define DB_FILE_LOCK_LEN	(2 + 510)
#define DB_FILE_SHM_DMS		(120 + 8)

/* The temporary file's basename keeps at most this much of the final one. */
#define DB_FILE_TMP_BASE	200
/* Other temporary names tried when .NAME.tmp-PID is taken: .NAME.tmp-PID-N. */
#define DB_FILE_TMP_TRIES	100

/*
 * The SQLite magic, then our application_id, which SQLite keeps big-endian
 * at offset 68 of the file header (sqlite.org/fileformat2).
 */
int db_file_identify(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char head[72];
	struct stat st;
	uint32_t app;
	ssize_t n;
	int fd;

	/* O_NONBLOCK: a FIFO must not hang us; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -MCR_E_NOT_SQLITE;
	}
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n < 0)
		return -errno;
	if (n < (ssize_t)sizeof(magic) || memcmp(head, magic, sizeof(magic)))
		return -MCR_E_NOT_SQLITE;
	if (n != (ssize_t)sizeof(head))
		return -MCR_E_NOT_OURS;
	app = (uint32_t)head[68] << 24 | (uint32_t)head[69] << 16 | (uint32_t)head[70] << 8 |
	      head[71];
	return app == DB_APPLICATION_ID ? 0 : -MCR_E_NOT_OURS;
}

int db_file_unlink(const char *base, size_t first, size_t end)
{
	char name[PATH_MAX + 16];
	int err = 0;
	size_t i;

	for (i = first; i < end; i++) {
		snprintf(name, sizeof(name), "%s%s", base, db_file_sfx[i]);
		if (unlink(name) < 0 && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

int db_file_create(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int fd = -1, err;
	unsigned int n;

	*tmp = NULL;
	if (strlen(path) > PATH_MAX - 32)
		return -ENAMETOOLONG;
	/*
	 * Same directory: rename(2) is atomic and never crosses a file system.
	 * The basename is cut so that the temporary name and its sidecars fit
	 * NAME_MAX wherever the final name does.  The name is taken when a run
	 * of our pid was killed (its capture is kept there): then another.
	 * Created now, empty, so that a directory we cannot write to is found
	 * before any input is read (and named as the output's problem).
	 */
	for (n = 0;; n++) {
		if (asprintf(tmp, n ? "%.*s.%.*s.tmp-%d-%u" : "%.*s.%.*s.tmp-%d", dirlen, path,
			     DB_FILE_TMP_BASE, base, (int)getpid(), n) < 0) {
			*tmp = NULL;
			return -ENOMEM;
		}
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		err = fd < 0 ? -errno : 0;
		if (err != -EEXIST || n == DB_FILE_TMP_TRIES)
			break;
		free(*tmp);
		*tmp = NULL;
	}
	if (err) {
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	close(fd);
	return 0;
}

void db_file_discard(const char *tmp)
{
	db_file_unlink(tmp, 0, DB_FILE_SFX_ALL);
}

/* One publish: where from and to, what was there, where to say why it failed. */
struct db_pub {
	const char			*tmp, *path;
	const struct db_file_was	*was;
	char				*why;
	size_t				len;
};

/* The pid holding an SQLite lock on @fd's bytes [@start, +@len), or 0. */
static pid_t db_file_locker(int fd, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len,
	};

	if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK)
		return 0;
	return fl.l_pid > 0 ? fl.l_pid : -1;
}

/* The pid of a live connection to the WAL database @path (its -shm's lock), or 0. */
static pid_t db_file_shm_user(const char *path)
{
	char name[PATH_MAX + 16];
	pid_t pid;
	int fd;

	snprintf(name, sizeof(name), "%s%s", path, db_file_sfx[DB_FILE_SFX_SHM]);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	pid = db_file_locker(fd, DB_FILE_SHM_DMS, 1);
	close(fd);
	return pid;
}

/*
 * Remove @path's -wal, -shm and -journal, which no live process holds: one
 * left would be played into the new file by its next reader.
 */
static int db_file_unlink_stale(struct db_pub *p)
{
	int err = db_file_unlink(p->path, 1, DB_FILE_SFX_DB);

	if (err)
		snprintf(p->why, p->len, "has a stale -journal, -wal or -shm beside it "
			 "that cannot be removed (%s)", strerror(-err));
	return err;
}

static int db_file_busy(struct db_pub *p, pid_t pid)
{
	if (pid > 0)
		snprintf(p->why, p->len, "is open in another process (pid %d); "
			 "not replaced", (int)pid);
	else
		snprintf(p->why, p->len, "is open in another process; not replaced");
	return -EBUSY;
}

/*
 * @path did not exist at begin: publish without replacing what another
 * process may have put there since.
 */
static int db_file_publish_new(struct db_pub *p)
{
	struct stat st;
	pid_t pid;
	int err;

	/* another's file there: its sidecars are its own */
	if (lstat(p->path, &st) == 0)
		goto lost;
	/* sidecars without their database: an interrupted writer's, unless in use */
	pid = db_file_shm_user(p->path);
	if (pid)
		return db_file_busy(p, pid);
	err = db_file_unlink_stale(p);
	if (err)
		return err;
	if (renameat2(AT_FDCWD, p->tmp, AT_FDCWD, p->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		goto lost;
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -errno;
	/* a file system without RENAME_NOREPLACE: link(2) never replaces either */
	if (link(p->tmp, p->path) == 0) {
		unlink(p->tmp);
		return 0;
	}
	if (errno == EEXIST)
		goto lost;
	if (errno != EPERM && errno != EOPNOTSUPP && errno != EMLINK)
		return -errno;
	/* nor hard links (vfat): as close as rename(2) gets, checked above */
	return rename(p->tmp, p->path) < 0 ? -errno : 0;
lost:
	snprintf(p->why, p->len, "was created by another process meanwhile; "
		 "left as it is");
	return -EEXIST;
}

/*
 * @path existed at begin: replace that file only, and only while no SQLite
 * connection uses it, under SQLite's own exclusive lock.
 */
static int db_file_replace(struct db_pub *p)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = DB_FILE_LOCK,
		.l_len = DB_FILE_LOCK_LEN,
	};
	struct stat st;
	bool rw = true;
	pid_t pid;
	int fd, err = 0;

	fd = open(p->path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && (errno == EACCES || errno == EROFS)) {
		rw = false;	/* its mode lets us replace it, not write it: look only */
		fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		return errno == ENOENT ? db_file_publish_new(p) : -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (st.st_dev != p->was->dev || st.st_ino != p->was->ino) {
		snprintf(p->why, p->len, "was replaced by another process meanwhile; "
			 "left as it is");
		err = -EEXIST;
		goto out;
	}
	/* where it cannot be locked (ENOLCK) or written, looking is all we can do */
	if (!rw || fcntl(fd, F_SETLK, &fl) == 0)
		pid = rw ? 0 : db_file_locker(fd, DB_FILE_LOCK, DB_FILE_LOCK_LEN);
	else if (errno == EAGAIN || errno == EACCES)
		pid = db_file_locker(fd, DB_FILE_LOCK, DB_FILE_LOCK_LEN) ? : -1;
	else
		pid = db_file_locker(fd, DB_FILE_LOCK, DB_FILE_LOCK_LEN);
	if (!pid)
		pid = db_file_shm_user(p->path);
	if (pid) {
		err = db_file_busy(p, pid);
		goto out;
	}
	/* nobody's: an interrupted writer's journal would be played into the new file */
	err = db_file_unlink_stale(p);
	if (!err && rename(p->tmp, p->path) < 0)
		err = -errno;
out:
	close(fd);	/* drops the lock, on the old file */
	return err;
}

int db_file_publish(const char *tmp, const char *path, const struct db_file_was *was, char *why,
		    size_t len)
{
	struct db_pub p = { .tmp = tmp, .path = path, .was = was, .why = why, .len = len };

	if (len)
		*why = '\0';
	return was->existed ? db_file_replace(&p) : db_file_publish_new(&p);
}

int db_file_published(const char *tmp, const char *path)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	int err = 0;

	/*
	 * A -wal the writer could not checkpoint (a full disk) holds committed
	 * transactions: it moves with its database, after it, so that it never
	 * sits beside the old one.
	 */
	snprintf(from, sizeof(from), "%s%s", tmp, db_file_sfx[DB_FILE_SFX_WAL]);
	snprintf(to, sizeof(to), "%s%s", path, db_file_sfx[DB_FILE_SFX_WAL]);
	if (rename(from, to) < 0 && errno != ENOENT)
		err = -errno;
	db_file_unlink(tmp, 1, DB_FILE_SFX_ALL);
	return err;
}
