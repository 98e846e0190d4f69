/* A periodic timer with absolute deadlines on CLOCK_MONOTONIC: sample k is due at
 * start + k * interval, so scheduling delays never accumulate into drift. */
#ifndef SQUALL_SAMPLE_TIMER_H
#define SQUALL_SAMPLE_TIMER_H

#include <stdint.h>
#include <time.h>

struct sample_timer {
	int fd;
	struct timespec start;
	int64_t interval_ns;
};

/* Lowers the thread's timer slack to 1 ns and arms the timer; first expiry one interval
 * from now. Returns 0, or -1 with errno set. */
int sample_timer_open(struct sample_timer *timer, int64_t interval_us);

/* Reads the expiry count after the fd became readable: 1 when on time, n > 1 when n - 1
 * deadlines were missed. Returns 0 if nothing expired yet, -1 on error. */
int64_t sample_timer_consume(struct sample_timer *timer);

/* What one wait of sample_timer_wait saw. */
enum sample_wait { SAMPLE_ERROR = -1, SAMPLE_STOP, SAMPLE_DUE, SAMPLE_NOTHING };

/* Waits (poll) for the timer or signal_fd: SAMPLE_STOP when signal_fd is readable, SAMPLE_DUE
 * when a sample is due (*missed grows by the deadlines missed before it), SAMPLE_NOTHING when
 * the wait ended without either (a signal, a spurious wake-up), SAMPLE_ERROR after printing
 * "PROGRAM: what failed: why" on stderr. */
enum sample_wait sample_timer_wait(struct sample_timer *timer, int signal_fd, uint64_t *missed,
				   const char *program);

void sample_timer_close(struct sample_timer *timer);

/* ts + ns, normalised. */
struct timespec timespec_add_ns(struct timespec ts, int64_t ns);

/* CLOCK_REALTIME now in µs minus t0 (µs). */
int64_t realtime_us_since(int64_t t0_realtime_us);

#endif
