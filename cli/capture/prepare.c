// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture's database before tracing: -o FILE begun under its temporary
 * name, then meta (the host, the options), the cgroup table, the stat items'
 * names from BTF, and the warnings the capture will carry.  A write that
 * fails here is the output's (fail_output()); nothing has traced yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "btf.h"
#include "capture_local.h"
#include "error.h"

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

static void warn_add(struct capture *c, const char *w)
{
	size_t len = strlen(c->warnings);

	snprintf(c->warnings + len, sizeof(c->warnings) - len, "%s%s", len ? "\n" : "", w);
	msg("warning: %s", w);
}

/* The first error of a sequence of writes, the one to name (ENOSPC, not EIO). */
#define first_err(ret, expr)	do { int r_ = (expr); if (r_ < 0 && !(ret)) (ret) = r_; } while (0)

static int write_meta(struct capture *c, struct db *db)
{
	struct utsname u;
	char *opts;
	int ret = 0, n;

	uname(&u);
	first_err(ret, db_meta_set(db, "source", "memcg-capture"));
	first_err(ret, db_meta_set(db, "tool_version", MCR_VERSION));
	first_err(ret, db_meta_set(db, "kernel_release", u.release));
	first_err(ret, db_meta_set(db, "host", u.nodename));	/* report's host column */
	n = count_cpu_list("/sys/devices/system/cpu/online");
	first_err(ret, db_meta_set_int(db, "nr_cpus_online",
				       n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN)));
	n = count_cpu_list("/sys/devices/system/cpu/possible");
	first_err(ret, db_meta_set_int(db, "nr_cpus_possible",
				       n > 0 ? n : sysconf(_SC_NPROCESSORS_CONF)));
	first_err(ret, db_meta_set_int(db, "page_size", sysconf(_SC_PAGESIZE)));
	first_err(ret, db_meta_set_int(db, "batch_size", 64));
	first_err(ret, db_meta_set(db, "trace_clock", c->args.clock));
	first_err(ret, db_meta_set_int(db, "buffer_kb", c->args.buffer_kb));
	first_err(ret, db_meta_set_int(db, "memory_hierarchy_id", c->cg.hierarchy_id));
	first_err(ret, db_meta_set_int(db, "cgroup_version", c->cg.version));
	first_err(ret, db_meta_set(db, "cgroup_mount", c->cg.mount));
	/* "1" only at a clean end: a kill -9, crash or full disk leaves "0" */
	first_err(ret, db_meta_set(db, "capture_complete", "0"));
	if (c->args.rotate_ns || c->args.rotate_bytes) {
		first_err(ret, db_meta_set_int(db, "rotation_index", c->rot.index));
		first_err(ret, db_meta_set(db, "rotation_prefix", c->args.output));
	}
	opts = options_json(c->argc, c->argv, &c->args);
	if (opts)
		first_err(ret, db_meta_set(db, "options", opts));
	free(opts);
	return ret;
}

/* Before tracing starts, a write to the database failed: say so of the output. */
int fail_output(const struct capture *c, int err)
{
	msg("cannot write the output %s: %s", c->args.output, mcr_strerror(err));
	return mcr_exit_code(err);
}

/*
 * outfile_check() or outfile_begin() refused -o FILE (@why, or @err alone):
 * say so, and its exit code.
 */
int output_refused(const struct capture *c, int err, const char *why)
{
	if (why)
		msg("output %s %s", c->args.output, why);
	else
		msg("output %s: %s", c->args.output, mcr_strerror(err));
	return outfile_exit_code(err);
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


int capture_db_fill(struct capture *c, struct db *db)
{
	struct db_writer dw = { .ctx = db };
	int ret = write_meta(c, db);

	if (ret < 0)
		return ret;
	/* no BTF was said at the first file */
	btf_items_walk(btf_to_db, &dw);
	return dw.err;
}

/*
 * The database before tracing, in the output's temporary file (main.c's
 * output_begin()): meta, the cgroup table, item names, warnings.
 */
int capture_prepare_db(struct capture *c)
{
	struct db_writer dw = { 0 };
	int ret, i;

	ret = db_create(c->of.tmp, &c->db);
	if (ret < 0)
		return fail_output(c, ret);
	ret = write_meta(c, c->db);
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
