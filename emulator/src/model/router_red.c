#include "router_red.h"

#include <math.h>

void sq_red_init(struct sq_red_state *s)
{
	s->avg = 0.0;
	s->count = -1;
	s->idle_since = 0;
}

/* How many average-size packets the link could have sent while the queue was idle. */
static double idle_packets(const struct sq_red_config *c, sq_time_us idle_us, uint64_t rate_bps)
{
	if (idle_us <= 0 || rate_bps == 0)
		return 0.0;
	if (rate_bps == SQ_RATE_UNLIMITED)
		return INFINITY;
	return (double)idle_us * (double)rate_bps / (8e6 * (double)c->avpkt);
}

double sq_red_update_average(struct sq_red_state *s, const struct sq_red_config *c,
			     uint64_t backlog, sq_time_us now, uint64_t rate_bps)
{
	if (backlog == 0) {
		double m = idle_packets(c, now - s->idle_since, rate_bps);
		s->avg *= pow(1.0 - c->w_q, m);
	} else {
		s->avg = (1.0 - c->w_q) * s->avg + c->w_q * (double)backlog;
	}
	return s->avg;
}

double sq_red_probability(const struct sq_red_config *c, double avg, int64_t count)
{
	if (avg < c->min)
		return 0.0;
	if (avg >= c->max)
		return 1.0;
	double pb = c->max_p * (avg - c->min) / (double)(c->max - c->min);
	double spacing = 1.0 - (double)count * pb;
	if (spacing <= pb)
		return 1.0;   /* count * pb >= 1 - pb: pa would reach or pass 1 */
	return pb / spacing;
}

enum sq_red_action sq_red_decide(struct sq_red_state *s, const struct sq_red_config *c,
				 struct sq_rng *rng)
{
	if (s->avg < c->min) {
		s->count = -1;
		return SQ_RED_PASS;
	}
	if (s->avg >= c->max) {
		s->count = 0;
		return SQ_RED_FORCED;
	}
	s->count++;
	double pa = sq_red_probability(c, s->avg, s->count);
	/* One draw per arrival in this region, whatever pa is, so the stream stays
	 * aligned with the arrivals. */
	double u = sq_rng_uniform01(rng);
	if (u < pa) {
		s->count = 0;
		return SQ_RED_EARLY;
	}
	return SQ_RED_PASS;
}
