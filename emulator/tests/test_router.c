/* The router stage inside the link model, in virtual time: classification,
 * tail drop at the exact limits, RED's average on the class backlog, ECN marks
 * versus drops by the ECT bits, strict priority and weighted shares at dequeue,
 * no drop_sbuf behind a router, determinism, configuration messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "router_discipline.h"
#include "test_model_support.h"

enum { DSCP_EF = 46, DSCP_AF11 = 10, ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };

struct fixture {
	struct test_link tl;
	struct recorder rec;
	struct sq_model *m;
};

static int setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof *f);
	tl_defaults(&f->tl);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	sq_model_free(f->m);
	rec_release(&f->rec);
	test_free(f);
	return 0;
}

/* Two fixtures side by side, for comparing runs. */
static int setup_pair(void **state)
{
	struct fixture *f = test_calloc(2, sizeof *f);
	tl_defaults(&f[0].tl);
	tl_defaults(&f[1].tl);
	*state = f;
	return 0;
}

static int teardown_pair(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 2; i++) {
		sq_model_free(f[i].m);
		rec_release(&f[i].rec);
	}
	test_free(f);
	return 0;
}

static struct sq_router_config *router(struct fixture *f)
{
	struct sq_router_config *rc = &f->tl.cfg.dir[SQ_DOWN].router;
	rc->enabled = true;
	return rc;
}

static struct sq_router_class *add_class(struct sq_router_config *rc, const char *name,
					 enum sq_qdisc discipline, uint32_t limit)
{
	struct sq_router_class *c = &rc->classes[rc->n_classes++];
	snprintf(c->name, sizeof c->name, "%s", name);
	c->discipline = discipline;
	c->limit = limit;
	return c;
}

static struct sq_router_filter *add_filter(struct sq_router_config *rc, size_t cls)
{
	struct sq_router_filter *flt = &rc->filters[rc->n_filters++];
	flt->class_index = cls;
	return flt;
}

static void set_red(struct sq_router_class *c, uint32_t limit, uint32_t min, uint32_t max,
		    double w_q, bool ecn)
{
	c->discipline = SQ_QDISC_RED;
	c->red = (struct sq_red_config){ .limit = limit, .min = min, .max = max, .avpkt = 500,
					 .max_p = 0.1, .w_q = w_q, .ecn = ecn };
}

/* The down link never finishes a packet: the first one sits in the send buffer
 * (which holds one 1000 B packet), the rest stay in the router. */
static void stop_the_link(struct fixture *f)
{
	static const struct sq_rate_step outage[] = { { 0, 0 } };
	tl_set_rates(&f->tl, SQ_DOWN, 1, outage);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
}

static uint64_t send_pkt(struct fixture *f, sq_time_us t, uint32_t len, uint8_t dscp, uint8_t ecn,
			 uint8_t proto, uint16_t sport, uint16_t dport)
{
	struct sq_pkt_meta meta = { .ip_len = len, .dscp = dscp, .ecn = ecn, .proto = proto,
				    .sport = sport, .dport = dport };
	uint64_t id = sq_model_arrive(f->m, SQ_DOWN, t, &meta, NULL);
	assert_true(id > 0);
	return id;
}

static uint64_t send_simple(struct fixture *f, sq_time_us t, uint32_t len)
{
	return send_pkt(f, t, len, 0, ECN_NOT_ECT, 17, 1000, 2000);
}

static struct sq_router_class_stats stats(struct fixture *f, size_t cls)
{
	struct sq_router_class_stats s;
	assert_true(sq_model_router_stats(f->m, SQ_DOWN, cls, &s));
	return s;
}

/* The type of the last event about packet id (IN: still waiting in the router). */
static enum sq_event_type fate(const struct fixture *f, uint64_t id)
{
	for (size_t i = f->rec.n; i-- > 0;)
		if (f->rec.ev[i].pkt_id == id)
			return f->rec.ev[i].type;
	fail_msg("no event for packet %llu", (unsigned long long)id);
	return SQ_EV_TYPES;
}

/* ---- tail drop ------------------------------------------------------------------- */

static void test_pfifo_drops_at_exactly_limit_packets(void **state)
{
	struct fixture *f = *state;
	stop_the_link(f);
	add_class(router(f), "BE", SQ_QDISC_PFIFO, 3);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t first = send_simple(f, 0, 1000);   /* to the send buffer */
	assert_int_equal(fate(f, first), SQ_EV_TX);
	uint64_t ids[5];
	for (int i = 0; i < 5; i++)
		ids[i] = send_simple(f, 10 * (i + 1), 600);   /* the send buffer has room for none */
	for (int i = 0; i < 3; i++)
		assert_int_equal(fate(f, ids[i]), SQ_EV_IN);   /* waiting in the class queue */
	assert_int_equal(fate(f, ids[3]), SQ_EV_DROP_ROUTER);
	assert_int_equal(fate(f, ids[4]), SQ_EV_DROP_ROUTER);
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.arrivals, 6);
	assert_int_equal(s.enqueued, 1);
	assert_int_equal(s.backlog_pkts, 3);
	assert_int_equal(s.backlog_bytes, 1800);
	assert_int_equal(s.tail_drops, 2);
	assert_int_equal(s.drops, 2);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_ROUTER), 2);
	assert_int_equal(sq_model_pending(f->m), 4);
	long i = rec_find(&f->rec, SQ_EV_DROP_ROUTER, SQ_DOWN, ids[3], -1);
	assert_int_equal(f->rec.ev[i].router_class, 0);
	assert_int_equal(f->rec.ev[i].t, 40);
}

static void test_bfifo_drops_at_exactly_limit_bytes(void **state)
{
	struct fixture *f = *state;
	stop_the_link(f);
	add_class(router(f), "BE", SQ_QDISC_BFIFO, 2500);
	f->m = tl_model(&f->tl, &f->rec);
	send_simple(f, 0, 1000);
	uint64_t a = send_simple(f, 1, 1000), b = send_simple(f, 2, 1000);
	uint64_t exact = send_simple(f, 3, 500);    /* 2500 B: exactly the limit */
	uint64_t over = send_simple(f, 4, 20);      /* 2520 B */
	assert_int_equal(fate(f, a), SQ_EV_IN);
	assert_int_equal(fate(f, b), SQ_EV_IN);
	assert_int_equal(fate(f, exact), SQ_EV_IN);
	assert_int_equal(fate(f, over), SQ_EV_DROP_ROUTER);
	assert_int_equal(stats(f, 0).backlog_bytes, 2500);
}

/* ---- head drop ------------------------------------------------------------------- */

/* The reference for head_drop, written from its definition and not from the model: packets
 * arrive in order at one queue of `limit` packets that nothing leaves; a full queue lets its
 * oldest packet go for each arrival. Returns how many were dropped (their ids in arrival
 * order in dropped[], the arrival that pushed each out in by[]); kept[] gets the rest. */
