/* The standby delivery thread (standby.h): it serves a published deadline the
 * loop thread has let pass, never one still to come, and never while the loop
 * thread holds the lock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "standby.h"

struct counter {
	_Atomic int calls;
	int64_t next;            /* what take_over returns */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t take_over(void *ctx)
{
	struct counter *c = ctx;
	atomic_fetch_add(&c->calls, 1);
	return c->next;
}

static void wait_ms(int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000 };
	nanosleep(&ts, NULL);
}

static void test_standby_serves_only_what_the_loop_thread_let_pass(void **state)
{
	(void)state;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	struct counter c = { .next = SQ_STANDBY_NEVER };
	struct sq_standby s;
	sq_standby_init(&s, 0, take_over, &c);
	char err[160];
	sq_standby_lock(&s);
	assert_true(sq_standby_start(&s, err, sizeof(err)));
	assert_true(s.cpu >= 0);

	/* A deadline 200 ms ahead: nothing to do before it. */
	sq_standby_unlock(&s, now_ns() + 200 * 1000000LL);
	wait_ms(50);
	assert_int_equal(atomic_load(&c.calls), 0);

	/* A deadline already past while the loop thread holds the lock (it is busy, or
	 * its CPU stopped in the middle): the standby must not touch anything. */
	sq_standby_lock(&s);
	atomic_store(&s.next_ns, now_ns() - 1000000);
	wait_ms(30);
	assert_int_equal(atomic_load(&c.calls), 0);

	/* The loop thread lets it go and does not come back: the standby serves it,
	 * once (take_over says nothing more is due). */
	sq_standby_unlock(&s, now_ns() - 1000000);
	for (int i = 0; i < 200 && atomic_load(&c.calls) == 0; i++)
		wait_ms(1);
	wait_ms(20);
	assert_int_equal(atomic_load(&c.calls), 1);
	assert_int_equal(s.takeovers, 1);

	sq_standby_destroy(&s);
	/* The loop thread held the lock through the 30 ms wait: counted, with the standby's holds. */
	assert_true(s.held_ns >= 30u * 1000000u);
	assert_true(s.held_ns < 5000u * 1000000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_standby_serves_only_what_the_loop_thread_let_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
