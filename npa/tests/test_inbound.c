/* The NPA's inbound policy: only well-formed messages of the run, from the
 * emulator's address and port, sent by the SP, are accepted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "../src/inbound.h"

#define TOKEN 0x1122334455667788ULL

static struct sockaddr_in sp_addr, other_addr;
static struct npa_inbound_policy policy;
static uint8_t buf[128];

static size_t flagged(uint8_t type, uint8_t role, uint8_t flags, uint64_t token,
		      const void *payload, uint16_t len)
{
	struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = type, .role = role,
				    .flags = flags, .token = token, .seq = 7, .length = len };
	sq_wire_encode(buf, &h);
	if (len > 0)
		memcpy(buf + SQ_WIRE_HEADER_LEN, payload, len);
	return SQ_WIRE_HEADER_LEN + len;
}

static size_t message(uint8_t type, uint8_t role, uint64_t token, const void *payload,
		      uint16_t len)
{
	return flagged(type, role, 0, token, payload, len);
}

static enum npa_reject check(size_t len, const struct sockaddr_in *src)
{
	struct sq_wire_header h;
	return npa_inbound_check(&policy, buf, len, (const struct sockaddr *)src, sizeof(*src), &h);
}

static int setup(void **state)
{
	(void)state;
	memset(&sp_addr, 0, sizeof(sp_addr));
	sp_addr.sin_family = AF_INET;
	sp_addr.sin_port = htons(5300);
	inet_pton(AF_INET, "198.19.138.1", &sp_addr.sin_addr);
	other_addr = sp_addr;
	policy = (struct npa_inbound_policy){ (const struct sockaddr *)&sp_addr, sizeof(sp_addr),
					      TOKEN, false };
	return 0;
}

static const uint8_t ipv4_packet[20] = { 0x45, 0, 0, 20 };

static void test_data_from_the_sp_is_accepted(void **state)
{
	(void)state;
	size_t len = message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, ipv4_packet, sizeof(ipv4_packet));
	struct sq_wire_header h;
	assert_int_equal(npa_inbound_check(&policy, buf, len, (const struct sockaddr *)&sp_addr,
					   sizeof(sp_addr), &h), NPA_ACCEPT);
	assert_int_equal(h.type, SQ_MSG_DATA);
	assert_int_equal(h.length, 20);
	uint8_t v6 = 0x60;
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, &v6, 1), &sp_addr),
			 NPA_ACCEPT);
	assert_int_equal(check(message(SQ_MSG_KEEPALIVE, SQ_ROLE_SP, TOKEN, NULL, 0), &sp_addr),
			 NPA_ACCEPT);
}

static void test_other_port_or_address_is_wrong_source(void **state)
{
	(void)state;
	size_t len = message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, ipv4_packet, sizeof(ipv4_packet));
	other_addr.sin_port = htons(5301);
	assert_int_equal(check(len, &other_addr), NPA_REJECT_WRONG_SOURCE);
	other_addr.sin_port = sp_addr.sin_port;
	other_addr.sin_addr.s_addr ^= htonl(1);
	assert_int_equal(check(len, &other_addr), NPA_REJECT_WRONG_SOURCE);
}

static void test_wrong_token_role_and_type(void **state)
{
	(void)state;
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN + 1, ipv4_packet, 20),
			       &sp_addr), NPA_REJECT_WRONG_TOKEN);
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN, ipv4_packet, 20),
			       &sp_addr), NPA_REJECT_WRONG_SENDER);
	assert_int_equal(check(message(SQ_MSG_HELLO, SQ_ROLE_SP, TOKEN, NULL, 0), &sp_addr),
			 NPA_REJECT_UNEXPECTED);
	assert_int_equal(check(message(SQ_MSG_STARTED, SQ_ROLE_SP, TOKEN, NULL, 0), &sp_addr),
			 NPA_REJECT_UNEXPECTED);
}

static void test_data_must_carry_an_ip_packet(void **state)
{
	(void)state;
	uint8_t not_ip[4] = { 0x12, 0x34, 0x56, 0x78 };
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, not_ip, 4), &sp_addr),
			 NPA_REJECT_NOT_IP);
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, NULL, 0), &sp_addr),
			 NPA_REJECT_NOT_IP);
}

/* A DATA with a release time: the time, then the packet; only on the shared clock. */
static void test_a_release_time_needs_the_shared_clock_and_a_packet_after_it(void **state)
{
	(void)state;
	uint8_t payload[SQ_WIRE_STAMP_LEN + sizeof(ipv4_packet)];
	sq_wire_put_time(payload, 123456789);
	memcpy(payload + SQ_WIRE_STAMP_LEN, ipv4_packet, sizeof(ipv4_packet));
	size_t len = flagged(SQ_MSG_DATA, SQ_ROLE_SP, SQ_WIRE_FLAG_CLOCK, TOKEN, payload, sizeof(payload));
	assert_int_equal(check(len, &sp_addr), NPA_REJECT_NO_CLOCK);
	policy.shared_clock = true;
	struct sq_wire_header h;
	assert_int_equal(npa_inbound_check(&policy, buf, len, (const struct sockaddr *)&sp_addr,
					   sizeof(sp_addr), &h), NPA_ACCEPT);
	assert_int_equal(sq_wire_get_time(buf + SQ_WIRE_HEADER_LEN), 123456789);
	/* only the time, or the time and no IP packet */
	assert_int_equal(check(flagged(SQ_MSG_DATA, SQ_ROLE_SP, SQ_WIRE_FLAG_CLOCK, TOKEN, payload,
				       SQ_WIRE_STAMP_LEN), &sp_addr), NPA_REJECT_NOT_IP);
	assert_int_equal(check(flagged(SQ_MSG_DATA, SQ_ROLE_SP, SQ_WIRE_FLAG_CLOCK, TOKEN, payload, 4),
			       &sp_addr), NPA_REJECT_NOT_IP);
	/* without the flag the payload is the packet, as before */
	assert_int_equal(check(message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, ipv4_packet, 20), &sp_addr),
			 NPA_ACCEPT);
}

