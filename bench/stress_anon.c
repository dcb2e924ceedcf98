// SPDX-License-Identifier: GPL-2.0
/*
 * stress_anon - an anonymous page-fault workload for tests and benchmarks:
 * map MIB of anonymous memory without huge pages, touch every page (one
 * fault and about six memcg events each), unmap, and repeat for SECONDS.
 * Prints "stress_anon: <faults> faults in <s> s: <rate> faults/s".
 *
 *   stress_anon [MIB [SECONDS [RATE]]]   defaults: 64 MiB, 5 s, no limit
 *
 * RATE (faults/s, 0 = as fast as it can) bounds how many events a recording
 * of fixed length gets, so that what a test does with them does not grow
 * with the machine's speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	double secs = argc > 2 ? strtod(argv[2], NULL) : 5.0;
	double rate = argc > 3 ? strtod(argv[3], NULL) : 0.0;
	long page = sysconf(_SC_PAGESIZE);
	size_t len = mib << 20, off;
	unsigned long long faults = 0;
	double start = now_s(), el;

	if (!mib || secs <= 0 || rate < 0) {
		fprintf(stderr, "usage: stress_anon [MIB [SECONDS [RATE]]]\n");
		return 2;
	}
	do {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("stress_anon: mmap");
			return 1;
		}
		/* base pages only: a THP would charge 512 pages in one event */
		madvise(p, len, MADV_NOHUGEPAGE);
		for (off = 0; off < len; off += page) {
			p[off] = 1;
			faults++;
			/*
			 * Ahead of RATE: sleep until the next 64 faults are due.
			 * One clock reading: with two, the second could come after
			 * the due time and a negative sleep became ~71 minutes.
			 */
			if (rate > 0 && !(faults & 63)) {
				double ahead = (double)faults / rate - (now_s() - start);

				if (ahead > 0)
					usleep((useconds_t)(ahead * 1e6) + 1);
			}
		}
		munmap(p, len);
	} while ((el = now_s() - start) < secs);
	printf("stress_anon: %llu faults in %.2f s: %.0f faults/s\n", faults, el, (double)faults / el);
	return 0;
}
