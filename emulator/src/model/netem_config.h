/* The configuration of a direction's netem stage (LINK_MODEL.md "The netem stage",
 * docs/netem.md): netem's per-packet models with netem's parameter names. Plain data;
 * all zero is "no netem stage". Probabilities and correlations are in [0, 1]. */
#ifndef SQ_NETEM_CONFIG_H
#define SQ_NETEM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

enum sq_netem_loss_model {
	SQ_NETEM_LOSS_NONE = 0,
	SQ_NETEM_LOSS_RANDOM,    /* loss random P [CORR] */
	SQ_NETEM_LOSS_GEMODEL,   /* loss gemodel p [r [1-h [1-k]]] */
	SQ_NETEM_LOSS_STATE,     /* loss state p13 [p31 [p32 [p23 [p14]]]] */
};

/* The parameters in netem's order: random {P, CORR}; gemodel {p, r, 1-h, 1-k};
 * state {p13, p31, p32, p23, p14}. */
#define SQ_NETEM_LOSS_PARAMS 5

enum sq_netem_distribution {
	SQ_NETEM_DIST_UNIFORM = 0,   /* netem's default: no distribution table */
	SQ_NETEM_DIST_NORMAL,
	SQ_NETEM_DIST_PARETO,
	SQ_NETEM_DIST_PARETONORMAL,
};

/* A probability with netem's correlation (the next draw depends CORR on the last). */
struct sq_netem_chance {
	double p;
	double corr;
};

struct sq_netem_config {
	enum sq_netem_loss_model loss_model;
	double loss[SQ_NETEM_LOSS_PARAMS];
	int64_t latency_us;               /* delay TIME: netem's own delay line, after the link */
	int64_t jitter_us;                /* delay TIME JITTER */
	double delay_corr;                /* delay TIME JITTER CORR */
	enum sq_netem_distribution distribution;
	struct sq_netem_chance reorder;   /* reorder P [CORR] */
	uint32_t gap;                     /* gap N (0: every packet may be reordered, as gap 1) */
	struct sq_netem_chance duplicate;
	struct sq_netem_chance corrupt;
};

/* True when the stage does anything (an all-zero configuration does not). */
bool sq_netem_enabled(const struct sq_netem_config *c);

#endif
