// SPDX-License-Identifier: GPL-2.0
/* num.c - strict numbers and lists from the command line.  Contract: cli/num.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

/* strtod and strtoll skip leading blanks and accept an empty tail; we do not. */
static bool num_start_ok(const char *s)
{
	return s && *s && !isspace((unsigned char)*s);
}

int cli_num_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!num_start_ok(s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && v != 0)
		return -ERANGE;
	if (end == s || *end || !isfinite(v))
		return -EINVAL;
	if (!(v >= lo && v <= hi))
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v;

	if (!num_start_ok(s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!num_start_ok(s) || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_num_time_ns(const char *s, uint64_t hi, uint64_t *ns)
{
	static const struct { const char *sfx; uint64_t mul; unsigned int digits; } u[] = {
		{ "ns", 1, 0 }, { "us", 1000, 3 }, { "ms", 1000000, 6 }, { "s", 1000000000, 9 },
	};
	uint64_t mul = 1000000000, whole = 0, frac = 0, scale;
	unsigned int digits = 9, nd = 0, i;
	size_t len, num;
	const char *p;

	if (!num_start_ok(s) || !isdigit((unsigned char)*s))
		return -EINVAL;
	len = strlen(s);
	num = len;
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t sl = strlen(u[i].sfx);

		if (len > sl && !strcmp(s + len - sl, u[i].sfx)) {
			mul = u[i].mul;
			digits = u[i].digits;
			num = len - sl;
			break;
		}
	}
	for (p = s; p < s + num && isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (p < s + num && *p == '.') {
		for (p++; p < s + num && isdigit((unsigned char)*p); p++, nd++) {
			if (nd >= digits)
				return -EINVAL;	/* finer than 1 ns */
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		if (!nd)
			return -EINVAL;	/* "1." */
	}
	if (p != s + num)
		return -EINVAL;
	for (scale = mul; nd; nd--)
		scale /= 10;
	if (whole > UINT64_MAX / mul || whole * mul > UINT64_MAX - frac * scale)
		return -ERANGE;
	whole = whole * mul + frac * scale;
	if (whole > hi)
		return -ERANGE;
	*ns = whole;
	return 0;
}

bool cli_list_ok(const char *list)
{
	const char *p, *q;
	size_t len, qlen;

	if (!list || !*list)
		return false;
	for (p = list; ; p += len + 1) {
		len = strcspn(p, ",");
		if (!len)
			return false;	/* "", ",a", "a,,b", "a," */
		for (q = list; q < p; q += qlen + 1) {
			qlen = strcspn(q, ",");
			if (qlen == len && !memcmp(p, q, len))
				return false;
		}
		if (!p[len])
			return true;
	}
}
