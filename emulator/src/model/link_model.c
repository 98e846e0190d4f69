/* The link model's engine: arrivals, the timed-action loop and the per-packet
 * life cycle of both directions. Semantics: emulator/LINK_MODEL.md. */
#include "link_model.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action_heap.h"
#include "capacity_trace.h"
#include "cell_config.h"
#include "cell_scheduler.h"
#include "channel.h"
#include "error_draw.h"
#include "link_check.h"
#include "netem_stage.h"
#include "outage.h"
#include "pkt_ring.h"
#include "rate_schedule.h"
#include "rng.h"
#include "router.h"

/* A direction's one transmitter, shared by the hosts of a cell: the capacity (bandwidth
 * schedule or capacity trace, and the per-packet overhead) and the scheduler. */
struct sq_transmitter {
	struct sq_rate_step *rate;
	size_t rate_len;
	uint32_t overhead;
	struct sq_capacity_trace capacity;  /* used when it has opportunities (capacity.n > 0) */
	bool busy;                        /* a first serialisation is in progress */
	bool start_scheduled;             /* a TX_START action is in the heap */
	bool carry;                       /* a packet was waiting when the last serialisation ended */
	struct sq_cell_sched sched;
};

/* One direction of one host: its buffers, ARQ, error draws and stages. */
struct sq_direction {
	struct sq_direction_config cfg;   /* cfg.rate: the transmitter's */
	enum sq_dir dir;
	uint32_t host;
	struct sq_transmitter *tx;
	const struct sq_channel *channel; /* the host's */
	struct sq_pkt_ring ring;
	uint64_t next_tx;                 /* sequence number of the send buffer's head */
	uint64_t next_out;                /* in order: oldest started packet not yet out or dropped */
	bool stalled;
	uint32_t sbuf, rbuf;
	uint64_t outstanding;             /* started, neither out nor dropped */
	struct sq_error_draw err;
	uint64_t counts[SQ_EV_TYPES];
	struct sq_router router;          /* used when cfg.router.enabled */
	struct sq_outages own_outages;    /* used when cfg.outages.enabled */
	const struct sq_outages *outages; /* the process this direction follows (own or the link's) */
	struct sq_netem_stage netem;
};

/* A host of the cell (the only one without a cell): its channel, its link-wide outages
 * and its two directions. */
struct sq_host {
	struct sq_direction dir[SQ_DIRS];
	struct sq_channel *channel;
	struct sq_outages outages;        /* the host's link's: both directions unless one has its own */
};

struct sq_model {
	struct sq_host *host;             /* hosts of them */
	uint32_t hosts;
	struct sq_transmitter tx[SQ_DIRS];
	struct sq_action_heap heap;
	sq_event_sink sink;
	void *sink_ctx;
	uint64_t next_id;
	sq_time_us now;
	size_t pending;
	sq_clone_fn clone;
	void *clone_ctx;
};

/* ---- events --------------------------------------------------------------------- */

static enum sq_state state_of(const struct sq_direction *d)
{
	return sq_channel_current(d->channel).state;
}

enum sq_state sq_model_channel_state(const struct sq_model *m)
{
	return sq_channel_current(m->host[0].channel).state;
}

enum sq_state sq_model_host_channel_state(const struct sq_model *m, uint32_t host)
{
	return sq_channel_current(m->host[host < m->hosts ? host : 0].channel).state;
}

uint32_t sq_model_hosts(const struct sq_model *m)
{
	return m->hosts;
}

static struct sq_event event_of(const struct sq_model *m, const struct sq_direction *d,
			       enum sq_event_type type, const struct sq_pkt *p, uint32_t attempt,
			       size_t router_class)
{
	return (struct sq_event){
		.t = m->now,
		.type = type,
		.dir = d->dir,
		.pkt_id = p ? p->id : 0,
		.ip_len = p ? p->ip_len : 0,
		.state = state_of(d),
		.attempt = attempt,
		.sbuf = d->sbuf,
		.rbuf = d->rbuf,
		.user = p ? p->user : NULL,
		.router_class = (uint8_t)router_class,
		.host = d->host,
	};
}

static void send_event(struct sq_model *m, struct sq_direction *d, const struct sq_event *ev)
{
	d->counts[ev->type]++;
	m->sink(m->sink_ctx, ev);
}

static void emit_classed(struct sq_model *m, struct sq_direction *d, enum sq_event_type type,
			 const struct sq_pkt *p, uint32_t attempt, size_t router_class)
{
	struct sq_event ev = event_of(m, d, type, p, attempt, router_class);
	send_event(m, d, &ev);
}

static void emit(struct sq_model *m, struct sq_direction *d, enum sq_event_type type,
		 const struct sq_pkt *p, uint32_t attempt)
{
	emit_classed(m, d, type, p, attempt, SQ_ROUTER_NO_CLASS);
}

