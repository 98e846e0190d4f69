/* The emulator's clocks in ns: the event loop, the standby thread and the log writer all
 * measure with CLOCK_MONOTONIC (t = 0 of a run is one of its instants). */
#ifndef SQ_CLOCK_NS_H
#define SQ_CLOCK_NS_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

#endif
