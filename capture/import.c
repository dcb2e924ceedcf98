// SPDX-License-Identifier: GPL-2.0
/*
 * import.c - trace.dat -> trace database through libtracecmd (contract in import.h).
 *
 * Two passes over the chosen buffer: a prescan that finds the buffer holding
 * the memcg events and the memory hierarchy id (it stops as soon as both are
 * known, usually within the first periodic root flush), then the import
 * itself on a fresh handle, in tracecmd_iterate_events() order, which is the
 * replay order: smallest ts first, lowest CPU on ties, ring order per CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "btf.h"
#include "cgroupfs.h"
#include "db.h"
#include "error.h"
#include "import.h"

/*
 * Exported by libtracecmd.so.1 (1.3.1) but declared only in trace-cmd's
 * private header, which Debian does not ship.  Weak, so that a library
 * without them only costs us the meta they fill.
 */
extern const char *tracecmd_get_trace_clock(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_uname(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_version(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_cpustats(struct tracecmd_input *h) __attribute__((weak));
extern unsigned long tracecmd_get_in_file_version(struct tracecmd_input *h) __attribute__((weak));
extern int tracecmd_page_size(struct tracecmd_input *h) __attribute__((weak));

#define IMP_PROGRESS_EVERY	4096
#define IMP_BATCH_SIZE		64	/* MEMCG_CHARGE_BATCH: the kernel's per-CPU flush batch */
#define CGROUP_SUPER_MAGIC_V1	0x27e0eb
#define CGROUP_SUPER_MAGIC_V2	0x63677270

/* One traced event type we keep, with its fields resolved once. */
struct imp_type {
	struct tep_event	*ev;
	struct tep_format_field	*id, *item, *val, *stats, *force, *needs;
	struct tep_format_field	*root, *level, *cpu, *contended;
	int			min_size;	/* payload bytes the fields need */
	uint8_t			kind;
};

static const struct {
	const char	*sys, *name;
	uint8_t		kind;
} imp_names[] = {
	{ "memcg",	"mod_memcg_state",		MCR_EV_STATE },
	{ "memcg",	"mod_memcg_lruvec_state",	MCR_EV_LRUVEC },
	{ "memcg",	"count_memcg_events",		MCR_EV_EVENTS },
	{ "memcg",	"memcg_flush_stats",		MCR_EV_FLUSH },
	{ "cgroup",	"cgroup_rstat_locked",		MCR_EV_LOCKED },
	{ "cgroup",	"cgroup_rstat_unlock",		MCR_EV_UNLOCK },
	{ "cgroup",	"cgroup_rstat_lock_contended",	MCR_EV_CONTENDED },
	{ "cgroup",	"cgroup_mkdir",			MCR_EV_MKDIR },
	{ "cgroup",	"cgroup_rmdir",			MCR_EV_RMDIR },
};
#define IMP_NTYPES	(sizeof(imp_names) / sizeof(imp_names[0]))

/* A cgroup as far as the trace and the optional tree walk tell. */
struct imp_cg {
	uint64_t	id, parent;
	char		*path;		/* NULL: unknown */
	int64_t		created_ts, removed_ts;
	int		level;
	bool		parent_unknown;
};

struct imp_cgs {
	struct imp_cg	*v;
	size_t		n, cap;
	uint32_t	*slot;		/* open addressing: index + 1, 0 = empty */
	size_t		nslot;		/* power of two */
};

/* Last memcg_flush_stats that flushed, per pid (hashed, may forget). */
struct imp_flush {
	uint64_t	id;
	int		pid;
	bool		valid;
};

struct imp {
	const struct import_opts	*o;
	struct import_result		*res;
	struct tep_handle		*tep;
	struct imp_type			types[IMP_NTYPES];
	uint8_t				type_of[65536];	/* common_type -> index + 1 */
	struct db			*db;
	uint64_t			*seq;		/* per CPU */
	uint64_t			*last_ts;	/* per CPU */
	int				nseq;
	struct imp_cgs			cgs;
	int				err;
	uint64_t			progress_total;
	uint64_t			last_id;	/* cache for imp_cg_touch() */
	uint64_t			ts_backwards;
	int				walk_version;	/* 1 or 2 from --cgroupfs, 0 unknown */
	int				stats_cpus;	/* complete per-CPU stats blocks */
	/* prescan */
	struct imp_flush		flush[64];
	uint64_t			scan_memcg;
	int				scan_hier;
	uint64_t			*mk_root_id;	/* (root << 48 | id) of mkdir/rmdir, for the fallback */
	size_t				nmk, capmk;
};

/* ---- cgroup table ---- */

static uint64_t imp_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int imp_cgs_grow(struct imp_cgs *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 1024, i;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t h = imp_hash(t->v[i].id) & (nslot - 1);

		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* Returns the entry for @id, creating an unknown one; NULL on ENOMEM. */
static struct imp_cg *imp_cg_get(struct imp_cgs *t, uint64_t id)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && imp_cgs_grow(t))
		return NULL;
	for (h = imp_hash(id) & (t->nslot - 1); t->slot[h]; h = (h + 1) & (t->nslot - 1))
		if (t->v[t->slot[h] - 1].id == id)
			return &t->v[t->slot[h] - 1];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct imp_cg *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct imp_cg){ .id = id, .level = -1, .created_ts = -1, .removed_ts = -1 };
	t->slot[h] = (uint32_t)++t->n;
	return &t->v[t->n - 1];
}

static void imp_cgs_free(struct imp_cgs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int imp_cg_touch(struct imp *im, uint64_t id)
{
	if (id == im->last_id)
		return 0;
	if (!imp_cg_get(&im->cgs, id))
		return -ENOMEM;
	im->last_id = id;
	return 0;
}

static int imp_cg_path(struct imp_cg *cg, const char *path, size_t len)
{
	char *p = strndup(path, len);

	if (!p)
		return -ENOMEM;
	free(cg->path);
	cg->path = p;
	return 0;
}

/* ---- live tree walk (--cgroupfs) ---- */

static int imp_walk_cb(void *ctx, const struct db_cgroup *c)
{
	struct imp *im = ctx;
	struct imp_cg *cg = imp_cg_get(&im->cgs, c->id);

	if (!cg || imp_cg_path(cg, c->path, strlen(c->path)))
		return -ENOMEM;
	cg->parent = c->parent;
	cg->level = c->level;
	return 0;
}

/*
 * Walks the whole cgroup hierarchy that @dir belongs to: ids are inode
 * numbers, which are only meaningful per hierarchy, so paths are made
 * relative to the mount root (the ancestor whose inode is 1).
 */
static int imp_walk(struct imp *im, const char *dir, const char **why)
{
	struct cgroupfs cg = { .hierarchy_id = -1 };
	struct statfs sfs;
	struct stat st;
	int n;

	if (!realpath(dir, cg.mount))
		return -errno;
	if (statfs(cg.mount, &sfs) || (sfs.f_type != CGROUP_SUPER_MAGIC_V1 &&
				       sfs.f_type != CGROUP_SUPER_MAGIC_V2)) {
		*why = "--cgroupfs is not a cgroup file system";
		return -MCR_E_BAD_INPUT;
	}
	cg.version = sfs.f_type == CGROUP_SUPER_MAGIC_V2 ? 2 : 1;
	for (;;) {
		char *slash;

		if (stat(cg.mount, &st))
			return -errno;
		if (st.st_ino == 1)
			break;
		slash = strrchr(cg.mount, '/');
		if (!slash || slash == cg.mount) {
			*why = "--cgroupfs: no cgroup mount root above it";
			return -MCR_E_BAD_INPUT;
		}
		*slash = '\0';
	}
	im->walk_version = cg.version;
	n = cgroupfs_walk(&cg, "/", imp_walk_cb, im);
	return n < 0 ? n : 0;
}

/* The memory controller's hierarchy id on this host, -1 if none. */
static int imp_proc_cgroups_memory(void)
{
	char name[64];
	int hier, n, en;
	FILE *f = fopen("/proc/cgroups", "re");
	int ret = -1;

	if (!f)
		return -1;
	fscanf(f, "%*[^\n]\n");
	while (fscanf(f, "%63s %d %d %d\n", name, &hier, &n, &en) == 4)
		if (!strcmp(name, "memory"))
			ret = hier;
	fclose(f);
	return ret;
}

/* ---- decoding ---- */

static int imp_types_init(struct imp *im)
{
	size_t i;
	int found = 0;

	memset(im->type_of, 0, sizeof(im->type_of));
	for (i = 0; i < IMP_NTYPES; i++) {
		struct imp_type *t = &im->types[i];
		struct tep_format_field **f;
		struct tep_format_field **all[] = { &t->id, &t->item, &t->val, &t->stats, &t->force,
						    &t->needs, &t->root, &t->level, &t->cpu,
						    &t->contended };
		size_t k;

		memset(t, 0, sizeof(*t));
		t->kind = imp_names[i].kind;
		t->ev = tep_find_event_by_name(im->tep, imp_names[i].sys, imp_names[i].name);
		if (!t->ev || t->ev->id < 0 || t->ev->id > 65535)
			continue;
		t->id = tep_find_field(t->ev, "id");
		t->item = tep_find_field(t->ev, "item");
		t->val = tep_find_field(t->ev, "val");
		t->stats = tep_find_field(t->ev, "stats_updates");
		t->force = tep_find_field(t->ev, "force");
		t->needs = tep_find_field(t->ev, "needs_flush");
		t->root = tep_find_field(t->ev, "root");
		t->level = tep_find_field(t->ev, "level");
		t->cpu = tep_find_field(t->ev, "cpu");
		t->contended = tep_find_field(t->ev, "contended");
		if (!t->id)
			continue;	/* not the event we know: ignore it */
		for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			f = all[k];
			if (*f && (*f)->offset + (*f)->size > t->min_size)
				t->min_size = (*f)->offset + (*f)->size;
		}
		im->type_of[t->ev->id] = (uint8_t)(i + 1);
		found++;
	}
	return found;
}

/* A number field, sign-extended when the format says it is signed. */
static int64_t imp_num(const struct tep_format_field *f, void *data)
{
	unsigned long long v = 0;

	if (!f || tep_read_number_field((struct tep_format_field *)f, data, &v))
		return 0;
	if (f->flags & TEP_FIELD_IS_SIGNED) {
		if (f->size == 1)
			return (int8_t)v;
		if (f->size == 2)
			return (int16_t)v;
		if (f->size == 4)
			return (int32_t)(uint32_t)v;
	}
	return (int64_t)v;
}

/*
 * Decodes @r into @ev.  Returns the imp_type, NULL if the record is not one
 * of ours (or too short to hold its fields: corrupt data is skipped, not read).
 */
static struct imp_type *imp_decode(struct imp *im, struct tep_record *r, struct mcr_event *ev,
				   int *root)
{
	struct imp_type *t;
	int type = tep_data_type(im->tep, r);

	if (type < 0 || type > 65535 || !im->type_of[type])
		return NULL;
	t = &im->types[im->type_of[type] - 1];
	if (r->size < t->min_size)
		return NULL;
	memset(ev, 0, sizeof(*ev));
	ev->kind = t->kind;
	ev->ts = r->ts;
	ev->cpu = r->cpu;
	ev->pid = tep_data_pid(im->tep, r);
	ev->id = (uint64_t)imp_num(t->id, r->data);
	*root = -1;
	switch (t->kind) {
	case MCR_EV_STATE:
	case MCR_EV_LRUVEC:
	case MCR_EV_EVENTS:
		ev->item = (int32_t)imp_num(t->item, r->data);
		ev->val = imp_num(t->val, r->data);
		break;
	case MCR_EV_FLUSH:
		ev->val = imp_num(t->stats, r->data);
		ev->flags = (imp_num(t->force, r->data) ? MCR_FLUSH_FORCE : 0) |
			    (imp_num(t->needs, r->data) ? MCR_FLUSH_NEEDS : 0);
		break;
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
		ev->item = (int32_t)imp_num(t->cpu, r->data);
		ev->flags = imp_num(t->contended, r->data) ? MCR_LOCK_CONTENDED : 0;
		/* fall through */
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		*root = (int)imp_num(t->root, r->data);
		ev->aux = *root;
		ev->level = (int16_t)imp_num(t->level, r->data);
		break;
	}
	return t;
}

/* The __data_loc path of a mkdir/rmdir record, bounds-checked; NULL if bad. */
static const char *imp_path(struct imp *im, struct imp_type *t, struct tep_record *r, int *len)
{
	const char *p = tep_get_field_raw(NULL, t->ev, "path", r, len, 0);
	const char *end = (const char *)r->data + r->size;

	if (!p || *len <= 0 || p < (const char *)r->data || p + *len > end)
		return NULL;
	*len = (int)strnlen(p, (size_t)*len);
	return *len && p[0] == '/' ? p : NULL;
}

/* ---- prescan: which buffer, which hierarchy ---- */

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
static void imp_scan(struct imp *im, struct tracecmd_input *h)
{
	int cpu, ncpu = tep_get_cpus(im->tep);

	for (cpu = 0; cpu < ncpu && !(im->scan_hier >= 0 && im->scan_memcg); cpu++) {
		struct tep_record *r;

		memset(im->flush, 0, sizeof(im->flush));
		for (r = tracecmd_read_cpu_first(h, cpu); r; r = tracecmd_read_data(h, cpu)) {
			int stop = imp_scan_cb(h, r, cpu, im);

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
static int imp_hier_by_mkdir(struct imp *im)
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
		for (j = i; j < im->nmk; j++) {
			uint64_t id = im->mk_root_id[j] & 0xffffffffffffull;
			size_t h;

			if ((int)(im->mk_root_id[j] >> 48) != root || !im->cgs.nslot)
				continue;
			for (h = imp_hash(id) & (im->cgs.nslot - 1); im->cgs.slot[h];
			     h = (h + 1) & (im->cgs.nslot - 1))
				if (im->cgs.v[im->cgs.slot[h] - 1].id == id) {
					n++;
					break;
				}
		}
		if (n > best_n) {
			best_n = n;
			best = root;
		}
	}
	return best;
}

/* ---- opening ---- */

static const uint8_t imp_magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/*
 * Opens @path in a child first: libtracecmd 1.3.1 crashes (in its own error
 * path) on some truncated files, and a crash must become an error code.
 */
static int imp_open_checked(const char *path, const char **why)
{
	uint8_t magic[sizeof(imp_magic)];
	struct stat st;
	ssize_t n;
	pid_t pid;
	int fd, status;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		int err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;

		close(fd);
		return err;
	}
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n != (ssize_t)sizeof(magic) || memcmp(magic, imp_magic, sizeof(magic))) {
		*why = st.st_size ? "not a trace-cmd data file (bad magic)" : "empty file";
		return -MCR_E_CORRUPT;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct tracecmd_input *h;
		int null = open("/dev/null", O_WRONLY);

		/* a sanitizer's crash report would otherwise reach the user */
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (h)
			tracecmd_close(h);
		_exit(h ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	*why = WIFSIGNALED(status) ? "libtracecmd crashed reading it (a truncated v6 file?)"
				   : "libtracecmd cannot open it";
	return -MCR_E_CORRUPT;
}

/*
 * Handle of buffer @idx: -1 the top buffer, else instance @idx.  @fresh asks
 * for a handle whose cursors are at the start (the top one is reopened).
 */
static struct tracecmd_input *imp_handle(struct imp *im, struct tracecmd_input *top, int idx,
					 bool fresh)
{
	if (idx >= 0)
		return tracecmd_buffer_instance_handle(top, idx);
	return fresh ? tracecmd_open(im->o->trace_path, TRACECMD_FL_LOAD_NO_PLUGINS) : top;
}

static void imp_handle_put(struct tracecmd_input *top, struct tracecmd_input *h)
{
	if (h && h != top)
		tracecmd_close(h);
}

/*
 * Prescans the top buffer, then each instance, until one holds memcg
 * events.  Returns its index (-1 = top), or -MCR_E_NO_EVENTS.
 */
static int imp_choose_buffer(struct imp *im, struct tracecmd_input *top)
{
	int idx, n = tracecmd_buffer_instances(top);

	for (idx = -1; idx < n; idx++) {
		struct tracecmd_input *h = imp_handle(im, top, idx, false);

		if (!h)
			continue;
		im->tep = tracecmd_get_tep(h);
		im->scan_memcg = 0;
		im->scan_hier = -1;
		im->nmk = 0;
		memset(im->flush, 0, sizeof(im->flush));
		imp_cgs_free(&im->cgs);
		im->last_id = 0;
		if (imp_types_init(im) > 0)
			imp_scan(im, h);
		imp_handle_put(top, h);
		if (im->scan_memcg)
			return idx;
	}
	return -MCR_E_NO_EVENTS;
}

/* ---- the import pass ---- */

static int imp_seq_grow(struct imp *im, int cpu)
{
	int n = cpu + 1;
	uint64_t *s, *t;

	if (cpu < 0 || cpu > 65535)
		return -MCR_E_CORRUPT;
	s = realloc(im->seq, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	im->seq = s;
	t = realloc(im->last_ts, n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	im->last_ts = t;
	memset(s + im->nseq, 0, (n - im->nseq) * sizeof(*s));
	memset(t + im->nseq, 0, (n - im->nseq) * sizeof(*t));
	im->nseq = n;
	return 0;
}

static int imp_mkdir(struct imp *im, struct imp_type *t, struct tep_record *r,
		     const struct mcr_event *ev)
{
	struct imp_cg *cg = imp_cg_get(&im->cgs, ev->id);
	const char *path;
	int len, err = 0;

	if (!cg)
		return -ENOMEM;
	path = imp_path(im, t, r, &len);
	if (path)
		err = imp_cg_path(cg, path, (size_t)len);
	cg->level = ev->level;
	if (ev->kind == MCR_EV_MKDIR)
		cg->created_ts = (int64_t)ev->ts;
	else
		cg->removed_ts = (int64_t)ev->ts;
	return err;
}

static int imp_cb(struct tracecmd_input *h, struct tep_record *r, int cpu_idx, void *data)
{
	struct imp *im = data;
	struct import_result *res = im->res;
	struct mcr_event ev;
	struct imp_type *t;
	int root, err, cpu = r->cpu;

	if (++res->records % IMP_PROGRESS_EVERY == 0 && im->o->progress)
		im->o->progress(im->o->progress_ctx, res->records, im->progress_total);
	if (cpu >= im->nseq && (err = imp_seq_grow(im, cpu)))
		goto fail;
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
	t = imp_decode(im, r, &ev, &root);
	if (!t)
		return 0;
	if (ev.kind >= MCR_EV_LOCKED && ev.kind <= MCR_EV_RMDIR && im->res->hierarchy_id >= 0 &&
	    root != im->res->hierarchy_id) {
		res->other_hierarchy++;
		return 0;
	}
	if (ev.kind == MCR_EV_MKDIR || ev.kind == MCR_EV_RMDIR)
		err = imp_mkdir(im, t, r, &ev);
	else
		err = imp_cg_touch(im, ev.id);
	if (err)
		goto fail;
	if (r->ts < im->last_ts[cpu])
		im->ts_backwards++;
	im->last_ts[cpu] = r->ts;
	ev.seq = im->seq[cpu]++;
	err = db_events_append(im->db, &ev);
	if (err)
		goto fail;
	if (!res->events)
		res->first_ts = ev.ts;
	if (ev.ts > res->last_ts)
		res->last_ts = ev.ts;
	res->events++;
	res->per_kind[ev.kind]++;
	return 0;
fail:
	im->err = err;
	return -1;
}

/* ---- hierarchy ---- */

static int imp_cmp_path(const void *a, const void *b)
{
	const struct imp_cg *x = *(struct imp_cg *const *)a, *y = *(struct imp_cg *const *)b;

	return strcmp(x->path, y->path);
}

/*
 * Parents from paths: the parent of "/a/b" is whoever has path "/a".  What
 * has no known parent hangs under the root and is flagged.
 */
static int imp_hierarchy(struct imp *im)
{
	struct imp_cgs *t = &im->cgs;
	struct imp_cg **by_path, *root = imp_cg_get(t, 1);
	size_t i, np = 0;

	if (!root)
		return -ENOMEM;
	if (!root->path && imp_cg_path(root, "/", 1))
		return -ENOMEM;
	root->level = 0;
	root->parent = 0;
	by_path = malloc((t->n + 1) * sizeof(*by_path));
	if (!by_path)
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		if (t->v[i].path)
			by_path[np++] = &t->v[i];
	qsort(by_path, np, sizeof(*by_path), imp_cmp_path);
	for (i = 0; i < t->n; i++) {
		struct imp_cg *cg = &t->v[i], key, *kp = &key, **hit;
		char *slash;

		if (cg->id == 1 || cg->parent)
			continue;
		hit = NULL;
		if (cg->path && (slash = strrchr(cg->path, '/'))) {
			char *dir = slash == cg->path ? strdup("/") :
				    strndup(cg->path, (size_t)(slash - cg->path));

			if (!dir) {
				free(by_path);
				return -ENOMEM;
			}
			key.path = dir;
			hit = bsearch(&kp, by_path, np, sizeof(*by_path), imp_cmp_path);
			free(dir);
		}
		if (hit) {
			cg->parent = (*hit)->id;
		} else {
			cg->parent = 1;
			cg->parent_unknown = true;
			im->res->parent_unknown++;
		}
	}
	free(by_path);
	return 0;
}

static int imp_write_cgroups(struct imp *im)
{
	size_t i;
	int err;

	for (i = 0; i < im->cgs.n; i++) {
		const struct imp_cg *cg = &im->cgs.v[i];
		struct db_cgroup c = {
			.id = cg->id, .parent = cg->parent, .path = cg->path, .level = cg->level,
			.created_ts = cg->created_ts, .removed_ts = cg->removed_ts,
			.parent_unknown = cg->parent_unknown,
		};

		err = db_cgroup_put(im->db, &c);
		if (err)
			return err;
	}
	im->res->cgroups = im->cgs.n;
	return 0;
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
static int imp_items(struct imp *im, struct tracecmd_input *top)
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

/* Kernel ring-buffer stats saved by trace-cmd: blocks per "Buffer: name". */
static int imp_cpustats(struct imp *im, const char *text, const char *buffer, bool write)
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

static int imp_meta(struct imp *im, struct tracecmd_input *h, struct tracecmd_input *top,
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

/* ---- the whole import ---- */

static int imp_run(struct imp *im, struct tracecmd_input *top, const char *tmp, char *warn,
		   size_t wsz)
{
	struct import_result *res = im->res;
	struct tracecmd_input *h;
	int idx, err, proc_hier = -1;
	const char *why = NULL;
	size_t wl;

	idx = imp_choose_buffer(im, top);
	if (idx < -1)
		return idx;
	if (idx >= 0)
		snprintf(res->buffer, sizeof(res->buffer), "%s",
			 tracecmd_buffer_instance_name(top, idx) ?: "?");
	res->hierarchy_id = im->scan_hier;
	res->hierarchy_how = "rstat lock events following a flushing memcg_flush_stats on the same task";
	if (im->o->cgroupfs)
		proc_hier = imp_proc_cgroups_memory();
	if (res->hierarchy_id < 0 && proc_hier >= 0) {
		res->hierarchy_id = proc_hier;
		res->hierarchy_how = "/proc/cgroups of the importing host (--cgroupfs)";
	}
	if (res->hierarchy_id < 0) {
		res->hierarchy_id = imp_hier_by_mkdir(im);
		res->hierarchy_how = "cgroup_mkdir/rmdir ids that also appear as memcg ids";
	}
	if (res->hierarchy_id < 0)
		res->hierarchy_how = "unknown: rstat/mkdir/rmdir events of every hierarchy kept";
	free(im->mk_root_id);
	im->mk_root_id = NULL;
	imp_cgs_free(&im->cgs);
	im->last_id = 0;

	/* the prescan moved the cursors: read the chosen buffer afresh */
	h = imp_handle(im, top, idx, true);
	if (!h)
		return -MCR_E_CORRUPT;
	im->tep = tracecmd_get_tep(h);
	imp_types_init(im);
	res->nr_cpus = tep_get_cpus(im->tep);
	if (res->nr_cpus <= 0)
		res->nr_cpus = tep_get_cpus(tracecmd_get_tep(top));
	res->file_version = tracecmd_get_in_file_version ?
			    (int)tracecmd_get_in_file_version(top) : 0;

	/* the kernel's read+entries per CPU is what the file should hold: a progress total */
	imp_cpustats(im, tracecmd_get_cpustats ? tracecmd_get_cpustats(top) : NULL, res->buffer,
		     false);
	/*
	 * A v7 file ends with the options trace-cmd appends after the data, the
	 * kernel's per-CPU stats among them; libtracecmd still opens some files
	 * cut inside them.  Missing stats mean the file ends early.
	 */
	if (res->file_version >= 7 && tracecmd_get_cpustats && im->stats_cpus < res->nr_cpus) {
		res->detail = "the file ends early: the per-CPU stats trace-cmd writes last are "
			      "missing or incomplete";
		err = -MCR_E_CORRUPT;
		goto out;
	}
	if (im->o->cgroupfs) {
		err = imp_walk(im, im->o->cgroupfs, &why);
		if (err) {
			res->detail = why;
			goto out;
		}
	}
	err = db_create(tmp, &im->db);
	if (err)
		goto out;
	if (tracecmd_iterate_events(h, NULL, 0, imp_cb, im) < 0 && im->err) {
		err = im->err;
		goto out;
	}
	if (!res->per_kind[MCR_EV_STATE] && !res->per_kind[MCR_EV_LRUVEC] &&
	    !res->per_kind[MCR_EV_EVENTS] && !res->per_kind[MCR_EV_FLUSH]) {
		err = -MCR_E_NO_EVENTS;
		goto out;
	}
	err = imp_cpustats(im, tracecmd_get_cpustats ? tracecmd_get_cpustats(top) : NULL,
			   res->buffer, true);
	if (err)
		goto out;
	err = imp_hierarchy(im);
	if (err)
		goto out;
	err = imp_items(im, top);
	if (err)
		goto out;
	err = imp_write_cgroups(im);
	if (err)
		goto out;

	warn[0] = '\0';
	wl = 0;
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

int import_run(const struct import_opts *o, struct import_result *res)
{
	struct tracecmd_input *top;
	struct imp *im;
	char *tmp = NULL, warn[1024];
	const char *why = NULL;
	int err;

	memset(res, 0, sizeof(*res));
	res->hierarchy_id = -1;
	res->overrun = res->unaccounted = -1;
	res->hierarchy_how = "";
	if (!o->trace_path || !o->out_path)
		return -EINVAL;
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	err = imp_open_checked(o->trace_path, &why);
	if (err) {
		res->detail = why;
		return err;
	}
	top = tracecmd_open(o->trace_path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		res->detail = "libtracecmd cannot open it";
		return -MCR_E_CORRUPT;
	}
	im = calloc(1, sizeof(*im));
	if (!im || asprintf(&tmp, "%s.partial-%d", o->out_path, (int)getpid()) < 0) {
		free(im);
		tracecmd_close(top);
		return -ENOMEM;
	}
	im->o = o;
	im->res = res;
	im->scan_hier = -1;
	err = imp_run(im, top, tmp, warn, sizeof(warn));
	if (im->db) {
		int cerr = db_close(im->db);

		err = err ?: cerr;
	}
	if (!err && rename(tmp, o->out_path))
		err = -errno;
	if (err) {
		char side[PATH_MAX];

		unlink(tmp);
		snprintf(side, sizeof(side), "%s-wal", tmp);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", tmp);
		unlink(side);
	}
	tracecmd_close(top);
	imp_cgs_free(&im->cgs);
	free(im->mk_root_id);
	free(im->seq);
	free(im->last_ts);
	free(im);
	free(tmp);
	return err;
}
