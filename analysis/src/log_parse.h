/* Converts an emulator log held in memory to the record stream of log_record.h. */
#ifndef SQUALL_LOG_PARSE_H
#define SQUALL_LOG_PARSE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the stream for the `size` bytes at `data` (the file `path`) to `out`. Returns 0;
 * SQ_LOG_EXIT_UNUSUAL when a line is left to the Python parser (nothing useful written);
 * 1 after reporting on stderr a failed write or a lack of memory. */
int sq_log_convert(const char *path, const char *data, size_t size, FILE *out,
		   const char *out_name);

#endif
