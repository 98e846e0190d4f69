/* The link model without errors: MTU, send buffer, exact serialisation over
 * bandwidth schedules, propagation, packet ids, counters, deadlines, config
 * validation. Virtual time, exact to the microsecond. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

struct fixture {
	struct test_link tl;
	struct recorder rec;
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
	rec_release(&f->rec);
	test_free(f);
	return 0;
}

/* One packet of ip_len bytes sent at t = 0 on an otherwise idle link; returns
 * its out time. */
static sq_time_us single_packet_out_time(struct fixture *f, uint32_t ip_len)
{
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t id = tl_send(m, SQ_DOWN, 0, ip_len);
	sq_model_advance(m, 10000000);
	sq_time_us out = rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, id, 0);
	assert_int_equal(rec_time(&f->rec, SQ_EV_RECV, SQ_DOWN, id, 0), out);
	assert_int_equal(sq_model_pending(m), 0);
	sq_model_free(m);
	rec_release(&f->rec);
	return out;
}

static void serialisation_is_exact_with_the_ceiling(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(single_packet_out_time(f, 576), 72000);   /* 576 B at 64 kbit/s */
	assert_int_equal(single_packet_out_time(f, 100), 12500);
	f->tl.rate[SQ_DOWN][0].rate_bps = 9600;
	assert_int_equal(single_packet_out_time(f, 1), 834);       /* 833.3 us rounded up */
	f->tl.cfg.dir[SQ_DOWN].overhead = 4;                       /* 5 B at 9600 bit/s */
	assert_int_equal(single_packet_out_time(f, 1), 4167);
}

static void propagation_delay_is_added_after_serialisation(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].delay = 300000;
	assert_int_equal(single_packet_out_time(f, 576), 372000);
}

static void unlimited_rate_takes_no_time(void **state)
{
	struct fixture *f = *state;
	f->tl.rate[SQ_DOWN][0].rate_bps = SQ_RATE_UNLIMITED;
	f->tl.cfg.dir[SQ_DOWN].delay = 25;
	assert_int_equal(single_packet_out_time(f, 1500), 25);
}

static void zero_time_link_emits_everything_at_the_arrival_instant(void **state)
{
	struct fixture *f = *state;
	f->tl.rate[SQ_DOWN][0].rate_bps = SQ_RATE_UNLIMITED;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	tl_send(m, SQ_DOWN, 700, 1500);
	tl_send(m, SQ_DOWN, 700, 40);
	const enum sq_event_type want[] = { SQ_EV_IN, SQ_EV_ENQUEUE, SQ_EV_TX, SQ_EV_RECV, SQ_EV_OUT,
					    SQ_EV_IN, SQ_EV_ENQUEUE, SQ_EV_TX, SQ_EV_RECV, SQ_EV_OUT };
	assert_int_equal(f->rec.n, 10);
	for (size_t i = 0; i < 10; i++) {
		assert_int_equal(f->rec.ev[i].type, want[i]);
		assert_int_equal(f->rec.ev[i].t, 700);
		assert_int_equal(f->rec.ev[i].pkt_id, i < 5 ? 1 : 2);
	}
	/* The first packet's (zero-length) serialisation has ended before the second arrives. */
	assert_int_equal(f->rec.ev[5].sbuf, 0);
	assert_int_equal(sq_model_next_deadline(m), TL_FOREVER);
	sq_model_free(m);
}

static void state_change_comes_before_other_events_at_the_same_time(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.channel.length[SQ_GOOD].a = 12500;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 100000);
	long change = rec_find(&f->rec, SQ_EV_STATE, SQ_DOWN, 0, -1);
	long recv = rec_find(&f->rec, SQ_EV_RECV, SQ_DOWN, a, 0);
	assert_int_equal(f->rec.ev[change].t, 12500);
	assert_int_equal(f->rec.ev[change].state, SQ_BAD);
	assert_int_equal(recv, change + 1);
	assert_int_equal(f->rec.ev[recv].state, SQ_BAD);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, b, 0), 12500);
	/* Time never goes back: an earlier now is the previous one. */
	sq_model_advance(m, 5);
	assert_int_equal(tl_send(m, SQ_DOWN, 3, 100), 3);
	assert_int_equal(rec_time(&f->rec, SQ_EV_IN, SQ_DOWN, 3, 0), 100000);
	sq_model_free(m);
}

