/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgtrack.h - the cgroup table of a trace as it evolves: a startup snapshot
 * plus cgroup_mkdir/cgroup_rmdir events, written to the database.
 *
 * Contract: keeps id -> (parent, path, level, created, removed) for one
 * hierarchy, writes every change to the cgroups table (db_cgroup_put), and
 * answers whether an id is inside an optional scope subtree (--cgroup) or is
 * one of its ancestors.  Used by live capture and the trace.dat importer.
 * Never prints; returns negative errno.
 */
#ifndef MCR_CGTRACK_H
#define MCR_CGTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct db_cgroup;
struct cgroupfs;
struct cgtrack;

/* @scope: "/a/b" to track a subtree (NULL or "/" = everything). */
int cgtrack_new(struct db *db, const char *scope, struct cgtrack **out);
void cgtrack_free(struct cgtrack *t);

/* cgtrack_add - a cgroup known from a walk (fits cgroupfs_walk_fn). */
int cgtrack_add(void *t, const struct db_cgroup *cg);

/* cgtrack_mkdir - a cgroup_mkdir event; the parent is found by path. */
int cgtrack_mkdir(struct cgtrack *t, uint64_t id, const char *path, int level, uint64_t ts);

/* cgtrack_rmdir - a cgroup_rmdir event; unknown ids are added with their path. */
int cgtrack_rmdir(struct cgtrack *t, uint64_t id, const char *path, int level, uint64_t ts);

/*
 * cgtrack_set_fs - name through @fs (cgroupfs_path_of) the ids that events
 * carry before the table knows them: memcg-capture's readers meet a new
 * cgroup's updates on one CPU before its mkdir on another.  Without it an
 * unknown id is outside the scope.  @fs must outlive @t.
 */
void cgtrack_set_fs(struct cgtrack *t, const struct cgroupfs *fs);

/*
 * memcg-capture --rotate: cgtrack_db_next() writes the whole table as it is
 * to @next, then every change to both databases, until cgtrack_db_retire()
 * makes @next the only one.  A reader still before the boundary keeps the
 * old file's table current meanwhile.  The caller holds the table's lock.
 */
int cgtrack_db_next(struct cgtrack *t, struct db *next);
void cgtrack_db_retire(struct cgtrack *t);

/* Inside the scope subtree (true for every id when there is no scope). */
bool cgtrack_in_scope(struct cgtrack *t, uint64_t id);

/* A strict ancestor of the scope (false when there is no scope). */
bool cgtrack_is_ancestor(struct cgtrack *t, uint64_t id);

/*
 * cgtrack_info - what the table knows of @id now: its parent (0 unknown) and
 * path (truncated to @len), without naming an unknown id through the
 * filesystem.  0, or -ENOENT.
 */
int cgtrack_info(const struct cgtrack *t, uint64_t id, uint64_t *parent, char *path, size_t len);

/* Number of cgroups known. */
unsigned int cgtrack_count(const struct cgtrack *t);

#endif
