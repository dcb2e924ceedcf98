// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-capture --watch and --prom: the traced kernel's own walk policy
 * replayed while the capture runs, as `memcg-replay replay -m spread` replays
 * the finished file, and what it shows every second.
 *
 * The readers' events come through live_watch_next() (capture/live_watch.c)
 * in the database's replay order; one thread runs the replay engine over
 * them with the trace as the capture's meta and cgroup table describe it
 * (cgroups made meanwhile are learnt at their mkdir), one run (the policy
 * the kernel release runs, at its own batch and CPUs), the spread flush
 * model (the order inside a lock window is unknown live: nothing infers
 * it), no series and nothing written to the database.  Every second of
 * wall time it prints the stranded cgroups and rewrites the --prom file
 * (which is also rewritten as soon as the set of stranded cgroups changes);
 * once more at the end, after every event of the capture went through.
 * Its printing happens on that thread, from inside the source's next():
 * the engine is between two calls into the simulator there.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture_local.h"
#include "error.h"
#include "flush_model.h"
#include "hash.h"
#include "prom.h"
#include "replay.h"
#include "statlines.h"

#define WATCH_EVERY_NS		1000000000ull	/* print and --prom this often */
#define WATCH_LOOK_NS		100000000ull	/* --prom at once when the stranded set changed */
#define WATCH_NAP_NS		10000000ull	/* nothing to take yet: look again */
#define WATCH_ITEMS		512		/* item numbers named from the items table */
#define WATCH_NAME		64
#define WATCH_MODEL		"spread"

struct watch {
	struct live		*lv;
	const char		*prom;
	int			version;	/* cgroup version: which line names */
	int64_t			page_size;
	struct replay_trace	t;
	struct replay_params	p;
	struct replay		*r;
	struct replay_source	src;
	pthread_t		thread;
	bool			started;
	uint64_t		next_out;	/* CLOCK_MONOTONIC of the next output */
	uint64_t		next_look;	/* of the next look at the stranded set */
	uint64_t		stranded_sig;	/* the set at the last --prom */
	uint64_t		taken;
	int			err;		/* replay_run()'s */
	int			prom_err;	/* said once */
	bool			overflow;
	char			(*names)[WATCH_NAME];	/* [2 * WATCH_ITEMS]: state, events */
	/*
	 * The episodes still open at the end (replay_run() closes them, and a
	 * cgroup still stranded then starts anew): their starts, for the last
	 * output's how long.
	 */
	struct sim_episode	*open;
	size_t			nr_open, cap_open;
};

/* "total_rss" (v1) or "anon" (v2) for the item's enumerator name; the name itself if none. */
static void watch_line_name(const char *item, int version, char *out, size_t len)
{
	struct statline_names nm;

	if (statline_names(item, &nm) < 0) {
		snprintf(out, len, "%s", item);
		return;
	}
	if (version == 1 && nm.v1)
		snprintf(out, len, "%s%s", nm.v1_total ? "total_" : "", nm.v1);
	else if (version != 1 && nm.v2)
		snprintf(out, len, "%s", nm.v2);
	else
		snprintf(out, len, "%s", item);
}

/* The items' names, read before the capture's threads share the database. */
static int watch_names_load(struct watch *w, struct db *db)
{
	char buf[WATCH_NAME];
	int i, k;

	w->names = calloc(2 * WATCH_ITEMS, sizeof(*w->names));
	if (!w->names)
		return -ENOMEM;
	for (k = 0; k < 2; k++)
		for (i = 0; i < WATCH_ITEMS; i++)
			watch_line_name(db_item_name(db, k ? MCR_EV_EVENTS : MCR_EV_STATE, i, buf,
						     sizeof(buf)),
					w->version, w->names[k * WATCH_ITEMS + i], WATCH_NAME);
	return 0;
}

