// SPDX-License-Identifier: GPL-2.0
/*
 * outfile.c - check an output path, write under a temporary name, publish it
 * at the end unless another process got there first.  Contract: cli/outfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "error.h"
#include "import.h"
#include "outfile.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * What lies beside a database: itself, SQLite's sidecars; then what only
 * ever lies beside the temporary file, never the final one: import's
 * decompressed copy of a compressed trace.dat (import.h).
 */
static const char *const outfile_sfx[] = { "", "-wal", "-shm", "-journal", IMPORT_PLAIN_SUFFIX };
#define OUTFILE_SFX_DB		4	/* outfile_sfx[0 .. 4): the database's own */
#define OUTFILE_SFX_ALL		ARRAY_SIZE(outfile_sfx)

/*
 * SQLite's unix locks (sqlite.org/lockingv3.html, os_unix.c): the database
 * file's PENDING, RESERVED and SHARED bytes from 2^30, held by a writer for
 * its transaction and by every connection of a WAL database while it is
 * open; and the -shm's "dead man switch" byte, held by every connection of
 * a WAL database.
 */
#define OUTFILE_DB_LOCK		0x40000000
#define OUTFILE_DB_LOCK_LEN	(2 + 510)
#define OUTFILE_SHM_DMS		(120 + 8)

/* The temporary file's basename keeps at most this much of the final one. */
#define OUTFILE_TMP_BASE	200
/* Other temporary names tried when .NAME.tmp-PID is taken: .NAME.tmp-PID-N. */
#define OUTFILE_TMP_TRIES	100

/*
 * A memcg-replay database: the SQLite magic, then our application_id, which
 * SQLite keeps big-endian at offset 68 of the file header (sqlite.org/fileformat2).
 */
bool outfile_is_db(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char head[72];
	uint32_t app;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic)))
		return false;
	app = (uint32_t)head[68] << 24 | (uint32_t)head[69] << 16 | (uint32_t)head[70] << 8 |
	      head[71];
	return app == DB_APPLICATION_ID;
}

int outfile_exit_code(int err)
{
	switch (-err) {
	case EEXIST:
	case EBUSY:
	case EISDIR:
	case ENOENT:
	case ENOTDIR:
	case ENAMETOOLONG:
	case ELOOP:
	case EACCES:
	case EPERM:
	case EROFS:
	case ENXIO:
		return MCR_EXIT_NOFILE;
	default:
		return mcr_exit_code(err);
	}
}

static const char *outfile_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "is a FIFO, not a regular file";
	if (S_ISSOCK(mode))
		return "is a socket, not a regular file";
	return "is a device, not a regular file";
}

int outfile_input_check(const char *path, const char **why)
{
	struct stat st;
	int fd, err = 0;

	*why = NULL;
	/* O_NONBLOCK: opening a FIFO with no writer must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
	} else if (S_ISDIR(st.st_mode)) {
		*why = "is a directory, not a file";
		err = -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		*why = outfile_kind(st.st_mode);
		err = -ENXIO;
	}
	close(fd);
	return err;
}

static bool outfile_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* outfile_check(), and what @path is (st->st_nlink 0: nothing there). */
static int outfile_check_stat(const char *path, const struct outfile_policy *p,
			      const char **why, struct stat *out)
{
	const char *const *input;
	struct stat in;

	*why = NULL;
	memset(out, 0, sizeof(*out));
	if (!*path) {
		*why = "is an empty file name";
		return -ENOENT;
	}
	if (stat(path, out) < 0) {
		int err = -errno;

		memset(out, 0, sizeof(*out));
		if (err != -ENOENT)
			return err;
		if (lstat(path, out) == 0) {
			memset(out, 0, sizeof(*out));
			*why = "is a symbolic link to nothing";
			return -ENOENT;
		}
		return 0;	/* a new file; its directory is checked by creating it */
	}
	if (S_ISDIR(out->st_mode)) {
		*why = "is a directory";
		return -EISDIR;
	}
	if (!S_ISREG(out->st_mode)) {
		/* rename(2) over a device or FIFO would delete it: /dev/null as root */
		*why = S_ISFIFO(out->st_mode) ?
		       "is a FIFO, not a regular file; never replaced" :
		       "is a device or socket, not a regular file; never replaced";
		return -EEXIST;
	}
	for (input = p->inputs; input && *input; input++)
		if (stat(*input, &in) == 0 && outfile_same(&in, out)) {
			*why = "is the input file";
			return -EEXIST;
		}
	if (p->force || out->st_size == 0)
		return 0;
	if (!p->ours) {
		if (outfile_is_db(path))
			return 0;
		*why = "exists and is not a memcg-replay database (--force replaces it)";
		return -EEXIST;
	}
	if (p->ours(path))
		return 0;
	*why = outfile_is_db(path) ? p->is_db : p->not_ours;
	return -EEXIST;
}

int outfile_check(const char *path, const struct outfile_policy *p, const char **why)
{
	struct stat st;

	return outfile_check_stat(path, p, why, &st);
}

/* What a signal removes: the temporary file and its sidecars, named in advance. */
static char outfile_sig_names[OUTFILE_SFX_ALL][PATH_MAX + 16];
static volatile sig_atomic_t outfile_armed;
static const int outfile_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction outfile_old[ARRAY_SIZE(outfile_signals)];

static void outfile_on_signal(int sig)
{
	size_t i;

	if (outfile_armed)
		for (i = 0; i < ARRAY_SIZE(outfile_sig_names); i++)
			unlink(outfile_sig_names[i]);	/* async-signal-safe */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void outfile_sigset(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_SIZE(outfile_signals); i++)
		sigaddset(set, outfile_signals[i]);
}

static void outfile_arm(const char *tmp)
{
	struct sigaction sa = { .sa_handler = outfile_on_signal };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(outfile_sig_names); i++)
		snprintf(outfile_sig_names[i], sizeof(outfile_sig_names[i]), "%s%s", tmp,
			 outfile_sfx[i]);
	outfile_armed = 1;
	sigemptyset(&sa.sa_mask);
	/*
	 * A signal ignored when we started stays ignored: nohup's SIGHUP, the
	 * SIGINT of a script's background job must not end the run.
	 */
	for (i = 0; i < ARRAY_SIZE(outfile_signals); i++)
		if (sigaction(outfile_signals[i], NULL, &outfile_old[i]) == 0 &&
		    outfile_old[i].sa_handler != SIG_IGN)
			sigaction(outfile_signals[i], &sa, NULL);
}

