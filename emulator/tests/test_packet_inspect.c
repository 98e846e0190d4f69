/* Packet inspection: IPv4/IPv6, TCP/UDP/ICMP, extension headers, truncated and garbage input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ecn_mark.h"
#include "packet_inspect.h"
#include "test_packets.h"

static void test_ipv4_tcp(void **state)
{
	(void)state;
	uint8_t p[200];
	size_t len = tp_ipv4(p, 6, 0xb8 | 1, tp_tcp(p + 20, SQ_TCP_SYN | SQ_TCP_ACK, 12, 100));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(m.ip_len, 152);
	assert_int_equal(m.dscp, 46);
	assert_int_equal(m.ecn, 1);
	assert_int_equal(m.proto, 6);
	assert_int_equal(m.sport, 5000);
	assert_int_equal(m.dport, 80);
	assert_int_equal(id.family, 4);
	assert_true(id.has_ip_id);
	assert_int_equal(id.ip_id, 0x1234);
	assert_true(id.has_tcp);
	assert_int_equal(id.tcp_seq, 1000);
	assert_int_equal(id.tcp_ack, 2000);
	assert_int_equal(id.tcp_flags, SQ_TCP_SYN | SQ_TCP_ACK);
	assert_true(id.has_payload_len);
	assert_int_equal(id.payload_len, 100);
	const uint8_t src[16] = { 198, 18, 0, 1 };
	assert_memory_equal(id.src, src, 4);
	assert_memory_equal(m.src, src, 16);   /* the flow key: IPv4 in the first 4 bytes, then 0 */
	assert_memory_equal(m.dst, id.dst, 16);
}

static void test_ipv4_udp_and_icmp(void **state)
{
	(void)state;
	uint8_t p[200];
	size_t len = tp_ipv4(p, 17, 0, tp_udp(p + 20, 50));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(m.sport, 4000);
	assert_int_equal(id.dport, 5000);
	assert_false(id.has_tcp);
	assert_int_equal(id.payload_len, 50);
	memset(p + 20, 8, 8);
	len = tp_ipv4(p, 1, 0, 8);
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(id.proto, 1);
	assert_false(id.has_ports);
	assert_false(id.has_payload_len);
	assert_int_equal(m.sport, 0);
}

static void test_ipv4_fragment_and_truncated_transport(void **state)
{
	(void)state;
	uint8_t p[200];
	size_t len = tp_ipv4(p, 6, 0, tp_tcp(p + 20, SQ_TCP_ACK, 0, 30));
	tp_put16(p + 6, 100);   /* fragment offset 100*8: no transport header here */
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_false(id.has_ports);
	assert_false(id.has_tcp);
	/* A TCP header cut after 10 bytes: ports known, seq/ack not. */
	len = tp_ipv4(p, 6, 0, 10);
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_true(id.has_ports);
	assert_false(id.has_tcp);
	assert_false(id.has_payload_len);
	/* TCP data offset beyond the segment: flags known, payload length not. */
	len = tp_ipv4(p, 6, 0, tp_tcp(p + 20, SQ_TCP_FIN, 0, 0));
	p[20 + 12] = 0xf0;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_true(id.has_tcp);
	assert_false(id.has_payload_len);
}

static void test_ipv6_tcp_through_extension_headers(void **state)
{
	(void)state;
	uint8_t p[300];
	/* hop-by-hop (8 bytes) -> destination options (16 bytes) -> fragment (first) -> TCP */
	uint8_t *e = p + 40;
	memset(e, 0, 32);
	e[0] = 60; e[1] = 0;        /* hop-by-hop, next: dstopts */
	e[8] = 44; e[9] = 1;        /* dstopts, 16 bytes, next: fragment */
	e[24] = 6;                  /* fragment header, offset 0, next: TCP */
	size_t tlen = tp_tcp(p + 40 + 32, SQ_TCP_PSH | SQ_TCP_ACK, 0, 40);
	size_t len = tp_ipv6(p, 0, 0x02, 32 + tlen);
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(id.family, 6);
	assert_int_equal(id.proto, 6);
	assert_int_equal(m.ecn, 2);
	assert_false(id.has_ip_id);
	assert_true(id.has_tcp);
	assert_int_equal(id.sport, 5000);
	assert_int_equal(id.payload_len, 40);
	assert_int_equal(id.dst[15], 2);
	assert_memory_equal(m.src, id.src, 16);   /* the flow key's addresses */
	assert_memory_equal(m.dst, id.dst, 16);
	/* A later fragment: the transport is not read. */
	tp_put16(e + 24 + 2, 8);
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(id.proto, 6);
	assert_false(id.has_ports);
}

