/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cost.h - what the update path's operations cost on this host (calibration),
 * how much the trace's updates share cache lines between CPUs, and the
 * calibration file: the inputs of the estimate of sim/cost_model.h.
 *
 * Contract: cost_calibrate() measures user-space proxies of the kernel's
 * operations with pinned threads (sched_setaffinity) and CLOCK_MONOTONIC:
 * nothing here runs kernel code, so the figures are proxies, not the
 * kernel's costs.  cost_share_scan() reads a trace's events once through
 * db_iter.  cost_file_write()/cost_file_read() own the calibration file's
 * format.  Never prints or exits; returns 0 or a negative errno / -MCR_E_*.
 */
#ifndef MCR_REPLAY_COST_H
#define MCR_REPLAY_COST_H

#include <stdint.h>
#include <stdio.h>

#include "cost_model.h"

struct db;

#define COST_SAMPLES_DEFAULT	201
#define COST_SHARE_WINDOW_NS	10000	/* 10 us: "another CPU updated it just before" */

struct cost_opts {
	unsigned int	samples;	/* timed samples per operation (>= 3) */
	double		scale;		/* operations per sample, x the default (quick: 0.05) */
};

/*
 * cost_calibrate() - measure each operation of enum sim_cost_op on this host.
 * Runs for about a second with the default options (pinned to the first CPU
 * allowed; the contended add starts a thread on each other online CPU).
 */
int cost_calibrate(const struct cost_opts *o, struct sim_cost_calib *out);

/* How often an update's walk reached a memcg another CPU had updated just before. */
struct cost_share {
	uint64_t	window_ns;
	uint64_t	updates;	/* updates with a non-zero walk value */
	uint64_t	node_visits;	/* (update, ancestor) pairs: every memcg on the path */
	uint64_t	shared_visits;	/* of them, another CPU's update reached it < window_ns before */
	uint64_t	first_ts, last_ts;
	double		fraction;	/* shared_visits / node_visits; 0 without updates */
};
int cost_share_scan(struct db *db, uint64_t window_ns, struct cost_share *out);

/* The calibration file (JSON, written whole): -MCR_E_BAD_INPUT for a file not of this format. */
int cost_file_write(FILE *f, const struct sim_cost_calib *c);
int cost_file_read(const char *path, struct sim_cost_calib *out);
/* The same; a refusal's sentence (the field and its value) in @why. */
int cost_file_read_why(const char *path, struct sim_cost_calib *out, char *why, size_t len);

#endif
