// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture - record the memcg rstat tracepoints of this host into a
 * trace database for memcg-replay.  The tool layer: options, checks, messages,
 * the command to run, progress and exit codes.  Capturing is capture/live.c.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btf.h"
#include "cgroupfs.h"
#include "cgtrack.h"
#include "db.h"
#include "error.h"
#include "exit.h"
#include "live.h"
#include "msg.h"
#include "num.h"
#include "outfile.h"

#define PROG			"memcg-capture"
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
/* How long COMMAND has to end after its signal, before SIGKILL (and after it). */
#define COMMAND_GRACE_S		2

enum { OPT_FORCE_CLOCK = 256, OPT_CGROUP, OPT_FORCE, OPT_CLEANUP, OPT_READ };

/* --read: at most this many targets, each read every 1 ms to an hour (default 100 ms) */
#define MAX_READS		16
#define DEFAULT_READ_MS		100
#define MAX_READ_MS		3600000u

struct capture_args {
	const char	*output;
	const char	*clock;
	const char	*cgroup;
	char		**command;
	const char	*read_path[MAX_READS];	/* --read PATH[:MS], PATH part */
	unsigned int	read_ms[MAX_READS];
	int		nr_reads;
	double		duration;
	unsigned int	buffer_kb;
	bool		force_clock;
	bool		force;
	bool		cleanup;
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_count;	/* signals received: each is passed on */

const char *cli_prog = PROG;

/* The tool layer's messages, shared with memcg-replay (cli/msg.c). */
#define msg(...)	cli_msg(__VA_ARGS__)

/* One line for @err and its exit code. */
static int fail(int err, const char *what)
{
	return what ? cli_fail(err, "%s", what) : cli_fail_bare(err);
}

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
	  "renamed at the end; an existing one is replaced only by a capture that started", 0 },
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
	{ "read", OPT_READ, "PATH[:MS]", 0, "While tracing, read the memory.stat of cgroup PATH (as "
	  "--cgroup takes it) every MS ms (default 100, 1 to 3600000) and store every line as "
	  "printed with the trace clock just before and after the read() (table stat_reads); its "
	  "flushes are in the trace like any reader's. Repeatable, up to 16 cgroups", 0 },
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
		}
		if (!*arg || !cgroup_path_plain(arg))
			argp_error(state, "--read wants a cgroup path without . or .. components, "
				   "not '%s'", arg);
		if (a->nr_reads == MAX_READS)
			argp_error(state, "--read: at most %d cgroups", MAX_READS);
		a->read_path[a->nr_reads] = arg;
		a->read_ms[a->nr_reads++] = (unsigned int)ms;
		break;
	}
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
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

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

static void stop_signals_set(sigset_t *set)
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
static void stop_signals_catch(void)
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
static const char *sig_name(int sig)
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

/* meta options: the command line and what it resolved to, as JSON */
static char *options_json(int argc, char **argv, const struct capture_args *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	fprintf(f, "{\"argv\":[");
	for (i = 0; i < argc; i++) {
		if (i)
			fputc(',', f);
		db_json_string(f, argv[i]);
	}
	fprintf(f, "],\"buffer_kb\":%u,\"clock\":", a->buffer_kb);
	db_json_string(f, a->clock);
	fprintf(f, ",\"duration_s\":%g,\"cgroup\":", a->duration);
	if (a->cgroup)
		db_json_string(f, a->cgroup);
	else
		fputs("null", f);
	fputc('}', f);
	fclose(f);
	return buf;
}

/* How many CPUs a sysfs CPU list names; negative errno. */
static int count_cpu_list(const char *path)
{
	int *cpus = NULL, n = live_cpu_list(path, &cpus);

	free(cpus);
	return n;
}

struct capture {
	struct capture_args	args;
	struct cgroupfs		cg;
	char			scope[PATH_MAX];
	char			instance[64];
	char			warnings[2048];
	struct outfile		of;	/* the database's temporary name until the end */
	struct db		*db;
	struct cgtrack		*cgt;
	struct live		*lv;
	struct live_statreads	*reads;		/* --read's threads while tracing */
	struct live_statread_opts read_opts[MAX_READS];
	char			read_file[MAX_READS][PATH_MAX];
	pid_t			child;
	int			child_status;	/* -1: none or not exited */
	bool			child_ended;	/* on its own, before we stopped */
	bool			started;	/* tracing ran: the output is kept */
	bool			interrupted;	/* a signal ended the tracing */
};

