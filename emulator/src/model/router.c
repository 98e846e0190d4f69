#include "router.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* ---- set-up ------------------------------------------------------------------------- */

/* Quanta proportional to the shares; the smallest share gets one MTU per turn,
 * so every class can send at least its head packet in each of its turns. */
static void set_quanta(struct sq_router *r, uint32_t mtu)
{
	uint64_t smallest = UINT64_MAX;
	for (size_t i = 0; i < r->cfg.n_classes; i++)
		if (r->cfg.classes[i].share_bps < smallest)
			smallest = r->cfg.classes[i].share_bps;
	for (size_t i = 0; i < r->cfg.n_classes; i++) {
		double q = ceil((double)mtu * ((double)r->cfg.classes[i].share_bps / (double)smallest));
		r->cls[i].quantum = q > 0x1p52 ? (uint64_t)0x1p52 : (uint64_t)q;
		if (r->cls[i].quantum < mtu)
			r->cls[i].quantum = mtu;
	}
}

bool sq_router_init(struct sq_router *r, const struct sq_router_config *cfg, uint32_t mtu,
		    uint64_t seed, uint32_t replication, uint32_t stream, uint32_t hash_stream)
{
	memset(r, 0, sizeof *r);
	r->cfg = *cfg;
	bool ok = true;
	for (size_t i = 0; i < cfg->n_classes; i++) {
		sq_rqueue_init(&r->cls[i].queue);
		const struct sq_router_discipline *ops = sq_router_discipline(cfg->classes[i].discipline);
		if (ops->init && !ops->init(&r->cls[i].state, &cfg->classes[i], mtu))
			ok = false;   /* release frees what the others allocated */
	}
	sq_rqueue_init(&r->device);
	r->flow_key = sq_stream_key(seed, replication, hash_stream);
	if (cfg->scheduler == SQ_ROUTER_WEIGHTED)
		set_quanta(r, mtu);
	sq_rng_init(&r->rng, seed, replication, stream);
	/* The device queue's whole room now: it fills while packets move on, which must not fail. */
	return ok && (cfg->device_queue == 0 || sq_rqueue_reserve_total(&r->device, cfg->device_queue));
}

void sq_router_release(struct sq_router *r)
{
	for (size_t i = 0; i < r->cfg.n_classes; i++) {
		const struct sq_router_discipline *ops = sq_router_discipline(r->cfg.classes[i].discipline);
		if (ops->release)
			ops->release(&r->cls[i].state);
		sq_rqueue_release(&r->cls[i].queue);
	}
	sq_rqueue_release(&r->device);
}

/* ---- classification ----------------------------------------------------------------- */

static bool in_range(uint16_t v, uint16_t lo, uint16_t hi)
{
	return v >= lo && v <= hi;
}

static bool filter_matches(const struct sq_router_filter *f, const struct sq_pkt_meta *meta)
{
	if (f->dscp_mask && !(f->dscp_mask >> (meta->dscp & 63) & 1))
		return false;
	if (f->match_proto && meta->proto != f->proto)
		return false;
	if (f->match_sport && !in_range(meta->sport, f->sport_min, f->sport_max))
		return false;
	if (f->match_dport && !in_range(meta->dport, f->dport_min, f->dport_max))
		return false;
	return true;
}

size_t sq_router_classify(const struct sq_router_config *cfg, const struct sq_pkt_meta *meta)
{
	for (size_t i = 0; i < cfg->n_filters; i++)
		if (filter_matches(&cfg->filters[i], meta))
			return cfg->filters[i].class_index;
	return cfg->default_class;
}

/* ---- admission ---------------------------------------------------------------------- */

bool sq_router_reserve(struct sq_router *r, size_t cls)
{
	return sq_rqueue_reserve(&r->cls[cls].queue);
}

static const struct sq_router_discipline *discipline_of(const struct sq_router *r, size_t cls)
{
	return sq_router_discipline(r->cfg.classes[cls].discipline);
}

/* The class queue changed by one packet: the discipline may reorder it (arrange). */
static void arrange(struct sq_router *r, size_t cls)
{
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	if (ops->arrange)
		ops->arrange(&r->cls[cls].state, &r->cfg.classes[cls], &r->cls[cls].queue);
}

/* The class queue is empty at now: the discipline notes it. */
static void note_empty(struct sq_router *r, size_t cls, sq_time_us now)
{
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	if (ops->on_empty)
		ops->on_empty(&r->cls[cls].state, now);
}

