/* State-length distributions: validation and draws in whole microseconds. */
#ifndef SQ_DIST_H
#define SQ_DIST_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"
#include "rng.h"

/* Checks d; on failure writes "<what>: <problem>" into err and returns false. */
bool sq_dist_check(const struct sq_dist *d, const char *what, char *err, size_t errlen);

/* One length >= 1 us drawn from d (which must have passed sq_dist_check).
 * Uses exactly one sq_rng_uniform01/uniform_int draw of r except for fixed,
 * which uses none. */
sq_time_us sq_dist_draw(const struct sq_dist *d, struct sq_rng *r);

#endif
