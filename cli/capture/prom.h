/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prom.h - a Prometheus text-format file (exposition format 0.0.4), written
 * whole and put in place atomically, for node_exporter's textfile collector.
 *
 * Contract: prom_begin() opens FILE.tmp beside FILE; the caller writes each
 * metric family as prom_family() (its # HELP and # TYPE) followed by its
 * samples; prom_commit() flushes, fsyncs and renames FILE.tmp over FILE, so a
 * reader sees the previous file or the new one, never a part.  Names are
 * checked against the format's grammar (a bad one is -EINVAL, a caller's
 * bug), label values and help text are escaped.  The first error sticks and
 * prom_commit() returns it (FILE.tmp removed, FILE as it was).  Never prints.
 */
#ifndef MCR_PROM_H
#define MCR_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prom {
	FILE	*f;
	char	*path;
	char	*tmp;
	int	err;		/* first error, negative errno */
};

struct prom_label {
	const char	*name;
	const char	*value;
};

/* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool prom_metric_name_ok(const char *name);
/* [a-zA-Z_][a-zA-Z0-9_]*, and not the reserved __ prefix */
bool prom_label_name_ok(const char *name);
/* A label value as it goes between the quotes: \ " and newline escaped. */
void prom_escape_value(FILE *f, const char *v);

int prom_begin(struct prom *p, const char *path);
/* @type: "gauge", "counter", "untyped". */
void prom_family(struct prom *p, const char *name, const char *type, const char *help);
void prom_sample_i(struct prom *p, const char *name, const struct prom_label *l, size_t n,
		   int64_t v);
void prom_sample_d(struct prom *p, const char *name, const struct prom_label *l, size_t n,
		   double v);
/* 0 or the first error; either way @p is closed. */
int prom_commit(struct prom *p);
void prom_abort(struct prom *p);

#endif
