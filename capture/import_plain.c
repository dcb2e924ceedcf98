// SPDX-License-Identifier: GPL-2.0
/*
 * import_plain.c - a compressed trace.dat decompressed into a plain copy
 * before the import reads it.
 *
 * libtracecmd 1.3.1 reads a compressed (v7) file a chunk at a time and keeps
 * every chunk it has decompressed in a list, which it walks at every page it
 * frees: reading the file takes time that grows with the square of its length
 * and memory that grows to its decompressed size (a 39 MB recording of 19.7 M
 * events: 7.4-8.0 s and 660 MiB resident to import).  Its own copy, the one
 * trace-cmd convert --compression none makes, decompresses each CPU's data in
 * one pass; the plain file it writes is read through mmap, in time linear in
 * its length: 3.9 s for that recording, copy and import.  At 11 MB, the
 * smallest recording measured, the copy still saves 8 % of the CPU and 40 %
 * of the peak memory: AUTO copies from IMPORT_PLAIN_MIN, 8 MiB.
 *
 * The copy is written beside the database being written, under its name
 * with DB_FILE_SCRATCH appended (db/db_file.h): never a name the caller may
 * own, and one its clean-up on a signal knows.  It takes about fifteen times
 * the compressed file's size until the import ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_file.h"
#include "error.h"
#include "import-local.h"

/* enum tracecmd_file_states of trace-cmd's private header: copy up to the trace data */
#define IMP_FILE_CPU_FLYRECORD	11

/* Whether @top (of o->trace_path) is compressed and due a copy under @o's policy. */
static bool imp_plain_due(const struct import_opts *o, struct tracecmd_input *top)
{
	const char *name = NULL, *version = NULL;
	struct stat st;

	if (o->plain == IMPORT_PLAIN_NEVER)
		return false;
	if (tracecmd_get_file_compress_proto(top, &name, &version) || !name ||
	    !strcmp(name, "none"))
		return false;
	if (o->plain == IMPORT_PLAIN_ALWAYS)
		return true;
	return !stat(o->trace_path, &st) && (uint64_t)st.st_size >= IMPORT_PLAIN_MIN;
}

/*
 * libtracecmd's copy of @src into @dst, uncompressed; 0 or a negative errno.
 * The copy prints each CPU's offset and size on stderr whatever the log
 * level: stderr is /dev/null while it runs.
 */
static int imp_plain_copy(const char *src, const char *dst, int version)
{
	struct tracecmd_output *out = NULL;
	struct tracecmd_input *in;
	int err, saved, null;

	in = tracecmd_open_head(src, 0);
	if (!in)
		return -MCR_E_CORRUPT;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0) {
		err = -errno;
		goto out;
	}
	errno = 0;
	out = tracecmd_copy(in, dst, IMP_FILE_CPU_FLYRECORD, version, "none");
	/* a write that failed is named by errno (ENOSPC); libtracecmd's own refusals are not */
	err = out ? 0 : errno ? -errno : -EIO;
	if (out)
		tracecmd_output_close(out);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
out:
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
	tracecmd_close(in);
	return err;
}

struct imp_copy_job {
	const char	*src, *dst;
	int		version;
};

static int imp_plain_copy_job(void *arg)
{
	const struct imp_copy_job *j = arg;

	return imp_plain_copy(j->src, j->dst, j->version);
}

/**
 * imp_plain() - read a compressed trace.dat from a decompressed copy.
 * @im:  the import; im->plain names the copy, read from here on
 * @top: the handle of o->trace_path; replaced by one of the copy
 * @tmp: the name of the database being written, beside which the copy is
 *
 * Does nothing for a file that is not compressed, under IMPORT_PLAIN_NEVER,
 * below IMPORT_PLAIN_MIN under AUTO, or with a libtracecmd that does not
 * export the copy.  The copy is made in a child process (import_child.c):
 * libtracecmd crashes closing the input of some damaged files.  Under AUTO a
 * copy that fails (or crashes) is removed and its error kept in
 * res->plain_err: the file is read directly.  Returns 0, or under ALWAYS
 * the copy's error.
 */
int imp_plain(struct imp *im, struct tracecmd_input **top, const char *tmp)
{
	const struct import_opts *o = im->o;
	struct imp_copy_job job;
	struct tracecmd_input *h;
	struct imp_child how;
	char what[64];
	int err;

	if (!tracecmd_get_file_compress_proto || !tracecmd_copy || !tracecmd_output_close) {
		if (o->plain != IMPORT_PLAIN_ALWAYS)
			return 0;
		im->res->detail = "this libtracecmd does not export its copy (tracecmd_copy)";
		return -EOPNOTSUPP;
	}
	if (!imp_plain_due(o, *top))
		return 0;
	if (asprintf(&im->plain, "%s%s", tmp, DB_FILE_SCRATCH) < 0) {
		im->plain = NULL;
		return -ENOMEM;
	}
	job.src = o->trace_path;
	job.dst = im->plain;
	job.version = tracecmd_get_in_file_version ? (int)tracecmd_get_in_file_version(*top) : 0;
	err = imp_contain(imp_plain_copy_job, &job, &how);
	h = err ? NULL : tracecmd_open(im->plain, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!h) {
		err = err ?: -MCR_E_CORRUPT;
		imp_plain_remove(im);
		if (o->plain == IMPORT_PLAIN_ALWAYS) {
			im->res->detail = "libtracecmd could not make or open a decompressed copy";
			if (how.died) {
				imp_child_how(&how, what, sizeof(what));
				snprintf(im->res->why, sizeof(im->res->why),
					 "libtracecmd %s making a decompressed copy of it", what);
				im->res->detail = im->res->why;
			}
			return err;
		}
		im->res->plain_err = err;
		return 0;
	}
	tracecmd_close(*top);
	*top = h;
	im->res->plain = true;
	return 0;
}

/* Removes the copy, if one was made. */
void imp_plain_remove(struct imp *im)
{
	if (!im->plain)
		return;
	unlink(im->plain);
	free(im->plain);
	im->plain = NULL;
}
