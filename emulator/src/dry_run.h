/* --print-packets: the link model's events for a fixed stream of packets, in virtual time,
 * without sockets or NPAs: what a configuration's link (its netem stage included) does
 * to packets, for people and for the tests' independent references. */
#ifndef SQ_DRY_RUN_H
#define SQ_DRY_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"

/* The spacing of the packets: one per direction every millisecond. */
#define SQ_DRY_RUN_SPACING_US 1000

/* At most this many ECN values cycle through the fed packets (--print-ecn). */
#define SQ_DRY_RUN_MAX_ECN 64

/* Feeds count packets of each direction's MTU into the model (down, then up, at
 * t = i x 1 ms), packet i of each direction with the ECN field ecn[i mod n_ecn] (n_ecn >= 1),
 * runs it until nothing is left to do, and prints one line per event:
 * "t_us dir event pkt_id ip_len attempt note" (tab-separated, "-" for none). */
bool sq_print_packets(const struct sq_emu_config *cfg, uint64_t count, const uint8_t *ecn, size_t n_ecn,
		      FILE *out, char *err, size_t errlen);

#endif
