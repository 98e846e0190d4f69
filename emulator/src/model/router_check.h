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

#endif
