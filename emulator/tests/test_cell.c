/* A cell of several hosts (LINK_MODEL.md "A cell of several hosts"), in virtual time: one
 * host is today's link bit for bit, host 1 of a larger cell too, the other hosts have
 * timelines of their own; shares under round robin and proportional fair are those the
 * definitions predict; the checks name the keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"
#include "test_model_support.h"

#define MS 1000LL
#define S 1000000LL
#define MAX_HOSTS 8

/* A link with a random channel, errors and ARQ in both directions: enough that any
 * difference in streams or ordering would show. */
static void busy_link(struct test_link *tl)
{
	tl_defaults(tl);
	tl->cfg.channel.length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL, .a = 300 * MS };
	tl->cfg.channel.length[SQ_BAD] = (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL, .a = 100 * MS };
	for (int d = 0; d < SQ_DIRS; d++) {
		struct sq_direction_config *dc = &tl->cfg.dir[d];
		dc->error[SQ_GOOD] = 0.05;
		dc->error[SQ_BAD] = 0.6;
		dc->arq_retransmissions = 3;
		dc->arq_delay = 40 * MS;
		dc->delay = 20 * MS;
		dc->send_buffer = 6000;
		dc->recv_buffer = 4000;
	}
}

/* 300 packets per direction, every 20 ms, for `host`. */
static void traffic(struct sq_model *m, uint32_t host)
{
	for (int i = 0; i < 300; i++) {
		struct sq_pkt_meta meta = { .ip_len = 200 + (uint32_t)(i * 37 % 1200) };
		for (int d = 0; d < SQ_DIRS; d++)
			assert_true(sq_model_arrive_host(m, host, (enum sq_dir)d, i * 20 * MS, &meta, NULL) > 0);
	}
	sq_model_advance(m, 60 * S);
}

static struct recorder run(const struct test_link *tl, uint32_t host)
{
	struct recorder rec = { 0 };
	struct sq_model *m = tl_model(tl, &rec);
	traffic(m, host);
	sq_model_free(m);
	return rec;
}

/* hosts = 1, with or without a host array equal to the link's own: the same events. */
static void one_host_is_the_link(void **state)
{
	(void)state;
	static struct test_link plain, cell;
	busy_link(&plain);
	cell = plain;
	struct sq_host_config host = { .channel = plain.cfg.channel, .outages = plain.cfg.outages };
	memcpy(host.dir, plain.cfg.dir, sizeof host.dir);
	cell.cfg.cell = (struct sq_cell_config){ .hosts = 1, .host = &host,
						 .scheduler = SQ_CELL_PROPORTIONAL_FAIR };
	struct recorder a = run(&plain, 0), b = run(&cell, 0);
	assert_true(a.n > 2000);
	assert_true(rec_count(&a, SQ_EV_HIT) > 50 && rec_count(&a, SQ_EV_STATE) > 50);
	assert_int_equal(rec_first_difference(&a, &b), -1);
	rec_release(&a);
	rec_release(&b);
}

/* Host 1 of a cell of 3, the only one with traffic: its events are the single link's. */
static void host_one_of_a_cell_is_the_link(void **state)
{
	(void)state;
	static struct test_link plain, cell;
	busy_link(&plain);
	cell = plain;
	cell.cfg.cell.hosts = 3;
	struct recorder a = run(&plain, 0), b = run(&cell, 0);
	struct recorder host1 = { 0 };
	size_t others = 0;
	for (size_t i = 0; i < b.n; i++) {
		if (b.ev[i].host == 0)
			rec_sink(&host1, &b.ev[i]);
		else
			others += b.ev[i].type == SQ_EV_STATE;
	}
	assert_true(others > 50);   /* the other hosts' channels change state meanwhile */
	assert_int_equal(rec_first_difference(&a, &host1), -1);
	rec_release(&a);
	rec_release(&b);
	rec_release(&host1);
}

/* Host k's timeline is drawn from its own stream: it differs from host 1's and is what
 * sq_channel_new_host prints for it; the same run twice gives the same events. */
static void hosts_have_their_own_timelines(void **state)
{
	(void)state;
	static struct test_link tl;
	busy_link(&tl);
	tl.cfg.cell.hosts = 4;
	struct recorder a = run(&tl, 2), b = run(&tl, 2);
	assert_int_equal(rec_first_difference(&a, &b), -1);
	char err[256];
	for (uint32_t h = 0; h < 4; h++) {
		struct sq_channel *ch = sq_channel_new_host(&tl.cfg.channel, tl.cfg.seed,
							    tl.cfg.replication, h, err, sizeof err);
		assert_non_null(ch);
		size_t changes = 0;
		for (size_t i = 0; i < a.n; i++) {
			const struct sq_event *e = &a.ev[i];
			if (e->type != SQ_EV_STATE || e->host != h)
				continue;
			assert_int_equal(sq_channel_state_at(ch, e->t), e->state);
			assert_int_not_equal(sq_channel_state_at(ch, e->t - 1), e->state);
			changes++;
		}
		assert_true(changes > 50);
		sq_channel_free(ch);
	}
	struct sq_channel *c0 = sq_channel_new_host(&tl.cfg.channel, 42, 1, 0, err, sizeof err);
	struct sq_channel *c1 = sq_channel_new_host(&tl.cfg.channel, 42, 1, 1, err, sizeof err);
	assert_int_not_equal(sq_channel_next_change(c0, 0), sq_channel_next_change(c1, 0));
	sq_channel_free(c0);
	sq_channel_free(c1);
	rec_release(&a);
	rec_release(&b);
}

