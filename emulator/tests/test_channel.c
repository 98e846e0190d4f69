/* The good/bad timeline on its own: exact fixed timelines, trace replay,
 * dependence on (seed, replication) only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"

static struct sq_channel *new_channel(const struct sq_channel_config *cfg, uint64_t seed,
				      uint32_t rep)
{
	char err[200] = "";
	struct sq_channel *ch = sq_channel_new(cfg, seed, rep, err, sizeof err);
	if (!ch)
		fail_msg("sq_channel_new: %s", err);
	return ch;
}

static struct sq_channel_config fixed_config(sq_time_us good, sq_time_us bad, enum sq_state first)
{
	struct sq_channel_config c = { .initial_state = first };
	c.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_FIXED, .a = good };
	c.length[SQ_BAD] = (struct sq_dist){ .kind = SQ_DIST_FIXED, .a = bad };
	return c;
}

static struct sq_channel_config exponential_config(void)
{
	struct sq_channel_config c = { .initial_state = SQ_GOOD };
	c.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL, .a = 2000000 };
	c.length[SQ_BAD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 100000, .b = 900000 };
	return c;
}

static void fixed_lengths_alternate_exactly(void **state)
{
	(void)state;
	struct sq_channel_config c = fixed_config(100, 50, SQ_BAD);
	struct sq_channel *ch = new_channel(&c, 1, 1);
	/* bad [0,50) good [50,150) bad [150,200) good [200,300) ... */
	assert_int_equal(sq_channel_state_at(ch, 0), SQ_BAD);
	assert_int_equal(sq_channel_state_at(ch, 49), SQ_BAD);
	assert_int_equal(sq_channel_state_at(ch, 50), SQ_GOOD);
	assert_int_equal(sq_channel_next_change(ch, 50), 150);
	assert_int_equal(sq_channel_next_change(ch, 149), 150);
	assert_int_equal(sq_channel_next_change(ch, 150), 200);
	assert_int_equal(sq_channel_state_at(ch, 299), SQ_GOOD);
	assert_int_equal(sq_channel_state_at(ch, 300), SQ_BAD);
	struct sq_channel_segment s = sq_channel_segment_at(ch, 1000000);
	/* period 150: 1 000 000 = 6666 × 150 + 100, i.e. inside the good part [50, 150) */
	assert_int_equal(s.state, SQ_GOOD);
	assert_int_equal(s.start, 6666 * 150 + 50);
	assert_int_equal(s.end, 6667 * 150);
	/* Going back regenerates the same timeline. */
	assert_int_equal(sq_channel_state_at(ch, 10), SQ_BAD);
	assert_int_equal(sq_channel_next_change(ch, 10), 50);
	sq_channel_free(ch);
}

#define SEGMENTS 2000

static void collect(struct sq_channel *ch, sq_time_us *ends)
{
	sq_time_us t = 0;
	for (int i = 0; i < SEGMENTS; i++) {
		ends[i] = sq_channel_next_change(ch, t);
		t = ends[i];
	}
}

static void same_seed_and_replication_give_the_same_timeline(void **state)
{
	(void)state;
	struct sq_channel_config c = exponential_config();
	static sq_time_us a[SEGMENTS], b[SEGMENTS], other[SEGMENTS], seed2[SEGMENTS];
	struct sq_channel *x = new_channel(&c, 42, 3), *y = new_channel(&c, 42, 3);
	collect(x, a);
	/* y is queried at scattered times first; its timeline must not change. */
	for (sq_time_us t = 0; t < 50000000; t += 777777)
		(void)sq_channel_state_at(y, t);
	collect(y, b);
	assert_memory_equal(a, b, sizeof a);
	/* Every other segment boundary is a change: lengths >= 1 us, strictly increasing. */
	for (int i = 1; i < SEGMENTS; i++)
		assert_true(a[i] > a[i - 1]);

	struct sq_channel *z = new_channel(&c, 42, 4), *w = new_channel(&c, 43, 3);
	collect(z, other);
	collect(w, seed2);
	assert_memory_not_equal(a, other, sizeof a);
	assert_memory_not_equal(a, seed2, sizeof a);
	sq_channel_free(x);
	sq_channel_free(y);
	sq_channel_free(z);
	sq_channel_free(w);
}

