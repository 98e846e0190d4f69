#include "router_pie.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "router_key_check.h"
#include "router_discipline.h"
#include "router_fifo.h"
#include "router_queue.h"

/* pie_vars_init: what a reset restores (the probability and the delays stay). */
static void restart_cycle(struct sq_pie_state *s)
{
	s->burst_time = SQ_PIE_BURST_US;
	s->dq_tstamp = SQ_PIE_NO_DEQUEUE;
	s->accu_prob = 0.0;
}

void sq_pie_init(struct sq_pie_state *s, uint32_t mtu)
{
	*s = (struct sq_pie_state){ .mtu = mtu };
	restart_cycle(s);
}

/* RFC 8033 section 4.2's auto-tuning: alpha and beta scaled down while the probability
 * is small (Linux: halved below 10 %, then / 4 per decade down to 1e-6). */
static double tuning_scale(double prob)
{
	if (prob >= 0.1)
		return 1.0;
	double scale = 0.5, bound = 0.01;
	for (int i = 0; i < 5 && prob < bound; i++, bound /= 10.0)
		scale /= 4.0;
	return scale;
}

void sq_pie_update(struct sq_pie_state *s, const struct sq_pie_config *c, uint64_t backlog)
{
	sq_time_us target = c->target;
	sq_time_us qdelay = s->qdelay, qdelay_old = s->qdelay_old;
	/* A queue with bytes but a zero delay is very short: no decay this round. */
	bool may_decay = !(qdelay == 0 && backlog != 0);
	double scale = tuning_scale(s->prob);
	double delta = scale * c->alpha * (double)(qdelay - target) / 1e6 +
		       scale * c->beta * (double)(qdelay - qdelay_old) / 1e6;
	if (delta > 0.02 && s->prob >= 0.1)
		delta = 0.02;     /* at most 2 % up per update once at 10 % */
	if (qdelay > 250000)
		delta += 0.02;    /* the RFC's non-linear increase above 250 ms */
	s->prob += delta;
	if (s->prob >= 1.0) {
		s->prob = 1.0;
		may_decay = false;
	} else if (s->prob < 0.0) {
		s->prob = 0.0;
	}
	if (qdelay == 0 && qdelay_old == 0 && may_decay)
		s->prob -= s->prob / 64.0;   /* idle for two updates: to 98.4 % */
	if (qdelay < target / 2 && qdelay_old < target / 2 && s->prob == 0.0)
		restart_cycle(s);
	s->qdelay_old = qdelay;
}

void sq_pie_catch_up(struct sq_pie_state *s, const struct sq_pie_config *c, sq_time_us now,
		     uint64_t backlog)
{
	sq_time_us tupdate = c->tupdate;
	while (s->last_update + tupdate <= now) {
		s->last_update += tupdate;
		sq_pie_update(s, c, backlog);
		if (backlog == 0 && s->qdelay == 0 && s->qdelay_old == 0 && s->prob == 0.0) {
			/* A fixed point: every later update until now changes nothing. */
			s->last_update += (now - s->last_update) / tupdate * tupdate;
			return;
		}
	}
}

bool sq_pie_drop_early(struct sq_pie_state *s, const struct sq_pie_config *c, uint64_t backlog,
		       uint32_t ip_len, struct sq_rng *rng)
{
	if (s->burst_time > 0)
		return false;
	if (s->qdelay < c->target / 2 && s->prob < 0.2)
		return false;
	if (backlog < 2 * (uint64_t)s->mtu)
		return false;
	double p = s->prob;
	if (c->bytemode && ip_len <= s->mtu)
		p = p / s->mtu * ip_len;
	s->accu_prob = p == 0.0 ? 0.0 : s->accu_prob + p;
	if (s->accu_prob < 0.85)
		return false;
	if (s->accu_prob >= 8.5)
		return true;
	if (sq_rng_uniform01(rng) < p) {
		s->accu_prob = 0.0;
		return true;
	}
	return false;
}

