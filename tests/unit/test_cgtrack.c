// SPDX-License-Identifier: GPL-2.0
/*
 * test_cgtrack.c - the cgroup table (capture/cgtrack.c) when mkdir and rmdir
 * arrive out of ts order, as memcg-capture's per-CPU readers meet them: a
 * child made on one CPU read before its parent made on the other, and a child
 * read before its parent path's new cgroup and the old one's rmdir.  Every
 * parent must be the cgroup of the parent path alive when the child was made,
 * in the cgroups table the replay reads.  No kernel needed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "cgroupfs.h"
#include "cgtrack.h"
#include "db.h"

#define MAXCG	16

struct got {
	int		n;
	uint64_t	id[MAXCG], parent[MAXCG];
	bool		unknown[MAXCG];
};

static int collect(const struct db_cgroup *cg, void *arg)
{
	struct got *g = arg;

	if (g->n < MAXCG) {
		g->id[g->n] = cg->id;
		g->parent[g->n] = cg->parent;
		g->unknown[g->n] = cg->parent_unknown;
		g->n++;
	}
	return 0;
}

/* The parent the table holds for @id; -1 if absent, and @unknown its flag. */
static int64_t parent_of(const struct got *g, uint64_t id, bool *unknown)
{
	for (int i = 0; i < g->n; i++)
		if (g->id[i] == id) {
			*unknown = g->unknown[i];
			return (int64_t)g->parent[i];
		}
	return -1;
}

static const struct db_cgroup walked[] = {
	{ .id = 1, .parent = 0, .path = "/", .level = 0, .created_ts = -1, .removed_ts = -1 },
	{ .id = 2, .parent = 1, .path = "/a", .level = 1, .created_ts = -1, .removed_ts = -1 },
	{ .id = 3, .parent = 2, .path = "/a/Q", .level = 2, .created_ts = -1, .removed_ts = -1 },
};

/* A table over a database of its own, the walk above in it. */
struct fx {
	char		path[32];
	struct db	*db;
	struct cgtrack	*track;
};

static int fx_open(struct fx *f, const char *scope, const struct cgroupfs *fs)
{
	int fd, ret;

	strcpy(f->path, "/tmp/mcr-cgtrack-db.XXXXXX");
	fd = mkstemp(f->path);
	if (fd < 0)
		return -1;
	close(fd);
	ret = db_create(f->path, &f->db);
	ret = ret ?: cgtrack_new(f->db, scope, &f->track);
	if (!ret && fs)
		cgtrack_set_fs(f->track, fs);
	for (size_t i = 0; !ret && i < sizeof(walked) / sizeof(walked[0]); i++)
		ret = cgtrack_add(f->track, &walked[i]);
	return ret;
}

/* @ret: the first error so far; the rows the table wrote into @g. */
static int fx_close(struct fx *f, int ret, struct got *g)
{
	if (f->db)
		ret = ret ?: db_cgroups_foreach(f->db, collect, g);
	cgtrack_free(f->track);
	db_close(f->db);
	unlink(f->path);
	return ret;
}

/*
 * Reader order (not ts order), ids and ts:
 *   /a/P/C  id 11 ts 200     before its parent: unknown until P arrives
 *   /a/P    id 10 ts 100     adopts C (made after it, below its path)
 *   /a/Q/X  id 13 ts 400     finds Q id 3 alive (its rmdir not read yet)
 *   /a/Q    id 12 ts 300     a new Q: adopts X, whose parent 3 is older
 *   /a/Q    id 3 rmdir ts 250
 *   /a/Q/Y  id 14 ts 260     between the old Q's rmdir and the new Q's mkdir:
 *                            no Q alive, unknown (the kernel cannot make it)
 *   /b/Z    id 15 ts 500     no /b ever: stays unknown, hung under the root
 *   /a/P/D  id 16 ts 50      made before P (ts 100): not P's, stays unknown
 */