static void test_malformed_datagrams_report_the_decoder_reason(void **state)
{
	(void)state;
	size_t len = message(SQ_MSG_DATA, SQ_ROLE_SP, TOKEN, ipv4_packet, sizeof(ipv4_packet));
	assert_int_equal(check(len - 1, &sp_addr), (enum npa_reject)SQ_WIRE_TRUNCATED);
	assert_int_equal(check(10, &sp_addr), (enum npa_reject)SQ_WIRE_TRUNCATED);
	assert_int_equal(check(len + 1, &sp_addr), (enum npa_reject)SQ_WIRE_BAD_LENGTH);
	buf[0] ^= 0xff;
	assert_int_equal(check(len, &sp_addr), (enum npa_reject)SQ_WIRE_BAD_MAGIC);
	buf[0] ^= 0xff;
	buf[4] = 99;
	assert_int_equal(check(len, &sp_addr), (enum npa_reject)SQ_WIRE_BAD_VERSION);
	assert_string_equal(npa_reject_name((enum npa_reject)SQ_WIRE_BAD_VERSION), "bad_version");
	assert_string_equal(npa_reject_name(NPA_REJECT_WRONG_TOKEN), "wrong_token");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_data_from_the_sp_is_accepted, setup),
		cmocka_unit_test_setup(test_other_port_or_address_is_wrong_source, setup),
		cmocka_unit_test_setup(test_wrong_token_role_and_type, setup),
		cmocka_unit_test_setup(test_data_must_carry_an_ip_packet, setup),
		cmocka_unit_test_setup(test_malformed_datagrams_report_the_decoder_reason, setup),
		cmocka_unit_test_setup(test_a_release_time_needs_the_shared_clock_and_a_packet_after_it, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
