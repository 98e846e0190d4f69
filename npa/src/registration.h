/* Registration with the SP: HELLO every interval until WELCOME (payload: the
 * link MTU, u16) or until the connect timeout. SIGINT/SIGTERM (read from
 * signal_fd) end the wait. */
#ifndef NPA_REGISTRATION_H
#define NPA_REGISTRATION_H

#include <stddef.h>
#include <stdint.h>

#include "sp_link.h"

#define NPA_HELLO_INTERVAL_US 200000

enum npa_registration {
	NPA_REGISTERED,
	NPA_REGISTRATION_TIMEOUT,
	NPA_REGISTRATION_SIGNAL,
	NPA_REGISTRATION_FAILED,
};

enum npa_registration npa_register(struct npa_sp_link *l, int signal_fd, int64_t timeout_us,
				   uint16_t *link_mtu, char *err, size_t errlen);

#endif
