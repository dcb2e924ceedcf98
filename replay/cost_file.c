// SPDX-License-Identifier: GPL-2.0
/*
 * cost_file.c - the calibration file (cost.h): one JSON object,
 *
 *   {"format": "memcg-replay-calibration", "version": 1,
 *    "tool_version": "...", "measured_at": "...", "host": "...",
 *    "cpus": N, "samples": N, "llc_bytes": N, "tree_bytes": N,
 *    "ops": {"pcpu_add": {"ns": X, "lo_ns": X, "hi_ns": X}, ...}}
 *
 * with every operation of enum sim_cost_op, in ns (median, 10th and 90th
 * percentile of the samples).  The reader takes what this writer writes (keys
 * in any order, any white space) and refuses anything without the format
 * tag, a known version and every operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "error.h"

#define COST_FILE_FORMAT	"memcg-replay-calibration"
#define COST_FILE_VERSION	1
#define COST_FILE_MAX		65536

int cost_file_write(FILE *f, const struct sim_cost_calib *c)
{
	unsigned int i;

	fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", COST_FILE_FORMAT,
		COST_FILE_VERSION);
	fprintf(f, "  \"tool_version\": \"%s\",\n  \"measured_at\": \"%s\",\n  \"host\": ",
		c->tool_version, c->measured_at);
	fputc('"', f);
	for (i = 0; c->host[i]; i++)
		if ((unsigned char)c->host[i] >= 0x20 && c->host[i] != '"' && c->host[i] != '\\')
			fputc(c->host[i], f);
	fprintf(f, "\",\n  \"cpus\": %u,\n  \"samples\": %u,\n  \"llc_bytes\": %llu,\n"
		"  \"tree_bytes\": %llu,\n  \"ops\": {\n", c->cpus, c->samples,
		(unsigned long long)c->llc_bytes, (unsigned long long)c->tree_bytes);
	for (i = 0; i < SIM_COST_NR_OPS; i++)
		fprintf(f, "    \"%s\": {\"ns\": %.4f, \"lo_ns\": %.4f, \"hi_ns\": %.4f}%s\n",
			sim_cost_op_name(i), c->t.op[i].ns, c->t.op[i].lo_ns, c->t.op[i].hi_ns,
			i + 1 < SIM_COST_NR_OPS ? "," : "");
	fprintf(f, "  }\n}\n");
	return ferror(f) ? -EIO : 0;
}

/* After "key" and its colon, starting the search at @from: the value's text, or NULL. */
static const char *json_value(const char *from, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(from, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	p += strspn(p, " \t\r\n");
	if (*p != ':')
		return NULL;
	p++;
	return p + strspn(p, " \t\r\n");
}

struct cost_why {
	char	*buf;
	size_t	len;
};

static int cost_bad(const struct cost_why *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int cost_bad(const struct cost_why *w, const char *fmt, ...)
{
	va_list ap;

	if (w->buf && w->len) {
		va_start(ap, fmt);
		vsnprintf(w->buf, w->len, fmt, ap);
		va_end(ap);
	}
	return -MCR_E_BAD_INPUT;
}

/* "key": a finite number >= 0 into *@out; -ENOENT when absent. */
static int json_number(const char *from, const char *key, double *out, const struct cost_why *w)
{
	const char *v = json_value(from, key);
	char *end;

	if (!v)
		return -ENOENT;
	errno = 0;
	*out = strtod(v, &end);
	if (end == v)
		return cost_bad(w, "%s: not a number", key);
	if (errno || !isfinite(*out) || *out < 0)
		return cost_bad(w, "%s = %.*s: not a finite number >= 0", key, (int)(end - v), v);
	return 0;
}

/*
 * An optional whole number of the header into *@out: at most @max, which
 * keeps the conversion defined (a double above an integer type's range
 * converts to anything).
 */
static int json_count(const char *from, const char *key, double max, uint64_t *out,
		      const struct cost_why *w)
{
	double d;
	int err = json_number(from, key, &d, w);

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (d > max || d != floor(d))
		return cost_bad(w, "%s = %g: not a whole number in [0, %.0f]", key, d, max);
	*out = (uint64_t)d;
	return 0;
}

static void json_string(const char *from, const char *key, char *buf, size_t len)
{
	const char *v = json_value(from, key), *e;

	buf[0] = 0;
	if (!v || *v != '"' || !(e = strchr(v + 1, '"')))
		return;
	snprintf(buf, len, "%.*s", (int)(e - v - 1), v + 1);
}

/*
 * Header bounds: the contended add runs one thread per online CPU (at most
 * 8192, NR_CPUS of MAXSMP), samples are an unsigned int, and byte sizes are
 * whole numbers a double holds exactly (2^53).
 */
#define COST_FILE_MAX_CPUS	8192
#define COST_FILE_MAX_BYTES	9007199254740992.0

static int cost_parse(const char *s, struct sim_cost_calib *out, const struct cost_why *w)
{
	const char *ops, *v, *field;
	uint64_t n;
	double d;
	unsigned int i;
	int err;

	v = json_value(s, "format");
	if (!v || strncmp(v, "\"" COST_FILE_FORMAT "\"", strlen(COST_FILE_FORMAT) + 2))
		return cost_bad(w, "format: not \"%s\"", COST_FILE_FORMAT);
	err = json_number(s, "version", &d, w);
	if (err == -ENOENT || (!err && d != COST_FILE_VERSION))
		return cost_bad(w, "version: not %d", COST_FILE_VERSION);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	json_string(s, "tool_version", out->tool_version, sizeof(out->tool_version));
	json_string(s, "measured_at", out->measured_at, sizeof(out->measured_at));
	json_string(s, "host", out->host, sizeof(out->host));
	n = 0;
	err = json_count(s, "cpus", COST_FILE_MAX_CPUS, &n, w);
	out->cpus = (unsigned int)n;
	n = 0;
	if (!err)
		err = json_count(s, "samples", UINT32_MAX, &n, w);
	out->samples = (unsigned int)n;
	if (!err)
		err = json_count(s, "llc_bytes", COST_FILE_MAX_BYTES, &out->llc_bytes, w);
	if (!err)
		err = json_count(s, "tree_bytes", COST_FILE_MAX_BYTES, &out->tree_bytes, w);
	if (err)
		return err;
	ops = json_value(s, "ops");
	if (!ops || *ops != '{')
		return cost_bad(w, "ops: missing");
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		const char *op = json_value(ops, sim_cost_op_name(i));
		struct sim_cost_figure *fig = &out->t.op[i];

		if (!op || *op != '{')
			return cost_bad(w, "ops.%s: missing", sim_cost_op_name(i));
		err = json_number(op, "ns", &fig->ns, w);
		if (!err)
			err = json_number(op, "lo_ns", &fig->lo_ns, w);
		if (!err)
			err = json_number(op, "hi_ns", &fig->hi_ns, w);
		if (err == -ENOENT)
			return cost_bad(w, "ops.%s: ns, lo_ns or hi_ns missing",
					sim_cost_op_name(i));
		if (err) {
			/* name the operation too: "ops.walk_step.ns = ..." */
			if (w->buf && w->len) {
				char tail[160];

				snprintf(tail, sizeof(tail), "%s", w->buf);
				cost_bad(w, "ops.%s.%s", sim_cost_op_name(i), tail);
			}
			return err;
		}
	}
	if (sim_cost_table_check(&out->t, &i, &field)) {
		const struct sim_cost_figure *f = &out->t.op[i];
		double x = !strcmp(field, "ns") ? f->ns :
			   !strcmp(field, "lo_ns") ? f->lo_ns : f->hi_ns;

		if (x > SIM_COST_NS_MAX)
			return cost_bad(w, "ops.%s.%s = %g: above %g ns, no measurement of"
					" one operation", sim_cost_op_name(i), field, x,
					SIM_COST_NS_MAX);
		return cost_bad(w, "ops.%s: lo_ns %g <= ns %g <= hi_ns %g does not hold (the 10th"
				" and 90th percentile around the median)", sim_cost_op_name(i),
				f->lo_ns, f->ns, f->hi_ns);
	}
	return 0;
}

/* @path opened for reading, if it is a regular file: a FIFO would block, a directory fail late. */
static FILE *cost_file_open(const char *path, int *err)
{
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (fstat(fd, &st) < 0)
		*err = -errno;
	else if (!S_ISREG(st.st_mode))
		*err = S_ISDIR(st.st_mode) ? -EISDIR : -MCR_E_BAD_INPUT;
	else
		*err = 0;
	if (*err) {
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		*err = -errno;
		close(fd);
	}
	return f;
}

/**
 * cost_file_read() - load a calibration file
 * Return: 0; -errno when it cannot be read (-EISDIR for a directory);
 * -MCR_E_BAD_INPUT when it is not a calibration of this format (version, a
 * missing operation, a bad number, a figure sim_cost_table_check() refuses),
 * with the field named in @why, or not a regular file (a FIFO).
 */
int cost_file_read(const char *path, struct sim_cost_calib *out)
{
	return cost_file_read_why(path, out, NULL, 0);
}

int cost_file_read_why(const char *path, struct sim_cost_calib *out, char *why, size_t len)
{
	struct cost_why w = { why, len };
	char *buf;
	size_t n;
	FILE *f;
	int err;

	f = cost_file_open(path, &err);
	if (!f)
		return err;
	buf = malloc(COST_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, COST_FILE_MAX + 1, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (why && len)
		*why = '\0';
	if (!err && n > COST_FILE_MAX)
		err = cost_bad(&w, "larger than %d bytes", COST_FILE_MAX);
	if (!err) {
		buf[n] = 0;
		err = strlen(buf) == n ? cost_parse(buf, out, &w) :
		      cost_bad(&w, "holds a NUL byte");
	}
	free(buf);
	return err;
}
