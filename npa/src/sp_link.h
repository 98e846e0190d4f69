/* The NPA's UDP socket towards the simulation process (SP): message headers
 * with this NPA's role, token and sequence numbers, and the inbound policy
 * applied with per-reason counting. */
#ifndef NPA_SP_LINK_H
#define NPA_SP_LINK_H

#include <stdbool.h>
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
	uint16_t host;        /* mobile: its host in the emulator's cell (0: host 1); set after open */
	uint32_t seq;
	struct npa_counters *counters;
	bool clock_offered;   /* the HELLOs carried a clock offer (wire.h, SQ_WIRE_FLAG_CLOCK) */
	bool stamp;           /* the SP accepted it: DATA carries the TUN read time */
};

/* Opens a non-blocking UDP socket of the SP address's family, with large
 * buffers so that bursts are queued rather than dropped. */
int npa_sp_link_open(struct npa_sp_link *l, const struct npa_endpoint *sp, uint64_t token,
		     uint8_t role, struct npa_counters *counters, char *err, size_t errlen);

void npa_sp_link_close(struct npa_sp_link *l);

/* Writes the header of the next message into buf (SQ_WIRE_HEADER_LEN bytes); a DATA header
 * has SQ_WIRE_FLAG_CLOCK when stamp is on (length then counts the stamp). */
void npa_sp_link_header(struct npa_sp_link *l, uint8_t *buf, uint8_t type, uint16_t length);

/* Sends a message without payload (KEEPALIVE, BYE). Returns 0 or -errno. */
int npa_sp_link_send_control(struct npa_sp_link *l, uint8_t type);

/* Sends a HELLO, with the clock offer (this kernel's boot id, CLOCK_MONOTONIC now) when the
 * boot id can be read. Returns 0 or -errno. */
int npa_sp_link_send_hello(struct npa_sp_link *l);

/* The bytes between the header and the packet in this NPA's DATA: the stamp, or none. */
static inline size_t npa_sp_link_stamp_len(const struct npa_sp_link *l)
{
	return l->stamp ? SQ_WIRE_STAMP_LEN : 0;
}

/* Applies the inbound policy to one received datagram and counts a rejection. */
enum npa_reject npa_sp_link_accept(struct npa_sp_link *l, const uint8_t *buf, size_t len,
				   const struct sockaddr *src, socklen_t src_len,
				   struct sq_wire_header *h);

#endif
