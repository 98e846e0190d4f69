/* Lateness statistics: the actual time minus the scheduled time (the emulator's sends at
 * their delivery time, the NPA's TUN writes at their release time), kept in a fixed
 * log-linear histogram (no per-packet allocation). */
#ifndef SQ_LATENESS_H
#define SQ_LATENESS_H

#include <stdint.h>

/* Exact below 1024 µs, then 512 sub-buckets per power of two (< 0.2 % error). */
#define SQ_LATENESS_LINEAR 1024
#define SQ_LATENESS_SUB 512
#define SQ_LATENESS_OCTAVES 44
#define SQ_LATENESS_BUCKETS (SQ_LATENESS_LINEAR + SQ_LATENESS_OCTAVES * SQ_LATENESS_SUB)

struct sq_lateness {
	uint64_t count;
	uint64_t early;        /* sent before the scheduled time (counted as 0) */
	int64_t max_ns;
	uint64_t bucket[SQ_LATENESS_BUCKETS];
};

void sq_lateness_init(struct sq_lateness *l);
void sq_lateness_add(struct sq_lateness *l, int64_t late_ns);
/* The q-quantile (0 < q <= 1) in µs: the smallest bucket value with at least
 * ceil(q * count) samples at or below it; 0 if empty. */
uint64_t sq_lateness_quantile_us(const struct sq_lateness *l, double q);
uint64_t sq_lateness_max_us(const struct sq_lateness *l);

#endif
