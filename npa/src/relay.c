#include "relay.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "monotonic.h"
#include "release_queue.h"
#include "to_sp_batch.h"

#define BATCH 32
#define BUF_LEN SQ_WIRE_MAX_DATAGRAM
/* Batches per wakeup and direction before the other fds get their turn;
 * level-triggered epoll brings us back for the rest. */
#define ROUNDS_PER_WAKEUP 8
/* Packets held for their release time: more than release_ahead (at most 10 ms) holds at
 * any rate the relay manages. */
#define RELEASE_SLOTS 256
/* How long before a release the relay stops sleeping and polls, as the emulator does
 * before a delivery (emulator/README.md, "Timing"): a wakeup takes about that long. */
#define EARLY_NS (50 * 1000)

enum tag { TAG_TUN, TAG_SOCK, TAG_SIGNAL, TAG_KEEPALIVE, TAG_PEER };

/* With UDP_GRO the kernel hands over a GSO send of the SP (equal-size
 * datagrams) as one message with the segment size in a control message. */
union gro_control {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct relay {
	const struct npa_relay_config *cfg;
	struct npa_counters *counters;
	int epfd, keepalive_fd, peer_fd;
	struct npa_to_sp_batch *to_sp;
	bool tun_paused;
	/* SP -> TUN */
	uint8_t *from_sp_buf;
	struct mmsghdr from_sp_msgs[BATCH];
	struct iovec from_sp_iov[BATCH];
	struct sockaddr_storage from_sp_src[BATCH];
	union gro_control from_sp_control[BATCH];
	int64_t last_rx_us;
	bool sp_said_bye;
	/* SP DATA waiting for its release time */
	struct npa_release_queue held;
	int64_t early_for, early_ns;   /* the release the relay wakes early for, by how much */
	char *err;
	size_t errlen;
};

static int fail(struct relay *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s: %s", what, strerror(errno));
	return -1;
}

static int arm_timer(int fd, int64_t first_us, int64_t interval_us)
{
	struct itimerspec its = {
		.it_value = { first_us / 1000000, (first_us % 1000000) * 1000 },
		.it_interval = { interval_us / 1000000, (interval_us % 1000000) * 1000 },
	};
	return timerfd_settime(fd, 0, &its, NULL);
}

static int watch(struct relay *r, int op, int fd, uint32_t events, enum tag tag)
{
	struct epoll_event ev = { .events = events, .data.u32 = tag };
	return epoll_ctl(r->epfd, op, fd, &ev);
}

static void prepare_buffers(struct relay *r)
{
	for (int i = 0; i < BATCH; i++) {
		r->from_sp_iov[i].iov_base = r->from_sp_buf + (size_t)i * BUF_LEN;
		r->from_sp_msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &r->from_sp_src[i], .msg_iov = &r->from_sp_iov[i], .msg_iovlen = 1,
			.msg_control = r->from_sp_control[i].buf,
		};
	}
}

