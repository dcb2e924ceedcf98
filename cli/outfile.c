// SPDX-License-Identifier: GPL-2.0
/*
 * outfile.c - check an output path, write under a temporary name, rename at
 * the end.  Contract: cli/outfile.h.
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
 * A memcg-replay database: the SQLite magic, then our application_id, which
 * SQLite keeps big-endian at offset 68 of the file header (sqlite.org/fileformat2).
 */
static bool outfile_is_ours(const char *path)
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

int outfile_check(const char *path, const char *input, bool force, const char **why)
{
	struct stat out, in;

	*why = NULL;
	if (!*path) {
		*why = "empty file name";
		return -ENOENT;
	}
	if (stat(path, &out) < 0) {
		if (errno == ENOENT)
			return 0;	/* a new file; its directory is checked by creating it */
		*why = NULL;
		return -errno;
	}
	if (S_ISDIR(out.st_mode)) {
		*why = "is a directory";
		return -EISDIR;
	}
	if (!S_ISREG(out.st_mode)) {
		/* rename(2) over a device or FIFO would delete it: /dev/null as root */
		*why = "is a device, FIFO or socket, not a regular file; never replaced";
		return -EEXIST;
	}
	if (input && stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
		*why = "is the input file";
		return -EEXIST;
	}
	if (!force && out.st_size > 0 && !outfile_is_ours(path)) {
		*why = "exists and is not a memcg-replay database (--force replaces it)";
		return -EEXIST;
	}
	return 0;
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

static void outfile_arm(const char *tmp)
{
	struct sigaction sa = { .sa_handler = outfile_on_signal };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(outfile_sig_names); i++)
		snprintf(outfile_sig_names[i], sizeof(outfile_sig_names[i]), "%s%s", tmp,
			 outfile_sfx[i]);
	outfile_armed = 1;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(outfile_signals); i++)
		sigaction(outfile_signals[i], &sa, &outfile_old[i]);
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

int outfile_begin(struct outfile *of, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int fd;

	of->path = path;
	of->tmp = NULL;
	if (strlen(path) > PATH_MAX - 32)
		return -ENAMETOOLONG;
	/* same directory: rename(2) is atomic and never crosses a file system */
	if (asprintf(&of->tmp, "%.*s.%s.tmp-%d", dirlen, path, slash ? slash + 1 : path,
		     (int)getpid()) < 0) {
		of->tmp = NULL;
		return -ENOMEM;
	}
	/*
	 * Created now, empty, so that a directory we cannot write to is found
	 * before any input is read (and named as the output's problem).
	 */
	fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = -errno;

		free(of->tmp);
		of->tmp = NULL;
		return err;
	}
	close(fd);
	outfile_arm(of->tmp);
	return 0;
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

int outfile_commit(struct outfile *of)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	int err;

	/* an old database's -wal would be replayed into the new file */
	err = outfile_unlink(of->path, 1, OUTFILE_SFX_DB);
	if (!err && rename(of->tmp, of->path) < 0)
		err = -errno;
	if (err) {
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
	free(of->tmp);
	of->tmp = NULL;
	return err;
}
