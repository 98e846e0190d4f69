#include "channel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "rng.h"

struct sq_channel {
	struct sq_dist length[SQ_STATES];
	enum sq_state initial_state;
	enum sq_channel_start start;
	struct sq_trace_step *trace;   /* NULL: distributions */
	size_t trace_len;
	bool trace_constant;           /* every trace step has the same state */
	uint64_t seed;
	uint32_t replication;
	uint32_t host;          /* a cell's host index: its own streams */
	struct sq_rng rng;
	size_t trace_pos;              /* next trace step to use */
	struct sq_channel_segment seg;
};

static bool check_state(enum sq_state s, const char *what, char *err, size_t errlen)
{
	if (s == SQ_GOOD || s == SQ_BAD)
		return true;
	snprintf(err, errlen, "%s: state must be good (0) or bad (1), got %d", what, (int)s);
	return false;
}

static bool check_trace(const struct sq_channel_config *cfg, char *err, size_t errlen)
{
	if (cfg->trace_len == 0) {
		snprintf(err, errlen, "channel.trace: a trace needs at least one step, got 0");
		return false;
	}
	for (size_t i = 0; i < cfg->trace_len; i++) {
		char what[48];
		snprintf(what, sizeof what, "channel.trace[%zu]", i);
		if (!check_state(cfg->trace[i].state, what, err, errlen))
			return false;
		if (cfg->trace[i].duration < 1) {
			snprintf(err, errlen, "%s: duration must be >= 1 us, got %lld", what,
				 (long long)cfg->trace[i].duration);
			return false;
		}
	}
	return true;
}

bool sq_channel_check(const struct sq_channel_config *cfg, char *err, size_t errlen)
{
	if (cfg->start != SQ_START_FRESH && cfg->start != SQ_START_RUNNING) {
		snprintf(err, errlen, "channel.start: must be fresh (0) or running (1), got %d", (int)cfg->start);
		return false;
	}
	if (cfg->trace && cfg->start == SQ_START_RUNNING) {
		snprintf(err, errlen, "channel.start: a trace starts with its first step; running needs good and bad distributions");
		return false;
	}
	if (cfg->trace)
		return check_trace(cfg, err, errlen);
	if (!check_state(cfg->initial_state, "channel.initial", err, errlen))
		return false;
	for (int s = 0; s < SQ_STATES; s++) {
		char what[48];
		snprintf(what, sizeof what, "channel.%s", s == SQ_GOOD ? "good" : "bad");
		if (!sq_dist_check(&cfg->length[s], what, err, errlen))
			return false;
	}
	return true;
}

static bool all_same_state(const struct sq_trace_step *t, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (t[i].state != t[0].state)
			return false;
	return true;
}

static struct sq_trace_step take_trace_step(struct sq_channel *ch)
{
	struct sq_trace_step s = ch->trace[ch->trace_pos];
	ch->trace_pos = (ch->trace_pos + 1) % ch->trace_len;
	return s;
}

/* The segment starting at `start` in `state` (a trace decides its own state). */
static struct sq_channel_segment make_segment(struct sq_channel *ch, enum sq_state state,
					      sq_time_us start)
{
	struct sq_channel_segment seg = { .state = state, .start = start };
	if (!ch->trace) {
		seg.end = start + sq_dist_draw(&ch->length[state], &ch->rng);
		return seg;
	}
	struct sq_trace_step step = take_trace_step(ch);
	seg.state = step.state;
	if (ch->trace_constant) {
		seg.end = SQ_TIME_NEVER;
		return seg;
	}
	seg.end = start + step.duration;
	while (ch->trace[ch->trace_pos].state == seg.state)
		seg.end += take_trace_step(ch).duration;
	return seg;
}

/* Periods a running channel's phase is chosen from: enough that the point falls in a
 * good or bad period with the probabilities of the stationary process (to within about
 * one period in RUNNING_PERIODS) and its remaining length is length-biased as there. */
#define RUNNING_PERIODS 256

/* Where a running channel is at t = 0: a point uniform on the first RUNNING_PERIODS
 * periods it would have from its start, drawn from a stream of its own so that the
 * periods themselves are those of SQ_STREAM_CHANNEL. */
