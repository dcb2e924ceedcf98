// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-statlog - read cgroups' memory.stat at a fixed interval and log every
 * line as printed, with the trace clock just before and after the read(), in
 * the log format memcg-replay import --stat-log reads (capture/statlog.h).
 * It runs beside trace-cmd record; its reads are real reads, whose flushes
 * the recording holds.  Only the C library: it goes wherever trace-cmd does.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "timespec.h"
#include "error.h"

#define LOG_FORMAT	1
#define MAX_CGROUPS	64
#define BUF_SIZE	(64 * 1024)	/* memory.stat is one seq_buf page or so */
#define CGROUP_V1_MAGIC	0x27e0eb
#define CGROUP_V2_MAGIC	0x63677270

static const char *prog = "memcg-statlog";

static const char usage_text[] =
"Usage: memcg-statlog [OPTION...] CGROUP...\n"
"Read each CGROUP's memory.stat (CGROUP: its directory, e.g.\n"
"/sys/fs/cgroup/memory/P) every MS ms and log every line as printed, with the\n"
"trace clock just before and just after the read(), for\n"
"memcg-replay import TRACE.dat --stat-log FILE.  Run it beside trace-cmd record:\n"
"its reads are real reads, their flushes are in the recording.\n"
"\n"
"  -o, --output=FILE     write the log to FILE (default: standard output); an\n"
"                        existing FILE only with --force\n"
"  -f, --force           replace an existing FILE\n"
"  -i, --interval=MS     one read of every CGROUP each MS ms (default 100, 1 to\n"
"                        3600000); a slot missed while busy is skipped\n"
"  -d, --duration=S      stop after S seconds (default: at SIGINT, SIGTERM or\n"
"                        SIGHUP, after the read under way)\n"
"  -C, --clock=CLOCK     the clock trace-cmd records with (default mono, as\n"
"                        trace-cmd record -C mono; also mono_raw, boot, tai, and\n"
"                        the tracefs clocks local, global, perf, uptime, read from\n"
"                        the top instance's ring buffer in microseconds, root only)\n"
"  -t, --tracefs=DIR     tracefs mount for those (default /sys/kernel/tracing)\n"
"  -h, --help            this help\n"
"  -V, --version         the version\n"
"\n"
"trace-cmd record's default clock is local (the tracefs default); the log must\n"
"be in the recording's clock, which import checks (the trace.dat names it).\n"
"\n"
"The log (format 1; text, fields separated by one blank, times in ns):\n"
"  memcg-statlog 1\n"
"  clock CLOCK\n"
"  cgroup ID VERSION PATH        ID the inode of PATH (the tracepoints' cgroup\n"
"                                id), VERSION 1 or 2\n"
"  read N ID BEFORE AFTER LINES  read N (from 0) of cgroup ID, the clock around\n"
"                                its first read(), then LINES lines, each\n"
"  <TAB>LINE                     a line of memory.stat as printed\n"
"\n"
"Exit status:\n"
"   0  success\n"
"   1  unexpected failure (writing the log, the clock)\n"
"   2  bad command line\n"
"   3  a CGROUP's memory.stat cannot be read, or FILE cannot be created or\n"
"      exists (without --force)\n"
"  13  no tracefs for a tracefs clock\n"
"  17  CGROUP is not a cgroup directory; the tracefs clock is not the one\n"
"      tracing runs with\n"
"\n"
"Examples:\n"
"20 s of P read every 80 ms, trace-cmd recording in the background; once it\n"
"has ended, the import and the check:\n"
"  trace-cmd record -d --no-filter -C mono -b 16384 -o trace.dat -e memcg \\\n"
"      -e cgroup:cgroup_rstat_locked -e cgroup:cgroup_rstat_unlock \\\n"
"      -e cgroup:cgroup_mkdir -e cgroup:cgroup_rmdir sleep 22 &\n"
"  memcg-statlog -i 80 -d 20 -o P.statlog /sys/fs/cgroup/memory/P\n"
"  memcg-replay import trace.dat --stat-log P.statlog \\\n"
"      --cgroupfs /sys/fs/cgroup/memory\n"
"  memcg-replay validate trace.db\n";

struct cgroup {
	const char	*arg;
	char		path[PATH_MAX];
	char		stat[PATH_MAX + 16];
	uint64_t	id;
	int		version;
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	stopping = 1;
}

static const struct {
	const char	*name;
	clockid_t	id;
} posix_clocks[] = {
	{ "mono", CLOCK_MONOTONIC }, { "mono_raw", CLOCK_MONOTONIC_RAW },
	{ "boot", CLOCK_BOOTTIME }, { "tai", CLOCK_TAI },
};
static const char *const tracefs_clocks[] = { "local", "global", "perf", "uptime" };

