/* The SP's UDP socket: non-blocking, large buffers, batched receive. */
#ifndef SQ_UDP_SOCKET_H
#define SQ_UDP_SOCKET_H

#include <stddef.h>
#include <sys/socket.h>

#include "peers.h"

/* Binds a non-blocking UDP socket; -1 and a message on failure. */
int udp_socket_open(const struct sockaddr_storage *addr, socklen_t len, char *err, size_t errlen);
/* "127.0.0.1:5300": the bound address (useful with port 0). */
void udp_socket_local_text(int fd, char *out, size_t outlen);

struct udp_batch;

struct udp_batch *udp_batch_new(unsigned count, size_t size);
void udp_batch_free(struct udp_batch *b);
/* recvmmsg without blocking: the number of datagrams (0 if none, -1 on error). */
int udp_batch_receive(struct udp_batch *b, int fd);
/* The i-th received datagram (valid until the next receive). */
void udp_batch_datagram(const struct udp_batch *b, int i, struct sq_datagram *d);

#endif
