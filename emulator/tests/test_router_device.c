/* Seawind's queue structure in the link model, in virtual time: the router's class
 * queues in front of an optional device queue (device_queue packets, like the 2.4
 * tun read queue) in front of the link's send buffer. The router holds packets
 * while the send buffer and the device queue are full, ARQ stalls included, and a
 * priority class is never dropped behind a full send buffer while lower classes
 * queue. The exact event sequences are pinned (LINK_MODEL.md "The device queue"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_model_support.h"

enum { TCP = 6, UDP = 17, CLASS_UDP = 0, CLASS_TCP = 1 };

#define fixture model_fixture

static struct sq_router_class *add_class(struct sq_router_config *rc, const char *name,
					 uint8_t priority, uint32_t limit)
{
	struct sq_router_class *c = &rc->classes[rc->n_classes++];
	snprintf(c->name, sizeof c->name, "%s", name);
	c->discipline = SQ_QDISC_PFIFO;
	c->priority = priority;
	c->limit = limit;
	return c;
}

/* One tail-drop class of `limit` packets behind which `device` packets wait in front
 * of a send buffer of three 1000 B packets; 64 kbit/s: 1000 B take 125 000 us. */
static void one_class(struct fixture *f, uint32_t limit, uint32_t device)
{
	struct sq_router_config *rc = &f->tl.cfg.dir[SQ_DOWN].router;
	rc->enabled = true;
	add_class(rc, "all", 0, limit);
	rc->device_queue = device;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 3000;
}

/* Seawind's mixture router with DiffServ: UDP first (strict priority), TCP second. */
static void udp_over_tcp(struct fixture *f, uint32_t udp_limit, uint32_t tcp_limit, uint32_t device)
{
	struct sq_router_config *rc = &f->tl.cfg.dir[SQ_DOWN].router;
	rc->enabled = true;
	add_class(rc, "UDP", 0, udp_limit);
	add_class(rc, "TCP", 1, tcp_limit);
	rc->default_class = CLASS_TCP;
	rc->filters[0] = (struct sq_router_filter){ .class_index = CLASS_UDP, .match_proto = true,
						    .proto = UDP };
	rc->n_filters = 1;
	rc->device_queue = device;
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 3000;
}

static uint64_t send(struct fixture *f, sq_time_us t, uint32_t len, uint8_t proto)
{
	struct sq_pkt_meta meta = { .ip_len = len, .proto = proto, .sport = 1, .dport = 2 };
	uint64_t id = sq_model_arrive(f->m, SQ_DOWN, t, &meta, NULL);
	assert_true(id > 0);
	return id;
}

/* The down direction's events as text, one per line: "time event id sbuf" (router
 * events with "/class", stall and resume without an id). */
static char *down_events(const struct recorder *r, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < r->n && len < n; i++) {
		const struct sq_event *e = &r->ev[i];
		if (e->type == SQ_EV_STATE || e->dir != SQ_DOWN)
			continue;
		int k;
		if (e->type == SQ_EV_STALL || e->type == SQ_EV_RESUME)
			k = snprintf(out + len, n - len, "%lld %s\n", (long long)e->t, sq_event_name(e->type));
		else if (e->router_class != SQ_ROUTER_NO_CLASS)
			k = snprintf(out + len, n - len, "%lld %s %llu/%u %u\n", (long long)e->t,
				     sq_event_name(e->type), (unsigned long long)e->pkt_id, e->router_class,
				     e->sbuf);
		else
			k = snprintf(out + len, n - len, "%lld %s %llu %u\n", (long long)e->t,
				     sq_event_name(e->type), (unsigned long long)e->pkt_id, e->sbuf);
		if (k < 0)
			break;
		len += (size_t)k;
	}
	return out;
}

static void assert_device(struct fixture *f, uint64_t pkts, uint64_t bytes)
{
	uint64_t p, b;
	assert_true(sq_model_device_queue(f->m, SQ_DOWN, &p, &b));
	assert_int_equal(p, pkts);
	assert_int_equal(b, bytes);
}

static uint64_t backlog(struct fixture *f, size_t cls)
{
	struct sq_router_class_stats s;
	assert_true(sq_model_router_stats(f->m, SQ_DOWN, cls, &s));
	return s.backlog_pkts;
}

