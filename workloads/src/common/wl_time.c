#include "wl_time.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

static int64_t timespec_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int64_t wl_realtime_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return timespec_ns(&ts) / 1000;
}

int64_t wl_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(&ts);
}

int wl_sleep_until_ns(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void wl_sleep_us(int64_t duration_us, volatile sig_atomic_t *stop)
{
    int64_t deadline = wl_monotonic_ns() + duration_us * 1000;
    while (!(stop && *stop) && wl_sleep_until_ns(deadline) == EINTR)
        ;
}

void wl_precise_timers(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}
