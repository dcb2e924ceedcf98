// SPDX-License-Identifier: GPL-2.0
/*
 * synth_gen.c - the synthetic generator alone (ground-truth simulator
 * included, no database): the baseline that bench/synth.sh compares the
 * end-to-end `memcg-replay synth` rows/s against.
 * Usage: synth_gen SCENARIO [NAME VALUE]...
 */
#include <stdio.h>
#include <time.h>

#include "error.h"
#include "synth.h"

int main(int argc, char **argv)
{
	const struct synth_scenario *sc = argc > 1 ? synth_scenario_find(argv[1]) : NULL;
	struct synth_out out = { 0 };
	struct synth_stats st;
	struct synth_args a;
	struct timespec t0, t1;
	double secs;
	int i, err;

	if (!sc || argc % 2) {
		fprintf(stderr, "usage: synth_gen SCENARIO [NAME VALUE]...\n");
		return 2;
	}
	synth_args_init(&a, sc, 1);
	for (i = 2; i + 1 < argc; i += 2) {
		if (synth_args_set(&a, argv[i], argv[i + 1])) {
			fprintf(stderr, "synth_gen: bad option %s=%s\n", argv[i], argv[i + 1]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = synth_run(&a, &out, &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "synth_gen: %s\n", mcr_strerror(err));
		return 1;
	}
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("generator only (%s): %llu events in %.2f s: %.0f events/s\n", sc->name,
	       (unsigned long long)st.events, secs, (double)st.events / secs);
	return 0;
}
