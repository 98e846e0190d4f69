#include "router_codel.h"

#include <math.h>
#include <stdio.h>

#include "router_key_check.h"
#include "router_fifo.h"

void sq_codel_init(struct sq_codel_vars *v)
{
	*v = (struct sq_codel_vars){ .phase = SQ_CODEL_FRESH };
}

sq_time_us sq_codel_control_law(sq_time_us t, sq_time_us interval, uint32_t count)
{
	return t + (sq_time_us)((double)interval / sqrt((double)count));
}

/* RFC 8289 dodequeue() for a packet: true if it is ok to drop it (the sojourn time has
 * been at or above target for at least an interval and more than a packet is queued). */
static bool dodequeue(struct sq_codel_vars *v, const struct sq_codel_params *p, sq_time_us sojourn,
		      uint64_t backlog_after, sq_time_us now)
{
	if (sojourn < p->target || backlog_after <= p->maxpacket) {
		v->first_above_time = 0;   /* went below: stay below for at least an interval */
		return false;
	}
	if (v->first_above_time == 0) {
		v->first_above_time = now + p->interval;
		return false;
	}
	return now >= v->first_above_time;
}

static bool ecn_capable(uint8_t ecn)
{
	return (ecn & 3) != 0;   /* ECT(1), ECT(0) or CE (stays CE) */
}

/* Inside the drop loop (`while (now >= drop_next && dropping)`), for the packet at hand:
 * the count grows, then an ECN-capable packet is marked and sent (Linux: the loop ends
 * with it), any other is dropped and the next one is dodequeued. */
static enum sq_router_fate loop_step(struct sq_codel_vars *v, const struct sq_codel_params *p, uint8_t ecn)
{
	v->count++;
	if (p->ecn && ecn_capable(ecn)) {
		v->drop_next = sq_codel_control_law(v->drop_next, p->interval, v->count);
		v->phase = SQ_CODEL_FRESH;
		return SQ_ROUTER_SEND_CE;
	}
	v->phase = SQ_CODEL_IN_LOOP;
	return SQ_ROUTER_DROP_OUT;
}

/* Entering the drop state at now with the packet at hand: marked (ECN) or dropped, and
 * the count of the last cycle reused if it ended less than 16 intervals ago. */
static enum sq_router_fate enter_dropping(struct sq_codel_vars *v, const struct sq_codel_params *p,
					  uint8_t ecn, sq_time_us now)
{
	enum sq_router_fate fate = p->ecn && ecn_capable(ecn) ? SQ_ROUTER_SEND_CE : SQ_ROUTER_DROP_OUT;
	v->dropping = true;
	uint32_t delta = v->count - v->lastcount;
	v->count = 1;
	if (delta > 1 && now - v->drop_next < 16 * p->interval)
		v->count = delta;
	v->drop_next = sq_codel_control_law(now, p->interval, v->count);
	v->lastcount = v->count;
	v->phase = fate == SQ_ROUTER_DROP_OUT ? SQ_CODEL_ENTERED : SQ_CODEL_FRESH;
	return fate;
}

/* RFC 8289 dequeue() for the packet at hand, where the previous packet left it (phase). */
static enum sq_router_fate control(struct sq_codel_vars *v, const struct sq_codel_params *p,
				   sq_time_us sojourn, uint64_t backlog_after, uint8_t ecn, sq_time_us now)
{
	bool ok_to_drop = dodequeue(v, p, sojourn, backlog_after, now);
	enum sq_codel_phase phase = v->phase;
	v->phase = SQ_CODEL_FRESH;
	if (phase == SQ_CODEL_ENTERED)
		return SQ_ROUTER_SEND;   /* the packet after the entering drop goes out */
	if (phase == SQ_CODEL_IN_LOOP) {
		if (!ok_to_drop)
			v->dropping = false;
		else
			v->drop_next = sq_codel_control_law(v->drop_next, p->interval, v->count);
	} else if (v->dropping && !ok_to_drop) {
		v->dropping = false;   /* sojourn time below target: leave the drop state */
	} else if (!v->dropping) {
		return ok_to_drop ? enter_dropping(v, p, ecn, now) : SQ_ROUTER_SEND;
	}
	if (v->dropping && now >= v->drop_next)
		return loop_step(v, p, ecn);
	return SQ_ROUTER_SEND;
}

enum sq_router_fate sq_codel_judge(struct sq_codel_vars *v, const struct sq_codel_params *p,
				   sq_time_us sojourn, uint64_t backlog_after, uint8_t ecn, sq_time_us now)
{
	enum sq_router_fate fate = control(v, p, sojourn, backlog_after, ecn, now);
	/* Linux's ce_threshold: whatever the drop state, with or without ecn. */
	if (fate == SQ_ROUTER_SEND && p->ce_threshold > 0 && sojourn > p->ce_threshold && ecn_capable(ecn))
		return SQ_ROUTER_SEND_CE;
	return fate;
}

void sq_codel_empty(struct sq_codel_vars *v)
{
	v->first_above_time = 0;
	v->dropping = false;
	v->phase = SQ_CODEL_FRESH;
}

/* ---- CoDel as a discipline of the router stage (router_discipline.h) ----------------- */

static bool init(void *state, const struct sq_router_class *c, uint32_t mtu)
{
	(void)c;
	struct sq_codel_state *s = state;
	sq_codel_init(&s->vars);
	s->maxpacket = mtu;
	return true;
}

static enum sq_router_fate on_dequeue(void *state, const struct sq_router_class *c,
				      const struct sq_router_queue *q, const struct sq_router_pkt *head,
				      sq_time_us now, struct sq_rng *rng)
{
	(void)rng;
	struct sq_codel_state *s = state;
	const struct sq_codel_params p = { c->codel.target, c->codel.interval, s->maxpacket, c->codel.ecn,
					   c->codel.ce_threshold };
	return sq_codel_judge(&s->vars, &p, now - head->queued_at, q->bytes - head->ip_len, head->ecn, now);
}

static void on_empty(void *state, sq_time_us now)
{
	(void)now;
	sq_codel_empty(&((struct sq_codel_state *)state)->vars);
}

static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	return sq_fifo_check_packets(c, cp, err, errlen) &&
	       sq_router_check_time(c->codel.target, 1, SQ_TIME_NEVER, cp, "codel.target", err, errlen) &&
	       sq_router_check_time(c->codel.interval, 1, SQ_TIME_NEVER, cp, "codel.interval", err, errlen);
}

#define CODEL_KEY(key, field, kind, dflt) { key, kind, offsetof(struct sq_router_class, codel.field), dflt }

static const struct sq_router_key keys[] = {
	CODEL_KEY("codel.target", target, SQ_RKEY_TIME, 5000.0),       /* Linux sch_codel's defaults */
	CODEL_KEY("codel.interval", interval, SQ_RKEY_TIME, 100000.0),
	CODEL_KEY("codel.ecn", ecn, SQ_RKEY_BOOL, 0.0),
	CODEL_KEY("codel.ce_threshold", ce_threshold, SQ_RKEY_TIME, 0.0),   /* 0: off */
	{ NULL, SQ_RKEY_BOOL, 0, 0.0 },
};

const struct sq_router_discipline sq_codel_ops = {
	.name = "codel",
	.limit_in_bytes = false,
	.keys = keys,
	.check = check,
	.init = init,
	.on_dequeue = on_dequeue,
	.over_limit = sq_fifo_over_packets,   /* tail drop at the limit, as sch_codel */
	.on_empty = on_empty,
};
