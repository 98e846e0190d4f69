#include "options.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "token_file.h"
#include "wire.h"

const char npa_usage[] =
	"usage: squall-npa --role router|mobile --emulator HOST:PORT --token-file PATH\n"
	"                  --address CIDR [--peer ADDR] [--dev NAME] [--mtu N]\n"
	"                  [--route CIDR [via GW]]... [--keepalive DUR]\n"
	"                  [--peer-timeout DUR] [--connect-timeout DUR] [--no-gso] [--host K]\n"
	"\n"
	"Network Protocol Adapter of the squall link emulator: creates a TUN device,\n"
	"registers with squall-emulator and relays IP packets between the two.\n"
	"\n"
	"  --role router|mobile   router: the emulation host's wireless interface (packets\n"
	"                         go down the link); mobile: the mobile host's (they go up)\n"
	"  --emulator HOST:PORT   the emulator's UDP address ([ADDR]:PORT for IPv6)\n"
	"  --host K               mobile: which host of the emulator's cell this is (1-16,\n"
	"                         default 1)\n"
	"  --token-file PATH      read the run token (16 hexadecimal digits) from PATH; a\n"
	"                         file must be 0600 (the caller may remove it once ready)\n"
	"  --token HEX16          the run token on the command line (every local user can\n"
	"                         read it in /proc/PID/cmdline: prefer --token-file)\n"
	"  --dev NAME             TUN device name (default wl0)\n"
	"  --address CIDR         the device's address, e.g. 198.18.2.1/24\n"
	"  --peer ADDR            point-to-point peer address; the prefix length of\n"
	"                         --address (or ADDR/N) then applies to the peer\n"
	"  --mtu N                device MTU (default: the link MTU sent by the emulator)\n"
	"  --route CIDR [via GW]  route CIDR through the device (repeatable)\n"
	"  --keepalive DUR        keepalive interval (default 1s)\n"
	"  --peer-timeout DUR     give up when the emulator is silent this long (default 5s)\n"
	"  --connect-timeout DUR  give up registering after this long (default 5s)\n"
	"  --no-gso               one send per packet towards the emulator (default: runs\n"
	"                         of equal-size packets go out as one UDP GSO send)\n"
	"  -h, --help             this text\n"
	"\n"
	"Durations take a unit: us, ms or s (200ms, 1.5s). Prints 'ready DEV mtu N' on\n"
	"stdout when the device is configured and the emulator has answered; SIGINT or\n"
	"SIGTERM remove the device and exit 0. Exit codes: 0 stopped by signal or by the\n"
	"emulator's BYE, 1 runtime failure, 2 bad arguments. Needs CAP_NET_ADMIN.\n";

struct parse_state {
	int argc;
	char **argv;
	int i;
	char *err;
	size_t errlen;
	bool seen_role, seen_emulator, seen_token, seen_address;
};

static void set_defaults(struct npa_options *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->dev, "wl0");
	o->keepalive_us = 1000000;
	o->peer_timeout_us = 5000000;
	o->connect_timeout_us = 5000000;
}

/* Returns the value of flag: the text after '=' or the next argument. */
static const char *take_value(struct parse_state *s, const char *flag, const char *inline_value)
{
	if (inline_value != NULL)
		return inline_value;
	if (s->i + 1 >= s->argc) {
		snprintf(s->err, s->errlen, "%s needs a value", flag);
		return NULL;
	}
	return s->argv[++s->i];
}

static int flag_error(struct parse_state *s, const char *flag, const char *detail)
{
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", detail);
	snprintf(s->err, s->errlen, "%s: %s", flag, copy);
	return -1;
}

static int parse_role(struct parse_state *s, const char *v, struct npa_options *o)
{
	if (strcmp(v, "router") == 0)
		o->role = SQ_ROLE_ROUTER;
	else if (strcmp(v, "mobile") == 0)
		o->role = SQ_ROLE_MOBILE;
	else
		return flag_error(s, "--role", "expected 'router' or 'mobile'");
	s->seen_role = true;
	return 0;
}

static int parse_dev(struct parse_state *s, const char *v, struct npa_options *o)
{
	if (v[0] == '\0' || strlen(v) >= IFNAMSIZ || strpbrk(v, "/: \t") != NULL)
		return flag_error(s, "--dev", "expected an interface name of 1 to 15 characters "
				  "without '/', ':' or spaces");
	strcpy(o->dev, v);
	return 0;
}

static int parse_route(struct parse_state *s, const char *v, struct npa_options *o)
{
	char detail[224];
	if (o->n_routes == NPA_MAX_ROUTES)
		return flag_error(s, "--route", "too many routes (at most 32)");
	struct npa_route_spec *r = &o->routes[o->n_routes];
	if (npa_route_parse(v, r, detail, sizeof(detail)) != 0)
		return flag_error(s, "--route", detail);
	/* "--route CIDR via GW" as three arguments. */
	if (!r->has_gateway && s->i + 2 < s->argc && strcmp(s->argv[s->i + 1], "via") == 0) {
		if (npa_route_gateway_parse(s->argv[s->i + 2], r, detail, sizeof(detail)) != 0)
			return flag_error(s, "--route ... via", detail);
		s->i += 2;
	}
	o->n_routes++;
	return 0;
}

