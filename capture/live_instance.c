// SPDX-License-Identifier: GPL-2.0
/*
 * The private tracefs instance: checks, stale-instance cleanup, setup, and the
 * per-CPU ring-buffer stats that are the authoritative loss counts.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "error.h"
#include "live_local.h"

static bool live_tracefs_mounted(void)
{
	char line[1024], dev[256], dir[512], type[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 && !strcmp(type, "tracefs");
	fclose(f);
	return found;
}

int live_tracefs_check(bool *mounted, const char **dir)
{
	*mounted = false;
	/* tracefs_tracing_dir_is_mounted() leaks the path it returns in 1.6.4 */
	if (!live_tracefs_mounted()) {
		/* with mount=true it mounts tracefs at /sys/kernel/tracing */
		if (tracefs_tracing_dir_is_mounted(true, NULL) < 0 || !live_tracefs_mounted())
			return -MCR_E_NO_TRACEFS;
		*mounted = true;
	}
	*dir = tracefs_tracing_dir();
	return *dir ? 0 : -MCR_E_NO_TRACEFS;
}

int live_events_check(void)
{
	if (!tracefs_event_file_exists(NULL, "memcg", "mod_memcg_state", "format") ||
	    !tracefs_event_file_exists(NULL, "memcg", "memcg_flush_stats", "format"))
		return -MCR_E_NO_MEMCG_EVENTS;
	return 0;
}

struct live_stale {
	char	**names;
	int	nr;
};

/* memcg_capture_<digits> only: a user's own instance is never touched */
static int live_stale_collect(const char *name, void *ctx)
{
	struct live_stale *st = ctx;
	size_t plen = strlen(LIVE_INSTANCE_PREFIX);
	const char *p = name + plen;
	char **more;

	if (strncmp(name, LIVE_INSTANCE_PREFIX, plen) || !*p || strspn(p, "0123456789") != strlen(p))
		return 0;
	more = realloc(st->names, (st->nr + 1) * sizeof(*more));
	if (!more)
		return 0;
	st->names = more;
	st->names[st->nr] = strdup(name);
	if (st->names[st->nr])
		st->nr++;
	return 0;
}

