#include "router_queue.h"

#include <stdlib.h>

void sq_rqueue_init(struct sq_router_queue *q)
{
	q->slots = NULL;
	q->cap = q->head = q->count = 0;
	q->bytes = 0;
}

void sq_rqueue_release(struct sq_router_queue *q)
{
	free(q->slots);
	sq_rqueue_init(q);
}

static bool grow(struct sq_router_queue *q, size_t cap)
{
	struct sq_router_pkt *slots = malloc(cap * sizeof *slots);
	if (!slots)
		return false;
	for (size_t i = 0; i < q->count; i++)
		slots[i] = q->slots[(q->head + i) & (q->cap - 1)];
	free(q->slots);
	q->slots = slots;
	q->cap = cap;
	q->head = 0;
	return true;
}

bool sq_rqueue_reserve(struct sq_router_queue *q)
{
	if (q->count < q->cap)
		return true;
	return grow(q, q->cap ? 2 * q->cap : 16);
}

bool sq_rqueue_reserve_total(struct sq_router_queue *q, size_t n)
{
	size_t cap = q->cap ? q->cap : 16;
	while (cap < n)
		cap *= 2;
	return cap == q->cap || grow(q, cap);
}

void sq_rqueue_push(struct sq_router_queue *q, const struct sq_router_pkt *p)
{
	q->slots[(q->head + q->count) & (q->cap - 1)] = *p;
	q->count++;
	q->bytes += p->ip_len;
}

struct sq_router_pkt sq_rqueue_pop(struct sq_router_queue *q)
{
	struct sq_router_pkt p = q->slots[q->head];
	q->head = (q->head + 1) & (q->cap - 1);
	q->count--;
	q->bytes -= p.ip_len;
	return p;
}

void sq_rqueue_to_front(struct sq_router_queue *q, size_t i)
{
	struct sq_router_pkt p = q->slots[(q->head + i) & (q->cap - 1)];
	for (; i > 0; i--)
		q->slots[(q->head + i) & (q->cap - 1)] = q->slots[(q->head + i - 1) & (q->cap - 1)];
	q->slots[q->head] = p;
}
