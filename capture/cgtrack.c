// SPDX-License-Identifier: GPL-2.0
/*
 * The evolving cgroup table: id and path hash maps over one entry array.
 *
 * Capture feeds mkdir/rmdir in the order its per-CPU readers meet them, not
 * in ts order: a child made on one CPU can arrive before its parent made on
 * another a few ms earlier, or before the rmdir of an older cgroup of its
 * parent's path.  So a parent is the cgroup of the parent path that lived when
 * the child was made, and every mkdir adopts the children already known that
 * were made after it below its path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"
#include "cgtrack.h"
#include "db.h"
#include "hash.h"

struct cgtrack_entry {
	uint64_t	id;
	uint64_t	parent;
	char		*path;
	int64_t		created_ts;
	int64_t		removed_ts;
	int		level;
	unsigned int	older;		/* index + 1 of the previous cgroup of this path */
	bool		in_scope;
	bool		ancestor;
	bool		nameless;	/* met in an event, its directory gone: no path */
};

struct cgtrack {
	struct db		*db;
	struct db		*next;		/* --rotate: the next file's, written too */
	char			*scope;		/* NULL: no scope */
	const struct cgroupfs	*fs;		/* names ids the table does not know yet */
	struct cgtrack_entry	*ent;
	unsigned int		nr, alloc;
	unsigned int		*by_id;		/* open addressing: index + 1, 0 = empty */
	unsigned int		*by_path;
	unsigned int		buckets;	/* power of two */
};

static uint64_t cgtrack_hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static unsigned int *cgtrack_slot_id(const struct cgtrack *t, uint64_t id)
{
	unsigned int i = mcr_hash64(id) & (t->buckets - 1);

	while (t->by_id[i] && t->ent[t->by_id[i] - 1].id != id)
		i = (i + 1) & (t->buckets - 1);
	return &t->by_id[i];
}

static unsigned int *cgtrack_slot_path(const struct cgtrack *t, const char *path)
{
	unsigned int i = cgtrack_hash_path(path) & (t->buckets - 1);

	while (t->by_path[i] && strcmp(t->ent[t->by_path[i] - 1].path, path))
		i = (i + 1) & (t->buckets - 1);
	return &t->by_path[i];
}

static int cgtrack_rehash(struct cgtrack *t, unsigned int buckets)
{
	unsigned int *id = calloc(buckets, sizeof(*id)), *path = calloc(buckets, sizeof(*path));
	unsigned int i;

	if (!id || !path) {
		free(id);
		free(path);
		return -ENOMEM;
	}
	free(t->by_id);
	free(t->by_path);
	t->by_id = id;
	t->by_path = path;
	t->buckets = buckets;
	for (i = 0; i < t->nr; i++) {
		*cgtrack_slot_id(t, t->ent[i].id) = i + 1;
		*cgtrack_slot_path(t, t->ent[i].path) = i + 1;
	}
	return 0;
}

