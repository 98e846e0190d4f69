#include "to_sp_batch.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "monotonic.h"
#include "udp_gso.h"

#define SLOT_LEN SQ_WIRE_MAX_DATAGRAM

struct npa_to_sp_batch {
	struct npa_sp_link *link;
	bool gso;
	uint8_t *slots;                       /* NPA_BATCH slots of SLOT_LEN bytes */
	struct iovec iov[NPA_BATCH];          /* one per packet: header + packet */
	unsigned n_packets;
	struct mmsghdr msgs[NPA_BATCH];       /* one per run of equal-size packets */
	unsigned first[NPA_BATCH];            /* each message's first packet */
	union sq_gso_control control[NPA_BATCH];
	unsigned n_msgs, sent_msgs;
};

struct npa_to_sp_batch *npa_to_sp_batch_new(struct npa_sp_link *link, bool gso)
{
	struct npa_to_sp_batch *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	b->slots = malloc((size_t)NPA_BATCH * SLOT_LEN);
	if (b->slots == NULL) {
		free(b);
		return NULL;
	}
	b->link = link;
	b->gso = gso;
	for (int i = 0; i < NPA_BATCH; i++)
		b->iov[i].iov_base = b->slots + (size_t)i * SLOT_LEN;
	return b;
}

void npa_to_sp_batch_free(struct npa_to_sp_batch *b)
{
	if (b == NULL)
		return;
	free(b->slots);
	free(b);
}

/* (Re)builds the messages from message index m on, starting at packet p. */
static void group_messages(struct npa_to_sp_batch *b, unsigned m, unsigned p)
{
	const struct npa_endpoint *sp = b->link->sp;
	const struct sq_gso_batch view = {
		.iov = b->iov, .n_datagrams = b->n_packets,
		.dest = (const struct sockaddr *)&sp->addr, .dest_len = sp->addr_len,
		.gso = b->gso, .msgs = b->msgs, .first = b->first, .control = b->control,
	};
	b->n_msgs = sq_gso_group_sends(&view, m, p);
}

int npa_to_sp_batch_fill(struct npa_to_sp_batch *b, int tun_fd)
{
	struct npa_counters *c = b->link->counters;
	while (b->n_packets < NPA_BATCH) {
		uint8_t *slot = b->iov[b->n_packets].iov_base;
		size_t stamp = npa_sp_link_stamp_len(b->link);
		ssize_t n = read(tun_fd, slot + SQ_WIRE_HEADER_LEN + stamp, SLOT_LEN - SQ_WIRE_HEADER_LEN - stamp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -1;
		/* The moment the packet left the TUN, on the clock the SP shares (wire.h). */
		if (stamp)
			sq_wire_put_time(slot + SQ_WIRE_HEADER_LEN, npa_now_ns());
		npa_sp_link_header(b->link, slot, SQ_MSG_DATA, (uint16_t)(stamp + (size_t)n));
		b->iov[b->n_packets++].iov_len = SQ_WIRE_HEADER_LEN + stamp + (size_t)n;
		c->tun_rx_packets++;
		c->tun_rx_bytes += (uint64_t)n;
	}
	group_messages(b, 0, 0);
	b->sent_msgs = 0;
	return (int)b->n_packets;
}

static void count_sent(struct npa_to_sp_batch *b, unsigned m)
{
	const struct msghdr *h = &b->msgs[m].msg_hdr;
	for (size_t i = 0; i < h->msg_iovlen; i++) {
		b->link->counters->sp_tx_packets++;
		b->link->counters->sp_tx_bytes += h->msg_iov[i].iov_len - SQ_WIRE_HEADER_LEN
						  - npa_sp_link_stamp_len(b->link);
	}
}

/* A send failed for the message at sent_msgs: drop GSO or the message. */
static void handle_send_error(struct npa_to_sp_batch *b, int err)
{
	unsigned m = b->sent_msgs;
	if (b->msgs[m].msg_hdr.msg_iovlen > 1) {
		fprintf(stderr, "squall-npa: note: the path to the emulator refuses UDP GSO (%s); "
			"sending one datagram per packet from now on\n", strerror(err));
		b->gso = false;
		group_messages(b, m, b->first[m]);
		return;
	}
	b->link->counters->sp_tx_errors++;
	b->sent_msgs++;
}

int npa_to_sp_batch_flush(struct npa_to_sp_batch *b)
{
	while (b->sent_msgs < b->n_msgs) {
		int n = sendmmsg(b->link->fd, b->msgs + b->sent_msgs, b->n_msgs - b->sent_msgs, 0);
		if (n < 0 && (errno == EAGAIN || errno == ENOBUFS))
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			handle_send_error(b, errno);
			continue;
		}
		for (int i = 0; i < n; i++)
			count_sent(b, b->sent_msgs + (unsigned)i);
		b->sent_msgs += (unsigned)n;
	}
	b->n_packets = b->n_msgs = b->sent_msgs = 0;
	return 0;
}
