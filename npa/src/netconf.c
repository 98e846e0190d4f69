#include "netconf.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct npa_netconf {
	struct nl_sock *sock;
	char dev[IFNAMSIZ];
	int ifindex;
	struct rtnl_addr *addr;         /* NULL until added */
	struct rtnl_route **routes;     /* the routes added so far */
	size_t n_routes;
};

static struct nl_addr *build_addr(const struct npa_prefix *p, unsigned prefixlen)
{
	struct nl_addr *a = nl_addr_build(p->family, p->addr, npa_prefix_addr_len(p));
	if (a != NULL)
		nl_addr_set_prefixlen(a, (int)prefixlen);
	return a;
}

static int open_socket(struct npa_netconf *nc, char *err, size_t errlen)
{
	nc->sock = nl_socket_alloc();
	int rc = nc->sock == NULL ? -NLE_NOMEM : nl_connect(nc->sock, NETLINK_ROUTE);
	if (rc < 0) {
		snprintf(err, errlen, "cannot open a route netlink socket to configure %s: %s",
			 nc->dev, nl_geterror(rc));
		return -1;
	}
	return 0;
}

static int configure_link(struct npa_netconf *nc, uint32_t mtu, char *err, size_t errlen)
{
	struct rtnl_link *link = NULL;
	struct rtnl_link *change = NULL;
	int rc = rtnl_link_get_kernel(nc->sock, 0, nc->dev, &link);
	if (rc >= 0) {
		nc->ifindex = rtnl_link_get_ifindex(link);
		change = rtnl_link_alloc();
		rc = change == NULL ? -NLE_NOMEM : 0;
	}
	if (rc >= 0) {
		rtnl_link_set_mtu(change, mtu);
		rtnl_link_set_flags(change, IFF_UP);
		rc = rtnl_link_change(nc->sock, link, change, 0);
	}
	if (rc < 0)
		snprintf(err, errlen, "cannot set MTU %u and bring %s up: %s", mtu, nc->dev,
			 nl_geterror(rc));
	rtnl_link_put(change);
	rtnl_link_put(link);
	return rc < 0 ? -1 : 0;
}

/* With a peer, the kernel takes the prefix length from the peer (as `ip addr
 * add A peer P/N` does), so the --address prefix moves to the peer. */
static struct rtnl_addr *build_rtnl_addr(const struct npa_netconf *nc,
					 const struct npa_prefix *address,
					 const struct npa_prefix *peer, int *rc)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	unsigned full = (unsigned)npa_prefix_addr_len(address) * 8;
	unsigned peer_len = peer == NULL ? 0
		: peer->has_prefixlen ? peer->prefixlen : address->prefixlen;
	struct nl_addr *local = build_addr(address, peer == NULL ? address->prefixlen : full);
	struct nl_addr *remote = peer == NULL ? NULL : build_addr(peer, peer_len);
	*rc = a == NULL || local == NULL || (peer != NULL && remote == NULL) ? -NLE_NOMEM : 0;
	if (*rc == 0) {
		rtnl_addr_set_ifindex(a, nc->ifindex);
		*rc = rtnl_addr_set_local(a, local);
	}
	if (*rc == 0 && remote != NULL)
		*rc = rtnl_addr_set_peer(a, remote);
	if (*rc == 0 && address->family == AF_INET6)
		rtnl_addr_set_flags(a, IFA_F_NODAD);  /* usable at once, like on lo */
	nl_addr_put(local);
	nl_addr_put(remote);
	if (*rc < 0) {
		rtnl_addr_put(a);
		return NULL;
	}
	return a;
}

static int add_address(struct npa_netconf *nc, const struct npa_prefix *address,
		       const struct npa_prefix *peer, char *err, size_t errlen)
{
	int rc;
	struct rtnl_addr *a = build_rtnl_addr(nc, address, peer, &rc);
	if (a != NULL)
		rc = rtnl_addr_add(nc->sock, a, NLM_F_EXCL);
	if (rc < 0) {
		char text[64], peer_text[64] = "";
		npa_prefix_format(address, text, sizeof(text));
		if (peer != NULL) {
			strcpy(peer_text, " peer ");
			npa_prefix_format(peer, peer_text + 6, sizeof(peer_text) - 6);
		}
		snprintf(err, errlen, "cannot add address %s%s to %s: %s", text, peer_text, nc->dev,
			 nl_geterror(rc));
		rtnl_addr_put(a);
		return -1;
	}
	nc->addr = a;
	return 0;
}

