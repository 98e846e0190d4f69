/* Network configuration of a device with libnl-route: MTU, link up, one
 * address (with an optional point-to-point peer) and routes through it.
 * Everything added is remembered so that it can be removed again. Works in
 * the network namespace the calling thread is in when applying. */
#ifndef NPA_NETCONF_H
#define NPA_NETCONF_H

#include <stddef.h>
#include <stdint.h>

#include "netspec.h"

struct npa_netconf_spec {
	const char *dev;
	uint32_t mtu;
	const struct npa_prefix *address;
	const struct npa_prefix *peer;          /* NULL: none */
	const struct npa_route_spec *routes;
	size_t n_routes;
};

struct npa_netconf;

/* Configures spec->dev. On failure undoes what was done, returns NULL and
 * writes what was attempted into err. */
struct npa_netconf *npa_netconf_apply(const struct npa_netconf_spec *spec, char *err,
				      size_t errlen);

/* Removes the routes and the address that apply added (those already gone are
 * fine), reports other failures on stderr, and frees nc. NULL is ignored. */
void npa_netconf_remove(struct npa_netconf *nc);

#endif
