// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture's options: the argp table, --help's text and exit-code table,
 * and parse_opt(), which refuses (argp_error(), exit 2) any value no capture
 * could use.  What only this host can tell (the clock, the cgroup, COMMAND,
 * the output) preflight.c checks.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_local.h"
#include "error.h"
#include "exit.h"
#include "num.h"

#define DEFAULT_BUFFER_KB	8192
#define DEFAULT_CLOCK		"mono"
/*
 * -d below this is refused: the readers wake every 100 ms, so a shorter
 * capture would be mostly its own start and drain, and 1e-9 or 1e-300 is
 * no duration anyone can mean.
 */
#define MIN_DURATION_S		0.1
#define MIN_DURATION_TEXT	"0.1"
/*
 * -b at most this per CPU, and at most a quarter of MemTotal over the online
 * CPUs: the ring buffers are unswappable kernel memory, allocated (and
 * freed) before the capture can start or stop.
 */
#define MAX_BUFFER_KB		(1u << 20)
#define MAX_BUFFER_SHARE	4

enum { OPT_FORCE_CLOCK = 256, OPT_CGROUP, OPT_FORCE, OPT_CLEANUP, OPT_READ, OPT_ROTATE, OPT_KEEP,
       OPT_WATCH, OPT_PROM };

/* --read: each read every 1 ms to an hour (default 100 ms) */
#define DEFAULT_READ_MS		100
#define MAX_READ_MS		3600000u

const char *argp_program_version = PROG " " MCR_VERSION;

static const char doc[] =
"Record the kernel's memcg stat-update and flush tracepoints into a trace database "
"that `memcg-replay replay` reads.\v"
"What is recorded, system-wide, in a private tracefs instance (memcg_capture_<pid>): "
"memcg:mod_memcg_state, mod_memcg_lruvec_state, count_memcg_events and memcg_flush_stats; "
"cgroup:cgroup_rstat_locked, _unlock, _lock_contended, cgroup_mkdir and cgroup_rmdir of the "
"memory controller's hierarchy; each CPU's events in ring-buffer order. The database also "
"holds the cgroup tree (walked at start, then kept current), stat item names from BTF, "
"per-CPU ring-buffer stats and every lost-events gap. Each CPU's reader encodes and "
"compresses its own events into chunks of the event store ('memcg-replay events FILE' "
"lists them as rows).\n"
"\n"
"It stops after -d SECONDS, when COMMAND exits, or on any signal that would end it (SIGINT, "
"SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, "
"SIGXCPU, SIGSTKFLT, the real-time signals; SIGPIPE and SIGXFSZ are ignored, and so is SIGHUP under "
"nohup), and then always turns "
"tracing off, drains the buffers, commits and removes its instance. COMMAND runs in its own "
"process group (it cannot read the terminal). If it still runs then, its group gets SIGTERM "
"(after -d), or the signal that stopped the capture (SIGINT, SIGTERM, SIGHUP, SIGQUIT as "
"they are, any other as SIGTERM), and SIGKILL once COMMAND has ended or 2 s have passed; "
"memcg-capture waits for it and keeps its status (128 + the signal that ended it) in meta "
"command_exit_status. Every option is "
"checked before -o FILE is touched; the database is written as .FILE.tmp-<pid> beside it and "
"renamed to FILE once tracing has run, so a capture that cannot start leaves an existing FILE "
"as it was, and a device, FIFO or file not ours (without --force) is never replaced. A "
"capture stopped by a signal before it stored a single event writes nothing either: an "
"existing FILE stays as it was, and the exit code is 16. What "
"was committed before a crash or kill -9 stays readable in .FILE.tmp-<pid> (it commits at "
"least once a second); only SIGKILL and the signals of a crash (SIGSEGV, SIGBUS, SIGILL, "
"SIGFPE, SIGABRT, SIGTRAP, SIGSYS) leave it and the tracefs instance behind. Meta "
"capture_complete is 1 only after a clean end; otherwise (killed, "
"crashed, the disk full) 'memcg-replay info' says the capture is incomplete and why, and "
"replay and report warn. Events read but not stored (a full disk) count as lost.\n"
"\n"
"Examples:\n"
"  memcg-capture -o host.db -d 60            # the whole host for a minute\n"
"  memcg-capture -o job.db -- ./job args     # for the life of a command\n"
"  memcg-capture -o t.db --cgroup /tenant -d 30\n"
"  memcg-capture -o d/h --rotate 10min --keep 144  # the last day, d/h-<UTC>.db\n"
"  memcg-replay replay host.db               # then anywhere, no root\n"
"\n"
"The clock must be coherent across CPUs: 'local' is per CPU and can misorder events of "
"different CPUs, so it is refused unless --force-clock. Lost events are never silent: "
"the summary line counts them and the exit code is 11. COMMAND's own exit status is "
"kept in meta command_exit_status.";

