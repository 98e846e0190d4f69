#include "netem_config.h"

bool sq_netem_enabled(const struct sq_netem_config *c)
{
	return c->loss_model != SQ_NETEM_LOSS_NONE || c->latency_us != 0 || c->jitter_us != 0 ||
	       c->reorder.p > 0 || c->duplicate.p > 0 || c->corrupt.p > 0;
}
