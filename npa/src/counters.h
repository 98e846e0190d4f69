/* What the NPA did, printed on stderr at exit as one line of key=value pairs. */
#ifndef NPA_COUNTERS_H
#define NPA_COUNTERS_H

#include <stdint.h>
#include <stdio.h>

#include "inbound.h"
#include "lateness.h"

struct npa_counters {
	uint64_t tun_rx_packets, tun_rx_bytes;     /* read from the TUN */
	uint64_t sp_tx_packets, sp_tx_bytes;       /* DATA sent to the SP (IP bytes) */
	uint64_t sp_tx_errors;                     /* DATA the socket refused to send */
	uint64_t sp_rx_packets, sp_rx_bytes;       /* accepted DATA from the SP (IP bytes) */
	uint64_t tun_tx_packets, tun_tx_bytes;     /* written to the TUN */
	uint64_t tun_tx_errors;                    /* writes the TUN refused */
	uint64_t keepalives_sent, keepalives_received;
	uint64_t wakeups;                          /* epoll_wait returns in the relay */
	/* DATA with a release time (the emulator's release_ahead): */
	uint64_t release_held;                     /* received ahead of their release */
	uint64_t release_full;                     /* written early: the queue was full */
	uint64_t release_flushed;                  /* written early: the relay ended */
	struct sq_lateness release_late;           /* TUN write minus release time, the rest */
	uint64_t rejected[NPA_REJECT_REASONS];     /* by reason; [0] unused */
};

void npa_counters_print(FILE *out, const char *prefix, const struct npa_counters *c);

#endif
