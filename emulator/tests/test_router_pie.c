/* PIE of the router stage on its own (RFC 8033 with Linux sch_pie's rules): the burst
 * allowance, the early exits of the drop decision, de-randomisation, the auto-tuned gains,
 * the 2 % step cap and the 250 ms boost, the decay and restart when idle, the lazy timer,
 * ECN marking and the limit, against hand-computed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "router_pie.h"

enum { MTU = 1000, ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };

static const struct sq_pie_config dflt = {
	.target = 15000, .tupdate = 15000, .alpha = 0.125, .beta = 1.25,
};

/* cmocka compares floats only in single precision. */
static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.17g, expected %.17g (within %g)", got, want, eps);
}

static void fresh(struct sq_pie_state *s, struct sq_rng *rng)
{
	sq_pie_init(s, MTU);
	sq_rng_init(rng, 1, 0, SQ_STREAM_ROUTER_DOWN);
}

/* No burst allowance left, the delay above target: only the probability decides. */
static void armed(struct sq_pie_state *s, struct sq_rng *rng, double prob)
{
	fresh(s, rng);
	s->burst_time = 0;
	s->qdelay = 20000;
	s->prob = prob;
}

static bool rng_untouched(const struct sq_rng *rng)
{
	struct sq_rng ref;
	sq_rng_init(&ref, 1, 0, SQ_STREAM_ROUTER_DOWN);
	return memcmp(&ref, rng, sizeof ref) == 0;
}

static void test_init_has_the_burst_allowance_and_no_dequeue(void **state)
{
	(void)state;
	struct sq_pie_state s;
	sq_pie_init(&s, MTU);
	assert_true(s.prob == 0.0 && s.accu_prob == 0.0);
	assert_int_equal(s.burst_time, 150000);
	assert_int_equal(s.dq_tstamp, SQ_PIE_NO_DEQUEUE);
	assert_int_equal(s.mtu, MTU);
}

/* The allowance shrinks by the time between dequeues (the first dequeue counts none);
 * while any is left nothing is dropped early, whatever the probability. */
static void test_burst_allowance_blocks_early_drops_until_spent(void **state)
{
	(void)state;
	struct sq_pie_state s;
	struct sq_rng rng;
	fresh(&s, &rng);
	s.prob = 1.0;
	sq_pie_dequeued(&s, 0, 10000, 50000);    /* first: no dtime */
	assert_int_equal(s.burst_time, 150000);
	assert_int_equal(s.qdelay, 10000);
	sq_pie_dequeued(&s, 0, 110000, 50000);   /* 100 ms later */
	assert_int_equal(s.burst_time, 50000);
	assert_false(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));
	sq_pie_dequeued(&s, 0, 170000, 50000);   /* 60 ms later: spent, not negative */
	assert_int_equal(s.burst_time, 0);
	s.accu_prob = 8.0;                       /* then at >= 8.5: a drop without a draw */
	assert_true(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));
	assert_true(rng_untouched(&rng));
}

/* A dequeue that leaves the queue empty makes the delay 0. */
static void test_a_dequeue_emptying_the_queue_has_no_delay(void **state)
{
	(void)state;
	struct sq_pie_state s;
	sq_pie_init(&s, MTU);
	sq_pie_dequeued(&s, 1000, 30000, 0);
	assert_int_equal(s.qdelay, 0);
	assert_int_equal(s.dq_tstamp, 30000);
}

/* Below half the target with p < 0.2, and below two MTUs of backlog, no early drop and no
 * draw; at p = 0.2 the delay exit no longer applies. */
static void test_early_exits(void **state)
{
	(void)state;
	struct sq_pie_state s;
	struct sq_rng rng;
	fresh(&s, &rng);
	s.burst_time = 0;
	s.qdelay = 7499;
	s.prob = 0.1999;
	s.accu_prob = 100.0;
	assert_false(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));
	assert_true(s.accu_prob == 100.0);       /* left as it was */
	s.qdelay = 7500;                         /* target / 2: not below */
	assert_false(sq_pie_drop_early(&s, &dflt, 2 * MTU - 1, MTU, &rng));
	assert_true(rng_untouched(&rng));
	assert_true(sq_pie_drop_early(&s, &dflt, 2 * MTU, MTU, &rng));
	s.qdelay = 0;
	s.prob = 0.2;
	assert_true(sq_pie_drop_early(&s, &dflt, 2 * MTU, MTU, &rng));
}

/* De-randomisation: the probabilities add up; below 0.85 no drop and no draw; between
 * 0.85 and 8.5 one draw against p (a drop resets the sum); p = 0 resets the sum. */
