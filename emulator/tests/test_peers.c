/* The SP's datagram classification: what is accepted, what is rejected and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "peers.h"
#include "test_packets.h"

#define TOKEN 0x0123456789abcdefULL

struct fixture {
	struct sq_peers peers;
	struct sockaddr_in router, mobile, stranger;
	uint8_t buf[SQ_WIRE_HEADER_LEN + 300];
};

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static void setup_fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->router = addr("198.18.0.1", 40000);
	f->mobile = addr("198.18.0.2", 40001);
	f->stranger = addr("198.18.0.1", 40002);
	assert_true(sq_peers_register(&f->peers, SQ_ROLE_ROUTER, (struct sockaddr *)&f->router, sizeof(f->router), 1));
	assert_true(sq_peers_register(&f->peers, SQ_ROLE_MOBILE, (struct sockaddr *)&f->mobile, sizeof(f->mobile), 2));
}

/* Builds a message with an IPv4/UDP packet as payload when type is DATA. */
static size_t message(struct fixture *f, uint8_t type, uint8_t role, uint64_t token)
{
	size_t plen = 0;
	if (type == SQ_MSG_DATA)
		plen = tp_ipv4(f->buf + SQ_WIRE_HEADER_LEN, 17, 0, tp_udp(f->buf + SQ_WIRE_HEADER_LEN + 20, 30));
	struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = type, .role = role, .token = token,
				    .length = (uint16_t)plen };
	sq_wire_encode(f->buf, &h);
	return SQ_WIRE_HEADER_LEN + plen;
}

static struct sq_classified classify(struct fixture *f, size_t len, const struct sockaddr_in *from, bool started)
{
	struct sq_datagram d = { .buf = f->buf, .len = len, .src = (const struct sockaddr *)from,
				 .src_len = sizeof(*from) };
	struct sq_classified c;
	sq_classify(&f->peers, TOKEN, started, &d, &c);
	return c;
}

static void expect_reject(struct fixture *f, size_t len, const struct sockaddr_in *from, bool started,
			  enum sq_reject reason)
{
	struct sq_classified c = classify(f, len, from, started);
	assert_int_equal(c.action, SQ_ACT_REJECT);
	if (c.reason != reason)
		fail_msg("rejected as %s, expected %s", sq_reject_name(c.reason), sq_reject_name(reason));
}

static void test_accepted_messages(void **state)
{
	(void)state;
	struct fixture f;
	setup_fixture(&f);
	struct sq_classified c = classify(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.router, true);
	assert_int_equal(c.action, SQ_ACT_DATA);
	assert_int_equal(c.h.role, SQ_ROLE_ROUTER);
	assert_int_equal(c.meta.ip_len, 58);
	assert_int_equal(c.id.dport, 5000);
	assert_ptr_equal(c.payload, f.buf + SQ_WIRE_HEADER_LEN);
	c = classify(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN), &f.mobile, true);
	assert_int_equal(c.action, SQ_ACT_DATA);
	/* HELLO with the token from the registered address (a repeat), or from anyone for a role
	 * no live NPA holds (it is how an address registers). */
	assert_int_equal(classify(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_MOBILE, TOKEN), &f.mobile, true).action,
			 SQ_ACT_HELLO);
	sq_peers_unregister(&f.peers, SQ_ROLE_MOBILE);
	assert_int_equal(classify(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_MOBILE, TOKEN), &f.stranger, false).action,
			 SQ_ACT_HELLO);
	assert_true(sq_peers_register(&f.peers, SQ_ROLE_MOBILE, (struct sockaddr *)&f.mobile, sizeof(f.mobile), 3));
	assert_int_equal(classify(&f, message(&f, SQ_MSG_KEEPALIVE, SQ_ROLE_MOBILE, TOKEN), &f.mobile, false).action,
			 SQ_ACT_KEEPALIVE);
	assert_int_equal(classify(&f, message(&f, SQ_MSG_BYE, SQ_ROLE_ROUTER, TOKEN), &f.router, true).action,
			 SQ_ACT_BYE);
}

