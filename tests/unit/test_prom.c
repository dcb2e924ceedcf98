// SPDX-License-Identifier: GPL-2.0
/*
 * test_prom.c - memcg-capture --prom's writer (cli/capture/prom.c): the
 * text format's names and escaping, and the file replaced whole by a rename.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "capture/prom.h"

/* A fresh directory for one test; rm_tmp() empties and removes it. */
static const char *mk_tmp(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/test_prom.XXXXXX");
	return mkdtemp(dir);
}

static void rm_tmp(const char *dir)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

TEST(test_names)
{
	ASSERT(prom_metric_name_ok("memcg_stat_stranded"));
	ASSERT(prom_metric_name_ok("a:b_c9"));
	ASSERT(prom_metric_name_ok("_x"));
	ASSERT(!prom_metric_name_ok(""));
	ASSERT(!prom_metric_name_ok("9lives"));
	ASSERT(!prom_metric_name_ok("memcg-stat"));
	ASSERT(!prom_metric_name_ok("memcg stat"));
	ASSERT(prom_label_name_ok("cgroup"));
	ASSERT(!prom_label_name_ok("a:b"));
	ASSERT(!prom_label_name_ok("__name__"));
	ASSERT(!prom_label_name_ok("1x"));
}

TEST(test_escape_and_format)
{
	char dir[32], path[64];
	const char *got;
	struct prom p;
	struct prom_label l[2] = {
		{ "cgroup", "/a\\b/\"q\"\nz" }, { "line", "total_rss" },
	};
	struct prom_label x = { "line", "x" }, y = { "line", "y" };

	ASSERT(mk_tmp(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	ASSERT_EQ(prom_begin(&p, path), 0);
	/* help text: backslash and newline escaped, quotes not */
	prom_family(&p, "m_total", "counter", "Reads \\ of \"x\"\nsecond line");
	prom_sample_i(&p, "m_total", l, 2, -42);
	prom_family(&p, "g", "gauge", "A gauge");
	prom_sample_d(&p, "g", NULL, 0, 1.5);
	prom_sample_d(&p, "g", &x, 1, NAN);
	prom_sample_d(&p, "g", &y, 1, INFINITY);
	ASSERT_EQ(prom_commit(&p), 0);
	got = slurp(path);
	rm_tmp(dir);
	ASSERT_STR(got,
		   "# HELP m_total Reads \\\\ of \"x\"\\nsecond line\n"
		   "# TYPE m_total counter\n"
		   "m_total{cgroup=\"/a\\\\b/\\\"q\\\"\\nz\",line=\"total_rss\"} -42\n"
		   "# HELP g A gauge\n"
		   "# TYPE g gauge\n"
		   "g 1.5\n"
		   "g{line=\"x\"} NaN\n"
		   "g{line=\"y\"} +Inf\n");
}

/* The old file stays whole until the rename; no FILE.tmp is left either way. */
TEST(test_atomic)
{
	char dir[32], path[64], tmp[80];
	struct prom p;
	struct stat sb;

	ASSERT(mk_tmp(dir, sizeof(dir)));

	snprintf(path, sizeof(path), "%s/a.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ASSERT_EQ(prom_begin(&p, path), 0);
	prom_family(&p, "x", "gauge", "x");
	prom_sample_i(&p, "x", NULL, 0, 1);
	ASSERT_EQ(prom_commit(&p), 0);
	ASSERT(stat(tmp, &sb) < 0 && errno == ENOENT);

	ASSERT_EQ(prom_begin(&p, path), 0);
	prom_family(&p, "x", "gauge", "x");
	prom_sample_i(&p, "x", NULL, 0, 2);
	/* while the new one is written, readers see the old one, and it is in the same directory */
	ASSERT(stat(tmp, &sb) == 0);
	ASSERT_STR(slurp(path), "# HELP x x\n# TYPE x gauge\nx 1\n");
	ASSERT_EQ(prom_commit(&p), 0);
	ASSERT_STR(slurp(path), "# HELP x x\n# TYPE x gauge\nx 2\n");

	/* a bad name is refused and nothing replaces the file */
	ASSERT_EQ(prom_begin(&p, path), 0);
	prom_family(&p, "x", "gauge", "x");
	prom_sample_i(&p, "bad-name", NULL, 0, 3);
	ASSERT_EQ(prom_commit(&p), -EINVAL);
	ASSERT_STR(slurp(path), "# HELP x x\n# TYPE x gauge\nx 2\n");
	ASSERT(stat(tmp, &sb) < 0 && errno == ENOENT);
	{
		struct prom_label bad = { "__name__", "v" };

		ASSERT_EQ(prom_begin(&p, path), 0);
		prom_family(&p, "x", "gauge", "x");
		prom_sample_i(&p, "x", &bad, 1, 3);
		ASSERT_EQ(prom_commit(&p), -EINVAL);
	}
	ASSERT_STR(slurp(path), "# HELP x x\n# TYPE x gauge\nx 2\n");

	/* a directory that is not there: the error, no file */
	snprintf(path, sizeof(path), "%s/no/such.prom", dir);
	ASSERT_EQ(prom_begin(&p, path), -ENOENT);
	rm_tmp(dir);
}

TEST_MAIN(test_names, test_escape_and_format, test_atomic)
