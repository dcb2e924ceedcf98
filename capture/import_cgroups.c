// SPDX-License-Identifier: GPL-2.0
/*
 * import_cgroups.c - the importer's cgroup table: ids seen in memcg events,
 * paths from cgroup_mkdir/rmdir and from an optional --cgroupfs walk, and
 * at the end parents from paths, unknown ones under the root, flagged.
 *
 * Not cgtrack.c: there a live snapshot precedes the events and a cgroup's
 * parent is found when its mkdir is read (or adopts it when the parent's own
 * mkdir is read later); here memcg ids come before, or without, a path, so
 * parents can only be resolved once the whole trace is read.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "cgroupfs.h"
#include "db.h"
#include "error.h"
#include "grow.h"
#include "hash.h"
#include "import-local.h"

#define CGROUP_SUPER_MAGIC_V1	0x27e0eb
#define CGROUP_SUPER_MAGIC_V2	0x63677270

static int imp_cgs_grow(struct imp_cgs *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 1024, i;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t h = mcr_hash64(t->v[i].id) & (nslot - 1);

		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* The slot of @id, or the empty slot where it would go (t->nslot must be non-zero). */
static size_t imp_cg_slot(const struct imp_cgs *t, uint64_t id)
{
	size_t h;

	for (h = mcr_hash64(id) & (t->nslot - 1); t->slot[h]; h = (h + 1) & (t->nslot - 1))
		if (t->v[t->slot[h] - 1].id == id)
			break;
	return h;
}

/**
 * imp_cg_find() - the entry for @id
 * @t:  the table
 * @id: a cgroup id
 *
 * Return: the entry, NULL if @id is not known.
 */
struct imp_cg *imp_cg_find(const struct imp_cgs *t, uint64_t id)
{
	size_t h;

	if (!t->nslot)
		return NULL;
	h = imp_cg_slot(t, id);
	return t->slot[h] ? &t->v[t->slot[h] - 1] : NULL;
}

/**
 * imp_cg_get() - the entry for @id, creating an unknown one
 * @t:  the table
 * @id: a cgroup id
 *
 * Return: the entry, NULL on ENOMEM.
 */
struct imp_cg *imp_cg_get(struct imp_cgs *t, uint64_t id)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && imp_cgs_grow(t))
		return NULL;
	h = imp_cg_slot(t, id);
	if (t->slot[h])
		return &t->v[t->slot[h] - 1];
	if (mcr_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return NULL;
	t->v[t->n] = (struct imp_cg){ .id = id, .level = -1, .created_ts = -1, .removed_ts = -1 };
	t->slot[h] = (uint32_t)++t->n;
	return &t->v[t->n - 1];
}

/* imp_cgs_free() - frees the table and its paths, leaving it empty for reuse. */
void imp_cgs_free(struct imp_cgs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

/*
 * imp_cg_touch() - records that @id appears in the trace (as an unknown
 * cgroup if new); a one-entry cache skips the lookup for runs of one id.
 */
int imp_cg_touch(struct imp *im, uint64_t id)
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
int imp_walk(struct imp *im, const char *dir, const char **why)
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

/* ---- trace events ---- */

/*
 * imp_mkdir() - takes the path (@len bytes, NULL if the record had none),
 * level and creation or removal time of the cgroup_mkdir/rmdir event @ev.
 */
int imp_mkdir(struct imp *im, const struct mcr_event *ev, const char *path, int len)
{
	struct imp_cg *cg = imp_cg_get(&im->cgs, ev->id);
	int err = 0;

	if (!cg)
		return -ENOMEM;
	if (path)
		err = imp_cg_path(cg, path, (size_t)len);
	cg->level = ev->level;
	if (ev->kind == MCR_EV_MKDIR)
		cg->created_ts = (int64_t)ev->ts;
	else
		cg->removed_ts = (int64_t)ev->ts;
	return err;
}

/* ---- hierarchy ---- */

static int imp_cmp_path(const void *a, const void *b)
{
	const struct imp_cg *x = *(struct imp_cg *const *)a, *y = *(struct imp_cg *const *)b;

	return strcmp(x->path, y->path);
}

/*
 * Of the cgroups sharing @hit's path (a path removed and made again), the one
 * alive when @cg was made; for a cgroup older than the trace, one older too.
 */
static struct imp_cg **imp_parent_alive(struct imp_cg **by_path, size_t np, struct imp_cg **hit,
					const struct imp_cg *cg)
{
	struct imp_cg **lo = hit, **hi = hit, **p;

	while (lo > by_path && !strcmp(lo[-1]->path, (*hit)->path))
		lo--;
	while (hi + 1 < by_path + np && !strcmp(hi[1]->path, (*hit)->path))
		hi++;
	if (lo == hi)
		return hit;
	for (p = lo; p <= hi; p++) {
		const struct imp_cg *x = *p;

		if (cg->created_ts < 0 ? x->created_ts < 0 :
		    x->created_ts <= cg->created_ts && (x->removed_ts < 0 || x->removed_ts >= cg->created_ts))
			return p;
	}
	return hit;
}

/*
 * Parents from paths: the parent of "/a/b" is whoever had path "/a" when it
 * was made.  What has no known parent hangs under the root and is flagged.
 */
int imp_hierarchy(struct imp *im)
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
			cg->parent = (*imp_parent_alive(by_path, np, hit, cg))->id;
		} else {
			cg->parent = 1;
			cg->parent_unknown = true;
			im->res->parent_unknown++;
		}
	}
	free(by_path);
	return 0;
}

/* imp_write_cgroups() - writes the table to the cgroups table of the database. */
int imp_write_cgroups(struct imp *im)
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