static size_t reference_head_drop(const uint64_t *ids, size_t n, size_t limit, uint64_t *kept,
				  uint64_t *dropped, size_t *by)
{
	size_t head = 0, nd = 0;
	for (size_t i = 0; i < n; i++) {
		if (i - head == limit) {
			dropped[nd] = ids[head++];
			by[nd++] = i;
		}
	}
	for (size_t i = head; i < n; i++)
		kept[i - head] = ids[i];
	return nd;
}

static void test_head_drop_pushes_out_the_oldest_packets(void **state)
{
	struct fixture *f = *state;
	stop_the_link(f);
	add_class(router(f), "BE", SQ_QDISC_HEAD_DROP, 3);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t first = send_simple(f, 0, 1000);   /* to the send buffer */
	assert_int_equal(fate(f, first), SQ_EV_TX);
	enum { N = 8, LIMIT = 3 };
	uint64_t ids[N], kept[N], dropped[N];
	size_t by[N];
	for (int i = 0; i < N; i++)
		ids[i] = send_simple(f, 10 * (i + 1), 600);
	size_t nd = reference_head_drop(ids, N, LIMIT, kept, dropped, by);
	assert_int_equal(nd, N - LIMIT);
	/* The model's drop_router events are the reference's, in its order and at its times. */
	size_t seen = 0;
	for (size_t i = 0; i < f->rec.n; i++) {
		const struct sq_event *ev = &f->rec.ev[i];
		if (ev->type != SQ_EV_DROP_ROUTER)
			continue;
		assert_true(seen < nd);
		assert_int_equal(ev->pkt_id, dropped[seen]);
		assert_int_equal(ev->t, 10 * (by[seen] + 1));
		assert_int_equal(ev->router_class, 0);
		seen++;
	}
	assert_int_equal(seen, nd);
	for (int i = 0; i < LIMIT; i++)
		assert_int_equal(fate(f, kept[i]), SQ_EV_IN);   /* waiting in the class queue */
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.arrivals, N + 1);
	assert_int_equal(s.enqueued, 1);
	assert_int_equal(s.backlog_pkts, LIMIT);
	assert_int_equal(s.backlog_bytes, LIMIT * 600);
	assert_int_equal(s.tail_drops, nd);
	assert_int_equal(s.drops, nd);
	assert_int_equal(sq_model_pending(f->m), 1 + LIMIT);
}

/* A burst into a queue the link drains: the newest packets are delivered, in order, after the
 * one already in the send buffer; the pushed-out ones never are. */
static void test_head_drop_delivers_the_newest_packets_in_order(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;   /* one of the 1000 B packets at a time */
	add_class(router(f), "BE", SQ_QDISC_HEAD_DROP, 2);
	f->m = tl_model(&f->tl, &f->rec);
	enum { N = 10, LIMIT = 2 };
	uint64_t ids[N], kept[N], dropped[N];
	size_t by[N];
	for (int i = 0; i < N; i++)
		ids[i] = send_simple(f, 0, 1000);   /* one instant: nothing leaves in between */
	size_t nd = reference_head_drop(ids + 1, N - 1, LIMIT, kept, dropped, by);
	sq_model_advance(f->m, 10 * 1000 * 1000);
	uint64_t out[N];
	size_t n_out = 0;
	for (size_t i = 0; i < f->rec.n; i++)
		if (f->rec.ev[i].type == SQ_EV_OUT)
			out[n_out++] = f->rec.ev[i].pkt_id;
	assert_int_equal(n_out, 1 + LIMIT);
	assert_int_equal(out[0], ids[0]);
	for (int i = 0; i < LIMIT; i++)
		assert_int_equal(out[1 + i], kept[i]);
	for (size_t i = 0; i < nd; i++)
		assert_int_equal(fate(f, dropped[i]), SQ_EV_DROP_ROUTER);
	assert_int_equal(sq_model_pending(f->m), 0);
}

static void test_red_limit_is_a_byte_tail_drop_and_average_tracks_backlog(void **state)
{
	struct fixture *f = *state;
	stop_the_link(f);
	set_red(add_class(router(f), "BE", SQ_QDISC_RED, 0), 3000, 2000, 3000, 0.002, false);
	f->m = tl_model(&f->tl, &f->rec);
	static const double avg_after[] = { 0.0, 0.0, 2.0, 5.996 };  /* backlog 0, 0, 1000, 2000 */
	for (int i = 0; i < 4; i++) {
		send_simple(f, i, 1000);
		struct sq_router_class_stats s = stats(f, 0);
		if (!(fabs(s.red_avg - avg_after[i]) <= 1e-12))
			fail_msg("arrival %d: avg %.17g, expected %.17g", i, s.red_avg, avg_after[i]);
	}
	uint64_t over = send_simple(f, 10, 1);   /* 3001 B in the queue */
	assert_int_equal(fate(f, over), SQ_EV_DROP_ROUTER);
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.tail_drops, 1);
	assert_int_equal(s.red_drops, 0);
	assert_int_equal(s.backlog_bytes, 3000);
	if (!(fabs(s.red_avg - 11.984008) <= 1e-12))
		fail_msg("avg %.17g after a 3000 B backlog", s.red_avg);
}

/* The idle period starts when the scheduler empties the class queue; the decay
 * counts avpkt transmissions at the link's rate. */
static void test_red_average_decays_from_the_last_departure(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	set_red(add_class(router(f), "BE", SQ_QDISC_RED, 0), 11000, 2000, 6000, 0.5, false);
	f->m = tl_model(&f->tl, &f->rec);
	send_simple(f, 0, 1000);   /* straight on; serialised until 125 000 us */
	send_simple(f, 0, 1000);   /* backlog 0: avg 0 */
	send_simple(f, 0, 1000);   /* backlog 1000: avg 500 */
	assert_true(stats(f, 0).red_avg == 500.0);
	/* The queue empties at 250 000 us; 100 ms later m = 1.6 at 64 kbit/s. */
	uint64_t last = send_simple(f, 350000, 1000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, 3, -1), 250000);
	double avg = stats(f, 0).red_avg;
	if (!(fabs(avg - 164.93848884661177) <= 1e-9))
		fail_msg("avg %.17g after 100 ms idle", avg);
	sq_model_advance(f->m, 400000);   /* it waits for packet 3's serialisation to end */
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, last, -1), 375000);
}

/* ---- ECN ------------------------------------------------------------------------- */

/* w_q = 1: the average is the backlog. After 1 packet in the send buffer and
 * two queued (2000 B = max), every arrival meets RED's forced region. */
static void fill_to_max(struct fixture *f, bool ecn)
{
	stop_the_link(f);
	set_red(add_class(router(f), "BE", SQ_QDISC_RED, 0), 11000, 1000, 2000, 1.0, ecn);
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fate(f, send_simple(f, i, 1000)), i == 0 ? SQ_EV_TX : SQ_EV_IN);
}

