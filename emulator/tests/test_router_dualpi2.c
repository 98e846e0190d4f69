/* DualPI2 of the router stage: the PI2 update against hand-computed values, the coupled and
 * squared decisions and the overload rules for a known random stream, and in the link model
 * the classification by ECT(1)/CE, the weighted round robin's 90/10 split, the L queue's step
 * marks, and the coupling p_C = (p_L / k)^2 over a long saturated run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "router_dualpi2.h"
#include "test_model_support.h"

enum { MTU = 1000, ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };

static const struct sq_dualpi2_config dflt = {
	.target = 15000, .tupdate = 16000, .alpha = 41.0 / 256, .beta = 819.0 / 256, .coupling = 2.0,
	.step_thresh = 1000, .c_protection = 10.0,
};

static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.17g, expected %.17g (within %g)", got, want, eps);
}

/* ---- the controller on its own ------------------------------------------------------ */

static void test_init_credit_favours_the_l_queue(void **state)
{
	(void)state;
	struct sq_dualpi2_state s;
	sq_dualpi2_init(&s, &dflt, MTU);
	assert_true(s.prob == 0.0);
	assert_int_equal(s.credit_init, -80 * MTU);   /* mtu x (10 - 90) */
	assert_int_equal(s.credit, s.credit_init);
}

/* p' += alpha (qdelay - target) + beta (qdelay - last), qdelay the larger head sojourn at the
 * update's time; clamped to [0, 1]; with overflow at most 1/k. */
static void test_pi2_update(void **state)
{
	(void)state;
	struct sq_dualpi2_state s;
	sq_dualpi2_init(&s, &dflt, MTU);
	s.has_c = true;
	s.c_head_at = 0;
	s.has_l = true;
	s.l_head_at = 30000;          /* younger: C's 40 ms count at t = 40 ms */
	sq_dualpi2_update(&s, &dflt, 40000);
	double p = 41.0 / 256 * 0.025 + 819.0 / 256 * 0.040;
	assert_near(s.prob, p, 1e-15);
	assert_int_equal(s.last_qdelay, 40000);
	sq_dualpi2_update(&s, &dflt, 56000);   /* 56 ms: + alpha 0.041 + beta 0.016 */
	p += 41.0 / 256 * 0.041 + 819.0 / 256 * 0.016;
	assert_near(s.prob, p, 1e-15);
	s.has_c = s.has_l = false;             /* empty: the delay is 0 */
	sq_dualpi2_update(&s, &dflt, 72000);
	p += 41.0 / 256 * -0.015 + 819.0 / 256 * -0.056;
	assert_near(s.prob, p, 1e-15);
	for (sq_time_us t = 88000; t <= 136000; t += 16000)
		sq_dualpi2_update(&s, &dflt, t);   /* alpha x -15 ms each: below 0, clamped */
	assert_true(s.prob == 0.0);
	struct sq_dualpi2_config over = dflt;   /* overflow: p' at most 1 / k */
	over.overflow = true;
	s.prob = 0.45;
	s.has_c = true;
	s.c_head_at = 72000;
	s.last_qdelay = 0;
	sq_dualpi2_update(&s, &over, 100000);   /* + alpha 0.013 + beta 0.028: above 0.5 */
	assert_true(s.prob == 0.5);
}

/* Lazy updates equal a timer at k x 16 ms; an idle queue with p' = 0 is a fixed point. */
static void test_catch_up_is_a_timer(void **state)
{
	(void)state;
	struct sq_dualpi2_state lazy, timer;
	sq_dualpi2_init(&lazy, &dflt, MTU);
	lazy.has_c = true;
	lazy.c_head_at = 1000;
	timer = lazy;
	sq_dualpi2_catch_up(&lazy, &dflt, 100000);
	for (int k = 1; k <= 6; k++)
		sq_dualpi2_update(&timer, &dflt, k * 16000);
	assert_int_equal(lazy.last_update, 96000);
	assert_true(memcmp(&lazy.prob, &timer.prob, sizeof lazy.prob) == 0);
	lazy.has_c = timer.has_c = false;
	sq_dualpi2_catch_up(&lazy, &dflt, 10000000);
	for (int k = 7; k <= 625; k++)
		sq_dualpi2_update(&timer, &dflt, k * 16000);
	assert_int_equal(lazy.last_update, 625 * 16000);
	assert_true(lazy.prob == 0.0 && timer.prob == 0.0);
}