static void emit_state_change(struct sq_model *m, uint32_t host)
{
	struct sq_host *h = &m->host[host];
	struct sq_event ev = { .t = m->now, .type = SQ_EV_STATE, .dir = SQ_DOWN,
			       .state = sq_channel_current(h->channel).state,
			       .router_class = SQ_ROUTER_NO_CLASS, .host = host };
	for (int i = 0; i < SQ_DIRS; i++)
		h->dir[i].counts[SQ_EV_STATE]++;
	m->sink(m->sink_ctx, &ev);
}

/* ---- scheduling ------------------------------------------------------------------- */

static sq_time_us add_time(sq_time_us a, sq_time_us b)
{
	return (a >= SQ_TIME_NEVER - b) ? SQ_TIME_NEVER : a + b;
}

static void schedule(struct sq_model *m, struct sq_direction *d, sq_time_us t,
		     enum sq_phase phase, uint64_t seq, uint32_t attempt)
{
	if (t == SQ_TIME_NEVER)
		return;   /* the schedule ends in an outage: this never happens */
	struct sq_action act = { .t = t, .phase = phase, .dir = d->dir, .host = d->host, .seq = seq,
				 .attempt = attempt };
	bool ok = sq_heap_push(&m->heap, act);
	assert(ok && "heap capacity is reserved on arrival");
	(void)ok;
}

static bool queue_empty(const struct sq_direction *d)
{
	return d->next_tx == d->ring.end;
}

/* Whether some host has a packet in its send buffer in direction dir. */
static bool any_waiting(const struct sq_model *m, enum sq_dir dir)
{
	for (uint32_t h = 0; h < m->hosts; h++)
		if (!queue_empty(&m->host[h].dir[dir]))
			return true;
	return false;
}

/* The transmitter looks for work after everything else at this instant (one TX_START per
 * direction, the first host's, whichever host's packet it then starts). */
static void schedule_start(struct sq_model *m, struct sq_direction *d)
{
	struct sq_transmitter *tx = d->tx;
	if (tx->busy || tx->start_scheduled || !any_waiting(m, d->dir))
		return;
	tx->start_scheduled = true;
	schedule(m, &m->host[0].dir[d->dir], m->now, SQ_PHASE_TX_START, 0, 0);
}

/* ---- leaving the link ------------------------------------------------------------- */

static void resolve(struct sq_model *m, struct sq_direction *d, struct sq_pkt *p)
{
	p->resolved = true;
	d->outstanding -= p->ip_len;
	m->pending--;
}

static void deliver(struct sq_model *m, struct sq_direction *d, struct sq_pkt *p,
		    uint32_t attempt)
{
	if (p->held) {
		p->held = false;
		d->rbuf -= p->ip_len;
	}
	resolve(m, d, p);
	emit(m, d, SQ_EV_OUT, p, attempt);
}

/* Hands out held packets that are next in order, up to the first one still in ARQ. */
static void release_in_order(struct sq_model *m, struct sq_direction *d)
{
	while (d->next_out < d->next_tx) {
		struct sq_pkt *p = sq_ring_get(&d->ring, d->next_out);
		if (p->held)
			deliver(m, d, p, p->held_attempt);
		else if (!p->resolved)
			break;
		d->next_out++;
	}
}

static void after_departure(struct sq_model *m, struct sq_direction *d)
{
	if (d->cfg.in_order)
		release_in_order(m, d);
	schedule_start(m, d);
	sq_ring_trim(&d->ring);
}

static void on_recv(struct sq_model *m, struct sq_direction *d, uint64_t seq, uint32_t attempt)
{
	struct sq_pkt *p = sq_ring_get(&d->ring, seq);
	if (d->cfg.in_order && seq != d->next_out) {
		p->held = true;
		p->held_attempt = attempt;
		d->rbuf += p->ip_len;
		emit(m, d, SQ_EV_RECV, p, attempt);
		return;
	}
	emit(m, d, SQ_EV_RECV, p, attempt);
	deliver(m, d, p, attempt);
	after_departure(m, d);
}

/* ---- transmission ----------------------------------------------------------------- */

static bool attempt_hit(struct sq_model *m, struct sq_direction *d)
{
	/* One draw per attempt even when the outcome is certain (or an outage decides it),
	 * so the stream stays aligned with the attempts whatever the probabilities. */
	double u = sq_error_draw_at(&d->err, m->now);
	return d->outages->active || u < d->cfg.error[state_of(d)];
}

