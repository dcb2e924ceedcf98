// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding ring-buffer records into struct mcr_event.  Fields are found by
 * name in the events' format files once; the hot path only reads numbers at
 * cached offsets and never calls tep_find_event (it writes a shared cache).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live_local.h"

static const struct {
	const char	*system, *name;
	int		kind;
	bool		required;	/* without it there is nothing to replay */
} live_events[] = {
	{ "memcg", "mod_memcg_state", MCR_EV_STATE, true },
	{ "memcg", "mod_memcg_lruvec_state", MCR_EV_LRUVEC, true },
	{ "memcg", "count_memcg_events", MCR_EV_EVENTS, true },
	{ "memcg", "memcg_flush_stats", MCR_EV_FLUSH, true },
	{ "cgroup", "cgroup_rstat_locked", MCR_EV_LOCKED, false },
	{ "cgroup", "cgroup_rstat_unlock", MCR_EV_UNLOCK, false },
	{ "cgroup", "cgroup_rstat_lock_contended", MCR_EV_CONTENDED, false },
	{ "cgroup", "cgroup_mkdir", MCR_EV_MKDIR, false },
	{ "cgroup", "cgroup_rmdir", MCR_EV_RMDIR, false },
};

/* Exported for live_instance.c: which events to enable. */
int live_event_count(void)
{
	return (int)(sizeof(live_events) / sizeof(live_events[0]));
}

const char *live_event_system(int i, const char **name, int *kind, bool *required)
{
	*name = live_events[i].name;
	*kind = live_events[i].kind;
	*required = live_events[i].required;
	return live_events[i].system;
}

int live_decoder_init(struct live_decoder *dec)
{
	const char *systems[] = { "memcg", "cgroup", NULL };
	unsigned int i;

	memset(dec, 0, sizeof(*dec));
	dec->tep = tracefs_local_events_system(NULL, systems);
	if (!dec->tep)
		return -MCR_E_NO_MEMCG_EVENTS;
	dec->min_type = 1 << 30;
	dec->max_type = -1;
	for (i = 0; i < sizeof(live_events) / sizeof(live_events[0]); i++) {
		struct live_evdesc *d = &dec->desc[live_events[i].kind];
		struct tep_event *e;

		e = tep_find_event_by_name(dec->tep, live_events[i].system, live_events[i].name);
		if (!e) {
			if (live_events[i].required)
				goto no_events;
			continue;
		}
		d->event = e;
		d->type = e->id;
		d->id = tep_find_field(e, "id");
		d->item = tep_find_field(e, "item");
		d->val = tep_find_field(e, "val");
		d->root = tep_find_field(e, "root");
		d->level = tep_find_field(e, "level");
		d->cpu = tep_find_field(e, "cpu");
		d->contended = tep_find_field(e, "contended");
		d->stats_updates = tep_find_field(e, "stats_updates");
		d->force = tep_find_field(e, "force");
		d->needs_flush = tep_find_field(e, "needs_flush");
		d->path = tep_find_field(e, "path");
		if (!d->id) {
			if (live_events[i].required)
				goto no_events;
			d->event = NULL;
			continue;
		}
		if (!dec->common_type) {
			dec->common_type = tep_find_common_field(e, "common_type");
			dec->common_pid = tep_find_common_field(e, "common_pid");
		}
		if (e->id < dec->min_type)
			dec->min_type = e->id;
		if (e->id > dec->max_type)
			dec->max_type = e->id;
	}
	if (!dec->common_type)
		goto no_events;
	dec->kind_of = calloc(dec->max_type - dec->min_type + 1, 1);
	if (!dec->kind_of) {
		live_decoder_free(dec);
		return -ENOMEM;
	}
	for (i = 1; i <= MCR_EV_KIND_MAX; i++)
		if (dec->desc[i].event)
			dec->kind_of[dec->desc[i].type - dec->min_type] = i;
	return 0;
no_events:
	live_decoder_free(dec);
	return -MCR_E_NO_MEMCG_EVENTS;
}

void live_decoder_free(struct live_decoder *dec)
{
	free(dec->kind_of);
	tep_free(dec->tep);
	memset(dec, 0, sizeof(*dec));
}

/* tep_read_number_field zero-extends: signed fields narrower than 8 bytes are widened here. */
static int64_t live_field(const struct tep_format_field *f, const void *data)
{
	unsigned long long v = 0;

	if (!f || tep_read_number_field((struct tep_format_field *)f, data, &v) < 0)
		return 0;
	if (f->flags & TEP_FIELD_IS_SIGNED) {
		switch (f->size) {
		case 1:
			return (int8_t)v;
		case 2:
			return (int16_t)v;
		case 4:
			return (int32_t)v;
		}
	}
	return (int64_t)v;
}

/* A __data_loc or __rel_loc string: 16-bit offset, 16-bit length. */
static const char *live_field_string(const struct tep_format_field *f, void *data, int *len)
{
	unsigned long long v;
	unsigned int off;

	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 ||
	    tep_read_number_field((struct tep_format_field *)f, data, &v) < 0)
		return NULL;
	off = v & 0xffff;
	*len = (int)(v >> 16);
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += f->offset + f->size;
	return (const char *)data + off;
}

int live_decode(const struct live_decoder *dec, void *data, struct mcr_event *ev,
		const char **path, int *path_len)
{
	const struct live_evdesc *d;
	int type = (int)live_field(dec->common_type, data);
	int kind;

	if (type < dec->min_type || type > dec->max_type)
		return 0;
	kind = dec->kind_of[type - dec->min_type];
	if (!kind)
		return 0;
	d = &dec->desc[kind];
	ev->kind = kind;
	ev->pid = (int32_t)live_field(dec->common_pid, data);
	ev->id = (uint64_t)live_field(d->id, data);
	ev->item = 0;
	ev->val = 0;
	ev->aux = 0;
	ev->level = 0;
	ev->flags = 0;
	switch (kind) {
	case MCR_EV_STATE:
	case MCR_EV_LRUVEC:
	case MCR_EV_EVENTS:
		/* count_memcg_events.val is an unsigned long: kept bit for bit */
		ev->item = (int32_t)live_field(d->item, data);
		ev->val = live_field(d->val, data);
		break;
	case MCR_EV_FLUSH:
		ev->val = live_field(d->stats_updates, data);
		ev->flags = (live_field(d->force, data) ? MCR_FLUSH_FORCE : 0) |
			    (live_field(d->needs_flush, data) ? MCR_FLUSH_NEEDS : 0);
		break;
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
		ev->item = (int32_t)live_field(d->cpu, data);
		ev->aux = (int32_t)live_field(d->root, data);
		ev->level = (int16_t)live_field(d->level, data);
		ev->flags = live_field(d->contended, data) ? MCR_LOCK_CONTENDED : 0;
		break;
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		ev->aux = (int32_t)live_field(d->root, data);
		ev->level = (int16_t)live_field(d->level, data);
		*path = live_field_string(d->path, data, path_len);
		break;
	}
	return kind;
}
