/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iter_local.h - what the files of the event reader share, from the bottom
 * up: iter_chunk.c reads a CPU's chunks, iter_event.c merges event by event
 * (packed keys, else the heap), iter_round.c in rounds, iter_rows.c reads
 * the previous format's rows, and iter.c opens the reader and hands the
 * events out through the merge in use.  Not for the rest of db/.
 */
#ifndef MCR_ITER_LOCAL_H
#define MCR_ITER_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db_local.h"
#include "store.h"

#define DB_ITER_SCAN	4		/* CPUs merged by a scan, more by the heap */
#define DB_ITER_AHEAD	8		/* events prefetched ahead on the CPU read */
#define DB_ITER_BATCH	256		/* events built at a time per CPU */
#define DB_ITER_FILL	256		/* db_iter_next_batch() event by event */
#define DB_ITER_GROUP	8		/* packed keys: CPUs per group */
#define DB_ITER_KEY_BITS 6		/* packed keys: bits of the CPU's index */
#define DB_ITER_KEY_CPUS (1u << DB_ITER_KEY_BITS)
#define DB_ITER_WINDOW	32		/* index rows read at a time per CPU */

struct db_iter_cpu {
	int			cpu;
	/*
	 * A window of its chunks' index rows, in order: ix[next_ix .. nix)
	 * to go, then ix_left more not read yet (db_iter_window()), the
	 * next from (ix_ts, ix_chunk) on.
	 */
	struct db_chunk_index	*ix;
	uint32_t		nix, next_ix;
	uint32_t		ix_left;
	int64_t			ix_ts, ix_chunk;
	struct mcr_event	*ev;		/* a batch of the chunk: ev[pos .. n) to go */
	uint32_t		n, pos;
	uint64_t		last_ts;	/* of the previous chunk */
	/* the chunk: its records or columns, events built from them DB_ITER_BATCH at a time */
	struct db_recs		recs;		/* version 1 */
	struct db_cols		cols;		/* version 2 */
	uint32_t		built;		/* events of the chunk built so far */
	uint32_t		foreign;	/* ev[0 .. foreign) may hold another chunk's fields */
	uint32_t		good;		/* events to deliver: before a step back in ts */
	int			err;		/* after those: the chunk went wrong */
	struct db_chunk_buf	*buf;		/* the chunk decompressed */
};

/*
 * A chunk decompressed and checked, held by every iterator of the
 * connection that is in it at once: replay's second reader of the same
 * file (the prepass's, validate's inference's) mostly reads the very chunk
 * the pass reads, and decompressed it again into buffers of its own, a
 * chunk per CPU (15 MiB at 64 CPUs).  Each holder builds its events from it
 * with its own copy of the opened state.  A buffer no one holds is taken
 * for the next chunk any iterator opens, and freed when an iterator closes,
 * so memory follows the distinct chunks held at once, not readers times
 * CPUs.  Taken, not freed and allocated again: with a reader a chunk ahead
 * of the other, a buffer freed and one allocated at each chunk raised
 * validate's peak RSS on a 2-CPU recording from 15 to 20 MiB.
 */
struct db_chunk_buf {
	struct db_chunk_buf	*next;		/* db->chunk_bufs */
	int64_t			chunk;		/* the index's chunk; meaningless unless @ok */
	int			cpu;
	unsigned int		refs;
	bool			ok;		/* it holds chunk @chunk of @cpu, opened */
	size_t			size;		/* of raw */
	/* as db_recs_open() or db_cols_open() left them: each holder starts from these */
	struct db_recs		recs;
	struct db_cols		cols;
	uint32_t		good;
	int			err;
	uint8_t			raw[] __attribute__((aligned(64)));
};

/* A heap entry: a CPU with events left, keyed by its head's (ts, cpu). */
struct db_iter_head {
	uint64_t		ts;
	int			cpu;
	struct db_iter_cpu	*c;
};

