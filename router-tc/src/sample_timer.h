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

void sample_timer_close(struct sample_timer *timer);

/* ts + ns, normalised. */
struct timespec timespec_add_ns(struct timespec ts, int64_t ns);

/* CLOCK_REALTIME now in µs minus t0 (µs). */
int64_t realtime_us_since(int64_t t0_realtime_us);

#endif