static void warn_add(struct capture *c, const char *w)
{
	size_t len = strlen(c->warnings);

	snprintf(c->warnings + len, sizeof(c->warnings) - len, "%s%s", len ? "\n" : "", w);
	msg("warning: %s", w);
}

static void on_stale(void *ctx, const char *name)
{
	msg("removed stale tracefs instance %s (its memcg-capture is gone)", name);
}

static void on_orphan(void *ctx, const char *name)
{
	printf(PROG ": removed %s/instances/%s (pid %s is not running)\n", (const char *)ctx,
	       name, name + strlen(LIVE_INSTANCE_PREFIX));
}

/*
 * --cleanup: a capture killed with -9 leaves its instance tracing into its
 * ring buffers until the next capture removes it; this removes it now.
 */
static int capture_cleanup(void)
{
	const char *tdir = NULL;
	bool mounted;
	int ret;

	if (geteuid() != 0)
		return fail(-MCR_E_NOT_ROOT, NULL);
	ret = live_tracefs_check(&mounted, &tdir);
	if (ret < 0) {
		msg("tracefs is not available and could not be mounted at /sys/kernel/tracing");
		return mcr_exit_code(ret);
	}
	ret = live_remove_stale(on_orphan, (void *)tdir);
	if (ret < 0)
		return fail(ret, tdir);
	if (!ret)
		printf(PROG ": no orphan instance (%s/instances/" LIVE_INSTANCE_PREFIX
		       "<pid> of a pid not running)\n", tdir);
	return MCR_EXIT_OK;
}

/* A cgroup path as --cgroup and --read take it: "/a/b" below the mount, or a full path under it */
static int resolve_cgroup(const struct capture *c, const char *p, char *out, size_t len)
{
	size_t ml = strlen(c->cg.mount);
	char *o = out;

	if (!strncmp(p, c->cg.mount, ml) && (p[ml] == '/' || !p[ml]))
		p += ml;
	if (!*p)
		p = "/";
	if (*p != '/' || strlen(p) >= len)
		return -EINVAL;
	/* one spelling per cgroup: "//a/" is "/a" (parse_opt refused . and ..) */
	for (; *p; p++)
		if (*p != '/' || o == out || o[-1] != '/')
			*o++ = *p;
	if (o > out + 1 && o[-1] == '/')
		o--;
	*o = '\0';
	return 0;
}

static int resolve_scope(struct capture *c)
{
	if (!c->args.cgroup) {
		strcpy(c->scope, "/");
		return 0;
	}
	return resolve_cgroup(c, c->args.cgroup, c->scope, sizeof(c->scope));
}

