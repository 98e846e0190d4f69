/* Socket helpers shared by the generators. Functions that can fail print what was attempted
 * on which endpoint and return -1. */
#ifndef WL_NET_H
#define WL_NET_H

#include <stddef.h>
#include <sys/socket.h>

#define WL_ENDPOINT_STRLEN 64

/* "198.18.40.1:5001" or "[2001:db8::1]:5001". */
void wl_format_endpoint(const struct sockaddr_storage *addr, char *out, size_t out_size);
/* Sets IP_TOS (IPv4) or IPV6_TCLASS (IPv6); tos < 0 leaves the default. */
int wl_set_tos(int fd, int family, int tos);
/* A bound socket of the given type; stream sockets also listen. Prints the readiness line
 * "listening ADDR:PORT" with the real port. */
int wl_open_listener(const struct sockaddr_storage *addr, socklen_t len, int type, int tos);
/* --delayed-acks: takes a connected TCP socket out of the kernel's quick-ACK mode
 * (TCP_QUICKACK = 0), so it acknowledges like a delayed-ACK receiver: every second full-sized
 * segment, or when the delayed-ACK timer fires (Linux: 40 ms at the least, not 200 ms). Linux
 * goes back to quick ACKs by itself (when that timer fires, after an idle gap, on
 * out-of-order data), so call it again after every read. Not before connect: in SYN-SENT it
 * would also delay the handshake's last ACK. Returns -1 with errno set when it failed. */
int wl_delay_acks(int fd);
/* The local address of fd, formatted. */
void wl_local_endpoint(int fd, char *out, size_t out_size);

#endif