/* ---- no errors: the device queue adds its packets to the router's buffering ---------- */

/* Ten 1000 B packets at t = 0 into one class of 3 packets and a device queue of `device`. */
static void ten_at_once(struct fixture *f, uint32_t device)
{
	one_class(f, 3, device);
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 0; i < 10; i++)
		send(f, 0, 1000, TCP);
}

static void test_device_queue_fills_behind_the_full_send_buffer(void **state)
{
	struct fixture *f = *state;
	ten_at_once(f, 2);
	/* 1-3 fill the send buffer, 4-5 the device queue, 6-8 the class queue (limit 3),
	 * 9-10 are dropped at the router's limit: no drop_sbuf. */
	static const char at_0[] =
		"0 in 1 0\n0 enqueue 1/0 1000\n0 tx 1 1000\n"
		"0 in 2 1000\n0 enqueue 2/0 2000\n"
		"0 in 3 2000\n0 enqueue 3/0 3000\n"
		"0 in 4 3000\n0 in 5 3000\n0 in 6 3000\n0 in 7 3000\n0 in 8 3000\n"
		"0 in 9 3000\n0 drop_router 9/0 3000\n"
		"0 in 10 3000\n0 drop_router 10/0 3000\n";
	char got[4096];
	assert_string_equal(down_events(&f->rec, got, sizeof got), at_0);
	assert_device(f, 2, 2000);
	assert_int_equal(backlog(f, 0), 3);
	/* Each end of a serialisation lets the device queue's head into the send buffer and
	 * the class queue's head into the device queue, at that instant. */
	sq_model_advance(f->m, 250000);
	assert_string_equal(down_events(&f->rec, got, sizeof got) + strlen(at_0),
		"125000 recv 1 3000\n125000 out 1 3000\n"
		"125000 enqueue 4/0 3000\n125000 tx 2 3000\n"
		"250000 recv 2 3000\n250000 out 2 3000\n"
		"250000 enqueue 5/0 3000\n250000 tx 3 3000\n");
	assert_device(f, 2, 2000);   /* 6 and 7 */
	assert_int_equal(backlog(f, 0), 1);
	sq_model_advance(f->m, 10000000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_OUT), 8);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 0);
	assert_int_equal(sq_model_pending(f->m), 0);
	assert_device(f, 0, 0);
	/* Every packet left the link 125 000 us after the one before: the device queue
	 * changes where packets wait, not when the link sends them. */
	for (uint64_t id = 1; id <= 8; id++)
		assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, id, -1), 125000 * (sq_time_us)id);
}

static void test_without_a_device_queue_the_class_feeds_the_send_buffer(void **state)
{
	struct fixture *f = *state;
	ten_at_once(f, 0);
	/* Today's router stage: 3 in the send buffer, 3 in the class, 4 dropped. */
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_ROUTER), 4);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_ENQUEUE), 3);
	assert_device(f, 0, 0);
	assert_int_equal(backlog(f, 0), 3);
	sq_model_advance(f->m, 125000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, 4, -1), 125000);
	assert_int_equal(backlog(f, 0), 2);
}

/* ---- an ARQ stall: the router holds, UDP keeps its priority ---------------------------- */

/* The first packet is hit at t = 0 (bad state) and retransmitted 700 ms later (good);
 * in order, the receive window of three packets fills behind it and the link stalls
 * from 375 000 us until the retransmission arrives at 825 000 us. */
static void arq_stall(struct fixture *f)
{
	static const struct sq_trace_step trace[] = { { SQ_BAD, 100000 }, { SQ_GOOD, TL_FOREVER } };
	tl_set_trace(&f->tl, 2, trace);
	struct sq_direction_config *dc = &f->tl.cfg.dir[SQ_DOWN];
	dc->error[SQ_BAD] = 1.0;
	dc->arq_retransmissions = 1;
	dc->arq_delay = 700000;
	dc->recv_buffer = 3000;
}

