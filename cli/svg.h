/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svg.h - the little SVG plotting kit of report --format html, in the spirit
 * of perf timechart's svghelper: nice axis ticks, a data -> pixel scale, and
 * the reduction of a long series to one (min, max) pair per pixel column so a
 * spike one sample wide still shows.  It writes SVG 1.1 elements to a FILE
 * and text escaped for XML; it knows nothing of traces, databases or policies.
 *
 * Contract: pure arithmetic and fprintf; no global state; the only
 * allocation is the reducer's columns (svg_reduce_free frees them).
 */
#ifndef MCR_SVG_H
#define MCR_SVG_H

#include <stdbool.h>
#include <stdio.h>

#define SVG_MAX_TICKS	16

/* Ticks at multiples of step (1, 2 or 5 x 10^k), v[0] <= lo, v[n-1] >= hi. */
struct svg_ticks {
	double	v[SVG_MAX_TICKS];
	double	step;
	int	n;
	int	decimals;	/* digits after the point that tell the ticks apart */
};
/*
 * @max_ticks in [3, SVG_MAX_TICKS] (a range across 0 needs 3: -s, 0, s);
 * lo == hi gets a unit range around it.  -EINVAL.
 */
int svg_ticks(double lo, double hi, int max_ticks, struct svg_ticks *t);

/* Linear map of [d0, d1] onto [r0, r1] (r1 < r0 for a y axis growing up). */
struct svg_scale {
	double	d0, d1, r0, r1;
};
double svg_map(const struct svg_scale *s, double v);

/* One pixel column of a reduced series. */
struct svg_col {
	double	lo, hi;		/* smallest and largest value that fell in it */
	bool	set;
};
struct svg_reduce {
	double		x0, x1;	/* data x of the left edge of column 0, right edge of the last */
	int		width;	/* columns */
	struct svg_col	*col;
};
int svg_reduce_init(struct svg_reduce *r, double x0, double x1, int width);	/* -EINVAL, -ENOMEM */
/* The column of @x, clamped to [0, width - 1]. */
int svg_reduce_col(const struct svg_reduce *r, double x);
/* A sample at @x whose values over its interval spanned [lo, hi]. */
void svg_reduce_add(struct svg_reduce *r, double x, double lo, double hi);
void svg_reduce_free(struct svg_reduce *r);

/*
 * The reduced series as one <path>: per set column a vertical stroke from the
 * end nearer the previous point to the other, so the line is continuous and
 * its envelope is every column's [lo, hi].  Column i is drawn at x px0 + i.
 * Returns the points written.
 */
int svg_path_reduced(FILE *f, const struct svg_reduce *r, const struct svg_scale *y, double px0,
		     const char *attrs);

/* @s with & < > " ' as entities (text and attribute values). */
void svg_escape(FILE *f, const char *s);
/* "1.5", "20", "-0.25": @v with @decimals digits, no "-0". */
char *svg_num(char *buf, size_t len, double v, int decimals);

#endif
