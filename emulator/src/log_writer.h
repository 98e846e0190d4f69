/* A FILE whose data reaches the disk from a background thread, so that the
 * event loop never waits for the file system, nor for the thread: a buffered
 * write(2) to ext4 here took ~17 µs per 64 KB on average, but now and then
 * several milliseconds (journal commits, writeback), delaying every delivery
 * due meanwhile.
 *
 * Writes through the FILE are copied into a ring buffer (SQ_LOG_RING_BYTES,
 * mapped and touched once at open, so no page fault later) and return; the
 * thread, under SCHED_OTHER even when the process is real-time, polls the ring
 * and writes it in order. The hand-over takes no lock and makes no system call
 * (one producer, one consumer, two counters with acquire/release order), so
 * the event loop never waits for a thread it has preempted: no mutex, no
 * condition variable, no malloc/free shared with the thread (glibc's arena
 * lock was one, see emulator/README.md, "Timing"). Only a ring full for lack
 * of disk bandwidth makes the loop wait; each such wait is counted
 * (sq_log_writer_stats, the log trailer's `# log_writer` line).
 *
 * fclose() waits for the ring to be written and fails if any write failed. */
#ifndef SQ_LOG_WRITER_H
#define SQ_LOG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SQ_LOG_RING_BYTES (32u << 20)

struct sq_log_writer;

struct sq_log_writer_stats {
	uint64_t ring_bytes;      /* capacity */
	uint64_t max_fill_bytes;  /* the most ever waiting for the disk */
	uint64_t waits;           /* times the event loop found the ring full and waited */
	uint64_t wait_us;         /* how long those waits took in all */
};

/* Opens path for writing (created or truncated); NULL and a message in err on
 * failure. *writer (if not NULL) is the handle for sq_log_writer_stats, valid
 * until fclose. */
FILE *sq_log_writer_open(const char *path, struct sq_log_writer **writer, char *err, size_t errlen);

void sq_log_writer_stats(const struct sq_log_writer *w, struct sq_log_writer_stats *out);

/* Keeps the writer thread on the given CPU (the one the event loop keeps off);
 * false if the system refused. */
bool sq_log_writer_place(struct sq_log_writer *w, int cpu);

#endif