static void test_router_holds_during_an_arq_stall_and_udp_goes_first(void **state)
{
	struct fixture *f = *state;
	udp_over_tcp(f, 10, 4, 2);
	arq_stall(f);
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t u[5];
	for (int i = 1; i <= 10; i++)
		send(f, 0, 1000, TCP);                       /* ids 1-10 */
	u[0] = send(f, 400000, 100, UDP);                    /* id 11 */
	for (int i = 0; i < 4; i++)
		send(f, 450000, 1000, TCP);                  /* ids 12-15 */
	for (int i = 1; i < 5; i++)
		u[i] = send(f, 400000 + 100000 * (sq_time_us)i, 100, UDP);   /* ids 16-19 */
	sq_model_advance(f->m, 800000);
	char got[8192];
	assert_string_equal(down_events(&f->rec, got, sizeof got),
		/* 1-3 into the send buffer; 1 is hit and waits 700 ms for its retry */
		"0 in 1 0\n0 enqueue 1/1 1000\n0 tx 1 1000\n0 hit 1 1000\n"
		"0 in 2 1000\n0 enqueue 2/1 2000\n"
		"0 in 3 2000\n0 enqueue 3/1 3000\n"
		/* 4-5 into the device queue, 6-9 into the TCP class (limit 4), 10 dropped */
		"0 in 4 3000\n0 in 5 3000\n0 in 6 3000\n0 in 7 3000\n0 in 8 3000\n0 in 9 3000\n"
		"0 in 10 3000\n0 drop_router 10/1 3000\n"
		/* 2 and 3 are sent and held in the receive buffer behind 1 */
		"125000 enqueue 4/1 3000\n125000 tx 2 3000\n"
		"250000 recv 2 3000\n250000 enqueue 5/1 3000\n250000 tx 3 3000\n"
		"375000 recv 3 3000\n375000 enqueue 6/1 3000\n"
		/* the receive window is full: the link stalls, nothing moves on */
		"375000 stall\n"
		/* UDP waits in its class; TCP fills its class and is dropped at its limit */
		"400000 in 11 3000\n"
		"450000 in 12 3000\n450000 in 13 3000\n450000 in 14 3000\n"
		"450000 in 15 3000\n450000 drop_router 15/1 3000\n"
		"500000 in 16 3000\n600000 in 17 3000\n"
		"700000 tx 1 3000\n700000 in 18 3000\n"
		"800000 in 19 3000\n");
	/* During the stall: the send buffer and the device queue (7, 8) are full and the
	 * class queues hold the rest; UDP lost nothing. */
	assert_device(f, 2, 2000);
	assert_int_equal(backlog(f, CLASS_UDP), 5);
	assert_int_equal(backlog(f, CLASS_TCP), 4);
	sq_model_advance(f->m, 1200000);
	/* The retransmission arrives at 825 000: 1-3 go out, the link resumes with 4. When 4,
	 * 5 and 6 have left the send buffer, 7 and 8 (already in the device queue) enter it
	 * first; the device queue's free places go to UDP before TCP (strict priority). */
	assert_int_equal(rec_time(&f->rec, SQ_EV_OUT, SQ_DOWN, 1, 1), 825000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_RESUME, SQ_DOWN, 0, -1), 825000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_TX, SQ_DOWN, 4, 0), 825000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, 7, -1), 950000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, 8, -1), 1075000);
	for (int i = 0; i < 5; i++) {
		const struct sq_event *e = rec_event(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, u[i], -1);
		assert_int_equal(e->t, 1200000);
		assert_int_equal(e->router_class, CLASS_UDP);
	}
	assert_int_equal(rec_find(&f->rec, SQ_EV_ENQUEUE, SQ_DOWN, 9, -1), -1);   /* still waits */
	sq_model_advance(f->m, 100000000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 0);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_ROUTER), 2);   /* TCP 10 and 15 */
	for (int i = 0; i < 5; i++)
		assert_int_equal(rec_event(&f->rec, SQ_EV_OUT, SQ_DOWN, u[i], -1)->type, SQ_EV_OUT);
	assert_int_equal(sq_model_pending(f->m), 0);
	rec_assert_ordered(&f->rec);
}

/* Without a router stage the same stall overflows the send buffer: UDP is tail-dropped
 * there along with TCP. With the router stage (any device queue) it never is. */