/* Attempt k of packet seq starts now. */
static void on_attempt(struct sq_model *m, struct sq_direction *d, uint64_t seq, uint32_t k)
{
	struct sq_pkt *p = sq_ring_get(&d->ring, seq);
	emit(m, d, SQ_EV_TX, p, k);
	if (!attempt_hit(m, d)) {
		bool reordered;   /* a reordered packet skips netem's delay line: 0 */
		sq_time_us netem = sq_netem_exit_delay(&d->netem, &reordered);
		sq_time_us arrival = add_time(add_time(add_time(m->now, p->ser), d->cfg.delay), netem);
		p->arrives = true;
		p->recv_at = arrival;
		schedule(m, d, arrival, SQ_PHASE_RECV, seq, k);
		return;
	}
	emit(m, d, SQ_EV_HIT, p, k);
	if (k < d->cfg.arq_retransmissions) {
		schedule(m, d, add_time(m->now, d->cfg.arq_delay), SQ_PHASE_RETRY, seq, k + 1);
		return;
	}
	resolve(m, d, p);
	emit(m, d, SQ_EV_DROP_ERR, p, k);
	after_departure(m, d);
}

static bool window_allows(const struct sq_direction *d, const struct sq_pkt *p)
{
	if (!d->cfg.in_order || d->outstanding == 0)
		return true;
	return d->outstanding + p->ip_len <= d->cfg.recv_buffer;
}

/* When the first serialisation of a packet starting now ends: over the bandwidth schedule,
 * or over the recorded capacity trace (LINK_MODEL.md "Recorded capacity traces"). */
static sq_time_us serialisation_end(struct sq_model *m, struct sq_direction *d, uint32_t ip_len)
{
	const struct sq_transmitter *tx = d->tx;
	uint64_t bytes = (uint64_t)ip_len + tx->overhead;
	if (tx->capacity.n == 0)
		return sq_serialisation_end(tx->rate, tx->rate_len, m->now, bytes);
	return sq_capacity_trace_serialise(&d->tx->capacity, m->now, bytes + SQ_OPPORTUNITY_FRAMING,
					   tx->carry);
}

static void start_transmission(struct sq_model *m, struct sq_direction *d)
{
	uint64_t seq = d->next_tx++;
	struct sq_pkt *p = sq_ring_get(&d->ring, seq);
	sq_time_us end = serialisation_end(m, d, p->ip_len);
	p->ser = end == SQ_TIME_NEVER ? SQ_TIME_NEVER : end - m->now;
	d->tx->busy = true;
	sq_cell_served(&d->tx->sched, d->host, p->ip_len);
	d->outstanding += p->ip_len;
	schedule(m, d, end, SQ_PHASE_TX_END, seq, 0);
	on_attempt(m, d, seq, 0);
}

/* Whether d's head packet may start now; a host whose window holds it back stalls (once). */
static bool head_ready(struct sq_model *m, struct sq_direction *d)
{
	if (queue_empty(d))
		return false;
	if (window_allows(d, sq_ring_get(&d->ring, d->next_tx)))
		return true;
	if (!d->stalled) {
		d->stalled = true;
		emit(m, d, SQ_EV_STALL, NULL, 0);
	}
	return false;
}

/* The chance that a frame of d sent now gets through: what proportional fair weighs. */
static double success_now(const struct sq_direction *d)
{
	return d->outages->active ? 0.0 : 1.0 - d->cfg.error[state_of(d)];
}

/* The transmitter of direction dir is free: the scheduler picks among the hosts whose head
 * packet may start (LINK_MODEL.md "A cell of several hosts"). */
static void on_tx_start(struct sq_model *m, enum sq_dir dir)
{
	struct sq_transmitter *tx = &m->tx[dir];
	tx->start_scheduled = false;
	if (tx->busy)
		return;
	struct sq_cell_view view = { 0 };
	bool any = false;
	for (uint32_t h = 0; h < m->hosts; h++) {
		struct sq_direction *d = &m->host[h].dir[dir];
		view.ready[h] = head_ready(m, d);
		view.success[h] = success_now(d);
		any = any || view.ready[h];
	}
	if (!any)
		return;
	struct sq_direction *d = &m->host[sq_cell_pick(&tx->sched, &view)].dir[dir];
	if (d->stalled) {
		d->stalled = false;
		emit(m, d, SQ_EV_RESUME, NULL, 0);
	}
	start_transmission(m, d);
}

/* ---- the router stage ---------------------------------------------------------------- */

struct router_report_ctx {
	struct sq_model *m;
	struct sq_direction *d;
};

/* A discipline's decision as a packet left its class queue: logged like one on arrival. */
static void on_router_fate(void *ctx, const struct sq_router_pkt *rp, enum sq_router_fate fate)
{
	struct router_report_ctx *c = ctx;
	struct sq_pkt p = { .id = rp->id, .user = rp->user, .ip_len = rp->ip_len };
	emit_classed(c->m, c->d, fate == SQ_ROUTER_DROP_OUT ? SQ_EV_DROP_ROUTER : SQ_EV_ECN_MARK, &p, 0,
		     rp->cls);
	if (fate == SQ_ROUTER_DROP_OUT)
		c->m->pending--;
}

/* Moves packets from the router stage (its device queue, or the class the scheduler
 * chooses) into the send buffer while the next one fits. */
