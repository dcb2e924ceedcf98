// SPDX-License-Identifier: GPL-2.0
/*
 * beside.c - the inferred model's prepass on a thread of its own, beside the
 * pass that reads its order; and validate's inference, beside the comparison.
 *
 * The prepass (engine_infer_pass()) decides, for the updates inside the
 * trace's lock windows, how many visits came first; the pass needs an
 * update's decision when it applies it.  Run one after the other, the pass
 * waits for the whole prepass.  Here the prepass runs on its own thread and
 * now and then says what is final (infer_settle()): every decision its
 * hypotheses all share goes to the pass, and each hypothesis's oldest open
 * decision names an update the pass must not reach yet.  The pass takes an
 * event from its source only when the prepass has read past it and no open
 * decision is at or before it on its CPU (per-CPU sequence numbers, the
 * updates' tags).  Decisions reach the pass's order in the order the prepass
 * made them, so the order, and every row, is what the prepass run first
 * would give.  A settle walks the decisions the hypotheses do not share: the
 * next comes no sooner than twice as many events later, nor than
 * BESIDE_WAITED events while the pass waits, BESIDE_SETTLE while it does not.
 *
 * validate's inference runs here the same way (checks): the pass uses no
 * order, so nothing is gated on decisions and nothing settles; the inference's
 * answer at each traced memcg_flush_stats (infer_check(), and its counts
 * after it) is published, and the pass takes a flush event only once its
 * answer is there, which then goes to the validation (val_checks_put()) in
 * the order of the flush events.  Its decisions go to the order validate
 * keeps (r->order_kept).  The pass's own inference, made by replay_create(),
 * is dropped when the thread starts.
 *
 * One database connection is used from one thread only: the caller's thread
 * reads the prepass's events too, from a second source over the same file,
 * into a ring the prepass's thread takes them from.  It fills the ring each
 * time the pass asks its source for events, and while it waits for the
 * prepass: the prepass waits only for events to read, so no wait is circular.
 *
 * Owns the thread, the ring and the decisions and answers in flight; never
 * prints.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "infer.h"
#include "replay-local.h"

#define BESIDE_RING	(1u << 13)	/* events read ahead for the prepass: 448 KiB */
#define BESIDE_READ	256		/* the least room worth a read */
#define BESIDE_WAKE	(BESIDE_RING / 2)	/* room at which a waiting pass reads again */
#define BESIDE_SETTLE	(1u << 16)	/* events between settles, the pass not waiting */
#define BESIDE_WAITED	(1u << 12)	/* ... the pass waiting */

struct beside_dec {
	uint64_t	tag;
	size_t		p;
};

struct beside_decs {
	struct beside_dec	*v;
	size_t			n, cap;
};

struct beside {
	struct replay		*r;
	const struct sim_policy	*pol;
	pthread_t		thr;
	bool			started;
	double			t0, seconds;
	uint64_t		capped;		/* the prepass's infer_capped(), once finished */
	uint64_t		work;		/* and its infer_work() */
	struct replay_checks	inf_checks;	/* and its misses and work by check */
	pthread_mutex_t		mu;
	pthread_cond_t		cv;	/* any change below: both sides wait on it */

	/* the prepass's events: [head, tail) of the ring, read by the caller's thread */
	struct replay_source	*feed;
	struct mcr_event	*ring;
	uint64_t		head, tail;
	bool			feed_end;
	int			feed_err;

	/* the prepass's thread alone */
	uint64_t		*open_seq;	/* [nr_possible]: its oldest open decisions */
	uint64_t		next_settle;	/* the pass not waiting */
	uint64_t		next_waited;	/* the pass waiting */

	/* published by the prepass, under mu: its decisions as it makes them */
	struct beside_decs	pub;
	uint64_t		done;		/* events it has read past */
	uint64_t		*gate;		/* [nr_possible]: no event of seq >= gate[cpu] */
	uint64_t		pubs;		/* publishes so far */
	bool			finished;
	int			ret;
	bool			stop;		/* the pass is over (or failed): end now */
	bool			pass_waits;

	/* the pass's side: its source, and its events handed out so far */
	struct replay_source	*src;
	struct beside_decs	take;		/* the published decisions, swapped out */
	uint64_t		handed;
	double			waited;		/* seconds the pass waited for the prepass */

