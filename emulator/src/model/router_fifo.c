#include "router_fifo.h"

#include <stdio.h>

bool sq_fifo_check_limit(const struct sq_router_class *c, bool in_bytes, const char *cp, char *err,
			 size_t errlen)
{
	if (c->limit >= 1)
		return true;
	snprintf(err, errlen, "%s.limit: must be >= 1 %s, got 0", cp, in_bytes ? "B" : "packet");
	return false;
}
