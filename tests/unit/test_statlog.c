// SPDX-License-Identifier: GPL-2.0
/*
 * test_statlog.c - the memory.stat read log (capture/statlog.c): a good log
 * parses into its cgroups, reads and lines as printed; every truncation of it
 * and every garbled record is refused as damaged (-MCR_E_CORRUPT) or as
 * impossible (-MCR_E_BAD_INPUT) with a sentence naming the line, never
 * accepted half; and a printed line becomes the stat_reads row it should.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../harness.h"
#include "error.h"
#include "statlog.h"

static const char good[] =
	"memcg-statlog 1\n"
	"clock mono\n"
	"cgroup 4242 1 /sys/fs/cgroup/memory/a P\n"
	"read 0 4242 1000 2000 3\n"
	"\tcache 1048576\n"
	"\ttotal_pgfault 77\n"
	"\thierarchical_memory_limit 9223372036854771712\n"
	"cgroup 99 1 /sys/fs/cgroup/memory/b\n"
	"read 1 99 3000 3000 0\n"
	"read 5 4242 4000 5000 2\n"
	"\ttotal_rss 4096\n"
	"\t\n";

TEST(statlog_parses_good)
{
	char why[256] = "";
	struct statlog log;

	ASSERT_EQ(statlog_parse(good, strlen(good), &log, why, sizeof(why)), 0);
	ASSERT_STR(log.clock, "mono");
	ASSERT_EQU(log.nr_cg, 2);
	ASSERT_EQU(log.cg[0].id, 4242);
	ASSERT_EQ(log.cg[0].version, 1);
	ASSERT_STR(log.cg[0].path, "/sys/fs/cgroup/memory/a P");	/* the rest of the line */
	ASSERT_EQU(log.nr_rd, 3);
	ASSERT_EQ(log.rd[0].read, 0);
	ASSERT_EQU(log.rd[0].ts_before, 1000);
	ASSERT_EQU(log.rd[0].ts_after, 2000);
	ASSERT_EQU(log.rd[0].n, 3);
	ASSERT_STR(log.ln[log.rd[0].first + 1].text, "total_pgfault 77");
	ASSERT_EQU(log.rd[1].n, 0);
	ASSERT_EQ(log.rd[2].read, 5);
	ASSERT_EQU(log.rd[2].cgroup, 4242);
	ASSERT_EQU(log.rd[2].n, 2);
	ASSERT_EQU(log.ln[log.rd[2].first + 1].len, 0);	/* an empty line, as printed */
	ASSERT_EQU(log.nr_ln, 5);
	statlog_free(&log);
}

/* Every prefix of the good log but the whole: refused, never half accepted. */
TEST(statlog_every_truncation_refused)
{
	size_t len = strlen(good), cut;

	for (cut = 0; cut < len; cut++) {
		char why[256] = "";
		struct statlog log;
		int ret = statlog_parse(good, cut, &log, why, sizeof(why));

		/* a cut at a read's end leaves a shorter good log */
		if (!ret) {
			ASSERT(cut > 0 && good[cut - 1] == '\n');
			statlog_free(&log);
			continue;
		}
		if (ret != -MCR_E_CORRUPT && ret != -MCR_E_BAD_INPUT)
			FAILF("cut at %zu: %d", cut, ret);
		if (!why[0])
			FAILF("cut at %zu: no reason", cut);
		ASSERT(!log.buf && !log.rd);
	}
}

struct bad_case {
	const char	*log;
	int		err;
	const char	*why;	/* a part of the reason */
};

