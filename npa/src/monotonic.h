/* CLOCK_MONOTONIC in microseconds: deadlines that wall-clock steps cannot move. */
#ifndef NPA_MONOTONIC_H
#define NPA_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline int64_t npa_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t npa_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
