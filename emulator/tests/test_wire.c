/* The wire codec (common/wire.c): round trip and every error class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "wire.h"

static size_t encode(uint8_t *buf, uint8_t type, uint8_t role, uint16_t length)
{
	struct sq_wire_header h = {
		.version = SQ_WIRE_VERSION, .type = type, .role = role,
		.token = 0x0123456789abcdefULL, .seq = 0xa1b2c3d4, .length = length,
	};
	sq_wire_encode(buf, &h);
	memset(buf + SQ_WIRE_HEADER_LEN, 0x5a, length);
	return SQ_WIRE_HEADER_LEN + length;
}

static void test_layout_is_network_order(void **state)
{
	(void)state;
	uint8_t buf[64];
	encode(buf, SQ_MSG_DATA, SQ_ROLE_MOBILE, 3);
	static const uint8_t expected[SQ_WIRE_HEADER_LEN] = {
		0x53, 0x51, 0x57, 0x4c, 1, 3, 2, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xa1, 0xb2, 0xc3, 0xd4, 0, 3, 0, 0,
	};
	assert_memory_equal(buf, expected, sizeof(expected));
}

static void test_round_trip(void **state)
{
	(void)state;
	uint8_t buf[SQ_WIRE_HEADER_LEN + 100];
	for (uint8_t type = SQ_MSG_HELLO; type <= SQ_MSG_STOP; type++) {
		size_t n = encode(buf, type, SQ_ROLE_CONTROL, 100);
		struct sq_wire_header h;
		assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_OK);
		assert_int_equal(h.type, type);
		assert_int_equal(h.role, SQ_ROLE_CONTROL);
		assert_int_equal(h.token, 0x0123456789abcdefULL);
		assert_int_equal(h.seq, 0xa1b2c3d4);
		assert_int_equal(h.length, 100);
	}
}

static void test_every_error_class(void **state)
{
	(void)state;
	uint8_t buf[SQ_WIRE_HEADER_LEN + 16];
	struct sq_wire_header h;
	size_t n = encode(buf, SQ_MSG_DATA, SQ_ROLE_ROUTER, 16);
	assert_int_equal(sq_wire_decode(buf, 0, &h), SQ_WIRE_TRUNCATED);
	assert_int_equal(sq_wire_decode(buf, SQ_WIRE_HEADER_LEN - 1, &h), SQ_WIRE_TRUNCATED);
	assert_int_equal(sq_wire_decode(buf, n - 1, &h), SQ_WIRE_TRUNCATED);
	buf[20] = 0;
	buf[21] = 15;   /* length one short of the datagram */
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_LENGTH);
	encode(buf, SQ_MSG_DATA, SQ_ROLE_ROUTER, 16);
	buf[0] ^= 0xff;
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_MAGIC);
	encode(buf, SQ_MSG_DATA, SQ_ROLE_ROUTER, 16);
	buf[4] = SQ_WIRE_VERSION + 1;
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_VERSION);
	encode(buf, 0, SQ_ROLE_ROUTER, 16);
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_TYPE);
	encode(buf, SQ_MSG_STOP + 1, SQ_ROLE_ROUTER, 16);
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_TYPE);
	encode(buf, SQ_MSG_DATA, SQ_ROLE_CONTROL + 1, 16);
	assert_int_equal(sq_wire_decode(buf, n, &h), SQ_WIRE_BAD_ROLE);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sq_wire_error_name(SQ_WIRE_BAD_LENGTH), "bad_length");
	assert_string_equal(sq_wire_error_name(SQ_WIRE_ERRORS), "unknown");
	assert_string_equal(sq_msg_type_name(SQ_MSG_KEEPALIVE), "keepalive");
	assert_string_equal(sq_msg_type_name(200), "?");
	assert_string_equal(sq_role_name(SQ_ROLE_MOBILE), "mobile");
	assert_string_equal(sq_role_name(9), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_is_network_order),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_error_class),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
