// SPDX-License-Identifier: GPL-2.0
/*
 * import_meta.c - what the importer learns besides the events: the memory
 * hierarchy id (from a prescan of the chosen buffer, or mkdir/rmdir ids as a
 * fallback), the kernel's per-CPU ring-buffer stats trace-cmd saved, item
 * names and the meta table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "btf.h"
#include "db.h"
#include "error.h"
#include "import-local.h"

#define IMP_BATCH_SIZE		64	/* MEMCG_CHARGE_BATCH: the kernel's per-CPU flush batch */

/* ---- prescan: which hierarchy ---- */

static int imp_scan_cb(struct tracecmd_input *h, struct tep_record *r, int cpu, void *data)
{
	struct imp *im = data;
	struct mcr_event ev;
	struct imp_flush *fl;
	int root;

	if (!imp_decode(im, r, &ev, &root))
		return 0;
	fl = &im->flush[(unsigned int)ev.pid % 64];
	switch (ev.kind) {
	case MCR_EV_FLUSH:
		if (ev.flags & (MCR_FLUSH_FORCE | MCR_FLUSH_NEEDS))
			*fl = (struct imp_flush){ .id = ev.id, .pid = ev.pid, .valid = true };
		/* fall through */
	case MCR_EV_STATE:
	case MCR_EV_LRUVEC:
	case MCR_EV_EVENTS:
		im->scan_memcg++;
		if (im->scan_hier < 0 && imp_cg_touch(im, ev.id))
			return -1;
		break;
	case MCR_EV_LOCKED:
		/* kernel-model 4.2: the lock events of a memcg flush follow it on the same task */
		if (fl->valid && fl->pid == ev.pid && fl->id == ev.id && im->scan_hier < 0)
			im->scan_hier = root;
		fl->valid = false;
		break;
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		if (im->nmk == im->capmk) {
			size_t cap = im->capmk ? im->capmk * 2 : 256;
			uint64_t *v = realloc(im->mk_root_id, cap * sizeof(*v));

			if (!v)
				return -1;
			im->mk_root_id = v;
			im->capmk = cap;
		}
		im->mk_root_id[im->nmk++] = ((uint64_t)(root & 0xffff) << 48) |
					    (ev.id & 0xffffffffffffull);
		break;
	}
	if (im->scan_hier >= 0 && im->scan_memcg)
		return -1;	/* both known: stop early */
	return 0;
}

/*
 * The prescan reads CPU by CPU: stopping tracecmd_iterate_events() early
 * leaks its peeked records (libtracecmd 1.3.1), reading per CPU does not.  A
 * flush and its lock events come from one task, nearly always on one CPU.
 */
void imp_scan(struct imp *im, struct tracecmd_input *h)
{
	int cpu, ncpu = tep_get_cpus(im->tep);

	for (cpu = 0; cpu < ncpu && !(im->scan_hier >= 0 && im->scan_memcg); cpu++) {
		struct imp_rec_at last = { 0 };
		struct tep_record *r;

		memset(im->flush, 0, sizeof(im->flush));
		for (r = tracecmd_read_cpu_first(h, cpu); r; r = tracecmd_read_data(h, cpu)) {
			/* a damaged page read forever: the import pass refuses the file */
			int stop = imp_rec_again(&last, r) || imp_scan_cb(h, r, cpu, im);

			tracecmd_free_record(r);
			if (stop)
				break;
		}
	}
}

/*
 * Fallback when no flush was followed by its lock events: the hierarchy whose
 * mkdir/rmdir ids also appear as memcg ids.  Ids are per-hierarchy inode
 * numbers, so a match is evidence, not proof; the most matches wins.
 */
int imp_hier_by_mkdir(struct imp *im)
{
	int best = -1, best_n = 0;
	size_t i, j;

	for (i = 0; i < im->nmk; i++) {
		int root = (int)(im->mk_root_id[i] >> 48), n = 0;
		bool done = false;

		for (j = 0; j < i && !done; j++)
			done = (int)(im->mk_root_id[j] >> 48) == root;
		if (done)
			continue;
		for (j = i; j < im->nmk; j++)
			if ((int)(im->mk_root_id[j] >> 48) == root &&
			    imp_cg_find(&im->cgs, im->mk_root_id[j] & 0xffffffffffffull))
				n++;
		if (n > best_n) {
			best_n = n;
			best = root;
		}
	}
	return best;
}

/* ---- meta and stats ---- */

/* The traced kernel's release (uname -r), from the file's uname option. */
static void imp_release(struct tracecmd_input *top, char *buf, size_t len)
{
	const char *uname = tracecmd_get_uname ? tracecmd_get_uname(top) : NULL;
	char rel[128] = "";

	if (uname)
		sscanf(uname, "%*s %*s %127s", rel);
	snprintf(buf, len, "%s", rel);
}

/*
 * trace.dat carries no BTF; the importing host's BTF names the items only
 * when it runs the very kernel release that was traced.
 */
int imp_items(struct imp *im, struct tracecmd_input *top)
{
	char rel[128];
	struct utsname u;
	int n;

	imp_release(top, rel, sizeof(rel));
	if (!*rel || uname(&u) || strcmp(rel, u.release))
		return 0;
	n = btf_items_store(im->db);
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return n;
	im->res->items_named = n > 0;
	return 0;
}

/*
 * imp_cpustats() - the kernel ring-buffer stats trace-cmd saved (@text: blocks
 * per "Buffer: name") for @buffer.  Without @write only the progress total
 * and the number of complete CPU blocks are taken; with it they are stored
 * and summed into res->overrun and res->unaccounted.
 */