TEST(out_of_order_parents)
{
	struct fx f = { 0 };
	struct got g = { 0 };
	bool unk = false;
	int ret;

	ret = fx_open(&f, NULL, NULL);
	ret = ret ?: cgtrack_mkdir(f.track, 11, "/a/P/C", 3, 200);
	ret = ret ?: cgtrack_mkdir(f.track, 10, "/a/P", 2, 100);
	ret = ret ?: cgtrack_mkdir(f.track, 13, "/a/Q/X", 3, 400);
	ret = ret ?: cgtrack_mkdir(f.track, 12, "/a/Q", 2, 300);
	ret = ret ?: cgtrack_rmdir(f.track, 3, "/a/Q", 2, 250);
	ret = ret ?: cgtrack_mkdir(f.track, 14, "/a/Q/Y", 3, 260);
	ret = ret ?: cgtrack_mkdir(f.track, 15, "/b/Z", 2, 500);
	ret = ret ?: cgtrack_mkdir(f.track, 16, "/a/P/D", 3, 50);
	ret = fx_close(&f, ret, &g);
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(g.n, 3 + 7);
	ASSERT_EQ(parent_of(&g, 10, &unk), 2);
	ASSERT(!unk);
	ASSERT_EQ(parent_of(&g, 11, &unk), 10);
	ASSERT(!unk);
	ASSERT_EQ(parent_of(&g, 12, &unk), 2);
	ASSERT_EQ(parent_of(&g, 13, &unk), 12);
	ASSERT(!unk);
	ASSERT_EQ(parent_of(&g, 14, &unk), 1);
	ASSERT(unk);
	ASSERT_EQ(parent_of(&g, 15, &unk), 1);
	ASSERT(unk);
	ASSERT_EQ(parent_of(&g, 16, &unk), 1);
	ASSERT(unk);
}

/* In ts order nothing is adopted twice: a child already under its parent stays. */
TEST(in_order_parents)
{
	struct fx f = { 0 };
	struct got g = { 0 };
	bool unk = true;
	int ret;

	ret = fx_open(&f, NULL, NULL);
	ret = ret ?: cgtrack_mkdir(f.track, 10, "/a/P", 2, 100);
	ret = ret ?: cgtrack_mkdir(f.track, 11, "/a/P/C", 3, 200);
	ret = ret ?: cgtrack_rmdir(f.track, 11, "/a/P/C", 3, 300);
	ret = ret ?: cgtrack_rmdir(f.track, 10, "/a/P", 2, 310);
	ret = ret ?: cgtrack_mkdir(f.track, 12, "/a/P", 2, 400);
	ret = fx_close(&f, ret, &g);
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(parent_of(&g, 11, &unk), 10);
	ASSERT(!unk);
	ASSERT_EQ(parent_of(&g, 12, &unk), 2);
	ASSERT_EQ(parent_of(&g, 3, &unk), 2);
}

/*
 * With a scope, an id met before its mkdir is named through the cgroup
 * filesystem; where that fails (here "/" is no cgroupfs) it is outside the
 * scope until its mkdir names it, then inside, with its row and parent.
 */
TEST(nameless_until_mkdir)
{
	static const struct cgroupfs notcg = { .mount = "/", .version = 2 };
	struct fx f = { 0 };
	struct got g = { 0 };
	bool unk = true, before = true, after = false, anc = false;
	int ret;

	ret = fx_open(&f, "/a", &notcg);
	if (!ret) {
		before = cgtrack_in_scope(f.track, 99);
		anc = cgtrack_is_ancestor(f.track, 99);
		ret = cgtrack_mkdir(f.track, 99, "/a/N", 2, 700);
		after = cgtrack_in_scope(f.track, 99);
	}
	ret = fx_close(&f, ret, &g);
	ASSERT_EQ(ret, 0);
	ASSERT(!before && !anc && after);
	ASSERT_EQ(parent_of(&g, 99, &unk), 2);
	ASSERT(!unk);
}

TEST_MAIN(out_of_order_parents, in_order_parents, nameless_until_mkdir)