static void test_every_reject_reason(void **state)
{
	(void)state;
	struct fixture f;
	setup_fixture(&f);
	size_t n = message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	expect_reject(&f, 10, &f.router, true, SQ_REJ_TRUNCATED);
	expect_reject(&f, n - 1, &f.router, true, SQ_REJ_TRUNCATED);
	expect_reject(&f, n + 1, &f.router, true, SQ_REJ_BAD_LENGTH);
	f.buf[0] = 'X';
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_MAGIC);
	message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	f.buf[4] = 2;
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_VERSION);
	message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	f.buf[5] = 99;
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_TYPE);
	message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	f.buf[6] = 4;
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_ROLE);
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN + 1), &f.router, true, SQ_REJ_BAD_TOKEN);
	expect_reject(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_ROUTER, 0), &f.router, false, SQ_REJ_BAD_TOKEN);
	expect_reject(&f, message(&f, SQ_MSG_WELCOME, SQ_ROLE_SP, TOKEN), &f.router, true, SQ_REJ_UNEXPECTED_TYPE);
	expect_reject(&f, message(&f, SQ_MSG_STARTED, SQ_ROLE_SP, TOKEN), &f.router, true, SQ_REJ_UNEXPECTED_TYPE);
	expect_reject(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_CONTROL, TOKEN), &f.router, false, SQ_REJ_UNEXPECTED_ROLE);
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_SP, TOKEN), &f.router, true, SQ_REJ_UNEXPECTED_ROLE);
	expect_reject(&f, message(&f, SQ_MSG_START, SQ_ROLE_ROUTER, TOKEN), &f.router, false, SQ_REJ_UNEXPECTED_ROLE);
	/* DATA from a port that did not register, or claiming the other role. */
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.stranger, true, SQ_REJ_UNKNOWN_SOURCE);
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN), &f.router, true, SQ_REJ_UNKNOWN_SOURCE);
	expect_reject(&f, message(&f, SQ_MSG_KEEPALIVE, SQ_ROLE_ROUTER, TOKEN), &f.stranger, true, SQ_REJ_UNKNOWN_SOURCE);
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.router, false, SQ_REJ_PRESTART);
	n = message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	f.buf[SQ_WIRE_HEADER_LEN] = 0x75;   /* not IP */
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_PACKET);
	/* A HELLO with a payload. */
	struct sq_wire_header h = { .version = 1, .type = SQ_MSG_HELLO, .role = SQ_ROLE_ROUTER, .token = TOKEN, .length = 2 };
	sq_wire_encode(f.buf, &h);
	expect_reject(&f, SQ_WIRE_HEADER_LEN + 2, &f.router, false, SQ_REJ_BAD_PAYLOAD);
	/* A HELLO for a role a live NPA holds, from another address: a hijack, whatever the token. */
	expect_reject(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_MOBILE, TOKEN), &f.stranger, true, SQ_REJ_ROLE_TAKEN);
	expect_reject(&f, message(&f, SQ_MSG_HELLO, SQ_ROLE_ROUTER, TOKEN), &f.mobile, false, SQ_REJ_ROLE_TAKEN);
	/* START and STOP are the control socket's: never accepted as datagrams, even with the token. */
	expect_reject(&f, message(&f, SQ_MSG_START, SQ_ROLE_CONTROL, TOKEN), &f.stranger, false, SQ_REJ_UDP_CONTROL);
	expect_reject(&f, message(&f, SQ_MSG_STOP, SQ_ROLE_CONTROL, TOKEN), &f.router, true, SQ_REJ_UDP_CONTROL);
	struct sq_datagram big = { .buf = f.buf, .len = SQ_WIRE_HEADER_LEN, .oversized = true,
				   .src = (const struct sockaddr *)&f.router, .src_len = sizeof(f.router) };
	struct sq_classified c;
	sq_classify(&f.peers, TOKEN, true, &big, &c);
	assert_int_equal(c.reason, SQ_REJ_OVERSIZED);
}

/* The shared-clock extension (wire.h): a HELLO with the offer, stamped DATA only from an NPA
 * that agreed, the stamp taken off before the packet. */
