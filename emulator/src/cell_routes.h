/* Which host of a cell a downlink packet goes to (docs/cell.md): the host whose address is
 * the packet's destination. A host's address is the configuration's ([cell] addresses) and
 * any its mobile NPA's uplink packets come from (their source; the last host to send from an
 * address has it); a destination that is no host's goes to host 1. Pure: no I/O. */
#ifndef SQ_CELL_ROUTES_H
#define SQ_CELL_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#include "link_config.h"
#include "packet_inspect.h"

struct sq_cell_route {
	bool known;
	uint8_t family;
	uint8_t addr[16];
};

struct sq_cell_routes {
	struct sq_cell_route host[SQ_CELL_MAX_HOSTS];
};

/* Host `host` (0-based) sent a packet from id->src: that address is now its (the last one
 * wins; an address another host had moves to this one). */
void sq_cell_routes_learn(struct sq_cell_routes *r, uint32_t host, const struct sq_pkt_identity *id);
/* Host `host` (0-based) has the address given in the configuration ([cell] addresses). */
void sq_cell_routes_set(struct sq_cell_routes *r, uint32_t host, uint8_t family, const uint8_t *addr);
/* The host (0-based) whose address is id->dst; 0 if none. */
uint32_t sq_cell_routes_host(const struct sq_cell_routes *r, const struct sq_pkt_identity *id);

#endif
