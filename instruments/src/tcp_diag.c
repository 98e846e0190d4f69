#include "tcp_diag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

/* The kernel's TCP state numbers (include/net/tcp_states.h; not in the uapi headers). */
enum { STATE_LISTEN = 10, STATE_CLOSING = 11 };
/* Every state but LISTEN: connections from SYN_SENT to TIME_WAIT. */
#define STATES_BUT_LISTEN (((1u << (STATE_CLOSING + 1)) - 1) & ~(1u << STATE_LISTEN))

int tcp_diag_open(struct tcp_diag *d, char *err, size_t errlen)
{
	d->seq = 0;
	d->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (d->fd < 0) {
		snprintf(err, errlen, "opening a NETLINK_SOCK_DIAG socket: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void tcp_diag_close(struct tcp_diag *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

static int send_request(struct tcp_diag *d, int family, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = ++d->seq },
		.req = { .sdiag_family = (uint8_t)family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_ext = 1u << (INET_DIAG_INFO - 1), .idiag_states = STATES_BUT_LISTEN },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(d->fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
		snprintf(err, errlen, "asking the kernel for its TCP sockets (sock_diag): %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void read_socket(const struct nlmsghdr *h, int family, struct tcp_diag_socket *s)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	memset(s, 0, sizeof *s);
	s->family = family;
	s->state = m->idiag_state;
	size_t addr_len = family == AF_INET ? 4 : 16;
	memcpy(s->src, m->id.idiag_src, addr_len);
	memcpy(s->dst, m->id.idiag_dst, addr_len);
	s->sport = ntohs(m->id.idiag_sport);
	s->dport = ntohs(m->id.idiag_dport);
	int left = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type != INET_DIAG_INFO)
			continue;
		size_t n = RTA_PAYLOAD(a) < sizeof s->info ? RTA_PAYLOAD(a) : sizeof s->info;
		memcpy(&s->info, RTA_DATA(a), n);   /* an older kernel sends a shorter tcp_info */
		s->has_info = 1;
	}
}

int tcp_diag_dump(struct tcp_diag *d, int family, tcp_diag_fn fn, void *ctx, char *err, size_t errlen)
{
	if (send_request(d, family, err, errlen) != 0)
		return -1;
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	int count = 0;
	for (;;) {
		ssize_t n = recv(d->fd, buf, sizeof buf, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "reading the kernel's TCP sockets (sock_diag): %s", strerror(errno));
			return -1;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != d->seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return count;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				snprintf(err, errlen, "the kernel refused the sock_diag dump: %s", strerror(-e->error));
				return -1;
			}
			struct tcp_diag_socket s;
			read_socket(h, family, &s);
			fn(&s, ctx);
			count++;
		}
	}
}
