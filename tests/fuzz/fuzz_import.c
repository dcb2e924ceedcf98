// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import.c - libFuzzer target: memcg-replay import of a trace.dat
 * (libtracecmd's reader, then capture/import*.c) into a trace database.
 * The input is written to a file, as libtracecmd reads paths; any return
 * code is fine, a crash, leak or sanitizer report is not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct import_result res;
	struct import_opts o = { 0 };
	char in[64], out[64];
	struct db *db;

	if (fuzz_write_input("imp", data, size, in, sizeof(in)))
		return 0;
	snprintf(out, sizeof(out), "%s.db", in);
	o.trace_path = in;
	o.in_process = true;	/* coverage and sanitizer reports of this process */
	if (!db_create_scratch(out, &db)) {
		import_run(&o, db, &res);
		db_close(db);
	}
	fuzz_unlink_db(out);
	unlink(in);
	return 0;
}
