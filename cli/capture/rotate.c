// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture --rotate: -o PREFIX names a series of trace databases,
 * PREFIX-YYYYmmddTHHMMSSZ.db by each one's UTC start, each written under a
 * temporary name and published complete when its period ends (never over
 * another file: -1, -2, ... before .db where the name is taken).  The
 * capture moves from one to the next at a point of the trace clock without
 * stopping (capture/live_rotate.c); --keep N then removes the oldest files
 * of the series beyond N, only those PREFIX-<time>.db that are memcg-replay
 * databases.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture_local.h"
#include "error.h"

/* A name taken gets -1, -2, ... up to this many before the file is kept under its temporary name. */
#define ROTATE_NAME_TRIES	1000
/* --rotate SIZE: after a file that could not be begun, the next try this much later */
#define ROTATE_RETRY_NS		1000000000ull

static bool rotating(const struct capture *c)
{
	return c->args.rotate_ns || c->args.rotate_bytes;
}

/* c->rot.base: PREFIX-YYYYmmddTHHMMSSZ of now, UTC. */
static int rotate_name(struct capture *c)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	int n;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	n = snprintf(c->rot.base, sizeof(c->rot.base), "%s-%s", c->args.output, stamp);
	/* room for "-NNN.db" */
	return n < 0 || (size_t)n + 8 >= sizeof(c->rot.base) ? -ENAMETOOLONG : 0;
}

const char *rotate_output_name(const struct capture *c, bool series, char *buf, size_t len)
{
	if (!c->args.rotate_ns && !c->args.rotate_bytes)
		return c->args.output;
	if (series)
		snprintf(buf, len, "%s-*.db", c->args.output);
	else
		snprintf(buf, len, "%s.db", c->rot.base);
	return buf;
}

/* @base.db, or @base-N.db for @n > 0; -ENAMETOOLONG when it does not fit @len. */
static int rotate_path(char *path, size_t len, const char *base, int n)
{
	int w = n ? snprintf(path, len, "%s-%d.db", base, n) : snprintf(path, len, "%s.db", base);

	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* The first name free of @base now: there is the temporary file's name to derive. */
static int rotate_free_name(const char *base, char *path, size_t len)
{
	struct stat st;
	int n, ret = 0;

	for (n = 0; n < ROTATE_NAME_TRIES && !ret; n++) {
		ret = rotate_path(path, len, base, n);
		if (!ret && lstat(path, &st) < 0 && errno == ENOENT)
			return 0;
	}
	return ret ? ret : rotate_path(path, len, base, 0);
}

/* A temporary file for a file of base c->rot.base; signals held by the caller. */
static int rotate_create(struct capture *c, char **tmp)
{
	char path[PATH_MAX];
	int ret = rotate_name(c);

	if (!ret)
		ret = rotate_free_name(c->rot.base, path, sizeof(path));
	return ret < 0 ? ret : db_file_create(path, tmp);
}

int rotate_first(struct capture *c, char **tmp)
{
	return rotate_create(c, tmp);
}

bool rotate_due(struct capture *c, uint64_t now)
{
	if (now < c->rot.due)
		return false;
	if (c->args.rotate_ns)
		return true;
	/* the events' bytes: the file's size but for its tables, before SQLite's WAL doubles it */
	return c->lv && live_file_bytes(c->lv) >= c->args.rotate_bytes;
}

int rotate_publish(struct capture *c, const char *tmp, const char *base, char *path, size_t len)
{
	struct db_file_was was = { .existed = false };
	sigset_t stops, old;
	char why[96];
	int n, ret = -EEXIST;

	stop_signals_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &old);
	for (n = 0; n < ROTATE_NAME_TRIES && ret == -EEXIST; n++) {
		ret = rotate_path(path, len, base, n);
		if (!ret)
			ret = db_file_publish(tmp, path, &was, why, sizeof(why));
	}
	if (!ret)
		ret = db_file_published(tmp, path);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!ret) {
		const char *slash = strrchr(path, '/');

		snprintf(c->rot.prev, sizeof(c->rot.prev), "%s", slash ? slash + 1 : path);
		c->rot.files++;
	} else {
		c->rot.prev[0] = '\0';	/* the next file names no predecessor it cannot */
	}
	return ret;
}

