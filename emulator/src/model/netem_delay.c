#include "netem_delay.h"

#include <math.h>

#include "netem_dist.h"

void sq_netem_delay_init(struct sq_netem_delay *d, const struct sq_netem_config *c, uint64_t seed,
			 uint32_t replication, uint32_t jitter_stream, uint32_t reorder_stream)
{
	d->latency_us = c->latency_us;
	d->jitter_us = c->jitter_us;
	d->dist = c->distribution;
	sq_netem_crand_init(&d->jitter_src, c->delay_corr, seed, replication, jitter_stream);
	d->reorder_p = c->reorder.p;
	/* as tc does: a reorder probability without a gap is gap 1 */
	d->gap = c->reorder.p > 0 ? (c->gap ? c->gap : 1) : 0;
	d->counter = 0;
	sq_netem_crand_init(&d->reorder_src, c->reorder.corr, seed, replication, reorder_stream);
}

/* latency + jitter drawn from the distribution; no draw without jitter. */
static int64_t jittered(struct sq_netem_delay *d)
{
	if (d->jitter_us == 0)
		return d->latency_us;
	double u = sq_netem_crand_next(&d->jitter_src);
	int64_t j = d->dist == SQ_NETEM_DIST_UNIFORM
			    ? (int64_t)floor(u * (double)(2 * d->jitter_us)) - d->jitter_us
			    : llround((double)d->jitter_us * sq_netem_dist_value(d->dist, u));
	int64_t t = d->latency_us + j;
	return t > 0 ? t : 0;   /* a time to send in the past is now */
}

int64_t sq_netem_delay_next(struct sq_netem_delay *d, bool *reordered)
{
	/* netem: within the gap, or when the reorder draw says no, the packet is delayed;
	 * otherwise it skips the delay line and the count starts again. The reorder draw is
	 * taken only once the gap is reached. */
	*reordered = d->gap != 0 && d->counter + 1 >= d->gap &&
		     sq_netem_crand_next(&d->reorder_src) < d->reorder_p;
	if (*reordered) {
		d->counter = 0;
		return 0;
	}
	d->counter++;
	return jittered(d);
}
