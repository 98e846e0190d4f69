#include "cell_scheduler.h"

#include <string.h>

static const struct sq_cell_policy *policy_of(const struct sq_cell_sched *s)
{
	return s->policy == SQ_CELL_PROPORTIONAL_FAIR ? &sq_cell_proportional_fair
						      : &sq_cell_round_robin;
}

void sq_cell_sched_init(struct sq_cell_sched *s, const struct sq_cell_config *cfg, uint32_t hosts)
{
	memset(s, 0, sizeof *s);
	s->policy = cfg->scheduler;
	s->hosts = hosts;
	s->last = hosts - 1;   /* host 1 (index 0) has the first turn */
	s->window = cfg->pf_window ? cfg->pf_window : SQ_CELL_DEFAULT_PF_WINDOW;
}

uint32_t sq_cell_pick(const struct sq_cell_sched *s, const struct sq_cell_view *v)
{
	return policy_of(s)->pick(s, v);
}

void sq_cell_served(struct sq_cell_sched *s, uint32_t host, uint32_t bytes)
{
	policy_of(s)->served(s, host, bytes);
	s->last = host;
}
