/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz.h - what the libFuzzer targets share: the input as a file in /dev/shm
 * (the readers take paths), removed with its SQLite sidecars afterwards.
 */
#ifndef MCR_FUZZ_H
#define MCR_FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "db_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int fuzz_write_input(const char *tag, const uint8_t *data, size_t size,
				   char *path, size_t len)
{
	ssize_t n;
	int fd;

	snprintf(path, len, "/dev/shm/mcr-fuzz-%s-%d", tag, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	n = size ? write(fd, data, size) : 0;
	close(fd);
	return n == (ssize_t)size ? 0 : -1;
}

/* @path and everything beside it (db/db_file.h) */
static inline void fuzz_unlink_db(const char *path)
{
	db_file_discard(path);
}

#endif