int rotate_meta_end(struct capture *c, struct db *db, const struct live_seq *seq)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i, ret = 0, r;

	if (!rotating(c))
		return 0;
	if (c->rot.prev[0])
		ret = db_meta_set(db, "rotation_prev", c->rot.prev);
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fputc('[', f);
	for (i = 0; i < live_nr_cpus(c->lv); i++)
		fprintf(f, "%s{\"cpu\":%d,\"first_seq\":%lld,\"last_seq\":%lld,\"filtered\":%llu}",
			i ? "," : "", seq[i].cpu, (long long)seq[i].first, (long long)seq[i].last,
			(unsigned long long)seq[i].filtered);
	fputc(']', f);
	fclose(f);
	r = buf ? db_meta_set(db, "rotation_seq", buf) : -ENOMEM;
	free(buf);
	return ret ? ret : r;
}

/* PREFIX's directory and basename: @dir "." when it has none. */
static void prefix_split(const char *prefix, char *dir, size_t len, const char **base)
{
	const char *slash = strrchr(prefix, '/');

	if (!slash) {
		snprintf(dir, len, ".");
		*base = prefix;
	} else {
		snprintf(dir, len, "%.*s", slash == prefix ? 1 : (int)(slash - prefix), prefix);
		*base = slash + 1;
	}
}

/* @name is BASE-YYYYmmddTHHMMSSZ[-N].db: its stamp (16 chars at *@stamp) and N (0 for none). */
static bool series_name(const char *name, const char *base, const char **stamp, long *n)
{
	size_t bl = strlen(base);
	const char *s = name + bl + 1, *p;
	char *end;

	if (strncmp(name, base, bl) || name[bl] != '-' || strlen(s) < 19)
		return false;
	if (strspn(s, "0123456789") != 8 || s[8] != 'T' || strspn(s + 9, "0123456789") != 6 ||
	    s[15] != 'Z')
		return false;
	p = s + 16;
	*n = 0;
	if (*p == '-') {
		if (p[1] < '1' || p[1] > '9')
			return false;
		errno = 0;
		*n = strtol(p + 1, &end, 10);
		if (errno)
			return false;
		p = end;
	}
	*stamp = s;
	return !strcmp(p, ".db");
}

struct series_file {
	char	*name;
	char	stamp[17];
	long	n;
};

static int series_cmp(const void *a, const void *b)
{
	const struct series_file *x = a, *y = b;
	int r = strcmp(x->stamp, y->stamp);

	return r ? r : (x->n > y->n) - (x->n < y->n);
}

void rotate_keep(struct capture *c)
{
	struct series_file *files = NULL;
	size_t nr = 0, alloc = 0, i;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	const char *base;
	struct dirent *d;
	DIR *dh;

	if (!c->args.keep)
		return;
	prefix_split(c->args.output, dir, sizeof(dir), &base);
	dh = opendir(dir);
	if (!dh) {
		msg("--keep: cannot list %s: %s", dir, strerror(errno));
		return;
	}
	while ((d = readdir(dh))) {
		const char *stamp;
		long n;

		if (!series_name(d->d_name, base, &stamp, &n))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		/* only our databases (a regular file, our application_id) */
		if (db_file_identify(path) < 0)
			continue;
		if (nr == alloc) {
			struct series_file *more = realloc(files, (alloc = alloc ? 2 * alloc : 16) *
							   sizeof(*files));

			if (!more)
				break;
			files = more;
		}
		files[nr].name = strdup(d->d_name);
		if (!files[nr].name)
			break;
		snprintf(files[nr].stamp, sizeof(files[nr].stamp), "%.16s", stamp);
		files[nr++].n = n;
	}
	closedir(dh);
	qsort(files, nr, sizeof(*files), series_cmp);
	for (i = 0; i + c->args.keep < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (unlink(path) < 0 && errno != ENOENT)
			msg("--keep %u: cannot remove %s: %s", c->args.keep, path, strerror(errno));
	}
	for (i = 0; i < nr; i++)
		free(files[i].name);
	free(files);
}

