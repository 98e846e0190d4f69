/* Which datagrams arriving at the NPA's UDP socket are accepted: the policy is
 * here, separate from the I/O, so that it can be unit-tested and fuzzed. */
#ifndef NPA_INBOUND_H
#define NPA_INBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "wire.h"

/* Reasons 1..SQ_WIRE_ERRORS-1 are the wire decoder's (enum sq_wire_error). */
enum npa_reject {
	NPA_ACCEPT = 0,
	NPA_REJECT_WRONG_SOURCE = SQ_WIRE_ERRORS,  /* not from the emulator's address:port */
	NPA_REJECT_WRONG_TOKEN,
	NPA_REJECT_WRONG_SENDER,   /* the header's role is not the SP's */
	NPA_REJECT_UNEXPECTED,     /* a type the SP never sends to an NPA */
	NPA_REJECT_NOT_IP,         /* DATA whose payload is not an IPv4/IPv6 packet */
	NPA_REJECT_NO_CLOCK,       /* DATA with a release time to an NPA that agreed no shared clock */
	NPA_REJECT_REASONS
};

struct npa_inbound_policy {
	const struct sockaddr *sp_addr;
	socklen_t sp_addr_len;
	uint64_t token;
	bool shared_clock;         /* the WELCOME agreed (PROTOCOL.md "Shared clock") */
};

/* Checks one datagram from src. On NPA_ACCEPT, *h is the decoded header and
 * the payload follows the header in buf: for a DATA with SQ_WIRE_FLAG_CLOCK, the release
 * time (SQ_WIRE_STAMP_LEN bytes), then the packet. */
enum npa_reject npa_inbound_check(const struct npa_inbound_policy *policy,
				  const uint8_t *buf, size_t len,
				  const struct sockaddr *src, socklen_t src_len,
				  struct sq_wire_header *h);

const char *npa_reject_name(enum npa_reject r);

#endif
