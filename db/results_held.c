// SPDX-License-Identifier: GPL-2.0
/*
 * results_held.c - the series and cgroup_series rows of a pass, held until
 * db_results_flush() (results.c) and inserted then in key order; it knows
 * no table's columns: results.c gives each struct held (results_local.h)
 * its statements, its number of values and the function that binds a row.
 *
 * series and cgroup_series rows come sample by sample, every key at one ts,
 * but the tables are WITHOUT ROWID B-trees keyed by (run, cgroup, [line,]
 * ts): inserted as they come, each row lands on the last leaf page of its
 * line, thousands of lines apart, and SQLite writes each such page out
 * again every time its cache spills.  So they are held until the pass ends
 * (db_results_flush()) and inserted then in key order: a pass's runs have
 * the largest run_ids, so the rows append to the table, every page written
 * once.  Held compactly, a line's rows after one another as varints of the
 * change from the row before (a series' ts step and most errors do not
 * change: about 4 bytes a row); past DB_HELD_BYTES they go out to an
 * unnamed temporary file as one run of records, a record a line (its id
 * and bytes), the lines in key order.  The flush merges the runs: line by
 * line in key order, each run's records of it in the order they were
 * written, then its bytes still in memory; past DB_HELD_WAYS runs, groups
 * of them are merged into one first (held_reduce()).  Memory holds the
 * lines, their unwritten bytes and the runs' read buffers, DB_RUN_BYTES in
 * all however many runs are read at once, whatever the trace's length.
 * The rows are the same; only the order and time of the inserts differ.
 * They go DB_BULK_ROWS at a time through one statement of as many VALUES
 * rows (db_results_bulk()), so the statement's run, reset and bindings are
 * paid once per batch, not per row.
 *
 * Or, for a table with held.piece (series_lines, the view series' storage),
 * a line's rows go in as pieces: consecutive rows at one ts step, their
 * other values as a JSON array, DB_PIECE_TEXT bytes of it at most, one
 * table row and one statement each.  A series row cost about 4500
 * instructions in SQLite's B-tree as a row of its own (5 M events, break:
 * 1.7 G, more than the rest of the series); a piece of about 60 of them
 * costs about what one did, and takes half the bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "db_local.h"
#include "error.h"
#include "results_local.h"

/*
 * Bytes the held lines' buffers take (their room not used yet too) before
 * the rows go out to the spill file, whose buffers are then freed: with the
 * 8-CPU fleet trace's series lines, reached within a few million events by
 * break alone, sooner by three policies, so that memory is flat from there,
 * however long the trace.  The two tables' rows share it (held.peer) and
 * are spilled together: with a limit each, cgroup_series' fewer rows
 * reached theirs only after 20 M events, and the peak grew by 1 MiB
 * between 5 and 100 M.  Counting the bytes used, not the room, let each
 * line keep the largest buffer it ever needed: 2 MiB used took 3.8 MiB and
 * grew until the end of a 20 M event trace.
 */
#define DB_HELD_BYTES		(1u << 20)
#define DB_SPILL_BUF		(64u << 10)	/* a spill's records go out in writes of this */
/*
 * The merge reads each run in reads of DB_RUN_BYTES / runs, 8 KiB at most:
 * 32 runs of 8 KiB, DB_HELD_WAYS of 512 bytes.  With 16 ways (8 KiB each),
 * a replay of 100 M events (the 8-CPU fleet trace, three policies) spilled
 * 265 runs and merged them in groups before the insert: the spill file
 * written twice, 2.5 times the database's growth in all (1.4 times with
 * every run read at once, as at 20 M events).
 */
#define DB_RUN_BYTES		(256u << 10)
#define DB_RUN_BUF		(8u << 10)
#define DB_REC_HDR		8		/* a record: line id, byte count (u32 each) */
#define DB_LINE_COLS		5	/* values of a row at most, ts first */

