/* Differential test: the link model against a deliberately naive reference
 * simulator on random links and traffic.
 *
 * The reference re-derives every packet's fate by scanning all packets at
 * each instant of interest (O(n) per step, no heap, no ring) and computes
 * serialisation by consuming the rate one microsecond at a time. Error
 * probabilities are 0 or 1 so outcomes follow from the channel timeline alone.
 * ARQ delay and propagation delay are >= 1 us here, so no action falls on the
 * instant that created it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"
#include "test_model_support.h"

#define PKTS 60            /* both directions together */
#define MAX_ATTEMPTS 4
#define NONE (-1)

enum fate { F_PENDING, F_OUT, F_DROP_MTU, F_DROP_SBUF, F_DROP_ERR };

struct rpkt {
	sq_time_us arrival;
	enum sq_dir dir;
	uint32_t len;
	/* results */
	enum fate fate;
	sq_time_us end_t;                 /* time of out or drop */
	sq_time_us tx[MAX_ATTEMPTS];      /* attempt start times, NONE if no attempt */
	sq_time_us recv;
	/* reference state */
	bool queued, started, held;
	sq_time_us ser_end, next_attempt, recv_due;
	uint32_t attempt;
};

struct run {
	struct test_link tl;
	struct rpkt p[PKTS];
	sq_time_us stalls[SQ_DIRS][PKTS], resumes[SQ_DIRS][PKTS];
	size_t n_stall[SQ_DIRS], n_resume[SQ_DIRS];
};

/* ---- random scenario ----------------------------------------------------------- */

