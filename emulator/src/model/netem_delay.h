/* netem's delay line with jitter and reordering (tc-netem(8) "delay", "distribution",
 * "reorder", "gap"): the extra delay of each packet leaving the link, in the order the
 * packets leave (LINK_MODEL.md "The netem stage"). */
#ifndef SQ_NETEM_DELAY_H
#define SQ_NETEM_DELAY_H

#include <stdbool.h>
#include <stdint.h>

#include "netem_config.h"
#include "netem_rand.h"

struct sq_netem_delay {
	int64_t latency_us, jitter_us;
	enum sq_netem_distribution dist;
	struct sq_netem_crand jitter_src;
	double reorder_p;
	uint32_t gap;                  /* 0: no reordering */
	uint32_t counter;              /* packets delayed since the last reordered one */
	struct sq_netem_crand reorder_src;
};

void sq_netem_delay_init(struct sq_netem_delay *d, const struct sq_netem_config *c, uint64_t seed,
			 uint32_t replication, uint32_t jitter_stream, uint32_t reorder_stream);

/* The next packet's delay (>= 0); *reordered says it skipped the delay line. */
int64_t sq_netem_delay_next(struct sq_netem_delay *d, bool *reordered);

#endif
