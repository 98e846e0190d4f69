/* squall-naive-relay: the benchmark's reference for the cost of TUN <-> TUN.
 *
 * One process creates a TUN device in each of two network namespaces (it
 * setns()es into each by name under /var/run/netns and opens /dev/net/tun
 * there), configures both exactly as squall-npa would (address, optional
 * point-to-point peer, MTU, link up, routes; the NPA's netconf module), and
 * copies every packet read from one TUN straight into the other, both ways, as
 * fast as it can: no UDP, no link model, no emulator. Comparing the packet
 * rate of emulator + two NPAs with this one tells how much of the cost is the
 * emulation rather than the TUN devices themselves.
 *
 *   squall-naive-relay --netns-a NS --address-a CIDR [--peer-a ADDR] [--route-a CIDR [via GW]]...
 *                      --netns-b NS --address-b CIDR [--peer-b ADDR] [--route-b CIDR [via GW]]...
 *                      [--dev NAME] [--mtu N]
 *
 * Prints "ready DEV mtu N" on stdout when both devices are configured; on
 * SIGINT/SIGTERM removes both (routes, addresses, devices), prints the
 * counters on stderr and exits 0. Bad arguments: exit 2; failures: exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../npa/src/cli_values.h"
#include "../npa/src/netconf.h"
#include "../npa/src/netspec.h"
#include "../npa/src/tun.h"
#include "squall_version.h"
#include "stop_signals.h"

#define MAX_ROUTES 32
#define PACKETS_PER_WAKEUP 64
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* SIGINT/SIGTERM through a signalfd (common/stop_signals.h); a closed stdout must not kill us
 * before clean-up either. */
static int ignore_sigpipe_and_take_stop_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	return sq_stop_signals_fd();
}

struct side {
	const char *netns;
	struct npa_prefix address;
	bool has_address, has_peer;
	struct npa_prefix peer;
	struct npa_route_spec routes[MAX_ROUTES];
	size_t n_routes;
	int tun_fd;
	struct npa_netconf *netconf;
	uint64_t packets, bytes, write_errors;   /* copied from this side to the other */
};

struct relay {
	struct side side[2];
	char dev[IFNAMSIZ];
	uint32_t mtu;
	char err[512];
};

static const char usage[] =
	"usage: squall-naive-relay --netns-a NS --address-a CIDR [--peer-a ADDR]\n"
	"                          [--route-a CIDR [via GW]]...\n"
	"                          --netns-b NS --address-b CIDR [--peer-b ADDR]\n"
	"                          [--route-b CIDR [via GW]]... [--dev NAME] [--mtu N]\n"
	"Creates TUN device NAME (default wl0) in both namespaces, configures them like\n"
	"squall-npa and copies packets between them directly (the benchmark's reference).\n";

static int usage_error(const char *flag, const char *detail)
{
	fprintf(stderr, "squall-naive-relay: %s: %s\n", flag, detail);
	return -1;
}

/* Parses one "--name-a"/"--name-b" flag for side a or b; returns the side's index. */
static int side_of(const char *flag, const char *name)
{
	size_t n = strlen(name);
	if (strlen(flag) != n + 2 || strncmp(flag, name, n) != 0 || flag[n] != '-')
		return -1;
	return flag[n + 1] == 'a' ? 0 : flag[n + 1] == 'b' ? 1 : -1;
}

static int parse_route(struct side *s, const char *flag, int argc, char **argv, int *i)
{
	char detail[256];
	if (s->n_routes == MAX_ROUTES)
		return usage_error(flag, "too many routes (at most 32)");
	struct npa_route_spec *r = &s->routes[s->n_routes];
	if (npa_route_parse(argv[*i], r, detail, sizeof(detail)) != 0)
		return usage_error(flag, detail);
	if (!r->has_gateway && *i + 2 < argc && strcmp(argv[*i + 1], "via") == 0) {
		if (npa_route_gateway_parse(argv[*i + 2], r, detail, sizeof(detail)) != 0)
			return usage_error(flag, detail);
		*i += 2;
	}
	s->n_routes++;
	return 0;
}

static int parse_side_flag(struct relay *r, const char *flag, int argc, char **argv, int *i)
{
	char detail[256];
	int k;
	if ((k = side_of(flag, "--netns")) >= 0) {
		r->side[k].netns = argv[*i];
		return 0;
	}
	if ((k = side_of(flag, "--address")) >= 0) {
		r->side[k].has_address = true;
		if (npa_prefix_parse(argv[*i], true, &r->side[k].address, detail, sizeof(detail)))
			return usage_error(flag, detail);
		return 0;
	}
	if ((k = side_of(flag, "--peer")) >= 0) {
		r->side[k].has_peer = true;
		if (npa_prefix_parse(argv[*i], true, &r->side[k].peer, detail, sizeof(detail)))
			return usage_error(flag, detail);
		return 0;
	}
	if ((k = side_of(flag, "--route")) >= 0)
		return parse_route(&r->side[k], flag, argc, argv, i);
	return usage_error(flag, "unknown option (see --help)");
}

static int parse_flag(struct relay *r, const char *flag, int argc, char **argv, int *i)
{
	char detail[256];
	uint64_t mtu;
	if (strcmp(flag, "--dev") == 0) {
		if (argv[*i][0] == '\0' || strlen(argv[*i]) >= IFNAMSIZ)
			return usage_error(flag, "expected an interface name of 1 to 15 characters");
		strcpy(r->dev, argv[*i]);
		return 0;
	}
	if (strcmp(flag, "--mtu") == 0) {
		if (npa_parse_uint(argv[*i], 68, 65535, &mtu, detail, sizeof(detail)) != 0)
			return usage_error(flag, detail);
		r->mtu = (uint32_t)mtu;
		return 0;
	}
	return parse_side_flag(r, flag, argc, argv, i);
}

