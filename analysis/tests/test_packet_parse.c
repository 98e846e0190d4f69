/* Header extraction on hand-built frames: the fields the analysis joins on, and frames
 * cut or malformed in ways a capture can hold (run under ASan/UBSan by `make unit`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../src/packet_parse.h"

/* Ethernet + IPv4 (id 0x1234, total length 20 + 40 + 4) + TCP with MSS, SACK-permitted,
 * timestamps and window scale (40-byte header), 4 payload bytes. */
static const uint8_t eth_ipv4_tcp[] = {
	2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
	0x45, 0xb8, 0x00, 64, 0x12, 0x34, 0x40, 0x00, 64, 6, 0, 0,
	198, 18, 60, 1, 198, 18, 61, 2,
	0x9c, 0x40, 0x13, 0x89, 0, 0, 0x03, 0xe8, 0, 0, 0x13, 0x88, 0xa0, 0x12, 0xff, 0xff, 0, 0, 0, 0,
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9, 1, 3, 3, 6,
	'a', 'b', 'c', 'd',
};

static void test_ethernet_ipv4_tcp_fields(void **state)
{
	(void)state;
	struct sq_packet_record r;
	sq_parse_frame(SQ_DLT_EN10MB, eth_ipv4_tcp, sizeof eth_ipv4_tcp, &r);
	assert_int_equal(r.status, SQ_REC_TCP_TS | SQ_REC_SACK_OK);
	assert_int_equal(r.ip_version, 4);
	assert_int_equal(r.ip_len, 64);
	assert_int_equal(r.ip_id, 0x1234);
	assert_int_equal(r.tos, 0xb8);
	assert_int_equal(r.sport, 40000);
	assert_int_equal(r.dport, 5001);
	assert_int_equal(r.tcp_seq, 1000);
	assert_int_equal(r.tcp_ack, 5000);
	assert_int_equal(r.tcp_flags, 0x12);
	assert_int_equal(r.payload_len, 4);
	assert_int_equal(r.mss, 1460);
	assert_int_equal(r.wscale, 6);
	assert_int_equal(r.ts_val, 7);
	assert_int_equal(r.ts_ecr, 9);
	assert_int_equal(r.head_len, 4);
	assert_memory_equal(r.head, "abcd", 4);
	assert_int_equal(r.src[0], 198);
	assert_int_equal(r.dst[3], 2);
}

static void test_every_cut_of_the_frame_is_safe(void **state)
{
	(void)state;
	struct sq_packet_record r;
	for (uint32_t len = 0; len < sizeof eth_ipv4_tcp; len++) {
		sq_parse_frame(SQ_DLT_EN10MB, eth_ipv4_tcp, len, &r);
		if (len < 14 + 20)
			assert_true(r.status & (SQ_REC_NOT_IP | SQ_REC_IP_MALFORMED));
		else if (len < 14 + 20 + 40)
			assert_true(r.status & SQ_REC_L4_TRUNCATED);
		else  /* the payload length comes from the headers, not from the cut */
			assert_int_equal(r.payload_len, 4);
	}
}

static void test_raw_ip_and_sll2_find_the_same_packet(void **state)
{
	(void)state;
	struct sq_packet_record raw, sll2;
	memset(&raw, 0, sizeof raw);   /* time and frame fields are the caller's */
	memset(&sll2, 0, sizeof sll2);
	uint8_t frame[20 + sizeof eth_ipv4_tcp];
	static const uint8_t sll2_header[20] = { 0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6 };
	memcpy(frame, sll2_header, 20);
	memcpy(frame + 20, eth_ipv4_tcp + 14, sizeof eth_ipv4_tcp - 14);
	sq_parse_frame(SQ_DLT_RAW, eth_ipv4_tcp + 14, sizeof eth_ipv4_tcp - 14, &raw);
	sq_parse_frame(SQ_DLT_LINUX_SLL2, frame, sizeof eth_ipv4_tcp - 14 + 20, &sll2);
	assert_int_equal(raw.tcp_seq, 1000);
	assert_memory_equal(&raw, &sll2, sizeof raw);
}

static void test_ipv6_later_fragment_has_no_transport_header(void **state)
{
	(void)state;
	uint8_t ip6[40 + 8 + 8] = { 0x60, 0, 0, 0, 0, 16, 44, 64 };
	ip6[8] = 0x20;     /* 2001:db8::1 -> 2001:db8::2 */
	ip6[9] = 0x01;
	ip6[23] = 1;
	ip6[24] = 0x20;
	ip6[25] = 0x01;
	ip6[39] = 2;
	uint8_t frag[8] = { 17, 0, 0x00, 0x50, 0xde, 0xad, 0xbe, 0xef };  /* offset 10 */
	memcpy(ip6 + 40, frag, 8);
	struct sq_packet_record r;
	sq_parse_frame(SQ_DLT_RAW, ip6, sizeof ip6, &r);
	assert_int_equal(r.ip_version, 6);
	assert_true(r.status & SQ_REC_FRAGMENT);
	assert_int_equal(r.proto, 17);
	assert_int_equal(r.ip_id, 0xdeadbeef);
	assert_int_equal(r.sport, 0);
}

static void test_malformed_headers_are_flagged(void **state)
{
	(void)state;
	uint8_t frame[sizeof eth_ipv4_tcp];
	struct sq_packet_record r;

	memcpy(frame, eth_ipv4_tcp, sizeof frame);
	frame[14] = 0x43;  /* IHL 12 bytes */
	sq_parse_frame(SQ_DLT_EN10MB, frame, sizeof frame, &r);
	assert_true(r.status & SQ_REC_IP_MALFORMED);

	memcpy(frame, eth_ipv4_tcp, sizeof frame);
	frame[17] = 50;  /* IP total length 50: fewer than the 40-byte TCP header needs */
	sq_parse_frame(SQ_DLT_EN10MB, frame, sizeof frame, &r);
	assert_true(r.status & SQ_REC_L4_TRUNCATED);

	memcpy(frame, eth_ipv4_tcp, sizeof frame);
	frame[14 + 20 + 21] = 0;  /* MSS option of length 0: stop reading options */
	sq_parse_frame(SQ_DLT_EN10MB, frame, sizeof frame, &r);
	assert_int_equal(r.mss, 0);
	assert_int_equal(r.payload_len, 4);

	sq_parse_frame(9999, eth_ipv4_tcp, sizeof eth_ipv4_tcp, &r);
	assert_true(r.status & SQ_REC_NOT_IP);
	assert_false(sq_linktype_supported(9999));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ethernet_ipv4_tcp_fields),
		cmocka_unit_test(test_every_cut_of_the_frame_is_safe),
		cmocka_unit_test(test_raw_ip_and_sll2_find_the_same_packet),
		cmocka_unit_test(test_ipv6_later_fragment_has_no_transport_header),
		cmocka_unit_test(test_malformed_headers_are_flagged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
