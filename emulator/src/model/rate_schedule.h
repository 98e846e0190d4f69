/* Serialisation over a piecewise-constant bandwidth schedule, in exact integers.
 *
 * A packet of n bytes is n × 8 × 10^6 bit·µs of work; each microsecond at
 * rate r bit/s does r bit·µs of it. The transmission ends at the first whole
 * microsecond by which all work is done (the ceiling). A step change in the
 * middle of a packet applies to the rest of it; rate 0 makes no progress;
 * SQ_RATE_UNLIMITED takes no time.
 */
#ifndef SQ_RATE_SCHEDULE_H
#define SQ_RATE_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

/* Checks steps of direction `dir_name` ("down"/"up"); the message names the field. */
bool sq_rate_check(const struct sq_rate_step *steps, size_t n, const char *dir_name, char *err,
		   size_t errlen);

/* The rate in force at t (steps checked: steps[0].at_us == 0, increasing). */
uint64_t sq_rate_at(const struct sq_rate_step *steps, size_t n, sq_time_us t);

/* When serialising `bytes` bytes that starts at `start` ends; SQ_TIME_NEVER if
 * the schedule ends in an outage before the work is done. */
sq_time_us sq_serialisation_end(const struct sq_rate_step *steps, size_t n, sq_time_us start,
				uint64_t bytes);

#endif