TEST(statlog_bad_records)
{
	static const struct bad_case cases[] = {
		{ "", -MCR_E_CORRUPT, "empty" },
		{ "trace-cmd 1\nclock mono\n", -MCR_E_CORRUPT, "line 1: not a memcg-statlog" },
		{ "memcg-statlog 2\nclock mono\n", -MCR_E_CORRUPT, "log format 2" },
		{ "memcg-statlog 1\n", -MCR_E_CORRUPT, "no 'clock NAME'" },
		{ "memcg-statlog 1\nclock Mo no\n", -MCR_E_CORRUPT, "line 2" },
		{ "memcg-statlog 1\nclock mono\n", -MCR_E_BAD_INPUT, "no read" },
		{ "memcg-statlog 1\nclock mono\ncgroup x 1 /a\n", -MCR_E_CORRUPT, "line 3" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 3 /a\n", -MCR_E_BAD_INPUT, "version 3" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 a\n", -MCR_E_BAD_INPUT, "absolute" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\ncgroup 5 2 /a\n", -MCR_E_BAD_INPUT,
		  "declared again" },
		{ "memcg-statlog 1\nclock mono\nread 0 5 1 2 0\n", -MCR_E_BAD_INPUT,
		  "no earlier 'cgroup' line" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 9 2 0\n", -MCR_E_BAD_INPUT,
		  "ends (2) before it begins (9)" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 1 5 1 2 0\nread 1 5 3 4 0\n",
		  -MCR_E_BAD_INPUT, "increasing order" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 99999\n",
		  -MCR_E_BAD_INPUT, "at most" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 2\n\tcache 1\n",
		  -MCR_E_CORRUPT, "1 of its 2 lines" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 2\n\tcache 1\nrss 2\n",
		  -MCR_E_CORRUPT, "line 6: read 0 has 1 of its 2 lines" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 0\n\tcache 1\n",
		  -MCR_E_CORRUPT, "line 5" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2\n", -MCR_E_CORRUPT,
		  "not 'read N ID BEFORE AFTER LINES'" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 99999999999999999999 0\n",
		  -MCR_E_CORRUPT, "line 4" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 -1 2 0\n", -MCR_E_CORRUPT,
		  "line 4" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 0 \n", -MCR_E_CORRUPT,
		  "line 4" },
		{ "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\nread 0 5 1 2 0", -MCR_E_CORRUPT,
		  "truncated" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		struct statlog log;
		int ret = statlog_parse(cases[i].log, strlen(cases[i].log), &log, why, sizeof(why));

		if (ret != cases[i].err)
			FAILF("case %zu: %d, not %d (%s)", i, ret, cases[i].err, why);
		if (!strstr(why, cases[i].why))
			FAILF("case %zu: '%s' does not say '%s'", i, why, cases[i].why);
	}
}

TEST(statlog_nul_refused)
{
	static const char nul[] = "memcg-statlog 1\nclock mono\ncgroup 5 1 /a\0b\n";
	char why[256] = "";
	struct statlog log;

	ASSERT_EQ(statlog_parse(nul, sizeof(nul) - 1, &log, why, sizeof(why)), -MCR_E_CORRUPT);
	ASSERT(strstr(why, "line 3: a NUL byte"));
}

/* Each byte of the good log replaced by each of a few others: a clear verdict each time. */
TEST(statlog_garbled_bytes)
{
	static const char subst[] = { 'x', ' ', '\n', '\t', '9', '-', '\0' };
	size_t len = strlen(good), at, k;
	char buf[sizeof(good)];

	for (at = 0; at < len; at++) {
		for (k = 0; k < sizeof(subst); k++) {
			char why[256] = "";
			struct statlog log;
			int ret;

			memcpy(buf, good, len);
			buf[at] = subst[k];
			ret = statlog_parse(buf, len, &log, why, sizeof(why));
			if (!ret) {
				statlog_free(&log);
				continue;	/* still a log (a digit or a printed byte) */
			}
			if (ret != -MCR_E_CORRUPT && ret != -MCR_E_BAD_INPUT)
				FAILF("byte %zu as %d: %d", at, subst[k], ret);
			if (!why[0])
				FAILF("byte %zu as %d: no reason", at, subst[k]);
		}
	}
}

TEST(statlog_line_rows)
{
	char name[STATLOG_NAME_MAX];
	struct db_stat_line l;

	statlog_line_row(1, "total_rss 4096", 14, name, sizeof(name), &l);
	ASSERT_STR(l.name, "total_rss");
	ASSERT(l.has_value);
	ASSERT_EQ(l.value, 4096);
	ASSERT_STR(l.unit, "bytes");
	statlog_line_row(1, "total_pgfault 7 and more", 24, name, sizeof(name), &l);
	ASSERT_STR(l.name, "total_pgfault");
	ASSERT(!l.has_value);
	ASSERT_STR(l.unit, "count");
	statlog_line_row(2, "anon 18446744073709551615", 25, name, sizeof(name), &l);
	ASSERT_STR(l.name, "anon");
	ASSERT(!l.has_value);		/* above 2^63: kept as printed, no value */
	statlog_line_row(2, "no_such_line 5", 14, name, sizeof(name), &l);
	ASSERT(l.has_value);
	ASSERT(!l.unit);
	statlog_line_row(1, "", 0, name, sizeof(name), &l);
	ASSERT_STR(l.name, "");
	ASSERT(!l.has_value);
}

TEST_MAIN(statlog_parses_good, statlog_every_truncation_refused, statlog_bad_records,
	  statlog_nul_refused, statlog_garbled_bytes, statlog_line_rows)
