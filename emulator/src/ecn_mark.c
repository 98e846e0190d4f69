#include "ecn_mark.h"

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') in ones' complement. */
static uint16_t checksum_update(uint16_t hc, uint16_t old_word, uint16_t new_word)
{
	uint32_t sum = (uint16_t)~hc + (uint32_t)(uint16_t)~old_word + new_word;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

bool sq_ecn_set_ce(uint8_t *pkt, size_t len)
{
	if (len >= 20 && pkt[0] >> 4 == 4) {
		if ((pkt[1] & 3) == 0)
			return false;
		uint16_t old_word = get16(pkt);
		pkt[1] |= 3;
		put16(pkt + 10, checksum_update(get16(pkt + 10), old_word, get16(pkt)));
		return true;
	}
	if (len >= 40 && pkt[0] >> 4 == 6) {
		/* The traffic class straddles bytes 0 and 1; ECN is bits 4-5 of byte 1. */
		if ((pkt[1] & 0x30) == 0)
			return false;
		pkt[1] |= 0x30;
		return true;
	}
	return false;
}
