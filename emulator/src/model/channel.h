/* The channel's good/bad state timeline, on its own.
 *
 * The timeline depends only on the channel configuration, the seed and the
 * replication: it is generated lazily from its own random stream
 * (SQ_STREAM_CHANNEL), which nothing else touches. The link model owns one;
 * the emulator can create another to print the timeline, tests to compare.
 *
 * A segment is a maximal interval [start, end) of one state; consecutive
 * segments always have different states (equal-state trace steps are merged).
 */
#ifndef SQ_CHANNEL_H
#define SQ_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

struct sq_channel;

struct sq_channel_segment {
	enum sq_state state;
	sq_time_us start;
	sq_time_us end;    /* SQ_TIME_NEVER if the state never changes again */
};

/* Checks the channel part of a link config; the message names the field. */
bool sq_channel_check(const struct sq_channel_config *cfg, char *err, size_t errlen);

/* Validates cfg (NULL and a message on failure); copies the trace. */
struct sq_channel *sq_channel_new(const struct sq_channel_config *cfg, uint64_t seed,
				  uint32_t replication, char *err, size_t errlen);
/* The same for host `host` (0-based) of a cell: its own streams (sq_host_stream); host 0's
 * timeline is sq_channel_new's. */
struct sq_channel *sq_channel_new_host(const struct sq_channel_config *cfg, uint64_t seed,
				       uint32_t replication, uint32_t host, char *err, size_t errlen);
void sq_channel_free(struct sq_channel *ch);

/* The segment containing t >= 0. Queries are cheapest in non-decreasing t; an
 * earlier t regenerates the timeline from t = 0 (same result, more work). */
struct sq_channel_segment sq_channel_segment_at(struct sq_channel *ch, sq_time_us t);
enum sq_state sq_channel_state_at(struct sq_channel *ch, sq_time_us t);
/* The first time > t at which the state changes; SQ_TIME_NEVER if none. */
sq_time_us sq_channel_next_change(struct sq_channel *ch, sq_time_us t);

/* The segment of the last query, without moving (for const callers). */
struct sq_channel_segment sq_channel_current(const struct sq_channel *ch);

#endif
