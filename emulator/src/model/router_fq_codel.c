#include "router_fq_codel.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "router_key_check.h"
#include "router_fifo.h"

/* ---- the flow lists ---------------------------------------------------------------- */

static void list_append(struct sq_fq_codel_state *s, enum sq_fq_list l, int32_t f)
{
	s->flows[f].next = -1;
	s->flows[f].list = l;
	if (s->tail[l] < 0)
		s->head[l] = f;
	else
		s->flows[s->tail[l]].next = f;
	s->tail[l] = f;
}

/* Removes f, the head of its list, and appends it to list l (SQ_FQ_NONE: to none). */
static void list_move_head(struct sq_fq_codel_state *s, int32_t f, enum sq_fq_list l)
{
	enum sq_fq_list from = s->flows[f].list;
	s->head[from] = s->flows[f].next;
	if (s->head[from] < 0)
		s->tail[from] = -1;
	if (l == SQ_FQ_NONE) {
		s->flows[f].list = SQ_FQ_NONE;
		s->flows[f].next = -1;
	} else {
		list_append(s, l, f);
	}
}

/* RFC 8290 section 4.2 (Linux fq_codel_dequeue) up to the flow that sends: a flow out of
 * deficit gets a quantum and goes to the old list's tail; an empty flow (its CoDel finds no
 * packet: sq_codel_empty) goes from the new list to the old one if that is not empty, else
 * leaves the lists. Returns the flow, or -1 once both lists are empty. */
static int32_t serve_next(struct sq_fq_codel_state *s)
{
	for (;;) {
		enum sq_fq_list l = s->head[SQ_FQ_NEW] >= 0 ? SQ_FQ_NEW : SQ_FQ_OLD;
		int32_t f = s->head[l];
		if (f < 0)
			return -1;
		struct sq_fq_flow *fl = &s->flows[f];
		if (fl->deficit <= 0) {
			fl->deficit += s->quantum;
			list_move_head(s, f, SQ_FQ_OLD);
		} else if (fl->count == 0) {
			sq_codel_empty(&fl->cv);
			list_move_head(s, f, l == SQ_FQ_NEW && s->head[SQ_FQ_OLD] >= 0 ? SQ_FQ_OLD : SQ_FQ_NONE);
		} else {
			return f;
		}
	}
}

/* The flow serve_next would return, without changing anything (arrivals may still come
 * before the dequeue, and an empty flow's fate depends on them): the first new flow with
 * packets and deficit; else, in the order the old list would then have, the flow with
 * packets that needs the fewest quanta to have deficit. */
static int32_t peek_next(const struct sq_fq_codel_state *s)
{
	for (int32_t f = s->head[SQ_FQ_NEW]; f >= 0; f = s->flows[f].next)
		if (s->flows[f].deficit > 0 && s->flows[f].count > 0)
			return f;
	int32_t best = -1;
	int64_t best_rounds = INT64_MAX;
	const enum sq_fq_list order[2] = { SQ_FQ_OLD, SQ_FQ_NEW };
	for (int i = 0; i < 2; i++) {
		for (int32_t f = s->head[order[i]]; f >= 0; f = s->flows[f].next) {
			const struct sq_fq_flow *fl = &s->flows[f];
			if (fl->count == 0)
				continue;
			int64_t q = s->quantum, d = fl->deficit + (order[i] == SQ_FQ_NEW ? q : 0);
			int64_t rounds = d > 0 ? 0 : (1 - d + q - 1) / q;
			if (rounds < best_rounds) {
				best = f;
				best_rounds = rounds;
			}
		}
	}
	return best;
}

/* ---- FQ-CoDel as a discipline of the router stage (router_discipline.h) ------------ */

static bool init(void *state, const struct sq_router_class *c, uint32_t mtu)
{
	struct sq_fq_codel_state *s = state;
	*s = (struct sq_fq_codel_state){ .n_flows = c->fq_codel.flows, .maxpacket = mtu, .head_flow = -1,
					 .quantum = c->fq_codel.quantum,
					 .head = { -1, -1, -1 }, .tail = { -1, -1, -1 } };
	s->flows = calloc(s->n_flows, sizeof *s->flows);
	if (!s->flows)
		return false;
	for (uint32_t f = 0; f < s->n_flows; f++) {
		sq_codel_init(&s->flows[f].cv);
		s->flows[f].next = -1;
	}
	return true;
}

static void release(void *state)
{
	struct sq_fq_codel_state *s = state;
	free(s->flows);
	s->flows = NULL;
}

static uint32_t flow_of(const struct sq_fq_codel_state *s, const struct sq_router_pkt *p)
{
	return sq_fq_bucket(p->flow_hash, s->n_flows);
}

/* The place of flow f's oldest packet in the class queue. */
static size_t oldest_of(const struct sq_fq_codel_state *s, const struct sq_router_queue *q, int32_t f)
{
	size_t i = 0;
	while ((int32_t)flow_of(s, sq_rqueue_at(q, i)) != f)
		i++;
	return i;
}

/* After a packet joined (at the tail: a flow not in a list becomes a new flow with a
 * quantum of deficit) or left (the head, whose flow arrange or victim noted): the oldest
 * packet of the flow served next goes to the head. */
