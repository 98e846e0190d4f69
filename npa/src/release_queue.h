/* Packets from the SP that wait for their release time (emulator/PROTOCOL.md, "Shared
 * clock"; emulator/README.md, "Release at the NPA"). A bounded FIFO: the SP sends the
 * packets of one direction in the order of their release times. */
#ifndef NPA_RELEASE_QUEUE_H
#define NPA_RELEASE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct npa_release_slot {
	int64_t at_ns;       /* CLOCK_MONOTONIC: when it is to be written to the TUN */
	uint16_t len;
};

struct npa_release_queue {
	uint8_t *data;       /* cap slots of SQ_WIRE_MAX_PAYLOAD bytes */
	struct npa_release_slot *slot;
	size_t cap, head, count;
};

/* Room for cap packets; 0, or -1 when the memory could not be had. */
int npa_release_queue_init(struct npa_release_queue *q, size_t cap);
void npa_release_queue_free(struct npa_release_queue *q);

static inline bool npa_release_queue_full(const struct npa_release_queue *q)
{
	return q->count == q->cap;
}

/* Appends a copy of the packet (the queue must not be full). */
void npa_release_queue_push(struct npa_release_queue *q, int64_t at_ns, const uint8_t *pkt,
			    uint16_t len);

/* The oldest packet's release time; INT64_MAX when empty. */
int64_t npa_release_queue_next(const struct npa_release_queue *q);

/* The oldest packet (the queue must not be empty); pop removes it. */
const uint8_t *npa_release_queue_peek(const struct npa_release_queue *q, uint16_t *len);
void npa_release_queue_pop(struct npa_release_queue *q);

#endif