static const char *watch_name(const struct watch *w, enum sim_item_kind kind, int item,
			      char *buf, size_t len)
{
	bool ev = kind == SIM_ITEM_EVENT;

	if (item >= 0 && item < WATCH_ITEMS)
		return w->names[(ev ? WATCH_ITEMS : 0) + item];
	snprintf(buf, len, "%s:%d", ev ? "events" : "state", item);
	return buf;
}

/* The worst line: the page line of the largest |error|, else the event line's. */
struct watch_worst {
	enum sim_item_kind	kind;
	int			item;
	int64_t			error;
	bool			any;
};

static int watch_worst_fn(enum sim_item_kind kind, int item, int64_t missing, void *ctx)
{
	struct watch_worst *ww = ctx;
	int64_t err = -missing;		/* shown - truth */
	bool page = kind != SIM_ITEM_EVENT, was_page = ww->any && ww->kind != SIM_ITEM_EVENT;

	if (!ww->any || (page && !was_page) ||
	    (page == was_page && llabs(err) > llabs(ww->error)))
		*ww = (struct watch_worst){ .kind = page ? SIM_ITEM_STATE : SIM_ITEM_EVENT,
					    .item = item, .error = err, .any = true };
	return 0;
}

static int watch_episode(void *ctx, unsigned int pol, const struct sim_episode *ep)
{
	struct watch *w = ctx;

	if (!ep->open)
		return 0;
	if (w->nr_open == w->cap_open) {
		size_t cap = w->cap_open ? 2 * w->cap_open : 16;
		struct sim_episode *n = realloc(w->open, cap * sizeof(*n));

		if (!n)
			return 0;	/* the last output says 0 s for it */
		w->open = n;
		w->cap_open = cap;
	}
	w->open[w->nr_open++] = *ep;
	return 0;
}

/* Since when @id is stranded: the open episode's start, or the one closed at the end. */
static uint64_t watch_since(const struct watch *w, uint64_t id, const struct sim_cgroup_stats *cs)
{
	size_t i;

	for (i = 0; i < w->nr_open; i++)
		if (w->open[i].id == id)
			return w->open[i].start;
	return cs->stranded_since;
}

static const char *watch_path(struct watch *w, uint64_t id, char *buf, size_t len)
{
	const char *p = replay_cgroup_path(w->r, id);

	if (p && *p)
		return p;
	snprintf(buf, len, "id:%" PRIu64, id);
	return buf;
}

