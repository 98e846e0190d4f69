/* DualPI2, the DualQ Coupled AQM (RFC 9332, appendix A), as Linux's sch_dualpi2 runs it with
 * its defaults: ECT(1) and CE packets in the L queue, Not-ECT and ECT(0) in the C queue, both
 * kept in the class's one queue (the arrange hook puts the packet the weighted round robin
 * serves next at its head); a PI2 controller updated every tupdate (lazily, as PIE's) on the
 * larger of the two head packets' sojourn times gives p'; at dequeue a C packet is dropped
 * (ECT(0): marked) with p'^2, an L packet marked with k p' and by the step on its sojourn.
 * LINK_MODEL.md "DualPI2" gives the exact rules. */
#ifndef SQ_ROUTER_DUALPI2_H
#define SQ_ROUTER_DUALPI2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_config.h"
#include "rng.h"

#define SQ_DUALPI2_MAX_US 10000000   /* target, tupdate and step_thresh at most 10 s */

struct sq_dualpi2_state {
	double prob;               /* p', the base probability */
	sq_time_us last_qdelay;    /* the delay at the previous update */
	sq_time_us last_update;    /* the time of the last update that ran (0: none yet) */
	int64_t credit;            /* the WRR credit: L is served while it is <= 0 (or C is empty) */
	int64_t credit_init;       /* mtu x (wc - wl): where the credit starts and restarts */
	size_t l_count, c_count;   /* packets of each queue in the class queue */
	size_t seen;               /* the class queue's count at the last arrange */
	bool head_is_l;            /* the class queue's head (the next to leave) is an L packet */
	bool has_l, has_c;         /* each queue's oldest packet and when it was queued */
	sq_time_us l_head_at, c_head_at;
	uint32_t mtu;
};

/* An L4S packet: ECT(1) or CE (the ECN field's low bit). */
static inline bool sq_dualpi2_is_l4s(uint8_t ecn)
{
	return (ecn & 1) != 0;
}

void sq_dualpi2_init(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, uint32_t mtu);

/* One PI2 update at time t (Linux's calculate_probability). */
void sq_dualpi2_update(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, sq_time_us t);

/* Every update due at or before now, the queues as they have been since the last event. */
void sq_dualpi2_catch_up(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, sq_time_us now);

/* The AQM's decision for a packet of ip_len bytes with ECN field ecn, queued at queued_at,
 * leaving at now with `backlog` bytes left behind it (Linux's must_drop and step AQM):
 * SQ_DUALPI2_SEND, _MARK or _DROP. Draws from rng as Linux rolls its dice. */
enum sq_dualpi2_action { SQ_DUALPI2_SEND, SQ_DUALPI2_MARK, SQ_DUALPI2_DROP };
enum sq_dualpi2_action sq_dualpi2_judge(const struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c,
					 uint8_t ecn, sq_time_us queued_at, sq_time_us now, uint64_t backlog,
					 struct sq_rng *rng);

#endif
