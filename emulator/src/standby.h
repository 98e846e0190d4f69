/* The standby delivery thread: a second thread of the event loop's priority,
 * on another CPU, that does the loop's due work when the loop thread is late.
 *
 * On a virtual machine a whole vCPU stops now and then for milliseconds (the
 * host runs something else; measured here, emulator/README.md "Timing"), and
 * a real-time thread queued on it waits: Linux does not move a single queued
 * real-time task to the other CPU, which meanwhile runs ordinary tasks. A thread
 * on the other CPU that also wakes at every deadline (plus a grace period, 0 in
 * the emulator) and finds it not served serves it instead.
 *
 * Both threads do their work holding one lock (sq_standby_lock), so the link
 * model, the log and the sockets see one thread at a time and the run is what
 * it would be with one thread (same decisions, same log). Neither ever blocks
 * on the lock: a thread that finds it taken sleeps briefly and tries again (the
 * holder may be the one whose CPU stopped). The loop thread publishes the next
 * deadline when it releases the lock; the standby serves it once `deadline +
 * grace` has passed and the deadline published is still due.
 */
#ifndef SQ_STANDBY_H
#define SQ_STANDBY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SQ_STANDBY_NEVER INT64_MAX

struct sq_standby {
	pthread_mutex_t lock;
	_Atomic int64_t next_ns;           /* CLOCK_MONOTONIC of the next due work */
	_Atomic uint32_t word;             /* futex word: bumped to wake the standby (stop) */
	_Atomic bool stop;
	bool running;                      /* the standby thread exists */
	pthread_t thread;
	int64_t grace_ns;
	int cpu;                           /* the standby's CPU, -1 without a standby */
	/* Called by the standby, holding the lock, when it takes over; returns the
	 * next deadline (SQ_STANDBY_NEVER if none). */
	int64_t (*take_over)(void *ctx);
	void *ctx;
	uint64_t takeovers;                /* under the lock */
	int64_t locked_at;                 /* under the lock: when its holder took it */
	uint64_t held_ns;                  /* under the lock: how long either thread has held it */
};

/* Prepares the lock (the standby thread is started by sq_standby_start). */
void sq_standby_init(struct sq_standby *s, int64_t grace_ns, int64_t (*take_over)(void *ctx), void *ctx);

/* Starts the standby thread on a CPU the calling thread may use, and keeps the
 * calling (loop) thread off that CPU. Needs at least two usable CPUs; false
 * (and nothing started, message in err) otherwise. The thread inherits the
 * caller's scheduling policy and priority, and blocks every signal. */
bool sq_standby_start(struct sq_standby *s, char *err, size_t errlen);

/* Takes the lock, sleeping briefly between tries while the other thread has it. The time
 * each holder keeps it is summed in held_ns: a CPU stopped while its thread holds the lock
 * holds up the other's deliveries too. */
void sq_standby_lock(struct sq_standby *s);

/* Publishes the next deadline and releases the lock. */
void sq_standby_unlock(struct sq_standby *s, int64_t next_ns);

/* Stops and joins the standby thread (if it runs); the lock stays usable. */
void sq_standby_stop(struct sq_standby *s);

void sq_standby_destroy(struct sq_standby *s);

#endif