static void arrange(void *state, const struct sq_router_class *c, struct sq_router_queue *q)
{
	(void)c;
	struct sq_fq_codel_state *s = state;
	if (q->count > s->seen) {
		const struct sq_router_pkt *p = sq_rqueue_at(q, q->count - 1);
		struct sq_fq_flow *fl = &s->flows[flow_of(s, p)];
		fl->count++;
		fl->bytes += p->ip_len;
		if (fl->list == SQ_FQ_NONE) {
			list_append(s, SQ_FQ_NEW, (int32_t)flow_of(s, p));
			fl->deficit = s->quantum;
		}
	} else if (q->count < s->seen) {
		s->flows[s->head_flow].count--;
		s->flows[s->head_flow].bytes -= s->head_len;
	}
	s->seen = q->count;
	s->head_flow = peek_next(s);
	if (s->head_flow < 0)
		return;
	sq_rqueue_to_front(q, oldest_of(s, q, s->head_flow));
	s->head_len = sq_rqueue_head(q)->ip_len;
}

static enum sq_router_fate on_dequeue(void *state, const struct sq_router_class *c,
				      const struct sq_router_queue *q, const struct sq_router_pkt *head,
				      sq_time_us now, struct sq_rng *rng)
{
	(void)rng;
	struct sq_fq_codel_state *s = state;
	int32_t f = serve_next(s);
	assert(f == s->head_flow && f == (int32_t)flow_of(s, head));
	const struct sq_codel_params p = { c->fq_codel.target, c->fq_codel.interval, s->maxpacket,
					   c->fq_codel.ecn, 0 };
	enum sq_router_fate fate = sq_codel_judge(&s->flows[f].cv, &p, now - head->queued_at,
						  q->bytes - head->ip_len, head->ecn, now);
	if (fate != SQ_ROUTER_DROP_OUT)
		s->flows[f].deficit -= head->ip_len;   /* a flow's turn counts what it sends */
	return fate;
}

/* The class queue ran empty: the dequeue that finds it so walks both lists empty. */
static void on_empty(void *state, sq_time_us now)
{
	(void)now;
	struct sq_fq_codel_state *s = state;
	int32_t f = serve_next(s);
	assert(f < 0);
	(void)f;
}

/* At the limit: the oldest packet of the flow with the most bytes (the first such). */
static size_t victim(void *state, const struct sq_router_class *c, const struct sq_router_queue *q)
{
	(void)c;
	struct sq_fq_codel_state *s = state;
	int32_t fat = 0;
	for (uint32_t f = 1; f < s->n_flows; f++)
		if (s->flows[f].bytes > s->flows[fat].bytes)
			fat = (int32_t)f;
	size_t i = oldest_of(s, q, fat);
	s->head_flow = fat;   /* it is moved to the head and leaves: arrange counts it out */
	s->head_len = sq_rqueue_at(q, i)->ip_len;
	return i;
}

static bool check(const struct sq_router_class *c, const char *cp, char *err, size_t errlen)
{
	const struct sq_fq_codel_config *k = &c->fq_codel;
	return sq_fifo_check_packets(c, cp, err, errlen) &&
	       sq_router_check_time(k->target, 1, SQ_TIME_NEVER, cp, "fq_codel.target", err, errlen) &&
	       sq_router_check_time(k->interval, 1, SQ_TIME_NEVER, cp, "fq_codel.interval", err, errlen) &&
	       sq_router_check_range(k->quantum, SQ_FQ_CODEL_MIN_QUANTUM, SQ_FQ_CODEL_MAX_QUANTUM, false, cp,
				     "fq_codel.quantum", err, errlen) &&
	       sq_router_check_range(k->flows, 1, SQ_FQ_CODEL_MAX_FLOWS, false, cp, "fq_codel.flows", err, errlen);
}

#define FQ_KEY(key, field, kind, dflt) { key, kind, offsetof(struct sq_router_class, fq_codel.field), dflt }

static const struct sq_router_key keys[] = {
	FQ_KEY("fq_codel.target", target, SQ_RKEY_TIME, 5000.0),   /* Linux sch_fq_codel's defaults */
	FQ_KEY("fq_codel.interval", interval, SQ_RKEY_TIME, 100000.0),
	FQ_KEY("fq_codel.ecn", ecn, SQ_RKEY_BOOL, 1.0),
	FQ_KEY("fq_codel.quantum", quantum, SQ_RKEY_COUNT, 1514.0),
	FQ_KEY("fq_codel.flows", flows, SQ_RKEY_COUNT, 1024.0),
	{ NULL, SQ_RKEY_BOOL, 0, 0.0 },
};

const struct sq_router_discipline sq_fq_codel_ops = {
	.name = "fq_codel",
	.limit_in_bytes = false,
	.keys = keys,
	.check = check,
	.init = init,
	.release = release,
	.over_limit = sq_fifo_over_packets,
	.drops_from_head = true,
	.victim = victim,
	.on_dequeue = on_dequeue,
	.arrange = arrange,
	.on_empty = on_empty,
};
