/* SPDX-License-Identifier: GPL-2.0 */
/*
 * store.h - the compact event store: per-CPU chunks of events, encoded and
 * compressed, one BLOB row of event_chunks per chunk.
 *
 * Contract: a struct db_chunk is one CPU's run of consecutive events (ring-
 * buffer order, seq increasing).  Whoever produces a CPU's events encodes
 * them (db_chunk_add), seals the chunk (db_chunk_seal: zstd) and hands it to
 * the one database writer (db_chunk_put), which only inserts the finished
 * BLOB.  Encoding and sealing touch no shared state and may run on any
 * thread, one thread per chunk.  db_chunk_decode() is the inverse and checks
 * everything the index row claims.  Nothing here prints.
 *
 * Encoding, before compression, one record per event:
 *   header byte: bits 0-3 kind, 4 id as previous, 5 pid as previous,
 *                6 aux/level/flags follow, 7 seq is not previous + 1
 *   ts - previous ts (zigzag varint; the first event's previous is first_ts)
 *   [seq - (previous seq + 1), zigzag varint]
 *   [id, varint]  item (zigzag varint)  val (zigzag varint)
 *   [pid, zigzag varint]  [aux, level (zigzag varints), flags (byte)]
 * "previous" restarts at every chunk, so a chunk decodes alone.  Updates,
 * the bulk of a trace, take 5-8 bytes before zstd; recordings of this
 * kernel come to 1-1.3 bytes an event after it (trace-cmd's trace.dat: 1.8).
 */
#ifndef MCR_DB_STORE_H
#define MCR_DB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct db;

/* Events per chunk at most: bounds a reader's memory per CPU (48 B an event). */
#define DB_CHUNK_EVENTS		65536
#define DB_CHUNK_REC_MAX	(1 + 8 * 10 + 1)	/* header, 8 varints, flags */

struct db_chunk {
	int		cpu;
	uint32_t	count;
	uint64_t	first_ts, last_ts, first_seq;
	uint32_t	kinds;			/* bit k: holds an event of kind k */
	uint64_t	kind_count[MCR_EV_KIND_MAX + 1];
	/* encoder state */
	uint64_t	prev_seq, prev_id;
	int32_t		prev_pid;
	uint8_t		*raw;			/* encoded, uncompressed */
	size_t		len, cap;
	void		*z;			/* compressed by db_chunk_seal() */
	size_t		zlen, zcap;
	void		*cctx;			/* ZSTD_CCtx, kept across chunks */
};

void db_chunk_init(struct db_chunk *c, int cpu);
void db_chunk_free(struct db_chunk *c);
/* Start a new run on the same CPU; buffers are kept. */
void db_chunk_reset(struct db_chunk *c);
/* Append @ev (its cpu is not checked: the chunk's is stored). -EINVAL bad kind. */
int db_chunk_add(struct db_chunk *c, const struct mcr_event *ev);
static inline int db_chunk_full(const struct db_chunk *c)
{
	return c->count >= DB_CHUNK_EVENTS;
}
/* Compress the encoded events into c->z / c->zlen.  -ENOMEM, -EIO. */
int db_chunk_seal(struct db_chunk *c);

/*
 * Insert a sealed chunk (count > 0) into the open bulk transaction (begun if
 * needed).  Only the writer thread calls it.  db_events_commit() commits.
 */
int db_chunk_put(struct db *db, const struct db_chunk *c);

/* One index row of event_chunks, what a reader checks a BLOB against. */
struct db_chunk_index {
	int64_t		chunk;		/* rowid */
	int		cpu;
	uint64_t	first_ts, last_ts, first_seq;
	uint32_t	count;
	uint32_t	raw_bytes;
};

/*
 * Decode the BLOB @z of @ix into @out[ix->count], using @raw (raw_bytes
 * large) as scratch.  @dctx is the caller's ZSTD_DCtx, made on first use and
 * kept across chunks (db_chunk_dctx_free()).  Returns 0, -ENOMEM,
 * -MCR_E_CORRUPT if the BLOB does not decompress to exactly raw_bytes, does
 * not hold exactly count events, or its last ts differs from last_ts;
 * -MCR_E_TIME if ts goes backwards.
 */
int db_chunk_decode(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		    uint8_t *raw, struct mcr_event *out);
void db_chunk_dctx_free(void *dctx);

#endif
