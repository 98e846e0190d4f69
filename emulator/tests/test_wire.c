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

/* A mobile NPA's host of a cell (PROTOCOL.md "Registration"): bytes 22-23, network order. */
static void test_host_field(void **state)
{
	(void)state;
	uint8_t buf[SQ_WIRE_HEADER_LEN];
	struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = SQ_MSG_HELLO,
				    .role = SQ_ROLE_MOBILE, .token = 1, .host = 0x0102 };
	sq_wire_encode(buf, &h);
	assert_int_equal(buf[22], 0x01);
	assert_int_equal(buf[23], 0x02);
	struct sq_wire_header back;
	assert_int_equal(sq_wire_decode(buf, sizeof buf, &back), SQ_WIRE_OK);
	assert_int_equal(back.host, 0x0102);
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

static const char BOOT_A[SQ_WIRE_BOOT_ID_LEN + 1] = "0f2c3d4e-1111-4222-8333-444455556666";
static const char BOOT_B[SQ_WIRE_BOOT_ID_LEN + 1] = "0f2c3d4e-1111-4222-8333-444455556667";

static void test_stamp_is_network_order(void **state)
{
	(void)state;
	uint8_t p[SQ_WIRE_STAMP_LEN];
	sq_wire_put_time(p, 0x0102030405060708LL);
	static const uint8_t expected[SQ_WIRE_STAMP_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	assert_memory_equal(p, expected, sizeof(expected));
	assert_int_equal(sq_wire_get_time(p), 0x0102030405060708LL);
	sq_wire_put_time(p, INT64_MAX);
	assert_int_equal(sq_wire_get_time(p), INT64_MAX);
}

static void test_clock_offer(void **state)
{
	(void)state;
	const int64_t sent = 7LL * 1000 * 1000 * 1000;
	uint8_t p[SQ_WIRE_CLOCK_OFFER_LEN];
	sq_wire_clock_offer_encode(p, sent, BOOT_A);
	assert_int_equal(sq_wire_get_time(p), sent);
	assert_memory_equal(p + SQ_WIRE_STAMP_LEN, BOOT_A, SQ_WIRE_BOOT_ID_LEN);
	/* one kernel, sent a moment ago (or just now): one clock */
	assert_true(sq_wire_clock_offer_matches(p, sizeof(p), sent, BOOT_A));
	assert_true(sq_wire_clock_offer_matches(p, sizeof(p), sent + 1000, BOOT_A));
	assert_true(sq_wire_clock_offer_matches(p, sizeof(p), sent + SQ_WIRE_CLOCK_OFFER_MAX_AGE_NS, BOOT_A));
	/* another kernel, a time from the future or from too long ago, a wrong length: not */
	assert_false(sq_wire_clock_offer_matches(p, sizeof(p), sent + 1000, BOOT_B));
	assert_false(sq_wire_clock_offer_matches(p, sizeof(p), sent - 1, BOOT_A));
	assert_false(sq_wire_clock_offer_matches(p, sizeof(p), sent + SQ_WIRE_CLOCK_OFFER_MAX_AGE_NS + 1, BOOT_A));
	assert_false(sq_wire_clock_offer_matches(p, sizeof(p) - 1, sent, BOOT_A));
	assert_false(sq_wire_clock_offer_matches(p, 0, sent, BOOT_A));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_is_network_order),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_host_field),
		cmocka_unit_test(test_every_error_class),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_stamp_is_network_order),
		cmocka_unit_test(test_clock_offer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