struct db_iter {
	struct db		*db;
	sqlite3_stmt		*st;		/* rows, or the BLOB of one chunk */
	sqlite3_stmt		*hold;		/* at a row: the read transaction, db_iter_chunks() */
	uint64_t		count;
	uint64_t		from, to;
	int			err;		/* sticky: once failed, always failed */
	bool			done;		/* the end was returned: a statement would start over */
	bool			primed;		/* every CPU's first chunk loaded */
	bool			cached;		/* counted in db->iters: db_iter_cache() */
	unsigned int		nr_possible;
	int			version;	/* of the store: DB_STORE_V* */
	struct db_chunk_index	*ix;		/* every CPU's window */
	size_t			raw_size;	/* a CPU's room for a chunk decompressed */
	sqlite3_stmt		*win;		/* a CPU's next window of index rows */
	bool			by_chunk;	/* the index's order is not the chunks': win sorts */
	struct db_iter_cpu	*cpus;		/* CPUs that have chunks */
	unsigned int		nr_cpus, nr_heap;
	struct db_iter_head	*heap;		/* min-heap of the CPUs with a head event */
	uint64_t		next_ts;	/* the least key below heap[0]: */
	int			next_cpu;	/* heap[0] is taken from while before it */
	/*
	 * Packed keys, instead of the heap while every ts fits: per CPU (by
	 * index in cpus[], which is in cpu order) (ts - key_base) << KEY_BITS
	 * | index, UINT64_MAX once it has no events left, and the least key
	 * of each group of DB_ITER_GROUP CPUs.
	 */
	bool			packed;
	bool			run;		/* cpus[run_idx] is taken from while below run_lim */
	unsigned int		run_idx;
	uint64_t		run_lim;
	uint64_t		key_base, key_lim;
	uint64_t		*key, *gmin;
	unsigned int		nr_groups;
	/*
	 * Rounds (packed keys): every CPU's built batch merged at once up
	 * to a horizon, into out[], checked, then handed out with no
	 * comparison per event (db_iter_round()).  out[] points into the
	 * CPUs' batches, so the CPUs are topped up only at the next round
	 * (db_iter_round_topup()), once the caller is done with
	 * those events.
	 */
	bool			rounds;
	uint64_t		*mk, *mk_tmp;	/* key runs, DB_ITER_BATCH + 2 a CPU */
	uint32_t		*mlen;
	const struct mcr_event	**out;		/* the round's events, checked */
	uint32_t		out_n, out_pos;
	int			out_err;	/* after *out[out_n - 1] */
	/* db_iter_next_batch() without rounds: events copied, and pointers to them */
	struct mcr_event	*fill;
	const struct mcr_event	**fill_p;
	struct db_event_bounds	bounds;		/* db_event_check() */
	void			*dctx;		/* ZSTD_DCtx, kept across chunks */
	uint8_t			*arena;		/* every CPU's ev: db_iter_arena() */
	uint64_t		last_ts[];	/* rows: per ring-buffer CPU */
};

/* iter_chunk.c: a CPU's chunks, opened and built a batch at a time */
int db_iter_window(struct db_iter *it, struct db_iter_cpu *c);
void db_iter_build(const struct db_iter *it, struct db_iter_cpu *c, uint32_t at, bool opened);
int db_iter_open_chunk(struct db_iter *it, struct db_iter_cpu *c);
int db_iter_load(struct db_iter *it, struct db_iter_cpu *c);
int db_iter_refill(struct db_iter *it, struct db_iter_cpu *c);
void db_iter_unhold(struct db_iter_cpu *c);
void db_iter_bufs_trim(struct db *db);

/* iter_event.c: the heap or the packed keys over the heads; the next event by them */
void db_iter_heapify(struct db_iter *it);
bool db_iter_pack(struct db_iter *it);
int db_iter_next_chunked(struct db_iter *it, struct mcr_event *ev);

/* iter_round.c: rounds until one has events (1), 0 at the end, or the error */
int db_iter_fill(struct db_iter *it);

/* iter_rows.c: the previous format's next row */
int db_iter_next_row(struct db_iter *it, struct mcr_event *ev);

/* The bytes @ix's chunk is opened in (db_recs_open()'s or db_cols_open()'s @raw). */
static inline size_t db_iter_raw_size(const struct db_iter *it, const struct db_chunk_index *ix)
{
	return it->version == DB_STORE_V2 ? ix->raw_bytes : db_recs_size(ix);
}

/* Whether @c has chunks not opened yet. */
static inline bool db_iter_chunks_left(const struct db_iter_cpu *c)
{
	return c->next_ix < c->nix || c->ix_left;
}

/* Whether @c's chunk has events past its batch. */
static inline bool db_iter_unbuilt(const struct db_iter_cpu *c)
{
	return c->built < c->good;
}

static inline uint64_t db_iter_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The least of a group's keys: a tree of conditional moves, no branch. */
static inline uint64_t db_iter_group_min(const uint64_t *k)
{
	return db_iter_min(db_iter_min(db_iter_min(k[0], k[1]), db_iter_min(k[2], k[3])),
			   db_iter_min(db_iter_min(k[4], k[5]), db_iter_min(k[6], k[7])));
}

/* A round's key of @ts on cpus[@idx]: 0 and UINT64_MAX stay free for the merge's sentinels. */
static inline uint64_t db_iter_round_key(const struct db_iter *it, uint64_t ts, unsigned int idx)
{
	return (ts - it->key_base + 1) << DB_ITER_KEY_BITS | idx;
}

/*
 * Whether @c's fresh batch can be merged in rounds: its ts within the keys
 * and its first not below @prev, the last handed out of the CPU (the first
 * event of a chunk that steps back in time may be).  Within a batch ts only
 * grows: db_recs_open() and db_cols_open() cut the chunk before any step
 * back.
 */
static inline bool db_iter_round_fits(const struct db_iter *it, const struct db_iter_cpu *c,
				      uint32_t from, uint64_t prev)
{
	uint64_t lo = c->ev[from].ts, hi = c->ev[c->n - 1].ts;

	return lo >= prev && lo >= it->key_base && hi - it->key_base < it->key_lim;
}

#endif /* MCR_ITER_LOCAL_H */