/*
 * The rows of one key of a table but ts (a line: run, cgroup[, kind, item]),
 * in ts order, encoded: per row the change of the ts step (a series' step is
 * constant: one byte) and the change of every other value, zigzag varints.
 */
struct held_line {
	int64_t			key[4];		/* run_id, cgroup_id, kind, item */
	uint64_t		last[DB_LINE_COLS];	/* the last row's values */
	uint64_t		last_step;	/* its ts - the one before */
	uint64_t		rows;
	uint8_t			*buf;		/* rows not written out */
	size_t			len, cap;
	uint32_t		id;		/* its records' in the spill file: made id-th */
	bool			spilled;	/* some of its rows are in the spill file */
};

/* Key order of the tables, as SQLite compares them (the integers as signed). */
static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int held_line_cmp(const void *pa, const void *pb)
{
	const struct held_line *a = pa, *b = pb;
	int i, c = 0;

	for (i = 0; !c && i < 4; i++)
		c = cmp_i64(a->key[i], b->key[i]);
	return c;
}

/*
 * A line's bytes grow by a row: at most a 10-byte varint a value.  @h->bytes
 * counts what the lines' buffers take, room not used yet too.
 */
static int held_reserve(struct held *h, struct held_line *l, size_t more)
{
	size_t cap;
	uint8_t *v;

	if (l->len + more <= l->cap)
		return 0;
	cap = l->cap ? l->cap * 2 : 64;
	while (cap < l->len + more)
		cap *= 2;
	v = realloc(l->buf, cap);
	if (!v)
		return -ENOMEM;
	h->bytes += cap - l->cap;
	l->buf = v;
	l->cap = cap;
	return 0;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

/* Return: bytes read, 0 if the varint runs past @end. */
static size_t get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t n;

	for (n = 0; p + n < end && n < 10; n++) {
		x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
		if (!(p[n] & 0x80)) {
			*v = x;
			return n + 1;
		}
	}
	return 0;
}

/* Differences wrap around: every 64-bit value comes back as it went in. */
static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static uint64_t held_hash(const int64_t *key)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < 4; i++) {
		h ^= (uint64_t)key[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return h;
}

/* Index @h's lines in a table of @cap slots, a power of 2 above 2 x nr. */
static int held_rehash(struct held *h, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));
	size_t i, j;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < h->nr; i++) {
		for (j = held_hash(h->lines[i].key) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = (uint32_t)(i + 1);
	}
	free(h->hash);
	h->hash = t;
	h->hash_cap = cap;
	return 0;
}

/* The line of @key, made if new; NULL: no memory. */
static struct held_line *held_line_get(struct held *h, const int64_t *key)
{
	struct held_line *l;
	size_t j;

	if (2 * (h->nr + 1) > h->hash_cap &&
	    (h->nr >= UINT32_MAX / 4 || held_rehash(h, h->hash_cap ? h->hash_cap * 2 : 1024)))
		return NULL;
	for (j = held_hash(key) & (h->hash_cap - 1); h->hash[j]; j = (j + 1) & (h->hash_cap - 1)) {
		l = &h->lines[h->hash[j] - 1];
		if (!memcmp(l->key, key, sizeof(l->key)))
			return l;
	}
	if (h->nr == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;

		l = realloc(h->lines, cap * sizeof(*l));
		if (!l)
			return NULL;
		h->lines = l;
		h->cap = cap;
	}
	l = &h->lines[h->nr];
	*l = (struct held_line){ .key = { key[0], key[1], key[2], key[3] }, .id = (uint32_t)h->nr };
	h->hash[j] = (uint32_t)++h->nr;
	return l;
}

void db_held_free(struct held *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++)
		free(h->lines[i].buf);
	free(h->lines);
	free(h->hash);
	free(h->runs);
	h->runs = NULL;
	h->nr_runs = h->cap_runs = 0;
	if (h->spill >= 0)
		close(h->spill);
	h->lines = NULL;
	h->hash = NULL;
	h->nr = h->cap = h->hash_cap = h->bytes = 0;
	h->spill = -1;
	h->spill_len = 0;
}

