/* SPDX-License-Identifier: GPL-2.0 */
/*
 * import-local.h - private to capture/import*.c: the import state shared by
 * the driver (import.c), record decoding (import_decode.c), the cgroup table
 * (import_cgroups.c) and meta, stats and hierarchy-id inference
 * (import_meta.c).
 */
#ifndef MCR_IMPORT_LOCAL_H
#define MCR_IMPORT_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace-cmd.h>

#include "import.h"
#include "tp_decode.h"

/*
 * Exported by libtracecmd.so.1 (1.3.1) but declared only in trace-cmd's
 * private header, which Debian does not ship.  Weak, so that a library
 * without them only costs us the meta they fill.
 */
extern const char *tracecmd_get_trace_clock(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_uname(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_version(struct tracecmd_input *h) __attribute__((weak));
extern const char *tracecmd_get_cpustats(struct tracecmd_input *h) __attribute__((weak));
extern unsigned long tracecmd_get_in_file_version(struct tracecmd_input *h) __attribute__((weak));
extern int tracecmd_page_size(struct tracecmd_input *h) __attribute__((weak));
/* The copy trace-cmd convert makes (import_plain.c); @state an enum tracecmd_file_states. */
struct tracecmd_output;
extern int tracecmd_get_file_compress_proto(struct tracecmd_input *h, const char **name,
					    const char **version) __attribute__((weak));
extern struct tracecmd_output *tracecmd_copy(struct tracecmd_input *ih, const char *file,
					     int state, int file_version,
					     const char *compression) __attribute__((weak));
extern void tracecmd_output_close(struct tracecmd_output *h) __attribute__((weak));

/* A cgroup as far as the trace and the optional tree walk tell. */
struct imp_cg {
	uint64_t	id, parent;
	char		*path;		/* NULL: unknown */
	int64_t		created_ts, removed_ts;
	int		level;
	bool		parent_unknown;
};

struct imp_cgs {
	struct imp_cg	*v;
	size_t		n, cap;
	uint32_t	*slot;		/* open addressing: index + 1, 0 = empty */
	size_t		nslot;		/* power of two */
};

/* Last memcg_flush_stats that flushed, per pid (hashed, may forget). */
struct imp_flush {
	uint64_t	id;
	int		pid;
	bool		valid;
};

#define IMP_FLUSH_SLOTS		64

/* An event held back while the memory hierarchy is unknown (import.c). */
struct imp_pend {
	struct mcr_event	ev;
	char			*path;		/* mkdir/rmdir: its path, NULL if none */
	int			path_len;
};

struct imp {
	const struct import_opts	*o;
	char				*plain;		/* o->trace_path decompressed, read instead (import_plain.c) */
	struct import_result		*res;
	struct tep_handle		*tep;
	struct tp_decoder		dec;
	struct db			*out;		/* the caller's: never used by the child */
	struct db			*db;		/* the pass's own handle on it */
	unsigned int			passes;		/* begun: from the second, out is cleared */
	uint64_t			*seq;		/* per CPU */
	uint64_t			*last_ts;	/* per CPU */
	struct imp_rec_at {
		uint64_t		offset;
	}				*last_rec;	/* per CPU: the previous record read */
	int				nseq;
	struct imp_cgs			cgs;
	int				err;
	uint64_t			progress_total;
	uint64_t			last_id;	/* cache for imp_cg_touch() */
	uint64_t			ts_backwards;
	int				walk_version;	/* 1 or 2 from --cgroupfs, 0 unknown */
	int				stats_cpus;	/* complete per-CPU stats blocks */
	/* the memory hierarchy id, while the pass has not decided it */
	bool				hier_known;
	bool				pass_void;	/* held back too much: the pass only looks */
	struct imp_flush		(*flush)[IMP_FLUSH_SLOTS];	/* per CPU */
	struct imp_cgs			memcg_ids;	/* ids of memcg events, for the fallback */
	uint64_t			last_memcg_id;
	uint64_t			*mk_root_id;	/* (root << 48 | id) of mkdir/rmdir, for the fallback */
	size_t				nmk, capmk;
	struct imp_pend			*pend;
	size_t				npend, cappend;
};

/*
 * libtracecmd 1.3.1 can read a damaged page round and round for ever
 * (kbuffer_next_event() going back on it): a CPU's records lie at
 * increasing file offsets, so a record at or before the previous one's is
 * that loop, never the next record.
 */
static inline bool imp_rec_again(struct imp_rec_at *last, const struct tep_record *r)
{
	bool again = last->offset && r->offset <= last->offset;

	last->offset = r->offset;
	return again;
}

/* import_plain.c: *@top replaced by a handle of a decompressed copy beside @tmp, when due */
int imp_plain(struct imp *im, struct tracecmd_input **top, const char *tmp);
void imp_plain_remove(struct imp *im);

/* import_child.c: @fn(@arg) run in a child process; how it ended if it did not return */
struct imp_child {
	bool	died;		/* it ended without returning */
	int	sig;		/* the signal that ended it, 0 if none */
	int	status;		/* sig 0: its exit status (-1 unknown) */
};
int imp_contain(int (*fn)(void *arg), void *arg, struct imp_child *how);
void imp_child_how(const struct imp_child *how, char *buf, size_t len);
void *imp_shared_alloc(size_t size);
void imp_shared_free(void *p, size_t size);
/* a trace.dat of version 6 or older opened in a child first; @why for a bad one */
int imp_open_checked(const char *path, const char **why);

/* import_check.c: the readers' check of the database written at @path */
int imp_check(struct imp *im, const char *path);

/* import_decode.c */
int imp_types_init(struct imp *im);
bool imp_decode(struct imp *im, struct tep_record *r, struct mcr_event *ev, int *root);
const char *imp_path(struct imp *im, struct tep_record *r, int kind, int *len);

/* import_cgroups.c */
struct imp_cg *imp_cg_get(struct imp_cgs *t, uint64_t id);
struct imp_cg *imp_cg_find(const struct imp_cgs *t, uint64_t id);
void imp_cgs_free(struct imp_cgs *t);
int imp_cg_touch(struct imp *im, uint64_t id);
int imp_mkdir(struct imp *im, const struct mcr_event *ev, const char *path, int len);
int imp_walk(struct imp *im, const char *dir, const char **why);
int imp_hierarchy(struct imp *im);
int imp_write_cgroups(struct imp *im);

/* import_meta.c */
int imp_evidence(struct imp *im, const struct mcr_event *ev, int root);
int imp_hier_by_mkdir(struct imp *im);
int imp_items(struct imp *im, struct tracecmd_input *top);
int imp_cpustats(struct imp *im, const char *text, const char *buffer, bool write);
int imp_meta(struct imp *im, struct tracecmd_input *h, struct tracecmd_input *top,
	     const char *warnings);

#endif
