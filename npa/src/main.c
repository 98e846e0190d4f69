/* squall-npa: the Network Protocol Adapter at one end of the emulated link.
 * Creates and configures the TUN device, registers with the emulator (SP) and
 * relays IP packets between the two until a signal, the SP's BYE, or the SP's
 * silence ends it; then removes what it created. See npa/README.md. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli_values.h"
#include "netconf.h"
#include "options.h"
#include "registration.h"
#include "relay.h"
#include "sp_link.h"
#include "tun.h"
#include "squall_version.h"
#include "stop_signals.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* SIGINT/SIGTERM through a signalfd (common/stop_signals.h); a closed stdout must not kill us
 * before clean-up either. */
static int ignore_sigpipe_and_take_stop_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	return sq_stop_signals_fd();
}

struct npa {
	struct npa_options opt;
	struct npa_counters counters;
	struct npa_sp_link link;
	int signal_fd;
	int tun_fd;
	struct npa_netconf *netconf;
	uint32_t mtu;
	char err[512];
};

/* SIGINT/SIGTERM are taken through a signalfd so that they never interrupt
 * the set-up half-way: every exit path removes what was created. */
static int report(struct npa *n, int code)
{
	fprintf(stderr, "squall-npa: %s\n", n->err);
	return code;
}

static int registration_failed(struct npa *n, enum npa_registration r)
{
	char timeout[32];
	switch (r) {
	case NPA_REGISTRATION_TIMEOUT:
		npa_format_duration(n->opt.connect_timeout_us, timeout, sizeof(timeout));
		snprintf(n->err, sizeof(n->err), "emulator at %s did not answer within %s: is "
			 "squall-emulator running, and is the token right?", n->opt.emulator.text,
			 timeout);
		return report(n, EXIT_RUNTIME);
	case NPA_REGISTRATION_SIGNAL:
		npa_sp_link_send_control(&n->link, SQ_MSG_BYE);
		return 0;
	default:
		return report(n, EXIT_RUNTIME);
	}
}

static int choose_mtu(struct npa *n, uint16_t link_mtu)
{
	n->mtu = n->opt.mtu != 0 ? n->opt.mtu : link_mtu;
	if (n->opt.mtu != 0 && n->opt.mtu != link_mtu)
		fprintf(stderr, "squall-npa: note: --mtu %u differs from the link MTU %u the "
			"emulator announced; packets above %u are dropped by the link\n",
			n->opt.mtu, link_mtu, link_mtu);
	return 0;
}

static int configure(struct npa *n)
{
	struct npa_netconf_spec spec = {
		.dev = n->opt.dev, .mtu = n->mtu, .address = &n->opt.address,
		.peer = n->opt.has_peer ? &n->opt.peer : NULL,
		.routes = n->opt.routes, .n_routes = n->opt.n_routes,
	};
	n->netconf = npa_netconf_apply(&spec, n->err, sizeof(n->err));
	return n->netconf == NULL ? -1 : 0;
}

static int relay(struct npa *n)
{
	struct npa_relay_config cfg = {
		.tun_fd = n->tun_fd, .link = &n->link, .signal_fd = n->signal_fd,
		.keepalive_us = n->opt.keepalive_us, .peer_timeout_us = n->opt.peer_timeout_us,
		.gso = !n->opt.no_gso,
	};
	char timeout[32];
	switch (npa_relay_run(&cfg, n->err, sizeof(n->err))) {
	case NPA_RELAY_SIGNAL:
		npa_sp_link_send_control(&n->link, SQ_MSG_BYE);
		return 0;
	case NPA_RELAY_SP_BYE:
		fprintf(stderr, "squall-npa: the emulator at %s said BYE: leaving\n",
			n->opt.emulator.text);
		return 0;
	case NPA_RELAY_PEER_LOST:
		npa_format_duration(n->opt.peer_timeout_us, timeout, sizeof(timeout));
		snprintf(n->err, sizeof(n->err), "lost the emulator at %s: nothing received for %s "
			 "(--peer-timeout); is squall-emulator still running?", n->opt.emulator.text,
			 timeout);
		return report(n, EXIT_RUNTIME);
	default:
		return report(n, EXIT_RUNTIME);
	}
}

/* Runs the NPA with every resource already owned by n; returns the exit code. */
static int run(struct npa *n)
{
	n->tun_fd = npa_tun_create(n->opt.dev, n->err, sizeof(n->err));
	if (n->tun_fd < 0)
		return report(n, EXIT_RUNTIME);
	if (npa_sp_link_open(&n->link, &n->opt.emulator, n->opt.token, n->opt.role, &n->counters,
			     n->err, sizeof(n->err)) != 0)
		return report(n, EXIT_RUNTIME);
	n->link.host = n->opt.host;
	uint16_t link_mtu = 0;
	enum npa_registration r = npa_register(&n->link, n->signal_fd, n->opt.connect_timeout_us,
					       &link_mtu, n->err, sizeof(n->err));
	if (r != NPA_REGISTERED)
		return registration_failed(n, r);
	choose_mtu(n, link_mtu);
	if (configure(n) != 0) {
		npa_sp_link_send_control(&n->link, SQ_MSG_BYE);
		return report(n, EXIT_RUNTIME);
	}
	printf("ready %s mtu %u\n", n->opt.dev, n->mtu);
	fflush(stdout);
	return relay(n);
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, "squall-npa"))
		return 0;
	struct npa n = { .signal_fd = -1, .tun_fd = -1, .link = { .fd = -1 } };
	if (npa_options_parse(argc, argv, &n.opt, n.err, sizeof(n.err)) != 0) {
		fprintf(stderr, "squall-npa: %s\n", n.err);
		return EXIT_USAGE;
	}
	if (n.opt.help) {
		fputs(npa_usage, stdout);
		return 0;
	}
	n.signal_fd = ignore_sigpipe_and_take_stop_signals();
	if (n.signal_fd < 0) {
		perror("squall-npa: cannot set up signal handling");
		return EXIT_RUNTIME;
	}
	int code = run(&n);
	npa_netconf_remove(n.netconf);
	if (n.tun_fd >= 0)
		close(n.tun_fd);  /* not persistent: this removes the device */
	npa_sp_link_close(&n.link);
	close(n.signal_fd);
	npa_counters_print(stderr, "squall-npa: counters", &n.counters);
	return code;
}
