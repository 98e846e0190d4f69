/* The link model with frame errors: ARQ timing, drops after the retry limit,
 * in-order hold-back, the receive window, out-of-order mode, the channel
 * timeline's independence from traffic, determinism. Outcomes are made
 * deterministic with fixed-length timelines and error probabilities 0 and 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"
#include "test_model_support.h"

struct fixture {
	struct test_link tl;
	struct recorder rec;
};

/* Down: 64 kbit/s (100 B = 12 500 us), delay 5000 us, ARQ delay 70 000 us,
 * frames always hit in the bad state and never in the good one. */
static int setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof *f);
	tl_defaults(&f->tl);
	struct sq_direction_config *d = &f->tl.cfg.dir[SQ_DOWN];
	d->delay = 5000;
	d->arq_delay = 70000;
	d->arq_retransmissions = 3;
	d->error[SQ_GOOD] = 0.0;
	d->error[SQ_BAD] = 1.0;
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

static void set_fixed_channel(struct test_link *tl, enum sq_state first, sq_time_us good,
			      sq_time_us bad)
{
	tl->cfg.channel.initial_state = first;
	tl->cfg.channel.length[SQ_GOOD].a = good;
	tl->cfg.channel.length[SQ_BAD].a = bad;
}

static const struct sq_event *event(const struct fixture *f, enum sq_event_type type,
				    uint64_t id, long attempt)
{
	return rec_event(&f->rec, type, SQ_DOWN, id, attempt);
}

static void retries_come_after_exact_multiples_of_the_arq_delay(void **state)
{
	struct fixture *f = *state;
	/* good [0,100k) bad [100k,200k) good [200k,300k) ... */
	set_fixed_channel(&f->tl, SQ_GOOD, 100000, 100000);
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 100000, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 100000, 100);
	sq_model_advance(m, 1000000);
	/* a: attempts at 100 000 (bad, hit), 170 000 (bad, hit), 240 000 (good). */
	assert_int_equal(event(f, SQ_EV_TX, a, 0)->t, 100000);
	assert_int_equal(event(f, SQ_EV_TX, a, 0)->state, SQ_BAD);
	assert_int_equal(event(f, SQ_EV_HIT, a, 0)->t, 100000);
	assert_int_equal(event(f, SQ_EV_TX, a, 1)->t, 170000);
	assert_int_equal(event(f, SQ_EV_HIT, a, 1)->t, 170000);
	assert_int_equal(event(f, SQ_EV_TX, a, 2)->t, 240000);
	assert_int_equal(event(f, SQ_EV_TX, a, 2)->state, SQ_GOOD);
	assert_int_equal(rec_find(&f->rec, SQ_EV_HIT, SQ_DOWN, a, 2), -1);
	assert_int_equal(rec_find(&f->rec, SQ_EV_TX, SQ_DOWN, a, 3), -1);
	/* recv = T0 + k × arq_delay + ser + delay */
	assert_int_equal(event(f, SQ_EV_RECV, a, 2)->t, 240000 + 12500 + 5000);
	assert_int_equal(event(f, SQ_EV_OUT, a, 2)->t, 257500);
	/* Retransmissions take no capacity: b starts when a's first serialisation ends. */
	assert_int_equal(event(f, SQ_EV_TX, b, 0)->t, 112500);
	assert_int_equal(event(f, SQ_EV_TX, b, 1)->t, 182500);
	assert_int_equal(event(f, SQ_EV_TX, b, 2)->t, 252500);
	assert_int_equal(event(f, SQ_EV_OUT, b, 2)->t, 270000);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_HIT), 4);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_TX), 6);
	rec_assert_ordered(&f->rec);
	sq_model_free(m);
}

static void packet_is_dropped_when_the_last_retry_is_hit(void **state)
{
	struct fixture *f = *state;
	set_fixed_channel(&f->tl, SQ_GOOD, 100000, 100000);
	f->tl.cfg.dir[SQ_DOWN].arq_retransmissions = 1;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 100000, 100);
	sq_model_advance(m, 1000000);
	const struct sq_event *drop = event(f, SQ_EV_DROP_ERR, a, 1);
	assert_int_equal(drop->t, 170000);
	assert_int_equal(drop - f->rec.ev, rec_find(&f->rec, SQ_EV_HIT, SQ_DOWN, a, 1) + 1);
	assert_int_equal(rec_find(&f->rec, SQ_EV_TX, SQ_DOWN, a, 2), -1);
	assert_int_equal(rec_count(&f->rec, SQ_EV_OUT), 0);
	assert_int_equal(sq_model_pending(m), 0);
	sq_model_free(m);
}

