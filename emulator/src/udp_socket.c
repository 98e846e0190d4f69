#include "udp_socket.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/uio.h>
#include <unistd.h>

#include "udp_gso.h"

/* Bursts of a fast link must not overflow the socket: ask for 8 MB. The FORCE
 * variants (CAP_NET_ADMIN, as in the testbed) pass net.core.rmem_max/wmem_max;
 * without privileges the plain ones get what the limits allow. */
#define SOCKET_BUFFER (8 << 20)

/* Without CAP_NET_ADMIN the plain option is capped by net.core.[rw]mem_max
 * (often ~208 KB, which a flood overruns): say so, the run still works. */
static void enlarge_buffer(int fd, int force_opt, int opt, const char *which, const char *sysctl)
{
	int size = SOCKET_BUFFER;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &size, sizeof(size)) == 0)
		return;
	setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
	int got = 0;
	socklen_t len = sizeof(got);
	/* The kernel reports twice the usable size (bookkeeping overhead included). */
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) == 0 && got / 2 < size)
		fprintf(stderr, "squall-emulator: note: the socket's %s buffer is %d KB, not %d KB "
			"(without CAP_NET_ADMIN it is capped by net.core.%s); bursts may be dropped "
			"at the socket\n", which, got / 2 / 1024, size / 1024, sysctl);
}

int udp_socket_open(const struct sockaddr_storage *addr, socklen_t len, char *err, size_t errlen)
{
	char where[80];
	sq_sockaddr_text((const struct sockaddr *)addr, where, sizeof(where));
	int fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "listen %s: cannot create a UDP socket: %s", where, strerror(errno));
		return -1;
	}
	enlarge_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, "receive", "rmem_max");
	enlarge_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, "send", "wmem_max");
	if (bind(fd, (const struct sockaddr *)addr, len) < 0) {
		snprintf(err, errlen, "listen %s: cannot bind: %s", where, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void udp_socket_local_text(int fd, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		snprintf(out, outlen, "?");
	else
		sq_sockaddr_text((const struct sockaddr *)&ss, out, outlen);
}

/* Up to this many datagrams in one received message: a UDP GRO message holds
 * a peer's GSO send (UDP_MAX_SEGMENTS: 64, 128 on recent kernels). */
#define GRO_MAX_SEGMENTS 128

union gro_control {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct udp_batch {
	unsigned count, received;        /* messages: capacity, and in the last receive */
	size_t size;
	uint8_t *data;
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_storage *from;
	union gro_control *control;
	struct sq_datagram *datagrams;   /* the received messages cut into datagrams */
};

void udp_batch_free(struct udp_batch *b)
{
	if (!b)
		return;
	free(b->data);
	free(b->msgs);
	free(b->iov);
	free(b->from);
	free(b->control);
	free(b->datagrams);
	free(b);
}

struct udp_batch *udp_batch_new(unsigned count, size_t size)
{
	struct udp_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->count = count;
	b->size = size;
	b->data = malloc(count * size);
	b->msgs = calloc(count, sizeof(*b->msgs));
	b->iov = calloc(count, sizeof(*b->iov));
	b->from = calloc(count, sizeof(*b->from));
	b->control = calloc(count, sizeof(*b->control));
	b->datagrams = calloc((size_t)count * GRO_MAX_SEGMENTS, sizeof(*b->datagrams));
	if (!b->data || !b->msgs || !b->iov || !b->from || !b->control || !b->datagrams) {
		udp_batch_free(b);
		return NULL;
	}
	return b;
}

void udp_socket_enable_gro(int fd)
{
	int on = 1;
	setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
}

/* The size of each datagram coalesced in the message; 0 if it holds one. */
static size_t gro_segment_size(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int size;
			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size > 0 ? (size_t)size : 0;
		}
	}
	return 0;
}

/* Cuts message i into datagrams from datagrams[n] on; returns the new n. */
static unsigned cut_message(struct udp_batch *b, unsigned i, unsigned n)
{
	struct mmsghdr *m = &b->msgs[i];
	const uint8_t *buf = b->data + (size_t)i * b->size;
	size_t len = m->msg_len < b->size ? m->msg_len : b->size;
	/* The buffer is one byte larger than the largest valid datagram. */
	bool oversized = (m->msg_hdr.msg_flags & MSG_TRUNC) || m->msg_len >= b->size;
	size_t segment = oversized ? 0 : gro_segment_size(&m->msg_hdr);
	if (segment == 0 || segment >= len)
		segment = len;
	size_t off = 0;
	for (unsigned k = 1; off < len || k == 1; k++) {
		/* The last slot takes whatever is left (then rejected for its length). */
		size_t rest = len - off, take = rest > segment && k < GRO_MAX_SEGMENTS ? segment : rest;
		b->datagrams[n++] = (struct sq_datagram){
			.buf = buf + off, .len = take, .oversized = oversized,
			.src = (const struct sockaddr *)&b->from[i], .src_len = m->msg_hdr.msg_namelen,
		};
		off += take;
	}
	return n;
}

int udp_batch_receive(struct udp_batch *b, int fd)
{
	for (unsigned i = 0; i < b->count; i++) {
		b->iov[i] = (struct iovec){ .iov_base = b->data + i * b->size, .iov_len = b->size };
		b->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &b->from[i], .msg_namelen = sizeof(b->from[i]),
			.msg_iov = &b->iov[i], .msg_iovlen = 1,
			.msg_control = b->control[i].buf, .msg_controllen = sizeof(b->control[i].buf),
		};
		b->msgs[i].msg_len = 0;
	}
	b->received = 0;
	int n = recvmmsg(fd, b->msgs, b->count, MSG_DONTWAIT, NULL);
	/* An ICMP error for an earlier send is reported once; the queue is still there. */
	if (n < 0 && errno == ECONNREFUSED)
		n = recvmmsg(fd, b->msgs, b->count, MSG_DONTWAIT, NULL);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
	b->received = (unsigned)n;
	unsigned datagrams = 0;
	for (unsigned i = 0; i < b->received; i++)
		datagrams = cut_message(b, i, datagrams);
	return (int)datagrams;
}

