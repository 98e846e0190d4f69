/* squall-emulator: the link emulator (the SP of emulator/PROTOCOL.md). Usage: see usage() and emulator/README.md. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_check.h"
#include "config_file.h"
#include "dry_run.h"
#include "event_loop.h"
#include "timeline.h"
#include "token_file.h"
#include "value_parse.h"
#include "squall_version.h"

static void usage(FILE *out)
{
	fputs("usage: squall-emulator [options] CONFIG\n"
	      "\n"
	      "The squall link emulator (Simulation Process). Reads CONFIG (format: emulator/CONFIG.md;\n"
	      "- for standard input), binds its UDP socket, registers the two NPAs, starts the run on\n"
	      "START (or when both NPAs registered with autostart = peers), and writes the event log\n"
	      "(emulator/LOG_FORMAT.md). Protocol: emulator/PROTOCOL.md.\n"
	      "\n"
	      "options (override the file's key of the same name):\n"
	      "  --seed N                 scenario seed (u64)\n"
	      "  --replication N          replication number (u32)\n"
	      "  --log PATH               event log file\n"
	      "  --listen ADDR:PORT       UDP address to bind, e.g. 127.0.0.1:5300 or [::1]:5300 (port 0: any)\n"
	      "  --token HEX16            run token, 16 hex digits (visible to every local user in\n"
	      "                           /proc/PID/cmdline: prefer --token-file)\n"
	      "  --control PATH           create the run control's Unix socket at PATH (mode 0600):\n"
	      "                           START and STOP come only through it (PROTOCOL.md)\n"
	      "  --token-file PATH        read the run token from PATH (16 hex digits; a file must be\n"
	      "                           0600); the caller may remove PATH once the emulator listens\n"
	      "other options:\n"
	      "  --check                  validate CONFIG (with the options above) as start-up would and\n"
	      "                           exit: 0 and nothing printed if valid, else 2 and one line\n"
	      "                           \"squall-emulator: FILE[:LINE]: KEY: reason\"; creates nothing,\n"
	      "                           opens no socket\n"
	      "  --print-timeline DURATION  print the channel state timeline (\"start_us state\" lines)\n"
	      "                           for the first DURATION (e.g. 120s) and exit; opens no socket\n"
	      "  --print-packets COUNT    feed COUNT packets of the MTU per direction, one every 1 ms,\n"
	      "                           into the link model in virtual time, print its events\n"
	      "                           (\"t_us dir event pkt_id ip_len attempt note\") and exit\n"
	      "  --print-packets-from FILE  the same for the packets of FILE, one a line:\n"
	      "                           \"t_us dir ip_len [ecn]\" (times not decreasing)\n"
	      "  --help                   this text\n"
	      "\n"
	      "exit codes: 0 normal end (STOP, SIGINT, SIGTERM, SIGHUP), 1 usage or configuration error,\n"
	      "            2 runtime error (with --check: the configuration is invalid),\n"
	      "            3 an NPA was lost during the run\n",
	      out);
}

struct cli {
	const char *config_path;
	const char *override_key[8];
	const char *override_value[8];
	int overrides;
	const char *timeline;
	const char *packets;
	const char *packets_from;
	const char *token_file;
	bool check;
};

/* --check: the configuration is invalid (a usage error stays 1). */
#define EXIT_CHECK_INVALID 2

static bool parse_cli(int argc, char **argv, struct cli *cli)
{
	static const struct option options[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "replication", required_argument, NULL, 'r' },
		{ "log", required_argument, NULL, 'l' },
		{ "listen", required_argument, NULL, 'L' },
		{ "token", required_argument, NULL, 't' },
		{ "control", required_argument, NULL, 'C' },
		{ "token-file", required_argument, NULL, 'F' },
		{ "print-timeline", required_argument, NULL, 'T' },
		{ "print-packets", required_argument, NULL, 'P' },
		{ "print-packets-from", required_argument, NULL, 'R' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(cli, 0, sizeof(*cli));
	int c;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'T') {
			cli->timeline = optarg;
			continue;
		}
		if (c == 'P') {
			cli->packets = optarg;
			continue;
		}
		if (c == 'R') {
			cli->packets_from = optarg;
			continue;
		}
		if (c == 'c') {
			cli->check = true;
			continue;
		}
		if (c == 'F') {
			cli->token_file = optarg;
			continue;
		}
		if (c == '?' || cli->overrides == 8)
			return false;
		for (int i = 0; options[i].name; i++)
			if (options[i].val == c)
				cli->override_key[cli->overrides] = options[i].name;
		cli->override_value[cli->overrides++] = optarg;
	}
	const char *modes[4];
	int n_modes = 0;
	if (cli->check)
		modes[n_modes++] = "--check";
	if (cli->timeline)
		modes[n_modes++] = "--print-timeline";
	if (cli->packets)
		modes[n_modes++] = "--print-packets";
	if (cli->packets_from)
		modes[n_modes++] = "--print-packets-from";
	if (n_modes > 1) {
		fprintf(stderr, "squall-emulator: %s and %s exclude each other\n", modes[0], modes[1]);
		return false;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "squall-emulator: expected exactly one CONFIG file argument\n");
		return false;
	}
	cli->config_path = argv[optind];
	return true;
}