static void test_derandomisation(void **state)
{
	(void)state;
	struct sq_pie_state s;
	struct sq_rng rng, ref;
	armed(&s, &rng, 0.4);
	sq_rng_init(&ref, 1, 0, SQ_STREAM_ROUTER_DOWN);
	assert_false(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));   /* 0.4 */
	assert_false(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));   /* 0.8 */
	assert_true(rng_untouched(&rng));
	double u = sq_rng_uniform01(&ref);
	bool dropped = sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng);  /* 1.2: draws */
	assert_int_equal(dropped, u < 0.4);
	assert_near(s.accu_prob, dropped ? 0.0 : 1.2, 1e-12);
	s.prob = 0.0;
	assert_false(sq_pie_drop_early(&s, &dflt, 50000, MTU, &rng));
	assert_true(s.accu_prob == 0.0);
}

/* Byte mode scales the probability by size / MTU for packets up to the MTU. */
static void test_bytemode_scales_by_size(void **state)
{
	(void)state;
	struct sq_pie_config c = dflt;
	c.bytemode = true;
	struct sq_pie_state s;
	struct sq_rng rng;
	armed(&s, &rng, 0.5);
	assert_false(sq_pie_drop_early(&s, &c, 50000, 100, &rng));
	assert_near(s.accu_prob, 0.05, 1e-12);
	assert_false(sq_pie_drop_early(&s, &c, 50000, 2 * MTU, &rng));   /* above the MTU: p */
	assert_near(s.accu_prob, 0.55, 1e-12);
}

/* One update from probability p with the delay 10 ms above target and unchanged:
 * p + scale * 0.125 * 0.010, scale from RFC 8033 section 4.2's table. */
