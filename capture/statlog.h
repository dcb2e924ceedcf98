/* SPDX-License-Identifier: GPL-2.0 */
/*
 * statlog.h - the memory.stat read log (memcg-statlog writes it, import
 * --stat-log reads it) and the one way a printed line becomes a stat_reads
 * row, shared with memcg-capture --read.
 *
 * The log, format 1: text, one record a line, fields separated by one blank,
 * numbers in decimal, every line ending in '\n':
 *
 *   memcg-statlog 1                      first line: the format and its version
 *   clock NAME                           second line: the trace clock of the times
 *   cgroup ID V PATH                     a cgroup read: its id (the inode of its
 *                                        directory, as the tracepoints name it),
 *                                        cgroup version V (1 or 2), its path (the
 *                                        rest of the line); before its reads
 *   read N ID BEFORE AFTER LINES         read N (from 0, increasing) of cgroup ID:
 *                                        the clock just before and just after
 *                                        the first read() of memory.stat (ns),
 *                                        then LINES lines:
 *   <TAB>LINE                            each line of memory.stat as printed
 *
 * A log ending inside a record or a read is truncated.  Parsing, checking
 * and storing never print; errors come with a sentence naming the line.
 */
#ifndef MCR_STATLOG_H
#define MCR_STATLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

#define STATLOG_MAGIC		"memcg-statlog"
#define STATLOG_VERSION		1
#define STATLOG_MAX_LINES	4096	/* lines of one read */
#define STATLOG_NAME_MAX	128	/* a line's name, as stored */

struct statlog_cgroup {
	uint64_t	id;
	int		version;
	const char	*path;		/* into the log's buffer, NUL-terminated */
};

struct statlog_read {
	int64_t		read;
	uint64_t	cgroup;
	int		version;	/* of its cgroup */
	uint64_t	ts_before, ts_after;
	size_t		first, n;	/* its lines: lines[first .. first + n) */
};

struct statlog_line {
	const char	*text;		/* as printed, NUL-terminated (no newline) */
	size_t		len;
};

struct statlog {
	char			clock[32];
	struct statlog_cgroup	*cg;
	size_t			nr_cg;
	struct statlog_read	*rd;
	size_t			nr_rd;
	struct statlog_line	*ln;
	size_t			nr_ln;
	char			*buf;	/* the log, its newlines made NULs */
};

/*
 * statlog_parse - parse the log in @buf (@len bytes; the parser takes a copy)
 * into @log.  Returns 0; -MCR_E_CORRUPT for a log that is not one or is
 * damaged (no header, truncated, a garbled or unknown record, a byte NUL);
 * -MCR_E_BAD_INPUT for well-formed values that cannot be (AFTER before
 * BEFORE, reads out of order, a read of an undeclared cgroup, no read at
 * all); -ENOMEM.  On error @why says what and on which line of the log.
 */
int statlog_parse(const char *buf, size_t len, struct statlog *log, char *why, size_t why_len);
/* statlog_load - the file @path read and parsed; its open/read errors as -errno. */
int statlog_load(const char *path, struct statlog *log, char *why, size_t why_len);
void statlog_free(struct statlog *log);

/*
 * statlog_store - the log's reads into @db's stat_reads, in one transaction
 * of its own.  The log must fit the trace: its clock is meta trace_clock
 * (-MCR_E_BAD_INPUT otherwise), each cgroup is in the cgroups table and of
 * the trace's cgroup version (meta cgroup_version, set from the log where
 * the trace does not say).  @why as statlog_parse()'s.
 */
int statlog_store(struct db *db, const struct statlog *log, char *why, size_t why_len);

/*
 * statlog_line_row - one printed line of a cgroup v@version memory.stat as
 * a stat_reads row: @l gets the line, its name (into @name, @name_len bytes),
 * its value when the line is "name value" with a value below 2^63, and its
 * unit when sim/statlines.c knows the line.
 */
void statlog_line_row(int version, const char *line, size_t len, char *name, size_t name_len,
		      struct db_stat_line *l);

#endif
