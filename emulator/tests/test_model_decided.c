/* sq_model_decided_outs (LINK_MODEL.md, "Decided outs"): what it reports as decided goes
 * out exactly then whatever arrives afterwards, in order, never behind a packet whose fate
 * is still open; random configurations and traffic, and a case built so that a later
 * arrival changes an open packet's fate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

#define MAX_PKTS 2048
#define MAX_LIST 64

/* The test's own random numbers (xorshift64*), apart from the model's streams. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int64_t rand_in(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next_rand(s) % (uint64_t)(hi - lo + 1));
}

static bool coin(uint64_t *s, unsigned percent)
{
	return next_rand(s) % 100 < percent;
}

/* Two priority classes, DSCP 46 in the first. */
static void add_router(struct sq_direction_config *dc, uint64_t *s)
{
	struct sq_router_config *rc = &dc->router;
	rc->enabled = true;
	rc->n_classes = 2;
	rc->default_class = 1;
	for (size_t i = 0; i < 2; i++) {
		snprintf(rc->classes[i].name, sizeof rc->classes[i].name, "c%zu", i);
		rc->classes[i].priority = (uint8_t)i;
		rc->classes[i].discipline = SQ_QDISC_PFIFO;
		rc->classes[i].limit = (uint32_t)rand_in(s, 2, 30);
	}
	rc->n_filters = 1;
	rc->filters[0].class_index = 0;
	rc->filters[0].dscp_mask = 1ULL << 46;
	rc->device_queue = (uint32_t)rand_in(s, 0, 3);
}

static void random_direction(struct test_link *tl, enum sq_dir dir, uint64_t *s)
{
	struct sq_direction_config *dc = &tl->cfg.dir[dir];
	dc->delay = coin(s, 20) ? 0 : rand_in(s, 0, 100000);
	dc->arq_retransmissions = coin(s, 30) ? 0 : (uint32_t)rand_in(s, 1, 3);
	dc->arq_delay = rand_in(s, 1000, 200000);
	dc->error[SQ_GOOD] = (double)rand_in(s, 0, 30) / 100.0;
	dc->error[SQ_BAD] = (double)rand_in(s, 30, 100) / 100.0;
	dc->in_order = coin(s, 50);
	dc->send_buffer = (uint32_t)rand_in(s, 3000, 60000);
	dc->recv_buffer = (uint32_t)rand_in(s, 1500, 60000);
	dc->overhead = (uint32_t)rand_in(s, 0, 40);
	struct sq_rate_step steps[3];
	size_t n = (size_t)rand_in(s, 1, 3);
	sq_time_us at = 0;
	for (size_t i = 0; i < n; i++) {
		steps[i] = (struct sq_rate_step){ .at_us = at,
						  .rate_bps = (uint64_t)rand_in(s, 9600, 2000000) };
		at += rand_in(s, 1000, 2000000);
	}
	tl_set_rates(tl, dir, n, steps);
	if (coin(s, 30))
		add_router(dc, s);
}

static void random_link(struct test_link *tl, uint64_t *s)
{
	tl_defaults(tl);
	tl->cfg.seed = next_rand(s);
	for (int st = 0; st < SQ_STATES; st++)
		tl->cfg.channel.length[st] = (struct sq_dist){ .kind = SQ_DIST_EXPONENTIAL,
							       .a = rand_in(s, 5000, 500000) };
	for (int d = 0; d < SQ_DIRS; d++)
		random_direction(tl, (enum sq_dir)d, s);
}

/* What the queries said: per packet id its out time (0: never reported) and how often
 * the cursor-driven caller saw it. */
struct claims {
	sq_time_us t[MAX_PKTS];
	enum sq_dir dir[MAX_PKTS];
	unsigned by_cursor[MAX_PKTS];
	struct sq_decided_out cursor[SQ_DIRS];
	bool cursor_set[SQ_DIRS];
	size_t reported;
};

static void check_list(const struct sq_decided_out *l, size_t n, sq_time_us now,
		       sq_time_us until, const struct sq_decided_out *after)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(l[i].t > now);
		assert_true(l[i].t <= until);
		assert_true(l[i].pkt_id > 0 && l[i].pkt_id < MAX_PKTS);
		if (after)
			assert_true(l[i].t > after->t || (l[i].t == after->t && l[i].order > after->order));
		if (i > 0)
			assert_true(l[i].t > l[i - 1].t ||
				    (l[i].t == l[i - 1].t && l[i].order > l[i - 1].order));
	}
}

