// SPDX-License-Identifier: GPL-2.0
/*
 * life.c - simulator life cycle, CPU hotplug (the threshold) and cost counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "policy.h"
#include "watch.h"

/* TH of memcg_vmstats_needs_flush() and the stranded limit above it, for @nr_online. */
static void sim_thresholds(struct sim *s, unsigned int nr_online)
{
	s->nr_online = nr_online;
	s->th = s->batch * nr_online;
	s->strand_th = (uint64_t)s->th + (uint64_t)(s->batch - 1) * nr_online;
}

/**
 * sim_create() - a simulated kernel with only the root memcg
 * @sp: policy, CPUs and MEMCG_CHARGE_BATCH (see struct sim_params)
 *
 * TH = batch * nr_online must fit the kernel's unsigned int product.
 * Return: the simulator, or NULL on bad arguments or no memory.
 */
struct sim *sim_create(const struct sim_params *sp)
{
	struct sim *s;

	if (!sp || !sp->policy || !sp->policy->step || !sp->nr_online ||
	    sp->nr_online > sp->nr_possible || !sp->batch ||
	    sp->nr_possible > UINT32_MAX / sp->batch)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->policy = sp->policy;
	s->update = sp->policy->update ? sp->policy->update : sim_update_generic;
	s->apply = sp->policy->update && sp->policy->apply ? sp->policy->apply :
		   sim_update_generic_apply;
	s->nr_possible = sp->nr_possible;
	s->batch = sp->batch;
	s->counters_only = sp->counters_only;
	sim_thresholds(s, sp->nr_online);
	s->free_chunk = SIM_NONE;
	if (sim_node_create(s, 0, SIM_ROOT_ID, SIM_NONE) < 0) {
		sim_destroy(s);
		return NULL;
	}
	return s;
}

void sim_destroy(struct sim *s)
{
	if (!s)
		return;
	sim_items_destroy(s);
	sim_watch_destroy(s);
	sim_array_free(s->nodes, sizeof(*s->nodes) * s->cap_nodes);
	free(s->path);
	free(s->calm_up);
	free(s->owe_dirty);
	sim_array_free(s->ctr, sizeof(*s->ctr) * s->cap_slots);
	sim_array_free(s->slots, sizeof(*s->slots) * s->cap_slots);
	free(s->tree);
	free(s->win);
	idmap_free(&s->ids);
	free(s->id_direct);
	free(s->slot_of);
	free(s->visited);
	free(s);
}

const struct sim_policy *sim_policy(const struct sim *s)
{
	return s->policy;
}

/**
 * sim_set_online() - CPU hotplug: TH becomes batch * @nr_online
 * @s: the simulator
 * @ts: when
 * @nr_online: 1..nr_possible
 *
 * Every flushable flag follows at once, as the kernel re-reads
 * num_online_cpus() at every check.
 * Return: 0, or -EINVAL for an impossible count.
 */
int sim_set_online(struct sim *s, uint64_t ts, unsigned int nr_online)
{
	uint32_t i;

	if (!nr_online || nr_online > s->nr_possible)
		return -EINVAL;
	sim_clock(s, ts);
	sim_lazy_sync(s, ts);
	for (i = 0; i < s->nr_nodes; i++) {
		sim_stale_touch(&s->nodes[i], ts);
		sim_lag_flushable(s, &s->nodes[i], ts);
	}
	sim_thresholds(s, nr_online);
	for (i = 0; i < s->nr_nodes; i++) {
		struct sim_node *n = &s->nodes[i];

		n->flushable = n->stats_updates > (int64_t)s->th;
		/* parents first */
		s->calm_up[i] = n->flushable && !n->stranded &&
				(n->parent == SIM_NONE || s->calm_up[n->parent]);
		n->nr_flushable_desc = 0;
	}
	/* children come after their parent in the array */
	for (i = s->nr_nodes; i-- > 1;) {
		struct sim_node *n = &s->nodes[i];

		s->nodes[n->parent].nr_flushable_desc += n->nr_flushable_desc + n->flushable;
	}
	/* the stranded threshold moved with TH */
	for (i = 0; i < s->nr_nodes; i++)
		sim_lag_eval(s, &s->nodes[i], ts);
	return sim_lag_err_take(s);
}

uint64_t sim_threshold(const struct sim *s)
{
	return s->th;
}

unsigned int sim_batch(const struct sim *s)
{
	return s->batch;
}

void sim_cost_get(const struct sim *s, struct sim_cost *out)
{
	*out = s->cost;
}
