/* Command line of squall-queue-monitor. */
#ifndef SQUALL_MONITOR_OPTIONS_H
#define SQUALL_MONITOR_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MONITOR_DEFAULT_INTERVAL_US 10000

struct monitor_options {
	const char *device;     /* --dev, required */
	const char *output;     /* --output, required (stdout is for the ready line) */
	int64_t interval_us;    /* --interval, default 10 ms */
	int64_t t0_realtime_us; /* --t0-realtime-us, default 0: absolute CLOCK_REALTIME */
	int64_t duration_us;    /* --duration, 0 = until SIGINT/SIGTERM */
};

/* Parses "10ms", "1ms", "500us", "2s" (whole numbers only) into microseconds. */
int parse_duration_us(const char *text, int64_t *out);

enum { MONITOR_ASKED_HELP = 1, MONITOR_ASKED_VERSION = 2 };

/* 0 on success; -1 with a message in err naming the option and what was expected.
 * MONITOR_ASKED_HELP / MONITOR_ASKED_VERSION when --help / --version was asked for (the
 * caller prints the usage / the version). */
int monitor_options_parse(int argc, char **argv, struct monitor_options *opts, char *err, size_t err_len);

/* The usage text: on stdout for --help, on stderr after a mistake. */
void monitor_print_usage(FILE *out, const char *prog);

#endif
