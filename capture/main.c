// SPDX-License-Identifier: GPL-2.0
/* PLACEHOLDER: memcg-capture main, replaced by the capture owner. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "memcg-capture: not built yet\n");
	return 1;
}
