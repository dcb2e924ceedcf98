// SPDX-License-Identifier: GPL-2.0
/*
 * statlog.c - the memory.stat read log of memcg-statlog (format: statlog.h):
 * parsed, checked against the trace it goes with, stored as stat_reads rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "error.h"
#include "statlines.h"
#include "statlog.h"

#define STATLOG_MAX_BYTES	(1ull << 31)	/* a log larger than this is not one */

static int __attribute__((format(printf, 4, 5)))
why_set(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

void statlog_line_row(int version, const char *line, size_t len, char *name, size_t name_len,
		      struct db_stat_line *l)
{
	struct statline_ref ref;
	uint64_t v;
	int ret;

	l->line = line;
	l->len = len;
	l->name = name;
	l->has_value = false;
	l->value = 0;
	l->unit = NULL;
	ret = statline_parse(line, len, name, name_len, &v);
	if (ret == -EINVAL || ret == -ERANGE) {
		/* not "name value" or too long a name: the first field, as it fits */
		size_t n = strcspn(line, " \n");

		if (n > len)
			n = len;
		if (n >= name_len)
			n = name_len - 1;
		memcpy(name, line, n);
		name[n] = '\0';
	} else if (v <= INT64_MAX) {
		l->has_value = true;
		l->value = (int64_t)v;
	}
	if (!statline_lookup(version, name, &ref))
		l->unit = statline_unit_name(ref.line->unit);
}

/* A decimal field without sign or leading blank, below 2^63; false if not one. */
static bool num_field(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return true;
}

/* " N" fields: each one blank then a number; false if the line does not have them. */
static bool num_fields(const char *s, uint64_t *v, int n, bool rest)
{
	int i;

	for (i = 0; i < n; i++) {
		if (*s++ != ' ' || !num_field(&s, &v[i]))
			return false;
	}
	return rest ? *s == ' ' : !*s;
}

static const struct statlog_cgroup *statlog_cg(const struct statlog *log, uint64_t id)
{
	size_t i;

	for (i = 0; i < log->nr_cg; i++)
		if (log->cg[i].id == id)
			return &log->cg[i];
	return NULL;
}

void statlog_free(struct statlog *log)
{
	free(log->cg);
	free(log->rd);
	free(log->ln);
	free(log->buf);
	memset(log, 0, sizeof(*log));
}

int statlog_parse(const char *in, size_t len, struct statlog *log, char *why, size_t why_len)
{
	size_t cap_cg = 0, cap_rd = 0, cap_ln = 0, off = 0, want = 0, lineno = 0;
	struct statlog_read *cur = NULL;
	char *buf;
	int err = 0;

	memset(log, 0, sizeof(*log));
	/* a file of another kind is named so, not by its first odd byte */
	if (len > strlen(STATLOG_MAGIC) && strncmp(in, STATLOG_MAGIC " ", strlen(STATLOG_MAGIC) + 1))
		return why_set(why, why_len, -MCR_E_CORRUPT, "line 1: not a " STATLOG_MAGIC
			       " log (it starts '" STATLOG_MAGIC " VERSION')");
	if (memchr(in, '\0', len)) {
		size_t at = (size_t)((const char *)memchr(in, '\0', len) - in);
		size_t i, nl = 1;

		for (i = 0; i < at; i++)
			nl += in[i] == '\n';
		return why_set(why, why_len, -MCR_E_CORRUPT, "line %zu: a NUL byte (not a text log)",
			       nl);
	}
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, in, len);
	buf[len] = '\0';
	log->buf = buf;
	while (off < len && !err) {
		char *s = buf + off, *nl = memchr(s, '\n', len - off);
		uint64_t v[5];

		lineno++;
		if (!nl) {
			err = why_set(why, why_len, -MCR_E_CORRUPT,
				      "line %zu: truncated (the log ends inside it, without a newline)",
				      lineno);
			break;
		}
		*nl = '\0';
		off = (size_t)(nl - buf) + 1;
		if (lineno == 1) {
			char magic[] = STATLOG_MAGIC " ";

			if (strncmp(s, magic, strlen(magic)) ||
			    !num_fields(s + strlen(STATLOG_MAGIC), v, 1, false))
				err = why_set(why, why_len, -MCR_E_CORRUPT, "line 1: not a "
					      STATLOG_MAGIC " log (it starts '" STATLOG_MAGIC
					      " VERSION')");
			else if (v[0] != STATLOG_VERSION)
				err = why_set(why, why_len, -MCR_E_CORRUPT,
					      "line 1: log format %" PRIu64 ", this build reads "
					      "format %d", v[0], STATLOG_VERSION);
			continue;
		}
		if (want) {	/* a line of the current read */
			if (*s != '\t') {
				err = why_set(why, why_len, -MCR_E_CORRUPT,
					      "line %zu: read %" PRId64 " has %zu of its %zu lines; "
					      "this one does not start with a tab", lineno,
					      cur->read, cur->n, cur->n + want);
				break;
			}
			if (mcr_grow((void **)&log->ln, &cap_ln, log->nr_ln + 1, sizeof(*log->ln))) {
				err = -ENOMEM;
				break;
			}
			log->ln[log->nr_ln++] = (struct statlog_line){ s + 1, (size_t)(nl - s - 1) };
			cur->n++;
			want--;
			continue;
		}
		if (lineno == 2) {
			const char *c = s + 6;

			if (strncmp(s, "clock ", 6) || !*c || strlen(c) >= sizeof(log->clock) ||
			    strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(c))
				err = why_set(why, why_len, -MCR_E_CORRUPT,
					      "line 2: not 'clock NAME' (NAME a trace clock)");
			else
				strcpy(log->clock, c);
			continue;
		}
		if (!strncmp(s, "cgroup ", 7)) {
			const struct statlog_cgroup *old;
			const char *p = s + 6;

			if (!num_fields(p, v, 2, true)) {
				err = why_set(why, why_len, -MCR_E_CORRUPT,
					      "line %zu: not 'cgroup ID VERSION PATH'", lineno);
				break;
			}
			p = strchr(strchr(p + 1, ' ') + 1, ' ') + 1;
			if (!v[0] || (v[1] != 1 && v[1] != 2) || *p != '/') {
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: cgroup id %" PRIu64 " version %" PRIu64
					      " path '%.64s': an id > 0, version 1 or 2 and an "
					      "absolute path", lineno, v[0], v[1], p);
				break;
			}
			old = statlog_cg(log, v[0]);
			if (old && (old->version != (int)v[1] || strcmp(old->path, p))) {
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: cgroup id %" PRIu64 " declared again as "
					      "another (%.64s)", lineno, v[0], p);
				break;
			}
			if (old)
				continue;
			if (mcr_grow((void **)&log->cg, &cap_cg, log->nr_cg + 1, sizeof(*log->cg))) {
				err = -ENOMEM;
				break;
			}
			log->cg[log->nr_cg++] = (struct statlog_cgroup){ v[0], (int)v[1], p };
			continue;
		}
		if (!strncmp(s, "read ", 5)) {
			const struct statlog_cgroup *cg;

			if (!num_fields(s + 4, v, 5, false)) {
				err = why_set(why, why_len, -MCR_E_CORRUPT,
					      "line %zu: not 'read N ID BEFORE AFTER LINES'", lineno);
				break;
			}
			cg = statlog_cg(log, v[1]);
			if (!cg)
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: read %" PRIu64 " of cgroup id %" PRIu64
					      ", which no earlier 'cgroup' line declares", lineno,
					      v[0], v[1]);
			else if (v[3] < v[2])
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: read %" PRIu64 " ends (%" PRIu64 ") before "
					      "it begins (%" PRIu64 ")", lineno, v[0], v[3], v[2]);
			else if (log->nr_rd && (int64_t)v[0] <= log->rd[log->nr_rd - 1].read)
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: read %" PRIu64 " after read %" PRId64
					      " (reads are numbered in increasing order)", lineno,
					      v[0], log->rd[log->nr_rd - 1].read);
			else if (v[4] > STATLOG_MAX_LINES)
				err = why_set(why, why_len, -MCR_E_BAD_INPUT,
					      "line %zu: read %" PRIu64 " of %" PRIu64 " lines (at "
					      "most %d)", lineno, v[0], v[4], STATLOG_MAX_LINES);
			if (err)
				break;
			if (mcr_grow((void **)&log->rd, &cap_rd, log->nr_rd + 1, sizeof(*log->rd))) {
				err = -ENOMEM;
				break;
			}
			cur = &log->rd[log->nr_rd++];
			*cur = (struct statlog_read){ .read = (int64_t)v[0], .cgroup = v[1],
						      .version = cg->version, .ts_before = v[2],
						      .ts_after = v[3], .first = log->nr_ln };
			want = v[4];
			continue;
		}
		err = why_set(why, why_len, -MCR_E_CORRUPT,
			      "line %zu: '%.32s%s' is no record of the log (cgroup, read, or a "
			      "tab and a printed line)", lineno, s, strlen(s) > 32 ? "..." : "");
	}
	if (!err && lineno < 2)
		err = why_set(why, why_len, -MCR_E_CORRUPT, "%s", lineno ?
			      "truncated after its first line (no 'clock NAME')" :
			      "empty: not a " STATLOG_MAGIC " log");
	if (!err && want)
		err = why_set(why, why_len, -MCR_E_CORRUPT, "truncated: read %" PRId64 " ends after "
			      "%zu of its %zu lines", cur->read, cur->n, cur->n + want);
	if (!err && !log->nr_rd)
		err = why_set(why, why_len, -MCR_E_BAD_INPUT, "holds no read");
	if (err)
		statlog_free(log);
	return err;
}

