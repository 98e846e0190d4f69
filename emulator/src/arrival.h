/* The instant a packet enters the link model (emulator/PROTOCOL.md, "Shared clock"): the
 * time its NPA read it from the TUN when the NPA stamped it, else when the SP received it. */
#ifndef SQ_ARRIVAL_H
#define SQ_ARRIVAL_H

#include <stdbool.h>
#include <stdint.h>

/* How an arrival time was chosen (counted for the log's trailer). */
enum sq_arrival_kind {
	SQ_ARRIVAL_RECEIVED,     /* no stamp: the SP's receive time */
	SQ_ARRIVAL_STAMPED,      /* the NPA's stamp */
	SQ_ARRIVAL_RAISED,       /* a stamp before the model's latest time: that time instead */
	SQ_ARRIVAL_LOWERED,      /* a stamp after the receive time (impossible on one clock): the receive time */
	SQ_ARRIVAL_KINDS
};

/* The arrival's model time in µs since t = 0 (start_ns, CLOCK_MONOTONIC): the stamp if there
 * is one, but never later than rx_ns (when the SP received it) and never earlier than floor_us
 * (the latest time the model was given: the model never goes back, so every packet stays
 * behind the ones that arrived before it, in either direction). *kind says which. */
int64_t sq_arrival_time(bool stamped, int64_t stamp_ns, int64_t rx_ns, int64_t start_ns, int64_t floor_us,
			enum sq_arrival_kind *kind);

#endif