static void test_ecn_marks_ect_and_ce_and_drops_not_ect(void **state)
{
	struct fixture *f = *state;
	fill_to_max(f, true);
	uint64_t not_ect = send_pkt(f, 10, 100, 0, ECN_NOT_ECT, 6, 80, 4000);
	uint64_t ect1 = send_pkt(f, 11, 100, 0, ECN_ECT1, 6, 80, 4000);
	uint64_t ect0 = send_pkt(f, 12, 100, 0, ECN_ECT0, 6, 80, 4000);
	uint64_t ce = send_pkt(f, 13, 100, 0, ECN_CE, 6, 80, 4000);
	assert_int_equal(fate(f, not_ect), SQ_EV_DROP_ROUTER);
	assert_int_equal(fate(f, ect1), SQ_EV_ECN_MARK);   /* then queued: no later event yet */
	assert_int_equal(fate(f, ect0), SQ_EV_ECN_MARK);
	assert_int_equal(fate(f, ce), SQ_EV_ECN_MARK);
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.marks, 3);
	assert_int_equal(s.red_drops, 1);
	assert_int_equal(s.backlog_bytes, 2300);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_ECN_MARK), 3);
}

static void test_without_ecn_red_drops_every_kind(void **state)
{
	struct fixture *f = *state;
	fill_to_max(f, false);
	for (uint8_t ecn = 0; ecn < 4; ecn++)
		assert_int_equal(fate(f, send_pkt(f, 10 + ecn, 100, 0, ecn, 6, 80, 4000)),
				 SQ_EV_DROP_ROUTER);
	assert_int_equal(stats(f, 0).red_drops, 4);
	assert_int_equal(stats(f, 0).marks, 0);
}

static void test_marked_packet_is_delivered(void **state)
{
	struct fixture *f = *state;
	set_red(add_class(router(f), "BE", SQ_QDISC_RED, 0), 11000, 1000, 2000, 1.0, true);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 3; i++)
		send_simple(f, 0, 1000);
	uint64_t ect = send_pkt(f, 0, 1000, 0, ECN_ECT0, 6, 80, 4000);
	sq_model_advance(f->m, 10000000);
	/* 4 × 1000 B at 64 kbit/s, back to back. */
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, ect, 0), 500000);
	assert_true(rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, ect, -1) >= 0);
}

/* ---- CoDel at dequeue ------------------------------------------------------------ */

/* Ten 1000 B packets at t = 0 into a codel class (ecn on) in front of a send buffer of one
 * packet at 64 kbit/s: one leaves every 125 ms. Packet 2 (sojourn 125 ms) starts the
 * interval above target (first_above_time 225 000); packet 3 enters the drop state at
 * 250 000 (drop_next 350 000); then drop_next advances by 100 ms / sqrt(count): 70 710,
 * 57 735, 50 000, 44 721 µs; no signal once at most one MTU (1500 B) is left behind. */
static void codel_burst(struct fixture *f, uint8_t ecn, uint64_t *ids)
{
	struct sq_router_class *c = add_class(router(f), "BE", SQ_QDISC_CODEL, 1000);
	c->codel = (struct sq_codel_config){ .target = 5000, .interval = 100000, .ecn = true };
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 10; i++)
		ids[i] = send_pkt(f, 0, 1000, 0, ecn, 6, 80, 4000);
	sq_model_advance(f->m, 10000000);
}

static void test_codel_marks_ect_packets_as_they_leave(void **state)
{
	struct fixture *f = *state;
	uint64_t id[10];
	codel_burst(f, ECN_ECT0, id);
	static const sq_time_us marked_at[] = { 250000, 375000, 500000, 625000, 750000, 875000 };
	for (int i = 0; i < 10; i++) {
		long at = rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, id[i], -1);
		if (i < 2 || i > 7) {
			assert_true(at < 0);
		} else {
			assert_true(at >= 0);
			assert_int_equal(f->rec.ev[at].t, marked_at[i - 2]);
			/* marked as it leaves: into the send buffer at the same time, then out */
			assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, id[i], -1), marked_at[i - 2]);
		}
		assert_int_equal(fate(f, id[i]), SQ_EV_OUT);
	}
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.marks, 6);
	assert_int_equal(s.drops, 0);
	assert_int_equal(s.enqueued, 10);
}

static void test_codel_drops_not_ect_packets_at_the_head(void **state)
{
	struct fixture *f = *state;
	uint64_t id[10];
	codel_burst(f, ECN_NOT_ECT, id);
	/* 250 000: 3 dropped entering, 4 sent; 375 000: 5 dropped (count 2), 6 sent (drop_next
	 * 420 710); 500 000: 7 and 8 dropped (count 3, 4), 9 sent (1000 B left: below one MTU). */
	static const sq_time_us dropped_at[10] = { [2] = 250000, [4] = 375000, [6] = 500000, [7] = 500000 };
	for (int i = 0; i < 10; i++) {
		if (dropped_at[i]) {
			assert_int_equal(fate(f, id[i]), SQ_EV_DROP_ROUTER);
			assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_ROUTER, SQ_DOWN, id[i], -1), dropped_at[i]);
		} else {
			assert_int_equal(fate(f, id[i]), SQ_EV_OUT);
		}
	}
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, id[8], -1), 500000);
	struct sq_router_class_stats s = stats(f, 0);
	assert_int_equal(s.dequeue_drops, 4);
	assert_int_equal(s.drops, 4);
	assert_int_equal(s.marks, 0);
	assert_int_equal(s.enqueued, 6);
	assert_int_equal(sq_model_pending(f->m), 0);
}

/* ---- FQ-CoDel -------------------------------------------------------------------------- */

/* An fq_codel class of limit packets at 64 kbit/s behind a send buffer of one packet (a
 * 1000 B packet leaves every 125 ms); its CoDel out of the way (target 10 s): the scheduler
 * alone decides. */
static void fq_router(struct fixture *f, uint32_t limit, uint32_t flows, uint32_t quantum)
{
	struct sq_router_class *c = add_class(router(f), "BE", SQ_QDISC_FQ_CODEL, limit);
	c->fq_codel = (struct sq_fq_codel_config){ .target = 10000000, .interval = 20000000, .ecn = true,
						   .quantum = quantum, .flows = flows };
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
}

/* The order in which the packets ids[0..n) moved into the send buffer. */
static void assert_sent_in_order(struct fixture *f, const uint64_t *ids, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < f->rec.n && k < n; i++) {
		if (f->rec.ev[i].type != SQ_EV_ENQUEUE || f->rec.ev[i].dir != SQ_DOWN)
			continue;
		if (f->rec.ev[i].pkt_id != ids[k])
			fail_msg("send %zu: packet %llu, expected %llu", k, (unsigned long long)f->rec.ev[i].pkt_id,
				 (unsigned long long)ids[k]);
		k++;
	}
	assert_int_equal(k, n);
}

