/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pass.h - replay's end-of-pass summary as a report model (pass.c), for
 * cmd_replay.c, which writes it with report_write() and report_text_ops.
 */
#ifndef MCR_REPORT_PASS_H
#define MCR_REPORT_PASS_H

#include <stdint.h>

#include "db.h"
#include "model.h"
#include "replay.h"

/* @m: one host, the pass's; report_model_free() frees it. */
int report_pass_model(struct report_model *m, struct db *db, struct replay_pass *ps,
		      int64_t page_size);

#endif /* MCR_REPORT_PASS_H */