static void pump_router(struct sq_model *m, struct sq_direction *d)
{
	struct router_report_ctx ctx = { m, d };
	const struct sq_router_report report = { on_router_fate, &ctx };
	const struct sq_router_pkt *next;
	while ((next = sq_router_next(&d->router, m->now, &report)) != NULL) {
		if ((uint64_t)d->sbuf + next->ip_len > d->cfg.send_buffer)
			return;
		struct sq_router_pkt rp;
		if (!sq_router_take(&d->router, m->now, &report, &rp))
			continue;   /* dropped as it left: the next one */
		struct sq_pkt p = { .id = rp.id, .user = rp.user, .ip_len = rp.ip_len };
		sq_ring_push(&d->ring, &p);
		d->sbuf += p.ip_len;
		emit_classed(m, d, SQ_EV_ENQUEUE, &p, 0, rp.cls);
	}
}

/* Drops queued packets of class cls from the head until an arrival of ip_len fits
 * (a discipline that drops from the head at its limit). */
static void drop_from_head(struct sq_model *m, struct sq_direction *d, size_t cls, uint32_t ip_len)
{
	struct sq_router_pkt rp;
	while (sq_router_push_out(&d->router, cls, ip_len, &rp)) {
		struct sq_pkt q = { .id = rp.id, .user = rp.user, .ip_len = rp.ip_len };
		emit_classed(m, d, SQ_EV_DROP_ROUTER, &q, 0, cls);
		m->pending--;
	}
}

/* After the MTU check: classify, let the class's discipline decide, queue. */
static void route_arrival(struct sq_model *m, struct sq_direction *d, const struct sq_pkt *p,
			  const struct sq_pkt_meta *meta, size_t cls)
{
	const struct sq_transmitter *tx = d->tx;
	uint64_t rate = tx->capacity.n ? sq_capacity_trace_mean_bps(&tx->capacity)
					     : sq_rate_at(tx->rate, tx->rate_len, m->now);
	enum sq_router_verdict v = sq_router_judge(&d->router, cls, meta, m->now, rate);
	if (v == SQ_ROUTER_DROP) {
		emit_classed(m, d, SQ_EV_DROP_ROUTER, p, 0, cls);
		return;
	}
	if (v == SQ_ROUTER_MARK)
		emit_classed(m, d, SQ_EV_ECN_MARK, p, 0, cls);
	if (v == SQ_ROUTER_DROP_HEAD)
		drop_from_head(m, d, cls, p->ip_len);
	sq_router_enqueue(&d->router, cls, p->id, p->user, p->ip_len,
			  v == SQ_ROUTER_MARK ? 3 : meta->ecn, sq_router_flow_hash(&d->router, meta), m->now);
	m->pending++;
	pump_router(m, d);
	schedule_start(m, d);
}

static void on_tx_end(struct sq_model *m, struct sq_direction *d, uint64_t seq)
{
	struct sq_pkt *p = sq_ring_get(&d->ring, seq);
	p->ser_done = true;
	d->sbuf -= p->ip_len;
	d->tx->busy = false;
	if (d->cfg.router.enabled)
		pump_router(m, d);
	d->tx->carry = any_waiting(m, d->dir);   /* it may use the rest of this opportunity */
	schedule_start(m, d);
	sq_ring_trim(&d->ring);
}

/* ---- the action loop --------------------------------------------------------------- */

static void dispatch(struct sq_model *m, const struct sq_action *a)
{
	struct sq_direction *d = &m->host[a->host].dir[a->dir];
	switch (a->phase) {
	case SQ_PHASE_RECV:
		on_recv(m, d, a->seq, a->attempt);
		break;
	case SQ_PHASE_RETRY:
		on_attempt(m, d, a->seq, a->attempt);
		break;
	case SQ_PHASE_TX_END:
		on_tx_end(m, d, a->seq);
		break;
	case SQ_PHASE_TX_START:
		on_tx_start(m, a->dir);
		break;
	}
}

static sq_time_us next_action_time(const struct sq_model *m)
{
	const struct sq_action *top = sq_heap_top(&m->heap);
	return top ? top->t : SQ_TIME_NEVER;
}

/* ---- outages ------------------------------------------------------------------------ */

/* The outage process that changes first (host by host: the link's before down's before
 * up's at the same time), or NULL if none ever changes; *host is its host. */
static struct sq_outages *next_outage_change(struct sq_model *m, uint32_t *host)
{
	struct sq_outages *first = &m->host[0].outages;
	*host = 0;
	for (uint32_t h = 0; h < m->hosts; h++) {
		struct sq_outages *link = &m->host[h].outages;
		if (sq_outages_next_change(link) < sq_outages_next_change(first)) {
			first = link;
			*host = h;
		}
		for (int i = 0; i < SQ_DIRS; i++) {
			struct sq_outages *own = &m->host[h].dir[i].own_outages;
			if (sq_outages_next_change(own) < sq_outages_next_change(first)) {
				first = own;
				*host = h;
			}
		}
	}
	return sq_outages_next_change(first) == SQ_TIME_NEVER ? NULL : first;
}

