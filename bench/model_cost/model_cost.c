/* squall-model-cost: the link model's cost per packet, alone — no namespaces, no sockets, no
 * log, no clock but the benchmark's own. A fixed stream of packets goes through the model's
 * public interface (sq_model_arrive / sq_model_advance, link_model.h) once with every feature
 * the model has on at once and once with every feature off, in alternating rounds; each round
 * reports the CPU nanoseconds (the thread's CPU clock) per packet of the whole stream, every
 * event a packet causes and the drain at the end included. bench/model_cost.py runs it and keeps the medians.
 *
 *   squall-model-cost [--packets N] [--rounds R]     JSON on stdout
 *   squall-model-cost --help | --version
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link_model.h"
#include "squall_version.h"

#define USAGE "usage: squall-model-cost [--packets N] [--rounds R] | --help | --version\n" \
	"  the link model's CPU time per packet with every feature on and off, as JSON (bench/model_cost.py)\n"

#define MS 1000LL
#define S (1000 * MS)
#define FOREVER (1000000LL * S)
#define TRACE_PERIOD_MS 1000
#define DPORT_BASE 5000

/* The router stage's classes with every feature on: one per discipline, each with a filter of
 * its own (destination port DPORT_BASE + its row), served by the weighted scheduler so that
 * every class has traffic; each class is offered about 1.8 Mbit/s, so a share below the
 * trace's 8 Mbit/s / 4 keeps its queue full (RED's between its thresholds, where it marks).
 * Adding a discipline to the bench is one row here. */
static const struct sq_router_class CLASSES[] = {
	{ .name = "pfifo", .discipline = SQ_QDISC_PFIFO, .limit = 20, .share_bps = 1000000 },
	{ .name = "bfifo", .discipline = SQ_QDISC_BFIFO, .limit = 30000, .share_bps = 1000000 },
	{ .name = "head_drop", .discipline = SQ_QDISC_HEAD_DROP, .limit = 20, .share_bps = 1000000 },
	{ .name = "red", .discipline = SQ_QDISC_RED, .share_bps = 500000, .red = { .limit = 60000,
		.min = 6000, .max = 18000, .avpkt = 1000, .max_p = 0.1, .w_q = 0.002, .ecn = true } },
	{ .name = "codel", .discipline = SQ_QDISC_CODEL, .limit = 1000, .share_bps = 1000000,
	  .codel = { .target = 5 * MS, .interval = 100 * MS, .ecn = true } },
	{ .name = "fq_codel", .discipline = SQ_QDISC_FQ_CODEL, .limit = 10240, .share_bps = 1000000,
	  .fq_codel = { .target = 5 * MS, .interval = 100 * MS, .ecn = true, .quantum = 1514, .flows = 1024 } },
	{ .name = "pie", .discipline = SQ_QDISC_PIE, .limit = 1000, .share_bps = 1000000,
	  .pie = { .target = 15 * MS, .tupdate = 15 * MS, .alpha = 0.125, .beta = 1.25, .ecn = true } },
	{ .name = "dualpi2", .discipline = SQ_QDISC_DUALPI2, .limit = 10000, .share_bps = 1000000,
	  .dualpi2 = { .target = 15 * MS, .tupdate = 16 * MS, .alpha = 41.0 / 256, .beta = 819.0 / 256,
		       .coupling = 2, .step_thresh = 1 * MS, .c_protection = 10, .overflow = true } },
};
#define N_CLASSES (sizeof CLASSES / sizeof CLASSES[0])

/* The stream: a 1500 B packet down every 1.3 ms (9.2 Mbit/s, above the trace's 8 Mbit/s, so the
 * queues fill and drop), and after every second one a 60 B packet up (an ACK); ports cycle
 * through the classes' filters and one port no filter takes (the default class); every third
 * packet is ECN-capable (ECT(0)), so RED marks. */
#define DOWN_GAP_US 1300
#define DOWN_LEN 1500
#define UP_LEN 60

struct counts {
	uint64_t events[SQ_EV_TYPES];
};

static void count_event(void *ctx, const struct sq_event *ev)
{
	((struct counts *)ctx)->events[ev->type]++;
}

static struct sq_dist fixed(sq_time_us a)
{
	return (struct sq_dist){ .kind = SQ_DIST_FIXED, .a = a };
}

static struct sq_dist exponential(sq_time_us mean)
{
	return (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL, .a = mean };
}