/* --read: each PATH's memory.stat and cgroup id (its directory's inode); an exit code or 0. */
static int resolve_reads(struct capture *c)
{
	char rel[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < c->args.nr_reads; i++) {
		struct live_statread_opts *o = &c->read_opts[i];
		const char *arg = c->args.read_path[i];

		if (resolve_cgroup(c, arg, rel, sizeof(rel)) < 0 ||
		    snprintf(c->read_file[i], sizeof(c->read_file[i]), "%s%s", c->cg.mount,
			     strcmp(rel, "/") ? rel : "") >= (int)sizeof(c->read_file[i])) {
			msg("--read %s: not a path below %s", arg, c->cg.mount);
			return MCR_EXIT_BAD_INPUT;
		}
		if (stat(c->read_file[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			msg("--read %s: %s: %s", arg, c->read_file[i],
			    errno && !S_ISDIR(st.st_mode) ? strerror(errno) : strerror(ENOTDIR));
			return MCR_EXIT_BAD_INPUT;
		}
		o->cgroup = st.st_ino;
		strncat(c->read_file[i], "/memory.stat",
			sizeof(c->read_file[i]) - strlen(c->read_file[i]) - 1);
		if (access(c->read_file[i], R_OK) < 0) {
			msg("--read %s: %s: %s", arg, c->read_file[i], strerror(errno));
			return MCR_EXIT_BAD_INPUT;
		}
		o->path = c->read_file[i];
		o->version = c->cg.version;
		o->interval_ms = c->args.read_ms[i];
	}
	return 0;
}

/* The first error of a sequence of writes, the one to name (ENOSPC, not EIO). */
#define first_err(ret, expr)	do { int r_ = (expr); if (r_ < 0 && !(ret)) (ret) = r_; } while (0)

static int write_meta(struct capture *c, int argc, char **argv)
{
	struct utsname u;
	char *opts;
	int ret = 0, n;

	uname(&u);
	first_err(ret, db_meta_set(c->db, "source", "memcg-capture"));
	first_err(ret, db_meta_set(c->db, "tool_version", MCR_VERSION));
	first_err(ret, db_meta_set(c->db, "kernel_release", u.release));
	first_err(ret, db_meta_set(c->db, "host", u.nodename));	/* report's host column */
	n = count_cpu_list("/sys/devices/system/cpu/online");
	first_err(ret, db_meta_set_int(c->db, "nr_cpus_online",
				       n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN)));
	n = count_cpu_list("/sys/devices/system/cpu/possible");
	first_err(ret, db_meta_set_int(c->db, "nr_cpus_possible",
				       n > 0 ? n : sysconf(_SC_NPROCESSORS_CONF)));
	first_err(ret, db_meta_set_int(c->db, "page_size", sysconf(_SC_PAGESIZE)));
	first_err(ret, db_meta_set_int(c->db, "batch_size", 64));
	first_err(ret, db_meta_set(c->db, "trace_clock", c->args.clock));
	first_err(ret, db_meta_set_int(c->db, "buffer_kb", c->args.buffer_kb));
	first_err(ret, db_meta_set_int(c->db, "memory_hierarchy_id", c->cg.hierarchy_id));
	first_err(ret, db_meta_set_int(c->db, "cgroup_version", c->cg.version));
	first_err(ret, db_meta_set(c->db, "cgroup_mount", c->cg.mount));
	/* "1" only at a clean end: a kill -9, crash or full disk leaves "0" */
	first_err(ret, db_meta_set(c->db, "capture_complete", "0"));
	opts = options_json(argc, argv, &c->args);
	if (opts)
		first_err(ret, db_meta_set(c->db, "options", opts));
	free(opts);
	return ret;
}

/* Before tracing starts, a write to the database failed: say so of the output. */
static int fail_output(const struct capture *c, int err)
{
	msg("cannot write the output %s: %s", c->args.output, mcr_strerror(err));
	return mcr_exit_code(err);
}

/*
 * The cgroup walk's and the BTF walk's callbacks write the database: their
 * errors are the output's, told apart from the walk's own (a cgroup gone,
 * no BTF) by being kept here.
 */
struct db_writer {
	void	*ctx;
	int	err;
};

static int walk_to_cgtrack(void *ctx, const struct db_cgroup *cg)
{
	struct db_writer *w = ctx;
	int ret = cgtrack_add(w->ctx, cg);

	if (ret < 0)
		w->err = ret;
	return ret;
}

static int btf_to_db(void *ctx, int kind, int item, const char *name, const char *unit)
{
	struct db_writer *w = ctx;
	int ret = db_item_put(w->ctx, kind, item, name, unit);

	if (ret < 0)
		w->err = ret;
	return ret < 0 ? ret : 0;
}

static void capture_close_live(struct capture *c)
{
	struct live_statread_totals t;
	char name[64];

	/* a failure after --read's threads started: they read into the database */
	live_statreads_stop(c->reads, &t);
	c->reads = NULL;
	if (!c->lv)
		return;
	if (live_close(c->lv, name, sizeof(name)) < 0)
		msg("could not remove tracefs instance %s (still busy); the next memcg-capture "
		    "removes it, or: rmdir /sys/kernel/tracing/instances/%s", name, name);
	c->lv = NULL;
}

static pid_t run_command(char **command)
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress(struct capture *c, uint64_t start, bool final)
{
	struct live_totals t;
	double secs = (double)(now_ns() - start) / 1e9;

	live_totals(c->lv, &t);
	fprintf(stderr, "\r" PROG ": %.1f s, %llu events, %.0f events/s, lost %llu%s", secs,
		(unsigned long long)t.records, secs > 0 ? (double)t.records / secs : 0.0,
		(unsigned long long)(t.kernel_lost > t.missed ? t.kernel_lost : t.missed),
		final ? "\n" : "   ");
}

/* SIGCHLD ends the main thread's sleep (nanosleep returns on any handled signal). */
static void on_child(int sig)
{
}

/*
 * Wait for the duration, the command or a signal; the capture runs
 * meanwhile.  Each wakeup costs CPU the capture is measured by, so this
 * thread sleeps WAIT_NS at a time: a signal or the command's end cuts the
 * sleep short, and the duration bounds it.
 */
#define WAIT_NS		200000000ull
static void wait_for_end(struct capture *c)
{
	uint64_t start = now_ns(), last_poll = start, last_print = 0, end = 0;
	bool tty = isatty(STDERR_FILENO);
	struct sigaction sa = { .sa_handler = on_child };
	struct live_totals t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	if (c->args.duration > 0)
		end = start + (uint64_t)(c->args.duration * 1e9);
	for (;;) {
		struct timespec ts;
		uint64_t now, nap = WAIT_NS;
		int status;

		if (stop_signal)
			break;
		if (c->child > 0 && waitpid(c->child, &status, WNOHANG) == c->child) {
			c->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			c->child = 0;
			c->child_ended = true;
			break;
		}
		now = now_ns();
		if (end && now >= end)
			break;
		live_totals(c->lv, &t);
		if (t.write_error)
			break;
		if (now - last_poll >= 1000000000ull) {
			live_poll_loss(c->lv);
			last_poll = now;
		}
		if (tty && now - last_print >= 200000000ull) {
			progress(c, start, false);
			last_print = now;
		}
		if (end && end - now < nap)
			nap = end - now;
		ts.tv_sec = (time_t)(nap / 1000000000);
		ts.tv_nsec = (long)(nap % 1000000000);
		nanosleep(&ts, NULL);
	}
	signal(SIGCHLD, SIG_DFL);
	if (tty && last_print)
		progress(c, start, true);
}

/* Events in the database now: committed chunks, not what was handed to the writer. */
static int64_t stored_in_file(struct db *db)
{
	struct db_iter *it;
	uint64_t n;

	if (db_iter_open(db, &it) < 0)
		return -1;
	n = db_iter_count(it);
	db_iter_close(it);
	return (int64_t)n;
}

/*
 * The summary line, from what the file holds: events read but not stored (a
 * full disk) are lost events, with @why.  1 if anything was lost.
 */
static int summarize(struct capture *c, uint64_t start_ns, uint64_t end_ns, int64_t in_file,
		     const char *why)
{
	struct live_totals t;
	uint64_t lost, unread, stored, unstored;
	double secs = (double)(end_ns - start_ns) / 1e9;

	live_totals(c->lv, &t);
	stored = in_file >= 0 ? (uint64_t)in_file : t.stored;
	/* the --cgroup filter drops events on purpose: those are not lost */
	unstored = t.records > stored + t.filtered ? t.records - stored - t.filtered : 0;
	unread = t.kernel_read > t.records ? t.kernel_read - t.records : 0;
	/* the stats and the in-band markers count the same overwritten events */
	lost = (t.kernel_lost > t.missed ? t.kernel_lost : t.missed) + unread;
	printf(PROG ": %llu events in %.1f s (%.0f/s) from %d CPUs, %llu stored in %s",
	       (unsigned long long)t.records, secs, secs > 0 ? (double)t.records / secs : 0.0,
	       live_nr_cpus(c->lv), (unsigned long long)stored, c->args.output);
	if (t.filtered)
		printf(" (%llu outside --cgroup)", (unsigned long long)t.filtered);
	if (!lost && !unstored && !t.missed_unknown) {
		printf("; lost: none\n");
		return 0;
	}
	if (unstored)
		printf("; LOST: %llu events read but not stored (%s)",
		       (unsigned long long)unstored, why ? why : "the writer stopped");
	if (!lost && !t.missed_unknown) {
		printf("\n");
		return 1;
	}
	printf("; LOST: %llu events (ring-buffer stats: overrun/dropped %llu; in-band markers:"
	       " %llu + %llu sub-buffers of unknown count; read by another consumer: %llu);"
	       " see the gaps and cpu_stats tables; a larger -b helps\n",
	       (unsigned long long)lost, (unsigned long long)t.kernel_lost,
	       (unsigned long long)t.missed, (unsigned long long)t.missed_unknown,
	       (unsigned long long)unread);
	return 1;
}

/* Is @clock one of the names in @tdir/trace_clock ("[mono] local global ...")? */
static bool clock_available(const char *tdir, const char *clock)
{
	char path[PATH_MAX], *line = NULL, *tok, *save;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace_clock", tdir);
	f = fopen(path, "re");
	if (!f)
		return true;	/* cannot tell here: the instance's own check decides */
	if (getline(&line, &cap, f) > 0)
		for (tok = strtok_r(line, " \n", &save); tok && !found;
		     tok = strtok_r(NULL, " \n", &save)) {
			size_t len = strlen(tok);

			if (tok[0] == '[' && len > 2 && tok[len - 1] == ']')
				found = len - 2 == strlen(clock) && !strncmp(tok + 1, clock, len - 2);
			else
				found = !strcmp(tok, clock);
		}
	free(line);
	fclose(f);
	return found;
}

/* Can execvp() find @cmd?  As execvp searches: a name with '/' as is, else $PATH. */
static bool command_found(const char *cmd)
{
	const char *path = getenv("PATH"), *p, *colon;
	char buf[PATH_MAX];

	if (!*cmd)
		return false;
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	for (p = path && *path ? path : "/bin:/usr/bin"; ; p = colon + 1) {
		int dlen;

		colon = strchrnul(p, ':');
		dlen = (int)(colon - p);
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", dlen, p, dlen ? "/" : "", cmd) <
		    (int)sizeof(buf) && access(buf, X_OK) == 0)
			return true;
		if (!*colon)
			return false;
	}
}