static void outfile_disarm(void)
{
	size_t i;

	if (!outfile_armed)
		return;
	for (i = 0; i < ARRAY_SIZE(outfile_signals); i++)
		sigaction(outfile_signals[i], &outfile_old[i], NULL);
	outfile_armed = 0;
}

/* Unlink @base plus outfile_sfx[@first .. @end); the first errno other than ENOENT. */
static int outfile_unlink(const char *base, size_t first, size_t end)
{
	char name[PATH_MAX + 16];
	int err = 0;
	size_t i;

	for (i = first; i < end; i++) {
		snprintf(name, sizeof(name), "%s%s", base, outfile_sfx[i]);
		if (unlink(name) < 0 && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

int outfile_begin(struct outfile *of, const char *path, const struct outfile_policy *p,
		  const char **why)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	sigset_t block, old;
	struct stat st;
	int fd = -1, err;
	unsigned int n;

	memset(of, 0, sizeof(*of));
	of->path = path;
	err = outfile_check_stat(path, p, why, &st);
	if (err)
		return err;
	of->existed = st.st_nlink > 0;
	of->dev = st.st_dev;
	of->ino = st.st_ino;
	if (strlen(path) > PATH_MAX - 32)
		return -ENAMETOOLONG;
	/*
	 * Same directory: rename(2) is atomic and never crosses a file system.
	 * The basename is cut so that the temporary name and its sidecars fit
	 * NAME_MAX wherever the final name does.  The name is taken when a run
	 * of our pid was killed (its capture is kept there): then another.
	 * Created now, empty, so that a directory we cannot write to is found
	 * before any input is read (and named as the output's problem); the
	 * signals held until it is armed, so that none leaves it behind and
	 * none removes a name that was not ours.
	 */
	outfile_sigset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (n = 0;; n++) {
		if (asprintf(&of->tmp, n ? "%.*s.%.*s.tmp-%d-%u" : "%.*s.%.*s.tmp-%d", dirlen,
			     path, OUTFILE_TMP_BASE, base, (int)getpid(), n) < 0) {
			of->tmp = NULL;
			err = -ENOMEM;
			break;
		}
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		err = fd < 0 ? -errno : 0;
		if (err != -EEXIST || n == OUTFILE_TMP_TRIES)
			break;
		free(of->tmp);
		of->tmp = NULL;
	}
	if (!err) {
		close(fd);
		outfile_arm(of->tmp);
	} else {
		free(of->tmp);
		of->tmp = NULL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

void outfile_abort(struct outfile *of)
{
	if (!of->tmp)
		return;
	outfile_unlink(of->tmp, 0, OUTFILE_SFX_ALL);
	outfile_disarm();
	free(of->tmp);
	of->tmp = NULL;
}

/* The pid holding an SQLite lock on @fd's bytes [@start, +@len), or 0. */
static pid_t outfile_locker(int fd, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len,
	};

	if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK)
		return 0;
	return fl.l_pid > 0 ? fl.l_pid : -1;
}

/* The pid of a live connection to the WAL database @path (its -shm's lock), or 0. */
static pid_t outfile_shm_user(const char *path)
{
	char name[PATH_MAX + 16];
	pid_t pid;
	int fd;

	snprintf(name, sizeof(name), "%s-shm", path);
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	pid = outfile_locker(fd, OUTFILE_SHM_DMS, 1);
	close(fd);
	return pid;
}

/*
 * Remove @path's -wal, -shm and -journal, which no live process holds: one
 * left would be played into the new file by its next reader.
 */
static int outfile_unlink_stale(struct outfile *of)
{
	int err = outfile_unlink(of->path, 1, OUTFILE_SFX_DB);

	if (err)
		snprintf(of->why, sizeof(of->why), "has a stale -journal, -wal or -shm beside it "
			 "that cannot be removed (%s)", strerror(-err));
	return err;
}

static int outfile_busy(struct outfile *of, pid_t pid)
{
	if (pid > 0)
		snprintf(of->why, sizeof(of->why), "is open in another process (pid %d); "
			 "not replaced", (int)pid);
	else
		snprintf(of->why, sizeof(of->why), "is open in another process; not replaced");
	return -EBUSY;
}

/*
 * @path did not exist at begin: publish without replacing what another
 * process may have put there since.
 */
static int outfile_publish_new(struct outfile *of)
{
	struct stat st;
	pid_t pid;
	int err;

	/* another's file there: its sidecars are its own */
	if (lstat(of->path, &st) == 0)
		goto lost;
	/* sidecars without their database: an interrupted writer's, unless in use */
	pid = outfile_shm_user(of->path);
	if (pid)
		return outfile_busy(of, pid);
	err = outfile_unlink_stale(of);
	if (err)
		return err;
	if (renameat2(AT_FDCWD, of->tmp, AT_FDCWD, of->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		goto lost;
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -errno;
	/* a file system without RENAME_NOREPLACE: link(2) never replaces either */
	if (link(of->tmp, of->path) == 0) {
		unlink(of->tmp);
		return 0;
	}
	if (errno == EEXIST)
		goto lost;
	if (errno != EPERM && errno != EOPNOTSUPP && errno != EMLINK)
		return -errno;
	/* nor hard links (vfat): as close as rename(2) gets, checked above */
	return rename(of->tmp, of->path) < 0 ? -errno : 0;
lost:
	snprintf(of->why, sizeof(of->why), "was created by another process meanwhile; "
		 "left as it is");
	return -EEXIST;
}

/*
 * @path existed at begin: replace that file only, and only while no SQLite
 * connection uses it, under SQLite's own exclusive lock.
 */
static int outfile_replace(struct outfile *of)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = OUTFILE_DB_LOCK,
		.l_len = OUTFILE_DB_LOCK_LEN,
	};
	struct stat st;
	bool rw = true;
	pid_t pid;
	int fd, err = 0;

	fd = open(of->path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && (errno == EACCES || errno == EROFS)) {
		rw = false;	/* its mode lets us replace it, not write it: look only */
		fd = open(of->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		return errno == ENOENT ? outfile_publish_new(of) : -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (st.st_dev != of->dev || st.st_ino != of->ino) {
		snprintf(of->why, sizeof(of->why), "was replaced by another process meanwhile; "
			 "left as it is");
		err = -EEXIST;
		goto out;
	}
	/* where it cannot be locked (ENOLCK) or written, looking is all we can do */
	if (!rw || fcntl(fd, F_SETLK, &fl) == 0)
		pid = rw ? 0 : outfile_locker(fd, OUTFILE_DB_LOCK, OUTFILE_DB_LOCK_LEN);
	else if (errno == EAGAIN || errno == EACCES)
		pid = outfile_locker(fd, OUTFILE_DB_LOCK, OUTFILE_DB_LOCK_LEN) ? : -1;
	else
		pid = outfile_locker(fd, OUTFILE_DB_LOCK, OUTFILE_DB_LOCK_LEN);
	if (!pid)
		pid = outfile_shm_user(of->path);
	if (pid) {
		err = outfile_busy(of, pid);
		goto out;
	}
	/* nobody's: an interrupted writer's journal would be played into the new file */
	err = outfile_unlink_stale(of);
	if (!err && rename(of->tmp, of->path) < 0)
		err = -errno;
out:
	close(fd);	/* drops the lock, on the old file */
	return err;
}

int outfile_commit(struct outfile *of)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	sigset_t block, old;
	int err;

	/* a signal now would remove the temporary name after its rename */
	outfile_sigset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	of->why[0] = '\0';
	err = of->existed ? outfile_replace(of) : outfile_publish_new(of);
	if (err && of->keep) {
		outfile_disarm();	/* of->tmp is the caller's now */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return err;
	}
	if (err) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		outfile_abort(of);
		return err;
	}
	/*
	 * A -wal the writer could not checkpoint (a full disk) holds committed
	 * transactions: it moves with its database, after it, so that it never
	 * sits beside the old one.
	 */
	snprintf(from, sizeof(from), "%s-wal", of->tmp);
	snprintf(to, sizeof(to), "%s-wal", of->path);
	if (rename(from, to) < 0 && errno != ENOENT)
		err = -errno;
	outfile_unlink(of->tmp, 1, OUTFILE_SFX_ALL);
	outfile_disarm();
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(of->tmp);
	of->tmp = NULL;
	return err;
}