static int setup(struct relay *r)
{
	r->to_sp = npa_to_sp_batch_new(r->cfg->link, r->cfg->gso);
	r->from_sp_buf = malloc((size_t)BATCH * BUF_LEN);
	if (r->to_sp == NULL || r->from_sp_buf == NULL) {
		errno = ENOMEM;
		return fail(r, "cannot allocate the relay buffers");
	}
	prepare_buffers(r);
	if (npa_release_queue_init(&r->held, RELEASE_SLOTS) != 0) {
		errno = ENOMEM;
		return fail(r, "cannot allocate the queue of packets waiting for their release");
	}
	/* Optional: without it (old kernels) each datagram arrives on its own. A
	 * slot (SQ_WIRE_MAX_DATAGRAM) holds the largest UDP message either way. */
	int on = 1;
	setsockopt(r->cfg->link->fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->keepalive_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	r->peer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->epfd < 0 || r->keepalive_fd < 0 || r->peer_fd < 0)
		return fail(r, "cannot create the relay's epoll and timer fds");
	if (watch(r, EPOLL_CTL_ADD, r->cfg->tun_fd, EPOLLIN, TAG_TUN)
	    || watch(r, EPOLL_CTL_ADD, r->cfg->link->fd, EPOLLIN, TAG_SOCK)
	    || watch(r, EPOLL_CTL_ADD, r->cfg->signal_fd, EPOLLIN, TAG_SIGNAL)
	    || watch(r, EPOLL_CTL_ADD, r->keepalive_fd, EPOLLIN, TAG_KEEPALIVE)
	    || watch(r, EPOLL_CTL_ADD, r->peer_fd, EPOLLIN, TAG_PEER))
		return fail(r, "cannot register the relay's fds with epoll");
	r->last_rx_us = npa_now_us();
	if (arm_timer(r->keepalive_fd, r->cfg->keepalive_us, r->cfg->keepalive_us)
	    || arm_timer(r->peer_fd, r->cfg->peer_timeout_us, 0))
		return fail(r, "cannot arm the keepalive and peer timers");
	return 0;
}

static void teardown(struct relay *r)
{
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->keepalive_fd >= 0)
		close(r->keepalive_fd);
	if (r->peer_fd >= 0)
		close(r->peer_fd);
	npa_to_sp_batch_free(r->to_sp);
	free(r->from_sp_buf);
	npa_release_queue_free(&r->held);
}

/* While the socket cannot take more, stop reading the TUN: the packets then
 * wait in the TUN's queue (back-pressure) instead of being dropped here. */
static int pause_tun(struct relay *r, bool pause)
{
	if (r->tun_paused == pause)
		return 0;
	r->tun_paused = pause;
	if (watch(r, EPOLL_CTL_MOD, r->cfg->tun_fd, pause ? 0 : EPOLLIN, TAG_TUN)
	    || watch(r, EPOLL_CTL_MOD, r->cfg->link->fd, pause ? EPOLLIN | EPOLLOUT : EPOLLIN,
		     TAG_SOCK))
		return fail(r, "cannot change the relay's epoll registration");
	return 0;
}

static int tun_to_sp(struct relay *r)
{
	if (r->tun_paused)
		return 0;  /* an event fetched before the pause */
	for (int round = 0; round < ROUNDS_PER_WAKEUP; round++) {
		int n = npa_to_sp_batch_fill(r->to_sp, r->cfg->tun_fd);
		if (n < 0)
			return fail(r, "cannot read from the TUN device");
		if (n == 0)
			return 0;
		if (npa_to_sp_batch_flush(r->to_sp))
			return pause_tun(r, true);
		if (n < NPA_BATCH)
			return 0;
	}
	return 0;
}

static int resume_to_sp(struct relay *r)
{
	return npa_to_sp_batch_flush(r->to_sp) ? 0 : pause_tun(r, false);
}

static void write_tun(struct relay *r, const uint8_t *pkt, uint16_t len)
{
	if (write(r->cfg->tun_fd, pkt, len) == (ssize_t)len) {
		r->counters->tun_tx_packets++;
		r->counters->tun_tx_bytes += len;
	} else {
		r->counters->tun_tx_errors++;
	}
}

/* Writes the oldest held packet now; late is false when it goes before its time (the
 * queue is full, or the relay ends), which the counters of those cases say. */
static void release_oldest(struct relay *r, int64_t now_ns, bool late)
{
	uint16_t len;
	const uint8_t *pkt = npa_release_queue_peek(&r->held, &len);
	if (late)
		sq_lateness_add(&r->counters->release_late, now_ns - npa_release_queue_next(&r->held));
	write_tun(r, pkt, len);
	npa_release_queue_pop(&r->held);
}

/* Writes every held packet whose release time has come. */
static void release_due(struct relay *r)
{
	int64_t now = npa_now_ns();
	while (npa_release_queue_next(&r->held) <= now)
		release_oldest(r, now, true);
}