static char *help_filter(int key, const char *text, void *input)
{
	return cli_exit_help_filter(key, text, CLI_CAPTURE);
}

static const char args_doc[] = "[-- COMMAND [ARGS...]]";

static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "Trace database to write (mode 0600), under a temporary name "
	  "renamed at the end; an existing one is replaced only by a capture that started "
	  "(with --rotate: the PREFIX of the files' names)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace -o FILE even if it is not a memcg-replay database", 0 },
	{ "cleanup", OPT_CLEANUP, NULL, 0, "Only remove the tracefs instances memcg_capture_<pid> whose "
	  "pid is not running (left by a capture killed with -9, which keep tracing), say which, "
	  "and exit", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS, at least " MIN_DURATION_TEXT " (default: "
	  "until COMMAND exits or a signal); a COMMAND still running then gets SIGTERM, its "
	  "process group SIGKILL 2 s later at most", 0 },
	{ "buffer", 'b', "KIB", 0, "Ring buffer per CPU in KiB (default 8192: about half a second of "
	  "headroom at 500k events/s per CPU; at most 1048576, and at most a quarter of MemTotal "
	  "over the online CPUs)", 0 },
	{ "clock", 'C', "CLOCK", 0, "Trace clock (default mono = CLOCK_MONOTONIC; see "
	  "/sys/kernel/tracing/trace_clock)", 0 },
	{ "force-clock", OPT_FORCE_CLOCK, NULL, 0, "Allow -C local (per-CPU clock, not ordered across CPUs)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Keep only this subtree's events and its ancestors' flushes "
	  "(PATH below the memory hierarchy, e.g. /tenant, or a full path under its mount; no '.' or "
	  "'..' component)", 0 },
	{ "rotate", OPT_ROTATE, "SPEC", 0, "Write a series of files PREFIX-YYYYmmddTHHMMSSZ.db (-o "
	  "PREFIX; UTC start; -1, -2 added to a name taken), each complete, a new one every SPEC: "
	  "N[s], Nmin or Nh (at least 1 s), or once a file's events take NKiB, NMiB or NGiB "
	  "(at least 1 MiB)", 0 },
	{ "keep", OPT_KEEP, "N", 0, "With --rotate: keep only the newest N files PREFIX-<UTC "
	  "time>.db (memcg-replay databases) after each one (default: all)", 0 },
	{ "read", OPT_READ, "PATH[:MS]", 0, "While tracing, read the memory.stat of cgroup PATH (as "
	  "--cgroup takes it) every MS ms (default 100, 1 to 3600000) and store every line as "
	  "printed with the trace clock just before and after the read() (table stat_reads); its "
	  "flushes are in the trace like any reader's. Repeatable, up to 16 cgroups", 0 },
	{ "watch", OPT_WATCH, NULL, 0, "While tracing, replay the traced kernel's own walk policy "
	  "as 'memcg-replay replay -m spread' would (the order inside lock windows is unknown "
	  "live) and print every second the stranded cgroups: how long, the worst line's visible "
	  "error, stale reads so far; once more at the end, with every event", 0 },
	{ "prom", OPT_PROM, "FILE", 0, "With --watch (implied): every second, write its figures "
	  "to FILE in the Prometheus text format (FILE.tmp beside it, renamed over it), for "
	  "node_exporter's textfile collector; an existing FILE only if --prom wrote it", 0 },
	{ 0 }
};

