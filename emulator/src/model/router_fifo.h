/* What the FIFO disciplines (pfifo, bfifo, head_drop: a limit and nothing else) share: their
 * limit's check and test, in packets or in bytes, as ops functions (codel's limit too). */
#ifndef SQ_ROUTER_FIFO_H
#define SQ_ROUTER_FIFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"
#include "router_queue.h"

/* The class's limit is at least one packet (one byte); else false and
 * "<cp>.limit: must be >= 1 packet, got 0" in err. */
bool sq_fifo_check_packets(const struct sq_router_class *c, const char *cp, char *err, size_t errlen);
bool sq_fifo_check_bytes(const struct sq_router_class *c, const char *cp, char *err, size_t errlen);

/* One more packet (ip_len more bytes) would pass the class's limit. */
bool sq_fifo_over_packets(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len);
bool sq_fifo_over_bytes(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len);

#endif
