// SPDX-License-Identifier: GPL-2.0
/*
 * test_cgroup2.c - the hierarchy walker (capture/cgroupfs.c) and the cgroup
 * table (capture/cgtrack.c) on a cgroup2 hierarchy, against the kernel's own
 * names for the same cgroups.
 *
 * Mounts a cgroup2 hierarchy on a temporary directory (the default hierarchy:
 * the same one /sys/fs/cgroup/unified shows, if mounted), makes a small tree
 * below a directory of its own while a private tracefs instance records
 * cgroup:cgroup_mkdir, and checks that every id, parent, path and level the
 * walker reports is what the kernel says: the event's root, id, level and
 * path (TP_PROTO of cgroup_mkdir, kernel/cgroup/cgroup.c cgroup_mkdir() ->
 * trace_cgroup_mkdir()), and the id once more from name_to_handle_at(), which
 * kernfs encodes as the node id (fs/kernfs/mount.c kernfs_encode_fh()); on
 * 64-bit the directory's inode is that id (kernfs_ino(), since 67c0496e87d1).
 * Also checks that detection picks the hierarchy the memory controller is on,
 * not this one, and that memcg-capture says which, and that an id names its
 * cgroup's path through its file handle (cgroupfs_path_of) on both.  Everything made is removed
 * and the mount undone; without root, cgroup2 or tracefs the tests skip and
 * say why.
 *
 * run.sh: alone (makes cgroups while a tracefs instance records every cgroup_mkdir)
 */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tracefs.h>

#include "../harness.h"
#include "cgroupfs.h"
#include "cgtrack.h"
#include "db.h"

#define MAXCG	16

struct kname {			/* the kernel's name of a cgroup, from cgroup_mkdir */
	int		root;
	uint64_t	id;
	int		level;
	char		path[256];
};

struct row {			/* what the walker reported */
	uint64_t	id, parent;
	int		level;
	char		path[256];
};

static char mnt[64], inst[128], base[64];
static bool mounted, traced;
/* the tree below the mount, parents first; "" is @base itself */
static const char *const tree[] = { "", "/a", "/a/b", "/a/b/c", "/d" };
#define NTREE	(sizeof(tree) / sizeof(tree[0]))
static bool made[NTREE + 1];

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void cleanup(void)
{
	char p[256];
	int i;

	snprintf(p, sizeof(p), "%s%s/a/e", mnt, base);
	if (made[NTREE])
		rmdir(p);
	made[NTREE] = false;
	for (i = NTREE - 1; i >= 0; i--) {
		snprintf(p, sizeof(p), "%s%s%s", mnt, base, tree[i]);
		if (made[i])
			rmdir(p);
		made[i] = false;
	}
	if (traced)
		rmdir(inst);
	traced = false;
	if (mounted && umount(mnt) == 0)
		mounted = false;
	if (!mounted && mnt[0])
		rmdir(mnt);
}

/* Every cgroup_mkdir the instance recorded below @base. */
static int kernel_names(struct kname *k, int max)
{
	char p[256], line[1024], *e;
	unsigned long long id;
	int n = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/trace", inst);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < max) {
		e = strstr(line, "cgroup_mkdir: ");
		if (!e || sscanf(e, "cgroup_mkdir: root=%d id=%llu level=%d path=%255s",
				 &k[n].root, &id, &k[n].level, k[n].path) != 4)
			continue;
		k[n].id = id;
		if (!strncmp(k[n].path, base, strlen(base)))
			n++;
	}
	fclose(f);
	return n;
}

static const struct kname *kname_of(const struct kname *k, int n, const char *path)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(k[i].path, path))
			return &k[i];
	return NULL;
}