static void packet_event_sequence_is_complete_and_ordered(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_UP].delay = 1000;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	tl_send(m, SQ_UP, 5, 100);
	sq_model_advance(m, 1000000);
	const enum sq_event_type want[] = { SQ_EV_IN, SQ_EV_ENQUEUE, SQ_EV_TX, SQ_EV_RECV, SQ_EV_OUT };
	const sq_time_us at[] = { 5, 5, 5, 13505, 13505 };
	const uint32_t sbuf[] = { 0, 100, 100, 0, 0 };
	assert_int_equal(f->rec.n, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct sq_event *e = &f->rec.ev[i];
		assert_int_equal(e->type, want[i]);
		assert_int_equal(e->t, at[i]);
		assert_int_equal(e->sbuf, sbuf[i]);
		assert_int_equal(e->dir, SQ_UP);
		assert_int_equal(e->pkt_id, 1);
		assert_int_equal(e->ip_len, 100);
		assert_int_equal(e->state, SQ_GOOD);
		assert_int_equal(e->rbuf, 0);
	}
	assert_int_equal(sq_model_count(m, SQ_UP, SQ_EV_OUT), 1);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_OUT), 0);
	sq_model_free(m);
}

static void back_to_back_train_is_serialised_one_after_another(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].delay = 100000;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 576);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 576);
	uint64_t c = tl_send(m, SQ_DOWN, 10000, 100);
	/* The send buffer holds all three until their serialisations end. */
	assert_int_equal(rec_event(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, c, 0)->sbuf, 1252);
	sq_model_advance(m, 10000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, a, 0), 0);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, b, 0), 72000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, c, 0), 144000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, a, 0), 172000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, b, 0), 244000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, c, 0), 256500);
	/* b's tx event shows a's bytes gone and b's still there. */
	assert_int_equal(rec_event(&f->rec, SQ_EV_TX, SQ_DOWN, b, 0)->sbuf, 676);
	rec_assert_ordered(&f->rec);
	sq_model_free(m);
}

static void send_buffer_fits_at_the_limit_and_drops_one_byte_more(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 1000;
	f->tl.cfg.dir[SQ_DOWN].mtu = 1000;         /* the send buffer holds a packet of the MTU */
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 600);   /* in transmission, still occupies */
	uint64_t b = tl_send(m, SQ_DOWN, 1, 400);   /* 1000 == limit: fits */
	uint64_t c = tl_send(m, SQ_DOWN, 2, 1);     /* 1001: dropped */
	assert_true(rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, b, 0) >= 0);
	long drop = rec_find(&f->rec, SQ_EV_DROP_SBUF, SQ_DOWN, c, 0);
	assert_true(drop >= 0);
	assert_int_equal(f->rec.ev[drop].t, 2);
	assert_int_equal(f->rec.ev[drop].sbuf, 1000);
	assert_int_equal(rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, c, 0), -1);
	/* a's serialisation ends at 75 000: then 600 bytes are free again. */
	uint64_t d = tl_send(m, SQ_DOWN, 74999, 1);
	uint64_t e = tl_send(m, SQ_DOWN, 75000, 600);
	assert_true(rec_find(&f->rec, SQ_EV_DROP_SBUF, SQ_DOWN, d, 0) >= 0);
	assert_true(rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, e, 0) >= 0);
	sq_model_advance(m, 10000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, a, 0), 75000);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_DROP_SBUF), 2);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_IN), 5);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_OUT), 3);
	sq_model_free(m);
}

static void mtu_drops_only_longer_packets(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_UP].mtu = 576;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t ok = tl_send(m, SQ_UP, 0, 576);
	uint64_t big = tl_send(m, SQ_UP, 0, 577);
	long drop = rec_find(&f->rec, SQ_EV_DROP_MTU, SQ_UP, big, 0);
	assert_true(drop >= 0);
	assert_int_equal(f->rec.ev[drop - 1].type, SQ_EV_IN);   /* in, then drop_mtu */
	assert_int_equal(f->rec.ev[drop].sbuf, 576);
	sq_model_advance(m, 1000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_UP, ok, 0), 72000);
	assert_int_equal(sq_model_count(m, SQ_UP, SQ_EV_DROP_MTU), 1);
	sq_model_free(m);
}

