/* Random Early Detection for one class queue of the router stage (Floyd &
 * Jacobson 1993, byte mode; LINK_MODEL.md "RED").
 *
 * Per arrival: the average is updated on the class's byte backlog (with the
 * idle-time correction when the queue was empty), then the decision uses the
 * count-based spacing pa = pb / (1 - count * pb). Floating point is used for
 * the average and the probabilities only, never for time.
 */
#ifndef SQ_ROUTER_RED_H
#define SQ_ROUTER_RED_H

#include <stdint.h>

#include "link_config.h"
#include "rng.h"

struct sq_red_state {
	double avg;              /* bytes */
	int64_t count;           /* packets since the last mark/drop; -1 below min */
	sq_time_us idle_since;   /* start of the current idle period (backlog 0) */
};

enum sq_red_action {
	SQ_RED_PASS,     /* no congestion signal */
	SQ_RED_EARLY,    /* probabilistic region: mark or drop */
	SQ_RED_FORCED,   /* avg >= max: mark or drop */
};

/* avg 0, count -1, idle since t = 0. */
void sq_red_init(struct sq_red_state *s);

/* Updates and returns the average for an arrival at now finding `backlog` bytes
 * in the queue; rate_bps is the direction's bandwidth at now. */
double sq_red_update_average(struct sq_red_state *s, const struct sq_red_config *c,
			     uint64_t backlog, sq_time_us now, uint64_t rate_bps);

/* pa for this average after count has been incremented (pb / (1 - count pb),
 * 1 once count * pb >= 1; 0 below min; 1 at or above max). */
double sq_red_probability(const struct sq_red_config *c, double avg, int64_t count);

/* The decision for the average just computed; draws exactly one number from
 * rng when min <= avg < max, none otherwise. */
enum sq_red_action sq_red_decide(struct sq_red_state *s, const struct sq_red_config *c,
				 struct sq_rng *rng);

/* The queue became empty (or stayed empty after a refused arrival) at now. */
static inline void sq_red_start_idle(struct sq_red_state *s, sq_time_us now)
{
	s->idle_since = now;
}

#endif
