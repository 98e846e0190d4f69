#include "sp_link.h"

#include "boot_id.h"
#include "monotonic.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NPA_SOCKET_BUFFER (4 * 1024 * 1024)

static void enlarge_buffer(int fd, int force_opt, int opt)
{
	int size = NPA_SOCKET_BUFFER;
	/* The FORCE variants pass net.core.[rw]mem_max; they need CAP_NET_ADMIN. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &size, sizeof(size)) != 0)
		setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
}

int npa_sp_link_open(struct npa_sp_link *l, const struct npa_endpoint *sp, uint64_t token,
		     uint8_t role, struct npa_counters *counters, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->sp = sp;
	l->token = token;
	l->role = role;
	l->counters = counters;
	l->fd = socket(sp->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		snprintf(err, errlen, "cannot open a UDP socket towards the emulator at %s: %s",
			 sp->text, strerror(errno));
		return -1;
	}
	enlarge_buffer(l->fd, SO_RCVBUFFORCE, SO_RCVBUF);
	enlarge_buffer(l->fd, SO_SNDBUFFORCE, SO_SNDBUF);
	return 0;
}

void npa_sp_link_close(struct npa_sp_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

void npa_sp_link_header(struct npa_sp_link *l, uint8_t *buf, uint8_t type, uint16_t length)
{
	struct sq_wire_header h = {
		.version = SQ_WIRE_VERSION, .type = type, .role = l->role,
		.token = l->token, .seq = l->seq++, .length = length, .host = l->host,
		.flags = type == SQ_MSG_DATA && l->stamp ? SQ_WIRE_FLAG_CLOCK : 0,
	};
	sq_wire_encode(buf, &h);
}

int npa_sp_link_send_control(struct npa_sp_link *l, uint8_t type)
{
	uint8_t buf[SQ_WIRE_HEADER_LEN];
	npa_sp_link_header(l, buf, type, 0);
	ssize_t n = sendto(l->fd, buf, sizeof(buf), 0, (const struct sockaddr *)&l->sp->addr,
			   l->sp->addr_len);
	return n < 0 ? -errno : 0;
}

int npa_sp_link_send_hello(struct npa_sp_link *l)
{
	uint8_t buf[SQ_WIRE_HEADER_LEN + SQ_WIRE_CLOCK_OFFER_LEN];
	char boot_id[SQ_WIRE_BOOT_ID_LEN];
	l->clock_offered = sq_boot_id(boot_id);
	if (!l->clock_offered)
		return npa_sp_link_send_control(l, SQ_MSG_HELLO);
	struct sq_wire_header h = {
		.version = SQ_WIRE_VERSION, .type = SQ_MSG_HELLO, .role = l->role, .flags = SQ_WIRE_FLAG_CLOCK,
		.token = l->token, .seq = l->seq++, .length = SQ_WIRE_CLOCK_OFFER_LEN, .host = l->host,
	};
	sq_wire_encode(buf, &h);
	sq_wire_clock_offer_encode(buf + SQ_WIRE_HEADER_LEN, npa_now_ns(), boot_id);
	ssize_t n = sendto(l->fd, buf, sizeof(buf), 0, (const struct sockaddr *)&l->sp->addr,
			   l->sp->addr_len);
	return n < 0 ? -errno : 0;
}

enum npa_reject npa_sp_link_accept(struct npa_sp_link *l, const uint8_t *buf, size_t len,
				   const struct sockaddr *src, socklen_t src_len,
				   struct sq_wire_header *h)
{
	struct npa_inbound_policy policy = {
		.sp_addr = (const struct sockaddr *)&l->sp->addr,
		.sp_addr_len = l->sp->addr_len,
		.token = l->token,
		.shared_clock = l->stamp,
	};
	enum npa_reject r = npa_inbound_check(&policy, buf, len, src, src_len, h);
	if (r != NPA_ACCEPT)
		l->counters->rejected[r]++;
	return r;
}
