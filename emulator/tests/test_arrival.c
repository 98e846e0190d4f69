/* The arrival time of a packet (emulator/src/arrival.c): the NPA's stamp, clamped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arrival.h"

#define START_NS 5000000000LL           /* t = 0 */
#define AT(us) (START_NS + (us) * 1000LL)

static int64_t arrival(bool stamped, int64_t stamp_ns, int64_t rx_ns, int64_t floor_us, enum sq_arrival_kind expect)
{
	enum sq_arrival_kind kind;
	int64_t t = sq_arrival_time(stamped, stamp_ns, rx_ns, START_NS, floor_us, &kind);
	assert_int_equal(kind, expect);
	return t;
}

static void test_without_stamp_the_receive_time(void **state)
{
	(void)state;
	assert_int_equal(arrival(false, 0, AT(1000), 0, SQ_ARRIVAL_RECEIVED), 1000);
	assert_int_equal(arrival(false, AT(10), AT(1000), 0, SQ_ARRIVAL_RECEIVED), 1000);   /* a stamp unused */
	/* never before what the model had */
	assert_int_equal(arrival(false, 0, AT(1000), 1200, SQ_ARRIVAL_RECEIVED), 1200);
}

static void test_the_stamp(void **state)
{
	(void)state;
	assert_int_equal(arrival(true, AT(950), AT(1000), 900, SQ_ARRIVAL_STAMPED), 950);
	assert_int_equal(arrival(true, AT(1000), AT(1000), 0, SQ_ARRIVAL_STAMPED), 1000);
	assert_int_equal(arrival(true, AT(900), AT(1000), 900, SQ_ARRIVAL_STAMPED), 900);     /* at the floor */
	assert_int_equal(arrival(true, AT(950) + 999, AT(1000), 0, SQ_ARRIVAL_STAMPED), 950);  /* µs, truncated */
}

static void test_the_stamp_clamped(void **state)
{
	(void)state;
	/* earlier than a time the model already had (the previous arrival, a delivery): that time */
	assert_int_equal(arrival(true, AT(950), AT(1000), 980, SQ_ARRIVAL_RAISED), 980);
	/* later than the SP's receive time (not one clock after all): the receive time */
	assert_int_equal(arrival(true, AT(1500), AT(1000), 0, SQ_ARRIVAL_LOWERED), 1000);
	assert_int_equal(arrival(true, AT(1500), AT(1000), 1100, SQ_ARRIVAL_LOWERED), 1100);
	/* read before t = 0, received after: t = 0 at the earliest */
	assert_int_equal(arrival(true, START_NS - 20000, AT(3), 0, SQ_ARRIVAL_RAISED), 0);
	/* a stamp of 2^63 or more arrives as a negative number: the floor, not an overflow into
	 * the far future; the largest one is after the receive */
	assert_int_equal(arrival(true, INT64_MIN, AT(1000), 700, SQ_ARRIVAL_RAISED), 700);
	assert_int_equal(arrival(true, INT64_MAX, AT(1000), 700, SQ_ARRIVAL_LOWERED), 1000);
}

static void test_order_is_kept(void **state)
{
	(void)state;
	/* stamps that come out of order (two NPAs, two directions) never move the model back */
	const int64_t stamps_us[] = { 100, 300, 200, 250, 500, 400 };
	int64_t floor = 0;
	for (size_t i = 0; i < sizeof(stamps_us) / sizeof(stamps_us[0]); i++) {
		enum sq_arrival_kind kind;
		int64_t t = sq_arrival_time(true, AT(stamps_us[i]), AT(stamps_us[i] + 40), START_NS, floor, &kind);
		assert_true(t >= floor);
		assert_true(t >= stamps_us[i]);
		floor = t;
	}
	assert_int_equal(floor, 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_stamp_the_receive_time),
		cmocka_unit_test(test_the_stamp),
		cmocka_unit_test(test_the_stamp_clamped),
		cmocka_unit_test(test_order_is_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