static void test_shared_clock(void **state)
{
	(void)state;
	struct fixture f;
	setup_fixture(&f);
	struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = SQ_MSG_HELLO, .role = SQ_ROLE_ROUTER,
				    .flags = SQ_WIRE_FLAG_CLOCK, .token = TOKEN, .length = SQ_WIRE_CLOCK_OFFER_LEN };
	sq_wire_encode(f.buf, &h);
	sq_wire_clock_offer_encode(f.buf + SQ_WIRE_HEADER_LEN, 42, "0f2c3d4e-1111-4222-8333-444455556666");
	struct sq_classified c = classify(&f, SQ_WIRE_HEADER_LEN + SQ_WIRE_CLOCK_OFFER_LEN, &f.router, false);
	assert_int_equal(c.action, SQ_ACT_HELLO);
	assert_int_equal(c.h.flags, SQ_WIRE_FLAG_CLOCK);
	assert_ptr_equal(c.payload, f.buf + SQ_WIRE_HEADER_LEN);
	h.length = SQ_WIRE_CLOCK_OFFER_LEN - 1;      /* an offer of the wrong size */
	sq_wire_encode(f.buf, &h);
	expect_reject(&f, SQ_WIRE_HEADER_LEN + h.length, &f.router, false, SQ_REJ_BAD_PAYLOAD);
	h.flags = 0;                                 /* the offer without the flag */
	h.length = SQ_WIRE_CLOCK_OFFER_LEN;
	sq_wire_encode(f.buf, &h);
	expect_reject(&f, SQ_WIRE_HEADER_LEN + h.length, &f.router, false, SQ_REJ_BAD_PAYLOAD);

	/* Stamped DATA: the stamp, then the packet. */
	size_t plen = tp_ipv4(f.buf + SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN, 17, 0,
			      tp_udp(f.buf + SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN + 20, 30));
	sq_wire_put_time(f.buf + SQ_WIRE_HEADER_LEN, 123456789);
	h = (struct sq_wire_header){ .version = SQ_WIRE_VERSION, .type = SQ_MSG_DATA, .role = SQ_ROLE_ROUTER,
				     .flags = SQ_WIRE_FLAG_CLOCK, .token = TOKEN,
				     .length = (uint16_t)(SQ_WIRE_STAMP_LEN + plen) };
	sq_wire_encode(f.buf, &h);
	size_t n = SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN + plen;
	expect_reject(&f, n, &f.router, true, SQ_REJ_BAD_PAYLOAD);      /* this NPA did not agree */
	f.peers.peer[SQ_ROLE_ROUTER].shared_clock = true;
	c = classify(&f, n, &f.router, true);
	assert_int_equal(c.action, SQ_ACT_DATA);
	assert_true(c.stamped);
	assert_int_equal(c.stamp_ns, 123456789);
	assert_ptr_equal(c.payload, f.buf + SQ_WIRE_HEADER_LEN + SQ_WIRE_STAMP_LEN);
	assert_int_equal(c.h.length, plen);
	assert_int_equal(c.meta.ip_len, 58);
	assert_int_equal(c.id.dport, 5000);
	expect_reject(&f, n, &f.router, false, SQ_REJ_PRESTART);
	/* an unstamped DATA from the same NPA is still accepted, without a stamp */
	c = classify(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.router, true);
	assert_int_equal(c.action, SQ_ACT_DATA);
	assert_false(c.stamped);
	/* a stamp without a packet after it */
	h.length = SQ_WIRE_STAMP_LEN - 1;
	sq_wire_encode(f.buf, &h);
	expect_reject(&f, SQ_WIRE_HEADER_LEN + h.length, &f.router, true, SQ_REJ_BAD_PAYLOAD);
	h.length = SQ_WIRE_STAMP_LEN;
	sq_wire_encode(f.buf, &h);
	expect_reject(&f, SQ_WIRE_HEADER_LEN + h.length, &f.router, true, SQ_REJ_BAD_PACKET);
	/* a new registration forgets the agreement */
	sq_peers_unregister(&f.peers, SQ_ROLE_ROUTER);
	assert_true(sq_peers_register(&f.peers, SQ_ROLE_ROUTER, (struct sockaddr *)&f.router, sizeof(f.router), 9));
	assert_false(f.peers.peer[SQ_ROLE_ROUTER].shared_clock);
}

