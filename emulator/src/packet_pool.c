#include "packet_pool.h"

#include <stdlib.h>

void sq_pool_init(struct sq_packet_pool *pool, uint32_t slot_cap)
{
	*pool = (struct sq_packet_pool){ .slot_cap = slot_cap };
}

static struct sq_packet *allocate(uint32_t cap)
{
	struct sq_packet *p = malloc(sizeof(*p) + SQ_PACKET_ROOM + cap);
	if (p) {
		p->next_free = p->next_all = NULL;
		p->cap = cap;
	}
	return p;
}

struct sq_packet *sq_pool_get(struct sq_packet_pool *pool, uint32_t len)
{
	struct sq_packet *p;
	if (len > pool->slot_cap) {
		/* Oversized packets are tracked in the all-list too, so nothing leaks. */
		p = allocate(len);
	} else if (pool->free_list) {
		p = pool->free_list;
		pool->free_list = p->next_free;
		p->len = len;
		p->sent_ahead = false;
		pool->outstanding++;
		return p;
	} else {
		p = allocate(pool->slot_cap);
	}
	if (!p)
		return NULL;
	p->next_all = pool->all;
	pool->all = p;
	pool->allocated++;
	pool->outstanding++;
	p->len = len;
	p->sent_ahead = false;
	return p;
}

void sq_pool_put(struct sq_packet_pool *pool, struct sq_packet *p)
{
	pool->outstanding--;
	p->next_free = pool->free_list;
	pool->free_list = p;
	/* An oversized buffer goes back to the free list too: it is larger than a
	 * slot, so it serves any later request. */
}

void sq_pool_destroy(struct sq_packet_pool *pool)
{
	struct sq_packet *p = pool->all;
	while (p) {
		struct sq_packet *next = p->next_all;
		free(p);
		p = next;
	}
	*pool = (struct sq_packet_pool){ .slot_cap = pool->slot_cap };
}