enum sq_router_verdict sq_router_judge(struct sq_router *r, size_t cls,
				       const struct sq_pkt_meta *meta, sq_time_us now,
				       uint64_t rate_bps)
{
	const struct sq_router_class *c = &r->cfg.classes[cls];
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	struct sq_router_class_state *st = &r->cls[cls];
	st->stats.arrivals++;
	enum sq_router_verdict v = SQ_ROUTER_ADMIT;
	if (ops->signal)
		v = ops->signal(&st->state, c, &st->queue, meta, now, rate_bps, &r->rng);
	if (v == SQ_ROUTER_DROP) {
		st->stats.red_drops++;
	} else if (ops->over_limit(c, &st->queue, meta->ip_len)) {
		if (ops->drops_from_head && st->queue.count > 0) {
			v = SQ_ROUTER_DROP_HEAD;
		} else {
			v = SQ_ROUTER_DROP;
			st->stats.tail_drops++;
		}
	}
	if (v == SQ_ROUTER_DROP) {
		if (st->queue.count == 0)
			note_empty(r, cls, now);   /* still empty: idle from now on */
	} else if (v == SQ_ROUTER_MARK) {
		st->stats.marks++;
	}
	return v;
}

bool sq_router_push_out(struct sq_router *r, size_t cls, uint32_t ip_len, struct sq_router_pkt *out)
{
	struct sq_router_class_state *st = &r->cls[cls];
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	if (st->queue.count == 0 || !ops->over_limit(&r->cfg.classes[cls], &st->queue, ip_len))
		return false;
	if (ops->victim)
		sq_rqueue_to_front(&st->queue, ops->victim(&st->state, &r->cfg.classes[cls], &st->queue));
	*out = sq_rqueue_pop(&st->queue);
	arrange(r, cls);
	r->queued--;
	st->stats.tail_drops++;
	return true;
}

double sq_router_average(const struct sq_router *r, size_t cls)
{
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	return ops->average ? ops->average(&r->cls[cls].state) : 0.0;
}

static void drr_append(struct sq_router *r, size_t cls)
{
	r->active[(r->active_head + r->active_len) % SQ_ROUTER_MAX_CLASSES] = cls;
	r->active_len++;
	r->cls[cls].active = true;
}

/* Eight bytes as a big-endian number. */
static uint64_t be64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

uint32_t sq_router_flow_hash(const struct sq_router *r, const struct sq_pkt_meta *meta)
{
	const uint64_t words[5] = { be64(meta->src), be64(meta->src + 8), be64(meta->dst), be64(meta->dst + 8),
				    (uint64_t)meta->proto << 32 | (uint64_t)meta->sport << 16 | meta->dport };
	uint64_t x = r->flow_key;
	for (int i = 0; i < 5; i++) {
		uint64_t k = x ^ words[i];
		x = sq_splitmix64(&k);
	}
	return (uint32_t)(x >> 32);
}

void sq_router_enqueue(struct sq_router *r, size_t cls, uint64_t id, void *user, uint32_t ip_len,
		       uint8_t ecn, uint32_t flow_hash, sq_time_us now)
{
	struct sq_router_pkt p = { .id = id, .user = user, .ip_len = ip_len, .cls = (uint8_t)cls,
				   .ecn = ecn, .order = r->next_order++, .queued_at = now, .flow_hash = flow_hash };
	struct sq_router_class_state *st = &r->cls[cls];
	sq_rqueue_push(&st->queue, &p);
	arrange(r, cls);
	r->queued++;
	if (r->cfg.scheduler == SQ_ROUTER_WEIGHTED && !st->active)
		drr_append(r, cls);
}

/* ---- scheduling --------------------------------------------------------------------- */

/* Lowest priority number first; among equal priorities the earliest arrival. */
static const struct sq_router_pkt *class_head(const struct sq_router *r, size_t cls)
{
	return sq_rqueue_head(&r->cls[cls].queue);
}

static bool select_priority(const struct sq_router *r, size_t *cls)
{
	bool found = false;
	for (size_t i = 0; i < r->cfg.n_classes; i++) {
		if (r->cls[i].queue.count == 0)
			continue;
		if (found) {
			uint8_t pi = r->cfg.classes[i].priority, pb = r->cfg.classes[*cls].priority;
			if (pi > pb || (pi == pb && class_head(r, i)->order > class_head(r, *cls)->order))
				continue;
		}
		*cls = i;
		found = true;
	}
	return found;
}

/* Deficit round robin in bytes: the class at the head of the active list adds
 * its quantum once per turn and is served while its head packet fits in its
 * deficit; then its turn ends and it goes to the tail. */
