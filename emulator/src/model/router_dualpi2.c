#include "router_dualpi2.h"

#include <math.h>
#include <stdio.h>

#include "router_key_check.h"
#include "router_discipline.h"
#include "router_fifo.h"
#include "router_queue.h"

/* The C queue's WRR weight in percent, as Linux holds it (a whole number). */
static int64_t c_weight(const struct sq_dualpi2_config *c)
{
	return (int64_t)llround(c->c_protection);
}

void sq_dualpi2_init(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, uint32_t mtu)
{
	int64_t wc = c_weight(c);
	*s = (struct sq_dualpi2_state){ .mtu = mtu, .credit_init = (int64_t)mtu * (wc - (100 - wc)) };
	s->credit = s->credit_init;
}

void sq_dualpi2_update(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, sq_time_us t)
{
	sq_time_us ql = s->has_l ? t - s->l_head_at : 0, qc = s->has_c ? t - s->c_head_at : 0;
	sq_time_us qdelay = ql > qc ? ql : qc;
	double delta = c->alpha * (double)(qdelay - c->target) / 1e6 +
		       c->beta * (double)(qdelay - s->last_qdelay) / 1e6;
	s->last_qdelay = qdelay;
	s->prob = fmin(1.0, fmax(0.0, s->prob + delta));
	if (c->overflow && s->prob > 1.0 / c->coupling)
		s->prob = 1.0 / c->coupling;   /* L4S marks at most 100 % when nothing is dropped */
}

void sq_dualpi2_catch_up(struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c, sq_time_us now)
{
	sq_time_us tupdate = c->tupdate;
	while (s->last_update + tupdate <= now) {
		s->last_update += tupdate;
		sq_dualpi2_update(s, c, s->last_update);
		if (!s->has_l && !s->has_c && s->prob == 0.0 && s->last_qdelay == 0) {
			/* Empty with p' = 0: every later update until now changes nothing. */
			s->last_update += (now - s->last_update) / tupdate * tupdate;
			return;
		}
	}
}

/* Linux's dualpi2_roll: true with probability p. */
static bool roll(struct sq_rng *rng, double p)
{
	return sq_rng_uniform01(rng) < p;
}

enum sq_dualpi2_action sq_dualpi2_judge(const struct sq_dualpi2_state *s, const struct sq_dualpi2_config *c,
					 uint8_t ecn, sq_time_us queued_at, sq_time_us now, uint64_t backlog,
					 struct sq_rng *rng)
{
	bool l4s = sq_dualpi2_is_l4s(ecn), mark = false;
	if (backlog >= 2 * (uint64_t)s->mtu) {   /* no AQM below two MTUs left queued */
		double p = s->prob, pl = c->coupling * p;
		bool overload = pl > 1.0;
		if (!l4s) {
			if (roll(rng, p) && roll(rng, p)) {   /* p'^2 */
				if (overload || (ecn & 3) == 0)
					return SQ_DUALPI2_DROP;
				mark = true;
			}
		} else if (overload) {
			if (!c->overflow && roll(rng, p) && roll(rng, p))
				return SQ_DUALPI2_DROP;   /* the classic drop, L4S too */
			mark = true;
		} else if (roll(rng, pl)) {
			mark = true;   /* ECT(1) or CE: an L packet is always ECN-capable */
		}
	}
	if (l4s && now - queued_at > c->step_thresh)
		mark = true;   /* the L queue's native step AQM */
	return mark ? SQ_DUALPI2_MARK : SQ_DUALPI2_SEND;
}

/* ---- DualPI2 as a discipline of the router stage (router_discipline.h) --------------- */

static bool init(void *state, const struct sq_router_class *c, uint32_t mtu)
{
	sq_dualpi2_init(state, &c->dualpi2, mtu);
	return true;
}

/* No decision at enqueue (Linux's default drop_dequeue): the timer only. */
static enum sq_router_verdict signal(void *state, const struct sq_router_class *c,
				     const struct sq_router_queue *q, const struct sq_pkt_meta *meta,
				     sq_time_us now, uint64_t rate_bps, struct sq_rng *rng)
{
	(void)q, (void)meta, (void)rate_bps, (void)rng;
	sq_dualpi2_catch_up(state, &c->dualpi2, now);
	return SQ_ROUTER_ADMIT;
}

static enum sq_router_fate on_dequeue(void *state, const struct sq_router_class *c,
				      const struct sq_router_queue *q, const struct sq_router_pkt *head,
				      sq_time_us now, struct sq_rng *rng)
{
	struct sq_dualpi2_state *s = state;
	sq_dualpi2_catch_up(s, &c->dualpi2, now);
	/* The WRR credit moves only while the other queue holds packets, and only for a packet
	 * that is sent. */
	int64_t wc = c_weight(&c->dualpi2), change = 0;
	if (sq_dualpi2_is_l4s(head->ecn) && s->c_count > 0)
		change = wc * head->ip_len;
	else if (!sq_dualpi2_is_l4s(head->ecn) && s->l_count > 0)
		change = -(100 - wc) * (int64_t)head->ip_len;
	switch (sq_dualpi2_judge(s, &c->dualpi2, head->ecn, head->queued_at, now, q->bytes - head->ip_len, rng)) {
	case SQ_DUALPI2_DROP:
		return SQ_ROUTER_DROP_OUT;
	case SQ_DUALPI2_MARK:
		s->credit += change;
		return SQ_ROUTER_SEND_CE;
	default:
		s->credit += change;
		return SQ_ROUTER_SEND;
	}
}

