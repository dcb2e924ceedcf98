/* SPDX-License-Identifier: GPL-2.0 */
/*
 * grow.h - the one growth rule of the arrays that only grow: capacity doubled
 * until it holds @need elements.  No global state; -ENOMEM or -EOVERFLOW.
 */
#ifndef MCR_GROW_H
#define MCR_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make @*p (capacity @*cap elements of @size bytes) hold @need elements: 0 or -errno. */
static inline int mcr_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -EOVERFLOW;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return -EOVERFLOW;
	n = realloc(*p, ncap * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

#endif
