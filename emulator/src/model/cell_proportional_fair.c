/* Proportional fair (LINK_MODEL.md "The scheduler"): the ready host with the largest
 * success / average, where success is the chance that a frame sent now gets through and
 * average the host's exponentially weighted share of the frames' bytes (window W frames).
 * Ties go to the first in round-robin order. */
#include "cell_scheduler.h"

/* Whether host a's metric success/avg exceeds host b's. success 0 is metric 0 (nothing
 * gets through); success > 0 with avg 0 is infinite; otherwise compare by cross products,
 * which are exact enough to decide the same on every platform (one rounding each). */
static bool better(const struct sq_cell_sched *s, const struct sq_cell_view *v, uint32_t a,
		   uint32_t b)
{
	double sa = v->success[a], sb = v->success[b];
	if (sa <= 0.0 || sb <= 0.0)
		return sa > 0.0 && sb <= 0.0;
	if (s->avg[a] == 0 || s->avg[b] == 0)
		return s->avg[a] == 0 && s->avg[b] != 0;
	return sa * (double)s->avg[b] > sb * (double)s->avg[a];
}

static uint32_t pf_pick(const struct sq_cell_sched *s, const struct sq_cell_view *v)
{
	bool found = false;
	uint32_t best = s->last;
	for (uint32_t i = 0; i < s->hosts; i++) {
		uint32_t h = sq_cell_turn(s, i);
		if (v->ready[h] && (!found || better(s, v, h, best))) {
			best = h;
			found = true;
		}
	}
	return best;
}

/* Every host's average moves at every frame: avg <- avg - floor(avg / W), plus
 * floor(bytes x AVG_ONE / W) for the host served (the others got 0 bytes of this frame). */
static void pf_served(struct sq_cell_sched *s, uint32_t host, uint32_t bytes)
{
	for (uint32_t h = 0; h < s->hosts; h++)
		s->avg[h] -= s->avg[h] / s->window;
	s->avg[host] += (uint64_t)bytes * SQ_CELL_AVG_ONE / s->window;
}

const struct sq_cell_policy sq_cell_proportional_fair = { .pick = pf_pick, .served = pf_served };