static struct sq_rng stream(void)
{
	struct sq_rng r;
	sq_rng_init(&r, 9, 1, SQ_STREAM_ROUTER_DOWN);
	return r;
}

/* Below two MTUs left behind: no AQM, no draw; the step still marks an L packet. */
static void test_no_aqm_below_two_mtus_but_the_step(void **state)
{
	(void)state;
	struct sq_dualpi2_state s;
	sq_dualpi2_init(&s, &dflt, MTU);
	s.prob = 1.0;
	struct sq_rng r = stream(), before = r;
	assert_int_equal(sq_dualpi2_judge(&s, &dflt, ECN_NOT_ECT, 0, 500, 2 * MTU - 1, &r), SQ_DUALPI2_SEND);
	assert_int_equal(sq_dualpi2_judge(&s, &dflt, ECN_ECT1, 0, 1000, 2 * MTU - 1, &r), SQ_DUALPI2_SEND);
	assert_int_equal(sq_dualpi2_judge(&s, &dflt, ECN_ECT1, 0, 1001, 2 * MTU - 1, &r), SQ_DUALPI2_MARK);
	assert_int_equal(sq_dualpi2_judge(&s, &dflt, ECN_CE, 0, 1001, 0, &r), SQ_DUALPI2_MARK);
	assert_true(memcmp(&r, &before, sizeof r) == 0);
}

/* The decisions against the same stream, drawn here: C: two rolls against p' (drop a
 * Not-ECT, mark an ECT(0)); L: one roll against k p'. */
static void test_squared_and_coupled_decisions(void **state)
{
	(void)state;
	struct sq_dualpi2_state s;
	sq_dualpi2_init(&s, &dflt, MTU);
	s.prob = 0.3;
	struct sq_rng r = stream(), ref = stream();
	for (int i = 0; i < 2000; i++) {
		uint8_t ecn = (uint8_t)(i % 4);
		enum sq_dualpi2_action want = SQ_DUALPI2_SEND;
		if (sq_dualpi2_is_l4s(ecn)) {
			if (sq_rng_uniform01(&ref) < 0.6)
				want = SQ_DUALPI2_MARK;
		} else if (sq_rng_uniform01(&ref) < 0.3 && sq_rng_uniform01(&ref) < 0.3) {
			want = ecn == ECN_NOT_ECT ? SQ_DUALPI2_DROP : SQ_DUALPI2_MARK;
		}
		assert_int_equal(sq_dualpi2_judge(&s, &dflt, ecn, 0, 500, 10 * MTU, &r), want);
	}
}

/* Overload (k p' > 1): a C packet is dropped with p'^2 even if ECT(0); an L packet is
 * dropped with p'^2 and marked otherwise; with overflow an L packet is always marked. */
static void test_overload(void **state)
{
	(void)state;
	struct sq_dualpi2_state s;
	sq_dualpi2_init(&s, &dflt, MTU);
	s.prob = 0.7;
	struct sq_dualpi2_config over = dflt;
	over.overflow = true;
	struct sq_rng r = stream(), ref = stream();
	int drops_c = 0, drops_l = 0, marks_l = 0;
	for (int i = 0; i < 4000; i++) {
		bool both = sq_rng_uniform01(&ref) < 0.7 && sq_rng_uniform01(&ref) < 0.7;
		enum sq_dualpi2_action a = sq_dualpi2_judge(&s, &dflt, i % 2 ? ECN_ECT0 : ECN_ECT1, 0, 500, 10 * MTU, &r);
		if (i % 2) {
			assert_int_equal(a, both ? SQ_DUALPI2_DROP : SQ_DUALPI2_SEND);
			drops_c += a == SQ_DUALPI2_DROP;
		} else {
			assert_int_equal(a, both ? SQ_DUALPI2_DROP : SQ_DUALPI2_MARK);
			drops_l += a == SQ_DUALPI2_DROP;
			marks_l += a == SQ_DUALPI2_MARK;
		}
	}
	assert_true(drops_c > 900 && drops_c < 1060);   /* 2000 x 0.49 = 980 */
	assert_int_equal(drops_l + marks_l, 2000);
	struct sq_rng r2 = stream(), before = r2;
	for (int i = 0; i < 100; i++)
		assert_int_equal(sq_dualpi2_judge(&s, &over, ECN_ECT1, 0, 500, 10 * MTU, &r2), SQ_DUALPI2_MARK);
	assert_true(memcmp(&r2, &before, sizeof r2) == 0);   /* overflow: no dice */
}