static sq_time_us next_outage_time(const struct sq_model *m)
{
	sq_time_us t = SQ_TIME_NEVER;
	for (uint32_t h = 0; h < m->hosts; h++) {
		sq_time_us link = sq_outages_next_change(&m->host[h].outages);
		t = link < t ? link : t;
		for (int i = 0; i < SQ_DIRS; i++) {
			sq_time_us own = sq_outages_next_change(&m->host[h].dir[i].own_outages);
			t = own < t ? own : t;
		}
	}
	return t;
}

/* The host whose channel changes state first (the lowest index at the same time). */
static uint32_t next_state_change(const struct sq_model *m, sq_time_us *at)
{
	uint32_t first = 0;
	*at = sq_channel_current(m->host[0].channel).end;
	for (uint32_t h = 1; h < m->hosts; h++) {
		sq_time_us end = sq_channel_current(m->host[h].channel).end;
		if (end < *at) {
			*at = end;
			first = h;
		}
	}
	return first;
}

/* An outage of host `host` begins or ends now: one `outage` event per direction that
 * follows it. */
static void change_outages(struct sq_model *m, struct sq_outages *o, uint32_t host)
{
	sq_outages_change(o);
	for (int i = 0; i < SQ_DIRS; i++) {
		struct sq_direction *d = &m->host[host].dir[i];
		if (d->outages != o)
			continue;
		struct sq_event ev = event_of(m, d, SQ_EV_OUTAGE, NULL, 0, SQ_ROUTER_NO_CLASS);
		ev.outage = o->active;
		send_event(m, d, &ev);
	}
}

bool sq_model_in_outage(const struct sq_model *m, enum sq_dir dir)
{
	return (unsigned)dir < SQ_DIRS && m->host[0].dir[dir].outages->active;
}

void sq_model_advance(struct sq_model *m, sq_time_us now)
{
	if (now < m->now)
		now = m->now;   /* never go back in time */
	for (;;) {
		sq_time_us change;
		uint32_t changing = next_state_change(m, &change);
		sq_time_us action = next_action_time(m);
		uint32_t outage_host;
		struct sq_outages *outage = next_outage_change(m, &outage_host);
		sq_time_us outage_at = outage ? sq_outages_next_change(outage) : SQ_TIME_NEVER;
		if (change == SQ_TIME_NEVER && action == SQ_TIME_NEVER && outage_at == SQ_TIME_NEVER)
			break;
		if (change <= action && change <= outage_at && change <= now) {
			/* A state change comes first among simultaneous events. */
			m->now = change;
			sq_channel_segment_at(m->host[changing].channel, change);
			emit_state_change(m, changing);
		} else if (outage_at <= action && outage_at <= now) {
			/* Then outages begin or end, before any packet's action. */
			m->now = outage_at;
			change_outages(m, outage, outage_host);
		} else if (action <= now) {
			struct sq_action a = sq_heap_pop(&m->heap);
			m->now = a.t;
			dispatch(m, &a);
		} else {
			break;
		}
	}
	m->now = now;
}

/* ---- arrivals ------------------------------------------------------------------------ */

/* Room for n more packets (the arrival and a netem copy of it) and every action that
 * could then be pending, so nothing can fail once the packet's events have started. */
static bool reserve_for_arrival(struct sq_model *m, struct sq_direction *d, size_t cls, size_t n)
{
	/* Packets waiting in the router stage enter the ring later, without a
	 * chance to fail then: their room is reserved now. */
	if (!sq_ring_reserve(&d->ring, sq_router_held(&d->router) + n))
		return false;
	if (d->cfg.router.enabled && !sq_router_reserve(&d->router, cls))
		return false;
	if (d->cfg.router.enabled && n > 1 &&
	    !sq_rqueue_reserve_total(&d->router.cls[cls].queue, d->router.cls[cls].queue.count + n))
		return false;
	size_t live = 0;
	for (uint32_t h = 0; h < m->hosts; h++)
		for (int i = 0; i < SQ_DIRS; i++)
			live += sq_ring_count(&m->host[h].dir[i].ring) +
				sq_router_held(&m->host[h].dir[i].router);
	/* Per packet one RECV or RETRY, plus per direction one TX_END and one TX_START. */
	return sq_heap_reserve(&m->heap, live + n + 2 * SQ_DIRS);
}

/* LINK_MODEL.md steps 3-4: the router stage, or straight into the send buffer. */
static void admit(struct sq_model *m, struct sq_direction *d, const struct sq_pkt *p,
		  const struct sq_pkt_meta *meta, size_t cls)
{
	if (d->cfg.router.enabled) {
		route_arrival(m, d, p, meta, cls);
	} else if ((uint64_t)d->sbuf + p->ip_len > d->cfg.send_buffer) {
		emit(m, d, SQ_EV_DROP_SBUF, p, 0);
	} else {
		sq_ring_push(&d->ring, p);
		d->sbuf += p->ip_len;
		m->pending++;
		emit(m, d, SQ_EV_ENQUEUE, p, 0);
		schedule_start(m, d);
	}
}

