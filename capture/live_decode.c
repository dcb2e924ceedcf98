// SPDX-License-Identifier: GPL-2.0
/*
 * The live side of decoding: our tracepoints' formats straight from tracefs,
 * then the decoder the importer uses too (tp_decode.c), so a record means the
 * same whichever way it was recorded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_local.h"
#include "tp_decode.h"

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
	int i, ret;

	memset(dec, 0, sizeof(*dec));
	dec->tep = live_tep_load();
	if (!dec->tep)
		return -MCR_E_NO_MEMCG_EVENTS;
	ret = tp_decoder_init(&dec->tp, dec->tep);
	if (ret < 0) {
		live_decoder_free(dec);
		return ret;
	}
	for (i = 0; i < tp_event_count(); i++) {
		if (tp_event(i)->required && !dec->tp.desc[tp_event(i)->kind].event) {
			live_decoder_free(dec);
			return -MCR_E_NO_MEMCG_EVENTS;
		}
	}
	return 0;
}

void live_decoder_free(struct live_decoder *dec)
{
	tp_decoder_free(&dec->tp);
	tep_free(dec->tep);
	memset(dec, 0, sizeof(*dec));
}

int live_decode(const struct live_decoder *dec, void *data, unsigned int size,
		struct mcr_event *ev, const char **path, int *path_len)
{
	int kind = tp_decode(&dec->tp, data, size, ev);

	if (kind == MCR_EV_MKDIR || kind == MCR_EV_RMDIR)
		*path = tp_decode_path(&dec->tp, kind, data, size, path_len);
	return kind;
}
