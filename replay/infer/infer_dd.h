/* SPDX-License-Identifier: GPL-2.0 */
/*
 * infer_dd.h - a set of equal-length int64 tuples as a layered decision
 * diagram, the exact form of a lock window's orders once they outgrow a list
 * (infer_ddwin.c).
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INF_DD_EMPTY	0u
#define INF_DD_ONE	1u
#define INF_DD_MAX_OUT	64	/* the most images one tuple's value has under a map step */

struct inf_dd;

/**
 * inf_dd_create() - an empty diagram over a fixed list of layers.
 * @keys: each layer's counter key (layer 0: the position's, any value); copied.
 * @nr_layers: how many.
 *
 * Returns the diagram, or NULL without memory.
 */
struct inf_dd *inf_dd_create(const uint64_t *keys, unsigned int nr_layers);

/**
 * inf_dd_destroy() - free a diagram and every node it made; NULL is fine.
 * @dd: the diagram.
 */
void inf_dd_destroy(struct inf_dd *dd);

/*
 * A node's summary: the OR, over its edges, of this function of (layer,
 * value) and of the child's summary, so a summary covers the whole set
 * below; 0 without one.  It must be a function of its arguments only.
 */
typedef uint64_t (*inf_dd_sum_fn)(void *ctx, unsigned int layer, int64_t val);

/**
 * inf_dd_set_sum() - give the nodes a summary, before any is made.
 * @dd: the diagram, still empty (-EBUSY if not).
 * @fn: the summary's function; NULL for none.
 * @ctx: @fn's.
 */
int inf_dd_set_sum(struct inf_dd *dd, inf_dd_sum_fn fn, void *ctx);

/**
 * inf_dd_sum() - a node's summary (0 for the terminals or a handle out of range).
 * @dd: the diagram.
 * @u: the node.
 */
uint64_t inf_dd_sum(const struct inf_dd *dd, uint32_t u);

/**
 * inf_dd_layers() - how many layers @dd has.
 * @dd: the diagram.
 */
unsigned int inf_dd_layers(const struct inf_dd *dd);

/**
 * inf_dd_key() - the counter key of a layer (0 past the last).
 * @dd: the diagram.
 * @layer: the layer.
 */
uint64_t inf_dd_key(const struct inf_dd *dd, unsigned int layer);

/**
 * inf_dd_build() - the set of a list's tuples.
 * @dd: the diagram.
 * @tab: @n rows of inf_dd_layers() values, row-major.
 * @n: how many rows; duplicates are one tuple.
 * @root: the set's node (layer 0), INF_DD_EMPTY when @n is 0.
 */
int inf_dd_build(struct inf_dd *dd, const int64_t *tab, size_t n, uint32_t *root);

/**
 * inf_dd_count() - how many tuples a set holds.
 * @dd: the diagram.
 * @root: the set.
 * @count: the count; -EOVERFLOW past UINT64_MAX.
 */
int inf_dd_count(struct inf_dd *dd, uint32_t root, uint64_t *count);

/**
 * inf_dd_enum() - each tuple of a set once, in ascending lexicographic order.
 * @dd: the diagram.
 * @root: the set.
 * @fn: called with every layer's value (those above @root's layer as 0);
 *      its nonzero return stops the walk and is returned.
 * @ctx: @fn's.
 */
int inf_dd_enum(struct inf_dd *dd, uint32_t root,
		int (*fn)(void *ctx, const int64_t *tuple), void *ctx);

/**
 * inf_dd_restrict() - the tuples whose value at a layer is one value.
 * @dd: the diagram.
 * @root: the set.
 * @layer: the layer, not above @root's (-EINVAL).
 * @val: the value (an observation of the layer's counter).
 * @out: the subset.
 */
int inf_dd_restrict(struct inf_dd *dd, uint32_t root, unsigned int layer, int64_t val,
		    uint32_t *out);

/**
 * inf_dd_union() - the union of two sets of the same layer (-EINVAL if not).
 * @dd: the diagram.
 * @a: a set.
 * @b: a set.
 * @out: @a | @b.
 */
int inf_dd_union(struct inf_dd *dd, uint32_t a, uint32_t b, uint32_t *out);

