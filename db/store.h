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
 * thread, one thread per chunk.  A reader opens a chunk (db_recs_open(),
 * db_cols_open()), which checks everything the index row claims before any
 * of its events is built, then builds its events a few at a time
 * (db_recs_build(), db_cols_build()).  Nothing here prints.
 *
 * Two encodings (meta store_version; one per file, every chunk of it):
 *
 * Version 1, one record per event:
 *   header byte: bits 0-3 kind, 4 id as previous, 5 pid as previous,
 *                6 aux/level/flags follow, 7 seq is not previous + 1
 *   ts - previous ts (zigzag varint; the first event's previous is first_ts)
 *   [seq - (previous seq + 1), zigzag varint]
 *   [id, varint]  item (zigzag varint)  val (zigzag varint)
 *   [pid, zigzag varint]  [aux, level (zigzag varints), flags (byte)]
 * "previous" restarts at every chunk, so a chunk decodes alone.  A varint
 * takes 10 bytes at most; bits past the 64th are dropped.  Updates,
 * the bulk of a trace, take 5-8 bytes before zstd; recordings of this
 * kernel come to 1-1.3 bytes an event after it (trace-cmd's trace.dat: 1.8).
 *
 * Version 2, column by column, every column fixed-width within the chunk:
 *   magic byte DB_STORE_V2_MAGIC, DB_COLS width bytes (0, 1, 2, 4 or 8),
 *   DB_COLS bases (little-endian u64), then the columns in enum db_col
 *   order, each count * width bytes, little-endian.
 * A column's value is its base plus the stored unsigned number (mod 2^64);
 * width 0 stores nothing, every value is the base.  The base is the
 * column's least value as int64, so the width is that of the spread.  ts
 * and seq are stored as deltas as in version 1 (ts - previous ts, seq -
 * previous seq - 1).  Decoding is one tight loop per column with no
 * branch per event, and a chunk is checked (ts order, last_ts) on
 * its columns before any event is built, so a reader may build its events
 * a few at a time (db_cols_build()).  zstd does what the varints did, in
 * frames back to back (zstd decompresses them as one) whose blocks end at
 * every column's end (a literals table per column, or the bytes as they
 * are where a table would save less than a third: a new frame where that
 * choice changes), with matches of 16 bytes at least (a shorter one
 * decodes slower than its literals): about 10 % larger than version 1 on
 * this kernel's recordings, and twice as fast to read.
 * The format is the decoder's: how the writer compresses may change without
 * a new version, the reader takes any zstd frames.  Every writer (capture,
 * import, synth, events --convert) writes version 2; version 1 is what
 * memcg-capture wrote before it.  A file's chunks are all of one version.
 */
#ifndef MCR_DB_STORE_H
#define MCR_DB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct db;

/*
 * Events per chunk at most: bounds a reader's memory per CPU, one
 * decompressed chunk (version 1: up to DB_CHUNK_REC_MAX bytes an event, 5-8
 * as written).
 */
#define DB_CHUNK_EVENTS		65536
/*
 * Version 2 chunks are written 16384 events long: a writer keeps each CPU's
 * open chunk as columns (8 bytes a field reserved, 1.3 MiB; the widths the
 * values need touched, 15-25 bytes an event) until it seals it, and a
 * reader one decompressed chunk per CPU.
 */
#define DB_CHUNK_V2_EVENTS	16384
#define DB_CHUNK_REC_MAX	(1 + 8 * 10 + 1)	/* header, 8 varints, flags */

#define DB_STORE_V1		1
#define DB_STORE_V2		2
#define DB_STORE_LATEST		DB_STORE_V2
#define DB_STORE_V2_MAGIC	0xc2

enum db_col {
	DB_COL_TS, DB_COL_SEQ, DB_COL_KIND, DB_COL_ID, DB_COL_ITEM, DB_COL_VAL,
	DB_COL_PID, DB_COL_AUX, DB_COL_LEVEL, DB_COL_FLAGS, DB_COLS
};
#define DB_CHUNK_V2_HDR		(1 + DB_COLS + 8 * DB_COLS)

/* The most bytes a chunk of @count events decodes from: index rows above it are corrupt. */
static inline uint64_t db_chunk_raw_max(int version, uint64_t count)
{
	return version == DB_STORE_V1 ? count * DB_CHUNK_REC_MAX :
	       DB_CHUNK_V2_HDR + count * 8 * DB_COLS;
}

struct db_chunk {
	int		cpu;
	int		version;		/* DB_STORE_V*, DB_STORE_LATEST by db_chunk_init() */
	uint32_t	count;
	uint64_t	first_ts, last_ts, first_seq;
	uint32_t	kinds;			/* bit k: holds an event of kind k */
	uint64_t	kind_count[MCR_EV_KIND_MAX + 1];
	/*
	 * The cgroup ids of its reads (non-forced memcg_flush_stats), a repeat
	 * of the one before left out: what the writer stores as meta
	 * read_cgroups, so that replay need not decode the events for them.
	 */
	uint64_t	*read_ids;
	size_t		nr_read_ids, cap_read_ids;
	/* encoder state */
	uint64_t	prev_seq, prev_id;
	int32_t		prev_pid;
	/*
	 * version 2: each column as the events come (db_chunk_add()); a wide
	 * column's values above col_base at col_w bytes, a field column's as
	 * the fields are (both set for every column by the seal)
	 */
	uint8_t		*cols;
	int64_t		col_base[DB_COLS];
	uint64_t	col_lim[DB_COLS];	/* col_lim(col_w), for the add's fit test */
	uint8_t		col_w[DB_COLS];
	uint8_t		col_passes[DB_COLS];	/* widenings and new bases this chunk */
	uint32_t	col_loose;		/* bit k: column k's base or width not the least */
	uint8_t		*raw;			/* encoded, uncompressed */
	size_t		len, cap;
	void		*z;			/* compressed by db_chunk_seal() */
	size_t		zlen, zcap;
	void		*cctx;			/* ZSTD_CCtx, kept across chunks */
	/* version 2: the match finder's table and the chunk's zstd sequences, kept too */
	uint32_t	*mtab;
	void		*seqs;			/* ZSTD_Sequence[seqs_cap] */
	size_t		seqs_cap;
};

/* A chunk of the latest version; set c->version before the first add for another. */
void db_chunk_init(struct db_chunk *c, int cpu);
void db_chunk_free(struct db_chunk *c);
/* Start a new run on the same CPU; buffers are kept. */
void db_chunk_reset(struct db_chunk *c);
/*
 * db_chunk_take - move @c's sealed run into @out and reset @c.  @out gets
 * what db_chunk_put() reads (the index fields, the read ids and the
 * compressed bytes) and gives @c its buffers in exchange; the encoder's buffers (1 MiB
 * and more, with the zstd context) stay with @c.  So a producer that seals
 * on one thread and has the chunk put on another keeps one set of them,
 * not one per chunk in flight, each faulted in afresh.  @out is a chunk of
 * db_chunk_init() or of an earlier take, and only ever a take's target.
 */
void db_chunk_take(struct db_chunk *c, struct db_chunk *out);
/*
 * Append @ev (its cpu is not checked: the chunk's is stored).  -EINVAL bad
 * kind, -ENOMEM, -ENOSPC a version 2 chunk already full (db_chunk_full()).
 */
int db_chunk_add(struct db_chunk *c, const struct mcr_event *ev);
static inline int db_chunk_full(const struct db_chunk *c)
{
	return c->count >= (c->version == DB_STORE_V1 ? DB_CHUNK_EVENTS : DB_CHUNK_V2_EVENTS);
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
 * The bytes a version 1 chunk is opened in (db_recs_open()'s @raw): the
 * records, DB_RECS_PAD zeroed bytes after them (the records are read 8
 * and 16 bytes at a time) and a byte per record, its length.
 */
#define DB_RECS_PAD		16
static inline size_t db_recs_size(const struct db_chunk_index *ix)
{
	return (size_t)ix->raw_bytes + DB_RECS_PAD + ix->count;
}

/* A version 1 chunk opened by db_recs_open(): the next record to build, and what it follows. */
struct db_recs {
	const uint8_t	*p;
	const uint8_t	*len;			/* of each record, found by the check */
	int		cpu;
	uint32_t	next;
	uint64_t	ts, seq, id;		/* of event next - 1 */
	int32_t		pid;
};

/*
 * Decompress the version 1 BLOB @z of @ix into @raw (db_recs_size() large;
 * @recs points into it) and check all of it before any event is built:
 * every record well formed (its varints within the chunk and of 10 bytes
 * at most, the flags byte where H_EXTRA says), exactly count
 * of them ending exactly at raw_bytes, the ts deltas adding up to last_ts.
 * Only ts is decoded: the other varints are only measured, and each
 * record's length kept for the build.  @dctx is the caller's ZSTD_DCtx,
 * made on first use and kept across chunks (db_chunk_dctx_free()).
 * Returns 0, -ENOMEM, -MCR_E_CORRUPT if the BLOB does not decompress to
 * exactly raw_bytes or fails a check; -MCR_E_TIME if a ts is below its
 * predecessor's (unsigned, a wrap past 2^64 included; the first event's
 * predecessor is first_ts), *@good then the number of events before the
 * first such (count if none); on 0, count.
 */
int db_recs_open(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		 uint8_t *raw, struct db_recs *recs, uint32_t *good);
/*
 * Build the next @n events of @recs (n <= count - next) into @out.  No
 * bounds are checked: db_recs_open() proved the records whole, and found
 * where each starts, so that decoding one does not wait on the one before.
 */
void db_recs_build(struct db_recs *recs, uint32_t n, struct mcr_event *out);
void db_chunk_dctx_free(void *dctx);

/* A version 2 chunk opened by db_cols_open(): its columns, and the next event to build. */
struct db_cols {
	const uint8_t	*col[DB_COLS];
	uint64_t	base[DB_COLS];
	uint8_t		width[DB_COLS];
	int		cpu;
	uint32_t	count, next;
	uint64_t	ts, seq;		/* of event next - 1 */
};

/*
 * Decompress the version 2 BLOB @z of @ix into @raw (raw_bytes large; the
 * columns point into it) and check all of it as db_recs_open() does (the
 * ts sum, the first step back), with the same returns.  On
 * -MCR_E_TIME, *@good is the number of events before the first whose ts is
 * below its predecessor's (count if none); on 0, count.
 */
int db_cols_open(void **dctx, const struct db_chunk_index *ix, const void *z, size_t zlen,
		 uint8_t *raw, struct db_cols *cols, uint32_t *good);
/*
 * Build the next @n events of @cols (n <= count - next) into @out.  The
 * fields that are the same for every event of the chunk (its CPU, columns
 * of width 0) are written into the @fill events from @out (@fill >= @n),
 * or with @fill 0 not at all: the caller's buffer holds the chunk's there
 * already, as it does after a build of the same chunk that filled them.
 */
void db_cols_build(struct db_cols *cols, uint32_t n, struct mcr_event *out, uint32_t fill);

#endif
