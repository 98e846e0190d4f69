/* The FIFO of one router class: packets waiting in front of the send buffer.
 * A power-of-two ring that only grows, so steady traffic allocates nothing. */
#ifndef SQ_ROUTER_QUEUE_H
#define SQ_ROUTER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"

struct sq_router_pkt {
	uint64_t id;        /* the model's packet id */
	void *user;
	uint32_t ip_len;
	uint8_t cls;        /* the class index */
	uint8_t ecn;        /* the IP ECN field as it entered the class queue (CE if marked there) */
	uint64_t order;     /* arrival order within the direction's router */
	sq_time_us queued_at;   /* when it entered the class queue: its sojourn time is now - queued_at */
	uint32_t flow_hash;     /* the seeded hash of its 5-tuple (sq_router_flow_hash) */
};

struct sq_router_queue {
	struct sq_router_pkt *slots;
	size_t cap;         /* 0 or a power of two */
	size_t head, count;
	uint64_t bytes;     /* backlog */
};

void sq_rqueue_init(struct sq_router_queue *q);
void sq_rqueue_release(struct sq_router_queue *q);
/* Room for one more packet; false if the memory could not be had. */
bool sq_rqueue_reserve(struct sq_router_queue *q);
/* Room for n packets in all (a queue of fixed size); false if the memory could not be had. */
bool sq_rqueue_reserve_total(struct sq_router_queue *q, size_t n);
/* Appends (room must have been reserved). */
void sq_rqueue_push(struct sq_router_queue *q, const struct sq_router_pkt *p);
/* Requires count > 0. */
static inline const struct sq_router_pkt *sq_rqueue_head(const struct sq_router_queue *q)
{
	return &q->slots[q->head];
}
struct sq_router_pkt sq_rqueue_pop(struct sq_router_queue *q);
/* Moves the packet i places behind the head (i < count) to the head; the packets before it
 * move one place back, keeping their order. O(i). */
void sq_rqueue_to_front(struct sq_router_queue *q, size_t i);
/* The packet i places behind the head (i < count). */
static inline const struct sq_router_pkt *sq_rqueue_at(const struct sq_router_queue *q, size_t i)
{
	return &q->slots[(q->head + i) & (q->cap - 1)];
}

#endif