/* Put @h's lines in key order (the index follows). */
static int held_sort(struct held *h)
{
	if (!h->nr)
		return 0;
	qsort(h->lines, h->nr, sizeof(*h->lines), held_line_cmp);
	return held_rehash(h, h->hash_cap);
}

/* An unnamed file in @dir, gone when closed: O_TMPFILE, or a name unlinked at once. */
static int held_spill_in(const char *dir)
{
	char path[4096];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/mcr-rows.XXXXXX", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/*
 * The file for the rows written out: in $TMPDIR (as SQLite's own temporary
 * files), else, or if that cannot have one, in /tmp.
 */
static int held_spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = -ENOENT;

	if (dir && *dir)
		fd = held_spill_in(dir);
	return fd >= 0 ? fd : held_spill_in("/tmp");
}

/* pwrite() with pread()'s signature, so that one loop serves both directions */
static ssize_t pwrite_buf(int fd, void *p, size_t len, off_t off)
{
	return pwrite(fd, p, len, off);
}

/* All @len bytes at @off through @io (pread or pwrite_buf): 0, -errno, or -EIO at a short end */
static int pio_all(ssize_t (*io)(int, void *, size_t, off_t), int fd, uint8_t *p, size_t len,
		   uint64_t off)
{
	while (len) {
		ssize_t n = io(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Records staged for one write to the spill file. */
struct held_out {
	struct held		*h;
	uint8_t			*buf;
	size_t			len;
};

static int held_out_flush(struct held_out *o)
{
	int err = pio_all(pwrite_buf, o->h->spill, o->buf, o->len, o->h->spill_len);

	if (!err)
		o->h->spill_len += o->len;
	o->len = 0;
	return err;
}

static int held_out_put(struct held_out *o, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t n;
	int err;

	while (len) {
		if (o->len == DB_SPILL_BUF) {
			err = held_out_flush(o);
			if (err)
				return err;
		}
		n = DB_SPILL_BUF - o->len < len ? DB_SPILL_BUF - o->len : len;
		memcpy(o->buf + o->len, b, n);
		o->len += n;
		b += n;
		len -= n;
	}
	return 0;
}

/*
 * Write every line's held bytes out to the spill file as one run: a record
 * a line that has any (its id, its byte count, the bytes), the lines in key
 * order, so that the merge reads every run forward.
 */
static int held_spill(struct held *h)
{
	struct held_out o = { .h = h };
	size_t i;
	int err;

	if (h->spill < 0) {
		h->spill = held_spill_open();
		if (h->spill < 0) {
			err = h->spill;
			h->spill = -1;
			return err;
		}
	}
	if (h->nr_runs == h->cap_runs) {
		size_t cap = h->cap_runs ? 2 * h->cap_runs : 16;
		struct held_span *v = realloc(h->runs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->runs = v;
		h->cap_runs = cap;
	}
	o.buf = malloc(DB_SPILL_BUF);
	if (!o.buf)
		return -ENOMEM;
	h->runs[h->nr_runs].off = h->spill_len;
	err = held_sort(h);
	for (i = 0; !err && i < h->nr; i++) {
		struct held_line *l = &h->lines[i];
		uint32_t hdr[2] = { l->id, (uint32_t)l->len };

		if (!l->len)
			continue;
		err = held_out_put(&o, hdr, sizeof(hdr));
		if (!err)
			err = held_out_put(&o, l->buf, l->len);
		l->spilled = true;
		/* the room goes too: a line's next rows may be fewer */
		free(l->buf);
		l->buf = NULL;
		l->len = l->cap = 0;
	}
	if (!err)
		err = held_out_flush(&o);
	free(o.buf);
	if (!err) {
		h->runs[h->nr_runs++].end = h->spill_len;
		h->bytes = 0;
	}
	return err;
}

/*
 * One row of line @key: @v[0] its ts, after the line's last row's (in the
 * order SQLite compares them), then @h->cols - 1 more values.
 */
int db_held_add(struct held *h, const int64_t *key, const uint64_t *v)
{
	struct held_line *l = held_line_get(h, key);
	uint64_t step;
	size_t i, n;
	int err;

	if (!l)
		return -ENOMEM;
	if (l->rows && (int64_t)v[0] <= (int64_t)l->last[0])
		return -EINVAL;	/* a line's rows come in ts order, once each */
	err = held_reserve(h, l, 10 * h->cols);
	if (err)
		return err;
	step = v[0] - l->last[0];
	n = put_varint(l->buf + l->len, zigzag(step - l->last_step));
	for (i = 1; i < h->cols; i++)
		n += put_varint(l->buf + l->len + n, zigzag(v[i] - l->last[i]));
	l->len += n;
	l->last_step = step;
	memcpy(l->last, v, h->cols * sizeof(*v));
	l->rows++;
	if (h->bytes + (h->peer ? h->peer->bytes : 0) <= (h->limit ? h->limit : DB_HELD_BYTES))
		return 0;
	err = held_spill(h);
	if (!err && h->peer && h->peer->bytes)
		err = held_spill(h->peer);
	return err;
}

/*
 * @one's INSERT with its "VALUES (?,...)" repeated DB_BULK_ROWS times,
 * prepared: the parameters of row i are i * (parameters of a row) + 1...
 */
int db_results_bulk(struct db *db, const char *one, sqlite3_stmt **st)
{
	const char *tuple = strstr(one, "VALUES ");
	size_t head, len, i;
	char *sql, *p;
	int err;

	if (!tuple)
		return -EINVAL;
	tuple += strlen("VALUES ");
	head = (size_t)(tuple - one);
	len = strlen(tuple);
	sql = malloc(head + DB_BULK_ROWS * (len + 1) + 1);
	if (!sql)
		return -ENOMEM;
	memcpy(sql, one, head);
	p = sql + head;
	for (i = 0; i < DB_BULK_ROWS; i++) {
		if (i)
			*p++ = ',';
		memcpy(p, tuple, len);
		p += len;
	}
	*p = 0;
	err = db_prepare(db, sql, st);
	free(sql);
	return err;
}

/*
 * A piece of one line on its way in (held.piece): rows at a constant ts
 * step, their values but ts as a JSON array's elements.
 */
struct held_piece {
	int64_t			ts, step, last;	/* its first row's ts, the step, the last row's */
	size_t			nr;		/* rows */
	size_t			len;		/* of text */
	char			text[DB_PIECE_TEXT + 1];
};

/* Decoded rows on their way in: DB_BULK_ROWS at a time through the bulk statement. */
struct held_ins {
	struct held		*h;
	int			nr;
	uint64_t		key[DB_BULK_ROWS][4];
	uint64_t		v[DB_BULK_ROWS][DB_LINE_COLS];
	struct held_piece	pc;
};

/* Bind row @key, @v as the row whose first parameter is @at + 1: @h->keys keys, then @h->cols values */
static void held_bind(const struct held *h, sqlite3_stmt *st, int at, const uint64_t *key,
		      const uint64_t *v)
{
	size_t i;

	for (i = 0; i < h->keys; i++)
		sqlite3_bind_int64(st, ++at, (int64_t)key[i]);
	for (i = 0; i < h->cols; i++)
		sqlite3_bind_int64(st, ++at, (int64_t)v[i]);
}

int db_results_rows(sqlite3_stmt *bulk, sqlite3_stmt *one, int nr,
		    void (*bind)(void *ctx, sqlite3_stmt *st, int at, int i), void *ctx)
{
	int cols = sqlite3_bind_parameter_count(one), i, err = 0;

	if (nr == DB_BULK_ROWS) {
		for (i = 0; i < nr; i++)
			bind(ctx, bulk, i * cols, i);
		return db_step_reset(bulk);
	}
	for (i = 0; !err && i < nr; i++) {
		bind(ctx, one, 0, i);
		err = db_step_reset(one);
	}
	return err;
}

static void held_ins_bind(void *ctx, sqlite3_stmt *st, int at, int i)
{
	struct held_ins *in = ctx;

	held_bind(in->h, st, at, in->key[i], in->v[i]);
}

/* Insert the rows gathered (db_results_rows()); then none are. */
static int held_ins_flush(struct held_ins *in)
{
	int err = db_results_rows(in->h->bulk, in->h->one, in->nr, held_ins_bind, in);

	in->nr = 0;
	return err;
}

/* @v in decimal at @p, as JSON and SQLite write an integer: its length. */
static size_t put_i64(char *p, int64_t v)
{
	char d[20];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0, i = 0;

	do {
		d[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		p[i++] = '-';
	while (n)
		p[i++] = d[--n];
	return i;
}

/* Insert line @l's piece, if it has rows; then it has none. */
static int held_piece_flush(struct held_ins *in, const struct held_line *l)
{
	struct held_piece *pc = &in->pc;
	sqlite3_stmt *st = in->h->piece;
	int at = 0;
	size_t i;

	if (!pc->nr)
		return 0;
	pc->text[pc->len++] = ']';
	for (i = 0; i < in->h->keys; i++)
		sqlite3_bind_int64(st, ++at, l->key[i]);
	sqlite3_bind_int64(st, ++at, pc->ts);
	sqlite3_bind_int64(st, ++at, pc->step);
	sqlite3_bind_text(st, ++at, pc->text, (int)pc->len, SQLITE_STATIC);
	pc->nr = 0;
	return db_step_reset(st);
}

/*
 * Row @v of line @l into its piece, which goes in first if the row's ts is
 * not one step after the last (ts + k * step must give every row's ts, in
 * 64 bits) or its text is full.
 */
static int held_piece_add(struct held_ins *in, const struct held_line *l, const uint64_t *v)
{
	struct held_piece *pc = &in->pc;
	int64_t ts = (int64_t)v[0], d = 0, span = 0;
	char row[DB_LINE_COLS * 21 + 2];
	size_t n = 0, i;
	int err;

	row[n++] = '[';
	for (i = 1; i < in->h->cols; i++) {
		if (i > 1)
			row[n++] = ',';
		n += put_i64(row + n, (int64_t)v[i]);
	}
	row[n++] = ']';
	if (pc->nr && (__builtin_sub_overflow(ts, pc->last, &d) ||
		       __builtin_sub_overflow(ts, pc->ts, &span) || (pc->nr > 1 && d != pc->step) ||
		       pc->len + 1 + n + 1 > DB_PIECE_TEXT)) {
		err = held_piece_flush(in, l);
		if (err)
			return err;
	}
	if (!pc->nr) {
		pc->ts = ts;
		pc->step = 0;
		pc->len = 0;
		pc->text[pc->len++] = '[';
	} else {
		if (pc->nr == 1)
			pc->step = d;
		pc->text[pc->len++] = ',';
	}
	memcpy(pc->text + pc->len, row, n);
	pc->len += n;
	pc->last = ts;
	pc->nr++;
	return 0;
}

/* Decode @len bytes of line @l's rows, continuing from @v (the row before), and insert them. */
static int held_decode(struct held_ins *in, const struct held_line *l, const uint8_t *p,
		       size_t len, uint64_t *v, uint64_t *step)
{
	const uint8_t *end = p + len;
	size_t i, n;
	uint64_t d;
	int err;

	while (p < end) {
		n = get_varint(p, end, &d);
		if (!n)
			return -MCR_E_CORRUPT;
		p += n;
		*step += unzigzag(d);
		v[0] += *step;
		for (i = 1; i < in->h->cols; i++) {
			n = get_varint(p, end, &d);
			if (!n)
				return -MCR_E_CORRUPT;
			p += n;
			v[i] += unzigzag(d);
		}
		if (in->h->piece) {
			err = held_piece_add(in, l, v);
			if (err)
				return err;
			continue;
		}
		memcpy(in->key[in->nr], l->key, sizeof(l->key));
		memcpy(in->v[in->nr], v, in->h->cols * sizeof(*v));
		if (++in->nr == DB_BULK_ROWS) {
			err = held_ins_flush(in);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The merge's reader of one run of the spill file. */
struct held_run {
	uint64_t		off, end;	/* the run's bytes not read yet */
	uint8_t			*buf;		/* @cap bytes: a read of the run */
	size_t			cap;
	size_t			pos, len;	/* buf's bytes not used yet */
	uint32_t		hdr[2];		/* the next record's line id and byte count */
	bool			more;		/* hdr holds one */
};

/* @len bytes of run @rr into @p, across its buffer's refills. */
static int held_run_read(const struct held *h, struct held_run *rr, void *p, size_t len)
{
	uint8_t *d = p;
	size_t n;
	int err;

	while (len) {
		if (rr->pos == rr->len) {
			n = rr->end - rr->off < rr->cap ? (size_t)(rr->end - rr->off) : rr->cap;
			if (!n)
				return -MCR_E_CORRUPT;
			err = pio_all(pread, h->spill, rr->buf, n, rr->off);
			if (err)
				return err;
			rr->off += n;
			rr->pos = 0;
			rr->len = n;
		}
		n = rr->len - rr->pos < len ? rr->len - rr->pos : len;
		memcpy(d, rr->buf + rr->pos, n);
		rr->pos += n;
		d += n;
		len -= n;
	}
	return 0;
}

/* The next record's header of run @rr, if it has one more. */
static int held_run_next(const struct held *h, struct held_run *rr)
{
	rr->more = rr->pos < rr->len || rr->off < rr->end;
	return rr->more ? held_run_read(h, rr, rr->hdr, sizeof(rr->hdr)) : 0;
}

/* Copy the record whose header run @rr holds to @o, through @buf. */
static int held_run_copy(const struct held *h, struct held_run *rr, struct held_out *o,
			 uint8_t *buf)
{
	size_t len = rr->hdr[1], n;
	int err = held_out_put(o, rr->hdr, sizeof(rr->hdr));

	while (!err && len) {
		n = len < DB_RUN_BUF ? len : DB_RUN_BUF;
		err = held_run_read(h, rr, buf, n);
		if (!err)
			err = held_out_put(o, buf, n);
		len -= n;
	}
	return err;
}

/*
 * Merge runs @first.. @first + @n - 1 of the spill file, line by line in key
 * order, each run's records of the line in the order they were written:
 * into @o as one run of those same records if @o, else decoded into @in,
 * each line followed by its bytes still in memory.
 */
static int held_merge(struct held *h, size_t first, size_t n, struct held_ins *in,
		      struct held_out *o)
{
	struct held_run *rr = NULL;
	uint8_t *buf = NULL;
	size_t i, k, cap = 0;
	int err = 0;

	if (n) {
		rr = calloc(n, sizeof(*rr));
		if (!rr)
			return -ENOMEM;
	}
	if (n > h->ways_max)
		h->ways_max = n;
	for (k = 0; !err && k < n; k++) {
		rr[k].off = h->runs[first + k].off;
		rr[k].end = h->runs[first + k].end;
		rr[k].cap = DB_RUN_BYTES / n < DB_RUN_BUF ? DB_RUN_BYTES / n : DB_RUN_BUF;
		rr[k].buf = malloc(rr[k].cap);
		err = rr[k].buf ? held_run_next(h, &rr[k]) : -ENOMEM;
	}
	if (!err && o) {
		cap = DB_RUN_BUF;
		buf = malloc(cap);
		if (!buf)
			err = -ENOMEM;
	}
	if (!err)
		err = held_sort(h);
	for (i = 0; !err && i < h->nr; i++) {
		const struct held_line *l = &h->lines[i];
		uint64_t v[DB_LINE_COLS] = { 0 }, step = 0;

		for (k = 0; l->spilled && !err && k < n; k++) {
			/* a merged run holds a line's records one after the other */
			while (!err && rr[k].more && rr[k].hdr[0] == l->id) {
				size_t len = rr[k].hdr[1];

				if (o) {
					err = held_run_copy(h, &rr[k], o, buf);
				} else {
					if (len > cap) {
						uint8_t *b = realloc(buf, len);

						if (!b) {
							err = -ENOMEM;
							break;
						}
						buf = b;
						cap = len;
					}
					err = held_run_read(h, &rr[k], buf, len);
					if (!err)
						err = held_decode(in, l, buf, len, v, &step);
				}
				if (!err)
					err = held_run_next(h, &rr[k]);
			}
		}
		if (!err && in)
			err = held_decode(in, l, l->buf, l->len, v, &step);
		if (!err && in && in->h->piece)
			err = held_piece_flush(in, l);
	}
	/* every record was some line's, in the lines' order */
	for (k = 0; !err && k < n; k++)
		if (rr[k].more)
			err = -MCR_E_CORRUPT;
	for (k = 0; rr && k < n; k++)
		free(rr[k].buf);
	free(rr);
	free(buf);
	return err;
}

/*
 * Merge the spill file's runs DB_HELD_WAYS at a time, each group into one
 * run written after them, until DB_HELD_WAYS runs are left: the insert
 * then reads at most that many at once, a buffer each, however many the
 * trace's length made.  A group's records keep their order, so the rows
 * decode as before.  The runs merged are given back to the file system
 * where it can (their bytes are not read again).
 */
static int held_reduce(struct held *h)
{
	struct held_out o = { .h = h };
	size_t g, cnt, n, ways = h->ways ? h->ways : DB_HELD_WAYS;
	int err = 0;

	while (!err && h->nr_runs > ways) {
		if (!o.buf) {
			o.buf = malloc(DB_SPILL_BUF);
			if (!o.buf)
				return -ENOMEM;
		}
		for (g = n = 0; !err && g < h->nr_runs; g += cnt) {
			struct held_span sp = h->runs[g];

			cnt = h->nr_runs - g < ways ? h->nr_runs - g : ways;
			if (cnt > 1) {
				sp.off = h->spill_len;
				err = held_merge(h, g, cnt, NULL, &o);
				if (!err)
					err = held_out_flush(&o);
				sp.end = h->spill_len;
				if (!err)
					fallocate(h->spill, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						  (off_t)h->runs[g].off,
						  (off_t)(h->runs[g + cnt - 1].end - h->runs[g].off));
			}
			h->runs[n++] = sp;
		}
		if (!err)
			h->nr_runs = n;
	}
	free(o.buf);
	return err;
}

/*
 * Insert every row @h holds, in key order: line by line, the records of it
 * that each run of the spill file holds, the runs in the order they were
 * written, then its bytes still in memory.  Then @h is empty again.
 */
int db_held_insert(struct held *h)
{
	struct held_ins *in = malloc(sizeof(*in));
	int err;

	if (!in)
		return -ENOMEM;
	in->h = h;
	in->nr = 0;
	in->pc.nr = 0;
	err = held_reduce(h);
	if (!err)
		err = held_merge(h, 0, h->nr_runs, in, NULL);
	if (!err)
		err = held_ins_flush(in);
	free(in);
	db_held_free(h);
	return err;
}
