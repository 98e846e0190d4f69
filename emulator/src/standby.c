#include "standby.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock_ns.h"
#include "helper_thread.h"

/* A thread that finds the lock taken tries again this much later. */
#define RETRY_NS (20 * 1000)
/* With nothing due, the standby looks again this often. */
#define IDLE_NS (100 * 1000 * 1000)

static struct timespec timespec_of(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = timespec_of(ns);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Sleeps until `at` (CLOCK_MONOTONIC) or until the word changes from `seen`. */
static void wait_until(_Atomic uint32_t *word, uint32_t seen, int64_t at)
{
	struct timespec ts = timespec_of(at);
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen, &ts, NULL,
		FUTEX_BITSET_MATCH_ANY);
}

void sq_standby_init(struct sq_standby *s, int64_t grace_ns, int64_t (*take_over)(void *ctx), void *ctx)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->next_ns, SQ_STANDBY_NEVER);
	s->grace_ns = grace_ns;
	s->take_over = take_over;
	s->ctx = ctx;
	s->cpu = -1;
}

void sq_standby_lock(struct sq_standby *s)
{
	while (pthread_mutex_trylock(&s->lock) != 0)
		sleep_ns(RETRY_NS);
	s->locked_at = mono_ns();
}

void sq_standby_unlock(struct sq_standby *s, int64_t next_ns)
{
	s->held_ns += (uint64_t)(mono_ns() - s->locked_at);
	atomic_store_explicit(&s->next_ns, next_ns, memory_order_release);
	pthread_mutex_unlock(&s->lock);
}

static void *run_standby(void *arg)
{
	struct sq_standby *s = arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);     /* per thread; real-time threads have none anyway */
	while (!atomic_load(&s->stop)) {
		uint32_t word = atomic_load(&s->word);
		int64_t due = atomic_load_explicit(&s->next_ns, memory_order_acquire);
		int64_t now = mono_ns();
		int64_t at = due == SQ_STANDBY_NEVER ? now + IDLE_NS : due + s->grace_ns;
		if (now < at) {
			wait_until(&s->word, word, at);
			continue;
		}
		if (pthread_mutex_trylock(&s->lock) != 0) {
			sleep_ns(RETRY_NS);         /* the loop thread is at it (or its CPU stopped) */
			continue;
		}
		s->locked_at = mono_ns();
		/* Under the lock the published deadline is current: the loop thread may
		 * have served it between our look and the lock. */
		due = atomic_load_explicit(&s->next_ns, memory_order_relaxed);
		if (due != SQ_STANDBY_NEVER && mono_ns() >= due + s->grace_ns && !atomic_load(&s->stop)) {
			s->takeovers++;
			due = s->take_over(s->ctx);
		}
		sq_standby_unlock(s, due);
	}
	return NULL;
}

/* The k-th CPU of a set (k < CPU_COUNT). */
static int nth_cpu(const cpu_set_t *set, int k)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && k-- == 0)
			return c;
	return -1;
}

bool sq_standby_start(struct sq_standby *s, char *err, size_t errlen)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		snprintf(err, errlen, "sched_getaffinity: %s", strerror(errno));
		return false;
	}
	int n = CPU_COUNT(&allowed);
	if (n < 2) {
		snprintf(err, errlen, "only %d CPU usable: no standby delivery thread", n);
		return false;
	}
	/* The next CPU after the one the scheduler started us on: emulators of
	 * parallel lanes start spread over the CPUs, and so are their standbys. */
	int here = sched_getcpu(), k = 0;
	for (int i = 0; i < n; i++)
		if (nth_cpu(&allowed, i) == here)
			k = (i + 1) % n;
	int cpu = nth_cpu(&allowed, k);
	cpu_set_t loop = allowed, standby;
	CPU_CLR(cpu, &loop);
	CPU_ZERO(&standby);
	CPU_SET(cpu, &standby);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(standby), &standby);
	int rc = sq_helper_thread_start(&s->thread, &attr, run_standby, s, "sq-standby");
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the standby delivery thread: %s", strerror(rc));
		return false;
	}
	s->running = true;
	s->cpu = cpu;
	/* The loop thread keeps off the standby's CPU: one stopped CPU never holds both. */
	if ((rc = pthread_setaffinity_np(pthread_self(), sizeof(loop), &loop)) != 0)
		fprintf(stderr, "squall-emulator: note: cannot keep the event loop off CPU %d: %s\n", cpu,
			strerror(rc));
	return true;
}

void sq_standby_stop(struct sq_standby *s)
{
	if (!s->running)
		return;
	atomic_store(&s->stop, true);
	atomic_fetch_add(&s->word, 1);
	syscall(SYS_futex, (uint32_t *)&s->word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	pthread_join(s->thread, NULL);
	s->running = false;
}

void sq_standby_destroy(struct sq_standby *s)
{
	sq_standby_stop(s);
	pthread_mutex_destroy(&s->lock);
}
