/* The NPA's queue of packets waiting for their release time: first in, first out, bounded,
 * the packets' bytes kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../src/release_queue.h"

static void packets_come_out_in_order_with_their_bytes_and_times(void **state)
{
	(void)state;
	struct npa_release_queue q;
	assert_int_equal(npa_release_queue_init(&q, 3), 0);
	assert_true(npa_release_queue_next(&q) == INT64_MAX);
	uint8_t big[1500];
	memset(big, 0xab, sizeof big);
	for (int round = 0; round < 3; round++) {   /* the ring wraps */
		npa_release_queue_push(&q, 100 + round, (const uint8_t *)"\x45one", 4);
		npa_release_queue_push(&q, 200 + round, big, sizeof big);
		npa_release_queue_push(&q, 300 + round, (const uint8_t *)"\x60", 1);
		assert_true(npa_release_queue_full(&q));
		uint16_t len;
		assert_int_equal(npa_release_queue_next(&q), 100 + round);
		assert_memory_equal(npa_release_queue_peek(&q, &len), "\x45one", 4);
		assert_int_equal(len, 4);
		npa_release_queue_pop(&q);
		assert_false(npa_release_queue_full(&q));
		assert_int_equal(npa_release_queue_next(&q), 200 + round);
		assert_memory_equal(npa_release_queue_peek(&q, &len), big, sizeof big);
		assert_int_equal(len, sizeof big);
		npa_release_queue_pop(&q);
		assert_int_equal(npa_release_queue_next(&q), 300 + round);
		npa_release_queue_pop(&q);
		assert_true(npa_release_queue_next(&q) == INT64_MAX);
	}
	npa_release_queue_free(&q);
	npa_release_queue_free(&q);   /* freeing twice is harmless: every exit path may */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(packets_come_out_in_order_with_their_bytes_and_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
