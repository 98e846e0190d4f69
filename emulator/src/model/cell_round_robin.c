/* Round robin per frame: the first ready host after the one served last, in host order. */
#include "cell_scheduler.h"

static uint32_t rr_pick(const struct sq_cell_sched *s, const struct sq_cell_view *v)
{
	for (uint32_t i = 0; i < s->hosts; i++) {
		uint32_t h = sq_cell_turn(s, i);
		if (v->ready[h])
			return h;
	}
	return s->last;   /* not reached: the caller asks only when a host is ready */
}

static void rr_served(struct sq_cell_sched *s, uint32_t host, uint32_t bytes)
{
	(void)s, (void)host, (void)bytes;   /* the position is the only state (sq_cell_served) */
}

const struct sq_cell_policy sq_cell_round_robin = { .pick = rr_pick, .served = rr_served };
