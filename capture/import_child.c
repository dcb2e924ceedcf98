// SPDX-License-Identifier: GPL-2.0
/*
 * import_child.c - libtracecmd run in a child process, so that its crash on
 * a damaged trace.dat becomes an error code.
 *
 * libtracecmd 1.3.1 crashes on some damaged v7 files: one byte flipped in a
 * section can crash tracecmd_open() in its own error path (tracecmd_close()
 * of the half-built handle), or tracecmd_close() after a tracecmd_copy() that
 * went through; a size read from the file is passed to malloc() as it is.
 * imp_contain() runs a step of the import in a forked child, which writes
 * its files and hands its result back in a shared mapping, while the parent
 * waits: a fork and a wait cost well under a millisecond, nothing against an
 * import.
 *
 * Signals: while the child runs, the parent blocks SIGINT, SIGTERM and
 * SIGHUP and takes them with sigwaitinfo().  One is sent on to the child
 * (whose handler, inherited, removes the files it writes, as the CLI's does),
 * the parent waits for the child to end, then raises the signal on itself:
 * the process ends as it would have, and never while its child still
 * writes.  The child dies with its parent (PR_SET_PDEATHSIG) if the parent
 * is killed outright.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "import-local.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const int imp_fwd_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* What the child hands back besides its files. */
struct imp_box {
	int	ret;
	int	done;	/* ret is fn's: the child did not die on the way */
};

/**
 * imp_shared_alloc() - @size bytes of zeroed memory that a child forked
 * after this call shares with its parent: what it writes there, the parent
 * reads after it.  NULL if it cannot be had.  Freed by imp_shared_free().
 */
void *imp_shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void imp_shared_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

/* A signal that a crash raises, not one sent to end the process. */
static bool imp_crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

/* A sanitizer's runtime, where one is linked in (weak: NULL otherwise). */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/*
 * In a child: a sanitizer's report ends it with no callback.  What it
 * reports is libtracecmd's, which the child contains; a fuzzer's callback
 * (libFuzzer's) would save the input as a finding of its own, as it did for
 * damaged v6 files that the probe below found libtracecmd unable to read.
 */
static void imp_child_quiet(void)
{
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(NULL);
}

static void imp_child(int (*fn)(void *arg), void *arg, struct imp_box *box, pid_t parent,
		      const sigset_t *mask)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	imp_child_quiet();
	if (getppid() != parent)
		_exit(1);	/* the parent died before prctl() */
	sigprocmask(SIG_SETMASK, mask, NULL);
	box->ret = fn(arg);
	box->done = 1;
	/* no atexit handler, no stdio flush: those are the parent's */
	_exit(0);
}

/*
 * Waits for @pid with the signals of @set blocked: SIGCHLD, and the ones to
 * forward.  Returns the one forwarded last (0 if none); *@status is the
 * child's wait status, or -1 if it could not be had.
 */
static int imp_wait(pid_t pid, const sigset_t *set, int *status)
{
	int fwd = 0, sig;
	pid_t r;

	*status = -1;
	for (;;) {
		sig = sigwaitinfo(set, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig > 0 && sig != SIGCHLD) {
			kill(pid, sig);
			fwd = sig;
			continue;
		}
		/* SIGCHLD, maybe another child's; or sigwaitinfo() failed: wait blocking */
		r = waitpid(pid, status, sig < 0 ? 0 : WNOHANG);
		if (r == pid)
			return fwd;
		if (r < 0 && errno != EINTR) {
			*status = -1;	/* ECHILD: reaped for us (SIGCHLD ignored) */
			return fwd;
		}
	}
}

/**
 * imp_contain() - runs @fn(@arg) in a child process.
 * @fn:  returns 0 or a negative error; what else it yields goes to memory
 *       from imp_shared_alloc() or to files
 * @arg: its argument
 * @how: filled when the child did not return: the signal that ended it, or
 *       (sig 0) its exit status (a sanitizer's report exits 1)
 *
 * Returns @fn's return, or -MCR_E_CORRUPT if the child crashed or exited
 * without a result, -EINTR if another signal ended it, or a negative errno
 * if it could not be started.
 */
