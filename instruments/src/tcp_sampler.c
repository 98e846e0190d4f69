/* squall-tcp-sampler: every interval, the tcp_info of every TCP connection of its network
 * namespace (congestion window, slow-start threshold, smoothed RTT, RTO, retransmissions),
 * from the kernel's sock_diag dump as `ss -ti` takes it. See instruments/README.md for the
 * output format. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sample_timer.h"
#include "squall_version.h"
#include "tcp_diag.h"
#include "value_parse.h"
#include "stop_signals.h"

#define PROG "squall-tcp-sampler"
#define FLUSH_EVERY 20

struct sampler {
	const char *output;
	int64_t interval_us, t0_realtime_us;
	struct tcp_diag diag;
	struct sample_timer timer;
	int signal_fd;
	FILE *out;
	int64_t now_us;
	uint64_t samples, missed, rows;
};

static const char usage[] =
	"usage: " PROG " --output FILE [--interval 50ms] [--t0-realtime-us N]\n"
	"       " PROG " --help | --version\n"
	"Every interval, one line per TCP connection of this network namespace (every state but\n"
	"LISTEN) with its tcp_info: state, congestion state, cwnd, ssthresh, smoothed RTT and its\n"
	"variation, RTO, MSS, unacknowledged, retransmitted and lost segments, all retransmissions,\n"
	"delivered segments, bytes acknowledged and received. Times in us since --t0-realtime-us\n"
	"(CLOCK_REALTIME; default: the start). SIGINT/SIGTERM end it after a trailer line.\n";

static int parse_options(int argc, char **argv, struct sampler *s)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' }, { "interval", required_argument, NULL, 'i' },
		{ "t0-realtime-us", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct sq_unit units[] = { { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { NULL, 0 } };
	s->interval_us = 50000;
	s->t0_realtime_us = -1;
	uint64_t v;
	int c;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			exit(0);
		} else if (c == 'o') {
			s->output = optarg;
		} else if (c == 'i' && sq_parse_with_units(optarg, units, &v) && v >= 1000 && v <= 60000000) {
			s->interval_us = (int64_t)v;
		} else if (c == 't' && sq_parse_count(optarg, INT64_MAX, &v)) {
			s->t0_realtime_us = (int64_t)v;
		} else {
			if (c == 'i')
				fprintf(stderr, PROG ": --interval: expected 1ms to 60s like 50ms, got '%s'\n", optarg);
			else if (c == 't')
				fprintf(stderr, PROG ": --t0-realtime-us: expected microseconds since 1970, got '%s'\n", optarg);
			return -1;
		}
	}
	if (!s->output || optind != argc) {
		fputs(usage, stderr);
		return -1;
	}
	if (s->t0_realtime_us < 0)
		s->t0_realtime_us = realtime_us_since(0);
	return 0;
}

static void write_row(const struct tcp_diag_socket *k, void *ctx)
{
	struct sampler *s = ctx;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	inet_ntop(k->family, k->src, src, sizeof src);
	inet_ntop(k->family, k->dst, dst, sizeof dst);
	const struct tcp_info *i = &k->info;
	if (!k->has_info) {     /* TIME_WAIT, a request socket: no tcp_info, so no values (not zeros) */
		fprintf(s->out, "%" PRId64 "\t%s\t%u\t%s\t%u\t%u\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", s->now_us, src,
			k->sport, dst, k->dport, k->state);
		s->rows++;
		return;
	}
	fprintf(s->out, "%" PRId64 "\t%s\t%u\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\n",
		s->now_us, src, k->sport, dst, k->dport, k->state, i->tcpi_ca_state, i->tcpi_snd_cwnd,
		i->tcpi_snd_ssthresh, i->tcpi_rtt, i->tcpi_rttvar, i->tcpi_rto, i->tcpi_snd_mss, i->tcpi_unacked,
		i->tcpi_retrans, i->tcpi_lost, i->tcpi_total_retrans, i->tcpi_delivered,
		(uint64_t)i->tcpi_bytes_acked, (uint64_t)i->tcpi_bytes_received);
	s->rows++;
}

static int take_sample(struct sampler *s)
{
	char err[256];
	s->now_us = realtime_us_since(s->t0_realtime_us);
	for (int f = 0; f < 2; f++) {
		if (tcp_diag_dump(&s->diag, f ? AF_INET6 : AF_INET, write_row, s, err, sizeof err) < 0) {
			fprintf(stderr, PROG ": %s\n", err);
			return -1;
		}
	}
	if (++s->samples % FLUSH_EVERY == 0)
		fflush(s->out);
	return 0;
}

static int setup(struct sampler *s)
{
	char err[256];
	if (tcp_diag_open(&s->diag, err, sizeof err) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	if ((s->signal_fd = sq_stop_signals_fd()) < 0) {
		perror(PROG ": blocking SIGINT/SIGTERM into a signalfd");
		return -1;
	}
	if (!(s->out = fopen(s->output, "w"))) {
		fprintf(stderr, PROG ": opening output \"%s\" for writing: %s\n", s->output, strerror(errno));
		return -1;
	}
	fprintf(s->out, "# squall-tcp-sampler format 1\n# interval_us %" PRId64 "\n# t0_realtime_us %" PRId64 "\n"
		"time_us\tsrc\tsport\tdst\tdport\tstate\tca_state\tcwnd\tssthresh\tsrtt_us\trttvar_us\trto_us\tmss\t"
		"unacked\tretrans\tlost\ttotal_retrans\tdelivered\tbytes_acked\tbytes_received\n",
		s->interval_us, s->t0_realtime_us);
	if (take_sample(s) != 0)
		return -1;
	if (sample_timer_open(&s->timer, s->interval_us) != 0) {
		perror(PROG ": arming the sample timer (timerfd on CLOCK_MONOTONIC)");
		return -1;
	}
	return 0;
}

static int sample_until_stopped(struct sampler *s)
{
	for (;;) {
		enum sample_wait w = sample_timer_wait(&s->timer, s->signal_fd, &s->missed, PROG);
		if (w == SAMPLE_ERROR || w == SAMPLE_STOP)
			return w == SAMPLE_STOP ? 0 : -1;
		if (w == SAMPLE_DUE && take_sample(s) != 0)
			return -1;
	}
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, PROG))
		return 0;
	struct sampler s = { .signal_fd = -1, .diag = { .fd = -1 }, .timer = { .fd = -1 } };
	if (parse_options(argc, argv, &s) != 0)
		return 2;
	int status = setup(&s) == 0 ? sample_until_stopped(&s) : -1;
	if (s.out) {
		if (status == 0)
			fprintf(s.out, "# end samples %" PRIu64 " missed %" PRIu64 " rows %" PRIu64 "\n", s.samples, s.missed,
				s.rows);
		if (fclose(s.out) != 0 && status == 0) {
			perror(PROG ": writing the output");
			status = -1;
		}
	}
	if (s.timer.fd >= 0)
		sample_timer_close(&s.timer);
	tcp_diag_close(&s.diag);
	if (s.signal_fd >= 0)
		close(s.signal_fd);
	return status == 0 ? 0 : 1;
}
