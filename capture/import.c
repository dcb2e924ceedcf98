// SPDX-License-Identifier: GPL-2.0
/*
 * import.c - trace.dat -> trace database through libtracecmd (contract in
 * import.h): the driver that opens the file, picks the buffer, iterates and
 * writes.  Records are decoded in import_decode.c, cgroups are assembled in
 * import_cgroups.c, meta and the hierarchy id come from import_meta.c.
 *
 * One pass over the buffer, in tracecmd_iterate_events() order, which is the
 * replay order: smallest ts first, lowest CPU on ties, ring order per CPU.
 * The buffer is the top one, or the first -B instance holding memcg events
 * when it has none.  The memory hierarchy id, which decides which rstat and
 * mkdir/rmdir events are kept, is learnt from the events (imp_evidence(),
 * usually at the first periodic root flush): until then the events from the
 * first rstat or mkdir/rmdir one on are held back in memory, then written in
 * order.  Past IMP_PEND_MAX of them the pass only looks for the id and a
 * second pass imports, as every import did before.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "db.h"
#include "db_file.h"
#include "error.h"
#include "import-local.h"

#define IMP_PROGRESS_EVERY	4096
#define IMP_PEND_MAX		(1u << 20)	/* events held back: 56 MiB */

/* ---- opening ---- */

/*
 * Handle of buffer @idx: -1 the top buffer, else instance @idx.  @fresh asks
 * for a handle whose cursors are at the start (the top one is reopened).
 */
static struct tracecmd_input *imp_handle(struct imp *im, struct tracecmd_input *top, int idx,
					 bool fresh)
{
	if (idx >= 0)
		return tracecmd_buffer_instance_handle(top, idx);
	return fresh ? tracecmd_open(im->plain ?: im->o->trace_path, TRACECMD_FL_LOAD_NO_PLUGINS) :
		       top;
}

static void imp_handle_put(struct tracecmd_input *top, struct tracecmd_input *h)
{
	if (h && h != top)
		tracecmd_close(h);
}

/* ---- the import pass ---- */

