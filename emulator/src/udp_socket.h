/* The SP's UDP socket: non-blocking, large buffers, batched receive and send. */
#ifndef SQ_UDP_SOCKET_H
#define SQ_UDP_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "peers.h"

/* Binds a non-blocking UDP socket; -1 and a message on failure. */
int udp_socket_open(const struct sockaddr_storage *addr, socklen_t len, char *err, size_t errlen);
/* "127.0.0.1:5300": the bound address (useful with port 0). */
void udp_socket_local_text(int fd, char *out, size_t outlen);

/* Asks the kernel to hand over a peer's UDP GSO send (equal-size datagrams)
 * as one message instead of cutting it up in the sender's context; the
 * receive batch cuts it. Without kernel support each datagram comes alone. */
void udp_socket_enable_gro(int fd);

/* count messages of size bytes each (one more than the largest valid datagram). */
struct udp_batch;

struct udp_batch *udp_batch_new(unsigned count, size_t size);
void udp_batch_free(struct udp_batch *b);
/* recvmmsg without blocking: the number of datagrams (0 if none, -1 on error). */
int udp_batch_receive(struct udp_batch *b, int fd);
/* Whether the last receive took fewer messages than the batch holds (the socket is empty). */
bool udp_batch_drained(const struct udp_batch *b);
/* The i-th received datagram (valid until the next receive). */
void udp_batch_datagram(const struct udp_batch *b, int i, struct sq_datagram *d);

/* Datagrams to send with one sendmmsg: the packets that several events make
 * due at the same moment cost one system call instead of one each, and with
 * gso, consecutive ones of equal size to the same address go out as one UDP
 * GSO send (UDP_SEGMENT), which the kernel cuts into exactly the datagrams
 * they would have been, for a fraction of the per-datagram cost. If the path
 * refuses GSO the batch goes on without it. The data is not copied: it must
 * stay valid until the flush; `to` pointers are compared to group datagrams. */
struct udp_send_batch;

struct udp_send_batch *udp_send_batch_new(unsigned count, bool gso);
void udp_send_batch_free(struct udp_send_batch *b);
unsigned udp_send_batch_count(const struct udp_send_batch *b);
bool udp_send_batch_full(const struct udp_send_batch *b);
/* Queues one datagram; false (nothing queued) when the batch is full. */
bool udp_send_batch_add(struct udp_send_batch *b, const void *data, size_t len,
			const struct sockaddr *to, socklen_t to_len);
/* Sends every queued datagram and empties the batch; returns how many the
 * kernel refused (each refused one is skipped, the rest still go out) and,
 * if refused is not NULL, marks them there (one flag per queued datagram). */
unsigned udp_send_batch_flush(struct udp_send_batch *b, int fd, bool *refused);

#endif
