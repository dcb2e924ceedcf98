/* SPDX-License-Identifier: GPL-2.0 */
/*
 * utf8.h - whether bytes are well-formed UTF-8, for the writers of JSON, CSV
 * and HTML, whose text must be UTF-8 while a cgroup's name is any bytes the
 * kernel took.  Header only: the SVG writer links without the libraries.
 */
#ifndef MCR_SIM_UTF8_H
#define MCR_SIM_UTF8_H

#include <stddef.h>

/*
 * mcr_utf8_len() - the length of the UTF-8 sequence @s starts with.
 * Return: 1 to 4, or 0 when the bytes at @s are not a well-formed sequence
 * (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF, no
 * stray continuation byte, no sequence cut short), and 0 at the
 * terminating NUL.  Reads no byte past a NUL.
 */
static inline size_t mcr_utf8_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned int lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (u[0] < 0x80)
		return u[0] ? 1 : 0;
	if (u[0] < 0xc2 || u[0] > 0xf4)
		return 0;
	n = u[0] < 0xe0 ? 2 : u[0] < 0xf0 ? 3 : 4;
	if (u[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (u[0] == 0xed)
		hi = 0x9f;		/* surrogates */
	else if (u[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (u[0] == 0xf4)
		hi = 0x8f;		/* above U+10FFFF */
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (u[i] < 0x80 || u[i] > 0xbf)
			return 0;
	return n;
}

#endif