static void without_retries_a_hit_frame_is_dropped_at_once(void **state)
{
	struct fixture *f = *state;
	set_fixed_channel(&f->tl, SQ_BAD, TL_FOREVER, 10000);
	f->tl.cfg.dir[SQ_DOWN].arq_retransmissions = 0;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 1000000);
	assert_int_equal(event(f, SQ_EV_HIT, a, 0)->t, 0);
	assert_int_equal(event(f, SQ_EV_DROP_ERR, a, 0)->t, 0);
	/* The dropped frame still occupied the transmitter and the send buffer. */
	assert_int_equal(event(f, SQ_EV_DROP_ERR, a, 0)->sbuf, 100);
	assert_int_equal(event(f, SQ_EV_TX, b, 0)->t, 12500);
	assert_int_equal(event(f, SQ_EV_TX, b, 0)->sbuf, 100);
	assert_int_equal(event(f, SQ_EV_OUT, b, 0)->t, 30000);   /* good from 10 000 */
	sq_model_free(m);
}

/* bad [0, 10 000), then good: the first packet is hit once, later ones never. */
static struct sq_model *one_early_hit_model(struct fixture *f)
{
	set_fixed_channel(&f->tl, SQ_BAD, TL_FOREVER, 10000);
	return tl_model(&f->tl, &f->rec);
}

static void in_order_holds_later_packets_until_the_earlier_one_is_out(void **state)
{
	struct fixture *f = *state;
	struct sq_model *m = one_early_hit_model(f);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 120);
	sq_model_advance(m, 1000000);
	const struct sq_event *b_recv = event(f, SQ_EV_RECV, b, 0);
	assert_int_equal(b_recv->t, 12500 + 15000 + 5000);
	assert_int_equal(b_recv->rbuf, 120);   /* waits in the receive buffer */
	assert_int_equal(event(f, SQ_EV_RECV, a, 1)->t, 87500);
	long out_a = rec_find(&f->rec, SQ_EV_OUT, SQ_DOWN, a, 1);
	long out_b = rec_find(&f->rec, SQ_EV_OUT, SQ_DOWN, b, 0);
	assert_int_equal(f->rec.ev[out_a].t, 87500);
	assert_int_equal(f->rec.ev[out_b].t, 87500);
	assert_int_equal(out_b, out_a + 1);
	assert_int_equal(f->rec.ev[out_b].rbuf, 0);
	rec_assert_ordered(&f->rec);
	sq_model_free(m);
}

static void out_of_order_mode_delivers_at_arrival(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].in_order = false;
	f->tl.cfg.dir[SQ_DOWN].recv_buffer = 1;   /* no window in this mode */
	struct sq_model *m = one_early_hit_model(f);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 120);
	uint64_t c = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 1000000);
	assert_int_equal(event(f, SQ_EV_OUT, b, 0)->t, 32500);
	assert_int_equal(event(f, SQ_EV_OUT, b, 0)->rbuf, 0);
	assert_int_equal(event(f, SQ_EV_TX, c, 0)->t, 27500);
	assert_int_equal(event(f, SQ_EV_OUT, c, 0)->t, 45000);
	assert_int_equal(event(f, SQ_EV_OUT, a, 1)->t, 87500);
	assert_int_equal(rec_count(&f->rec, SQ_EV_STALL), 0);
	sq_model_free(m);
}

