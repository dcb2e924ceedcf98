/* SPDX-License-Identifier: GPL-2.0 */
/*
 * num.h - the one strict parser of numbers and lists given on a command line,
 * shared by memcg-replay's subcommands and memcg-capture.
 *
 * Contract: a number is the whole string, nothing before or after it, no
 * empty string, no NaN or infinity, within [lo, hi]; a list has no empty
 * element and no element twice.  Returns 0 or -EINVAL (-ERANGE out of range);
 * never prints, the caller says which option was wrong (argp_error: exit 2).
 */
#ifndef MCR_CLI_NUM_H
#define MCR_CLI_NUM_H

#include <stdbool.h>
#include <stdint.h>

int cli_num_double(const char *s, double lo, double hi, double *out);
int cli_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* Decimal as cli_num_i64(), up to 2^64 - 1; no sign (strtoull would wrap "-1"). */
int cli_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/*
 * A time: seconds, decimal ("2", "1.5"), or a whole number with a unit
 * suffix "ns", "us", "ms" or "s" ("123456789ns", "250ms"); a fraction finer
 * than 1 ns is -EINVAL.  *@ns in ns, at most @hi.  No sign.
 */
int cli_num_time_ns(const char *s, uint64_t hi, uint64_t *ns);
/* "a,b,c": no empty element ("", "a,", ",a", "a,,b") and no duplicate. */
bool cli_list_ok(const char *list);

#endif
