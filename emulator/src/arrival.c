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
	int64_t t = (at_ns - start_ns) / 1000;
	if (t < floor_us) {
		if (*kind == SQ_ARRIVAL_STAMPED)
			*kind = SQ_ARRIVAL_RAISED;
		t = floor_us;
	}
	return t;
}