struct clock {
	int		posix;		/* index into posix_clocks, -1: tracefs */
	char		stats[PATH_MAX];	/* the top instance's per_cpu/cpu0/stats */
};

/* The clock now in ns; @up rounds a microsecond reading up. */
static int clock_now(const struct clock *c, bool up, uint64_t *ns)
{
	char buf[1024], *p;
	unsigned long long sec, usec;
	struct timespec ts;
	ssize_t got;
	int fd;

	if (c->posix >= 0) {
		if (clock_gettime(posix_clocks[c->posix].id, &ts))
			return -errno;
		*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		return 0;
	}
	fd = open(c->stats, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got < 0)
		return -errno;
	buf[got] = '\0';
	p = strstr(buf, "now ts:");
	if (!p || sscanf(p + 7, " %llu.%llu", &sec, &usec) != 2)
		return -ENOENT;
	*ns = (uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull + (up ? 999 : 0);
	return 0;
}

static int clock_setup(struct clock *c, const char *name, const char *tracefs)
{
	char path[PATH_MAX], buf[512], want[64];
	unsigned int i;
	ssize_t got;
	int fd;

	for (i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++)
		if (!strcmp(name, posix_clocks[i].name)) {
			c->posix = (int)i;
			return 0;
		}
	for (i = 0; i < sizeof(tracefs_clocks) / sizeof(tracefs_clocks[0]); i++)
		if (!strcmp(name, tracefs_clocks[i]))
			break;
	if (i == sizeof(tracefs_clocks) / sizeof(tracefs_clocks[0])) {
		fprintf(stderr, "%s: --clock %s: not one it can read (mono, mono_raw, boot, tai, "
			"local, global, perf, uptime)\n", prog, name);
		return MCR_EXIT_USAGE;
	}
	c->posix = -1;
	snprintf(path, sizeof(path), "%s/trace_clock", tracefs);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: --clock %s is read from tracefs, but %s: %s\n", prog, name,
			path, strerror(errno));
		return MCR_EXIT_NO_TRACEFS;
	}
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(want, sizeof(want), "[%s]", name);
	if (!strstr(buf, want)) {
		fprintf(stderr, "%s: --clock %s, but tracing runs with another (%s: %s): start "
			"trace-cmd record -C %s first\n", prog, name, path, buf, name);
		return MCR_EXIT_BAD_INPUT;
	}
	snprintf(c->stats, sizeof(c->stats), "%s/per_cpu/cpu0/stats", tracefs);
	return 0;
}

static int cgroup_setup(struct cgroup *cg)
{
	struct statfs sf;
	struct stat st;
	int fd;

	if (!realpath(cg->arg, cg->path) || stat(cg->path, &st)) {
		fprintf(stderr, "%s: %s: %s\n", prog, cg->arg, strerror(errno));
		return MCR_EXIT_NOFILE;
	}
	if (!S_ISDIR(st.st_mode) || statfs(cg->path, &sf) ||
	    (sf.f_type != CGROUP_V1_MAGIC && sf.f_type != CGROUP_V2_MAGIC)) {
		fprintf(stderr, "%s: %s is not a cgroup directory (a directory of a cgroup v1 "
			"or v2 mount)\n", prog, cg->arg);
		return MCR_EXIT_BAD_INPUT;
	}
	cg->id = (uint64_t)st.st_ino;
	cg->version = sf.f_type == CGROUP_V2_MAGIC ? 2 : 1;
	snprintf(cg->stat, sizeof(cg->stat), "%s/memory.stat", cg->path);
	fd = open(cg->stat, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s (no memory controller there?)\n", prog, cg->stat,
			strerror(errno));
		return MCR_EXIT_NOFILE;
	}
	close(fd);
	return 0;
}

/*
 * One read of @cg: memory.stat into @buf, the clock around its first read()
 * (whose kernel side flushes and prints the whole file), then the record.
 */
static int log_read(FILE *out, const struct clock *c, const struct cgroup *cg, uint64_t n,
		    char *buf)
{
	uint64_t before, after;
	size_t have = 0, lines = 0, off;
	ssize_t got;
	int fd, err;

	fd = open(cg->stat, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, cg->stat, strerror(errno));
		return MCR_EXIT_NOFILE;
	}
	err = clock_now(c, false, &before);
	got = err ? 0 : read(fd, buf, BUF_SIZE - 1);
	if (!err && got < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, cg->stat, strerror(errno));
		close(fd);
		return MCR_EXIT_NOFILE;
	}
	err = err ?: clock_now(c, true, &after);
	if (err) {
		fprintf(stderr, "%s: reading the clock: %s\n", prog, strerror(-err));
		close(fd);
		return MCR_EXIT_FAILURE;
	}
	while (got > 0) {
		have += (size_t)got;
		if (have >= BUF_SIZE - 1)
			break;
		got = read(fd, buf + have, BUF_SIZE - 1 - have);
	}
	close(fd);
	if (have && buf[have - 1] != '\n')
		buf[have++] = '\n';	/* a last line without its newline (BUF_SIZE full) */
	for (off = 0; off < have; off++)
		lines += buf[off] == '\n';
	fprintf(out, "read %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu\n", n, cg->id,
		before, after, lines);
	for (off = 0; off < have;) {
		size_t len = (size_t)((char *)memchr(buf + off, '\n', have - off) - (buf + off));

		fputc('\t', out);
		fwrite(buf + off, 1, len + 1, out);
		off += len + 1;
	}
	if (fflush(out)) {
		fprintf(stderr, "%s: writing the log: %s\n", prog, strerror(errno));
		return MCR_EXIT_FAILURE;
	}
	return 0;
}