/* The kernel's cgroup id as kernfs exports it in a file handle. */
static int handle_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle	fh;
		unsigned char		buf[16];
	} h = { .fh.handle_bytes = sizeof(h.buf) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EPROTO;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

struct rows {
	struct row	r[4096];
	int		n;
};
static struct rows walked;

static int collect(void *ctx, const struct db_cgroup *cg)
{
	struct rows *w = ctx;

	if (w->n == (int)(sizeof(w->r) / sizeof(w->r[0])))
		return -ENOSPC;
	w->r[w->n] = (struct row) { .id = cg->id, .parent = cg->parent, .level = cg->level };
	snprintf(w->r[w->n].path, sizeof(w->r[0].path), "%s", cg->path);
	w->n++;
	return 0;
}

static const struct row *row_of(const struct rows *w, const char *path)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->r[i].path, path))
			return &w->r[i];
	return NULL;
}

static struct cgroupfs v2(void)
{
	struct cgroupfs cg = { .version = 2, .hierarchy_id = 0 };

	snprintf(cg.mount, sizeof(cg.mount), "%s", mnt);
	return cg;
}

TEST(cg2_mount_and_tree)
{
	const char *tr;
	char p[256];
	int ret;

	atexit(cleanup);
	if (geteuid() != 0)
		SKIP("needs root to mount a cgroup2 hierarchy");
	snprintf(mnt, sizeof(mnt), "/tmp/mcr-cg2.XXXXXX");
	if (!mkdtemp(mnt)) {
		mnt[0] = '\0';
		FAILF("mkdtemp: %s", strerror(errno));
	}
	if (mount("cgroup2", mnt, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		int err = errno;

		rmdir(mnt);
		mnt[0] = '\0';
		SKIP("cannot mount cgroup2: %s", strerror(err));
	}
	mounted = true;
	/* libtracefs mounts tracefs where it is missing, as memcg-capture's own lookup does */
	tr = tracefs_tracing_dir();
	if (!tr)
		SKIP("no tracefs: libtracefs found none mounted and could not mount one");
	snprintf(inst, sizeof(inst), "%s/instances/mcr_cg2_%d", tr, (int)getpid());
	if (mkdir(inst, 0755) < 0)
		SKIP("no tracefs instance at %s: %s (the kernel's names come from it)", inst,
		     strerror(errno));
	traced = true;
	snprintf(p, sizeof(p), "%s/events/cgroup/cgroup_mkdir/enable", inst);
	if ((ret = write_file(p, "1")) < 0)
		SKIP("cannot enable cgroup:cgroup_mkdir: %s", strerror(-ret));
	snprintf(base, sizeof(base), "/mcr-cg2-%d", (int)getpid());
	for (size_t i = 0; i < NTREE; i++) {
		snprintf(p, sizeof(p), "%s%s%s", mnt, base, tree[i]);
		if (mkdir(p, 0755) < 0)
			FAILF("mkdir %s: %s", p, strerror(errno));
		made[i] = true;
	}
}

TEST(cg2_walk_names_as_kernel)
{
	struct cgroupfs cg = v2();
	struct kname k[MAXCG];
	const struct kname *kn;
	const struct row *r, *parent;
	char path[256], full[320], *slash;
	uint64_t hid;
	int n, ret;

	if (!made[NTREE - 1])
		SKIP("no cgroup2 tree (see cg2_mount_and_tree)");
	n = kernel_names(k, MAXCG);
	ASSERT_EQ(n, (int)NTREE);
	walked.n = 0;
	ret = cgroupfs_walk(&cg, base, collect, &walked);
	/* the root, then @base and its subtree */
	ASSERT_EQ(ret, 1 + (int)NTREE);
	ASSERT_EQ(walked.n, ret);
	r = row_of(&walked, "/");
	ASSERT(r);
	ASSERT_EQ(r->level, 0);
	ASSERT_EQU(r->parent, 0);
	ASSERT_EQ(handle_id(mnt, &hid), 0);
	ASSERT_EQU(r->id, hid);
	for (size_t i = 0; i < NTREE; i++) {
		snprintf(path, sizeof(path), "%s%s", base, tree[i]);
		kn = kname_of(k, n, path);
		r = row_of(&walked, path);
		if (!kn || !r)
			FAILF("%s: kernel %s, walker %s", path, kn ? "named it" : "did not",
			      r ? "reported it" : "did not");
		/* hierarchy id 0 is the default (v2) root: cgroup_init() sets it up first */
		ASSERT_EQ(kn->root, 0);
		ASSERT_EQU(r->id, kn->id);
		ASSERT_EQ(r->level, kn->level);
		snprintf(full, sizeof(full), "%s%s", mnt, path);
		ASSERT_EQ(handle_id(full, &hid), 0);
		ASSERT_EQU(r->id, hid);
		/* the parent is the directory one component up, as the kernel names it */
		slash = strrchr(path, '/');
		*slash = '\0';
		parent = row_of(&walked, slash == path ? "/" : path);
		ASSERT(parent);
		ASSERT_EQU(r->parent, parent->id);
		ASSERT_EQ(r->level, parent->level + 1);
	}
}

/* The whole hierarchy: our tree once, unchanged; every level = path depth. */
TEST(cg2_walk_whole_hierarchy)
{
	static struct rows all;
	struct cgroupfs cg = v2();
	const struct row *a, *b;
	char path[256];
	int ret, depth;

	if (walked.n != 1 + (int)NTREE)
		SKIP("no walk of the tree (see cg2_walk_names_as_kernel)");
	all.n = 0;
	ret = cgroupfs_walk(&cg, "/", collect, &all);
	ASSERT(ret >= 1 + (int)NTREE);
	for (int i = 0; i < all.n; i++) {
		depth = 0;
		for (const char *c = all.r[i].path; *c; c++)
			depth += *c == '/';
		if (!strcmp(all.r[i].path, "/"))
			depth = 0;
		if (all.r[i].level != depth)
			FAILF("%s: level %d, depth %d", all.r[i].path, all.r[i].level, depth);
	}
	for (size_t i = 0; i < NTREE; i++) {
		snprintf(path, sizeof(path), "%s%s", base, tree[i]);
		a = row_of(&walked, path);
		b = row_of(&all, path);
		ASSERT(a && b);
		ASSERT_EQU(a->id, b->id);
		ASSERT_EQU(a->parent, b->parent);
		ASSERT_EQ(a->level, b->level);
	}
}

struct dbrows {
	struct rows	*w;
	int64_t		created[MAXCG], removed[MAXCG];
};

static int collect_db(const struct db_cgroup *cg, void *arg)
{
	struct dbrows *d = arg;

	if (d->w->n < MAXCG) {
		d->created[d->w->n] = cg->created_ts;
		d->removed[d->w->n] = cg->removed_ts;
	}
	return collect(d->w, cg);
}

/* A walk, then mkdir/rmdir events as capture feeds them, into the cgroups table. */
TEST(cg2_cgtrack_table)
{
	static struct rows got;
	struct dbrows d = { .w = &got };
	struct cgroupfs cg = v2();
	struct kname k[MAXCG];
	const struct kname *ke, *kc;
	const struct row *e, *a;
	char dbpath[] = "/tmp/mcr-cg2-db.XXXXXX", p[256];
	struct cgtrack *track = NULL;
	struct db *db = NULL;
	int fd, n, ret;

	if (walked.n != 1 + (int)NTREE)
		SKIP("no walk of the tree (see cg2_walk_names_as_kernel)");
	fd = mkstemp(dbpath);
	ASSERT(fd >= 0);
	close(fd);
	ret = db_create(dbpath, &db);
	if (ret < 0) {
		unlink(dbpath);
		FAILF("db_create: %d", ret);
	}
	snprintf(p, sizeof(p), "%s/a", base);
	ret = cgtrack_new(db, p, &track);
	if (!ret) {
		cgtrack_set_fs(track, &cg);
		ret = cgroupfs_walk(&cg, p, cgtrack_add, track);
	}
	if (ret >= 0) {
		snprintf(p, sizeof(p), "%s%s/a/e", mnt, base);
		ret = mkdir(p, 0755) < 0 ? -errno : 0;
		made[NTREE] = !ret;
	}
	n = ret < 0 ? ret : kernel_names(k, MAXCG);
	snprintf(p, sizeof(p), "%s/a/e", base);
	ke = n > 0 ? kname_of(k, n, p) : NULL;
	snprintf(p, sizeof(p), "%s/a/b/c", base);
	kc = n > 0 ? kname_of(k, n, p) : NULL;
	/*
	 * a/e was made after the walk: before its mkdir event the table names it
	 * through its file handle (cgroupfs_path_of), as a reader that meets its
	 * updates first does
	 */
	if (ke && !ret && !cgtrack_in_scope(track, ke->id))
		ret = -ESRCH;
	if (ke && !ret) {
		snprintf(p, sizeof(p), "%s/a/e", base);
		ret = cgtrack_mkdir(track, ke->id, ke->path, ke->level, 1000);
		if (!ret)
			ret = cgtrack_rmdir(track, ke->id, ke->path, ke->level, 2000);
	}
	/* scope /base/a: a and below inside; root and base its ancestors */
	if (ke && kc && !ret) {
		if (!cgtrack_in_scope(track, kc->id) || !cgtrack_in_scope(track, ke->id) ||
		    cgtrack_in_scope(track, row_of(&walked, base)->id) ||
		    !cgtrack_is_ancestor(track, row_of(&walked, base)->id) ||
		    !cgtrack_is_ancestor(track, row_of(&walked, "/")->id))
			ret = -EINVAL;
	}
	if (!ret)
		ret = db_cgroups_foreach(db, collect_db, &d);
	cgtrack_free(track);
	db_close(db);
	unlink(dbpath);
	ASSERT(ke && kc);
	ASSERT_EQ(ret, 0);
	/* root, base, a, a/b, a/b/c from the walk, a/e from its events */
	ASSERT_EQ(got.n, 6);
	snprintf(p, sizeof(p), "%s/a/e", base);
	e = row_of(&got, p);
	snprintf(p, sizeof(p), "%s/a", base);
	a = row_of(&got, p);
	ASSERT(e && a);
	ASSERT_EQU(e->id, ke->id);
	ASSERT_EQ(e->level, ke->level);
	ASSERT_EQU(e->parent, a->id);
	ASSERT_EQ(d.created[e - got.r], 1000);
	ASSERT_EQ(d.removed[e - got.r], 2000);
	for (int i = 0; i < got.n; i++) {
		const struct row *w = row_of(&walked, got.r[i].path);

		if (&got.r[i] == e)
			continue;
		ASSERT(w);
		ASSERT_EQU(got.r[i].id, w->id);
		ASSERT_EQU(got.r[i].parent, w->parent);
		ASSERT_EQ(got.r[i].level, w->level);
	}
}

/*
 * The memory controller's hierarchy, found here independently of
 * cgroupfs_detect(): a v1 mount with the memory option wins (memory bound to
 * v1 is absent from cgroup2), else the cgroup2 mount listing memory.
 */
static bool memory_hierarchy(struct cgroupfs *want)
{
	struct mntent *m;
	char line[256], p[PATH_MAX + 32], name[64];
	bool v1 = false, found = false;
	int hier;
	FILE *f = setmntent("/proc/self/mounts", "re");

	while (f && (m = getmntent(f)) && !v1) {
		if (!strcmp(m->mnt_type, "cgroup") && hasmntopt(m, "memory")) {
			snprintf(want->mount, sizeof(want->mount), "%s", m->mnt_dir);
			want->version = 1;
			v1 = found = true;
		} else if (!found && !strcmp(m->mnt_type, "cgroup2")) {
			FILE *c;

			snprintf(p, sizeof(p), "%s/cgroup.controllers", m->mnt_dir);
			c = fopen(p, "re");
			if (c && fgets(line, sizeof(line), c) && strstr(line, "memory")) {
				snprintf(want->mount, sizeof(want->mount), "%s", m->mnt_dir);
				want->version = 2;
				found = true;
			}
			if (c)
				fclose(c);
		}
	}
	if (f)
		endmntent(f);
	want->hierarchy_id = 0;
	if (v1 && (f = fopen("/proc/cgroups", "re"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %d", name, &hier) == 2 && !strcmp(name, "memory"))
				want->hierarchy_id = hier;
		fclose(f);
	}
	return found;
}

TEST(cg2_detect_picks_memory_hierarchy)
{
	struct cgroupfs want = { 0 }, got = { 0 };
	char p[128], line[256] = "";
	FILE *f;

	if (!mounted)
		SKIP("no cgroup2 mount of ours (see cg2_mount_and_tree)");
	if (!memory_hierarchy(&want))
		SKIP("no hierarchy has the memory controller");
	ASSERT_EQ(cgroupfs_detect(&got), 0);
	ASSERT_EQ(got.version, want.version);
	ASSERT_STR(got.mount, want.mount);
	ASSERT_EQ(got.hierarchy_id, want.hierarchy_id);
	/* ours is a cgroup2 mount: it must lose unless memory is on cgroup2 */
	snprintf(p, sizeof(p), "%s/cgroup.controllers", mnt);
	f = fopen(p, "re");
	ASSERT(f);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	if (want.version == 1)
		ASSERT(!strstr(line, "memory"));
	else
		ASSERT(strstr(line, "memory"));
}

/*
 * The memory hierarchy itself (cgroup v1 on the machines this was built on):
 * our own memory cgroup's id, its directory's inode, names our own path back
 * through its file handle, and an id that is no cgroup names nothing.
 */
TEST(cg_path_of_memory_hierarchy)
{
	struct cgroupfs cg = { 0 };
	char own[PATH_MAX], full[PATH_MAX * 2], got[PATH_MAX];
	struct stat st;

	if (geteuid())
		SKIP("needs root (open_by_handle_at needs CAP_DAC_READ_SEARCH)");
	if (cgroupfs_detect(&cg) < 0)
		SKIP("no hierarchy has the memory controller");
	ASSERT_EQ(cgroupfs_own_path(&cg, own, sizeof(own)), 0);
	snprintf(full, sizeof(full), "%s%s", cg.mount, own);
	ASSERT_EQ(stat(full, &st), 0);
	ASSERT_EQ(cgroupfs_path_of(&cg, st.st_ino, got, sizeof(got)), 0);
	ASSERT_STR(got, own);
	ASSERT(cgroupfs_path_of(&cg, ~0ull - 7, got, sizeof(got)) < 0);
}

TEST(cg2_capture_says_which)
{
	struct cgroupfs want = { 0 };
	char cmd[PATH_MAX * 2], out[4096], expect[PATH_MAX + 96], dbpath[] = "/tmp/mcr-cg2-cap.XXXXXX";
	const char *build = getenv("MCR_BUILD");
	size_t len = 0;
	int fd, status;
	FILE *p;

	if (!mounted)
		SKIP("no cgroup2 mount of ours (see cg2_mount_and_tree)");
	if (!build)
		SKIP("MCR_BUILD not set (run through tests/run.sh)");
	if (!memory_hierarchy(&want))
		SKIP("no hierarchy has the memory controller");
	fd = mkstemp(dbpath);
	ASSERT(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s/memcg-capture' -o '%s' -d 0.2 2>&1 >/dev/null", build, dbpath);
	p = popen(cmd, "re");
	ASSERT(p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	status = pclose(p);
	unlink(dbpath);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 14)
		SKIP("kernel without memcg tracepoints");
	snprintf(expect, sizeof(expect), "memory controller: cgroup v%d hierarchy %d at %s\n",
		 want.version, want.hierarchy_id, want.mount);
	if (!strstr(out, expect))
		FAILF("stderr lacks \"%.*s\": %s", (int)strlen(expect) - 1, expect, out);
}

TEST(cg2_cleanup)
{
	struct stat st;

	if (!mnt[0])
		SKIP("nothing was mounted");
	cleanup();
	ASSERT(!mounted);
	ASSERT(stat(mnt, &st) < 0 && errno == ENOENT);
	ASSERT(stat(inst, &st) < 0);
}

TEST_MAIN(cg2_mount_and_tree, cg2_walk_names_as_kernel, cg2_walk_whole_hierarchy,
	  cg2_cgtrack_table, cg2_detect_picks_memory_hierarchy, cg_path_of_memory_hierarchy,
	  cg2_capture_says_which, cg2_cleanup)
