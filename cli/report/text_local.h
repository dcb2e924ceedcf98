/* SPDX-License-Identifier: GPL-2.0 */
/*
 * text_local.h - what the files of the report's text ops share: text.c (the
 * ops, the verdict, the summary, the costs, replay's summary) and
 * text_table.c (a host's lines as the table).  Not for the rest of cli/.
 */
#ifndef MCR_TEXT_LOCAL_H
#define MCR_TEXT_LOCAL_H

#include <stdio.h>

#include "model.h"

/* The lines of @h as the table. */
int text_table(struct report_out *o, const struct report_host *h);

#endif /* MCR_TEXT_LOCAL_H */
