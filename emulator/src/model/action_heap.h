/* A binary min-heap of the model's timed actions.
 *
 * Actions are ordered by (t, phase, dir, host, seq): time first, then the fixed
 * phase order of simultaneous events (LINK_MODEL.md), then down before up,
 * then a cell's hosts in order, then transmission order. Keys are unique, so the order is total and the
 * event stream does not depend on the heap's internals.
 */
#ifndef SQ_ACTION_HEAP_H
#define SQ_ACTION_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"

enum sq_phase {
	SQ_PHASE_RECV = 1,      /* a successful attempt reaches the far end */
	SQ_PHASE_RETRY = 2,     /* an ARQ retransmission attempt starts */
	SQ_PHASE_TX_END = 3,    /* the first serialisation of a packet ends */
	SQ_PHASE_TX_START = 4,  /* the transmitter looks for the next packet */
};

struct sq_action {
	sq_time_us t;
	enum sq_phase phase;
	enum sq_dir dir;
	uint32_t host;          /* the cell's host (0-based); 0 for TX_START, the direction's */
	uint64_t seq;           /* the packet's per-direction sequence number */
	uint32_t attempt;
};

struct sq_action_heap {
	struct sq_action *a;
	size_t len, cap;
};

void sq_heap_init(struct sq_action_heap *h);
void sq_heap_release(struct sq_action_heap *h);
/* Makes room for at least n actions; false if the memory could not be had. */
bool sq_heap_reserve(struct sq_action_heap *h, size_t n);
/* false only if memory for a larger heap could not be had. */
bool sq_heap_push(struct sq_action_heap *h, struct sq_action act);
/* Requires len > 0. */
struct sq_action sq_heap_pop(struct sq_action_heap *h);
static inline const struct sq_action *sq_heap_top(const struct sq_action_heap *h)
{
	return h->len ? &h->a[0] : NULL;
}

#endif
