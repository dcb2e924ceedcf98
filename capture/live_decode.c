// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding ring-buffer records into struct mcr_event.  Fields are found by
 * name in the events' format files once; the hot path only reads numbers at
 * cached offsets and never calls tep_find_event (it writes a shared cache).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_local.h"
#include "tp_decode.h"

/* Exported for live_instance.c: which events to enable (the table is tp_decode.c's). */
int live_event_count(void)
{
	return tp_event_count();
}

const char *live_event_system(int i, const char **name, int *kind, bool *required)
{
	const struct tp_event_info *e = tp_event(i);

	*name = e->name;
	*kind = e->kind;
	*required = e->required;
	return e->system;
}

/*
 * Only our nine formats: tracefs_local_events_system() would also parse every
 * other event of both systems and all of /proc/kallsyms, which we never use.
 */
static struct tep_handle *live_tep_load(void)
{
	enum tep_endian endian = tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN;
	struct tep_handle *tep = tep_alloc();
	unsigned int i;
	char *buf;
	int len;

	if (!tep)
		return NULL;
	tep_set_file_bigendian(tep, endian);
	tep_set_local_bigendian(tep, endian);
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, getpagesize());
	buf = tracefs_instance_file_read(NULL, "events/header_page", &len);
	if (!buf || tep_parse_header_page(tep, buf, len, sizeof(long)) < 0) {
		free(buf);
		tep_free(tep);
		return NULL;
	}
	free(buf);
	for (i = 0; i < (unsigned int)tp_event_count(); i++) {
		buf = tracefs_event_file_read(NULL, tp_event(i)->system, tp_event(i)->name,
					      "format", &len);
		if (buf)
			tep_parse_event(tep, buf, len, tp_event(i)->system);
		free(buf);
	}
	return tep;
}

int live_decoder_init(struct live_decoder *dec)
{
	unsigned int i;

	memset(dec, 0, sizeof(*dec));
	dec->tep = live_tep_load();
	if (!dec->tep)
		return -MCR_E_NO_MEMCG_EVENTS;
	dec->min_type = 1 << 30;
	dec->max_type = -1;
	for (i = 0; i < (unsigned int)tp_event_count(); i++) {
		struct live_evdesc *d = &dec->desc[tp_event(i)->kind];
		struct tep_event *e;

		e = tep_find_event_by_name(dec->tep, tp_event(i)->system, tp_event(i)->name);
		if (!e) {
			if (tp_event(i)->required)
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
			if (tp_event(i)->required)
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

int live_decode(const struct live_decoder *dec, void *data, struct mcr_event *ev,
		const char **path, int *path_len)
{
	const struct live_evdesc *d;
	int type = (int)tp_field_num(dec->common_type, data);
	int kind;

	if (type < dec->min_type || type > dec->max_type)
		return 0;
	kind = dec->kind_of[type - dec->min_type];
	if (!kind)
		return 0;
	d = &dec->desc[kind];
	ev->kind = kind;
	ev->pid = (int32_t)tp_field_num(dec->common_pid, data);
	ev->id = (uint64_t)tp_field_num(d->id, data);
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
		ev->item = (int32_t)tp_field_num(d->item, data);
		ev->val = tp_field_num(d->val, data);
		break;
	case MCR_EV_FLUSH:
		ev->val = tp_field_num(d->stats_updates, data);
		ev->flags = (tp_field_num(d->force, data) ? MCR_FLUSH_FORCE : 0) |
			    (tp_field_num(d->needs_flush, data) ? MCR_FLUSH_NEEDS : 0);
		break;
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
		ev->item = (int32_t)tp_field_num(d->cpu, data);
		ev->aux = (int32_t)tp_field_num(d->root, data);
		ev->level = (int16_t)tp_field_num(d->level, data);
		ev->flags = tp_field_num(d->contended, data) ? MCR_LOCK_CONTENDED : 0;
		break;
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		ev->aux = (int32_t)tp_field_num(d->root, data);
		ev->level = (int16_t)tp_field_num(d->level, data);
		*path = tp_field_string(d->path, data, path_len);
		break;
	}
	return kind;
}
