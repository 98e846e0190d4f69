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

/* Feeds count packets of each direction's MTU into the model (down, then up, at
 * t = i x 1 ms; in a cell one per host, host 1 first, each of its own MTU), runs it until
 * nothing is left to do, and prints one line per event: "t_us dir event pkt_id ip_len
 * attempt note" (tab-separated, "-" for none), in a cell of several hosts with the host
 * (1-based) as an eighth column. */
bool sq_print_packets(const struct sq_emu_config *cfg, uint64_t count, FILE *out, char *err,
		      size_t errlen);

/* The same for the packets of a file (in, called name in messages): one a line,
 * "t_us dir ip_len [ecn [flow]]" (dir down or up, ecn the IP ECN field 0-3, default 0; flow
 * 0-65535: a UDP packet from that port, so that flows are told apart as by their 5-tuple;
 * without it protocol, addresses and ports are 0), times not decreasing; '#' lines and
 * empty ones are skipped. False with "NAME:LINE: reason" in err. */
bool sq_print_packets_from(const struct sq_emu_config *cfg, FILE *in, const char *name, FILE *out,
			   char *err, size_t errlen);

#endif