static void test_without_a_router_the_stall_drops_udp_in_the_send_buffer(void **state)
{
	struct fixture *f = *state;
	arq_stall(f);
	f->tl.cfg.dir[SQ_DOWN].send_buffer = 3000;
	f->m = tl_model(&f->tl, &f->rec);
	for (int i = 1; i <= 10; i++)
		send(f, 0, 1000, TCP);            /* 1-3 fit, 4-10 are dropped */
	for (int i = 0; i < 3; i++)
		send(f, 380000, 1000, TCP);       /* the link has stalled: they fill the send buffer */
	uint64_t u = send(f, 400000, 100, UDP);
	sq_model_advance(f->m, 100000000);
	assert_int_equal(rec_time(&f->rec, SQ_EV_STALL, SQ_DOWN, 0, -1), 380000);
	assert_int_equal(rec_event(&f->rec, SQ_EV_DROP_SBUF, SQ_DOWN, u, -1)->t, 400000);
	assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 8);
}

/* A stall with a UDP stream (25 packets/s) and a TCP flood (400 kbit/s for 2 s):
 * the send buffer never drops, UDP included, and the TCP class drops at its limit.
 * Without a device queue the UDP class (22 packets) loses nothing. The device queue is a
 * FIFO, as the tun read queue was: the UDP packets wait behind the TCP packets already in
 * it, one place freed per departure, so under this overload a 10-packet device queue
 * makes the UDP class overflow too (5 tail drops, at its own limit, pinned here). */
static void test_udp_is_never_dropped_by_the_send_buffer(void **state)
{
	struct fixture *f = *state;
	const uint32_t devices[] = { 0, 10 };
	const uint64_t udp_drops[] = { 0, 5 };
	for (size_t k = 0; k < 2; k++) {
		sq_model_free(f->m);
		rec_release(&f->rec);
		tl_defaults(&f->tl);
		udp_over_tcp(f, 22, 22, devices[k]);
		arq_stall(f);
		f->m = tl_model(&f->tl, &f->rec);
		size_t udp = 0;
		for (sq_time_us t = 0; t < 2000000; t += 40000) {
			send(f, t, 160, UDP);
			udp++;
			send(f, t, 1000, TCP);
			send(f, t + 20000, 1000, TCP);
		}
		sq_model_advance(f->m, 100000000);
		struct sq_router_class_stats s;
		assert_true(sq_model_router_stats(f->m, SQ_DOWN, CLASS_UDP, &s));
		assert_int_equal(s.arrivals, udp);
		assert_int_equal(s.drops, udp_drops[k]);
		assert_int_equal(s.tail_drops, udp_drops[k]);
		assert_true(sq_model_router_stats(f->m, SQ_DOWN, CLASS_TCP, &s));
		assert_true(s.drops > 50);
		assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_DROP_SBUF), 0);
		assert_int_equal(sq_model_count(f->m, SQ_DOWN, SQ_EV_STALL), 1);
		assert_int_equal(sq_model_pending(f->m), 0);
	}
}

static void test_device_queue_limit_is_checked(void **state)
{
	struct fixture *f = *state;
	one_class(f, 3, SQ_ROUTER_MAX_DEVICE_QUEUE + 1);
	char err[256] = "";
	struct sq_model *m = sq_model_new(&f->tl.cfg, rec_sink, &f->rec, err, sizeof err);
	assert_null(m);
	assert_string_equal(err, "down.router.device_queue: 65537 packets is more than the limit 65536");
	f->tl.cfg.dir[SQ_DOWN].router.device_queue = SQ_ROUTER_MAX_DEVICE_QUEUE;
	f->m = tl_model(&f->tl, &f->rec);
	uint64_t p, b;
	assert_false(sq_model_device_queue(f->m, SQ_UP, &p, &b));   /* no router up */
}

#define T(name) cmocka_unit_test_setup_teardown(name, mf_setup, mf_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_device_queue_fills_behind_the_full_send_buffer),
		T(test_without_a_device_queue_the_class_feeds_the_send_buffer),
		T(test_router_holds_during_an_arq_stall_and_udp_goes_first),
		T(test_without_a_router_the_stall_drops_udp_in_the_send_buffer),
		T(test_udp_is_never_dropped_by_the_send_buffer),
		T(test_device_queue_limit_is_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