/* Every feature off: one good state for ever, constant rates, no errors, no ARQ, no router,
 * no netem stage, no outages. */
static void plain_link(struct sq_link_config *cfg, const struct sq_rate_step rates[SQ_DIRS])
{
	memset(cfg, 0, sizeof *cfg);
	cfg->channel = (struct sq_channel_config){ .initial_state = SQ_GOOD,
		.length = { fixed(FOREVER), fixed(FOREVER) } };
	for (int d = 0; d < SQ_DIRS; d++) {
		cfg->dir[d] = (struct sq_direction_config){ .mtu = 1500, .send_buffer = 30000,
			.recv_buffer = 200000, .rate = &rates[d], .rate_len = 1, .delay = 100 * MS, .in_order = true };
	}
	cfg->seed = 1;
}

static void router(struct sq_router_config *r)
{
	*r = (struct sq_router_config){ .enabled = true, .scheduler = SQ_ROUTER_WEIGHTED,
		.n_classes = N_CLASSES, .default_class = 0, .n_filters = N_CLASSES, .device_queue = 10 };
	for (size_t i = 0; i < N_CLASSES; i++) {
		r->classes[i] = CLASSES[i];
		r->filters[i] = (struct sq_router_filter){ .class_index = i, .match_proto = true, .proto = 6,
			.match_dport = true, .dport_min = (uint16_t)(DPORT_BASE + i),
			.dport_max = (uint16_t)(DPORT_BASE + i) };
		snprintf(r->filters[i].name, sizeof r->filters[i].name, "f%zu", i);
	}
}

/* Gilbert-Elliott loss (p 1 %, r 30 %, half of the bad state's packets lost, none of the
 * good's), normal jitter with correlation, reordering, duplication, corruption. */
static void netem(struct sq_netem_config *n)
{
	*n = (struct sq_netem_config){ .loss_model = SQ_NETEM_LOSS_GEMODEL, .loss = { 0.01, 0.3, 0.5, 0.0 },
		.latency_us = 10 * MS, .jitter_us = 5 * MS, .delay_corr = 0.25,
		.distribution = SQ_NETEM_DIST_NORMAL, .reorder = { 0.05, 0.0 }, .gap = 5,
		.duplicate = { 0.01, 0.0 }, .corrupt = { 0.005, 0.0 } };
}

/* Every feature on: a two-state channel with frame errors and ARQ, the downlink over a
 * mahimahi trace, the uplink at a constant rate, link-wide outages, the netem stage (loss,
 * jitter, reordering, duplication, corruption) and a router stage with every discipline's
 * class, RED with ECN among them, and a device queue in both directions. */
static void full_link(struct sq_link_config *cfg, const struct sq_rate_step rates[SQ_DIRS],
		      const uint32_t *trace, size_t trace_len)
{
	plain_link(cfg, rates);
	cfg->channel.length[SQ_GOOD] = exponential(2 * S);
	cfg->channel.length[SQ_BAD] = exponential(300 * MS);
	cfg->outages = (struct sq_outage_config){ .enabled = true, .every = exponential(20 * S),
		.length = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 1 * S, .b = 3 * S } };
	for (int d = 0; d < SQ_DIRS; d++) {
		struct sq_direction_config *c = &cfg->dir[d];
		c->error[SQ_GOOD] = 0.01;
		c->error[SQ_BAD] = 0.3;
		c->arq_retransmissions = 3;
		c->arq_delay = 50 * MS;
		router(&c->router);
		netem(&c->netem);
	}
	cfg->dir[SQ_DOWN].capacity = (struct sq_opportunity_trace){ .ms = trace, .len = trace_len };
}

/* Two opportunities of every three milliseconds over a period of TRACE_PERIOD_MS (8 Mbit/s of
 * 1500 B opportunities); returns how many it wrote. */
static size_t make_trace(uint32_t *ms, size_t cap)
{
	size_t n = 0;
	for (uint32_t t = 1; t <= TRACE_PERIOD_MS && n < cap; t++)
		if (t % 3 != 0 || t == TRACE_PERIOD_MS)
			ms[n++] = t;
	return n;
}

