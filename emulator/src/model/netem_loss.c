#include "netem_loss.h"

#include <string.h>

void sq_netem_loss_init(struct sq_netem_loss *l, const struct sq_netem_config *c, uint64_t seed,
			uint32_t replication, uint32_t stream)
{
	l->model = c->loss_model;
	memcpy(l->a, c->loss, sizeof l->a);
	double corr = c->loss_model == SQ_NETEM_LOSS_RANDOM ? c->loss[1] : 0.0;
	sq_netem_crand_init(&l->src, corr, seed, replication, stream);
	l->state = c->loss_model == SQ_NETEM_LOSS_STATE ? SQ_GI_GAP_RX : 0;
}

/* Gilbert-Elliott: the state moves first (good -> bad with p, bad -> good with r), then
 * the packet is lost with the loss probability of the state it was in (1-k good, 1-h
 * bad): two draws per packet, always. */
static bool gemodel_next(struct sq_netem_loss *l)
{
	double move = sq_netem_crand_next(&l->src);
	double lose = sq_netem_crand_next(&l->src);
	if (l->state == 0) {
		if (move < l->a[0])
			l->state = 1;
		return lose < l->a[3];
	}
	if (move < l->a[1])
		l->state = 0;
	return lose < l->a[2];
}

/* The 4-state model: one draw per packet chooses the next state; states 3 and 4 lose
 * the packet. From 1: to 4 with p14, to 3 with p13, else stay. From 2: to 3 with p23.
 * From 3: to 2 with p32, to 1 with p31, else stay. From 4: back to 1. */
static bool state_next(struct sq_netem_loss *l)
{
	double u = sq_netem_crand_next(&l->src);
	double p13 = l->a[0], p31 = l->a[1], p32 = l->a[2], p23 = l->a[3], p14 = l->a[4];
	switch (l->state) {
	case SQ_GI_GAP_RX:
		l->state = u < p14 ? SQ_GI_GAP_LOSS : u < p14 + p13 ? SQ_GI_BURST_LOSS : SQ_GI_GAP_RX;
		break;
	case SQ_GI_BURST_RX:
		l->state = u < p23 ? SQ_GI_BURST_LOSS : SQ_GI_BURST_RX;
		break;
	case SQ_GI_BURST_LOSS:
		l->state = u < p32 ? SQ_GI_BURST_RX : u < p32 + p31 ? SQ_GI_GAP_RX : SQ_GI_BURST_LOSS;
		break;
	default:
		l->state = SQ_GI_GAP_RX;
		break;
	}
	return l->state == SQ_GI_BURST_LOSS || l->state == SQ_GI_GAP_LOSS;
}

bool sq_netem_loss_next(struct sq_netem_loss *l)
{
	switch (l->model) {
	case SQ_NETEM_LOSS_RANDOM:
		/* like netem, no draw when the probability is 0 */
		return l->a[0] > 0 && sq_netem_crand_next(&l->src) < l->a[0];
	case SQ_NETEM_LOSS_GEMODEL:
		return gemodel_next(l);
	case SQ_NETEM_LOSS_STATE:
		return state_next(l);
	default:
		return false;
	}
}
