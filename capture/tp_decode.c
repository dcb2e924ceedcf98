// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoint table and the record decoder shared by live capture and the
 * trace.dat importer (contract in tp_decode.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tp_decode.h"

/* common_type is 16 bits in the ring buffer; anything else is a corrupt format */
#define TP_TYPE_MAX	65535

static const struct tp_event_info tp_events[] = {
	{ "memcg",	"mod_memcg_state",		MCR_EV_STATE,		true },
	{ "memcg",	"mod_memcg_lruvec_state",	MCR_EV_LRUVEC,		true },
	{ "memcg",	"count_memcg_events",		MCR_EV_EVENTS,		true },
	{ "memcg",	"memcg_flush_stats",		MCR_EV_FLUSH,		true },
	{ "cgroup",	"cgroup_rstat_locked",		MCR_EV_LOCKED,		false },
	{ "cgroup",	"cgroup_rstat_unlock",		MCR_EV_UNLOCK,		false },
	{ "cgroup",	"cgroup_rstat_lock_contended",	MCR_EV_CONTENDED,	false },
	{ "cgroup",	"cgroup_mkdir",			MCR_EV_MKDIR,		false },
	{ "cgroup",	"cgroup_rmdir",			MCR_EV_RMDIR,		false },
};

#define TP_NEVENTS	((int)(sizeof(tp_events) / sizeof(tp_events[0])))

int tp_event_count(void)
{
	return TP_NEVENTS;
}

const struct tp_event_info *tp_event(int i)
{
	return &tp_events[i];
}

static struct tp_num tp_num_of(const struct tep_format_field *f, bool native)
{
	struct tp_num n = { 0 };

	if (!f || !native || f->offset < 0 || f->offset > UINT16_MAX)
		return n;
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
		return n;
	n.off = (uint16_t)f->offset;
	n.size = (uint8_t)f->size;
	n.sign = !!(f->flags & TEP_FIELD_IS_SIGNED);
	return n;
}

/* Resolves @d's fields in @e; false if @e is not the tracepoint we know. */
static bool tp_evdesc_init(struct tp_evdesc *d, struct tep_event *e, bool native)
{
	struct tep_format_field **num[] = { &d->id, &d->item, &d->val, &d->stats_updates,
					    &d->force, &d->needs_flush, &d->root, &d->level,
					    &d->cpu, &d->contended };
	size_t k;

	memset(d, 0, sizeof(*d));
	d->id = tep_find_field(e, "id");
	if (!d->id)
		return false;
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
	/* the path is bounds-checked where it is read, the numbers here */
	for (k = 0; k < sizeof(num) / sizeof(num[0]); k++)
		if (*num[k] && (*num[k])->offset + (*num[k])->size > d->min_size)
			d->min_size = (*num[k])->offset + (*num[k])->size;
	d->n_id = tp_num_of(d->id, native);
	d->n_item = tp_num_of(d->item, native);
	d->n_val = tp_num_of(d->val, native);
	d->n_root = tp_num_of(d->root, native);
	d->n_level = tp_num_of(d->level, native);
	d->n_cpu = tp_num_of(d->cpu, native);
	d->n_contended = tp_num_of(d->contended, native);
	d->n_stats_updates = tp_num_of(d->stats_updates, native);
	d->n_force = tp_num_of(d->force, native);
	d->n_needs_flush = tp_num_of(d->needs_flush, native);
	d->event = e;
	d->type = e->id;
	return true;
}

int tp_decoder_init(struct tp_decoder *dec, struct tep_handle *tep)
{
	int i, found = 0;

	memset(dec, 0, sizeof(*dec));
	dec->tep = tep;
	dec->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	dec->min_type = TP_TYPE_MAX + 1;
	dec->max_type = -1;
	for (i = 0; i < TP_NEVENTS; i++) {
		struct tep_event *e = tep_find_event_by_name(tep, tp_events[i].system,
							     tp_events[i].name);

		if (!e || e->id < 0 || e->id > TP_TYPE_MAX)
			continue;
		if (!tp_evdesc_init(&dec->desc[tp_events[i].kind], e, dec->native))
			continue;
		if (!dec->common_type) {
			dec->common_type = tep_find_common_field(e, "common_type");
			dec->common_pid = tep_find_common_field(e, "common_pid");
			dec->n_type = tp_num_of(dec->common_type, dec->native);
			dec->n_pid = tp_num_of(dec->common_pid, dec->native);
		}
		if (e->id < dec->min_type)
			dec->min_type = e->id;
		if (e->id > dec->max_type)
			dec->max_type = e->id;
		found++;
	}
	if (!found)
		return 0;
	dec->kind_of = calloc(dec->max_type - dec->min_type + 1, 1);
	if (!dec->kind_of) {
		tp_decoder_free(dec);
		return -ENOMEM;
	}
	for (i = 1; i <= MCR_EV_KIND_MAX; i++)
		if (dec->desc[i].event)
			dec->kind_of[dec->desc[i].type - dec->min_type] = i;
	return found;
}

void tp_decoder_free(struct tp_decoder *dec)
{
	free(dec->kind_of);
	memset(dec, 0, sizeof(*dec));
}

/* tep_read_number_field() zero-extends: signed fields narrower than 8 bytes are widened here. */
int64_t tp_field_num(const struct tep_format_field *f, const void *data)
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

/* A __data_loc or __rel_loc string is a 16-bit offset and a 16-bit length. */
const char *tp_field_string(const struct tep_format_field *f, const void *data, int *len)
{
	unsigned long long v;
	unsigned int off;

	if (!f)
		return NULL;
	if (!(f->flags & TEP_FIELD_IS_DYNAMIC)) {
		*len = f->size;
		return (const char *)data + f->offset;
	}
	if (tep_read_number_field((struct tep_format_field *)f, data, &v) < 0)
		return NULL;
	off = v & 0xffff;
	*len = (int)(v >> 16);
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += f->offset + f->size;
	return (const char *)data + off;
}

/*
 * tp_field_num() from the copied offset, size and sign when the data is in
 * our byte order: the live readers decode every record with it, so it is
 * the capture's hottest path.  The same bytes, the same sign extension.
 */
static inline int64_t tp_num(const struct tp_num *n, const struct tep_format_field *f,
			     const void *data)
{
	const unsigned char *p = (const unsigned char *)data + n->off;

	switch (n->size) {
	case 1:
		return n->sign ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
	case 2: {
		uint16_t v;

		memcpy(&v, p, sizeof(v));
		return n->sign ? (int64_t)(int16_t)v : (int64_t)v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, sizeof(v));
		return n->sign ? (int64_t)(int32_t)v : (int64_t)v;
	}
	case 8: {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		return (int64_t)v;
	}
	default:
		return tp_field_num(f, data);
	}
}

