/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tp_decode.h - the memcg and cgroup tracepoints we keep, decoded from their
 * ring-buffer payload into struct mcr_event.
 *
 * Contract: one table names the tracepoints and their event kinds; a decoder
 * finds their fields by name in a tep handle's format files once, and then
 * decodes a raw record (common fields included) by reading numbers at cached
 * offsets, never calling tep_find_event() (it writes a shared cache).  Used
 * by the live capture and the trace.dat importer, so both read the same
 * fields the same way.  The decoder does not own the tep handle.  Never
 * prints; returns negative errno.
 */
#ifndef MCR_TP_DECODE_H
#define MCR_TP_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <event-parse.h>

#include "event.h"

struct tp_event_info {
	const char	*system, *name;
	int		kind;
	bool		required;	/* without it there is nothing to replay */
};

/* The tracepoints, memcg ones first. */
int tp_event_count(void);
const struct tp_event_info *tp_event(int i);

/*
 * Where a number field is, copied out of its format field so that decoding a
 * record reads one small table; size 0: read it through the format field
 * (absent, another byte order or an unusual size).
 */
struct tp_num {
	uint16_t	off;
	uint8_t		size;
	uint8_t		sign;
};

/* One tracepoint's fields; NULL where the format lacks one. */
struct tp_evdesc {
	struct tep_event	*event;		/* NULL: not in this trace */
	struct tep_format_field	*id, *item, *val, *root, *level, *cpu, *contended;
	struct tep_format_field	*stats_updates, *force, *needs_flush, *path;
	struct tp_num		n_id, n_item, n_val, n_root, n_level, n_cpu, n_contended;
	struct tp_num		n_stats_updates, n_force, n_needs_flush;
	int			type;		/* common_type */
	int			min_size;	/* payload bytes the number fields need */
};

struct tp_decoder {
	struct tep_handle		*tep;		/* not owned */
	struct tep_format_field		*common_type, *common_pid;
	struct tp_num			n_type, n_pid;
	struct tp_evdesc		desc[MCR_EV_KIND_MAX + 1];
	int				min_type, max_type;
	unsigned char			*kind_of;	/* type - min_type -> kind; 0 = not ours */
	bool				native;		/* the data's byte order is ours */
};

/*
 * tp_decoder_init - resolve the table's tracepoints in @tep.  A tracepoint
 * without an "id" field is not the one we know and is left out.
 * Return: the number of tracepoints found, or -ENOMEM.
 */
int tp_decoder_init(struct tp_decoder *dec, struct tep_handle *tep);
void tp_decoder_free(struct tp_decoder *dec);

/*
 * tp_decode - decode the record at @data (@size payload bytes, common fields
 * included) into kind, pid, id, item, val, aux, level and flags of @ev; ts,
 * cpu and seq are left to the caller.  A record too short for its fields is
 * not read.  Return: the kind, 0 if the record is not one of ours.
 */
int tp_decode(const struct tp_decoder *dec, const void *data, unsigned int size,
	      struct mcr_event *ev);

/*
 * tp_decode_path - the cgroup path of a mkdir/rmdir record, bounds-checked
 * against @size and cut at its NUL; NULL unless it is a non-empty absolute
 * path.
 */
const char *tp_decode_path(const struct tp_decoder *dec, int kind, const void *data,
			   unsigned int size, int *len);

/* A number field, sign-extended when the format says signed; 0 if @f is NULL. */
int64_t tp_field_num(const struct tep_format_field *f, const void *data);

/*
 * tp_field_string - where a string field's bytes are, as tep_get_field_raw()
 * finds them (__data_loc / __rel_loc or a fixed array), without bounds checks.
 */
const char *tp_field_string(const struct tep_format_field *f, const void *data, int *len);

#endif
