// SPDX-License-Identifier: GPL-2.0
/*
 * truth.c - the true_order table: where, inside each lock window, the
 * synthetic kernel of synth --hidden-order made each update, for tests and
 * benchmarks to compare the inferred order with.  Replay never reads it.
 */
#include <errno.h>

#include "db.h"
#include "db_local.h"
#include "error.h"

static const char db_true_order_sql[] =
"CREATE TABLE IF NOT EXISTS true_order (\n"
"	-- synth: for each update made inside a lock window whose visits include a node of the\n"
"	-- update's ancestor path, where the synthetic kernel made it.  Hidden from replay (it\n"
"	-- never reads this table); tests compare the order replay infers with it.  Empty unless\n"
"	-- synth --hidden-order=1.\n"
"	cpu	INTEGER NOT NULL,	-- the update's events.cpu\n"
"	seq	INTEGER NOT NULL,	-- the update's events.seq\n"
"	visits	INTEGER NOT NULL,	-- visits of the window (children first) made before the update\n"
"	lo	INTEGER NOT NULL,	-- every count of visits in [lo, hi] is the same order for this\n"
"	hi	INTEGER NOT NULL,	-- update: no visit of its own path lies between them\n"
"	PRIMARY KEY (cpu, seq)\n"
") WITHOUT ROWID;\n";

int db_true_order_put(struct db *db, const struct db_true_order *rows, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int err;

	err = db_bulk_begin(db);
	err = err ?: db_exec(db, db_true_order_sql);
	if (err || !n)
		return err;
	err = db_prepare(db, "INSERT INTO true_order (cpu, seq, visits, lo, hi) VALUES (?, ?, ?, ?, ?)",
			 &st);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		if (rows[i].seq > INT64_MAX) {
			err = -EINVAL;
			break;
		}
		sqlite3_bind_int(st, 1, rows[i].cpu);
		sqlite3_bind_int64(st, 2, (int64_t)rows[i].seq);
		sqlite3_bind_int64(st, 3, rows[i].visits);
		sqlite3_bind_int64(st, 4, rows[i].lo);
		sqlite3_bind_int64(st, 5, rows[i].hi);
		err = db_step_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}
