#include "cell_routes.h"

#include <string.h>

static size_t addr_len(uint8_t family)
{
	return family == 6 ? 16 : 4;
}

static bool is(const struct sq_cell_route *route, uint8_t family, const uint8_t *addr)
{
	return route->known && route->family == family && memcmp(route->addr, addr, addr_len(family)) == 0;
}

void sq_cell_routes_set(struct sq_cell_routes *r, uint32_t host, uint8_t family, const uint8_t *addr)
{
	if (host >= SQ_CELL_MAX_HOSTS || is(&r->host[host], family, addr))
		return;
	for (uint32_t h = 0; h < SQ_CELL_MAX_HOSTS; h++)
		if (is(&r->host[h], family, addr))
			r->host[h].known = false;
	struct sq_cell_route *route = &r->host[host];
	route->known = true;
	route->family = family;
	memset(route->addr, 0, sizeof route->addr);
	memcpy(route->addr, addr, addr_len(family));
}

void sq_cell_routes_learn(struct sq_cell_routes *r, uint32_t host, const struct sq_pkt_identity *id)
{
	sq_cell_routes_set(r, host, id->family, id->src);
}

uint32_t sq_cell_routes_host(const struct sq_cell_routes *r, const struct sq_pkt_identity *id)
{
	for (uint32_t h = 0; h < SQ_CELL_MAX_HOSTS; h++)
		if (is(&r->host[h], id->family, id->dst))
			return h;
	return 0;
}