/* The thread's CPU time: what the model costs, not how long a busy machine kept it waiting. */
static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One round: the whole stream through a fresh model, drained; the nanoseconds it took. */
static double run_round(const struct sq_link_config *cfg, uint64_t packets, struct counts *counts,
			size_t *pending)
{
	char err[256];
	memset(counts, 0, sizeof *counts);
	struct sq_model *m = sq_model_new(cfg, count_event, counts, err, sizeof err);
	if (!m) {
		fprintf(stderr, "squall-model-cost: the configuration was refused: %s\n", err);
		exit(1);
	}
	double start = now_ns();
	sq_time_us t = 0;
	for (uint64_t i = 0; i < packets; i++) {
		int down = i % 3 != 2;
		if (down)
			t += DOWN_GAP_US;
		struct sq_pkt_meta meta = { .ip_len = down ? DOWN_LEN : UP_LEN, .proto = 6,
			.ecn = i % 3 == 0 ? 2 : 0, .sport = 40000,
			.dport = (uint16_t)(DPORT_BASE + i % (N_CLASSES + 1)) };
		if (sq_model_arrive(m, down ? SQ_DOWN : SQ_UP, t, &meta, NULL) == 0) {
			fprintf(stderr, "squall-model-cost: out of memory at packet %" PRIu64 "\n", i);
			exit(1);
		}
	}
	sq_model_advance(m, t + 60 * S);   /* every packet's remaining events */
	double ns = now_ns() - start;
	*pending = sq_model_pending(m);
	sq_model_free(m);
	return ns;
}

static void print_row(const char *name, const double *ns, int rounds, uint64_t packets,
		      const struct counts *c, size_t pending, int last)
{
	printf("  \"%s\": {\"ns_per_packet\": [", name);
	for (int r = 0; r < rounds; r++)
		printf("%s%.2f", r ? ", " : "", ns[r] / (double)packets);
	printf("], \"pending_after_drain\": %zu, \"events\": {", pending);
	int first = 1;
	for (int e = 0; e < SQ_EV_TYPES; e++) {
		if (c->events[e]) {
			printf("%s\"%s\": %" PRIu64, first ? "" : ", ", sq_event_name((enum sq_event_type)e), c->events[e]);
			first = 0;
		}
	}
	printf("}}%s\n", last ? "" : ",");
}

static uint64_t parse_count(const char *flag, const char *text)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end || v == 0 || text[0] == '-') {
		fprintf(stderr, "squall-model-cost: %s: expected a positive whole number, got '%s'\n", flag, text);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, "squall-model-cost"))
		return 0;
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(USAGE, stdout);
		return 0;
	}
	uint64_t packets = 200000;
	int rounds = 7;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--packets") == 0)
			packets = parse_count(argv[i], argv[i + 1]), i++;
		else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
			rounds = (int)parse_count(argv[i], argv[i + 1]), i++;
		else {
			fputs(USAGE, stderr);
			return 2;
		}
	}
	if (rounds > 1000) {
		fprintf(stderr, "squall-model-cost: --rounds: at most 1000, got %d\n", rounds);
		return 2;
	}
	static uint32_t trace[TRACE_PERIOD_MS];
	size_t trace_len = make_trace(trace, TRACE_PERIOD_MS);
	const struct sq_rate_step rates[SQ_DIRS] = { { 0, 10000000 }, { 0, 2000000 } };
	struct sq_link_config full, plain;
	full_link(&full, rates, trace, trace_len);
	plain_link(&plain, rates);

	double *ns_full = calloc((size_t)rounds, sizeof *ns_full);
	double *ns_plain = calloc((size_t)rounds, sizeof *ns_plain);
	if (!ns_full || !ns_plain)
		return 1;
	struct counts c_full, c_plain;
	size_t p_full = 0, p_plain = 0;
	for (int r = 0; r < rounds; r++) {   /* alternating, so drift of the machine hits both */
		ns_full[r] = run_round(&full, packets, &c_full, &p_full);
		ns_plain[r] = run_round(&plain, packets, &c_plain, &p_plain);
	}
	printf("{\"packets\": %" PRIu64 ", \"rounds\": %d, \"classes\": [", packets, rounds);
	for (size_t i = 0; i < N_CLASSES; i++)
		printf("%s\"%s\"", i ? ", " : "", CLASSES[i].name);
	printf("],\n");
	print_row("every_feature_on", ns_full, rounds, packets, &c_full, p_full, 0);
	print_row("every_feature_off", ns_plain, rounds, packets, &c_plain, p_plain, 1);
	printf("}\n");
	free(ns_full);
	free(ns_plain);
	return 0;
}
