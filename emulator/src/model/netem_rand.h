/* netem's correlated random numbers, from one of the model's seeded streams.
 *
 * netem makes the next number of a correlated source depend on the last:
 * next = (1 - corr) * u + corr * last, u uniform in [0, 1), last the previous
 * result (docs/netem.md). With corr = 0 every number is u itself. */
#ifndef SQ_NETEM_RAND_H
#define SQ_NETEM_RAND_H

#include "rng.h"

struct sq_netem_crand {
	struct sq_rng rng;
	double corr;
	double last;
};

/* A correlated source with its own stream; with corr > 0 the stream's first number
 * is the initial `last` (netem starts `last` at a random value too). */
void sq_netem_crand_init(struct sq_netem_crand *c, double corr, uint64_t seed,
			 uint32_t replication, uint32_t stream);

double sq_netem_crand_next(struct sq_netem_crand *c);

#endif
