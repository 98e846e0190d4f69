/* Outages as a process (LINK_MODEL.md "Outages"), in virtual time: the timeline comes from
 * the seed and the replication only, both directions follow the link's unless one has its
 * own, an attempt that starts in an outage is lost and the ARQ decides what follows; a netem
 * copy and error draws by time change none of this. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

#define fixture model_fixture
#define MS 1000LL
#define S 1000000LL

static struct sq_dist fixed(sq_time_us a)
{
	return (struct sq_dist){ .kind = SQ_DIST_FIXED, .a = a };
}

/* Outages of 500 ms after every 1 s without one: [1 s, 1.5 s), [2.5 s, 3 s), ... */
static void periodic_outages(struct sq_outage_config *o)
{
	*o = (struct sq_outage_config){ .enabled = true, .every = fixed(1 * S), .length = fixed(500 * MS) };
}

/* The times of dir's outage events, begin and end alternating; returns how many. */
static size_t outage_times(const struct recorder *r, enum sq_dir dir, sq_time_us *t, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n && n < cap; i++) {
		const struct sq_event *ev = &r->ev[i];
		if (ev->type != SQ_EV_OUTAGE || ev->dir != dir)
			continue;
		assert_int_equal(ev->outage, n % 2 == 0);   /* begin, end, begin, ... */
		t[n++] = ev->t;
	}
	return n;
}

static void test_both_directions_follow_the_link_outages(void **state)
{
	struct fixture *f = *state;
	periodic_outages(&f->tl.cfg.outages);
	f->m = tl_model(&f->tl, &f->rec);
	sq_model_advance(f->m, 1 * S - 1);
	assert_false(sq_model_in_outage(f->m, SQ_DOWN));
	sq_model_advance(f->m, 1 * S);
	assert_true(sq_model_in_outage(f->m, SQ_DOWN) && sq_model_in_outage(f->m, SQ_UP));
	sq_model_advance(f->m, 4 * S);
	sq_time_us want[] = { 1 * S, 1500 * MS, 2500 * MS, 3 * S, 4 * S }, got[8];
	for (int d = 0; d < SQ_DIRS; d++) {
		assert_int_equal(outage_times(&f->rec, (enum sq_dir)d, got, 8), 5);
		assert_memory_equal(got, want, sizeof want);
	}
	assert_int_equal(sq_model_count(f->m, SQ_UP, SQ_EV_OUTAGE), 5);
}

/* A direction with its own process ignores the link's. */
static void test_a_direction_may_have_its_own(void **state)
{
	struct fixture *f = *state;
	periodic_outages(&f->tl.cfg.outages);
	f->tl.cfg.dir[SQ_UP].outages = (struct sq_outage_config){ .enabled = true, .every = fixed(2 * S),
								  .length = fixed(100 * MS) };
	f->m = tl_model(&f->tl, &f->rec);
	sq_model_advance(f->m, 3 * S);
	sq_time_us down[8], up[8];
	assert_int_equal(outage_times(&f->rec, SQ_DOWN, down, 8), 4);
	assert_int_equal(outage_times(&f->rec, SQ_UP, up, 8), 2);
	assert_int_equal(up[0], 2 * S);
	assert_int_equal(up[1], 2100 * MS);
	assert_int_equal(down[2], 2500 * MS);
}

/* No ARQ: an attempt that starts in the outage is hit and dropped; one that started before
 * it is delivered (it was sent); one after it goes through. 100 B at 64 kbit/s: 12.5 ms. */
static void test_without_arq_the_outage_drops_what_it_meets(void **state)
{
	struct fixture *f = *state;
	periodic_outages(&f->tl.cfg.outages);
	f->tl.cfg.dir[SQ_DOWN].delay = 100 * MS;
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t before = tl_send(f->m, SQ_DOWN, 1 * S - 1 * MS, 100);
	uint64_t during = tl_send(f->m, SQ_DOWN, 1200 * MS, 100);
	uint64_t after = tl_send(f->m, SQ_DOWN, 1500 * MS, 100);
	sq_model_advance(f->m, 2 * S);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, before, 0), 1 * S - 1 * MS + 12500 + 100 * MS);
	assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_ERR, SQ_DOWN, during, 0), 1200 * MS);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, after, 0), 1500 * MS + 12500 + 100 * MS);
}

/* With ARQ the frame is retried every arq_delay while the outage lasts and goes through
 * with the first attempt after it; packets behind it wait in order and leave with it
 * (the burst after an outage). */
