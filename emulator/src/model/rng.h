/* Seeded pseudo-random streams for the link model.
 *
 * Every random decision of the model comes from a stream identified by
 * (seed, replication, stream id). The stream's xoshiro256** state is filled by
 * splitmix64 from a key mixed out of those three numbers, so streams are
 * independent of each other and of how much the others have been used.
 */
#ifndef SQ_RNG_H
#define SQ_RNG_H

#include <stdint.h>

/* Stream ids used by the model (documented in LINK_MODEL.md). */
enum sq_stream {
	SQ_STREAM_CHANNEL = 0,      /* the good/bad timeline */
	SQ_STREAM_ERROR_DOWN = 1,   /* per-attempt error draws, down */
	SQ_STREAM_ERROR_UP = 2,     /* per-attempt error draws, up */
	SQ_STREAM_ROUTER_DOWN = 3,  /* RED, PIE and DualPI2 decisions of the router stage, down */
	SQ_STREAM_ROUTER_UP = 4,    /* RED, PIE and DualPI2 decisions of the router stage, up */
	SQ_STREAM_CHANNEL_PHASE = 5, /* where a running channel is at t = 0 */
	SQ_STREAM_NETEM_FIRST = 6,  /* 6..15: the netem stage, 6 + 2 x purpose + direction
				     * (netem_stage.h) */
	SQ_STREAM_ERROR_TIME_DOWN = 16, /* error draws by time (error_draw.h), down */
	SQ_STREAM_ERROR_TIME_UP = 17,   /* error draws by time, up */
	SQ_STREAM_OUTAGES = 18,      /* the link's outage timeline (both directions) */
	SQ_STREAM_OUTAGES_DOWN = 19, /* down's own outage timeline */
	SQ_STREAM_OUTAGES_UP = 20,   /* up's own outage timeline */
	SQ_STREAM_FLOW_HASH_DOWN = 21, /* the key of the router's flow hash (FQ-CoDel), down */
	SQ_STREAM_FLOW_HASH_UP = 22,   /* the same, up */
};

/* A cell's host k (0-based index; host 1 is index 0) draws stream id + 256 x k: host 1's
 * streams are exactly the single host's, every other host's are its own (LINK_MODEL.md
 * "A cell of several hosts"). */
#define SQ_HOST_STREAM_STRIDE 256u
static inline uint32_t sq_host_stream(uint32_t stream, uint32_t host)
{
	return stream + SQ_HOST_STREAM_STRIDE * host;
}

struct sq_rng {
	uint64_t s[4];
};

/* One splitmix64 step: advances *state and returns the next output. */
uint64_t sq_splitmix64(uint64_t *state);

/* The 64-bit key of a stream, from which sq_rng_init fills the state (LINK_MODEL.md). */
uint64_t sq_stream_key(uint64_t seed, uint32_t replication, uint32_t stream);

void sq_rng_init(struct sq_rng *r, uint64_t seed, uint32_t replication, uint32_t stream);

uint64_t sq_rng_next(struct sq_rng *r);          /* xoshiro256** */
double sq_rng_uniform01(struct sq_rng *r);       /* [0, 1), 53 random bits */
/* Uniform integer in [lo, hi] without modulo bias; requires lo <= hi. */
int64_t sq_rng_uniform_int(struct sq_rng *r, int64_t lo, int64_t hi);

#endif
