/* head_drop: a FIFO that, when full, drops from the front (the oldest packets) to take
 * the arrival (Linux's pfifo_head_drop); limit in packets. Fresh packets wait, stale ones
 * go: the queue's delay stays at most limit packets, like a tail drop, but what is lost
 * is what has waited longest. */
#include "router_discipline.h"
#include "router_fifo.h"
#include "router_queue.h"

static bool over_limit(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len)
{
	(void)ip_len;
	return q->count + 1 > c->limit;
}

static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	return sq_fifo_check_limit(c, false, cp, err, errlen);
}

const struct sq_router_discipline sq_head_drop_ops = {
	.name = "head_drop",
	.limit_in_bytes = false,
	.check = check,
	.over_limit = over_limit,
	.drops_from_head = true,
};