static void claim(struct claims *c, enum sq_dir dir, const struct sq_decided_out *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id = l[i].pkt_id;
		if (c->t[id] != 0) {
			assert_int_equal(c->t[id], l[i].t);   /* a decided time never moves */
			assert_int_equal(c->dir[id], dir);
		}
		c->t[id] = l[i].t;
		c->dir[id] = dir;
		c->reported++;
	}
}

/* One query as a plain caller makes it: from the start, a random horizon and size. */
static void query_plain(struct sq_model *m, enum sq_dir dir, sq_time_us now, uint64_t *s,
			struct claims *c)
{
	struct sq_decided_out l[MAX_LIST];
	sq_time_us until = coin(s, 10) ? SQ_TIME_NEVER - 1 : now + rand_in(s, 0, 400000);
	size_t cap = (size_t)rand_in(s, 0, MAX_LIST);
	size_t n = sq_model_decided_outs(m, dir, NULL, until, l, cap);
	assert_true(n <= cap);
	check_list(l, n, now, until, NULL);
	claim(c, dir, l, n);
}

/* As the emulator uses it: everything after the last one taken, in small pages. */
static void query_cursor(struct sq_model *m, enum sq_dir dir, sq_time_us now, uint64_t *s,
			 struct claims *c)
{
	struct sq_decided_out l[4];
	sq_time_us until = now + rand_in(s, 0, 50000);
	size_t n;
	do {
		const struct sq_decided_out *after = c->cursor_set[dir] ? &c->cursor[dir] : NULL;
		n = sq_model_decided_outs(m, dir, after, until, l, 4);
		check_list(l, n, now, until, after);
		claim(c, dir, l, n);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(++c->by_cursor[l[i].pkt_id], 1);
		if (n > 0) {
			c->cursor[dir] = l[n - 1];
			c->cursor_set[dir] = true;
		}
	} while (n == 4);
}

/* What the events say of each packet so far: its latest attempt succeeded (a tx without a
 * hit), and whether it is out. */
struct seen {
	size_t next_event;
	bool success[MAX_PKTS], out[MAX_PKTS], dropped[MAX_PKTS];
	enum sq_dir dir[MAX_PKTS];
	uint64_t sent[SQ_DIRS][MAX_PKTS];   /* ids in transmission order (first tx) */
	size_t n_sent[SQ_DIRS];
};

static void follow_events(struct seen *s, const struct recorder *r)
{
	for (; s->next_event < r->n; s->next_event++) {
		const struct sq_event *ev = &r->ev[s->next_event];
		if (ev->pkt_id == 0 || ev->pkt_id >= MAX_PKTS)
			continue;
		s->dir[ev->pkt_id] = ev->dir;
		if (ev->type == SQ_EV_TX && ev->attempt == 0)
			s->sent[ev->dir][s->n_sent[ev->dir]++] = ev->pkt_id;
		if (ev->type == SQ_EV_TX)
			s->success[ev->pkt_id] = true;
		else if (ev->type == SQ_EV_DROP_ERR)
			s->dropped[ev->pkt_id] = true;
		else if (ev->type == SQ_EV_HIT)
			s->success[ev->pkt_id] = false;
		else if (ev->type == SQ_EV_OUT)
			s->out[ev->pkt_id] = true;
	}
}

/* In order, the packets not yet out or dropped, in transmission order, up to the first
 * whose latest attempt failed (or is not drawn); out of order, every such packet whose
 * success has been drawn. */
static void expected_decided(const struct seen *s, enum sq_dir dir, bool in_order, bool *expect)
{
	memset(expect, 0, MAX_PKTS * sizeof *expect);
	for (size_t i = 0; i < s->n_sent[dir]; i++) {
		uint64_t id = s->sent[dir][i];
		if (s->out[id] || s->dropped[id])
			continue;
		if (!s->success[id] && in_order)
			return;
		expect[id] = s->success[id];
	}
}

/* Nothing decided is left out: the query lists exactly what the events so far decide. */
static void check_complete(struct sq_model *m, enum sq_dir dir, bool in_order, struct seen *s,
			   const struct recorder *r)
{
	static struct sq_decided_out all[MAX_PKTS];
	static bool listed[MAX_PKTS], expect[MAX_PKTS];
	follow_events(s, r);
	size_t n = sq_model_decided_outs(m, dir, NULL, SQ_TIME_NEVER - 1, all, MAX_PKTS);
	memset(listed, 0, sizeof listed);
	for (size_t i = 0; i < n; i++)
		listed[all[i].pkt_id] = true;
	expected_decided(s, dir, in_order, expect);
	for (uint64_t id = 1; id < MAX_PKTS; id++) {
		if (expect[id] != listed[id])
			fail_msg("%s packet %llu: decided by the events %d, reported %d",
				 in_order ? "in order" : "out of order", (unsigned long long)id, expect[id],
				 listed[id]);
	}
}

