/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroupfs.h - the cgroup hierarchy that hosts the memory controller.
 *
 * Contract: finds the memory controller's hierarchy (cgroup v1 mount with the
 * "memory" option, or the cgroup2 mount whose root cgroup.controllers lists
 * "memory"), its hierarchy id (the /proc/cgroups column, 0 for cgroup2, the
 * "root" field of the cgroup trace events), and walks its directories.  A
 * cgroup's id is the inode number of its directory, which is what the memcg
 * and cgroup tracepoints carry.  Never prints; returns negative errno.
 */
#ifndef MCR_CGROUPFS_H
#define MCR_CGROUPFS_H

#include <limits.h>
#include <stdint.h>

struct db_cgroup;

struct cgroupfs {
	char	mount[PATH_MAX];	/* where the hierarchy is mounted */
	int	version;		/* 1 or 2 */
	int	hierarchy_id;		/* /proc/cgroups; 0 for cgroup2 */
};

/*
 * cgroupfs_detect - find the memory controller's hierarchy.
 * Returns 0, or -ENOENT when no mounted hierarchy has the memory controller.
 */
int cgroupfs_detect(struct cgroupfs *cg);

/*
 * cgroupfs_hierarchy_id - @controller's hierarchy id on this host, from
 * /proc/cgroups.  Returns it, -ENOENT if not listed, or a negative errno.
 */
int cgroupfs_hierarchy_id(const char *controller);

/*
 * cgroupfs_own_path - this process's cgroup path in that hierarchy ("/a/b"),
 * from /proc/self/cgroup, into @buf of @len bytes.
 */
int cgroupfs_own_path(const struct cgroupfs *cg, char *buf, size_t len);

/* Called for each directory, parents before children; negative stops the walk. */
typedef int (*cgroupfs_walk_fn)(void *ctx, const struct db_cgroup *cg);

/*
 * cgroupfs_walk - walk the hierarchy from @sub ("/" or NULL for the whole
 * hierarchy), reporting id (inode), parent id, path relative to the mount,
 * level and created_ts = removed_ts = -1.  When @sub is below the root, its
 * ancestors up to the root are reported first.  Returns the number of
 * cgroups reported, or a negative errno (-ENOENT if @sub does not exist).
 */
int cgroupfs_walk(const struct cgroupfs *cg, const char *sub, cgroupfs_walk_fn fn, void *ctx);

/*
 * cgroupfs_path_of - the path ("/a/b") of the cgroup whose id is @id, through
 * its file handle (needs CAP_DAC_READ_SEARCH).  Returns 0, -ENOENT or -ESTALE
 * if it is gone, or a negative errno.
 */
int cgroupfs_path_of(const struct cgroupfs *cg, uint64_t id, char *buf, size_t len);

#endif
