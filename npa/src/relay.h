/* The NPA's data path once registered: TUN packets become DATA messages to
 * the SP, accepted DATA from the SP is written to the TUN. One thread, epoll
 * over non-blocking fds, batched with recvmmsg/sendmmsg; keepalives on a
 * timerfd; the SP is declared lost when silent for the peer timeout. */
#ifndef NPA_RELAY_H
#define NPA_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sp_link.h"

struct npa_relay_config {
	int tun_fd;
	struct npa_sp_link *link;
	int signal_fd;                 /* SIGINT/SIGTERM end the relay */
	int64_t keepalive_us;
	int64_t peer_timeout_us;
	bool gso;                      /* coalesce equal-size packets with UDP GSO */
};

enum npa_relay_end {
	NPA_RELAY_SIGNAL,              /* SIGINT or SIGTERM */
	NPA_RELAY_SP_BYE,              /* the SP left in order */
	NPA_RELAY_PEER_LOST,           /* nothing from the SP for the peer timeout */
	NPA_RELAY_FAILED,              /* a system call failed; see err */
};

enum npa_relay_end npa_relay_run(const struct npa_relay_config *cfg, char *err, size_t errlen);

#endif
