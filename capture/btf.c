// SPDX-License-Identifier: GPL-2.0
/* Stat item names from the kernel's BTF: enum values are config-dependent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "btf.h"
#include "db.h"
#include "event.h"

/* enum name -> value -> name table, sized by the largest value */
struct btf_names {
	const char	**name;
	int		nr;
};

/*
 * Aliases share a value (NR_LRU_BASE == NR_INACTIVE_ANON, WORKINGSET_*_BASE);
 * sentinels (NR_VM_NODE_STAT_ITEMS, MEMCG_NR_STAT, ...) name no real item.
 */
static bool btf_name_is_alias(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && !strcmp(name + len - 5, "_BASE");
}

static bool btf_name_is_sentinel(const char *name)
{
	return !strncmp(name, "NR_VM_", 6) || strstr(name, "_NR_STAT") ||
	       !strcmp(name, "NR_VM_EVENT_ITEMS");
}

static int btf_names_load(const struct btf *btf, const char *enum_name,
			  struct btf_names *out, int *sentinel)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int i, vlen, max = -1;
	__s32 tid;

	tid = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (tid < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, tid);
	e = btf_enum(t);
	vlen = btf_vlen(t);
	*sentinel = -1;
	for (i = 0; i < vlen; i++) {
		const char *n = btf__name_by_offset(btf, e[i].name_off);

		if (n && btf_name_is_sentinel(n)) {
			if (*sentinel < 0 || e[i].val < *sentinel)
				*sentinel = e[i].val;
			continue;
		}
		if (e[i].val >= 0 && e[i].val > max)
			max = e[i].val;
	}
	out->nr = max + 1;
	out->name = calloc(out->nr > 0 ? out->nr : 1, sizeof(*out->name));
	if (!out->name)
		return -ENOMEM;
	for (i = 0; i < vlen; i++) {
		const char *n = btf__name_by_offset(btf, e[i].name_off);

		if (!n || e[i].val < 0 || e[i].val >= out->nr || btf_name_is_sentinel(n))
			continue;
		if (!out->name[e[i].val] || btf_name_is_alias(out->name[e[i].val]))
			out->name[e[i].val] = n;
	}
	return 0;
}

static int btf_emit(btf_item_fn fn, void *ctx, int kind, const struct btf_names *n,
		    int from, int to)
{
	int i, ret, count = 0;

	for (i = from; i < to && i < n->nr; i++) {
		if (!n->name[i])
			continue;
		ret = fn(ctx, kind, i, n->name[i], mcr_item_unit((unsigned int)kind));
		if (ret < 0)
			return ret;
		count++;
	}
	return count;
}

int btf_items_walk(btf_item_fn fn, void *ctx)
{
	struct btf_names node = {0}, memcg = {0}, vm = {0};
	int node_nr, memcg_nr, vm_nr, ret, total = 0;
	struct btf *btf;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return errno ? -errno : -ENOENT;
	ret = btf_names_load(btf, "node_stat_item", &node, &node_nr);
	if (!ret)
		ret = btf_names_load(btf, "memcg_stat_item", &memcg, &memcg_nr);
	if (!ret)
		ret = btf_names_load(btf, "vm_event_item", &vm, &vm_nr);
	if (ret)
		goto out;
	/* mod_memcg_state: node_stat_item below NR_VM_NODE_STAT_ITEMS, then memcg_stat_item */
	if (node_nr < 0)
		node_nr = node.nr;
	ret = btf_emit(fn, ctx, MCR_EV_STATE, &node, 0, node_nr);
	if (ret < 0)
		goto out;
	total += ret;
	ret = btf_emit(fn, ctx, MCR_EV_STATE, &memcg, node_nr, memcg.nr);
	if (ret < 0)
		goto out;
	total += ret;
	ret = btf_emit(fn, ctx, MCR_EV_LRUVEC, &node, 0, node_nr);
	if (ret < 0)
		goto out;
	total += ret;
	ret = btf_emit(fn, ctx, MCR_EV_EVENTS, &vm, 0, vm.nr);
	if (ret < 0)
		goto out;
	total += ret;
	ret = total;
out:
	free(node.name);
	free(memcg.name);
	free(vm.name);
	btf__free(btf);
	return ret;
}

static int btf_item_to_db(void *ctx, int kind, int item, const char *name, const char *unit)
{
	int ret = db_item_put(ctx, kind, item, name, unit);

	return ret < 0 ? ret : 0;
}

int btf_items_store(struct db *db)
{
	return btf_items_walk(btf_item_to_db, db);
}