static void test_auto_tuning_scales_alpha_and_beta(void **state)
{
	(void)state;
	static const struct { double p, scale; } rows[] = {
		{ 0.5, 1.0 }, { 0.1, 1.0 }, { 0.05, 1.0 / 2 }, { 0.005, 1.0 / 8 }, { 0.0005, 1.0 / 32 },
		{ 0.00005, 1.0 / 128 }, { 0.000005, 1.0 / 512 }, { 0.0000005, 1.0 / 2048 },
		{ 0.00000005, 1.0 / 2048 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct sq_pie_state s;
		sq_pie_init(&s, MTU);
		s.prob = rows[i].p;
		s.qdelay = s.qdelay_old = 25000;
		sq_pie_update(&s, &dflt, 50000);
		assert_near(s.prob, rows[i].p + rows[i].scale * 0.125 * 0.010, 1e-15);
		assert_int_equal(s.qdelay_old, 25000);
	}
	/* beta acts on the growth: 5 ms more than last time at p = 0.5. */
	struct sq_pie_state s;
	sq_pie_init(&s, MTU);
	s.prob = 0.5;
	s.qdelay = 15000;
	s.qdelay_old = 10000;
	sq_pie_update(&s, &dflt, 50000);
	assert_near(s.prob, 0.5 + 1.25 * 0.005, 1e-15);
}

/* At p >= 10 % a step is at most 2 %; above 250 ms 2 % more is added (no cap on that). */
static void test_step_cap_and_the_250ms_boost(void **state)
{
	(void)state;
	struct sq_pie_state s;
	sq_pie_init(&s, MTU);
	s.prob = 0.3;
	s.qdelay = 200000;                /* 0.125 * 0.185 + 1.25 * 0.2 >> 0.02 */
	sq_pie_update(&s, &dflt, 50000);
	assert_near(s.prob, 0.32, 1e-15);
	s.qdelay = 300000;
	sq_pie_update(&s, &dflt, 50000);
	assert_near(s.prob, 0.36, 1e-15);
	/* below 10 % no cap */
	sq_pie_init(&s, MTU);
	s.prob = 0.09;
	s.qdelay = 200000;
	sq_pie_update(&s, &dflt, 50000);
	assert_near(s.prob, 0.09 + 0.5 * (0.125 * 0.185 + 1.25 * 0.2), 1e-15);
	/* clamped at 1 */
	sq_pie_init(&s, MTU);
	s.prob = 0.99;
	s.qdelay = 300000;
	s.qdelay_old = 300000;
	sq_pie_update(&s, &dflt, 50000);
	assert_true(s.prob == 1.0);
}

/* Zero delay in two updates in a row: the probability falls by its 64th besides the
 * alpha term; once it is 0 with both delays below target / 2 the cycle restarts
 * (the burst allowance is back). A short queue with a zero delay does not decay. */
static void test_decay_and_restart_when_idle(void **state)
{
	(void)state;
	struct sq_pie_state s;
	sq_pie_init(&s, MTU);
	s.prob = 0.5;
	s.burst_time = 0;
	sq_pie_update(&s, &dflt, 0);
	double p = 0.5 - 0.125 * 0.015;
	assert_near(s.prob, p - p / 64, 1e-15);
	sq_pie_init(&s, MTU);
	s.prob = 0.5;
	sq_pie_update(&s, &dflt, 500);          /* bytes queued, delay 0: no decay */
	assert_near(s.prob, p, 1e-15);
	/* from 0.5 the alpha term alone (halved, quartered... as p falls) brings it to 0 */
	s.burst_time = 0;
	s.accu_prob = 3.0;
	int updates = 0;
	while (s.prob > 0.0 && updates < 100000) {
		sq_pie_update(&s, &dflt, 0);
		updates++;
	}
	assert_true(s.prob == 0.0);
	assert_true(updates > 10);
	assert_int_equal(s.burst_time, 150000);
	assert_true(s.accu_prob == 0.0);
	assert_int_equal(s.dq_tstamp, SQ_PIE_NO_DEQUEUE);
}

/* Catching up at one late event equals an update at every tick (k x 15 ms) on the way,
 * including the fast-forward over an idle fixed point. */
static void test_catch_up_is_a_timer(void **state)
{
	(void)state;
	struct sq_pie_state lazy, timer;
	sq_pie_init(&lazy, MTU);
	lazy.prob = 0.3;
	lazy.qdelay = 40000;
	lazy.qdelay_old = 30000;
	timer = lazy;
	sq_pie_catch_up(&lazy, &dflt, 100000, 20000);   /* ticks at 15 ... 90 ms */
	for (int k = 1; k <= 6; k++)
		sq_pie_update(&timer, &dflt, 20000);
	assert_int_equal(lazy.last_update, 90000);
	assert_true(memcmp(&lazy.prob, &timer.prob, sizeof lazy.prob) == 0);
	/* idle for 10 s: the decay to 0, then the fixed point skipped */
	lazy.qdelay = timer.qdelay = 0;
	sq_pie_catch_up(&lazy, &dflt, 10100000, 0);
	for (int k = 7; k <= 673; k++)
		sq_pie_update(&timer, &dflt, 0);
	assert_int_equal(lazy.last_update, 673 * 15000);
	assert_true(lazy.prob == 0.0 && timer.prob == 0.0);
	assert_int_equal(lazy.burst_time, timer.burst_time);
	/* an event exactly on a tick runs that tick first */
	sq_pie_catch_up(&lazy, &dflt, 674 * 15000, 0);
	assert_int_equal(lazy.last_update, 674 * 15000);
}

/* ECN: with ecn on, ECT(0), ECT(1) and CE are marked while p <= 10 %, else dropped; a
 * mark keeps the sum, a drop resets it. At the limit: PASS for the caller's tail drop,
 * no draw, the sum reset. */
static void test_ecn_and_the_limit(void **state)
{
	(void)state;
	struct sq_pie_config c = dflt;
	c.ecn = true;
	struct sq_pie_state s;
	struct sq_rng rng;
	armed(&s, &rng, 0.1);
	static const uint8_t capable[] = { ECN_ECT0, ECN_ECT1, ECN_CE };
	for (size_t i = 0; i < 3; i++) {
		s.accu_prob = 9.0;
		assert_int_equal(sq_pie_enqueue(&s, &c, 1000, 10, 50000, MTU, capable[i], &rng), SQ_PIE_MARK);
	}
	s.accu_prob = 9.0;
	assert_int_equal(sq_pie_enqueue(&s, &c, 1000, 10, 50000, MTU, ECN_NOT_ECT, &rng), SQ_PIE_DROP);
	assert_true(s.accu_prob == 0.0);
	s.prob = 0.11;
	s.accu_prob = 9.0;
	assert_int_equal(sq_pie_enqueue(&s, &c, 1000, 10, 50000, MTU, ECN_ECT1, &rng), SQ_PIE_DROP);
	s.accu_prob = 9.0;
	assert_int_equal(sq_pie_enqueue(&s, &c, 10, 10, 50000, MTU, ECN_NOT_ECT, &rng), SQ_PIE_PASS);
	assert_true(s.accu_prob == 0.0);
	assert_true(rng_untouched(&rng));
	/* ecn off: an ECT packet is dropped */
	s.accu_prob = 9.0;
	assert_int_equal(sq_pie_enqueue(&s, &dflt, 1000, 10, 50000, MTU, ECN_ECT0, &rng), SQ_PIE_DROP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_has_the_burst_allowance_and_no_dequeue),
		cmocka_unit_test(test_burst_allowance_blocks_early_drops_until_spent),
		cmocka_unit_test(test_a_dequeue_emptying_the_queue_has_no_delay),
		cmocka_unit_test(test_early_exits),
		cmocka_unit_test(test_derandomisation),
		cmocka_unit_test(test_bytemode_scales_by_size),
		cmocka_unit_test(test_auto_tuning_scales_alpha_and_beta),
		cmocka_unit_test(test_step_cap_and_the_250ms_boost),
		cmocka_unit_test(test_decay_and_restart_when_idle),
		cmocka_unit_test(test_catch_up_is_a_timer),
		cmocka_unit_test(test_ecn_and_the_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
