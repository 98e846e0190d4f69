/* Reading files that may be gzip-compressed: squall compresses the emulator log and the
 * captures of a finished replication (docs/runner.md), and its readers take either form. */
#ifndef SQ_GZ_INPUT_H
#define SQ_GZ_INPUT_H

#include <stddef.h>
#include <stdio.h>

/* 1 when the file starts with the gzip magic, 0 when not (or shorter), -1 with errno set. */
int sq_is_gzip(const char *path);

/* A read-only stream of the file's decompressed bytes; ftell gives the decompressed offset.
 * NULL with errno set. */
FILE *sq_gz_fopen(const char *path);

/* The whole decompressed file in a malloc'd buffer (*data NULL when empty). 0, or -1 after
 * writing "<path>: <what failed>" to stderr. */
int sq_gz_read_all(const char *path, char **data, size_t *size);

#endif
