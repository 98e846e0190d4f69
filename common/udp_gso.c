#include "udp_gso.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

static bool same_destination(const struct sq_gso_batch *b, unsigned d, unsigned e)
{
	return b->to == NULL || b->to[e] == b->to[d];
}

/* How many datagrams from d on can share one GSO send with d: same destination, same size
 * (the kernel cuts a GSO send into equal segments). */
static unsigned gso_run(const struct sq_gso_batch *b, unsigned d)
{
	size_t size = b->iov[d].iov_len;
	unsigned k = 1;
	if (!b->gso)
		return 1;
	while (d + k < b->n_datagrams && same_destination(b, d, d + k)
	       && b->iov[d + k].iov_len == size && k < SQ_GSO_MAX_SEGMENTS
	       && (k + 1) * size <= SQ_GSO_MAX_BYTES)
		k++;
	return k;
}

static void set_segment_size(const struct sq_gso_batch *b, unsigned m, uint16_t size)
{
	struct msghdr *h = &b->msgs[m].msg_hdr;
	h->msg_control = b->control[m].buf;
	h->msg_controllen = sizeof(b->control[m].buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(h);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	memcpy(CMSG_DATA(c), &size, sizeof(size));
}

unsigned sq_gso_group_sends(const struct sq_gso_batch *b, unsigned m, unsigned d)
{
	while (d < b->n_datagrams) {
		unsigned k = gso_run(b, d);
		b->msgs[m].msg_hdr = (struct msghdr){
			.msg_name = (void *)(b->to ? b->to[d] : b->dest),
			.msg_namelen = b->to ? b->to_len[d] : b->dest_len,
			.msg_iov = &b->iov[d], .msg_iovlen = k,
		};
		if (k > 1)
			set_segment_size(b, m, (uint16_t)b->iov[d].iov_len);
		b->first[m] = d;
		m++;
		d += k;
	}
	return m;
}
