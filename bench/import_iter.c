// SPDX-License-Identifier: GPL-2.0
/*
 * import_iter - the baseline of bench/import.sh: the time libtracecmd alone
 * takes to iterate a trace.dat in merged order (tracecmd_iterate_events),
 * reading each record's type and nothing else.  Takes the top buffer, or the
 * first -B instance when the top one is empty, like memcg-replay import.
 * Prints "import_iter: <records> records in <s> s: <rate> records/s".
 *
 *   import_iter TRACE.dat
 */
#include <stdio.h>
#include <time.h>

#include <trace-cmd.h>

struct iter_count {
	unsigned long long	records;
	unsigned long long	types;	/* keeps the type read from being optimized away */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int iter_cb(struct tracecmd_input *h, struct tep_record *r, int cpu, void *data)
{
	struct iter_count *c = data;

	c->records++;
	c->types += (unsigned int)tep_data_type(tracecmd_get_tep(h), r);
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *top, *h;
	struct iter_count c = { 0 };
	double start, el;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: import_iter TRACE.dat\n");
		return 2;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	start = now_s();
	top = tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		fprintf(stderr, "import_iter: cannot open %s\n", argv[1]);
		return 1;
	}
	tracecmd_iterate_events(top, NULL, 0, iter_cb, &c);
	for (i = 0; !c.records && i < tracecmd_buffer_instances(top); i++) {
		h = tracecmd_buffer_instance_handle(top, i);
		if (h) {
			tracecmd_iterate_events(h, NULL, 0, iter_cb, &c);
			tracecmd_close(h);
		}
	}
	tracecmd_close(top);
	el = now_s() - start;
	printf("import_iter: %llu records in %.3f s: %.0f records/s\n", c.records, el,
	       el > 0 ? (double)c.records / el : 0.0);
	return c.types == 1 ? 1 : 0;
}
