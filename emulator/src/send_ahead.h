/* Which packets go to their NPA ahead of their `out` (README.md, "Release at the NPA"):
 * per host of a cell and direction, every decided out (link_model.h,
 * sq_model_host_decided_outs) up to a bound,
 * each once and in release order. A packet decided after a later one was already sent
 * ahead is left to its `out` as usual, so the NPA receives release times that never go
 * back. */
#ifndef SQ_SEND_AHEAD_H
#define SQ_SEND_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "link_model.h"

struct sq_send_ahead {
	struct sq_decided_out last[SQ_CELL_MAX_HOSTS][SQ_DIRS];   /* the last packet sent ahead */
	bool any[SQ_CELL_MAX_HOSTS][SQ_DIRS];
	uint64_t sent[SQ_DIRS];                /* packets sent ahead, all hosts */
};

typedef void (*sq_send_ahead_fn)(void *ctx, uint32_t host, enum sq_dir dir, const struct sq_decided_out *o);

/* Calls send for each packet of host `host` (0-based) and dir decided to go out no later
 * than until and not yet passed to it, in out order. */
void sq_send_ahead_run(struct sq_send_ahead *sa, const struct sq_model *m, uint32_t host,
		       enum sq_dir dir, sq_time_us until, sq_send_ahead_fn send, void *ctx);

/* The out time of the first packet of host `host` and dir that sq_send_ahead_run has not yet
 * passed on and that is decided now; SQ_TIME_NEVER if none. */
sq_time_us sq_send_ahead_next(const struct sq_send_ahead *sa, const struct sq_model *m,
			      uint32_t host, enum sq_dir dir);

#endif