int imp_contain(int (*fn)(void *arg), void *arg, struct imp_child *how)
{
	pid_t pid, parent = getpid();
	int fwd, status, err;
	struct imp_box *box;
	sigset_t set, old;
	size_t i;

	*how = (struct imp_child){ 0 };
	box = imp_shared_alloc(sizeof(*box));
	if (!box)
		return -ENOMEM;
	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(imp_fwd_signals); i++)
		sigaddset(&set, imp_fwd_signals[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* the child exits without flushing, but what it writes follows what was buffered */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		imp_shared_free(box, sizeof(*box));
		return err;
	}
	if (!pid)
		imp_child(fn, arg, box, parent, &old);
	fwd = imp_wait(pid, &set, &status);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fwd)
		raise(fwd);	/* its handler ends the process, as it would have */
	if (box->done && (status == -1 || (WIFEXITED(status) && !WEXITSTATUS(status)))) {
		err = box->ret;
	} else if (status != -1 && WIFSIGNALED(status)) {
		how->died = true;
		how->sig = WTERMSIG(status);
		err = imp_crash_signal(how->sig) ? -MCR_E_CORRUPT : -EINTR;
	} else {
		how->died = true;
		how->status = status == -1 ? -1 : WEXITSTATUS(status);
		err = -MCR_E_CORRUPT;
	}
	imp_shared_free(box, sizeof(*box));
	return err;
}

/*
 * How a child that died ended, for the user, into @buf: "crashed (SIGSEGV)",
 * "was killed (SIGKILL)" or "died (exit status 1)": a sanitizer's report.
 */
void imp_child_how(const struct imp_child *how, char *buf, size_t len)
{
	const char *what = imp_crash_signal(how->sig) ? "crashed" : "was killed";
	const char *abbrev = how->sig ? sigabbrev_np(how->sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "%s (SIG%s)", what, abbrev);
	else if (how->sig)
		snprintf(buf, len, "%s (signal %d)", what, how->sig);
	else
		snprintf(buf, len, "died (exit status %d)", how->status);
}

static const uint8_t imp_magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/*
 * Opens a file of version 6 or older in a child first: libtracecmd 1.3.1
 * crashes (in its own error path) on some truncated v6 files, and a crash
 * must become an error code, without a sanitizer's report.  A v7 file is not
 * probed: its open costs a tenth of the import (the kallsyms are parsed at
 * every open), and libtracecmd returns an error for a v7 file cut anywhere
 * (tried at 166 offsets, headers to the options at its end).  A damaged one
 * it may crash on, which the import's own child contains (imp_contain() above).
 */
int imp_open_checked(const char *path, const char **why)
{
	uint8_t magic[sizeof(imp_magic) + 2];
	struct stat st;
	ssize_t n;
	pid_t pid;
	int fd, status, err;

	/* O_NONBLOCK: a FIFO is refused below, not waited on for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else
		err = 0;
	if (err) {
		close(fd);
		return err;
	}
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n < (ssize_t)sizeof(imp_magic) || memcmp(magic, imp_magic, sizeof(imp_magic))) {
		*why = st.st_size ? "not a trace-cmd data file (bad magic)" : "empty file";
		return -MCR_E_CORRUPT;
	}
	/* the version, a decimal string: "7" then NUL */
	if (n == (ssize_t)sizeof(magic) && magic[sizeof(imp_magic)] >= '7' &&
	    magic[sizeof(imp_magic)] <= '9' && !magic[sizeof(imp_magic) + 1])
		return 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct tracecmd_input *h;
		int null = open("/dev/null", O_WRONLY);

		/* a sanitizer's crash report would otherwise reach the user */
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		imp_child_quiet();
		h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (h)
			tracecmd_close(h);
		_exit(h ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	*why = WIFSIGNALED(status) ? "libtracecmd crashed reading it (a truncated v6 file?)"
				   : "libtracecmd cannot open it";
	return -MCR_E_CORRUPT;
}