/*
 * Every option against this host, before the output is touched: a capture
 * that cannot run must leave an existing -o FILE as it was.  An exit code or 0.
 */
static int check_options(struct capture *c, const char *tdir)
{
	char dir[PATH_MAX * 2];
	struct stat st;
	const char *why;
	int ret;

	if (!clock_available(tdir, c->args.clock)) {
		msg("-C %s: not a trace clock of this kernel (see %s/trace_clock)", c->args.clock, tdir);
		return MCR_EXIT_BAD_INPUT;
	}
	snprintf(dir, sizeof(dir), "%s%s", c->cg.mount, c->scope);
	ret = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (ret) {
		msg("--cgroup %s: %s: %s", c->args.cgroup ? c->args.cgroup : "/", dir, strerror(ret));
		return MCR_EXIT_BAD_INPUT;
	}
	if (c->args.command && !command_found(c->args.command[0])) {
		msg("%s: command not found or not executable", c->args.command[0]);
		return MCR_EXIT_BAD_INPUT;
	}
	ret = outfile_check(c->args.output, &(struct outfile_policy){ .force = c->args.force },
			    &why);
	if (ret < 0) {
		if (why)
			msg("output %s %s", c->args.output, why);
		else
			msg("output %s: %s", c->args.output, mcr_strerror(ret));
		return outfile_exit_code(ret);
	}
	return 0;
}

