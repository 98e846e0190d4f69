/* The seeded streams: reference values, reproducibility, independence, ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rng.h"

static void splitmix64_matches_reference(void **state)
{
	(void)state;
	/* First outputs of splitmix64 from state 0 (the published reference generator). */
	uint64_t s = 0;
	assert_int_equal(sq_splitmix64(&s), 0xe220a8397b1dcdafULL);
	assert_int_equal(sq_splitmix64(&s), 0x6e789e6aa1b965f4ULL);
}

static void xoshiro_matches_reference(void **state)
{
	(void)state;
	struct sq_rng r = { .s = { 1, 2, 3, 4 } };
	assert_int_equal(sq_rng_next(&r), 11520);
	assert_int_equal(sq_rng_next(&r), 0);
	assert_int_equal(sq_rng_next(&r), 1509978240);
	assert_int_equal(sq_rng_next(&r), 1215971899390074240ULL);
}

/* The derivation LINK_MODEL.md "Random numbers" documents, step by step. */
static void stream_state_follows_the_documented_derivation(void **state)
{
	(void)state;
	uint64_t seed = 7, x;
	uint32_t replication = 3, stream = SQ_STREAM_ERROR_UP;
	x = seed;
	uint64_t k1 = sq_splitmix64(&x);
	x = k1 ^ replication;
	uint64_t k2 = sq_splitmix64(&x);
	x = k2 ^ stream;
	uint64_t key = sq_splitmix64(&x);
	struct sq_rng r;
	sq_rng_init(&r, seed, replication, stream);
	x = key;
	for (int i = 0; i < 4; i++)
		assert_int_equal(r.s[i], sq_splitmix64(&x));
}

static void same_key_gives_same_stream(void **state)
{
	(void)state;
	struct sq_rng a, b;
	sq_rng_init(&a, 7, 3, SQ_STREAM_CHANNEL);
	sq_rng_init(&b, 7, 3, SQ_STREAM_CHANNEL);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(sq_rng_next(&a), sq_rng_next(&b));
}

static int equal_prefix(uint64_t seed1, uint32_t rep1, uint32_t s1, uint64_t seed2, uint32_t rep2,
			uint32_t s2)
{
	struct sq_rng a, b;
	sq_rng_init(&a, seed1, rep1, s1);
	sq_rng_init(&b, seed2, rep2, s2);
	int same = 0;
	for (int i = 0; i < 64; i++)
		same += sq_rng_next(&a) == sq_rng_next(&b);
	return same;
}

static void seed_replication_and_stream_each_change_the_stream(void **state)
{
	(void)state;
	assert_int_equal(equal_prefix(7, 3, 0, 8, 3, 0), 0);
	assert_int_equal(equal_prefix(7, 3, 0, 7, 4, 0), 0);
	assert_int_equal(equal_prefix(7, 3, 0, 7, 3, 1), 0);
	assert_int_equal(equal_prefix(7, 3, 1, 7, 3, 2), 0);
	/* Swapping replication and stream id must not give the same key. */
	assert_int_equal(equal_prefix(7, 1, 2, 7, 2, 1), 0);
}

static void uniform01_is_in_unit_interval_with_mean_one_half(void **state)
{
	(void)state;
	struct sq_rng r;
	sq_rng_init(&r, 1, 0, 0);
	double sum = 0;
	const int n = 200000;
	for (int i = 0; i < n; i++) {
		double u = sq_rng_uniform01(&r);
		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
	}
	/* Standard error of the mean is 0.2887 / sqrt(n) = 0.00065. */
	assert_true(sum / n > 0.5 - 0.003 && sum / n < 0.5 + 0.003);
}

static void uniform_int_covers_exactly_its_range(void **state)
{
	(void)state;
	struct sq_rng r;
	sq_rng_init(&r, 2, 0, 0);
	long counts[7] = { 0 };
	const int n = 70000;
	for (int i = 0; i < n; i++) {
		int64_t v = sq_rng_uniform_int(&r, 10, 16);
		assert_true(v >= 10 && v <= 16);
		counts[v - 10]++;
	}
	for (int k = 0; k < 7; k++)   /* expected 10000 each, sd about 93 */
		assert_true(counts[k] > 9500 && counts[k] < 10500);
	assert_int_equal(sq_rng_uniform_int(&r, 5, 5), 5);
	int64_t full = sq_rng_uniform_int(&r, INT64_MIN, INT64_MAX);
	(void)full;   /* any value is in range; must not loop or trap */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(splitmix64_matches_reference),
		cmocka_unit_test(xoshiro_matches_reference),
		cmocka_unit_test(stream_state_follows_the_documented_derivation),
		cmocka_unit_test(same_key_gives_same_stream),
		cmocka_unit_test(seed_replication_and_stream_each_change_the_stream),
		cmocka_unit_test(uniform01_is_in_unit_interval_with_mean_one_half),
		cmocka_unit_test(uniform_int_covers_exactly_its_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
