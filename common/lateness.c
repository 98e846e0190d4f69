#include "lateness.h"

#include <math.h>
#include <string.h>

void sq_lateness_init(struct sq_lateness *l)
{
	memset(l, 0, sizeof(*l));
}

static unsigned highest_bit(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static size_t bucket_of(uint64_t us)
{
	if (us < SQ_LATENESS_LINEAR)
		return (size_t)us;
	unsigned shift = highest_bit(us) - 9;   /* us >> shift is in [512, 1024) */
	size_t octave = shift - 1;
	if (octave >= SQ_LATENESS_OCTAVES)
		return SQ_LATENESS_BUCKETS - 1;
	return SQ_LATENESS_LINEAR + octave * SQ_LATENESS_SUB + (size_t)((us >> shift) - SQ_LATENESS_SUB);
}

/* The largest µs value a bucket holds (so quantiles never understate). */
static uint64_t bucket_upper(size_t b)
{
	if (b < SQ_LATENESS_LINEAR)
		return b;
	size_t octave = (b - SQ_LATENESS_LINEAR) / SQ_LATENESS_SUB;
	uint64_t sub = (b - SQ_LATENESS_LINEAR) % SQ_LATENESS_SUB + SQ_LATENESS_SUB;
	unsigned shift = (unsigned)octave + 1;
	return ((sub + 1) << shift) - 1;
}

void sq_lateness_add(struct sq_lateness *l, int64_t late_ns)
{
	if (late_ns < 0) {
		l->early++;
		late_ns = 0;
	}
	l->count++;
	if (late_ns > l->max_ns)
		l->max_ns = late_ns;
	l->bucket[bucket_of((uint64_t)late_ns / 1000)]++;
}

uint64_t sq_lateness_quantile_us(const struct sq_lateness *l, double q)
{
	if (l->count == 0)
		return 0;
	uint64_t rank = (uint64_t)ceil(q * (double)l->count);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (size_t b = 0; b < SQ_LATENESS_BUCKETS; b++) {
		seen += l->bucket[b];
		if (seen >= rank) {
			uint64_t upper = bucket_upper(b), max = sq_lateness_max_us(l);
			return upper < max ? upper : max;
		}
	}
	return sq_lateness_max_us(l);
}

uint64_t sq_lateness_max_us(const struct sq_lateness *l)
{
	return (uint64_t)l->max_ns / 1000;
}