/* ---- in the link model ------------------------------------------------------------ */

static struct sq_router_class *dualpi2_router(struct model_fixture *f, uint32_t limit)
{
	struct sq_router_config *rc = &f->tl.cfg.dir[SQ_DOWN].router;
	f->tl.cfg.dir[SQ_DOWN].mtu = MTU;
	rc->enabled = true;
	rc->n_classes = 1;
	struct sq_router_class *c = &rc->classes[0];
	snprintf(c->name, sizeof c->name, "all");
	c->discipline = SQ_QDISC_DUALPI2;
	c->limit = limit;
	c->dualpi2 = dflt;
	return c;
}

static uint64_t send_ecn(struct sq_model *m, sq_time_us t, uint32_t len, uint8_t ecn)
{
	struct sq_pkt_meta meta = { .ip_len = len, .ecn = ecn, .proto = 17 };
	uint64_t id = sq_model_arrive(m, SQ_DOWN, t, &meta, NULL);
	assert_true(id > 0);
	return id;
}

/* 200 C packets, then 200 L packets, all at t = 0 into a stopped link; the link then runs:
 * the L packets (ECT(1) and CE) leave first, 9 for every C packet, until L is empty. */
static void test_l_first_and_the_wrr_split(void **state)
{
	struct model_fixture *f = *state;
	dualpi2_router(f, 10000)->dualpi2.target = 10000000;   /* no AQM in the way */
	f->tl.cfg.dir[SQ_DOWN].send_buffer = MTU;
	static const struct sq_rate_step rate[] = { { 0, 8000000 } };   /* 1 ms per 1000 B */
	tl_set_rates(&f->tl, SQ_DOWN, 1, rate);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t first_l = 0;
	for (int i = 0; i < 400; i++) {
		uint64_t id = send_ecn(f->m, 0, MTU, i < 200 ? (i % 2 ? ECN_NOT_ECT : ECN_ECT0) : (i % 2 ? ECN_ECT1 : ECN_CE));
		if (i == 200)
			first_l = id;
	}
	sq_model_advance(f->m, 1000000);
	size_t l = 0, c = 0, order = 0;
	for (size_t i = 0; i < f->rec.n; i++) {
		const struct sq_event *e = &f->rec.ev[i];
		if (e->type != SQ_EV_ENQUEUE || e->dir != SQ_DOWN)
			continue;
		order++;
		if (order == 1)
			continue;   /* the first C packet went straight into the empty send buffer */
		bool is_l = e->pkt_id >= first_l;
		if (l < 200 && order <= 201) {
			l += is_l;
			c += !is_l;
		}
	}
	/* of the 200 after the first: 180 L and 20 C, 9 to 1 */
	assert_int_equal(l, 180);
	assert_int_equal(c, 20);
	assert_int_equal(rec_count(&f->rec, SQ_EV_DROP_ROUTER), 0);
}

/* An L packet that waited more than 1 ms is marked by the step; one that did not, is not. */
static void test_step_marks_l_packets_only(void **state)
{
	struct model_fixture *f = *state;
	dualpi2_router(f, 10000);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = MTU;
	static const struct sq_rate_step rate[] = { { 0, 8000000 } };   /* 1 ms per 1000 B */
	tl_set_rates(&f->tl, SQ_DOWN, 1, rate);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t a = send_ecn(f->m, 0, MTU, ECN_ECT1);       /* straight into the send buffer */
	uint64_t b = send_ecn(f->m, 0, MTU, ECN_ECT1);       /* waits 1 ms: not more */
	uint64_t c = send_ecn(f->m, 0, MTU, ECN_ECT1);       /* waits 2 ms: marked */
	uint64_t d = send_ecn(f->m, 0, MTU, ECN_NOT_ECT);    /* C: waits 3 ms, no step */
	sq_model_advance(f->m, 100000);
	assert_int_equal(rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, a, -1), -1);
	assert_int_equal(rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, b, -1), -1);
	assert_true(rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, c, -1) >= 0);
	assert_int_equal(rec_find(&f->rec, SQ_EV_ECN_MARK, SQ_DOWN, d, -1), -1);
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, d, -1), 3000);
}

