/* CoDel's control loop for one queue (RFC 8289 section 5, with Linux sch_codel's ECN
 * marking; LINK_MODEL.md "CoDel"): the state of its dequeue and the decision on each packet
 * as it leaves, given its sojourn time and the backlog it leaves behind. Used by the codel
 * discipline (router_codel.c) for its class queue.
 *
 * RFC 8289's dequeue() takes packets from the queue in a loop and returns one; here the
 * router stage asks once per packet (router_discipline.h on_dequeue), so where the RFC's
 * dequeue is between two packets is kept in `phase`. Times in µs; the control law
 * interval / sqrt(count) is computed in double and truncated to whole µs. */
#ifndef SQ_ROUTER_CODEL_H
#define SQ_ROUTER_CODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "link_config.h"
#include "router_discipline.h"

struct sq_codel_params {
	sq_time_us target;     /* acceptable standing queue delay (TARGET) */
	sq_time_us interval;   /* the sliding-minimum window (INTERVAL) */
	uint32_t maxpacket;    /* below this backlog (bytes) no drop: the direction's MTU */
	bool ecn;              /* mark ECN-capable packets instead of dropping them */
	sq_time_us ce_threshold;   /* mark ECN-capable packets sent after a longer sojourn; 0: off */
};

enum sq_codel_phase {
	SQ_CODEL_FRESH,        /* the next packet starts a new dequeue() */
	SQ_CODEL_IN_LOOP,      /* a packet was just dropped in the drop loop: the next is r = dodequeue() */
	SQ_CODEL_ENTERED,      /* a packet was just dropped entering the drop state */
};

struct sq_codel_vars {
	bool dropping;
	uint32_t count, lastcount;
	sq_time_us first_above_time;   /* 0: below target (or not yet an interval above) */
	sq_time_us drop_next;
	enum sq_codel_phase phase;
};

/* What a codel class keeps (union sq_discipline_state in router.h). */
struct sq_codel_state {
	struct sq_codel_vars vars;
	uint32_t maxpacket;    /* the direction's MTU */
};

/* All zero: not dropping, count 0. */
void sq_codel_init(struct sq_codel_vars *v);

/* The decision on the packet leaving at now after `sojourn` µs in the queue, leaving
 * backlog_after bytes behind it; ecn is its IP ECN field (marked if ECT(0), ECT(1) or CE
 * and p->ecn; a packet sent after more than p->ce_threshold is marked too). */
enum sq_router_fate sq_codel_judge(struct sq_codel_vars *v, const struct sq_codel_params *p,
				   sq_time_us sojourn, uint64_t backlog_after, uint8_t ecn, sq_time_us now);

/* The queue was found empty by a dequeue (RFC 8289 dodequeue() with no packet). */
void sq_codel_empty(struct sq_codel_vars *v);

/* t + interval / sqrt(count), truncated to µs (RFC 8289 control_law()). */
sq_time_us sq_codel_control_law(sq_time_us t, sq_time_us interval, uint32_t count);

#endif