/* The netem stage's entry for one packet: its loss (false: dropped) or its corruption. */
static bool netem_pass(struct sq_model *m, struct sq_direction *d, const struct sq_pkt *p,
		       const struct sq_netem_entry *e)
{
	if (e->lost) {
		emit(m, d, SQ_EV_DROP_LOSS, p, 0);
		return false;
	}
	if (e->corrupt) {
		struct sq_event ev = event_of(m, d, SQ_EV_CORRUPT, p, 0, SQ_ROUTER_NO_CLASS);
		ev.corrupt_bit = e->corrupt_bit;
		send_event(m, d, &ev);
	}
	return true;
}

/* LINK_MODEL.md "The netem stage": the packet, then its copy if it was duplicated. */
static void netem_arrival(struct sq_model *m, struct sq_direction *d, const struct sq_pkt *p,
			  const struct sq_pkt_meta *meta, size_t cls)
{
	struct sq_netem_entry e;
	sq_netem_entry(&d->netem, p->ip_len, false, &e);
	bool duplicate = e.duplicate;
	if (netem_pass(m, d, p, &e))
		admit(m, d, p, meta, cls);
	if (!duplicate)
		return;
	void *user = p->user;
	if (m->clone && !(user = m->clone(m->clone_ctx, p->user)))
		return;   /* the caller has no copy to give */
	struct sq_pkt copy = { .id = m->next_id++, .user = user, .ip_len = p->ip_len };
	struct sq_event ev = event_of(m, d, SQ_EV_DUPLICATE, &copy, 0, SQ_ROUTER_NO_CLASS);
	ev.copy_of = p->id;
	send_event(m, d, &ev);
	sq_netem_entry(&d->netem, copy.ip_len, true, &e);
	if (netem_pass(m, d, &copy, &e))
		admit(m, d, &copy, meta, cls);
}

uint64_t sq_model_arrive(struct sq_model *m, enum sq_dir dir, sq_time_us now,
			 const struct sq_pkt_meta *meta, void *user)
{
	return sq_model_arrive_host(m, 0, dir, now, meta, user);
}

uint64_t sq_model_arrive_host(struct sq_model *m, uint32_t host, enum sq_dir dir, sq_time_us now,
			      const struct sq_pkt_meta *meta, void *user)
{
	assert(host < m->hosts);
	sq_model_advance(m, now);
	struct sq_direction *d = &m->host[host].dir[dir];
	bool routed = d->cfg.router.enabled;
	size_t cls = routed ? sq_router_classify(&d->cfg.router, meta) : SQ_ROUTER_NO_CLASS;
	if (!reserve_for_arrival(m, d, cls, d->netem.duplicate.p > 0 ? 2 : 1))
		return 0;
	struct sq_pkt p = { .id = m->next_id++, .user = user, .ip_len = meta->ip_len };
	emit(m, d, SQ_EV_IN, &p, 0);
	/* LINK_MODEL.md steps 2-4; the MTU check comes before the netem and router stages. */
	if (p.ip_len > d->cfg.mtu)
		emit(m, d, SQ_EV_DROP_MTU, &p, 0);
	else if (d->netem.enabled)
		netem_arrival(m, d, &p, meta, cls);
	else
		admit(m, d, &p, meta, cls);
	sq_model_advance(m, now);
	return p.id;
}

/* ---- life cycle ---------------------------------------------------------------------- */

/* The cell's shared part of direction dir: its capacity and its scheduler. */
static bool init_transmitter(struct sq_transmitter *tx, enum sq_dir dir,
			     const struct sq_link_config *cfg, uint32_t hosts, char *err, size_t errlen)
{
	const struct sq_direction_config *c = &cfg->dir[dir];
	tx->rate = malloc(c->rate_len * sizeof *tx->rate);
	if (!tx->rate) {
		snprintf(err, errlen, "%s.bandwidth: out of memory copying %zu steps", sq_dir_name(dir),
			 c->rate_len);
		return false;
	}
	memcpy(tx->rate, c->rate, c->rate_len * sizeof *tx->rate);
	tx->rate_len = c->rate_len;
	tx->overhead = c->overhead;
	if (!sq_capacity_trace_init(&tx->capacity, &c->capacity)) {
		snprintf(err, errlen, "%s.bandwidth: out of memory copying %zu opportunities",
			 sq_dir_name(dir), c->capacity.len);
		return false;
	}
	sq_cell_sched_init(&tx->sched, &cfg->cell, hosts);
	return true;
}