/* The position of the oldest packet of the L (l4s) or C queue; it exists. The head may be
 * out of arrival order (it was moved there), the others are in it. */
static size_t oldest(const struct sq_router_queue *q, bool l4s)
{
	size_t i = 0;
	while (sq_dualpi2_is_l4s(sq_rqueue_at(q, i)->ecn) != l4s)
		i++;
	return i;
}

/* After each change of the class queue: count the packet that joined or left, note each
 * queue's oldest packet, and put the packet the WRR serves next at the head. */
static void arrange(void *state, const struct sq_router_class *c, struct sq_router_queue *q)
{
	struct sq_dualpi2_state *s = state;
	(void)c;
	if (q->count > s->seen) {
		if (sq_dualpi2_is_l4s(sq_rqueue_at(q, q->count - 1)->ecn))
			s->l_count++;
		else
			s->c_count++;
	} else if (q->count < s->seen) {
		if (s->head_is_l)
			s->l_count--;
		else
			s->c_count--;
	}
	s->seen = q->count;
	s->has_l = s->l_count > 0;
	s->has_c = s->c_count > 0;
	size_t il = s->has_l ? oldest(q, true) : 0, ic = s->has_c ? oldest(q, false) : 0;
	if (s->has_l)
		s->l_head_at = sq_rqueue_at(q, il)->queued_at;
	if (s->has_c)
		s->c_head_at = sq_rqueue_at(q, ic)->queued_at;
	if (q->count == 0)
		return;
	s->head_is_l = s->has_l && (!s->has_c || s->credit <= 0);
	sq_rqueue_to_front(q, s->head_is_l ? il : ic);
}

static void on_empty(void *state, sq_time_us now)
{
	struct sq_dualpi2_state *s = state;
	(void)now;
	s->credit = s->credit_init;   /* Linux: when a dequeue finds both queues empty */
}

/* The emulator's own rules for a DualPI2 class of its configuration file; a scenario's
 * queue was checked by its Python type before (testbed/router/disciplines/dualpi2.py). */
static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	const struct sq_dualpi2_config *d = &c->dualpi2;
	return sq_fifo_check_packets(c, cp, err, errlen) &&
	       sq_router_check_time(d->target, 1, SQ_DUALPI2_MAX_US, cp, "dualpi2.target", err, errlen) &&
	       sq_router_check_time(d->tupdate, 1, SQ_DUALPI2_MAX_US, cp, "dualpi2.tupdate", err, errlen) &&
	       sq_router_check_range(d->alpha, 0.0, 32768.0, true, cp, "dualpi2.alpha", err, errlen) &&
	       sq_router_check_range(d->beta, 0.0, 32768.0, true, cp, "dualpi2.beta", err, errlen) &&
	       sq_router_check_range(d->coupling, 1.0, 255.0, false, cp, "dualpi2.coupling", err, errlen) &&
	       sq_router_check_time(d->step_thresh, 1, SQ_DUALPI2_MAX_US, cp, "dualpi2.step_thresh", err, errlen) &&
	       sq_router_check_range(d->c_protection, 0.0, 100.0, false, cp, "dualpi2.c_protection", err, errlen);
}

#define DUALPI2_KEY(key, field, kind, dflt) \
	{ key, kind, offsetof(struct sq_router_class, dualpi2.field), dflt }

static const struct sq_router_key keys[] = {
	DUALPI2_KEY("dualpi2.target", target, SQ_RKEY_TIME, 15000.0),   /* Linux's defaults */
	DUALPI2_KEY("dualpi2.tupdate", tupdate, SQ_RKEY_TIME, 16000.0),
	DUALPI2_KEY("dualpi2.alpha", alpha, SQ_RKEY_REAL, 41.0 / 256),     /* 0.16 Hz */
	DUALPI2_KEY("dualpi2.beta", beta, SQ_RKEY_REAL, 819.0 / 256),      /* 3.2 Hz */
	DUALPI2_KEY("dualpi2.coupling", coupling, SQ_RKEY_REAL, 2.0),
	DUALPI2_KEY("dualpi2.step_thresh", step_thresh, SQ_RKEY_TIME, 1000.0),
	DUALPI2_KEY("dualpi2.c_protection", c_protection, SQ_RKEY_REAL, 10.0),
	DUALPI2_KEY("dualpi2.overflow", overflow, SQ_RKEY_BOOL, 0.0),
	{ NULL, SQ_RKEY_BOOL, 0, 0.0 },
};

const struct sq_router_discipline sq_dualpi2_ops = {
	.name = "dualpi2",
	.limit_in_bytes = false,
	.keys = keys,
	.check = check,
	.init = init,
	.signal = signal,
	.over_limit = sq_fifo_over_packets,
	.on_dequeue = on_dequeue,
	.arrange = arrange,
	.on_empty = on_empty,
};
