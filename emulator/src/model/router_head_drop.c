/* head_drop: a FIFO that, when full, drops from the front (the oldest packets) to take
 * the arrival (Linux's pfifo_head_drop); limit in packets. Fresh packets wait, stale ones
 * go: the queue's delay stays at most limit packets, like a tail drop, but what is lost
 * is what has waited longest. */
#include "router_discipline.h"
#include "router_fifo.h"

const struct sq_router_discipline sq_head_drop_ops = {
	.name = "head_drop",
	.limit_in_bytes = false,
	.check = sq_fifo_check_packets,
	.over_limit = sq_fifo_over_packets,
	.drops_from_head = true,
};
