/* Rewriting a packet for an `ecn_mark` of the router stage: ECN field := CE. */
#ifndef SQ_ECN_MARK_H
#define SQ_ECN_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sets the ECN field to CE (3), fixing the IPv4 header checksum incrementally
 * (RFC 1624). Returns false if the packet is not an ECN-capable IPv4/IPv6 packet. */
bool sq_ecn_set_ce(uint8_t *pkt, size_t len);

#endif