static void full_window_stalls_the_transmitter_until_packets_leave(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].recv_buffer = 250;
	struct sq_model *m = one_early_hit_model(f);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t c = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t d = tl_send(m, SQ_DOWN, 50000, 100);
	sq_model_advance(m, 1000000);
	/* At 25 000 a (in ARQ) and b are outstanding: 200 + 100 > 250. */
	long stall = rec_find(&f->rec, SQ_EV_STALL, SQ_DOWN, 0, -1);
	assert_true(stall >= 0);
	assert_int_equal(f->rec.ev[stall].t, 25000);
	assert_int_equal(f->rec.ev[stall].sbuf, 100);
	/* The send buffer keeps filling while stalled. */
	assert_int_equal(event(f, SQ_EV_ENQUEUE, d, -1)->sbuf, 200);
	/* a arrives at 87 500: a and b go out, the window opens, c starts. */
	long recv_a = rec_find(&f->rec, SQ_EV_RECV, SQ_DOWN, a, 1);
	const enum sq_event_type seq[] = { SQ_EV_RECV, SQ_EV_OUT, SQ_EV_OUT, SQ_EV_RESUME, SQ_EV_TX };
	const uint64_t ids[] = { a, a, b, 0, c };
	for (int i = 0; i < 5; i++) {
		const struct sq_event *e = &f->rec.ev[recv_a + i];
		assert_int_equal(e->type, seq[i]);
		assert_int_equal(e->pkt_id, ids[i]);
		assert_int_equal(e->t, 87500);
	}
	/* d fits beside c (100 + 100 <= 250) and starts when c's serialisation ends. */
	assert_int_equal(event(f, SQ_EV_TX, d, 0)->t, 100000);
	assert_int_equal(event(f, SQ_EV_OUT, d, 0)->t, 117500);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_STALL), 1);
	assert_int_equal(sq_model_count(m, SQ_DOWN, SQ_EV_RESUME), 1);
	sq_model_free(m);
}

static void single_packet_larger_than_the_window_still_goes(void **state)
{
	struct fixture *f = *state;
	f->tl.cfg.dir[SQ_DOWN].recv_buffer = 50;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 1000000);
	/* Only one at a time: b waits for a to be out (17 500). */
	assert_int_equal(event(f, SQ_EV_OUT, a, 0)->t, 17500);
	assert_int_equal(event(f, SQ_EV_TX, b, 0)->t, 17500);
	assert_int_equal(rec_find(&f->rec, SQ_EV_STALL, SQ_DOWN, 0, -1) >= 0, 1);
	sq_model_free(m);
}

static void drop_err_releases_held_packets(void **state)
{
	struct fixture *f = *state;
	/* bad [0,10k) good [10k,60k) bad afterwards: a is hit twice and dropped,
	 * b (sent in the good state) waits for a's fate. */
	const struct sq_trace_step trace[] = { { SQ_BAD, 10000 }, { SQ_GOOD, 50000 },
					       { SQ_BAD, TL_FOREVER } };
	tl_set_trace(&f->tl, 3, trace);
	f->tl.cfg.dir[SQ_DOWN].arq_retransmissions = 1;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 1000000);
	assert_int_equal(event(f, SQ_EV_RECV, b, 0)->t, 30000);
	long drop = rec_find(&f->rec, SQ_EV_DROP_ERR, SQ_DOWN, a, 1);
	assert_int_equal(f->rec.ev[drop].t, 70000);
	assert_int_equal(f->rec.ev[drop + 1].type, SQ_EV_OUT);
	assert_int_equal(f->rec.ev[drop + 1].pkt_id, b);
	assert_int_equal(f->rec.ev[drop + 1].t, 70000);
	assert_int_equal(f->rec.ev[drop + 1].rbuf, 0);
	sq_model_free(m);
}

static void drop_err_of_the_blocking_packet_resumes_the_transmitter(void **state)
{
	struct fixture *f = *state;
	set_fixed_channel(&f->tl, SQ_BAD, TL_FOREVER, 100000);
	f->tl.cfg.dir[SQ_DOWN].arq_retransmissions = 1;
	f->tl.cfg.dir[SQ_DOWN].recv_buffer = 100;
	struct sq_model *m = tl_model(&f->tl, &f->rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	sq_model_advance(m, 1000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_STALL, SQ_DOWN, 0, -1), 12500);
	assert_int_equal(event(f, SQ_EV_DROP_ERR, a, 1)->t, 70000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_RESUME, SQ_DOWN, 0, -1), 70000);
	assert_int_equal(event(f, SQ_EV_TX, b, 0)->t, 70000);      /* bad: hit */
	assert_int_equal(event(f, SQ_EV_TX, b, 1)->t, 140000);     /* good */
	assert_int_equal(event(f, SQ_EV_OUT, b, 1)->t, 157500);
	sq_model_free(m);
}

