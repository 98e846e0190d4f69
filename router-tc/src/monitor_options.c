#include "monitor_options.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value_parse.h"

/* The monitor's documented form is stricter than the common one: a whole number
 * (no decimals) with us, ms, s or min. */
int parse_duration_us(const char *text, int64_t *out)
{
	static const struct sq_unit units[] = {
		{ "min", 60000000 }, { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { NULL, 0 },
	};
	uint64_t us;
	if (text == NULL || strchr(text, '.') != NULL || !sq_parse_with_units(text, units, &us)
	    || us > INT64_MAX)
		return -1;
	*out = (int64_t)us;
	return 0;
}

static int parse_realtime_us(const char *text, int64_t *out)
{
	uint64_t us;
	if (!sq_parse_count(text, INT64_MAX, &us))
		return -1;
	*out = (int64_t)us;
	return 0;
}

void monitor_print_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s --dev DEVICE --output FILE [--interval 10ms] [--t0-realtime-us N] [--duration 60s]\n"
		"       %s --help | --version\n"
		"Samples backlog, drops, overlimits, requeues and ECN marks of every qdisc and class on\n"
		"DEVICE (in the current network namespace) into a TSV file; see router-tc/README.md.\n"
		"Prints \"ready\" on stdout once sampling; stops on SIGINT/SIGTERM or after --duration.\n",
		prog, prog);
}

enum { OPT_DEV = 1, OPT_OUTPUT, OPT_INTERVAL, OPT_T0, OPT_DURATION, OPT_HELP, OPT_VERSION };

/* A whole time > 0 into *out (0), else "OPTION "ARG": expected a positive whole time such as
 * EXAMPLES" in err (-1). */
static int positive_duration(const char *arg, int64_t *out, const char *option, const char *examples,
			     char *err, size_t err_len)
{
	if (parse_duration_us(arg, out) == 0 && *out > 0)
		return 0;
	snprintf(err, err_len, "%s \"%s\": expected a positive whole time such as %s", option, arg, examples);
	return -1;
}

static int apply_option(int code, const char *arg, struct monitor_options *opts, char *err, size_t err_len)
{
	switch (code) {
	case OPT_DEV:
		opts->device = arg;
		return 0;
	case OPT_OUTPUT:
		opts->output = arg;
		return 0;
	case OPT_INTERVAL:
		return positive_duration(arg, &opts->interval_us, "--interval", "10ms, 1ms or 500us", err, err_len);
	case OPT_T0:
		if (parse_realtime_us(arg, &opts->t0_realtime_us) != 0) {
			snprintf(err, err_len, "--t0-realtime-us \"%s\": expected CLOCK_REALTIME microseconds since the epoch", arg);
			return -1;
		}
		return 0;
	case OPT_DURATION:
		return positive_duration(arg, &opts->duration_us, "--duration", "60s", err, err_len);
	default:
		snprintf(err, err_len, "unknown option; see --help");
		return -1;
	}
}

int monitor_options_parse(int argc, char **argv, struct monitor_options *opts, char *err, size_t err_len)
{
	static const struct option long_options[] = {
		{ "dev", required_argument, NULL, OPT_DEV },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "t0-realtime-us", required_argument, NULL, OPT_T0 },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	*opts = (struct monitor_options){ .interval_us = MONITOR_DEFAULT_INTERVAL_US };
	optind = 1;
	opterr = 0;
	int code;
	while ((code = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		if (code == OPT_HELP)
			return MONITOR_ASKED_HELP;
		if (code == OPT_VERSION)
			return MONITOR_ASKED_VERSION;
		if (code == '?' || code == ':') {
			snprintf(err, err_len, "option \"%s\" is unknown or lacks its value; see --help", argv[optind - 1]);
			return -1;
		}
		if (apply_option(code, optarg, opts, err, err_len) != 0)
			return -1;
	}
	if (optind < argc) {
		snprintf(err, err_len, "unexpected argument \"%s\"; every setting is an --option", argv[optind]);
		return -1;
	}
	if (opts->device == NULL || opts->output == NULL) {
		snprintf(err, err_len, "--dev DEVICE and --output FILE are both required");
		return -1;
	}
	return 0;
}