static void arrive_random(struct sq_model *m, sq_time_us t, uint64_t *s)
{
	struct sq_pkt_meta meta = { .ip_len = (uint32_t)rand_in(s, 40, 1500), .proto = 17,
				    .dscp = coin(s, 30) ? 46 : 0 };
	enum sq_dir dir = coin(s, 60) ? SQ_DOWN : SQ_UP;
	assert_true(sq_model_arrive(m, dir, t, &meta, NULL) > 0);
}

/* Every claimed packet went out, in the claimed direction, exactly at the claimed time. */
static void check_claims(const struct recorder *r, const struct claims *c)
{
	for (uint64_t id = 1; id < MAX_PKTS; id++) {
		if (c->t[id] == 0)
			continue;
		long i = rec_find(r, SQ_EV_OUT, c->dir[id], id, -1);
		if (i < 0)
			fail_msg("packet %llu reported decided (out at %lld) never went out",
				 (unsigned long long)id, (long long)c->t[id]);
		if (r->ev[i].t != c->t[id])
			fail_msg("packet %llu reported out at %lld, went out at %lld",
				 (unsigned long long)id, (long long)c->t[id], (long long)r->ev[i].t);
	}
}

static void run_one(uint64_t *s, size_t *reported)
{
	struct test_link tl;
	random_link(&tl, s);
	struct recorder rec = { 0 };
	struct sq_model *m = tl_model(&tl, &rec);
	struct claims *c = test_calloc(1, sizeof *c);
	struct seen *seen = test_calloc(1, sizeof *seen);
	sq_time_us t = 0;
	for (int step = 0; step < 1500; step++) {
		t += coin(s, 10) ? 0 : rand_in(s, 0, 30000);
		if (coin(s, 60) && sq_model_pending(m) < 400)
			arrive_random(m, t, s);
		else
			sq_model_advance(m, t);
		for (int d = 0; d < SQ_DIRS; d++) {
			if (coin(s, 50))
				query_plain(m, (enum sq_dir)d, t, s, c);
			query_cursor(m, (enum sq_dir)d, t, s, c);
			check_complete(m, (enum sq_dir)d, tl.cfg.dir[d].in_order, seen, &rec);
		}
	}
	sq_model_advance(m, t + 3600LL * 1000000);
	check_claims(&rec, c);
	*reported += c->reported;
	test_free(seen);
	test_free(c);
	sq_model_free(m);
	rec_release(&rec);
}

static void whatever_is_reported_goes_out_then(void **state)
{
	(void)state;
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t reported = 0;
	for (int trial = 0; trial < 60; trial++)
		run_one(&s, &reported);
	assert_true(reported > 10000);   /* the property was really exercised */
}

/* ---- a later arrival changes an open packet's fate ---------------------------------- */

/* Down only, the channel always good with error 0.5, one retransmission 100 ms later,
 * in order. Packet A arrives at 0; in the second run B arrives at 50 ms, so B's first
 * attempt takes the draw A's retransmission would have taken. */
static void fate_link(struct test_link *tl, uint64_t seed)
{
	tl_defaults(tl);
	tl->cfg.seed = seed;
	struct sq_direction_config *d = &tl->cfg.dir[SQ_DOWN];
	d->error[SQ_GOOD] = 0.5;
	d->arq_retransmissions = 1;
	d->arq_delay = 100000;
	d->delay = 5000;
}

static bool went_out(const struct recorder *r, uint64_t id)
{
	return rec_find(r, SQ_EV_OUT, SQ_DOWN, id, -1) >= 0;
}

static size_t decided_down(struct sq_model *m, struct sq_decided_out *l)
{
	return sq_model_decided_outs(m, SQ_DOWN, NULL, SQ_TIME_NEVER - 1, l, MAX_LIST);
}