/* Flow A's first packet leaves at once and leaves the class empty: the dequeue that finds it
 * so takes A off the lists, and A2 (same t = 0) makes A a new flow again with a quantum of
 * 1514 B. A2 leaves at 125 ms (514 B of deficit left), A3 at 250 ms (-486 B); then A goes to
 * the old list with another quantum and B, a new flow since t = 1 ms, leaves before A4. */
static void test_fq_codel_serves_a_new_flow_ahead_of_an_old_one(void **state)
{
	struct fixture *f = *state;
	fq_router(f, 10240, 1024, 1514);
	uint64_t a[5], b;
	for (int i = 0; i < 5; i++)
		a[i] = send_pkt(f, 0, 1000, 0, 0, 17, 1, 9);
	b = send_pkt(f, 1000, 1000, 0, 0, 17, 2, 9);
	sq_model_advance(f->m, 10000000);
	const uint64_t order[] = { a[0], a[1], a[2], b, a[3], a[4] };
	assert_sent_in_order(f, order, 6);
}

/* With one flow bucket every packet shares one queue: FIFO order, as codel. */
static void test_fq_codel_with_one_flow_is_a_fifo(void **state)
{
	struct fixture *f = *state;
	fq_router(f, 10240, 1, 1514);
	uint64_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = send_pkt(f, i * 1000, 1000, 0, 0, 17, (uint16_t)(1 + i % 3), 9);
	sq_model_advance(f->m, 10000000);
	assert_sent_in_order(f, ids, 6);
}

/* At the limit the arrival stays and the fattest flow loses its oldest packet: A holds 3 of
 * the 4 queued packets (A1 already left), so A2 is dropped for C's packet. */
static void test_fq_codel_drops_the_fattest_flows_head_at_the_limit(void **state)
{
	struct fixture *f = *state;
	fq_router(f, 4, 1024, 1514);
	uint64_t a[4], b, c;
	for (int i = 0; i < 4; i++)
		a[i] = send_pkt(f, 0, 1000, 0, 0, 17, 1, 9);
	b = send_pkt(f, 0, 600, 0, 0, 17, 2, 9);
	c = send_pkt(f, 0, 600, 0, 0, 17, 3, 9);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(fate(f, a[1]), SQ_EV_DROP_ROUTER);
	assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_ROUTER, SQ_DOWN, a[1], -1), 0);
	assert_int_equal(fate(f, c), SQ_EV_OUT);
	assert_int_equal(fate(f, b), SQ_EV_OUT);
	assert_int_equal(stats(f, 0).tail_drops, 1);
	assert_int_equal(sq_model_pending(f->m), 0);
}

/* A quantum below the packet size: a flow earns its next packet over several turns, and two
 * backlogged flows alternate packet by packet (each needs 4 quanta of 256 B for 1000 B). */
static void test_fq_codel_small_quantum_alternates_the_flows(void **state)
{
	struct fixture *f = *state;
	fq_router(f, 10240, 1024, 256);
	uint64_t a[3], b[3];
	for (int i = 0; i < 3; i++) {
		a[i] = send_pkt(f, 0, 1000, 0, 0, 17, 1, 9);
		b[i] = send_pkt(f, 0, 1000, 0, 0, 17, 2, 9);
	}
	sq_model_advance(f->m, 10000000);
	const uint64_t order[] = { a[0], b[0], a[1], b[1], a[2], b[2] };
	assert_sent_in_order(f, order, 6);
}

/* ---- classification and strict priority -------------------------------------------- */

static void three_priority_classes(struct fixture *f)
{
	struct sq_router_config *rc = router(f);
	add_class(rc, "EF", SQ_QDISC_PFIFO, 20)->priority = 0;
	add_class(rc, "AF", SQ_QDISC_PFIFO, 20)->priority = 1;
	add_class(rc, "BE", SQ_QDISC_PFIFO, 20)->priority = 2;
	rc->default_class = 2;
	add_filter(rc, 0)->dscp_mask = 1ull << DSCP_EF | 1ull << 34;
	add_filter(rc, 1)->dscp_mask = 1ull << DSCP_AF11;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
}

static void test_strict_priority_order_at_dequeue(void **state)
{
	struct fixture *f = *state;
	three_priority_classes(f);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t be1 = send_pkt(f, 0, 1000, 0, 0, 6, 1, 2);
	uint64_t be2 = send_pkt(f, 0, 1000, 0, 0, 6, 1, 2);
	uint64_t af1 = send_pkt(f, 0, 1000, DSCP_AF11, 0, 6, 1, 2);
	uint64_t be3 = send_pkt(f, 0, 1000, 0, 0, 6, 1, 2);
	uint64_t ef1 = send_pkt(f, 0, 1000, DSCP_EF, 0, 6, 1, 2);
	uint64_t af2 = send_pkt(f, 0, 1000, DSCP_AF11, 0, 6, 1, 2);
	uint64_t ef2 = send_pkt(f, 0, 1000, 34, 0, 6, 1, 2);
	sq_model_advance(f->m, 2000000);
	/* be1 went straight on; then one packet every 125 000 µs in priority order. */
	const uint64_t order[] = { be1, ef1, ef2, af1, af2, be2, be3 };
	const size_t classes[] = { 2, 0, 0, 1, 1, 2, 2 };
	for (size_t i = 0; i < 7; i++) {
		long k = rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, order[i], -1);
		assert_true(k >= 0);
		assert_int_equal(f->rec.ev[k].t, 125000 * (sq_time_us)i);
		assert_int_equal(f->rec.ev[k].router_class, classes[i]);
		assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, order[i], 0),
				 125000 * (sq_time_us)(i + 1));
	}
	assert_int_equal(stats(f, 0).enqueued, 2);
	assert_int_equal(stats(f, 2).enqueued, 3);
}

static void test_equal_priorities_are_served_in_arrival_order(void **state)
{
	struct fixture *f = *state;
	struct sq_router_config *rc = router(f);
	add_class(rc, "A", SQ_QDISC_PFIFO, 20);
	add_class(rc, "B", SQ_QDISC_PFIFO, 20);
	add_filter(rc, 1)->dscp_mask = 1ull << 2;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
	const uint8_t dscp[] = { 0, 2, 0, 2, 2, 0 };
	uint64_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = send_pkt(f, 0, 1000, dscp[i], 0, 17, 1, 2);
	sq_model_advance(f->m, 2000000);
	for (int i = 0; i < 6; i++)
		assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, ids[i], -1), 125000 * i);
}

