/* bfifo: tail drop at a limit in bytes. */
#include "router_discipline.h"
#include "router_fifo.h"
#include "router_queue.h"

static bool over_limit(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len)
{
	return q->bytes + ip_len > c->limit;
}

static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	return sq_fifo_check_limit(c, true, cp, err, errlen);
}

const struct sq_router_discipline sq_bfifo_ops = {
	.name = "bfifo",
	.limit_in_bytes = true,
	.check = check,
	.over_limit = over_limit,
};
