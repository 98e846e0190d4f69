#include "netspec.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t npa_prefix_addr_len(const struct npa_prefix *p)
{
	return p->family == AF_INET6 ? 16 : 4;
}

static int parse_prefixlen(const char *text, unsigned max, unsigned *out)
{
	if (*text == '\0' || strlen(text) > 3)
		return -1;
	unsigned v = 0;
	for (const char *c = text; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		v = v * 10 + (unsigned)(*c - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_address(const char *text, struct npa_prefix *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, text, out->addr) == 1) {
		out->family = AF_INET;
		out->prefixlen = 32;
		return 0;
	}
	if (inet_pton(AF_INET6, text, out->addr) == 1) {
		out->family = AF_INET6;
		out->prefixlen = 128;
		return 0;
	}
	return -1;
}

int npa_prefix_parse(const char *text, bool allow_prefix, struct npa_prefix *out,
		     char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 8];
	if (strlen(text) >= sizeof(addr)) {
		snprintf(err, errlen, "'%s' is too long for an IP address", text);
		return -1;
	}
	strcpy(addr, text);
	char *slash = strchr(addr, '/');
	if (slash != NULL) {
		if (!allow_prefix) {
			snprintf(err, errlen, "'%s': expected a plain IP address without /prefix", text);
			return -1;
		}
		*slash = '\0';
	}
	if (parse_address(addr, out) != 0) {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", text);
		return -1;
	}
	if (slash != NULL) {
		unsigned max = out->prefixlen;
		if (parse_prefixlen(slash + 1, max, &out->prefixlen) != 0) {
			snprintf(err, errlen, "'%s': the prefix length must be a number from 0 to %u",
				 text, max);
			return -1;
		}
		out->has_prefixlen = true;
	}
	return 0;
}

static bool host_bits_zero(const struct npa_prefix *p)
{
	size_t len = npa_prefix_addr_len(p);
	for (size_t bit = p->prefixlen; bit < len * 8; bit++)
		if (p->addr[bit / 8] & (0x80u >> (bit % 8)))
			return false;
	return true;
}

int npa_route_dst_parse(const char *text, struct npa_route_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (npa_prefix_parse(text, true, &out->dst, err, errlen) != 0)
		return -1;
	if (!host_bits_zero(&out->dst)) {
		snprintf(err, errlen, "'%s' has host bits set: expected a network address such as "
			 "198.18.3.0/24", text);
		return -1;
	}
	return 0;
}

int npa_route_gateway_parse(const char *text, struct npa_route_spec *route, char *err,
			    size_t errlen)
{
	if (npa_prefix_parse(text, false, &route->gateway, err, errlen) != 0)
		return -1;
	if (route->gateway.family != route->dst.family) {
		snprintf(err, errlen, "gateway '%s' is not of the route destination's address family",
			 text);
		return -1;
	}
	route->has_gateway = true;
	return 0;
}

int npa_route_parse(const char *text, struct npa_route_spec *out, char *err, size_t errlen)
{
	char buf[128];
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "'%s' is too long for a route", text);
		return -1;
	}
	strcpy(buf, text);
	char *save = NULL;
	char *dst = strtok_r(buf, " \t", &save);
	char *via = strtok_r(NULL, " \t", &save);
	char *gw = strtok_r(NULL, " \t", &save);
	char *extra = strtok_r(NULL, " \t", &save);
	if (dst == NULL || (via != NULL && (strcmp(via, "via") != 0 || gw == NULL)) || extra) {
		snprintf(err, errlen, "'%s': expected CIDR or 'CIDR via GATEWAY'", text);
		return -1;
	}
	if (npa_route_dst_parse(dst, out, err, errlen) != 0)
		return -1;
	return gw != NULL ? npa_route_gateway_parse(gw, out, err, errlen) : 0;
}

void npa_prefix_format(const struct npa_prefix *p, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	inet_ntop(p->family, p->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, p->prefixlen);
}
