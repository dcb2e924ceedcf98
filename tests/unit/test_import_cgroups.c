// SPDX-License-Identifier: GPL-2.0
/*
 * test_import_cgroups.c - the importer's cgroup table (capture/import_cgroups.c)
 * where a path was removed and made again during the trace: a child's parent
 * is the cgroup of its parent path alive when the child was made, not any of
 * that path's cgroups.  No trace.dat needed: events as the decoder hands them.
 * Also the importer's first look at its input (import_child.c), at a FIFO.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "import-local.h"

static int mk(struct imp *im, int kind, uint64_t id, const char *path, int level, uint64_t ts)
{
	struct mcr_event ev = { .kind = kind, .id = id, .level = level, .ts = ts };

	return imp_mkdir(im, &ev, path, (int)strlen(path));
}

/*
 * /a (2) at 10; /a/Q (3) at 20, removed at 100; /a/Q again (4) at 150;
 * /a/Q/W (6) at 50 under the first Q, /a/Q/X (5) at 200 under the second;
 * /b/Z (7) at 300 with no /b: unknown, under the root.
 */
TEST(recreated_parent_path)
{
	struct import_result res = { 0 };
	struct imp im = { .res = &res };
	const struct imp_cg *x, *w, *z;
	int ret;

	ret = mk(&im, MCR_EV_MKDIR, 2, "/a", 1, 10);
	ret = ret ?: mk(&im, MCR_EV_MKDIR, 3, "/a/Q", 2, 20);
	ret = ret ?: mk(&im, MCR_EV_MKDIR, 6, "/a/Q/W", 3, 50);
	ret = ret ?: mk(&im, MCR_EV_RMDIR, 6, "/a/Q/W", 3, 90);
	ret = ret ?: mk(&im, MCR_EV_RMDIR, 3, "/a/Q", 2, 100);
	ret = ret ?: mk(&im, MCR_EV_MKDIR, 4, "/a/Q", 2, 150);
	ret = ret ?: mk(&im, MCR_EV_MKDIR, 5, "/a/Q/X", 3, 200);
	ret = ret ?: mk(&im, MCR_EV_MKDIR, 7, "/b/Z", 2, 300);
	ret = ret ?: imp_hierarchy(&im);
	x = imp_cg_find(&im.cgs, 5);
	w = imp_cg_find(&im.cgs, 6);
	z = imp_cg_find(&im.cgs, 7);
	ASSERT_EQ(ret, 0);
	ASSERT(x && w && z);
	ASSERT_EQU(x->parent, 4);
	ASSERT_EQU(w->parent, 3);
	ASSERT_EQU(z->parent, 1);
	ASSERT(z->parent_unknown && !x->parent_unknown && !w->parent_unknown);
	ASSERT_EQU(res.parent_unknown, 1);
	imp_cgs_free(&im.cgs);
}

/* A FIFO is refused at once: its open does not wait for a writer (SIGALRM ends a hang). */
TEST(open_checked_fifo)
{
	char dir[] = "/tmp/mcr-fifo.XXXXXX", path[64];
	const char *why = NULL;
	int ret;

	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace.dat", dir);
	ASSERT_EQ(mkfifo(path, 0600), 0);
	alarm(10);
	ret = imp_open_checked(path, &why);
	alarm(0);
	unlink(path);
	rmdir(dir);
	ASSERT_EQ(ret, -EINVAL);
}

TEST_MAIN(recreated_parent_path, open_checked_fifo)