int cgtrack_new(struct db *db, const char *scope, struct cgtrack **out)
{
	struct cgtrack *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->db = db;
	if (scope && strcmp(scope, "/")) {
		t->scope = strdup(scope);
		if (!t->scope) {
			free(t);
			return -ENOMEM;
		}
		while (strlen(t->scope) > 1 && t->scope[strlen(t->scope) - 1] == '/')
			t->scope[strlen(t->scope) - 1] = '\0';
	}
	if (cgtrack_rehash(t, 256) < 0) {
		cgtrack_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void cgtrack_free(struct cgtrack *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nr; i++)
		free(t->ent[i].path);
	free(t->ent);
	free(t->by_id);
	free(t->by_path);
	free(t->scope);
	free(t);
}

static void cgtrack_classify(const struct cgtrack *t, struct cgtrack_entry *e)
{
	size_t sl, pl = strlen(e->path);

	e->in_scope = true;
	e->ancestor = false;
	if (!t->scope)
		return;
	sl = strlen(t->scope);
	e->in_scope = !strncmp(e->path, t->scope, sl) && (e->path[sl] == '\0' || e->path[sl] == '/');
	e->ancestor = !e->in_scope && pl < sl && !strncmp(t->scope, e->path, pl) &&
		      (pl == 1 || t->scope[pl] == '/');
}

static int cgtrack_store_in(const struct cgtrack *t, struct db *db, const struct cgtrack_entry *e)
{
	struct db_cgroup row = {
		.id = e->id, .parent = e->parent, .path = e->path, .level = e->level,
		.created_ts = e->created_ts, .removed_ts = e->removed_ts,
	};

	/* every hierarchy's root has id 1: an orphan hangs there, flagged */
	if (e->parent == 0 && e->level != 0 && e->id != 1) {
		row.parent = 1;
		row.parent_unknown = true;
	}

	/* with a scope, other tenants' paths stay out of the file */
	if (!db || (!e->in_scope && !e->ancestor))
		return 0;
	return db_cgroup_put(db, &row);
}

static int cgtrack_store(struct cgtrack *t, const struct cgtrack_entry *e)
{
	int ret = cgtrack_store_in(t, t->db, e);

	if (!ret && t->next)
		ret = cgtrack_store_in(t, t->next, e);
	return ret;
}

int cgtrack_db_next(struct cgtrack *t, struct db *next)
{
	unsigned int i;
	int ret;

	for (i = 0; i < t->nr; i++) {
		ret = cgtrack_store_in(t, next, &t->ent[i]);
		if (ret < 0)
			return ret;
	}
	t->next = next;
	return 0;
}

void cgtrack_db_retire(struct cgtrack *t)
{
	if (!t->next)
		return;
	t->db = t->next;
	t->next = NULL;
}

/* Insert or update the entry for @id; path changes are not expected. */
static struct cgtrack_entry *cgtrack_upsert(struct cgtrack *t, uint64_t id, const char *path)
{
	unsigned int *slot;
	struct cgtrack_entry *e;

	slot = cgtrack_slot_id(t, id);
	if (*slot)
		return &t->ent[*slot - 1];
	if ((t->nr + 1) * 2 > t->buckets) {
		if (cgtrack_rehash(t, t->buckets * 2) < 0)
			return NULL;
		slot = cgtrack_slot_id(t, id);
	}
	if (t->nr == t->alloc) {
		unsigned int n = t->alloc ? t->alloc * 2 : 64;
		struct cgtrack_entry *ne = realloc(t->ent, n * sizeof(*ne));

		if (!ne)
			return NULL;
		t->ent = ne;
		t->alloc = n;
	}
	e = &t->ent[t->nr];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->path = strdup(path ? path : "");
	if (!e->path)
		return NULL;
	e->created_ts = e->removed_ts = -1;
	e->level = -1;
	t->nr++;
	*slot = t->nr;
	/* a re-created path points at its newest cgroup, which chains the older */
	slot = cgtrack_slot_path(t, e->path);
	e->older = *slot;
	*slot = t->nr;
	return e;
}

/* An entry met nameless takes the path its mkdir or rmdir gives. */
static int cgtrack_name(struct cgtrack *t, struct cgtrack_entry *e, const char *path)
{
	unsigned int *slot;
	char *p;

	if (!e->nameless || !path || !*path)
		return 0;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	free(e->path);
	e->path = p;
	e->nameless = false;
	slot = cgtrack_slot_path(t, p);
	e->older = *slot;
	*slot = (unsigned int)(e - t->ent) + 1;
	return 0;
}

int cgtrack_add(void *ctx, const struct db_cgroup *cg)
{
	struct cgtrack *t = ctx;
	struct cgtrack_entry *e = cgtrack_upsert(t, cg->id, cg->path);

	if (!e)
		return -ENOMEM;
	e->parent = cg->parent;
	e->level = cg->level;
	e->created_ts = cg->created_ts;
	e->removed_ts = cg->removed_ts;
	cgtrack_classify(t, e);
	return cgtrack_store(t, e);
}

/* Alive at @ts: made before it (or before the trace) and not removed before it. */
static bool cgtrack_alive_at(const struct cgtrack_entry *e, int64_t ts)
{
	return (e->created_ts < 0 || e->created_ts <= ts) && (e->removed_ts < 0 || e->removed_ts >= ts);
}

/* The length of @path's parent path, or -1 for the root or a path without '/'. */
static int cgtrack_dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !path[1])
		return -1;
	return slash == path ? 1 : (int)(slash - path);
}

/* The cgroup of @path's parent path alive at @ts (0: none known). */
static uint64_t cgtrack_parent_at(const struct cgtrack *t, const char *path, int64_t ts)
{
	int len = cgtrack_dir_len(path);
	unsigned int idx;
	char *dir;

	if (len < 0 || !(dir = strndup(path, (size_t)len)))
		return 0;
	for (idx = *cgtrack_slot_path(t, dir); idx; idx = t->ent[idx - 1].older)
		if (cgtrack_alive_at(&t->ent[idx - 1], ts))
			break;
	free(dir);
	return idx ? t->ent[idx - 1].id : 0;
}

static const struct cgtrack_entry *cgtrack_find(const struct cgtrack *t, uint64_t id)
{
	unsigned int idx = *cgtrack_slot_id(t, id);

	return idx ? &t->ent[idx - 1] : NULL;
}

/*
 * @p was made at @ts: a cgroup below its path made after it, whose parent is
 * unknown or an older cgroup of the same path, was met before @p's mkdir and
 * is @p's child.  Only cgroups made during the trace qualify, so the scan is
 * an integer test for the rest.
 */
