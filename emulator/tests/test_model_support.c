#include "test_model_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void tl_defaults(struct test_link *tl)
{
	memset(tl, 0, sizeof *tl);
	struct sq_link_config *c = &tl->cfg;
	c->channel.initial_state = SQ_GOOD;
	for (int s = 0; s < SQ_STATES; s++)
		c->channel.length[s] = (struct sq_dist){ .kind = SQ_DIST_FIXED, .a = TL_FOREVER };
	for (int d = 0; d < SQ_DIRS; d++) {
		struct sq_direction_config *dc = &c->dir[d];
		tl->rate[d][0] = (struct sq_rate_step){ .at_us = 0, .rate_bps = 64000 };
		dc->rate = tl->rate[d];
		dc->rate_len = 1;
		dc->mtu = 1500;
		dc->send_buffer = 100000;
		dc->recv_buffer = 100000;
		dc->in_order = true;
	}
	c->seed = 42;
	c->replication = 1;
}

void tl_set_rates(struct test_link *tl, enum sq_dir dir, size_t n, const struct sq_rate_step *steps)
{
	assert_true(n <= TL_MAX_RATE_STEPS);
	memcpy(tl->rate[dir], steps, n * sizeof *steps);
	tl->cfg.dir[dir].rate_len = n;
}

void tl_set_trace(struct test_link *tl, size_t n, const struct sq_trace_step *steps)
{
	assert_true(n <= TL_MAX_TRACE);
	memcpy(tl->trace, steps, n * sizeof *steps);
	tl->cfg.channel.trace = tl->trace;
	tl->cfg.channel.trace_len = n;
}

void rec_sink(void *ctx, const struct sq_event *ev)
{
	struct recorder *r = ctx;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
		assert_non_null(r->ev);
	}
	r->ev[r->n++] = *ev;
}

void rec_release(struct recorder *r)
{
	free(r->ev);
	memset(r, 0, sizeof *r);
}

struct sq_model *tl_model(const struct test_link *tl, struct recorder *r)
{
	char err[256] = "";
	struct sq_model *m = sq_model_new(&tl->cfg, rec_sink, r, err, sizeof err);
	if (!m)
		fail_msg("sq_model_new refused the test config: %s", err);
	return m;
}

long rec_find(const struct recorder *r, enum sq_event_type type, enum sq_dir dir, uint64_t pkt_id,
	      long attempt)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct sq_event *e = &r->ev[i];
		if (e->type == type && (type == SQ_EV_STATE || e->dir == dir) &&
		    (pkt_id == 0 || e->pkt_id == pkt_id) && (attempt < 0 || e->attempt == (uint32_t)attempt))
			return (long)i;
	}
	return -1;
}

const struct sq_event *rec_event(const struct recorder *r, enum sq_event_type type,
				 enum sq_dir dir, uint64_t pkt_id, long attempt)
{
	long i = rec_find(r, type, dir, pkt_id, attempt);
	if (i < 0)
		fail_msg("no %s event for %s packet %llu attempt %ld", sq_event_name(type),
			 sq_dir_name(dir), (unsigned long long)pkt_id, attempt);
	return &r->ev[i];
}

sq_time_us rec_time(const struct recorder *r, enum sq_event_type type, enum sq_dir dir,
		    uint64_t pkt_id, long attempt)
{
	return rec_event(r, type, dir, pkt_id, attempt)->t;
}

size_t rec_count(const struct recorder *r, enum sq_event_type type)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->ev[i].type == type;
	return n;
}

long rec_first_difference(const struct recorder *a, const struct recorder *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++) {
		const struct sq_event *x = &a->ev[i], *y = &b->ev[i];
		if (x->t != y->t || x->type != y->type || x->dir != y->dir ||
		    x->pkt_id != y->pkt_id || x->ip_len != y->ip_len || x->state != y->state ||
		    x->attempt != y->attempt || x->sbuf != y->sbuf || x->rbuf != y->rbuf ||
		    x->router_class != y->router_class)
			return (long)i;
	}
	return a->n == b->n ? -1 : (long)n;
}

void rec_assert_ordered(const struct recorder *r)
{
	for (size_t i = 1; i < r->n; i++)
		if (r->ev[i].t < r->ev[i - 1].t)
			fail_msg("event %zu (%s at %lld) comes after one at %lld", i,
				 sq_event_name(r->ev[i].type), (long long)r->ev[i].t,
				 (long long)r->ev[i - 1].t);
}

int mf_setup(void **state)
{
	struct model_fixture *f = test_calloc(1, sizeof *f);
	tl_defaults(&f->tl);
	*state = f;
	return 0;
}

int mf_teardown(void **state)
{
	struct model_fixture *f = *state;
	sq_model_free(f->m);
	rec_release(&f->rec);
	test_free(f);
	return 0;
}

uint64_t tl_send(struct sq_model *m, enum sq_dir dir, sq_time_us t, uint32_t ip_len)
{
	struct sq_pkt_meta meta = { .ip_len = ip_len, .proto = 17 };
	uint64_t id = sq_model_arrive(m, dir, t, &meta, NULL);
	assert_true(id > 0);
	return id;
}
