/* The cell's schedulers against references written from LINK_MODEL.md "A cell of several
 * hosts" alone: for random arrivals of several hosts and random channel timelines, every
 * frame (first transmission) the model starts — its time, host and size — equals the
 * reference's, for round robin and for proportional fair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

#define HOSTS 4
#define STEPS 12            /* channel trace steps per host */
#define PACKETS 600
#define RATE 1000000        /* 1 Mbit/s: a frame of b bytes takes 8 b us */
#define WINDOW 8            /* proportional fair's W, small so that it matters */

struct arrival {
	sq_time_us t;
	uint32_t host, bytes;
};

struct frame {
	sq_time_us t;
	uint32_t host, bytes;
};

struct scenario {
	struct arrival arr[PACKETS];
	struct sq_trace_step trace[HOSTS][STEPS];
	double error[HOSTS][SQ_STATES];
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Bursty arrivals (load about 1.1) of 40..1500 B for random hosts; per host a cyclic
 * trace of 5..60 ms states and its own error probabilities, one host never getting a
 * frame through in its bad state. */
static void make_scenario(struct scenario *sc, uint64_t seed)
{
	sq_time_us t = 0;
	for (size_t i = 0; i < PACKETS; i++) {
		t += (sq_time_us)(lcg(&seed) % 12000);
		sc->arr[i] = (struct arrival){ .t = t, .host = (uint32_t)(lcg(&seed) % HOSTS),
					       .bytes = 40 + (uint32_t)(lcg(&seed) % 1461) };
	}
	for (int h = 0; h < HOSTS; h++) {
		for (int k = 0; k < STEPS; k++)
			sc->trace[h][k] = (struct sq_trace_step){
				.state = (enum sq_state)((k + h) % 2),
				.duration = 5000 + (sq_time_us)(lcg(&seed) % 55000) };
		sc->error[h][SQ_GOOD] = 0.05 * h;
		sc->error[h][SQ_BAD] = h == HOSTS - 1 ? 1.0 : 0.4 + 0.15 * h;
	}
}

/* ---- the reference ---------------------------------------------------------------- */

static enum sq_state ref_state(const struct scenario *sc, uint32_t h, sq_time_us t)
{
	sq_time_us cycle = 0;
	for (int k = 0; k < STEPS; k++)
		cycle += sc->trace[h][k].duration;
	t %= cycle;
	for (int k = 0;; k++) {
		if (t < sc->trace[h][k].duration)
			return sc->trace[h][k].state;
		t -= sc->trace[h][k].duration;
	}
}

struct ref {
	const struct scenario *sc;
	bool pf;
	uint32_t queue[HOSTS][PACKETS];   /* sizes, FIFO */
	size_t head[HOSTS], tail[HOSTS];
	sq_time_us free_at;
	uint32_t last;
	uint64_t avg[HOSTS];              /* bytes per frame x 65536 */
	struct frame *out;
	size_t n;
};

/* PF's order: success s over average A; s = 0 is 0, A = 0 (with s > 0) infinite, else
 * s_a x A_b against s_b x A_a. */
static bool ref_pf_greater(const struct ref *r, double sa, uint32_t a, double sb, uint32_t b)
{
	if (sa == 0.0 || sb == 0.0)
		return sa > 0.0 && sb == 0.0;
	if (r->avg[a] == 0 || r->avg[b] == 0)
		return r->avg[a] == 0 && r->avg[b] > 0;
	return sa * (double)r->avg[b] > sb * (double)r->avg[a];
}

static uint32_t ref_choose(const struct ref *r, sq_time_us t)
{
	bool have = false;
	uint32_t best = 0;
	double best_s = 0;
	for (uint32_t i = 1; i <= HOSTS; i++) {
		uint32_t h = (r->last + i) % HOSTS;
		if (r->head[h] == r->tail[h])
			continue;
		double s = 1.0 - r->sc->error[h][ref_state(r->sc, h, t)];
		if (!have || (r->pf && ref_pf_greater(r, s, h, best_s, best))) {
			have = true;
			best = h;
			best_s = s;
		}
	}
	return best;
}

static void ref_start(struct ref *r, sq_time_us t)
{
	uint32_t h = ref_choose(r, t);
	uint32_t bytes = r->queue[h][r->head[h]++];
	r->out[r->n++] = (struct frame){ .t = t, .host = h, .bytes = bytes };
	r->free_at = t + 8 * (sq_time_us)bytes;
	for (uint32_t k = 0; k < HOSTS; k++)
		r->avg[k] -= r->avg[k] / WINDOW;
	r->avg[h] += (uint64_t)bytes * 65536 / WINDOW;
	r->last = h;
}

static bool ref_waiting(const struct ref *r)
{
	for (int h = 0; h < HOSTS; h++)
		if (r->head[h] != r->tail[h])
			return true;
	return false;
}

/* Frames start when the transmitter frees (before arrivals at that instant) while packets
 * wait, and at an arrival that finds it idle. */
static size_t reference(const struct scenario *sc, bool pf, struct frame *out)
{
	static struct ref r;
	memset(&r, 0, sizeof r);
	r.sc = sc;
	r.pf = pf;
	r.last = HOSTS - 1;
	r.out = out;
	for (size_t i = 0; i <= PACKETS; i++) {
		sq_time_us t = i < PACKETS ? sc->arr[i].t : TL_FOREVER;
		while (ref_waiting(&r) && r.free_at <= t)
			ref_start(&r, r.free_at);
		if (i == PACKETS)
			break;
		const struct arrival *a = &sc->arr[i];
		r.queue[a->host][r.tail[a->host]++] = a->bytes;
		if (r.free_at <= t)
			ref_start(&r, t);
	}
	return r.n;
}

/* ---- the model ---------------------------------------------------------------------- */

static size_t model_frames(const struct scenario *sc, bool pf, struct frame *out)
{
	static struct test_link tl;
	static struct sq_host_config host[HOSTS];
	tl_defaults(&tl);
	struct sq_rate_step rate = { .at_us = 0, .rate_bps = RATE };
	tl_set_rates(&tl, SQ_DOWN, 1, &rate);
	tl.cfg.dir[SQ_DOWN].in_order = false;
	tl.cfg.dir[SQ_DOWN].send_buffer = 10000000;
	for (int h = 0; h < HOSTS; h++) {
		host[h] = (struct sq_host_config){ .channel = tl.cfg.channel };
		host[h].channel.trace = sc->trace[h];
		host[h].channel.trace_len = STEPS;
		memcpy(host[h].dir, tl.cfg.dir, sizeof host[h].dir);
		memcpy(host[h].dir[SQ_DOWN].error, sc->error[h], sizeof sc->error[h]);
	}
	tl.cfg.cell = (struct sq_cell_config){ .hosts = HOSTS, .pf_window = WINDOW, .host = host,
					       .scheduler = pf ? SQ_CELL_PROPORTIONAL_FAIR
							       : SQ_CELL_ROUND_ROBIN };
	struct recorder rec = { 0 };
	struct sq_model *m = tl_model(&tl, &rec);
	for (size_t i = 0; i < PACKETS; i++) {
		struct sq_pkt_meta meta = { .ip_len = sc->arr[i].bytes };
		assert_true(sq_model_arrive_host(m, sc->arr[i].host, SQ_DOWN, sc->arr[i].t, &meta, NULL) > 0);
	}
	sq_model_advance(m, sc->arr[PACKETS - 1].t + 100LL * 1000000);
	size_t n = 0;
	for (size_t i = 0; i < rec.n; i++) {
		const struct sq_event *e = &rec.ev[i];
		if (e->type == SQ_EV_TX && e->attempt == 0)
			out[n++] = (struct frame){ .t = e->t, .host = e->host, .bytes = e->ip_len };
	}
	assert_int_equal(sq_model_pending(m), 0);
	sq_model_free(m);
	rec_release(&rec);
	return n;
}

static void compare(bool pf, uint64_t seed)
{
	static struct scenario sc;
	static struct frame want[PACKETS], got[PACKETS];
	make_scenario(&sc, seed);
	size_t nw = reference(&sc, pf, want);
	size_t ng = model_frames(&sc, pf, got);
	assert_int_equal(nw, PACKETS);
	assert_int_equal(ng, PACKETS);
	size_t switches = 0;
	for (size_t i = 0; i < PACKETS; i++) {
		if (want[i].t != got[i].t || want[i].host != got[i].host || want[i].bytes != got[i].bytes)
			fail_msg("seed %llu frame %zu: model t=%lld host %u %u B, reference t=%lld host %u %u B",
				 (unsigned long long)seed, i, (long long)got[i].t, got[i].host + 1,
				 got[i].bytes, (long long)want[i].t, want[i].host + 1, want[i].bytes);
		switches += i > 0 && want[i].host != want[i - 1].host;
	}
	assert_true(switches > PACKETS / 4);   /* the scheduler really chose among hosts */
}

static void round_robin_frames_equal_the_reference(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++)
		compare(false, seed);
}

static void proportional_fair_frames_equal_the_reference(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++)
		compare(true, seed);
}

/* The two policies decide differently on these scenarios: the comparison above tells
 * them apart. */
static void the_policies_differ(void **state)
{
	(void)state;
	static struct scenario sc;
	static struct frame rr[PACKETS], pf[PACKETS];
	make_scenario(&sc, 7);
	reference(&sc, false, rr);
	reference(&sc, true, pf);
	size_t differ = 0;
	for (size_t i = 0; i < PACKETS; i++)
		differ += rr[i].host != pf[i].host;
	assert_true(differ > PACKETS / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_robin_frames_equal_the_reference),
		cmocka_unit_test(proportional_fair_frames_equal_the_reference),
		cmocka_unit_test(the_policies_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