static void watch_print(struct watch *w, bool final)
{
	const struct replay_stats *st = replay_stats(w->r);
	struct sim *s = replay_sim(w->r, 0);
	size_t i, n = replay_cgroup_count(w->r), stranded = 0;
	char when[16], pbuf[32], nbuf[32];
	time_t now = time(NULL);
	struct tm tm;

	for (i = 0; i < n; i++) {
		struct sim_cgroup_stats cs;

		if (!sim_cgroup_stats_get(s, replay_cgroup_id(w->r, i), st->last_ts, &cs) &&
		    cs.stranded)
			stranded++;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s %s: trace %.1f s, %" PRIu64 " events; %s policy, %s model (the order inside "
	       "lock windows is unknown live); %zu stranded%s\n", when,
	       final ? "end" : "watch",
	       st->events ? (double)(st->last_ts - st->first_ts) / 1e9 : 0.0, st->events,
	       w->p.runs[0].policy->name, WATCH_MODEL, stranded,
	       w->overflow ? "; STOPPED COUNTING: fell behind the capture" : "");
	for (i = 0; stranded && i < n; i++) {
		uint64_t id = replay_cgroup_id(w->r, i);
		struct watch_worst ww = { .any = false };
		struct sim_cgroup_stats cs;

		if (sim_cgroup_stats_get(s, id, st->last_ts, &cs) || !cs.stranded)
			continue;
		sim_items_foreach(s, id, watch_worst_fn, &ww);
		printf("  %s stranded %.2f s", watch_path(w, id, pbuf, sizeof(pbuf)),
		       (double)(st->last_ts - watch_since(w, id, &cs)) / 1e9);
		if (ww.any && ww.kind == SIM_ITEM_EVENT)
			printf(", %s %+" PRId64 " events", watch_name(w, ww.kind, ww.item, nbuf,
								      sizeof(nbuf)), ww.error);
		else if (ww.any)
			printf(", %s %+" PRId64 " bytes (%+" PRId64 " pages)",
			       watch_name(w, ww.kind, ww.item, nbuf, sizeof(nbuf)),
			       ww.error * w->page_size, ww.error);
		printf(", stale reads %" PRIu64 " of %" PRIu64 "\n", cs.stale_reads, cs.reads);
	}
	fflush(stdout);
}

/* Each stranded cgroup's wrong lines, into the family of their unit. */
struct watch_prom_lines {
	struct watch	*w;
	struct prom	*pr;
	const char	*path;
	bool		events;
};

static int watch_prom_line(enum sim_item_kind kind, int item, int64_t missing, void *ctx)
{
	struct watch_prom_lines *pl = ctx;
	char nbuf[32];
	struct prom_label l[2] = {
		{ "cgroup", pl->path },
		{ "line", watch_name(pl->w, kind, item, nbuf, sizeof(nbuf)) },
	};

	if ((kind == SIM_ITEM_EVENT) != pl->events)
		return 0;
	if (pl->events)
		prom_sample_i(pl->pr, "memcg_stat_visible_error_events", l, 2, -missing);
	else
		prom_sample_i(pl->pr, "memcg_stat_visible_error_bytes", l, 2,
			      -missing * pl->w->page_size);
	return 0;
}

enum watch_fam { WF_STRANDED, WF_SECONDS, WF_BYTES, WF_EVENTS, WF_READS, WF_STALE, WF_NR };

static const struct {
	const char	*name, *type, *help;
} watch_fams[WF_NR] = {
	[WF_STRANDED]	= { "memcg_stat_stranded", "gauge", "1 while the cgroup is stranded: "
			    "its counters are below the flush threshold while updates it misses "
			    "exceed what they can hold, so its readers skip flushing" },
	[WF_SECONDS]	= { "memcg_stat_stranded_seconds", "gauge", "How long the cgroup has "
			    "been stranded, trace time; 0 when it is not" },
	[WF_BYTES]	= { "memcg_stat_visible_error_bytes", "gauge", "A stranded cgroup's "
			    "memory.stat page line: what a reader gets now minus the truth, "
			    "bytes" },
	[WF_EVENTS]	= { "memcg_stat_visible_error_events", "gauge", "A stranded cgroup's "
			    "memory.stat event line: what a reader gets now minus the truth, "
			    "events" },
	[WF_READS]	= { "memcg_stat_reads_total", "counter", "Reads of the cgroup's stats "
			    "(memcg_flush_stats, not forced) replayed" },
	[WF_STALE]	= { "memcg_stat_stale_reads_total", "counter", "Of them, reads that "
			    "skipped flushing while the cgroup was stranded" },
};

static void watch_prom_family(struct watch *w, struct prom *pr, enum watch_fam f)
{
	const struct replay_stats *st = replay_stats(w->r);
	struct sim *s = replay_sim(w->r, 0);
	size_t i, n = replay_cgroup_count(w->r);
	char pbuf[32];

	prom_family(pr, watch_fams[f].name, watch_fams[f].type, watch_fams[f].help);
	for (i = 0; i < n; i++) {
		uint64_t id = replay_cgroup_id(w->r, i);
		struct prom_label l = { "cgroup", watch_path(w, id, pbuf, sizeof(pbuf)) };
		struct watch_prom_lines pl = { w, pr, l.value, f == WF_EVENTS };
		struct sim_cgroup_stats cs;

		if (sim_cgroup_stats_get(s, id, st->last_ts, &cs))
			continue;
		switch (f) {
		case WF_STRANDED:
			prom_sample_i(pr, watch_fams[f].name, &l, 1, cs.stranded);
			break;
		case WF_SECONDS:
			prom_sample_d(pr, watch_fams[f].name, &l, 1, cs.stranded ?
				      (double)(st->last_ts - watch_since(w, id, &cs)) / 1e9 : 0.0);
			break;
		case WF_BYTES:
		case WF_EVENTS:
			if (cs.stranded)
				sim_items_foreach(s, id, watch_prom_line, &pl);
			break;
		case WF_READS:
			prom_sample_i(pr, watch_fams[f].name, &l, 1, (int64_t)cs.reads);
			break;
		case WF_STALE:
			prom_sample_i(pr, watch_fams[f].name, &l, 1, (int64_t)cs.stale_reads);
			break;
		default:
			break;
		}
	}
}

static void watch_prom(struct watch *w)
{
	const struct replay_stats *st = replay_stats(w->r);
	struct prom_label info[2] = {
		{ "model", WATCH_MODEL }, { "policy", w->p.runs[0].policy->name },
	};
	struct prom pr;
	int f, ret;

	ret = prom_begin(&pr, w->prom);
	if (!ret) {
		prom_family(&pr, "memcg_watch_info", "gauge", "The replay: the walk policy of "
			    "the traced kernel, and the flush model it places a flush's visits by "
			    "(spread: the order inside lock windows is unknown live)");
		prom_sample_i(&pr, "memcg_watch_info", info, 2, 1);
		prom_family(&pr, "memcg_watch_overflow", "gauge", "1 once the watch fell behind "
			    "the capture and stopped counting (the capture itself lost nothing)");
		prom_sample_i(&pr, "memcg_watch_overflow", NULL, 0, w->overflow);
		prom_family(&pr, "memcg_watch_events_total", "counter", "Events replayed");
		prom_sample_i(&pr, "memcg_watch_events_total", NULL, 0, (int64_t)st->events);
		prom_family(&pr, "memcg_watch_trace_seconds", "gauge", "Trace time replayed, from "
			    "the first event to the last");
		prom_sample_d(&pr, "memcg_watch_trace_seconds", NULL, 0,
			      st->events ? (double)(st->last_ts - st->first_ts) / 1e9 : 0.0);
		for (f = 0; f < WF_NR; f++)
			watch_prom_family(w, &pr, f);
		ret = prom_commit(&pr);
	}
	if (ret < 0 && ret != w->prom_err)
		msg("--prom %s: %s (tried again every second)", w->prom, mcr_strerror(ret));
	w->prom_err = ret;
}

/* The stranded cgroups, as a number that changes when the set does (but for collisions). */
static uint64_t watch_stranded_sig(struct watch *w)
{
	const struct replay_stats *st = replay_stats(w->r);
	struct sim *s = replay_sim(w->r, 0);
	size_t i, n = replay_cgroup_count(w->r);
	uint64_t sig = 0;

	for (i = 0; i < n; i++) {
		uint64_t id = replay_cgroup_id(w->r, i);
		struct sim_cgroup_stats cs;

		if (!sim_cgroup_stats_get(s, id, st->last_ts, &cs) && cs.stranded)
			sig += mcr_hash64(id) | 1;
	}
	return sig;
}

static void watch_output(struct watch *w, bool final)
{
	watch_print(w, final);
	if (w->prom) {
		w->stranded_sig = watch_stranded_sig(w);
		watch_prom(w);
	}
	w->next_out = now_ns() + WATCH_EVERY_NS;
	w->next_look = now_ns() + WATCH_LOOK_NS;
}

/*
 * Every second the whole output; in between, every WATCH_LOOK_NS, --prom
 * again as soon as a cgroup became stranded or stopped being: an alert on
 * it waits for the next scrape, not for the second to end.
 */
static void watch_tick(struct watch *w)
{
	uint64_t now = now_ns(), sig;

	if (now >= w->next_out) {
		watch_output(w, false);
		return;
	}
	if (!w->prom || now < w->next_look)
		return;
	w->next_look = now + WATCH_LOOK_NS;
	sig = watch_stranded_sig(w);
	if (sig != w->stranded_sig) {
		w->stranded_sig = sig;
		watch_prom(w);
	}
}

/* A cgroup made during the capture: its parent and path from the capture's table. */
static void watch_learn(struct watch *w, uint64_t id)
{
	char path[PATH_MAX];
	uint64_t parent;

	if (replay_cgroup_path(w->r, id) || live_cgroup_info(w->lv, id, &parent, path,
							     sizeof(path)) < 0)
		return;
	/* -ENOMEM leaves it to the engine, under the root: the replay goes on */
	(void)replay_cgroup_learn(w->r, id, parent, path);
}

static int watch_next(void *ctx, struct mcr_event *ev)
{
	struct watch *w = ctx;
	struct timespec nap = { 0, WATCH_NAP_NS };
	struct live_watch_totals lt;
	int ret;

	for (;;) {
		ret = live_watch_next(w->lv, ev);
		if (ret == 1) {
			if (ev->kind == MCR_EV_MKDIR && ev->aux == w->t.hierarchy_id)
				watch_learn(w, ev->id);
			if (!(++w->taken & 4095))
				watch_tick(w);
			return 1;
		}
		if (ret != -EAGAIN)
			break;
		watch_tick(w);
		nanosleep(&nap, NULL);
	}
	if (ret == -ENOBUFS) {
		w->overflow = true;
		live_watch_totals(w->lv, &lt);
		msg("--watch fell behind: CPU %d's queue of %u events was full at trace time "
		    "%.6f s; it stops counting there (the capture goes on and loses nothing)",
		    lt.overflow_cpu, lt.queue, (double)lt.overflow_ts / 1e9);
		watch_output(w, false);
	}
	return ret;
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;

	w->err = replay_run(w->r, &w->src);
	return NULL;
}

static void watch_free(struct watch *w)
{
	if (!w)
		return;
	replay_destroy(w->r);
	replay_trace_free(&w->t);
	free(w->names);
	free(w->open);
	free(w);
}

int watch_start(struct capture *c)
{
	const struct replay_model *model;
	const struct sim_policy *pol;
	struct watch *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int ret;

	if (!w)
		return fail(-ENOMEM, "--watch");
	c->watch = w;
	w->lv = c->lv;
	w->prom = c->args.prom;
	w->version = c->cg.version;
	w->page_size = sysconf(_SC_PAGESIZE);
	/* the clock is one it can read: watch_args_check() */
	ret = live_watch_enable(c->lv);
	if (ret < 0)
		return fail(ret, "--watch");
	ret = replay_trace_load(c->db, &w->t);
	if (ret < 0)
		return fail(ret, "--watch: the capture's meta");
	/* every kernel flush takes the rstat lock, whose events the capture records */
	w->t.windows_traced = true;
	pol = replay_policy_for_trace(&w->t);
	if (!pol) {
		pol = sim_policy_find("break");
		msg("--watch: no walk policy is known for kernel %s; replaying %s",
		    w->t.kernel_release ? w->t.kernel_release : "(unknown)", pol->name);
	}
	ret = replay_model_find(WATCH_MODEL, &model);
	if (ret < 0)
		return fail(ret, "--watch");
	w->p.runs[0] = replay_run_own(&w->t, pol);
	w->p.nr_runs = 1;
	w->p.model = model;
	w->p.threads = 1;
	w->p.sink = (struct replay_sink){ .episode = watch_episode, .ctx = w };
	ret = watch_names_load(w, c->db);
	if (!ret)
		ret = replay_create(&w->p, &w->t, &w->r);
	if (ret < 0)
		return fail(ret, "--watch");
	w->src = (struct replay_source){ .next = watch_next, .ctx = w };
	w->next_out = now_ns() + WATCH_EVERY_NS;
	w->next_look = now_ns() + WATCH_LOOK_NS;
	/* signals go to the main thread, whose sleep they end */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&w->thread, NULL, watch_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0)
		return fail(ret, "--watch");
	w->started = true;
	return 0;
}