static int parse_args(struct relay *r, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *flag = argv[i];
		if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0) {
			fputs(usage, stdout);
			exit(0);
		}
		if (strncmp(flag, "--", 2) != 0)
			return usage_error(flag, "unexpected argument (options start with --)");
		if (++i >= argc)
			return usage_error(flag, "needs a value");
		if (parse_flag(r, flag, argc, argv, &i) != 0)
			return -1;
	}
	for (int k = 0; k < 2; k++) {
		const char *name = k == 0 ? "--netns-a" : "--netns-b";
		if (r->side[k].netns == NULL)
			return usage_error(name, "missing (see --help)");
		if (!r->side[k].has_address)
			return usage_error(k == 0 ? "--address-a" : "--address-b", "missing (see --help)");
	}
	return 0;
}

static int enter_netns(const char *name, char *err, size_t errlen)
{
	char path[300];
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		snprintf(err, errlen, "cannot enter network namespace %s (%s): %s", name, path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* In the side's namespace: the TUN and its netlink socket stay bound to it. */
static int bring_up_side(struct relay *r, struct side *s)
{
	if (enter_netns(s->netns, r->err, sizeof(r->err)) != 0)
		return -1;
	s->tun_fd = npa_tun_create(r->dev, r->err, sizeof(r->err));
	if (s->tun_fd < 0)
		return -1;
	struct npa_netconf_spec spec = {
		.dev = r->dev, .mtu = r->mtu, .address = &s->address,
		.peer = s->has_peer ? &s->peer : NULL, .routes = s->routes, .n_routes = s->n_routes,
	};
	s->netconf = npa_netconf_apply(&spec, r->err, sizeof(r->err));
	if (s->netconf == NULL) {
		size_t n = strlen(r->err);
		snprintf(r->err + n, sizeof(r->err) - n, " (in namespace %s)", s->netns);
		return -1;
	}
	return 0;
}

/* Copies what is waiting on from's TUN to to's TUN. */
static void copy_packets(struct side *from, struct side *to, uint8_t *buf, size_t buflen)
{
	for (int i = 0; i < PACKETS_PER_WAKEUP; i++) {
		ssize_t n = read(from->tun_fd, buf, buflen);
		if (n < 0)
			return;  /* EAGAIN: drained; level-triggered epoll calls again otherwise */
		if (write(to->tun_fd, buf, (size_t)n) == n) {
			from->packets++;
			from->bytes += (uint64_t)n;
		} else {
			from->write_errors++;
		}
	}
}

static int relay_loop(struct relay *r, int signal_fd)
{
	static uint8_t buf[65536];
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event evs[3] = {
		{ .events = EPOLLIN, .data.u32 = 0 }, { .events = EPOLLIN, .data.u32 = 1 },
		{ .events = EPOLLIN, .data.u32 = 2 },
	};
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, r->side[0].tun_fd, &evs[0])
	    || epoll_ctl(epfd, EPOLL_CTL_ADD, r->side[1].tun_fd, &evs[1])
	    || epoll_ctl(epfd, EPOLL_CTL_ADD, signal_fd, &evs[2])) {
		snprintf(r->err, sizeof(r->err), "cannot set up epoll: %s", strerror(errno));
		if (epfd >= 0)
			close(epfd);
		return -1;
	}
	for (;;) {
		struct epoll_event ev[3];
		int n = epoll_wait(epfd, ev, 3, -1);
		for (int i = 0; i < n; i++) {
			uint32_t k = ev[i].data.u32;
			if (k == 2) {
				close(epfd);
				return 0;
			}
			copy_packets(&r->side[k], &r->side[1 - k], buf, sizeof(buf));
		}
	}
}

static void print_counters(const struct relay *r)
{
	for (int k = 0; k < 2; k++) {
		const struct side *s = &r->side[k];
		fprintf(stderr, "squall-naive-relay: counters %s->%s packets=%" PRIu64 " bytes=%" PRIu64
			" write_errors=%" PRIu64 "\n", s->netns, r->side[1 - k].netns, s->packets,
			s->bytes, s->write_errors);
	}
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, "squall-naive-relay"))
		return 0;
	struct relay r = { .mtu = 1500, .side = { { .tun_fd = -1 }, { .tun_fd = -1 } } };
	strcpy(r.dev, "wl0");
	if (parse_args(&r, argc, argv) != 0)
		return EXIT_USAGE;
	int signal_fd = ignore_sigpipe_and_take_stop_signals();
	int rc = signal_fd < 0 ? -1 : 0;
	if (signal_fd < 0)
		snprintf(r.err, sizeof(r.err), "cannot set up signal handling: %s", strerror(errno));
	for (int k = 0; rc == 0 && k < 2; k++)
		rc = bring_up_side(&r, &r.side[k]);
	if (rc == 0) {
		printf("ready %s mtu %u\n", r.dev, r.mtu);
		fflush(stdout);
		rc = relay_loop(&r, signal_fd);
	}
	if (rc != 0)
		fprintf(stderr, "squall-naive-relay: %s\n", r.err);
	for (int k = 0; k < 2; k++) {
		npa_netconf_remove(r.side[k].netconf);
		if (r.side[k].tun_fd >= 0)
			close(r.side[k].tun_fd);
	}
	if (signal_fd >= 0)
		close(signal_fd);
	print_counters(&r);
	return rc == 0 ? 0 : EXIT_RUNTIME;
}
