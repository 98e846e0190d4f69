/* Grouping a batch of UDP datagrams into sendmmsg sends: consecutive datagrams of equal size
 * to the same destination go out as one UDP GSO send (UDP_SEGMENT), which the kernel cuts into
 * exactly those datagrams. Used by the emulator's send batch and the NPA's TUN -> SP batch. */
#ifndef SQ_UDP_GSO_H
#define SQ_UDP_GSO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The kernel's limit on segments per GSO send (UDP_MAX_SEGMENTS is 64 on older kernels) and
 * on the size of one UDP send. */
#define SQ_GSO_MAX_SEGMENTS 64
#define SQ_GSO_MAX_BYTES 65000

union sq_gso_control {
	char buf[CMSG_SPACE(sizeof(uint16_t))];
	struct cmsghdr align;
};

/* A view of one batch's arrays, owned by the batch. msgs, first and control hold room for one
 * send per datagram. */
struct sq_gso_batch {
	struct iovec *iov;                /* the datagrams */
	unsigned n_datagrams;
	const struct sockaddr **to;       /* each datagram's destination, or NULL: all go to dest */
	const socklen_t *to_len;
	const struct sockaddr *dest;      /* with to == NULL */
	socklen_t dest_len;
	bool gso;                         /* false: one send per datagram */
	struct mmsghdr *msgs;             /* the sends */
	unsigned *first;                  /* each send's first datagram */
	union sq_gso_control *control;    /* each send's UDP_SEGMENT control message */
};

/* (Re)builds the sends from send index m on, starting at datagram d (after a refused GSO send
 * the batch is regrouped from there without GSO). Returns the number of sends. */
unsigned sq_gso_group_sends(const struct sq_gso_batch *b, unsigned m, unsigned d);

#endif
