/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pass.h - the summary memcg-replay replay prints (pass.c),
 * for cmd_replay.c.
 */
#ifndef MCR_REPLAY_SUMMARY_H
#define MCR_REPLAY_SUMMARY_H

#include <stdint.h>

#include "db.h"
#include "replay.h"

void replay_print_ancestors(struct db *db, struct replay *r, int64_t page_size);
void replay_print_costs(struct replay_pass *ps);

#endif /* MCR_REPLAY_SUMMARY_H */
