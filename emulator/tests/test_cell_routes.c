/* Which host of a cell a downlink packet goes to (cell_routes.h): the host that sent from
 * the packet's destination address; host 1 for an address no host has sent from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cell_routes.h"

static struct sq_pkt_identity v4(uint8_t src, uint8_t dst)
{
	struct sq_pkt_identity id = { .family = 4 };
	const uint8_t s[4] = { 198, 19, 7, src }, d[4] = { 198, 19, 7, dst };
	memcpy(id.src, s, 4);
	memcpy(id.dst, d, 4);
	return id;
}

static void test_learned_addresses_route_downlink(void **state)
{
	(void)state;
	struct sq_cell_routes r;
	memset(&r, 0, sizeof r);
	struct sq_pkt_identity to3 = v4(9, 3), to4 = v4(9, 4), to5 = v4(9, 5);
	assert_int_equal(sq_cell_routes_host(&r, &to3), 0);   /* nothing learned: host 1 */
	struct sq_pkt_identity from3 = v4(3, 9), from4 = v4(4, 9);
	sq_cell_routes_learn(&r, 1, &from3);
	sq_cell_routes_learn(&r, 2, &from4);
	assert_int_equal(sq_cell_routes_host(&r, &to3), 1);
	assert_int_equal(sq_cell_routes_host(&r, &to4), 2);
	assert_int_equal(sq_cell_routes_host(&r, &to5), 0);
	/* an address given in the configuration routes before its host has sent anything */
	sq_cell_routes_set(&r, 4, 4, (const uint8_t[]){ 198, 19, 7, 5 });
	assert_int_equal(sq_cell_routes_host(&r, &to5), 4);
	/* an address moves to the host that sends from it last */
	sq_cell_routes_learn(&r, 3, &from3);
	assert_int_equal(sq_cell_routes_host(&r, &to3), 3);
	/* an IPv6 address whose first 4 bytes look like an IPv4 one is another address */
	struct sq_pkt_identity to3v6 = to3;
	to3v6.family = 6;
	assert_int_equal(sq_cell_routes_host(&r, &to3v6), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learned_addresses_route_downlink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
