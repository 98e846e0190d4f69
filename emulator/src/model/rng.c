#include "rng.h"

uint64_t sq_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The key of a stream: seed, replication and stream id each pass through a
 * splitmix64 step so that nearby inputs give unrelated keys. */
uint64_t sq_stream_key(uint64_t seed, uint32_t replication, uint32_t stream)
{
	uint64_t k = seed;
	uint64_t h = sq_splitmix64(&k);
	k = h ^ replication;
	h = sq_splitmix64(&k);
	k = h ^ stream;
	return sq_splitmix64(&k);
}

void sq_rng_init(struct sq_rng *r, uint64_t seed, uint32_t replication, uint32_t stream)
{
	uint64_t k = sq_stream_key(seed, replication, stream);
	for (int i = 0; i < 4; i++)
		r->s[i] = sq_splitmix64(&k);
	/* splitmix64 is a bijection of a counter, so four consecutive outputs are
	 * never all zero; the all-zero state is the only one xoshiro must avoid. */
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sq_rng_next(struct sq_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sq_rng_uniform01(struct sq_rng *r)
{
	return (double)(sq_rng_next(r) >> 11) * 0x1.0p-53;
}

int64_t sq_rng_uniform_int(struct sq_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo;   /* number of values - 1 */
	if (span == UINT64_MAX)
		return (int64_t)sq_rng_next(r);
	uint64_t n = span + 1;
	/* Reject the top partial block so every residue is equally likely. */
	uint64_t rem = UINT64_MAX % n;
	uint64_t limit = (rem == n - 1) ? UINT64_MAX : UINT64_MAX - rem - 1;
	uint64_t x;
	do
		x = sq_rng_next(r);
	while (x > limit);
	return (int64_t)((uint64_t)lo + x % n);
}