bool udp_batch_drained(const struct udp_batch *b)
{
	return b->received < b->count;
}

void udp_batch_datagram(const struct udp_batch *b, int i, struct sq_datagram *d)
{
	*d = b->datagrams[i];
}

struct udp_send_batch {
	unsigned count, used;            /* datagrams: capacity and queued */
	bool gso;
	struct iovec *iov;               /* one per datagram */
	const struct sockaddr **to;      /* one per datagram */
	socklen_t *to_len;
	struct mmsghdr *msgs;            /* one per send: a datagram or a GSO run */
	unsigned *first;                 /* each send's first datagram */
	union sq_gso_control *control;
	unsigned n_msgs;
};

void udp_send_batch_free(struct udp_send_batch *b)
{
	if (!b)
		return;
	free(b->iov);
	free(b->to);
	free(b->to_len);
	free(b->msgs);
	free(b->first);
	free(b->control);
	free(b);
}

struct udp_send_batch *udp_send_batch_new(unsigned count, bool gso)
{
	struct udp_send_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->count = count;
	b->gso = gso;
	b->iov = calloc(count, sizeof(*b->iov));
	b->to = calloc(count, sizeof(*b->to));
	b->to_len = calloc(count, sizeof(*b->to_len));
	b->msgs = calloc(count, sizeof(*b->msgs));
	b->first = calloc(count, sizeof(*b->first));
	b->control = calloc(count, sizeof(*b->control));
	if (!b->iov || !b->to || !b->to_len || !b->msgs || !b->first || !b->control) {
		udp_send_batch_free(b);
		return NULL;
	}
	return b;
}

unsigned udp_send_batch_count(const struct udp_send_batch *b)
{
	return b->used;
}

bool udp_send_batch_full(const struct udp_send_batch *b)
{
	return b->used == b->count;
}

bool udp_send_batch_add(struct udp_send_batch *b, const void *data, size_t len,
			const struct sockaddr *to, socklen_t to_len)
{
	if (udp_send_batch_full(b))
		return false;
	unsigned i = b->used++;
	b->iov[i] = (struct iovec){ .iov_base = (void *)data, .iov_len = len };
	b->to[i] = to;
	b->to_len[i] = to_len;
	return true;
}

/* (Re)builds the sends from send index m on, starting at datagram d. */
static void group_sends(struct udp_send_batch *b, unsigned m, unsigned d)
{
	const struct sq_gso_batch view = {
		.iov = b->iov, .n_datagrams = b->used, .to = b->to, .to_len = b->to_len,
		.gso = b->gso, .msgs = b->msgs, .first = b->first, .control = b->control,
	};
	b->n_msgs = sq_gso_group_sends(&view, m, d);
}

/* The send m failed: without GSO from now on if it was a GSO send (the path
 * refuses it), else the datagram is refused. Returns the send to go on with. */
static unsigned handle_send_error(struct udp_send_batch *b, unsigned m, bool *refused, unsigned *n_refused)
{
	if (b->msgs[m].msg_hdr.msg_iovlen > 1) {
		fprintf(stderr, "squall-emulator: note: UDP GSO refused (%s); sending one datagram "
			"per packet from now on\n", strerror(errno));
		b->gso = false;
		group_sends(b, m, b->first[m]);
		return m;
	}
	if (refused)
		refused[b->first[m]] = true;
	(*n_refused)++;
	return m + 1;
}

unsigned udp_send_batch_flush(struct udp_send_batch *b, int fd, bool *refused)
{
	unsigned n_refused = 0;
	if (refused)
		memset(refused, 0, b->used * sizeof(*refused));
	group_sends(b, 0, 0);
	unsigned m = 0;
	while (m < b->n_msgs) {
		int n = sendmmsg(fd, b->msgs + m, b->n_msgs - m, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)   /* sendmmsg reports an error only for the first send it tried */
			m = handle_send_error(b, m, refused, &n_refused);
		else
			m += (unsigned)n;
	}
	b->used = b->n_msgs = 0;
	return n_refused;
}
