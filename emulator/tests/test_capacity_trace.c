/* Recorded capacity traces (LINK_MODEL.md "Recorded capacity traces"): serialisation over
 * mahimahi delivery opportunities, pinned on hand-worked cases and checked packet for
 * packet against an independent reference written from mahimahi's documented semantics
 * (mm-link(1): one opportunity per line, 1500 B of IP packet each, byte accounting,
 * unused bytes and opportunities wasted, wrap-around), in virtual time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capacity_trace.h"
#include "rng.h"
#include "test_model_support.h"

#define fixture model_fixture

/* Down replays `ms`; no delay and no errors, so a packet goes out when its last byte has an
 * opportunity. */
static void use_trace(struct fixture *f, const uint32_t *ms, size_t n)
{
	f->tl.cfg.dir[SQ_DOWN].capacity = (struct sq_opportunity_trace){ .ms = ms, .len = n };
	f->m = tl_model(&f->tl, &f->rec);
}

static sq_time_us out_at(struct fixture *f, uint64_t id)
{
	return rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, id, -1);
}

static const uint32_t TRACE_2_5_10[] = { 2, 5, 10 };   /* period 10 ms */

/* A 1500 B packet (1504 B with mahimahi's TUN header) fills one opportunity: the first
 * after its start. */
static void test_full_packet_takes_the_next_opportunity(void **state)
{
	struct fixture *f = *state;
	use_trace(f, TRACE_2_5_10, 3);
	uint64_t a = tl_send(f->m, SQ_DOWN, 0, 1500);
	uint64_t b = tl_send(f->m, SQ_DOWN, 100, 1500);
	sq_model_advance(f->m, 100000);
	assert_int_equal(out_at(f, a), 2000);
	assert_int_equal(out_at(f, b), 5000);
}

/* Byte accounting: the rest of an opportunity goes to the packet waiting behind. 700 B
 * packets need 704 B: two share the 2 ms opportunity (96 B left), the third needs 608 B
 * more from the 5 ms one. */
static void test_small_packets_share_an_opportunity(void **state)
{
	struct fixture *f = *state;
	use_trace(f, TRACE_2_5_10, 3);
	uint64_t a = tl_send(f->m, SQ_DOWN, 0, 700);
	uint64_t b = tl_send(f->m, SQ_DOWN, 0, 700);
	uint64_t c = tl_send(f->m, SQ_DOWN, 0, 700);
	sq_model_advance(f->m, 100000);
	assert_int_equal(out_at(f, a), 2000);
	assert_int_equal(out_at(f, b), 2000);
	assert_int_equal(out_at(f, c), 5000);
}

/* Unused bytes are wasted when nothing waits: a packet arriving at the instant of the
 * opportunity its predecessor ended in does not get the rest of it (mahimahi serves the
 * opportunity before it enqueues the packet), nor an opportunity at its own instant. */