static void an_arrival_that_changes_a_fate_was_not_reported(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed < 1000; seed++) {
		struct test_link tl;
		fate_link(&tl, seed);
		struct recorder alone = { 0 }, with_b = { 0 };
		struct sq_model *m1 = tl_model(&tl, &alone);
		struct sq_model *m2 = tl_model(&tl, &with_b);
		uint64_t a = tl_send(m1, SQ_DOWN, 0, 100);
		assert_int_equal(tl_send(m2, SQ_DOWN, 0, 100), a);
		uint64_t b = tl_send(m2, SQ_DOWN, 50000, 100);
		sq_model_advance(m1, 50000);
		bool a_hit = rec_find(&alone, SQ_EV_HIT, SQ_DOWN, a, 0) >= 0;
		struct sq_decided_out l[MAX_LIST];
		/* Until A's retransmission is drawn nothing of it, nor behind it, is decided. */
		size_t n1 = decided_down(m1, l);
		size_t n2 = decided_down(m2, l);
		sq_model_advance(m1, 10000000);
		sq_model_advance(m2, 10000000);
		bool differs = went_out(&alone, a) != went_out(&with_b, a);
		bool b_out = went_out(&with_b, b);
		sq_model_free(m1);
		sq_model_free(m2);
		rec_release(&alone);
		rec_release(&with_b);
		if (!a_hit)
			continue;
		assert_int_equal(n1, 0);
		assert_int_equal(n2, 0);
		if (differs && b_out)
			return;   /* the case exists, and neither run reported A or B early */
	}
	fail_msg("no seed below 1000 made B's arrival change A's fate");
}

/* A is hit in a bad first 10 ms and retransmitted at 100 ms; B, sent in the good state
 * behind it, arrives at 30 ms and waits. Both open until A's retransmission is drawn; then
 * both decided, B at A's out time. */
static void a_packet_held_behind_a_decided_one_is_decided_with_it(void **state)
{
	(void)state;
	struct test_link tl;
	fate_link(&tl, 1);
	struct sq_direction_config *d = &tl.cfg.dir[SQ_DOWN];
	d->error[SQ_GOOD] = 0.0;
	d->error[SQ_BAD] = 1.0;
	tl.cfg.channel.initial_state = SQ_BAD;
	tl.cfg.channel.length[SQ_BAD].a = 10000;
	struct recorder rec = { 0 };
	struct sq_model *m = tl_model(&tl, &rec);
	uint64_t a = tl_send(m, SQ_DOWN, 0, 100);
	uint64_t b = tl_send(m, SQ_DOWN, 0, 100);
	struct sq_decided_out l[MAX_LIST];
	sq_model_advance(m, 99999);
	assert_true(rec_find(&rec, SQ_EV_RECV, SQ_DOWN, b, 0) >= 0);   /* B is held */
	assert_int_equal(decided_down(m, l), 0);
	sq_model_advance(m, 100000);
	assert_int_equal(decided_down(m, l), 2);
	assert_int_equal(l[0].pkt_id, a);
	assert_int_equal(l[0].t, 100000 + 12500 + 5000);
	assert_int_equal(l[1].pkt_id, b);
	assert_int_equal(l[1].t, 100000 + 12500 + 5000);
	/* A cap of one gives the first; asking after it, the second. */
	assert_int_equal(sq_model_decided_outs(m, SQ_DOWN, NULL, SQ_TIME_NEVER - 1, l, 1), 1);
	assert_int_equal(l[0].pkt_id, a);
	struct sq_decided_out first = l[0];
	assert_int_equal(sq_model_decided_outs(m, SQ_DOWN, &first, SQ_TIME_NEVER - 1, l, 1), 1);
	assert_int_equal(l[0].pkt_id, b);
	assert_int_equal(sq_model_decided_outs(m, SQ_DOWN, &l[0], SQ_TIME_NEVER - 1, l, 1), 0);
	/* until cuts at the time. */
	assert_int_equal(sq_model_decided_outs(m, SQ_DOWN, NULL, 117499, l, MAX_LIST), 0);
	assert_int_equal(sq_model_decided_outs(m, SQ_DOWN, NULL, 117500, l, MAX_LIST), 2);
	sq_model_advance(m, 117500);
	assert_int_equal(rec_time(&rec, SQ_EV_OUT, SQ_DOWN, b, -1), 117500);
	assert_int_equal(decided_down(m, l), 0);
	sq_model_free(m);
	rec_release(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whatever_is_reported_goes_out_then),
		cmocka_unit_test(an_arrival_that_changes_a_fate_was_not_reported),
		cmocka_unit_test(a_packet_held_behind_a_decided_one_is_decided_with_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
