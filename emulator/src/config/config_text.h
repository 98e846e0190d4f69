/* Text handling shared by the configuration and trace parsers: whole files, trimmed lines. */
#ifndef SQ_CONFIG_TEXT_H
#define SQ_CONFIG_TEXT_H

#include <stddef.h>
#include <stdio.h>

#define SQ_CONFIG_MAX_LINE 4096   /* bytes per line, NUL included */

/* Strips white space at both ends, in place; returns the first kept character. */
char *sq_config_trim(char *s);

/* The bytes of a whole file in a heap buffer (not NUL-terminated; the caller frees it);
 * NULL and "PATH: what went wrong" in err on failure. */
char *sq_config_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* The same for what is left of an open stream (standard input); name is used in messages. */
char *sq_config_read_stream(FILE *f, const char *name, size_t *len, char *err, size_t errlen);

#endif
