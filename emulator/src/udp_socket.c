#include "udp_socket.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Bursts of a fast link must not overflow the socket: ask for 8 MB. The FORCE
 * variants (CAP_NET_ADMIN, as in the testbed) pass net.core.rmem_max/wmem_max;
 * without privileges the plain ones get what the limits allow. */
#define SOCKET_BUFFER (8 << 20)

int udp_socket_open(const struct sockaddr_storage *addr, socklen_t len, char *err, size_t errlen)
{
	char where[80];
	sq_sockaddr_text((const struct sockaddr *)addr, where, sizeof(where));
	int fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "listen %s: cannot create a UDP socket: %s", where, strerror(errno));
		return -1;
	}
	int size = SOCKET_BUFFER;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
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

struct udp_batch {
	unsigned count;
	size_t size;
	uint8_t *data;
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_storage *from;
};

void udp_batch_free(struct udp_batch *b)
{
	if (!b)
		return;
	free(b->data);
	free(b->msgs);
	free(b->iov);
	free(b->from);
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
	if (!b->data || !b->msgs || !b->iov || !b->from) {
		udp_batch_free(b);
		return NULL;
	}
	return b;
}

int udp_batch_receive(struct udp_batch *b, int fd)
{
	for (unsigned i = 0; i < b->count; i++) {
		b->iov[i] = (struct iovec){ .iov_base = b->data + i * b->size, .iov_len = b->size };
		b->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &b->from[i], .msg_namelen = sizeof(b->from[i]),
			.msg_iov = &b->iov[i], .msg_iovlen = 1,
		};
		b->msgs[i].msg_len = 0;
	}
	int n = recvmmsg(fd, b->msgs, b->count, MSG_DONTWAIT, NULL);
	/* An ICMP error for an earlier send is reported once; the queue is still there. */
	if (n < 0 && errno == ECONNREFUSED)
		n = recvmmsg(fd, b->msgs, b->count, MSG_DONTWAIT, NULL);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
	return n;
}

void udp_batch_datagram(const struct udp_batch *b, int i, struct sq_datagram *d)
{
	const struct mmsghdr *m = &b->msgs[i];
	d->buf = b->data + (size_t)i * b->size;
	d->len = m->msg_len < b->size ? m->msg_len : b->size;
	/* The buffer is one byte larger than the largest valid datagram. */
	d->oversized = (m->msg_hdr.msg_flags & MSG_TRUNC) || m->msg_len >= b->size;
	d->src = (const struct sockaddr *)&b->from[i];
	d->src_len = m->msg_hdr.msg_namelen;
}
