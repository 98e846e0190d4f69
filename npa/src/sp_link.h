/* The NPA's UDP socket towards the simulation process (SP): message headers
 * with this NPA's role, token and sequence numbers, and the inbound policy
 * applied with per-reason counting. */
#ifndef NPA_SP_LINK_H
#define NPA_SP_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "cli_values.h"
#include "counters.h"
#include "inbound.h"

struct npa_sp_link {
	int fd;
	const struct npa_endpoint *sp;
	uint64_t token;
	uint8_t role;
	uint32_t seq;
	struct npa_counters *counters;
};

/* Opens a non-blocking UDP socket of the SP address's family, with large
 * buffers so that bursts are queued rather than dropped. */
int npa_sp_link_open(struct npa_sp_link *l, const struct npa_endpoint *sp, uint64_t token,
		     uint8_t role, struct npa_counters *counters, char *err, size_t errlen);

void npa_sp_link_close(struct npa_sp_link *l);

/* Writes the header of the next message into buf (SQ_WIRE_HEADER_LEN bytes). */
void npa_sp_link_header(struct npa_sp_link *l, uint8_t *buf, uint8_t type, uint16_t length);

/* Sends a message without payload (HELLO, KEEPALIVE, BYE). Returns 0 or -errno. */
int npa_sp_link_send_control(struct npa_sp_link *l, uint8_t type);

/* Applies the inbound policy to one received datagram and counts a rejection. */
enum npa_reject npa_sp_link_accept(struct npa_sp_link *l, const uint8_t *buf, size_t len,
				   const struct sockaddr *src, socklen_t src_len,
				   struct sq_wire_header *h);

#endif
