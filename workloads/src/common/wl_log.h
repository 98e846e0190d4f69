/* The per-event log (--log FILE): '#' header lines, then tab-separated events. */
#ifndef WL_LOG_H
#define WL_LOG_H

#include <stddef.h>
#include <stdio.h>

/* Opens path for writing and writes the header; NULL path → no log (returns NULL, ok). On
 * failure prints which file could not be opened and sets *failed. */
FILE *wl_log_open(const char *path, const char *tool, const char *mode, const char *columns, int *failed);
/* Writes one more header line "# key\tvalue" (after wl_log_open, before the first event); no-op
 * without a log. */
void wl_log_header(FILE *log, const char *key, const char *value);
/* Flushes and closes; returns -1 (after a message) if data could not be written. */
int wl_log_close(FILE *log, const char *path);
/* The end of a run whose result is rc (0: ok): closes the log, and a failed write fails a run
 * that went well (rc -1, "writing the --log file failed" in error[error_size]); a failed run
 * is named on stderr as "COMMAND: error". Returns the run's rc. */
int wl_log_finish(FILE *log, const char *path, int rc, const char *command, char *error, size_t error_size);

#endif
