/* The link model's netem stage and error draws by time (LINK_MODEL.md "The netem stage",
 * "Random numbers"): how the stage's decisions become events, the clone hook, the netem delay
 * line after the link, and that two variants transmitting at the same moment meet the same
 * error when draws are by time. The decisions themselves are checked packet for packet
 * against an independent reference in tests/test_netem_reference.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

static void every_packet_is_lost_at_a_loss_of_one(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].netem.loss_model = SQ_NETEM_LOSS_RANDOM;
	f->tl.cfg.dir[SQ_DOWN].netem.loss[0] = 1.0;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 5; i++)
		tl_send(f->m, SQ_DOWN, i * 1000, 100);
	uint64_t up = tl_send(f->m, SQ_UP, 6000, 100);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_LOSS), 5);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_ENQUEUE), 0);
	assert_int_equal(rec_time(&f->rec, SQ_EV_DROP_LOSS, SQ_DOWN, 3, -1), 2000);
	/* the other direction has no netem stage */
	assert_int_equal(rec_find(&f->rec, SQ_EV_OUT, SQ_UP, up, -1) >= 0, 1);
	assert_int_equal(sq_model_pending(f->m), 0);
}

static void the_mtu_check_comes_before_the_netem_stage(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].netem.loss_model = SQ_NETEM_LOSS_RANDOM;
	f->tl.cfg.dir[SQ_DOWN].netem.loss[0] = 1.0;
	f->m = tl_model(&f->tl, &f->rec);
	tl_send(f->m, SQ_DOWN, 0, 1501);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_MTU), 1);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_LOSS), 0);
}

struct clones {
	int calls;
	void *give;
};

static void *clone_hook(void *ctx, void *user)
{
	struct clones *c = ctx;
	(void)user;
	c->calls++;
	return c->give;
}

static void a_duplicate_is_a_packet_of_its_own_with_the_callers_copy(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].netem.duplicate.p = 1.0;
	f->m = tl_model(&f->tl, &f->rec);
	static int copy_buffer;
	struct clones c = { .give = &copy_buffer };
	sq_model_set_clone(f->m, clone_hook, &c);
	uint64_t id = tl_send(f->m, SQ_DOWN, 0, 100);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(c.calls, 1);
	const struct sq_event *dup = rec_event(&f->rec, SQ_EV_DUPLICATE, SQ_DOWN, id + 1, -1);
	assert_int_equal(dup->copy_of, id);
	assert_ptr_equal(dup->user, &copy_buffer);
	/* both go out, the copy serialised after the original (100 B at 64 kbit/s: 12 500 us) */
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, id, -1), 12500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, id + 1, -1), 25000);
	assert_ptr_equal(rec_event(&f->rec, SQ_EV_OUT, SQ_DOWN, id + 1, -1)->user, &copy_buffer);
}

static void no_copy_when_the_caller_has_none(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].netem.duplicate.p = 1.0;
	f->m = tl_model(&f->tl, &f->rec);
	struct clones c = { .give = NULL };
	sq_model_set_clone(f->m, clone_hook, &c);
	tl_send(f->m, SQ_DOWN, 0, 100);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(c.calls, 1);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DUPLICATE), 0);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_OUT), 1);
}

static void a_corruption_names_a_bit_inside_the_packet(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].netem.corrupt.p = 1.0;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 50; i++)
		tl_send(f->m, SQ_DOWN, i * 20000, 40);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_CORRUPT), 50);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_OUT), 50);
	bool high = false;
	for (size_t i = 0; i < f->rec.n; i++) {
		if (f->rec.ev[i].type != SQ_EV_CORRUPT)
			continue;
		assert_true(f->rec.ev[i].corrupt_bit < 8 * 40);
		high |= f->rec.ev[i].corrupt_bit >= 8 * 20;
	}
	assert_true(high);
}

/* netem's delay line comes after the link: its latency adds to recv; a reordered packet
 * skips it and overtakes the packets before it (out of order). */
static void the_netem_delay_follows_the_link_and_a_reordered_packet_skips_it(void **state)
{
	struct model_fixture *f = *state;
	struct sq_direction_config *d = &f->tl.cfg.dir[SQ_DOWN];
	f->tl.rate[SQ_DOWN][0].rate_bps = SQ_RATE_UNLIMITED;
	d->delay = 1000;
	d->in_order = false;
	d->netem.latency_us = 50000;
	d->netem.reorder.p = 1.0;
	d->netem.gap = 3;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 6; i++)
		tl_send(f->m, SQ_DOWN, i * 100, 100);
	sq_model_advance(f->m, 10000000);
	/* gap 3 and reorder 100%: packets 3 and 6 (every third) skip the delay line */
	static const sq_time_us expect[] = { 51000, 51100, 1200, 51300, 51400, 1500 };
	for (int i = 0; i < 6; i++)
		assert_int_equal(rec_time(&f->rec, SQ_EV_RECV, SQ_DOWN, (uint64_t)i + 1, -1), expect[i]);
}

/* The hit/no-hit pattern of the down packets in a link with error 0.5, every packet
 * transmitted at once (unlimited rate): one bit per packet of `times`. */
