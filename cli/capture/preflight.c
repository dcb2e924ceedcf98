// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture's checks against this host before anything is written: root,
 * tracefs, the tracepoints, the memory hierarchy, then every option (the
 * clock, --cgroup, --read, COMMAND, -o FILE), so that a capture that cannot
 * run leaves an existing -o FILE as it was.  And --cleanup, which only
 * removes the instances of dead captures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_local.h"
#include "error.h"

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
int capture_cleanup(void)
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
	if (c->args.rotate_ns || c->args.rotate_bytes) {
		/* --rotate: -o PREFIX, whose directory the files go to */
		const char *slash = strrchr(c->args.output, '/');

		snprintf(dir, sizeof(dir), "%.*s", !slash ? 1 : slash == c->args.output ? 1 :
			 (int)(slash - c->args.output), !slash ? "." : c->args.output);
		ret = stat(dir, &st) < 0 ? -errno : !S_ISDIR(st.st_mode) ? -ENOTDIR :
		      access(dir, W_OK | X_OK) < 0 ? -errno : 0;
		if (ret < 0 || !(slash ? slash[1] : c->args.output[0])) {
			msg("-o %s with --rotate: %s", c->args.output,
			    ret < 0 ? mcr_strerror(ret) : "wants a PREFIX, not a directory");
			return outfile_exit_code(ret < 0 ? ret : -EISDIR);
		}
		return 0;
	}
	ret = outfile_check(c->args.output, &(struct outfile_policy){ .force = c->args.force },
			    &why);
	if (ret < 0)
		return output_refused(c, ret, why);
	return 0;
}

/* Root, tracefs, the tracepoints, the memory hierarchy and --cgroup; an exit code or 0. */
int capture_preflight(struct capture *c, const char **tdir)
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