int imp_cpustats(struct imp *im, const char *text, const char *buffer, bool write)
{
	struct db_cpu_stats st = { .cpu = -1 };
	const char *line = text, *cur = "";
	char name[64] = "";
	int64_t sum = 0, n = 0;
	bool any = false;
	int complete = 0;
	int err = 0;

	im->res->overrun = -1;
	im->res->unaccounted = -1;
	if (!text)
		return 0;
	for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		long long v;
		int c;

		if (sscanf(line, "Buffer: %63[^\n]", name) == 1) {
			cur = name;
			continue;
		}
		if (strcmp(cur, buffer))
			continue;
		if (sscanf(line, "CPU: %d", &c) == 1) {
			if (write && st.cpu >= 0 && (err = db_cpu_stats_put(im->db, &st)))
				return err;
			st = (struct db_cpu_stats){ .cpu = c, .phase = "end", .entries = -1,
				.overrun = -1, .commit_overrun = -1, .bytes = -1, .dropped = -1,
				.read = -1 };
			any = true;
		} else if (st.cpu < 0) {
			continue;
		} else if (sscanf(line, "entries: %lld", &v) == 1) {
			st.entries = v;
			sum += v;
		} else if (sscanf(line, "overrun: %lld", &v) == 1) {
			st.overrun = v;
			n += v;
		} else if (sscanf(line, "commit overrun: %lld", &v) == 1) {
			st.commit_overrun = v;
		} else if (sscanf(line, "bytes: %lld", &v) == 1) {
			st.bytes = v;
		} else if (sscanf(line, "dropped events: %lld", &v) == 1) {
			st.dropped = v;
		} else if (sscanf(line, "read events: %lld", &v) == 1) {
			st.read = v;
			sum += v;
			complete++;	/* the last line of a CPU's block */
		}
	}
	if (write && st.cpu >= 0 && (err = db_cpu_stats_put(im->db, &st)))
		return err;
	if (!write) {
		im->progress_total = any && sum > 0 ? (uint64_t)sum : 0;
		im->stats_cpus = complete;
		return 0;
	}
	if (any) {
		im->res->overrun = n;
		/* trace-cmd writes what it read plus what was left: anything short was taken */
		im->res->unaccounted = sum - (int64_t)im->res->records;
	}
	return 0;
}

/* imp_meta() - writes the meta table; @warnings is one line per finding. */
int imp_meta(struct imp *im, struct tracecmd_input *h, struct tracecmd_input *top,
	     const char *warnings)
{
	const struct import_result *res = im->res;
	const char *clock = tracecmd_get_trace_clock ? tracecmd_get_trace_clock(h) : NULL;
	const char *uname = tracecmd_get_uname ? tracecmd_get_uname(top) : NULL;
	const char *ver = tracecmd_get_version ? tracecmd_get_version(top) : NULL;
	const char *base = strrchr(im->o->trace_path, '/');
	char release[128];
	int page = tracecmd_page_size ? tracecmd_page_size(h) : 0;
	struct db *db = im->db;
	int err = 0;

	if (!clock && tracecmd_get_trace_clock)
		clock = tracecmd_get_trace_clock(top);
	imp_release(top, release, sizeof(release));
	if (page <= 0)
		page = tep_get_page_size(im->tep);
	err = err ?: db_meta_set(db, "source", "trace-cmd import");
	err = err ?: db_meta_set(db, "source_file", base ? base + 1 : im->o->trace_path);
	err = err ?: db_meta_set(db, "tool_version", MCR_VERSION);
	err = err ?: db_meta_set(db, "options", im->o->options ? im->o->options : "");
	if (clock)
		err = err ?: db_meta_set(db, "trace_clock", clock);
	if (*release)
		err = err ?: db_meta_set(db, "kernel_release", release);
	if (uname)
		err = err ?: db_meta_set(db, "uname", uname);
	if (ver)
		err = err ?: db_meta_set(db, "trace_cmd_version", ver);
	if (res->file_version)
		err = err ?: db_meta_set_int(db, "trace_file_version", res->file_version);
	err = err ?: db_meta_set(db, "trace_buffer", res->buffer);
	err = err ?: db_meta_set_int(db, "nr_cpus_online", res->nr_cpus);
	err = err ?: db_meta_set_int(db, "nr_cpus_possible", res->nr_cpus);
	if (page > 0)
		err = err ?: db_meta_set_int(db, "page_size", page);
	err = err ?: db_meta_set_int(db, "batch_size", IMP_BATCH_SIZE);
	err = err ?: db_meta_set_int(db, "capture_start_ns", (int64_t)res->first_ts);
	err = err ?: db_meta_set_int(db, "capture_end_ns", (int64_t)res->last_ts);
	err = err ?: db_meta_set_int(db, "memory_hierarchy_id", res->hierarchy_id);
	err = err ?: db_meta_set(db, "memory_hierarchy_source", res->hierarchy_how);
	if (im->walk_version || res->hierarchy_id >= 0)
		err = err ?: db_meta_set_int(db, "cgroup_version", im->walk_version ?:
					     (res->hierarchy_id == 0 ? 2 : 1));
	err = err ?: db_meta_set_int(db, "cgroups_parent_unknown", (int64_t)res->parent_unknown);
	err = err ?: db_meta_set(db, "warnings", warnings);
	return err;
}