	/*
	 * validate's inference (checks): no gates, no settles; its answer at
	 * each flush event published (pub_chk, chk_done: how many so far), and
	 * the pass takes a flush event only once its answer is there
	 * (flush_handed: flush events handed out).  Its order goes to
	 * r->order_kept, if kept.
	 */
	bool			checks;
	struct val_check	*pub_chk, *take_chk;
	size_t			nr_pub_chk, cap_pub_chk, cap_take_chk;
	uint64_t		chk_done;
	uint64_t		flush_handed;
};

static int beside_decs_add(struct beside_decs *d, uint64_t tag, size_t p)
{
	if (mcr_grow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v)) < 0)
		return -ENOMEM;
	d->v[d->n++] = (struct beside_dec){ .tag = tag, .p = p };
	return 0;
}

/* The prepass's thread -------------------------------------------------- */

/* Free slots of the ring; under mu. */
static uint64_t beside_room(const struct beside *b)
{
	return BESIDE_RING - (b->tail - b->head);
}

/* The prepass's source: events from the ring, waiting for the caller's thread to fill it. */
static int beside_ring_take(void *ctx, struct mcr_event *ev, int max)
{
	struct beside *b = ctx;
	uint64_t head, room;
	size_t n, at;

	pthread_mutex_lock(&b->mu);
	while (b->head == b->tail && !b->feed_end && !b->stop)
		pthread_cond_wait(&b->cv, &b->mu);
	if (b->stop || b->head == b->tail) {
		int ret = b->stop ? -ECANCELED : b->feed_err;

		pthread_mutex_unlock(&b->mu);
		return ret;
	}
	head = b->head;
	n = b->tail - head;
	pthread_mutex_unlock(&b->mu);
	/* [head, tail) is the prepass's until it moves head on */
	at = head % BESIDE_RING;
	if (n > BESIDE_RING - at)
		n = BESIDE_RING - at;
	if (n > (size_t)max)
		n = (size_t)max;
	memcpy(ev, &b->ring[at], n * sizeof(*ev));
	pthread_mutex_lock(&b->mu);
	room = beside_room(b);
	b->head += n;
	/*
	 * A waiting pass reads again once half the ring is free: woken when
	 * the room reaches that, not at every take.  A wake-up is a system
	 * call on this thread, the slower one: at every take they were 8 % of
	 * its samples.
	 */
	if (b->pass_waits && room < BESIDE_WAKE && beside_room(b) >= BESIDE_WAKE)
		pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return (int)n;
}

static int beside_ring_next(void *ctx, struct mcr_event *ev)
{
	return beside_ring_take(ctx, ev, 1);
}

/*
 * The inference's order sink: to the pass at once.  A decision there before
 * the gates let the pass reach its update is only early; the gates say when.
 */
static int beside_order(void *ctx, uint64_t tag, size_t p)
{
	struct beside *b = ctx;
	int ret;

	pthread_mutex_lock(&b->mu);
	ret = beside_decs_add(&b->pub, tag, p);
	pthread_mutex_unlock(&b->mu);
	return ret;
}

/* An open decision: the pass takes nothing of its CPU from its seq on (of no CPU: nothing). */
static void beside_open(void *ctx, uint64_t tag)
{
	struct beside *b = ctx;
	uint64_t cpu = replay_tag_cpu(tag), seq = replay_tag_seq(tag);
	unsigned int i;

	if (cpu >= b->r->t->nr_possible) {
		for (i = 0; i < b->r->t->nr_possible; i++)
			b->open_seq[i] = 0;
	} else if (seq < b->open_seq[cpu]) {
		b->open_seq[cpu] = seq;
	}
}

