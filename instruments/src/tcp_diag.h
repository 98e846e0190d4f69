/* One dump of the kernel's TCP sockets with their tcp_info (NETLINK_SOCK_DIAG, as `ss -ti`
 * asks for it): what squall-tcp-sampler writes every interval. */
#ifndef SQUALL_TCP_DIAG_H
#define SQUALL_TCP_DIAG_H

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct tcp_diag_socket {
	int family;                  /* AF_INET or AF_INET6 */
	uint8_t state;               /* TCP_ESTABLISHED ... (linux/tcp.h numbering) */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	struct tcp_info info;        /* zero beyond what the kernel sent */
	int has_info;
};

typedef void (*tcp_diag_fn)(const struct tcp_diag_socket *s, void *ctx);

struct tcp_diag {
	int fd;
	uint32_t seq;
};

/* Opens the netlink socket. Returns 0, or -1 with a message in err. */
int tcp_diag_open(struct tcp_diag *d, char *err, size_t errlen);

/* Calls fn for every TCP socket of `family` in this network namespace except listeners.
 * Returns the number of sockets, or -1 with a message in err. */
int tcp_diag_dump(struct tcp_diag *d, int family, tcp_diag_fn fn, void *ctx, char *err, size_t errlen);

void tcp_diag_close(struct tcp_diag *d);

#endif
