/* squall-queue-monitor: samples the router's qdiscs and classes at a fixed interval.
 * See router-tc/README.md for the output format. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "monitor_options.h"
#include "sample_row.h"
#include "sample_timer.h"
#include "squall_version.h"
#include "tc_sampler.h"
#include "stop_signals.h"

#define FLUSH_EVERY_US 1000000

struct monitor {
	struct monitor_options opts;
	struct tc_sampler sampler;
	struct sample_timer timer;
	int signal_fd;
	FILE *out;
	uint64_t samples;
	uint64_t missed;
	int64_t since_flush_us;
};

static int take_sample(struct monitor *m)
{
	char err[256];
	int64_t now_us = realtime_us_since(m->opts.t0_realtime_us);
	if (tc_sampler_write_sample(&m->sampler, now_us, m->out, err, sizeof err) < 0) {
		fprintf(stderr, "squall-queue-monitor: %s\n", err);
		return -1;
	}
	m->samples++;
	m->since_flush_us += m->opts.interval_us;
	if (m->since_flush_us >= FLUSH_EVERY_US) {
		fflush(m->out);
		m->since_flush_us = 0;
	}
	return 0;
}

static bool duration_reached(const struct monitor *m)
{
	/* Sample k is taken at k * interval; the first at 0, the last at or before duration. */
	return m->opts.duration_us > 0 && (int64_t)(m->samples + m->missed) * m->opts.interval_us > m->opts.duration_us;
}

/* Returns 0 when stopped by a signal or the duration, -1 on failure. */
static int sample_until_stopped(struct monitor *m)
{
	while (!duration_reached(m)) {
		enum sample_wait w = sample_timer_wait(&m->timer, m->signal_fd, &m->missed, "squall-queue-monitor");
		if (w == SAMPLE_ERROR || w == SAMPLE_STOP)
			return w == SAMPLE_STOP ? 0 : -1;
		if (w == SAMPLE_DUE && take_sample(m) != 0)
			return -1;
	}
	return 0;
}

static int setup(struct monitor *m)
{
	char err[256];
	if (tc_sampler_open(&m->sampler, m->opts.device, err, sizeof err) != 0) {
		fprintf(stderr, "squall-queue-monitor: %s\n", err);
		return -1;
	}
	m->signal_fd = sq_stop_signals_fd();
	if (m->signal_fd < 0) {
		perror("squall-queue-monitor: blocking SIGINT/SIGTERM into a signalfd");
		return -1;
	}
	m->out = fopen(m->opts.output, "w");
	if (m->out == NULL) {
		fprintf(stderr, "squall-queue-monitor: opening output \"%s\" for writing: %s\n", m->opts.output,
			strerror(errno));
		return -1;
	}
	struct sample_header header = { m->opts.device, m->opts.interval_us, m->opts.t0_realtime_us };
	if (sample_header_write(m->out, &header) != 0 || take_sample(m) != 0)
		return -1;
	if (sample_timer_open(&m->timer, m->opts.interval_us) != 0) {
		perror("squall-queue-monitor: arming the sample timer (timerfd on CLOCK_MONOTONIC)");
		return -1;
	}
	return 0;
}

static int finish(struct monitor *m, int status)
{
	if (m->out) {
		if (status == 0 && sample_trailer_write(m->out, m->samples, m->missed) != 0)
			status = -1;
		if (fflush(m->out) != 0 || fclose(m->out) != 0) {
			fprintf(stderr, "squall-queue-monitor: writing \"%s\": %s\n", m->opts.output, strerror(errno));
			status = -1;
		}
	}
	sample_timer_close(&m->timer);
	if (m->signal_fd >= 0)
		close(m->signal_fd);
	tc_sampler_close(&m->sampler);
	return status == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	struct monitor m = { .signal_fd = -1, .timer = { .fd = -1 } };
	char err[256];
	int parsed = monitor_options_parse(argc, argv, &m.opts, err, sizeof err);
	if (parsed == MONITOR_ASKED_VERSION) {
		sq_print_version(stdout, "squall-queue-monitor");
		return 0;
	}
	if (parsed != 0) {
		if (parsed < 0)
			fprintf(stderr, "squall-queue-monitor: %s\n", err);
		monitor_print_usage(parsed < 0 ? stderr : stdout, "squall-queue-monitor");
		return parsed < 0 ? 2 : 0;
	}
	int status = setup(&m);
	if (status == 0) {
		/* The first sample is in the file: from here on the caller can rely on sampling. */
		printf("ready\n");
		fflush(stdout);
		status = sample_until_stopped(&m);
	}
	return finish(&m, status);
}
