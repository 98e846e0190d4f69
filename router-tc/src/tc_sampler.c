#include "tc_sampler.h"

#include <errno.h>
#include <net/if.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/tc.h>
#include <string.h>

static struct nl_sock *connect_route_socket(int *err)
{
	struct nl_sock *sock = nl_socket_alloc();
	if (sock == NULL) {
		*err = -NLE_NOMEM;
		return NULL;
	}
	*err = nl_connect(sock, NETLINK_ROUTE);
	if (*err < 0) {
		nl_socket_free(sock);
		return NULL;
	}
	return sock;
}

int tc_sampler_open(struct tc_sampler *sampler, const char *device, char *err, size_t err_len)
{
	*sampler = (struct tc_sampler){ 0 };
	sampler->ifindex = (int)if_nametoindex(device);
	if (sampler->ifindex == 0) {
		snprintf(err, err_len, "device \"%s\" not found in this network namespace", device);
		return -1;
	}
	sampler->marks.ifindex = sampler->ifindex;
	int rc;
	sampler->sock = connect_route_socket(&rc);
	if (sampler->sock == NULL) {
		snprintf(err, err_len, "opening a NETLINK_ROUTE socket failed: %s", nl_geterror(rc));
		return -1;
	}
	rc = rtnl_qdisc_alloc_cache(sampler->sock, &sampler->qdiscs);
	if (rc < 0) {
		snprintf(err, err_len, "dumping the qdiscs over netlink failed: %s", nl_geterror(rc));
		tc_sampler_close(sampler);
		return -1;
	}
	rc = rtnl_class_alloc_cache(sampler->sock, sampler->ifindex, &sampler->classes);
	if (rc < 0) {
		snprintf(err, err_len, "dumping the classes of \"%s\" over netlink failed: %s", device, nl_geterror(rc));
		tc_sampler_close(sampler);
		return -1;
	}
	return 0;
}

static bool has_red_qdisc(struct tc_sampler *sampler)
{
	for (struct nl_object *obj = nl_cache_get_first(sampler->qdiscs); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_tc *tc = (struct rtnl_tc *)obj;
		const char *kind = rtnl_tc_get_kind(tc);
		if (rtnl_tc_get_ifindex(tc) == sampler->ifindex && kind && strcmp(kind, "red") == 0)
			return true;
	}
	return false;
}

static int refresh_red_marks(struct tc_sampler *sampler)
{
	sampler->marks.count = 0;
	if (!has_red_qdisc(sampler))
		return 0;
	if (sampler->red_sock == NULL) {
		int rc;
		sampler->red_sock = connect_route_socket(&rc);
		if (sampler->red_sock == NULL)
			return rc;
	}
	return red_marks_dump(sampler->red_sock, &sampler->marks);
}

static void fill_row(struct sample_row *row, struct rtnl_tc *tc, bool is_class, int64_t time_us)
{
	const char *kind = rtnl_tc_get_kind(tc);
	*row = (struct sample_row){
		.time_us = time_us,
		.is_class = is_class,
		.handle = rtnl_tc_get_handle(tc),
		.parent = rtnl_tc_get_parent(tc),
		.backlog_bytes = rtnl_tc_get_stat(tc, RTNL_TC_BACKLOG),
		.backlog_pkts = rtnl_tc_get_stat(tc, RTNL_TC_QLEN),
		.drops = rtnl_tc_get_stat(tc, RTNL_TC_DROPS),
		.overlimits = rtnl_tc_get_stat(tc, RTNL_TC_OVERLIMITS),
		.requeues = rtnl_tc_get_stat(tc, RTNL_TC_REQUEUES),
	};
	snprintf(row->kind, sizeof row->kind, "%s", kind ? kind : "-");
}

static int write_cache_rows(struct tc_sampler *sampler, struct nl_cache *cache, bool is_class, int64_t time_us,
			    FILE *out)
{
	int rows = 0;
	char line[256];
	for (struct nl_object *obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_tc *tc = (struct rtnl_tc *)obj;
		if (rtnl_tc_get_ifindex(tc) != sampler->ifindex)
			continue;
		struct sample_row row;
		fill_row(&row, tc, is_class, time_us);
		if (!is_class)
			row.has_marks = red_marks_find(&sampler->marks, row.handle, &row.marks);
		sample_row_format(&row, line, sizeof line);
		if (fputs(line, out) == EOF)
			return -1;
		rows++;
	}
	return rows;
}

int tc_sampler_write_sample(struct tc_sampler *sampler, int64_t time_us, FILE *out, char *err, size_t err_len)
{
	int rc = nl_cache_refill(sampler->sock, sampler->qdiscs);
	if (rc >= 0)
		rc = nl_cache_refill(sampler->sock, sampler->classes);
	if (rc < 0) {
		snprintf(err, err_len, "refreshing qdisc/class statistics over netlink failed: %s", nl_geterror(rc));
		return -1;
	}
	rc = refresh_red_marks(sampler);
	if (rc < 0) {
		snprintf(err, err_len, "reading RED statistics over netlink failed: %s", nl_geterror(rc));
		return -1;
	}
	int qdisc_rows = write_cache_rows(sampler, sampler->qdiscs, false, time_us, out);
	int class_rows = qdisc_rows < 0 ? -1 : write_cache_rows(sampler, sampler->classes, true, time_us, out);
	if (class_rows < 0) {
		snprintf(err, err_len, "writing the sample to the output file failed: %s", strerror(errno));
		return -1;
	}
	return qdisc_rows + class_rows;
}

void tc_sampler_close(struct tc_sampler *sampler)
{
	if (sampler->classes)
		nl_cache_free(sampler->classes);
	if (sampler->qdiscs)
		nl_cache_free(sampler->qdiscs);
	if (sampler->red_sock)
		nl_socket_free(sampler->red_sock);
	if (sampler->sock)
		nl_socket_free(sampler->sock);
	*sampler = (struct tc_sampler){ 0 };
}