static int imp_seq_grow(struct imp *im, int cpu)
{
	int n = cpu + 1;
	struct imp_flush (*f)[IMP_FLUSH_SLOTS];
	uint64_t *s, *t;
	struct imp_rec_at *l;

	if (cpu < 0 || cpu > 65535)
		return -MCR_E_CORRUPT;
	f = realloc(im->flush, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	im->flush = f;
	memset(f + im->nseq, 0, (n - im->nseq) * sizeof(*f));
	s = realloc(im->seq, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	im->seq = s;
	t = realloc(im->last_ts, n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	im->last_ts = t;
	l = realloc(im->last_rec, n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	im->last_rec = l;
	memset(s + im->nseq, 0, (n - im->nseq) * sizeof(*s));
	memset(t + im->nseq, 0, (n - im->nseq) * sizeof(*t));
	memset(l + im->nseq, 0, (n - im->nseq) * sizeof(*l));
	im->nseq = n;
	return 0;
}

/* Writes @ev (of hierarchy @root; @path for mkdir/rmdir) unless another hierarchy's. */
static int imp_keep(struct imp *im, struct mcr_event *ev, int root, const char *path, int len)
{
	struct import_result *res = im->res;
	int err, cpu = ev->cpu;

	if (ev->kind >= MCR_EV_LOCKED && ev->kind <= MCR_EV_RMDIR && res->hierarchy_id >= 0 &&
	    root != res->hierarchy_id) {
		res->other_hierarchy++;
		return 0;
	}
	if (ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR)
		err = imp_mkdir(im, ev, path, len);
	else
		err = imp_cg_touch(im, ev->id);
	if (err)
		return err;
	if (ev->ts < im->last_ts[cpu])
		im->ts_backwards++;
	im->last_ts[cpu] = ev->ts;
	ev->seq = im->seq[cpu]++;
	err = db_events_append(im->db, ev);
	if (err)
		return err;
	if (!res->events)
		res->first_ts = ev->ts;
	if (ev->ts > res->last_ts)
		res->last_ts = ev->ts;
	res->events++;
	res->per_kind[ev->kind]++;
	return 0;
}

static void imp_pend_free(struct imp *im)
{
	size_t i;

	for (i = 0; i < im->npend; i++)
		free(im->pend[i].path);
	free(im->pend);
	im->pend = NULL;
	im->npend = im->cappend = 0;
}

/* The hierarchy is known: write what was held back, in order. */
static int imp_pend_flush(struct imp *im)
{
	size_t i;
	int err = 0;

	im->hier_known = true;
	/* by index: pend is NULL when nothing was held back */
	for (i = 0; !err && i < im->npend; i++) {
		struct imp_pend *p = &im->pend[i];

		err = imp_keep(im, &p->ev, p->ev.aux, p->path, p->path_len);
	}
	imp_pend_free(im);
	return err;
}

/*
 * While the hierarchy is unknown: 1 if @ev was held back (or the pass only
 * looks), 0 if it is to be written now, or a negative error.
 */
static int imp_undecided(struct imp *im, struct tep_record *r, struct mcr_event *ev, int root)
{
	struct imp_pend *p;
	const char *path;
	int hier, len = 0;

	hier = imp_evidence(im, ev, root);
	if (hier < -1)
		return hier;
	if (hier >= 0) {
		im->res->hierarchy_id = hier;
		im->res->hierarchy_how = "rstat lock events following a flushing "
					 "memcg_flush_stats on the same task";
		im->hier_known = true;
		return im->pass_void ? 1 : imp_pend_flush(im);
	}
	if (im->pass_void)
		return 1;
	if (!im->npend && !(ev->kind >= MCR_EV_LOCKED && ev->kind <= MCR_EV_RMDIR))
		return 0;
	if (im->npend == IMP_PEND_MAX) {
		im->pass_void = true;
		imp_pend_free(im);
		return 1;
	}
	if (im->npend == im->cappend) {
		size_t cap = im->cappend ? 2 * im->cappend : 1024;

		p = realloc(im->pend, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		im->pend = p;
		im->cappend = cap;
	}
	p = &im->pend[im->npend];
	p->ev = *ev;
	p->path = NULL;
	p->path_len = 0;
	if ((ev->kind == MCR_EV_MKDIR || ev->kind == MCR_EV_RMDIR) &&
	    (path = imp_path(im, r, ev->kind, &len))) {
		p->path = strndup(path, (size_t)len);
		if (!p->path)
			return -ENOMEM;
		p->path_len = len;
	}
	im->npend++;
	return 1;
}

static int imp_cb(struct tracecmd_input *h, struct tep_record *r, int cpu_idx, void *data)
{
	struct imp *im = data;
	struct import_result *res = im->res;
	struct mcr_event ev;
	const char *path = NULL;
	int root, err, len = 0, cpu = r->cpu;

	if (im->pass_void && im->hier_known)
		return 0;	/* a second pass will import */
	if (++res->records % IMP_PROGRESS_EVERY == 0 && im->o->progress)
		im->o->progress(im->o->progress_ctx, res->records, im->progress_total);
	if (cpu >= im->nseq && (err = imp_seq_grow(im, cpu)))
		goto fail;
	if (imp_rec_again(&im->last_rec[cpu], r)) {
		res->detail = "libtracecmd reads a damaged page round and round";
		err = -MCR_E_CORRUPT;
		goto fail;
	}
	if (r->missed_events) {
		/* lost before this record: the first one of its sub-buffer */
		res->gaps++;
		if (r->missed_events > 0)
			res->missed += (uint64_t)r->missed_events;
		else
			res->gaps_unknown++;
		err = db_gap_put(im->db, cpu, r->ts, r->missed_events > 0 ? r->missed_events : -1);
		if (err)
			goto fail;
	}
	if (!imp_decode(im, r, &ev, &root))
		return 0;
	if (!im->hier_known && (err = imp_undecided(im, r, &ev, root)))
		goto out;
	if (ev.kind == MCR_EV_MKDIR || ev.kind == MCR_EV_RMDIR)
		path = imp_path(im, r, ev.kind, &len);
	err = imp_keep(im, &ev, root, path, len);
out:
	if (err >= 0)
		return 0;
fail:
	im->err = err;
	return -1;
}

/* ---- the whole import ---- */

/*
 * No flush followed by its lock events in the whole buffer: the importing
 * host's /proc/cgroups (--cgroupfs, @proc_hier), then mkdir ids that memcg
 * events use.
 */
static void imp_hier_fallback(struct imp *im, int proc_hier)
{
	struct import_result *res = im->res;

	if (proc_hier >= 0) {
		res->hierarchy_id = proc_hier;
		res->hierarchy_how = "/proc/cgroups of the importing host (--cgroupfs)";
	} else {
		res->hierarchy_id = imp_hier_by_mkdir(im);
		res->hierarchy_how = "cgroup_mkdir/rmdir ids that also appear as memcg ids";
	}
	if (res->hierarchy_id < 0)
		res->hierarchy_how = "unknown: rstat/mkdir/rmdir events of every hierarchy kept";
	im->hier_known = true;
}

/* What the user should know about the import, one line each, into @warn. */
static void imp_warnings(struct imp *im, int proc_hier, char *warn, size_t wsz)
{
	const struct import_result *res = im->res;
	size_t wl = 0;

	warn[0] = '\0';
#define WARN(...) (wl += (size_t)snprintf(warn + wl, wl < wsz ? wsz - wl : 0, __VA_ARGS__), \
		   wl = wl < wsz ? wl : wsz - 1)
	if (res->items_named)
		WARN("items: named from the importing host's BTF (same kernel release as the trace)\n");
	else
		WARN("items: no BTF in a trace.dat and the importing host runs another "
		     "kernel: item names left empty\n");
	if (res->hierarchy_id >= 0 && proc_hier >= 0 && proc_hier != res->hierarchy_id)
		WARN("memory hierarchy id %d from the trace differs from /proc/cgroups (%d)\n",
		     res->hierarchy_id, proc_hier);
	if (res->hierarchy_id < 0)
		WARN("memory hierarchy unknown: rstat/mkdir/rmdir events of all hierarchies kept\n");
	if (res->parent_unknown)
		WARN("%llu cgroup ids of unknown parent attached under the root\n",
		     (unsigned long long)res->parent_unknown);
	if (res->gaps)
		WARN("%llu sub-buffers flagged missed events (%llu counted, %llu unknown)\n",
		     (unsigned long long)res->gaps, (unsigned long long)res->missed,
		     (unsigned long long)res->gaps_unknown);
	if (res->overrun > 0)
		WARN("kernel overrun %lld events\n", (long long)res->overrun);
	if (res->unaccounted > 0)
		WARN("%lld events the kernel delivered are not in the file (another reader?)\n",
		     (long long)res->unaccounted);
	if (im->ts_backwards)
		WARN("%llu timestamps went backwards within a CPU\n",
		     (unsigned long long)im->ts_backwards);
#undef WARN
	if (wl && warn[wl - 1] == '\n')
		warn[wl - 1] = '\0';
}

/*
 * The file's CPUs, version and per-CPU stats.  A v7 file ends with the
 * options trace-cmd appends after the data, the kernel's per-CPU stats among
 * them; libtracecmd still opens some files cut inside them.  Missing stats
 * mean the file ends early.
 */
static int imp_file_info(struct imp *im, struct tracecmd_input *top)
{
	struct import_result *res = im->res;

	res->nr_cpus = tep_get_cpus(im->tep);
	if (res->nr_cpus <= 0)
		res->nr_cpus = tep_get_cpus(tracecmd_get_tep(top));
	res->file_version = tracecmd_get_in_file_version ?
			    (int)tracecmd_get_in_file_version(top) : 0;
	/* the kernel's read+entries per CPU is what the file should hold: a progress total */
	imp_cpustats(im, tracecmd_get_cpustats ? tracecmd_get_cpustats(top) : NULL, res->buffer,
		     false);
	if (res->file_version >= 7 && tracecmd_get_cpustats && im->stats_cpus < res->nr_cpus) {
		res->detail = "the file ends early: the per-CPU stats trace-cmd writes last are "
			      "missing or incomplete";
		return -MCR_E_CORRUPT;
	}
	return 0;
}

/* After the events: the stats, hierarchy, items and cgroups tables. */
static int imp_tables(struct imp *im, struct tracecmd_input *top)
{
	struct import_result *res = im->res;
	int err;

	if (!res->per_kind[MCR_EV_STATE] && !res->per_kind[MCR_EV_LRUVEC] &&
	    !res->per_kind[MCR_EV_EVENTS] && !res->per_kind[MCR_EV_FLUSH])
		return -MCR_E_NO_EVENTS;
	err = imp_cpustats(im, tracecmd_get_cpustats ? tracecmd_get_cpustats(top) : NULL,
			   res->buffer, true);
	if (!err)
		err = imp_hierarchy(im);
	if (!err)
		err = imp_items(im, top);
	if (!err)
		err = imp_write_cgroups(im);
	return err;
}

/* Forgets a previous pass: its counts, cgroups, held-back events and handle. */
static int imp_pass_reset(struct imp *im, bool keep_hier)
{
	struct import_result *res = im->res;
	int err = 0;

	if (im->db) {
		err = db_close(im->db);
		im->db = NULL;
	}
	res->records = res->events = res->other_hierarchy = 0;
	res->gaps = res->missed = res->gaps_unknown = 0;
	res->first_ts = res->last_ts = 0;
	memset(res->per_kind, 0, sizeof(res->per_kind));
	if (im->nseq) {
		memset(im->seq, 0, im->nseq * sizeof(*im->seq));
		memset(im->last_ts, 0, im->nseq * sizeof(*im->last_ts));
		memset(im->flush, 0, im->nseq * sizeof(*im->flush));
	}
	im->ts_backwards = 0;
	imp_cgs_free(&im->cgs);
	im->last_id = 0;
	imp_cgs_free(&im->memcg_ids);
	im->last_memcg_id = 0;
	im->nmk = 0;
	imp_pend_free(im);
	im->pass_void = false;
	if (!keep_hier) {
		im->hier_known = false;
		res->hierarchy_id = -1;
		res->hierarchy_how = "";
	}
	return err;
}

/*
 * Imports buffer @h into im->out, emptied of a previous pass's events.
 * *@info_err is what the file's CPUs and stats say (an error only if this
 * buffer is the one imported).
 */
static int imp_pass(struct imp *im, struct tracecmd_input *h, struct tracecmd_input *top,
		    int proc_hier, bool keep_hier, int *info_err)
{
	const char *why = NULL;
	int err;

	err = imp_pass_reset(im, keep_hier);
	if (err)
		return err;
	im->tep = tracecmd_get_tep(h);
	err = imp_types_init(im);	/* >= 0: how many of our event types the file has */
	if (err <= 0)
		return err;
	*info_err = imp_file_info(im, top);
	if (im->o->cgroupfs) {
		err = imp_walk(im, im->o->cgroupfs, &why);
		if (err) {
			im->res->detail = why;
			return err;
		}
	}
	err = db_reopen(im->out, &im->db);
	if (!err && im->passes++)
		err = db_clear(im->db);
	if (err)
		return err;
	if (tracecmd_iterate_events(h, NULL, 0, imp_cb, im) < 0 && im->err)
		return im->err;
	if (!im->hier_known)
		imp_hier_fallback(im, proc_hier);
	return im->pass_void ? 0 : imp_pend_flush(im);
}

/* Any memcg event: the buffer to import. */
static bool imp_has_memcg(const struct import_result *res)
{
	return res->per_kind[MCR_EV_STATE] || res->per_kind[MCR_EV_LRUVEC] ||
	       res->per_kind[MCR_EV_EVENTS] || res->per_kind[MCR_EV_FLUSH];
}

static int imp_run(struct imp *im, struct tracecmd_input *top, char *warn, size_t wsz)
{
	struct import_result *res = im->res;
	struct tracecmd_input *h = NULL;
	int idx, n, err = 0, info_err = 0, proc_hier = -1;

	if (im->o->cgroupfs && (proc_hier = cgroupfs_hierarchy_id("memory")) < 0)
		proc_hier = -1;
	n = tracecmd_buffer_instances(top);
	for (idx = -1; idx < n; idx++) {
		h = imp_handle(im, top, idx, false);
		if (!h)
			continue;
		if (idx >= 0)
			snprintf(res->buffer, sizeof(res->buffer), "%s",
				 tracecmd_buffer_instance_name(top, idx) ?: "?");
		err = imp_pass(im, h, top, proc_hier, false, &info_err);
		if (!err && im->pass_void) {
			/* the hierarchy came too late to hold the events back: import again */
			imp_handle_put(top, h);
			h = imp_handle(im, top, idx, true);
			if (!h)
				return -MCR_E_CORRUPT;
			err = imp_pass(im, h, top, proc_hier, true, &info_err);
		}
		if (err || imp_has_memcg(res))
			break;
		imp_handle_put(top, h);
		h = NULL;
		res->buffer[0] = '\0';
	}
	if (!err && !h)
		err = -MCR_E_NO_EVENTS;
	err = err ?: info_err;
	if (err)
		goto out;
	err = imp_tables(im, top);
	if (err)
		goto out;
	imp_warnings(im, proc_hier, warn, wsz);
	err = imp_meta(im, h, top, warn);
	if (err)
		goto out;
	if (im->o->progress)
		im->o->progress(im->o->progress_ctx, res->records, im->progress_total);
	err = db_events_finish(im->db);
out:
	imp_handle_put(top, h);
	return err;
}

/*
 * The import proper, into @db through handles of its own (discarded by the
 * caller on failure).  libtracecmd's handles are closed before the readers'
 * check: a crash closing them fails the import.  *@progress_total (if not
 * NULL): the kernel's count of the records, for the last progress call.
 */
static int imp_import(const struct import_opts *o, struct db *db, struct import_result *res,
		      uint64_t *progress_total)
{
	struct tracecmd_input *top;
	struct imp *im;
	char warn[1024];
	int err;

	top = tracecmd_open(o->trace_path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		res->detail = "libtracecmd cannot open it";
		return -MCR_E_CORRUPT;
	}
	im = calloc(1, sizeof(*im));
	if (!im) {
		tracecmd_close(top);
		return -ENOMEM;
	}
	im->o = o;
	im->out = db;
	im->res = res;
	err = imp_plain(im, &top, db_path(db));
	if (!err)
		err = imp_run(im, top, warn, sizeof(warn));
	if (im->db) {
		int cerr = db_close(im->db);

		err = err ?: cerr;
	}
	tracecmd_close(top);
	imp_plain_remove(im);
	if (!err)
		err = imp_check(im, db_path(db));
	if (progress_total)
		*progress_total = im->progress_total;
	imp_cgs_free(&im->cgs);
	imp_cgs_free(&im->memcg_ids);
	imp_pend_free(im);
	free(im->flush);
	free(im->mk_root_id);
	tp_decoder_free(&im->dec);
	free(im->seq);
	free(im->last_ts);
	free(im->last_rec);
	free(im);
	return err;
}

/* What the import's child hands back, in a mapping shared with the parent. */
struct imp_shared {
	struct import_result	res;
	uint64_t		progress_total;
};

struct imp_job {
	const struct import_opts	*o;
	struct db			*db;
	struct imp_shared		*sh;
};

static int imp_job_run(void *arg)
{
	struct imp_job *j = arg;

	return imp_import(j->o, j->db, &j->sh->res, &j->sh->progress_total);
}

/*
 * imp_import() in a child process (import_child.c): a crash of libtracecmd
 * on a damaged file is -MCR_E_CORRUPT, its decompressed copy removed (@db is
 * the caller's to discard).  The result's strings are static ones, at the
 * same addresses in the parent, or res->why.
 */
static int imp_import_contained(const struct import_opts *o, struct db *db,
				struct import_result *res)
{
	struct imp_job j = { .o = o, .db = db };
	char what[64], plain[PATH_MAX];
	struct imp_child how;
	int err;

	j.sh = imp_shared_alloc(sizeof(*j.sh));
	if (!j.sh)
		return -ENOMEM;
	j.sh->res = *res;
	err = imp_contain(imp_job_run, &j, &how);
	*res = j.sh->res;
	if (res->detail == j.sh->res.why)
		res->detail = res->why;
	if (how.died) {
		imp_child_how(&how, what, sizeof(what));
		snprintf(res->why, sizeof(res->why), "libtracecmd %s reading it", what);
		res->detail = res->why;
		res->refused = false;
		snprintf(plain, sizeof(plain), "%s%s", db_path(db), DB_FILE_SCRATCH);
		unlink(plain);
	} else if (!err && o->progress) {
		/* the caller's context saw the child's calls in the child only */
		o->progress(o->progress_ctx, res->records, j.sh->progress_total);
	}
	imp_shared_free(j.sh, sizeof(*j.sh));
	return err;
}

int import_run(const struct import_opts *o, struct db *db, struct import_result *res)
{
	const char *why = NULL;
	int err;

	memset(res, 0, sizeof(*res));
	res->hierarchy_id = -1;
	res->overrun = res->unaccounted = -1;
	res->hierarchy_how = "";
	if (!o->trace_path || !db)
		return -EINVAL;
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	err = imp_open_checked(o->trace_path, &why);
	if (err) {
		res->detail = why;
		return err;
	}
	return o->in_process ? imp_import(o, db, res, NULL) : imp_import_contained(o, db, res);
}
