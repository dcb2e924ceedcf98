// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture's stop signals: every signal that would end the program with
 * the instance tracing and the temporary file left instead stops the capture,
 * recorded in stop_signal (the last) and stop_count (how many, each passed on
 * to COMMAND).  The handler only records; the main thread polls.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "capture_local.h"

volatile sig_atomic_t stop_signal;
volatile sig_atomic_t stop_count;

static void on_signal(int sig)
{
	stop_signal = sig;
	stop_count++;
}

/*
 * Every signal whose default would end us with the instance tracing and the
 * temporary file left: each stops the capture as SIGINT does.  The signals
 * of a crash are not among them (nothing sane runs after those), nor
 * SIGKILL; SIGPIPE and SIGXFSZ are ignored (a write fails instead).
 */
static const int stop_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
	SIGIO, SIGPWR, SIGXCPU,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

void stop_signals_set(sigset_t *set)
{
	size_t i;
	int sig;

	sigemptyset(set);
	for (i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(set, stop_signals[i]);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

/*
 * on_signal() for every stop signal, each blocking the others while it runs.
 * A SIGHUP ignored when we started (nohup) stays ignored.
 */
void stop_signals_catch(void)
{
	static int hup_ignored = -1;
	struct sigaction sa = { .sa_handler = on_signal }, old;
	int sig;

	if (hup_ignored < 0)
		hup_ignored = !sigaction(SIGHUP, NULL, &old) && old.sa_handler == SIG_IGN;
	stop_signals_set(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&sa.sa_mask, sig) == 1)
			sigaction(sig, &sa, NULL);
	if (hup_ignored)
		signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
}

/* "SIGTERM", "SIGRTMIN+3": for messages, from the main thread (a static buffer). */
const char *sig_name(int sig)
{
	static char buf[32];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, sizeof(buf), "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}
