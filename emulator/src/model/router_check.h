/* Validation of a direction's router stage configuration; messages name the
 * field, e.g. "down.router.class[EF].red.min: must be < max (6000 B), got 6000 B". */
#ifndef SQ_ROUTER_CHECK_H
#define SQ_ROUTER_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

/* d is the whole direction (its send_buffer >= mtu is link_check.c's rule); dn is "down"
 * or "up". A disabled router is always fine. */
bool sq_router_check(const struct sq_direction_config *d, const char *dn, char *err,
		     size_t errlen);

/* A discipline's real-valued key v within (lo, hi] (lo_open) or [lo, hi]; else false and
 * "<cp>.<key>: 0 is outside (0, 10000]" in err (key: "pie.alpha"). NaN fails. */
bool sq_router_check_range(double v, double lo, double hi, bool lo_open, const char *cp, const char *key,
			   char *err, size_t errlen);

/* A discipline's time key v within [lo, hi] µs; else false and
 * "<cp>.<key>: 0us is outside [1us, 10000000us]" in err. */
bool sq_router_check_time(sq_time_us v, sq_time_us lo, sq_time_us hi, const char *cp, const char *key,
			  char *err, size_t errlen);

#endif
