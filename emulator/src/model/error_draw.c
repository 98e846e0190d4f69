#include "error_draw.h"

void sq_error_draw_init(struct sq_error_draw *e, const struct sq_channel_config *c, uint64_t seed,
			uint32_t replication, uint32_t host, enum sq_dir dir)
{
	e->mode = c->error_draws;
	e->grid = c->error_grid > 0 ? c->error_grid : 1;
	uint32_t frames = dir == SQ_DOWN ? SQ_STREAM_ERROR_DOWN : SQ_STREAM_ERROR_UP;
	uint32_t times = dir == SQ_DOWN ? SQ_STREAM_ERROR_TIME_DOWN : SQ_STREAM_ERROR_TIME_UP;
	sq_rng_init(&e->rng, seed, replication, sq_host_stream(frames, host));
	e->key = sq_stream_key(seed, replication, sq_host_stream(times, host));
}

double sq_error_draw_at(struct sq_error_draw *e, sq_time_us t)
{
	if (e->mode == SQ_ERROR_DRAWS_PER_FRAME)
		return sq_rng_uniform01(&e->rng);
	/* Slot n = floor(t / grid) takes the n-th output (from 0) of splitmix64 started at
	 * the stream's key: counter-based, so no attempt shifts another's number. */
	uint64_t state = e->key + (uint64_t)(t / e->grid) * 0x9e3779b97f4a7c15ULL;
	return (double)(sq_splitmix64(&state) >> 11) * 0x1.0p-53;
}
