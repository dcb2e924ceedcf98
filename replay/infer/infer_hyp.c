// SPDX-License-Identifier: GPL-2.0
/*
 * infer_hyp.c - one hypothesis: the counters in which it differs from the
 * base, copies of it, and the chain of its branch decisions.
 *
 * Contract: a hypothesis reads a counter from its own entry, else 0 if it
 * already made the visit that resets it, else the base simulator's value; it
 * never changes the base.  Its table is canonical: an entry whose counter
 * comes back to the virtual value goes.  Entry slots move only when the
 * table is rebuilt or an entry goes (idmap gen), so the walk may keep slot
 * numbers.  Decision chains are shared
 * between the copies of a hypothesis and reference counted; their nodes come
 * from the inference's own free list, in blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "grow.h"
#include "infer-local.h"

/*
 * Under AddressSanitizer a free decision is poisoned, as free() would leave
 * it: a chain that reads one after its last reference went still fails the
 * sanitized suite, free list or not.
 */
#if defined(__SANITIZE_ADDRESS__)
#define INF_DEC_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INF_DEC_ASAN	1
#endif
#endif
#ifdef INF_DEC_ASAN
#include <sanitizer/asan_interface.h>
#define inf_dec_poison(d)	ASAN_POISON_MEMORY_REGION((d), sizeof(*(d)))
#define inf_dec_unpoison(d)	ASAN_UNPOISON_MEMORY_REGION((d), sizeof(*(d)))
#else
#define inf_dec_poison(d)	((void)(d))
#define inf_dec_unpoison(d)	((void)(d))
#endif

static int64_t inf_base(const struct infer *in, uint64_t key)
{
	unsigned int cpu = inf_key_cpu(key);

	if (cpu == INF_ATOMIC)
		return sim_stats_updates(in->s, inf_key_id(key));
	return sim_pcpu_stats_updates(in->s, inf_key_id(key), cpu);
}

/* What @h's counter @key would be without its own entry. */
int64_t inf_virtual(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	size_t v = inf_vis(in, key);

	return v != INF_NONE && v < h->p ? 0 : inf_base(in, key);
}

int64_t inf_get(const struct infer *in, const struct inf_hyp *h, uint64_t key)
{
	const struct idmap_ent *e = inf_find(h, key);

	return e ? e->val : inf_virtual(in, h, key);
}

/*
 * @key of @h takes @val, where @virt is what @h reads without an entry: the
 * entry goes if they are equal, so the table stays canonical.
 */
int inf_put(struct inf_hyp *h, uint64_t key, int64_t val, int64_t virt)
{
	struct idmap_ent *e = inf_find(h, key);
	int ret;

	if (val == virt) {
		if (e)
			inf_ent_del(h, key);
		return 0;
	}
	if (e) {
		inf_ent_set(h, e, val);
		return 0;
	}
	ret = idmap_put(&h->e, key, val);
	if (!ret)
		h->ehash += inf_mix(key, val);
	return ret;
}

/* @key's entry, if any, goes (its counter is back to its virtual value). */
void inf_ent_del(struct inf_hyp *h, uint64_t key)
{
	struct idmap_ent *e = inf_find(h, key);

	if (!e)
		return;
	h->ehash -= inf_mix(key, e->val);
	idmap_del(&h->e, key);
}

/*
 * A copy of @src that shares its decisions.  The table is copied slot for
 * slot, so @src's slots of its last path stay valid in the copy: a branch
 * walks the path its parent just walked without looking its entries up again.
 */