/* Root, tracefs, the tracepoints, the memory hierarchy and --cgroup; an exit code or 0. */
static int capture_preflight(struct capture *c, const char **tdir)
{
	bool mounted;
	int ret;

	if (geteuid() != 0)
		return fail(-MCR_E_NOT_ROOT, NULL);
	ret = live_tracefs_check(&mounted, tdir);
	if (ret < 0) {
		msg("tracefs is not available and could not be mounted at /sys/kernel/tracing");
		return mcr_exit_code(ret);
	}
	if (mounted)
		msg("tracefs was not mounted: mounted it at %s", *tdir);
	ret = live_events_check();
	if (ret < 0)
		return fail(ret, NULL);
	ret = cgroupfs_detect(&c->cg);
	if (ret < 0) {
		msg("no mounted cgroup hierarchy has the memory controller");
		return MCR_EXIT_FAILURE;
	}
	/* v1 and v2 name cgroups differently (ids, the events' root field): say which */
	msg("memory controller: cgroup v%d hierarchy %d at %s", c->cg.version,
	    c->cg.hierarchy_id, c->cg.mount);
	if (resolve_scope(c) < 0) {
		msg("--cgroup %s: not a path below %s", c->args.cgroup, c->cg.mount);
		return MCR_EXIT_BAD_INPUT;
	}
	ret = check_options(c, *tdir);
	if (!ret)
		ret = resolve_reads(c);
	if (ret)
		return ret;
	live_remove_stale(on_stale, NULL);
	snprintf(c->instance, sizeof(c->instance), LIVE_INSTANCE_PREFIX "%d", (int)getpid());
	return 0;
}