static int cgtrack_adopt(struct cgtrack *t, const struct cgtrack_entry *p)
{
	size_t len = strlen(p->path);
	unsigned int i;
	int ret;

	for (i = 0; i < t->nr; i++) {
		struct cgtrack_entry *c = &t->ent[i];
		const struct cgtrack_entry *now;

		if (c->created_ts < p->created_ts || c == p || c->parent == p->id ||
		    cgtrack_dir_len(c->path) != (int)len || strncmp(c->path, p->path, len))
			continue;
		/* a parent found by path has @p's path: keep it only if newer than @p */
		now = c->parent ? cgtrack_find(t, c->parent) : NULL;
		if (now && now->created_ts >= p->created_ts)
			continue;
		c->parent = p->id;
		ret = cgtrack_store(t, c);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cgtrack_mkdir(struct cgtrack *t, uint64_t id, const char *path, int level, uint64_t ts)
{
	struct cgtrack_entry *e = cgtrack_upsert(t, id, path);
	int ret;

	if (!e || cgtrack_name(t, e, path) < 0)
		return -ENOMEM;
	e->level = level;
	e->created_ts = (int64_t)ts;
	e->parent = cgtrack_parent_at(t, e->path, e->created_ts);
	cgtrack_classify(t, e);
	ret = cgtrack_store(t, e);
	return ret < 0 ? ret : cgtrack_adopt(t, e);
}

int cgtrack_rmdir(struct cgtrack *t, uint64_t id, const char *path, int level, uint64_t ts)
{
	unsigned int idx = *cgtrack_slot_id(t, id);
	struct cgtrack_entry *e = idx ? &t->ent[idx - 1] : cgtrack_upsert(t, id, path);

	if (!e)
		return -ENOMEM;
	/* first met at its rmdir, or only by an id: its path places it now */
	if (!idx || e->nameless) {
		if (cgtrack_name(t, e, path) < 0)
			return -ENOMEM;
		e->parent = cgtrack_parent_at(t, e->path, (int64_t)ts);
		e->level = level;
		cgtrack_classify(t, e);
	}
	e->removed_ts = (int64_t)ts;
	return cgtrack_store(t, e);
}

void cgtrack_set_fs(struct cgtrack *t, const struct cgroupfs *fs)
{
	t->fs = fs;
}

/* The level of a path: "/" 0, "/a" 1, "/a/b" 2. */
static int cgtrack_path_level(const char *path)
{
	int level = 0;

	for (; *path; path++)
		level += *path == '/' && path[1];
	return level;
}

/*
 * The entry of @id.  An id the table does not know is a cgroup made during
 * the trace whose mkdir another CPU's reader has not met yet (or one the
 * walk missed): its directory names it, and it is classified as the walk
 * would have.  One whose directory is gone is remembered nameless, outside
 * the scope, until its mkdir or rmdir names it.
 */
static const struct cgtrack_entry *cgtrack_lookup(struct cgtrack *t, uint64_t id)
{
	const struct cgtrack_entry *known = cgtrack_find(t, id);
	char path[PATH_MAX];
	struct cgtrack_entry *e;
	bool named;

	if (known || !t->fs)
		return known;
	named = cgroupfs_path_of(t->fs, id, path, sizeof(path)) == 0;
	e = cgtrack_upsert(t, id, named ? path : "");
	if (!e)
		return NULL;
	e->nameless = !named;
	if (named) {
		e->level = cgtrack_path_level(e->path);
		e->parent = cgtrack_parent_at(t, e->path, INT64_MAX);
		cgtrack_classify(t, e);
		/* the table is best effort here: a failed row comes back with the mkdir */
		(void)cgtrack_store(t, e);
	}
	return e;
}

bool cgtrack_in_scope(struct cgtrack *t, uint64_t id)
{
	const struct cgtrack_entry *e;

	if (!t->scope)
		return true;
	e = cgtrack_lookup(t, id);
	return e && e->in_scope;
}

bool cgtrack_is_ancestor(struct cgtrack *t, uint64_t id)
{
	const struct cgtrack_entry *e;

	if (!t->scope)
		return false;
	e = cgtrack_lookup(t, id);
	return e && e->ancestor;
}

int cgtrack_info(const struct cgtrack *t, uint64_t id, uint64_t *parent, char *path, size_t len)
{
	const struct cgtrack_entry *e = cgtrack_find(t, id);

	if (!e)
		return -ENOENT;
	*parent = e->parent;
	if (len)
		snprintf(path, len, "%s", e->path ? e->path : "");
	return 0;
}

unsigned int cgtrack_count(const struct cgtrack *t)
{
	return t->nr;
}