enum sq_pie_action sq_pie_enqueue(struct sq_pie_state *s, const struct sq_pie_config *c,
				  uint32_t limit, uint64_t qlen, uint64_t backlog, uint32_t ip_len,
				  uint8_t ecn, struct sq_rng *rng)
{
	if (qlen >= limit) {
		s->accu_prob = 0.0;   /* Linux resets it on every drop */
		return SQ_PIE_PASS;
	}
	if (!sq_pie_drop_early(s, c, backlog, ip_len, rng))
		return SQ_PIE_PASS;
	/* ECT(0), ECT(1) or CE is marked while the probability is at most 10 %. */
	if (c->ecn && s->prob <= 0.1 && (ecn & 3) != 0)
		return SQ_PIE_MARK;
	s->accu_prob = 0.0;
	return SQ_PIE_DROP;
}

void sq_pie_dequeued(struct sq_pie_state *s, sq_time_us enqueued_at, sq_time_us now,
		     uint64_t backlog)
{
	s->qdelay = backlog == 0 ? 0 : now - enqueued_at;
	sq_time_us dtime = s->dq_tstamp == SQ_PIE_NO_DEQUEUE ? 0 : now - s->dq_tstamp;
	s->dq_tstamp = now;
	if (dtime == 0)
		return;
	s->burst_time = s->burst_time > dtime ? s->burst_time - dtime : 0;
}
/* ---- PIE as a discipline of the router stage (router_discipline.h) ------------------ */

static bool init(void *state, const struct sq_router_class *c, uint32_t mtu)
{
	(void)c;
	sq_pie_init(state, mtu);
	return true;
}

static enum sq_router_verdict signal(void *state, const struct sq_router_class *c,
				     const struct sq_router_queue *q, const struct sq_pkt_meta *meta,
				     sq_time_us now, uint64_t rate_bps, struct sq_rng *rng)
{
	(void)rate_bps;
	sq_pie_catch_up(state, &c->pie, now, q->bytes);
	switch (sq_pie_enqueue(state, &c->pie, c->limit, q->count, q->bytes, meta->ip_len, meta->ecn, rng)) {
	case SQ_PIE_MARK:
		return SQ_ROUTER_MARK;
	case SQ_PIE_DROP:
		return SQ_ROUTER_DROP;
	default:
		return SQ_ROUTER_ADMIT;
	}
}

static enum sq_router_fate on_dequeue(void *state, const struct sq_router_class *c,
				      const struct sq_router_queue *q, const struct sq_router_pkt *head,
				      sq_time_us now, struct sq_rng *rng)
{
	(void)rng;
	sq_pie_catch_up(state, &c->pie, now, q->bytes);
	sq_pie_dequeued(state, head->queued_at, now, q->bytes - head->ip_len);
	return SQ_ROUTER_SEND;
}

/* The emulator's own rules for a PIE class of its configuration file; a scenario's PIE
 * queue was checked by its Python type before (testbed/router/disciplines/pie.py). */
static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	const struct sq_pie_config *p = &c->pie;
	return sq_fifo_check_packets(c, cp, err, errlen) &&
	       sq_router_check_time(p->target, 1, SQ_PIE_MAX_US, cp, "pie.target", err, errlen) &&
	       sq_router_check_time(p->tupdate, 1, SQ_PIE_MAX_US, cp, "pie.tupdate", err, errlen) &&
	       sq_router_check_range(p->alpha, 0.0, 2.0, false, cp, "pie.alpha", err, errlen) &&
	       sq_router_check_range(p->beta, 0.0, 2.0, false, cp, "pie.beta", err, errlen);
}

#define PIE_KEY(key, field, kind, dflt) { key, kind, offsetof(struct sq_router_class, pie.field), dflt }

static const struct sq_router_key keys[] = {
	PIE_KEY("pie.target", target, SQ_RKEY_TIME, 15000.0),   /* RFC 8033 and Linux */
	PIE_KEY("pie.tupdate", tupdate, SQ_RKEY_TIME, 15000.0),
	PIE_KEY("pie.alpha", alpha, SQ_RKEY_REAL, 0.125),
	PIE_KEY("pie.beta", beta, SQ_RKEY_REAL, 1.25),
	PIE_KEY("pie.ecn", ecn, SQ_RKEY_BOOL, 0.0),
	PIE_KEY("pie.bytemode", bytemode, SQ_RKEY_BOOL, 0.0),
	{ NULL, SQ_RKEY_BOOL, 0, 0.0 },
};

const struct sq_router_discipline sq_pie_ops = {
	.name = "pie",
	.limit_in_bytes = false,
	.keys = keys,
	.check = check,
	.init = init,
	.signal = signal,
	.over_limit = sq_fifo_over_packets,
	.on_dequeue = on_dequeue,
};
