/* State-length distributions: bounds, means over many draws, validation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dist.h"

#define DRAWS 200000

struct sample {
	double mean;
	sq_time_us min, max;
	long at_max;   /* draws equal to the upper bound */
};

static struct sample draw_many(const struct sq_dist *d, sq_time_us upper)
{
	struct sq_rng r;
	sq_rng_init(&r, 99, 5, 0);
	struct sample s = { .min = INT64_MAX, .max = INT64_MIN };
	double sum = 0;
	for (int i = 0; i < DRAWS; i++) {
		sq_time_us x = sq_dist_draw(d, &r);
		sum += (double)x;
		s.min = x < s.min ? x : s.min;
		s.max = x > s.max ? x : s.max;
		s.at_max += x == upper;
	}
	s.mean = sum / DRAWS;
	return s;
}

static void assert_close(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("mean %.3f is not within %.3f of %.3f", got, tol, want);
}

static void fixed_always_gives_its_value(void **state)
{
	(void)state;
	struct sq_dist d = { .kind = SQ_DIST_FIXED, .a = 700000 };
	struct sample s = draw_many(&d, 0);
	assert_int_equal(s.min, 700000);
	assert_int_equal(s.max, 700000);
}

static void uniform_stays_in_bounds_and_has_the_middle_as_mean(void **state)
{
	(void)state;
	struct sq_dist d = { .kind = SQ_DIST_UNIFORM, .a = 1000, .b = 5000 };
	struct sample s = draw_many(&d, 5000);
	assert_int_equal(s.min, 1000);   /* both ends are reachable */
	assert_int_equal(s.max, 5000);
	/* sd of one draw 1155; of the mean 2.6 */
	assert_close(s.mean, 3000.0, 12.0);
}

static void exponential_has_its_mean(void **state)
{
	(void)state;
	struct sq_dist d = { .kind = SQ_DIST_EXPONENTIAL, .a = 1000000 };
	struct sample s = draw_many(&d, 0);
	assert_true(s.min >= 1);
	/* sd of the mean: 1e6 / sqrt(2e5) = 2236 */
	assert_close(s.mean, 1000000.0, 10000.0);
}

/* Mean of an exponential with mean mu truncated to [lo, hi]: by memorylessness
 * lo + mu - L e^(-L/mu) / (1 - e^(-L/mu)) with L = hi - lo. */
static double truncated_mean(double mu, double lo, double hi)
{
	double len = hi - lo;
	return lo + mu - len * exp(-len / mu) / (1.0 - exp(-len / mu));
}

static void truncated_exponential_uses_the_inverse_cdf_on_the_interval(void **state)
{
	(void)state;
	struct sq_dist d = { .kind = SQ_DIST_EXPONENTIAL, .a = 1000000, .truncated = true,
			     .min = 200000, .max = 1500000 };
	struct sample s = draw_many(&d, 1500000);
	assert_true(s.min >= 200000);
	assert_true(s.max <= 1500000);
	double want = truncated_mean(1e6, 2e5, 1.5e6);   /* about 747 000 */
	/* sd of one draw < 375 000; of the mean < 840 */
	assert_close(s.mean, want, 4000.0);
	/* Clamping would put P(X > 1.3 s) = 27 % of the draws on the upper bound;
	 * the inverse CDF on the interval puts almost none there. */
	assert_true(s.at_max < 20);
}

static void truncated_with_zero_minimum_still_gives_at_least_one_us(void **state)
{
	(void)state;
	struct sq_dist d = { .kind = SQ_DIST_EXPONENTIAL, .a = 3, .truncated = true, .min = 0,
			     .max = 10 };
	struct sample s = draw_many(&d, 10);
	assert_true(s.min >= 1);
	assert_true(s.max <= 10);
}

static void check_names_the_field_and_the_problem(void **state)
{
	(void)state;
	char err[200];
	struct sq_dist bad_uniform = { .kind = SQ_DIST_UNIFORM, .a = 5, .b = 3 };
	assert_false(sq_dist_check(&bad_uniform, "channel.good", err, sizeof err));
	assert_string_equal(err, "channel.good: uniform needs a <= b, got a 5 > b 3");

	struct sq_dist zero_fixed = { .kind = SQ_DIST_FIXED, .a = 0 };
	assert_false(sq_dist_check(&zero_fixed, "channel.bad", err, sizeof err));
	assert_non_null(strstr(err, "channel.bad: fixed length must be in [1, "));

	struct sq_dist bad_trunc = { .kind = SQ_DIST_EXPONENTIAL, .a = 10, .truncated = true,
				     .min = 20, .max = 5 };
	assert_false(sq_dist_check(&bad_trunc, "channel.bad", err, sizeof err));
	assert_string_equal(err, "channel.bad: truncated exponential needs min <= max, "
				 "got min 20 > max 5");

	struct sq_dist ok = { .kind = SQ_DIST_EXPONENTIAL, .a = 10 };
	assert_true(sq_dist_check(&ok, "x", err, sizeof err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixed_always_gives_its_value),
		cmocka_unit_test(uniform_stays_in_bounds_and_has_the_middle_as_mean),
		cmocka_unit_test(exponential_has_its_mean),
		cmocka_unit_test(truncated_exponential_uses_the_inverse_cdf_on_the_interval),
		cmocka_unit_test(truncated_with_zero_minimum_still_gives_at_least_one_us),
		cmocka_unit_test(check_names_the_field_and_the_problem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