/* Traffic for the long runs: a fixed pseudo-random pattern in both directions. */
static void drive(struct sq_model *m, unsigned pattern, int packets, sq_time_us horizon)
{
	uint64_t x = 0x1234567u + pattern;
	sq_time_us t = 0;
	for (int i = 0; i < packets; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		t += (sq_time_us)((x >> 33) % 40000);
		enum sq_dir dir = (x >> 20) & 1 ? SQ_UP : SQ_DOWN;
		tl_send(m, dir, t, 40 + (uint32_t)((x >> 40) % 1461));
	}
	sq_model_advance(m, horizon);
}

static void random_link(struct test_link *tl, uint32_t replication)
{
	tl_defaults(tl);
	tl->cfg.replication = replication;
	tl->cfg.channel.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL, .a = 400000 };
	tl->cfg.channel.length[SQ_BAD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 50000,
							   .b = 300000 };
	for (int d = 0; d < SQ_DIRS; d++) {
		struct sq_direction_config *dc = &tl->cfg.dir[d];
		dc->error[SQ_GOOD] = 0.1;
		dc->error[SQ_BAD] = 0.8;
		dc->arq_retransmissions = 2;
		dc->arq_delay = 200000;
		dc->delay = 20000;
		dc->send_buffer = 8000;
		dc->recv_buffer = 3000;
	}
	tl->cfg.dir[SQ_UP].in_order = false;
}

struct change {
	sq_time_us t;
	enum sq_state state;
};

static size_t state_changes(const struct recorder *r, struct change *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n && n < max; i++)
		if (r->ev[i].type == SQ_EV_STATE)
			out[n++] = (struct change){ r->ev[i].t, r->ev[i].state };
	return n;
}

#define HORIZON 40000000   /* 40 s */
#define MAX_CHANGES 4096

static void timeline_does_not_depend_on_traffic(void **state)
{
	(void)state;
	struct test_link tl, other;
	random_link(&tl, 3);
	random_link(&other, 4);
	struct recorder quiet = { 0 }, busy = { 0 }, rep4 = { 0 };
	struct sq_model *q = tl_model(&tl, &quiet), *b = tl_model(&tl, &busy);
	struct sq_model *r4 = tl_model(&other, &rep4);
	sq_model_advance(q, HORIZON);
	drive(b, 1, 1500, HORIZON);
	drive(r4, 1, 1500, HORIZON);
	assert_true(sq_model_count(b, SQ_DOWN, SQ_EV_HIT) > 0);

	static struct change cq[MAX_CHANGES], cb[MAX_CHANGES], c4[MAX_CHANGES];
	size_t nq = state_changes(&quiet, cq, MAX_CHANGES);
	size_t nb = state_changes(&busy, cb, MAX_CHANGES);
	size_t n4 = state_changes(&rep4, c4, MAX_CHANGES);
	assert_true(nq > 20);
	assert_int_equal(nq, nb);
	assert_memory_equal(cq, cb, nq * sizeof *cq);
	assert_false(n4 == nq && memcmp(cq, c4, nq * sizeof *cq) == 0);

	/* The timeline API gives the same changes. */
	char err[200];
	struct sq_channel *ch = sq_channel_new(&tl.cfg.channel, tl.cfg.seed, tl.cfg.replication, err,
					       sizeof err);
	assert_non_null(ch);
	sq_time_us t = 0;
	for (size_t i = 0; i < nq; i++) {
		t = sq_channel_next_change(ch, t);
		assert_int_equal(t, cq[i].t);
		assert_int_equal(sq_channel_state_at(ch, t), cq[i].state);
	}
	/* Packet events carry the state of the timeline at their time. */
	for (size_t i = 0; i < busy.n; i++)
		assert_int_equal(busy.ev[i].state, sq_channel_state_at(ch, busy.ev[i].t));
	sq_channel_free(ch);
	sq_model_free(q);
	sq_model_free(b);
	sq_model_free(r4);
	rec_release(&quiet);
	rec_release(&busy);
	rec_release(&rep4);
}

static void identical_runs_give_identical_events(void **state)
{
	(void)state;
	struct test_link tl;
	random_link(&tl, 7);
	struct recorder r1 = { 0 }, r2 = { 0 };
	struct sq_model *m1 = tl_model(&tl, &r1), *m2 = tl_model(&tl, &r2);
	drive(m1, 2, 2000, HORIZON);
	drive(m2, 2, 2000, HORIZON);
	assert_int_equal(rec_first_difference(&r1, &r2), -1);
	sq_model_free(m1);
	sq_model_free(m2);
	rec_release(&r1);
	rec_release(&r2);
}

