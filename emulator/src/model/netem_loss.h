/* netem's loss models (tc-netem(8) "loss"): random with correlation, Gilbert-Elliott
 * and the 4-state model. One decision per packet entering the netem stage, from the
 * direction's netem loss stream. Semantics: emulator/LINK_MODEL.md "The netem stage". */
#ifndef SQ_NETEM_LOSS_H
#define SQ_NETEM_LOSS_H

#include <stdbool.h>

#include "netem_config.h"
#include "netem_rand.h"

/* The states of the 4-state model, numbered as in tc-netem(8). */
enum sq_netem_gi_state {
	SQ_GI_GAP_RX = 1,     /* good reception within a gap period */
	SQ_GI_BURST_RX = 2,   /* good reception within a burst */
	SQ_GI_BURST_LOSS = 3, /* loss within a burst */
	SQ_GI_GAP_LOSS = 4,   /* isolated loss within a gap */
};

struct sq_netem_loss {
	enum sq_netem_loss_model model;
	double a[SQ_NETEM_LOSS_PARAMS];
	struct sq_netem_crand src;   /* correlated only for the random model */
	int state;                   /* gemodel: 0 good, 1 bad; state: enum sq_netem_gi_state */
};

void sq_netem_loss_init(struct sq_netem_loss *l, const struct sq_netem_config *c, uint64_t seed,
			uint32_t replication, uint32_t stream);

/* Whether the next packet is lost. */
bool sq_netem_loss_next(struct sq_netem_loss *l);

#endif
