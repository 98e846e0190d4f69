/* bfifo: tail drop at a limit in bytes. */
#include "router_discipline.h"
#include "router_fifo.h"

const struct sq_router_discipline sq_bfifo_ops = {
	.name = "bfifo",
	.limit_in_bytes = true,
	.check = sq_fifo_check_bytes,
	.over_limit = sq_fifo_over_bytes,
};