static bool select_weighted(struct sq_router *r, size_t *cls)
{
	while (r->active_len > 0) {
		size_t c = r->active[r->active_head];
		struct sq_router_class_state *st = &r->cls[c];
		if (!st->turn_started) {
			st->deficit += st->quantum;
			st->turn_started = true;
		}
		if (class_head(r, c)->ip_len <= st->deficit) {
			*cls = c;
			return true;
		}
		st->turn_started = false;
		r->active_head = (r->active_head + 1) % SQ_ROUTER_MAX_CLASSES;
		r->active[(r->active_head + r->active_len - 1) % SQ_ROUTER_MAX_CLASSES] = c;
	}
	return false;
}

/* The class served next, or false if every class queue is empty. Calling it again
 * without a dequeue gives the same class. */
static bool select_class(struct sq_router *r, size_t *cls)
{
	if (r->queued == 0)
		return false;
	return r->cfg.scheduler == SQ_ROUTER_WEIGHTED ? select_weighted(r, cls)
						      : select_priority(r, cls);
}

/* The served class's queue ran empty: it leaves the DRR list with no credit. */
static void drr_retire_head(struct sq_router *r, struct sq_router_class_state *st)
{
	st->deficit = 0;
	st->turn_started = false;
	st->active = false;
	r->active_head = (r->active_head + 1) % SQ_ROUTER_MAX_CLASSES;
	r->active_len--;
}

/* Removes the head of the selected class cls at now into *out, its fate decided by the
 * class's discipline (router_discipline.h on_dequeue) and reported through report unless
 * SQ_ROUTER_SEND; false if it was dropped. */
static bool dequeue_class(struct sq_router *r, size_t cls, sq_time_us now,
			  const struct sq_router_report *report, struct sq_router_pkt *out)
{
	struct sq_router_class_state *st = &r->cls[cls];
	const struct sq_router_discipline *ops = discipline_of(r, cls);
	enum sq_router_fate fate = SQ_ROUTER_SEND;
	if (ops->on_dequeue)
		fate = ops->on_dequeue(&st->state, &r->cfg.classes[cls], &st->queue,
				       sq_rqueue_head(&st->queue), now, &r->rng);
	struct sq_router_pkt p = sq_rqueue_pop(&st->queue);
	/* Right after the pop, so that the weighted scheduler's fit test sees the packet that
	 * leaves next; the deficit below is charged with p, the packet that left. */
	arrange(r, cls);
	r->queued--;
	if (fate == SQ_ROUTER_DROP_OUT) {
		st->stats.dequeue_drops++;
	} else {
		st->stats.enqueued++;
		if (fate == SQ_ROUTER_SEND_CE) {
			st->stats.marks++;
			p.ecn = 3;
		}
	}
	if (fate != SQ_ROUTER_SEND)
		report->fn(report->ctx, &p, fate);
	if (r->cfg.scheduler == SQ_ROUTER_WEIGHTED) {
		if (fate != SQ_ROUTER_DROP_OUT)
			st->deficit -= p.ip_len;   /* a class's share counts what it sends */
		if (st->queue.count == 0)
			drr_retire_head(r, st);
	}
	if (st->queue.count == 0)
		note_empty(r, cls, now);
	*out = p;
	return fate != SQ_ROUTER_DROP_OUT;
}

/* ---- the device queue ---------------------------------------------------------------- */

/* Moves packets from the class queues into the device queue while it has room. */
static void fill_device(struct sq_router *r, sq_time_us now, const struct sq_router_report *report)
{
	size_t cls;
	struct sq_router_pkt p;
	while (r->device.count < r->cfg.device_queue && select_class(r, &cls))
		if (dequeue_class(r, cls, now, report, &p))
			sq_rqueue_push(&r->device, &p);   /* its whole room was reserved at init */
}

const struct sq_router_pkt *sq_router_next(struct sq_router *r, sq_time_us now,
					   const struct sq_router_report *report)
{
	if (r->cfg.device_queue > 0) {
		fill_device(r, now, report);
		return r->device.count ? sq_rqueue_head(&r->device) : NULL;
	}
	size_t cls;
	return select_class(r, &cls) ? class_head(r, cls) : NULL;
}

bool sq_router_take(struct sq_router *r, sq_time_us now, const struct sq_router_report *report,
		    struct sq_router_pkt *out)
{
	if (r->cfg.device_queue > 0) {
		*out = sq_rqueue_pop(&r->device);   /* judged on its way in (fill_device) */
		return true;
	}
	size_t cls;
	bool found = select_class(r, &cls);
	assert(found && "sq_router_take without a packet from sq_router_next");
	(void)found;
	return dequeue_class(r, cls, now, report, out);
}
