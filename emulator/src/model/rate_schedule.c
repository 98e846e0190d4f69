#include "rate_schedule.h"

#include <stdio.h>

#define SQ_US_PER_S 1000000ULL

bool sq_rate_check(const struct sq_rate_step *steps, size_t n, const char *dir_name, char *err,
		   size_t errlen)
{
	if (!steps || n == 0) {
		snprintf(err, errlen, "%s.bandwidth: at least one step is needed, got none", dir_name);
		return false;
	}
	if (steps[0].at_us != 0) {
		snprintf(err, errlen, "%s.bandwidth[0]: the first step must start at 0 us, got %lld",
			 dir_name, (long long)steps[0].at_us);
		return false;
	}
	for (size_t i = 1; i < n; i++) {
		if (steps[i].at_us <= steps[i - 1].at_us) {
			snprintf(err, errlen,
				 "%s.bandwidth[%zu]: steps must be in increasing time, got %lld us after %lld us",
				 dir_name, i, (long long)steps[i].at_us, (long long)steps[i - 1].at_us);
			return false;
		}
	}
	return true;
}

/* Index of the step in force at t (binary search: schedules may be long). */
static size_t step_index(const struct sq_rate_step *steps, size_t n, sq_time_us t)
{
	size_t lo = 0, hi = n;   /* answer in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (steps[mid].at_us <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t sq_rate_at(const struct sq_rate_step *steps, size_t n, sq_time_us t)
{
	return steps[step_index(steps, n, t)].rate_bps;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

sq_time_us sq_serialisation_end(const struct sq_rate_step *steps, size_t n, sq_time_us start,
				uint64_t bytes)
{
	uint64_t work = bytes * 8 * SQ_US_PER_S;   /* bit·µs; bytes < 2^32 keeps this in range */
	sq_time_us t = start;
	for (size_t i = step_index(steps, n, start); work > 0; i++) {
		uint64_t rate = steps[i].rate_bps;
		sq_time_us step_end = i + 1 < n ? steps[i + 1].at_us : SQ_TIME_NEVER;
		if (rate == SQ_RATE_UNLIMITED)
			return t;
		if (rate > 0) {
			uint64_t needed = ceil_div(work, rate);
			if (step_end == SQ_TIME_NEVER || needed <= (uint64_t)(step_end - t))
				return t + (sq_time_us)needed;
			work -= rate * (uint64_t)(step_end - t);
		}
		if (step_end == SQ_TIME_NEVER)
			return SQ_TIME_NEVER;
		t = step_end;
	}
	return t;
}