/* 60 s at 20 Mbit/s: Not-ECT packets at 19.2 Mbit/s beside ECT(1) packets at 1.6 Mbit/s, so
 * the C queue is saturated (p' steers its delay to 15 ms, about 4 % of its packets dropped)
 * while the L queue stays nearly empty (an L packet waits at most two 0.4 ms transmissions,
 * under the 1 ms step, so its marks are the coupled ones). From 10 s on, the classic drop
 * probability is the square of the L mark probability / k: p_C = E[p'^2] and
 * (p_L / k)^2 = E[p']^2, equal but for the variance of p', which is small in this steady
 * state. Measured: p_C 0.0416, (p_L / 2)^2 0.0392 (p_L 0.396). Bound: within 10 % of each
 * other, each count in the thousands. */
static void test_coupling_over_a_long_run(void **state)
{
	struct model_fixture *f = *state;
	dualpi2_router(f, 10000);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = MTU;
	static const struct sq_rate_step rate[] = { { 0, 20000000 } };
	tl_set_rates(&f->tl, SQ_DOWN, 1, rate);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t first = 0;
	for (sq_time_us t = 0; t < 60000000; t += 5000) {
		for (int i = 0; i < 12; i++) {   /* 12 x 1000 B per 5 ms: 19.2 Mbit/s */
			uint64_t id = send_ecn(f->m, t + i * 416, MTU, ECN_NOT_ECT);
			first = first ? first : id;
			if (i == 0)
				send_ecn(f->m, t + 208, MTU, ECN_ECT1);   /* 1.6 Mbit/s */
		}
	}
	sq_model_advance(f->m, 70000000);
	/* 13 packets per 5 ms: the second of each group is the L4S one */
	size_t c_judged = 0, c_dropped = 0, l_judged = 0, l_marked = 0;
	for (size_t i = 0; i < f->rec.n; i++) {
		const struct sq_event *e = &f->rec.ev[i];
		if (e->type == SQ_EV_STATE || e->dir != SQ_DOWN || e->t < 10000000)
			continue;   /* the first 10 s: the controller settles */
		bool l4s = (e->pkt_id - first) % 13 == 1;
		if (e->type == SQ_EV_ENQUEUE) {
			c_judged += !l4s;
			l_judged += l4s;
		} else if (e->type == SQ_EV_DROP_ROUTER) {
			assert_false(l4s);
			c_judged++;
			c_dropped++;
		} else if (e->type == SQ_EV_ECN_MARK) {
			assert_true(l4s);
			l_marked++;
		}
	}
	double p_c = (double)c_dropped / (double)c_judged, p_l = (double)l_marked / (double)l_judged;
	double coupled = (p_l / 2.0) * (p_l / 2.0);
	print_message("p_C %.4f (%zu of %zu), p_L %.4f (%zu of %zu), (p_L/k)^2 %.4f\n", p_c, c_dropped,
		      c_judged, p_l, l_marked, l_judged, coupled);
	assert_true(c_dropped > 1000 && l_marked > 1000);
	assert_true(fabs(p_c - coupled) <= 0.1 * p_c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_credit_favours_the_l_queue),
		cmocka_unit_test(test_pi2_update),
		cmocka_unit_test(test_catch_up_is_a_timer),
		cmocka_unit_test(test_no_aqm_below_two_mtus_but_the_step),
		cmocka_unit_test(test_squared_and_coupled_decisions),
		cmocka_unit_test(test_overload),
		cmocka_unit_test_setup_teardown(test_l_first_and_the_wrr_split, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_step_marks_l_packets_only, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_coupling_over_a_long_run, mf_setup, mf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