static bool init_direction(struct sq_direction *d, enum sq_dir dir, uint32_t host,
			   const struct sq_link_config *cfg, struct sq_transmitter *tx,
			   char *err, size_t errlen)
{
	const struct sq_channel_config *ch = sq_host_channel(cfg, host);
	d->dir = dir;
	d->host = host;
	d->tx = tx;
	d->cfg = sq_host_direction(cfg, host, dir);
	d->cfg.rate = tx->rate;
	d->cfg.capacity = (struct sq_opportunity_trace){ 0 };   /* the model reads its copy */
	const struct sq_direction_config *c = &d->cfg;
	sq_outages_init(&d->own_outages, &c->outages, cfg->seed, cfg->replication,
			sq_host_stream(dir == SQ_DOWN ? SQ_STREAM_OUTAGES_DOWN : SQ_STREAM_OUTAGES_UP, host));
	sq_ring_init(&d->ring);
	sq_error_draw_init(&d->err, ch, cfg->seed, cfg->replication, host, dir);
	sq_netem_stage_init(&d->netem, &c->netem, cfg->seed, cfg->replication, host, dir);
	if (c->router.enabled &&
	    !sq_router_init(&d->router, &c->router, c->mtu, cfg->seed, cfg->replication,
			    sq_host_stream(dir == SQ_DOWN ? SQ_STREAM_ROUTER_DOWN : SQ_STREAM_ROUTER_UP, host),
			    sq_host_stream(dir == SQ_DOWN ? SQ_STREAM_FLOW_HASH_DOWN : SQ_STREAM_FLOW_HASH_UP,
					   host))) {
		snprintf(err, errlen, "%s.router: out of memory for its queues (device_queue %" PRIu32 " packets)",
			 sq_dir_name(dir), c->router.device_queue);
		return false;
	}
	return true;
}

static bool init_host(struct sq_model *m, uint32_t host, const struct sq_link_config *cfg,
		      char *err, size_t errlen)
{
	struct sq_host *h = &m->host[host];
	h->channel = sq_channel_new_host(sq_host_channel(cfg, host), cfg->seed, cfg->replication,
					 host, err, errlen);
	if (!h->channel)
		return false;
	sq_outages_init(&h->outages, sq_host_outages(cfg, host), cfg->seed, cfg->replication,
			sq_host_stream(SQ_STREAM_OUTAGES, host));
	for (int i = 0; i < SQ_DIRS; i++) {
		struct sq_direction *d = &h->dir[i];
		if (!init_direction(d, (enum sq_dir)i, host, cfg, &m->tx[i], err, errlen))
			return false;
		d->channel = h->channel;
		d->outages = d->cfg.outages.enabled ? &d->own_outages : &h->outages;
	}
	return true;
}

struct sq_model *sq_model_new(const struct sq_link_config *cfg, sq_event_sink sink,
			      void *sink_ctx, char *err, size_t errlen)
{
	if (!sq_link_config_check(cfg, err, errlen))
		return NULL;
	struct sq_model *m = calloc(1, sizeof *m);
	uint32_t hosts = sq_cell_hosts(cfg);
	if (!m || !(m->host = calloc(hosts, sizeof *m->host))) {
		free(m);
		snprintf(err, errlen, "link model: out of memory allocating the model");
		return NULL;
	}
	m->hosts = hosts;
	m->sink = sink;
	m->sink_ctx = sink_ctx;
	m->next_id = 1;
	sq_heap_init(&m->heap);
	bool ok = true;
	for (int i = 0; i < SQ_DIRS && ok; i++)
		ok = init_transmitter(&m->tx[i], (enum sq_dir)i, cfg, hosts, err, errlen);
	for (uint32_t h = 0; h < hosts && ok; h++)
		ok = init_host(m, h, cfg, err, errlen);
	if (!ok) {
		sq_model_free(m);
		return NULL;
	}
	return m;
}

void sq_model_set_clone(struct sq_model *m, sq_clone_fn clone, void *ctx)
{
	m->clone = clone;
	m->clone_ctx = ctx;
}

void sq_model_free(struct sq_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < SQ_DIRS; i++) {
		free(m->tx[i].rate);
		sq_capacity_trace_release(&m->tx[i].capacity);
	}
	for (uint32_t h = 0; h < m->hosts; h++) {
		for (int i = 0; i < SQ_DIRS; i++) {
			sq_ring_release(&m->host[h].dir[i].ring);
			sq_router_release(&m->host[h].dir[i].router);
		}
		sq_channel_free(m->host[h].channel);
	}
	free(m->host);
	sq_heap_release(&m->heap);
	free(m);
}

/* ---- queries ------------------------------------------------------------------------- */

sq_time_us sq_model_next_deadline(const struct sq_model *m)
{
	sq_time_us change;
	next_state_change(m, &change);
	sq_time_us action = next_action_time(m);
	sq_time_us outage = next_outage_time(m);
	sq_time_us first = change < action ? change : action;
	return outage < first ? outage : first;
}

/* In order, a packet goes out when it has arrived and every earlier packet of its
 * direction is out or dropped: its out is decided once its own success is drawn and every
 * earlier one's is (a drop is decided when it happens, before now). The first packet
 * still in ARQ ends the walk: its next draw, and so its fate, can still move. Out of
 * order each packet goes out at its recv. */