static int usage_error(const char *what, const char *arg, const char *valid)
{
	fprintf(stderr, "%s: %s%s%s\nTry '%s --help' for more information.\n", prog, what, arg,
		valid, prog);
	return MCR_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "clock", required_argument, NULL, 'C' },
		{ "tracefs", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *out_path = NULL, *clock_name = "mono", *tracefs = "/sys/kernel/tracing";
	struct cgroup *cgs = NULL;
	struct timespec next, now, end = { 0 };
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct clock clk = { 0 };
	unsigned long interval = 100;
	double duration = 0;
	bool force = false;
	uint64_t n = 0;
	char *buf, *e;
	FILE *out = stdout;
	int c, i, ncg, rc = 0;

	while ((c = getopt_long(argc, argv, "o:fi:d:C:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'i':
			errno = 0;
			interval = strtoul(optarg, &e, 10);
			if (errno || *e || e == optarg || !interval || interval > 3600000 ||
			    *optarg == '-')
				return usage_error("--interval ", optarg, ": MS from 1 to 3600000");
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &e);
			if (errno || *e || e == optarg || !(duration > 0) || duration > 1e7)
				return usage_error("--duration ", optarg, ": seconds above 0");
			break;
		case 'C':
			clock_name = optarg;
			break;
		case 't':
			tracefs = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("%s %s\n", prog, MCR_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n", prog);
			return MCR_EXIT_USAGE;
		}
	}
	ncg = argc - optind;
	if (ncg < 1)
		return usage_error("which cgroup? (memcg-statlog CGROUP_DIR...)", "", "");
	if (ncg > MAX_CGROUPS)
		return usage_error("at most 64 cgroups", "", "");
	cgs = calloc((size_t)ncg, sizeof(*cgs));
	buf = malloc(BUF_SIZE);
	if (!cgs || !buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return MCR_EXIT_FAILURE;
	}
	rc = clock_setup(&clk, clock_name, tracefs);
	for (i = 0; i < ncg && !rc; i++) {
		cgs[i].arg = argv[optind + i];
		rc = cgroup_setup(&cgs[i]);
	}
	if (!rc && out_path) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL),
			      0644);

		if (fd < 0 || !(out = fdopen(fd, "w"))) {
			fprintf(stderr, "%s: %s: %s%s\n", prog, out_path, strerror(errno),
				errno == EEXIST ? " (--force replaces it)" : "");
			rc = MCR_EXIT_NOFILE;
		}
	}
	if (rc)
		goto out;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(out, "memcg-statlog %d\nclock %s\n", LOG_FORMAT, clock_name);
	for (i = 0; i < ncg; i++)
		fprintf(out, "cgroup %" PRIu64 " %d %s\n", cgs[i].id, cgs[i].version, cgs[i].path);
	clock_gettime(CLOCK_MONOTONIC, &next);
	if (duration > 0) {
		end = next;
		end.tv_sec += (time_t)duration;
		mcr_ts_add_ms(&end, (unsigned long)((duration - (double)(time_t)duration) * 1000));
	}
	while (!stopping) {
		for (i = 0; i < ncg && !rc && !stopping; i++)
			rc = log_read(out, &clk, &cgs[i], n++, buf);
		if (rc)
			break;
		mcr_ts_add_ms(&next, interval);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (mcr_ts_before(&next, &now)) {
			next = now;
			mcr_ts_add_ms(&next, interval);
		}
		if (duration > 0 && !mcr_ts_before(&next, &end))
			break;
		/* EINTR: a signal asked to stop */
		while (!stopping && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			;
	}
	if (fflush(out) || (out != stdout && fclose(out))) {
		fprintf(stderr, "%s: writing the log: %s\n", prog, strerror(errno));
		rc = rc ?: MCR_EXIT_FAILURE;
	}
	if (!rc && out_path)
		fprintf(stderr, "%s: %" PRIu64 " reads of memory.stat logged into %s (clock %s)\n",
			prog, n, out_path, clock_name);
out:
	free(cgs);
	free(buf);
	return rc;
}