/*
 * The -b bound in KiB per CPU: MAX_BUFFER_KB, or less where a quarter of
 * MemTotal over the online CPUs (*@cpus) is less.
 */
static unsigned long max_buffer_kb(long *cpus)
{
	unsigned long long mem_kb = 0, share;
	char line[128];
	FILE *f;

	*cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (*cpus < 1)
		*cpus = 1;
	f = fopen("/proc/meminfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %llu kB", &mem_kb) == 1)
				break;
		fclose(f);
	}
	if (!mem_kb)
		return MAX_BUFFER_KB;
	share = mem_kb / MAX_BUFFER_SHARE / (unsigned long long)*cpus;
	return share < MAX_BUFFER_KB ? (unsigned long)share : MAX_BUFFER_KB;
}

/*
 * No "." or ".." component: "/.." would walk above the hierarchy's root (and
 * name the root its own parent), "/./" names "/" under another spelling.
 */
static bool cgroup_path_plain(const char *p)
{
	while (*p) {
		size_t len = strcspn(p, "/");

		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += len;
		p += strspn(p, "/");
	}
	return true;
}

/*
 * --rotate SPEC: a period (N, Ns, Nmin, Nh; 1 s to a year) into *@ns, or a
 * size (NMiB, NGiB; 1 MiB to 1 TiB) into *@bytes.  -EINVAL for anything else.
 */
