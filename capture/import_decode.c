// SPDX-License-Identifier: GPL-2.0
/*
 * import_decode.c - trace.dat records -> struct mcr_event, through the
 * decoder the live capture uses too (tp_decode.h): the same tracepoints,
 * the same fields, the same reading of them.
 */
#include <string.h>

#include "import-local.h"

/* (Re)resolves the tracepoints in im->tep; returns how many the buffer has. */
int imp_types_init(struct imp *im)
{
	tp_decoder_free(&im->dec);
	return tp_decoder_init(&im->dec, im->tep);
}

/*
 * Decodes @r into @ev; *@root is the hierarchy of rstat/mkdir/rmdir events,
 * -1 for memcg ones.  False if the record is not one of ours (or too short
 * to hold its fields: corrupt data is skipped, not read).
 */
bool imp_decode(struct imp *im, struct tep_record *r, struct mcr_event *ev, int *root)
{
	memset(ev, 0, sizeof(*ev));
	if (r->size < 0 || !tp_decode(&im->dec, r->data, (unsigned int)r->size, ev))
		return false;
	ev->ts = r->ts;
	ev->cpu = r->cpu;
	*root = ev->kind >= MCR_EV_LOCKED && ev->kind <= MCR_EV_RMDIR ? ev->aux : -1;
	return true;
}

/* The path of a mkdir/rmdir record, bounds-checked; NULL if bad. */
const char *imp_path(struct imp *im, struct tep_record *r, int kind, int *len)
{
	return tp_decode_path(&im->dec, kind, r->data, (unsigned int)r->size, len);
}