/* ---- shares ----------------------------------------------------------------------------- */

#define FRAME 1000u               /* bytes; 1 ms at 8 Mbit/s */
#define PER_HOST 130000           /* frames queued per host: more than a run can send */

static struct sq_host_config shares_host[MAX_HOSTS];
static struct sq_trace_step bad_half[2] = { { SQ_GOOD, 100 * S }, { SQ_BAD, 100 * S } };

/* Counts what the shares are made of: the bytes of each host's frames (first
 * transmissions down) and the hosts of the first frames. */
struct frame_count {
	uint64_t bytes[MAX_HOSTS];
	uint32_t order[64];
	size_t n;
};

static void count_frames(void *ctx, const struct sq_event *e)
{
	struct frame_count *c = ctx;
	if (e->type != SQ_EV_TX || e->attempt != 0 || e->dir != SQ_DOWN)
		return;
	c->bytes[e->host] += e->ip_len;
	if (c->n < sizeof c->order / sizeof c->order[0])
		c->order[c->n++] = e->host;
}

/* n saturated hosts on an 8 Mbit/s down link without ARQ for `run` us; host `bad` (none
 * if >= n) alternates 100 s good, 100 s bad with error_bad `e_bad`. */
static void shares(uint32_t n, enum sq_cell_scheduler policy, uint32_t window, uint32_t bad,
		   double e_bad, sq_time_us run, struct frame_count *c)
{
	static struct test_link tl;
	tl_defaults(&tl);
	struct sq_rate_step rate = { .at_us = 0, .rate_bps = 8000000 };
	tl_set_rates(&tl, SQ_DOWN, 1, &rate);
	tl.cfg.dir[SQ_DOWN].send_buffer = PER_HOST * FRAME;
	tl.cfg.dir[SQ_DOWN].in_order = false;
	for (uint32_t h = 0; h < n; h++) {
		shares_host[h] = (struct sq_host_config){ .channel = tl.cfg.channel };
		memcpy(shares_host[h].dir, tl.cfg.dir, sizeof shares_host[h].dir);
		if (h == bad) {
			shares_host[h].channel.trace = bad_half;
			shares_host[h].channel.trace_len = 2;
			shares_host[h].dir[SQ_DOWN].error[SQ_BAD] = e_bad;
		}
	}
	tl.cfg.cell = (struct sq_cell_config){ .hosts = n, .scheduler = policy, .pf_window = window,
					       .host = shares_host };
	memset(c, 0, sizeof *c);
	char err[256] = "";
	struct sq_model *m = sq_model_new(&tl.cfg, count_frames, c, err, sizeof err);
	if (!m)
		fail_msg("sq_model_new: %s", err);
	struct sq_pkt_meta meta = { .ip_len = FRAME };
	for (int i = 0; i < PER_HOST && i < run / (2 * 1000); i++)   /* up to half the frames */
		for (uint32_t h = 0; h < n; h++)
			assert_true(sq_model_arrive_host(m, h, SQ_DOWN, 0, &meta, NULL) > 0);
	sq_model_advance(m, run - 1);
	assert_true(sq_model_pending(m) > 0);   /* still saturated at the end */
	sq_model_free(m);
}

static double jain(const uint64_t *x, uint32_t n)
{
	double sum = 0, squares = 0;
	for (uint32_t i = 0; i < n; i++) {
		sum += (double)x[i];
		squares += (double)x[i] * (double)x[i];
	}
	return sum * sum / (n * squares);
}

/* Four identical error-free saturated hosts for 20 s: the frames go to hosts 1, 2, 3, 4,
 * 1, ... and the shares are equal (Jain's index 1, at least 0.99 asked). */
static void identical_hosts(enum sq_cell_scheduler policy)
{
	static struct frame_count c;
	shares(4, policy, 0, 4, 0, 20 * S, &c);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.order[i], i % 4);
	double j = jain(c.bytes, 4);
	printf("%s, 4 identical hosts: bytes %llu %llu %llu %llu, Jain %.6f\n",
	       policy == SQ_CELL_ROUND_ROBIN ? "round robin" : "proportional fair",
	       (unsigned long long)c.bytes[0], (unsigned long long)c.bytes[1],
	       (unsigned long long)c.bytes[2], (unsigned long long)c.bytes[3], j);
	assert_true(j >= 0.99);
}

static void round_robin_shares_equally(void **state)
{
	(void)state;
	identical_hosts(SQ_CELL_ROUND_ROBIN);
}

