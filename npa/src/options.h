/* squall-npa command line (documented in npa/README.md and --help). */
#ifndef NPA_OPTIONS_H
#define NPA_OPTIONS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli_values.h"
#include "netspec.h"

#define NPA_MAX_ROUTES 32

struct npa_options {
	uint8_t role;                       /* SQ_ROLE_ROUTER or SQ_ROLE_MOBILE */
	uint16_t host;                      /* mobile: its host in the emulator's cell (0: host 1) */
	struct npa_endpoint emulator;
	uint64_t token;
	char dev[IFNAMSIZ];
	struct npa_prefix address;
	bool has_peer;
	struct npa_prefix peer;
	uint32_t mtu;                       /* 0: take the link MTU from WELCOME */
	struct npa_route_spec routes[NPA_MAX_ROUTES];
	size_t n_routes;
	int64_t keepalive_us;
	int64_t peer_timeout_us;
	int64_t connect_timeout_us;
	bool no_gso;                        /* one datagram per send to the SP */
	bool help;
};

/* Parses argv. Returns 0, or -1 with a message naming the flag in err. */
int npa_options_parse(int argc, char **argv, struct npa_options *o, char *err, size_t errlen);

extern const char npa_usage[];

#endif
