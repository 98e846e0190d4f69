/* Helpers shared by the link model's unit tests: a link config with plain
 * defaults, and a sink that records every event. */
#ifndef SQ_TEST_MODEL_SUPPORT_H
#define SQ_TEST_MODEL_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "link_model.h"

#define TL_MAX_RATE_STEPS 8
#define TL_MAX_TRACE 16
#define TL_FOREVER 1000000000000LL   /* a state length longer than any test */

/* A config that owns its arrays. Defaults: channel always good (fixed lengths
 * of TL_FOREVER), both directions 64 kbit/s, MTU 1500, send and receive
 * buffers 100 000 B, no overhead, no delay, no errors, no ARQ, in order. */
struct test_link {
	struct sq_link_config cfg;
	struct sq_rate_step rate[SQ_DIRS][TL_MAX_RATE_STEPS];
	struct sq_trace_step trace[TL_MAX_TRACE];
};

void tl_defaults(struct test_link *tl);
/* Replaces direction dir's schedule with the n (at_us, rate) pairs given. */
void tl_set_rates(struct test_link *tl, enum sq_dir dir, size_t n, const struct sq_rate_step *steps);
void tl_set_trace(struct test_link *tl, size_t n, const struct sq_trace_step *steps);

struct recorder {
	struct sq_event *ev;
	size_t n, cap;
};

void rec_sink(void *ctx, const struct sq_event *ev);
void rec_release(struct recorder *r);

/* The model for tl recording into r; fails the test if creation fails. */
struct sq_model *tl_model(const struct test_link *tl, struct recorder *r);

/* Index of the first event matching type, dir and packet id (0: any) and
 * attempt (-1: any); -1 if there is none. */
long rec_find(const struct recorder *r, enum sq_event_type type, enum sq_dir dir, uint64_t pkt_id,
	      long attempt);
/* That event, or its time; fails the test if there is none. */
const struct sq_event *rec_event(const struct recorder *r, enum sq_event_type type,
				 enum sq_dir dir, uint64_t pkt_id, long attempt);
sq_time_us rec_time(const struct recorder *r, enum sq_event_type type, enum sq_dir dir,
		    uint64_t pkt_id, long attempt);
size_t rec_count(const struct recorder *r, enum sq_event_type type);
/* Index of the first event where a and b differ in any field but user (the
 * shorter length if one is a prefix of the other); -1 if they are identical. */
long rec_first_difference(const struct recorder *a, const struct recorder *b);
/* Fails the test unless times never decrease. */
void rec_assert_ordered(const struct recorder *r);

/* A test's link, its recorder and its model, with cmocka setup and teardown: the link
 * gets tl_defaults, the test creates the model (tl_model), teardown frees it. */
struct model_fixture {
	struct test_link tl;
	struct recorder rec;
	struct sq_model *m;
};

int mf_setup(void **state);
int mf_teardown(void **state);

/* A packet of ip_len bytes arrives in dir at t; returns its id. */
uint64_t tl_send(struct sq_model *m, enum sq_dir dir, sq_time_us t, uint32_t ip_len);

#endif
