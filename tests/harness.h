/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h - a tiny unit-test harness in the spirit of redis' testhelp.h.
 *
 * Each TEST() prints one line the runner (tests/run.sh) counts:
 *   PASS name | FAIL name: file:line: expression | SKIP name: reason
 * ASSERT* inside a test records the first failure and leaves the test.
 * main() is TEST_MAIN(t1, t2, ...); the exit code is 1 if anything failed.
 */
#ifndef MCR_HARNESS_H
#define MCR_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_ctx {
	const char	*name;
	int		failed;
	int		skipped;
};

typedef void (*test_fn)(struct test_ctx *t);

#define TEST(fn)	static void fn(struct test_ctx *t)

#define FAILF(...) do {							\
	if (!t->failed) {						\
		printf("FAIL %s: %s:%d: ", t->name, __FILE__, __LINE__);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
	t->failed = 1;							\
	return;								\
} while (0)

#define ASSERT(cond) do { if (!(cond)) FAILF("%s", #cond); } while (0)

#define ASSERT_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b)							\
		FAILF("%s == %s: %lld != %lld", #a, #b, _a, _b);	\
} while (0)

#define ASSERT_EQU(a, b) do {						\
	unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b); \
	if (_a != _b)							\
		FAILF("%s == %s: %llu != %llu", #a, #b, _a, _b);	\
} while (0)

#define ASSERT_STR(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	if (!_a || !_b || strcmp(_a, _b))				\
		FAILF("%s == %s: \"%s\" != \"%s\"", #a, #b,		\
		      _a ? _a : "(null)", _b ? _b : "(null)");		\
} while (0)

#define SKIP(...) do {							\
	printf("SKIP %s: ", t->name);					\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	t->skipped = 1;							\
	return;								\
} while (0)

static inline int test_run_all(const char *const *names, const test_fn *fns, int n)
{
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		struct test_ctx t = { .name = names[i] };

		fns[i](&t);
		if (t.failed)
			failed++;
		else if (!t.skipped)
			printf("PASS %s\n", names[i]);
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define TEST_STR_(...) #__VA_ARGS__
#define TEST_MAIN(...)							\
int main(void)								\
{									\
	static const test_fn fns[] = { __VA_ARGS__ };			\
	char *names_buf = strdup(TEST_STR_(__VA_ARGS__));		\
	const char *names[sizeof(fns) / sizeof(fns[0])];		\
	int n = 0, r;							\
	for (char *tok = strtok(names_buf, ", "); tok && n < (int)(sizeof(fns) / sizeof(fns[0])); \
	     tok = strtok(NULL, ", "))					\
		names[n++] = tok;					\
	setvbuf(stdout, NULL, _IOLBF, 0);				\
	r = test_run_all(names, fns, n);				\
	free(names_buf);						\
	return r;							\
}

#endif
