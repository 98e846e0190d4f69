#include "router_red.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "router_discipline.h"
#include "router_queue.h"

void sq_red_init(struct sq_red_state *s)
{
	s->avg = 0.0;
	s->count = -1;
	s->idle_since = 0;
}

/* How many average-size packets the link could have sent while the queue was idle. */
static double idle_packets(const struct sq_red_config *c, sq_time_us idle_us, uint64_t rate_bps)
{
	if (idle_us <= 0 || rate_bps == 0)
		return 0.0;
	if (rate_bps == SQ_RATE_UNLIMITED)
		return INFINITY;
	return (double)idle_us * (double)rate_bps / (8e6 * (double)c->avpkt);
}

double sq_red_update_average(struct sq_red_state *s, const struct sq_red_config *c,
			     uint64_t backlog, sq_time_us now, uint64_t rate_bps)
{
	if (backlog == 0) {
		double m = idle_packets(c, now - s->idle_since, rate_bps);
		s->avg *= pow(1.0 - c->w_q, m);
	} else {
		s->avg = (1.0 - c->w_q) * s->avg + c->w_q * (double)backlog;
	}
	return s->avg;
}

double sq_red_probability(const struct sq_red_config *c, double avg, int64_t count)
{
	if (avg < c->min)
		return 0.0;
	if (avg >= c->max)
		return 1.0;
	double pb = c->max_p * (avg - c->min) / (double)(c->max - c->min);
	double spacing = 1.0 - (double)count * pb;
	if (spacing <= pb)
		return 1.0;   /* count * pb >= 1 - pb: pa would reach or pass 1 */
	return pb / spacing;
}

enum sq_red_action sq_red_decide(struct sq_red_state *s, const struct sq_red_config *c,
				 struct sq_rng *rng)
{
	if (s->avg < c->min) {
		s->count = -1;
		return SQ_RED_PASS;
	}
	if (s->avg >= c->max) {
		s->count = 0;
		return SQ_RED_FORCED;
	}
	s->count++;
	double pa = sq_red_probability(c, s->avg, s->count);
	/* One draw per arrival in this region, whatever pa is, so the stream stays
	 * aligned with the arrivals. */
	double u = sq_rng_uniform01(rng);
	if (u < pa) {
		s->count = 0;
		return SQ_RED_EARLY;
	}
	return SQ_RED_PASS;
}

/* ---- RED as a discipline of the router stage (router_discipline.h) ------------------ */

static bool ecn_capable(const struct sq_pkt_meta *meta)
{
	return (meta->ecn & 3) != 0;   /* ECT(1), ECT(0) or CE */
}

static bool init(void *state, const struct sq_router_class *c, uint32_t mtu)
{
	(void)c;
	(void)mtu;
	sq_red_init(state);
	return true;
}

/* RED's congestion signal for this arrival: admit, mark or drop. */
static enum sq_router_verdict signal(void *state, const struct sq_router_class *c,
				     const struct sq_router_queue *q, const struct sq_pkt_meta *meta,
				     sq_time_us now, uint64_t rate_bps, struct sq_rng *rng)
{
	sq_red_update_average(state, &c->red, q->bytes, now, rate_bps);
	if (sq_red_decide(state, &c->red, rng) == SQ_RED_PASS)
		return SQ_ROUTER_ADMIT;
	return c->red.ecn && ecn_capable(meta) ? SQ_ROUTER_MARK : SQ_ROUTER_DROP;
}

static bool over_limit(const struct sq_router_class *c, const struct sq_router_queue *q, uint32_t ip_len)
{
	return q->bytes + ip_len > c->red.limit;
}

static void on_empty(void *state, sq_time_us now)
{
	sq_red_start_idle(state, now);
}

static double average(const void *state)
{
	return ((const struct sq_red_state *)state)->avg;
}

static bool check_unit_interval(double v, const char *cp, const char *field, char *err, size_t errlen)
{
	/* Written so that NaN fails too. */
	if (v > 0.0 && v <= 1.0)
		return true;
	snprintf(err, errlen, "%s.red.%s: %g is outside (0, 1]", cp, field, v);
	return false;
}

/* The emulator's own rules for a RED class of its configuration file; a scenario's RED
 * queue was checked by its Python type before (testbed/router/disciplines/red.py). */
static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	const struct sq_red_config *r = &c->red;
	if (r->limit < 1 || r->avpkt < 1) {
		snprintf(err, errlen, "%s.red.%s: must be >= 1 B, got 0 B", cp,
			 r->limit < 1 ? "limit" : "avpkt");
		return false;
	}
	if (r->min >= r->max) {
		snprintf(err, errlen, "%s.red.min: must be < max (%u B), got %u B", cp, r->max, r->min);
		return false;
	}
	if (r->max > r->limit) {
		snprintf(err, errlen, "%s.red.max: must be <= limit (%u B), got %u B", cp, r->limit,
			 r->max);
		return false;
	}
	return check_unit_interval(r->max_p, cp, "max_p", err, errlen) &&
	       check_unit_interval(r->w_q, cp, "w_q", err, errlen);
}

#define RED_KEY(key, field, kind, dflt) { key, kind, offsetof(struct sq_router_class, red.field), dflt }

static const struct sq_router_key keys[] = {
	RED_KEY("red.min", min, SQ_RKEY_BYTES, 0.0),
	RED_KEY("red.max", max, SQ_RKEY_BYTES, 0.0),
	RED_KEY("red.avpkt", avpkt, SQ_RKEY_BYTES, 0.0),
	RED_KEY("red.max_p", max_p, SQ_RKEY_REAL, 0.1),     /* IIP report table 1 */
	RED_KEY("red.w_q", w_q, SQ_RKEY_REAL, 0.002),
	RED_KEY("red.ecn", ecn, SQ_RKEY_BOOL, 0.0),
	{ NULL, SQ_RKEY_BOOL, 0, 0.0 },
};

const struct sq_router_discipline sq_red_ops = {
	.name = "red",
	.limit_in_bytes = true,
	.keys = keys,
	.check = check,
	.init = init,
	.signal = signal,
	.over_limit = over_limit,
	.on_empty = on_empty,
	.average = average,
};
