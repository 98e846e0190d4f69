#include "netem_stage.h"

#include "rng.h"

uint32_t sq_netem_stream(enum sq_dir dir, enum sq_netem_purpose purpose)
{
	return SQ_STREAM_NETEM_FIRST + 2u * (uint32_t)purpose + (uint32_t)dir;
}

/* A cell's host has streams of its own (rng.h sq_host_stream). */
static uint32_t host_stream(enum sq_dir dir, enum sq_netem_purpose purpose, uint32_t host)
{
	return sq_host_stream(sq_netem_stream(dir, purpose), host);
}

void sq_netem_stage_init(struct sq_netem_stage *s, const struct sq_netem_config *c, uint64_t seed,
			 uint32_t replication, uint32_t host, enum sq_dir dir)
{
	s->enabled = sq_netem_enabled(c);
	s->duplicate = c->duplicate;
	s->corrupt = c->corrupt;
	sq_netem_loss_init(&s->loss, c, seed, replication, host_stream(dir, SQ_NETEM_LOSS_STREAM, host));
	sq_netem_crand_init(&s->dup_src, c->duplicate.corr, seed, replication,
			    host_stream(dir, SQ_NETEM_DUPLICATE_STREAM, host));
	sq_netem_crand_init(&s->corrupt_src, c->corrupt.corr, seed, replication,
			    host_stream(dir, SQ_NETEM_CORRUPT_STREAM, host));
	sq_netem_delay_init(&s->delay, c, seed, replication,
			    host_stream(dir, SQ_NETEM_JITTER_STREAM, host),
			    host_stream(dir, SQ_NETEM_REORDER_STREAM, host));
}

/* Like netem: no draw when the probability is 0. */
static bool happens(const struct sq_netem_chance *c, struct sq_netem_crand *src)
{
	return c->p > 0 && sq_netem_crand_next(src) < c->p;
}

void sq_netem_entry(struct sq_netem_stage *s, uint32_t ip_len, bool is_copy,
		    struct sq_netem_entry *out)
{
	*out = (struct sq_netem_entry){ 0 };
	/* netem counts the packets to send: 1, +1 duplicated, -1 lost. A lost packet that
	 * was to be duplicated goes on alone; nothing more is drawn for a dropped one. */
	bool dup = !is_copy && happens(&s->duplicate, &s->dup_src);
	bool lost = sq_netem_loss_next(&s->loss);
	if (lost && !dup) {
		out->lost = true;
		return;
	}
	out->duplicate = dup && !lost;
	if (happens(&s->corrupt, &s->corrupt_src) && ip_len > 0) {
		out->corrupt = true;
		out->corrupt_bit = (uint32_t)sq_rng_uniform_int(&s->corrupt_src.rng, 0,
							       8 * (int64_t)ip_len - 1);
	}
}

int64_t sq_netem_exit_delay(struct sq_netem_stage *s, bool *reordered)
{
	*reordered = false;
	return s->enabled ? sq_netem_delay_next(&s->delay, reordered) : 0;
}
