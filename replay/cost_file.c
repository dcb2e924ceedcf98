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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int json_number(const char *from, const char *key, double *out)
{
	const char *v = json_value(from, key);
	char *end;

	if (!v)
		return -MCR_E_BAD_INPUT;
	errno = 0;
	*out = strtod(v, &end);
	if (end == v || errno || !isfinite(*out) || *out < 0)
		return -MCR_E_BAD_INPUT;
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

static int cost_parse(const char *s, struct sim_cost_calib *out)
{
	const char *ops, *v;
	double d;
	unsigned int i;
	int err;

	v = json_value(s, "format");
	if (!v || strncmp(v, "\"" COST_FILE_FORMAT "\"", strlen(COST_FILE_FORMAT) + 2))
		return -MCR_E_BAD_INPUT;
	if (json_number(s, "version", &d) || d != COST_FILE_VERSION)
		return -MCR_E_BAD_INPUT;
	memset(out, 0, sizeof(*out));
	json_string(s, "tool_version", out->tool_version, sizeof(out->tool_version));
	json_string(s, "measured_at", out->measured_at, sizeof(out->measured_at));
	json_string(s, "host", out->host, sizeof(out->host));
	if (!json_number(s, "cpus", &d))
		out->cpus = (unsigned int)d;
	if (!json_number(s, "samples", &d))
		out->samples = (unsigned int)d;
	if (!json_number(s, "llc_bytes", &d))
		out->llc_bytes = (uint64_t)d;
	if (!json_number(s, "tree_bytes", &d))
		out->tree_bytes = (uint64_t)d;
	ops = json_value(s, "ops");
	if (!ops || *ops != '{')
		return -MCR_E_BAD_INPUT;
	for (i = 0; i < SIM_COST_NR_OPS; i++) {
		const char *op = json_value(ops, sim_cost_op_name(i));
		struct sim_cost_figure *fig = &out->t.op[i];

		if (!op || *op != '{')
			return -MCR_E_BAD_INPUT;
		err = json_number(op, "ns", &fig->ns);
		if (!err)
			err = json_number(op, "lo_ns", &fig->lo_ns);
		if (!err)
			err = json_number(op, "hi_ns", &fig->hi_ns);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cost_file_read() - load a calibration file
 * Return: 0; -errno when it cannot be read; -MCR_E_BAD_INPUT when it is not a
 * calibration of this format (version, a missing operation, a bad number).
 */
int cost_file_read(const char *path, struct sim_cost_calib *out)
{
	char *buf;
	size_t n;
	FILE *f;
	int err;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	buf = malloc(COST_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, COST_FILE_MAX + 1, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!err && n > COST_FILE_MAX)
		err = -MCR_E_BAD_INPUT;
	if (!err) {
		buf[n] = 0;
		err = strlen(buf) == n ? cost_parse(buf, out) : -MCR_E_BAD_INPUT;
	}
	free(buf);
	return err;
}