int live_remove_stale(live_stale_fn fn, void *ctx)
{
	struct live_stale st = { 0 };
	int i, removed = 0;

	/* tracefs_instances() leaks its regex in 1.6.4: walk instead */
	if (tracefs_instances_walk(live_stale_collect, &st) < 0)
		return -errno;
	for (i = 0; i < st.nr; i++) {
		long pid = strtol(st.names[i] + strlen(LIVE_INSTANCE_PREFIX), NULL, 10);
		struct tracefs_instance *in;

		/* a live pid may be another capture running right now */
		if (pid <= 0 || !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		in = tracefs_instance_alloc(NULL, st.names[i]);
		if (!in)
			continue;
		tracefs_trace_off(in);
		if (!tracefs_instance_destroy(in)) {
			removed++;
			if (fn)
				fn(ctx, st.names[i]);
		}
		tracefs_instance_free(in);
	}
	for (i = 0; i < st.nr; i++)
		free(st.names[i]);
	free(st.names);
	return removed;
}

/* Is @clock one of the names in trace_clock ("[local] global counter ...")? */
static bool live_clock_available(struct live *lv, const char *clock)
{
	char *all = tracefs_instance_file_read(lv->inst, "trace_clock", NULL), *tok, *save;
	bool found = false;

	if (!all)
		return false;
	for (tok = strtok_r(all, " \n", &save); tok && !found; tok = strtok_r(NULL, " \n", &save)) {
		size_t len = strlen(tok);

		if (tok[0] == '[' && len > 2)
			found = len - 2 == strlen(clock) && !strncmp(tok + 1, clock, len - 2);
		else
			found = !strcmp(tok, clock);
	}
	free(all);
	return found;
}

/*
 * Sub-buffers of LIVE_SUBBUF_KB: each read() of trace_pipe_raw returns one
 * sub-buffer, so a reader makes 16 times fewer syscalls than with pages,
 * and syscalls were most of its kernel time (splice, then read, for each
 * 4 KiB page: 100 ns an event of 180).  Kernels before 6.8 have no
 * buffer_subbuf_size_kb and keep pages.  The kernel rounds the size to a
 * power of two pages; what it chose is read back.
 */
static int live_subbuf_setup(struct live *lv)
{
	long long kb = LIVE_SUBBUF_KB, page_kb = getpagesize() / 1024;
	char val[32];

	lv->subbuf_size = getpagesize();
	if (!tracefs_file_exists(lv->inst, "buffer_subbuf_size_kb"))
		return 0;
	while (kb > page_kb && kb * LIVE_SUBBUF_SHARE > lv->opts.buffer_kb)
		kb /= 2;
	snprintf(val, sizeof(val), "%lld", kb);
	/* refused, the buffer keeps the size it has, read back as well */
	tracefs_instance_file_write(lv->inst, "buffer_subbuf_size_kb", val);
	if (tracefs_instance_file_read_number(lv->inst, "buffer_subbuf_size_kb", &kb) < 0 ||
	    kb < page_kb || kb > INT_MAX / 1024)
		return -EIO;
	lv->subbuf_size = (int)(kb * 1024);
	return 0;
}

int live_instance_setup(struct live *lv)
{
	char filter[64];
	int i, ret, enabled = 0;

	lv->inst = tracefs_instance_create(lv->opts.instance);
	if (!lv->inst)
		return errno == EACCES || errno == EPERM ? -MCR_E_NOT_ROOT : -errno;
	if (!tracefs_instance_is_new(lv->inst))
		return -EEXIST;
	tracefs_trace_off(lv->inst);
	if (!live_clock_available(lv, lv->opts.clock))
		return -MCR_E_BAD_INPUT;
	if (tracefs_instance_file_write(lv->inst, "trace_clock", lv->opts.clock) < 0)
		return -errno;
	/* before the buffer's size, which the kernel counts in sub-buffers */
	ret = live_subbuf_setup(lv);
	if (ret < 0)
		return ret;
	if (tracefs_instance_set_buffer_size(lv->inst, lv->opts.buffer_kb, -1) < 0)
		return errno ? -errno : -ENOMEM;
	/*
	 * A polling reader is woken this full (instances start at 50); a kernel
	 * without the file wakes it at every page, which costs CPU, not events.
	 */
	if (tracefs_file_exists(lv->inst, "buffer_percent") &&
	    tracefs_instance_file_write(lv->inst, "buffer_percent", LIVE_BUFFER_PERCENT) < 0)
		return -errno;
	/* overwrite=1 (the default) is what makes lost events visible in-band */
	tracefs_option_enable(lv->inst, TRACEFS_OPTION_OVERWRITE);
	snprintf(filter, sizeof(filter), "root == %d", lv->opts.hierarchy_id);
	for (i = 0; i < tp_event_count(); i++) {
		const struct tp_event_info *e = tp_event(i);

		if (!lv->dec.tp.desc[e->kind].event)
			continue;
		/* rstat and mkdir events of other hierarchies never reach the buffer */
		if (lv->dec.tp.desc[e->kind].root)
			tracefs_event_file_write(lv->inst, e->system, e->name, "filter", filter);
		ret = tracefs_event_enable(lv->inst, e->system, e->name);
		if (ret < 0) {
			if (e->required)
				return -MCR_E_NO_MEMCG_EVENTS;
			continue;
		}
		enabled++;
	}
	return enabled ? 0 : -MCR_E_NO_MEMCG_EVENTS;
}

static const char *const live_stats_keys[6] = {
	"entries", "overrun", "commit overrun", "bytes", "dropped events", "read events",
};

int live_stats_read(struct live *lv, int cpu, int64_t st[6])
{
	char path[64], *buf, *line, *save;
	int i;

	for (i = 0; i < 6; i++)
		st[i] = -1;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	buf = tracefs_instance_file_read(lv->inst, path, NULL);
	if (!buf)
		return -errno;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		for (i = 0; i < 6; i++)
			if (!strcmp(line, live_stats_keys[i]))
				st[i] = strtoll(colon + 1, NULL, 10);
	}
	free(buf);
	return 0;
}