size_t sq_model_decided_outs(const struct sq_model *m, enum sq_dir dir,
			     const struct sq_decided_out *after, sq_time_us until,
			     struct sq_decided_out *outs, size_t cap)
{
	return sq_model_host_decided_outs(m, 0, dir, after, until, outs, cap);
}

size_t sq_model_host_decided_outs(const struct sq_model *m, uint32_t host, enum sq_dir dir,
				  const struct sq_decided_out *after, sq_time_us until,
				  struct sq_decided_out *outs, size_t cap)
{
	if (host >= m->hosts)
		return 0;
	const struct sq_direction *d = &m->host[host].dir[dir];
	bool in_order = d->cfg.in_order;
	sq_time_us gone = m->now;   /* in order: when every earlier packet has left */
	size_t n = 0;
	for (uint64_t seq = in_order ? d->next_out : d->ring.base; seq < d->next_tx; seq++) {
		const struct sq_pkt *p = sq_ring_peek(&d->ring, seq);
		if (p->resolved)
			continue;
		if (!p->arrives) {
			if (in_order)
				break;
			continue;
		}
		struct sq_decided_out e = { .t = p->recv_at, .order = seq, .pkt_id = p->id,
					    .user = p->user };
		if (in_order) {
			e.t = e.t > gone ? e.t : gone;
			gone = e.t;
			if (e.t > until || n == cap)
				break;   /* every later one goes out no earlier */
		}
		if (e.t > until || (after && !sq_decided_before(after, &e)))
			continue;
		sq_decided_insert(outs, &n, cap, &e);
	}
	return n;
}

uint64_t sq_model_count(const struct sq_model *m, enum sq_dir dir, enum sq_event_type type)
{
	if ((unsigned)dir >= SQ_DIRS || (unsigned)type >= SQ_EV_TYPES)
		return 0;
	uint64_t n = 0;
	for (uint32_t h = 0; h < m->hosts; h++)
		n += m->host[h].dir[dir].counts[type];
	return n;
}

uint64_t sq_model_host_count(const struct sq_model *m, uint32_t host, enum sq_dir dir,
			     enum sq_event_type type)
{
	if (host >= m->hosts || (unsigned)dir >= SQ_DIRS || (unsigned)type >= SQ_EV_TYPES)
		return 0;
	return m->host[host].dir[dir].counts[type];
}

bool sq_model_device_queue(const struct sq_model *m, enum sq_dir dir, uint64_t *pkts,
			   uint64_t *bytes)
{
	if ((unsigned)dir >= SQ_DIRS || !m->host[0].dir[dir].cfg.router.enabled)
		return false;
	*pkts = m->host[0].dir[dir].router.device.count;
	*bytes = m->host[0].dir[dir].router.device.bytes;
	return true;
}

bool sq_model_router_stats(const struct sq_model *m, enum sq_dir dir, size_t cls,
			   struct sq_router_class_stats *out)
{
	if ((unsigned)dir >= SQ_DIRS)
		return false;
	const struct sq_router *r = &m->host[0].dir[dir].router;
	if (!m->host[0].dir[dir].cfg.router.enabled || cls >= r->cfg.n_classes)
		return false;
	const struct sq_router_class_state *st = &r->cls[cls];
	*out = st->stats;
	out->drops = st->stats.tail_drops + st->stats.red_drops + st->stats.dequeue_drops;
	out->backlog_pkts = st->queue.count;
	out->backlog_bytes = st->queue.bytes;
	out->red_avg = sq_router_average(r, cls);
	return true;
}

size_t sq_model_pending(const struct sq_model *m)
{
	return m->pending;
}

const char *sq_event_name(enum sq_event_type type)
{
	static const char *const names[SQ_EV_TYPES] = {
		[SQ_EV_IN] = "in",             [SQ_EV_ENQUEUE] = "enqueue",
		[SQ_EV_DROP_MTU] = "drop_mtu", [SQ_EV_DROP_SBUF] = "drop_sbuf",
		[SQ_EV_DROP_ROUTER] = "drop_router", [SQ_EV_ECN_MARK] = "ecn_mark",
		[SQ_EV_TX] = "tx",             [SQ_EV_HIT] = "hit",
		[SQ_EV_DROP_ERR] = "drop_err", [SQ_EV_RECV] = "recv",
		[SQ_EV_OUT] = "out",           [SQ_EV_STALL] = "stall",
		[SQ_EV_RESUME] = "resume",     [SQ_EV_STATE] = "state",
		[SQ_EV_OUTAGE] = "outage",
		[SQ_EV_DROP_LOSS] = "drop_loss", [SQ_EV_DUPLICATE] = "duplicate",
		[SQ_EV_CORRUPT] = "corrupt",
	};
	return (unsigned)type < SQ_EV_TYPES ? names[type] : "?";
}