/* Proportional fair with identical hosts and frames serves them in turn too (every pick
 * is the host with the smallest average; at the start, averages 0 tie and round-robin
 * order decides). */
static void proportional_fair_of_equals_is_round_robin(void **state)
{
	(void)state;
	identical_hosts(SQ_CELL_PROPORTIONAL_FAIR);
}

static double share(const struct frame_count *c, uint32_t host)
{
	return (double)c->bytes[host] / (double)(c->bytes[0] + c->bytes[1] + c->bytes[2] + c->bytes[3]);
}

/* One host of four in long bad states (100 s good, 100 s bad: 100 000 frames each) where a
 * frame gets through with probability s = 0.1. The definition's equilibrium (averages in
 * proportion to the success chances) gives it 1/4 of the frames while good and
 * s / (3 + s) = 3.2 % while bad: 0.5 x 0.25 + 0.5 x 0.1 / 3.1 = 14.1 % of the capacity;
 * under round robin 25 %. The equilibrium is that of the fluid limit: it holds when the
 * window is long against the host's gaps between frames (W = 256 here; with the default
 * W the figure comes out higher, since one frame lifts a small average a lot) and the
 * states long against W (the transitions take a few W frames). */
static void proportional_fair_gives_a_bad_host_less(void **state)
{
	(void)state;
	static struct frame_count pf, rr;
	shares(4, SQ_CELL_PROPORTIONAL_FAIR, 256, 3, 0.9, 400 * S, &pf);
	shares(4, SQ_CELL_ROUND_ROBIN, 0, 3, 0.9, 400 * S, &rr);
	double predicted = 0.5 * 0.25 + 0.5 * 0.1 / 3.1;
	printf("proportional fair, host 4 bad half the time (s = 0.1): share predicted %.4f, "
	       "measured %.4f (round robin %.4f)\n", predicted, share(&pf, 3), share(&rr, 3));
	assert_true(share(&pf, 3) > predicted - 0.003 && share(&pf, 3) < predicted + 0.003);
	assert_true(share(&rr, 3) > 0.2499 && share(&rr, 3) < 0.2501);
	for (uint32_t h = 0; h < 3; h++)   /* the good hosts share the rest equally */
		assert_true(share(&pf, h) > 0.284 && share(&pf, h) < 0.288);
}

/* ---- checks ------------------------------------------------------------------------------ */

static void expect_refusal(const struct test_link *tl, const char *want)
{
	char err[512] = "";
	struct recorder rec = { 0 };
	assert_null(sq_model_new(&tl->cfg, rec_sink, &rec, err, sizeof err));
	if (!strstr(err, want))
		fail_msg("expected a message with '%s', got '%s'", want, err);
}

static void cell_checks_name_the_key(void **state)
{
	(void)state;
	static struct test_link tl;
	tl_defaults(&tl);
	tl.cfg.cell.hosts = SQ_CELL_MAX_HOSTS + 1;
	expect_refusal(&tl, "cell.hosts: 17 is more than the limit 16");
	tl.cfg.cell.hosts = 2;
	tl.cfg.cell.pf_window = SQ_CELL_MAX_PF_WINDOW + 1;
	expect_refusal(&tl, "cell.pf_window: 1000001 frames is more than the limit");
	tl.cfg.cell.pf_window = 0;
	tl.cfg.cell.scheduler = (enum sq_cell_scheduler)7;
	expect_refusal(&tl, "cell.scheduler: expected round_robin or proportional_fair");
	tl.cfg.cell.scheduler = SQ_CELL_ROUND_ROBIN;
	tl.cfg.dir[SQ_UP].router.enabled = true;
	tl.cfg.dir[SQ_UP].router.n_classes = 1;
	tl.cfg.dir[SQ_UP].router.classes[0].limit = 10;
	expect_refusal(&tl, "up.router: a cell of 2 hosts has no router stage yet");
	tl.cfg.dir[SQ_UP].router.enabled = false;
	static struct sq_host_config host[2];
	for (int h = 0; h < 2; h++) {
		host[h] = (struct sq_host_config){ .channel = tl.cfg.channel };
		memcpy(host[h].dir, tl.cfg.dir, sizeof host[h].dir);
	}
	host[1].dir[SQ_DOWN].error[SQ_BAD] = 1.5;
	tl.cfg.cell.host = host;
	expect_refusal(&tl, "host.2.down.error_bad: 1.5 is outside [0, 1]");
	host[1].dir[SQ_DOWN].error[SQ_BAD] = 0.5;
	host[1].channel.length[SQ_GOOD].a = 0;
	expect_refusal(&tl, "host.2.channel.good");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_host_is_the_link),
		cmocka_unit_test(host_one_of_a_cell_is_the_link),
		cmocka_unit_test(hosts_have_their_own_timelines),
		cmocka_unit_test(round_robin_shares_equally),
		cmocka_unit_test(proportional_fair_of_equals_is_round_robin),
		cmocka_unit_test(proportional_fair_gives_a_bad_host_less),
		cmocka_unit_test(cell_checks_name_the_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