static void test_arq_carries_frames_over_the_outage(void **state)
{
	struct fixture *f = *state;
	periodic_outages(&f->tl.cfg.outages);
	struct sq_direction_config *d = &f->tl.cfg.dir[SQ_UP];
	d->arq_retransmissions = 10;
	d->arq_delay = 200 * MS;
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t first = tl_send(f->m, SQ_UP, 1100 * MS, 100);
	uint64_t second = tl_send(f->m, SQ_UP, 1110 * MS, 100);
	sq_model_advance(f->m, 3 * S);
	/* Attempts at 1.1, 1.3 s are hit; 1.5 s is after the outage: out at 1.5 s + 12.5 ms. */
	assert_int_equal(rec_time(&f->rec, SQ_EV_HIT, SQ_UP, first, 1), 1300 * MS);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_UP, first, 2), 1512500);
	/* The second started at 1.1125 s (after the first's serialisation): hit at 1.1125,
	 * 1.3125 s; through at 1.5125 s, out at 1.525 s, right behind the first. */
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_UP, second, 2), 1525 * MS);
}

/* With the netem stage and error draws by time: a netem copy meets the outage like any
 * packet, the outage decides whatever the draw, and what goes through after it also takes
 * netem's delay line (10 ms). */
static void test_netem_copies_and_draws_by_time_meet_the_outage(void **state)
{
	struct fixture *f = *state;
	periodic_outages(&f->tl.cfg.outages);
	f->tl.cfg.channel.error_draws = SQ_ERROR_DRAWS_BY_TIME;
	f->tl.cfg.channel.error_grid = 1 * MS;
	f->tl.cfg.dir[SQ_DOWN].netem.duplicate.p = 1.0;
	f->tl.cfg.dir[SQ_DOWN].netem.latency_us = 10 * MS;
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t during = tl_send(f->m, SQ_DOWN, 1200 * MS, 100);
	uint64_t after = tl_send(f->m, SQ_DOWN, 1600 * MS, 100);
	sq_model_advance(f->m, 2 * S);
	/* ids: during, its copy, after, its copy; copies serialised 12.5 ms behind */
	assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_ERR, SQ_DOWN, during, 0), 1200 * MS);
	assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_ERR, SQ_DOWN, during + 1, 0), 1212500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, after, 0), 1600 * MS + 12500 + 10 * MS);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, after + 1, 0), 1600 * MS + 25000 + 10 * MS);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DUPLICATE), 2);
}

/* The timeline depends on the seed and the replication only: traffic does not move it. */
static void test_the_timeline_is_the_seeds(void **state)
{
	(void)state;
	sq_time_us times[2][16];
	size_t n[2];
	for (int run = 0; run < 2; run++) {
		struct model_fixture f;
		tl_defaults(&f.tl);
		memset(&f.rec, 0, sizeof f.rec);
		f.tl.cfg.outages = (struct sq_outage_config){
			.enabled = true,
			.every = { .kind = SQ_DIST_EXPONENTIAL, .a = 2 * S },
			.length = { .kind = SQ_DIST_UNIFORM, .a = 100 * MS, .b = 900 * MS },
		};
		f.tl.cfg.dir[SQ_DOWN].error[SQ_GOOD] = 0.3;
		f.m = tl_model(&f.tl, &f.rec);
		for (sq_time_us t = 0; run == 1 && t < 10 * S; t += 37 * MS)
			tl_send(f.m, SQ_DOWN, t, 500);
		sq_model_advance(f.m, 10 * S);
		n[run] = outage_times(&f.rec, SQ_UP, times[run], 16);
		sq_model_free(f.m);
		rec_release(&f.rec);
	}
	assert_true(n[0] >= 4);
	assert_int_equal(n[0], n[1]);
	assert_memory_equal(times[0], times[1], n[0] * sizeof times[0][0]);
}

static void test_checks_name_the_key(void **state)
{
	struct fixture *f = *state;
	char err[256];
	f->tl.cfg.dir[SQ_DOWN].outages = (struct sq_outage_config){ .enabled = true, .every = fixed(1 * S) };
	assert_null(sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err));
	assert_non_null(strstr(err, "down.outage_length: fixed length must be"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_both_directions_follow_the_link_outages, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_a_direction_may_have_its_own, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_without_arq_the_outage_drops_what_it_meets, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_arq_carries_frames_over_the_outage, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_netem_copies_and_draws_by_time_meet_the_outage, mf_setup,
						mf_teardown),
		cmocka_unit_test(test_the_timeline_is_the_seeds),
		cmocka_unit_test_setup_teardown(test_checks_name_the_key, mf_setup, mf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