#define MIN_ROTATE_BYTES	(1ull << 20)
#define MAX_ROTATE_BYTES	(1ull << 40)
static int parse_rotate(const char *arg, uint64_t *ns, uint64_t *bytes)
{
	static const struct { const char *sfx; uint64_t ns, bytes; } units[] = {
		{ "", 1000000000ull, 0 }, { "s", 1000000000ull, 0 },
		{ "min", 60000000000ull, 0 }, { "h", 3600000000000ull, 0 },
		{ "KiB", 0, 1ull << 10 }, { "MiB", 0, 1ull << 20 }, { "GiB", 0, 1ull << 30 },
	};
	unsigned long long v;
	unsigned int i;
	char *end;

	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || !v)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].sfx))
			continue;
		if (units[i].ns) {
			if (v > 366ull * 86400 * 1000000000ull / units[i].ns)
				return -EINVAL;
			*ns = v * units[i].ns;
			*bytes = 0;
			return 0;
		}
		if (v > MAX_ROTATE_BYTES / units[i].bytes || v * units[i].bytes < MIN_ROTATE_BYTES)
			return -EINVAL;
		*bytes = v * units[i].bytes;
		*ns = 0;
		return 0;
	}
	return -EINVAL;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct capture_args *a = state->input;
	char *end;

	switch (key) {
	case 'o':
		a->output = arg;
		break;
	case 'd':
		/* a year at most: NaN or inf would record forever */
		if (cli_num_double(arg, MIN_DURATION_S, 366 * 86400.0, &a->duration))
			argp_error(state, "-d wants seconds from " MIN_DURATION_TEXT " (the shortest "
				   "capture) to 31622400 (a year), not '%s'", arg);
		break;
	case 'b': {
		unsigned long v, max;
		long cpus;
		char why[96];

		max = max_buffer_kb(&cpus);
		if (max < MAX_BUFFER_KB)
			snprintf(why, sizeof(why), "a quarter of MemTotal over %ld online CPUs", cpus);
		else
			snprintf(why, sizeof(why), "1 GiB per CPU");
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || arg[0] == '-' || v < 4 || v > max)
			argp_error(state, "-b wants KiB per CPU between 4 and %lu (%s), not '%s'",
				   max, why, arg);
		a->buffer_kb = (unsigned int)v;
		break;
	}
	case 'C':
		a->clock = arg;
		break;
	case OPT_FORCE_CLOCK:
		a->force_clock = true;
		break;
	case OPT_CGROUP:
		if (!cgroup_path_plain(arg))
			argp_error(state, "--cgroup wants a cgroup path without . or .. components, "
				   "not '%s'", arg);
		a->cgroup = arg;
		break;
	case OPT_READ: {
		char *colon = strrchr(arg, ':');
		unsigned long ms = DEFAULT_READ_MS;

		if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
			errno = 0;
			ms = strtoul(colon + 1, &end, 10);
			if (errno || *end || ms < 1 || ms > MAX_READ_MS)
				argp_error(state, "--read wants PATH[:MS] with MS from 1 to %u, "
					   "not '%s'", MAX_READ_MS, arg);
			*colon = '\0';
		} else {
			colon = NULL;
		}
		if (!*arg || !cgroup_path_plain(arg)) {
			if (colon)
				*colon = ':';	/* the message names what was typed */
			argp_error(state, "--read wants PATH[:MS], PATH a cgroup path without . or "
				   ".. components, not '%s'", arg);
		}
		if (a->nr_reads == MAX_READS)
			argp_error(state, "--read: at most %d cgroups", MAX_READS);
		a->read_path[a->nr_reads] = arg;
		a->read_ms[a->nr_reads++] = (unsigned int)ms;
		break;
	}
	case OPT_ROTATE:
		if (parse_rotate(arg, &a->rotate_ns, &a->rotate_bytes))
			argp_error(state, "--rotate wants a period N[s], Nmin or Nh (1 s to a year) or "
				   "a size NKiB, NMiB or NGiB (1 MiB to 1 TiB), not '%s'", arg);
		break;
	case OPT_KEEP: {
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || arg[0] < '0' || arg[0] > '9' || v < 1 || v > 1000000)
			argp_error(state, "--keep wants a number of files from 1 to 1000000, not '%s'",
				   arg);
		a->keep = (unsigned int)v;
		break;
	}
	case OPT_WATCH:
		a->watch = true;
		break;
	case OPT_PROM:
		if (!*arg)
			argp_error(state, "--prom wants a FILE");
		a->prom = arg;
		a->watch = true;
		break;
	case OPT_FORCE:
		a->force = true;
		break;
	case OPT_CLEANUP:
		a->cleanup = true;
		break;
	case ARGP_KEY_ARG:
		a->command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (a->cleanup && (a->output || a->command))
			argp_error(state, "--cleanup takes neither -o nor a COMMAND");
		if (!a->output && !a->cleanup)
			argp_error(state, "-o FILE is required");
		if (a->cleanup && a->nr_reads)
			argp_error(state, "--cleanup takes no --read");
		if (a->keep && !a->rotate_ns && !a->rotate_bytes)
			argp_error(state, "--keep needs --rotate");
		if (a->cleanup && (a->rotate_ns || a->rotate_bytes))
			argp_error(state, "--cleanup takes no --rotate");
		if ((a->rotate_ns || a->rotate_bytes) && a->force)
			argp_error(state, "--rotate never replaces a file: no --force");
		if (a->cleanup && a->watch)
			argp_error(state, "--cleanup takes neither --watch nor --prom");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int capture_args_parse(int argc, char **argv, struct capture_args *a)
{
	static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, help_filter, NULL };

	argp_err_exit_status = MCR_EXIT_USAGE;
	a->clock = DEFAULT_CLOCK;
	a->buffer_kb = DEFAULT_BUFFER_KB;
	return argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, a);
}