static void test_unused_bytes_and_opportunities_are_wasted(void **state)
{
	struct fixture *f = *state;
	use_trace(f, TRACE_2_5_10, 3);
	uint64_t a = tl_send(f->m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(f->m, SQ_DOWN, 2000, 100);
	uint64_t c = tl_send(f->m, SQ_DOWN, 9000, 100);   /* 5 ms went by unused */
	sq_model_advance(f->m, 100000);
	assert_int_equal(out_at(f, a), 2000);
	assert_int_equal(out_at(f, b), 5000);
	assert_int_equal(out_at(f, c), 10000);
}

/* The trace repeats with its period, the last line's time: 12, 15, 20, 22, ... ms. */
static void test_wraps_around_with_the_period(void **state)
{
	struct fixture *f = *state;
	use_trace(f, TRACE_2_5_10, 3);
	uint64_t a = tl_send(f->m, SQ_DOWN, 10000, 1500);
	uint64_t b = tl_send(f->m, SQ_DOWN, 10000, 1500);
	uint64_t c = tl_send(f->m, SQ_DOWN, 10000, 1500);
	uint64_t d = tl_send(f->m, SQ_DOWN, 10000, 1500);
	sq_model_advance(f->m, 100000);
	assert_int_equal(out_at(f, a), 12000);
	assert_int_equal(out_at(f, b), 15000);
	assert_int_equal(out_at(f, c), 20000);
	assert_int_equal(out_at(f, d), 22000);
}

/* Several lines with the same time are several opportunities at that instant; squall's
 * overhead is added to mahimahi's 4 B; a packet larger than one opportunity spans several. */
static void test_repeated_lines_overhead_and_large_packets(void **state)
{
	struct fixture *f = *state;
	static const uint32_t ms[] = { 1, 1, 1, 4 };
	f->tl.cfg.dir[SQ_DOWN].mtu = 9000;
	f->tl.cfg.dir[SQ_DOWN].overhead = 4;          /* 1500 B now need 1508 B */
	use_trace(f, ms, 4);
	uint64_t a = tl_send(f->m, SQ_DOWN, 0, 1500); /* 1 ms (all of #0, 4 B of #1) */
	uint64_t b = tl_send(f->m, SQ_DOWN, 0, 3000); /* 3008 B: rest of #1, #2, 8 B of #3 */
	sq_model_advance(f->m, 100000);
	assert_int_equal(out_at(f, a), 1000);
	assert_int_equal(out_at(f, b), 4000);
}

/* ---- the reference: mahimahi's link queue as mm-link(1) documents it ------------------ */

struct ref_pkt {
	uint64_t arrival_ms;
	uint32_t bytes;        /* IP packet + mahimahi's 4 B TUN header */
	uint64_t departure_ms;
};

/* Walks the opportunities one by one, each worth 1504 B: a packet arriving in millisecond
 * a joins the queue after every opportunity at or before a has been served; an opportunity
 * serves the queue byte by byte and its unused bytes are lost; the trace repeats with its
 * last time as period. */
static void reference(const uint32_t *ms, size_t n, struct ref_pkt *p, size_t np)
{
	size_t head = 0, queued = 0;   /* p[head .. queued) wait; p[head] may be partly sent */
	uint32_t head_left = 0;
	uint64_t base = 0;
	for (size_t i = 0; head < np; i = (i + 1) % n) {
		uint64_t t = base + ms[i];
		if (i == n - 1)
			base += ms[n - 1];
		while (queued < np && p[queued].arrival_ms < t)
			queued++;
		uint32_t room = 1504;
		while (room > 0 && head < queued) {
			if (head_left == 0)
				head_left = p[head].bytes;
			uint32_t used = room < head_left ? room : head_left;
			room -= used;
			head_left -= used;
			if (head_left == 0)
				p[head++].departure_ms = t;
		}
	}
}

static void compare_with_reference(const uint32_t *ms, size_t n, uint64_t seed, size_t np,
				   sq_time_us mean_gap)
{
	struct model_fixture f;
	tl_defaults(&f.tl);
	memset(&f.rec, 0, sizeof f.rec);
	struct sq_direction_config *d = &f.tl.cfg.dir[SQ_DOWN];
	d->send_buffer = 100000000;
	d->recv_buffer = 100000000;
	d->capacity = (struct sq_opportunity_trace){ .ms = ms, .len = n };
	f.m = tl_model(&f.tl, &f.rec);
	struct ref_pkt *p = calloc(np, sizeof *p);
	uint64_t *ids = calloc(np, sizeof *ids);
	assert_non_null(p);
	assert_non_null(ids);
	struct sq_rng rng;
	sq_rng_init(&rng, seed, 0, 99);
	sq_time_us t = 0;
	for (size_t i = 0; i < np; i++) {
		t += sq_rng_uniform_int(&rng, 0, 2 * mean_gap);
		uint32_t len = (uint32_t)sq_rng_uniform_int(&rng, 0, 3) == 0 ? 40
			       : (uint32_t)sq_rng_uniform_int(&rng, 40, 1500);
		p[i] = (struct ref_pkt){ .arrival_ms = (uint64_t)(t / 1000), .bytes = len + 4 };
		ids[i] = tl_send(f.m, SQ_DOWN, t, len);
	}
	sq_model_advance(f.m, t + 1000000000LL);
	reference(ms, n, p, np);
	for (size_t i = 0; i < np; i++) {
		sq_time_us got = rec_time(&f.rec, SQ_EV_OUT, SQ_DOWN, ids[i], -1);
		if (got != (sq_time_us)p[i].departure_ms * 1000)
			fail_msg("packet %zu of %zu (%u B, arrived %llu ms): model %lld us, reference %llu ms",
				 i, np, p[i].bytes, (unsigned long long)p[i].arrival_ms, (long long)got,
				 (unsigned long long)p[i].departure_ms);
	}
	free(p);
	free(ids);
	sq_model_free(f.m);
	rec_release(&f.rec);
}

/* A bursty trace with repeated times and gaps, replayed over many periods by arrivals
 * that sometimes outrun it (queues build) and sometimes leave it idle (waste). */
static void test_equals_the_reference(void **state)
{
	(void)state;
	static const uint32_t bursty[] = { 0, 1, 1, 1, 3, 7, 7, 8, 15, 15, 15, 15, 16, 30, 31, 31, 40 };
	static const uint32_t steady[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	compare_with_reference(bursty, sizeof bursty / sizeof *bursty, 1, 20000, 2500);
	compare_with_reference(bursty, sizeof bursty / sizeof *bursty, 2, 20000, 600);
	compare_with_reference(steady, sizeof steady / sizeof *steady, 3, 20000, 900);
	compare_with_reference(steady, sizeof steady / sizeof *steady, 4, 20000, 3000);
}

/* The model refuses what mahimahi refuses, naming the field. */
static void test_checks(void **state)
{
	(void)state;
	char err[256];
	static const uint32_t backwards[] = { 5, 3 }, zero[] = { 0, 0 };
	struct sq_opportunity_trace t = { backwards, 2 };
	assert_false(sq_capacity_trace_check(&t, "up", err, sizeof err));
	assert_string_equal(err, "up.bandwidth: opportunity 1 at 3 ms comes before the one ahead of it "
			    "(5 ms); times must be non-decreasing");
	t = (struct sq_opportunity_trace){ zero, 2 };
	assert_false(sq_capacity_trace_check(&t, "down", err, sizeof err));
	assert_non_null(strstr(err, "down.bandwidth: the trace must last a nonzero time"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_packet_takes_the_next_opportunity, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_small_packets_share_an_opportunity, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_unused_bytes_and_opportunities_are_wasted, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_wraps_around_with_the_period, mf_setup, mf_teardown),
		cmocka_unit_test_setup_teardown(test_repeated_lines_overhead_and_large_packets, mf_setup, mf_teardown),
		cmocka_unit_test(test_equals_the_reference),
		cmocka_unit_test(test_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
