/* What the FIFO disciplines (pfifo, bfifo, ...: a limit and nothing else) share. */
#ifndef SQ_ROUTER_FIFO_H
#define SQ_ROUTER_FIFO_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

/* The class's limit is at least one packet or byte (in_bytes); else false and
 * "<cp>.limit: must be >= 1 B, got 0" in err. */
bool sq_fifo_check_limit(const struct sq_router_class *c, bool in_bytes, const char *cp, char *err,
			 size_t errlen);

#endif
