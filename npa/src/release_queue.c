#include "release_queue.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

int npa_release_queue_init(struct npa_release_queue *q, size_t cap)
{
	/* Large but only touched as packets come: the kernel maps the pages on first use. */
	*q = (struct npa_release_queue){ .cap = cap };
	q->data = malloc(cap * SQ_WIRE_MAX_PAYLOAD);
	q->slot = calloc(cap, sizeof *q->slot);
	if (q->data == NULL || q->slot == NULL) {
		npa_release_queue_free(q);
		return -1;
	}
	return 0;
}

void npa_release_queue_free(struct npa_release_queue *q)
{
	free(q->data);
	free(q->slot);
	*q = (struct npa_release_queue){ 0 };
}

void npa_release_queue_push(struct npa_release_queue *q, int64_t at_ns, const uint8_t *pkt,
			    uint16_t len)
{
	size_t i = (q->head + q->count) % q->cap;
	q->slot[i] = (struct npa_release_slot){ .at_ns = at_ns, .len = len };
	memcpy(q->data + i * SQ_WIRE_MAX_PAYLOAD, pkt, len);
	q->count++;
}

int64_t npa_release_queue_next(const struct npa_release_queue *q)
{
	return q->count ? q->slot[q->head].at_ns : INT64_MAX;
}

const uint8_t *npa_release_queue_peek(const struct npa_release_queue *q, uint16_t *len)
{
	*len = q->slot[q->head].len;
	return q->data + q->head * SQ_WIRE_MAX_PAYLOAD;
}

void npa_release_queue_pop(struct npa_release_queue *q)
{
	q->head = (q->head + 1) % q->cap;
	q->count--;
}
