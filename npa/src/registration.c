#include "registration.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "monotonic.h"

struct hello_state {
	struct npa_sp_link *link;
	uint8_t *buf;
	int64_t next_hello_us;
	int64_t deadline_us;
};

static int timeout_ms(int64_t until_us, int64_t now_us)
{
	int64_t ms = (until_us - now_us + 999) / 1000;
	return ms < 0 ? 0 : (int)ms;
}

static int send_hello_if_due(struct hello_state *s, int64_t now, char *err, size_t errlen)
{
	if (now < s->next_hello_us)
		return 0;
	int rc = npa_sp_link_send_hello(s->link);
	/* Refused/unreachable are what an absent emulator looks like: keep trying. */
	if (rc < 0 && rc != -ECONNREFUSED && rc != -EHOSTUNREACH && rc != -ENETUNREACH
	    && rc != -EAGAIN) {
		snprintf(err, errlen, "cannot send HELLO to the emulator at %s: %s",
			 s->link->sp->text, strerror(-rc));
		return -1;
	}
	s->next_hello_us = now + NPA_HELLO_INTERVAL_US;
	return 0;
}

/* Reads what arrived; returns 1 on a WELCOME, 0 to go on, -1 on a bad WELCOME. */
static int read_answers(struct hello_state *s, uint16_t *link_mtu, char *err, size_t errlen)
{
	for (;;) {
		struct sockaddr_storage src;
		socklen_t src_len = sizeof(src);
		ssize_t n = recvfrom(s->link->fd, s->buf, SQ_WIRE_MAX_DATAGRAM, 0,
				     (struct sockaddr *)&src, &src_len);
		if (n < 0)
			return 0;  /* EAGAIN, or an ICMP error from an absent emulator */
		struct sq_wire_header h;
		if (npa_sp_link_accept(s->link, s->buf, (size_t)n, (struct sockaddr *)&src, src_len,
				       &h) != NPA_ACCEPT || h.type != SQ_MSG_WELCOME)
			continue;
		const uint8_t *p = s->buf + SQ_WIRE_HEADER_LEN;
		*link_mtu = h.length >= 2 ? (uint16_t)(p[0] << 8 | p[1]) : 0;
		if (*link_mtu < 68) {
			snprintf(err, errlen, "the emulator at %s sent a WELCOME without a usable link "
				 "MTU (payload %u bytes, MTU %u; expected a u16 of at least 68)",
				 s->link->sp->text, h.length, *link_mtu);
			return -1;
		}
		/* The SP agrees that both ends read one CLOCK_MONOTONIC: DATA carries TUN read times. */
		s->link->stamp = s->link->clock_offered && (h.flags & SQ_WIRE_FLAG_CLOCK);
		return 1;
	}
}

static enum npa_registration wait_for_welcome(struct hello_state *s, int signal_fd,
					      uint16_t *link_mtu, char *err, size_t errlen)
{
	struct pollfd fds[2] = {
		{ .fd = s->link->fd, .events = POLLIN },
		{ .fd = signal_fd, .events = POLLIN },
	};
	for (;;) {
		int64_t now = npa_now_us();
		if (now >= s->deadline_us)
			return NPA_REGISTRATION_TIMEOUT;
		if (send_hello_if_due(s, now, err, errlen) != 0)
			return NPA_REGISTRATION_FAILED;
		int64_t wake = s->next_hello_us < s->deadline_us ? s->next_hello_us : s->deadline_us;
		if (poll(fds, 2, timeout_ms(wake, now)) < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll failed while registering: %s", strerror(errno));
			return NPA_REGISTRATION_FAILED;
		}
		if (fds[1].revents & POLLIN)
			return NPA_REGISTRATION_SIGNAL;
		if (fds[0].revents & POLLIN) {
			int rc = read_answers(s, link_mtu, err, errlen);
			if (rc != 0)
				return rc > 0 ? NPA_REGISTERED : NPA_REGISTRATION_FAILED;
		}
	}
}

enum npa_registration npa_register(struct npa_sp_link *l, int signal_fd, int64_t timeout_us,
				   uint16_t *link_mtu, char *err, size_t errlen)
{
	struct hello_state s = { .link = l, .buf = malloc(SQ_WIRE_MAX_DATAGRAM) };
	if (s.buf == NULL) {
		snprintf(err, errlen, "out of memory while registering");
		return NPA_REGISTRATION_FAILED;
	}
	s.next_hello_us = npa_now_us();
	s.deadline_us = s.next_hello_us + timeout_us;
	enum npa_registration r = wait_for_welcome(&s, signal_fd, link_mtu, err, errlen);
	free(s.buf);
	return r;
}
