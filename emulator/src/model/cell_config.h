/* A host's view of a cell's configuration (LINK_MODEL.md "A cell of several hosts"): what
 * it has of its own (cell.host[k], or the link's when there is no such array) and what the
 * cell shares (each direction's capacity and overhead, the router stage). */
#ifndef SQ_CELL_CONFIG_H
#define SQ_CELL_CONFIG_H

#include "link_config.h"

/* The number of hosts: cell.hosts, at least 1. */
uint32_t sq_cell_hosts(const struct sq_link_config *cfg);
const struct sq_channel_config *sq_host_channel(const struct sq_link_config *cfg, uint32_t host);
const struct sq_outage_config *sq_host_outages(const struct sq_link_config *cfg, uint32_t host);
/* Host `host`'s direction with the cell's rate, capacity trace, overhead and router stage. */
struct sq_direction_config sq_host_direction(const struct sq_link_config *cfg, uint32_t host,
					     enum sq_dir dir);

#endif
