// SPDX-License-Identifier: GPL-2.0
/*
 * svg.c - axis ticks, scales, per-pixel min/max reduction and escaping for
 * the HTML report's inline SVG (see svg.h for the contract).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "svg.h"
#include "utf8.h"

int svg_ticks(double lo, double hi, int max_ticks, struct svg_ticks *t)
{
	static const double mult[] = { 1, 2, 5 };
	double span, raw, mag, step = 0, first;
	int i;

	if (max_ticks < 3 || max_ticks > SVG_MAX_TICKS || !isfinite(lo) || !isfinite(hi) || lo > hi)
		return -EINVAL;
	if (lo == hi) {
		lo -= 1;
		hi += 1;
	}
	span = hi - lo;
	/* the smallest 1-2-5 step that covers the span in max_ticks - 1 intervals */
	raw = span / (max_ticks - 1);
	mag = pow(10, floor(log10(raw)));
	for (i = 0; i < 64; i++) {
		step = mult[i % 3] * mag * pow(10, i / 3);
		if (step * (1 + 1e-9) >= raw &&
		    (ceil(hi / step - 1e-9) - floor(lo / step + 1e-9)) <= max_ticks - 1)
			break;
	}
	first = floor(lo / step + 1e-9) * step;
	t->step = step;
	t->n = 0;
	for (i = 0; i < max_ticks; i++) {
		double v = first + i * step;

		t->v[t->n++] = fabs(v) < step * 1e-9 ? 0 : v;
		if (v >= hi - step * 1e-9)
			break;
	}
	t->decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	return 0;
}

double svg_map(const struct svg_scale *s, double v)
{
	if (s->d1 == s->d0)
		return (s->r0 + s->r1) / 2;
	return s->r0 + (v - s->d0) * (s->r1 - s->r0) / (s->d1 - s->d0);
}

int svg_reduce_init(struct svg_reduce *r, double x0, double x1, int width)
{
	if (width < 1 || !(x1 > x0))
		return -EINVAL;
	r->col = calloc((size_t)width, sizeof(*r->col));
	if (!r->col)
		return -ENOMEM;
	r->x0 = x0;
	r->x1 = x1;
	r->width = width;
	return 0;
}

int svg_reduce_col(const struct svg_reduce *r, double x)
{
	double c = floor((x - r->x0) / (r->x1 - r->x0) * r->width);

	if (!(c >= 0))
		return 0;
	return c >= r->width ? r->width - 1 : (int)c;
}

void svg_reduce_add(struct svg_reduce *r, double x, double lo, double hi)
{
	struct svg_col *c = &r->col[svg_reduce_col(r, x)];

	if (!c->set) {
		*c = (struct svg_col){ .lo = lo, .hi = hi, .set = true };
		return;
	}
	if (lo < c->lo)
		c->lo = lo;
	if (hi > c->hi)
		c->hi = hi;
}

void svg_reduce_free(struct svg_reduce *r)
{
	free(r->col);
	r->col = NULL;
}

int svg_path_reduced(FILE *f, const struct svg_reduce *r, const struct svg_scale *y, double px0,
		     const char *attrs)
{
	double prev = 0;
	int i, n = 0;

	fprintf(f, "<path %s d=\"", attrs);
	for (i = 0; i < r->width; i++) {
		const struct svg_col *c = &r->col[i];
		double a, b;

		if (!c->set)
			continue;
		a = round(svg_map(y, c->lo));
		b = round(svg_map(y, c->hi));
		if (n && fabs(prev - b) < fabs(prev - a)) {
			double s = a;

			a = b;
			b = s;
		}
		fprintf(f, "%s%.0f %.0f", n ? "L" : "M", px0 + i, a);
		n++;
		if (b != a) {
			fprintf(f, "V%.0f", b);
			n++;
		}
		prev = b;
	}
	fprintf(f, "\"/>\n");
	return n;
}

/*
 * The page is UTF-8 and XML-clean: a byte that belongs to no well-formed
 * UTF-8 sequence (a cgroup's name is any bytes), and a control character
 * XML does not allow even as a reference, are written as U+FFFD.
 */
void svg_escape(FILE *f, const char *s)
{
	size_t n;

	for (; s && *s; s += n ? n : 1) {
		n = mcr_utf8_len(s);
		if (!n || ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')) {
			fputs("&#xfffd;", f);
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fwrite(s, 1, n, f);
		}
	}
}

char *svg_num(char *buf, size_t len, double v, int decimals)
{
	if (fabs(v) < 0.5 * pow(10, -decimals))
		v = 0;
	snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}
