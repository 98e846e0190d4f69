#include "red_marks.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <string.h>

static void remember(struct red_marks *marks, uint32_t handle, uint64_t marked)
{
	if (marks->count < RED_MARKS_MAX)
		marks->entries[marks->count++] = (struct red_mark_count){ handle, marked };
}

bool red_marks_take_qdisc(struct red_marks *marks, struct nlmsghdr *hdr)
{
	struct nlattr *tb[TCA_MAX + 1];
	if (nlmsg_parse(hdr, sizeof(struct tcmsg), tb, TCA_MAX, NULL) < 0)
		return false;
	const struct tcmsg *tcm = nlmsg_data(hdr);
	if (tcm->tcm_ifindex != marks->ifindex || tb[TCA_KIND] == NULL || tb[TCA_XSTATS] == NULL)
		return false;
	if (strcmp(nla_get_string(tb[TCA_KIND]), "red") != 0)
		return false;
	if ((size_t)nla_len(tb[TCA_XSTATS]) < sizeof(struct tc_red_xstats))
		return false;
	struct tc_red_xstats xstats;
	memcpy(&xstats, nla_data(tb[TCA_XSTATS]), sizeof xstats);
	remember(marks, tcm->tcm_handle, xstats.marked);
	return true;
}

static int on_qdisc(struct nl_msg *msg, void *arg)
{
	red_marks_take_qdisc(arg, nlmsg_hdr(msg));
	return NL_OK;
}

int red_marks_dump(struct nl_sock *sock, struct red_marks *marks)
{
	struct tcmsg request = { .tcm_family = AF_UNSPEC, .tcm_ifindex = marks->ifindex };
	marks->count = 0;
	int err = nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, on_qdisc, marks);
	if (err < 0)
		return err;
	err = nl_send_simple(sock, RTM_GETQDISC, NLM_F_DUMP, &request, sizeof request);
	if (err < 0)
		return err;
	return nl_recvmsgs_default(sock);
}

bool red_marks_find(const struct red_marks *marks, uint32_t handle, uint64_t *marked)
{
	for (size_t i = 0; i < marks->count; i++) {
		if (marks->entries[i].handle == handle) {
			*marked = marks->entries[i].marked;
			return true;
		}
	}
	return false;
}