/* The database before tracing: meta, the cgroup table, item names, warnings. */
static int capture_prepare_db(struct capture *c, int argc, char **argv)
{
	struct db_writer dw = { 0 };
	sigset_t stops, old;
	const char *why;
	int ret, i;

	/*
	 * outfile_begin() arms its own handler (remove the file, die by the
	 * signal); a capture stops on a signal instead, and then removes or keeps
	 * the file itself, so its handlers go back on at once.
	 */
	stop_signals_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &old);
	ret = outfile_begin(&c->of, c->args.output,
			    &(struct outfile_policy){ .force = c->args.force }, &why);
	stop_signals_catch();
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ret < 0) {
		if (why)
			msg("output %s %s", c->args.output, why);
		else
			msg("output %s: %s", c->args.output, mcr_strerror(ret));
		return outfile_exit_code(ret);
	}
	ret = db_create(c->of.tmp, &c->db);
	if (ret < 0)
		return fail_output(c, ret);
	ret = write_meta(c, argc, argv);
	if (ret < 0)
		return fail_output(c, ret);
	ret = cgtrack_new(c->db, c->scope, &c->cgt);
	if (ret < 0)
		return fail(ret, "cgroup table");
	cgtrack_set_fs(c->cgt, &c->cg);
	dw.ctx = c->cgt;
	ret = cgroupfs_walk(&c->cg, c->scope, walk_to_cgtrack, &dw);
	if (dw.err < 0)
		return fail_output(c, dw.err);
	if (ret < 0) {
		msg("--cgroup %s: %s%s: %s", c->args.cgroup ? c->args.cgroup : "/", c->cg.mount,
		    c->scope, strerror(-ret));
		return ret == -ENOENT ? MCR_EXIT_BAD_INPUT : MCR_EXIT_FAILURE;
	}
	dw.ctx = c->db;
	dw.err = 0;
	ret = btf_items_walk(btf_to_db, &dw);
	if (dw.err < 0)
		return fail_output(c, dw.err);
	if (ret < 0)
		warn_add(c, "no kernel BTF (/sys/kernel/btf/vmlinux): stat items are numbers only");
	if (c->args.cgroup && strcmp(c->scope, "/")) {
		char w[PATH_MAX + 160];

		snprintf(w, sizeof(w), "--cgroup %s: only this subtree's updates were kept, so the "
			 "counters of its ancestors are incomplete", c->scope);
		warn_add(c, w);
	}
	for (i = 0; c->args.cgroup && i < c->args.nr_reads; i++) {
		/* the read's cgroup: its file less the mount and "/memory.stat" */
		const char *rel = c->read_file[i] + strlen(c->cg.mount);
		size_t rl = strlen(rel) - strlen("/memory.stat"), sl = strlen(c->scope);
		char w[PATH_MAX + 200];

		if (!strcmp(c->scope, "/") || (rl >= sl && !strncmp(rel, c->scope, sl) &&
					       (rl == sl || rel[sl] == '/')))
			continue;
		snprintf(w, sizeof(w), "--read %s: outside --cgroup %s: the updates below it are "
			 "not all kept, so validate cannot check its reads", c->args.read_path[i],
			 c->scope);
		warn_add(c, w);
	}
	if (!strcmp(c->args.clock, "local"))
		warn_add(c, "trace clock 'local' is per CPU: the order across CPUs may be wrong");
	return 0;
}