static void test_protocol_and_port_ranges_classify(void **state)
{
	struct fixture *f = *state;
	struct sq_router_config *rc = router(f);
	add_class(rc, "UDP", SQ_QDISC_PFIFO, 20);
	add_class(rc, "WEB", SQ_QDISC_PFIFO, 20);
	add_class(rc, "BE", SQ_QDISC_PFIFO, 20);
	rc->default_class = 2;
	struct sq_router_filter *u = add_filter(rc, 0);
	u->match_proto = true;
	u->proto = 17;
	u->match_dport = true;
	u->dport_min = 5000;
	u->dport_max = 5010;
	struct sq_router_filter *w = add_filter(rc, 1);
	w->match_proto = true;
	w->proto = 6;
	w->match_sport = true;
	w->sport_min = w->sport_max = 80;
	f->m = tl_model(&f->tl, &f->rec);
	struct { uint8_t proto; uint16_t sport, dport; uint8_t cls; } cases[] = {
		{ 17, 1, 5000, 0 }, { 17, 1, 5010, 0 }, { 17, 1, 4999, 2 }, { 17, 1, 5011, 2 },
		{ 6, 1, 5005, 2 },  { 6, 80, 1, 1 },    { 6, 81, 1, 2 },    { 17, 80, 1, 2 },
		{ 1, 0, 0, 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t id = send_pkt(f, (sq_time_us)i, 100, 0, 0, cases[i].proto, cases[i].sport,
				       cases[i].dport);
		long k = rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, id, -1);
		assert_true(k >= 0);
		if (f->rec.ev[k].router_class != cases[i].cls)
			fail_msg("case %zu: class %u, expected %u", i, f->rec.ev[k].router_class,
				 cases[i].cls);
	}
}

/* ---- weighted shares -------------------------------------------------------------- */

/* Every class is kept backlogged with packets of mixed sizes; returns the bytes
 * each class moved into the send buffer by `until`. */
static void run_saturated(struct fixture *f, const uint64_t *shares, size_t n, sq_time_us until,
			  uint64_t *bytes)
{
	struct sq_router_config *rc = router(f);
	rc->scheduler = SQ_ROUTER_WEIGHTED;
	for (size_t c = 0; c < n; c++) {
		add_class(rc, "C", SQ_QDISC_PFIFO, 5000)->share_bps = shares[c];
		if (c > 0)
			add_filter(rc, c)->dscp_mask = 1ull << c;
	}
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 3000;
	f->m = tl_model(&f->tl, &f->rec);
	static const uint32_t sizes[] = { 1500, 40, 576, 1000, 296 };
	for (int i = 0; i < 1200; i++)
		for (size_t c = 0; c < n; c++)
			send_pkt(f, 0, sizes[(i + c) % 5], (uint8_t)c, 0, 6, 1, 2);
	sq_model_advance(f->m, until);
	memset(bytes, 0, n * sizeof *bytes);
	for (size_t i = 0; i < f->rec.n; i++)
		if (f->rec.ev[i].type == SQ_EV_ENQUEUE)
			bytes[f->rec.ev[i].router_class] += f->rec.ev[i].ip_len;
	for (size_t c = 0; c < n; c++)
		assert_true(stats(f, c).backlog_pkts > 0);   /* still saturated */
}

static void assert_shares(const uint64_t *bytes, const uint64_t *shares, size_t n, double tol)
{
	uint64_t total = 0, share_total = 0;
	for (size_t c = 0; c < n; c++) {
		total += bytes[c];
		share_total += shares[c];
	}
	for (size_t c = 0; c < n; c++) {
		double got = (double)bytes[c] / (double)total;
		double want = (double)shares[c] / (double)share_total;
		if (fabs(got - want) > tol)
			fail_msg("class %zu moved %.4f of the bytes, expected %.4f", c, got, want);
	}
}

static void test_weighted_shares_over_a_long_run(void **state)
{
	struct fixture *f = *state;
	const uint64_t shares[] = { 48000, 16000 };
	uint64_t bytes[2];
	run_saturated(f, shares, 2, 60000000, bytes);   /* 60 s at 64 kbit/s: 480 000 B */
	assert_shares(bytes, shares, 2, 0.01);
}

static void test_weighted_shares_of_three_classes(void **state)
{
	struct fixture *f = *state;
	const uint64_t shares[] = { 32000, 16000, 80000 };
	uint64_t bytes[3];
	run_saturated(f, shares, 3, 60000000, bytes);
	assert_shares(bytes, shares, 3, 0.01);
}

/* A class's share counts the bytes it sends: equal shares for a pfifo, a CoDel class and a
 * DualPI2 class, all deep in backlog at 1 Mbit/s. CoDel drops at dequeue (a drop costs no
 * deficit: charging them would leave it about a third of the pfifo's bytes), and DualPI2's
 * arrange moves the packet served next to the head after each pop (its target out of the
 * way: it only schedules), so the deficit must be charged with the packet that left (40 B L4S
 * ones and 1500 B classic ones alternate), not with the new head. */
static void test_weighted_shares_count_what_aqm_classes_send(void **state)
{
	struct fixture *f = *state;
	struct sq_router_config *rc = router(f);
	rc->scheduler = SQ_ROUTER_WEIGHTED;
	add_class(rc, "F", SQ_QDISC_PFIFO, 5000)->share_bps = 100000;
	struct sq_router_class *codel = add_class(rc, "C", SQ_QDISC_CODEL, 5000);
	codel->share_bps = 100000;
	codel->codel = (struct sq_codel_config){ .target = 5000, .interval = 100000 };
	add_filter(rc, 1)->dscp_mask = 1ull << 1;
	struct sq_router_class *dual = add_class(rc, "D", SQ_QDISC_DUALPI2, 5000);
	dual->share_bps = 100000;
	dual->dualpi2 = (struct sq_dualpi2_config){ .target = 10000000, .tupdate = 16000, .alpha = 41.0 / 256,
						    .beta = 819.0 / 256, .coupling = 2.0, .step_thresh = 1000,
						    .c_protection = 10.0 };
	add_filter(rc, 2)->dscp_mask = 1ull << 2;
	static const struct sq_rate_step mbit[] = { { 0, 1000000 } };
	tl_set_rates(&f->tl, SQ_DOWN, 1, mbit);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 3000;
	f->m = tl_model(&f->tl, &f->rec);
	static const uint32_t sizes[] = { 1500, 40, 576, 1000, 296 };
	for (int i = 0; i < 4000; i++) {
		send_pkt(f, 0, sizes[i % 5], 0, 0, 6, 1, 2);
		send_pkt(f, 0, sizes[i % 5], 1, ECN_NOT_ECT, 6, 1, 2);
		send_pkt(f, 0, i % 2 ? 40 : 1500, 2, i % 2 ? ECN_ECT1 : ECN_NOT_ECT, 6, 1, 2);
	}
	sq_model_advance(f->m, 5000000);
	uint64_t bytes[3] = { 0 };
	for (size_t i = 0; i < f->rec.n; i++)
		if (f->rec.ev[i].type == SQ_EV_ENQUEUE)
			bytes[f->rec.ev[i].router_class] += f->rec.ev[i].ip_len;
	for (size_t c = 0; c < 3; c++)
		assert_true(stats(f, c).backlog_pkts > 0);   /* still saturated */
	assert_true(stats(f, 1).dequeue_drops > 100);
	const uint64_t shares[] = { 1, 1, 1 };
	assert_shares(bytes, shares, 3, 0.01);
}