static void test_ipv6_udp_and_icmp6(void **state)
{
	(void)state;
	uint8_t p[200];
	size_t len = tp_ipv6(p, 17, 0xb8, tp_udp(p + 40, 12));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(m.dscp, 46);
	assert_int_equal(id.payload_len, 12);
	memset(p + 40, 0x80, 8);
	len = tp_ipv6(p, 58, 0, 8);
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(id.proto, 58);
	assert_false(id.has_ports);
	char name[8];
	sq_proto_name(58, name, sizeof(name));
	assert_string_equal(name, "icmp6");
	sq_proto_name(132, name, sizeof(name));
	assert_string_equal(name, "132");
}

static void test_rejects_what_is_not_a_whole_ip_packet(void **state)
{
	(void)state;
	uint8_t p[200];
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	size_t len = tp_ipv4(p, 17, 0, tp_udp(p + 20, 10));
	assert_false(sq_pkt_inspect(p, len - 1, &m, &id));      /* total length disagrees */
	assert_false(sq_pkt_inspect(p, 0, &m, &id));
	assert_false(sq_pkt_inspect(p, 19, &m, &id));
	p[0] = 0x44;                                             /* IHL 16 bytes */
	assert_false(sq_pkt_inspect(p, len, &m, &id));
	p[0] = 0x4f;                                             /* IHL 60 > length 38 */
	assert_false(sq_pkt_inspect(p, len, &m, &id));
	p[0] = 0x55;                                             /* version 5 */
	assert_false(sq_pkt_inspect(p, len, &m, &id));
	len = tp_ipv6(p, 17, 0, tp_udp(p + 40, 10));
	assert_false(sq_pkt_inspect(p, len + 1, &m, &id));
	assert_false(sq_pkt_inspect(p, 39, &m, &id));
	/* IPv6 extension chain running past the end: accepted, no ports. */
	len = tp_ipv6(p, 0, 0, 8);
	p[40] = 60;
	p[41] = 5;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_false(id.has_ports);
}

static void test_garbage_never_reads_out_of_bounds(void **state)
{
	(void)state;
	/* Every length of random bytes with each version nibble, in an exactly sized heap
	 * buffer so the sanitizer catches any overread. */
	srand(7);
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(rand() % 120);
		uint8_t *p = malloc(len ? len : 1);
		for (size_t i = 0; i < len; i++)
			p[i] = (uint8_t)rand();
		if (len >= 1)
			p[0] = (uint8_t)((round % 2 ? 0x40 : 0x60) | (p[0] & 0x0f));
		if (len >= 40 && round % 2 == 0)
			tp_put16(p + 4, (uint16_t)(len - 40));
		if (len >= 20 && round % 2 == 1)
			tp_put16(p + 2, (uint16_t)len);
		struct sq_pkt_meta m;
		struct sq_pkt_identity id;
		sq_pkt_inspect(p, len, &m, &id);
		free(p);
	}
}

static uint16_t ipv4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void test_ecn_mark_rewrites_ce_and_checksum(void **state)
{
	(void)state;
	uint8_t p[100];
	size_t len = tp_ipv4(p, 17, 0xb8 | 2, tp_udp(p + 20, 4));
	tp_put16(p + 10, ipv4_checksum(p));
	assert_int_equal(ipv4_checksum(p), 0);
	assert_true(sq_ecn_set_ce(p, len));
	assert_int_equal(p[1], 0xbb);
	assert_int_equal(ipv4_checksum(p), 0);
	p[1] = 0xb8;   /* not ECN-capable: left alone */
	assert_false(sq_ecn_set_ce(p, len));
	len = tp_ipv6(p, 17, 0x01, tp_udp(p + 40, 4));
	assert_true(sq_ecn_set_ce(p, len));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	assert_int_equal(m.ecn, 3);
	assert_int_equal(m.dscp, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp),
		cmocka_unit_test(test_ipv4_udp_and_icmp),
		cmocka_unit_test(test_ipv4_fragment_and_truncated_transport),
		cmocka_unit_test(test_ipv6_tcp_through_extension_headers),
		cmocka_unit_test(test_ipv6_udp_and_icmp6),
		cmocka_unit_test(test_rejects_what_is_not_a_whole_ip_packet),
		cmocka_unit_test(test_garbage_never_reads_out_of_bounds),
		cmocka_unit_test(test_ecn_mark_rewrites_ce_and_checksum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