/*
 * After live_stop(): the readers ended, so the replay takes the last events
 * and ends; the last output has them all.  Returns the replay's error (an
 * overflow is not one: it was said).
 */
int watch_stop(struct capture *c)
{
	struct watch *w = c->watch;
	char name[PATH_MAX + 16];
	int ret = 0;

	if (!w)
		return 0;
	if (w->started) {
		pthread_join(w->thread, NULL);
		w->started = false;
		if (w->err == -ENOBUFS) {
			msg("--watch: stopped counting at the overflow; the capture's file has "
			    "everything: memcg-replay replay -m %s %s", WATCH_MODEL,
			    rotate_output_name(c, true, name, sizeof(name)));
		} else if (w->err < 0) {
			msg("--watch: the replay failed: %s", mcr_strerror(w->err));
			ret = w->err;
		} else {
			watch_output(w, true);
		}
	}
	watch_free(w);
	c->watch = NULL;
	return ret;
}

/* What every --prom file starts with: its first family's HELP line. */
#define WATCH_PROM_HEAD		"# HELP memcg_"

/*
 * May --prom replace @path (lstat() @sb)?  Only a regular file that is empty
 * or that --prom wrote: never a link, device or FIFO, nor a user's file
 * given by mistake (the trace database itself, say).
 */
