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

#include "db_file.h"
#include "error.h"
#include "outfile.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

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
		if (!db_file_identify(path))
			return 0;
		*why = "exists and is not a memcg-replay database (--force replaces it)";
		return -EEXIST;
	}
	if (p->ours(path))
		return 0;
	*why = db_file_identify(path) ? p->not_ours : p->is_db;
	return -EEXIST;
}

int outfile_check(const char *path, const struct outfile_policy *p, const char **why)
{
	struct stat st;

	return outfile_check_stat(path, p, why, &st);
}

/* What a signal removes: the temporary file and its sidecars, named in advance. */
static char outfile_sig_names[DB_FILE_SFX_ALL][PATH_MAX + 16];
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
			 db_file_sfx[i]);
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

int outfile_begin(struct outfile *of, const char *path, const struct outfile_policy *p,
		  const char **why)
{
	sigset_t block, old;
	struct stat st;
	int err;

	memset(of, 0, sizeof(*of));
	of->path = path;
	err = outfile_check_stat(path, p, why, &st);
	if (err)
		return err;
	of->was = (struct db_file_was){ .existed = st.st_nlink > 0, .dev = st.st_dev,
					.ino = st.st_ino };
	/* the signals held until it is armed: none leaves it behind or removes another's */
	outfile_sigset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	err = db_file_create(path, &of->tmp);
	if (!err)
		outfile_arm(of->tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

void outfile_abort(struct outfile *of)
{
	if (!of->tmp)
		return;
	db_file_discard(of->tmp);
	outfile_disarm();
	free(of->tmp);
	of->tmp = NULL;
}

int outfile_commit(struct outfile *of)
{
	sigset_t block, old;
	int err;

	/* a signal now would remove the temporary name after its rename */
	outfile_sigset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	err = db_file_publish(of->tmp, of->path, &of->was, of->why, sizeof(of->why));
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
	err = db_file_published(of->tmp, of->path);
	outfile_disarm();
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(of->tmp);
	of->tmp = NULL;
	return err;
}