/* How far the prepass has read, and where open decisions hold the pass: to the pass. */
static void beside_publish(struct beside *b, uint64_t done, bool all)
{
	unsigned int i, n = b->r->t->nr_possible;

	pthread_mutex_lock(&b->mu);
	b->done = done;
	b->pubs++;
	for (i = 0; i < n; i++)
		b->gate[i] = all ? UINT64_MAX : b->open_seq[i];
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* engine.c's call every REPLAY_BESIDE_EVERY events of the prepass. */
static int beside_settled(void *ctx, struct infer *in, uint64_t done)
{
	struct beside *b = ctx;
	unsigned int i;
	bool waits;
	int ret;

	pthread_mutex_lock(&b->mu);
	waits = b->pass_waits;
	ret = b->stop ? -ECANCELED : 0;
	pthread_mutex_unlock(&b->mu);
	if (ret || done < (waits ? b->next_waited : b->next_settle))
		return ret;
	for (i = 0; i < b->r->t->nr_possible; i++)
		b->open_seq[i] = UINT64_MAX;
	ret = infer_settle(in, beside_open, b);
	if (ret < 0)
		return ret;

	/* a settle walks the decisions the hypotheses do not share: at most one every 2 events */
	b->next_waited = done + (2 * (uint64_t)ret > BESIDE_WAITED ? 2 * (uint64_t)ret : BESIDE_WAITED);
	b->next_settle = done + (2 * (uint64_t)ret > BESIDE_SETTLE ? 2 * (uint64_t)ret : BESIDE_SETTLE);
	beside_publish(b, done, false);
	return 0;
}

/* engine.c's call after each flush event the prepass checked (checks): to the pass. */
static int beside_checked(void *ctx, struct infer *in, bool su_ok, bool nf_ok)
{
	struct beside *b = ctx;
	int ret = 0;

	pthread_mutex_lock(&b->mu);
	if (mcr_grow((void **)&b->pub_chk, &b->cap_pub_chk, b->nr_pub_chk + 1,
		     sizeof(*b->pub_chk)) < 0) {
		ret = -ENOMEM;
	} else {
		b->pub_chk[b->nr_pub_chk++] = val_check_of(in, su_ok, nf_ok);
		b->chk_done++;
		if (b->pass_waits)
			pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return ret;
}

static void *beside_main(void *arg)
{
	struct beside *b = arg;
	struct replay_source src = {
		.next = beside_ring_next, .take = beside_ring_take, .ctx = b,
	};
	/* validate keeps the order only for the memory.stat check: else no decision is made */
	struct engine_infer ei = {
		.policy = b->pol, .max_hyp = b->r->p.max_hypotheses, .exact = replay_exact_budget(&b->r->p),
		.order = b->checks && !b->r->order_kept ? NULL : beside_order, .order_ctx = b,
		.settled = b->checks ? NULL : beside_settled, .settled_ctx = b,
		.checked = b->checks ? beside_checked : NULL, .checked_ctx = b,
		.capped = &b->capped, .work = &b->work,
		.checks = &b->inf_checks,
		.no_halving = b->r->p.no_halving,
	};
	int ret = engine_infer_pass(b->r->t, &ei, &src);

	if (!ret)
		beside_publish(b, UINT64_MAX, true);
	pthread_mutex_lock(&b->mu);
	b->seconds = replay_now_s() - b->t0;
	b->finished = true;
	b->ret = ret;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* The caller's thread ---------------------------------------------------- */

/*
 * Read the prepass's next events into the ring while it has room for
 * BESIDE_READ.  The source's end, or its error, is the prepass's to meet
 * (feed_end, feed_err): it ends with that error, which the pass then gets.
 */
static void beside_fill(struct beside *b)
{
	uint64_t head, tail;
	size_t at, room;
	int n;

	pthread_mutex_lock(&b->mu);
	head = b->head;
	tail = b->tail;
	n = b->feed_end;
	pthread_mutex_unlock(&b->mu);
	while (!n && BESIDE_RING - (tail - head) >= BESIDE_READ) {
		at = tail % BESIDE_RING;
		room = BESIDE_RING - (tail - head);
		if (room > BESIDE_RING - at)
			room = BESIDE_RING - at;
		n = b->feed->take(b->feed->ctx, &b->ring[at], (int)room);
		pthread_mutex_lock(&b->mu);
		if (n <= 0) {
			b->feed_end = true;
			b->feed_err = n;
		} else {
			b->tail = tail += (uint64_t)n;
			head = b->head;
		}
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
		n = n <= 0;
	}
}

/* What the pass watches for a change while it waits: answers (checks), else publishes; under mu. */
static uint64_t beside_seen(const struct beside *b)
{
	return b->checks ? b->chk_done : b->pubs;
}

/*
 * Nothing for the pass's thread until the prepass moves on: read for it,
 * then sleep unless it has published since @seen or half the ring is free
 * (both looked at under the lock, so that a change just before is not
 * slept through; beside_ring_take() wakes it when half is).
 */
static void beside_idle(struct beside *b, uint64_t seen)
{
	beside_fill(b);
	pthread_mutex_lock(&b->mu);
	if (!b->finished && beside_seen(b) == seen &&
	    (b->feed_end || beside_room(b) < BESIDE_WAKE))
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

/*
 * Can the pass take @ev, the event after b->handed, with @flushes flush
 * events before it among those being handed?  Under mu.
 */
static bool beside_open_for(const struct beside *b, const struct mcr_event *ev, uint64_t i,
			    uint64_t flushes)
{
	unsigned int cpu = (unsigned int)ev->cpu;

	if (b->finished)
		return true;	/* decided, or failed: beside_wait() says which */
	if (b->checks)
		return ev->kind != MCR_EV_FLUSH || b->chk_done > b->flush_handed + flushes;
	if (i >= b->done)
		return false;
	return cpu >= b->r->t->nr_possible || ev->seq < b->gate[cpu];
}

/*
 * The decisions and answers published so far move to the pass's side (take,
 * take_chk), for beside_hand_over() after the lock.  Under mu, or once the
 * prepass's thread is joined.
 * Return: how many answers moved.
 */
static size_t beside_take_published(struct beside *b)
{
	size_t nr_chk = b->nr_pub_chk;

	if (b->pub.n) {
		struct beside_decs t = b->take;

		b->take = b->pub;
		b->pub = t;
		b->pub.n = 0;
	}
	if (nr_chk) {
		struct val_check *t = b->take_chk;
		size_t c = b->cap_take_chk;

		b->take_chk = b->pub_chk;
		b->cap_take_chk = b->cap_pub_chk;
		b->pub_chk = t;
		b->cap_pub_chk = c;
		b->nr_pub_chk = 0;
	}
	return nr_chk;
}

/* The decisions and answers taken from the prepass: to the pass's order, and to validate. */
static int beside_hand_over(struct beside *b, size_t nr_chk)
{
	struct replay_order *o = b->checks ? b->r->order_kept : b->r->order_own;
	int ret = 0;

	for (size_t k = 0; !ret && o && k < b->take.n; k++)
		ret = order_add(o, b->take.v[k].tag, b->take.v[k].p);
	b->take.n = 0;
	if (!ret && nr_chk)
		ret = val_checks_put(b->r, b->take_chk, nr_chk);
	return ret;
}

/*
 * Wait until events @ev[0..n) may go to the pass, reading for the prepass
 * meanwhile; move the decisions published so far into the pass's order.
 */
static int beside_wait(struct beside *b, const struct mcr_event *ev, int n)
{
	uint64_t seen, flushes = 0;
	double t0 = 0;
	int ret = 0, i = 0;

	for (;;) {
		size_t nr_chk;
		bool go;

		pthread_mutex_lock(&b->mu);
		seen = beside_seen(b);
		while (i < n && beside_open_for(b, &ev[i], b->handed + (uint64_t)i, flushes))
			flushes += ev[i++].kind == MCR_EV_FLUSH;
		go = i == n;
		if (b->finished && b->ret)
			ret = b->ret;
		nr_chk = beside_take_published(b);
		b->pass_waits = !go && !ret;
		pthread_mutex_unlock(&b->mu);
		if (!ret)
			ret = beside_hand_over(b, nr_chk);
		if (ret || go)
			break;
		if (!t0)
			t0 = replay_now_s();
		else if (b->r->p.progress)	/* the line's clock goes on while it waits */
			b->r->p.progress(b->r->p.progress_ctx, b->r->p.progress_name, b->r->st.events);
		beside_idle(b, seen);
	}
	pthread_mutex_lock(&b->mu);
	b->pass_waits = false;
	pthread_mutex_unlock(&b->mu);
	if (t0)
		b->waited += replay_now_s() - t0;
	return ret;
}

/* The pass has read every event: wait for the prepass's end; its figures. */
static int beside_end(struct beside *b)
{
	struct replay *r = b->r;
	double t0 = replay_now_s();

	pthread_mutex_lock(&b->mu);
	b->pass_waits = true;
	while (!b->finished) {
		uint64_t seen = beside_seen(b);

		pthread_mutex_unlock(&b->mu);
		beside_idle(b, seen);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->thr, NULL);
	b->started = false;
	if (b->ret)
		return b->ret;
	/* the inference's misses and work, for a wider search (pass.c) */
	replay_checks_free(&r->inf_checks);
	r->inf_checks = b->inf_checks;
	b->inf_checks = (struct replay_checks){ 0 };
	/* the order's last decisions, made at its end; an answer left has no flush event */
	if (b->checks)
		return beside_take_published(b) ? -EPROTO : beside_hand_over(b, 0);
	if (b->pub.n)
		return -EPROTO;		/* a decision for an update the pass has passed */
	r->prep.placed = replay_order_size(r->order);
	r->prep.capped = b->capped;
	r->prep.work = b->work;
	r->prep.seconds = b->seconds;
	r->prep.waited = b->waited + replay_now_s() - t0;
	return 0;
}

/*
 * The pass's source: its own events, each once the prepass has decided what
 * it needs; at their end, the prepass's end (its error, if it had one).
 */
static int beside_gated_take(void *ctx, struct mcr_event *ev, int max)
{
	struct beside *b = ctx;
	int n, ret;

	if (!b->started)
		return 0;	/* the end, said once */
	beside_fill(b);
	n = b->src->take ? b->src->take(b->src->ctx, ev, max) : b->src->next(b->src->ctx, ev);
	if (n < 0)
		return n;
	if (!n)
		return beside_end(b);
	ret = beside_wait(b, ev, n);
	if (ret < 0)
		return ret;
	b->handed += (uint64_t)n;
	for (int i = 0; b->checks && i < n; i++)
		b->flush_handed += ev[i].kind == MCR_EV_FLUSH;
	return n;
}

static int beside_gated_next(void *ctx, struct mcr_event *ev)
{
	return beside_gated_take(ctx, ev, 1);
}

void replay_beside_free(struct replay_beside *rb)
{
	struct beside *b = (struct beside *)rb;

	if (!b)
		return;
	if (b->started) {
		pthread_mutex_lock(&b->mu);
		b->stop = true;
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
		pthread_join(b->thr, NULL);
	}
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b->pub.v);
	free(b->take.v);
	free(b->pub_chk);
	free(b->take_chk);
	free(b->ring);
	free(b->open_seq);
	free(b->gate);
	replay_checks_free(&b->inf_checks);
	free(b);
}

/* Start the prepass with @pol on its own thread; @gated the pass's source. */
static int beside_start(struct replay *r, const struct sim_policy *pol, struct replay_source *feed,
			struct replay_source *src, struct replay_source *gated, bool checks,
			struct replay_beside **out)
{
	struct beside *b = calloc(1, sizeof(*b));
	unsigned int n = r->t->nr_possible;
	int ret;

	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	*out = (struct replay_beside *)b;
	b->r = r;
	b->pol = pol;
	b->feed = feed;
	b->src = src;
	b->ring = malloc(BESIDE_RING * sizeof(*b->ring));
	b->open_seq = calloc(n, sizeof(*b->open_seq));
	b->gate = calloc(n, sizeof(*b->gate));
	b->checks = checks;
	if (!checks)
		r->order_own = order_create();
	if (!b->ring || !b->open_seq || !b->gate || (!checks && !r->order_own))
		return -ENOMEM;
	if (checks) {
		/* the pass's own inference goes: the prepass's answers replace it */
		infer_destroy(r->inf);
		r->inf = NULL;
		r->val->beside = true;
	} else {
		r->order = r->order_own;
		r->prep = (struct replay_prepass){ .policy = pol, .beside = true };
	}
	b->t0 = replay_now_s();
	ret = -pthread_create(&b->thr, NULL, beside_main, b);
	if (ret)
		return ret;
	b->started = true;
	*gated = (struct replay_source){ .next = beside_gated_next, .take = beside_gated_take,
					 .ctx = b };
	return 0;
}

/* A thread of its own, unless one is asked for, or by default one CPU is online. */
static bool beside_threads(const struct replay *r)
{
	return r->p.threads != 1 && (r->p.threads || sysconf(_SC_NPROCESSORS_ONLN) >= 2);
}

/*
 * validate's inference, moved beside a pass whose model has no prepass of its
 * own (replay_create() made it for the pass): the policy it infers with, or
 * NULL.
 */
static const struct sim_policy *beside_validated(const struct replay *r)
{
	if (!r->inf || !r->val || r->val->beside || r->p.model->prepare || !beside_threads(r))
		return NULL;
	return r->p.runs[0].policy;
}

bool replay_prepass_beside(struct replay *r)
{
	const struct sim_policy *pol = NULL;

	if (beside_validated(r))
		return true;
	if (r->prepared || !r->p.model->prepare || !beside_threads(r))
		return false;
	return r->p.model->prepare(r, &pol) >= 0 && pol;
}

int replay_prepare_beside(struct replay *r, struct replay_source *feed, struct replay_source *src,
			  struct replay_source *gated, struct replay_beside **out)
{
	const struct sim_policy *pol;
	int ret;

	*out = NULL;
	if (!replay_prepass_beside(r) || !src->take || !feed->take)
		return replay_prepare(r, src);
	pol = beside_validated(r);
	if (pol) {
		ret = beside_start(r, pol, feed, src, gated, true, out);
		return ret < 0 ? ret : 1;
	}
	ret = engine_prepare(r, &pol);
	if (ret < 0 || !pol)
		return ret;
	ret = beside_start(r, pol, feed, src, gated, false, out);
	return ret < 0 ? ret : 1;
}