static void state_lengths_follow_their_distributions(void **state)
{
	(void)state;
	struct sq_channel_config c = exponential_config();
	struct sq_channel *ch = new_channel(&c, 5, 0);
	double sum[SQ_STATES] = { 0 };
	long n[SQ_STATES] = { 0 };
	sq_time_us t = 0;
	for (int i = 0; i < 40000; i++) {
		struct sq_channel_segment s = sq_channel_segment_at(ch, t);
		sum[s.state] += (double)(s.end - s.start);
		n[s.state]++;
		if (s.state == SQ_BAD)
			assert_true(s.end - s.start >= 100000 && s.end - s.start <= 900000);
		t = s.end;
	}
	assert_int_equal(n[SQ_GOOD], 20000);
	/* sd of the good mean: 2e6 / sqrt(2e4) = 14 142; of the bad: 231 000 / 141 = 1633 */
	assert_true(sum[SQ_GOOD] / n[SQ_GOOD] > 2000000 - 60000);
	assert_true(sum[SQ_GOOD] / n[SQ_GOOD] < 2000000 + 60000);
	assert_true(sum[SQ_BAD] / n[SQ_BAD] > 500000 - 7000);
	assert_true(sum[SQ_BAD] / n[SQ_BAD] < 500000 + 7000);
	sq_channel_free(ch);
}

static void trace_replays_cyclically_and_merges_equal_states(void **state)
{
	(void)state;
	const struct sq_trace_step trace[] = {
		{ SQ_GOOD, 10 }, { SQ_BAD, 5 }, { SQ_BAD, 5 }, { SQ_GOOD, 20 },
	};
	struct sq_channel_config c = { .trace = trace, .trace_len = 4, .initial_state = SQ_BAD };
	struct sq_channel *ch = new_channel(&c, 1, 1);
	/* The trace decides the first state: good [0,10) bad [10,20) good [20,50)
	 * — the last step and the first of the next cycle merge — bad [50,60) good [60,90) ... */
	assert_int_equal(sq_channel_state_at(ch, 0), SQ_GOOD);
	assert_int_equal(sq_channel_next_change(ch, 0), 10);
	assert_int_equal(sq_channel_next_change(ch, 10), 20);
	assert_int_equal(sq_channel_next_change(ch, 20), 50);
	assert_int_equal(sq_channel_state_at(ch, 49), SQ_GOOD);
	assert_int_equal(sq_channel_state_at(ch, 50), SQ_BAD);
	assert_int_equal(sq_channel_next_change(ch, 50), 60);
	assert_int_equal(sq_channel_next_change(ch, 60), 90);
	assert_int_equal(sq_channel_state_at(ch, 4000 + 55), SQ_BAD);   /* period 40 */
	sq_channel_free(ch);
}

static void single_state_trace_never_changes(void **state)
{
	(void)state;
	const struct sq_trace_step trace[] = { { SQ_BAD, 10 }, { SQ_BAD, 3 } };
	struct sq_channel_config c = { .trace = trace, .trace_len = 2 };
	struct sq_channel *ch = new_channel(&c, 1, 1);
	assert_int_equal(sq_channel_state_at(ch, 123456789), SQ_BAD);
	assert_int_equal(sq_channel_next_change(ch, 0), SQ_TIME_NEVER);
	sq_channel_free(ch);
}

static void trace_is_the_same_for_every_seed(void **state)
{
	(void)state;
	const struct sq_trace_step trace[] = { { SQ_BAD, 7 }, { SQ_GOOD, 3 } };
	struct sq_channel_config c = { .trace = trace, .trace_len = 2 };
	struct sq_channel *a = new_channel(&c, 1, 1), *b = new_channel(&c, 2, 9);
	for (sq_time_us t = 0; t < 1000; t++)
		assert_int_equal(sq_channel_state_at(a, t), sq_channel_state_at(b, t));
	sq_channel_free(a);
	sq_channel_free(b);
}

