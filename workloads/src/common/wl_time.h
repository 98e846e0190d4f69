/* Clocks of the traffic generators: event times are CLOCK_REALTIME µs (comparable with the
 * emulator log), schedules run on CLOCK_MONOTONIC so they never jump. */
#ifndef WL_TIME_H
#define WL_TIME_H

#include <signal.h>
#include <stdint.h>

int64_t wl_realtime_us(void);
int64_t wl_monotonic_ns(void);
/* Sleeps until the CLOCK_MONOTONIC instant deadline_ns; 0, or EINTR when a signal
 * interrupted it (clock_nanosleep's convention). */
int wl_sleep_until_ns(int64_t deadline_ns);
/* Sleeps for duration_us, resuming after signals unless *stop becomes non-zero. */
void wl_sleep_us(int64_t duration_us, volatile sig_atomic_t *stop);
/* Lowers this thread's timer slack so sleeps end within microseconds of their deadline. */
void wl_precise_timers(void);

#endif
