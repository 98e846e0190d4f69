/* The number an attempt's frame error is decided by (LINK_MODEL.md "Random numbers"):
 * per frame, the next number of the direction's error stream; by time, a function of
 * (seed, replication, direction, the attempt's start time on a fixed grid). Each host of a
 * cell has its own streams (sq_host_stream). */
#ifndef SQ_ERROR_DRAW_H
#define SQ_ERROR_DRAW_H

#include "link_config.h"
#include "rng.h"

struct sq_error_draw {
	enum sq_error_draws mode;
	struct sq_rng rng;      /* per frame */
	uint64_t key;           /* by time */
	sq_time_us grid;
};

void sq_error_draw_init(struct sq_error_draw *e, const struct sq_channel_config *c, uint64_t seed,
			uint32_t replication, uint32_t host, enum sq_dir dir);

/* The uniform number in [0, 1) of an attempt starting at t. */
double sq_error_draw_at(struct sq_error_draw *e, sq_time_us t);

#endif