static void test_weighted_idle_class_leaves_its_share_to_others(void **state)
{
	struct fixture *f = *state;
	struct sq_router_config *rc = router(f);
	rc->scheduler = SQ_ROUTER_WEIGHTED;
	add_class(rc, "A", SQ_QDISC_PFIFO, 100)->share_bps = 1000;
	add_class(rc, "B", SQ_QDISC_PFIFO, 100)->share_bps = 63000;
	add_filter(rc, 1)->dscp_mask = 1ull << 1;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t ids[10];
	for (int i = 0; i < 10; i++)
		ids[i] = send_simple(f, 0, 1000);   /* all in class A; B idle */
	sq_model_advance(f->m, 10000000);
	for (int i = 0; i < 10; i++)
		assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, ids[i], 0), 125000 * (i + 1));
}

/* ---- the send buffer behind a router ----------------------------------------------- */

static void test_no_drop_sbuf_behind_a_router(void **state)
{
	struct fixture *f = *state;
	add_class(router(f), "BE", SQ_QDISC_PFIFO, 1000);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->tl.cfg.dir[SQ_UP].send_buffer = 1500;   /* no router up: it does drop */
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 50; i++) {
		send_simple(f, i * 1000, 576 + (uint32_t)(i % 3) * 400);
		tl_send(f->m, SQ_UP, i * 1000, 1000);
	}
	sq_model_advance(f->m, 100000000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 0);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_OUT), 50);
	assert_true(sq_model_count(f->m, SQ_UP, SQ_EV_DROP_SBUF) > 0);
	for (size_t i = 0; i < f->rec.n; i++)
		if (f->rec.ev[i].dir == SQ_DOWN)
			assert_true(f->rec.ev[i].sbuf <= 1500);
	assert_int_equal(sq_model_pending(f->m), 0);
	rec_assert_ordered(&f->rec);
}

static void test_a_packet_that_exactly_fills_the_send_buffer_moves_on(void **state)
{
	struct fixture *f = *state;
	add_class(router(f), "BE", SQ_QDISC_PFIFO, 10);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1500;
	f->m = tl_model(&f->tl, &f->rec);
	send_simple(f, 0, 1000);
	uint64_t fits = send_simple(f, 0, 500);    /* sbuf 1500 = send_buffer */
	uint64_t waits = send_simple(f, 0, 1);
	assert_int_equal(fate(f, fits), SQ_EV_ENQUEUE);
	assert_int_equal(f->rec.ev[f->rec.n - 2].sbuf, 1500);
	assert_int_equal(fate(f, waits), SQ_EV_IN);
	sq_model_advance(f->m, 125000);   /* the first packet's serialisation ends */
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, waits, -1), 125000);
}

static void test_mtu_is_checked_before_the_router(void **state)
{
	struct fixture *f = *state;
	add_class(router(f), "BE", SQ_QDISC_PFIFO, 1);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t id = send_simple(f, 0, 1501);
	assert_int_equal(fate(f, id), SQ_EV_DROP_MTU);
	assert_int_equal(stats(f, 0).arrivals, 0);
	struct sq_router_class_stats s;
	assert_false(sq_model_router_stats(f->m, SQ_DOWN, 1, &s));   /* no such class */
	assert_false(sq_model_router_stats(f->m, SQ_UP, 0, &s));     /* no router up */
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* A single FIFO class that never drops, in front of a one-packet send buffer,
 * changes nothing about when packets are sent and delivered: the link sees
 * the same packets in the same order as with one big send buffer. Errors and
 * ARQ are on, so the error stream must stay aligned too. */
static void test_one_fifo_class_keeps_the_link_timing(void **state)
{
	struct fixture *f = state[0], *g = f + 1;
	for (int k = 0; k < 2; k++) {
		struct fixture *x = k ? g : f;
		struct sq_direction_config *dc = &x->tl.cfg.dir[SQ_DOWN];
		dc->error[SQ_GOOD] = 0.3;
		dc->arq_retransmissions = 2;
		dc->arq_delay = 70000;
		dc->recv_buffer = 2000;
		dc->delay = 20000;
		if (k) {
			add_class(router(x), "all", SQ_QDISC_PFIFO, 100000);
			dc->send_buffer = 1500;
		} else {
			dc->send_buffer = 100000000;
		}
		x->m = tl_model(&x->tl, &x->rec);
		uint64_t r = 9;
		sq_time_us t = 0;
		for (int i = 0; i < 2000; i++) {
			t += (sq_time_us)(lcg(&r) % 200000);
			send_simple(x, t, 40 + (uint32_t)(lcg(&r) % 1461));
		}
		sq_model_advance(x->m, t + 1000000000);
	}
	static const enum sq_event_type compared[] = { SQ_EV_TX, SQ_EV_HIT, SQ_EV_DROP_ERR,
						       SQ_EV_RECV, SQ_EV_OUT, SQ_EV_STALL };
	for (size_t c = 0; c < sizeof compared / sizeof compared[0]; c++) {
		size_t i = 0, j = 0;
		for (;;) {
			while (i < f->rec.n && f->rec.ev[i].type != compared[c])
				i++;
			while (j < g->rec.n && g->rec.ev[j].type != compared[c])
				j++;
			if (i == f->rec.n || j == g->rec.n)
				break;
			const struct sq_event *a = &f->rec.ev[i++], *b = &g->rec.ev[j++];
			if (a->t != b->t || a->pkt_id != b->pkt_id || a->attempt != b->attempt)
				fail_msg("%s: packet %llu at %lld without a router, packet %llu at %lld with one",
					 sq_event_name(compared[c]), (unsigned long long)a->pkt_id,
					 (long long)a->t, (unsigned long long)b->pkt_id, (long long)b->t);
		}
		assert_true(i == f->rec.n && j == g->rec.n);
	}
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_OUT), sq_model_count(g->m, SQ_DOWN, SQ_EV_OUT));
	assert_true(sq_model_count(f->m, SQ_DOWN, SQ_EV_HIT) > 100);
	assert_true(sq_model_count(f->m, SQ_DOWN, SQ_EV_STALL) > 0);
	assert_int_equal(sq_model_count(g->m, SQ_DOWN, SQ_EV_DROP_ROUTER), 0);
}

/* Random routers under random traffic keep the bookkeeping exact: every packet
 * ends once (or is still pending), the send buffer never overflows, no drop_sbuf,
 * and each class's statistics add up and agree with its events. */