/* The relay ends: what is held goes to the TUN now rather than never. */
static void release_all(struct relay *r)
{
	int64_t now = npa_now_ns();
	while (r->held.count > 0) {
		r->counters->release_flushed++;
		release_oldest(r, now, npa_release_queue_next(&r->held) <= now);
	}
}

/* A packet with its release time: held until then, or written now when that has passed. */
static void hold(struct relay *r, const uint8_t *payload, uint16_t length)
{
	int64_t at = sq_wire_get_time(payload);
	const uint8_t *pkt = payload + SQ_WIRE_STAMP_LEN;
	uint16_t len = (uint16_t)(length - SQ_WIRE_STAMP_LEN);
	r->counters->release_held++;
	int64_t now = npa_now_ns();
	release_due(r);   /* the ones before it first: the TUN sees release order */
	if (at <= now && r->held.count == 0) {
		sq_lateness_add(&r->counters->release_late, now - at);
		write_tun(r, pkt, len);
		return;
	}
	if (npa_release_queue_full(&r->held)) {
		r->counters->release_full++;
		release_oldest(r, now, false);
	}
	npa_release_queue_push(&r->held, at, pkt, len);
}

static void deliver(struct relay *r, const struct sq_wire_header *h, const uint8_t *payload)
{
	switch (h->type) {
	case SQ_MSG_DATA:
		r->counters->sp_rx_packets++;
		if (h->flags & SQ_WIRE_FLAG_CLOCK) {
			r->counters->sp_rx_bytes += h->length - SQ_WIRE_STAMP_LEN;
			hold(r, payload, h->length);
			break;
		}
		r->counters->sp_rx_bytes += h->length;
		write_tun(r, payload, h->length);
		break;
	case SQ_MSG_KEEPALIVE:
		r->counters->keepalives_received++;
		break;
	case SQ_MSG_BYE:
		r->sp_said_bye = true;
		break;
	default:
		break;  /* a repeated WELCOME answering an early HELLO */
	}
}

/* The size of each datagram coalesced in the message; 0 if it holds one. */
static size_t gro_segment_size(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int size;
			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size > 0 ? (size_t)size : 0;
		}
	}
	return 0;
}

/* Returns true if the datagram was accepted. */
static bool handle_datagram(struct relay *r, struct msghdr *m, const uint8_t *buf, size_t len)
{
	struct sq_wire_header h;
	if (npa_sp_link_accept(r->cfg->link, buf, len, m->msg_name, m->msg_namelen, &h) != NPA_ACCEPT)
		return false;
	deliver(r, &h, buf + SQ_WIRE_HEADER_LEN);
	return true;
}

static void handle_datagrams(struct relay *r, int n)
{
	bool accepted = false;
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &r->from_sp_msgs[i].msg_hdr;
		const uint8_t *buf = r->from_sp_iov[i].iov_base;
		size_t len = r->from_sp_msgs[i].msg_len;
		size_t segment = gro_segment_size(m);
		if (segment == 0)
			segment = len;
		for (size_t off = 0; off < len; off += segment) {
			size_t rest = len - off;
			accepted |= handle_datagram(r, m, buf + off, rest < segment ? rest : segment);
		}
	}
	/* One clock read per batch: the batch arrived within one receive call. */
	if (accepted)
		r->last_rx_us = npa_now_us();
}

static int sp_to_tun(struct relay *r)
{
	for (int round = 0; round < ROUNDS_PER_WAKEUP; round++) {
		for (int i = 0; i < BATCH; i++) {
			r->from_sp_msgs[i].msg_hdr.msg_namelen = sizeof(r->from_sp_src[i]);
			r->from_sp_msgs[i].msg_hdr.msg_controllen = sizeof(r->from_sp_control[i].buf);
			r->from_sp_iov[i].iov_len = BUF_LEN;
		}
		int n = recvmmsg(r->cfg->link->fd, r->from_sp_msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0 && errno != ECONNREFUSED)
			return fail(r, "cannot receive from the emulator's socket");
		if (n > 0)
			handle_datagrams(r, n);
		if (n < BATCH)
			return 0;
	}
	return 0;
}