static int parse_duration_flag(struct parse_state *s, const char *flag, const char *v,
			       int64_t *out)
{
	char detail[224];
	if (npa_parse_duration(v, out, detail, sizeof(detail)) != 0)
		return flag_error(s, flag, detail);
	return 0;
}

static int parse_value_flag(struct parse_state *s, const char *flag, const char *v,
			    struct npa_options *o)
{
	char detail[224];
	int rc = 0;
	uint64_t n;
	if (strcmp(flag, "--role") == 0)
		return parse_role(s, v, o);
	if (strcmp(flag, "--dev") == 0)
		return parse_dev(s, v, o);
	if (strcmp(flag, "--route") == 0)
		return parse_route(s, v, o);
	if (strcmp(flag, "--keepalive") == 0)
		return parse_duration_flag(s, flag, v, &o->keepalive_us);
	if (strcmp(flag, "--peer-timeout") == 0)
		return parse_duration_flag(s, flag, v, &o->peer_timeout_us);
	if (strcmp(flag, "--connect-timeout") == 0)
		return parse_duration_flag(s, flag, v, &o->connect_timeout_us);
	if (strcmp(flag, "--emulator") == 0) {
		rc = npa_parse_endpoint(v, &o->emulator, detail, sizeof(detail));
		s->seen_emulator = rc == 0;
	} else if (strcmp(flag, "--token") == 0) {
		rc = npa_parse_token(v, &o->token, detail, sizeof(detail));
		s->seen_token = rc == 0;
	} else if (strcmp(flag, "--token-file") == 0) {
		rc = sq_token_file_read(v, &o->token, detail, sizeof(detail)) ? 0 : -1;
		s->seen_token = rc == 0;
	} else if (strcmp(flag, "--address") == 0) {
		rc = npa_prefix_parse(v, true, &o->address, detail, sizeof(detail));
		s->seen_address = rc == 0;
	} else if (strcmp(flag, "--peer") == 0) {
		rc = npa_prefix_parse(v, true, &o->peer, detail, sizeof(detail));
		o->has_peer = rc == 0;
	} else if (strcmp(flag, "--host") == 0) {
		rc = npa_parse_uint(v, 1, 16, &n, detail, sizeof(detail));
		o->host = (uint16_t)n;
	} else if (strcmp(flag, "--mtu") == 0) {
		/* 68: the IPv4 minimum; 65535: the largest IP packet. */
		rc = npa_parse_uint(v, 68, 65535, &n, detail, sizeof(detail));
		o->mtu = (uint32_t)n;
	} else {
		snprintf(s->err, s->errlen, "unknown option '%s' (see --help)", flag);
		return -1;
	}
	return rc == 0 ? 0 : flag_error(s, flag, detail);
}

static int parse_argument(struct parse_state *s, struct npa_options *o)
{
	const char *arg = s->argv[s->i];
	if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
		o->help = true;
		return 0;
	}
	if (strcmp(arg, "--no-gso") == 0) {
		o->no_gso = true;
		return 0;
	}
	if (strncmp(arg, "--", 2) != 0) {
		snprintf(s->err, s->errlen, "unexpected argument '%s' (options start with --)", arg);
		return -1;
	}
	char flag[64];
	const char *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	snprintf(flag, sizeof(flag), "%.*s", (int)n, arg);
	const char *v = take_value(s, flag, eq != NULL ? eq + 1 : NULL);
	return v == NULL ? -1 : parse_value_flag(s, flag, v, o);
}

static int check_consistency(struct parse_state *s, struct npa_options *o)
{
	const char *missing = !s->seen_role ? "--role router|mobile"
		: !s->seen_emulator ? "--emulator HOST:PORT"
		: !s->seen_token ? "--token-file PATH (or --token HEX16)"
		: !s->seen_address ? "--address CIDR" : NULL;
	if (missing != NULL) {
		snprintf(s->err, s->errlen, "missing %s (see --help)", missing);
		return -1;
	}
	if (o->has_peer && o->peer.family != o->address.family)
		return flag_error(s, "--peer", "must be of the same address family as --address");
	if (o->has_peer && o->peer.family != AF_INET)
		return flag_error(s, "--peer", "point-to-point peers are supported for IPv4 only "
				  "(a libnl-route limitation); give IPv6 an on-link prefix instead");
	if (o->host != 0 && o->role != SQ_ROLE_MOBILE)
		return flag_error(s, "--host", "only a mobile NPA is a host of the emulator's cell");
	if (o->peer_timeout_us <= o->keepalive_us)
		return flag_error(s, "--peer-timeout", "must be longer than --keepalive, or a "
				  "healthy emulator would be declared lost");
	return 0;
}

int npa_options_parse(int argc, char **argv, struct npa_options *o, char *err, size_t errlen)
{
	struct parse_state s = { .argc = argc, .argv = argv, .err = err, .errlen = errlen };
	set_defaults(o);
	for (s.i = 1; s.i < argc; s.i++) {
		if (parse_argument(&s, o) != 0)
			return -1;
		if (o->help)
			return 0;
	}
	return check_consistency(&s, o);
}
