#include "netem_rand.h"

void sq_netem_crand_init(struct sq_netem_crand *c, double corr, uint64_t seed,
			 uint32_t replication, uint32_t stream)
{
	sq_rng_init(&c->rng, seed, replication, stream);
	c->corr = corr;
	c->last = corr > 0 ? sq_rng_uniform01(&c->rng) : 0.0;
}

double sq_netem_crand_next(struct sq_netem_crand *c)
{
	double u = sq_rng_uniform01(&c->rng);
	if (c->corr <= 0)
		return u;
	c->last = (1.0 - c->corr) * u + c->corr * c->last;
	return c->last;
}
