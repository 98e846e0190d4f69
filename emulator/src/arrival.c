#include "arrival.h"

int64_t sq_arrival_time(bool stamped, int64_t stamp_ns, int64_t rx_ns, int64_t start_ns, int64_t floor_us,
			enum sq_arrival_kind *kind)
{
	int64_t at_ns = rx_ns;
	*kind = SQ_ARRIVAL_RECEIVED;
	if (stamped) {
		*kind = stamp_ns > rx_ns ? SQ_ARRIVAL_LOWERED : SQ_ARRIVAL_STAMPED;
		if (stamp_ns < rx_ns)
			at_ns = stamp_ns;
	}
	/* Clamped in ns before any subtraction: a stamp from the far past (or a u64 read as a
	 * negative number) must not overflow into the far future. */
	int64_t floor_ns = start_ns + floor_us * 1000;
	if (at_ns < floor_ns) {
		if (*kind == SQ_ARRIVAL_STAMPED)
			*kind = SQ_ARRIVAL_RAISED;
		at_ns = floor_ns;
	}
	return (at_ns - start_ns) / 1000;
}
