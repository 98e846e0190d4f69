/* A FILE whose data reaches the disk from a background thread, so that the
 * event loop never waits for the file system: a buffered write(2) to ext4 here
 * took ~17 µs per 64 KB on average, but now and then several milliseconds
 * (journal commits, writeback), delaying every delivery due meanwhile.
 *
 * Writes through the FILE copy the data into a queue and return; the thread
 * writes the queue in order. It runs under SCHED_OTHER even when the process
 * is real-time, so it never takes the CPU from the event loop. fclose() waits
 * for the queue to be written and fails if any write failed. */
#ifndef SQ_LOG_WRITER_H
#define SQ_LOG_WRITER_H

#include <stddef.h>
#include <stdio.h>

/* Opens path for writing (created or truncated); NULL and a message in err on failure. */
FILE *sq_log_writer_open(const char *path, char *err, size_t errlen);

#endif