static void invalid_configs_are_refused_with_the_field_named(void **state)
{
	(void)state;
	char err[200];
	struct sq_channel_config c = fixed_config(10, 10, SQ_GOOD);
	c.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 9, .b = 2 };
	assert_null(sq_channel_new(&c, 1, 1, err, sizeof err));
	assert_string_equal(err, "channel.good: uniform needs a <= b, got a 9 > b 2");

	const struct sq_trace_step trace[] = { { SQ_GOOD, 10 }, { SQ_BAD, 0 } };
	struct sq_channel_config t = { .trace = trace, .trace_len = 2 };
	assert_null(sq_channel_new(&t, 1, 1, err, sizeof err));
	assert_string_equal(err, "channel.trace[1]: duration must be >= 1 us, got 0");

	t.trace_len = 0;
	assert_null(sq_channel_new(&t, 1, 1, err, sizeof err));
	assert_string_equal(err, "channel.trace: a trace needs at least one step, got 0");

	struct sq_channel_config s = fixed_config(10, 10, (enum sq_state)2);
	assert_null(sq_channel_new(&s, 1, 1, err, sizeof err));
	assert_string_equal(err, "channel.initial: state must be good (0) or bad (1), got 2");

	struct sq_channel_config r = { .trace = trace, .trace_len = 1, .start = SQ_START_RUNNING };
	assert_null(sq_channel_new(&r, 1, 1, err, sizeof err));
	assert_string_equal(err, "channel.start: a trace starts with its first step; running needs good and bad distributions");
}

/* A running channel is at t = 0 where a long-running one would be at a random moment: in a
 * bad period with probability bad / (good + bad), and with the rest of its period length-
 * biased (for fixed lengths, uniform on the period). A fresh one starts every replication at
 * the beginning of its initial state. */
static void running_channel_starts_at_a_random_point_of_its_cycle(void **state)
{
	(void)state;
	struct sq_channel_config c = fixed_config(8000000, 2000000, SQ_GOOD);
	c.start = SQ_START_RUNNING;
	const int n = 4000;
	int bad = 0;
	double good_left = 0;
	for (int rep = 1; rep <= n; rep++) {
		struct sq_channel *ch = new_channel(&c, 7, (uint32_t)rep);
		struct sq_channel_segment s = sq_channel_segment_at(ch, 0);
		assert_int_equal(s.start, 0);
		assert_true(s.end >= 1 && s.end <= (s.state == SQ_GOOD ? 8000000 : 2000000));
		if (s.state == SQ_BAD)
			bad++;
		else
			good_left += (double)s.end;
		/* after the first period the lengths are the configured ones */
		struct sq_channel_segment next = sq_channel_segment_at(ch, s.end);
		assert_int_equal(next.end - next.start, next.state == SQ_GOOD ? 8000000 : 2000000);
		sq_channel_free(ch);
	}
	/* 0.2 expected; 4000 draws: standard deviation 0.0063 */
	assert_true(bad > n * 0.17 && bad < n * 0.23);
	/* uniform on (0, 8 s]: mean 4 s, standard deviation of the mean 0.04 s */
	double mean = good_left / (n - bad);
	assert_true(mean > 3800000 && mean < 4200000);

	c.start = SQ_START_FRESH;
	for (int rep = 1; rep <= 20; rep++) {
		struct sq_channel *ch = new_channel(&c, 7, (uint32_t)rep);
		struct sq_channel_segment s = sq_channel_segment_at(ch, 0);
		assert_int_equal(s.state, SQ_GOOD);
		assert_int_equal(s.end, 8000000);
		sq_channel_free(ch);
	}
}

/* The phase depends only on (seed, replication), and going back regenerates it. */
static void running_channel_is_reproducible(void **state)
{
	(void)state;
	struct sq_channel_config c = exponential_config();
	c.start = SQ_START_RUNNING;
	struct sq_channel *a = new_channel(&c, 3, 9), *b = new_channel(&c, 3, 9);
	for (sq_time_us t = 0; t < 60000000; t += 250000)
		assert_int_equal(sq_channel_state_at(a, t), sq_channel_state_at(b, t));
	struct sq_channel_segment first = sq_channel_segment_at(b, 0);
	assert_int_equal(sq_channel_segment_at(a, 0).end, first.end);    /* rewound */
	sq_channel_free(a);
	sq_channel_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixed_lengths_alternate_exactly),
		cmocka_unit_test(same_seed_and_replication_give_the_same_timeline),
		cmocka_unit_test(state_lengths_follow_their_distributions),
		cmocka_unit_test(trace_replays_cyclically_and_merges_equal_states),
		cmocka_unit_test(single_state_trace_never_changes),
		cmocka_unit_test(trace_is_the_same_for_every_seed),
		cmocka_unit_test(invalid_configs_are_refused_with_the_field_named),
		cmocka_unit_test(running_channel_starts_at_a_random_point_of_its_cycle),
		cmocka_unit_test(running_channel_is_reproducible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