static void rate_change_mid_packet_applies_to_the_rest(void **state)
{
	struct fixture *f = *state;
	/* 1000 B = 8e9 bit·us: 10 000 us at 64 kbit/s do 6.4e8, the remaining
	 * 7.36e9 at 128 kbit/s take 57 500 us. */
	const struct sq_rate_step steps[] = { { 0, 64000 }, { 10000, 128000 } };
	tl_set_rates(&f->tl, SQ_DOWN, 2, steps);
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 1000);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);   /* entirely at 128 kbit/s: 6250 us */
	sq_model_advance(m, 1000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, a, 0), 67500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, b, 0), 73750);
	sq_model_free(m);
}

static void zero_rate_is_an_outage(void **state)
{
	struct fixture *f = *state;
	/* 100 B: 6000 us at 64 kbit/s do 3.84e8 of 8e8 bit·us; nothing happens
	 * during [6000, 20000); the remaining 4.16e8 take 6500 us. */
	const struct sq_rate_step steps[] = { { 0, 64000 }, { 6000, 0 }, { 20000, 64000 } };
	tl_set_rates(&f->tl, SQ_DOWN, 3, steps);
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 7000, 100);   /* queued behind a */
	sq_model_advance(m, 1000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, a, 0), 26500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, b, 0), 26500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, b, 0), 39000);
	sq_model_free(m);
}

static void outage_at_the_end_of_the_schedule_keeps_packets(void **state)
{
	struct fixture *f = *state;
	const struct sq_rate_step steps[] = { { 0, 64000 }, { 1000, 0 } };
	tl_set_rates(&f->tl, SQ_DOWN, 2, steps);
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	tl_send(m, SQ_DOWN, 0, 100);
	tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 100000000);
	assert_int_equal(rec_count(&f->rec, SQ_EV_OUT), 0);
	assert_int_equal(rec_count(&f->rec, SQ_EV_TX), 1);
	assert_int_equal(sq_model_pending(m), 2);
	sq_model_free(m);
}

static void packet_ids_count_across_directions_including_drops(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_UP].mtu = 100;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	assert_int_equal(tl_send(m, SQ_DOWN, 0, 50), 1);
	assert_int_equal(tl_send(m, SQ_UP, 0, 500), 2);   /* dropped: mtu */
	assert_int_equal(tl_send(m, SQ_UP, 3, 50), 3);
	assert_int_equal(tl_send(m, SQ_DOWN, 4, 50), 4);
	sq_model_free(m);
}

static void directions_are_independent(void **state)
{
	struct fixture *f = *state;
	f->tl.rate[SQ_UP][0].rate_bps = 128000;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t d = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t u = tl_send(m, SQ_UP, 0, 100);
	sq_model_advance(m, 1000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, d, 0), 12500);
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_UP, u, 0), 6250);
	rec_assert_ordered(&f->rec);
	sq_model_free(m);
}

static void next_deadline_names_the_next_thing_to_do(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].delay = 1000;
	f->tl.cfg.channel.length[SQ_GOOD].a = 50000;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	assert_int_equal(sq_model_next_deadline(m), 50000);   /* only the state change */
	tl_send(m, SQ_DOWN, 0, 100);
	assert_int_equal(sq_model_next_deadline(m), 12500);   /* serialisation end */
	sq_model_advance(m, 12500);
	assert_int_equal(sq_model_next_deadline(m), 13500);   /* recv */
	assert_int_equal(rec_count(&f->rec, SQ_EV_OUT), 0);
	sq_model_advance(m, 13500);
	assert_int_equal(rec_count(&f->rec, SQ_EV_OUT), 1);
	assert_int_equal(sq_model_next_deadline(m), 50000);
	sq_model_advance(m, 50000);
	assert_int_equal(rec_count(&f->rec, SQ_EV_STATE), 1);
	assert_int_equal(f->rec.ev[f->rec.n - 1].state, SQ_BAD);
	assert_int_equal(sq_model_next_deadline(m), 50000 + TL_FOREVER);
	sq_model_free(m);
}

static void expect_refused(struct test_link *tl, const char *message)
{
	char err[256] = "";
	struct recorder r = { 0 };
	struct sq_model *m = sq_model_new(&tl->cfg, rec_sink, &r, err, sizeof err);
	assert_null(m);
	assert_string_equal(err, message);
}

