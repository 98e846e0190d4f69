/* The packets the link model holds are owned here: one buffer per packet with
 * room for the wire header in front, recycled through a free list. */
#ifndef SQ_PACKET_POOL_H
#define SQ_PACKET_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "log_line.h"
#include "wire.h"

struct sq_packet {
	struct sq_packet *next_free;
	struct sq_packet *next_all;
	uint32_t len;          /* IP packet bytes */
	uint32_t cap;          /* IP packet capacity */
	bool sent_ahead;       /* already sent to its NPA with its release time: its out only frees it */
	uint16_t id_text_len;
	char id_text[SQ_LOG_ID_TEXT_MAX];   /* the identity's log columns, formatted once at arrival */
	uint8_t frame[];       /* SQ_PACKET_ROOM bytes of room, then the packet */
};

/* In front of the packet: a wire header and, for a packet sent ahead, its release time. */
#define SQ_PACKET_ROOM (SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN)

static inline uint8_t *sq_packet_data(struct sq_packet *p)
{
	return p->frame + SQ_PACKET_ROOM;
}

/* Where its DATA message starts: header and packet, or header, release time and packet. */
static inline uint8_t *sq_packet_message(struct sq_packet *p, bool with_release)
{
	return with_release ? p->frame : p->frame + SQ_WIRE_STAMP_LEN;
}

struct sq_packet_pool {
	uint32_t slot_cap;           /* packet capacity of pooled buffers */
	struct sq_packet *free_list;
	struct sq_packet *all;       /* every pooled buffer, to free at the end */
	size_t outstanding;          /* buffers handed out and not returned */
	size_t allocated;
};

void sq_pool_init(struct sq_packet_pool *pool, uint32_t slot_cap);
/* A buffer for a packet of len bytes (larger ones get their own allocation),
 * NULL when out of memory. */
struct sq_packet *sq_pool_get(struct sq_packet_pool *pool, uint32_t len);
void sq_pool_put(struct sq_packet_pool *pool, struct sq_packet *p);
/* Frees every buffer, including ones still handed out (packets left in the link). */
void sq_pool_destroy(struct sq_packet_pool *pool);

#endif
