/* The packets of one direction, in arrival (= transmission) order.
 *
 * A packet gets the next per-direction sequence number when it enters the
 * send buffer and keeps its slot until it has left the link (out or dropped)
 * and its first serialisation has ended. Slots live in a power-of-two ring
 * indexed by sequence number that only grows, so steady traffic allocates
 * nothing per packet.
 */
#ifndef SQ_PKT_RING_H
#define SQ_PKT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"

struct sq_pkt {
	uint64_t id;            /* the model's packet id */
	void *user;
	uint32_t ip_len;
	sq_time_us ser;         /* first serialisation duration; SQ_TIME_NEVER if endless */
	uint32_t held_attempt;  /* the attempt that arrived, while held */
	sq_time_us recv_at;     /* when its successful attempt arrives, once drawn */
	bool arrives;           /* its successful attempt has been drawn: recv_at is fixed */
	bool ser_done;          /* first serialisation has ended */
	bool held;              /* arrived, waiting in the receive buffer */
	bool resolved;          /* out or dropped */
};

struct sq_pkt_ring {
	struct sq_pkt *slots;
	size_t cap;             /* 0 or a power of two */
	uint64_t base;          /* oldest live sequence number */
	uint64_t end;           /* next sequence number to hand out */
};

void sq_ring_init(struct sq_pkt_ring *r);
void sq_ring_release(struct sq_pkt_ring *r);
static inline size_t sq_ring_count(const struct sq_pkt_ring *r)
{
	return (size_t)(r->end - r->base);
}
/* Room for n more packets; false if the memory could not be had. */
bool sq_ring_reserve(struct sq_pkt_ring *r, size_t n);
/* Appends (room must have been reserved) and returns the sequence number. */
uint64_t sq_ring_push(struct sq_pkt_ring *r, const struct sq_pkt *p);
static inline struct sq_pkt *sq_ring_get(struct sq_pkt_ring *r, uint64_t seq)
{
	return &r->slots[seq & (r->cap - 1)];
}
static inline const struct sq_pkt *sq_ring_peek(const struct sq_pkt_ring *r, uint64_t seq)
{
	return &r->slots[seq & (r->cap - 1)];
}
/* Frees the slots of finished packets at the old end of the ring. */
void sq_ring_trim(struct sq_pkt_ring *r);

#endif