static bool watch_prom_ours(const char *path, const struct stat *sb)
{
	char head[sizeof(WATCH_PROM_HEAD) - 1];
	bool ours;
	FILE *f;

	if (!S_ISREG(sb->st_mode))
		return false;
	if (!sb->st_size)
		return true;
	f = fopen(path, "re");
	if (!f)
		return false;
	ours = fread(head, 1, sizeof(head), f) == sizeof(head) &&
	       !memcmp(head, WATCH_PROM_HEAD, sizeof(head));
	fclose(f);
	return ours;
}

int watch_args_check(const struct capture_args *a)
{
	struct stat sb;
	struct prom pr;
	int ret;

	if (!a->watch)
		return 0;
	if (!live_watch_clock_ok(a->clock)) {
		msg("--watch: -C %s is not a clock this process can read (mono, mono_raw, boot or "
		    "tai): it could not tell how far each CPU's events went", a->clock);
		return MCR_EXIT_BAD_INPUT;
	}
	if (!a->prom)
		return 0;
	if (!stat(a->prom, &sb) && S_ISDIR(sb.st_mode)) {
		msg("--prom %s: a directory, not a file it can replace", a->prom);
		return MCR_EXIT_NOFILE;
	}
	if (a->output && !strcmp(a->prom, a->output)) {
		msg("--prom %s: the same file as -o", a->prom);
		return MCR_EXIT_NOFILE;
	}
	if (!lstat(a->prom, &sb) && !watch_prom_ours(a->prom, &sb)) {
		msg("--prom %s: exists and is not a file --prom wrote (a regular file that is empty "
		    "or starts with \"%s\"): not replaced", a->prom, WATCH_PROM_HEAD);
		return MCR_EXIT_NOFILE;
	}
	ret = prom_begin(&pr, a->prom);
	if (ret < 0) {
		const char *path = a->prom;

		msg("--prom %s: cannot write %s.tmp beside it: %s", path, path, mcr_strerror(ret));
		return ret == -ENOMEM ? MCR_EXIT_FAILURE : MCR_EXIT_NOFILE;
	}
	prom_abort(&pr);
	return 0;
}
