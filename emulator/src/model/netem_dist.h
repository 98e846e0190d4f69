/* netem's delay distributions in units of the jitter (tc-netem(8) "distribution"),
 * as functions of a uniform u in [0, 1): the continuous form of the tables iproute2
 * generates (docs/netem.md "Delay distributions"). */
#ifndef SQ_NETEM_DIST_H
#define SQ_NETEM_DIST_H

#include "netem_config.h"

/* The value of dist at u, in [-4, 32767/8192] (the range of netem's table entries). */
double sq_netem_dist_value(enum sq_netem_distribution dist, double u);

/* The standard normal quantile (Wichura's algorithm AS241); u in (0, 1). */
double sq_normal_quantile(double u);

#endif