/* Every packet that enters ends exactly once; buffers stay within limits. */
static void long_run_keeps_the_packet_life_cycle_invariants(void **state)
{
	(void)state;
	struct test_link tl;
	random_link(&tl, 9);
	struct recorder r = { 0 };
	struct sq_model *m = tl_model(&tl, &r);
	drive(m, 3, 3000, HORIZON * 4);
	rec_assert_ordered(&r);
	assert_int_equal(sq_model_pending(m), 0);
	size_t ids = 3001;
	int *ends = calloc(ids, sizeof *ends);
	assert_non_null(ends);
	for (size_t i = 0; i < r.n; i++) {
		const struct sq_event *e = &r.ev[i];
		if (e->type == SQ_EV_OUT || e->type == SQ_EV_DROP_ERR || e->type == SQ_EV_DROP_SBUF ||
		    e->type == SQ_EV_DROP_MTU)
			ends[e->pkt_id]++;
		assert_true(e->sbuf <= tl.cfg.dir[e->dir].send_buffer);
		if (e->type != SQ_EV_STATE)
			assert_true(e->rbuf <= tl.cfg.dir[e->dir].recv_buffer);
		assert_true(e->attempt <= tl.cfg.dir[e->dir].arq_retransmissions);
	}
	for (size_t id = 1; id < ids; id++)
		assert_int_equal(ends[id], 1);
	for (int d = 0; d < SQ_DIRS; d++) {
		uint64_t in = sq_model_count(m, d, SQ_EV_IN);
		uint64_t done = sq_model_count(m, d, SQ_EV_OUT) + sq_model_count(m, d, SQ_EV_DROP_ERR) +
				sq_model_count(m, d, SQ_EV_DROP_SBUF) +
				sq_model_count(m, d, SQ_EV_DROP_MTU);
		assert_int_equal(in, done);
		assert_true(sq_model_count(m, d, SQ_EV_DROP_ERR) > 0);
		assert_true(sq_model_count(m, d, SQ_EV_DROP_SBUF) > 0);
	}
	assert_true(sq_model_count(m, SQ_DOWN, SQ_EV_STALL) > 0);
	assert_int_equal(sq_model_count(m, SQ_UP, SQ_EV_STALL), 0);   /* out of order: no window */
	free(ends);
	sq_model_free(m);
	rec_release(&r);
}

/* One error draw per attempt even when p = 0: a tiny non-zero probability in
 * the good state must not shift the draws of later bad-state attempts. */
static void error_draws_happen_even_when_the_probability_is_zero(void **state)
{
	(void)state;
	struct test_link zero, tiny;
	random_link(&zero, 11);
	zero.cfg.dir[SQ_DOWN].error[SQ_GOOD] = 0.0;
	tiny = zero;
	for (int d = 0; d < SQ_DIRS; d++) {
		tiny.cfg.dir[d].rate = tiny.rate[d];
		zero.cfg.dir[d].rate = zero.rate[d];
	}
	tiny.cfg.dir[SQ_DOWN].error[SQ_GOOD] = 1e-300;
	struct recorder rz = { 0 }, rt = { 0 };
	struct sq_model *mz = tl_model(&zero, &rz), *mt = tl_model(&tiny, &rt);
	drive(mz, 4, 1500, HORIZON);
	drive(mt, 4, 1500, HORIZON);
	assert_true(sq_model_count(mz, SQ_DOWN, SQ_EV_HIT) > 0);
	assert_int_equal(rec_first_difference(&rz, &rt), -1);
	sq_model_free(mz);
	sq_model_free(mt);
	rec_release(&rz);
	rec_release(&rt);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(retries_come_after_exact_multiples_of_the_arq_delay),
		T(packet_is_dropped_when_the_last_retry_is_hit),
		T(without_retries_a_hit_frame_is_dropped_at_once),
		T(in_order_holds_later_packets_until_the_earlier_one_is_out),
		T(out_of_order_mode_delivers_at_arrival),
		T(full_window_stalls_the_transmitter_until_packets_leave),
		T(single_packet_larger_than_the_window_still_goes),
		T(drop_err_releases_held_packets),
		T(drop_err_of_the_blocking_packet_resumes_the_transmitter),
		T(timeline_does_not_depend_on_traffic),
		T(identical_runs_give_identical_events),
		T(long_run_keeps_the_packet_life_cycle_invariants),
		T(error_draws_happen_even_when_the_probability_is_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