int tp_decode(const struct tp_decoder *dec, const void *data, unsigned int size,
	      struct mcr_event *ev)
{
	const struct tp_evdesc *d;
	int type = (int)tp_num(&dec->n_type, dec->common_type, data);
	int kind;

	if (!dec->kind_of || type < dec->min_type || type > dec->max_type)
		return 0;
	kind = dec->kind_of[type - dec->min_type];
	if (!kind)
		return 0;
	d = &dec->desc[kind];
	/* corrupt data is skipped, not read past its end */
	if (size < (unsigned int)d->min_size)
		return 0;
	ev->kind = kind;
	/* -1 as tep_data_pid() says when a format lacks common_pid */
	ev->pid = dec->common_pid ? (int32_t)tp_num(&dec->n_pid, dec->common_pid, data) : -1;
	ev->id = (uint64_t)tp_num(&d->n_id, d->id, data);
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
		ev->item = (int32_t)tp_num(&d->n_item, d->item, data);
		ev->val = tp_num(&d->n_val, d->val, data);
		break;
	case MCR_EV_FLUSH:
		ev->val = tp_num(&d->n_stats_updates, d->stats_updates, data);
		ev->flags = (tp_num(&d->n_force, d->force, data) ? MCR_FLUSH_FORCE : 0) |
			    (tp_num(&d->n_needs_flush, d->needs_flush, data) ? MCR_FLUSH_NEEDS : 0);
		break;
	case MCR_EV_LOCKED:
	case MCR_EV_UNLOCK:
	case MCR_EV_CONTENDED:
		ev->item = (int32_t)tp_num(&d->n_cpu, d->cpu, data);
		ev->flags = tp_num(&d->n_contended, d->contended, data) ? MCR_LOCK_CONTENDED : 0;
		/* fall through */
	case MCR_EV_MKDIR:
	case MCR_EV_RMDIR:
		ev->aux = (int32_t)tp_num(&d->n_root, d->root, data);
		ev->level = (int16_t)tp_num(&d->n_level, d->level, data);
		break;
	}
	return kind;
}

const char *tp_decode_path(const struct tp_decoder *dec, int kind, const void *data,
			   unsigned int size, int *len)
{
	const char *p = tp_field_string(dec->desc[kind].path, data, len);
	const char *end = (const char *)data + size;

	if (!p || *len <= 0 || p < (const char *)data || p + *len > end)
		return NULL;
	*len = (int)strnlen(p, (size_t)*len);
	return *len && p[0] == '/' ? p : NULL;
}
