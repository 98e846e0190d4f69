/* CoDel's control loop on its own (router_codel.h; LINK_MODEL.md "CoDel"): the edges of its
 * state machine against values computed by hand from RFC 8289 section 5: no drop before the
 * sojourn time has stayed above target for an interval, never with at most one MTU queued,
 * drop-state entry and exit, the sqrt control law, the count of the last cycle reused within
 * 16 intervals (and not after), ECN marks instead of drops, ce_threshold, an empty queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "router_codel.h"

enum { MTU = 1000, ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3 };
#define BIG (10 * MTU)          /* backlog left behind: above maxpacket */
#define ABOVE 6000              /* sojourn µs above the 5 ms target */

static const struct sq_codel_params defaults = { .target = 5000, .interval = 100000, .maxpacket = MTU };
static const struct sq_codel_params with_ecn = { .target = 5000, .interval = 100000, .maxpacket = MTU,
						 .ecn = true };

static enum sq_router_fate judge(struct sq_codel_vars *v, const struct sq_codel_params *p, sq_time_us sojourn,
				 uint64_t backlog, sq_time_us now)
{
	return sq_codel_judge(v, p, sojourn, backlog, ECN_NOT_ECT, now);
}

/* Above target from t = 1000 µs: ok to drop only from 1000 + interval on. Returns the state
 * just after entering the drop state at t = 101000 (the entering drop, then the next sent). */
static struct sq_codel_vars entered(void)
{
	struct sq_codel_vars v;
	sq_codel_init(&v);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 1000), SQ_ROUTER_SEND);
	assert_int_equal(v.first_above_time, 101000);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 100999), SQ_ROUTER_SEND);
	assert_false(v.dropping);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 101000), SQ_ROUTER_DROP_OUT);
	assert_true(v.dropping);
	assert_int_equal(v.count, 1);
	assert_int_equal(v.drop_next, 201000);   /* now + interval / sqrt(1) */
	/* The packet after the entering drop goes out, whatever its sojourn time. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 101000), SQ_ROUTER_SEND);
	return v;
}

static void test_drop_state_entry_after_an_interval_above_target(void **state)
{
	(void)state;
	entered();
}

static void test_below_target_or_one_mtu_queued_never_drops(void **state)
{
	(void)state;
	struct sq_codel_vars v;
	sq_codel_init(&v);
	for (sq_time_us t = 0; t < 1000000; t += 1000) {
		assert_int_equal(judge(&v, &defaults, 4999, BIG, t), SQ_ROUTER_SEND);
		assert_int_equal(judge(&v, &defaults, 50000, MTU, t), SQ_ROUTER_SEND);   /* backlog <= maxpacket */
	}
	assert_false(v.dropping);
	assert_int_equal(v.first_above_time, 0);
}

static void test_control_law_spaces_drops_by_interval_over_sqrt_count(void **state)
{
	(void)state;
	struct sq_codel_vars v = entered();
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 200999), SQ_ROUTER_SEND);
	/* At drop_next: drop, count 2; the next packet is judged at the same time: still above,
	 * so drop_next = 201000 + 100000 / sqrt(2) = 271710 (truncated), and it goes out. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 201000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(v.count, 2);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 201000), SQ_ROUTER_SEND);
	assert_int_equal(v.drop_next, 271710);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 271710), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 271710), SQ_ROUTER_SEND);
	assert_int_equal(v.count, 3);
	assert_int_equal(v.drop_next, 271710 + 57735);   /* 100000 / sqrt(3) = 57735.03 */
}