/**
 * inf_dd_drop_top() - a set's tuples without their first layer.
 * @dd: the diagram.
 * @root: the set (not the terminal).
 * @out: the union of its edges' children, a set of the next layer's tuples
 *       (the window's close drops the position).
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
 * A map's shortcut: true when the step, from @layer down, would give every
 * tuple of a node back as it is, read with the state @state and knowing
 * the node's summary @sum (inf_dd_set_sum()).  The node is then its own
 * image, not walked.
 */
typedef bool (*inf_dd_keep_fn)(void *ctx, unsigned int layer, uint64_t state, uint64_t sum);

/**
 * inf_dd_map() - the image of a set under a per-tuple transducer.
 * @dd: the diagram.
 * @root: the set.
 * @depth: the layers rewritten: @root's layer up to @depth - 1, the rest kept;
 *         @depth of @root's layer gives @root back.
 * @state0: the state @fn reads at @root's layer.
 * @fn: the step, layer by layer; several images of a value branch.
 * @keep: NULL, or the shortcut asked at each node before it is walked.
 * @ctx: @fn's and @keep's.
 * @out: the image; exact: each image of each tuple, once.
 *
 * An update is one such pass down to its path's deepest counter layer, its
 * branches at the position layer.  Returns 0, @fn's error, -EINVAL (a
 * @depth past the layers or above @root's layer, more than INF_DD_MAX_OUT
 * images), -ENOMEM.
 */
int inf_dd_map(struct inf_dd *dd, uint32_t root, unsigned int depth, uint64_t state0,
	       inf_dd_step_fn fn, inf_dd_keep_fn keep, void *ctx, uint32_t *out);

/**
 * inf_dd_map_within() - inf_dd_map() that gives up past @max_steps steps
 * (inf_dd_steps()): no step is asked once the map has taken more.
 *
 * Returns -E2BIG then (@out and the set are as they were; nodes the map
 * made stay, reached from nothing), else as inf_dd_map().
 */
int inf_dd_map_within(struct inf_dd *dd, uint32_t root, unsigned int depth, uint64_t state0,
		      inf_dd_step_fn fn, inf_dd_keep_fn keep, void *ctx, uint64_t max_steps,
		      uint32_t *out);

/**
 * inf_dd_embed() - a set of one diagram as a set of another with more layers.
 * @src: the set's diagram.
 * @root: the set (a node of layer 0, or INF_DD_EMPTY).
 * @dst: the diagram to hold it, with at least @src's layers.
 * @map: @src's layer i is @dst's layer map[i]; strictly ascending.
 * @fill: the value of each tuple at every layer of @dst no layer of @src maps to.
 * @out: the set in @dst (a node of layer 0 of @dst, or INF_DD_EMPTY).
 *
 * A counter that gets a layer only now, the same in every tuple, is a new
 * layer of one edge: the window's diagram takes the counters an update's
 * path adds.  Returns 0, -EINVAL (@map out of @dst's layers), -ENOMEM.
 */
int inf_dd_embed(struct inf_dd *src, uint32_t root, struct inf_dd *dst, const unsigned int *map,
		 int64_t fill, uint32_t *out);

/**
 * inf_dd_size() - the nodes and edges a set reaches, the terminal not counted.
 * @dd: the diagram.
 * @root: the set.
 * @nodes: how many nodes.
 * @edges: how many edges.
 * @width: if not NULL, inf_dd_layers() counts: the nodes per layer.
 */
int inf_dd_size(struct inf_dd *dd, uint32_t root, size_t *nodes, size_t *edges,
		size_t *width);

/**
 * inf_dd_steps() - the nodes inf_dd_map() met so far, each as often as met
 * (memo hits and shortcuts too), and the edges of those it walked: the
 * maps' work.
 * @dd: the diagram.
 */
uint64_t inf_dd_steps(const struct inf_dd *dd);

/**
 * inf_dd_nr_nodes() - the nodes the unique table holds (every one made).
 * @dd: the diagram.
 */
size_t inf_dd_nr_nodes(const struct inf_dd *dd);

/**
 * inf_dd_nr_edges() - the edges of every node made.
 * @dd: the diagram.
 */
size_t inf_dd_nr_edges(const struct inf_dd *dd);

#endif