static uint64_t fates(struct model_fixture *f, enum sq_error_draws mode, const sq_time_us *times,
		      size_t n)
{
	tl_defaults(&f->tl);
	f->tl.cfg.channel.error_draws = mode;
	f->tl.cfg.channel.error_grid = 1000;
	f->tl.rate[SQ_DOWN][0].rate_bps = SQ_RATE_UNLIMITED;
	f->tl.cfg.dir[SQ_DOWN].error[SQ_GOOD] = 0.5;
	struct recorder rec = { 0 };
	struct sq_model *m = tl_model(&f->tl, &rec);
	uint64_t bits = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = tl_send(m, SQ_DOWN, times[i], 100);
		bits |= (uint64_t)(rec_find(&rec, SQ_EV_HIT, SQ_DOWN, id, 0) >= 0) << i;
	}
	sq_model_free(m);
	rec_release(&rec);
	return bits;
}

/* Two variants: the second sends one packet more (at 500 us) and so shifts the per-frame
 * stream; by time, every attempt starting at the same moment meets the same error. */
static void by_time_two_variants_transmitting_at_the_same_moment_meet_the_same_error(void **state)
{
	struct model_fixture *f = *state;
	sq_time_us base[40], extra[41];
	extra[0] = 500;
	for (int i = 0; i < 40; i++)
		base[i] = extra[i + 1] = 1000 + 7000 * (sq_time_us)i;
	uint64_t a = fates(f, SQ_ERROR_DRAWS_BY_TIME, base, 40);
	uint64_t b = fates(f, SQ_ERROR_DRAWS_BY_TIME, extra, 41) >> 1;
	assert_true(a == b);
	assert_true(a != 0 && a != (1ULL << 40) - 1);   /* some hit, some not */
	uint64_t pa = fates(f, SQ_ERROR_DRAWS_PER_FRAME, base, 40);
	uint64_t pb = fates(f, SQ_ERROR_DRAWS_PER_FRAME, extra, 41) >> 1;
	assert_true(pa != pb);   /* the Seawind mode: one frame more shifts every later draw */
	/* per frame is the Seawind mode, unchanged: the default configuration gives the same */
	assert_true(pa == fates(f, (enum sq_error_draws)0, base, 40));
}

static void by_time_attempts_in_one_grid_step_share_their_draw(void **state)
{
	struct model_fixture *f = *state;
	sq_time_us same_step[40], next_step[40];
	for (int i = 0; i < 40; i++) {
		same_step[i] = 10000 * (sq_time_us)i;          /* at the start of a 1 ms step */
		next_step[i] = 10000 * (sq_time_us)i + 999;    /* at its end */
	}
	assert_true(fates(f, SQ_ERROR_DRAWS_BY_TIME, same_step, 40) ==
		    fates(f, SQ_ERROR_DRAWS_BY_TIME, next_step, 40));
}

static void by_time_needs_a_grid(void **state)
{
	struct model_fixture *f = *state;
	f->tl.cfg.channel.error_draws = SQ_ERROR_DRAWS_BY_TIME;
	f->tl.cfg.channel.error_grid = 0;
	char err[256];
	assert_null(sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err));
	assert_string_equal(err, "channel.error_grid: must be in [1, 1000000000000] us with error_draws = by_time, "
				 "got 0 us");
}

static void netem_settings_are_checked_with_the_files_keys(void **state)
{
	struct model_fixture *f = *state;
	char err[256];
	struct sq_netem_config *n = &f->tl.cfg.dir[SQ_UP].netem;
	n->reorder.p = 0.5;
	assert_null(sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err));
	assert_string_equal(err, "up.netem_reorder: reordering needs a delay in netem_delay (a reordered packet "
				 "skips it)");
	n->reorder.p = 0;
	n->loss_model = SQ_NETEM_LOSS_STATE;
	n->loss[0] = 0.7;
	n->loss[4] = 0.4;
	assert_null(sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err));
	assert_string_equal(err, "up.netem_loss: state needs p13 + p14 <= 1 and p31 + p32 <= 1, got p13 0.7, "
				 "p14 0.4, p31 0, p32 0");
	n->loss_model = SQ_NETEM_LOSS_GEMODEL;
	n->loss[1] = 1.5;
	assert_null(sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err));
	assert_string_equal(err, "up.netem_loss: r 1.5 is outside [0, 1] (0%..100%)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_packet_is_lost_at_a_loss_of_one, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(the_mtu_check_comes_before_the_netem_stage, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(a_duplicate_is_a_packet_of_its_own_with_the_callers_copy, mf_setup,
						mf_teardown),
		cmocka_unit_test_setup_teardown(no_copy_when_the_caller_has_none, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(a_corruption_names_a_bit_inside_the_packet, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(the_netem_delay_follows_the_link_and_a_reordered_packet_skips_it,
						mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(by_time_two_variants_transmitting_at_the_same_moment_meet_the_same_error,
						mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(by_time_attempts_in_one_grid_step_share_their_draw, mf_setup,
						mf_teardown),
		cmocka_unit_test_setup_teardown(by_time_needs_a_grid, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(netem_settings_are_checked_with_the_files_keys, mf_setup, mf_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