static void test_a_late_dequeue_drops_until_drop_next_passes_now(void **state)
{
	(void)state;
	struct sq_codel_vars v = entered();
	/* First dequeue long after drop_next = 201000: the loop drops while now >= drop_next:
	 * 201000 + 70710 = 271710, + 57735 = 329445, + 50000 = 379445 > 350000. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_SEND);
	assert_int_equal(v.count, 4);
	assert_int_equal(v.drop_next, 379445);
}

static void test_exit_below_target_and_count_reuse_within_16_intervals(void **state)
{
	(void)state;
	struct sq_codel_vars v = entered();
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_SEND);   /* count 4 */
	/* Below target: the drop state ends. */
	assert_int_equal(judge(&v, &defaults, 100, BIG, 360000), SQ_ROUTER_SEND);
	assert_false(v.dropping);
	/* Above again for an interval, entering at 500000 (< drop_next 379445 + 16 intervals):
	 * delta = count 4 - lastcount 1 = 3 > 1, so the count starts at 3. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 400000), SQ_ROUTER_SEND);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 500000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(v.count, 3);
	assert_int_equal(v.lastcount, 3);
	assert_int_equal(v.drop_next, 500000 + 57735);
}

static void test_no_count_reuse_after_16_intervals(void **state)
{
	(void)state;
	struct sq_codel_vars v = entered();
	for (int i = 0; i < 3; i++)
		assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 350000), SQ_ROUTER_SEND);
	assert_int_equal(judge(&v, &defaults, 100, BIG, 360000), SQ_ROUTER_SEND);
	/* drop_next 379445 + 16 x 100000 = 1979445: entering at or after it starts at 1. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 1879445), SQ_ROUTER_SEND);
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 1979445), SQ_ROUTER_DROP_OUT);
	assert_int_equal(v.count, 1);
}

static void test_ecn_marks_capable_packets_and_drops_the_others(void **state)
{
	(void)state;
	struct sq_codel_vars v;
	sq_codel_init(&v);
	assert_int_equal(sq_codel_judge(&v, &with_ecn, ABOVE, BIG, ECN_ECT0, 0), SQ_ROUTER_SEND);
	/* Entering with an ECT(0) packet: marked and sent (no packet dropped). */
	assert_int_equal(sq_codel_judge(&v, &with_ecn, ABOVE, BIG, ECN_ECT0, 100000), SQ_ROUTER_SEND_CE);
	assert_true(v.dropping);
	assert_int_equal(v.drop_next, 200000);
	/* In the drop state: ECT(1) and CE marked (the loop ends with the marked packet, the
	 * next drop scheduled), Not-ECT dropped. */
	assert_int_equal(sq_codel_judge(&v, &with_ecn, ABOVE, BIG, ECN_ECT1, 200000), SQ_ROUTER_SEND_CE);
	assert_int_equal(v.count, 2);
	assert_int_equal(v.drop_next, 270710);
	assert_int_equal(sq_codel_judge(&v, &with_ecn, ABOVE, BIG, ECN_CE, 270710), SQ_ROUTER_SEND_CE);
	assert_int_equal(v.drop_next, 270710 + 57735);
	assert_int_equal(sq_codel_judge(&v, &with_ecn, ABOVE, BIG, ECN_NOT_ECT, 400000), SQ_ROUTER_DROP_OUT);
	/* Without ecn an ECT packet is dropped. */
	sq_codel_init(&v);
	assert_int_equal(sq_codel_judge(&v, &defaults, ABOVE, BIG, ECN_ECT0, 0), SQ_ROUTER_SEND);
	assert_int_equal(sq_codel_judge(&v, &defaults, ABOVE, BIG, ECN_ECT0, 100000), SQ_ROUTER_DROP_OUT);
}

static void test_ce_threshold_marks_late_ect_packets_whatever_the_drop_state(void **state)
{
	(void)state;
	const struct sq_codel_params p = { .target = 5000, .interval = 100000, .maxpacket = MTU,
					   .ce_threshold = 1000 };
	struct sq_codel_vars v;
	sq_codel_init(&v);
	/* Not dropping (below target, one MTU queued): marked only when ECN-capable and the
	 * sojourn is above the threshold (strictly), without `ecn`. */
	assert_int_equal(sq_codel_judge(&v, &p, 1001, MTU, ECN_ECT1, 0), SQ_ROUTER_SEND_CE);
	assert_int_equal(sq_codel_judge(&v, &p, 1001, MTU, ECN_CE, 0), SQ_ROUTER_SEND_CE);
	assert_int_equal(sq_codel_judge(&v, &p, 1000, MTU, ECN_ECT0, 0), SQ_ROUTER_SEND);
	assert_int_equal(sq_codel_judge(&v, &p, 4000, MTU, ECN_NOT_ECT, 0), SQ_ROUTER_SEND);
	assert_false(v.dropping);
	/* The drop decision itself is unchanged: entering the drop state drops an ECT packet
	 * (no ecn), and the packet after it goes out marked. */
	assert_int_equal(sq_codel_judge(&v, &p, ABOVE, BIG, ECN_ECT0, 1000), SQ_ROUTER_SEND_CE);
	assert_int_equal(sq_codel_judge(&v, &p, ABOVE, BIG, ECN_ECT0, 101000), SQ_ROUTER_DROP_OUT);
	assert_int_equal(sq_codel_judge(&v, &p, ABOVE, BIG, ECN_ECT0, 101000), SQ_ROUTER_SEND_CE);
}

static void test_an_empty_queue_leaves_the_drop_state(void **state)
{
	(void)state;
	struct sq_codel_vars v = entered();
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 201000), SQ_ROUTER_DROP_OUT);
	sq_codel_empty(&v);   /* nothing after the dropped packet */
	assert_false(v.dropping);
	assert_int_equal(v.first_above_time, 0);
	/* The next packet starts a new dequeue: above target, but only from now on. */
	assert_int_equal(judge(&v, &defaults, ABOVE, BIG, 202000), SQ_ROUTER_SEND);
	assert_int_equal(v.first_above_time, 302000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_state_entry_after_an_interval_above_target),
		cmocka_unit_test(test_below_target_or_one_mtu_queued_never_drops),
		cmocka_unit_test(test_control_law_spaces_drops_by_interval_over_sqrt_count),
		cmocka_unit_test(test_a_late_dequeue_drops_until_drop_next_passes_now),
		cmocka_unit_test(test_exit_below_target_and_count_reuse_within_16_intervals),
		cmocka_unit_test(test_no_count_reuse_after_16_intervals),
		cmocka_unit_test(test_ecn_marks_capable_packets_and_drops_the_others),
		cmocka_unit_test(test_ce_threshold_marks_late_ect_packets_whatever_the_drop_state),
		cmocka_unit_test(test_an_empty_queue_leaves_the_drop_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
