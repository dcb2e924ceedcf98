// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture's -- COMMAND: started in its own process group once tracing
 * runs, and, if it still runs when the capture stops, signalled, given
 * COMMAND_GRACE_S, then SIGKILLed with its group; never left running, its
 * status kept in c->child_status (128 + the signal that ended it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture_local.h"

/* How long COMMAND has to end after its signal, before SIGKILL (and after it). */
#define COMMAND_GRACE_S		2

pid_t run_command(char **command)
{
	pid_t pid = fork();

	if (pid == 0) {
		/*
		 * Its own process group, so that stopping it reaches every process
		 * it started (a shell's children), not only the one we forked.
		 */
		setpgid(0, 0);
		/* caught signals are reset by exec; an ignored one stays ignored */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		/*
		 * The instance's trace_pipe_raw and our database must not leak into
		 * the command: any process left holding them (a workload's orphaned
		 * sleep) would keep the instance busy, and its rmdir would fail.
		 */
		close_range(3, ~0u, 0);
		execvp(command[0], command);
		fprintf(stderr, PROG ": %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);	/* before we may signal its group, whoever runs first */
	return pid;
}

/* SIGCHLD ends the main thread's sleep (nanosleep returns on any handled signal). */
void on_child(int sig)
{
}

/* The signal COMMAND gets for ours: the usual ones as they are, any other as SIGTERM. */
static int command_signal(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ? sig : SIGTERM;
}

/*
 * Wait up to COMMAND_GRACE_S for COMMAND to end, passing on to its group each
 * signal we get meanwhile (from *@passed on).  True once it has ended; it is
 * left a zombie (WNOWAIT), so that its process group id cannot be reused
 * before command_reap().
 */
static bool command_wait(struct capture *c, sig_atomic_t *passed)
{
	uint64_t until = now_ns() + COMMAND_GRACE_S * 1000000000ull;
	struct timespec nap = { 0, 10000000 };

	for (;;) {
		siginfo_t info = { 0 };
		int r = waitid(P_PID, c->child, &info, WEXITED | WNOHANG | WNOWAIT);

		if (r == 0 && info.si_pid == c->child)
			return true;
		if (r < 0 && errno != EINTR)
			return true;	/* ECHILD: not ours to wait for any more */
		if (*passed != stop_count) {
			*passed = stop_count;
			kill(-c->child, command_signal(stop_signal));
		}
		if (now_ns() >= until)
			return false;
		nanosleep(&nap, NULL);
	}
}

/* Collect COMMAND's status (128 + the signal that ended it); it has ended. */
static void command_reap(struct capture *c)
{
	int status;

	if (waitpid(c->child, &status, 0) == c->child)
		c->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	c->child = 0;
}

/*
 * The capture stopped with COMMAND running: signal its process group
 * (SIGTERM after -d, else what stopped us), give it COMMAND_GRACE_S, then
 * SIGKILL the group, what is left of it once COMMAND ended or all of it when
 * COMMAND did not; never leave it running, and keep the status it ended with.
 */
void command_end(struct capture *c)
{
	int sig = stop_signal ? command_signal(stop_signal) : SIGTERM;
	sig_atomic_t passed = stop_count;
	bool ended;

	kill(-c->child, sig);
	ended = command_wait(c, &passed);
	if (!ended)
		msg("%s (pid %d) did not end within %d s of %s: sending SIGKILL",
		    c->args.command[0], (int)c->child, COMMAND_GRACE_S, sig_name(sig));
	/* its zombie holds the group id: no other group can have it yet */
	kill(-c->child, SIGKILL);
	if (ended || command_wait(c, &passed)) {
		command_reap(c);
		return;
	}
	msg("%s (pid %d) did not end even on SIGKILL: left running", c->args.command[0],
	    (int)c->child);
	c->child = 0;
}