int statlog_load(const char *path, struct statlog *log, char *why, size_t why_len)
{
	struct stat st;
	size_t have = 0;
	char *buf;
	int fd, err;

	memset(log, 0, sizeof(*log));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_size > STATLOG_MAX_BYTES) {
		close(fd);
		return why_set(why, why_len, -MCR_E_BAD_INPUT, "%lld bytes: more than any log "
			       "of one recording (2 GiB)", (long long)st.st_size);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	err = 0;
	while (have < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + have, (size_t)st.st_size - have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;	/* shorter than its size said: parsed as it is */
		have += (size_t)got;
	}
	close(fd);
	if (!err)
		err = statlog_parse(buf, have, log, why, why_len);
	free(buf);
	return err;
}

struct cg_find {
	uint64_t	id;
	bool		found;
};

static int cg_find_row(const struct db_cgroup *cg, void *arg)
{
	struct cg_find *f = arg;

	if (cg->id == f->id)
		f->found = true;
	return 0;
}

int statlog_store(struct db *db, const struct statlog *log, char *why, size_t why_len)
{
	struct db_stat_line *lines = NULL;
	char *clock = NULL, *names = NULL;
	int64_t version = 0;
	size_t i, j;
	int err;

	err = db_meta_get(db, "trace_clock", &clock);
	if (err == -ENOENT)
		return why_set(why, why_len, -MCR_E_BAD_INPUT, "the trace does not say its clock "
			       "(meta trace_clock): the log's times (clock %s) cannot be matched",
			       log->clock);
	if (err)
		return err;
	if (strcmp(clock, log->clock)) {
		err = why_set(why, why_len, -MCR_E_BAD_INPUT, "clock %s, but the trace was recorded "
			      "with clock %s: record with trace-cmd record -C %s, or log with "
			      "memcg-statlog --clock %s", log->clock, clock, log->clock, clock);
		free(clock);
		return err;
	}
	free(clock);
	err = db_meta_get_int(db, "cgroup_version", &version);
	if (err && err != -ENOENT)
		return err;
	for (i = 0; i < log->nr_cg; i++) {
		const struct statlog_cgroup *cg = &log->cg[i];
		struct cg_find f = { cg->id, false };

		if (version && cg->version != version)
			return why_set(why, why_len, -MCR_E_BAD_INPUT, "cgroup %s is of cgroup "
				       "v%d, the trace's memory hierarchy is v%" PRId64, cg->path,
				       cg->version, version);
		version = cg->version;
		err = db_cgroups_foreach(db, cg_find_row, &f);
		if (err)
			return err;
		if (!f.found)
			return why_set(why, why_len, -MCR_E_BAD_INPUT, "cgroup %s (id %" PRIu64
				       ") is not one of the trace's cgroups (created before the "
				       "recording? import on its host with --cgroupfs)", cg->path,
				       cg->id);
	}
	lines = calloc(STATLOG_MAX_LINES, sizeof(*lines));
	names = malloc((size_t)STATLOG_MAX_LINES * STATLOG_NAME_MAX);
	if (!lines || !names) {
		free(lines);
		free(names);
		return -ENOMEM;
	}
	err = db_begin(db);
	err = err ?: db_meta_set_int(db, "cgroup_version", version);
	for (i = 0; i < log->nr_rd && !err; i++) {
		const struct statlog_read *r = &log->rd[i];
		struct db_stat_read rd = { .read = r->read, .cgroup = r->cgroup,
					   .ts_before = r->ts_before, .ts_after = r->ts_after };

		for (j = 0; j < r->n; j++)
			statlog_line_row(r->version, log->ln[r->first + j].text,
					 log->ln[r->first + j].len, names + j * STATLOG_NAME_MAX,
					 STATLOG_NAME_MAX, &lines[j]);
		err = db_stat_read_put(db, &rd, lines, r->n);
	}
	if (!err)
		err = db_commit(db);
	else
		db_rollback(db);
	free(lines);
	free(names);
	return err;
}
