/* Network specifications given on command lines: addresses with an optional
 * prefix length ("198.18.2.1/24", "2001:db8::1"), and routes
 * ("198.18.3.0/24" or "198.18.3.0/24 via 198.18.2.1").
 *
 * Parsing only checks and converts text; netconf.c turns the result into
 * kernel configuration. Shared by squall-npa and squall-naive-relay. */
#ifndef NPA_NETSPEC_H
#define NPA_NETSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct npa_prefix {
	int family;              /* AF_INET or AF_INET6 */
	uint8_t addr[16];        /* network byte order; 4 bytes used for AF_INET */
	unsigned prefixlen;      /* the full length when none was written */
	bool has_prefixlen;      /* a "/N" was written */
};

struct npa_route_spec {
	struct npa_prefix dst;
	bool has_gateway;
	struct npa_prefix gateway;
};

/* Size of the address in bytes for the family (4 or 16). */
size_t npa_prefix_addr_len(const struct npa_prefix *p);

/* Parses "ADDR" or "ADDR/N". With allow_prefix false a "/N" is an error.
 * On error returns -1 and writes a sentence about text into err. */
int npa_prefix_parse(const char *text, bool allow_prefix, struct npa_prefix *out,
		     char *err, size_t errlen);

/* Parses a route destination CIDR: the host bits must be zero. */
int npa_route_dst_parse(const char *text, struct npa_route_spec *out, char *err, size_t errlen);

/* Parses a gateway address for a route whose destination is already set: it
 * must be a plain address of the destination's family. */
int npa_route_gateway_parse(const char *text, struct npa_route_spec *route, char *err,
			    size_t errlen);

/* Parses "CIDR" or "CIDR via GW" as one string. */
int npa_route_parse(const char *text, struct npa_route_spec *out, char *err, size_t errlen);

/* Writes "ADDR/N" into buf. */
void npa_prefix_format(const struct npa_prefix *p, char *buf, size_t len);

#endif