static uint64_t next_rand(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

static sq_time_us pick(uint64_t *x, sq_time_us lo, sq_time_us hi)
{
	return lo + (sq_time_us)(next_rand(x) % (uint64_t)(hi - lo + 1));
}

static void random_direction(struct run *r, enum sq_dir d, uint64_t *x)
{
	struct sq_direction_config *c = &r->tl.cfg.dir[d];
	static const uint64_t rates[] = { 0, 256000, 512000, 2000000 };
	struct sq_rate_step steps[3];
	size_t n = (size_t)pick(x, 1, 3);
	sq_time_us at = 0;
	for (size_t i = 0; i < n; i++) {
		steps[i].at_us = at;
		/* outages only in the middle: the schedule must end with a rate */
		steps[i].rate_bps = rates[pick(x, i + 1 == n ? 1 : 0, 3)];
		at += pick(x, 1, 400000);
	}
	tl_set_rates(&r->tl, d, n, steps);
	c->mtu = (uint32_t)pick(x, 600, 1500);
	c->send_buffer = (uint32_t)pick(x, c->mtu, 8000);    /* at least a packet of the MTU */
	c->recv_buffer = (uint32_t)pick(x, 300, 6000);
	c->overhead = (uint32_t)pick(x, 0, 40);
	c->delay = pick(x, 1, 60000);
	c->arq_delay = pick(x, 1, 150000);
	c->arq_retransmissions = (uint32_t)pick(x, 0, MAX_ATTEMPTS - 1);
	c->error[SQ_GOOD] = pick(x, 0, 4) == 0 ? 1.0 : 0.0;
	c->error[SQ_BAD] = pick(x, 0, 4) == 0 ? 0.0 : 1.0;
	c->in_order = pick(x, 0, 3) != 0;
}

static void random_run(struct run *r, uint64_t seed)
{
	memset(r, 0, sizeof *r);
	tl_defaults(&r->tl);
	uint64_t x = seed;
	r->tl.cfg.seed = seed;
	struct sq_channel_config *ch = &r->tl.cfg.channel;
	ch->initial_state = pick(&x, 0, 1) ? SQ_BAD : SQ_GOOD;
	ch->length[SQ_GOOD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 1, .b = pick(&x, 1, 300000) };
	ch->length[SQ_BAD] = (struct sq_dist){ .kind = SQ_DIST_UNIFORM, .a = 1, .b = pick(&x, 1, 200000) };
	for (int d = 0; d < SQ_DIRS; d++)
		random_direction(r, (enum sq_dir)d, &x);
	sq_time_us t = 0;
	for (int i = 0; i < PKTS; i++) {
		t += pick(&x, 0, 3) == 0 ? 0 : pick(&x, 0, 30000);   /* some at the same instant */
		r->p[i].arrival = t;
		r->p[i].dir = pick(&x, 0, 1) ? SQ_UP : SQ_DOWN;
		r->p[i].len = (uint32_t)pick(&x, 20, 1600);
	}
}

/* ---- the reference ----------------------------------------------------------------- */

static uint64_t rate_at(const struct sq_direction_config *c, sq_time_us t)
{
	uint64_t r = c->rate[0].rate_bps;
	for (size_t i = 0; i < c->rate_len && c->rate[i].at_us <= t; i++)
		r = c->rate[i].rate_bps;
	return r;
}

/* Consumes the rate one microsecond at a time. */
static sq_time_us ref_serialisation_end(const struct sq_direction_config *c, sq_time_us t0,
					uint64_t bytes)
{
	int64_t work = (int64_t)(bytes * 8 * 1000000);
	sq_time_us t = t0;
	while (work > 0)
		work -= (int64_t)rate_at(c, t++);
	return t;
}

struct ref_dir {
	struct run *r;
	enum sq_dir d;
	const struct sq_direction_config *c;
	struct sq_channel *ch;
	bool busy, stalled;
	int serialising;
	uint32_t sbuf;
};

static bool resolved(const struct rpkt *p)
{
	return p->fate != F_PENDING;
}

static bool mine(const struct ref_dir *rd, int i)
{
	return rd->r->p[i].dir == rd->d;
}

/* All earlier started packets of this direction are out or dropped. */
static bool earlier_all_resolved(const struct ref_dir *rd, int i)
{
	for (int j = 0; j < i; j++)
		if (mine(rd, j) && rd->r->p[j].started && !resolved(&rd->r->p[j]))
			return false;
	return true;
}

static void finish(struct rpkt *p, enum fate f, sq_time_us t)
{
	p->fate = f;
	p->end_t = t;
	p->held = false;
}

static void release_held(struct ref_dir *rd, sq_time_us t)
{
	for (int i = 0; i < PKTS; i++)
		if (mine(rd, i) && rd->r->p[i].held && earlier_all_resolved(rd, i))
			finish(&rd->r->p[i], F_OUT, t);
}

static void ref_attempt(struct ref_dir *rd, struct rpkt *p, sq_time_us t)
{
	p->tx[p->attempt] = t;
	p->next_attempt = NONE;
	bool hit = rd->c->error[sq_channel_state_at(rd->ch, t)] == 1.0;
	if (!hit) {
		p->recv_due = t + (p->ser_end - p->tx[0]) + rd->c->delay;
		return;
	}
	if (p->attempt < rd->c->arq_retransmissions) {
		p->attempt++;
		p->next_attempt = t + rd->c->arq_delay;
		return;
	}
	finish(p, F_DROP_ERR, t);
	release_held(rd, t);
}

static uint64_t outstanding(const struct ref_dir *rd)
{
	uint64_t sum = 0;
	for (int i = 0; i < PKTS; i++)
		if (mine(rd, i) && rd->r->p[i].started && !resolved(&rd->r->p[i]))
			sum += rd->r->p[i].len;
	return sum;
}

static void ref_try_start(struct ref_dir *rd, sq_time_us t)
{
	if (rd->busy)
		return;
	int head = -1;
	for (int i = 0; i < PKTS && head < 0; i++)
		if (mine(rd, i) && rd->r->p[i].queued && !rd->r->p[i].started)
			head = i;
	if (head < 0)
		return;
	struct rpkt *p = &rd->r->p[head];
	uint64_t out = outstanding(rd);
	if (rd->c->in_order && out > 0 && out + p->len > rd->c->recv_buffer) {
		if (!rd->stalled)
			rd->r->stalls[rd->d][rd->r->n_stall[rd->d]++] = t;
		rd->stalled = true;
		return;
	}
	if (rd->stalled)
		rd->r->resumes[rd->d][rd->r->n_resume[rd->d]++] = t;
	rd->stalled = false;
	p->started = true;
	p->ser_end = ref_serialisation_end(rd->c, t, (uint64_t)p->len + rd->c->overhead);
	rd->busy = true;
	rd->serialising = head;
	ref_attempt(rd, p, t);
}

static void ref_arrive(struct ref_dir *rd, struct rpkt *p, sq_time_us t)
{
	if (p->len > rd->c->mtu) {
		finish(p, F_DROP_MTU, t);
		return;
	}
	if (rd->sbuf + p->len > rd->c->send_buffer) {
		finish(p, F_DROP_SBUF, t);
		return;
	}
	p->queued = true;
	rd->sbuf += p->len;
	ref_try_start(rd, t);
}

static sq_time_us ref_next_time(const struct ref_dir *rd, sq_time_us after)
{
	sq_time_us best = SQ_TIME_NEVER;
	for (int i = 0; i < PKTS; i++) {
		const struct rpkt *p = &rd->r->p[i];
		if (!mine(rd, i))
			continue;
		sq_time_us cands[] = { p->queued || resolved(p) ? NONE : p->arrival,
				       resolved(p) ? NONE : p->next_attempt,
				       resolved(p) || p->held ? NONE : p->recv_due };
		for (size_t k = 0; k < 3; k++)
			if (cands[k] >= after && cands[k] < best)
				best = cands[k];
	}
	if (rd->busy && rd->r->p[rd->serialising].ser_end < best)
		best = rd->r->p[rd->serialising].ser_end;
	return best;
}

static void ref_step(struct ref_dir *rd, sq_time_us t)
{
	struct rpkt *p = rd->r->p;
	for (int i = 0; i < PKTS; i++) {
		if (!mine(rd, i) || resolved(&p[i]) || p[i].held || p[i].recv_due != t)
			continue;
		p[i].recv = t;
		p[i].recv_due = NONE;
		if (!rd->c->in_order || earlier_all_resolved(rd, i)) {
			finish(&p[i], F_OUT, t);
			release_held(rd, t);
		} else {
			p[i].held = true;
		}
	}
	for (int i = 0; i < PKTS; i++)
		if (mine(rd, i) && !resolved(&p[i]) && p[i].next_attempt == t)
			ref_attempt(rd, &p[i], t);
	if (rd->busy && p[rd->serialising].ser_end == t) {
		rd->busy = false;
		rd->sbuf -= p[rd->serialising].len;
	}
	ref_try_start(rd, t);
	for (int i = 0; i < PKTS; i++)
		if (mine(rd, i) && !p[i].queued && !resolved(&p[i]) && p[i].arrival == t)
			ref_arrive(rd, &p[i], t);
}

static void run_reference(struct run *r)
{
	for (int i = 0; i < PKTS; i++) {
		r->p[i].recv = r->p[i].recv_due = r->p[i].next_attempt = NONE;
		for (int k = 0; k < MAX_ATTEMPTS; k++)
			r->p[i].tx[k] = NONE;
	}
	for (int d = 0; d < SQ_DIRS; d++) {
		char err[200];
		struct ref_dir rd = { .r = r, .d = (enum sq_dir)d, .c = &r->tl.cfg.dir[d] };
		rd.ch = sq_channel_new(&r->tl.cfg.channel, r->tl.cfg.seed, r->tl.cfg.replication, err,
				       sizeof err);
		assert_non_null(rd.ch);
		for (sq_time_us t = 0; (t = ref_next_time(&rd, t)) != SQ_TIME_NEVER; t++)
			ref_step(&rd, t);
		sq_channel_free(rd.ch);
	}
}

/* ---- comparison with the model -------------------------------------------------- */

static enum fate fate_of(enum sq_event_type type)
{
	switch (type) {
	case SQ_EV_OUT: return F_OUT;
	case SQ_EV_DROP_MTU: return F_DROP_MTU;
	case SQ_EV_DROP_SBUF: return F_DROP_SBUF;
	case SQ_EV_DROP_ERR: return F_DROP_ERR;
	default: return F_PENDING;
	}
}

static void compare_packet(const struct recorder *rec, const struct rpkt *p, uint64_t id,
			   uint64_t seed)
{
	enum fate got = F_PENDING;
	sq_time_us got_t = NONE, got_recv = NONE, got_tx[MAX_ATTEMPTS];
	for (int k = 0; k < MAX_ATTEMPTS; k++)
		got_tx[k] = NONE;
	for (size_t i = 0; i < rec->n; i++) {
		const struct sq_event *e = &rec->ev[i];
		if (e->pkt_id != id)
			continue;
		if (fate_of(e->type) != F_PENDING) {
			got = fate_of(e->type);
			got_t = e->t;
		}
		if (e->type == SQ_EV_TX)
			got_tx[e->attempt] = e->t;
		if (e->type == SQ_EV_RECV)
			got_recv = e->t;
	}
	if (got != p->fate || got_t != p->end_t || got_recv != p->recv)
		fail_msg("seed %llu packet %llu (%s): model fate %d at %lld recv %lld, reference fate %d "
			 "at %lld recv %lld", (unsigned long long)seed, (unsigned long long)id,
			 sq_dir_name(p->dir), got, (long long)got_t, (long long)got_recv, p->fate,
			 (long long)p->end_t, (long long)p->recv);
	for (int k = 0; k < MAX_ATTEMPTS; k++)
		if (got_tx[k] != p->tx[k])
			fail_msg("seed %llu packet %llu attempt %d: model tx at %lld, reference at %lld",
				 (unsigned long long)seed, (unsigned long long)id, k,
				 (long long)got_tx[k], (long long)p->tx[k]);
}

static void compare_times(const struct recorder *rec, enum sq_event_type type, enum sq_dir d,
			  const sq_time_us *want, size_t n, uint64_t seed)
{
	size_t k = 0;
	for (size_t i = 0; i < rec->n; i++) {
		const struct sq_event *e = &rec->ev[i];
		if (e->type != type || e->dir != d)
			continue;
		if (k >= n || e->t != want[k])
			fail_msg("seed %llu: %s %s number %zu at %lld, reference %s", (unsigned long long)seed,
				 sq_dir_name(d), sq_event_name(type), k, (long long)e->t,
				 k < n ? "differs" : "has none");
		k++;
	}
	assert_int_equal(k, n);
}

static void model_matches_the_reference_on_random_links(void **state)
{
	(void)state;
	static struct run r;
	size_t outs = 0, errs = 0, sbufs = 0, stalls = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		random_run(&r, seed);
		struct recorder rec = { 0 };
		struct sq_model *m = tl_model(&r.tl, &rec);
		for (int i = 0; i < PKTS; i++)
			assert_int_equal(tl_send(m, r.p[i].dir, r.p[i].arrival, r.p[i].len), i + 1);
		sq_model_advance(m, 60000000);
		run_reference(&r);
		for (int i = 0; i < PKTS; i++) {
			compare_packet(&rec, &r.p[i], (uint64_t)i + 1, seed);
			outs += r.p[i].fate == F_OUT;
			errs += r.p[i].fate == F_DROP_ERR;
			sbufs += r.p[i].fate == F_DROP_SBUF;
		}
		for (int d = 0; d < SQ_DIRS; d++) {
			compare_times(&rec, SQ_EV_STALL, d, r.stalls[d], r.n_stall[d], seed);
			compare_times(&rec, SQ_EV_RESUME, d, r.resumes[d], r.n_resume[d], seed);
			stalls += r.n_stall[d];
		}
		rec_assert_ordered(&rec);
		sq_model_free(m);
		rec_release(&rec);
	}
	/* The random runs must exercise every path, or the comparison proves little. */
	assert_true(outs > 500);
	assert_true(errs > 50);
	assert_true(sbufs > 50);
	assert_true(stalls > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_matches_the_reference_on_random_links),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
