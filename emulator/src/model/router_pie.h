/* PIE, Proportional Integral controller Enhanced (RFC 8033), as Linux's sch_pie runs it
 * with its defaults (dq_rate_estimator off: the queue delay is the last dequeued packet's
 * sojourn time, from its enqueue time stamp). LINK_MODEL.md "PIE" gives the exact rules
 * and where Linux and the RFC differ.
 *
 * The probability update that Linux runs from a timer every tupdate runs here lazily: each
 * packet event first runs every update whose time (k x tupdate, k >= 1) has come, with the
 * queue as it was since the last event; nothing the update reads changes between events,
 * so the result is what a timer would have given. Probabilities are doubles in [0, 1]
 * (Linux: 56-bit fixed point), times integer microseconds.
 */
#ifndef SQ_ROUTER_PIE_H
#define SQ_ROUTER_PIE_H

#include <stdbool.h>
#include <stdint.h>

#include "link_config.h"
#include "rng.h"

#define SQ_PIE_BURST_US 150000    /* the burst allowance after a reset (Linux: fixed) */
#define SQ_PIE_NO_DEQUEUE (-1)    /* dq_tstamp: no dequeue since the last reset */
#define SQ_PIE_MAX_US 10000000   /* target and tupdate at most 10 s */

struct sq_pie_state {
	double prob;              /* drop probability */
	double accu_prob;         /* de-randomisation: the probabilities summed since the last drop */
	sq_time_us qdelay;        /* the last dequeued packet's sojourn; 0 if it left the queue empty */
	sq_time_us qdelay_old;    /* qdelay at the previous update */
	sq_time_us burst_time;    /* burst allowance left */
	sq_time_us dq_tstamp;     /* the last dequeue, or SQ_PIE_NO_DEQUEUE */
	sq_time_us last_update;   /* the time of the last update that ran (0: none yet) */
	uint32_t mtu;             /* the direction's MTU (bytes): the backlog threshold, bytemode */
};

enum sq_pie_action {
	SQ_PIE_PASS,   /* into the queue */
	SQ_PIE_MARK,   /* set CE, then into the queue */
	SQ_PIE_DROP,   /* early drop */
};

/* Probability 0, the full burst allowance, no dequeue yet; mtu in bytes. */
void sq_pie_init(struct sq_pie_state *s, uint32_t mtu);

/* One probability update (Linux's pie_calculate_probability) with `backlog` bytes queued. */
void sq_pie_update(struct sq_pie_state *s, const struct sq_pie_config *c, uint64_t backlog);

/* Runs every update due at or before now, the queue having held `backlog` bytes since the
 * last event. */
void sq_pie_catch_up(struct sq_pie_state *s, const struct sq_pie_config *c, sq_time_us now,
		     uint64_t backlog);

/* Whether an arrival of ip_len bytes finding `backlog` bytes is dropped early
 * (pie_drop_early); draws one number from rng only when the accumulated probability
 * is between 0.85 and 8.5. */
bool sq_pie_drop_early(struct sq_pie_state *s, const struct sq_pie_config *c, uint64_t backlog,
		       uint32_t ip_len, struct sq_rng *rng);

/* The decision for an arrival at now (after sq_pie_catch_up): `qlen` packets and `backlog`
 * bytes queued, limit packets at most, ecn the packet's ECN field. At the limit PASS
 * (the caller tail-drops) without a draw, as Linux checks the limit first. */
enum sq_pie_action sq_pie_enqueue(struct sq_pie_state *s, const struct sq_pie_config *c,
				  uint32_t limit, uint64_t qlen, uint64_t backlog, uint32_t ip_len,
				  uint8_t ecn, struct sq_rng *rng);

/* A packet that was enqueued at enqueued_at left the queue at now, `backlog` bytes
 * remaining (pie_process_dequeue, time stamp mode): the queue delay and the burst
 * allowance. */
void sq_pie_dequeued(struct sq_pie_state *s, sq_time_us enqueued_at, sq_time_us now,
		     uint64_t backlog);

#endif
