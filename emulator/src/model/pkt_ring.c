#include "pkt_ring.h"

#include <stdlib.h>

void sq_ring_init(struct sq_pkt_ring *r)
{
	r->slots = NULL;
	r->cap = 0;
	r->base = r->end = 0;
}

void sq_ring_release(struct sq_pkt_ring *r)
{
	free(r->slots);
	sq_ring_init(r);
}

bool sq_ring_reserve(struct sq_pkt_ring *r, size_t n)
{
	size_t need = sq_ring_count(r) + n;
	if (need <= r->cap)
		return true;
	size_t cap = r->cap ? r->cap : 64;
	while (cap < need)
		cap *= 2;
	struct sq_pkt *slots = malloc(cap * sizeof *slots);
	if (!slots)
		return false;
	for (uint64_t s = r->base; s < r->end; s++)
		slots[s & (cap - 1)] = *sq_ring_get(r, s);
	free(r->slots);
	r->slots = slots;
	r->cap = cap;
	return true;
}

uint64_t sq_ring_push(struct sq_pkt_ring *r, const struct sq_pkt *p)
{
	uint64_t seq = r->end++;
	*sq_ring_get(r, seq) = *p;
	return seq;
}

void sq_ring_trim(struct sq_pkt_ring *r)
{
	while (r->base < r->end) {
		const struct sq_pkt *p = sq_ring_get(r, r->base);
		if (!p->resolved || !p->ser_done)
			break;
		r->base++;
	}
}
