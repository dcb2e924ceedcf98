/* SPDX-License-Identifier: GPL-2.0 */
/*
 * infer_dd.h - a set of equal-length int64 tuples as a layered decision
 * diagram, the exact form of a lock window's orders once they outgrow a list
 * (not yet used by the inference).
 *
 * The diagram has a fixed list of layers, each naming a counter (its key;
 * layer 0 is meant to be the window position).  A node of layer i is a set
 * of tuples over layers i..nr-1: its edges, sorted by value and one per
 * value, each lead to a node of layer i+1 (the tuples' rest).  Below the last
 * layer is INF_DD_ONE (the set holding the empty tuple); INF_DD_EMPTY is the
 * empty set at any layer and is never an edge's child.
 *
 * Reduction: quasi-reduced.  Every path visits every layer (no layer is
 * skipped: an edge carries a value, so "any value" has no edge to stand
 * for it); equal (layer, edges) are one node by the unique table, so two
 * equal sets at a layer are the same handle and a set's diagram is
 * canonical: set equality is handle equality.  Nodes are immutable and live
 * until inf_dd_destroy() (a window's diagram is meant to live as long as
 * its window); handles stay valid across every operation.
 *
 * Every function returns 0 or a negative errno: -ENOMEM, -EINVAL (a layer
 * or handle out of range), -EOVERFLOW (a count past UINT64_MAX).
 */
#ifndef MCR_REPLAY_INFER_DD_H
#define MCR_REPLAY_INFER_DD_H

#include <stddef.h>
#include <stdint.h>

#define INF_DD_EMPTY	0u
#define INF_DD_ONE	1u
#define INF_DD_MAX_OUT	64	/* the most images one tuple's value has under a map step */

struct inf_dd;

struct inf_dd *inf_dd_create(const uint64_t *keys, unsigned int nr_layers);
void inf_dd_destroy(struct inf_dd *dd);
unsigned int inf_dd_layers(const struct inf_dd *dd);
uint64_t inf_dd_key(const struct inf_dd *dd, unsigned int layer);

/* The set of the @n rows of @tab (row-major, inf_dd_layers() columns); duplicates are one. */
int inf_dd_build(struct inf_dd *dd, const int64_t *tab, size_t n, uint32_t *root);

/* How many tuples @root holds. */
int inf_dd_count(struct inf_dd *dd, uint32_t root, uint64_t *count);

/*
 * Each tuple of @root once, in ascending lexicographic order (all the
 * layers, those above @root's as 0); @fn's nonzero return stops the walk
 * and is returned.
 */
int inf_dd_enum(struct inf_dd *dd, uint32_t root,
		int (*fn)(void *ctx, const int64_t *tuple), void *ctx);

/* The tuples of @root whose value at @layer is @val (an observation of that counter). */
int inf_dd_restrict(struct inf_dd *dd, uint32_t root, unsigned int layer, int64_t val,
		    uint32_t *out);

/* @a | @b, both sets of the same layer's tuples. */
int inf_dd_union(struct inf_dd *dd, uint32_t a, uint32_t b, uint32_t *out);

/*
 * The tuples of @root with its layer dropped (the window's close drops the
 * position): the union of its edges' children, a set of the next layer's.
 */
int inf_dd_drop_top(struct inf_dd *dd, uint32_t root, uint32_t *out);

/*
 * A map step: the value @val of layer @layer, read with the state @state the
 * layers above left, becomes the (out_val[i], out_state[i]) pairs, at most
 * INF_DD_MAX_OUT; returns how many (0 drops the tuple) or a negative errno.
 * It must be a function of its arguments only: it is memoized per (node, state).
 */
typedef int (*inf_dd_step_fn)(void *ctx, unsigned int layer, uint64_t state, int64_t val,
			      int64_t *out_val, uint64_t *out_state);

/*
 * The image of @root under a per-tuple transducer over its first @depth
 * layers, from state @state0: each tuple's layers 0..depth-1 are rewritten
 * by @fn layer by layer (each branching where @fn gives several images),
 * its rest kept.  Exact: the result holds each image of each tuple, once.
 * An update is one such pass down to its path's deepest counter layer.
 */
int inf_dd_map(struct inf_dd *dd, uint32_t root, unsigned int depth, uint64_t state0,
	       inf_dd_step_fn fn, void *ctx, uint32_t *out);

/* Nodes (and edges) reachable from @root, the terminal not counted; per layer in @width if not NULL. */
int inf_dd_size(struct inf_dd *dd, uint32_t root, size_t *nodes, size_t *edges, size_t *width);

/* Nodes the unique table holds (every node made since inf_dd_create()). */
size_t inf_dd_nr_nodes(const struct inf_dd *dd);

#endif