static void send_keepalive(struct relay *r)
{
	uint64_t expirations;
	if (read(r->keepalive_fd, &expirations, sizeof(expirations)) < 0)
		return;
	if (npa_sp_link_send_control(r->cfg->link, SQ_MSG_KEEPALIVE) == 0)
		r->counters->keepalives_sent++;
}

/* Returns 1 when the SP has been silent for the peer timeout. */
static int check_peer(struct relay *r)
{
	uint64_t expirations;
	if (read(r->peer_fd, &expirations, sizeof(expirations)) < 0)
		return 0;
	int64_t silent = npa_now_us() - r->last_rx_us;
	if (silent >= r->cfg->peer_timeout_us)
		return 1;
	arm_timer(r->peer_fd, r->cfg->peer_timeout_us - silent, 0);
	return 0;
}

static int handle_event(struct relay *r, const struct epoll_event *ev, enum npa_relay_end *end)
{
	switch ((enum tag)ev->data.u32) {
	case TAG_TUN:
		return tun_to_sp(r);
	case TAG_SOCK:
		if ((ev->events & EPOLLOUT) && resume_to_sp(r))
			return -1;
		return (ev->events & EPOLLIN) ? sp_to_tun(r) : 0;
	case TAG_SIGNAL:
		*end = NPA_RELAY_SIGNAL;
		return 1;
	case TAG_KEEPALIVE:
		send_keepalive(r);
		return 0;
	case TAG_PEER:
		if (!check_peer(r))
			return 0;
		*end = NPA_RELAY_PEER_LOST;
		return 1;
	}
	return 0;
}

/* How long to sleep: until EARLY_NS before the next release (at most half the time until
 * it, fixed when that release is first seen, so the relay never polls longer than it
 * sleeps), then not at all: it polls until the release. NULL: no release waits. */
static const struct timespec *sleep_for(struct relay *r, struct timespec *ts)
{
	int64_t next = npa_release_queue_next(&r->held);
	if (next == INT64_MAX)
		return NULL;
	int64_t now = npa_now_ns();
	if (next != r->early_for) {
		r->early_for = next;
		r->early_ns = next - now < 2 * EARLY_NS ? (next - now) / 2 : EARLY_NS;
	}
	int64_t wait = next - r->early_ns - now;
	if (wait < 0)
		wait = 0;
	*ts = (struct timespec){ .tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000 };
	return ts;
}

static enum npa_relay_end loop(struct relay *r)
{
	struct epoll_event events[8];
	enum npa_relay_end end = NPA_RELAY_FAILED;
	for (;;) {
		struct timespec ts;
		int n = epoll_pwait2(r->epfd, events, 8, sleep_for(r, &ts), NULL);
		release_due(r);
		if (n < 0 && errno == EINTR)
			continue;
		r->counters->wakeups++;
		if (n < 0) {
			fail(r, "epoll_wait failed in the relay");
			return NPA_RELAY_FAILED;
		}
		for (int i = 0; i < n; i++) {
			int rc = handle_event(r, &events[i], &end);
			if (rc < 0)
				return NPA_RELAY_FAILED;
			if (rc > 0)
				return end;
		}
		if (r->sp_said_bye)
			return NPA_RELAY_SP_BYE;
	}
}

enum npa_relay_end npa_relay_run(const struct npa_relay_config *cfg, char *err, size_t errlen)
{
	struct relay r = {
		.cfg = cfg, .counters = cfg->link->counters, .epfd = -1, .keepalive_fd = -1,
		.peer_fd = -1, .err = err, .errlen = errlen,
	};
	enum npa_relay_end end = setup(&r) == 0 ? loop(&r) : NPA_RELAY_FAILED;
	if (r.held.slot != NULL)
		release_all(&r);
	teardown(&r);
	return end;
}