int inf_hyp_copy(struct inf_hyp *dst, const struct inf_hyp *src)
{
	*dst = (struct inf_hyp){ .p = src->p, .cost = src->cost, .front = src->front, .d = src->d,
				 .ehash = src->ehash };
	if (dst->d)
		dst->d->ref++;
	if (idmap_clone(&dst->e, &src->e)) {
		dst->ehash = 0;
		return -ENOMEM;
	}
	if (src->pc_n && src->pc_gen == src->e.gen) {
		dst->pc_gen = dst->e.gen;
		dst->pc_cpu = src->pc_cpu;
		dst->pc_n = src->pc_n;
		dst->pc_id = src->pc_id;
		memcpy(dst->pc_idx, src->pc_idx, 2 * src->pc_n * sizeof(*src->pc_idx));
	}
	return 0;
}

/*
 * @x (the address of an array pointer) holds at least @n elements of @size
 * bytes: mcr_grow() without the caller's cast; -ENOMEM whatever failed.
 */
int inf_grow(void *x, size_t *cap, size_t n, size_t size)
{
	return mcr_grow(x, cap, n, size) < 0 ? -ENOMEM : 0;
}

/* As inf_grow(), the elements it adds zeroed. */
int inf_grow_zero(void *x, size_t *cap, size_t n, size_t size)
{
	size_t old = *cap;

	if (inf_grow(x, cap, n, size))
		return -ENOMEM;
	if (*cap > old)
		memset((char *)*(void **)x + old * size, 0, (*cap - old) * size);
	return 0;
}

/* Appends *@h to the hypotheses (which may move); the array owns it then. */
int inf_push(struct infer *in, struct inf_hyp *h)
{
	if (inf_grow(&in->h, &in->cap_h, in->nr_h + 1, sizeof(*in->h)))
		return -ENOMEM;
	in->h[in->nr_h++] = *h;
	return 0;
}

void inf_hyp_free(struct infer *in, struct inf_hyp *h)
{
	idmap_free(&h->e);
	h->ehash = 0;
	inf_dec_put(in, h->d);
	h->d = NULL;
}

/* Drops a reference to @d: the decisions no chain holds any more go back to the free list. */
void inf_dec_put(struct infer *in, struct inf_dec *d)
{
	while (d && !--d->ref) {
		struct inf_dec *up = d->up;

		d->up = in->dec_free;
		in->dec_free = d;
		inf_dec_poison(d);
		d = up;
	}
}

/*
 * A decision off the free list, which takes a block of INF_DEC_BLOCK when
 * empty: at the cap's peaks millions come and go an update apart, where
 * malloc() searched its bins for each one.  Blocks go with the inference.
 */
static struct inf_dec *inf_dec_alloc(struct infer *in)
{
	struct inf_dec *d, *blk;
	size_t i;

	if (!in->dec_free) {
		if (inf_grow(&in->dec_blk, &in->cap_dec_blk, in->nr_dec_blk + 1,
			     sizeof(*in->dec_blk)))
			return NULL;
		blk = malloc(INF_DEC_BLOCK * sizeof(*blk));
		if (!blk)
			return NULL;
		in->dec_blk[in->nr_dec_blk++] = blk;
		for (i = INF_DEC_BLOCK; i--; ) {
			blk[i].up = in->dec_free;
			in->dec_free = &blk[i];
			inf_dec_poison(&blk[i]);
		}
	}
	d = in->dec_free;
	inf_dec_unpoison(d);
	in->dec_free = d->up;
	if (in->dec_free)
		__builtin_prefetch(in->dec_free, 1);	/* the next one's up is read then */
	return d;
}

/* @h decides that update @tag came after its h->p visits; only with a sink. */
int inf_dec_push(struct infer *in, struct inf_hyp *h, uint64_t tag)
{
	struct inf_dec *d;

	if (!in->order_fn)
		return 0;
	if (h->p > UINT32_MAX)
		return -MCR_E_BAD_INPUT;	/* as order_add() would */
	d = inf_dec_alloc(in);
	if (!d)
		return -ENOMEM;
	*d = (struct inf_dec){ .up = h->d, .tag = tag, .p = (uint32_t)h->p,
			       .ref = 1 };
	h->d = d;	/* takes over h's reference to the old head */
	return 0;
}
