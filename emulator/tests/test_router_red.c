/* RED of the router stage on its own: the average (with the idle-time
 * correction) and the count-spaced probability against hand-computed values,
 * and the decisions a known random stream gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "router.h"
#include "router_red.h"

/* cmocka compares floats only in single precision. */
static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.17g, expected %.17g (within %g)", got, want, eps);
}

/* IIP report, section 5.2 and table 1. */
static const struct sq_red_config iip = {
	.limit = 11000, .min = 2000, .max = 6000, .avpkt = 500, .max_p = 0.1, .w_q = 0.002,
	.ecn = true,
};

static void test_average_follows_backlog(void **state)
{
	(void)state;
	struct sq_red_state s;
	sq_red_init(&s);
	/* Empty queue at t = 0: the average stays 0. Then (1 - w) avg + w q. */
	assert_true(sq_red_update_average(&s, &iip, 0, 0, 64000) == 0.0);
	assert_near(sq_red_update_average(&s, &iip, 1000, 10, 64000), 2.0, 1e-12);
	assert_near(sq_red_update_average(&s, &iip, 2000, 20, 64000), 5.996, 1e-12);
	assert_near(sq_red_update_average(&s, &iip, 3000, 30, 64000), 11.984008, 1e-12);
}

static void test_idle_time_decays_the_average(void **state)
{
	(void)state;
	struct sq_red_config c = iip;
	c.w_q = 0.5;
	struct sq_red_state s;
	sq_red_init(&s);
	s.avg = 5000.0;
	sq_red_start_idle(&s, 1000000);
	/* 100 ms idle; one 500 B packet takes 62.5 ms at 64 kbit/s: m = 1.6,
	 * avg = 5000 * 0.5^1.6. */
	assert_near(sq_red_update_average(&s, &c, 0, 1100000, 64000), 1649.3848884661177, 1e-9);
	/* With w_q 0.002: 5000 * 0.998^1.6. */
	c.w_q = 0.002;
	s.avg = 5000.0;
	assert_near(sq_red_update_average(&s, &c, 0, 1100000, 64000), 4984.009602561793, 1e-9);
	/* No decay in an outage; everything forgotten at an unlimited rate. */
	s.avg = 5000.0;
	assert_true(sq_red_update_average(&s, &c, 0, 2000000, 0) == 5000.0);
	assert_true(sq_red_update_average(&s, &c, 0, 2000000, SQ_RATE_UNLIMITED) == 0.0);
}

static void test_probability_with_count_spacing(void **state)
{
	(void)state;
	/* avg 4000: pb = 0.1 * (4000 - 2000) / 4000 = 0.05. */
	assert_near(sq_red_probability(&iip, 4000, 0), 0.05, 1e-15);
	assert_near(sq_red_probability(&iip, 4000, 10), 0.1, 1e-15);    /* 0.05 / 0.5 */
	assert_near(sq_red_probability(&iip, 4000, 18), 0.5, 1e-12);    /* 0.05 / 0.1 */
	assert_true(sq_red_probability(&iip, 4000, 19) == 1.0);                 /* count pb = 1 - pb */
	assert_true(sq_red_probability(&iip, 4000, 100) == 1.0);
	/* avg 3000: pb = 0.025; count 20 -> 0.025 / 0.5. */
	assert_near(sq_red_probability(&iip, 3000, 20), 0.05, 1e-15);
	assert_true(sq_red_probability(&iip, 1999.9, 5) == 0.0);
	assert_true(sq_red_probability(&iip, 2000, 0) == 0.0);
	assert_true(sq_red_probability(&iip, 6000, 0) == 1.0);
}

/* The decisions of sq_red_decide are those a hand computation gives from the
 * same stream: count from -1, one draw per arrival between min and max, mark
 * when u < pb / (1 - count pb), then count 0. */
static void test_decisions_follow_the_stream(void **state)
{
	(void)state;
	struct sq_red_state s;
	sq_red_init(&s);
	struct sq_rng rng, mirror;
	sq_rng_init(&rng, 7, 3, SQ_STREAM_ROUTER_DOWN);
	sq_rng_init(&mirror, 7, 3, SQ_STREAM_ROUTER_DOWN);
	int64_t count = -1;
	unsigned early = 0;
	for (int i = 0; i < 2000; i++) {
		s.avg = 4000.0;   /* pb = 0.05 */
		count++;
		double pa = 0.05 / (1.0 - (double)count * 0.05);
		if (1.0 - (double)count * 0.05 <= 0.05)
			pa = 1.0;
		bool expect = sq_rng_uniform01(&mirror) < pa;
		enum sq_red_action a = sq_red_decide(&s, &iip, &rng);
		assert_int_equal(a, expect ? SQ_RED_EARLY : SQ_RED_PASS);
		if (expect) {
			count = 0;
			early++;
		}
		assert_int_equal(s.count, count);
	}
	/* Count spacing makes marks nearly uniform in between: about one per
	 * 1/(2 pb) + 1/2 = 10.5 arrivals. */
	assert_in_range(early, 2000 / 13, 2000 / 9);
}

static void test_decisions_outside_the_region_draw_nothing(void **state)
{
	(void)state;
	struct sq_red_state s;
	sq_red_init(&s);
	struct sq_rng rng, untouched;
	sq_rng_init(&rng, 7, 3, SQ_STREAM_ROUTER_UP);
	sq_rng_init(&untouched, 7, 3, SQ_STREAM_ROUTER_UP);
	s.avg = 1999.0;
	assert_int_equal(sq_red_decide(&s, &iip, &rng), SQ_RED_PASS);
	assert_int_equal(s.count, -1);
	s.avg = 6000.0;
	assert_int_equal(sq_red_decide(&s, &iip, &rng), SQ_RED_FORCED);
	assert_int_equal(s.count, 0);
	assert_true(sq_rng_next(&rng) == sq_rng_next(&untouched));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_average_follows_backlog),
		cmocka_unit_test(test_idle_time_decays_the_average),
		cmocka_unit_test(test_probability_with_count_spacing),
		cmocka_unit_test(test_decisions_follow_the_stream),
		cmocka_unit_test(test_decisions_outside_the_region_draw_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
