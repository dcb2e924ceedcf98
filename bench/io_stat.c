// SPDX-License-Identifier: GPL-2.0
/*
 * io_stat OUT CMD [ARG...]: run CMD and, once it has exited but before it is
 * reaped, write its /proc/PID/io (rchar, wchar, syscr, syscw, read_bytes,
 * write_bytes, cancelled_write_bytes) and its peak RSS (peak_rss_kb) to OUT as
 * "name value" lines.  write_bytes is what reached the page cache of a
 * file system with a disk behind it (a temporary file deleted before
 * writeback too; cancelled_write_bytes says how much of it never went out).
 * Exits with CMD's exit status (128 + signal if it was killed).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Copy the "key: value" lines of /proc/@pid/io to @out. */
static int io_copy(pid_t pid, FILE *out)
{
	char path[64], line[256], key[64];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %llu", key, &v) == 2)
			fprintf(out, "%s %llu\n", key, v);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	siginfo_t si = { 0 };
	struct rusage ru;
	FILE *out;
	pid_t pid;
	int err, status;

	if (argc < 3) {
		fprintf(stderr, "usage: io_stat OUT CMD [ARG...]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "io_stat: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("io_stat: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "io_stat: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	/* exited, not reaped: its /proc entry still has the counters */
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR) {
			perror("io_stat: waitid");
			return 2;
		}
	err = io_copy(pid, out);
	if (err)
		fprintf(stderr, "io_stat: /proc/%d/io: %s\n", (int)pid, strerror(-err));
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("io_stat: wait4");
		return 2;
	}
	fprintf(out, "peak_rss_kb %ld\n", ru.ru_maxrss);
	fclose(out);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