/* Stopped by a signal before tracing ran: nothing is published. */
static int stopped_before_start(struct capture *c)
{
	msg("stopped by %s before the capture started: nothing recorded, %s not written (an "
	    "existing file is left as it was); exit 16, no events", sig_name(stop_signal),
	    c->args.output);
	return MCR_EXIT_NO_EVENTS;
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
static void command_end(struct capture *c)
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

/* --read: stop its threads and say what they logged. */
static void stop_reads(struct capture *c)
{
	struct live_statread_totals t;

	if (!c->reads)
		return;
	live_statreads_stop(c->reads, &t);
	c->reads = NULL;
	msg("--read: %llu reads of memory.stat logged, %llu lines (table stat_reads)",
	    (unsigned long long)t.reads, (unsigned long long)t.lines);
	if (t.error)
		msg("warning: --read %s stopped after %llu reads: %s", t.failed,
		    (unsigned long long)t.failed_reads, mcr_strerror(t.error));
}

/*
 * Trace until the duration, the command or a signal ends it.  Returns an
 * exit code for a failure to start, else 0 with *@err the capture's own
 * result (negative: a database error, what was committed stays).
 */
static int capture_record(struct capture *c, const char *tdir, uint64_t *start_ns,
			  uint64_t *end_ns, int *err)
{
	struct live_opts lo = { 0 };
	int ret;

	if (stop_signal)
		return stopped_before_start(c);
	lo.instance = c->instance;
	lo.clock = c->args.clock;
	lo.buffer_kb = c->args.buffer_kb;
	lo.hierarchy_id = c->cg.hierarchy_id;
	lo.cgroups = c->cgt;
	lo.scoped = c->args.cgroup && strcmp(c->scope, "/");
	ret = live_open(&lo, c->db, &c->lv);
	if (ret == -MCR_E_BAD_INPUT) {
		msg("-C %s: not a trace clock of this kernel (see %s/trace_clock)", c->args.clock, tdir);
		return MCR_EXIT_BAD_INPUT;
	}
	if (ret < 0)
		return fail(ret, "setting up the tracefs instance");
	ret = db_meta_set_int(c->db, "subbuf_size", live_subbuf_size(c->lv));
	if (ret < 0)
		return fail_output(c, ret);
	/* from here on the capture's threads share the database under their lock */
	ret = db_events_commit(c->db);
	if (ret < 0)
		return fail_output(c, ret);
	/* setting the instance up takes a while: a signal meanwhile ends it here */
	if (stop_signal)
		return stopped_before_start(c);
	live_clock_now(c->lv, start_ns);
	ret = live_start(c->lv);
	if (ret < 0)
		return fail(ret, "starting the capture");
	c->started = true;
	ret = live_statreads_start(c->lv, c->read_opts, (size_t)c->args.nr_reads, &c->reads);
	if (ret < 0)
		msg("--read: cannot start its reader threads: %s; tracing without",
		    mcr_strerror(ret));
	if (c->args.command) {
		c->child = run_command(c->args.command);
		if (c->child < 0)
			return fail(-errno, "fork");
	}
	wait_for_end(c);
	c->interrupted = stop_signal != 0;
	/* every logged read ends before tracing does: its flush is in the trace */
	stop_reads(c);
	live_clock_now(c->lv, end_ns);
	*err = live_stop(c->lv);
	if (stop_signal)
		msg("stopping on %s", strsignal(stop_signal));
	/* we stop before the command: it gets our signal, and we reap it */
	if (c->child > 0)
		command_end(c);
	if (*err < 0)
		msg("writing %s: %s (what was committed stays readable)", c->args.output,
		    mcr_strerror(*err));
	return 0;
}

/*
 * After tracing: the closing meta, the summary, the exit code.  @ret is the
 * capture's own result: negative when the writer stopped (a full disk), and
 * then the file is kept, marked incomplete with the reason.
 */
static int capture_finish(struct capture *c, uint64_t start_ns, uint64_t end_ns, int ret)
{
	char why[160] = "";
	int64_t in_file;
	int lost;

	db_meta_set_int(c->db, "capture_start_ns", (int64_t)start_ns);
	db_meta_set_int(c->db, "capture_end_ns", (int64_t)end_ns);
	if (c->args.command)
		db_meta_set_int(c->db, "command_exit_status", c->child_status);
	if (c->warnings[0])
		db_meta_set(c->db, "warnings", c->warnings);
	if (c->args.command && c->child_ended && c->child_status != 0)
		msg("%s exited with status %d", c->args.command[0], c->child_status);
	else if (c->args.command && c->child_status > 128)
		msg("%s ended by %s after the capture stopped (status %d)", c->args.command[0],
		    sig_name(c->child_status - 128), c->child_status);
	else if (c->args.command && c->child_status > 0)	/* -1: said in command_end() */
		msg("%s ended with status %d after the capture stopped", c->args.command[0],
		    c->child_status);
	if (ret >= 0) {
		ret = db_events_finish(c->db);
		if (ret < 0)
			msg("finishing %s: %s", c->args.output, mcr_strerror(ret));
	}
	if (ret < 0) {
		snprintf(why, sizeof(why), "writing the database failed: %s", mcr_strerror(ret));
		/* best effort: on a full disk even this may not fit; "0" stays then */
		db_meta_set(c->db, "capture_incomplete", why);
	} else if (db_meta_set(c->db, "capture_complete", "1") < 0) {
		snprintf(why, sizeof(why), "could not mark it complete");
	}
	in_file = stored_in_file(c->db);
	if (c->interrupted && in_file == 0) {
		/* stopped before anything was stored: an empty file replaces nothing */
		msg("stopped by %s before any event was stored: %s not written (an existing file "
		    "is left as it was); exit 16, no events", sig_name(stop_signal),
		    c->args.output);
		c->started = false;
		capture_close_live(c);
		return MCR_EXIT_NO_EVENTS;
	}
	lost = summarize(c, start_ns, end_ns, in_file, why[0] ? why : NULL);
	capture_close_live(c);
	if (ret < 0) {
		msg("%s is incomplete: %s; it reads up to there", c->args.output, why);
		/* events the kernel gave us and the file does not hold are lost */
		return MCR_EXIT_LOST;
	}
	if (lost)
		return MCR_EXIT_LOST;
	/* a script must see its workload fail; one we ended ourselves did not */
	return c->child_ended && c->child_status ? MCR_EXIT_COMMAND : MCR_EXIT_OK;
}

static int capture_run(struct capture *c, int argc, char **argv)
{
	uint64_t start_ns = 0, end_ns = 0;
	const char *tdir = NULL;
	int rc, err = 0;

	rc = capture_preflight(c, &tdir);
	if (!rc && stop_signal)
		rc = stopped_before_start(c);
	if (!rc)
		rc = capture_prepare_db(c, argc, argv);
	if (!rc)
		rc = capture_record(c, tdir, &start_ns, &end_ns, &err);
	return rc ? rc : capture_finish(c, start_ns, end_ns, err);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, help_filter, NULL };
	struct capture c = { .child_status = -1 };
	int rc, ret;

	argp_err_exit_status = MCR_EXIT_USAGE;
	c.args.clock = DEFAULT_CLOCK;
	c.args.buffer_kb = DEFAULT_BUFFER_KB;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &c.args))
		return MCR_EXIT_USAGE;
	if (c.args.cleanup)
		return capture_cleanup();
	if (!strcmp(c.args.clock, "local") && !c.args.force_clock) {
		msg("-C local: the 'local' clock is per CPU and not synchronized across CPUs, so "
		    "the merged replay order could be wrong; use mono (default), or --force-clock");
		return MCR_EXIT_BAD_INPUT;
	}
	stop_signals_catch();

	rc = capture_run(&c, argc, argv);
	capture_close_live(&c);
	cgtrack_free(c.cgt);
	if (c.db) {
		ret = db_close(c.db);
		if (ret < 0 && rc == MCR_EXIT_OK)
			rc = fail(ret, c.args.output);
	}
	/* what a capture recorded is kept even if it failed later; nothing else */
	if (c.of.tmp && c.started) {
		c.of.keep = true;
		ret = outfile_commit(&c.of);
		if (ret < 0) {
			msg("renaming the capture to %s: %s", c.args.output,
			    *c.of.why ? c.of.why : mcr_strerror(ret));
			if (c.of.tmp)
				msg("the recording is kept as %s", c.of.tmp);
			free(c.of.tmp);
			c.of.tmp = NULL;
			if (rc == MCR_EXIT_OK || rc == MCR_EXIT_LOST || rc == MCR_EXIT_COMMAND)
				rc = outfile_exit_code(ret);
		}
	} else {
		outfile_abort(&c.of);
	}
	return rc;
}
