/* The scheduler of a cell (LINK_MODEL.md "A cell of several hosts"): a direction has one
 * transmitter for all hosts of the cell; whenever it is free and at least one host's head
 * packet may start, the scheduler picks the host whose head packet is the next frame.
 * Policies (one file each): round robin (cell_round_robin.c), proportional fair
 * (cell_proportional_fair.c). Pure: no clock, no random numbers. */
#ifndef SQ_CELL_SCHEDULER_H
#define SQ_CELL_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "link_config.h"

/* Proportional fair's averages are fixed-point bytes per frame: integers, so that every
 * platform computes the same decisions. */
#define SQ_CELL_AVG_ONE 65536u

struct sq_cell_sched {
	enum sq_cell_scheduler policy;
	uint32_t hosts;
	uint32_t last;                       /* the host served last (hosts - 1 at first) */
	uint32_t window;                     /* proportional fair: W, in frames */
	uint64_t avg[SQ_CELL_MAX_HOSTS];     /* proportional fair: bytes per frame x AVG_ONE */
};

/* What the scheduler is told about host h at a decision: whether its head packet may start
 * now (a packet waits and its receive window allows it), and the probability that a frame
 * of it sent now gets through (1 - its error probability in its channel's current state;
 * 0 in an outage of its direction). */
struct sq_cell_view {
	bool ready[SQ_CELL_MAX_HOSTS];
	double success[SQ_CELL_MAX_HOSTS];
};

/* One policy: pick (requires a ready host) and account for a frame given to a host. */
struct sq_cell_policy {
	uint32_t (*pick)(const struct sq_cell_sched *s, const struct sq_cell_view *v);
	void (*served)(struct sq_cell_sched *s, uint32_t host, uint32_t bytes);
};

extern const struct sq_cell_policy sq_cell_round_robin;
extern const struct sq_cell_policy sq_cell_proportional_fair;

/* hosts >= 1; window 0 means SQ_CELL_DEFAULT_PF_WINDOW. */
void sq_cell_sched_init(struct sq_cell_sched *s, const struct sq_cell_config *cfg, uint32_t hosts);
uint32_t sq_cell_pick(const struct sq_cell_sched *s, const struct sq_cell_view *v);
void sq_cell_served(struct sq_cell_sched *s, uint32_t host, uint32_t bytes);

/* The i-th host (0-based) in round-robin order from the one after the last served. */
static inline uint32_t sq_cell_turn(const struct sq_cell_sched *s, uint32_t i)
{
	return (s->last + 1 + i) % s->hosts;
}

#endif