static void random_router(struct sq_router_config *rc, uint64_t *r)
{
	rc->enabled = true;
	rc->scheduler = lcg(r) % 2 ? SQ_ROUTER_WEIGHTED : SQ_ROUTER_PRIORITY;
	rc->n_classes = 1 + lcg(r) % 4;
	for (size_t c = 0; c < rc->n_classes; c++) {
		struct sq_router_class *k = &rc->classes[c];
		k->priority = (uint8_t)(lcg(r) % 3);
		k->share_bps = 1000 + lcg(r) % 64000;
		k->discipline = (enum sq_qdisc)(lcg(r) % SQ_QDISCS);
		k->limit = sq_router_discipline(k->discipline)->limit_in_bytes ? 1500 + (uint32_t)(lcg(r) % 20000)
									       : 1 + (uint32_t)(lcg(r) % 30);
		k->codel = (struct sq_codel_config){ .target = 1000 + (sq_time_us)(lcg(r) % 10000),
						     .interval = 20000 + (sq_time_us)(lcg(r) % 100000),
						     .ecn = lcg(r) % 2,
						     .ce_threshold = lcg(r) % 2 ? 0 : 500 + (sq_time_us)(lcg(r) % 5000) };
		k->fq_codel = (struct sq_fq_codel_config){ .target = k->codel.target, .interval = k->codel.interval,
							   .ecn = k->codel.ecn, .quantum = 256 + (uint32_t)(lcg(r) % 3000),
							   .flows = 1 + (uint32_t)(lcg(r) % 8) };
		uint32_t min = 500 + (uint32_t)(lcg(r) % 4000);
		k->red = (struct sq_red_config){ .limit = min + 3000, .min = min, .max = min + 2000,
						 .avpkt = 500, .max_p = 0.1, .w_q = 0.02,
						 .ecn = lcg(r) % 2 };
		k->pie = (struct sq_pie_config){ .target = 15000, .tupdate = 15000, .alpha = 0.125,
						 .beta = 1.25, .ecn = k->red.ecn };
		k->dualpi2 = (struct sq_dualpi2_config){ .target = 15000, .tupdate = 16000, .alpha = 0.16,
							 .beta = 3.2, .coupling = 2.0, .step_thresh = 1000,
							 .c_protection = 10.0, .overflow = k->red.ecn };
	}
	rc->default_class = lcg(r) % rc->n_classes;
	rc->device_queue = lcg(r) % 2 ? 0 : 1 + (uint32_t)(lcg(r) % 10);
	rc->n_filters = lcg(r) % 4;
	for (size_t i = 0; i < rc->n_filters; i++) {
		struct sq_router_filter *f = &rc->filters[i];
		f->class_index = lcg(r) % rc->n_classes;
		f->dscp_mask = lcg(r) % 2 ? 1ull << (lcg(r) % 4) : 0;
		f->match_proto = !f->dscp_mask || lcg(r) % 2;
		f->proto = lcg(r) % 2 ? 6 : 17;
		f->match_dport = f->match_proto && lcg(r) % 2;
		f->dport_min = (uint16_t)(lcg(r) % 4);
		f->dport_max = (uint16_t)(f->dport_min + lcg(r) % 2);
	}
}

static void check_bookkeeping(const struct fixture *f, size_t sent)
{
	const struct sq_router_config *rc = &f->tl.cfg.dir[SQ_DOWN].router;
	uint64_t ends = 0, drops[SQ_ROUTER_MAX_CLASSES] = { 0 }, marks[SQ_ROUTER_MAX_CLASSES] = { 0 },
		 enq[SQ_ROUTER_MAX_CLASSES] = { 0 };
	for (size_t i = 0; i < f->rec.n; i++) {
		const struct sq_event *e = &f->rec.ev[i];
		if (e->type == SQ_EV_STATE || e->dir != SQ_DOWN)
			continue;
		assert_true(e->sbuf <= f->tl.cfg.dir[SQ_DOWN].send_buffer);
		ends += e->type == SQ_EV_OUT || e->type == SQ_EV_DROP_ROUTER || e->type == SQ_EV_DROP_ERR;
		if (e->type == SQ_EV_DROP_ROUTER)
			drops[e->router_class]++;
		if (e->type == SQ_EV_ECN_MARK)
			marks[e->router_class]++;
		if (e->type == SQ_EV_ENQUEUE)
			enq[e->router_class]++;
	}
	assert_int_equal(ends + sq_model_pending(f->m), sent);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 0);
	uint64_t arrivals = 0, left = 0, entered = 0, device, device_bytes;
	assert_true(sq_model_device_queue(f->m, SQ_DOWN, &device, &device_bytes));
	assert_true(device <= rc->device_queue);
	for (size_t c = 0; c < rc->n_classes; c++) {
		struct sq_router_class_stats s;
		assert_true(sq_model_router_stats(f->m, SQ_DOWN, c, &s));
		assert_int_equal(s.arrivals, s.enqueued + s.drops + s.backlog_pkts);
		assert_int_equal(s.drops, s.tail_drops + s.red_drops + s.dequeue_drops);
		assert_int_equal(s.drops, drops[c]);
		assert_int_equal(s.marks, marks[c]);
		/* enqueued counts the moves out of the class queue: into the send buffer, or into
		 * the device queue, where `device` packets still wait */
		assert_true(enq[c] <= s.enqueued);
		if (device == 0)
			assert_int_equal(s.enqueued, enq[c]);
		arrivals += s.arrivals;
		left += s.enqueued;
		entered += enq[c];
	}
	assert_int_equal(left, entered + device);
	assert_int_equal(arrivals, sent);
}

static void test_random_routers_keep_exact_bookkeeping(void **state)
{
	struct fixture *f = *state;
	uint64_t r = 77, tail = 0, red = 0, dequeue = 0, marked = 0, moved = 0;
	for (int run = 0; run < 40; run++) {
		sq_model_free(f->m);
		rec_release(&f->rec);
		tl_defaults(&f->tl);
		struct sq_direction_config *dc = &f->tl.cfg.dir[SQ_DOWN];
		dc->send_buffer = 1500 + (uint32_t)(lcg(&r) % 4000);
		dc->error[SQ_GOOD] = 0.1;
		dc->arq_retransmissions = (uint32_t)(lcg(&r) % 3);
		dc->arq_delay = 50000;
		dc->recv_buffer = 3000;
		random_router(&dc->router, &r);
		f->m = tl_model(&f->tl, &f->rec);
		sq_time_us t = 0;
		size_t sent = 300;
		for (size_t i = 0; i < sent; i++) {
			t += (sq_time_us)(lcg(&r) % 150000);
			send_pkt(f, t, 40 + (uint32_t)(lcg(&r) % 1461), (uint8_t)(lcg(&r) % 4),
				 (uint8_t)(lcg(&r) % 4), lcg(&r) % 2 ? 6 : 17, 1, (uint16_t)(lcg(&r) % 4));
			if (i % 100 == 99)
				check_bookkeeping(f, i + 1);
		}
		sq_model_advance(f->m, t + 1000000000);
		check_bookkeeping(f, sent);
		assert_int_equal(sq_model_pending(f->m), 0);
		for (size_t c = 0; c < dc->router.n_classes; c++) {
			struct sq_router_class_stats st;
			assert_true(sq_model_router_stats(f->m, SQ_DOWN, c, &st));
			tail += st.tail_drops;
			red += st.red_drops;
			dequeue += st.dequeue_drops;
			marked += st.marks;
			moved += st.enqueued;
		}
	}
	/* The runs did exercise every way out of a class queue. */
	if (!(tail > 100 && red > 30 && dequeue > 10 && marked > 30 && moved > 1000))
		fail_msg("tail %llu red %llu dequeue %llu marked %llu moved %llu", (unsigned long long)tail,
			 (unsigned long long)red, (unsigned long long)dequeue, (unsigned long long)marked,
			 (unsigned long long)moved);
}