static bool apply_overrides(struct sq_emu_config *cfg, const struct cli *cli, char *err, size_t errlen)
{
	for (int i = 0; i < cli->overrides; i++) {
		char origin[32];
		snprintf(origin, sizeof(origin), "--%s", cli->override_key[i]);
		if (!sq_config_override(cfg, cli->override_key[i], cli->override_value[i], origin, err, errlen))
			return false;
	}
	if (cli->token_file) {
		char why[400];
		if (!sq_token_file_read(cli->token_file, &cfg->token, why, sizeof(why))) {
			snprintf(err, errlen, "--token-file: %s", why);
			return false;
		}
		cfg->token_set = true;
	}
	return true;
}

static int print_timeline(const struct sq_emu_config *cfg, const char *text)
{
	sq_time_us duration;
	char err[512];
	if (!sq_parse_duration(text, &duration)) {
		fprintf(stderr, "squall-emulator: --print-timeline: expected a duration like 120s, got '%s'\n", text);
		return 1;
	}
	if (!sq_print_timeline(cfg, duration, stdout, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: %s: %s\n", cfg->source, err);
		return 1;
	}
	return 0;
}

static int print_packets(const struct sq_emu_config *cfg, const char *text)
{
	uint64_t count;
	char err[1024];
	if (!sq_parse_count(text, 10000000, &count)) {
		fprintf(stderr, "squall-emulator: --print-packets: expected a count up to 10000000, got '%s'\n", text);
		return 1;
	}
	if (!sq_config_check(cfg, err, sizeof(err)) || !sq_print_packets(cfg, count, stdout, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: %s\n", err);
		return 1;
	}
	return 0;
}

static int print_packets_from(const struct sq_emu_config *cfg, const char *path)
{
	char err[1024];
	FILE *in = fopen(path, "r");
	if (!in) {
		fprintf(stderr, "squall-emulator: --print-packets-from: %s: %s\n", path, strerror(errno));
		return 1;
	}
	bool ok = sq_config_check(cfg, err, sizeof(err)) &&
		  sq_print_packets_from(cfg, in, path, stdout, err, sizeof(err));
	fclose(in);
	if (!ok)
		fprintf(stderr, "squall-emulator: %s\n", err);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, "squall-emulator"))
		return 0;
	struct cli cli;
	if (!parse_cli(argc, argv, &cli)) {
		usage(stderr);
		return 1;
	}
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		fprintf(stderr, "squall-emulator: out of memory\n");
		return 2;
	}
	sq_config_init(cfg);
	char err[1024];
	int code;
	bool loaded = sq_config_load(cfg, cli.config_path, err, sizeof(err)) &&
		      apply_overrides(cfg, &cli, err, sizeof(err));
	if (loaded && cli.timeline) {
		code = print_timeline(cfg, cli.timeline);
	} else if (loaded && cli.packets) {
		code = print_packets(cfg, cli.packets);
	} else if (loaded && cli.packets_from) {
		code = print_packets_from(cfg, cli.packets_from);
	} else if (!loaded || !sq_config_check(cfg, err, sizeof(err))) {
		fprintf(stderr, "squall-emulator: %s\n", err);
		code = cli.check ? EXIT_CHECK_INVALID : SQ_EXIT_USAGE;
	} else {
		code = cli.check ? SQ_EXIT_OK : sq_event_loop_run(cfg);
	}
	sq_config_release(cfg);
	free(cfg);
	return code;
}
