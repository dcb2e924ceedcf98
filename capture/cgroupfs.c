// SPDX-License-Identifier: GPL-2.0
/* Memory controller hierarchy: detection from /proc/mounts and a stat walk. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "db.h"

/**
 * cgroupfs_hierarchy_id() - a controller's hierarchy id from /proc/cgroups
 * @controller: e.g. "memory"
 *
 * Return: the id (0 when it is on cgroup2), -ENOENT if not listed, -errno.
 */
int cgroupfs_hierarchy_id(const char *controller)
{
	char line[256], name[64];
	int hier, ret = -ENOENT;
	FILE *f = fopen("/proc/cgroups", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %d", name, &hier) == 2 && !strcmp(name, controller)) {
			ret = hier;
			break;
		}
	}
	fclose(f);
	return ret;
}

static bool cgroupfs_v2_has_memory(const char *mount)
{
	char path[PATH_MAX + 32], buf[512], *tok, *save = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mount);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, "memory"))
			return true;
	return false;
}

int cgroupfs_detect(struct cgroupfs *cg)
{
	struct mntent ent;
	char buf[4096];
	bool found = false;
	FILE *f;

	f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	/* v1 first: when memory is bound to a v1 hierarchy it is not on cgroup2 */
	while (!found && getmntent_r(f, &ent, buf, sizeof(buf))) {
		if (!strcmp(ent.mnt_type, "cgroup") && hasmntopt(&ent, "memory")) {
			snprintf(cg->mount, sizeof(cg->mount), "%s", ent.mnt_dir);
			cg->version = 1;
			found = true;
		}
	}
	rewind(f);
	while (!found && getmntent_r(f, &ent, buf, sizeof(buf))) {
		if (!strcmp(ent.mnt_type, "cgroup2") && cgroupfs_v2_has_memory(ent.mnt_dir)) {
			snprintf(cg->mount, sizeof(cg->mount), "%s", ent.mnt_dir);
			cg->version = 2;
			found = true;
		}
	}
	endmntent(f);
	if (!found)
		return -ENOENT;
	if (cg->version == 2) {
		cg->hierarchy_id = 0;
		return 0;
	}
	cg->hierarchy_id = cgroupfs_hierarchy_id("memory");
	return cg->hierarchy_id < 0 ? cg->hierarchy_id : 0;
}

int cgroupfs_own_path(const struct cgroupfs *cg, char *out, size_t len)
{
	char line[PATH_MAX + 64], *ctl, *path;
	int ret = -ENOENT;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		if (cg->version == 2 ? !strcmp(line, "0") && !*ctl : !!strstr(ctl, "memory")) {
			if (strlen(path) >= len) {
				ret = -ENAMETOOLONG;
				break;
			}
			strcpy(out, path);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

struct cgroupfs_walk_state {
	const struct cgroupfs	*cg;
	cgroupfs_walk_fn	fn;
	void			*ctx;
	int			count;
};

static int cgroupfs_report(struct cgroupfs_walk_state *w, const char *rel, uint64_t parent,
			   int level, uint64_t *id)
{
	char full[PATH_MAX * 2];
	struct db_cgroup row;
	struct stat st;
	int ret;

	snprintf(full, sizeof(full), "%s%s", w->cg->mount, rel);
	if (stat(full, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	row = (struct db_cgroup) {
		.id = st.st_ino, .parent = parent, .path = rel, .level = level,
		.created_ts = -1, .removed_ts = -1,
	};
	ret = w->fn(w->ctx, &row);
	if (ret < 0)
		return ret;
	w->count++;
	*id = st.st_ino;
	return 0;
}

/* Directories can vanish under us: a cgroup removed mid-walk is just skipped. */
static int cgroupfs_walk_dir(struct cgroupfs_walk_state *w, const char *rel, uint64_t id, int level)
{
	char full[PATH_MAX * 2], child[PATH_MAX];
	struct dirent *de;
	uint64_t cid;
	DIR *d;
	int ret = 0;

	snprintf(full, sizeof(full), "%s%s", w->cg->mount, rel);
	d = opendir(full);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", strcmp(rel, "/") ? rel : "",
				     de->d_name) >= sizeof(child))
			continue;
		ret = cgroupfs_report(w, child, id, level + 1, &cid);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret < 0)
			break;
		ret = cgroupfs_walk_dir(w, child, cid, level + 1);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

/*
 * kernfs encodes a node's 64-bit id as its file handle (fs/kernfs/mount.c,
 * kernfs_encode_fh(), FILEID_KERNFS), and cgroupfs exports its nodes
 * (KERNFS_ROOT_SUPPORT_EXPORTOP in kernel/cgroup/cgroup.c), so the id in an
 * event opens the cgroup's directory; /proc/self/fd names its path.
 */
#define CGROUPFS_FILEID_KERNFS	0xfe

int cgroupfs_path_of(const struct cgroupfs *cg, uint64_t id, char *out, size_t len)
{
	struct {
		struct file_handle	fh;
		uint64_t		id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = CGROUPFS_FILEID_KERNFS } };
	char link[64], full[PATH_MAX];
	size_t ml = strlen(cg->mount);
	int mfd, fd, ret;
	ssize_t n;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	mfd = open(cg->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	close(mfd);
	if (ret < 0)
		return ret;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, full, sizeof(full) - 1);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret < 0)
		return ret;
	full[n] = '\0';
	/* a removed directory reads "... (deleted)"; another mount is not ours */
	if (strstr(full, " (deleted)") || strncmp(full, cg->mount, ml) ||
	    (full[ml] != '/' && full[ml] != '\0'))
		return -ENOENT;
	if (strlen(full + ml) + 2 > len)
		return -ENAMETOOLONG;
	strcpy(out, full[ml] ? full + ml : "/");
	return 0;
}

int cgroupfs_walk(const struct cgroupfs *cg, const char *sub, cgroupfs_walk_fn fn, void *ctx)
{
	struct cgroupfs_walk_state w = { .cg = cg, .fn = fn, .ctx = ctx };
	char rel[PATH_MAX], *p;
	uint64_t id, parent = 0;
	int level = 0, ret;

	if (!sub || !*sub)
		sub = "/";
	if (sub[0] != '/' || strlen(sub) >= sizeof(rel))
		return -EINVAL;
	/* the root, then each ancestor of @sub, then @sub's subtree */
	ret = cgroupfs_report(&w, "/", 0, 0, &id);
	if (ret < 0)
		return ret;
	snprintf(rel, sizeof(rel), "%s", sub);
	while (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/')
		rel[strlen(rel) - 1] = '\0';
	for (p = rel + 1; strcmp(rel, "/"); p++) {
		char save = *p;

		if (save != '/' && save != '\0')
			continue;
		*p = '\0';
		parent = id;
		ret = cgroupfs_report(&w, rel, parent, ++level, &id);
		*p = save;
		if (ret < 0)
			return ret;
		if (!save)
			break;
	}
	ret = cgroupfs_walk_dir(&w, rel, id, level);
	return ret < 0 ? ret : w.count;
}
