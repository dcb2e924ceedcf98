// SPDX-License-Identifier: GPL-2.0
/*
 * units.c - the one formatter of the report's numbers (model.h): pages as
 * memory, event counts, durations; and its prose wrapped to the terminal.  Every format and replay's summary
 * write their numbers through it, so one value reads the same everywhere.
 */
#include <math.h>
#include <stdio.h>

#include "model.h"

char *report_pages_str(char *buf, size_t len, double pages, int64_t page_size)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = pages * (double)page_size;
	unsigned int u = 0;

	if (pages == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	while (fabs(v) >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, fabs(v) >= 100 || u == 0 ? "%.0f %s" : fabs(v) >= 10 ? "%.1f %s" :
		 "%.2f %s", v, unit[u]);
	return buf;
}

char *report_value_str(char *buf, size_t len, double v, bool events, int64_t page_size,
		       bool zero_unit)
{
	if (events)
		snprintf(buf, len, "%.0f", v);
	else if (v == 0 && zero_unit)
		snprintf(buf, len, "0 B");
	else
		report_pages_str(buf, len, v, page_size);
	return buf;
}

/*
 * Under 1 ms, in µs: "21 µs", "2.5 µs", "0.04 µs" (the trace's clock is ns);
 * never "0.0 ms" for a duration that is not 0.
 */
static char *us_str(char *buf, size_t len, double ms)
{
	double us = ms * 1000;

	if (us >= 9.95)
		snprintf(buf, len, "%.0f \xc2\xb5s", us);
	else
		snprintf(buf, len, "%.2g \xc2\xb5s", us);
	return buf;
}

char *report_ms_str(char *buf, size_t len, double ms)
{
	if (ms == 0)
		snprintf(buf, len, "0");
	else if (ms >= 1000)
		snprintf(buf, len, "%.*f s", ms >= 100000 ? 0 : 1, ms / 1000);
	else if (ms >= 0.9995)
		snprintf(buf, len, "%.*f ms", ms >= 10 ? 0 : 1, ms);
	else
		us_str(buf, len, ms);
	return buf;
}

char *report_ms_fixed_str(char *buf, size_t len, double ms)
{
	if (ms >= 1000)
		snprintf(buf, len, "%.2f s", ms / 1000);
	else if (ms >= 0.9995 || ms == 0)
		snprintf(buf, len, "%.1f ms", ms);
	else
		us_str(buf, len, ms);
	return buf;
}

/* The text format's sentences: 78 columns, two of indent, broken at blanks. */
void report_wrap(FILE *f, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *end = p, *brk = NULL;

		while (*end && end - p < 76) {
			if (*end == ' ')
				brk = end;
			end++;
		}
		if (*end && brk)
			end = brk;
		fprintf(f, "  %.*s\n", (int)(end - p), p);
		p = end;
		while (*p == ' ')
			p++;
	}
}