/* Say why a file of the series failed, and remember the first exit code. */
static void rotate_failed(struct capture *c, int err, const char *what, const char *path)
{
	msg("--rotate: %s %s: %s", what, path, mcr_strerror(err));
	if (!c->rot.rc)
		c->rot.rc = mcr_exit_code(err);
}

/*
 * The file's closing meta and publishing, once it is the capture's alone:
 * complete, its events counted into the summary.
 */
static void rotate_close(struct capture *c, struct db *db, char *tmp, const char *base,
			 uint64_t start_ns, uint64_t end_ns, const struct live_seq *seq, int err)
{
	char path[PATH_MAX + 16];
	struct db_iter *it;
	int ret;

	db_meta_set_int(db, "capture_start_ns", (int64_t)start_ns);
	db_meta_set_int(db, "capture_end_ns", (int64_t)end_ns);
	if (c->warnings[0])
		db_meta_set(db, "warnings", c->warnings);
	ret = err < 0 ? err : rotate_meta_end(c, db, seq);
	if (!ret)
		ret = db_events_finish(db);
	if (ret < 0) {
		char why[160];

		snprintf(why, sizeof(why), "writing the database failed: %s", mcr_strerror(ret));
		db_meta_set(db, "capture_incomplete", why);
		rotate_failed(c, ret, "writing", tmp);
	} else {
		db_meta_set(db, "capture_complete", "1");
	}
	if (db_iter_open(db, &it) >= 0) {
		c->rot.stored += db_iter_count(it);
		db_iter_close(it);
	}
	ret = db_close(db);
	if (ret < 0)
		rotate_failed(c, ret, "closing", tmp);
	ret = rotate_publish(c, tmp, base, path, sizeof(path));
	if (ret < 0) {
		rotate_failed(c, ret, "publishing", base);
		msg("the recording is kept as %s", tmp);
	} else {
		rotate_keep(c);
	}
	free(tmp);
}

void capture_rotate(struct capture *c)
{
	struct live_seq *seq = calloc((size_t)live_nr_cpus(c->lv), sizeof(*seq));
	struct db *old = c->db, *next = NULL;
	char *old_tmp = c->of.tmp, *tmp = NULL, old_base[PATH_MAX];
	uint64_t boundary, old_start = c->rot.start_ns;
	sigset_t stops, sig_old;
	int ret;

	/* the next period counts from its due time, not from when this ran */
	do
		c->rot.due += c->args.rotate_ns;
	while (c->args.rotate_ns && c->rot.due <= now_ns());
	if (!seq)
		return;
	snprintf(old_base, sizeof(old_base), "%s", c->rot.base);
	stop_signals_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &sig_old);
	ret = rotate_create(c, &tmp);
	sigprocmask(SIG_SETMASK, &sig_old, NULL);
	if (ret < 0) {
		rotate_failed(c, ret, "creating the next file after", old_base);
		goto keep_on;
	}
	c->rot.index++;
	ret = db_create(tmp, &next);
	if (!ret)
		ret = capture_db_fill(c, next);
	if (!ret)
		ret = db_meta_set_int(next, "subbuf_size", live_subbuf_size(c->lv));
	if (!ret)
		ret = live_rotate_begin(c->lv, next, &boundary);
	if (ret < 0) {
		rotate_failed(c, ret, "starting", tmp);
		c->rot.index--;
		if (next)
			db_close(next);
		db_file_discard(tmp);
		free(tmp);
		goto keep_on;
	}
	c->db = next;
	c->of.tmp = tmp;
	c->rot.start_ns = boundary;
	ret = live_rotate_end(c->lv, seq);
	rotate_close(c, old, old_tmp, old_base, old_start, boundary, seq, ret);
	free(seq);
	return;
keep_on:
	/* the current file goes on; the next period tries again, a size in a second */
	snprintf(c->rot.base, sizeof(c->rot.base), "%s", old_base);
	if (!c->args.rotate_ns)
		c->rot.due = now_ns() + ROTATE_RETRY_NS;
	free(seq);
}