static struct rtnl_route *build_route(const struct npa_netconf *nc,
				      const struct npa_route_spec *spec, int *rc)
{
	struct rtnl_route *r = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	struct nl_addr *dst = build_addr(&spec->dst, spec->dst.prefixlen);
	struct nl_addr *gw = spec->has_gateway
		? build_addr(&spec->gateway, spec->gateway.prefixlen) : NULL;
	*rc = r == NULL || nh == NULL || dst == NULL || (spec->has_gateway && gw == NULL)
		? -NLE_NOMEM : 0;
	if (*rc == 0) {
		rtnl_route_set_family(r, (uint8_t)spec->dst.family);
		rtnl_route_set_table(r, RT_TABLE_MAIN);
		rtnl_route_set_protocol(r, RTPROT_STATIC);
		rtnl_route_set_type(r, RTN_UNICAST);
		rtnl_route_set_scope(r, spec->has_gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK);
		*rc = rtnl_route_set_dst(r, dst);
	}
	if (*rc == 0) {
		rtnl_route_nh_set_ifindex(nh, nc->ifindex);
		if (gw != NULL)
			rtnl_route_nh_set_gateway(nh, gw);
		rtnl_route_add_nexthop(r, nh);
		nh = NULL;  /* owned by the route now */
	}
	nl_addr_put(dst);
	nl_addr_put(gw);
	if (nh != NULL)
		rtnl_route_nh_free(nh);
	if (*rc < 0) {
		rtnl_route_put(r);
		return NULL;
	}
	return r;
}

static int add_route(struct npa_netconf *nc, const struct npa_route_spec *spec, char *err,
		     size_t errlen)
{
	int rc;
	struct rtnl_route *r = build_route(nc, spec, &rc);
	if (r != NULL)
		rc = rtnl_route_add(nc->sock, r, NLM_F_EXCL);
	if (rc < 0) {
		char dst[64], gw[80] = "";
		npa_prefix_format(&spec->dst, dst, sizeof(dst));
		if (spec->has_gateway) {
			strcpy(gw, " via ");
			npa_prefix_format(&spec->gateway, gw + 5, sizeof(gw) - 5);
			*strrchr(gw, '/') = '\0';
		}
		snprintf(err, errlen, "cannot add route %s%s dev %s: %s%s", dst, gw, nc->dev,
			 nl_geterror(rc), rc == -NLE_EXIST
			 ? " (a route to that destination already exists, e.g. the one the address "
			   "prefix created)" : "");
		rtnl_route_put(r);
		return -1;
	}
	nc->routes[nc->n_routes++] = r;
	return 0;
}

struct npa_netconf *npa_netconf_apply(const struct npa_netconf_spec *spec, char *err,
				      size_t errlen)
{
	struct npa_netconf *nc = calloc(1, sizeof(*nc));
	if (nc == NULL || (nc->routes = calloc(spec->n_routes + 1, sizeof(*nc->routes))) == NULL) {
		snprintf(err, errlen, "out of memory configuring %s", spec->dev);
		free(nc);
		return NULL;
	}
	snprintf(nc->dev, sizeof(nc->dev), "%s", spec->dev);
	int rc = open_socket(nc, err, errlen);
	if (rc == 0)
		rc = configure_link(nc, spec->mtu, err, errlen);
	if (rc == 0)
		rc = add_address(nc, spec->address, spec->peer, err, errlen);
	for (size_t i = 0; rc == 0 && i < spec->n_routes; i++)
		rc = add_route(nc, &spec->routes[i], err, errlen);
	if (rc != 0) {
		npa_netconf_remove(nc);
		return NULL;
	}
	return nc;
}

static bool already_gone(int rc)
{
	return rc == -NLE_OBJ_NOTFOUND || rc == -NLE_NODEV || rc == -NLE_NOADDR;
}

void npa_netconf_remove(struct npa_netconf *nc)
{
	if (nc == NULL)
		return;
	for (size_t i = nc->n_routes; i-- > 0;) {
		int rc = rtnl_route_delete(nc->sock, nc->routes[i], 0);
		if (rc < 0 && !already_gone(rc))
			fprintf(stderr, "squall: cannot remove a route of %s: %s\n", nc->dev,
				nl_geterror(rc));
		rtnl_route_put(nc->routes[i]);
	}
	if (nc->addr != NULL) {
		int rc = rtnl_addr_delete(nc->sock, nc->addr, 0);
		if (rc < 0 && !already_gone(rc))
			fprintf(stderr, "squall: cannot remove the address of %s: %s\n", nc->dev,
				nl_geterror(rc));
		rtnl_addr_put(nc->addr);
	}
	nl_socket_free(nc->sock);
	free(nc->routes);
	free(nc);
}
