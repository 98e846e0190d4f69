#include "router_fifo.h"

#include <stdio.h>

static bool check_limit(const struct sq_router_class *c, const char *unit, const char *cp, char *err,
			size_t errlen)
{
	if (c->limit >= 1)
		return true;
	snprintf(err, errlen, "%s.limit: must be >= 1 %s, got 0", cp, unit);
	return false;
}

bool sq_fifo_check_packets(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	return check_limit(c, "packet", cp, err, errlen);
}

bool sq_fifo_check_bytes(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	return check_limit(c, "B", cp, err, errlen);
}

bool sq_fifo_over_packets(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len)
{
	(void)ip_len;
	return q->count + 1 > c->limit;
}

bool sq_fifo_over_bytes(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len)
{
	return q->bytes + ip_len > c->limit;
}
