/* pfifo: tail drop at a limit in packets. */
#include "router_discipline.h"
#include "router_fifo.h"

const struct sq_router_discipline sq_pfifo_ops = {
	.name = "pfifo",
	.limit_in_bytes = false,
	.check = sq_fifo_check_packets,
	.over_limit = sq_fifo_over_packets,
};
