/* RED mark counts are read from the qdisc dump messages the kernel sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "../src/red_marks.h"

/* A qdisc message as the kernel dumps it: tcmsg, TCA_KIND, and TCA_XSTATS when given. */
static struct nl_msg *qdisc_message(int ifindex, uint32_t handle, const char *kind, const void *xstats,
				    size_t xstats_len)
{
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWQDISC, NLM_F_MULTI);
	assert_non_null(msg);
	struct tcmsg tcm = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_handle = handle };
	assert_int_equal(nlmsg_append(msg, &tcm, sizeof tcm, NLMSG_ALIGNTO), 0);
	assert_int_equal(nla_put_string(msg, TCA_KIND, kind), 0);
	if (xstats)
		assert_int_equal(nla_put(msg, TCA_XSTATS, (int)xstats_len, xstats), 0);
	return msg;
}

static void test_red_marks_are_taken_by_handle(void **state)
{
	(void)state;
	struct red_marks marks = { .ifindex = 7 };
	struct tc_red_xstats red30 = { .early = 4, .pdrop = 1, .other = 0, .marked = 12 };
	struct tc_red_xstats red40 = { .marked = 3 };
	struct nl_msg *a = qdisc_message(7, 0x00300000u, "red", &red30, sizeof red30);
	struct nl_msg *b = qdisc_message(7, 0x00400000u, "red", &red40, sizeof red40);
	assert_true(red_marks_take_qdisc(&marks, nlmsg_hdr(a)));
	assert_true(red_marks_take_qdisc(&marks, nlmsg_hdr(b)));
	uint64_t marked = 0;
	assert_true(red_marks_find(&marks, 0x00300000u, &marked));
	assert_int_equal(marked, 12);
	assert_true(red_marks_find(&marks, 0x00400000u, &marked));
	assert_int_equal(marked, 3);
	assert_false(red_marks_find(&marks, 0x00100000u, &marked));
	nlmsg_free(a);
	nlmsg_free(b);
}

static void test_other_devices_kinds_and_short_stats_are_ignored(void **state)
{
	(void)state;
	struct red_marks marks = { .ifindex = 7 };
	struct tc_red_xstats red = { .marked = 5 };
	struct nl_msg *other_dev = qdisc_message(8, 0x00300000u, "red", &red, sizeof red);
	struct nl_msg *pfifo = qdisc_message(7, 0x00100000u, "pfifo", &red, sizeof red);
	struct nl_msg *short_stats = qdisc_message(7, 0x00300000u, "red", &red, 8);
	struct nl_msg *no_stats = qdisc_message(7, 0x00300000u, "red", NULL, 0);
	assert_false(red_marks_take_qdisc(&marks, nlmsg_hdr(other_dev)));
	assert_false(red_marks_take_qdisc(&marks, nlmsg_hdr(pfifo)));
	assert_false(red_marks_take_qdisc(&marks, nlmsg_hdr(short_stats)));
	assert_false(red_marks_take_qdisc(&marks, nlmsg_hdr(no_stats)));
	assert_int_equal(marks.count, 0);
	nlmsg_free(other_dev);
	nlmsg_free(pfifo);
	nlmsg_free(short_stats);
	nlmsg_free(no_stats);
}

/* The raw dump itself against this kernel: lo has no RED qdisc, so nothing is taken, but the
 * request, the multipart reply and the callback run for real. */
static void test_a_real_dump_completes(void **state)
{
	(void)state;
	struct nl_sock *sock = nl_socket_alloc();
	assert_non_null(sock);
	assert_int_equal(nl_connect(sock, NETLINK_ROUTE), 0);
	struct red_marks marks = { .ifindex = 1, .count = 99 };
	assert_true(red_marks_dump(sock, &marks) >= 0);
	assert_int_equal(marks.count, 0);
	assert_true(red_marks_dump(sock, &marks) >= 0); /* reusable: one socket for every sample */
	nl_socket_free(sock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_red_marks_are_taken_by_handle),
		cmocka_unit_test(test_other_devices_kinds_and_short_stats_are_ignored),
		cmocka_unit_test(test_a_real_dump_completes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
