/* Serialisation over a recorded capacity trace in mahimahi's delivery-opportunity format
 * (LINK_MODEL.md "Recorded capacity traces").
 *
 * Opportunity g (g = 0, 1, ...; cycle c = g / n, line i = g % n) is at
 * (c × period + ms[i]) × 1000 µs and is worth SQ_OPPORTUNITY_BYTES. A packet needs
 * ip_len + SQ_OPPORTUNITY_FRAMING + overhead bytes of opportunities; it ends at the
 * opportunity that carries its last byte. The bytes of an opportunity the packet ending in
 * it does not use go to the next packet only if that packet was already waiting
 * (`carry`); otherwise they are wasted, as is every opportunity with nothing to send.
 */
#ifndef SQ_CAPACITY_TRACE_H
#define SQ_CAPACITY_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"

/* mahimahi's PACKET_SIZE: its TUN device (no IFF_NO_PI) hands it each IP packet behind a
 * 4-byte packet-information header, and an opportunity carries 1504 such bytes, i.e. one
 * 1500 B IP packet. */
#define SQ_OPPORTUNITY_BYTES 1504u
#define SQ_OPPORTUNITY_FRAMING 4u
#define SQ_MAX_OPPORTUNITY_MS 1000000000u   /* 10^9 ms = 10^12 µs, the model's longest time */

struct sq_capacity_trace {
	sq_time_us *at;        /* opportunity times of one cycle, µs (owned copy) */
	size_t n;
	sq_time_us period;     /* µs: the last line's time */
	uint64_t last;         /* global index of the opportunity the last packet ended in */
	uint32_t left;         /* its bytes no packet has used */
	bool used;             /* a packet has ended (last, left are meaningful) */
};

/* The message names the field as the configuration file does: "down.bandwidth". */
bool sq_capacity_trace_check(const struct sq_opportunity_trace *t, const char *dir_name,
			     char *err, size_t errlen);
bool sq_capacity_trace_init(struct sq_capacity_trace *c, const struct sq_opportunity_trace *t);
void sq_capacity_trace_release(struct sq_capacity_trace *c);

/* A packet of `bytes` bytes (framing and overhead included) starts at `start`; `carry`: it
 * was waiting when the previous packet ended, and starts at that very instant. Returns
 * the time of the opportunity that carries its last byte (>= start). */
sq_time_us sq_capacity_trace_serialise(struct sq_capacity_trace *c, sq_time_us start,
				       uint64_t bytes, bool carry);

/* The trace's mean rate, bit/s (the rate RED's idle-time decay uses). */
uint64_t sq_capacity_trace_mean_bps(const struct sq_capacity_trace *c);

#endif