/* Lost on @c between start and @end by the stats: overrun, commit overrun, dropped. */
static int64_t live_stats_lost(const struct live_cpu *c, const int64_t end[6])
{
	static const int idx[] = { 1, 2, 4 };
	int64_t lost = 0;
	unsigned int i;

	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
		if (end[idx[i]] > 0)
			lost += end[idx[i]] - (c->stats_start[idx[i]] > 0 ? c->stats_start[idx[i]] : 0);
	return lost;
}

/*
 * The stats are the authority on how many events a CPU lost; the in-band
 * markers place some of them (and some only as "unknown").  What the markers
 * did not count (@missed, of this file) gets one gap row of its own at the
 * CPU's last event, so that the counted gaps of each CPU add up to exactly
 * its stats.
 */
int live_gap_rest(struct db *db, struct live_cpu *c, const int64_t end[6], uint64_t missed)
{
	int64_t rest = live_stats_lost(c, end) - (int64_t)missed;

	if (rest <= 0)
		return 0;
	return db_gap_put(db, c->cpu, atomic_load(&c->last_ts), rest);
}

int live_stats_put(struct db *db, int cpu, const char *phase, const int64_t st[6])
{
	struct db_cpu_stats row = {
		.cpu = cpu, .phase = phase, .entries = st[0], .overrun = st[1],
		.commit_overrun = st[2], .bytes = st[3], .dropped = st[4], .read = st[5],
	};

	return db_cpu_stats_put(db, &row);
}

int live_stats_store(struct live *lv, const char *phase)
{
	uint64_t lost = 0, read = 0;
	int i, ret;

	for (i = 0; i < lv->nr_cpus; i++) {
		struct live_cpu *c = &lv->cpus[i];
		int64_t st[6];

		ret = live_stats_read(lv, c->cpu, st);
		if (ret < 0)
			return ret;
		ret = live_stats_put(lv->db, c->cpu, phase, st);
		if (ret < 0)
			return ret;
		if (!strcmp(phase, "start"))
			memcpy(c->stats_start, st, sizeof(st));
		else if ((ret = live_gap_rest(lv->db, c, st,
					      atomic_load(&c->missed) - c->missed_base)) < 0)
			return ret;
		lost += (st[1] > 0 ? st[1] : 0) + (st[2] > 0 ? st[2] : 0) + (st[4] > 0 ? st[4] : 0);
		read += st[5] > 0 ? st[5] : 0;
	}
	atomic_store(&lv->kernel_lost, lost);
	atomic_store(&lv->kernel_read, read);
	return 0;
}

int live_poll_loss(struct live *lv)
{
	uint64_t lost = 0;
	int i;

	for (i = 0; i < lv->nr_cpus; i++) {
		int64_t st[6];

		if (live_stats_read(lv, lv->cpus[i].cpu, st) < 0)
			continue;
		lost += (st[1] > 0 ? st[1] : 0) + (st[2] > 0 ? st[2] : 0) + (st[4] > 0 ? st[4] : 0);
	}
	live_atomic_max(&lv->kernel_lost, lost);
	return 0;
}

int live_clock_now(struct live *lv, uint64_t *ns)
{
	static const struct { const char *name; clockid_t id; } known[] = {
		{ "mono", CLOCK_MONOTONIC }, { "mono_raw", CLOCK_MONOTONIC_RAW },
		{ "boot", CLOCK_BOOTTIME }, { "tai", CLOCK_TAI },
	};
	char path[64], *buf, *p;
	struct timespec ts;
	unsigned int i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(lv->opts.clock, known[i].name))
			continue;
		clock_gettime(known[i].id, &ts);
		*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		return 0;
	}
	/* other clocks: the ring buffer's own "now ts: S.US" in the trace clock */
	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", lv->nr_cpus ? lv->cpus[0].cpu : 0);
	buf = tracefs_instance_file_read(lv->inst, path, NULL);
	if (!buf)
		return -errno;
	p = strstr(buf, "now ts:");
	if (!p) {
		free(buf);
		return -ENOENT;
	}
	{
		unsigned long long sec = 0, usec = 0;

		sscanf(p + 7, " %llu.%llu", &sec, &usec);
		*ns = sec * 1000000000ull + usec * 1000ull;
	}
	free(buf);
	return 0;
}