static sq_time_us running_offset(struct sq_channel *ch)
{
	struct sq_channel_segment seg = make_segment(ch, ch->initial_state, 0);
	for (int i = 1; i < RUNNING_PERIODS; i++)
		seg = make_segment(ch, seg.state == SQ_GOOD ? SQ_BAD : SQ_GOOD, seg.end);
	struct sq_rng phase;
	sq_rng_init(&phase, ch->seed, ch->replication, sq_host_stream(SQ_STREAM_CHANNEL_PHASE, ch->host));
	return sq_rng_uniform_int(&phase, 0, seg.end - 1);
}

static void rewind_timeline(struct sq_channel *ch)
{
	sq_time_us offset = 0;
	if (ch->start == SQ_START_RUNNING) {
		sq_rng_init(&ch->rng, ch->seed, ch->replication, sq_host_stream(SQ_STREAM_CHANNEL, ch->host));
		offset = running_offset(ch);
	}
	sq_rng_init(&ch->rng, ch->seed, ch->replication, sq_host_stream(SQ_STREAM_CHANNEL, ch->host));
	ch->trace_pos = 0;
	ch->seg = make_segment(ch, ch->initial_state, -offset);
	while (ch->seg.end <= 0)
		ch->seg = make_segment(ch, ch->seg.state == SQ_GOOD ? SQ_BAD : SQ_GOOD, ch->seg.end);
	ch->seg.start = 0;     /* the timeline begins at t = 0, in the period it is in */
}

struct sq_channel *sq_channel_new(const struct sq_channel_config *cfg, uint64_t seed,
				  uint32_t replication, char *err, size_t errlen)
{
	return sq_channel_new_host(cfg, seed, replication, 0, err, errlen);
}

struct sq_channel *sq_channel_new_host(const struct sq_channel_config *cfg, uint64_t seed,
				       uint32_t replication, uint32_t host, char *err, size_t errlen)
{
	if (!sq_channel_check(cfg, err, errlen))
		return NULL;
	struct sq_channel *ch = calloc(1, sizeof *ch);
	if (!ch) {
		snprintf(err, errlen, "channel: out of memory allocating the timeline");
		return NULL;
	}
	memcpy(ch->length, cfg->length, sizeof ch->length);
	ch->initial_state = cfg->initial_state;
	ch->start = cfg->start;
	if (cfg->trace) {
		ch->trace = malloc(cfg->trace_len * sizeof *ch->trace);
		if (!ch->trace) {
			snprintf(err, errlen, "channel.trace: out of memory copying %zu steps",
				 cfg->trace_len);
			free(ch);
			return NULL;
		}
		memcpy(ch->trace, cfg->trace, cfg->trace_len * sizeof *ch->trace);
		ch->trace_len = cfg->trace_len;
		ch->trace_constant = all_same_state(ch->trace, ch->trace_len);
	}
	ch->seed = seed;
	ch->replication = replication;
	ch->host = host;
	rewind_timeline(ch);
	return ch;
}

void sq_channel_free(struct sq_channel *ch)
{
	if (!ch)
		return;
	free(ch->trace);
	free(ch);
}

struct sq_channel_segment sq_channel_segment_at(struct sq_channel *ch, sq_time_us t)
{
	if (t < ch->seg.start)
		rewind_timeline(ch);
	while (t >= ch->seg.end) {
		enum sq_state next = ch->seg.state == SQ_GOOD ? SQ_BAD : SQ_GOOD;
		ch->seg = make_segment(ch, next, ch->seg.end);
	}
	return ch->seg;
}

enum sq_state sq_channel_state_at(struct sq_channel *ch, sq_time_us t)
{
	return sq_channel_segment_at(ch, t).state;
}

sq_time_us sq_channel_next_change(struct sq_channel *ch, sq_time_us t)
{
	return sq_channel_segment_at(ch, t).end;
}

struct sq_channel_segment sq_channel_current(const struct sq_channel *ch)
{
	return ch->seg;
}