static void test_registration(void **state)
{
	(void)state;
	struct fixture f;
	setup_fixture(&f);
	/* A repeated HELLO is not news; a new port replaces the old one. */
	assert_false(sq_peers_register(&f.peers, SQ_ROLE_ROUTER, (struct sockaddr *)&f.router, sizeof(f.router), 5));
	assert_int_equal(f.peers.peer[SQ_ROLE_ROUTER].last_rx_ns, 5);
	assert_true(sq_peers_register(&f.peers, SQ_ROLE_ROUTER, (struct sockaddr *)&f.stranger, sizeof(f.stranger), 6));
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.router, true, SQ_REJ_UNKNOWN_SOURCE);
	assert_int_equal(classify(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.stranger, true).action,
			 SQ_ACT_DATA);
	sq_peers_unregister(&f.peers, SQ_ROLE_ROUTER);
	expect_reject(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN), &f.stranger, true, SQ_REJ_UNKNOWN_SOURCE);
	char text[64];
	sq_sockaddr_text((struct sockaddr *)&f.mobile, text, sizeof(text));
	assert_string_equal(text, "198.18.0.2:40001");
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(7) };
	inet_pton(AF_INET6, "2001:db8::9", &a6.sin6_addr);
	sq_sockaddr_text((struct sockaddr *)&a6, text, sizeof(text));
	assert_string_equal(text, "[2001:db8::9]:7");
	assert_false(sq_sockaddr_equal((struct sockaddr *)&a6, sizeof(a6), (struct sockaddr *)&f.mobile, sizeof(f.mobile)));
}

/* A cell's mobile NPAs name their host in the header (0 is host 1): each has its own slot,
 * registered and checked on its own; a host the cell does not have, or a host from the
 * router, is unexpected_role. */
static void test_hosts_of_a_cell(void **state)
{
	(void)state;
	struct fixture f;
	setup_fixture(&f);
	f.peers.hosts = 3;
	struct sockaddr_in second = addr("198.18.0.3", 40003);
	size_t len = message(&f, SQ_MSG_HELLO, SQ_ROLE_MOBILE, TOKEN);
	f.buf[23] = 2;   /* the header's host: 2 */
	struct sq_classified c = classify(&f, len, &second, false);
	assert_int_equal(c.action, SQ_ACT_HELLO);
	assert_int_equal(c.h.host, 2);
	assert_int_equal(c.slot, SQ_ROLE_MOBILE + 1);
	assert_true(sq_peers_register(&f.peers, c.slot, (struct sockaddr *)&second, sizeof(second), 3));
	/* host 1's NPA (host 0 in the header, as before cells) is still host 1 */
	c = classify(&f, message(&f, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN), &f.mobile, true);
	assert_int_equal(c.action, SQ_ACT_DATA);
	assert_int_equal(c.slot, SQ_ROLE_MOBILE);
	/* host 2's DATA only from host 2's address */
	len = message(&f, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN);
	f.buf[23] = 2;
	assert_int_equal(classify(&f, len, &second, true).action, SQ_ACT_DATA);
	expect_reject(&f, len, &f.mobile, true, SQ_REJ_UNKNOWN_SOURCE);
	f.buf[23] = 4;   /* the cell has 3 hosts */
	expect_reject(&f, len, &second, true, SQ_REJ_UNEXPECTED_ROLE);
	len = message(&f, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN);
	f.buf[23] = 1;
	expect_reject(&f, len, &f.router, true, SQ_REJ_UNEXPECTED_ROLE);
	assert_int_equal(sq_peers_last_slot(&f.peers), SQ_ROLE_MOBILE + 2);
	char name[16];
	sq_peer_name(SQ_ROLE_MOBILE + 2, name, sizeof name);
	assert_string_equal(name, "mobile3");
	sq_peer_name(SQ_ROLE_MOBILE, name, sizeof name);
	assert_string_equal(name, "mobile");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_messages),
		cmocka_unit_test(test_hosts_of_a_cell),
		cmocka_unit_test(test_every_reject_reason),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_shared_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