static void config_errors_name_the_field_and_what_was_expected(void **state)
{
	struct fixture *f = *state;
	struct test_link tl;

	tl_defaults(&tl);
	tl.cfg.dir[SQ_DOWN].error[SQ_BAD] = 1.5;
	expect_refused(&tl, "down.error_bad: 1.5 is outside [0, 1]");

	tl_defaults(&tl);
	const struct sq_rate_step steps[] = { { 0, 1000 }, { 10, 2000 }, { 10, 3000 } };
	tl_set_rates(&tl, SQ_UP, 3, steps);
	expect_refused(&tl, "up.bandwidth[2]: steps must be in increasing time, got 10 us after 10 us");

	tl_defaults(&tl);
	tl.rate[SQ_DOWN][0].at_us = 5;
	expect_refused(&tl, "down.bandwidth[0]: the first step must start at 0 us, got 5");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_UP].rate_len = 0;
	expect_refused(&tl, "up.bandwidth: at least one step is needed, got none");

	tl_defaults(&tl);
	tl.cfg.channel.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 7, .b = 3 };
	expect_refused(&tl, "channel.good: uniform needs a <= b, got a 7 > b 3");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_UP].delay = -1;
	expect_refused(&tl, "up.delay: -1 us is outside [0, 1000000000000] us");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_DOWN].mtu = 0;
	expect_refused(&tl, "down.mtu: must be >= 1 byte, got 0");

	/* Links that could carry nothing: a send buffer below the MTU (router stage or not), an
	 * overhead of gigabytes per packet. */
	tl_defaults(&tl);
	tl.cfg.dir[SQ_DOWN].send_buffer = 0;
	expect_refused(&tl, "down.send_buffer: 0 B is below the MTU 1500 B; a packet of the MTU would never fit "
			    "(expected send_buffer >= mtu)");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_UP].send_buffer = 1499;
	expect_refused(&tl, "up.send_buffer: 1499 B is below the MTU 1500 B; a packet of the MTU would never fit "
			    "(expected send_buffer >= mtu)");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_DOWN].overhead = 4294967295u;
	expect_refused(&tl, "down.overhead: 4294967295 B per packet is more than the limit 65535 B (a link "
			    "layer's headers, not a multiple of the packet)");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_DOWN].arq_retransmissions = 5000;
	expect_refused(&tl, "down.arq_retransmissions: 5000 is more than the limit 1000");

	tl_defaults(&tl);
	tl.cfg.dir[SQ_UP].arq_retransmissions = 2;
	expect_refused(&tl, "up.arq_delay: must be >= 1 us when arq_retransmissions > 0 (2), got 0 us");

	/* The defaults themselves are fine. */
	tl_defaults(&tl);
	struct sq_model *m = tl_model(&tl, &f->rec);
	sq_model_free(m);
}

static void names_match_the_log_format(void **state)
{
	(void)state;
	assert_string_equal(sq_event_name(SQ_EV_DROP_SBUF), "drop_sbuf");
	assert_string_equal(sq_event_name(SQ_EV_RESUME), "resume");
	assert_string_equal(sq_event_name(SQ_EV_STATE), "state");
	assert_string_equal(sq_dir_name(SQ_UP), "up");
	assert_string_equal(sq_state_name(SQ_BAD), "bad");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(serialisation_is_exact_with_the_ceiling),
		T(propagation_delay_is_added_after_serialisation),
		T(unlimited_rate_takes_no_time),
		T(zero_time_link_emits_everything_at_the_arrival_instant),
		T(state_change_comes_before_other_events_at_the_same_time),
		T(packet_event_sequence_is_complete_and_ordered),
		T(back_to_back_train_is_serialised_one_after_another),
		T(send_buffer_fits_at_the_limit_and_drops_one_byte_more),
		T(mtu_drops_only_longer_packets),
		T(rate_change_mid_packet_applies_to_the_rest),
		T(zero_rate_is_an_outage),
		T(outage_at_the_end_of_the_schedule_keeps_packets),
		T(packet_ids_count_across_directions_including_drops),
		T(directions_are_independent),
		T(next_deadline_names_the_next_thing_to_do),
		T(config_errors_name_the_field_and_what_was_expected),
		T(names_match_the_log_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