/* ---- determinism ---------------------------------------------------------------- */

/* Bursty traffic into a RED class with early drops and marks. */
static void red_run(struct fixture *f, uint32_t replication)
{
	f->tl.cfg.replication = replication;
	set_red(add_class(router(f), "BE", SQ_QDISC_RED, 0), 11000, 2000, 6000, 0.02, true);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t x = 1;
	sq_time_us t = 0;
	for (int i = 0; i < 3000; i++) {
		t += (sq_time_us)(lcg(&x) % 180000);   /* about 1.1 times the link's rate */
		send_pkt(f, t, 100 + (uint32_t)(lcg(&x) % 1400), 0, (uint8_t)(lcg(&x) % 4), 6, 1, 2);
	}
	sq_model_advance(f->m, t + 100000000);
}

static void test_red_runs_are_bit_identical(void **state)
{
	struct fixture *f = *state, *g;
	red_run(f, 5);
	struct sq_router_class_stats s = stats(f, 0);
	assert_true(s.red_drops > 0 && s.marks > 0);
	g = f + 1;   /* the second fixture of setup_pair */
	red_run(g, 5);
	assert_int_equal(rec_first_difference(&f->rec, &g->rec), -1);
	sq_model_free(g->m);
	rec_release(&g->rec);
	tl_defaults(&g->tl);
	g->m = NULL;
	red_run(g, 6);   /* another replication draws other numbers */
	assert_true(rec_first_difference(&f->rec, &g->rec) >= 0);
}

/* ---- configuration checks -------------------------------------------------------- */

static void expect_refused(struct fixture *f, const char *message)
{
	char err[256] = "";
	struct sq_model *m = sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err);
	sq_model_free(m);
	assert_null(m);
	assert_string_equal(err, message);
}

static void test_config_messages_name_the_field(void **state)
{
	struct fixture *f = *state;
	struct sq_router_config *rc = router(f);
	expect_refused(f, "down.router.classes: 0 classes, expected 1 to 16");
	struct sq_router_class *c = add_class(rc, "EF", SQ_QDISC_RED, 0);
	set_red(c, 11000, 6000, 6000, 0.002, true);
	expect_refused(f, "down.router.class.EF.red.min: must be < max (6000 B), got 6000 B");
	set_red(c, 5000, 2000, 6000, 0.002, true);
	expect_refused(f, "down.router.class.EF.red.max: must be <= limit (5000 B), got 6000 B");
	set_red(c, 11000, 2000, 6000, 0.0, true);
	expect_refused(f, "down.router.class.EF.red.w_q: 0 is outside (0, 1]");
	set_red(c, 11000, 2000, 6000, 0.002, true);
	c->red.max_p = 1.5;
	expect_refused(f, "down.router.class.EF.red.max_p: 1.5 is outside (0, 1]");
	c->red.max_p = 0.1;
	c->red.avpkt = 0;
	expect_refused(f, "down.router.class.EF.red.avpkt: must be >= 1 B, got 0 B");
	c->red.avpkt = 500;
	struct sq_router_class *be = add_class(rc, "", SQ_QDISC_PFIFO, 0);
	expect_refused(f, "down.router.class[1].limit: must be >= 1 packet, got 0");
	be->limit = 10;
	rc->default_class = 2;
	expect_refused(f, "down.router.default: index 2 names no class (there are 2)");
	rc->default_class = 1;
	rc->scheduler = SQ_ROUTER_WEIGHTED;
	expect_refused(f, "down.router.class.EF.share: the weighted scheduler needs a share > 0 bit/s");
	rc->scheduler = SQ_ROUTER_PRIORITY;
	struct sq_router_filter *flt = add_filter(rc, 0);
	snprintf(flt->name, sizeof flt->name, "web");
	flt->match_dport = true;
	expect_refused(f, "down.router.filter.web.dport: a port match needs a protocol match in the same filter");
	flt->match_proto = true;
	flt->dport_min = 10;
	flt->dport_max = 9;
	expect_refused(f, "down.router.filter.web.dport: range 10-9 is empty (first > last)");
	flt->dport_max = 10;
	flt->class_index = 7;
	expect_refused(f, "down.router.filter.web.class: index 7 names no class (there are 2)");
	flt->class_index = 0;
	f->tl.cfg.dir[SQ_UP].router.enabled = true;
	expect_refused(f, "up.router.classes: 0 classes, expected 1 to 16");
	f->tl.cfg.dir[SQ_UP].router.enabled = false;
	f->m = tl_model(&f->tl, &f->rec);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pfifo_drops_at_exactly_limit_packets),
		T(test_bfifo_drops_at_exactly_limit_bytes),
		T(test_head_drop_pushes_out_the_oldest_packets),
		T(test_head_drop_delivers_the_newest_packets_in_order),
		T(test_red_limit_is_a_byte_tail_drop_and_average_tracks_backlog),
		T(test_red_average_decays_from_the_last_departure),
		T(test_ecn_marks_ect_and_ce_and_drops_not_ect),
		T(test_without_ecn_red_drops_every_kind),
		T(test_marked_packet_is_delivered),
		T(test_codel_marks_ect_packets_as_they_leave),
		T(test_codel_drops_not_ect_packets_at_the_head),
		T(test_fq_codel_serves_a_new_flow_ahead_of_an_old_one),
		T(test_fq_codel_with_one_flow_is_a_fifo),
		T(test_fq_codel_drops_the_fattest_flows_head_at_the_limit),
		T(test_fq_codel_small_quantum_alternates_the_flows),
		T(test_strict_priority_order_at_dequeue),
		T(test_equal_priorities_are_served_in_arrival_order),
		T(test_protocol_and_port_ranges_classify),
		T(test_weighted_shares_over_a_long_run),
		T(test_weighted_shares_of_three_classes),
		T(test_weighted_shares_count_what_aqm_classes_send),
		T(test_weighted_idle_class_leaves_its_share_to_others),
		T(test_no_drop_sbuf_behind_a_router),
		T(test_a_packet_that_exactly_fills_the_send_buffer_moves_on),
		T(test_mtu_is_checked_before_the_router),
		cmocka_unit_test_setup_teardown(test_one_fifo_class_keeps_the_link_timing, setup_pair, teardown_pair),
		T(test_random_routers_keep_exact_bookkeeping),
		cmocka_unit_test_setup_teardown(test_red_runs_are_bit_identical, setup_pair, teardown_pair),
		T(test_config_messages_name_the_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
