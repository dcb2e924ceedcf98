/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btf.h - names and units of the memcg stat items of the running kernel.
 *
 * Contract: reads the kernel's BTF (/sys/kernel/btf/vmlinux) through libbpf and
 * reports, for each item value a traced event can carry, its enum name and
 * unit: mod_memcg_state items below NR_VM_NODE_STAT_ITEMS are node_stat_item,
 * above are memcg_stat_item; mod_memcg_lruvec_state items are node_stat_item;
 * count_memcg_events items are vm_event_item.  Used by live capture and by the
 * trace.dat importer.  Never prints; returns negative errno.
 */
#ifndef MCR_BTF_H
#define MCR_BTF_H

struct db;

/*
 * Called once per (kind, item): kind is MCR_EV_STATE, MCR_EV_LRUVEC or
 * MCR_EV_EVENTS; unit is mcr_item_unit(kind), "pages" or "events" (the *_B
 * and NR_KERNEL_STACK_KB items are traced in pages too).  A negative return
 * stops the walk and is returned by btf_items_walk().
 */
typedef int (*btf_item_fn)(void *ctx, int kind, int item, const char *name, const char *unit);

/*
 * btf_items_walk - report every stat item name of this kernel to @fn.
 * Returns the number of items reported, -ENOENT when the kernel has no BTF
 * or lacks one of the enums, or @fn's negative return.
 */
int btf_items_walk(btf_item_fn fn, void *ctx);

/* btf_items_store - btf_items_walk() into the items table of @db. */
int btf_items_store(struct db *db);

#endif
